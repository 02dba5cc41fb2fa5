"""Collect a training log while serving the inliner, then read it back.

    python3 runtime/python/examples/training_log.py [FILE.c] [LOG]

Every observation is logged with the decision taken (as an extra feature, as LLVM's
development mode does) and a reward; the reward here is a stand-in (1 for "inline" when the
callee is a single block, else 0) since the point is the log format, which LLVM's
log_reader.py and mlbc's C reader (mlbc_log_open) both read.
"""
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mlbc_gym import LogWriter, TensorSpec, read_log, serve  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "sample.c")
tmp = tempfile.mkdtemp(prefix="mlbc_gym_")
log_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tmp, "inliner.log")
base = os.path.join(tmp, "inliner")
state = {"writer": None}
logf = open(log_path, "wb")
rng = random.Random(0)


def explore(features, context, index):
    if state["writer"] is None:    # the specs are known from the first observation
        specs = [TensorSpec(n, "int64_t", [1]) for n in features] + \
                [TensorSpec("inlining_decision", "int64_t", [1])]
        state["writer"] = LogWriter(logf, specs, score=TensorSpec("reward", "float", [1]))
        state["writer"].context(context)
    decision = rng.randint(0, 1)   # explore
    w = state["writer"]
    w.observation([v for v in features.values()] + [decision])
    w.outcome(1.0 if decision and features["callee_basic_block_count"][0] == 1 else 0.0)
    return decision


result = serve(base, explore, command=[
    "clang-19", "-O2", "-c", src, "-o", os.path.join(tmp, "x.o"),
    "-mllvm", "-enable-ml-inliner=release",
    "-mllvm", "-inliner-interactive-channel-base=" + base], command_timeout=300)
logf.close()

reader, observations = read_log(log_path)
print("%s: %d features + score %s, %d observations"
      % (log_path, len(reader.features), reader.score.name, len(observations)))
for o in observations[:5]:
    print("  context %r #%d: decision %d, reward %s" % (
        o.context, o.id, o.features["inlining_decision"][0], o.score[0]))
sys.exit(0 if result.ok else 1)
