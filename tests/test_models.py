"""The example models of models/: each compiled by mlbc, built, run on the reference
inputs of models/ref/NAME.npz (keys 'in:<input>:<k>' and 'out:<output>:<k>') and compared
with the reference outputs: PyTorch's for the five of models/make_models.py, onnx_np's (in
float64) for the policy-network kinds of models/kinds.py.

Then the shape families of models/kinds.py: every alternative member of every kind (other
widths, batch sizes, sequence lengths, ...) is generated, compiled by mlbc, run on random
inputs and compared with models/onnx_np.py. The committed models/<kind>.onnx must also be
exactly what kinds.py generates for the defaults.

Then the fused Conv (+ Relu) + MaxPool of op_conv.c: a graph of such chains against the same
graph with every pooled tensor's input also a graph output (which keeps the MaxPool apart),
bytewise, and both against onnx_np."""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import sys

import numpy as np

import mlbctest
from mlbctest import Failure, onnx

sys.path.insert(0, os.path.join(mlbctest.ROOT, "models"))
import kinds  # noqa: E402


def samples(ref):
    ks = sorted({int(k.rsplit(":", 1)[1]) for k in ref.keys()})
    return ks


def reference_sets(path):
    """An example model's reference samples (models/ref/NAME.npz): ([(inputs, expected
    outputs)] in sample order, input types, output types, output names)."""
    name = os.path.splitext(os.path.basename(path))[0]
    ref = np.load(os.path.join(mlbctest.ROOT, "models", "ref", name + ".npz"))
    model = onnx.load(path)
    in_types, out_types = mlbctest.tensor_types(model)
    inits = {t.name for t in model.graph.initializer}
    in_names = [v.name for v in model.graph.input if v.name not in inits]
    out_names = [v.name for v in model.graph.output]
    sets = [([ref["in:%s:%d" % (i, k)] for i in in_names],
             [ref["out:%s:%d" % (o, k)] for o in out_names]) for k in samples(ref)]
    return sets, in_types, out_types, out_names


def check_model(mlbc, path, work):
    name = os.path.splitext(os.path.basename(path))[0]
    sets, in_types, out_types, out_names = reference_sets(path)
    exe = mlbctest.compile_model(mlbc, path, os.path.join(work, name))
    n = 0
    for k, (ins, want) in enumerate(sets):
        got = mlbctest.execute(exe, os.path.join(work, name), ins, in_types,
                               [(t, w.shape) for t, w in zip(out_types, want)])
        for o, g, w in zip(out_names, got, want):
            mlbctest.compare("%s sample %d" % (o, k), g, w)
        n += 1
    return n


def compare_outputs(names, got, want):
    for o, g, w in zip(names, got, want):
        if w.dtype == np.int64 and o == "action" and not np.array_equal(g, w):
            # ArgMax over Q values: a different index is only acceptable on a near-tie,
            # i.e. when the compiled Q value at the chosen index is the maximum to within
            # the float tolerance.
            q_got, q_want = got[names.index("q")], want[names.index("q")]
            mlbctest.compare("q", q_got, q_want)
            chosen = np.take_along_axis(q_want, g.reshape(-1, 1).astype(np.int64), 1)[:, 0]
            if np.all(np.isclose(chosen, q_want.max(axis=1), rtol=1e-3, atol=1e-5)):
                continue
        mlbctest.compare(o, g, w)


def check_member(mlbc, kind, suf, model, work, nsamples=2):
    """One family member: mlbc-compiled code against onnx_np on random inputs."""
    name = "%s_%s" % (kind, suf)
    wdir = os.path.join(work, name)
    os.makedirs(wdir, exist_ok=True)
    path = os.path.join(wdir, name + ".onnx")
    kinds.save(model, path)
    in_types, out_types = mlbctest.tensor_types(model)
    out_names = [v.name for v in model.graph.output]
    exe = mlbctest.compile_model(mlbc, path, wdir)
    for k in range(nsamples):
        feeds = kinds.random_inputs(model, seed=100 + k)
        ref = kinds.reference(model, feeds)
        want = [ref[o] for o in out_names]
        got = mlbctest.execute(exe, wdir, list(feeds.values()), in_types,
                               [(t, w.shape) for t, w in zip(out_types, want)])
        try:
            compare_outputs(out_names, got, want)
        except Failure as e:
            raise Failure("random sample %d: %s" % (k, e))
    shutil.rmtree(wdir, ignore_errors=True)
    return nsamples


# (x shape, out channels, relu, pool kernel, pool strides): odd sizes (a row and a column
# left out of the windows), several products per plane (M * W large), windows of 3 rows,
# of one row at stride 1 along W, and 2x3 windows at stride 2; output rows of half a panel
# (W = 8, 9 rows: a half panel last), one panel (16) and two and three panels (32, 48: a
# product per row), whose tiles have no columns past the rows.
CONV_POOL_CASES = [
    ((1, 3, 13, 11), 8, True, (2, 2), (2, 2)),
    ((1, 4, 20, 62), 60, True, (2, 2), (2, 2)),
    ((1, 2, 17, 17), 5, False, (3, 2), (3, 2)),
    ((2, 3, 8, 9), 6, True, (1, 2), (1, 1)),
    ((1, 1, 28, 28), 15, False, (2, 3), (2, 2)),
    ((1, 3, 16, 16), 16, True, (2, 2), (2, 2)),
    ((1, 2, 10, 32), 9, True, (2, 2), (2, 2)),
    ((1, 2, 7, 48), 5, False, (2, 2), (2, 2)),
    ((1, 3, 9, 8), 12, True, (3, 2), (3, 2)),
    ((1, 2, 6, 8), 2, True, (2, 2), (2, 2)),
    # rows of 40: too many columns past the rows' panels to pool on the registers; the row
    # kernel's vector paths take 16 outputs, then 4 (templates/pool_rows.c)
    ((1, 2, 6, 40), 3, True, (2, 2), (2, 2)),
    # 2x2 windows pooled on the products' registers (templates/gemm_taps_pool_f32.c), the
    # CONV_POOL_REGS cases: tiles of 4 channels and 3, 2, 1 left over; the rows' last panel
    # partial (62), whole (16, 32, 48, 96), alone (16, 48); a row and a column left out (33)
    ((2, 3, 9, 33), 6, True, (2, 2), (2, 2)),
    ((1, 2, 6, 96), 7, False, (2, 2), (2, 2)),
    # pixels as the products' rows (op_conv.c, pix_pays): the last CONV_POOL_PIX; 14
    # channels: blocks of four and two left over (templates/conv_pix_out.c); rows of 8
    ((1, 8, 7, 7), 32, True, (2, 2), (2, 2)),
    ((1, 4, 9, 5), 16, False, (3, 1), (3, 1)),
    ((1, 1, 28, 28), 16, False, (2, 3), (2, 2)),
    ((1, 3, 10, 5), 14, True, (2, 2), (2, 2)),
    ((1, 4, 8, 8), 16, True, (2, 2), (2, 2)),
]
CONV_POOL_PIX = 5
CONV_POOL_REGS = 6


def conv_pool_graph(keep_apart):
    """The CONV_POOL_CASES as one model; keep_apart: each MaxPool's input is an output too."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(5)
    nodes, inputs, outputs, inits = [], [], [], []
    for i, (x, m, relu, k, s) in enumerate(CONV_POOL_CASES):
        t = str(i)
        inputs.append(helper.make_tensor_value_info("x" + t, onnx.TensorProto.FLOAT, x))
        inits.append(numpy_helper.from_array(
            rng.standard_normal((m, x[1], 3, 3)).astype(np.float32), "w" + t))
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b" + t))
        nodes.append(helper.make_node("Conv", ["x" + t, "w" + t, "b" + t], ["c" + t],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        pre = "c" + t
        if relu:
            nodes.append(helper.make_node("Relu", [pre], ["r" + t]))
            pre = "r" + t
        nodes.append(helper.make_node("MaxPool", [pre], ["y" + t], kernel_shape=list(k),
                                      strides=list(s)))
        ph, pw = [(x[2 + j] - k[j]) // s[j] + 1 for j in range(2)]
        outputs.append(helper.make_tensor_value_info("y" + t, onnx.TensorProto.FLOAT,
                                                     [x[0], m, ph, pw]))
        if keep_apart:
            outputs.append(helper.make_tensor_value_info(pre, onnx.TensorProto.FLOAT,
                                                         [x[0], m, x[2], x[3]]))
    graph = helper.make_graph(nodes, "conv_pool", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def poison(feeds, seed):
    """The feeds with about 2% of each input NaN, +inf or -inf, and 2% -0: a fused Relu +
    MaxPool must treat them as the Relu, then the pool, would."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, a in feeds.items():
        a = a.copy()
        r = rng.random(a.shape)
        a[r < 0.02] = rng.choice(np.array([np.nan, np.inf, -np.inf], a.dtype), (r < 0.02).sum())
        a[(r >= 0.02) & (r < 0.04)] = -0.0
        out[name] = a
    return out


def fused_vs_apart(mlbc, work, tag, graph, inspect, ncases, what, reference=kinds.reference):
    """GRAPH(keep_apart) built fused and kept apart, INSPECT(code, apart) checking each one's
    generated code: both against onnx_np (REFERENCE), and outputs y0.. y<NCASES - 1> of the
    two the same bits (up to a NaN's sign and payload), also with NaN, infinite and -0
    inputs."""
    res = {}
    for apart in (False, True):
        model = graph(apart)
        wdir = os.path.join(work, "%s_%s" % (tag, "apart" if apart else "fused"))
        os.makedirs(wdir, exist_ok=True)
        path = os.path.join(wdir, "model.onnx")
        kinds.save(model, path)
        exe = mlbctest.compile_model(mlbc, path, wdir)
        with open(os.path.join(wdir, "model.c")) as f:  # comments wrap: join their lines
            inspect(re.sub(r"\s*\n \* ", " ", f.read()), apart)
        in_types, out_types = mlbctest.tensor_types(model)
        feeds = kinds.random_inputs(model, seed=3)
        ref = reference(model, feeds)
        names = [v.name for v in model.graph.output]
        shapes = [(t, ref[o].shape) for t, o in zip(out_types, names)]
        got = mlbctest.execute(exe, wdir, list(feeds.values()), in_types, shapes)
        compare_outputs(names, got, [ref[o] for o in names])
        odd = mlbctest.execute(exe, wdir, list(poison(feeds, 4).values()), in_types, shapes)
        res[apart] = (dict(zip(names, got)), dict(zip(names, odd)))
    for i in range(ncases):
        y = "y%d" % i
        for k, inputs in enumerate(("random", "NaN, infinite and -0")):
            if not mlbctest.same_bits(res[False][k][y], res[True][k][y])[1]:
                raise Failure("%s, %s inputs: the fused %s differs from the unfused in bits"
                              % (y, inputs, what))
    return ncases


def check_conv_pool(mlbc, work):
    """Fused and unfused Conv + MaxPool (fused_vs_apart), and the paths the chains take."""
    def inspect(code, apart):
        fused = code.count("; then MaxPool, kernel")
        if fused != (0 if apart else len(CONV_POOL_CASES)):
            raise Failure("%d of %d Conv + MaxPool chains fused %s" % (
                fused, len(CONV_POOL_CASES), "though kept apart" if apart else ""))
        if code.count("mlbc_gemm_f32_pix(nr") != CONV_POOL_PIX:
            raise Failure("%d Convs with pixels as the products' rows, not %d" % (
                code.count("mlbc_gemm_f32_pix(nr"), CONV_POOL_PIX))
        regs = len(re.findall(r"mlbc_gemm_f32_taps_pool\(\d", code))
        if regs != (0 if apart else CONV_POOL_REGS):
            raise Failure("%d Convs pooled on the products' registers, not %d" % (
                regs, 0 if apart else CONV_POOL_REGS))
    return fused_vs_apart(mlbc, work, "conv_pool", conv_pool_graph, inspect,
                          len(CONV_POOL_CASES), "Conv + MaxPool")


