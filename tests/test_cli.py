"""The command line and the generated-code contract of SPEC sections 1-2: options, exit
statuses, warning-free C99 under gcc and clang, a header usable from C++, deterministic
output, the NAME_* API, and two contexts running in two threads at once."""
import argparse
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np

import mlbctest
from onnxshim import onnx
from onnx import helper, TensorProto as T

passed = failed = 0
STRICT = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-c"]


def check(ok, name, why=""):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    print(("PASS %s" if ok else "FAIL %s: " + str(why)[:600]) % name)


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def mlp_model(path, sym=None, seed=0, act="Relu"):
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((6, 5)).astype(np.float32)
    w2 = rng.standard_normal((5, 2)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node(act, ["h"], ["r"]),
         helper.make_node("MatMul", ["r", "w2"], ["logits"]),
         helper.make_node("Sigmoid", ["logits"], ["p"])],
        "mlp", [helper.make_tensor_value_info("x", T.FLOAT, [sym or 3, 6])],
        [helper.make_tensor_value_info("p", T.FLOAT, [sym or 3, 2]),
         helper.make_tensor_value_info("logits", T.FLOAT, [sym or 3, 2])],
        [onnx.numpy_helper.from_array(w1, "w1"), onnx.numpy_helper.from_array(w2, "w2")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return w1, w2


THREADS_C = r"""
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "mlp.h"
static float want[2][6];
static void *work(void *arg)
{
    mlp_ctx *ctx = arg;
    int i, k, bad = 0;
    for (i = 0; i < 20000 && !bad; i++) {
        if (mlp_run(ctx) != 0)
            return (void *)1;
        bad = memcmp(mlp_result_data(ctx, 0), want[ctx->arg0[0] > 0.5f], sizeof want[0]) != 0;
    }
    (void)k;
    return (void *)(long)bad;
}
int main(void)
{
    static mlp_ctx a, b;
    void *ra, *rb;
    pthread_t ta, tb;
    int i;
    mlp_init(&a);
    mlp_init(&b);
    for (i = 0; i < 18; i++) {
        a.arg0[i] = (float)(i % 5) / 5 + 1.0f;
        b.arg0[i] = -(float)(i % 7) / 7;
    }
    mlp_run(&a); memcpy(want[1], a.res0, sizeof want[1]);
    mlp_run(&b); memcpy(want[0], b.res0, sizeof want[0]);
    pthread_create(&ta, 0, work, &a);
    pthread_create(&tb, 0, work, &b);
    pthread_join(ta, &ra);
    pthread_join(tb, &rb);
    if (ra || rb || memcmp(want[0], want[1], sizeof want[0]) == 0)
        return 1;
    printf("ok\n");
    return 0;
}
"""

API_C = r"""
#include <stdio.h>
#include <string.h>
#include "mlp.h"
int main(void)
{
    mlp_ctx ctx;
    float x[18], p[6], l[6];
    int i;
    mlp_init(&ctx);
    for (i = 0; i < 18; i++) x[i] = (float)i / 10;
    if (mlp_lookup_arg_index("x") != 0 || mlp_lookup_arg_index("nope") != -1) return 1;
    if (mlp_lookup_result_index("logits") != 1 || mlp_lookup_result_index("p") != 0) return 2;
    if (mlp_desc.num_args != 1 || mlp_desc.num_results != 2 || mlp_desc.ctx_size != sizeof ctx) return 3;
    if (mlp_desc.args[0].rank != 2 || mlp_desc.args[0].shape[1] != 6 || mlp_desc.args[0].dtype != 1) return 4;
    if (mlp_eval(&ctx, x, p, l) != 0) return 5;
    memcpy(mlp_arg_data(&ctx, 0), x, sizeof x);
    if (mlp_desc.run(&ctx) != 0) return 6;
    if (memcmp(mlp_desc.result_data(&ctx, 0), p, sizeof p) || memcmp(mlp_result_data(&ctx, 1), l, sizeof l)) return 7;
    if (mlp_arg_data(&ctx, 1) != NULL || mlp_result_data(&ctx, 2) != NULL) return 8;
    for (i = 0; i < 6; i++) printf("%.9g %.9g\n", p[i], l[i]);
    return 0;
}
"""


def check_bucketize(mlbc, work):
    """The Bucketize fusion (compiler/passes/fuse.c) must be exact: boundary values, duplicates,
    unsorted boundaries, NaN and infinities, for both <= and > forms."""
    q = np.array([3, -1, 0.5, 3, 7, 0.5, -2], np.float32)
    x = np.array([[-5], [-2], [-1], [0.5], [0.75], [3], [6.9], [7], [9], [np.nan], [np.inf],
                  [-np.inf]], np.float32)
    for op, (a, b), want in (("LessOrEqual", ("q", "x"), (q[None, :] <= x).sum(1, keepdims=True)),
                             ("Greater", ("x", "q"), (x > q[None, :]).sum(1, keepdims=True))):
        g = helper.make_graph(
            [helper.make_node(op, list((a, b)), ["c"]), helper.make_node("Cast", ["c"], ["f"], to=T.FLOAT),
             helper.make_node("ReduceSum", ["f", "axes"], ["y"], keepdims=1)],
            "bucketize", [helper.make_tensor_value_info("x", T.FLOAT, [12, 1])],
            [helper.make_tensor_value_info("y", T.FLOAT, [12, 1])],
            [onnx.numpy_helper.from_array(q, "q"), onnx.numpy_helper.from_array(np.array([-1], np.int64), "axes")])
        path = os.path.join(work, "bucketize_%s.onnx" % op)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
        d = os.path.join(work, "bucketize_%s" % op)
        try:
            exe = mlbctest.compile_model(mlbc, path, d)
            fused = "bucketize" in open(os.path.join(d, "model.c")).read()
            got = mlbctest.execute(exe, d, [x], [1], [(1, (12, 1))])[0]
            mlbctest.compare("y", got, want.astype(np.float32))
            check(fused, "Bucketize fusion of ReduceSum(Cast(%s)) is exact" % op, "not fused")
        except mlbctest.Failure as e:
            check(False, "Bucketize fusion of ReduceSum(Cast(%s)) is exact" % op, e)


def check_hostile_names(mlbc, work):
    """Model, node and value names holding a comment's end, control bytes (0x01 is the one-trip
    loop marker of compiler/back/loops.c), a newline, DEL and a backslash: comments quote them
    without those bytes, the descriptors' C strings escape them; the C builds without a warning
    and computes the right thing."""
    bad = "a*/b\x01c\nd\x7f\\"
    x = np.array([-2, -0.5, 0, 3], np.float32)
    g = helper.make_graph(
        [helper.make_node("Relu", ["x" + bad], ["t" + bad], name="n" + bad),
         helper.make_node("Neg", ["t" + bad], ["y" + bad], name="m" + bad)], "g" + bad,
        [helper.make_tensor_value_info("x" + bad, T.FLOAT, [4])],
        [helper.make_tensor_value_info("y" + bad, T.FLOAT, [4])])
    path = os.path.join(work, "names.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    d = os.path.join(work, "names")
    try:
        exe = mlbctest.compile_model(mlbc, path, d)
        text = open(os.path.join(d, "model.c"), "rb").read() + open(os.path.join(d, "model.h"), "rb").read()
        stray = sorted({c for c in text if c < 0x20 and c != 0x0A or c == 0x7F})
        got = mlbctest.execute(exe, d, [x], [1], [(1, (4,))])[0]
        mlbctest.compare("y", got, -np.maximum(x, 0))
        check(not stray, "hostile names: comments made harmless, C strings escaped",
              "control bytes %s in the C" % stray)
    except mlbctest.Failure as e:
        check(False, "hostile names: comments made harmless, C strings escaped", e)


def check_planted_temp(mlbc, work):
    """mlbc writes OUT.c and OUT.h under temporary names beside them, then renames. In a
    shared folder another user may plant links under the names it would pick: mlbc must
    neither follow nor truncate them. Links are planted for the next 300 process ids (the
    names mlbc used to take, OUT.c.tmpPID); the test counts only if mlbc got one of them."""
    d = os.path.join(work, "planted")
    os.makedirs(d, exist_ok=True)
    victim = os.path.join(d, "victim")
    model = os.path.join(mlbctest.ROOT, "models", "inliner.onnx")
    for _ in range(5):
        with open(victim, "w") as f:
            f.write("keep me\n")
        last = int(open("/proc/sys/kernel/ns_last_pid").read())
        links = [os.path.join(d, "out.%s.tmp%d" % (ext, pid))
                 for pid in range(last + 1, last + 301) for ext in ("c", "h")]
        for link in links:
            os.symlink(victim, link)
        p = subprocess.Popen([mlbc, model, "-o", os.path.join(d, "out.c")],
                             stderr=subprocess.PIPE, text=True)
        err = p.communicate(timeout=120)[1]
        for link in filter(os.path.lexists, links):   # the old mlbc renamed one
            os.unlink(link)
        if last < p.pid <= last + 300:
            break
    else:
        check(False, "planted links at the temporary names: mlbc never ran under a planted pid")
        return
    left = sorted(set(os.listdir(d)) - {"victim", "out.c", "out.h"})
    check(p.returncode == 0 and open(victim).read() == "keep me\n" and not left and
          not os.path.islink(os.path.join(d, "out.c")) and
          "int inliner_run(" in open(os.path.join(d, "out.h")).read(),
          "output: links planted at the temporary names are neither followed nor truncated",
          (p.returncode, err[-200:], open(victim).read()[:40], left))


# Nodes whose second or later outputs nothing reads (bug: "internal: 'r19' has no buffer",
# Caffe2-era Dropout masks): each compiles, and its used output is right.
UNUSED_OUTPUTS = [  # (op, opset, attributes, outputs, used output's expected value of X)
    ("Dropout", 7, {}, ["y", "mask"], lambda x: x),
    ("Dropout", 13, {}, ["y", "mask"], lambda x: x),
    ("Split", 13, {"axis": 1}, ["y", "s1"], lambda x: x[:, :2]),
    ("TopK", 13, {"axis": 1}, ["y", "idx"], lambda x: -np.sort(-x, axis=1)[:, :2]),
    ("LayerNormalization", 17, {"axis": -1}, ["y", "mean", "isd"],
     lambda x: (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)),
    ("MaxPool", 13, {"kernel_shape": [2]}, ["y", "ind"], lambda x: np.maximum(x[:, :-1], x[:, 1:])),
    ("BatchNormalization", 7, {}, ["y", "mean", "var", "saved_mean", "saved_var"],
     lambda x: x / np.sqrt(1 + 1e-5)),
]


def check_unused_outputs(mlbc, work):
    x = np.array([[0.5, -1.25, 3.0, 2.0], [-4.0, 1.5, 0.25, -0.5]], np.float32)
    for op, opset, attrs, outs, want in UNUSED_OUTPUTS:
        name = "%s opset %d with unused outputs %s" % (op, opset, ", ".join(outs[1:]))
        xin, extra, inits = "x", [], []
        if op == "TopK":
            inits.append(onnx.numpy_helper.from_array(np.array([2], np.int64), "k"))
            extra = ["k"]
        if op == "LayerNormalization":
            inits += [onnx.numpy_helper.from_array(np.ones(4, np.float32), "s")]
            extra = ["s"]
        if op == "MaxPool":
            xin = "x3"
        if op == "BatchNormalization":  # Caffe2-era: all five outputs listed, only Y read
            for nm, val in (("s", 1), ("b", 0), ("m", 0), ("v", 1)):
                inits.append(onnx.numpy_helper.from_array(np.full(4, val, np.float32), nm))
            extra = ["s", "b", "m", "v"]
        nodes = [helper.make_node(op, [xin] + extra, outs, **attrs)]
        if op == "MaxPool":  # [2,4] -> [2,1,4] -> pool -> [2,1,3] -> [2,3]
            nodes.insert(0, helper.make_node("Unsqueeze", ["x", "ax"], ["x3"]))
            nodes[-1].output[0] = "y3"
            nodes.append(helper.make_node("Squeeze", ["y3", "ax"], ["y"]))
            inits.append(onnx.numpy_helper.from_array(np.array([1], np.int64), "ax"))
        y = want(x.astype(np.float64)).astype(np.float32)
        g = helper.make_graph(nodes, "unused", [helper.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", T.FLOAT, list(y.shape))], inits)
        tag = "unused_%s_%d" % (op, opset)
        path = os.path.join(work, tag + ".onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
        try:
            exe = mlbctest.compile_model(mlbc, path, os.path.join(work, tag))
            got = mlbctest.execute(exe, os.path.join(work, tag), [x], [1], [(1, y.shape)])[0]
            mlbctest.compare("y", got, y)
            check(True, name)
        except mlbctest.Failure as e:
            check(False, name, e)


def ulp_distance(a, b):
    """Units in the last place between float32 arrays (signed-magnitude bits made ordered)."""
    ia, ib = (np.where(v.view(np.int32) < 0, np.int64(-2**31) - v.view(np.int32),
                       v.view(np.int32)).astype(np.int64) for v in (a, b))
    return np.abs(ia - ib)


def activation_accuracy(mlbc, work, op, reference, call):
    """mlbc's own float OP over arrays (templates/vmath_*.c, the vectorised kernels a float Tanh,
    Sigmoid or Erf op, the LSTM/GRU gates and GELU run, CALL in the generated code): within
    1 ulp of the correctly rounded value (REFERENCE in double) on 2^20 inputs across every
    branch and erf's interval edges, -0 kept as tanh(-0) = erf(-0) = -0 and sigmoid(-0) =
    0.5, NaN kept."""
    d = os.path.join(work, op.lower())
    n = 1 << 20
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"])], op.lower(),
                          [helper.make_tensor_value_info("x", T.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [n])])
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, "act.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    rng = np.random.default_rng(1)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2**-12, 0.625, 9.0, 1e-30, -87.5,
                        -103.9, -120.0, 0.921875, np.nextafter(np.float32(0.921875), 0),
                        1.375, -3.875, 4.0, 3.92], np.float32)
    x = np.concatenate([special, rng.uniform(-12, 12, n // 4).astype(np.float32),
                        rng.uniform(-110, 110, n // 4).astype(np.float32),
                        (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-30, 1, n))
                        .astype(np.float32)])[:n]
    try:
        exe = mlbctest.compile_model(mlbc, model, d, cflags=("-O2",))
        y = mlbctest.execute(exe, d, [x], [T.FLOAT], [(T.FLOAT, [n])])[0]
    except mlbctest.Failure as e:
        check(False, "%s float accuracy" % op, e)
        return
    with np.errstate(over="ignore"):
        want = reference(x.astype(np.float64)).astype(np.float32)
    ok = ~np.isnan(x)
    err = ulp_distance(y[ok], want[ok])
    check(err.max() <= 1 and np.isnan(y[~ok]).all() and y[1] == want[1] and
          np.signbit(y[1]) == np.signbit(want[1]) and
          call in open(os.path.join(d, "model.c")).read(),
          "%s float: mlbc's own %s within 1 ulp of the correctly rounded result on %d inputs "
          "(max %d ulp)" % (op, op.lower(), n, err.max()), "at x = %r" % x[ok][err.argmax()])


def sigmoid64(x):
    """The logistic sigmoid in double, without cancellation on either side."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def erf64(x):
    """erf in double (math.erf, element by element)."""
    return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def special_values():
    """Initializers whose bits a decimal literal would not keep: NaN payloads, -0.0, denormals,
    float16 raw bits, the extreme integers."""
    f32 = np.array([0x7fc00001, 0xffa00000, 0x80000000, 0x00000001, 0x7f800000, 0x3f800000,
                    0x7f812345], dtype=np.uint32).view(np.float32)
    f64 = np.array([0x7ff8000000000001, 0x8000000000000000, 0x0000000000000001,
                    0x3ff0000000000001], dtype=np.uint64).view(np.float64)
    f16 = np.array([0x7e01, 0x8000, 0x0001, 0xfc00, 0x3c00], dtype=np.uint16).view(np.float16)
    i64 = np.array([-2**63, 2**63 - 1, -1, 0], dtype=np.int64)
    u64 = np.array([2**64 - 1, 2**63], dtype=np.uint64)
    i8 = np.array([-128, 127, 0, -1], dtype=np.int8)
    b = np.array([True, False, True])
    # the string literal's escapes: short octal before a digit, quotes, trigraphs
    u8 = np.frombuffer(b"\0" + b"1\7" + b"7\10" + b"0\77" + b"5\377" + b"0??=\"\\?\n9", dtype=np.uint8)
    return [f32, f64, f16, i64, u64, i8, b, u8]


BITS_C = r"""
#include <stdio.h>
#include "bits.h"
int main(int argc, char **argv)
{
    static bits_ctx c;
    int i;
    bits_init(&c);
    (void)argc; (void)argv;
    if (bits_run(&c))
        return 3;
    for (i = 0; i < bits_desc.num_results; i++)
        fwrite(bits_result_data(&c, i), 1, (size_t)bits_desc.results[i].bytes, stdout);
    return 0;
}
"""


def check_exact_bits(mlbc, work):
    """The weights reach the generated code bit for bit (they are stored as bytes)."""
    vals = special_values()
    inits = [onnx.numpy_helper.from_array(v, "c%d" % i) for i, v in enumerate(vals)]
    g = helper.make_graph(
        [helper.make_node("Identity", ["c%d" % i], ["y%d" % i]) for i in range(len(vals))],
        "bits", [], [helper.make_tensor_value_info("y%d" % i, t.data_type, list(v.shape))
                     for i, (v, t) in enumerate(zip(vals, inits))], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(work, "bits.onnx"))
    with open(os.path.join(work, "bits_main.c"), "w") as f:
        f.write(BITS_C)
    want = b"".join(v.tobytes() for v in vals)
    r = sh([mlbc, "bits.onnx", "-o", "bits.c"], cwd=work)
    for cc in ("gcc", "clang-19"):
        if r.returncode == 0:
            r = sh([cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2",
                    "bits_main.c", "bits.c", "-o", "bits", "-lm"], cwd=work)
        got = subprocess.run([os.path.join(work, "bits")], capture_output=True) \
            if r.returncode == 0 else r
        check(r.returncode == 0 and got.returncode == 0 and got.stdout == want,
              "weights keep their exact bits (NaN payloads, -0.0, float16, int64; %s)" % cc,
              r.stderr or got.returncode)


# Runs a model on fixed float inputs and writes its results' bytes. With WEIGHTS_FILE, the
# weights come from argv[1]: NAME_weights_load, or with argv[2] = OFFSET, NAME_weights_open
# of the file read into memory at that offset; a bad file prints its status and exits 10 + it.
RUN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include "NAME.h"
#ifdef WEIGHTS_FILE
static union { NAME_weights_file f; uint64_t align; unsigned char b[sizeof(NAME_weights_file) + 64]; } buf;
#endif
int main(int argc, char **argv)
{
    static NAME_ctx c;
    int i, k, status = 0;
    NAME_init(&c);
#ifdef WEIGHTS_FILE
    if (argc > 1) {
        const NAME_weights *w;
        if (argc > 2) {
            FILE *f = fopen(argv[1], "rb");
            size_t len = f ? fread(buf.b + atoi(argv[2]), 1, sizeof buf.f + 1, f) : 0;
            if (f)
                fclose(f);
            w = NAME_weights_open(buf.b + atoi(argv[2]), len, &status);
        } else {
            w = NAME_weights_load(argv[1], &buf.f, &status);
        }
        if (!w) {
            printf("status %d: %s\n", status, NAME_weights_error(status));
            return 10 + status;
        }
        NAME_set_weights(&c, w);
    }
#endif
    (void)argc; (void)argv;
    for (i = 0; i < NAME_desc.num_args; i++)
        for (k = 0; k < NAME_desc.args[i].count; k++)
            ((float *)NAME_arg_data(&c, i))[k] = (float)((k * 7 + i) % 11) / 5 - 1;
    status = NAME_run(&c);
    if (status) {
        printf("run %d\n", status);
        return status;
    }
    for (i = 0; i < NAME_desc.num_results; i++)
        fwrite(NAME_result_data(&c, i), 1, (size_t)NAME_desc.results[i].bytes, stdout);
    return 0;
}
"""


def build_run(mlbc, work, model, name, weights=None, cc="gcc", opt="-O0"):
    """mlbc MODEL -n NAME [--weights-file WEIGHTS], then RUN_C built with it (-O0 unless
    said: the bits do not depend on it, and it compiles fast): the program's path, or the
    failed step's CompletedProcess."""
    extra = ["--weights-file", weights] if weights else []
    r = sh([mlbc, model, "-o", name + ".c", "-n", name] + extra, cwd=work)
    if r.returncode:
        return r
    with open(os.path.join(work, name + "_run.c"), "w") as f:
        f.write(RUN_C.replace("NAME", name))
    r = sh([cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", opt] +
           (["-DWEIGHTS_FILE"] if weights else []) +
           [name + "_run.c", name + ".c", "-o", name, "-lm"], cwd=work)
    return r if r.returncode else os.path.join(work, name)


def run_bytes(prog, *args):
    if not isinstance(prog, str):
        return prog
    return subprocess.run([prog] + list(args), capture_output=True, timeout=60)


def weights_sum(b):
    """The weights file's checksum (compiler/back/weights.c) of bytes b, in Python."""
    h = 0xcbf29ce484222325
    for w in np.frombuffer(b, dtype="<u8"):
        h = ((h ^ int(w)) * 0x100000001b3) & (2**64 - 1)
        h ^= h >> 32
    return h


def forged(data, at, value, size=4):
    """A weights file with the header field at AT set to VALUE and the header's sum redone:
    only the field's own check can reject it."""
    b = bytearray(data)
    b[at:at + size] = value.to_bytes(size, "little")
    b[56:64] = weights_sum(bytes(b[:56])).to_bytes(8, "little")
    return bytes(b)


def check_weights_file(mlbc, work):
    """--weights-file: the same bits as the embedded build, a retrained model's file used by
    a program built once, and every bad file a clear status from the load call."""
    mlp = os.path.join(work, "mlp.onnx")
    retrained, other = os.path.join(work, "mlp_b.onnx"), os.path.join(work, "mlp_c.onnx")
    mlp_model(retrained, seed=1)
    mlp_model(other, act="Tanh")          # the same weights' shapes, another architecture
    for cc in ("gcc", "clang-19"):
        emb, prog = build_run(mlbc, work, mlp, "wemb", cc=cc, opt="-O2"), \
            build_run(mlbc, work, mlp, "wfile", "wfile.bin", cc=cc, opt="-O2")
        a, b = run_bytes(emb), run_bytes(prog, os.path.join(work, "wfile.bin"))
        check(a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout and a.stdout,
              "--weights-file: bit-identical to the embedded build (%s, -Wall -Wextra -pedantic)"
              % cc, (a.stderr, b.stderr))
    for m in ("cnn_small", "lstm_seq"):      # Conv; LSTM's panels packed from W and R
        model = os.path.join(mlbctest.ROOT, "models", m + ".onnx")
        e = run_bytes(build_run(mlbc, work, model, "x" + m))
        f = run_bytes(build_run(mlbc, work, model, "xf" + m, "xf.bin"), os.path.join(work, "xf.bin"))
        check(e.returncode == 0 and f.returncode == 0 and e.stdout == f.stdout,
              "--weights-file: bit-identical to the embedded build (models/%s.onnx)" % m,
              (e.stderr, f.stderr))
    if not isinstance(prog, str):
        return
    code = open(os.path.join(work, "wfile.c")).read()
    emb_b = run_bytes(build_run(mlbc, work, retrained, "wemb"))
    r = sh([mlbc, retrained, "-o", "wfile_b.c", "-n", "wfile", "--weights-file", "b.bin"],
           cwd=work)
    got = run_bytes(prog, os.path.join(work, "b.bin"))
    code_b = open(os.path.join(work, "wfile_b.c")).read().replace("wfile_b.h", "wfile.h")
    check(r.returncode == 0 and code_b == code and
          got.returncode == 0 and got.stdout == emb_b.stdout and got.stdout != b.stdout,
          "--weights-file: a retrained model's file, same program, its embedded build's bits",
          (r.stderr, got.stdout[:200]))
    data = open(os.path.join(work, "wfile.bin"), "rb").read()
    sh([mlbc, other, "-o", "other.c", "--weights-file", "other.bin"], cwd=work)
    bad = {
        "a file of another architecture (same sizes)": (open(os.path.join(work, "other.bin"), "rb").read(), 9, "another model"),
        "a file of another model": (None, 9, "another model"),
        "truncated payload": (data[:-8], 4, "truncated"),
        "truncated header": (data[:30], 4, "truncated"),
        "empty file": (b"", 4, "truncated"),
        "one byte too long": (data + b"\0", 5, "longer"),
        "a flipped payload bit": (data[:100] + bytes([data[100] ^ 1]) + data[101:], 11, "corrupted"),
        "a flipped header bit": (data[:20] + bytes([data[20] ^ 1]) + data[21:], 6, "header is corrupted"),
        "format version 2": (forged(data, 8, 2), 7, "version"),
        "other byte order": (forged(data, 12, 0x04030201), 8, "byte order"),
        "wrong payload size": (forged(data, 24, len(data) - 128, 8), 10, "sizes"),
        "not a weights file": (open(mlp, "rb").read(), 3, "not an mlbc weights file"),
    }
    for what, (content, status, words) in bad.items():
        path = os.path.join(work, "bad.bin")
        if content is None:
            path = os.path.join(work, "bits.bin")
            sh([mlbc, "bits.onnx", "-o", "bitsf.c", "--weights-file", path], cwd=work)
        else:
            open(path, "wb").write(content)
        r = run_bytes(prog, path)
        msg = r.stdout.decode(errors="replace")
        check(r.returncode == 10 + status and words in msg, "--weights-file: %s is refused (%s)"
              % (what, msg.strip()), (r.returncode, msg, r.stderr[-300:]))
    r = run_bytes(prog, os.path.join(work, "missing.bin"))
    check(r.returncode == 11 and b"cannot open" in r.stdout, "--weights-file: missing file",
          r.stdout)
    wfile = os.path.join(work, "wfile.bin")
    r0, r1 = run_bytes(prog, wfile, "0"), run_bytes(prog, wfile, "1")
    check(r0.stdout == b.stdout and r1.returncode == 22 and b"aligned" in r1.stdout,
          "--weights-file: a mapped image (NAME_weights_open), misaligned refused", r1.stdout)
    r = run_bytes(prog)
    check(r.returncode == 3, "--weights-file: run without weights returns 3", r.returncode)
    r = sh([mlbc, mlp, "-o", "nowhere.c", "--weights-file", "no/such/dir/w.bin"], cwd=work)
    check(r.returncode == 1 and "cannot write" in r.stderr and
          not os.path.exists(os.path.join(work, "nowhere.c")) and
          not os.path.exists(os.path.join(work, "nowhere.h")),
          "--weights-file: unwritable file is an error, no output left", r.stderr)


def check_weights_indices(mlbc, work):
    """Constant indices are checked against the data's size when mlbc compiles the model. With
    --weights-file they are read from a file at run time: a file whose checksums fit but whose
    indices are out of range must make run return 2 (the check of a run-time index), never
    read or write out of bounds and return 0. Gather, ScatterND, RoiAlign."""
    x = helper.make_tensor_value_info("x", T.FLOAT, [2, 1, 4, 4])
    g = helper.make_graph([
        helper.make_node("Gather", ["flat", "gi"], ["g"], axis=0),
        helper.make_node("ScatterND", ["flat", "si", "su"], ["s"]),
        helper.make_node("RoiAlign", ["x", "rois", "bi"], ["r"], output_height=2,
                         output_width=2),
        helper.make_node("Reshape", ["x", "shape"], ["flat"])], "indices", [x],
        [helper.make_tensor_value_info(n, T.FLOAT, None) for n in ("g", "s", "r")],
        [helper.make_tensor("gi", T.INT64, [2], [29, 3]),
         helper.make_tensor("si", T.INT64, [1, 1], [31]),
         helper.make_tensor("su", T.FLOAT, [1], [5.0]),
         helper.make_tensor("rois", T.FLOAT, [1, 4], [0, 0, 2, 2]),
         helper.make_tensor("bi", T.INT64, [1], [1]),
         helper.make_tensor("shape", T.INT64, [1], [32])])
    path = os.path.join(work, "indices.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]), path)
    prog = build_run(mlbc, work, path, "widx", "widx.bin")
    good = run_bytes(prog, os.path.join(work, "widx.bin"))
    check(good.returncode == 0, "--weights-file: constant indices model runs", good)
    if good.returncode:
        return
    data = open(os.path.join(work, "widx.bin"), "rb").read()
    for what, value, bad in (("Gather", [29, 3], [29, 1 << 40]), ("ScatterND", [31], [-33]),
                             ("RoiAlign", [1], [2])):
        old = np.array(value, np.int64).tobytes()
        at = data.index(old, 64)
        b = bytearray(data)
        b[at:at + len(old)] = np.array(bad, np.int64).tobytes()
        b[32:40] = weights_sum(bytes(b[64:])).to_bytes(8, "little")   # the sums redone
        b[56:64] = weights_sum(bytes(b[:56])).to_bytes(8, "little")
        path = os.path.join(work, "widx_bad.bin")
        open(path, "wb").write(bytes(b))
        r = run_bytes(prog, path)
        check(r.returncode == 2 and r.stdout == b"run 2\n",
              "--weights-file: a %s index out of range in the file makes run return 2" % what,
              (r.returncode, r.stdout[:16]))


# Runs a composite (NAME.h) on RUN_C's inputs once per selector given as two hex halves, in
# one context, and writes each run's results' bytes; an unknown selector prints run's status.
# With WEIGHTS_FILE, argv[1] is the weights file.
COMPOSITE_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include "NAME.h"
#ifdef WEIGHTS_FILE
static NAME_weights_file storage;
#endif
int main(int argc, char **argv)
{
    static NAME_ctx c;
    int i, k, a = 1, status, sel = NAME_lookup_arg_index("model_selector");
    NAME_init(&c);
#ifdef WEIGHTS_FILE
    {
        const NAME_weights *w = NAME_weights_load(argv[a++], &storage, &status);
        if (!w)
            return 10 + status;
        NAME_set_weights(&c, w);
    }
#endif
    for (i = 0; i < NAME_desc.num_args; i++)
        for (k = 0; i != sel && k < NAME_desc.args[i].count; k++)
            ((float *)NAME_arg_data(&c, i))[k] = (float)((k * 7 + i) % 11) / 5 - 1;
    for (; a + 1 < argc; a += 2) {
        uint64_t *s = NAME_arg_data(&c, sel);
        s[0] = strtoull(argv[a], NULL, 16);
        s[1] = strtoull(argv[a + 1], NULL, 16);
        status = NAME_run(&c);
        if (status) {
            printf("run %d\n", status);
            return status;
        }
        for (i = 0; i < NAME_desc.num_results; i++)
            fwrite(NAME_result_data(&c, i), 1, (size_t)NAME_desc.results[i].bytes, stdout);
    }
    return 0;
}
"""


def selector_halves(s):
    """LLVM's model_selector of string S: MD5 bytes 8..15 and 0..7, each little-endian."""
    import hashlib
    d = hashlib.md5(s.encode()).digest()
    return ["%x" % int.from_bytes(d[8:], "little"), "%x" % int.from_bytes(d[:8], "little")]


def splat_model(path, shape, op, value):
    """y = x OP c, c a splat of VALUE too large to embed (ConstantOfShape): computed once, by
    init, and kept in the arena."""
    g = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["shape"], ["c"],
                          value=onnx.numpy_helper.from_array(np.array([value], np.float32))),
         helper.make_node(op, ["x", "c"], ["p"]), helper.make_node("Neg", ["p"], ["logits"])],
        "splat", [helper.make_tensor_value_info("x", T.FLOAT, shape)],
        [helper.make_tensor_value_info("p", T.FLOAT, shape),
         helper.make_tensor_value_info("logits", T.FLOAT, shape)],
        [onnx.numpy_helper.from_array(np.array(shape, np.int64), "shape")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def check_intrinsic_headers(mlbc, work, mlp_c):
    """immintrin.h is included where a kernel writes intrinsics and only there: an elementwise
    model's paths are plain loops under target attributes, and the header alone was half the
    build of such a model. Both files must still build warning-free for x86-64 and AArch64."""
    inc = "#include <immintrin.h>"
    code = open(mlp_c).read()
    body = code.replace(inc, "")
    uses = any(w in body for w in ("_mm256_", "_mm512_", "__m256", "__m512"))
    check(uses and code.count(inc) == 1 and code.count("#include <arm_neon.h>") == 1,
          "intrinsics: an MLP's product tiles write them, the headers are included once")
    path = os.path.join(work, "splat_paths.onnx")
    splat_model(path, [64, 256], "Mul", 0.5)
    r = sh([mlbc, path, "-o", "splat_paths.c", "-n", "splat"], cwd=work)
    code = open(os.path.join(work, "splat_paths.c")).read() if r.returncode == 0 else ""
    check("splat_run_avx512" in code and inc not in code and "arm_neon.h" not in code,
          "intrinsics: an elementwise model has AVX-512 paths and no intrinsics header", r.stderr)
    for cc in ("gcc", "aarch64-linux-gnu-gcc"):
        if shutil.which(cc):
            r = sh([cc] + STRICT + ["splat_paths.c", "-o", "splat_paths.o"], cwd=work)
            check(r.returncode == 0, "intrinsics: the elementwise model builds with %s" % cc,
                  r.stderr)


def build_composite(mlbc, work, models, name, weights=None, cc="gcc"):
    """mlbc MODELS... -n NAME, then COMPOSITE_C built with it warning-free: the program's path,
    or the failed step's CompletedProcess."""
    extra = ["--weights-file", weights] if weights else []
    r = sh([mlbc] + models + ["-o", name + ".c", "-n", name] + extra, cwd=work)
    if r.returncode:
        return r
    with open(os.path.join(work, name + "_run.c"), "w") as f:
        f.write(COMPOSITE_C.replace("NAME", name))
    r = sh([cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O0"] +
           (["-DWEIGHTS_FILE"] if weights else []) +
           [name + "_run.c", name + ".c", "-o", name, "-lm"], cwd=work)
    return r if r.returncode else os.path.join(work, name)


def check_composite(mlbc, work):
    """Several models in one file (mlbc A B ... or SELECTOR=PATH): per selector exactly what
    that model compiled alone computes, in one context, selectors alternating; an unknown
    selector, interfaces that differ and bad usage refused clearly."""
    mlp_model(os.path.join(work, "ca.onnx"), seed=3)
    mlp_model(os.path.join(work, "cb.onnx"), seed=4, act="Tanh")
    mlp_model(os.path.join(work, "cc.onnx"), seed=5)
    alone = {m: run_bytes(build_run(mlbc, work, m + ".onnx", m + "_alone")).stdout
             for m in ("ca", "cb", "cc")}
    order = ["ca", "cb", "fast", "ca", "fast", "cb"]
    want = b"".join(alone[{"fast": "cc"}.get(s, s)] for s in order)
    halves = sum((selector_halves(s) for s in order), [])
    for cc in ("gcc", "clang-19"):
        prog = build_composite(mlbc, work, ["ca.onnx", "cb.onnx", "fast=cc.onnx"], "comp", cc=cc)
        got = run_bytes(prog, *halves)
        check(got.returncode == 0 and got.stdout == want and len(set(alone.values())) == 3,
              "composite: each selector computes what its model alone does, bytewise (3 models, "
              "%s, -Wall -Wextra -pedantic)" % cc, got.stderr or got.returncode)
    h = open(os.path.join(work, "comp.h")).read()
    check("#define comp_UNKNOWN_SELECTOR 4" in h and "comp_NUM_MODELS 3" in h and
          "0x%016x" % int(selector_halves("fast")[0], 16) in h,
          "composite: the header documents the selectors and the unknown-selector status")
    for what, sel in (("an unknown selector", selector_halves("slow")), ("no selector", ["0", "0"])):
        r = run_bytes(prog, *sel)
        check(r.returncode == 4 and r.stdout == b"run 4\n",
              "composite: %s: run returns NAME_UNKNOWN_SELECTOR (4)" % what, r.returncode)
    # Values computed once (each part's arena its own), and --weights-file: a composite of
    # splat models and a plain one, selectors alternating in one context.
    shape = [128, 160]                      # 80 KiB: too large to embed
    splat_model(os.path.join(work, "sadd.onnx"), shape, "Add", 0.75)
    splat_model(os.path.join(work, "smul.onnx"), shape, "Mul", 1.5)
    g = helper.make_graph(                  # t in the arena, where another's splat might be
        [helper.make_node("Neg", ["x"], ["t"]), helper.make_node("Relu", ["t"], ["p"]),
         helper.make_node("Neg", ["t"], ["logits"])],
        "plain", [helper.make_tensor_value_info("x", T.FLOAT, shape)],
        [helper.make_tensor_value_info("p", T.FLOAT, shape),
         helper.make_tensor_value_info("logits", T.FLOAT, shape)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(work, "splain.onnx"))
    alone = {m: run_bytes(build_run(mlbc, work, m + ".onnx", m + "_alone")).stdout
             for m in ("sadd", "smul", "splain")}
    order = ["sadd", "smul", "splain", "sadd", "smul"]
    want = b"".join(alone[s] for s in order)
    halves = sum((selector_halves(s) for s in order), [])
    models = ["sadd.onnx", "smul.onnx", "splain.onnx"]
    for weights in (None, os.path.join(work, "scomp.bin")):
        prog = build_composite(mlbc, work, models, "scomp", weights)
        got = run_bytes(prog, *([weights] if weights else []) + halves)
        src = open(os.path.join(work, "scomp.c")).read()
        check(got.returncode == 0 and got.stdout == want and "scomp_once_1(ctx);" in src,
              "composite: models with values computed once%s, selectors alternating: each "
              "model's bits" % (" and --weights-file" if weights else ""),
              got.stderr or got.returncode)
    # Refusals: another interface names the model and the tensor; usage errors.
    mlp_model(os.path.join(work, "csym.onnx"), sym=4)
    r = sh([mlbc, "ca.onnx", "csym.onnx", "-o", "bad.c"], cwd=work)
    check(r.returncode == 1 and "csym.onnx" in r.stderr and "input 'x' is float[4,6] here, "
          "float[3,6] in 'ca.onnx'" in r.stderr and not os.path.exists(os.path.join(work, "bad.c")),
          "composite: an input of another shape is refused, naming model and tensor", r.stderr)
    r = sh([mlbc, "ca.onnx", "sadd.onnx", "-o", "bad.c"], cwd=work)
    check(r.returncode == 1 and "sadd.onnx" in r.stderr and "input 'x'" in r.stderr,
          "composite: models with other inputs are refused", r.stderr)
    for args, words in ((["ca.onnx", "cb.onnx", "--info"], "take one model"),
                        (["ca.onnx", "cb.onnx", "--print"], "take one model"),
                        (["ca.onnx", "cb.onnx", "--emit-onnx", "x.onnx"], "take one model"),
                        (["ca.onnx", "x/ca.onnx", "-o", "x.c"], "two models have the selector"),
                        (["=ca.onnx", "cb.onnx", "-o", "x.c"], "SELECTOR=MODEL")):
        r = sh([mlbc] + args, cwd=work)
        check(r.returncode == 2 and words in r.stderr, "composite: usage error %s" % args,
              (r.returncode, r.stderr))


def timed(cmd, cwd):
    """Runs cmd; returns (exit status, wall seconds, peak RSS in MB, stderr)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, time.time() - t0, ru.ru_maxrss / 1024, err


def check_scale(mlbc, work):
    """A multi-million-parameter MLP (2.1M weights, 1024-1024-1024): mlbc and gcc -O2 compile
    it and it computes what numpy does. Its figures are printed, not asserted (issue 10's
    targets are for 11.5M parameters: bench/scale.py)."""
    rng = np.random.default_rng(11)
    widths = [1024, 1024, 1024]
    x = rng.standard_normal((1, widths[0])).astype(np.float32)
    nodes, inits, h, y = [], [], "x", x.astype(np.float64)
    for i in range(len(widths) - 1):
        w = (rng.standard_normal((widths[i], widths[i + 1])) / 32).astype(np.float32)
        inits.append(onnx.numpy_helper.from_array(w, "w%d" % i))
        nodes.append(helper.make_node("MatMul", [h, "w%d" % i], ["h%d" % i]))
        h = "h%d" % i
        y = y @ w
    g = helper.make_graph(nodes, "scale", [helper.make_tensor_value_info("x", T.FLOAT, x.shape)],
                          [helper.make_tensor_value_info(h, T.FLOAT, y.shape)], inits)
    d = os.path.join(work, "scale")
    os.makedirs(d)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(d, "scale.onnx"))
    rc, t_mlbc, rss_mlbc, err = timed([mlbc, "scale.onnx", "-o", "model.c", "-n", "model"], d)
    if rc:
        check(False, "2.1M parameters: mlbc", err)
        return
    rc, t_cc, rss_cc, err = timed(["gcc", "-O2", "-c", "model.c", "-o", "model.o"], d)
    obj = os.path.getsize(os.path.join(d, "model.o")) if rc == 0 else 0
    print("     2.1M parameters: mlbc %.2f s, %.0f MB; gcc -O2 -c %.1f s, %.0f MB; object %.2f "
          "bytes per parameter" % (t_mlbc, rss_mlbc, t_cc, rss_cc, obj / (1024 * 1024 * 2)))
    try:
        exe = mlbctest.build_driver(d, cflags=("-O0",))
        got = mlbctest.execute(exe, d, [x], [1], [(1, y.shape)])[0]
        mlbctest.compare("y", got, y)
        check(rc == 0, "2.1M parameters: compiled by mlbc and gcc -O2, computes numpy's result",
              err)
    except mlbctest.Failure as e:
        check(False, "2.1M parameters: compiled by mlbc and gcc -O2, computes numpy's result", e)


def check_file_cycles(build):
    """The compiler's files call each other one way (front end -> IR -> passes -> operators
    -> back end); the one cycle allowed is infer.c <-> lower.c (lowering a Loop infers its
    copies; the sweep lowers what it meets). Read from the objects' symbol tables."""
    objs = [f for f in os.listdir(build) if f.endswith(".o") and
            not f.startswith(("onnx.pb", "text_", "templates", "test"))]
    defined, owner, calls = {}, {}, {}
    for o in objs:
        out = sh(["nm", os.path.join(build, o)]).stdout.split("\n")
        defined[o] = {p[2] for p in (l.split() for l in out) if len(p) == 3 and p[1] in "TDBR"}
        calls[o] = {p[1] for p in (l.split() for l in out) if len(p) == 2 and p[0] == "U"}
    for o, syms in defined.items():
        for sym in syms:
            owner[sym] = o
    deps = {o: {owner[s] for s in calls[o] if s in owner and owner[s] != o} for o in objs}

    def reaches(a, b):
        seen, todo = set(), [a]
        while todo:
            x = todo.pop()
            for y in deps[x] - seen:
                seen.add(y)
                todo.append(y)
        return b in seen
    cycles = sorted({tuple(sorted((a, b))) for a in objs for b in deps[a] if reaches(b, a)})
    check(cycles == [("infer.o", "lower.o")] or (not cycles and "lower.o" in objs),
          "compiler files: no call cycle but infer.c <-> lower.c", cycles)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    work = os.path.abspath(os.path.join(args.build, "cli-work"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, "mlp.onnx")
    w1, w2 = mlp_model(model)

    r = sh([mlbc, "--version"])
    check(r.returncode == 0 and r.stdout.startswith("mlbc "), "--version")
    r = sh([mlbc, "-h"])
    check(r.returncode == 0 and "--dim SYM=N" in r.stdout and "--blas" in r.stdout and
          "--weights-file" in r.stdout and "-v" in r.stdout, "-h")
    for bad in ([], [model], [model, "-o"], [model, "--frob", "-o", "x.c"], [model, "-x", "yaml", "-o", "x.c"],
                [model, "-o", "x.c", "-n", "1bad"], [model, "-o", "x.c", "--dim", "N"]):
        r = sh([mlbc] + bad, cwd=work)
        check(r.returncode == 2 and r.stderr.startswith("mlbc: error: "), "usage error %s" % bad[1:],
              "status %d %r" % (r.returncode, r.stderr))
    r = sh([mlbc, "missing.onnx", "-o", "x.c"], cwd=work)
    check(r.returncode == 1 and "cannot read" in r.stderr, "missing model file", r.stderr)

    r = sh([mlbc, model, "-o", "mlp.c"], cwd=work)
    check(r.returncode == 0 and os.path.exists(os.path.join(work, "mlp.h")), "compile: default name and header", r.stderr)
    c1 = open(os.path.join(work, "mlp.c")).read()
    sh([mlbc, model, "-o", "again.c", "-n", "mlp", "--header", "mlp2.h"], cwd=work)
    c2 = open(os.path.join(work, "again.c")).read().replace('#include "mlp2.h"', '#include "mlp.h"')
    check(c1 == c2 and os.path.exists(os.path.join(work, "mlp2.h")), "deterministic output, --header")
    for cc in ("gcc", "clang-19"):
        r = sh([cc] + STRICT + ["mlp.c", "-o", "mlp_%s.o" % cc], cwd=work)
        check(r.returncode == 0, "%s -std=c99 -Wall -Wextra -pedantic clean" % cc, r.stderr)
    with open(os.path.join(work, "cxx.cc"), "w") as f:
        f.write('#include "mlp.h"\nint main() { mlp_ctx c; mlp_init(&c); return mlp_run(&c); }\n')
    r2 = sh(["g++", "-Wall", "-Wextra", "-Werror", "-c", "cxx.cc"], cwd=work)
    check(r2.returncode == 0, "header usable from C++", r2.stderr)

    r = sh([mlbc, model, "-o", "wrap.c", "-n", "mlp_w", "--cxx-wrapper"], cwd=work)
    with open(os.path.join(work, "wrap.cc"), "w") as f:
        f.write('#include "wrap.h"\n#include <memory>\nint main() {\n'
                '  auto m = std::make_unique<mlbc::mlp_w>();\n'
                '  if (m->LookupArgIndex("feed_x") != 0 || m->LookupArgIndex("x") != 0) return 1;\n'
                '  if (m->LookupResultIndex("fetch_logits") != 1 || m->LookupArgIndex("feed_y") != -1) return 2;\n'
                '  static_cast<float *>(m->arg_data(0))[0] = 1.0f;\n'
                '  return m->Run() != 0 || m->result_data(0) == nullptr;\n}\n')
    r = sh(["gcc", "-std=c99", "-c", "wrap.c"], cwd=work)
    r2 = sh(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "wrap.cc", "wrap.o", "-o", "wrap", "-lm"], cwd=work)
    out = sh([os.path.join(work, "wrap")]) if r.returncode == 0 and r2.returncode == 0 else r2
    check(out.returncode == 0, "--cxx-wrapper: ReleaseModeModelRunner-style class", out.stderr)

    with open(os.path.join(work, "api.c"), "w") as f:
        f.write(API_C)
    r = sh(["gcc", "-std=c99", "-O2", "api.c", "mlp.c", "-o", "api", "-lm"], cwd=work)
    ok = r.returncode == 0
    out = sh([os.path.join(work, "api")]) if ok else r
    if ok and out.returncode == 0:
        got = np.array([[float(v) for v in line.split()] for line in out.stdout.split("\n") if line])
        x = (np.arange(18, dtype=np.float32) / 10).reshape(3, 6)
        logits = np.maximum(x @ w1, 0) @ w2
        want = np.stack([1 / (1 + np.exp(-logits.ravel())), logits.ravel()], 1)
        check(np.allclose(got, want, rtol=1e-5, atol=1e-6), "API: lookup, descriptor, eval, arg/result data",
              "values differ")
    else:
        check(False, "API: lookup, descriptor, eval, arg/result data", out.stderr or out.returncode)

    with open(os.path.join(work, "threads.c"), "w") as f:
        f.write(THREADS_C)
    r = sh(["gcc", "-std=c99", "-O2", "-pthread", "threads.c", "mlp.c", "-o", "threads", "-lm"], cwd=work)
    out = sh([os.path.join(work, "threads")]) if r.returncode == 0 else r
    check(out.returncode == 0, "two contexts in two threads", out.stderr)

    r = sh([mlbc, model, "--info"], cwd=work)
    check(r.returncode == 0 and "float[3,6]" in r.stdout and "parameters      40" in r.stdout and
          "flops per run" in r.stdout and "scratch bytes" in r.stdout, "--info", r.stdout + r.stderr)

    symm = os.path.join(work, "sym.onnx")
    mlp_model(symm, sym="N")
    r = sh([mlbc, symm, "-o", "sym.c"], cwd=work)
    check(r.returncode == 1 and "--dim N=" in r.stderr and not os.path.exists(os.path.join(work, "sym.c")),
          "unbound symbolic dimension names --dim", r.stderr)
    r = sh([mlbc, symm, "-o", "sym.c", "--dim", "N=4", "--info"], cwd=work)
    check(r.returncode == 0 and "float[4,6]" in r.stdout, "--dim N=4 binds the dimension", r.stderr)

    r = sh([mlbc, model, "--emit-onnx", "copy.onnx"], cwd=work)
    same = r.returncode == 0 and onnx.load(os.path.join(work, "copy.onnx")) == onnx.load(model)
    check(same, "--emit-onnx of a binary model is the same model", r.stderr)
    nameless = os.path.join(mlbctest.HERE, "bad", "nameless_input.onnx")
    r = sh([mlbc, nameless, "--emit-onnx", "nameless.onnx"], cwd=work)
    same = r.returncode == 0 and open(nameless, "rb").read() == \
        open(os.path.join(work, "nameless.onnx"), "rb").read()
    check(same, "--emit-onnx keeps an absent name absent (byte-identical)", r.stderr)

    check_intrinsic_headers(mlbc, work, os.path.join(work, "mlp.c"))
    check_bucketize(mlbc, work)
    check_hostile_names(mlbc, work)
    check_planted_temp(mlbc, work)
    check_unused_outputs(mlbc, work)
    check_exact_bits(mlbc, work)
    check_weights_file(mlbc, work)
    check_weights_indices(mlbc, work)
    check_scale(mlbc, work)
    check_file_cycles(os.path.abspath(args.build))
    check_composite(mlbc, work)

    activation_accuracy(mlbc, work, "Tanh", np.tanh, "mlbc_vtanh_f32(1048576, ")
    activation_accuracy(mlbc, work, "Sigmoid", sigmoid64, "mlbc_vsigmoid_f32(1048576, ")
    activation_accuracy(mlbc, work, "Erf", erf64, "mlbc_verf_f32(1048576, ")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
