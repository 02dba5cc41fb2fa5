"""Improve a policy for code size with evolution strategies, rewarded by real .text sizes.

Reward of a candidate network: the training modules' total .text bytes saved relative to
clang-19's own -Oz heuristic, divided by their total default size (so 0.01 = 1% smaller).
Each candidate is served to clang-19 by mlbc_gym with the network computed in numpy.

Exact trajectory cache. Given the same decisions clang is deterministic, and the features
of observation k depend only on decisions 0..k-1. So if a candidate decides exactly as a
recorded trajectory did on every one of that trajectory's observations, it would walk the
same trajectory and get the same size: no need to compile. Every compilation adds its
trajectory to the cache; a candidate is compiled only on the modules where it departs from
every recorded trajectory. A small perturbation changes few decisions, so most modules are
cache hits. This is what makes ES affordable on two cores.

ES (Salimans et al. 2017, as MLGO's blackbox trainer): antithetic Gaussian perturbations
theta +- sigma*eps, centred-rank fitness shaping, Adam step on the estimated gradient;
the best network seen (by training reward) is kept.
"""
import tempfile
import time

import numpy as np

import inliner_env as env


class TrajectoryCache:
    def __init__(self):
        self.trajs = {}             # module name -> list of (states [N,38], decisions [N], text)

    def add(self, name, states, decisions, text):
        s = np.asarray(states, np.int64).reshape(-1, 38)
        d = np.asarray(decisions, np.int64)
        for (s2, d2, _) in self.trajs.get(name, []):
            if len(d2) == len(d) and np.array_equal(d2, d) and np.array_equal(s2, s):
                return
        self.trajs.setdefault(name, []).append((s, d, text))

    def lookup_all(self, net, names):
        """name -> cached .text size where the network reproduces a recorded trajectory."""
        # one batched forward over every recorded state of the modules asked for
        segs, allx = [], []
        o = 0
        for n in names:
            for (s, d, t) in self.trajs.get(n, []):
                segs.append((n, o, o + len(d), d, t))
                allx.append(s)
                o += len(d)
        if not allx:
            return {}
        pred = net.decide(np.concatenate(allx)) if o else np.zeros(0, np.int64)
        hit = {}
        for n, a, b, d, t in segs:
            if n not in hit and np.array_equal(pred[a:b], d):
                hit[n] = t
        return hit

    def size(self):
        return sum(len(v) for v in self.trajs.values())


def evaluate_task(mod, net):
    """mod compiled under net, as a Dask task in a temporary folder of the worker's: a Run,
    retried once (a loaded machine can stall a compiler)."""
    with tempfile.TemporaryDirectory(prefix="mlbc-es-") as workdir:
        r = env.compile_with_policy(mod, lambda x, i: net.decide_one(x), workdir)
        if not r.ok:
            r = env.compile_with_policy(mod, lambda x, i: net.decide_one(x), workdir)
        return r


class Evaluator:
    """Sizes of training modules under a network, through the cache or clang-19 (tasks of
    a pool.Pool)."""

    def __init__(self, mods, default_text, pool, cache=None, log=print):
        self.mods = {m.name: m for m in mods}
        self.default = dict(default_text)
        self.pool = pool
        self.cache = cache or TrajectoryCache()
        self.compiles = 0
        self.compile_seconds = 0.0
        self.log = log

    def sizes(self, net, names):
        hit = self.cache.lookup_all(net, names)
        miss = [n for n in names if n not in hit]
        runs = self.pool.map(evaluate_task, [self.mods[n] for n in miss], net)
        for n, r in zip(miss, runs):
            self.compiles += 1
            self.compile_seconds += r.seconds
            if r.ok:
                self.cache.add(n, r.features, r.decisions, r.text)
                hit[n] = r.text
            else:
                self.log("  es: %s failed (%s); counted at its default size" % (n, r.error))
                hit[n] = self.default[n]
        return hit

    def reward(self, net, names):
        s = self.sizes(net, names)
        base = sum(self.default[n] for n in names)
        return sum(self.default[n] - s[n] for n in names) / float(base)