# Conv (+ BatchNormalization) (+ activation), the BatchNormalization and the activation
# applied to each tile of the products (fuse.c): (x shape, out channels, kernel, strides,
# pads, group, BatchNormalization, activation: None, Relu, Silu as torch writes it (Sigmoid +
# Mul), Sigmoid or Tanh). Products of several rows (13x11, rows of 16), per row (strided
# along H only; rows of 32 and 48, the epilogue on runs of rows), with pixels as rows (7x7), of a 1x1 Conv's x read in place,
# grouped, strided along W (phases; 40x41: tiles), 1-D; depthwise Convs (their own kernel),
# which take an activation but no BatchNormalization (CONV_ACT_APART: a BatchNormalization
# between them keeps the Relu apart too).
CONV_ACT_CASES = [
    ((1, 3, 13, 11), 8, 3, (1, 1), (1, 1, 1, 1), 1, True, "Relu"),
    ((1, 3, 16, 16), 16, 3, (1, 1), (1, 1, 1, 1), 1, True, "Silu"),
    ((1, 2, 10, 32), 9, 3, (1, 1), (1, 1, 1, 1), 1, True, "Relu"),
    ((1, 2, 9, 20), 4, 3, (2, 1), (1, 1, 1, 1), 1, True, "Tanh"),
    ((1, 4, 7, 7), 16, 3, (1, 1), (1, 1, 1, 1), 1, True, "Relu"),
    ((2, 8, 5, 6), 12, 1, (1, 1), (0, 0, 0, 0), 1, True, "Sigmoid"),
    ((1, 8, 6, 19), 6, 3, (1, 1), (0, 1, 2, 0), 2, True, "Relu"),
    ((1, 4, 14, 14), 16, 3, (2, 2), (1, 1, 1, 1), 1, True, None),
    ((2, 3, 33), 5, 3, (1,), (1, 1), 1, True, "Silu"),
    ((1, 4, 7, 7), 16, 3, (1, 1), (1, 1, 1, 1), 1, True, "Silu"),
    ((1, 4, 7, 7), 16, 3, (1, 1), (1, 1, 1, 1), 1, False, "Tanh"),
    ((1, 3, 13, 11), 8, 3, (1, 1), (1, 1, 1, 1), 1, False, "Silu"),
    ((1, 2, 9, 20), 4, 3, (2, 1), (1, 1, 1, 1), 1, False, "Sigmoid"),
    ((2, 8, 5, 6), 12, 1, (1, 1), (0, 0, 0, 0), 1, False, "Silu"),
    ((1, 3, 40, 41), 8, 3, (1, 2), (1, 1, 1, 1), 1, False, "Silu"),
    ((1, 4, 14, 14), 16, 3, (2, 2), (1, 1, 1, 1), 1, False, "Tanh"),
    ((1, 6, 9, 9), 6, 3, (1, 1), (1, 1, 1, 1), 6, False, "Silu"),
    ((1, 6, 9, 9), 12, 3, (1, 1), (1, 1, 1, 1), 6, False, "Tanh"),
    ((2, 8, 30), 8, 3, (1,), (1, 1), 8, False, "Sigmoid"),
    ((1, 3, 6, 48), 8, 3, (1, 1), (1, 1, 1, 1), 1, False, "Relu"),
    ((1, 16, 64), 32, 3, (1,), (1, 1), 4, False, "Silu"),
    ((1, 6, 9, 9), 6, 3, (1, 1), (1, 1, 1, 1), 6, True, "Relu"),
]
CONV_ACT_APART = 1


def batchnorm(rng, x, y, m, t, inits, **attrs):
    """A BatchNormalization node X -> Y over M channels, its random scale, bias, mean and
    variance (named s, b, mu, v + T) appended to INITS."""
    from onnx import helper, numpy_helper
    names = ["s", "b", "mu", "v"]
    for j, name in enumerate(names):
        v = rng.standard_normal(m) if j < 3 else rng.random(m) + 0.05
        inits.append(numpy_helper.from_array(v.astype(np.float32), name + t))
    return helper.make_node("BatchNormalization", [x] + [b + t for b in names], [y], **attrs)


