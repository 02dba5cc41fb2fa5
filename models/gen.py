#!/usr/bin/python3
"""Random policy-shaped networks: the benchmark's adversary (issue 31).

The named kinds of kinds.py are the networks mlbc was tuned on; a compiler that is fast on
them may still be slow, or wrong, on the next policy somebody exports. This module draws
networks from a grammar of what compiler policies and code models are made of, laid out the
way torch.onnx (opsets 13-17) and hand-written onnx.helper code write them, so that the
benchmark and the tests see a distribution instead of a handful of instances.

    network = stem, 1-4 blocks, head
    stem    = features [B, D] | tokens [B, T] -> Gather (+ positions) | embedding bag
            | sequence [B, T, D] | image [B, C, H, W] | signal [B, C, L] -> Conv1d
    block   = on [B, D]:    mlp | norm | gather-concat | rnn step (LSTM/GRU/RNN op, state in
                            and out) | hand-written LSTMCell (state in and out)
              on [B, T, D]: attention (torch MHA or separate q/k/v; scale before or after;
                            padding mask with Where, additive mask, causal mask) | rnn
                            (LSTM/GRU/RNN, every direction and layout, sequence lengths,
                            optional state in/out) | conv1d (groups, depthwise, dilation)
                            | ffn (pre-LN, residual) | pool to [B, D]
              on images:    conv2d (groups, depthwise, dilation, stride) + BatchNorm + pool
                            | pool to [B, D]
    head    = softmax | log-softmax | argmax (+ logits) | masked argmax (legal actions)
            | scalar value | per-token softmax
    activation = ReLU | Tanh | Sigmoid | LeakyReLU | GELU (Erf) | GELU (tanh) | SiLU
    linear  = Gemm(transB=1) | MatMul + Add(bias, .)     LayerNorm = op (opset 17) | chain

Batches are 1 mostly, sometimes 8-96; widths, sequence lengths and image sizes are random but
bounded so that mlbc + gcc -O2 build any of them in a few seconds.

    import gen
    for name, model in gen.networks(seed, count): ...        # name: gSEED_INDEX_stem-...
    model = gen.network(seed, index)                          # the same network alone
    outputs = gen.reference(model, gen.random_inputs(model))  # onnx_np, float64

    /usr/bin/python3 models/gen.py --seed S --index I -o x.onnx   # one network
    /usr/bin/python3 models/gen.py --seed S --count N --out DIR   # a sample, listed
"""
import argparse
import os
import re
import sys
import threading

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import kinds  # noqa: E402  (numpy aliases, onnx, the exporter-style Graph)
import onnx_np  # noqa: E402
from kinds import F32, I64  # noqa: E402

BOOL = 9
ACTS = ("relu", "tanh", "sigmoid", "leaky", "gelu", "gelu_tanh", "silu")
WIDTHS = (16, 24, 32, 48, 64, 96, 100, 128, 160, 192, 256)
SEQS = (1, 2, 4, 7, 8, 12, 16, 20, 32, 50, 64)
BATCHES = (8, 16, 32, 64, 96)
NAME = re.compile(r"^g(\d+)_(\d+)")


class Stream:
    """The tensor a block works on: its value name and shape; kind 'vec' [B, D], 'seq'
    [B, T, D] or 'img' [B, C, H, W]."""

    def __init__(self, value, shape):
        self.value, self.shape = value, list(shape)
        self.kind = {2: "vec", 3: "seq", 4: "img"}[len(shape)]


class Net(kinds.Graph):
    """kinds.Graph (torch.onnx naming, initializers) plus the random choices of one network,
    its opset and the values blocks may share (token ids for masks)."""

    def __init__(self, seed, index):
        super().__init__([seed, index])
        self.opset = int(self.pick((13, 14, 15, 16, 17)))
        self.ids = None
        self.ids_shape = None
        self.n_state = 0

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def chance(self, p):
        return bool(self.rng.random() < p)

    def c(self, value, dtype=np.int64, scope=""):
        return self.const(np.array(value, dtype), scope)

    def model(self, graph_name):
        m = super().model(graph_name)
        m.opset_import[0].version = self.opset
        m.producer_name = "mlbc-gen"
        return m


