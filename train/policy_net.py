"""The inliner policy network, in numpy, with the shape of MLGO's (llvm-mlgo.md §12):

  per feature  b = count(q <= x) over its quantile boundaries q (TF Bucketize, bisect_right),
               x' = b / len(q), contributes [x', x'^2]
  concatenate  2 x 35 = 70 floats (the 38 LLVM features minus switch_default_dest_penalty,
               is_callee_avail_external, is_caller_avail_external, in LLVM's order)
  body         Dense(40) ReLU, Dense(40) ReLU, Dense(20) ReLU
  head         Dense(2): logits for "don't inline" / "inline"; the decision is argmax
               (ties: 0)

Everything is float32 and evaluated in the order the exported ONNX graph evaluates it
(export_onnx.py), so that the C that mlbc generates from the graph gives the same decisions.
"""
import json

import numpy as np

from inliner_env import FEATURES

# MLGO's observation spec leaves out these three (config.py in google/ml-compiler-opt).
DROPPED = ("switch_default_dest_penalty", "is_callee_avail_external",
           "is_caller_avail_external")
NET_FEATURES = [f for f in FEATURES if f not in DROPPED]
NET_INDEX = np.array([FEATURES.index(f) for f in NET_FEATURES])
HIDDEN = (40, 40, 20)


def quantiles(X, n=1000):
    """Per-feature boundaries from collected features X [N, 38] (int64): n quantiles of the
    samples (MLGO's generate_vocab: np.quantile(samples, linspace(0, 1, n))), duplicates
    kept, as float32, for the 35 network features."""
    qs = []
    for i in NET_INDEX:
        col = X[:, i].astype(np.float64)
        q = np.quantile(col, np.linspace(0, 1, n)) if len(col) else np.zeros(n)
        qs.append(np.asarray(q, np.float32))
    return qs


class Net:
    def __init__(self, qs, seed=0):
        self.qs = [np.asarray(q, np.float32) for q in qs]
        rng = np.random.default_rng(seed)
        sizes = [2 * len(self.qs)] + list(HIDDEN) + [2]
        self.W, self.b = [], []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):   # He init (ReLU)
            self.W.append((rng.standard_normal((fan_out, fan_in)) *
                           np.sqrt(2.0 / fan_in)).astype(np.float32))
            self.b.append(np.zeros(fan_out, np.float32))

    # ---- forward -------------------------------------------------------------------------
    def preprocess(self, X):
        """X: [N, 38] int64 features in LLVM's order -> [N, 70] float32."""
        X = np.asarray(X)
        if X.ndim == 1:
            X = X[None, :]
        out = np.empty((X.shape[0], 2 * len(self.qs)), np.float32)
        for j, (i, q) in enumerate(zip(NET_INDEX, self.qs)):
            x = X[:, i].astype(np.float32)
            b = np.searchsorted(q, x, side="right").astype(np.float32)
            v = b / np.float32(len(q))
            out[:, 2 * j] = v
            out[:, 2 * j + 1] = v * v
        return out

    def logits_pre(self, P):
        h = P
        for k, (W, b) in enumerate(zip(self.W, self.b)):
            h = h @ W.T + b
            if k < len(self.W) - 1:
                h = np.maximum(h, np.float32(0))
        return h

    def logits(self, X):
        return self.logits_pre(self.preprocess(X))

    def decide(self, X):
        lg = self.logits(X)
        return (lg[:, 1] > lg[:, 0]).astype(np.int64)     # argmax, first max wins

    def decide_one(self, x):
        """One observation (list of 38 ints) -> 0/1; what the host answers."""
        lg = self.logits(np.asarray(x, np.int64)[None, :])[0]
        return int(lg[1] > lg[0])

    # ---- parameters as one vector (evolution strategies) --------------------------------
    def get_flat(self):
        return np.concatenate([a.ravel() for pair in zip(self.W, self.b) for a in pair])

    def set_flat(self, v):
        v = np.asarray(v, np.float32)
        o = 0
        for k in range(len(self.W)):
            for arr in (self.W[k], self.b[k]):
                n = arr.size
                arr[...] = v[o:o + n].reshape(arr.shape)
                o += n
        assert o == v.size

    def copy(self):
        c = Net.__new__(Net)
        c.qs = self.qs
        c.W = [w.copy() for w in self.W]
        c.b = [b.copy() for b in self.b]
        return c

    # ---- persistence ----------------------------------------------------------------------
    def save(self, path):
        d = {"features": NET_FEATURES, "hidden": list(HIDDEN)}
        arrays = {"q%d" % j: q for j, q in enumerate(self.qs)}
        for k in range(len(self.W)):
            arrays["W%d" % k] = self.W[k]
            arrays["b%d" % k] = self.b[k]
        np.savez(path, meta=np.frombuffer(json.dumps(d).encode(), np.uint8), **arrays)

    @staticmethod
    def load(path):
        z = np.load(path)
        meta = json.loads(bytes(z["meta"]).decode())
        assert meta["features"] == NET_FEATURES
        n = Net.__new__(Net)
        n.qs = [z["q%d" % j] for j in range(len(NET_FEATURES))]
        k = 0
        n.W, n.b = [], []
        while "W%d" % k in z:
            n.W.append(z["W%d" % k].astype(np.float32))
            n.b.append(z["b%d" % k].astype(np.float32))
            k += 1
        return n


