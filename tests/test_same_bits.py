"""Same bits everywhere (SPEC 2): the generated code of the example models and of a sample of
ONNX node tests is built eight ways (gcc and clang-19; -O2, -O3, -march=native;
-ffp-contract=off and fast; each run-time CPU path forced with -DMLBC_ISA_MAX), run on the
same inputs, and every output must be byte-identical to the plain `gcc -O2` build, up to the
sign and payload of NaNs (mlbctest.same_bits: where a NaN input meets the default NaN of an
invalid operation, which one a sum returns depends on the operand order the compiler chose).

A static check goes with it: clang-19 -O2 -march=native with -ffp-contract=fast must emit
exactly as many single-precision fused multiply-adds as with -ffp-contract=off. An extra one
is a float multiply-add the compiler contracted (clang ignores the contraction pragmas at
"fast"), which may or may not change the bits for the inputs at hand.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import sys
import time

import mlbctest
import test_models
from mlbctest import Failure, np, onnx
import test_node
from test_node import load_pb

# name, compiler, flags. The first is the reference.
BUILDS = [
    ("gcc -O2", "gcc", ["-O2"]),
    ("gcc -O3 -march=native", "gcc", ["-O3", "-march=native"]),
    ("gcc -O2 -march=native -ffp-contract=fast", "gcc", ["-O2", "-march=native", "-ffp-contract=fast"]),
    ("clang -O3", "clang-19", ["-O3"]),
    ("clang -O2 -march=native -ffp-contract=off", "clang-19", ["-O2", "-march=native", "-ffp-contract=off"]),
    ("clang -O2 -march=native -ffp-contract=fast", "clang-19", ["-O2", "-march=native", "-ffp-contract=fast"]),
    ("gcc -O2, portable C path", "gcc", ["-O2", "-DMLBC_ISA_MAX=0"]),
    ("gcc -O2 -march=native, AVX2 path", "gcc", ["-O2", "-march=native", "-DMLBC_ISA_MAX=1"]),
]
STATIC = ("clang -O2 -march=native -ffp-contract=off", "clang -O2 -march=native -ffp-contract=fast")
FLOAT_FMA = re.compile(r"\bvf(n?m(?:add|sub)|maddsub|msubadd)\w*(ps|ss)\b")

# Node tests: the families policy networks are made of, and the arithmetic around them. The
# first test (in name order) of each prefix: the kernels' tile cases are covered by the
# GEMM and Conv sweeps below, so more tests per prefix mostly repeat them (and cost test time);
# MatMul and Conv are left to the sweeps (Gemm stays, for alpha and beta); element-wise sums
# and products, sigmoid and tanh to the example models (the LSTM and GRU run all of them).
NODE_PREFIXES = [
    "gemm", "einsum", "convtranspose", "lstm", "gru", "rnn",
    "softmax_", "logsoftmax", "layer_normalization_3d", "batchnorm", "instancenorm", "lrn",
    "reduce_sum_square", "reduce_log_sum_exp", "reduce_mean", "reduce_l2",
    "leakyrelu", "elu", "selu", "hardsigmoid", "hardswish", "gelu", "softplus",
    "averagepool_2d", "globalaveragepool", "resize_upsample_scales_linear", "resize_downsample",
    "gridsample", "det", "dft", "blackmanwindow", "pow",
    "resize_upsample_scales_cubic", "resize_tf_crop_and_resize", "gridsample_bicubic",
    "roialign", "stft", "melweightmatrix", "range_float", "nllloss_NCd1_weight",
    "sce_mean_weight", "qlinearmatmul", "nonmaxsuppression",
]


# The example models make test builds eight ways (make check-full: all of them): the MLGO
# policies and one of each other family. The others' kernels are the sweeps' and the kernel
# graphs' above (rnn_policy's cells rnn_sweep's, transformer's transformer_block's, ggnn's,
# cnn's and mlp_batch's products gemm_sweep's and conv_sweep's), and AArch64 builds every
# example model (test_cross.py).
SAMPLED_MODELS = ("inliner", "regalloc_evict", "dqn", "transformer_block", "lstm_seq",
                  "gru_seq", "cnn_small")


def node_sample(datadir):
    tests = sorted(os.path.basename(t) for t in glob.glob(os.path.join(datadir, "node", "test_*")))
    picked = []
    for p in NODE_PREFIXES:
        picked += [t for t in tests if t.startswith("test_" + p)][:1]
    return [os.path.join(datadir, "node", t, "model.onnx") for t in picked]


# Matrix products of every register-tile case of templates/gemm_f32.c: M rows (1, 2, tiles of
# 3 to 8, several tiles, uneven ones), N columns (partial, whole and several 16-column panels),
# K (1 and longer chains); B constant (packed at compile time) or an input (read in place,
# the last panel masked).
SWEEP_M = (1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 33)
SWEEP_N = (1, 15, 16, 17, 40, 130, 300)
SWEEP_K = (1, 7, 64)


def gemm_sweep(root):
    """Writes a model of MatMuls of the SWEEP shapes, with one data set, in node-test layout;
    returns its path."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(8)
    d = os.path.join(root, "gen", "gemm_sweep")
    nodes, inputs, outputs, inits, data = [], [], [], [], []

    def arg(name, a):
        inputs.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, a.shape))
        data.append(a)

    for m in SWEEP_M:
        for n in SWEEP_N:
            for k in SWEEP_K:
                tag = "%dx%dx%d" % (m, n, k)
                arg("a" + tag, rng.standard_normal((m, k)).astype(np.float32))
                b = rng.standard_normal((k, n)).astype(np.float32)
                constant = (m + n + k) % 2 == 0
                if constant:
                    inits.append(numpy_helper.from_array(b, "b" + tag))
                else:
                    arg("b" + tag, b)
                nodes.append(helper.make_node("MatMul", ["a" + tag, "b" + tag], ["y" + tag]))
                outputs.append(helper.make_tensor_value_info("y" + tag, onnx.TensorProto.FLOAT,
                                                             (m, n)))
    return save_sweep(d, "gemm_sweep", nodes, inputs, outputs, inits, data)