# ---- pieces --------------------------------------------------------------------------------

def linear(g, x, fin, fout, sc, rank):
    """nn.Linear: Gemm(transB=1) on 2-D (torch) or MatMul + Add (3-D, and hand-written)."""
    return g.linear(x, fin, fout, sc, rank=2 if rank == 2 and g.chance(0.6) else 3)


def act(g, x, sc, kind=None):
    """The activations as torch.onnx writes them (GELU and SiLU have no op at opset <= 17)."""
    kind = kind or g.pick(ACTS)
    if kind == "relu":
        return g.op("Relu", [x], sc)
    if kind in ("tanh", "sigmoid"):
        return g.op(kind.capitalize(), [x], sc)
    if kind == "leaky":
        return g.op("LeakyRelu", [x], sc, alpha=0.01)
    if kind == "silu":
        return g.op("Mul", [x, g.op("Sigmoid", [x], sc)], sc)
    if kind == "gelu":
        e = g.op("Erf", [g.op("Div", [x, g.c(np.sqrt(2.0), np.float32, sc)], sc)], sc)
        e = g.op("Add", [e, g.c(1.0, np.float32, sc)], sc)
        return g.op("Mul", [g.op("Mul", [x, e], sc), g.c(0.5, np.float32, sc)], sc)
    cube = g.op("Pow", [x, g.c(3.0, np.float32, sc)], sc)          # gelu(approximate="tanh")
    inner = g.op("Add", [x, g.op("Mul", [cube, g.c(0.044715, np.float32, sc)], sc)], sc)
    t = g.op("Tanh", [g.op("Mul", [inner, g.c(np.sqrt(2 / np.pi), np.float32, sc)], sc)], sc)
    half = g.op("Mul", [x, g.c(0.5, np.float32, sc)], sc)
    return g.op("Mul", [half, g.op("Add", [t, g.c(1.0, np.float32, sc)], sc)], sc)


def layernorm(g, x, d, sc):
    """nn.LayerNorm: the op at opset 17, else the exporter's ReduceMean/Sub/Pow/Sqrt/Div."""
    if g.opset >= 17 and g.chance(0.7):
        return g.layernorm(x, d, sc)
    mean = g.op("ReduceMean", [x], sc, axes=[-1], keepdims=1)
    dev = g.op("Sub", [x, mean], sc)
    var = g.op("ReduceMean", [g.op("Pow", [dev, g.c(2.0, np.float32, sc)], sc)], sc,
               axes=[-1], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.c(1e-5, np.float32, sc)], sc)], sc)
    y = g.op("Div", [dev, std], sc)
    name = sc.strip("/").replace("/", ".")
    y = g.op("Mul", [y, g.init(name + ".weight", g.rng.uniform(0.5, 1.5, d).astype(np.float32))],
             sc)
    return g.op("Add", [y, g.init(name + ".bias", g.uniform(0.1, (d,)))], sc)


def batchnorm(g, x, c, sc):
    """BatchNorm1d/2d in eval mode, with running statistics that are not the identity."""
    name = sc.strip("/").replace("/", ".")
    parts = [g.rng.uniform(0.5, 1.5, c), g.uniform(0.2, (c,)), g.uniform(0.2, (c,)),
             g.rng.uniform(0.5, 2.0, c)]
    names = [g.init("%s.%s" % (name, k), p.astype(np.float32))
             for k, p in zip(("weight", "bias", "running_mean", "running_var"), parts)]
    return g.op("BatchNormalization", [x] + names, sc, epsilon=1e-5, momentum=0.9)


def state_input(g, shape):
    g.n_state += 1
    return g.input("state_in%d" % g.n_state, shape)


def state_output(g, value, state_in, shape):
    """The new state of STATE_IN (state_inK) as the graph output state_outK."""
    return g.output(value, state_in.replace("state_in", "state_out"), shape)


def reshape(g, x, shape, sc):
    """Reshape to a constant shape (allowzero=0 written from opset 14, as torch does)."""
    extra = dict(allowzero=0) if g.opset >= 14 else {}
    return g.op("Reshape", [x, g.c(shape, scope=sc)], sc, **extra)


def divisors(n, options):
    return [d for d in options if n % d == 0]


