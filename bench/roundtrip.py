"""The round-trip study of the ML-Compiler-Bridge paper, on mlbc: 100 queries of a float32
feature vector of N = 500, 1000, ..., 50000 elements to one fully-connected layer returning a
scalar (ONNX MatMul [1,N]x[N,1] + Add, compiled by mlbc), total milliseconds over the sweep:

  (a) mlbc_runner_release over the compiled model, linked in;
  (b) mlbc_runner_pipe (LLVM InteractiveModelRunner framing) to the mlbc_gym host (numpy);
  (p) as (b) with the protobuf framing (runtime/mlbc.proto);
  (g) mlbc_runner_grpc to mlbc_gym's gRPC model server (numpy), loopback TCP: its native
      engine, mlbc's C++ server calling the Python policy, the queries of an N on one
      EvaluateStream call; (g') the same on mlbc_gym's grpcio engine: an Evaluate call per
      query (it has no EvaluateStream);
  (G) the same runner to the C++ model server of `mlbc-serve --listen` (the compiled model):
      the queries of an N are the messages of one EvaluateStream call;
  (c) the pipe floor: raw floats over the same kind of FIFOs to a minimal numpy reader;
  (c') the same floor with the floats lent to the pipe by vmsplice(2), not copied into it,
      as mlbc_runner_pipe sends observations of 16 KB and more;
  (d) the in-process floor: a plain C loop with 8 accumulators;
  and as diagnostics (b') the same runner to a lean LLVM-framing host, (a') and (d') the
  evaluation alone. Beside the sweep, the fixed cost per query: N = 8, the same queries.

    /usr/bin/python3 bench/roundtrip.py --build DIR [--quick] [--rounds R]

`make bench` runs it after the other tables (bench/run.py). Every number comes from this one
run; nothing is asserted (see bench/README.md, "Round trip"). The per-N medians go to
DIR/bench/roundtrip/roundtrip.json (plotted by bench/plots.py as DIR/bench/roundtrip.png).
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run as bench  # noqa: E402  (helpers of bench/run.py; it sets up onnx and numpy)
from run import numpy_helper, onnx  # noqa: E402

import numpy as np  # noqa: E402

SIZES = list(range(500, 50001, 500))
QUICK_SIZES = SIZES[9::10]                      # every 10th: 5000, 10000, ..., 50000
QUERIES = 100
ROUNDS = 7
SHOW_N = (500, 5000, 25000, 50000)              # per-N rows
FIXED_N = 8                                     # the fixed cost per query: 8 floats
FLAGS = ["-O2", "-march=x86-64-v2"]             # models, driver and the C floor alike
VARIANTS = "abBpgrGcCdAD"
LABELS = {
    "a": "(a) release runner: model compiled by mlbc, linked in",
    "b": "(b) pipe runner (LLVM framing) <-> mlbc_gym host, numpy",
    "B": "(b') = (b)'s runner <-> minimal LLVM-framing numpy host",
    "p": "(p) pipe runner (protobuf framing) <-> mlbc_gym host, numpy",
    "g": "(g) gRPC runner <-> mlbc_gym model server (C++ server, a stream), numpy",
    "r": "(g') = (g) on mlbc_gym's grpcio engine (Evaluate calls)",
    "G": "(G) gRPC runner <-> C++ model server (mlbc-serve --listen's, a stream)",
    "c": "(c) pipe floor: raw floats <-> minimal numpy reader, no protocol",
    "C": "(c') = (c) with the floats lent to the pipe by vmsplice(2), not copied",
    "d": "(d) in-process floor: plain C loop, 8 accumulators",
    "A": "(a') = (a), evaluate only (features written once per N)",
    "D": "(d') = (d), evaluate only (features written once per N)",
}
TARGETS = [("(b)/(c)", "b", "c", 1.2), ("(a)/(d)", "a", "d", 1.2), ("(a')/(d')", "A", "D", 1.2),
           ("(b)/(c')", "b", "C", None), ("(b')/(c)", "B", "c", None),
           ("(b)/(b')", "b", "B", None), ("(p)/(b)", "p", "b", None), ("(g)/(b)", "g", "b", None),
           ("(g')/(g)", "r", "g", None), ("(G)/(g)", "G", "g", None)]
NOTES = {"(b)/(c')": "against a floor that moves the bytes as (b)'s runner does (vmsplice)",
         "(b')/(c)": "what mlbc_runner_pipe and the LLVM framing cost, with a lean host",
         "(b)/(b')": "what the mlbc_gym host adds on top",
         "(p)/(b)": "the protobuf framing against LLVM's, same runner and host",
         "(g)/(b)": "gRPC against the pipes, both to mlbc_gym",
         "(g')/(g)": "mlbc_gym's grpcio engine against its native one",
         "(G)/(g)": "the same C++ server answering with the compiled model, not Python"}
# The ML-Compiler-Bridge's own gRPC runner on this kind of machine (issue 12's figures): 252 ms
# for the sweep and 300-400 us fixed cost per query. Both hold together only if that sweep is
# one query per N (100 queries: at 300 us and more each, 10 000 would take seconds), so ours
# is compared as the sum over N of one query's median time; the fixed cost must be <= 100 us.
GRPC_TARGETS = (("sweep, one query per N, ms", 252.0), ("fixed cost per query, us", 100.0))
BRIDGE = ("reference, NOT measured here: the ML-Compiler-Bridge paper reports about 470 ms for "
          "its sweep over its pipe +\nbitstream path and about 1950 ms over its pipe + JSON "
          "path (its machine, its host). If its sweep is one\nquery per N, as its gRPC figures "
          "imply (see below), compare these with our totals / %d." % QUERIES)


class Error(Exception):
    pass


def sh(cmd, timeout):
    """bench.run with a time limit; any failure becomes Error."""
    try:
        return bench.run(cmd, timeout=timeout)
    except bench.Error as e:
        raise Error("%s: %s" % (os.path.basename(cmd[0]), e))
    except subprocess.TimeoutExpired:
        raise Error("%s: no result within %d s" % (os.path.basename(cmd[0]), timeout))


# ---- building ------------------------------------------------------------------------------

def build(mlbc, work, sizes):
    """ONNX models (bench.fc_model), mlbc + cc for each in parallel, the weights file, the
    model table and the driver. Returns (driver, weights path, compile facts)."""
    jobs = len(os.sched_getaffinity(0))
    paths = {n: bench.fc_model(work, n, 1) for n in sizes}

    def one(n):
        c, o = os.path.join(work, "fc%d.c" % n), os.path.join(work, "fc%d.o" % n)
        t0 = time.perf_counter()
        sh([mlbc, paths[n], "-o", c, "-n", "fc%d" % n], 120)
        t1 = time.perf_counter()
        sh([bench.CC, "-std=c11", *FLAGS, "-c", c, "-o", o], 120)
        return o, t1 - t0, time.perf_counter() - t1

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        done = list(pool.map(one, sizes))
    wall = time.perf_counter() - t0
    facts = {"jobs": jobs, "wall": wall, "mlbc": [d[1] for d in done],
             "cc": [d[2] for d in done]}

    weights = os.path.join(work, "weights.bin")
    with open(weights, "wb") as f:
        for n in sizes:
            init = {t.name: numpy_helper.to_array(t)
                    for t in onnx.load(paths[n]).graph.initializer}
            f.write(init["W"].astype(np.float32).reshape(-1).tobytes())
            f.write(init["b"].astype(np.float32).reshape(-1).tobytes())
    table = os.path.join(work, "models.c")
    with open(table, "w") as f:
        f.write("/* generated by bench/roundtrip.py */\n#include \"mlbc_runtime.h\"\n")
        f.writelines("extern const mlbc_model_desc fc%d_desc;\n" % n for n in sizes)
        f.write("const mlbc_model_desc *const rt_models[] = {%s};\n"
                % ", ".join("&fc%d_desc" % n for n in sizes))
        f.write("const int rt_model_n[] = {%s};\n" % ", ".join(map(str, sizes)))
        f.write("const int rt_nmodels = %d;\n" % len(sizes))
    driver = os.path.join(work, "roundtrip")
    rt = os.path.join(os.path.dirname(mlbc), "libmlbc_rt.a")
    grpc = os.path.join(os.path.dirname(mlbc), "libmlbc_grpc.a")
    libs = subprocess.run(["pkg-config", "--libs", "grpc++", "protobuf"], capture_output=True,
                          text=True).stdout.split()
    sh([bench.CC, "-std=c11", *FLAGS, "-I", os.path.join(ROOT, "runtime"),
        os.path.join(HERE, "roundtrip.c"), table] + [d[0] for d in done]
       + [grpc, rt, "-o", driver] + libs + ["-lstdc++", "-lprotobuf-c", "-lpthread", "-ldl",
                                            "-lm"], 120)
    return driver, weights, facts


def floor_vectorised(driver):
    """How many packed SSE/AVX multiplies objdump finds in floor_dot (0: not vectorised)."""
    try:
        asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", driver],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    body = asm.split("<floor_dot>:", 1)[1].split("\n\n", 1)[0] if "<floor_dot>:" in asm else ""
    return sum(1 for line in body.splitlines() if "mulps" in line or "fmadd" in line and "ps" in line)


# ---- running -------------------------------------------------------------------------------

def stop(proc):
    """Ends a process this module started (by its handle), politely then firmly."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(3)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def pinned(cpu):
    """A preexec_fn that runs the child on CPU cpu only (None: no pinning)."""
    return None if cpu is None else lambda: os.sched_setaffinity(0, {cpu})


