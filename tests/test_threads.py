"""Threads (issue 11): the generated code of the example models and the release runner over
it, under ThreadSanitizer (clang-19 -fsanitize=thread, the runtime's sources built with it):
8 threads, each with its own context (or runner) of the same model, RUNS runs on inputs that
change with every run; every thread's results must hash as one thread's alone, and TSan must
report nothing. make test: a few models, 200 runs; make check-full: every model, 10^5."""
import argparse
import glob
import os
import subprocess
import sys

import mlbctest

ROOT, HERE = mlbctest.ROOT, mlbctest.HERE
RT = os.path.join(ROOT, "runtime")
QUICK = ("inliner", "rnn_policy", "transformer", "dqn")
TSAN = ["-fsanitize=thread", "-O1", "-g", "-fno-omit-frame-pointer"]
TSAN_ENV = dict(os.environ, TSAN_OPTIONS="halt_on_error=1:exitcode=66")

TALLY = mlbctest.Tally()
result = TALLY.result


def build(mlbc, model, work):
    """The model's threads program; None (and a FAIL) if it does not build."""
    name = os.path.splitext(os.path.basename(model))[0]
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    c = os.path.join(d, "model.c")
    r = subprocess.run([mlbc, model, "-o", c, "-n", "model"], capture_output=True, text=True)
    if r.returncode:
        return result(False, "%s: mlbc" % name, r.stderr.strip()[:300])
    exe = os.path.join(d, "threads")
    rt, rt_inc = mlbctest.runtime_sources(os.path.dirname(mlbc))
    r = subprocess.run(["clang-19", "-std=c11", "-D_GNU_SOURCE", *TSAN, "-I", d, *rt_inc,
                        "-include", "model.h", "-DMODEL_DESC=model_desc",
                        os.path.join(HERE, "threads.c"), c, *rt, "-o", exe,
                        *mlbctest.RT_LIBS], capture_output=True, text=True)
    if r.returncode:
        return result(False, "%s: clang-19 -fsanitize=thread" % name, r.stderr.strip()[:300])
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--all", action="store_true", help="every example model, not a few")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    work = os.path.abspath(os.path.join(args.build, "threads-work"))
    models = sorted(glob.glob(os.path.join(ROOT, "models", "*.onnx")))
    if not args.all:
        models = [m for m in models if os.path.splitext(os.path.basename(m))[0] in QUICK]
    for model in models:
        exe = build(mlbc, model, work)
        if not exe:
            continue
        name = os.path.splitext(os.path.basename(model))[0]
        for mode in ("ctx", "runner"):
            r = subprocess.run([exe, mode, str(args.threads), str(args.runs)], capture_output=True,
                               text=True, env=TSAN_ENV, timeout=3600)
            report = "ThreadSanitizer" in r.stderr
            result(r.returncode == 0 and not report,
                   "%s under TSan: %s" % (name, r.stdout.strip()),
                   "exit status %d: %s" % (r.returncode, (r.stderr or r.stdout).strip()[-600:]))
    return TALLY.close()


if __name__ == "__main__":
    sys.exit(main())
