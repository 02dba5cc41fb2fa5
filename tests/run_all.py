"""make test: every test program; each ends with 'N passed, M failed[, K skipped]'.
Prints each program's output, then one closing line with the sums.

The programs that keep both cores busy by themselves (builds of generated code in parallel)
run one at a time. The others mostly wait (on pipes, servers, one compiler at a time) and use
about one core: they run two at a time, which takes a third off the whole run. Their output
is printed in the order below all the same."""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = sys.executable

LINE = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$")

ALONE, PAIRED = "alone", "paired"


def programs(build):
    """(title, command, ALONE or PAIRED). PAIRED programs share no build directory with one
    another (but test_grpc's and test_bridge's BUILD/grpc_asan, under a lock) and assert no
    time tighter than seconds (test_fuzz's make builds BUILD/fuzz only); test_train is ALONE as its training runs for a set time, test_errors as it builds
    BUILD/asan, which test_clang uses."""
    b = ["--build", build]
    return [
        ("unit tests (IR, passes, emitter)", [os.path.join(build, "test_unit")], ALONE),
        ("bad input (plain and ASan+UBSan builds)", [PY, "tests/test_errors.py"] + b, ALONE),
        ("example models against their references", [PY, "tests/test_models.py"] + b, ALONE),
        ("torch's own layers as torch exports them, opsets 13-18",
         [PY, "tests/test_torch_layers.py"] + b, ALONE),
        ("random policy-shaped networks (models/gen.py) against onnx_np",
         [PY, "tests/test_gen.py"] + b, ALONE),
        ("ONNX backend node suite", [PY, "tests/test_node.py"] + b, ALONE),
        ("generated code under ASan+UBSan (every 8th node test; all: make check-full)",
         [PY, "tests/test_node.py", "--sanitize", "--every", "8"] + b, ALONE),
        ("same bits: eight builds of the generated code, outputs bytewise",
         [PY, "tests/test_same_bits.py"] + b, ALONE),
        ("generated code on AArch64 (cross gcc + qemu)", [PY, "tests/test_cross.py"] + b, ALONE),
        ("training loop: collect, clone, improve, export, serve", [PY, "tests/test_train.py"] + b,
         ALONE),
        # the paired ones longest first (92 s down to 7 s on a 2-core Xeon), so that the
        # last of them does not run alone for long
        ("development mode over gRPC: both roles, faults, tokens, TLS",
         [PY, "tests/test_grpc.py"] + b, PAIRED),
        ("against a real clang-19: hosts, mlbc-serve, LLVM's Logger",
         [PY, "tests/test_clang.py"] + b, PAIRED),
        ("hostile strings: no model string becomes C (gcc c99/gnu99, clang-19)",
         [PY, "tests/test_hostile.py"] + b, PAIRED),
        ("inside LLVM: ReleaseModeModelRunner, clang pass plugin", [PY, "tests/test_llvm.py"] + b,
         PAIRED),
        ("make bench runs briefly: every table has its rows (no timing asserted)",
         [PY, "tests/test_bench.py"] + b, PAIRED),
        ("command line and generated-code contract", [PY, "tests/test_cli.py"] + b, PAIRED),
        ("development mode: pipe runner and Python host", [PY, "tests/test_pipe.py"] + b, PAIRED),
        ("the ML-Compiler-Bridge's pipe test replayed against mlbc, byte for byte",
         [PY, "tests/test_bridge.py"] + b, PAIRED),
        ("fuzz targets over their regression corpora", [PY, "tests/test_fuzz.py"] + b, PAIRED),
        ("inside GCC: inlining plugin", [PY, "tests/test_gcc.py"] + b, PAIRED),
        ("make install: layout, CMake and Make projects, man pages, Python package",
         [PY, "tests/test_install.py"] + b, PAIRED),
        ("threads: 8 contexts and runners of one model under TSan (make check-full: 10^5 runs)",
         [PY, "tests/test_threads.py"] + b, PAIRED),
        ("training jobs on a Dask cluster: scheduler and two workers on loopback",
         [PY, "tests/test_dask.py"] + b, PAIRED),
        ("runtime: runners, training logs, env loop", [PY, "tests/test_runtime.py"] + b, PAIRED),
        ("text front end cross-check", [PY, "tests/test_text.py"] + b, PAIRED),
        ("older exporters' models (opsets 1-6) and splat constants",
         [PY, "tests/test_legacy.py"] + b, PAIRED),
    ]


def run_program(cmd):
    """Runs one test program; returns (its output, exit status, wall seconds, CPU seconds of
    it and the processes it waited for)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    p.stdout.close()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return out, p.returncode, time.time() - t0, usage.ru_utime + usage.ru_stime


def report(title, result):
    """Prints a program's output and its counts; returns (counts, whether it had a result
    line)."""
    out, status, wall, cpu = result
    print("=== %s" % title)
    counts = None
    for line in out.rstrip("\n").splitlines():
        m = LINE.match(line)
        if m:
            counts = [int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)]
        else:
            print("  " + line)
    found = counts is not None
    if not found:
        counts = [0, 1, 0]
        print("  (no result line; exit status %d)" % status)
    elif status and counts[1] == 0:
        counts[1] = 1  # a program that failed without saying what still fails the run
        print("  (exit status %d)" % status)
    print("  -> %d passed, %d failed, %d skipped (%.0f s, %.1f cores)" % (
        *counts, wall, cpu / max(wall, 1e-3)), flush=True)
    return counts, found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    os.chdir(ROOT)
    t0 = time.time()
    # The node-suite data (generated from python3-onnx) is also input to other programs.
    subprocess.run([PY, "tests/test_node.py", "--build", args.build, "--generate-only"], check=True)
    todo = [p for p in programs(args.build)
            if not (p[1][0] == PY and not os.path.exists(p[1][1]))]  # one still to be written
    total = [0, 0, 0]
    broken = []

    def tally(title, result):
        counts, found = report(title, result)
        total[:] = [a + b for a, b in zip(total, counts)]
        if not found:
            broken.append(title)

    for title, cmd, _ in [p for p in todo if p[2] == ALONE]:
        tally(title, run_program(cmd))
    paired = [p for p in todo if p[2] == PAIRED]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for (title, _, _), result in zip(paired, pool.map(lambda p: run_program(p[1]), paired)):
            tally(title, result)
    if broken:
        print("programs without a result line: " + ", ".join(broken))
    print("make test: %.0f s" % (time.time() - t0))
    print("%d passed, %d failed, %d skipped" % tuple(total))
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