# ---- blocks on [B, D] ------------------------------------------------------------------------

def mlp(g, s, sc):
    """1-3 Linear + activation layers, a residual when the width comes back."""
    b, d = s.shape
    x, width = s.value, d
    for i in range(int(g.rng.integers(1, 4))):
        out = int(g.pick(WIDTHS)) if i or g.chance(0.6) else d
        x = act(g, linear(g, x, width, out, "%s/fc%d" % (sc, i), 2), "%s/act%d" % (sc, i))
        width = out
    if width == d and g.chance(0.5):
        x = g.op("Add", [s.value, x], sc)
    return Stream(x, [b, width])


def norm(g, s, sc):
    c = s.shape[1]
    if g.chance(0.5):
        return Stream(layernorm(g, s.value, c, sc + "/ln"), s.shape)
    return Stream(batchnorm(g, s.value, c, sc + "/bn"), s.shape)


def gather_concat(g, s, sc):
    """Hand-picked features again (Gather of constant indices on axis 1), concatenated."""
    b, d = s.shape
    k = int(g.rng.integers(1, min(d, 16) + 1))
    idx = g.c(g.rng.choice(d, size=k, replace=False), np.int64, sc)
    sel = g.op("Gather", [s.value, idx], sc, axis=1)
    return Stream(g.op("Concat", [s.value, sel], sc, axis=1), [b, d + k])


def rnn_weights(g, op, dirs, fin, hidden):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    bound = 1.0 / np.sqrt(hidden)
    return [g.init("onnx::%s_%d" % (op, g.count["w" + op] * 3 + k), a) for k, a in enumerate((
        g.uniform(bound, (dirs, gates * hidden, fin)),
        g.uniform(bound, (dirs, gates * hidden, hidden)),
        g.uniform(bound, (dirs, 2 * gates * hidden))))]


def rnn_attrs(g, op, hidden, **more):
    attrs = dict(hidden_size=hidden, **more)
    if op == "GRU":
        attrs["linear_before_reset"] = int(g.chance(0.7))    # torch: 1; hand-written: either
    return attrs


def rnn_step(g, s, sc):
    """One step of nn.LSTM/GRU/RNN with the state passed in and returned (a policy called
    once per decision): X [1, B, D], initial_h (, initial_c) inputs, Y_h (, Y_c) outputs."""
    b, d = s.shape
    op, hidden = g.pick(("LSTM", "GRU", "RNN")), int(g.pick(WIDTHS))
    g.count["w" + op] += 1
    w = rnn_weights(g, op, 1, d, hidden)
    x = g.op("Unsqueeze", [s.value, g.c([0], scope=sc)], sc)
    states = [state_input(g, [1, b, hidden]) for _ in range(2 if op == "LSTM" else 1)]
    outs = g.op(op, [x] + w + [""] + states, sc, n_out=3 if op == "LSTM" else 2,
                **rnn_attrs(g, op, hidden))
    h = g.op("Squeeze", [outs[1], g.c([0], scope=sc)], sc)
    for st, st_in in zip(outs[1:], states):
        state_output(g, st, st_in, [1, b, hidden])
    return Stream(h, [b, hidden])


def lstm_cell(g, s, sc):
    """nn.LSTMCell written out (Gemm, Split, Sigmoid, Tanh), h and c in and out."""
    b, d = s.shape
    hidden = int(g.pick(WIDTHS))
    h0, c0 = state_input(g, [b, hidden]), state_input(g, [b, hidden])
    bound = 1.0 / np.sqrt(hidden)
    name = sc.strip("/").replace("/", ".")
    gi = g.op("Gemm", [s.value, g.init(name + ".weight_ih", g.uniform(bound, (4 * hidden, d))),
                       g.init(name + ".bias_ih", g.uniform(bound, (4 * hidden,)))],
              sc, alpha=1.0, beta=1.0, transB=1)
    gh = g.op("Gemm", [h0, g.init(name + ".weight_hh", g.uniform(bound, (4 * hidden, hidden))),
                       g.init(name + ".bias_hh", g.uniform(bound, (4 * hidden,)))],
              sc, alpha=1.0, beta=1.0, transB=1)
    i, f, c, o = g.op("Split", [g.op("Add", [gi, gh], sc), g.c([hidden] * 4, scope=sc)], sc,
                      n_out=4, axis=1)
    i, f, o = (g.op("Sigmoid", [v], sc) for v in (i, f, o))
    c1 = g.op("Add", [g.op("Mul", [f, c0], sc), g.op("Mul", [i, g.op("Tanh", [c], sc)], sc)],
              sc)
    h1 = g.op("Mul", [o, g.op("Tanh", [c1], sc)], sc)
    h1 = state_output(g, h1, h0, [b, hidden])          # the renamed value
    state_output(g, c1, c0, [b, hidden])
    return Stream(h1, [b, hidden])