def save_sweep(d, name, nodes, inputs, outputs, inits, data):
    """Saves a generated model and its data set into d; returns the model's path."""
    from onnx import helper
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    return save_graph(d, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
                      data)


def save_graph(d, model, data):
    """Saves MODEL and one data set of its inputs (DATA, in order) into d, in node-test
    layout; returns the model's path."""
    from onnx import numpy_helper
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, a in enumerate(data):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())
    return os.path.join(d, "model.onnx")


# Float Convs through the matrix product, most of unit stride along the last axis (the
# product reads the input in place through a table of tap offsets, one product per output
# row): output rows of partial, whole and several panels (OW), 1, 3, 8 and 9 output channels
# (with the extras' 2 to 6 and 11, tiles of every height), kernels 1x3, 3x3 and 5x5 dilated by 2, with and without padding, with and
# without bias and a fused Relu; then strided, 1-D, 3-D and grouped ones, and rows of two
# panels (a product per row) and of half a panel (5 rows: a half panel last; one and two
# output channels: the one- and two-row tiles).
SWEEP_OW = (5, 16, 17, 40)
SWEEP_CONV_M = (1, 3, 8, 9)
SWEEP_KERNELS = (((1, 3), (1, 1)), ((3, 3), (1, 1)), ((5, 5), (2, 2)))  # (kernel, dilations)
SWEEP_CONV_EXTRA = [  # (x shape, out channels, kernel, strides, dilations, pads, group)
    ((1, 2, 9, 20), 4, (3, 3), (2, 1), (1, 1), (1, 1, 1, 1), 1),
    ((2, 3, 33), 5, (3,), (1,), (1,), (1, 1), 1),
    ((1, 2, 4, 5, 18), 3, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1, 1, 1, 1), 1),
    ((1, 4, 6, 19), 6, (3, 3), (1, 1), (1, 1), (0, 1, 2, 0), 2),
    ((1, 3, 5, 32), 9, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    ((1, 2, 5, 8), 11, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    ((1, 2, 6, 8), 1, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    # pixels as the products' rows (op_conv.c, pix_pays): padded, grouped, read in place
    ((1, 4, 7, 7), 16, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    ((1, 8, 5, 5), 32, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 2),
    ((1, 3, 9, 9), 16, (3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 1),
    ((1, 3, 3, 8), 2, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    # 3-D, strided, a row's columns over a tile: templates/conv_im2col.c's bounds pad (2-D
    # and 1-D strided Convs read their phases in place: test_models.STRIDED_CASES)
    ((1, 16, 3, 4, 80), 2, (3, 3, 3), (1, 1, 2), (1, 1, 1), (1, 1, 1, 1, 1, 1), 1),
]


def conv_sweep(root):
    """Writes a model of Convs of the sweep shapes, with one data set, in node-test layout;
    returns its path."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(9)
    d = os.path.join(root, "gen", "conv_sweep")
    nodes, inputs, outputs, inits, data = [], [], [], [], []
    shapes = []
    i = 0
    for ow in SWEEP_OW:
        for m in SWEEP_CONV_M:
            for (kernel, dil) in SWEEP_KERNELS:
                for padded in (0, 1):
                    span = [(k - 1) * dd for k, dd in zip(kernel, dil)]
                    pads = [s // 2 for s in span] * 2 if padded else [0, 0, 0, 0]
                    x = (1, 1 + i % 3, 3 + span[0] - 2 * pads[0], ow + span[1] - 2 * pads[1])
                    shapes.append((x, m, kernel, (1, 1), dil, tuple(pads), 1))
                    i += 1
    shapes += SWEEP_CONV_EXTRA
    for i, (x, m, kernel, strides, dil, pads, group) in enumerate(shapes):
        tag = str(i)
        inputs.append(helper.make_tensor_value_info("x" + tag, onnx.TensorProto.FLOAT, x))
        data.append(rng.standard_normal(x).astype(np.float32))
        w = rng.standard_normal((m, x[1] // group) + kernel).astype(np.float32)
        inits.append(numpy_helper.from_array(w, "w" + tag))
        args = ["x" + tag, "w" + tag]
        if i % 2:
            inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32),
                                                 "b" + tag))
            args.append("b" + tag)
        relu = i % 3 == 0
        nodes.append(helper.make_node("Conv", args, ["c" + tag if relu else "y" + tag],
                                      kernel_shape=kernel, strides=strides, dilations=dil,
                                      pads=pads, group=group))
        if relu:
            nodes.append(helper.make_node("Relu", ["c" + tag], ["y" + tag]))
        nsp = len(kernel)
        out = [(x[2 + j] + pads[j] + pads[nsp + j] - (kernel[j] - 1) * dil[j] - 1) // strides[j]
               + 1 for j in range(nsp)]
        outputs.append(helper.make_tensor_value_info("y" + tag, onnx.TensorProto.FLOAT,
                                                     [x[0], m] + out))
    return save_sweep(d, "conv_sweep", nodes, inputs, outputs, inits, data)


# Recurrent matrices larger than MLBC_SWEEP_BYTES (compiler/config.h), whose product each step
# sweeps its column blocks forward and backward on alternate steps (op_rnn.c, recurrent()):
# an LSTM with a last block shorter than the others, a GRU with linear_before_reset, and an
# LSTM of one batch row, whose R is in mlbc_gemv_f32's layout.
SWEPT = ("s % 2 ? 3 - q : q", "mlbc_gemv_f32(", "h[0], r + p * ")


def rnn_sweep(root):
    """Writes a model of a swept LSTM and GRU, with one data set, in node-test layout; returns
    its path."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(10)
    d = os.path.join(root, "gen", "rnn_sweep")
    seq, width = 3, 8
    nodes, inputs, outputs, inits, data = [], [], [], [], []
    for op, gates, hid, batch, attrs in (("LSTM", 4, 184, 2, {}),
                                         ("GRU", 3, 212, 2, {"linear_before_reset": 1}),
                                         ("LSTM", 4, 200, 1, {})):
        tag = op.lower() + str(batch)
        inputs.append(helper.make_tensor_value_info("x" + tag, onnx.TensorProto.FLOAT,
                                                    [seq, batch, width]))
        data.append(rng.standard_normal((seq, batch, width)).astype(np.float32))
        bound = 1 / np.sqrt(hid)
        for name, shape in (("w", (1, gates * hid, width)), ("r", (1, gates * hid, hid)),
                            ("b", (1, 2 * gates * hid))):
            inits.append(numpy_helper.from_array(
                rng.uniform(-bound, bound, shape).astype(np.float32), name + tag))
        nodes.append(helper.make_node(op, ["x" + tag, "w" + tag, "r" + tag, "b" + tag],
                                      ["y" + tag], hidden_size=hid, **attrs))
        outputs.append(helper.make_tensor_value_info("y" + tag, onnx.TensorProto.FLOAT,
                                                     [seq, 1, batch, hid]))
    return save_sweep(d, "rnn_sweep", nodes, inputs, outputs, inits, data)


def fused_chains(root, tag, graph):
    """Writes one of test_models' graphs of fused chains (GRAPH(False), the fused model: Conv
    (+ Relu) + MaxPool, Conv + BatchNormalization), with inputs 2% NaN or infinite and 2% -0
    (where the pools' max updates must agree), in node-test layout; returns its path."""
    model = graph(False)
    feeds = test_models.poison(test_models.kinds.random_inputs(model, seed=3), 4)
    return save_graph(os.path.join(root, "gen", tag), model, feeds.values())


def kernel_cases(root, tag, graph):
    """Writes one of test_models' graphs of kernel cases (GRAPH() gives the model and its
    feeds) in node-test layout; returns its path."""
    model, feeds = graph()
    return save_graph(os.path.join(root, "gen", tag), model,
                      [feeds[v.name] for v in model.graph.input])


def write_inputs(work, arrays, types):
    for i, (a, t) in enumerate(zip(arrays, types)):
        with open(os.path.join(work, "in%d.bin" % i), "wb") as f:
            f.write(mlbctest.to_buffer(a, t))


def same_output(got, want, types, k):
    """Output K's bytes equal, or its floats equal up to NaN sign and payload."""
    if got == want:
        return True
    if types is None or len(got) != len(want):
        return False
    t = types[1][k]
    return mlbctest.same_bits(mlbctest.from_buffer(got, t, -1), mlbctest.from_buffer(want, t, -1))[1]


def model_inputs(path, work):
    """Writes the first reference sample's inputs (example models) or the first data set's
    (node tests) into work; returns False when the model's values are not all tensors."""
    if not path.endswith("model.onnx"):
        sets, in_types, _, _ = test_models.reference_sets(path)
        write_inputs(work, sets[0][0], in_types)
        return True
    types = mlbctest.tensor_types(onnx.load(path))
    if types is None:
        return False
    ds = sorted(glob.glob(os.path.join(os.path.dirname(path), "test_data_set_*")))[0]
    files = sorted(glob.glob(ds + "/input_*.pb"), key=lambda p: int(re.findall(r"\d+", p)[-1]))
    write_inputs(work, [load_pb(p) for p in files], types[0])
    return True


def check_model(mlbc, driver_objs, path, work, marker=None):
    """Builds and runs every variant; returns the number of builds (None: skipped). MARKER,
    if given, is code the generated file must hold, or a tuple of them (the cases the model is
    there for)."""
    os.makedirs(work, exist_ok=True)
    if not model_inputs(path, work):
        return None
    src = os.path.join(work, "model.c")
    r = mlbctest.run([mlbc, path, "-o", src, "-n", "model"])
    if r.returncode:
        raise Failure("mlbc: " + mlbctest.first_line(r.stderr))
    for m in (marker,) if isinstance(marker, str) else marker or ():
        if m not in open(src).read():
            raise Failure("the generated code has no '%s'" % m)
    types = mlbctest.tensor_types(onnx.load(path))
    ref_out, fma = None, {}
    for name, cc, flags in BUILDS:
        obj, exe = os.path.join(work, "model.o"), os.path.join(work, "driver")
        strict = ["-std=c99", "-Wall", "-Wextra", "-pedantic", *flags]
        r = mlbctest.run([cc, *strict, "-c", src, "-o", obj])
        warns = mlbctest.code_warnings(cc, strict, r.stderr)
        if r.returncode or warns:
            raise Failure("%s: %s" % (name, (warns or [mlbctest.first_line(r.stderr)])[0]))
        if name in STATIC:
            dis = mlbctest.run(["objdump", "-d", "--no-show-raw-insn", obj]).stdout
            fma[name] = len(FLOAT_FMA.findall(dis))
        r = mlbctest.run([cc, obj, driver_objs[cc], "-o", exe, "-lm"])
        if r.returncode:
            raise Failure("%s: link: %s" % (name, mlbctest.first_line(r.stderr)))
        for f in glob.glob(os.path.join(work, "out*.bin")):
            os.unlink(f)
        r = mlbctest.run([exe, work], timeout=60)
        if r.returncode:
            raise Failure("%s: driver: %s" % (name, mlbctest.first_line(r.stderr) or r.returncode))
        out = [open(f, "rb").read() for f in sorted(glob.glob(os.path.join(work, "out*.bin")))]
        if ref_out is None:
            ref_out = out
        elif len(out) != len(ref_out):
            raise Failure("'%s' wrote %d outputs, gcc -O2 %d" % (name, len(out), len(ref_out)))
        else:
            for k, (got, want) in enumerate(zip(out, ref_out)):
                if not same_output(got, want, types, k):
                    raise Failure("output %d of '%s' differs from gcc -O2's" % (k, name))
    if fma[STATIC[0]] != fma[STATIC[1]]:
        raise Failure("clang -ffp-contract=fast contracted %d float multiply-add(s) "
                      "(%d fused multiply-adds, %d at =off)" % (
                          fma[STATIC[1]] - fma[STATIC[0]], fma[STATIC[1]], fma[STATIC[0]]))
    shutil.rmtree(work, ignore_errors=True)
    return len(BUILDS)


def toolchain_noise(mlbc, work):
    """clang-19 -march=native on an Intel CPU with AVX10.1 warns of its own feature set for
    any file; -mavx512f -mavx10.1-256 is that warning on any machine. It must not count as
    the generated code's, and a warning of the code's still must. Compiled, never run."""
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, "model.c")
    r = mlbctest.run([mlbc, os.path.join(mlbctest.ROOT, "models", "inliner.onnx"), "-o", src])
    if r.returncode:
        raise Failure("mlbc: " + mlbctest.first_line(r.stderr))
    flags = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-O2", "-mavx512f", "-mavx10.1-256"]
    seen = []
    for extra in ("", "static int mlbc_unused;\n"):
        with open(src, "a") as f:
            f.write(extra)
        r = mlbctest.run(["clang-19", *flags, "-c", src, "-o", os.path.join(work, "m.o")])
        if r.returncode or "invalid feature combination" not in r.stderr:
            raise Failure("clang-19 %s: no toolchain warning to tell apart (%s)" % (
                " ".join(flags[-2:]), mlbctest.first_line(r.stderr) or "none"))
        seen.append(mlbctest.code_warnings("clang-19", flags, r.stderr))
    if seen[0] or len(seen[1]) != 1 or "mlbc_unused" not in seen[1][0]:
        raise Failure("code warnings told wrong: clean file %s, planted one %s" % tuple(seen))
    shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--filter", default="", help="regex on model names")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--all-models", action="store_true",
                    help="every example model (make check-full); else SAMPLED_MODELS")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    root = os.path.abspath(os.path.join(args.build, "same-bits"))
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    try:
        driver_objs = {cc: mlbctest.driver_object(cc, ("-O2",)) for cc in ("gcc", "clang-19")}
    except Failure as e:
        print("FAIL %s" % e)
        print("0 passed, 1 failed")
        return 1
    # the sweeps first: the longest builds, so that no core is left idle at the end waiting
    # for one of them
    markers = {conv_sweep(root): "taps per pixel",   # the bounds-checking im2col
               kernel_cases(root, "strided", test_models.strided_variants_graph): "phases of",
               rnn_sweep(root): SWEPT,
               fused_chains(root, "conv_pool", test_models.conv_pool_graph):
                   "mlbc_gemm_f32_taps_pool(",
               fused_chains(root, "conv_act", test_models.conv_act_graph):
                   "Conv: the fused BatchNormalization",
               fused_chains(root, "conv_mean", test_models.conv_mean_graph):
                   "then the mean of each plane",
               fused_chains(root, "norm_chain",
                            lambda apart: test_models.norm_chain_graph(apart, 13)):
                   "LayerNorm as the 9 nodes",
               fused_chains(root, "gelu", test_models.gelu_graph): "GELU, the 5 nodes",
               fused_chains(root, "transpose_reduce", test_models.transpose_reduce_graph):
                   "mlbc_sum_seq_f32(",
               kernel_cases(root, "layernorm", test_models.layernorm_variants_graph):
                   "mlbc_layernorm_f32(",
               kernel_cases(root, "divs", test_models.divs_variants_graph): "mlbc_vdivs_f32(",
               kernel_cases(root, "softmax_rows", test_models.softmax_rows_graph):
                   "mlbc_vexp_f32(nr * ",
               kernel_cases(root, "paths", test_models.paths_variants_graph):
                   ("_avx512(", "mlbc_copy("),
               kernel_cases(root, "depthwise", test_models.depthwise_variants_graph):
                   "depthwise (group",
               kernel_cases(root, "depthwise_tiny",
                            lambda: test_models.depthwise_tiny_graph(False)): "a = fmaf(wm[",
               kernel_cases(root, "positions", lambda: test_models.positions_graph(False)):
                   "offs + tfirst[c]",
               kernel_cases(root, "pool", test_models.pool_variants_graph): "AveragePool rows: ",
               kernel_cases(root, "sum_lanes", test_models.sum_lanes_graph): "MLBC_F8_ADD(",
               kernel_cases(root, "transpose", test_models.transpose_variants_graph):
                   "mlbc_transpose_f32("}
    # the large products' paths and the small ones' (specialised by gcc for their sizes)
    markers[gemm_sweep(root)] = ("mlbc_gemm_f32(33, 300, 64, a,",
                                 "mlbc_gemm_f32_small(2, 16, 7, a,")
    models = list(markers)
    models += [m for m in sorted(glob.glob(os.path.join(mlbctest.ROOT, "models", "*.onnx")))
               if args.all_models or os.path.basename(m)[:-5] in SAMPLED_MODELS]
    datadir = os.path.join(args.build, "onnx-node-data")
    test_node.generate(datadir)  # a run on its own samples the node suite too
    models += node_sample(datadir)
    models = [m for m in models if re.search(args.filter, m)]

    def one(path):
        name = os.path.basename(path) if not path.endswith("model.onnx") else \
            os.path.basename(os.path.dirname(path))
        t0 = time.time()
        try:
            n = check_model(mlbc, driver_objs, path, os.path.join(root, name),
                            markers.get(path))
            return name, "skip" if n is None else "pass", "%d builds, %.1f s" % (
                n or 0, time.time() - t0)
        except Failure as e:
            return name, "fail", str(e)

    counts = {"pass": 0, "fail": 0, "skip": 0}
    try:
        toolchain_noise(mlbc, os.path.join(root, "toolchain-noise"))
        counts["pass"] += 1
        print("PASS the toolchain's own warnings are told from the generated code's", flush=True)
    except Failure as e:
        counts["fail"] += 1
        print("FAIL toolchain warnings: %s" % e, flush=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, status, msg in pool.map(one, models):
            counts[status] += 1
            print("%s %s (%s)" % (status.upper(), name, msg), flush=True)
    print("%d passed, %d failed, %d skipped" % (counts["pass"], counts["fail"], counts["skip"]))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