def conv_act_graph(keep_apart):
    """The CONV_ACT_CASES as one model; keep_apart: each Conv's output is an output too."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(41)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits = [], [], [], []
    for i, (x, m, k, s, pads, group, bn, act) in enumerate(CONV_ACT_CASES):
        t, nsp = str(i), len(x) - 2
        inputs.append(helper.make_tensor_value_info("x" + t, F, x))
        inits.append(numpy_helper.from_array(
            rng.standard_normal((m, x[1] // group) + (k,) * nsp).astype(np.float32), "w" + t))
        args = ["x" + t, "w" + t] + (["cb" + t] if i % 2 else [])
        if i % 2:
            inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32),
                                                 "cb" + t))
        last = "y" + t if not (bn or act) else "c" + t
        nodes.append(helper.make_node("Conv", args, [last], kernel_shape=[k] * nsp,
                                      strides=list(s), pads=list(pads), group=group))
        if bn:
            nodes.append(batchnorm(rng, last, "n" + t if act else "y" + t, m, t, inits,
                                   epsilon=1e-3 if i % 3 else 1e-5))
            last = "n" + t
        if act == "Silu":
            nodes.append(helper.make_node("Sigmoid", [last], ["sg" + t]))
            nodes.append(helper.make_node("Mul", [last, "sg" + t], ["y" + t]))
        elif act:
            nodes.append(helper.make_node(act, [last], ["y" + t]))
        out = [(n + pads[j] + pads[j + nsp] - k) // s[j] + 1 for j, n in enumerate(x[2:])]
        outputs.append(helper.make_tensor_value_info("y" + t, F, [x[0], m] + out))
        if keep_apart and (bn or act):
            outputs.append(helper.make_tensor_value_info("c" + t, F, [x[0], m] + out))
    graph = helper.make_graph(nodes, "conv_act", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def check_conv_act(mlbc, work):
    """Fused and unfused Conv (+ BatchNormalization) (+ activation) (fused_vs_apart)."""
    import gen

    def inspect(code, apart):
        kernels = re.findall(r"^/\* Conv: .*$", code, re.M)
        bn = sum("; then BatchNormalization" in k for k in kernels)
        acts = sorted(a for k in kernels
                      for a in re.findall(r"(?:; then|depthwise .*, the fused) (\w+)", k)
                      if a != "BatchNormalization")
        fused = CONV_ACT_CASES[:len(CONV_ACT_CASES) - CONV_ACT_APART]
        want = (0, []) if apart else (
            sum(c[6] and c[5] < c[0][1] for c in fused), sorted(c[7] for c in fused if c[7]))
        if (bn, acts) != want:
            raise Failure("fused: %d BatchNormalizations, activations %s; not %d, %s"
                          % ((bn, acts) + want))
        # a product covering its plane writes it straight into y (GemmPlan.whole)
        if not re.search(r"mlbc_gemm_f32_taps\([^;]*yg, \d+\);", code):
            raise Failure("no product wrote its whole plane into y")
        # products per row of 32 (10 rows): the BatchNormalization on runs of 4 rows, 2 last
        if not apart and not re.search(r"conv_\d+\(yg \+ r0 \* 32, \d+, nr \* 32, bnt\);", code):
            raise Failure("the epilogue of the rows of 32 not on runs of rows")
    return fused_vs_apart(mlbc, work, "conv_act", conv_act_graph, inspect,
                          len(CONV_ACT_CASES), "Conv (+ BatchNormalization) (+ activation)",
                          gen.reference)


# Conv (+ BatchNormalization) (+ activation), then the mean of each plane (GlobalAveragePool
# or ReduceMean over it, axes as an input: opset 18), fused where the products have pixels as
# rows and the plane is whole lanes of 8 (conv_takes_mean): (x shape, out channels, group,
# BatchNormalization, activation, mean: "gap" or keepdims of the ReduceMean, fused). Planes
# in one product and in several (48 rows of 8), groups, a Relu applied before the sum;
# depthwise Convs, each plane made in a workspace and its mean taken after the activation
# (SiLU on 16x16, two outputs a channel, a padded plane of 6x4); a 7x7 plane (not lanes of
# 8), 20 channels (channels as rows) and a depthwise Tanh on planes of 16 (its activation
# over several planes at once) stay apart.
CONV_MEAN_CASES = [
    ((2, 3, 8, 8), 96, 1, True, "Silu", 0, True),
    ((2, 4, 8, 8), 32, 1, False, "Relu", "gap", True),
    ((1, 8, 8, 8), 16, 1, True, "Relu", 1, True),
    ((3, 3, 8, 8), 48, 1, False, "Tanh", "gap", True),
    ((1, 2, 48, 8), 64, 1, True, None, 0, True),
    ((1, 8, 8, 8), 32, 2, False, "Relu", "gap", True),
    ((2, 8, 16, 16), 8, 8, False, "Silu", "gap", True),
    ((1, 4, 8, 8), 8, 4, False, "Relu", 0, True),
    ((1, 3, 6, 4), 3, 3, False, None, "gap", True),
    ((1, 4, 7, 7), 16, 1, True, "Relu", 0, False),
    ((2, 3, 8, 8), 20, 1, False, "Relu", "gap", False),
    ((1, 4, 4, 4), 4, 4, False, "Tanh", "gap", False),
]


def conv_mean_graph(keep_apart):
    """The CONV_MEAN_CASES as one model; keep_apart: each mean's input is an output too."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(43)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits = [], [], [], []
    inits.append(numpy_helper.from_array(np.array([2, 3], np.int64), "axes"))
    for i, (x, m, group, bn, act, mean, _) in enumerate(CONV_MEAN_CASES):
        t = str(i)
        inputs.append(helper.make_tensor_value_info("x" + t, F, x))
        inits.append(numpy_helper.from_array(
            rng.standard_normal((m, x[1] // group, 3, 3)).astype(np.float32), "w" + t))
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "cb" + t))
        last = "c" + t
        nodes.append(helper.make_node("Conv", ["x" + t, "w" + t, "cb" + t], [last],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=group))
        if bn:
            nodes.append(batchnorm(rng, last, "n" + t, m, t, inits))
            last = "n" + t
        if act == "Silu":
            nodes.append(helper.make_node("Sigmoid", [last], ["sg" + t]))
            nodes.append(helper.make_node("Mul", [last, "sg" + t], ["a" + t]))
            last = "a" + t
        elif act:
            nodes.append(helper.make_node(act, [last], ["a" + t]))
            last = "a" + t
        if mean == "gap":
            nodes.append(helper.make_node("GlobalAveragePool", [last], ["y" + t]))
            shape = [x[0], m, 1, 1]
        else:
            nodes.append(helper.make_node("ReduceMean", [last, "axes"], ["y" + t],
                                          keepdims=mean))
            shape = [x[0], m] + [1, 1] * mean
        outputs.append(helper.make_tensor_value_info("y" + t, F, shape))
        if keep_apart:
            outputs.append(helper.make_tensor_value_info(last, F, [x[0], m] + list(x[2:])))
    graph = helper.make_graph(nodes, "conv_mean", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def check_conv_mean(mlbc, work):
    """Fused and unfused Conv + mean of each plane (fused_vs_apart)."""
    import gen

    def inspect(code, apart):
        fused = len(re.findall(r"^/\* Conv: .*; then the mean of each plane", code, re.M))
        want = 0 if apart else sum(c[6] for c in CONV_MEAN_CASES)
        if fused != want:
            raise Failure("%d Convs took the mean of their planes, not %d" % (fused, want))
    return fused_vs_apart(mlbc, work, "conv_mean", conv_mean_graph, inspect,
                          len(CONV_MEAN_CASES), "Conv + mean", gen.reference)


# LayerNorm as torch exports it below opset 17 (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt,
# Div, then Mul by a scale and Add of a bias), fused into one NormChain (fuse.c): (x shape,
# opset (a model for each), square as "pow" or "mul", epsilon the Add's first input, scale shape or None, scale
# first, bias shape or None, bias first, the nodes fused). Rows of 100 (lanes of 8 and a rest
# of 4), 64 (none left), 21 (4 lanes), 7 (one); axes as an attribute (opset 13) and as an
# input (18). A scale per row stays a Mul after the chain; a mean over axis 0, an epsilon that
# is an input and a cube stay apart.
NORM_CHAIN_CASES = [
    ((4, 100), 13, "pow", False, (100,), False, (100,), False, 9),
    ((2, 3, 64), 13, "mul", True, (64,), True, (1, 64), True, 9),
    ((5, 21), 13, "pow", False, None, False, None, False, 7),
    ((3, 7), 18, "pow", True, (7,), False, None, False, 8),
    ((2, 40), 18, "mul", False, None, False, (40,), True, 8),
    ((4, 16), 13, "pow", False, (4, 1), False, None, False, 7),
    ((6, 10), 13, "axis0", False, None, False, None, False, 0),
    ((3, 12), 13, "eps_in", False, None, False, None, False, 0),
    ((3, 12), 13, "cube", False, None, False, None, False, 0),
]


def norm_chain_graph(keep_apart, opset):
    """The NORM_CHAIN_CASES of OPSET as one model; keep_apart: each x - mean is an output
    too."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(17)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits = [], [], [], []

    def c(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value, np.float32), name))
        return name

    def mean(src, dst, axis):
        if opset >= 18:
            inits.append(numpy_helper.from_array(np.array([axis], np.int64), "ax" + dst))
            nodes.append(helper.make_node("ReduceMean", [src, "ax" + dst], [dst], keepdims=1))
        else:
            nodes.append(helper.make_node("ReduceMean", [src], [dst], axes=[axis], keepdims=1))

    cases = [c for c in NORM_CHAIN_CASES if c[1] == opset]
    for i, (x, _, sq, eps_first, sc, sc_first, bi, bi_first, _) in enumerate(cases):
        t = str(i)
        inputs.append(helper.make_tensor_value_info("x" + t, F, x))
        mean("x" + t, "m" + t, 0 if sq == "axis0" else -1)
        nodes.append(helper.make_node("Sub", ["x" + t, "m" + t], ["d" + t]))
        if sq == "mul":
            nodes.append(helper.make_node("Mul", ["d" + t, "d" + t], ["p" + t]))
        else:
            nodes.append(helper.make_node("Pow", ["d" + t, c("k" + t, 3.0 if sq == "cube" else 2.0)],
                                          ["p" + t]))
        mean("p" + t, "v" + t, 0 if sq == "axis0" else -1)
        if sq == "eps_in":
            inputs.append(helper.make_tensor_value_info("e" + t, F, []))
            eps = "e" + t
        else:
            eps = c("e" + t, 1e-5)
        nodes.append(helper.make_node("Add", [eps, "v" + t] if eps_first else ["v" + t, eps],
                                      ["ve" + t]))
        nodes.append(helper.make_node("Sqrt", ["ve" + t], ["sd" + t]))
        last = "q" + t
        nodes.append(helper.make_node("Div", ["d" + t, "sd" + t], [last]))
        for name, shape, first, op in (("s", sc, sc_first, "Mul"), ("b", bi, bi_first, "Add")):
            if shape is None:
                continue
            w = c(name + t, rng.uniform(0.5, 1.5, shape))
            nodes.append(helper.make_node(op, [w, last] if first else [last, w], [name + "y" + t]))
            last = name + "y" + t
        nodes.append(helper.make_node("Identity", [last], ["y" + t]))
        outputs.append(helper.make_tensor_value_info("y" + t, F, x))
        if keep_apart:
            outputs.append(helper.make_tensor_value_info("d" + t, F, x))
    graph = helper.make_graph(nodes, "norm_chain", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check_norm_chain(mlbc, work):
    """Fused and unfused LayerNorm chains (fused_vs_apart), and which nodes each fused."""
    count = 0
    for opset in (13, 18):
        cases = [c for c in NORM_CHAIN_CASES if c[1] == opset]

        def inspect(code, apart):
            got = sorted(int(k) for k in re.findall(r"^/\* LayerNorm as the (\d+) nodes", code,
                                                    re.M))
            want = [] if apart else sorted(c[8] for c in cases if c[8])
            if got != want:
                raise Failure("opset %d: LayerNorm chains fused of %s nodes, not %s"
                              % (opset, got, want))
        count += fused_vs_apart(mlbc, work, "norm_chain%d" % opset,
                                lambda apart: norm_chain_graph(apart, opset), inspect,
                                len(cases), "LayerNorm chain")
    return count


# GELU as torch exports nn.GELU, fused into one pass (fuse.c, templates/vmath_gelu.c): (x's
# shape, the scale's op and operand order, the Add's, the Mul by x's, the Mul by 1/2's, fused).
# Torch's own order, every operand swapped and a Mul by 1/sqrt 2, a tail past the vectors, a
# scalar x; an Add of a constant per feature is not GELU and stays apart.
GELU_CASES = (((2, 5, 64), "div", False, False, False, True),
              ((3, 37), "mul", True, True, True, True),
              ((1, 100), "mul_first", False, True, False, True),
              ((), "div", True, False, True, True),
              ((4, 16), "div", False, False, False, False))


def gelu_graph(keep_apart):
    """The GELU_CASES as one model; keep_apart: each Erf's output is an output too."""
    from onnx import helper, numpy_helper
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits = [], [], [], []

    def c(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value, np.float32), name))
        return name

    for i, (shape, scale, add_first, x_first, half_first, fused) in enumerate(GELU_CASES):
        t = str(i)
        x = "x" + t
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        if scale == "div":
            nodes.append(helper.make_node("Div", [x, c("c" + t, np.sqrt(2.0))], ["t" + t]))
        else:
            k = c("c" + t, np.sqrt(0.5))
            nodes.append(helper.make_node("Mul", [k, x] if scale == "mul_first" else [x, k],
                                          ["t" + t]))
        nodes.append(helper.make_node("Erf", ["t" + t], ["e" + t]))
        one = c("one" + t, 1.0 if fused else np.linspace(0.5, 1.5, shape[-1]))
        nodes.append(helper.make_node("Add", [one, "e" + t] if add_first else ["e" + t, one],
                                      ["a" + t]))
        nodes.append(helper.make_node("Mul", [x, "a" + t] if x_first else ["a" + t, x],
                                      ["m" + t]))
        half = c("h" + t, 0.5)
        nodes.append(helper.make_node("Mul", [half, "m" + t] if half_first else ["m" + t, half],
                                      ["y" + t]))
        outputs.append(helper.make_tensor_value_info("y" + t, F, shape))
        if keep_apart:
            outputs.append(helper.make_tensor_value_info("e" + t, F, shape))
    graph = helper.make_graph(nodes, "gelu", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def check_gelu(mlbc, work):
    """Fused and unfused GELU chains (fused_vs_apart), and which were fused."""
    want = sum(c[-1] for c in GELU_CASES)

    def inspect(code, apart):
        got = len(re.findall(r"^/\* GELU, the 5 nodes", code, re.M))
        if got != (0 if apart else want):
            raise Failure("%d GELU chains fused, not %d" % (got, 0 if apart else want))
    return fused_vs_apart(mlbc, work, "gelu", gelu_graph, inspect, len(GELU_CASES),
                          "GELU chain")


# MatMul + Add of a bias, fused into the product's c operand (fuse.c): A's shape, B's, the
# bias's, whether the bias is the Add's first input, whether it fuses. Rows of a batch of
# sequences, a scalar bias, one row (mlbc_gemv_f32), a batch of B matrices; a bias per row
# and a MatMul of a vector B stay apart. A batch times one B is one product of all the
# batch's rows (op_linalg.c, matmul_emit): of single rows as torch's attention projects,
# over two batch axes.
MATMUL_ADD_CASES = [
    ((2, 5, 24), (24, 40), (40,), False, True),
    ((16, 1, 64), (64, 48), (48,), False, True),
    ((2, 3, 4, 8), (8, 24), (24,), True, True),
    ((2, 5, 24), (24, 17), (1, 1, 17), True, True),
    ((7, 33), (33, 20), (1,), False, True),
    ((1, 300), (300, 70), (70,), True, True),
    ((3, 4, 8), (3, 8, 16), (16,), False, True),
    ((5, 8), (8, 16), (5, 1), False, False),
    ((5, 8), (8,), (5,), False, False),
]


def matmul_add_graph(keep_apart):
    """The MATMUL_ADD_CASES as one model; keep_apart: each product is an output too."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(6)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits = [], [], [], []
    for i, (a, b, bias, first, _) in enumerate(MATMUL_ADD_CASES):
        t = str(i)
        inputs.append(helper.make_tensor_value_info("a" + t, F, a))
        inits.append(numpy_helper.from_array(rng.standard_normal(b).astype(np.float32), "b" + t))
        inputs.append(helper.make_tensor_value_info("c" + t, F, bias))
        nodes.append(helper.make_node("MatMul", ["a" + t, "b" + t], ["p" + t]))
        nodes.append(helper.make_node("Add", ["c" + t, "p" + t] if first else ["p" + t, "c" + t],
                                      ["y" + t]))
        shape = np.matmul(np.zeros(a), np.zeros(b)).shape
        outputs.append(helper.make_tensor_value_info("y" + t, F, shape))
        if keep_apart:
            outputs.append(helper.make_tensor_value_info("p" + t, F, shape))
    graph = helper.make_graph(nodes, "matmul_add", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def check_matmul_add(mlbc, work):
    """Fused and unfused MatMul + Add (fused_vs_apart), and which fused."""
    def inspect(code, apart):
        want = len(MATMUL_ADD_CASES) - (0 if apart else sum(c[4] for c in MATMUL_ADD_CASES))
        if code.count("/* Add '") != want:
            raise Failure("%d Add nodes left, not %d" % (code.count("/* Add '"), want))
        if "MatMul: 16 products" in code or "MatMul: 6 products" in code:
            raise Failure("a batch times one B is a product per matrix")
    return fused_vs_apart(mlbc, work, "matmul_add", matmul_add_graph, inspect,
                          len(MATMUL_ADD_CASES), "MatMul + Add")


# Float LSTM, GRU (both reset variants) and RNN in every direction and layout, without and
# with sequence lengths (an input, and a constant; some with every row shorter than the
# sequence, whose last steps skip the recurrent product), batch 3 and 1, one step of one row
# (both products of one row: mlbc_gemv_f32), initial states on some: op_rnn.c's paths (the
# batch's projection in one product or per row; the projected inputs as the recurrent
# product's addend or added per row; rows stopping early) against onnx_np.
RNN_OPS = (("LSTM", 4, 2, {}), ("GRU", 3, 1, {}), ("GRU", 3, 1, {"linear_before_reset": 1}),
           ("RNN", 1, 1, {}))
RNN_T, RNN_I, RNN_H = 5, 6, 20                 # H: a full vector and a tail
RNN_LENS, RNN_SHORT = (5, 2, 4), (4, 1, 3)


def rnn_variants_graph(zero_state=None):
    """The variants as one model: returns it and its feeds. ZERO_STATE: every state starts at
    zero, "absent" (no initial state) or "input" (initial states that are inputs, fed
    zeros)."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(11)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits, feeds = [], [], [], [], {}
    def tensor(name, a, feed):
        if feed:
            inputs.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT if
                          a.dtype == np.float32 else onnx.TensorProto.INT32, a.shape))
            feeds[name] = a
        else:
            inits.append(numpy_helper.from_array(a, name))
        return name
    i = 0
    for op, gates, cells, attrs in RNN_OPS:
        for direction in ("forward", "reverse", "bidirectional"):
            D = 2 if direction == "bidirectional" else 1
            for layout in (0, 1):
                for batch, lens, short, T in ((3, None, 0, RNN_T), (3, "input", 0, RNN_T),
                                              (3, "constant", 0, RNN_T), (3, "input", 1, RNN_T),
                                              (1, None, 0, RNN_T), (1, "constant", 1, RNN_T),
                                              (1, None, 0, 1)):
                    t = str(i)
                    i += 1
                    tb = (T, batch) if not layout else (batch, T)
                    args = [tensor("x" + t, rng.standard_normal(tb + (RNN_I,)).astype(np.float32),
                                   True)]
                    for name, shape in (("w", (D, gates * RNN_H, RNN_I)),
                                        ("r", (D, gates * RNN_H, RNN_H)),
                                        ("b", (D, 2 * gates * RNN_H))):
                        args.append(tensor(name + t, rng.uniform(-0.5, 0.5, shape)
                                           .astype(np.float32), False))
                    sl = np.array((RNN_SHORT if short else RNN_LENS)[:batch], np.int32)
                    args.append(tensor("l" + t, sl, lens == "input") if lens else "")
                    sh = (D, batch, RNN_H) if not layout else (batch, D, RNN_H)
                    if zero_state == "input":
                        for k in range(cells):
                            args.append(tensor("s%d_%s" % (k, t), np.zeros(sh, np.float32),
                                               True))
                    elif i % 2 and not zero_state:  # initial states
                        for k in range(cells):
                            args.append(tensor("s%d_%s" % (k, t), rng.standard_normal(sh)
                                               .astype(np.float32), k == 0))
                    outs = ["y" + t, "yh" + t]
                    nodes.append(helper.make_node(op, args, outs, hidden_size=RNN_H,
                                                  direction=direction, layout=layout, **attrs))
                    y = (T, D, batch, RNN_H) if not layout else (batch, T, D, RNN_H)
                    yh = (D, batch, RNN_H) if not layout else (batch, D, RNN_H)
                    outputs += [helper.make_tensor_value_info("y" + t, F, y),
                                helper.make_tensor_value_info("yh" + t, F, yh)]
    graph = helper.make_graph(nodes, "rnn_variants", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), feeds


