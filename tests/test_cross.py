"""The generated code on a second architecture: the example models (models/*.onnx against
models/ref/*.npz), test_models' Conv + MaxPool chains (every way a Conv's products are laid
out: rows of 8, 16 and 16k pixels, pixels as rows; against onnx_np), its graphs of kernel
cases (strided and depthwise Conv, pools) and a fixed sample of the ONNX node suite, compiled
by mlbc, built for AArch64 with Debian's cross gcc (-O2 -static and the generated-code contract
-std=c99 -Wall -Wextra -pedantic: a warning fails), run under qemu-aarch64 and compared with
the expected outputs (the tolerances of test_models and test_node). The same C is also built
natively (x86-64, gcc -O2 -march=native, the path this machine takes: mlbctest.CFLAGS) and
every output of the two builds is compared bytewise.

Bit identity across the two architectures is asserted where it must hold: every integer and
boolean output, and every floating-point output of code that calls no libm function but the
exact ones (sqrt, fma, floor, fmod, ...). The arithmetic is IEEE binary32/binary64 on both
(SSE2 and AArch64 FP, no x87 excess precision), the C text fixes the order of evaluation, and
C99 mode keeps gcc from contracting a*b+c into a fused multiply-add (-std=c99 implies
-ffp-contract=off; with -ffp-contract=fast, AArch64 gcc fuses and ten of these cases
differ: gemm, einsum, the normalisations, L2 reduction, RoiAlign, dqn; an explicit fmaf is
correctly rounded on both). Other libm functions are not correctly rounded and each
architecture has its own glibc build (x86-64 picks FMA variants at run time): outputs computed
through them are counted and reported, not asserted. Observed with glibc 2.36: expf, logf,
powf, sinf, cosf, atanf, exp and log agree to the bit on this sample (glibc's code for them
is the same on both and accurate well below half an ulp), erff does not (the Erf test, GELU in
the transformers). NaNs compare equal whatever their sign and payload, as the default NaN of
an invalid operation is negative on x86-64 and positive on AArch64."""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import sys
import time

import numpy as np

import mlbctest
from mlbctest import Failure, onnx
import test_models
import test_node

CROSS_CC = "aarch64-linux-gnu-gcc"
QEMU = "qemu-aarch64"
CROSS_FLAGS = ("-O2", "-static")
NATIVE_CC = "gcc"
NATIVE_FLAGS = ("-O2", "-march=native")

# The node-suite sample: a few tests per op family, fixed by name (none is in node_xfail.txt).
NODE_SAMPLE = """
    matmul_2d matmul_4d matmulinteger einsum_batch_matmul
    gemm_all_attributes gemm_transposeA gemm_default_vector_bias
    basic_conv_with_padding conv_with_strides_and_asymmetric_padding convtranspose
    convinteger_with_padding qlinearconv
    simple_rnn_defaults rnn_seq_length lstm_defaults lstm_with_peepholes
    gru_defaults gru_seq_length
    softmax_axis_1 softmax_large_number logsoftmax_axis_2 hardmax_axis_1
    layer_normalization_3d_axis1_epsilon layer_normalization_4d_axis_negative_1
    batchnorm_epsilon instancenorm_example lrn mvn
    averagepool_2d_pads_count_include_pad maxpool_3d_default maxpool_2d_uint8
    globalaveragepool maxpool_with_argmax_2d_precomputed_pads
    tanh sigmoid exp log sqrt pow erf sin cos atan elu selu softplus
    add_bcast div_bcast mul_uint8 reciprocal round where_long_example
    clip_default_int8_min mod_mixed_sign_float64 mod_mixed_sign_int8
    reduce_sum_keepdims_random reduce_mean_do_not_keepdims_random
    reduce_log_sum_exp_keepdims_random reduce_l2_negative_axes_keep_dims_random
    reduce_prod_default_axes_keepdims_random argmax_keepdims_random_select_last_index
    cumsum_2d_axis_1 top_k
    cast_FLOAT_to_DOUBLE cast_DOUBLE_to_FLOAT16 cast_BFLOAT16_to_FLOAT
    castlike_DOUBLE_to_FLOAT_expanded
    bitshift_right_uint64 max_int16 max_float64 pow_types_int64_int64
    quantizelinear_axis dequantizelinear dynamicquantizelinear
    det_nd dft resize_upsample_scales_cubic gridsample_bicubic roialign_aligned_true
    nonmaxsuppression_two_classes gather_elements_negative_indices scatternd_add
    onehot_with_axis blackmanwindow sce_mean_weight_ii_3d_log_prob loop11
""".split()

