"""Drive clang-19's ML inliner from Python: answer "never inline" to every call site.

    python3 runtime/python/examples/inliner_never.py [FILE.c]

Runs clang-19 -O2 -c with -enable-ml-inliner=release and an interactive channel, serves it
with mlbc_gym, and prints what the compiler asked. Then compiles the same file with the
default heuristic for comparison.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mlbc_gym import serve  # noqa: E402

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "sample.c")
tmp = tempfile.mkdtemp(prefix="mlbc_gym_")
base = os.path.join(tmp, "inliner")
asked = []


def never(features, context, index):
    # features: dict name -> list, e.g. features["callee_basic_block_count"] == [3]
    asked.append((index, features["callee_basic_block_count"][0], features["cost_estimate"][0]))
    return 0                      # inlining_decision: 0 = do not inline


obj = os.path.join(tmp, "never.o")
result = serve(base, never, command=[
    "clang-19", "-O2", "-c", src, "-o", obj,
    "-mllvm", "-enable-ml-inliner=release",
    "-mllvm", "-inliner-interactive-channel-base=" + base], command_timeout=300)

print("clang-19 exit status %s, %d session(s), %d observation(s)"
      % (result.returncode, len(result.sessions), result.observations))
for s in result.sessions:
    print("  %d features, advice %s %s" % (len(s.features), s.advice.name, s.advice.type))
for index, bbs, cost in asked[:10]:
    print("  call site %d: callee_basic_block_count=%d cost_estimate=%d -> never" % (
        index, bbs, cost))

default = os.path.join(tmp, "default.o")
subprocess.run(["clang-19", "-O2", "-c", src, "-o", default], check=True)
print("object size: never-inline %d bytes, default heuristic %d bytes"
      % (os.path.getsize(obj), os.path.getsize(default)))
sys.exit(0 if result.ok else 1)
