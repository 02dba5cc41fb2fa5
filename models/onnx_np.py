"""A tiny numpy evaluator for the ONNX ops used by mlbc's example models.

onnx 1.12 has no onnx.reference and there is no onnxruntime here, so make_models.py uses this
to check that the exported graphs compute what PyTorch computed. It follows the ONNX operator
specification for the attributes these models use (and raises on anything else); it is a
checking aid, not a general runtime.

    import onnx_np
    outputs = onnx_np.run(model_proto, {"input name": ndarray, ...})   # dict name -> ndarray
"""

import itertools
import math

import numpy as np

for _alias, _t in (("float", float), ("int", int), ("bool", bool), ("object", object),
                   ("str", str), ("complex", complex)):
    if _alias not in np.__dict__:       # onnx 1.12 needs the aliases numpy 1.24 removed
        setattr(np, _alias, _t)

from onnx import numpy_helper  # noqa: E402

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _attrs(node):
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _ints(v):
    return [int(i) for i in v]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _pads(a, nsp):
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("auto_pad")
    return _ints(a.get("pads", [0] * (2 * nsp)))


def _conv(x, w, b, a):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    if a.get("group", 1) != 1:
        raise NotImplementedError("grouped Conv")
    sh, sw = _ints(a.get("strides", [1, 1]))
    dh, dw = _ints(a.get("dilations", [1, 1]))
    pt, pl, pb, pr = _pads(a, 2)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw]          # [n, c, oh, ow]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    if b is not None:
        y += b.reshape(1, m, 1, 1)
    return y.astype(x.dtype)


def _pool(x, a, kind):
    """MaxPool or AveragePool over 1 to 3 spatial axes, with pads (AveragePool: counted or
    not, count_include_pad) and dilations. Padding is -inf for max, not a tap for the mean."""
    k = _ints(a["kernel_shape"])
    nsp = len(k)
    s = _ints(a.get("strides", [1] * nsp))
    d = _ints(a.get("dilations", [1] * nsp))
    pads = _pads(a, nsp)
    if a.get("ceil_mode", 0):
        raise NotImplementedError("pool ceil_mode")
    widths = [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)]
    xp = np.pad(x.astype(np.float64), widths,
                constant_values=-np.inf if kind == "max" else 0)
    inside = np.pad(np.ones(x.shape[2:]), widths[2:])
    out = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nsp)]
    acc = np.full(x.shape[:2] + tuple(out), -np.inf if kind == "max" else 0.0)
    count = np.zeros(out)
    for tap in itertools.product(*[range(n) for n in k]):
        sl = tuple(slice(t * d[i], t * d[i] + s[i] * (out[i] - 1) + 1, s[i])
                   for i, t in enumerate(tap))
        v = xp[(Ellipsis,) + sl]
        acc = np.maximum(acc, v) if kind == "max" else acc + v
        count += inside[sl]
    if kind == "avg":
        acc /= np.prod(k) if a.get("count_include_pad", 0) else count
    return acc.astype(x.dtype)


def _rnn(ins, a, gates, cell, cells):
    """LSTM, GRU and RNN: CELL(x_t, states, w, r, wb, rb, hs) -> new states (h first) run over
    each direction (reverse: from each row's last step), layout 0 or 1 and sequence_lens (a
    row past its length keeps its state, and its Y is zero there). Returns Y, Y_h (, Y_c)."""
    x, w, r = ins[0], ins[1], ins[2]
    if "clip" in a or "activations" in a or (len(ins) > 7 and ins[7] is not None):
        raise NotImplementedError("RNN clip/activations/peepholes")
    if a.get("input_forget", 0):
        raise NotImplementedError("LSTM input_forget")
    layout = a.get("layout", 0)
    if layout:
        x = x.transpose(1, 0, 2)
    direction = a.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    revs = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]
    hs = int(a["hidden_size"])
    T, B = x.shape[0], x.shape[1]
    lens = ins[4].astype(np.int64) if len(ins) > 4 and ins[4] is not None else np.full(B, T)
    b = ins[3] if len(ins) > 3 and ins[3] is not None else \
        np.zeros((len(revs), 2 * gates * hs), x.dtype)
    init = [ins[k] if len(ins) > k and ins[k] is not None else None for k in (5, 6)][:cells]
    if layout:
        init = [v.transpose(1, 0, 2) if v is not None else None for v in init]
    y = np.zeros((T, len(revs), B, hs))
    finals = [np.zeros((len(revs), B, hs)) for _ in range(cells)]
    rows = np.arange(B)
    for d, rev in enumerate(revs):
        st = [v[d].astype(np.float64) if v is not None else np.zeros((B, hs)) for v in init]
        for s in range(T):
            t = np.where(rev, lens - 1 - s, s).clip(0, T - 1)
            live = (s < lens)[:, None]
            new = cell(x[t, rows].astype(np.float64), st, w[d], r[d], b[d, :gates * hs],
                       b[d, gates * hs:], hs)
            st = [np.where(live, n, o) for n, o in zip(new, st)]
            y[t, d, rows] = np.where(live, st[0], y[t, d, rows])
        for k in range(cells):
            finals[k][d] = st[k]
    outs = [y] + finals
    if layout:
        outs = [y.transpose(2, 0, 1, 3)] + [f.transpose(1, 0, 2) for f in finals]
    return [o.astype(x.dtype) for o in outs]