# libm functions whose results are exact or correctly rounded by definition (IEEE 754 or C99
# F.9): the same bits on every conforming target. Any other libm call may differ in the
# last place between glibc's x86-64 and AArch64 builds.
EXACT = {"sqrt", "fma", "fabs", "floor", "ceil", "round", "trunc", "rint", "nearbyint",
         "lrint", "llrint", "lround", "llround", "fmod", "remainder", "copysign", "fmin",
         "fmax", "ldexp", "scalbn", "frexp", "modf", "nextafter"}
LIBM = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sin", "cos", "tan",
        "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
        "erf", "erfc", "tgamma", "lgamma", "cbrt", "hypot"] + sorted(EXACT)
CALL = re.compile(r"\b(%s)f?\s*\(" % "|".join(LIBM))


def inexact_calls(c_file):
    """The libm functions the generated code calls that are not correctly rounded."""
    calls = {m.group(1) for m in CALL.finditer(open(c_file).read())}
    return sorted(calls - EXACT)


def model_case(path):
    """An example model: (onnx path, data sets [(inputs, expected outputs)], input types,
    output types, output names or None for a node test)."""
    sets, in_types, out_types, out_names = test_models.reference_sets(path)
    return path, sets, in_types, out_types, out_names


def conv_pool_case(work):
    """test_models' fused Conv + MaxPool chains, one random data set against onnx_np."""
    model = test_models.conv_pool_graph(False)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "conv_pool.onnx")
    test_models.kinds.save(model, path)
    feeds = test_models.kinds.random_inputs(model, seed=3)
    ref = test_models.kinds.reference(model, feeds)
    names = [v.name for v in model.graph.output]
    in_types, out_types = mlbctest.tensor_types(model)
    return path, [(list(feeds.values()), [ref[n] for n in names])], in_types, out_types, names


def graph_case(work, tag, graph):
    """One of test_models' graphs of kernel cases (GRAPH() gives the model and its feeds)
    against onnx_np (gen.py's, which has grouped and 1-D Convs)."""
    import gen
    model, feeds = graph()
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, tag + ".onnx")
    test_models.kinds.save(model, path)
    ref = gen.reference(model, feeds)
    names = [v.name for v in model.graph.output]
    in_types, out_types = mlbctest.tensor_types(model)
    ins = [feeds[v.name] for v in model.graph.input]
    return path, [(ins, [ref[n] for n in names])], in_types, out_types, names


def fused_conv_act():
    """test_models' fused Conv (+ BatchNormalization) (+ activation) chains and their random feeds."""
    model = test_models.conv_act_graph(False)
    return model, test_models.kinds.random_inputs(model, seed=3)


def fused_conv_mean():
    """test_models' Convs with the mean of each plane fused, and their random feeds."""
    model = test_models.conv_mean_graph(False)
    return model, test_models.kinds.random_inputs(model, seed=3)


def fused_norm_chain():
    """test_models' LayerNorm chains as torch exports them (opset 13), and their random feeds."""
    model = test_models.norm_chain_graph(False, 13)
    return model, test_models.kinds.random_inputs(model, seed=3)