def check_rnn_zero_state(mlbc, work):
    """The RNN variants from a zero state: without an initial state the first step's
    recurrent product is left out (op_rnn.c, skip_zero_state), with initial states that are
    inputs fed zeros it is not; the two the same bits, with random inputs and with NaN,
    infinite and -0 ones, and onnx_np's values."""
    runs = {}
    for mode in ("absent", "input"):
        model, feeds = rnn_variants_graph(mode)
        wdir = os.path.join(work, "rnn_zero_" + mode)
        os.makedirs(wdir, exist_ok=True)
        path = os.path.join(wdir, "model.onnx")
        kinds.save(model, path)
        exe = mlbctest.compile_model(mlbc, path, wdir)
        with open(os.path.join(wdir, "model.c")) as f:
            skips = f.read().count("        if (s == 0) {")
        if (skips > 0) != (mode == "absent"):
            raise Failure("%d first steps without the recurrent product, %s initial states"
                          % (skips, mode))
        in_types, out_types = mlbctest.tensor_types(model)
        ref = kinds.reference(model, feeds)
        names = [v.name for v in model.graph.output]
        shapes = [(t, ref[o].shape) for t, o in zip(out_types, names)]
        odd = dict(feeds, **poison({k: v for k, v in feeds.items() if k[0] == "x"}, 6))
        runs[mode] = [mlbctest.execute(exe, wdir, [f[v.name] for v in model.graph.input],
                                       in_types, shapes) for f in (feeds, odd)]
        compare_outputs(names, runs[mode][0], [ref[o] for o in names])
    for j, name in enumerate(names):
        for k, inputs in enumerate(("random", "NaN, infinite and -0")):
            if not mlbctest.same_bits(runs["absent"][k][j], runs["input"][k][j])[1]:
                raise Failure("%s, %s inputs: without an initial state, not the bits of a "
                              "zero one" % (name, inputs))
    return len(names)


def check_graph(mlbc, work, tag, model, feeds, inspect=None, reference=kinds.reference):
    """MODEL compiled, run on FEEDS and compared with onnx_np (REFERENCE), INSPECT(code)
    checking its generated code first; returns how many nodes."""
    onnx.checker.check_model(model, full_check=True)
    wdir = os.path.join(work, tag)
    os.makedirs(wdir, exist_ok=True)
    path = os.path.join(wdir, "model.onnx")
    kinds.save(model, path)
    exe = mlbctest.compile_model(mlbc, path, wdir)
    if inspect:
        with open(os.path.join(wdir, "model.c")) as f:
            inspect(f.read())
    in_types, out_types = mlbctest.tensor_types(model)
    ref = reference(model, feeds)
    names = [v.name for v in model.graph.output]
    got = mlbctest.execute(exe, wdir, [feeds[v.name] for v in model.graph.input], in_types,
                           [(t, ref[o].shape) for t, o in zip(out_types, names)])
    compare_outputs(names, got, [ref[o] for o in names])
    shutil.rmtree(wdir, ignore_errors=True)
    return len(model.graph.node)


def check_rnn_variants(mlbc, work):
    """RNN_OPS in every variant against onnx_np; returns how many nodes."""
    return check_graph(mlbc, work, "rnn_variants", *rnn_variants_graph())


# Float LayerNormalization: (x's shape, axis, with a bias, rows for mlbc_layernorm_f32):
# rows of 32 features or more take templates/norm_layer_f32.c (a tail past the last 8, two
# kept axes, no bias, two reduced axes as one row, every axis reduced), fewer the loops of
# templates/norm.c. Inputs far from 0, so that the variance is the difference of near values.
LN_CASES = (((3, 32), -1, True, True), ((2, 5, 45), -1, True, True), ((4, 64), -1, False, True),
            ((2, 3, 8, 8), 2, True, True), ((4, 40), 0, True, True), ((6, 31), -1, True, False))