def _lstm_cell(xt, st, w, r, wb, rb, hs):
    h, c = st
    g = xt @ w.T + h @ r.T + wb + rb                        # gates i, o, f, c
    i, o, f, cc = np.split(g, 4, axis=1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(cc)
    return [_sigmoid(o) * np.tanh(c), c]


def _gru_cell(lbr):
    def cell(xt, st, w, r, wb, rb, hs):
        h = st[0]
        wz, wr, wh = np.split(w, 3, axis=0)
        rz, rr, rh = np.split(r, 3, axis=0)
        wbz, wbr, wbh = np.split(wb, 3)
        rbz, rbr, rbh = np.split(rb, 3)
        z = _sigmoid(xt @ wz.T + h @ rz.T + wbz + rbz)
        rg = _sigmoid(xt @ wr.T + h @ rr.T + wbr + rbr)
        if lbr:
            hh = np.tanh(xt @ wh.T + rg * (h @ rh.T + rbh) + wbh)
        else:
            hh = np.tanh(xt @ wh.T + (rg * h) @ rh.T + rbh + wbh)
        return [(1 - z) * hh + z * h]
    return cell


def _rnn_cell(xt, st, w, r, wb, rb, hs):
    return [np.tanh(xt @ w.T + st[0] @ r.T + wb + rb)]


def _axes_arg(ins, a, idx):
    if len(ins) > idx and ins[idx] is not None:
        return _ints(ins[idx])
    return _ints(a["axes"]) if "axes" in a else None


def _slice(ins, a):
    x, starts, ends = ins[0], _ints(ins[1]), _ints(ins[2])
    axes = _ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
    steps = _ints(ins[4]) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    sl = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        sl[ax] = slice(*slice(s, e, st).indices(x.shape[ax]))
    return x[tuple(sl)]


def _pad(ins, a):
    x, p = ins[0], _ints(ins[1])
    if a.get("mode", b"constant") not in (b"constant", "constant"):
        raise NotImplementedError("Pad mode")
    if len(ins) > 3 and ins[3] is not None:
        raise NotImplementedError("Pad axes")
    cval = ins[2] if len(ins) > 2 and ins[2] is not None else 0
    n = x.ndim
    if min(p) < 0:
        raise NotImplementedError("negative Pad")
    return np.pad(x, [(p[i], p[i + n]) for i in range(n)], constant_values=cval)


def _layernorm(ins, a):
    x, scale = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 and ins[2] is not None else 0
    axis = a.get("axis", -1)
    axis = axis + x.ndim if axis < 0 else axis
    axes = tuple(range(axis, x.ndim))
    xd = x.astype(np.float64)
    mean = xd.mean(axis=axes, keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (xd - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * scale + bias
    return y.astype(x.dtype)


def _softmax(x, axis, log=False):
    xd = x.astype(np.float64)
    e = xd - xd.max(axis=axis, keepdims=True)
    if log:
        return (e - np.log(np.exp(e).sum(axis=axis, keepdims=True))).astype(x.dtype)
    e = np.exp(e)
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def _argmax(x, a):
    if a.get("select_last_index", 0):
        raise NotImplementedError("select_last_index")
    axis = a.get("axis", 0)
    r = np.argmax(x, axis=axis).astype(np.int64)               # first maximum
    return np.expand_dims(r, axis) if a.get("keepdims", 1) else r


def _reduce(fn, ins, a):
    axes = _axes_arg(ins, a, 1)
    keep = bool(a.get("keepdims", 1))
    if axes is None or len(axes) == 0:
        if a.get("noop_with_empty_axes", 0):
            return ins[0]
        axes = list(range(ins[0].ndim))
    return fn(ins[0], axis=tuple(axes), keepdims=keep).astype(ins[0].dtype)


def _cast(x, to):
    from onnx import helper
    dt = helper.tensor_dtype_to_np_dtype(to) if hasattr(helper, "tensor_dtype_to_np_dtype") \
        else __import__("onnx").mapping.TENSOR_TYPE_TO_NP_TYPE[to]
    return x.astype(dt)


def _split(ins, a, n_out):
    """Split (opset 13-17): sizes from the optional 'split' input, else n_out equal parts."""
    if "num_outputs" in a:
        raise NotImplementedError("Split num_outputs (opset 18)")
    x, axis = ins[0], a.get("axis", 0)
    axis = axis + x.ndim if axis < 0 else axis
    if len(ins) > 1 and ins[1] is not None:
        sizes = _ints(ins[1])
        if len(sizes) != n_out or sum(sizes) != x.shape[axis]:
            raise ValueError("Split: sizes %s for %d outputs of a dimension %d"
                             % (sizes, n_out, x.shape[axis]))
    else:
        if x.shape[axis] % n_out:
            raise ValueError("Split: dimension %d not divisible into %d parts"
                             % (x.shape[axis], n_out))
        sizes = [x.shape[axis] // n_out] * n_out
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


def _bin(fn):
    return lambda ins, a: [fn(ins[0], ins[1])]


OPS = {
    "Add": _bin(lambda x, y: x + y), "Sub": _bin(lambda x, y: x - y),
    "Mul": _bin(lambda x, y: x * y),
    "Div": _bin(lambda x, y: (x // y) if np.issubdtype(x.dtype, np.integer) else x / y),
    "Pow": _bin(lambda x, y: np.power(x, y).astype(x.dtype)),
    "MatMul": _bin(lambda x, y: np.matmul(x, y)),
    "Equal": _bin(np.equal), "Less": _bin(np.less), "Greater": _bin(np.greater),
    "LessOrEqual": _bin(np.less_equal), "GreaterOrEqual": _bin(np.greater_equal),
    "Not": lambda ins, a: [np.logical_not(ins[0])],
    "Where": lambda ins, a: [np.where(ins[0], ins[1], ins[2])],
    "Relu": lambda ins, a: [np.maximum(ins[0], 0).astype(ins[0].dtype)],
    "LeakyRelu": lambda ins, a: [np.where(ins[0] < 0, ins[0] * a.get("alpha", 0.01),
                                          ins[0]).astype(ins[0].dtype)],
    "Sqrt": lambda ins, a: [np.sqrt(ins[0])],
    "Tanh": lambda ins, a: [np.tanh(ins[0])],
    "Sigmoid": lambda ins, a: [_sigmoid(ins[0]).astype(ins[0].dtype)],
    "Erf": lambda ins, a: [_erf(ins[0]).astype(ins[0].dtype)],
    "IsInf": lambda ins, a: [(np.isposinf(ins[0]) & bool(a.get("detect_positive", 1)))
                             | (np.isneginf(ins[0]) & bool(a.get("detect_negative", 1)))],
    "Cast": lambda ins, a: [_cast(ins[0], a["to"])],
    "Identity": lambda ins, a: [ins[0]],
    "Constant": lambda ins, a: [numpy_helper.to_array(a["value"])],
    "ConstantOfShape": lambda ins, a: [np.full(_ints(ins[0]), numpy_helper.to_array(a["value"])[0]
                                               if "value" in a else np.float32(0))],
    "Pad": lambda ins, a: [_pad(ins, a)],
    "Shape": lambda ins, a: [np.array(ins[0].shape, np.int64)],
    "Reshape": lambda ins, a: [ins[0].reshape(
        [d if d != 0 or a.get("allowzero", 0) else ins[0].shape[i]
         for i, d in enumerate(_ints(ins[1]))])],
    "Flatten": lambda ins, a: [ins[0].reshape(
        int(np.prod(ins[0].shape[:a.get("axis", 1)])), -1)],
    "Transpose": lambda ins, a: [np.transpose(ins[0], a.get("perm"))],
    "Squeeze": lambda ins, a: [np.squeeze(ins[0], axis=tuple(_axes_arg(ins, a, 1)))
                               if _axes_arg(ins, a, 1) is not None else np.squeeze(ins[0])],
    "Unsqueeze": lambda ins, a: [np.expand_dims(ins[0], tuple(_axes_arg(ins, a, 1)))],
    "Concat": lambda ins, a: [np.concatenate(ins, axis=a["axis"])],
    "Expand": lambda ins, a: [ins[0] * np.ones(_ints(ins[1]), ins[0].dtype)],
    "Gather": lambda ins, a: [np.take(ins[0], ins[1], axis=a.get("axis", 0))],
    "Slice": lambda ins, a: [_slice(ins, a)],
    "Split": None,                                       # needs the output count: see run()
    "Gemm": lambda ins, a: [(a.get("alpha", 1.0)
                             * ((ins[0].T if a.get("transA", 0) else ins[0])
                                @ (ins[1].T if a.get("transB", 0) else ins[1]))
                             + (a.get("beta", 1.0) * ins[2] if len(ins) > 2 else 0)
                             ).astype(ins[0].dtype)],
    "ReduceSum": lambda ins, a: [_reduce(np.sum, ins, a)],
    "ReduceMean": lambda ins, a: [_reduce(np.mean, ins, a)],
    "ReduceMax": lambda ins, a: [_reduce(np.max, ins, a)],
    "ArgMax": lambda ins, a: [_argmax(ins[0], a)],
    "Softmax": lambda ins, a: [_softmax(ins[0], a.get("axis", -1))],
    "LogSoftmax": lambda ins, a: [_softmax(ins[0], a.get("axis", -1), log=True)],
    "Conv": lambda ins, a: [_conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)],
    "MaxPool": lambda ins, a: [_pool(ins[0], a, "max")],
    "AveragePool": lambda ins, a: [_pool(ins[0], a, "avg")],
    "GlobalAveragePool": lambda ins, a: [ins[0].mean(axis=(2, 3), keepdims=True)],
    "BatchNormalization": lambda ins, a: [_bn(ins, a)],
    "LayerNormalization": lambda ins, a: [_layernorm(ins, a)],
    "LSTM": lambda ins, a: _rnn(ins, a, 4, _lstm_cell, 2),
    "GRU": lambda ins, a: _rnn(ins, a, 3, _gru_cell(a.get("linear_before_reset", 0)), 1),
    "RNN": lambda ins, a: _rnn(ins, a, 1, _rnn_cell, 1),
}


def _bn(ins, a):
    x, s, b, mean, var = ins[:5]
    if a.get("training_mode", 0):
        raise NotImplementedError("BatchNormalization training_mode")
    shp = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shp)) / np.sqrt(var.reshape(shp) + a.get("epsilon", 1e-5))
    return (y * s.reshape(shp) + b.reshape(shp)).astype(x.dtype)


def run(model, feeds, float64=False):
    """Evaluate model.graph on feeds (dict name -> ndarray); returns dict of graph outputs.

    float64=True: float32 initializers, feeds and Constant values are widened to float64, the
    whole graph is computed in float64, and float32 graph outputs are rounded back to float32
    (a reference for float32 code that is not itself a float32 computation)."""
    g = model.graph

    def widen(v):
        v = np.asarray(v)
        return v.astype(np.float64) if float64 and v.dtype == np.float32 else v

    env = {t.name: widen(numpy_helper.to_array(t)) for t in g.initializer}
    env.update({k: widen(v) for k, v in feeds.items()})
    for node in g.node:
        if node.domain not in ("", "ai.onnx"):
            raise NotImplementedError("domain " + node.domain)
        if node.op_type not in OPS:
            raise NotImplementedError("onnx_np: op %s (node %s)" % (node.op_type, node.name))
        ins = [env[i] if i else None for i in node.input]
        if node.op_type == "Split":
            outs = _split(ins, _attrs(node), len(node.output))
        else:
            outs = OPS[node.op_type](ins, _attrs(node))
        for name, v in zip(node.output, outs):
            if name:
                env[name] = widen(v) if node.op_type == "Constant" else np.asarray(v)
    res = {o.name: env[o.name] for o in g.output}
    if float64:
        for o in g.output:
            if o.type.tensor_type.elem_type == 1:        # FLOAT
                res[o.name] = res[o.name].astype(np.float32)
    return res