def node_case(testdir):
    model = onnx.load(os.path.join(testdir, "model.onnx"))
    types = mlbctest.tensor_types(model)
    if types is None:
        raise Failure("not plain tensors: the node sample must list another test")

    def numbered(ds, kind):
        return sorted(glob.glob(os.path.join(ds, kind + "_*.pb")),
                      key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
    sets = [([test_node.load_pb(p) for p in numbered(ds, "input")],
             [test_node.load_pb(p) for p in numbered(ds, "output")])
            for ds in sorted(glob.glob(os.path.join(testdir, "test_data_set_*")))]
    return os.path.join(testdir, "model.onnx"), sets, types[0], types[1], None


def check_outputs(out_names, got, want):
    """Against the expected outputs, as test_node (mlbctest.compare) or, for a model (named
    outputs), as test_models (with its near-tie rule for an ArgMax over Q values if it has
    one)."""
    compare = out_names and getattr(test_models, "compare_outputs", None)
    if compare:
        return compare(out_names, got, want)
    for i, (g, w) in enumerate(zip(got, want)):
        mlbctest.compare(out_names[i] if out_names else "output %d" % i, g, w)


def run_case(mlbc, name, load, work):
    """One model: mlbc once, both builds, both runs on every data set. Returns a Stats of its
    outputs; raises Failure."""
    path, sets, in_types, out_types, out_names = load()
    work = os.path.join(work, name)
    shutil.rmtree(work, ignore_errors=True)
    c = mlbctest.compile_model(mlbc, path, work, build=False)
    cross = mlbctest.build_driver(work, CROSS_CC, CROSS_FLAGS, "driver-aarch64")
    native = mlbctest.build_driver(work, NATIVE_CC, NATIVE_FLAGS, "driver-x86_64")
    inexact = inexact_calls(c)
    st = Stats()
    for k, (ins, want) in enumerate(sets):
        specs = [(t, w.shape) for t, w in zip(out_types, want)]
        got = mlbctest.execute(cross, work, ins, in_types, specs, timeout=60, runner=(QEMU,))
        ref = mlbctest.execute(native, work, ins, in_types, specs, timeout=60)
        names = out_names or ["output %d" % i for i in range(len(want))]
        if len(sets) > 1:
            names = ["sample %d %s" % (k, n) for n in names]
        try:
            check_outputs(out_names, got, want)
        except Failure as e:
            raise Failure("sample %d: %s" % (k, e) if len(sets) > 1 else str(e))
        for what, g, r in zip(names, got, ref):
            bytewise, modulo_nan = mlbctest.same_bits(g, r)
            floating = g.dtype.kind == "f" or g.dtype == np.float16
            st.add(floating and bool(inexact), bytewise, modulo_nan)
            if not modulo_nan and not (floating and inexact):
                diff = np.flatnonzero(g.view(np.uint8).reshape(-1) !=
                                      r.view(np.uint8).reshape(-1))
                raise Failure("%s: AArch64 and x86-64 differ bitwise (byte %d of %d) though "
                              "the code calls no inexact libm function" % (
                                  what, diff[0] if len(diff) else -1, g.nbytes))
    st.inexact = inexact
    shutil.rmtree(work, ignore_errors=True)
    return st


class Stats:
    """Output counts: [all, bytewise identical, identical up to NaNs] for the outputs whose
    identity is asserted (exact) and for the floats computed through inexact libm calls."""

    def __init__(self):
        self.exact, self.libm, self.inexact = [0, 0, 0], [0, 0, 0], []

    def add(self, libm, bytewise, modulo_nan):
        c = self.libm if libm else self.exact
        c[0] += 1
        c[1] += bytewise
        c[2] += modulo_nan

    def merge(self, o):
        self.exact = [a + b for a, b in zip(self.exact, o.exact)]
        self.libm = [a + b for a, b in zip(self.libm, o.libm)]


def missing_tools():
    for tool, pkg in ((CROSS_CC, "gcc-aarch64-linux-gnu"), (QEMU, "qemu-user"),
                      (NATIVE_CC, "gcc")):
        if not shutil.which(tool):
            return "%s not found (Debian package %s; make deps installs it)" % (tool, pkg)
    if not os.path.exists("/usr/aarch64-linux-gnu/lib/libc.a"):
        return ("no static AArch64 C library /usr/aarch64-linux-gnu/lib/libc.a "
                "(Debian package libc6-dev-arm64-cross; make deps installs it)")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--filter", default="", help="regex on case names")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    t0 = time.time()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    datadir = os.path.abspath(os.path.join(args.build, "onnx-node-data"))
    work = os.path.abspath(os.path.join(args.build, "cross-work"))
    test_node.generate(datadir)
    xfail = test_node.read_xfail()

    cases = []
    for path in sorted(glob.glob(os.path.join(mlbctest.ROOT, "models", "*.onnx"))):
        cases.append(("model " + os.path.basename(path), lambda p=path: model_case(p)))
    cases.append(("model conv_pool", lambda: conv_pool_case(work)))
    for tag in ("strided", "depthwise", "pool"):
        graph = getattr(test_models, tag + "_variants_graph")
        cases.append(("model " + tag, lambda t=tag, g=graph: graph_case(work, t, g)))
    cases.append(("model conv_act", lambda: graph_case(work, "conv_act", fused_conv_act)))
    cases.append(("model conv_mean", lambda: graph_case(work, "conv_mean", fused_conv_mean)))
    cases.append(("model norm_chain", lambda: graph_case(work, "norm_chain", fused_norm_chain)))
    for t in NODE_SAMPLE:
        d = os.path.join(datadir, "node", "test_" + t)
        cases.append(("node test_" + t, lambda d=d: node_case(d)))
    cases = [c for c in cases if re.search(args.filter, c[0])]

    why = missing_tools()
    if why:
        print("FAIL AArch64 toolchain: " + why)
        print("0 passed, 1 failed, %d skipped" % len(cases))
        return 1

    def one(case):
        name, load = case
        short = name.split()[1]
        if short.startswith("test_") and short in xfail:
            return "skip", "listed in node_xfail.txt"
        if short.startswith("test_") and not os.path.isdir(os.path.join(datadir, "node", short)):
            return "fail", "not in this onnx's node suite: the sample must list another test"
        try:
            return "pass", run_case(mlbc, re.sub(r"\W", "_", short), load, work)
        except (Failure, KeyError, FileNotFoundError, ValueError) as e:
            return "fail", str(e)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, cases))

    passed = failed = skipped = 0
    tot = Stats()
    differing = []
    for (name, _), (status, r) in zip(cases, results):
        if status == "skip":
            skipped += 1
            print("SKIP %s: %s" % (name, r))
        elif status == "fail":
            failed += 1
            print("FAIL %s: %s" % (name, r))
        else:
            passed += 1
            tot.merge(r)
            n = r.exact[0] + r.libm[0]
            ident = r.exact[1] + r.libm[1]
            note = "%d output%s" % (n, "s" if n > 1 else "")
            if ident < n:
                note += ", %d bit-identical with x86-64 (libm: %s)" % (ident, " ".join(r.inexact))
                differing.append("%s (%s)" % (name.split()[1], " ".join(r.inexact)))
            print("PASS %s (%s)" % (name, note))
    print("AArch64 vs x86-64, bytewise: %d of %d outputs bit-identical; of these outputs, %d "
          "must be (%d are, %d up to NaN sign/payload) and %d are floats through inexact libm "
          "functions (%d are)" % (
              tot.exact[1] + tot.libm[1], tot.exact[0] + tot.libm[0], tot.exact[0],
              tot.exact[1], tot.exact[2], tot.libm[0], tot.libm[1]))
    if differing:
        print("last-bit differences (libm, not asserted): " + ", ".join(differing))
    print("total %.0f s" % (time.time() - t0))
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
