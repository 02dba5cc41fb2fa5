#!/usr/bin/python3
"""Policy-network kinds as shape families: a deterministic ONNX generator (numpy + onnx.helper).

mlbc is tested and benchmarked on network *kinds* that compiler policies use (batched MLPs,
LSTM/GRU sequence policies, a transformer block, a gated graph network, a small CNN, a DQN
with an argmax action), each a function of its shape parameters, so that a benchmark or a
test can sweep widths, batch sizes and sequence lengths instead of one fixed instance.

    import kinds
    m = kinds.build("lstm_seq", seq=50, hidden=256)      # onnx.ModelProto
    builder, defaults, family = kinds.KINDS["lstm_seq"]   # family: list of param dicts
    for suffix, params in kinds.family("lstm_seq"): ...   # ("t5", {"seq": 5}), ...
    feeds = kinds.random_inputs(m, seed=0)                # {input name: ndarray}

Command line (run from anywhere, with Debian's python3-onnx 1.12 and numpy):

    /usr/bin/python3 models/kinds.py                     # models/<kind>.onnx, all kinds
    /usr/bin/python3 models/kinds.py --ref               # ... and models/ref/<kind>.npz
    /usr/bin/python3 models/kinds.py --out DIR dqn ggnn  # DIR/dqn.onnx, DIR/ggnn.onnx
    /usr/bin/python3 models/kinds.py --out DIR --family  # also DIR/<kind>_<suffix>.onnx

The graphs are laid out the way PyTorch's ONNX exporter (1.13, opset 17) lays out the
equivalent modules: nn.Linear on a 2-D tensor is Gemm(transB=1); on a 3-D tensor it is MatMul
with a pre-transposed weight plus Add(bias, .); nn.LSTM / nn.GRU are the ONNX LSTM / GRU ops
with PyTorch's gates reordered (LSTM ifgo -> iofc, GRU rzn -> zrn, linear_before_reset=1);
nn.LayerNorm is LayerNormalization; shape operands are Constant nodes; node and value names
follow the exporter's "/scope/Op_output_0" scheme. Static shapes, float32, opset 17, IR 8.
Weights are drawn like PyTorch's default init (uniform +-1/sqrt(fan_in); RNNs +-1/sqrt(hidden))
from a fixed seed per kind; LayerNorm scales and shifts are randomised too, so that they are
not a no-op. Every model is checked with onnx.checker (full check) and strict shape inference.

Reference outputs (--ref) come from models/onnx_np.py evaluating the graph in float64 (the
results are rounded to float32); the npz scheme is the one of models/README.md.
"""

import argparse
import io
import os
import sys
import warnings
import zipfile
from collections import Counter, OrderedDict

import numpy as np

with warnings.catch_warnings():       # onnx 1.12 still uses the aliases numpy 1.24 removed
    warnings.simplefilter("ignore")
    for _alias, _t in (("float", float), ("int", int), ("bool", bool), ("object", object),
                       ("str", str), ("complex", complex)):
        if _alias not in np.__dict__:
            setattr(np, _alias, _t)

import onnx  # noqa: E402
import onnx.checker  # noqa: E402
import onnx.shape_inference  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import onnx_np  # noqa: E402

OPSET = 17
F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


# --------------------------------------------------------------------------------------------
# graph construction in the exporter's style