def layernorm_variants_graph():
    """LN_CASES as one model: returns it and its feeds."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(17)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits, feeds = [], [], [], [], {}
    for i, (shape, axis, bias, _) in enumerate(LN_CASES):
        x, norm = "x%d" % i, shape[axis % len(shape):]
        feeds[x] = (50 + 3 * rng.standard_normal(shape)).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        args = [x]
        for name in ("scale", "bias")[:1 + bias]:
            inits.append(numpy_helper.from_array(rng.uniform(-2, 2, norm).astype(np.float32),
                                                 "%s%d" % (name, i)))
            args.append("%s%d" % (name, i))
        nodes.append(helper.make_node("LayerNormalization", args, ["y%d" % i], axis=axis))
        outputs.append(helper.make_tensor_value_info("y%d" % i, F, shape))
    graph = helper.make_graph(nodes, "layernorm_variants", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds


# Float Div of an array by one value (a constant, or an input) and float Softmax rows, both
# mlbc_vdivs_f32 (templates/vmath_divs.c) from MLBC_VDIVS_MIN (16) floats on, loops in place
# below: arrays of 15, 45 and 64 floats, rows of 5, 9 and 16, whole vectors and tails on each
# path.
DIVS_SHAPES = ((3, 5), (5, 9), (4, 16))


def divs_variants_graph():
    """Div by a constant and by an input scalar, and Softmax, for DIVS_SHAPES: returns the
    model and its feeds."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(19)
    F = onnx.TensorProto.FLOAT
    nodes, outputs = [], []
    inputs = [helper.make_tensor_value_info("d", F, (1,))]
    feeds = {"d": np.array([-0.37], np.float32)}
    inits = [numpy_helper.from_array(np.array(1.4142135, np.float32), "c")]
    for i, shape in enumerate(DIVS_SHAPES):
        x = "x%d" % i
        feeds[x] = rng.standard_normal(shape).astype(np.float32) * 4
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        for op, args in (("Div", [x, "c"]), ("Div", [x, "d"]), ("Softmax", [x])):
            y = "y%d" % len(nodes)
            nodes.append(helper.make_node(op, args, [y]))
            outputs.append(helper.make_tensor_value_info(y, F, shape))
    graph = helper.make_graph(nodes, "divs_variants", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds


# Float Softmax and LogSoftmax over rows, a block of rows at a time with the block's
# exponentials one call (templates/reduce_softmax_rows_f32.c, MLBC_SOFTMAX_BLOCK floats):
# (op, x's shape). Blocks of 40 rows and a last one of 16, of 6 and 1, rows longer than a
# block (one a block), short rows all in one block, one row; inputs 1% infinite.
SOFTMAX_CASES = (("LogSoftmax", (96, 100)), ("Softmax", (7, 600)), ("LogSoftmax", (3, 5000)),
                 ("Softmax", (50, 20)), ("LogSoftmax", (1, 37)))


def softmax_rows_graph():
    """SOFTMAX_CASES: the model and its feeds."""
    from onnx import helper
    rng = np.random.default_rng(29)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, feeds = [], [], [], {}
    for i, (op, shape) in enumerate(SOFTMAX_CASES):
        x, y = "x%d" % i, "y%d" % i
        feeds[x] = rng.standard_normal(shape).astype(np.float32) * 5
        feeds[x].flat[rng.random(feeds[x].size) < 0.01] = -np.inf
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        nodes.append(helper.make_node(op, [x], [y], axis=-1))
        outputs.append(helper.make_tensor_value_info(y, F, shape))
    graph = helper.make_graph(nodes, "softmax_rows", inputs, outputs, [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds


def check_softmax_rows(mlbc, work):
    """SOFTMAX_CASES against onnx_np, each exponentiated a block at a time."""
    return check_graph(mlbc, work, "softmax_rows", *softmax_rows_graph(),
                       marked(r"^ +mlbc_vexp_f32\(nr \* \d+, ", [c + (True,) for c in SOFTMAX_CASES],
                              "Softmax kernels by blocks"))


def paths_variants_graph():
    """Kernels compiled for each CPU path (compiler/emit.c, kernel_paths) and rows copied by
    mlbc_copy, over NaN, infinities and -0: an embedding bag (Gather of 64 rows of 96 floats,
    ReduceSum, ReduceMean), a tanh-GELU's arithmetic (Pow, Mul, Add), Pow by 2 (an integer)
    and 0.5 (products for 2 and 3, powf for 0.5), SiLU (Sigmoid + Mul fused, and not where
    the sigmoid is an output too), a Where, a
    BatchNormalization and a Slice, each above MLBC_PATHS_MIN elements; a 255-element Add
    below it. Returns the model and its feeds."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(23)
    F, I = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64
    table = rng.standard_normal((300, 96)).astype(np.float32)
    table[5, :8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e-40, 1e37]
    x = rng.standard_normal((16, 96)).astype(np.float32) * 3
    x.flat[::37] = np.nan
    x.flat[5::41] = -0.0
    x.flat[7::53] = np.inf
    feeds = {"ids": rng.integers(-300, 300, 64).astype(np.int64), "x": x,
             "m": rng.integers(0, 2, (16, 96)).astype(bool),
             "img": rng.standard_normal((2, 8, 4, 16)).astype(np.float32),
             "small": rng.standard_normal(255).astype(np.float32)}
    feeds["ids"][:3] = 5
    inits = [numpy_helper.from_array(table, "table"),
             numpy_helper.from_array(np.array(3.0, np.float32), "three"),
             numpy_helper.from_array(np.array(0.044715, np.float32), "k"),
             numpy_helper.from_array(np.array(-7.5, np.float32), "fill"),
             numpy_helper.from_array(np.array(2, np.int64), "two"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             numpy_helper.from_array(np.array([0], np.int64), "ax0"),
             numpy_helper.from_array(np.array([0, 1], np.int64), "ax01"),
             numpy_helper.from_array(np.array([1, 8], np.int64), "starts"),
             numpy_helper.from_array(np.array([15, 88], np.int64), "ends")]
    for name, c in (("scale", 8), ("bias", 8), ("mean", 8), ("var", 8)):
        v = rng.uniform(0.5, 2, c) if name == "var" else rng.standard_normal(c)
        inits.append(numpy_helper.from_array(v.astype(np.float32), name))
    n = helper.make_node
    nodes = [n("Gather", ["table", "ids"], ["rows"], axis=0),
             n("ReduceSum", ["rows", "ax0"], ["bag_sum"], keepdims=0),
             n("ReduceMean", ["rows"], ["bag_mean"], axes=[0], keepdims=0),
             n("ReduceMax", ["x"], ["row_max"], axes=[1], keepdims=0),
             n("Pow", ["x", "three"], ["cube"]),
             n("Pow", ["x", "two"], ["square"]),
             n("Pow", ["x", "half"], ["root"]),
             n("Mul", ["cube", "k"], ["kc"]),
             n("Add", ["x", "kc"], ["gelu_in"]),
             n("Where", ["m", "gelu_in", "fill"], ["masked"]),
             n("BatchNormalization", ["img", "scale", "bias", "mean", "var"], ["bn"]),
             n("Slice", ["x", "starts", "ends", "ax01"], ["rows_cut"]),
             n("Add", ["small", "small"], ["twice"]),
             n("Sigmoid", ["x"], ["sig"]), n("Mul", ["sig", "x"], ["silu"]),
             n("Sigmoid", ["img"], ["sig_img"]), n("Mul", ["img", "sig_img"], ["silu_img"])]
    shapes = {"silu": (16, 96), "silu_img": (2, 8, 4, 16), "sig_img": (2, 8, 4, 16),
              "square": (16, 96), "root": (16, 96), "bag_sum": (96,), "bag_mean": (96,),
              "row_max": (16,), "masked": (16, 96),
              "bn": (2, 8, 4, 16), "rows_cut": (14, 80), "twice": (255,)}
    inputs = [helper.make_tensor_value_info("ids", I, (64,)),
              helper.make_tensor_value_info("x", F, (16, 96)),
              helper.make_tensor_value_info("m", onnx.TensorProto.BOOL, (16, 96)),
              helper.make_tensor_value_info("img", F, (2, 8, 4, 16)),
              helper.make_tensor_value_info("small", F, (255,))]
    outputs = [helper.make_tensor_value_info(k, F, v) for k, v in shapes.items()]
    graph = helper.make_graph(nodes, "paths_variants", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds


def check_paths_variants(mlbc, work):
    """paths_variants_graph against onnx_np, and which kernels have paths."""
    def inspect(code):
        paths = set(re.findall(r"MLBC_AVX512 static (?:void|int) (\w+)_avx512\(", code))
        if "model_run" not in paths:
            raise Failure("the run's statements have no paths (compiler/back/emit.c, emit_run)")
        kinds_ = sorted({re.sub(r"_\d+$", "", p) for p in paths - {"model_run"}})
        want = ["add", "batchnormalization", "gather", "mul", "pow", "reducemax", "reducemean",
                "reducesum", "where"]
        if kinds_ != want:
            raise Failure("kernels with paths: %s, not %s" % (kinds_, want))
        if len(re.findall(r"MLBC_LOOPS void add_\d+_any\(", code)) != 1:
            raise Failure("the 255-element Add has paths too (or the GELU's Add none)")
        if len(re.findall(r"^ +y\[.*\bpowf\(", code, re.M)) != 1:
            raise Failure("Pow by 2 or 3 calls powf, or Pow by 0.5 does not")
        calls = re.findall(r"^ +(mlbc_vsilu_f32|mlbc_vsigmoid_f32)\(", code, re.M)
        if sorted(calls) != ["mlbc_vsigmoid_f32", "mlbc_vsilu_f32"]:
            raise Failure("SiLU calls %s, not one Sigmoid + Mul fused and one kept (its "
                          "sigmoid is an output)" % calls)
        if code.count("mlbc_copy(") < 3:
            raise Failure("Gather and Slice do not copy rows through mlbc_copy")
    nodes = check_graph(mlbc, work, "paths_variants", *paths_variants_graph(), inspect)
    # the Gather's paths return its status: an index out of range makes run return 2
    model, feeds = paths_variants_graph()
    feeds["ids"][7] = 300
    wdir = os.path.join(work, "paths_range")
    path = os.path.join(wdir, "model.onnx")
    os.makedirs(wdir, exist_ok=True)
    kinds.save(model, path)
    exe = mlbctest.compile_model(mlbc, path, wdir)
    in_types, out_types = mlbctest.tensor_types(model)
    try:
        mlbctest.execute(exe, wdir, [feeds[v.name] for v in model.graph.input], in_types,
                         [(t, (1,)) for t in out_types])
        raise Failure("a Gather index of 300 in a table of 300 rows: run returned 0")
    except Failure as e:
        if "run returned 2" not in str(e):
            raise
    shutil.rmtree(wdir, ignore_errors=True)
    return nodes


# Depthwise float Conv (templates/conv_depthwise.c): (x's shape, channel multiplier, kernel,
# strides, dilations, pads, bias, fused Relu, a 2x2 MaxPool after it). Rows with and without a
# tail past 16, rows shorter than 16 (read from the planes even without padding), rows of
# several chunks of 4 vectors (with a partial last vector, and whole read in place), rows of
# fewer than 8 (conv1d of 7 steps, strided to 4, channel multiplier 2), rows of one and two
# vectors taken 4 and 2 rows at a time (with rows left over; padded, and read in place),
# strides (read in phases) of 2 and 3, dilations of 2, asymmetric and no padding, 1-D and
# 2-D, batches, channel multipliers (planes shared by outputs).
DW_CASES = (((2, 8, 9, 13), 1, 3, 1, 1, (1, 1, 1, 1), True, False, False),
            ((1, 6, 17, 20), 2, 3, 2, 1, (1, 0, 0, 1), False, False, False),
            ((1, 4, 12, 40), 1, 5, 1, 2, (4, 4, 4, 4), True, True, False),
            ((1, 8, 10, 10), 1, 3, 1, 1, (0, 0, 0, 0), True, False, False),
            ((2, 16, 50), 1, 5, 1, 1, (2, 2), True, False, False),
            ((1, 5, 33), 2, 3, 2, 2, (2, 1), False, True, False),
            ((1, 8, 8, 32), 1, 3, 1, 1, (1, 1, 1, 1), True, True, True),
            ((1, 16, 32, 32), 1, 5, 2, 1, (2, 2, 2, 2), True, False, False),
            ((1, 4, 19, 40), 1, 3, 3, 1, (0, 1, 2, 0), False, True, False),
            ((3, 4, 16), 1, 3, 1, 1, (0, 0), True, False, False),
            ((1, 3, 3, 102), 1, 3, 1, 1, (1, 1, 1, 1), True, True, False),
            ((2, 2, 130), 1, 3, 1, 1, (0, 0), False, False, False),
            ((2, 6, 7), 1, 3, 1, 1, (1, 1), True, False, False),
            ((3, 4, 7), 2, 3, 2, 1, (1, 1), False, False, False),
            ((2, 3, 7, 12), 3, 3, 1, 2, (0, 0, 0, 0), False, True, False),
            ((1, 4, 7, 24), 1, 3, 1, 1, (1, 1, 1, 1), True, False, False),
            ((1, 2, 7, 18), 1, 3, 1, 1, (0, 0, 0, 0), False, False, False))


def depthwise_variants_graph():
    """DW_CASES, inputs 2% NaN or infinite (but before a Relu) and 2% -0: returns the model
    and its feeds."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(29)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits, feeds = [], [], [], [], {}
    for i, (shape, mult, k, s, d, pads, bias, relu, pool) in enumerate(DW_CASES):
        x, w, y = "x%d" % i, "w%d" % i, "y%d" % i
        c, nsp = shape[1], len(shape) - 2
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        flat = feeds[x].reshape(-1)
        if not relu:  # mlbc's Relu makes NaN 0 (op_elementwise.c), onnx_np keeps it
            flat[rng.random(flat.size) < 0.01] = np.nan
            flat[rng.random(flat.size) < 0.01] = np.inf
        flat[rng.random(flat.size) < 0.02] = -0.0
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        inits.append(numpy_helper.from_array(
            rng.standard_normal((c * mult, 1) + (k,) * nsp).astype(np.float32), w))
        args = [x, w]
        if bias:
            inits.append(numpy_helper.from_array(
                rng.standard_normal(c * mult).astype(np.float32), "b%d" % i))
            args.append("b%d" % i)
        conv = "c%d" % i if relu or pool else y
        nodes.append(helper.make_node("Conv", args, [conv], group=c, kernel_shape=[k] * nsp,
                                      strides=[s] * nsp, dilations=[d] * nsp, pads=list(pads)))
        if relu:
            nodes.append(helper.make_node("Relu", [conv], ["r%d" % i if pool else y]))
        if pool:
            nodes.append(helper.make_node("MaxPool", ["r%d" % i if relu else conv], [y],
                                          kernel_shape=[2, 2], strides=[2, 2]))
        out = [(n + pads[j] + pads[j + nsp] - d * (k - 1) - 1) // s + 1
               for j, n in enumerate(shape[2:])]
        if pool:
            out = [o // 2 for o in out]
        outputs.append(helper.make_tensor_value_info(y, F, [shape[0], c * mult] + out))
    graph = helper.make_graph(nodes, "depthwise_variants", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds


def check_depthwise_variants(mlbc, work):
    """DW_CASES against onnx_np (gen.py's grouped Conv), each through the direct kernel."""
    import gen

    def inspect(code):
        n = len(re.findall(r"^/\* Conv: .* depthwise \(group \d+\)", code, re.M))
        relu = len(re.findall(r"depthwise \(group \d+\), \d+ taps, the fused Relu", code))
        if (n, relu) != (len(DW_CASES), sum(c[7] for c in DW_CASES)):
            raise Failure("%d direct depthwise kernels (%d with the Relu), not %d (%d)" % (
                n, relu, len(DW_CASES), sum(c[7] for c in DW_CASES)))
        # strided: in phases, but for output planes of up to 8 pixels (depthwise_tiny)
        want = sum(c[3] > 1 and np.prod([(n + c[5][j] + c[5][j + len(c[0]) - 2]
                                           - c[4] * (c[2] - 1) - 1) // c[3] + 1
                                          for j, n in enumerate(c[0][2:])]) > 8
                   for c in DW_CASES)
        phased = len(re.findall(r"zero-padded, as \d+x\d+ phases", code))
        if phased != want:
            raise Failure("%d depthwise Convs read phases, not %d" % (phased, want))
    return check_graph(mlbc, work, "depthwise_variants", *depthwise_variants_graph(), inspect,
                       gen.reference)


# Depthwise Convs of output planes of at most 8 pixels (op_conv.c, depthwise_tiny): each
# output's taps inside the plane only, x read in place. (x shape, channel multiplier, kernel,
# stride, dilation, pads, bias, activation, what spoils the weights): 2x2 planes, a 1x1 one
# of a dilated stride-2 kernel that only its centre reaches (as in generated networks), 1-D,
# a 5x5 kernel, asymmetric pads, outputs that no tap reaches (the bias alone); a bias with a
# -0 and an infinite weight keep the general kernel (a tap in the padding can change the sum
# there: the -0 case shows it).
DW_TINY_CASES = (((2, 8, 2, 2), 1, 3, 1, 1, (1, 1, 1, 1), True, "Relu", None),
                 ((2, 4, 2, 2), 2, 3, 2, 2, (2, 2, 2, 2), True, "Silu", None),
                 ((3, 6, 5), 1, 3, 1, 1, (1, 1), False, None, None),
                 ((1, 4, 4, 4), 1, 5, 2, 1, (2, 2, 2, 2), True, None, None),
                 ((2, 3, 2, 3), 1, 3, 1, 1, (0, 1, 2, 0), True, "Relu", None),
                 ((1, 2, 2), 1, 3, 1, 1, (3, 3), True, None, None),
                 ((1, 4, 2, 2), 1, 3, 2, 2, (2, 2, 2, 2), True, None, "-0 bias"),
                 ((1, 4, 3, 3), 1, 3, 1, 1, (1, 1, 1, 1), False, None, "inf weight"))


def depthwise_tiny_graph(weights_as_inputs):
    """DW_TINY_CASES, their weights and biases initializers or (WEIGHTS_AS_INPUTS) graph
    inputs, which keep the general kernel: the model and its feeds (the same values)."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(31)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits, feeds = [], [], [], [], {}
    for i, (shape, mult, k, s, d, pads, bias, act, spoil) in enumerate(DW_TINY_CASES):
        x, y, nsp, c = "x%d" % i, "y%d" % i, len(shape) - 2, shape[1]
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        consts = {"w%d" % i: rng.standard_normal((c * mult, 1) + (k,) * nsp).astype(np.float32)}
        if spoil == "inf weight":
            consts["w%d" % i].reshape(-1)[3] = np.inf
        if bias:
            consts["b%d" % i] = rng.standard_normal(c * mult).astype(np.float32)
            if spoil == "-0 bias":  # channel 1: -0 + 0 * w, in the padding, is +0
                consts["b%d" % i][1] = -0.0
                consts["w%d" % i] = np.abs(consts["w%d" % i])
                feeds[x][:, 1] = -0.0
        for name, v in consts.items():
            if weights_as_inputs:
                inputs.append(helper.make_tensor_value_info(name, F, v.shape))
                feeds[name] = v
            else:
                inits.append(numpy_helper.from_array(v, name))
        conv = "c%d" % i if act else y
        nodes.append(helper.make_node("Conv", [x] + list(consts), [conv], group=c,
                                      kernel_shape=[k] * nsp, strides=[s] * nsp,
                                      dilations=[d] * nsp, pads=list(pads)))
        if act == "Silu":
            nodes.append(helper.make_node("Sigmoid", [conv], ["s%d" % i]))
            nodes.append(helper.make_node("Mul", [conv, "s%d" % i], [y]))
        elif act:
            nodes.append(helper.make_node(act, [conv], [y]))
        out = [(n + pads[j] + pads[j + nsp] - d * (k - 1) - 1) // s + 1
               for j, n in enumerate(shape[2:])]
        outputs.append(helper.make_tensor_value_info(y, F, [shape[0], c * mult] + out))
    graph = helper.make_graph(nodes, "depthwise_tiny", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds


def constants_vs_inputs(mlbc, work, tag, graph, cases, marker, want, reference):
    """GRAPH(False), its weights constants, where MARKER's kernel should be taken WANT times,
    against GRAPH(True), the weights graph inputs (the same values), which keeps the general
    kernels: the same bits, with random inputs and with NaN, infinite and -0 ones (into the
    inputs named x...), and both against onnx_np (REFERENCE; outputs y0.. of CASES, but those
    of cases spoiled by an infinite weight)."""
    runs = {}
    for as_inputs in (False, True):
        model, feeds = graph(as_inputs)
        wdir = os.path.join(work, "%s%d" % (tag, as_inputs))
        path = os.path.join(wdir, "model.onnx")
        os.makedirs(wdir, exist_ok=True)
        kinds.save(model, path)
        exe = mlbctest.compile_model(mlbc, path, wdir)
        with open(os.path.join(wdir, "model.c")) as f:  # comments wrap: join their lines
            taken = re.sub(r"\s*\n \* ", " ", f.read()).count(marker)
        if taken != (0 if as_inputs else want):
            raise Failure("%d kernels with '%s', not %d" % (taken, marker,
                                                            0 if as_inputs else want))
        in_types, out_types = mlbctest.tensor_types(model)
        ref = reference(model, feeds)
        names = [v.name for v in model.graph.output]
        shapes = [(t, ref[o].shape) for t, o in zip(out_types, names)]
        odd = dict(feeds, **poison({k: v for k, v in feeds.items() if k[0] == "x"}, 5))
        runs[as_inputs] = [mlbctest.execute(exe, wdir, [f[v.name] for v in model.graph.input],
                                            in_types, shapes) for f in (feeds, odd)]
        keep = [j for j, c in enumerate(cases) if c[-1] != "inf weight"]
        compare_outputs([names[j] for j in keep], [runs[as_inputs][0][j] for j in keep],
                        [ref[names[j]] for j in keep])
    for j in range(len(cases)):
        for k, inputs in enumerate(("random", "NaN, infinite and -0")):
            if not mlbctest.same_bits(runs[False][k][j], runs[True][k][j])[1]:
                raise Failure("y%d, %s inputs: '%s' differs from the general kernels in bits"
                              % (j, inputs, marker))
    return len(cases)


def check_depthwise_tiny(mlbc, work):
    """DW_TINY_CASES: the tiny kernel where it may be taken, the bits of the general one."""
    import gen
    return constants_vs_inputs(mlbc, work, "depthwise_tiny", depthwise_tiny_graph,
                               DW_TINY_CASES, "the taps in the padding left out",
                               sum(not c[8] for c in DW_TINY_CASES), gen.reference)


# Float Convs of batches of planes whose border pixels have many taps in the padding (op_conv.c,
# positions_pay): a product per class of output pixels with the same taps inside the plane,
# over a block of images, those taps only. (x shape, out channels, kernel, strides, dilations,
# pads, bias, BatchNormalization, activation, what keeps the general kernel): 2x2 planes (5 of
# 9 taps in the padding) with BN + Relu and with SiLU, 1-D (a 5-tap kernel on 3 steps), a 1x1
# plane, stride 2 (taps kept 4, 6, 6, 9); 8x8 planes of a 5x5 kernel dilated 2, stride 2 (25
# classes, the interior 16 pixels; blocks of 16 images and one of 4); 4x4 planes of a 3x3
# kernel (9 classes); 1-D over 8 steps dilated 3 (3 classes of 3, 2 and 3 steps); no padding, a
# batch of 4 and an infinite weight keep the general kernel.
POS_CASES = (((8, 6, 2, 2), 10, 3, 1, 1, (1, 1, 1, 1), True, True, "Relu", None),
             ((8, 4, 2, 2), 20, 3, 1, 1, (1, 1, 1, 1), False, False, "Silu", None),
             ((9, 3, 3), 17, 5, 1, 1, (2, 2), True, True, None, None),
             ((8, 2, 1, 1), 16, 3, 1, 1, (1, 1, 1, 1), True, False, "Tanh", None),
             ((8, 4, 4, 4), 8, 3, 2, 1, (1, 1, 1, 1), True, True, "Relu", None),
             ((20, 3, 16, 16), 48, 5, 2, 2, (4, 4, 4, 4), False, True, "Relu", None),
             ((10, 4, 4, 4), 24, 3, 1, 1, (1, 1, 1, 1), True, False, None, None),
             ((9, 5, 8), 7, 3, 1, 3, (3, 3), True, False, "Relu", None),
             ((8, 3, 3, 3), 5, 3, 1, 1, (0, 0, 0, 0), True, False, None, "no padding"),
             ((4, 6, 2, 2), 10, 3, 1, 1, (1, 1, 1, 1), True, False, None, "batch 4"),
             ((8, 6, 2, 2), 10, 3, 1, 1, (1, 1, 1, 1), True, False, None, "inf weight"))


def positions_graph(weights_as_inputs):
    """POS_CASES, W a constant or (WEIGHTS_AS_INPUTS) a graph input: the model, its feeds."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(37)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits, feeds = [], [], [], [], {}
    for i, (shape, m, k, s, d, pads, bias, bn, act, spoil) in enumerate(POS_CASES):
        x, y, t, nsp = "x%d" % i, "y%d" % i, str(i), len(shape) - 2
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        w = rng.standard_normal((m, shape[1]) + (k,) * nsp).astype(np.float32)
        if spoil == "inf weight":
            w.reshape(-1)[5] = np.inf
        if weights_as_inputs:
            inputs.append(helper.make_tensor_value_info("w" + t, F, w.shape))
            feeds["w" + t] = w
        else:
            inits.append(numpy_helper.from_array(w, "w" + t))
        args = [x, "w" + t]
        if bias:
            inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32),
                                                 "cb" + t))
            args.append("cb" + t)
        last = "c" + t
        nodes.append(helper.make_node("Conv", args, [last], kernel_shape=[k] * nsp,
                                      strides=[s] * nsp, dilations=[d] * nsp, pads=list(pads)))
        if bn:
            nodes.append(batchnorm(rng, last, "n" + t, m, t, inits))
            last = "n" + t
        if act == "Silu":
            nodes.append(helper.make_node("Sigmoid", [last], ["sg" + t]))
            nodes.append(helper.make_node("Mul", [last, "sg" + t], [y]))
        else:
            nodes.append(helper.make_node(act or "Identity", [last], [y]))
        out = [(n + pads[j] + pads[j + nsp] - d * (k - 1) - 1) // s + 1
               for j, n in enumerate(shape[2:])]
        outputs.append(helper.make_tensor_value_info(y, F, [shape[0], m] + out))
    graph = helper.make_graph(nodes, "positions", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)]), feeds