# ---- training: behaviour cloning (and weighted cloning) with Adam, in numpy --------------------

def train_supervised(net, P, y, w=None, epochs=30, batch=256, lr=3e-3, seed=0, l2=1e-5,
                     log=None):
    """Minimise the (weighted) cross-entropy of softmax(logits) against labels y (0/1) over
    preprocessed inputs P [N, 70]. Plain backprop + Adam. Returns the final mean loss."""
    rng = np.random.default_rng(seed)
    N = len(y)
    y = np.asarray(y, np.int64)
    w = np.ones(N, np.float32) if w is None else np.asarray(w, np.float32)
    params = [p for pair in zip(net.W, net.b) for p in pair]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = 0
    b1, b2, eps = 0.9, 0.999, 1e-8
    loss = float("nan")
    for ep in range(epochs):
        order = rng.permutation(N)
        tot, totw = 0.0, 0.0
        for s in range(0, N, batch):
            idx = order[s:s + batch]
            xb, yb, wb = P[idx], y[idx], w[idx]
            # forward, keeping activations
            acts = [xb]
            h = xb
            for k in range(len(net.W)):
                h = h @ net.W[k].T + net.b[k]
                if k < len(net.W) - 1:
                    h = np.maximum(h, 0)
                acts.append(h)
            z = h - h.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            ws = wb.sum()
            if ws <= 0:
                continue
            lp = -np.log(p[np.arange(len(yb)), yb] + 1e-12)
            tot += float((lp * wb).sum())
            totw += float(ws)
            g = p.copy()
            g[np.arange(len(yb)), yb] -= 1
            g *= (wb / ws)[:, None]
            grads = []
            for k in range(len(net.W) - 1, -1, -1):
                gW = g.T @ acts[k] + l2 * net.W[k]
                gb = g.sum(axis=0)
                grads.append((gW, gb))
                if k > 0:
                    g = g @ net.W[k]
                    g = g * (acts[k] > 0)
            grads.reverse()
            flat_g = [a for pair in grads for a in pair]
            t += 1
            for i, (prm, gr) in enumerate(zip(params, flat_g)):
                m[i] = b1 * m[i] + (1 - b1) * gr
                v[i] = b2 * v[i] + (1 - b2) * gr * gr
                mh = m[i] / (1 - b1 ** t)
                vh = v[i] / (1 - b2 ** t)
                prm -= (lr * mh / (np.sqrt(vh) + eps)).astype(np.float32)
        loss = tot / max(totw, 1e-12)
        if log and (ep % 10 == 0 or ep == epochs - 1):
            log("  epoch %d: loss %.4f" % (ep, loss))
    return loss