# ---- blocks on [B, T, D] ---------------------------------------------------------------------

def heads_split(g, x, b, t, heads, dh, sc, perm):
    x = reshape(g, x, [b, t, heads, dh], sc)
    return g.op("Transpose", [x], sc, perm=perm)


def attn_mask(g, scores, b, t, sc):
    """Padding mask from the token ids (id 0 = padding) with Where or added, a causal mask
    with Where, or none."""
    lowest = float(np.finfo(np.float32).min)
    if g.ids is not None and g.ids_shape == [b, t] and g.chance(0.6):  # T as the ids'
        pad = g.op("Equal", [g.ids, g.c(0, scope=sc)], sc)                       # [B, T]
        pad = g.op("Unsqueeze", [pad, g.c([1, 2], scope=sc)], sc)                # [B,1,1,T]
        if g.chance(0.5):
            return g.op("Where", [pad, g.c(lowest, np.float32, sc), scores], sc)
        bias = g.op("Mul", [g.op("Cast", [pad], sc, to=F32), g.c(-10000.0, np.float32, sc)], sc)
        return g.op("Add", [scores, bias], sc)
    if t > 1 and g.chance(0.4):
        future = g.const(np.triu(np.ones((t, t), bool), 1), sc)
        return g.op("Where", [future, g.c(lowest, np.float32, sc), scores], sc)
    return scores


def attention(g, s, sc):
    """Multi-head self-attention: torch's nn.MultiheadAttention (one in-projection, Split)
    or separate q/k/v Linears; 1/sqrt(dh) on q, on q and k (SDPA), or after the product."""
    b, t, d = s.shape
    heads = int(g.pick(divisors(d, (1, 2, 4, 8)) or [1]))
    dh = d // heads
    if g.chance(0.5):
        qkv = g.linear(s.value, d, 3 * d, sc + "/in_proj", rank=3)
        q, k, v = g.op("Split", [qkv, g.c([d] * 3, scope=sc)], sc, n_out=3, axis=-1)
    else:
        q, k, v = (g.linear(s.value, d, d, "%s/%s" % (sc, n), rank=3) for n in "qkv")
    q = heads_split(g, q, b, t, heads, dh, sc, [0, 2, 1, 3])
    k = heads_split(g, k, b, t, heads, dh, sc, [0, 2, 3, 1])
    v = heads_split(g, v, b, t, heads, dh, sc, [0, 2, 1, 3])
    scale = g.pick(("after", "q", "qk"))
    if scale == "q":
        q = g.op("Mul", [q, g.c(1 / np.sqrt(dh), np.float32, sc)], sc)
    elif scale == "qk":
        q = g.op("Mul", [q, g.c(dh ** -0.25, np.float32, sc)], sc)
        k = g.op("Mul", [k, g.c(dh ** -0.25, np.float32, sc)], sc)
    scores = g.op("MatMul", [q, k], sc)
    if scale == "after":
        scores = g.op("Div", [scores, g.c(np.sqrt(dh), np.float32, sc)], sc)
    p = g.op("Softmax", [attn_mask(g, scores, b, t, sc)], sc, axis=-1)
    o = g.op("Transpose", [g.op("MatMul", [p, v], sc)], sc, perm=[0, 2, 1, 3])
    o = reshape(g, o, [b, t, d], sc)
    o = g.op("Add", [s.value, g.linear(o, d, d, sc + "/out_proj", rank=3)], sc)
    if g.chance(0.5):
        o = layernorm(g, o, d, sc + "/norm")
    return Stream(o, [b, t, d])