class Graph:
    """Nodes, initializers and inputs of one model, named the way torch.onnx names them."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = Counter()
        self.matmul_id = 0

    def op(self, op_type, inputs, scope="", n_out=1, **attrs):
        i = self.count[(scope, op_type)]
        self.count[(scope, op_type)] += 1
        name = "%s/%s%s" % (scope, op_type, "_%d" % i if i else "")
        outs = ["%s_output_%d" % (name, k) for k in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, scope=""):
        """A Constant node (the exporter's form for shapes, indices and scalars)."""
        value = np.asarray(value)
        i = self.count[(scope, "Constant")]
        self.count[(scope, "Constant")] += 1
        name = "%s/Constant%s" % (scope, "_%d" % i if i else "")
        out = name + "_output_0"
        self.nodes.append(helper.make_node(
            "Constant", [], [out], name=name,
            value=numpy_helper.from_array(value, name="")))
        return out

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name=name))
        return name

    def input(self, name, shape, elem=F32):
        self.inputs.append(helper.make_tensor_value_info(name, elem, list(shape)))
        return name

    def output(self, value, name, shape, elem=F32):
        """Renames the value `value` (the last node's output) to the graph output `name`."""
        for n in self.nodes:
            for k, o in enumerate(n.output):
                if o == value:
                    n.output[k] = name
            for k, i in enumerate(n.input):
                if i == value:
                    n.input[k] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem, list(shape)))
        return name

    def uniform(self, bound, shape):
        return self.rng.uniform(-bound, bound, size=shape).astype(np.float32)

    def linear(self, x, fin, fout, scope, rank=2):
        """nn.Linear(fin, fout): Gemm(transB=1) on 2-D input; MatMul + Add(bias, .) above."""
        b = 1.0 / np.sqrt(fin)
        w = self.uniform(b, (fout, fin))
        bias = self.uniform(b, (fout,))
        name = scope.strip("/").replace("/", ".")
        if rank == 2:
            return self.op("Gemm", [x, self.init(name + ".weight", w),
                                    self.init(name + ".bias", bias)],
                           scope, alpha=1.0, beta=1.0, transB=1)
        self.matmul_id += 1
        wt = self.init("onnx::MatMul_%d" % self.matmul_id, w.T)
        y = self.op("MatMul", [x, wt], scope)
        return self.op("Add", [self.init(name + ".bias", bias), y], scope)

    def layernorm(self, x, d, scope):
        name = scope.strip("/").replace("/", ".")
        g = self.rng.uniform(0.5, 1.5, d).astype(np.float32)
        b = self.rng.uniform(-0.1, 0.1, d).astype(np.float32)
        return self.op("LayerNormalization", [x, self.init(name + ".weight", g),
                                              self.init(name + ".bias", b)],
                       scope, axis=-1, epsilon=1e-5)

    def model(self, graph_name):
        g = helper.make_graph(self.nodes, graph_name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, producer_name="mlbc-kinds", producer_version="1",
                              opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 8
        return m


def _reorder(w, parts, order):
    """Split the first axis into `parts` gate blocks and put them in `order`."""
    blocks = np.split(w, parts, axis=0)
    return np.concatenate([blocks[i] for i in order], axis=0)


def _rnn_weights(g, gates, order, fin, hidden):
    """nn.LSTM / nn.GRU layer-0 weights (PyTorch gate order), reordered for ONNX like the
    exporter does: W [1, G*H, in], R [1, G*H, H], B [1, 2*G*H] (Wb then Rb)."""
    b = 1.0 / np.sqrt(hidden)
    w_ih = g.uniform(b, (gates * hidden, fin))
    w_hh = g.uniform(b, (gates * hidden, hidden))
    b_ih = g.uniform(b, (gates * hidden,))
    b_hh = g.uniform(b, (gates * hidden,))
    W = _reorder(w_ih, gates, order)[None]
    R = _reorder(w_hh, gates, order)[None]
    B = np.concatenate([_reorder(b_ih, gates, order), _reorder(b_hh, gates, order)])[None]
    return W, R, B


# --------------------------------------------------------------------------------------------
# the kinds

def mlp_batch(batch=32, widths=(64, 128, 96, 10)):
    """MLP on a batch of rows: Linear, Tanh, Linear, LeakyReLU, ..., Linear, Softmax(dim=1).
    x float[batch, widths[0]] -> probs float[batch, widths[-1]]."""
    g = Graph(101)
    x = g.input("x", [batch, widths[0]])
    n = len(widths) - 1
    for i in range(n):
        x = g.linear(x, widths[i], widths[i + 1], "/net.%d" % (2 * i))
        if i < n - 1:
            if i % 2 == 0:
                x = g.op("Tanh", [x], "/net.%d" % (2 * i + 1))
            else:
                x = g.op("LeakyRelu", [x], "/net.%d" % (2 * i + 1), alpha=0.01)
    x = g.op("Softmax", [x], "/net.%d" % (2 * n - 1), axis=1)
    g.output(x, "probs", [batch, widths[-1]])
    return g.model("mlp_batch")


def lstm_seq(seq=20, input=64, hidden=128, batch=1, actions=16):
    """RL4ReAl-like recurrent policy: nn.LSTM(input, hidden) over a sequence with zero initial
    state buffers h0/c0, Linear head over the last hidden state h_n.
    seq float[seq, batch, input] -> logits float[batch, actions]."""
    g = Graph(102)
    x = g.input("seq", [seq, batch, input])
    W, R, B = _rnn_weights(g, 4, [0, 3, 1, 2], input, hidden)   # ifgo -> iofc
    h0 = g.init("h0", np.zeros((1, batch, hidden), np.float32))
    c0 = g.init("c0", np.zeros((1, batch, hidden), np.float32))
    y, y_h, y_c = g.op("LSTM", [x, g.init("onnx::LSTM_1", W), g.init("onnx::LSTM_2", R),
                                g.init("onnx::LSTM_3", B), "", h0, c0],
                       "/lstm", n_out=3, hidden_size=hidden)
    h = g.op("Squeeze", [y_h, g.const(np.array([0], np.int64), "")], "")   # h_n[-1]
    x = g.linear(h, hidden, actions, "/head")
    g.output(x, "logits", [batch, actions])
    return g.model("lstm_seq")


def transformer_block(tokens=16, dmodel=64, heads=4, ffn=256, act="gelu"):
    """One post-LN encoder block with separate q/k/v projections:
    x + MHA(x) -> LayerNorm -> + FFN (Linear, GELU(erf) or ReLU, Linear) -> LayerNorm.
    x float[1, tokens, dmodel] -> y float[1, tokens, dmodel]."""
    assert dmodel % heads == 0
    dh = dmodel // heads
    g = Graph(103)
    x = g.input("x", [1, tokens, dmodel])
    split_shape = np.array([1, tokens, heads, dh], np.int64)
    q = g.linear(x, dmodel, dmodel, "/attn/q", rank=3)
    k = g.linear(x, dmodel, dmodel, "/attn/k", rank=3)
    v = g.linear(x, dmodel, dmodel, "/attn/v", rank=3)
    q = g.op("Reshape", [q, g.const(split_shape, "/attn")], "/attn", allowzero=0)
    q = g.op("Transpose", [q], "/attn", perm=[0, 2, 1, 3])
    k = g.op("Reshape", [k, g.const(split_shape, "/attn")], "/attn", allowzero=0)
    k = g.op("Transpose", [k], "/attn", perm=[0, 2, 3, 1])   # the exporter merges k's two
    v = g.op("Reshape", [v, g.const(split_shape, "/attn")], "/attn", allowzero=0)
    v = g.op("Transpose", [v], "/attn", perm=[0, 2, 1, 3])
    s = g.op("MatMul", [q, k], "/attn")
    s = g.op("Div", [s, g.const(np.array(np.sqrt(dh), np.float32), "/attn")], "/attn")
    p = g.op("Softmax", [s], "/attn", axis=-1)
    o = g.op("MatMul", [p, v], "/attn")
    o = g.op("Transpose", [o], "/attn", perm=[0, 2, 1, 3])
    o = g.op("Reshape", [o, g.const(np.array([1, tokens, dmodel], np.int64), "/attn")],
             "/attn", allowzero=0)
    o = g.linear(o, dmodel, dmodel, "/attn/out", rank=3)
    x = g.op("Add", [x, o], "")
    x = g.layernorm(x, dmodel, "/norm1")
    f = g.linear(x, dmodel, ffn, "/ff1", rank=3)
    if act == "gelu":      # F.gelu (exact) at opset 17: x * (1 + erf(x / sqrt 2)) * 0.5
        e = g.op("Div", [f, g.const(np.array(np.sqrt(2.0), np.float32), "/act")], "/act")
        e = g.op("Erf", [e], "/act")
        e = g.op("Add", [e, g.const(np.array(1.0, np.float32), "/act")], "/act")
        f = g.op("Mul", [f, e], "/act")
        f = g.op("Mul", [f, g.const(np.array(0.5, np.float32), "/act")], "/act")
    elif act == "relu":
        f = g.op("Relu", [f], "/act")
    else:
        raise ValueError("act must be gelu or relu")
    f = g.linear(f, ffn, dmodel, "/ff2", rank=3)
    x = g.op("Add", [x, f], "")
    x = g.layernorm(x, dmodel, "/norm2")
    g.output(x, "y", [1, tokens, dmodel])
    return g.model("transformer_block")


def gru_seq(seq=8, input=32, hidden=96, batch=1, actions=8):
    """Recurrent policy: nn.GRU(input, hidden, batch_first=True), no initial state (optional
    input left empty), Linear head over the last time step y[:, -1].
    seq float[batch, seq, input] -> logits float[batch, actions]."""
    g = Graph(104)
    x = g.input("seq", [batch, seq, input])
    W, R, B = _rnn_weights(g, 3, [1, 0, 2], input, hidden)      # rzn -> zrn
    xt = g.op("Transpose", [x], "/gru", perm=[1, 0, 2])
    y, _ = g.op("GRU", [xt, g.init("onnx::GRU_1", W), g.init("onnx::GRU_2", R),
                        g.init("onnx::GRU_3", B)],
                "/gru", n_out=2, hidden_size=hidden, linear_before_reset=1)
    y = g.op("Squeeze", [y, g.const(np.array([1], np.int64), "/gru")], "/gru")
    y = g.op("Transpose", [y], "/gru", perm=[1, 0, 2])                       # [B, T, H]
    h = g.op("Gather", [y, g.const(np.array(-1, np.int64), "")], "", axis=1)
    x = g.linear(h, hidden, actions, "/head")
    g.output(x, "logits", [batch, actions])
    return g.model("gru_seq")


def ggnn(nodes=8, features=300, steps=3, hidden=64, classes=4):
    """Gated graph network (loop-distribution-like): h = tanh(Linear(x)); `steps` times
    m = A @ Linear(h), h = GRUCell(m, h) written out the way a hand-written cell exports
    (Gemm, Split, Sigmoid, Tanh, Mul, Add, Sub; one set of weights shared by every step);
    readout mean over nodes + Linear.
    x float[nodes, features], adj float[nodes, nodes] -> logits float[1, classes]."""
    g = Graph(105)
    x = g.input("x", [nodes, features])
    adj = g.input("adj", [nodes, nodes])
    h = g.linear(x, features, hidden, "/inp")
    h = g.op("Tanh", [h], "/inp")
    bm = 1.0 / np.sqrt(hidden)
    wm, bmsg = g.init("msg.weight", g.uniform(bm, (hidden, hidden))), \
        g.init("msg.bias", g.uniform(bm, (hidden,)))
    # nn.GRUCell weights, PyTorch's r, z, n order (the cell below uses them in that order).
    w_ih = g.init("cell.weight_ih", g.uniform(bm, (3 * hidden, hidden)))
    w_hh = g.init("cell.weight_hh", g.uniform(bm, (3 * hidden, hidden)))
    b_ih = g.init("cell.bias_ih", g.uniform(bm, (3 * hidden,)))
    b_hh = g.init("cell.bias_hh", g.uniform(bm, (3 * hidden,)))
    split = np.array([hidden] * 3, np.int64)
    for s in range(steps):
        sc = "/step.%d" % s
        m = g.op("Gemm", [h, wm, bmsg], sc + "/msg", alpha=1.0, beta=1.0, transB=1)
        m = g.op("MatMul", [adj, m], sc)
        gi = g.op("Gemm", [m, w_ih, b_ih], sc + "/cell", alpha=1.0, beta=1.0, transB=1)
        gh = g.op("Gemm", [h, w_hh, b_hh], sc + "/cell", alpha=1.0, beta=1.0, transB=1)
        i_r, i_z, i_n = g.op("Split", [gi, g.const(split, sc + "/cell")], sc + "/cell",
                             n_out=3, axis=1)
        h_r, h_z, h_n = g.op("Split", [gh, g.const(split, sc + "/cell")], sc + "/cell",
                             n_out=3, axis=1)
        r = g.op("Sigmoid", [g.op("Add", [i_r, h_r], sc + "/cell")], sc + "/cell")
        z = g.op("Sigmoid", [g.op("Add", [i_z, h_z], sc + "/cell")], sc + "/cell")
        n = g.op("Tanh", [g.op("Add", [i_n, g.op("Mul", [r, h_n], sc + "/cell")],
                               sc + "/cell")], sc + "/cell")
        one_minus_z = g.op("Sub", [g.const(np.array(1.0, np.float32), sc + "/cell"), z],
                           sc + "/cell")
        h = g.op("Add", [g.op("Mul", [one_minus_z, n], sc + "/cell"),
                         g.op("Mul", [z, h], sc + "/cell")], sc + "/cell")
    r = g.op("ReduceMean", [h], "", axes=[0], keepdims=1)
    out = g.linear(r, hidden, classes, "/readout")
    g.output(out, "logits", [1, classes])
    return g.model("ggnn")


def cnn_small(channels=3, size=32, widths=(16, 32, 32), classes=10):
    """Small CNN: per width, Conv 3x3 pad 1 + ReLU + MaxPool 2; Flatten; Linear.
    image float[1, channels, size, size] -> logits float[1, classes]."""
    g = Graph(106)
    x = g.input("image", [1, channels, size, size])
    c, s = channels, size
    for i, w in enumerate(widths):
        b = 1.0 / np.sqrt(c * 9)
        sc = "/conv%d" % (i + 1)
        x = g.op("Conv", [x, g.init("conv%d.weight" % (i + 1), g.uniform(b, (w, c, 3, 3))),
                          g.init("conv%d.bias" % (i + 1), g.uniform(b, (w,)))], sc,
                 dilations=[1, 1], group=1, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                 strides=[1, 1])
        x = g.op("Relu", [x], "/relu%d" % (i + 1))
        x = g.op("MaxPool", [x], "/pool%d" % (i + 1), ceil_mode=0, kernel_shape=[2, 2],
                 pads=[0, 0, 0, 0], strides=[2, 2])
        c, s = w, s // 2
    assert s >= 1, "image too small for %d pools" % len(widths)
    x = g.op("Flatten", [x], "", axis=1)
    x = g.linear(x, c * s * s, classes, "/fc")
    g.output(x, "logits", [1, classes])
    return g.model("cnn_small")


def dqn(emb=300, widths=(256, 128), actions=34, batch=1):
    """POSET-RL-like DQN: MLP (ReLU) on an embedding, Q values and their argmax.
    embedding float[batch, emb] -> q float[batch, actions], action int64[batch]."""
    g = Graph(107)
    x = g.input("embedding", [batch, emb])
    dims = [emb] + list(widths)
    for i in range(len(widths)):
        x = g.linear(x, dims[i], dims[i + 1], "/fc%d" % (i + 1))
        x = g.op("Relu", [x], "/relu%d" % (i + 1))
    q = g.linear(x, dims[-1], actions, "/q")
    a = g.op("ArgMax", [q], "", axis=1, keepdims=0, select_last_index=0)
    g.output(q, "q", [batch, actions])
    g.output(a, "action", [batch], I64)
    return g.model("dqn")


# name: (builder, defaults, family of alternative parameter dicts). The last member of each
# family was added after the others had been tuned for, and measured before any tuning for it.
KINDS = OrderedDict([
    ("mlp_batch", (mlp_batch, dict(batch=32, widths=(64, 128, 96, 10)), [
        dict(batch=1), dict(batch=8), dict(batch=64),
        dict(widths=(32, 256, 256, 4)), dict(batch=20, widths=(48, 200, 24, 6)),
    ])),
    ("lstm_seq", (lstm_seq, dict(seq=20, input=64, hidden=128, batch=1, actions=16), [
        dict(seq=5), dict(seq=50), dict(hidden=256), dict(batch=8, hidden=64),
        dict(seq=12, hidden=96, batch=3),
    ])),
    ("transformer_block", (transformer_block,
                           dict(tokens=16, dmodel=64, heads=4, ffn=256, act="gelu"), [
        dict(tokens=4), dict(tokens=64), dict(heads=1), dict(heads=8, act="relu"),
        dict(dmodel=128, ffn=512), dict(tokens=24, dmodel=96, heads=3, ffn=384),
    ])),
    ("gru_seq", (gru_seq, dict(seq=8, input=32, hidden=96, batch=1, actions=8), [
        dict(seq=1), dict(seq=32), dict(hidden=48), dict(batch=4, input=16),
        dict(seq=16, hidden=80),
    ])),
    ("ggnn", (ggnn, dict(nodes=8, features=300, steps=3, hidden=64, classes=4), [
        dict(nodes=4), dict(nodes=32), dict(steps=1), dict(features=64, hidden=32),
        dict(nodes=12, features=200, hidden=48),
    ])),
    ("cnn_small", (cnn_small, dict(channels=3, size=32, widths=(16, 32, 32), classes=10), [
        dict(channels=1, size=28), dict(size=16, widths=(8, 16)), dict(size=64),
        dict(size=40, widths=(12, 24)), dict(channels=8, size=14, widths=(32, 32)),
    ])),
    ("dqn", (dqn, dict(emb=300, widths=(256, 128), actions=34, batch=1), [
        dict(actions=2), dict(widths=(512, 256)), dict(emb=100), dict(batch=16),
        dict(emb=200, widths=(384, 96), batch=4),
    ])),
])

# Short forms for the family file names, e.g. lstm_seq_t50_h256.onnx.
ABBREV = {"batch": "b", "widths": "w", "seq": "t", "input": "i", "hidden": "h",
          "actions": "a", "tokens": "t", "dmodel": "d", "heads": "nh", "ffn": "f", "act": "",
          "nodes": "n", "features": "f", "steps": "s", "classes": "k", "channels": "c",
          "size": "s", "emb": "e"}


def suffix(params):
    """A readable file-name suffix for a family member: {'seq': 5, 'hidden': 256} -> 't5_h256'."""
    parts = []
    for k, v in params.items():
        if isinstance(v, (tuple, list)):
            v = "x".join(str(i) for i in v)
        parts.append("%s%s" % (ABBREV.get(k, k), v))
    return "_".join(parts)


def family(kind):
    """[(suffix, full parameter dict)] for every alternative member of a kind's family."""
    _, defaults, alts = KINDS[kind]
    return [(suffix(a), dict(defaults, **a)) for a in alts]


def check(model):
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.checker.check_model(inferred)
    # Inferred output types and shapes must be the declared ones.
    got = {v.name: v.type for v in inferred.graph.output}
    for v in model.graph.output:
        if got[v.name] != v.type:
            raise ValueError("output %s: declared %s, inferred %s" % (v.name, v.type,
                                                                      got[v.name]))
    return model


def build(kind, **params):
    """The model of `kind` for these parameters (defaults for the others), checked."""
    builder, defaults, _ = KINDS[kind]
    unknown = set(params) - set(defaults)
    if unknown:
        raise TypeError("%s: unknown parameter(s) %s" % (kind, ", ".join(sorted(unknown))))
    return check(builder(**dict(defaults, **params)))


# --------------------------------------------------------------------------------------------
# inputs and reference data

NP_OF = {F32: np.float32, I64: np.int64}


def io_specs(values):
    return [(v.name, NP_OF[v.type.tensor_type.elem_type],
             tuple(d.dim_value for d in v.type.tensor_type.shape.dim)) for v in values]


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in inits]


