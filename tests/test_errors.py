"""Bad input: every file of the corpus (tests/bad, tests/text/bad) must give
'mlbc: error: ...' with the expected text, exit status 1, no output file, and no crash -
with the normal build and with an ASan+UBSan build. Then a deterministic mutation fuzz of
valid models under the sanitizers: any exit other than 0 or 1, or any sanitizer report,
fails."""
import argparse
import concurrent.futures
import glob
import os
import random
import re
import shutil
import subprocess
import sys

import absurd
import mlbctest

HERE = mlbctest.HERE
SAN_FLAGS = "-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
# The compiler is a short-lived process whose memory lives until exit by design (util.c),
# so leak checking is off; every other ASan/UBSan check is on and fatal.
SAN_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=99",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=98")

passed = failed = 0


def result(ok, name, why=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS %s" % name)
    else:
        failed += 1
        print("FAIL %s: %s" % (name, why))


def corpus():
    cases = []
    for line in open(os.path.join(HERE, "bad", "expect.txt")):
        if line.strip() and not line.startswith("#"):
            f, sub = line.rstrip("\n").split("\t")
            cases.append((os.path.join(HERE, "bad", f), sub))
    for f in sorted(glob.glob(os.path.join(HERE, "text", "bad", "*.onnxtxt"))):
        first = open(f).readline()
        m = re.search(r"expect:\s*(\d+):(\d+)", first)
        if m:
            cases.append((f, "%s:%s:%s:" % (os.path.basename(f), m.group(1), m.group(2))))
    return cases


def check_bad(mlbc, path, expect, work, env, tag):
    """Returns (ok, name, why) for one corpus file."""
    name = "%s %s" % (tag, os.path.basename(path))
    work = os.path.join(work, "bad-" + name.replace(" ", "-"))
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "out.c")
    for p in (out, out[:-2] + ".h"):
        if os.path.exists(p):
            os.remove(p)
    r = subprocess.run([mlbc, path, "-o", out], capture_output=True, text=True, errors="replace", timeout=60,
                       env=env, cwd=os.path.dirname(path))
    if r.returncode != 1:
        return False, name, "exit status %d: %s" % (r.returncode, r.stderr[-400:])
    if not r.stderr.startswith("mlbc: error: ") or expect not in r.stderr:
        return False, name, "message %r lacks %r" % (r.stderr.strip(), expect)
    if os.path.exists(out) or os.path.exists(out[:-2] + ".h"):
        return False, name, "left an output file behind"
    return True, name, ""


