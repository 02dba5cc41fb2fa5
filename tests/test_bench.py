"""make bench still works: a benchmark program that stopped building (bench/gemm_shapes.c after
a template was split) was found only when somebody ran the benchmark. Here bench/run.py runs
briefly into its own directory: one round, two example models, two of models/gen.py's random
networks and one layer shape, no round trip, no ONNX Runtime. Each table must have its rows
and numbers in them; no timing is asserted. The bench's C programs must also compile without
-Wall warnings."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import mlbctest

ROOT = mlbctest.ROOT
BENCH = os.path.join(ROOT, "bench")
MODELS = ("inliner", "dqn")
FC = "fc 500x1"
GEN_SEED, GEN_COUNT = 31, 2          # the first networks of bench/run.py's default sample
GEN = r"^g%d_\d+_" % GEN_SEED
# bench/*.c that build alone (model_main.c is built per model, roundtrip.c with the gRPC
# runtime, both by the run below)
STANDALONE = ("harness", "peak", "gemm_shapes", "stream", "naive_fc", "blas_fc")
NUMBER = r"[0-9]+(?:\.[0-9]+)?"

TALLY = mlbctest.Tally()
result = TALLY.result


def check_warnings():
    for name in STANDALONE:
        r = subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Werror", "-fsyntax-only",
                            "-I", BENCH, "-DFC_N=500", "-DFC_M=1",
                            os.path.join(BENCH, name + ".c")], capture_output=True, text=True)
        result(r.returncode == 0, "bench/%s.c: gcc -Wall" % name, mlbctest.first_line(r.stderr))


def section(report, title):
    """The lines of the table whose '== ' header starts with TITLE (up to the next one)."""
    m = re.search(r"^== %s.*?\n(.*?)(?=^== |\Z)" % re.escape(title), report, re.M | re.S)
    return m.group(1).splitlines() if m else None


def row(lines, name):
    return next((x for x in lines or [] if re.match(r"%s\s" % re.escape(name), x)), None)


def check_report(report):
    # every model's line in the flag-set table: a time (ns) for each of gcc's and clang's sets
    flags = section(report, "flag sets")
    for name in MODELS:
        line = row(flags, name)
        result(line is not None and len(re.findall(NUMBER, line)) >= 8,
               "flag-set table: %s has a figure for each set" % name, repr(line))
    peers = section(report, "against the FLOP ceiling")
    for name in MODELS:
        line = row(peers, name)
        ok = line is not None and re.search(r"\s%s\s+%s\s" % (NUMBER, NUMBER), line)
        result(bool(ok), "ceiling table: %s has ns and GFLOP/s" % name, repr(line))
    gemm = section(report, "matrix products alone")
    shapes = [x for x in gemm or [] if re.match(r"\d+x\d+x\d+\s", x)]
    result(len(shapes) >= 10 and all(float(x.split()[2]) > 0 for x in shapes),
           "matrix products alone: %d shapes, each with its GFLOP/s" % len(shapes),
           "\n".join(gemm or ["(no table)"]))
    result(re.search(r"^ceiling: .* %s GFLOP/s" % NUMBER, report, re.M) is not None,
           "the FLOP ceiling is measured", "no 'ceiling:' line")
    fc = section(report, "fully-connected layer y")
    for name in (FC, FC + " --blas"):
        result(row(fc, name) is not None, "layer table: %s" % name, "\n".join(fc or []))
    result("requirement 'GEMM-bound layers reach 60% of the ceiling'" in report,
           "the GEMM requirement is stated", "missing")
    check_generated(report, flags)


def check_generated(report, flags):
    """models/gen.py's networks: in the flag-set table (with the O2/fastest ratio that flags a
    reference more than 1.25x the fastest build) and in their own table."""
    named = [x for x in flags or [] if re.match(GEN, x)]
    result(len(named) == GEN_COUNT and all(len(re.findall(NUMBER, x)) >= 9 for x in named),
           "flag-set table: %d generated networks with their figures" % GEN_COUNT,
           "\n".join(flags or ["(no table)"]))
    result(re.search(r"^flagged: gcc -O2 more than 1\.25x the fastest", report, re.M) is not None,
           "flag-set table: the 1.25x-the-fastest-build flag is stated", "no 'flagged:' line")
    dist = section(report, "distribution over the generated networks")
    rows = [x for x in dist or [] if re.match(GEN, x)]
    result(len(rows) == GEN_COUNT and all(re.search(r"\s%s\s+%s\s" % (NUMBER, NUMBER), x)
                                          for x in rows),
           "generated networks' table: %d rows with ns/run" % GEN_COUNT,
           "\n".join(dist or ["(no table)"]))
    result(any(x.startswith("mlbc/ORT: not measured: --ort none") for x in dist or []),
           "generated networks' table: says why there is no mlbc/ORT", "\n".join(dist or []))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    check_warnings()
    with tempfile.TemporaryDirectory(prefix="mlbc-bench-") as out:
        pattern = "^(%s)$|^%s|%s" % ("|".join(MODELS), FC, GEN)
        r = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--build",
                            args.build, "--out", out, "--quick", "--rounds", "1", "--models",
                            pattern, "--no-roundtrip", "--ort", "none", "--gen-seed",
                            str(GEN_SEED), "--gen-count", str(GEN_COUNT)],
                           capture_output=True, text=True, timeout=600, cwd=ROOT)
        result(r.returncode == 0, "bench/run.py runs", (r.stderr or r.stdout)[-600:])
        report_file = os.path.join(out, "report.txt")
        result(os.path.exists(report_file), "report.txt written next to the programs")
        check_report(r.stdout)
    return TALLY.close()


if __name__ == "__main__":
    sys.exit(main())