def pingpong(driver):
    """Machine facts: microseconds per one-byte pipe round trip on one CPU and across two;
    (None, None) if not measurable."""
    cpus = sorted(os.sched_getaffinity(0))
    out = []
    for a, b in ((cpus[-1], cpus[-1]), (cpus[0], cpus[-1])):
        try:
            out.append(float(sh([driver, "--pingpong", str(a), str(b), "5000"], 60)))
        except (Error, ValueError):
            out.append(None)
    return out if len(cpus) > 1 else out[:1] + [None]


def measure(driver, weights, sizes, rounds, queries, timeout, variants=VARIANTS, cpu=None):
    """Runs the hosts and the driver on fresh FIFOs, all on CPU cpu (None: wherever the
    scheduler puts them). Returns (times, checks): times[v][n] = list of ns (one per round)
    for `queries` queries, checks[v] = largest relative error."""
    tmp = tempfile.mkdtemp(prefix="mlbc-roundtrip-")
    procs, servers = [], {}
    try:
        gym, llvm, raw, proto = (os.path.join(tmp, x) for x in ("gym", "llvm", "raw", "proto"))
        ports = {"g": os.path.join(tmp, "grpc.port"), "r": os.path.join(tmp, "grpcio.port")}
        for base in (gym, llvm, raw, proto):
            os.mkfifo(base + ".in", 0o600)
            os.mkfifo(base + ".out", 0o600)
        host = [sys.executable, os.path.join(HERE, "roundtrip_host.py")]
        csv = ",".join(map(str, sizes))
        logs = []
        sessions = str(rounds * len(sizes))
        for name, args in (("gym", [gym, weights, csv, sessions, str(timeout)]),
                           ("gym-protobuf", [proto, weights, csv, sessions, str(timeout)]),
                           ("llvm", [llvm, weights, csv, sessions, str(timeout)]),
                           ("raw", [raw, weights, csv,      # (c) and (c') share the host
                                    str((queries + 1) * len(set("cC") & set(variants))),
                                    str(rounds), str(timeout)]),
                           ("grpc", [ports["g"], weights, csv, str(timeout)]),
                           ("grpc-grpcio", [ports["r"], weights, csv, str(timeout)])):
            letters = {"gym": "b", "gym-protobuf": "p", "llvm": "B", "raw": "cC", "grpc": "g",
                       "grpc-grpcio": "r"}[name]
            if not set(letters) & set(variants):
                continue
            log = open(os.path.join(tmp, name + ".log"), "w+")
            logs.append((name, log))
            procs.append(subprocess.Popen(host + [name] + args, stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                                          preexec_fn=pinned(cpu)))
            servers[letters] = procs[-1]
        cmd = [driver, weights, str(queries), str(rounds), variants, gym, llvm, raw, proto] + [
            grpc_address(ports[v], servers[v]) if v in servers else "-" for v in "gr"] + [
            str(timeout)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 10,
                               preexec_fn=pinned(cpu))
        except subprocess.TimeoutExpired:
            raise Error("the driver did not finish within %d s" % (timeout + 10))
        for v in "gr":
            if v in servers:
                servers[v].terminate()            # the gRPC hosts serve until told
        deadline = time.monotonic() + 10          # the others end by themselves after a success
        for proc in procs if p.returncode == 0 else ():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        problems = []
        for (name, log), proc in zip(logs, procs):
            stop(proc)
            log.seek(0)
            text = log.read().strip()
            log.close()
            if proc.returncode or (text and p.returncode == 0):
                problems.append("%s host (exit %s): %s" % (name, proc.returncode,
                                                            text.splitlines()[-1] if text else "-"))
        if p.returncode:
            why = p.stderr.strip() or "driver: exit status %d" % p.returncode
            if p.returncode < 0:
                why = "driver killed by %s%s" % (signal.Signals(-p.returncode).name,
                                                  " (its time limit of %d s)" % timeout
                                                  if -p.returncode == signal.SIGALRM else "")
            raise Error("; ".join([why] + problems))
        if problems:
            raise Error("; ".join(problems))
    finally:
        for proc in procs:
            stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)

    times = {v: {n: [] for n in sizes} for v in variants}
    checks = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if f[0] == "time":
            times[f[1]][int(f[2])].append(float(f[4]))
        elif f[0] == "check":
            checks[f[1]] = float(f[2])
    return times, checks