def rnn_seq(g, s, sc):
    """nn.LSTM/GRU/RNN over the sequence: forward, reverse or bidirectional; layout 0 as
    torch writes it (Transposes around the op) or layout 1 (opset >= 14, hand-written);
    sometimes per-row sequence lengths; sometimes the state in and out."""
    b, t, d = s.shape
    op, hidden = g.pick(("LSTM", "GRU", "RNN")), int(g.pick(WIDTHS[:8]))
    direction = g.pick(("forward", "reverse", "bidirectional"))
    dirs = 2 if direction == "bidirectional" else 1
    layout = int(g.opset >= 14 and g.chance(0.4))
    g.count["w" + op] += 1
    ins = [s.value if layout else g.op("Transpose", [s.value], sc, perm=[1, 0, 2])]
    ins += rnn_weights(g, op, dirs, d, hidden)
    lens = g.rng.integers(1, t + 1, size=b).astype(np.int32)
    ins.append(g.init(sc.strip("/") + ".lens", lens) if g.chance(0.3) else "")
    n_states = 2 if op == "LSTM" else 1
    sshape = [b, dirs, hidden] if layout else [dirs, b, hidden]
    states = [state_input(g, sshape) for _ in range(n_states)] if g.chance(0.3) else []
    ins += states
    outs = g.op(op, ins, sc, n_out=1 + n_states,
                **rnn_attrs(g, op, hidden, direction=direction,
                            **(dict(layout=layout) if g.opset >= 14 else {})))
    for st, st_in in zip(outs[1:], states):
        state_output(g, st, st_in, sshape)
    y = outs[0]
    if not layout:                                  # [T, dirs, B, H] -> [B, T, dirs * H]
        y = g.op("Transpose", [y], sc, perm=[0, 2, 1, 3])
        y = reshape(g, y, [t, b, dirs * hidden], sc)
        y = g.op("Transpose", [y], sc, perm=[1, 0, 2])
    else:
        y = reshape(g, y, [b, t, dirs * hidden], sc)
    return Stream(y, [b, t, dirs * hidden])


def conv_choice(g, cin):
    """(out channels, group): full, grouped or depthwise (channel multiplier 1 or 2)."""
    form = g.pick(("full", "full", "grouped", "depthwise"))
    if form == "depthwise":
        return cin * int(g.pick((1, 2))), cin
    cout = int(g.pick(WIDTHS[:8]))
    groups = divisors(cin, (2, 4, 8)) if form == "grouped" else []
    groups = [k for k in groups if cout % k == 0]
    return cout, int(g.pick(groups)) if groups else 1


