"""The fuzz targets (fuzz/, make fuzz) over their committed regression corpora
(fuzz/regress/TARGET: crash reproducers and a few seeds). libFuzzer runs the files given as
arguments once each, without fuzzing: seconds, not minutes. Each target is one check; all are
skipped, with the reason, when clang-19's fuzzer runtime (libclang-rt-19-dev) is missing.
The Python readers' fuzzer (fuzz/gym.py, stdlib only) replays fuzz/regress/gym-TARGET the
same way, and 3000 seeded mutations (the same every run: no new fuzzing in CI) check that the
fuzzer itself still works: it must grow a corpus and find nothing."""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import mlbctest

ROOT = mlbctest.ROOT
TARGETS = ["model", "text", "names", "json", "logread", "pipe", "desc"]
GYM_TARGETS = ["log", "llvm", "bitstream", "json", "protobuf"]
# As make fuzz runs them (Makefile FUZZ_ASAN_*): the compiler's targets check no leaks.
ASAN = {"model": "detect_leaks=0", "text": "detect_leaks=0", "names": "detect_leaks=0"}

passed = failed = skipped = 0


def result(ok, name, why=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS %s" % name)
    else:
        failed += 1
        print("FAIL %s: %s" % (name, why))


def fuzzer_runtime():
    """None if clang-19 links a libFuzzer target, else why not."""
    if not shutil.which("clang-19"):
        return "clang-19 not installed"
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("#include <stddef.h>\n#include <stdint.h>\n"
                    "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n")
        r = subprocess.run(["clang-19", "-fsanitize=fuzzer", src, "-o", os.path.join(d, "t")],
                           capture_output=True, text=True)
        return None if r.returncode == 0 else \
            "clang-19 has no fuzzer runtime (install libclang-rt-19-dev): " + r.stderr[-200:]


def run_corpus(build, target):
    files = sorted(glob.glob(os.path.join(ROOT, "fuzz", "regress", target, "*")))
    if not files:
        return result(False, "fuzz-%s regression corpus" % target, "fuzz/regress/%s is empty" % target)
    env = dict(os.environ, ASAN_OPTIONS="allocator_may_return_null=1:" + ASAN.get(target, ""))
    exe = os.path.join(build, "fuzz", "fuzz-" + target)
    try:
        r = subprocess.run([exe, "-timeout=10", "-rss_limit_mb=2048"] + files, env=env,
                           capture_output=True, text=True, errors="replace", timeout=300)
    except subprocess.TimeoutExpired:
        return result(False, "fuzz-%s over %d files" % (target, len(files)), "timed out")
    result(r.returncode == 0, "fuzz-%s over %d files of fuzz/regress/%s" % (target, len(files), target),
           "status %d: %s" % (r.returncode, r.stderr[-1500:]))


def run_gym(build, target):
    files = sorted(glob.glob(os.path.join(ROOT, "fuzz", "regress", "gym-" + target, "*")))
    gym = os.path.join(ROOT, "fuzz", "gym.py")
    r = subprocess.run([sys.executable, gym, target] + files, capture_output=True, text=True,
                       timeout=300)
    result(r.returncode == 0 and files, "gym-%s over %d files of fuzz/regress/gym-%s"
           % (target, len(files), target), r.stdout[-1500:] + r.stderr[-500:])
    # A short seeded campaign in a scratch folder: it must run, grow a corpus, find nothing.
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sys.executable, gym, target, "--runs", "3000", "--build", d],
                           capture_output=True, text=True, timeout=300)
        grew = os.listdir(os.path.join(d, "fuzz", "corpus-gym-" + target)) \
            if os.path.isdir(os.path.join(d, "fuzz", "corpus-gym-" + target)) else []
        result(r.returncode == 0 and grew, "gym-%s: 3000 seeded mutations, %d new inputs, no finding"
               % (target, len(grew)), r.stdout[-1500:] + r.stderr[-500:])


def main():
    global skipped
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    why = fuzzer_runtime()
    if why:
        skipped += len(TARGETS)
        print("SKIP fuzz targets: %s" % why)
    else:
        r = subprocess.run(["make", "-s", "-j2", "BUILD=" + args.build, "fuzz-build"], cwd=ROOT,
                           capture_output=True, text=True)
        result(r.returncode == 0, "make fuzz-build", r.stderr[-1500:])
        if r.returncode == 0:
            for t in TARGETS:
                run_corpus(os.path.abspath(args.build), t)
    for t in GYM_TARGETS:
        run_gym(os.path.abspath(args.build), t)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