def random_inputs(model, seed=0):
    """Plausible inputs: N(0, 1) features; `adj` a 0/1 adjacency (about 30% edges);
    `image` uniform in [0, 1)."""
    rng = np.random.default_rng(seed)
    feeds = OrderedDict()
    for name, dt, shape in io_specs(graph_inputs(model)):
        if name == "adj":
            a = (rng.random(shape) < 0.3).astype(dt)
        elif name == "image":
            a = rng.random(shape).astype(dt)
        else:
            a = rng.standard_normal(shape).astype(dt)
        feeds[name] = a
    return feeds


def reference(model, feeds):
    """Graph outputs by onnx_np, computed in float64 and rounded to the output types."""
    return onnx_np.run(model, feeds, float64=True)


def write_npz(path, data):
    """np.savez with a fixed zip timestamp (byte-identical re-runs), as make_models.py does."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for key, a in data.items():
            b = io.BytesIO()
            np.lib.format.write_array(b, np.ascontiguousarray(a), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, b.getvalue())


def write_ref(model, path, nsamples=4):
    """Reference samples k = 0..nsamples-1 from random_inputs(model, seed=k)."""
    outs = io_specs(model.graph.output)
    data = OrderedDict()
    for k in range(nsamples):
        feeds = random_inputs(model, seed=k)
        got = reference(model, feeds)
        for n, a in feeds.items():
            data["in:%s:%d" % (n, k)] = a
        for n, dt, shape in outs:
            a = got[n]
            assert a.dtype == dt and a.shape == shape, (n, a.dtype, a.shape, dt, shape)
            data["out:%s:%d" % (n, k)] = a
    write_npz(path, data)
    return nsamples


def save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def summary(model, name):
    ops = Counter(n.op_type for n in model.graph.node)
    nparams = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    fmt = lambda v: "%s %s%s" % (v[0], np.dtype(v[1]).name, list(v[2]))  # noqa: E731
    print("== %s: %d nodes, %d parameters; %s -> %s" % (
        name, len(model.graph.node), nparams,
        ", ".join(fmt(v) for v in io_specs(graph_inputs(model))),
        ", ".join(fmt(v) for v in io_specs(model.graph.output))))
    print("   ops: " + ", ".join("%s %d" % kv for kv in sorted(ops.items())))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kinds", nargs="*", help="kinds to write (default: all): "
                    + " ".join(KINDS))
    ap.add_argument("--out", default=HERE, help="output directory (default: models/)")
    ap.add_argument("--family", action="store_true",
                    help="also write every family member as <kind>_<suffix>.onnx")
    ap.add_argument("--ref", action="store_true",
                    help="also write OUT/ref/<kind>.npz for the defaults (4 samples)")
    args = ap.parse_args(argv)
    for k in args.kinds:
        if k not in KINDS:
            ap.error("unknown kind %r (kinds: %s)" % (k, " ".join(KINDS)))
    os.makedirs(args.out, exist_ok=True)
    for kind in args.kinds or list(KINDS):
        m = build(kind)
        save(m, os.path.join(args.out, kind + ".onnx"))
        summary(m, kind)
        if args.ref:
            os.makedirs(os.path.join(args.out, "ref"), exist_ok=True)
            write_ref(m, os.path.join(args.out, "ref", kind + ".npz"))
        if args.family:
            for suf, params in family(kind):
                fm = build(kind, **params)
                save(fm, os.path.join(args.out, "%s_%s.onnx" % (kind, suf)))
                summary(fm, "%s_%s" % (kind, suf))
    return 0


if __name__ == "__main__":
    sys.exit(main())