def conv(g, x, cin, sizes, sc):
    """Conv1d/Conv2d: kernel 1/3/5, dilation 1-2, stride 1-2 (2-D), same or no padding.
    Returns the value, out channels and out sizes."""
    cout, group = conv_choice(g, cin)
    k = int(g.pick((1, 3, 3, 5)))
    dil = int(g.pick((1, 1, 2))) if k > 1 else 1
    stride = int(g.pick((1, 1, 2))) if len(sizes) == 2 else 1
    span = dil * (k - 1)
    pad = span // 2 if g.chance(0.7) or min(sizes) <= span else 0
    out = [(n + 2 * pad - span - 1) // stride + 1 for n in sizes]
    name = sc.strip("/").replace("/", ".")
    bound = 1.0 / np.sqrt(cin // group * k ** len(sizes))
    w = g.init(name + ".weight", g.uniform(bound, [cout, cin // group] + [k] * len(sizes)))
    ins = [x, w] + ([g.init(name + ".bias", g.uniform(bound, (cout,)))] if g.chance(0.8) else [])
    n = len(sizes)
    y = g.op("Conv", ins, sc, dilations=[dil] * n, group=group, kernel_shape=[k] * n,
             pads=[pad] * 2 * n, strides=[stride] * n)
    return y, cout, out


def conv1d(g, s, sc):
    """nn.Conv1d over the sequence (channels = features): Transpose, Conv, act, Transpose."""
    b, t, d = s.shape
    x = g.op("Transpose", [s.value], sc, perm=[0, 2, 1])
    y, cout, (t2,) = conv(g, x, d, [t], sc + "/conv")
    y = act(g, y, sc + "/act")
    return Stream(g.op("Transpose", [y], sc, perm=[0, 2, 1]), [b, t2, cout])


def ffn(g, s, sc):
    """A pre-LN transformer feed-forward: x + Linear(act(Linear(LN(x))))."""
    b, t, d = s.shape
    hid = int(g.pick(WIDTHS))
    y = layernorm(g, s.value, d, sc + "/ln")
    y = act(g, linear(g, y, d, hid, sc + "/fc1", 3), sc + "/act")
    y = linear(g, y, hid, d, sc + "/fc2", 3)
    return Stream(g.op("Add", [s.value, y], sc), s.shape)


def seq_pool(g, s, sc):
    """[B, T, D] -> [B, D]: mean, max, the last or the first (CLS) token, or flattened."""
    b, t, d = s.shape
    how = g.pick(("mean", "max", "last", "first", "flat") if t * d <= 4096 else
                 ("mean", "max", "last", "first"))
    if how in ("mean", "max"):
        op = "ReduceMean" if how == "mean" else "ReduceMax"
        return Stream(g.op(op, [s.value], sc, axes=[1], keepdims=0), [b, d])
    if how == "flat":
        return Stream(reshape(g, s.value, [b, t * d], sc),
                      [b, t * d])
    idx = g.c(-1 if how == "last" else 0, scope=sc)
    return Stream(g.op("Gather", [s.value, idx], sc, axis=1), [b, d])


# ---- blocks on images ------------------------------------------------------------------------

def conv2d(g, s, sc):
    """Conv2d + (BatchNorm) + activation + (2x2 max or average pool)."""
    b, c, h, w = s.shape
    y, cout, (h2, w2) = conv(g, s.value, c, [h, w], sc + "/conv")
    if g.chance(0.5):
        y = batchnorm(g, y, cout, sc + "/bn")
    y = act(g, y, sc + "/act", g.pick(("relu", "relu", "silu", "leaky")))
    if min(h2, w2) >= 4 and g.chance(0.5):
        y = g.op(g.pick(("MaxPool", "AveragePool")), [y], sc + "/pool", kernel_shape=[2, 2],
                 pads=[0, 0, 0, 0], strides=[2, 2])
        h2, w2 = h2 // 2, w2 // 2
    return Stream(y, [b, cout, h2, w2])


def img_pool(g, s, sc):
    """[B, C, H, W] -> [B, F]: global average pool + Flatten, ReduceMean, or Flatten."""
    b, c, h, w = s.shape
    how = g.pick(("gap", "mean", "flat") if c * h * w <= 4096 else ("gap", "mean"))
    if how == "gap":
        y = g.op("Flatten", [g.op("GlobalAveragePool", [s.value], sc)], sc, axis=1)
        return Stream(y, [b, c])
    if how == "mean":
        return Stream(g.op("ReduceMean", [s.value], sc, axes=[2, 3], keepdims=0), [b, c])
    return Stream(g.op("Flatten", [s.value], sc, axis=1), [b, c * h * w])


BLOCKS = {
    "vec": [("mlp", mlp, 3), ("norm", norm, 1), ("gather", gather_concat, 1),
            ("step", rnn_step, 1), ("cell", lstm_cell, 1)],
    "seq": [("attn", attention, 3), ("rnn", rnn_seq, 3), ("conv1d", conv1d, 2),
            ("ffn", ffn, 2), ("pool", seq_pool, 1)],
    "img": [("conv2d", conv2d, 4), ("pool", img_pool, 1)],
}
TO_VEC = {"seq": ("pool", seq_pool), "img": ("pool", img_pool)}


def block(g, s, sc):
    """A block that fits the stream, drawn by weight; returns (tag, new stream)."""
    options = BLOCKS[s.kind]
    weights = np.array([w for _, _, w in options], float)
    tag, fn, _ = options[int(g.rng.choice(len(options), p=weights / weights.sum()))]
    return tag, fn(g, s, sc)


# ---- stems and heads -------------------------------------------------------------------------

def stem(g, b):
    """The network's input: (tag, stream)."""
    kind = g.pick(("feat", "feat", "tok", "bag", "seq", "img", "sig"))
    t, d = int(g.pick(SEQS)), int(g.pick(WIDTHS))
    if b > 1:
        t = min(t, 20)
    if kind == "feat":
        return kind, Stream(g.input("features", [b, d]), [b, d])
    if kind == "seq":
        return kind, Stream(g.input("x", [b, t, d]), [b, t, d])
    if kind in ("tok", "bag"):
        vocab = int(g.pick((8, 50, 300, 1000)))
        g.ids, g.ids_shape = g.input("ids", [b, t], I64), [b, t]
        x = g.op("Gather", [g.init("embed.weight", g.rng.standard_normal((vocab, d)).astype(
            np.float32)), g.ids], "/embed")
        if kind == "bag":
            op = g.pick(("ReduceSum", "ReduceMean"))
            if op == "ReduceSum":
                x = g.op(op, [x, g.c([1], scope="/bag")], "/bag", keepdims=0)
            else:
                x = g.op(op, [x], "/bag", axes=[1], keepdims=0)
            return kind, Stream(x, [b, d])
        if g.chance(0.5):
            x = g.op("Add", [x, g.init("pos.weight", g.uniform(1.0, (t, d)))], "/pos")
        return kind, Stream(x, [b, t, d])
    c = int(g.pick((1, 2, 3, 4, 8, 16)))
    if kind == "img":
        h = int(g.pick((6, 8, 12, 16, 24, 32) if b == 1 else (6, 8, 12, 16)))
        return kind, Stream(g.input("image", [b, c, h, h]), [b, c, h, h])
    length = int(g.pick((8, 16, 32, 64)))
    x = g.input("signal", [b, c, length])
    y, cout, (l2,) = conv(g, x, c, [length], "/stem")
    y = act(g, y, "/stem/act")
    return kind, Stream(g.op("Transpose", [y], "/stem", perm=[0, 2, 1]), [b, l2, cout])


def head(g, s):
    """The decision: (tag, None); declares the graph outputs."""
    if s.kind == "seq" and g.chance(0.25):
        b, t, d = s.shape
        k = int(g.pick((2, 4, 10, 34)))
        y = g.op("Softmax", [linear(g, s.value, d, k, "/head", 3)], "/head", axis=-1)
        g.output(y, "probs", [b, t, k])
        return "tokens"
    if s.kind != "vec":
        s = TO_VEC[s.kind][1](g, s, "/readout")
    b, d = s.shape
    kind = g.pick(("softmax", "logsoftmax", "argmax", "masked", "scalar"))
    k = 1 if kind == "scalar" else int(g.pick((2, 4, 10, 34, 100)))
    y = linear(g, s.value, d, k, "/head", 2)
    if kind in ("softmax", "logsoftmax"):
        op = "Softmax" if kind == "softmax" else "LogSoftmax"
        g.output(g.op(op, [y], "/head", axis=g.pick((1, -1))), "probs", [b, k])
    elif kind == "scalar":
        if g.chance(0.5):
            y = g.op(g.pick(("Tanh", "Sigmoid")), [y], "/head")
        if g.chance(0.5):
            g.output(g.op("Squeeze", [y, g.c([1], scope="/head")], "/head"), "value", [b])
        else:
            g.output(y, "value", [b, 1])
    else:
        if kind == "masked":                        # illegal actions never chosen
            legal = g.input("legal", [b, k], BOOL)
            y = g.op("Where", [legal, y, g.c(float(np.finfo(np.float32).min), np.float32,
                                             "/head")], "/head")
        a = g.op("ArgMax", [y], "/head", axis=1, keepdims=0, select_last_index=0)
        g.output(y, "logits", [b, k])
        g.output(a, "action", [b], I64)
    return kind


# ---- networks --------------------------------------------------------------------------------

def build(seed, index):
    """(name, model) of network INDEX of SEED; the name starts gSEED_INDEX."""
    g = Net(seed, index)
    b = 1 if g.chance(0.7) else int(g.pick(BATCHES))
    tags = []
    tag, s = stem(g, b)
    tags.append(tag)
    for i in range(int(g.rng.integers(1, 5))):
        tag, s = block(g, s, "/blocks.%d" % i)
        tags.append(tag)
    tags.append(head(g, s))
    name = "g%d_%03d_%s" % (seed, index, "-".join(tags))
    if b > 1:
        name += "_b%d" % b
    return name, kinds.check(g.model(name))


def network(seed, index):
    return build(seed, index)[1]


def networks(seed, count):
    """Networks 0..COUNT-1 of SEED as (name, model); each one also alone: build(seed, i)."""
    for i in range(count):
        yield build(seed, i)


def parse_name(name):
    """(seed, index) of a network's name (a file name too)."""
    m = NAME.match(os.path.basename(name))
    if not m:
        raise ValueError("not a generated network's name: %s" % name)
    return int(m.group(1)), int(m.group(2))


# ---- inputs and reference ----------------------------------------------------------------------

def random_inputs(model, seed=0):
    """{name: array}: features N(0, 1), token ids in the embedding's range (0, padding,
    among them), legal-action masks mostly true, states N(0, 0.5)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, dt, shape in _specs(model):
        if dt == np.int64:
            feeds[name] = rng.integers(0, vocab(model, name), size=shape).astype(np.int64)
        elif dt == np.bool_:
            feeds[name] = rng.random(shape) < 0.7
        else:
            scale = 0.5 if name.startswith("state_in") else 1.0
            feeds[name] = (scale * rng.standard_normal(shape)).astype(np.float32)
    return feeds


def _specs(model):
    types = {F32: np.float32, I64: np.int64, BOOL: np.bool_}
    return [(v.name, types[v.type.tensor_type.elem_type],
             tuple(d.dim_value for d in v.type.tensor_type.shape.dim))
            for v in kinds.graph_inputs(model)]


def vocab(model, ids):
    """Rows of the table that a Gather reads with the input IDS."""
    inits = {t.name: t for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Gather" and n.input[1] == ids and n.input[0] in inits:
            return inits[n.input[0]].dims[0]
    return 4


def _conv(ins, a):
    """Conv of any group count, 1-D or 2-D, on onnx_np's 2-D group-1 Conv: onnx_np lacks
    grouped and 1-D convolutions."""
    x, w, bias = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    one_d = x.ndim == 3
    if one_d:
        x, w = x[:, :, None], w[:, :, None]
        a = dict(a, strides=[1] + list(a.get("strides", [1])),
                 dilations=[1] + list(a.get("dilations", [1])),
                 pads=[0, a.get("pads", [0, 0])[0], 0, a.get("pads", [0, 0])[1]])
    groups = a.get("group", 1)
    a = dict(a, group=1)
    bs = np.split(bias, groups) if bias is not None else [None] * groups
    y = np.concatenate([onnx_np._conv(xg, wg, bg, a) for xg, wg, bg in zip(
        np.split(x, groups, axis=1), np.split(w, groups, axis=0), bs)], axis=1)
    return [y[:, :, 0] if one_d else y]


_reference_lock = threading.Lock()


def reference(model, feeds):
    """The graph outputs by onnx_np in float64 (rounded to float32), grouped and 1-D Conv
    added for the duration of the call (under a lock: tests call it from threads)."""
    with _reference_lock:
        saved = onnx_np.OPS["Conv"]
        onnx_np.OPS["Conv"] = _conv
        try:
            return onnx_np.run(model, feeds, float64=True)
        finally:
            onnx_np.OPS["Conv"] = saved


def summary(model, name):
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    print("%s: opset %d, %d nodes, %d parameters" % (
        name, model.opset_import[0].version, len(model.graph.node), params))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--index", type=int, help="one network: INDEX of SEED")
    ap.add_argument("--name", help="one network by its name (gSEED_INDEX_...), for --seed and "
                    "--index")
    ap.add_argument("--count", type=int, default=10, help="without --index: networks 0..N-1")
    ap.add_argument("-o", dest="output", help="--index: the file (default NAME.onnx)")
    ap.add_argument("--out", default=".", help="--count: the directory")
    args = ap.parse_args(argv)
    if args.name:
        args.seed, args.index = parse_name(args.name)
    if args.index is not None:
        name, m = build(args.seed, args.index)
        kinds.save(m, args.output or name + ".onnx")
        summary(m, name)
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name, m in networks(args.seed, args.count):
        kinds.save(m, os.path.join(args.out, name + ".onnx"))
        summary(m, name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
