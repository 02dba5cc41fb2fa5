#!/usr/bin/python3
"""Train an inliner-for-size policy end to end and measure it on held-out code.

    python3 train/train.py --build build [--out DIR] [--cache DIR] [--manifest FILE]
                           [--es-seconds S] [--workers N | --scheduler ADDRESS]

  1. corpus    train/corpus.sh: C files from Debian's binutils-source (libiberty, zlib, bfd,
               opcodes, binutils, gprof, libsframe, libctf) that compile standalone,
               lowered once to bitcode; split train / held-out by a hash of the name
               (--manifest uses another corpus, e.g. the small committed one)
  2. collect   clang-19 -Oz, ML inliner in interactive mode, served by mlbc_gym: the
               heuristic's decisions (slot 25 with -inliner-interactive-include-default)
               and the real features (a replay run), as LLVM training logs (collect.py)
  3. BC        behaviour cloning of the heuristic, MLGO's network (quantile buckets from the
               collected features, [x, x^2], 40-40-20 ReLU, 2 logits), numpy + Adam
  4. improve   for .text size: a line search over the decision bias, then evolution
               strategies (es.py); rewards are real .text sizes of the training modules,
               with an exact trajectory cache
  5. export    ONNX (onnx.helper) -> mlbc -> cc -shared; the compiled policy must give the
               numpy network's decisions on the logged features (mlbc-replay)
  6. held-out  every held-out module: clang-19's default -Oz, the BC policy and the trained
               policy served by mlbc-serve (compiled C, no Python); .text sizes and compile
               time (CPU seconds of clang + server, runs one after another)

Prints a table and writes OUT/results.json and OUT/report.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import collect  # noqa: E402
import es  # noqa: E402
import export_onnx  # noqa: E402
import inliner_env as env  # noqa: E402
import pool as dask_pool  # noqa: E402
from policy_net import Net, quantiles, train_supervised  # noqa: E402

T0 = time.time()


def say(msg):
    print("[%5.0fs] %s" % (time.time() - T0, msg), flush=True)


# ---- steps ---------------------------------------------------------------------------------------

def make_corpus(cache):
    p = subprocess.run(["sh", os.path.join(HERE, "corpus.sh"), cache])
    if p.returncode:
        sys.exit("train: corpus.sh failed")
    return os.path.join(cache, "corpus", "manifest.tsv")


def behaviour_cloning(data, epochs=40, seed=0, log=say):
    """BC on the collected heuristic decisions. Returns (net, train accuracy, validation
    accuracy on 10% of the modules kept out of BC)."""
    names = sorted(data)
    X = np.concatenate([data[n][0] for n in names])
    y = np.concatenate([data[n][1] for n in names])
    owner = np.concatenate([[k] * len(data[n][1]) for k, n in enumerate(names)])
    rng = np.random.default_rng(seed)
    nval = max(1, len(names) // 10) if len(names) >= 5 else 0
    val = rng.choice(len(names), nval, replace=False) if nval else np.zeros(0, np.int64)
    vm = np.isin(owner, val)
    if not (~vm).any():
        vm[:] = False
    net = Net(quantiles(X), seed=seed)
    P = net.preprocess(X)
    train_supervised(net, P[~vm], y[~vm], epochs=epochs, seed=seed, log=log)
    pred = net.decide(X)
    acc_tr = float((pred[~vm] == y[~vm]).mean())
    acc_va = float((pred[vm] == y[vm]).mean()) if vm.any() else float("nan")
    return net, acc_tr, acc_va


def bias_search(net, ev, names, offsets, log=say):
    """The cheapest direction of all: shift the "inline" logit (the head's bias), keep the
    best shift by training reward."""
    best, best_r = net, ev.reward(net, names)
    log("  bias 0: training reward %+.4f%%" % (100 * best_r))
    for off in offsets:
        c = net.copy()
        c.b[-1][1] += np.float32(off)
        r = ev.reward(c, names)
        log("  bias %+g: training reward %+.4f%% (%d compiles)" % (off, 100 * r, ev.compiles))
        if r > best_r:
            best, best_r = c, r
    return best, best_r


def compile_policy(build, onnx_path, out_dir, name="policy"):
    """mlbc + cc -shared; returns the shared object's path."""
    c = os.path.join(out_dir, name + ".c")
    p = subprocess.run([os.path.join(build, "mlbc"), onnx_path, "-o", c, "-n", name],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("mlbc: " + p.stderr.strip())
    so = os.path.join(out_dir, name + ".so")
    p = subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", so, c, "-lm"],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("cc: " + p.stderr.strip())
    return so


def replay_decisions(build, so, log_path):
    """The compiled policy's decisions on a log's observations, by mlbc-replay."""
    p = subprocess.run([os.path.join(build, "mlbc-replay"), "--model", so, log_path],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("mlbc-replay: " + p.stderr.strip())
    return np.array([int(line.split()[-1]) for line in p.stdout.splitlines() if line.strip()],
                    np.int64)


def check_export(build, net, so, log_paths):
    """Decisions of the compiled policy vs the numpy network on logged features."""
    X, _, _ = collect.read_logs(log_paths)
    want = net.decide(X)
    got = np.concatenate([replay_decisions(build, so, p) for p in log_paths])
    return int((got == want).sum()), len(want)


def build_plugin(build, onnx_path, out_dir):
    """The clang pass plugin of plugins/clang for this policy, if that part of the project
    is there and builds; returns (path or None, why not)."""
    script = os.path.join(ROOT, "plugins", "clang", "build.sh")
    if not os.path.exists(script):
        return None, "plugins/clang/build.sh is not there"
    so = os.path.join(out_dir, "plugin_trained.so")
    p = subprocess.run(["sh", script, "--build", build, "-n", "trained_policy", onnx_path, so],
                       capture_output=True, text=True, timeout=900)
    if p.returncode or not os.path.exists(so):
        return None, "plugins/clang/build.sh failed: " + (p.stderr or p.stdout).strip()[-300:]
    return so, ""


def heldout_task(mod, serve, so, plugin):
    """One held-out module as a Dask task, in a temporary folder of the worker's: clang-19's
    default -Oz, the compiled policy served by mlbc-serve (retried once), and the policy
    inside clang through the plugin when there is one, back to back so that their times
    compare. Returns (default Run, served Run, plugin Run or None, mlbc-serve's training
    log as bytes or None)."""
    with tempfile.TemporaryDirectory(prefix="mlbc-heldout-") as workdir:
        log = os.path.join(workdir, mod.name + ".log")
        d = env.compile_default(mod, workdir)
        p = env.compile_with_so(mod, so, workdir, serve, log=log)
        if not p.ok:
            p = env.compile_with_so(mod, so, workdir, serve, log=log)
        g = env.compile_with_plugin(mod, plugin, workdir) if plugin else None
        data = None
        if os.path.exists(log):
            with open(log, "rb") as f:
                data = f.read()
        return d, p, g, data


def served_task(mod, serve, so):
    """mod under a compiled policy served by mlbc-serve, as a Dask task: a Run."""
    with tempfile.TemporaryDirectory(prefix="mlbc-served-") as workdir:
        return env.compile_with_so(mod, so, workdir, serve)


def evaluate_heldout(mods, build, so, pool, log_dir, plugin=None):
    """Held-out modules on the pool's workers (heldout_task); writes mlbc-serve's logs into
    log_dir. Returns (module, default Run, served Run, plugin Run or None) per module."""
    os.makedirs(log_dir, exist_ok=True)
    rows = []
    for m, (d, p, g, data) in zip(mods, pool.map(heldout_task, mods,
                                                 os.path.join(build, "mlbc-serve"), so, plugin)):
        if data is not None:
            with open(os.path.join(log_dir, m.name + ".log"), "wb") as f:
                f.write(data)
        rows.append((m, d, p, g))
    return rows


def table(rows, headers):
    w = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = lambda r: "| " + " | ".join(str(c).rjust(w[i]) if i else str(c).ljust(w[i])  # noqa
                                      for i, c in enumerate(r)) + " |"
    out = [line(headers), "|" + "|".join("-" * (x + 2) for x in w) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


# ---- main ---------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", help="output folder (default BUILD/train-out)")
    ap.add_argument("--cache", help="corpus cache (default BUILD/train-cache)")
    ap.add_argument("--manifest", help="use this corpus manifest instead of corpus.sh's")
    ap.add_argument("--es-seconds", type=float, default=660)
    ap.add_argument("--es-iterations", type=int, default=1000)
    ap.add_argument("--es-pairs", type=int, default=4)
    ap.add_argument("--es-sigma", type=float, default=0.3)
    ap.add_argument("--bias-offsets", default="-8,-6,-4,-2,2")
    ap.add_argument("--bc-epochs", type=int, default=40)
    ap.add_argument("--workers", type=int, default=None,
                    help="worker processes of the local Dask cluster (default: all cores)")
    ap.add_argument("--scheduler", default=None,
                    help="run the compile jobs on the Dask cluster of this scheduler "
                         "(tcp://HOST:PORT; default $%s, else a local cluster)"
                    % dask_pool.SCHEDULER_ENV)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-plugin", action="store_true",
                    help="do not build and measure the clang plugin (plugins/clang)")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    out = os.path.abspath(args.out or os.path.join(build, "train-out"))
    cache = os.path.abspath(args.cache or os.path.join(build, "train-cache"))
    os.makedirs(out, exist_ok=True)
    for tool in ("mlbc", "mlbc-serve", "mlbc-replay"):
        if not os.path.exists(os.path.join(build, tool)):
            sys.exit("train: %s/%s is not built (make BUILD=%s)" % (build, tool, args.build))
    try:
        jobs = dask_pool.Pool(args.scheduler, args.workers)
    except RuntimeError as e:
        sys.exit("train: %s" % e)
    try:
        return run(args, build, cache, out, jobs)
    finally:
        jobs.close()


def run(args, build, cache, out, jobs):
    """Steps 1-6, every compilation a task of jobs (a pool.Pool)."""
    results = {"clang": subprocess.run([env.CLANG, "--version"], capture_output=True,
                                       text=True).stdout.splitlines()[0]}

    # 1. corpus
    say("1/6 corpus")
    manifest = args.manifest or make_corpus(cache)
    mods = env.load_manifest(manifest)
    train_mods = [m for m in mods if m.split == "train"]
    held_mods = [m for m in mods if m.split == "heldout"]
    say("  %d modules: %d train, %d held out (%s)" % (len(mods), len(train_mods),
                                                      len(held_mods), manifest))
    results["corpus"] = {"manifest": manifest, "train": len(train_mods),
                         "heldout": len(held_mods)}

    # 2. collect
    say("2/6 collect: heuristic decisions and features on the training modules")
    t = time.time()
    log_dir = os.path.join(out, "logs")
    say("  on %d Dask workers (%s)" % (jobs.workers(), jobs.address or "local cluster"))
    data = collect.collect(train_mods, log_dir, jobs, say)
    nobs = sum(len(v[1]) for v in data.values())
    say("  %d modules with decisions, %d observations (%.0f%% inlined by the heuristic), "
        "logs in %s (%.0f s)" % (len(data), nobs, 100.0 * sum(v[1].sum() for v in
                                                                data.values()) / max(nobs, 1),
                                 log_dir, time.time() - t))
    if not data:
        sys.exit("train: no observations collected")
    results["collect"] = {"modules": len(data), "observations": nobs}

    # 3. behaviour cloning
    say("3/6 behaviour cloning of the heuristic")
    net, acc_tr, acc_va = behaviour_cloning(data, args.bc_epochs, args.seed)
    say("  accuracy %.4f on training modules, %.4f on modules kept out of BC" % (acc_tr, acc_va))
    net.save(os.path.join(out, "bc.npz"))
    results["bc"] = {"train_accuracy": acc_tr, "val_accuracy": acc_va}

    # 4. improve for size
    say("4/6 improve for .text size on the training modules (bias line search, then ES)")
    names = sorted(data)
    cache_t = es.TrajectoryCache()
    for n in names:                      # the heuristic's trajectories are known already
        cache_t.add(n, data[n][0], data[n][1], data[n][2])
    ev = es.Evaluator([m for m in train_mods if m.name in data],
                      {n: data[n][2] for n in names}, jobs, cache_t, say)
    t = time.time()
    offsets = [float(o) for o in args.bias_offsets.split(",") if o.strip()]
    r_bc = ev.reward(net, names)
    start, r_start = bias_search(net, ev, names, offsets)
    budget = max(0.0, args.es_seconds - (time.time() - t))
    trained, r_best, hist = es.run_es(start, ev, names, iterations=args.es_iterations,
                                      pairs=args.es_pairs, sigma=args.es_sigma, lr=0.05,
                                      layers=(2, 3), seed=args.seed, time_budget=budget,
                                      log=say)
    say("  training reward: BC %+.4f%%, after bias search %+.4f%%, after ES %+.4f%% "
        "(%d compiles, %.0f s)" % (100 * r_bc, 100 * r_start, 100 * r_best, ev.compiles,
                                   time.time() - t))
    trained.save(os.path.join(out, "trained.npz"))
    results["improve"] = {"train_reward_bc": r_bc, "train_reward_bias": r_start,
                          "train_reward_es": r_best, "es_iterations": len(hist) - 1,
                          "compiles": ev.compiles}

    # 5. export, compile with mlbc, check against numpy
    say("5/6 export ONNX, compile with mlbc, check decisions against numpy")
    sos = {}
    for tag, n_ in (("bc", net), ("trained", trained)):
        onnx_path = os.path.join(out, tag + ".onnx")
        export_onnx.export(n_, onnx_path)
        sos[tag] = compile_policy(build, onnx_path, out, "policy_" + tag)
        logs = sorted(os.path.join(log_dir, f) for f in os.listdir(log_dir))[:40]
        same, tot = check_export(build, n_, sos[tag], logs)
        say("  %s: %s -> %s; compiled policy = numpy network on %d/%d logged observations"
            % (tag, onnx_path, sos[tag], same, tot))
        results["export_" + tag] = {"onnx": onnx_path, "so": sos[tag], "agree": same,
                                    "checked": tot}

    # 6. held-out
    say("6/6 held-out modules: default -Oz vs the compiled policies via mlbc-serve")
    t = time.time()
    plugin, why = (None, "--no-plugin") if args.no_plugin else \
        build_plugin(build, os.path.join(out, "trained.onnx"), out)
    say("  clang plugin: %s" % (plugin or "not used (%s)" % why))
    rows = evaluate_heldout(held_mods, build, sos["trained"], jobs,
                            os.path.join(out, "heldout-logs"), plugin)
    if plugin and not all(g.ok for _, _, _, g in rows):
        bad = [m.name for m, _, _, g in rows if not g.ok]
        say("  clang plugin failed on %d modules (%s): left out of the table"
            % (len(bad), ", ".join(bad[:3])))
        plugin = None
    bc_rows = jobs.map(served_task, held_mods, os.path.join(build, "mlbc-serve"), sos["bc"])
    failed = [m.name for (m, d, p, _), b in zip(rows, bc_rows) if not (d.ok and p.ok and b.ok)]
    ok = [(m, d, p, b) for (m, d, p, _), b in zip(rows, bc_rows) if d.ok and p.ok and b.ok]
    plug = {m.name: g for m, _, _, g in rows} if plugin else {}
    tot_d = sum(d.text for _, d, _, _ in ok)
    tot_p = sum(p.text for _, _, p, _ in ok)
    tot_b = sum(b.text for _, _, _, b in ok)
    cpu_d = sum(d.cpu for _, d, _, _ in ok)
    cpu_p = sum(p.cpu for _, _, p, _ in ok)
    wall_d = sum(d.seconds for _, d, _, _ in ok)
    wall_p = sum(p.seconds for _, _, p, _ in ok)
    ndec = 0
    for m, _, _, _ in ok:
        lp = os.path.join(out, "heldout-logs", m.name + ".log")
        if os.path.exists(lp) and os.path.getsize(lp):
            ndec += len(collect.read_log(lp)[1])
    changed = sum(1 for _, d, p, _ in ok if p.text != d.text)
    better = sum(1 for _, d, p, _ in ok if p.text < d.text)
    say("  %d modules (%d failed: %s), %.0f s" % (len(ok), len(failed), ", ".join(failed[:5]),
                                                 time.time() - t))

    pct = lambda a, b: "%+.3f%%" % (100.0 * (a - b) / b) if b else "n/a"  # noqa: E731
    size_rows = [
        ("clang-19 -Oz, default heuristic", tot_d, "", "%.1f" % cpu_d, "%.1f" % wall_d),
        ("behaviour cloning (mlbc-serve)", tot_b, pct(tot_b, tot_d), "", ""),
        ("trained policy (mlbc-serve)", tot_p, pct(tot_p, tot_d), "%.1f" % cpu_p,
         "%.1f" % wall_p),
    ]
    if plug:
        tot_g = sum(plug[m.name].text for m, _, _, _ in ok)
        cpu_g = sum(plug[m.name].cpu for m, _, _, _ in ok)
        wall_g = sum(plug[m.name].seconds for m, _, _, _ in ok)
        size_rows.append(("trained policy (clang plugin)", tot_g, pct(tot_g, tot_d),
                          "%.1f" % cpu_g, "%.1f" % wall_g))
        results["plugin"] = {"so": plugin, "text": tot_g, "cpu": cpu_g, "wall": wall_g,
                             "same_as_serve": sum(1 for m, _, p, _ in ok
                                                  if plug[m.name].text == p.text)}
    tab = table(size_rows, ["held-out: %d modules, %d inliner decisions" % (len(ok), ndec),
                            ".text bytes", "vs default", "CPU s", "wall s"])
    print()
    print(tab)
    print()
    verdict = ("target met: %.3f%% smaller" % (100.0 * (tot_d - tot_p) / tot_d)
               if tot_p <= 0.99 * tot_d else
               "target (>= 1%% smaller) NOT met: %s" % pct(tot_p, tot_d))
    say("%s; %d of %d held-out modules changed size (%d smaller); compile time with the "
        "policy %s CPU" % (verdict, changed, len(ok), better, pct(cpu_p, cpu_d)))
    results["heldout"] = {
        "modules": len(ok), "failed": failed, "decisions": ndec,
        "text_default": tot_d, "text_bc": tot_b, "text_trained": tot_p,
        "cpu_default": cpu_d, "cpu_trained": cpu_p, "wall_default": wall_d,
        "wall_trained": wall_p, "modules_changed": changed, "modules_smaller": better,
        "per_module": [(m.name, d.text, b.text, p.text) for m, d, p, b in ok]}
    results["seconds"] = time.time() - T0
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(tab + "\n\n" + verdict + "\n")
    say("wrote %s and %s" % (os.path.join(out, "results.json"), os.path.join(out, "report.md")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