def check_positions(mlbc, work):
    """POS_CASES: a product per class of output pixels where it may be taken, the bits of the
    general kernels."""
    import gen
    n = constants_vs_inputs(mlbc, work, "positions", positions_graph, POS_CASES,
                            "a product per class of output pixels",
                            sum(not c[-1] for c in POS_CASES), gen.reference)
    # under ASan+UBSan too: gcc -O3's warning of reads past the weights is silenced in
    # templates/gemm_pix_f32.c on the strength of this run
    model, feeds = positions_graph(False)
    wdir = os.path.join(work, "positions_asan")
    os.makedirs(wdir, exist_ok=True)
    kinds.save(model, os.path.join(wdir, "model.onnx"))
    exe = mlbctest.compile_model(mlbc, os.path.join(wdir, "model.onnx"), wdir,
                                 cflags=mlbctest.CFLAGS + ("-fsanitize=address,undefined",
                                                           "-fno-sanitize-recover=all"))
    in_types, out_types = mlbctest.tensor_types(model)
    ref = gen.reference(model, feeds)
    shapes = [(t, ref[o.name].shape) for t, o in zip(out_types, model.graph.output)]
    mlbctest.execute(exe, wdir, [feeds[v.name] for v in model.graph.input], in_types, shapes,
                     timeout=120)
    return n + 1


# Float Convs strided along W (op_conv.c, gemm_plan): the padded input copied as its phases
# and read in place, with products of rows, per row and with pixels as rows; 1-D and 2-D,
# strides 2 and 3 (along W only too), dilations, asymmetric pads, groups, a fused Relu and
# MaxPool. (3-D ones keep im2col: test_same_bits.py's conv sweep.)
# (x shape, out channels, kernel, strides, dilations, pads, group, relu, pool)
STRIDED_CASES = (
    ((1, 64, 6, 40), 4, (5, 5), (2, 2), (1, 1), (2, 2, 2, 2), 1, False, False),
    ((1, 3, 20, 37), 6, (3, 3), (2, 2), (1, 1), (1, 0, 2, 1), 1, True, False),
    ((2, 2, 7, 30), 4, (3, 3), (1, 3), (1, 1), (1, 1, 1, 1), 1, False, False),
    ((1, 4, 14, 14), 16, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 1, True, False),
    ((1, 8, 16, 16), 5, (5, 5), (2, 2), (2, 2), (4, 4, 4, 4), 1, False, False),
    ((1, 4, 36, 68), 8, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 2, True, True),
    ((2, 3, 41), 5, (5,), (2,), (2,), (2, 3), 1, False, False),
    ((1, 6, 9, 9), 4, (1, 1), (2, 2), (1, 1), (0, 0, 0, 0), 2, False, False))