def param_mask(net, layers):
    """Boolean mask over net.get_flat() selecting the parameters of the given layers
    (indices into net.W; e.g. [2, 3] = the last hidden layer and the head)."""
    m = []
    for k in range(len(net.W)):
        on = k in layers
        m.append(np.full(net.W[k].size, on))
        m.append(np.full(net.b[k].size, on))
    return np.concatenate(m)


def centred_ranks(x):
    r = np.empty(len(x))
    r[np.argsort(x)] = np.arange(len(x))
    return r / max(len(x) - 1, 1) - 0.5


def run_es(net, evaluator, names, iterations=10, pairs=6, sigma=0.05, lr=0.02, layers=(2, 3),
           batch=None, seed=0, time_budget=None, log=print):
    """ES from net; returns (best network, its reward on names, history list)."""
    rng = np.random.default_rng(seed)
    theta = net.get_flat().astype(np.float64)
    mask = param_mask(net, set(layers))
    idx = np.nonzero(mask)[0]
    # perturbations are relative to each layer's scale, so sigma means the same everywhere
    scale = np.zeros_like(theta)
    o = 0
    for k in range(len(net.W)):
        for arr in (net.W[k], net.b[k]):
            s = float(np.std(net.W[k])) or 1.0
            scale[o:o + arr.size] = s
            o += arr.size
    scale = scale[idx]
    m = np.zeros(len(idx))
    v = np.zeros(len(idx))
    cand = net.copy()
    t0 = time.time()

    def reward_of(vec, subset):
        cand.set_flat(vec)
        return evaluator.reward(cand, subset)

    best_r = reward_of(theta, names)
    best = theta.copy()
    history = [(0, best_r, best_r)]
    log("  es: start, training reward %+.4f%% (%d modules)" % (100 * best_r, len(names)))
    for it in range(1, iterations + 1):
        if time_budget is not None and time.time() - t0 > time_budget:
            log("  es: time budget reached after %d iterations" % (it - 1))
            break
        subset = names if not batch or batch >= len(names) else \
            list(rng.choice(names, batch, replace=False))
        eps = rng.standard_normal((pairs, len(idx)))
        rp, rm = np.zeros(pairs), np.zeros(pairs)
        old = theta.copy()
        for i in range(pairs):
            d = np.zeros_like(theta)
            d[idx] = sigma * scale * eps[i]
            rp[i] = reward_of(old + d, subset)
            rm[i] = reward_of(old - d, subset)
        if subset is names:         # full-set rewards: a perturbation may be the best so far
            j = int(np.argmax(np.concatenate([rp, rm])))
            if max(rp.max(), rm.max()) > best_r:
                d = np.zeros_like(theta)
                d[idx] = sigma * scale * eps[j % pairs] * (1 if j < pairs else -1)
                best_r, best = max(rp.max(), rm.max()), old + d
        ranks = centred_ranks(np.concatenate([rp, rm]))
        w = ranks[:pairs] - ranks[pairs:]
        g = (w[:, None] * eps).sum(0) / (2 * pairs * sigma)
        if not np.any(rp != rm):
            g[:] = 0
        # Adam ascent, in units of the layer scale
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        step = lr * (m / (1 - 0.9 ** it)) / (np.sqrt(v / (1 - 0.999 ** it)) + 1e-8)
        theta[idx] += step * scale
        r = reward_of(theta, names)
        if r > best_r:
            best_r, best = r, theta.copy()
        history.append((it, r, best_r))
        log("  es: iteration %d: perturbations %+.4f%%..%+.4f%%, mean %+.4f%%, best %+.4f%% "
            "(%d compiles, %d cached trajectories, %.0f s)"
            % (it, 100 * min(rp.min(), rm.min()), 100 * max(rp.max(), rm.max()), 100 * r,
               100 * best_r, evaluator.compiles, evaluator.cache.size(), time.time() - t0))
    out = net.copy()
    out.set_flat(best)
    return out, best_r, history