def grpc_address(port_file, proc, wait=30):
    """The loopback address the gRPC host wrote to port_file once it listened."""
    deadline = time.monotonic() + wait
    while not os.path.exists(port_file):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise Error("the gRPC host did not start listening (exit %s)" % proc.poll())
        time.sleep(0.01)
    with open(port_file) as f:
        return "127.0.0.1:%d" % int(f.read())


# ---- report --------------------------------------------------------------------------------

def json_path(build_dir):
    return os.path.abspath(os.path.join(build_dir, "bench", "roundtrip", "roundtrip.json"))


def write_json(path, times, checks, sizes, rounds, queries):
    """The per-N numbers for plots (bench/plots.py roundtrip_plot) and other tools: for each
    variant the median ms of QUERIES queries at each N, every round's ms, the total."""
    med = {v: {str(n): statistics.median(times[v][n]) * 1e-6 for n in sizes} for v in VARIANTS}
    data = {"sizes": sizes, "queries": queries, "rounds": rounds, "order": list(VARIANTS),
            "labels": LABELS, "median_ms": med,
            "round_ms": {v: {str(n): [t * 1e-6 for t in times[v][n]] for n in sizes}
                         for v in VARIANTS},
            "total_ms": {v: sum(med[v].values()) for v in VARIANTS},
            "fixed_n": FIXED_N,
            "fixed_us": {v: statistics.median(times[v][FIXED_N]) / queries * 1e-3
                         for v in VARIANTS},
            "max_rel_error": checks}
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)
    return path