def strided_variants_graph():
    """STRIDED_CASES, inputs 2% -0 (and 1% NaN where no Relu follows): the model, its
    feeds."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(37)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits, feeds = [], [], [], [], {}
    for i, (shape, m, k, s, d, pads, group, relu, pool) in enumerate(STRIDED_CASES):
        x, w, y = "x%d" % i, "w%d" % i, "y%d" % i
        nsp = len(k)
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        flat = feeds[x].reshape(-1)
        if not relu:  # mlbc's Relu makes NaN 0 (op_elementwise.c), onnx_np keeps it
            flat[rng.random(flat.size) < 0.01] = np.nan
        flat[rng.random(flat.size) < 0.02] = -0.0
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        inits.append(numpy_helper.from_array(
            rng.standard_normal((m, shape[1] // group) + k).astype(np.float32), w))
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32),
                                             "b%d" % i))
        conv = "c%d" % i if relu or pool else y
        nodes.append(helper.make_node("Conv", [x, w, "b%d" % i], [conv], group=group,
                                      kernel_shape=list(k), strides=list(s),
                                      dilations=list(d), pads=list(pads)))
        if relu:
            nodes.append(helper.make_node("Relu", [conv], ["r%d" % i if pool else y]))
        if pool:
            nodes.append(helper.make_node("MaxPool", ["r%d" % i if relu else conv], [y],
                                          kernel_shape=[2, 2], strides=[2, 2]))
        out = [(n + pads[j] + pads[j + nsp] - d[j] * (k[j] - 1) - 1) // s[j] + 1
               for j, n in enumerate(shape[2:])]
        if pool:
            out = [o // 2 for o in out]
        outputs.append(helper.make_tensor_value_info(y, F, [shape[0], m] + out))
    graph = helper.make_graph(nodes, "strided_variants", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds


def check_strided_variants(mlbc, work):
    """STRIDED_CASES against onnx_np, each reading its input's phases in place."""
    import gen

    def inspect(code):
        phased = len(re.findall(r"^/\* Conv: .* zero-padded, as \d+x\d+ phases", code, re.M))
        if phased != len(STRIDED_CASES) or "taps per pixel" in code:
            raise Failure("%d Convs read phases, not %d" % (phased, len(STRIDED_CASES)))
    return check_graph(mlbc, work, "strided_variants", *strided_variants_graph(), inspect,
                       gen.reference)


# Float MaxPool and AveragePool on their own: (op, x's shape, kernel, strides, dilations, pads,
# count_include_pad, by the row kernel). The row kernel (templates/pool_rows.c) takes windows
# inside the rows (no pads along W) at stride 1, or 2 with two taps or more: rows of 3, 4, 5,
# 8, 9, 16, 17, 18 and 33 outputs (vectors of 16, 8 and 4 and tails, or only the tail), 1-D to
# 3-D, dilations (MaxPool: AveragePool has them from opset 19, past onnx 1.12's checker), pads
# along the outer axes counted and not. Each case has its own row kernel (the inspector counts
# kernels). The others take the generic kernel: pads along W, stride 3, a 1-tap window at
# stride 2.
POOL_CASES = (
    ("AveragePool", (1, 3, 10, 16), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), 0, True),
    ("AveragePool", (2, 2, 9, 19), (3, 3), (1, 1), (1, 1), (1, 0, 1, 0), 0, True),
    ("AveragePool", (1, 2, 9, 20), (3, 3), (1, 1), (1, 1), (1, 0, 1, 0), 1, True),
    ("AveragePool", (1, 4, 35), (3,), (2,), (1,), (0, 0), 0, True),
    ("AveragePool", (1, 2, 5, 6, 37), (2, 2, 3), (1, 2, 2), (1, 1, 1), (1, 0, 0, 0, 0, 0), 1,
     True),
    ("MaxPool", (1, 2, 8, 13), (2, 3), (2, 2), (2, 1), (0, 0, 0, 0), 0, True),
    ("MaxPool", (1, 3, 12, 34), (3, 3), (2, 2), (1, 2), (1, 0, 1, 0), 0, True),
    ("MaxPool", (1, 2, 40), (2,), (1,), (1,), (0, 0), 0, True),
    ("AveragePool", (1, 3, 10, 16), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 0, False),
    ("AveragePool", (1, 3, 10, 16), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 1, False),
    ("AveragePool", (1, 2, 7, 30), (3, 3), (3, 3), (1, 1), (0, 0, 0, 0), 0, False),
    ("AveragePool", (1, 2, 6, 8), (1, 1), (2, 2), (1, 1), (0, 0, 0, 0), 0, False),
    ("AveragePool", (1, 2, 6, 6), (3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 0, True),
    ("MaxPool", (1, 3, 6, 6), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), 0, True))


def marked(pattern, cases, what):
    """An inspect() for check_graph: the generated code matches PATTERN (a regex, per line)
    once for each of CASES whose last field is true."""
    def inspect(code):
        got, want = len(re.findall(pattern, code, re.M)), sum(c[-1] for c in cases)
        if got != want:
            raise Failure("%d %s, not %d" % (got, what, want))
    return inspect


