"""Collect training logs: the heuristic's decisions on the training corpus, with all 38 real
features.

LLVM 19 hands the host the default heuristic's decision only with
-inliner-interactive-include-default, and then writes it into slot 25
(callee_basic_block_count) instead of a 39th feature (llvm-mlgo.md §13.1). So each module is
compiled twice through mlbc_gym:

  run A  with include-default; the host answers every observation with slot 25: the
         heuristic's own trajectory, and its decisions;
  run B  without include-default; the host replays A's decisions by observation number, so
         the compiler walks the same trajectory and sends the real callee_basic_block_count.

Both runs must agree on every feature but slot 25 (clang is deterministic given the
decisions); a module where they do not is reported and dropped. Each module's log is an LLVM
training log (TrainingLogger format, as development mode writes it: the 38 features, then
inlining_default and inlining_decision), readable by mlbc_gym.read_log, mlbc's C reader and
LLVM's log_reader.py; the score is the module's .text size, as the outcome of its last
observation. Modules without any inliner decision get no log.
"""
import io
import os
import tempfile

import numpy as np

import inliner_env as env
from mlbc_gym import LogWriter, TensorSpec, read_log


def log_specs():
    return ([TensorSpec(n, "int64_t", [1]) for n in env.FEATURES] +
            [TensorSpec("inlining_default", "int64_t", [1]),
             TensorSpec("inlining_decision", "int64_t", [1])])


def collect_module(mod, workdir):
    """Returns (features [N,38] int64, heuristic decisions [N], .text size, the training
    log's bytes, None without any decision) or raises RuntimeError."""
    a = env.compile_with_policy(mod, lambda x, i: x[env.SLOT_DEFAULT], workdir,
                                include_default=True)
    if not a.ok:
        raise RuntimeError("%s: run with the heuristic failed: %s" % (mod.name, a.error))
    dec = a.decisions

    def replay(x, i):
        if i >= len(dec):
            raise RuntimeError("trajectory diverged: observation %d of %d" % (i, len(dec)))
        return dec[i]

    b = env.compile_with_policy(mod, replay, workdir)
    if not b.ok:
        raise RuntimeError("%s: replay failed: %s" % (mod.name, b.error))
    if len(b.features) != len(a.features) or b.text != a.text:
        raise RuntimeError("%s: replay diverged (%d vs %d observations, .text %s vs %s)"
                           % (mod.name, len(b.features), len(a.features), b.text, a.text))
    for fa, fb in zip(a.features, b.features):
        if any(fa[j] != fb[j] for j in range(38) if j != env.SLOT_DEFAULT):
            raise RuntimeError("%s: replay saw different features" % mod.name)
    X = np.array(b.features, np.int64).reshape(-1, 38)
    y = np.array(dec, np.int64)
    if not len(y):
        return X, y, a.text, None           # no decision: no log
    f = io.BytesIO()
    w = LogWriter(f, log_specs(), score=TensorSpec("text_size", "float", [1]))
    w.context(mod.name)
    for k in range(len(y)):
        w.observation(list(X[k]) + [int(y[k]), int(y[k])])
        if k == len(y) - 1:
            w.outcome(float(a.text))
    return X, y, a.text, f.getvalue()


def collect_task(mod):
    """collect_module as a Dask task, in a temporary folder of the worker's (the channel's
    FIFOs must be local): (its result, None) or (None, why the module is dropped)."""
    with tempfile.TemporaryDirectory(prefix="mlbc-collect-") as workdir:
        try:
            return collect_module(mod, workdir), None
        except Exception as e:  # noqa: BLE001 - reported, the module is dropped
            return None, str(e)


def collect(mods, log_dir, pool, log=print):
    """Collects every module on the pool's workers and writes the logs into log_dir;
    returns dict name -> (X, y, text) for the modules that gave at least one observation."""
    os.makedirs(log_dir, exist_ok=True)
    out = {}
    for m, (r, err) in zip(mods, pool.map(collect_task, mods)):
        if err:
            log("  collect: dropped %s" % err)
            continue
        X, y, text, data = r
        if data is not None:
            with open(os.path.join(log_dir, m.name + ".log"), "wb") as f:
                f.write(data)
            out[m.name] = (X, y, text)
    return out


def read_logs(paths):
    """Reads collected logs back: (X [N,38], default decisions [N], module index [N])."""
    Xs, ys, ms = [], [], []
    for k, p in enumerate(paths):
        reader, obs = read_log(p)
        for o in obs:
            Xs.append([o.features[n][0] for n in env.FEATURES])
            ys.append(o.features["inlining_default"][0])
            ms.append(k)
    return (np.array(Xs, np.int64).reshape(-1, 38), np.array(ys, np.int64),
            np.array(ms, np.int64))
