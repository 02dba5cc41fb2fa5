"""make test: every test program in turn; each ends with 'N passed, M failed[, K skipped]'.
Prints each program's output, then one closing line with the sums."""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = sys.executable

LINE = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$")


def programs(build):
    b = ["--build", build]
    return [
        ("unit tests (IR, passes, emitter)", [os.path.join(build, "test_unit")]),
        ("command line and generated-code contract", [PY, "tests/test_cli.py"] + b),
        ("bad input (plain and ASan+UBSan builds)", [PY, "tests/test_errors.py"] + b),
        ("fuzz targets over their regression corpora", [PY, "tests/test_fuzz.py"] + b),
        ("text front end cross-check", [PY, "tests/test_text.py"] + b),
        ("example models against their references", [PY, "tests/test_models.py"] + b),
        ("older exporters' models (opsets 1-6) and splat constants", [PY, "tests/test_legacy.py"] + b),
        ("ONNX backend node suite", [PY, "tests/test_node.py"] + b),
        ("generated code under ASan+UBSan (every 8th node test; all: make check-full)",
         [PY, "tests/test_node.py", "--sanitize", "--every", "8"] + b),
        ("threads: 8 contexts and runners of one model under TSan (make check-full: 10^5 runs)",
         [PY, "tests/test_threads.py"] + b),
        ("same bits: eight builds of the generated code, outputs bytewise", [PY, "tests/test_same_bits.py"] + b),
        ("generated code on AArch64 (cross gcc + qemu)", [PY, "tests/test_cross.py"] + b),
        ("runtime: runners, training logs, env loop", [PY, "tests/test_runtime.py"] + b),
        ("development mode: pipe runner and Python host", [PY, "tests/test_pipe.py"] + b),
        ("development mode over gRPC: both roles, faults, tokens, TLS", [PY, "tests/test_grpc.py"] + b),
        ("against a real clang-19: hosts, mlbc-serve, LLVM's Logger", [PY, "tests/test_clang.py"] + b),
        ("inside LLVM: ReleaseModeModelRunner, clang pass plugin", [PY, "tests/test_llvm.py"] + b),
        ("inside GCC: inlining plugin", [PY, "tests/test_gcc.py"] + b),
        ("training loop: collect, clone, improve, export, serve", [PY, "tests/test_train.py"] + b),
        ("training jobs on a Dask cluster: scheduler and two workers on loopback", [PY, "tests/test_dask.py"] + b),
        ("make install: layout, CMake and Make projects, man pages, Python package", [PY, "tests/test_install.py"] + b),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    os.chdir(ROOT)
    # The node-suite data (generated from python3-onnx) is also input to other programs.
    subprocess.run([PY, "tests/test_node.py", "--build", args.build, "--generate-only"], check=True)
    total = [0, 0, 0]
    broken = []
    for title, cmd in programs(args.build):
        if cmd[0] == PY and not os.path.exists(cmd[1]):
            continue  # a test program still to be written
        print("=== %s" % title, flush=True)
        t0 = time.time()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = p.stdout.rstrip("\n").splitlines()
        counts = None
        for line in out:
            m = LINE.match(line)
            if m:
                counts = [int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)]
            else:
                print("  " + line)
        if counts is None:
            broken.append(title)
            counts = [0, 1, 0]
            print("  (no result line; exit status %d)" % p.returncode)
        elif p.returncode and counts[1] == 0:
            counts[1] = 1  # a program that failed without saying what still fails the run
            print("  (exit status %d)" % p.returncode)
        print("  -> %d passed, %d failed, %d skipped (%.0f s)" % (*counts, time.time() - t0),
              flush=True)
        total = [a + b for a, b in zip(total, counts)]
    if broken:
        print("programs without a result line: " + ", ".join(broken))
    print("%d passed, %d failed, %d skipped" % tuple(total))
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