def pool_variants_graph():
    """POOL_CASES, inputs 1% infinite, 2% -0 and (AveragePool's: mlbc's MaxPool passes over
    NaN, onnx_np's keeps it) 1% NaN: returns the model and its feeds."""
    from onnx import helper
    rng = np.random.default_rng(41)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, feeds = [], [], [], {}
    for i, (op, shape, k, s, d, pads, count_pad, _) in enumerate(POOL_CASES):
        x, y, nsp = "x%d" % i, "y%d" % i, len(k)
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        flat = feeds[x].reshape(-1)
        if op == "AveragePool":
            flat[rng.random(flat.size) < 0.01] = np.nan
        flat[rng.random(flat.size) < 0.01] = np.inf
        flat[rng.random(flat.size) < 0.02] = -0.0
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        extra = {"count_include_pad": count_pad} if op == "AveragePool" else \
            {"dilations": list(d)}
        nodes.append(helper.make_node(op, [x], [y], kernel_shape=list(k), strides=list(s),
                                      pads=list(pads), **extra))
        out = [(n + pads[j] + pads[j + nsp] - d[j] * (k[j] - 1) - 1) // s[j] + 1
               for j, n in enumerate(shape[2:])]
        outputs.append(helper.make_tensor_value_info(y, F, list(shape[:2]) + out))
    graph = helper.make_graph(nodes, "pool_variants", inputs, outputs, [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds


def check_pool_variants(mlbc, work):
    """POOL_CASES against onnx_np, those marked through the row kernel."""

    return check_graph(mlbc, work, "pool_variants", *pool_variants_graph(),
                       marked(r"^/\* (?:Max|Average)Pool rows: ", POOL_CASES,
                              "pools by the row kernel"))


# Float sums whose 8 lanes are one vector (templates/lanes8.c): (op, x's shape, axes or None
# for a global pool, whether the lanes take them). Rows of 1024, of 100 (a rest past the last 8),
# 7 rows of 43 (four at a time, then three, each with a rest), of 32, a reduced outer axis
# around the rows, a plane with a rest; rows of 7 (no lanes) and a ReduceMax (not a sum) stay
# array loops; ReduceMax over an axis of 1 is a copy.
SUM_LANES_CASES = (
    ("ReduceMean", (16, 1024), [1], True), ("ReduceSum", (3, 100), [1], True),
    ("ReduceSum", (7, 43), [1], True),
    ("ReduceMean", (5, 32), [-1], True), ("ReduceSum", (4, 3, 40), [0, 2], True),
    ("GlobalAveragePool", (1, 16, 32, 32), None, True),
    ("GlobalAveragePool", (2, 3, 10, 10), None, True),
    ("ReduceMean", (6, 7), [1], False), ("ReduceMax", (4, 64), [1], False),
    ("ReduceMax", (4, 1, 64), [1], False), ("ReduceMax", (3, 1), [-1], False))
REDUCE_COPIES = 2   # the last two: of one element each, a copy


def sum_lanes_graph():
    """SUM_LANES_CASES, inputs poisoned (NaN, infinities, -0): the model and its feeds."""
    from onnx import helper
    rng = np.random.default_rng(43)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, feeds = [], [], [], {}
    for i, (op, shape, axes, _) in enumerate(SUM_LANES_CASES):
        x, y = "x%d" % i, "y%d" % i
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        kept = [1 if axes is None and a >= 2 or axes is not None and
                (a in axes or a - len(shape) in axes) else n for a, n in enumerate(shape)]
        nodes.append(helper.make_node(op, [x], [y]) if axes is None else
                     helper.make_node(op, [x], [y], axes=axes, keepdims=1))
        outputs.append(helper.make_tensor_value_info(y, F, kept))
    graph = helper.make_graph(nodes, "sum_lanes", inputs, outputs, [])
    # opset 12: ReduceSum's axes still an attribute
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), poison(feeds, 43)


def check_sum_lanes(mlbc, work):
    """SUM_LANES_CASES against onnx_np, those marked by the vector of lanes (a kernel each:
    rows summed four at a time, the rest one by one, in one)."""
    want = sum(c[-1] for c in SUM_LANES_CASES)

    def inspect(code):
        got = sum("MLBC_F8_ADD(lanes" in f for f in code.split("\n}\n"))
        if got != want:
            raise Failure("%d kernels sum by lanes8, not %d" % (got, want))
        if code.count("of one element each, a copy") != REDUCE_COPIES:
            raise Failure("%d reductions copied, not %d" % (
                code.count("of one element each, a copy"), REDUCE_COPIES))
    return check_graph(mlbc, work, "sum_lanes", *sum_lanes_graph(), inspect)


# Float Transposes: (x's shape, perm, whether mlbc_transpose_f32 takes them): one of the
# swapped axes 8 or more (tiles of 8 and narrower ones at the edges: 13 x 37, 9 and 20 under a
# kept axis, the attention head's [1, 64, 8, 16] -> [1, 8, 16, 64], three axes reversed, 7
# rows, a sequence of 4 under a batch, 5 columns), both under 8 (the element loop).
TRANSPOSE_CASES = (
    ((13, 37), [1, 0], True), ((2, 20, 9), [0, 2, 1], True),
    ((1, 64, 8, 16), [0, 2, 3, 1], True), ((8, 3, 16), [2, 1, 0], True),
    ((7, 40), [1, 0], True), ((32, 4, 96), [0, 2, 1], True), ((3, 40, 5), [0, 2, 1], True),
    ((6, 3), [1, 0], False))


def transpose_variants_graph():
    """TRANSPOSE_CASES, inputs poisoned (NaN, infinities, -0): the model and its feeds."""
    from onnx import helper
    rng = np.random.default_rng(47)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, feeds = [], [], [], {}
    for i, (shape, perm, _) in enumerate(TRANSPOSE_CASES):
        x, y = "x%d" % i, "y%d" % i
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        nodes.append(helper.make_node("Transpose", [x], [y], perm=perm))
        outputs.append(helper.make_tensor_value_info(y, F, [shape[a] for a in perm]))
    graph = helper.make_graph(nodes, "transpose_variants", inputs, outputs, [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), poison(feeds, 47)


def check_transpose_variants(mlbc, work):
    """TRANSPOSE_CASES against onnx_np, those marked by mlbc_transpose_f32."""

    return check_graph(mlbc, work, "transpose_variants", *transpose_variants_graph(),
                       marked(r"^\s+mlbc_transpose_f32\(", TRANSPOSE_CASES,
                              "transposes by mlbc_transpose_f32"))


def transpose_pair_graph():
    """y0: x0 transposed there and back (torch's x.transpose(1, 2) undone), which mlbc turns
    into an Identity; y1: two Transposes that do not cancel; y2: a pair whose middle is also
    an output. The model and its feeds."""
    from onnx import helper
    rng = np.random.default_rng(53)
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, feeds = [], [], [], {}
    for i, (p1, p2, keep_mid) in enumerate((([0, 2, 1], [0, 2, 1], False),
                                            ([0, 2, 1], [2, 1, 0], False),
                                            ([1, 0, 2], [1, 0, 2], True))):
        x, m, y = "x%d" % i, "m%d" % i, "y%d" % i
        shape = (4, 9, 12)
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        mid = [shape[a] for a in p1]
        nodes += [helper.make_node("Transpose", [x], [m], perm=p1),
                  helper.make_node("Transpose", [m], [y], perm=p2)]
        outputs.append(helper.make_tensor_value_info(y, F, [mid[a] for a in p2]))
        if keep_mid:
            outputs.append(helper.make_tensor_value_info(m, F, mid))
    graph = helper.make_graph(nodes, "transpose_pair", inputs, outputs, [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds


def check_transpose_pair(mlbc, work):
    """transpose_pair_graph against onnx_np: one pair became an Identity, four Transposes
    stayed."""

    def inspect(code):
        ids = len(re.findall(r"/\* Identity ", code))
        kept = len(re.findall(r"/\* Transpose '", code))
        if (ids, kept) != (1, 4):
            raise Failure("%d Identity and %d Transpose nodes, not 1 and 4" % (ids, kept))
    return check_graph(mlbc, work, "transpose_pair", *transpose_pair_graph(), inspect)


# A Transpose read by a float ReduceSum or ReduceMean, folded into it where the Reduce sums
# the Transpose input's last axes in their order (fuse.c, templates/sum_seq_f32.c): x's
# shape, the permutation, the op, its axes, keepdims, whether it folds. torch's
# x.transpose(1, 2).mean(1) (full tiles of 16 rows by 16); rows and columns past the tiles
# of 16 and of 8; fewer columns than a tile; two reduced axes; a reduction of the last axis
# (the rows kernel's order), reduced axes out of order and a ReduceMax stay apart.
TRANSPOSE_REDUCE_CASES = [
    ((4, 32, 64), [0, 2, 1], "ReduceMean", [1], 0, True),
    ((3, 21, 37), [0, 2, 1], "ReduceSum", [1], 1, True),
    ((40, 9), [1, 0], "ReduceSum", [0], 0, True),
    ((5, 19), [1, 0], "ReduceMean", [0], 1, True),
    ((2, 6, 3, 4), [0, 2, 3, 1], "ReduceMean", [1, 2], 0, True),
    ((4, 8, 6), [0, 2, 1], "ReduceMean", [2], 0, False),
    ((2, 5, 3, 4), [0, 3, 2, 1], "ReduceSum", [1, 2], 0, False),
    ((4, 16, 24), [0, 2, 1], "ReduceMax", [1], 0, False),
]


def transpose_reduce_graph(keep_apart):
    """TRANSPOSE_REDUCE_CASES as one model; keep_apart: each transposed tensor is an output
    too, so that nothing folds."""
    from onnx import helper, numpy_helper
    F = onnx.TensorProto.FLOAT
    nodes, inputs, outputs, inits = [], [], [], []
    for i, (shape, perm, op, axes, keep, _) in enumerate(TRANSPOSE_REDUCE_CASES):
        x, t, y = "x%d" % i, "t%d" % i, "y%d" % i
        tshape = [shape[a] for a in perm]
        inputs.append(helper.make_tensor_value_info(x, F, shape))
        nodes.append(helper.make_node("Transpose", [x], [t], perm=perm))
        if op == "ReduceSum":  # its axes an input from opset 13
            inits.append(numpy_helper.from_array(np.array(axes, np.int64), "a%d" % i))
            nodes.append(helper.make_node(op, [t, "a%d" % i], [y], keepdims=keep))
        else:
            nodes.append(helper.make_node(op, [t], [y], axes=axes, keepdims=keep))
        yshape = [1 if a in axes else d for a, d in enumerate(tshape) if keep or a not in axes]
        outputs.append(helper.make_tensor_value_info(y, F, yshape))
        if keep_apart:
            outputs.append(helper.make_tensor_value_info(t, F, tshape))
    graph = helper.make_graph(nodes, "transpose_reduce", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def check_transpose_reduce(mlbc, work):
    """Transposes folded into the Reduce after them and kept apart (fused_vs_apart): the same
    bits, and which folded."""
    want = sum(c[-1] for c in TRANSPOSE_REDUCE_CASES)

    def inspect(code, apart):
        got = code.count("the Transpose before it folded in")
        if got != (0 if apart else want):
            raise Failure("%d Transposes folded into a Reduce, not %d" % (got, 0 if apart else want))
    return fused_vs_apart(mlbc, work, "transpose_reduce", transpose_reduce_graph, inspect,
                          len(TRANSPOSE_REDUCE_CASES), "Transpose + Reduce")


def check_divs_variants(mlbc, work):
    """The divisions of divs_variants_graph against onnx_np, and that they call the kernel."""
    want = sum(2 * (r * k >= 16) + (k >= 16) for r, k in DIVS_SHAPES)

    def inspect(code):
        calls = len(re.findall(r"^ +mlbc_vdivs_f32\(\d+, ", code, re.M))
        if calls != want:
            raise Failure("%d calls of mlbc_vdivs_f32, not %d" % (calls, want))
    return check_graph(mlbc, work, "divs_variants", *divs_variants_graph(), inspect)


def check_layernorm_variants(mlbc, work):
    """LN_CASES against onnx_np, and which of them call mlbc_layernorm_f32."""
    def inspect(code):
        want = sum(c[3] for c in LN_CASES)
        calls = len(re.findall(r"mlbc_layernorm_f32\(\d+, \d+, x", code))
        if calls != want:
            raise Failure("%d LayerNormalization nodes call mlbc_layernorm_f32, not %d"
                          % (calls, want))
    return check_graph(mlbc, work, "layernorm_variants", *layernorm_variants_graph(), inspect)


def arg_variants_graph():
    """ArgMax and ArgMin, first and last index, along the last axis and the first, of rows
    with NaN, +-inf, -0 beside +0, ties, a row all NaN and one all equal; and the feeds."""
    from onnx import helper
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, (12, 40)).astype(np.float32)
    r = rng.random(x.shape)
    x[r < 0.05] = np.nan
    x[(r >= 0.05) & (r < 0.1)] = -0.0
    x[(r >= 0.1) & (r < 0.12)] = np.inf
    x[(r >= 0.12) & (r < 0.14)] = -np.inf
    x[3], x[4], x[5], x[5, 7] = np.nan, 1.0, -0.0, 0.0
    nodes, outputs = [], []
    for i, (op, last, axis) in enumerate(ARG_VARIANTS):
        nodes.append(helper.make_node(op, ["x"], ["y%d" % i], axis=axis, keepdims=0,
                                      select_last_index=last))
        outputs.append(helper.make_tensor_value_info("y%d" % i, onnx.TensorProto.INT64,
                                                     [x.shape[1 - axis]]))
    graph = helper.make_graph(nodes, "arg_variants", [helper.make_tensor_value_info(
        "x", onnx.TensorProto.FLOAT, list(x.shape))], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {"x": x}


ARG_VARIANTS = [(op, last, axis) for op in ("ArgMax", "ArgMin") for last in (0, 1)
                for axis in (1, 0)]


def arg_reference(model, feeds):
    """numpy's argmax/argmin (a NaN is the extreme, the first one wins), the last index by
    flipping the axis."""
    x = feeds["x"]
    out = {}
    for i, (op, last, axis) in enumerate(ARG_VARIANTS):
        f = np.argmax if op == "ArgMax" else np.argmin
        out["y%d" % i] = (x.shape[axis] - 1 - f(np.flip(x, axis), axis=axis) if last
                          else f(x, axis=axis))
    return out


def check_arg_variants(mlbc, work):
    """arg_variants_graph against numpy's indices (onnx_np has no select_last_index)."""
    return check_graph(mlbc, work, "arg_variants", *arg_variants_graph(),
                       reference=arg_reference)


def check_defaults_committed():
    """models/<kind>.onnx is what kinds.py builds for the defaults (regenerated, unedited)."""
    stale = []
    for kind in kinds.KINDS:
        path = os.path.join(mlbctest.ROOT, "models", kind + ".onnx")
        with open(path, "rb") as f:
            if f.read() != kinds.build(kind).SerializeToString():
                stale.append(kind)
    if stale:
        raise Failure("not what models/kinds.py generates (rerun it with --ref): "
                      + ", ".join(stale))
    return len(kinds.KINDS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    work = os.path.abspath(os.path.join(args.build, "models-work"))
    fam_work = os.path.abspath(os.path.join(args.build, "kinds-work"))
    errors = (Failure, KeyError, FileNotFoundError, ValueError, NotImplementedError)
    passed = failed = 0

    def report(ok, line):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + line)
        if ok:
            passed += 1
        else:
            failed += 1

    checks = [  # what is checked, the check, what its count counts
        ("fused Conv + MaxPool", lambda: check_conv_pool(mlbc, work),
         "chains, the bits of the unfused, onnx_np's values"),
        ("fused LayerNorm chains", lambda: check_norm_chain(mlbc, work),
         "torch's nodes below opset 17, the bits of the unfused, onnx_np's values"),
        ("fused GELU chains", lambda: check_gelu(mlbc, work),
         "nn.GELU's nodes as torch exports them, the bits of the unfused, onnx_np's values"),
        ("fused MatMul + Add", lambda: check_matmul_add(mlbc, work),
         "cases, the bits of the unfused, onnx_np's values"),
        ("float LSTM, GRU, RNN", lambda: check_rnn_variants(mlbc, work),
         "variants (direction, layout, sequence_lens, batch, initial states) vs onnx_np"),
        ("float LayerNormalization", lambda: check_layernorm_variants(mlbc, work),
         "variants (row lengths, axes, bias) vs onnx_np"),
        ("float Softmax and LogSoftmax rows by blocks", lambda: check_softmax_rows(mlbc, work),
         "rows vs onnx_np"),
        ("float division by one value (Div, Softmax)", lambda: check_divs_variants(mlbc, work),
         "nodes vs onnx_np"),
        ("kernels on every CPU path and rows by mlbc_copy",
         lambda: check_paths_variants(mlbc, work),
         "nodes vs onnx_np"),
        ("depthwise Conv, direct", lambda: check_depthwise_variants(mlbc, work),
         "nodes vs onnx_np"),
        ("RNNs from a zero state, the first recurrent product left out",
         lambda: check_rnn_zero_state(mlbc, work), "outputs, the bits of a zero input state"),
        ("depthwise Conv of tiny planes, the taps in the padding left out",
         lambda: check_depthwise_tiny(mlbc, work), "cases, the bits of the general kernel"),
        ("Conv of batches of tiny planes, a product per pixel, the taps in the padding left out",
         lambda: check_positions(mlbc, work), "cases, the bits of the general kernels"),
        ("strided Conv, phases read in place", lambda: check_strided_variants(mlbc, work),
         "nodes vs onnx_np"),
        ("MaxPool and AveragePool, by the row kernel or not",
         lambda: check_pool_variants(mlbc, work), "nodes vs onnx_np"),
        ("float sums in a vector of 8 lanes (ReduceSum, ReduceMean, GlobalAveragePool)",
         lambda: check_sum_lanes(mlbc, work), "nodes vs onnx_np"),
        ("float Transposes by 8 x 8 tiles or element by element",
         lambda: check_transpose_variants(mlbc, work), "nodes vs onnx_np"),
        ("a Transpose undone by the next: an Identity",
         lambda: check_transpose_pair(mlbc, work), "nodes vs onnx_np"),
        ("Transposes folded into the Reduce after them",
         lambda: check_transpose_reduce(mlbc, work), "chains, fused and apart the same bits"),
        ("Conv + BatchNormalization + activation fused, the same bits as apart",
         lambda: check_conv_act(mlbc, work), "chains"),
        ("Conv + mean of each plane fused, the same bits as apart",
         lambda: check_conv_mean(mlbc, work), "chains, the bits of the unfused, onnx_np's values"),
        ("ArgMax and ArgMin with NaN, infinite and -0 values, first and last index",
         lambda: check_arg_variants(mlbc, work), "nodes vs numpy"),
        ("models/<kind>.onnx up to date with models/kinds.py", check_defaults_committed,
         "kinds"),
    ]
    # everything in one pool, the checks (the longest) first; reported in this order
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        # (the future, its PASS line from its count, its FAIL line's prefix)
        results = [(pool.submit(check),
                    lambda n, w=what, c=counted: "%s: %d %s" % (w, n, c), what)
                   for what, check, counted in checks]
        paths = sorted(glob.glob(os.path.join(mlbctest.ROOT, "models", "*.onnx")))
        results[:0] = [(pool.submit(check_model, mlbc, p, work),
                        lambda n, m=os.path.basename(p): "%s (%d reference samples)" % (m, n),
                        os.path.basename(p)) for p in paths]
        for kind in kinds.KINDS:
            for suf, params in kinds.family(kind):
                name = "%s_%s" % (kind, suf)
                results.append((pool.submit(check_member, mlbc, kind, suf,
                                            kinds.build(kind, **params), fam_work),
                                lambda n, m=name: "family %s (%d random samples vs onnx_np)"
                                % (m, n), "family %s %s" % (name, params)))
        for f, passed_line, label in results:
            try:
                report(True, passed_line(f.result()))
            except errors as e:
                report(False, "%s: %s" % (label, e))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
