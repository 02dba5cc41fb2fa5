"""Drive clang-19's register allocator advisors: eviction and priority on two channels at once.

    python3 runtime/python/examples/regalloc.py [FILE.c]

Eviction (int64 advice): the 21 features are [1, 33] tensors, column 32 is the live range
being allocated; answering 32 means "evict nothing". Priority (float advice): one call per
live range; here the priority is the live range's size.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mlbc_gym import Channel, serve_channels  # noqa: E402

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "sample.c")
tmp = tempfile.mkdtemp(prefix="mlbc_gym_")
ev, pr = os.path.join(tmp, "evict"), os.path.join(tmp, "priority")
functions = set()


def evict(features, context, index):
    functions.add(context)          # context = the machine function's name
    mask = features["mask"]         # flat list of 33 values
    return 32 if mask[32] else next(i for i, m in enumerate(mask) if m)


def priority(features, context, index):
    return float(features["li_size"][0])


result = serve_channels(
    [Channel(ev, evict), Channel(pr, priority)],
    command=["clang-19", "-O2", "-c", src, "-o", os.path.join(tmp, "out.o"),
             "-mllvm", "-regalloc-enable-advisor=release",
             "-mllvm", "-regalloc-evict-interactive-channel-base=" + ev,
             "-mllvm", "-regalloc-enable-priority-advisor=release",
             "-mllvm", "-regalloc-priority-interactive-channel-base=" + pr],
    command_timeout=300)
print("clang-19 exit status %s" % result.returncode)
for s in result.sessions:
    print("  %s: %d observations, %d context records, advice %s %s"
          % (os.path.basename(s.channel), s.observations, len(s.contexts), s.advice.name,
             s.advice.type))
print("eviction asked in: " + ", ".join(sorted(functions)))
sys.exit(0 if result.ok else 1)
