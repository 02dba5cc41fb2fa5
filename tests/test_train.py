"""The training loop's plumbing (train/), on the small committed corpus tests/train_corpus
(14 zlib files): corpus to bitcode, collection of the heuristic's decisions through mlbc_gym,
behaviour cloning, a few seconds of evolution strategies, ONNX export compiled by mlbc, and the
compiled policy served to clang-19 by mlbc-serve. Checks that things work, never timings or
the size target (make train-demo measures those on the real corpus).

    python3 tests/test_train.py --build BUILD [-k SUBSTRING] [-v]

Ends with one line "N passed, M failed[, K skipped]".
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import harness
from harness import Failure, expect

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "train"))
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))
CORPUS = os.path.join(HERE, "train_corpus")
ZFLAGS = ["-DHAVE_UNISTD_H", "-DHAVE_STDARG_H"]


class Ctx(harness.Ctx):
    remembered = (Exception,)   # not only Failure: a crashed train.py run (minutes) is not rerun

    # the corpus as bitcode + manifest
    def manifest(self):
        def make():
            import inliner_env as env
            return env.manifest_from_dir(CORPUS, os.path.join(self.work, "corpus"), ZFLAGS)
        return self.fixture("manifest", make)

    def modules(self):
        import inliner_env as env
        return env.load_manifest(self.manifest())

    # the whole loop, small: train.py on the committed corpus
    def trained(self):
        def make():
            for t in ("mlbc", "mlbc-serve", "mlbc-replay"):
                self.tool(t)
            out = os.path.join(self.work, "out")
            cmd = [sys.executable, os.path.join(ROOT, "train", "train.py"), "--build",
                   self.build, "--manifest", self.manifest(), "--out", out, "--es-seconds",
                   "12", "--es-pairs", "2", "--bias-offsets=-4,4", "--bc-epochs", "60", "--no-plugin"]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            self.train_stdout = p.stdout
            expect(p.returncode == 0, "train.py failed (%d): %s" % (
                p.returncode, (p.stderr or p.stdout).strip()[-600:]))
            with open(os.path.join(out, "results.json")) as f:
                return out, json.load(f)
        return self.fixture("trained", make)

    def pool(self):
        """A local Dask cluster of two worker processes, closed by main()."""
        def make():
            import pool
            return pool.Pool(workers=2)
        return self.fixture("pool", make)

    def close(self):
        ok, pool = self._cache.get("pool", (False, None))
        if ok:
            pool.close()

    def workdir(self):
        d = os.path.join(self.work, "tmp")
        os.makedirs(d, exist_ok=True)
        return d


# ---- tests -------------------------------------------------------------------------------------

def test_corpus_compiles(ctx):
    mods = ctx.modules()
    expect(len(mods) == 14, "%d of 14 corpus files lowered to bitcode" % len(mods))
    splits = {m.split for m in mods}
    expect(splits == {"train", "heldout"}, "split: %s" % splits)
    import inliner_env as env
    for m in mods:
        expect(m.split == env.split_of(m.name), "split of %s is not the hash split" % m.name)


def test_corpus_sh_split_matches_python(ctx):
    # corpus.sh splits with md5sum in the shell; inliner_env.split_of must agree
    import inliner_env as env
    for name in ("libiberty-regex", "zlib-deflate", "bfd-elflink", "opcodes-i386-dis", "x"):
        h = subprocess.run("printf %s '" + name + "' | md5sum | cut -c1", shell=True,
                           capture_output=True, text=True).stdout.strip()
        want = "heldout" if h in "0123" else "train"
        expect(env.split_of(name) == want, "%s: %s vs %s" % (name, env.split_of(name), want))


def test_text_size_matches_llvm_size(ctx):
    import inliner_env as env
    m = [m for m in ctx.modules() if m.name == "deflate"][0]
    obj = os.path.join(ctx.workdir(), "deflate.o")
    r = env.compile_default(m, ctx.workdir(), keep=obj)
    expect(r.ok, "compile failed: %s" % r.error)
    p = subprocess.run(["llvm-size-19", "-A", obj], capture_output=True, text=True)
    expect(p.returncode == 0, "llvm-size-19 failed")
    text = sum(int(line.split()[1]) for line in p.stdout.splitlines()
               if line.startswith(".text"))
    expect(text == r.text and text > 0, "llvm-size says %d, text_size %s" % (text, r.text))


def test_heuristic_replay_is_exact(ctx):
    # answering with slot 25 under include-default must give clang's own -Oz object
    import inliner_env as env
    for m in ctx.modules():
        if m.name not in ("deflate", "inflate", "gzlib"):
            continue
        d = env.compile_default(m, ctx.workdir())
        h = env.compile_with_policy(m, lambda x, i: x[env.SLOT_DEFAULT], ctx.workdir(),
                                    include_default=True)
        expect(h.ok and d.ok, "%s: compile failed" % m.name)
        expect(len(h.decisions) > 0, "%s: no observation" % m.name)
        expect(h.text == d.text, "%s: heuristic via slot 25 %d bytes, default %d"
               % (m.name, h.text, d.text))


def test_logs_collected_and_readable(ctx):
    out, res = ctx.trained()
    import collect
    from mlbc_gym import read_log
    logs = sorted(os.listdir(os.path.join(out, "logs")))
    expect(len(logs) >= 5, "only %d logs" % len(logs))
    expect(res["collect"]["observations"] > 50, "observations: %s" % res["collect"])
    n = 0
    for fn in logs:
        reader, obs = read_log(os.path.join(out, "logs", fn))
        names = [s.name for s in reader.features]
        expect(len(names) == 40 and names[-2:] == ["inlining_default", "inlining_decision"],
               "%s: features %s" % (fn, names[-3:]))
        expect(reader.score is not None and reader.score.name == "text_size", "score spec")
        for o in obs:
            expect(o.features["inlining_default"][0] in (0, 1), "default not 0/1")
            expect(o.features["inlining_decision"] == o.features["inlining_default"],
                   "collected decision is not the heuristic's")
            n += 1
        expect(obs[-1].score is not None and obs[-1].score[0] > 0, "%s: no size outcome" % fn)
    X, y, _ = collect.read_logs([os.path.join(out, "logs", f) for f in logs])
    expect(len(y) == n == res["collect"]["observations"], "counts %d %d %s" % (
        len(y), n, res["collect"]))
    # the real callee_basic_block_count (replay run), not the heuristic's 0/1 in slot 25
    import inliner_env as env
    expect(X[:, env.SLOT_DEFAULT].max() > 1, "slot 25 still holds the heuristic's decision")


def test_logs_read_by_c_reader(ctx):
    # mlbc-replay (the C log reader) reads the Python-written logs: one line per observation
    out, _ = ctx.trained()
    from mlbc_gym import read_log
    d = os.path.join(out, "logs")
    fn = max(os.listdir(d), key=lambda f: os.path.getsize(os.path.join(d, f)))
    p = subprocess.run([ctx.tool("mlbc-replay"), "--model", os.path.join(out, "policy_bc.so"),
                        os.path.join(d, fn)], capture_output=True, text=True)
    expect(p.returncode == 0, "mlbc-replay: %s" % p.stderr.strip())
    expect(len(p.stdout.splitlines()) == len(read_log(os.path.join(d, fn))[1]),
           "mlbc-replay saw another number of observations")


def test_bc_accuracy(ctx):
    _, res = ctx.trained()
    acc = res["bc"]["train_accuracy"]
    expect(acc >= 0.9, "behaviour cloning accuracy %.3f < 0.9" % acc)


def test_onnx_shape_and_fusion(ctx):
    out, _ = ctx.trained()
    import onnxshim  # noqa: F401
    import onnx
    from policy_net import NET_FEATURES
    m = onnx.load(os.path.join(out, "trained.onnx"))
    ops = [n.op_type for n in m.graph.node]
    expect(ops.count("LessOrEqual") == 35 and ops.count("ReduceSum") == 35,
           "bucketisation pattern: %d LessOrEqual, %d ReduceSum"
           % (ops.count("LessOrEqual"), ops.count("ReduceSum")))
    expect(ops.count("Gemm") == 4 and ops.count("Relu") == 3 and ops[-1] == "ArgMax",
           "MLP shape: %s" % ops[-12:])
    expect([i.name for i in m.graph.input] == NET_FEATURES, "inputs")
    expect([o.name for o in m.graph.output] == ["inlining_decision"], "output")
    c = os.path.join(out, "policy_trained.c")
    with open(c) as f:
        src = f.read()
    expect(src.count("fused_bucketize") >= 35 or src.count("Bucketize") >= 35,
           "mlbc did not fuse the quantile bucketisation")
    info = subprocess.run([ctx.tool("mlbc"), os.path.join(out, "trained.onnx"), "--info"],
                          capture_output=True, text=True)
    expect(info.returncode == 0 and "inlining_decision" in info.stdout, "mlbc --info")


def test_compiled_policy_matches_numpy(ctx):
    out, res = ctx.trained()
    for tag in ("bc", "trained"):
        e = res["export_" + tag]
        expect(e["checked"] > 50, "%s: only %d observations checked" % (tag, e["checked"]))
        expect(e["agree"] == e["checked"], "%s: compiled policy differs from numpy on %d of %d"
               % (tag, e["checked"] - e["agree"], e["checked"]))


def test_compiled_policy_on_perturbed_network(ctx):
    # a network far from the heuristic (random weights): the exported graph, compiled by
    # mlbc, must still give numpy's decisions on every logged observation
    out, _ = ctx.trained()
    import numpy as np
    import collect
    import export_onnx
    from policy_net import Net
    import train as T
    net = Net.load(os.path.join(out, "bc.npz"))
    rng = np.random.default_rng(7)
    net.set_flat(net.get_flat() + 0.3 * rng.standard_normal(net.get_flat().size))
    d = os.path.join(ctx.work, "perturbed")
    os.makedirs(d, exist_ok=True)
    export_onnx.export(net, os.path.join(d, "p.onnx"))
    so = T.compile_policy(ctx.build, os.path.join(d, "p.onnx"), d, "perturbed")
    logs = [os.path.join(out, "logs", f) for f in sorted(os.listdir(os.path.join(out, "logs")))]
    X, _, _ = collect.read_logs(logs)
    want = net.decide(X)
    got = np.concatenate([T.replay_decisions(ctx.build, so, p) for p in logs])
    lg = net.logits(X)
    bad = np.nonzero(got != want)[0]
    expect(all(abs(lg[i, 1] - lg[i, 0]) < 1e-4 for i in bad),
           "%d decisions differ, not ties" % len(bad))
    expect(0 < want.sum() < len(want) or len(bad) == 0, "degenerate")


def test_served_policy_takes_effect(ctx):
    # mlbc-serve with the compiled policy and mlbc_gym with the numpy network walk the same
    # trajectory and produce the same object; a policy that never inlines gives another one
    out, _ = ctx.trained()
    import inliner_env as env
    from policy_net import Net
    from mlbc_gym import read_log
    net = Net.load(os.path.join(out, "trained.npz"))
    so = os.path.join(out, "policy_trained.so")
    checked = 0
    for m in ctx.modules():
        if m.name not in ("deflate", "inflate"):
            continue
        log = os.path.join(ctx.workdir(), m.name + ".served.log")
        s = env.compile_with_so(m, so, ctx.workdir(), ctx.tool("mlbc-serve"), log=log)
        expect(s.ok, "%s: mlbc-serve run failed: %s" % (m.name, s.error))
        p = env.compile_with_policy(m, lambda x, i: net.decide_one(x), ctx.workdir())
        expect(p.ok, "%s: mlbc_gym run failed: %s" % (m.name, p.error))
        _, obs = read_log(log)
        served = [o.features["inlining_decision"][0] for o in obs]
        expect(served == p.decisions, "%s: mlbc-serve decided %s..., numpy %s..."
               % (m.name, served[:8], p.decisions[:8]))
        expect(s.text == p.text, "%s: .text %d (mlbc-serve) vs %d (numpy host)"
               % (m.name, s.text, p.text))
        d = env.compile_default(m, ctx.workdir())
        never = env.compile_with_policy(m, lambda x, i: 0, ctx.workdir())
        always = env.compile_with_policy(m, lambda x, i: 1, ctx.workdir())
        expect(len({never.text, always.text, d.text}) > 1,
               "%s: never/always/default all give %d bytes" % (m.name, d.text))
        checked += 1
    expect(checked == 2, "modules missing")


def test_trajectory_cache_is_exact(ctx):
    # a cache hit must give the size a real compilation gives
    out, _ = ctx.trained()
    import numpy as np
    import es
    import inliner_env as env
    from policy_net import Net
    net = Net.load(os.path.join(out, "bc.npz"))
    mods = [m for m in ctx.modules() if m.split == "train"]
    cache = es.TrajectoryCache()
    ev = es.Evaluator(mods, {m.name: 1 for m in mods}, ctx.pool(), cache, log=lambda s: 0)
    names = [m.name for m in mods]
    first = ev.sizes(net, names)
    n1 = ev.compiles
    again = ev.sizes(net, names)
    expect(ev.compiles == n1, "second evaluation compiled %d modules" % (ev.compiles - n1))
    expect(first == again, "cached sizes differ")
    rng = np.random.default_rng(3)
    c = net.copy()
    c.set_flat(net.get_flat() + 0.5 * rng.standard_normal(net.get_flat().size))
    hit = cache.lookup_all(c, names)
    for n, size in hit.items():
        m = [x for x in mods if x.name == n][0]
        r = env.compile_with_policy(m, lambda x, i: c.decide_one(x), ctx.workdir())
        expect(r.text == size, "%s: cache says %d, compiling gives %d" % (n, size, r.text))


def test_report_table(ctx):
    out, res = ctx.trained()
    h = res["heldout"]
    expect(h["modules"] >= 3 and not h["failed"], "held-out: %s" % h)
    expect(h["text_default"] > 0 and h["text_trained"] > 0, "sizes")
    expect("trained policy (mlbc-serve)" in ctx.train_stdout and
           "clang-19 -Oz, default heuristic" in ctx.train_stdout, "no table printed")
    with open(os.path.join(out, "report.md")) as f:
        expect("vs default" in f.read(), "report.md")
    logs = os.listdir(os.path.join(out, "heldout-logs"))
    expect(len(logs) == h["modules"], "held-out logs from mlbc-serve: %d" % len(logs))


TESTS = [v for k, v in list(globals().items()) if k.startswith("test_")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("-k", default="")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="mlbc-test-train-")
    ctx = Ctx(args.build, work)
    passed = failed = 0
    t00 = time.time()
    for t in TESTS:
        if args.k and args.k not in t.__name__:
            continue
        t0 = time.time()
        try:
            t(ctx)
            passed += 1
            if args.v:
                print("ok   %s (%.1f s)" % (t.__name__, time.time() - t0))
        except Failure as e:
            failed += 1
            print("FAIL %s: %s" % (t.__name__, e))
        except Exception:  # noqa: BLE001
            failed += 1
            print("FAIL %s: unexpected error" % t.__name__)
            traceback.print_exc(file=sys.stdout)
    if args.v:
        print("(%.0f s)" % (time.time() - t00))
    ctx.close()
    shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