def mutate(data, rng):
    data = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0 and data:
        for _ in range(rng.randrange(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 1:
        data = data[: rng.randrange(len(data) + 1)]
    elif kind == 2 and data:
        i = rng.randrange(len(data))
        data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    else:
        i, j = sorted(rng.randrange(len(data) + 1) for _ in range(2))
        data = data[:i] + data[j:] + data[i:j]
    return bytes(data)


def sanitized_run(mlbc, path, out, timeout):
    """Runs the sanitized mlbc; returns None, or what went wrong: an exit other than 0 or 1,
    or a sanitizer report."""
    r = subprocess.run([mlbc, path, "-o", out], capture_output=True, text=True,
                       errors="replace", timeout=timeout, env=SAN_ENV)
    if r.returncode not in (0, 1) or "runtime error" in r.stderr or "Sanitizer" in r.stderr:
        return "status %d %s" % (r.returncode, r.stderr[-300:])
    return None


def fuzz(mlbc, work, seeds, iterations, pool):
    """The mutations are drawn in order from one seeded generator, then run in parallel."""
    rng = random.Random(1234)
    cases = []
    for it in range(iterations):
        seed = seeds[it % len(seeds)]
        path = os.path.join(work, "fuzz%d%s" % (it, os.path.splitext(seed)[1]))
        with open(path, "wb") as f:
            f.write(mutate(open(seed, "rb").read(), rng))
        cases.append((path, seed))

    def one(case):
        path, seed = case
        why = sanitized_run(mlbc, path, path + ".c", 60)
        if why is None:
            for p in (path, path + ".c", path + ".h"):
                if os.path.exists(p):
                    os.remove(p)
            return None
        keep = path.replace("fuzz", "crash")
        os.rename(path, keep)
        return "%s (from %s): %s" % (keep, os.path.basename(seed), why)

    bad = [b for b in pool.map(one, cases) if b]
    result(not bad, "fuzz: %d mutations of %d seed models under ASan+UBSan" % (iterations, len(seeds)),
           "; ".join(bad[:3]))


def node_models(work):
    return sorted(glob.glob(os.path.join(os.path.dirname(work), "onnx-node-data", "node",
                                         "test_*", "model.onnx")))


def control_flow_models(work):
    """The node-suite models with If, Loop or Scan: lower.c rewrites their subgraphs."""
    return [m for m in node_models(work)
            if re.search(r"/test_(if\w*|loop\w*|scan\w*|range_\w*_expanded)/model", m)]


def sanitize_node_models(mlbc, work, every, pool):
    """The sanitized compiler over a sample of the ONNX node-suite models (valid input), and
    over every model with control flow (lower.c copies and rewrites subgraphs)."""
    models = sorted(set(node_models(work)[::every]) | set(control_flow_models(work)))

    def one(m):
        out = os.path.join(work, "nm-%s.c" % os.path.basename(os.path.dirname(m)))
        why = sanitized_run(mlbc, m, out, 120)
        return None if why is None else "%s: %s" % (m, why)

    bad = [b for b in pool.map(one, models) if b]
    result(models and not bad, "ASan+UBSan mlbc over %d node-suite models" % len(models),
           "; ".join(bad[:3]) or "node-suite data not generated yet")


def absurd_sizes(mlbc, work):
    """tests/absurd.py: a clear error within 2 s and 512 MB of RSS, no crash."""
    for name, model, feed, expect in absurd.cases(work):
        code, err, secs, rss = absurd.run_bounded([mlbc, model, "-o", os.path.join(work, "o.c")],
                                                  feed)
        why = "exit status %d, %.2f s, %d MB RSS: %s" % (code, secs, rss // 1024, err.strip()[-300:])
        result(code == 1 and err.startswith("mlbc: error: ") and expect in err and
               secs < absurd.MAX_SECONDS and rss < absurd.MAX_RSS_KB,
               "absurd size: %s (%.2f s, %d MB)" % (name, secs, rss // 1024), why)
    os.remove(os.path.join(work, "sparse-2GB.onnx"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--fuzz", type=int, default=1200)
    ap.add_argument("--every", type=int, default=4,
                    help="the sanitized mlbc compiles every Nth node-suite model (1: all)")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    sanbuild = os.path.join(args.build, "asan")
    jobs = os.cpu_count() or 2
    r = subprocess.run(["make", "-s", "-j%d" % jobs, "BUILD=" + sanbuild, "CFLAGS=" + SAN_FLAGS,
                        os.path.join(sanbuild, "mlbc")],
                       cwd=mlbctest.ROOT, capture_output=True, text=True)
    san = os.path.abspath(os.path.join(sanbuild, "mlbc"))
    result(r.returncode == 0, "ASan+UBSan build of mlbc", r.stderr[-500:])
    work = os.path.abspath(os.path.join(args.build, "errors-work"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    absurd_sizes(mlbc, work)  # alone: each must end within a time bound
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        runs = [(mlbc, path, expect, work, os.environ, "plain") for path, expect in corpus()]
        if r.returncode == 0:
            runs += [(san, path, expect, work, SAN_ENV, "asan") for path, expect in corpus()]
        for ok, name, why in pool.map(lambda a: check_bad(*a), runs):
            result(ok, name, why)
        seeds = sorted(glob.glob(os.path.join(mlbctest.ROOT, "models", "*.onnx")) +
                       glob.glob(os.path.join(HERE, "text", "*.onnxtxt")) +
                       control_flow_models(work))
        if r.returncode == 0 and seeds:
            fuzz(san, work, seeds, args.fuzz, pool)
        if r.returncode == 0:
            sanitize_node_models(san, work, args.every, pool)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