def report(times, checks, sizes, rounds, queries, facts, nmul, cpu, wake):
    ms = 1e-6
    med = {v: {n: statistics.median(times[v][n]) * ms for n in sizes} for v in VARIANTS}
    total = {v: sum(med[v].values()) for v in VARIANTS}
    per_round = {v: [sum(times[v][n][r] for n in sizes) * ms for r in range(rounds)]
                 for v in VARIANTS}

    print("compile (not counted): %d models, mlbc %.1f s + cc %s %.1f s in %d parallel jobs "
          "(wall %.1f s; mlbc median %.0f ms per model)"
          % (len(sizes), sum(facts["mlbc"]), " ".join(FLAGS), sum(facts["cc"]), facts["jobs"],
             facts["wall"], statistics.median(facts["mlbc"]) * 1e3))
    print("(d) is built with %s; %s" % (" ".join(FLAGS), "objdump: not available" if nmul is None
          else "vectorised: %d packed multiplies in floor_dot" % nmul if nmul
          else "NOT vectorised (no packed multiply in floor_dot)"))
    print("one query: copy the N features into the buffer the evaluator reads (from a pool of 8 "
          "vectors; the same in every\nvariant), evaluate, read y. Per N the variants run in a "
          "shuffled order, 1 warm-up + %d timed queries each;\n%d rounds; per-N time = median "
          "over the rounds, total = sum over the %d sizes; runner/session setup not counted."
          % (queries, rounds, len(sizes)))
    print("the driver and the hosts all run on CPU %d: a one-byte pipe round trip takes %s µs "
          "there, %s µs between two\nCPUs (a wake-up across CPUs; on a VM it can dwarf the "
          "protocols compared here and varies with placement)"
          % (cpu, "%.1f" % wake[0] if wake[0] else "?", "%.1f" % wake[1] if wake[1] else "-"))
    bench.table("round trip: %d queries per N, N = %s (%d sizes), y = x.W + b, float32"
                % (queries, "%d, %d, ..., %d" % tuple(sizes[:2] + sizes[-1:])
                   if len(sizes) > 2 else sizes, len(sizes)),
                ["variant", "total ms", "min-max of round totals", "max rel. error"],
                [[LABELS[v], "%.1f" % total[v],
                  "%.1f-%.1f" % (min(per_round[v]), max(per_round[v])),
                  "%.1e" % checks[v] if v in checks else "-"] for v in VARIANTS])
    print("total = sum over N of the per-N medians (a slow N in one round does not count), "
          "so it can be below every\nsingle round's total.")
    lines = []
    for name, mine, floor, target in TARGETS:
        r = total[mine] / total[floor] if total[floor] else float("nan")
        lines.append([name, "%.2f" % r, "<= %.1f" % target if target else "-",
                      ("yes" if r <= target else "NO") if target else "-"])
    bench.table("ratios of the totals", ["ratio", "measured", "target", "met"], lines,
                ["%-10s %s (diagnostic, no target)" % kv for kv in NOTES.items()])
    print(BRIDGE)
    fixed = {v: statistics.median(times[v][FIXED_N]) / queries * 1e-3 for v in VARIANTS}
    bench.table("fixed cost per query: N = %d floats (median of %d rounds of %d queries)"
                % (FIXED_N, rounds, queries), ["variant", "us per query", "/ (c)"],
                [[LABELS[v], "%.1f" % fixed[v], "%.2f" % (fixed[v] / fixed["c"])]
                 for v in VARIANTS if v not in "AD"])
    got = {"sweep, one query per N, ms": {v: total[v] / queries for v in VARIANTS},
           "fixed cost per query, us": fixed}
    bench.table("gRPC against the ML-Compiler-Bridge's gRPC runner (252 ms for its sweep of one "
                "query per N, 300-400 us fixed)",
                ["figure", "target", "(g)", "met", "(g')", "met", "(G)", "met"],
                [[what, "<= %g" % bound] + sum((["%.1f" % got[what][v],
                                                 "yes" if got[what][v] <= bound else "NO"]
                                                for v in "grG"), [])
                 for what, bound in GRPC_TARGETS])
    rows = []
    for n in [n for n in SHOW_N if n in sizes] or sizes[:: max(1, len(sizes) // 4)]:
        rows.append(["%d" % n] + ["%.3f" % med[v][n] for v in "abBpgrGcCd"]
                    + ["%.2f" % (med["b"][n] / med["c"][n]), "%.2f" % (med["a"][n] / med["d"][n]),
                       "%.2f" % (med["A"][n] / med["D"][n])])
    bench.table("per N: ms for %d queries (median of %d rounds)" % (queries, rounds),
                ["N", "(a)", "(b)", "(b')", "(p)", "(g)", "(g')", "(G)", "(c)", "(c')", "(d)",
                 "(b)/(c)", "(a)/(d)", "(a')/(d')"],
                rows)
    bad = [v for v, e in checks.items() if not e <= 1e-4]
    if bad:
        print("WARNING: answers differ from a double-precision dot product (relative error "
              "above 1e-4) in variant(s) %s" % ", ".join(bad))


def study(build_dir, quick=False, rounds=ROUNDS, queries=QUERIES):
    """The whole round-trip part: builds in BUILD/bench/roundtrip, measures, prints."""
    t0 = time.time()
    sizes = QUICK_SIZES if quick else SIZES
    print("\n== round trip (the ML-Compiler-Bridge study)%s" % (
        " --quick: every 10th size, totals not comparable with the full sweep" if quick else ""))
    mlbc = os.path.abspath(os.path.join(build_dir, "mlbc"))
    # (g)'s host: mlbc_gym's native engine, this build's library
    os.environ["MLBC_GRPC_LIB"] = os.path.join(os.path.dirname(mlbc), "lib", "mlbc",
                                               "libmlbc_grpc.so")
    work = os.path.abspath(os.path.join(build_dir, "bench", "roundtrip"))
    os.makedirs(work, exist_ok=True)
    if os.path.exists(json_path(build_dir)):
        os.remove(json_path(build_dir))         # never plot an earlier run's numbers
    try:
        driver, weights, facts = build(mlbc, work, [FIXED_N] + sizes)
        cpu = max(os.sched_getaffinity(0))
        wake = pingpong(driver)
        # a generous bound (a round of the full sweep takes a few seconds), never a hang
        times, checks = measure(driver, weights, [FIXED_N] + sizes, rounds, queries,
                                timeout=int(60 + 0.3 * rounds * len(sizes)), cpu=cpu)
    except (Error, OSError) as e:
        print("round trip: not measured: %s" % e)
        return False
    report(times, checks, sizes, rounds, queries, facts, floor_vectorised(driver), cpu, wake)
    print("per-N numbers: %s" % write_json(json_path(build_dir), times, checks, sizes, rounds,
                                             queries))
    print("(round trip: %.0f s)" % (time.time() - t0))
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--quick", action="store_true", help="every 10th N only")
    ap.add_argument("--rounds", type=int, default=ROUNDS,
                    help="repetitions of the sweep (default %d)" % ROUNDS)
    ap.add_argument("--queries", type=int, default=QUERIES)
    args = ap.parse_args()
    os.chdir(ROOT)
    for key, value in bench.machine_facts():
        print("%-13s %s" % (key, value))
    ok = study(args.build, args.quick, args.rounds, args.queries)
    if ok:
        import plots
        png, why = plots.roundtrip_plot(json_path(args.build), os.path.join(
            os.path.dirname(json_path(args.build)), "..", "roundtrip.png"))
        print("plot: %s" % (os.path.normpath(png) if png else "skipped: %s" % why))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
