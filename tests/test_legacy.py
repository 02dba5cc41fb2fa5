"""Models as older exporters write them (Caffe2-era and early PyTorch, opsets 1-6): legacy
broadcasting (broadcast=1 with an axis, PRelu's per-channel slope), Cast's type by name,
consumed_inputs and is_test attributes, Concat's default axis; and splat constants too large
to embed (ConstantOfShape, Expand of a scalar), which NAME_init computes once instead of every
run. Each model is compiled, built warning-free, run and compared with numpy."""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

import mlbctest
from onnxshim import onnx
from onnx import helper, numpy_helper, TensorProto as T

passed = failed = 0
F = np.float32
RNG = np.random.default_rng(6)


def check(ok, name, why=""):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    print(("PASS %s" if ok else "FAIL %s: " + str(why)[:600]) % name)


def rand(*shape):
    return RNG.standard_normal(shape).astype(F)


def prelu(x, s):
    return np.where(x < 0, x * s, x)


# (name, opset, nodes, inputs {name: array}, initializers {name: array}, reference of the
# inputs and initializers as one dict -> the output y)
def cases():
    a4, a3, a2 = rand(2, 3, 4, 5), rand(2, 3, 4), rand(2, 3)
    x4, pos = rand(1, 3, 4, 4), np.abs(rand(2, 3, 2)) + 0.5
    node = helper.make_node
    return [
        ("Add, broadcast=1 axis=1", 6, [node("Add", ["a", "b"], ["y"], broadcast=1, axis=1)],
         {"a": a4}, {"b": rand(3)}, lambda v: v["a"] + v["b"][:, None, None]),
        ("Mul, broadcast=1 axis=0, B of rank 2", 6,
         [node("Mul", ["a", "b"], ["y"], broadcast=1, axis=0)],
         {"a": a3}, {"b": rand(2, 3)}, lambda v: v["a"] * v["b"][:, :, None]),
        ("Add, broadcast=1 axis=0, B [2, 1] against A [2, 3] (PyTorch's converted models)", 6,
         [node("Add", ["a", "b"], ["y"], broadcast=1, axis=0)],
         {"a": a2}, {"b": rand(2, 1)}, lambda v: v["a"] + v["b"]),
        ("Add, broadcast=1 axis=0, B [1, 3] against A [2, 3]", 6,
         [node("Add", ["a", "b"], ["y"], broadcast=1, axis=0)],
         {"a": a2}, {"b": rand(1, 3)}, lambda v: v["a"] + v["b"]),
        ("Mul, broadcast=1 axis=0, B [2, 1] against A [2, 3, 4]", 6,
         [node("Mul", ["a", "b"], ["y"], broadcast=1, axis=0)],
         {"a": a3}, {"b": rand(2, 1)}, lambda v: v["a"] * v["b"][:, :, None]),
        ("Sub, broadcast=1 suffix matching", 6, [node("Sub", ["a", "b"], ["y"], broadcast=1)],
         {"a": a4}, {"b": rand(4, 5)}, lambda v: v["a"] - v["b"]),
        ("Div, broadcast=1 axis=1, B a run-time input", 6,
         [node("Div", ["a", "b"], ["y"], broadcast=1, axis=1)],
         {"a": a3, "b": np.abs(rand(3)) + 1}, {}, lambda v: v["a"] / v["b"][:, None]),
        ("Pow, broadcast=1 axis=1", 6, [node("Pow", ["a", "b"], ["y"], broadcast=1, axis=1)],
         {"a": pos}, {"b": np.array([1, 2, 3], F)}, lambda v: v["a"] ** v["b"][:, None]),
        ("Greater, broadcast=1 axis=0", 6,
         [node("Greater", ["a", "b"], ["y"], broadcast=1, axis=0)],
         {"a": a2}, {"b": np.array([0, 0.5], F)}, lambda v: v["a"] > v["b"][:, None]),
        ("And, broadcast=1 axis=0", 6,
         [node("Greater", ["a", "z"], ["p"]), node("Less", ["c", "z1"], ["q"]),
          node("And", ["p", "q"], ["y"], broadcast=1, axis=0)],
         {"a": a2, "c": np.array([-1, 1], F)}, {"z": np.zeros((2, 3), F), "z1": np.zeros(2, F)},
         lambda v: (v["a"] > 0) & (v["c"] < 0)[:, None]),
        ("PRelu opset 6, a slope per channel", 6, [node("PRelu", ["x", "s"], ["y"])],
         {"x": x4}, {"s": np.array([0.1, 0.2, 0.3], F)},
         lambda v: prelu(v["x"], v["s"][:, None, None])),
        ("PRelu opset 6, one shared slope", 6, [node("PRelu", ["x", "s"], ["y"])],
         {"x": x4}, {"s": np.array([0.25], F)}, lambda v: prelu(v["x"], 0.25)),
        ("Cast opset 1, type by name", 1, [node("Cast", ["a"], ["y"], to="INT32")],
         {"a": a2 * 10}, {}, lambda v: (v["a"] * 1).astype(np.int32)),
        ("Cast opset 5, DOUBLE by name", 5, [node("Cast", ["a"], ["y"], to="DOUBLE")],
         {"a": a2}, {}, lambda v: v["a"].astype(np.float64)),
        ("Add and Relu opset 1 with consumed_inputs", 1,
         [node("Add", ["a", "a"], ["s"], consumed_inputs=[0, 0]),
          node("Relu", ["s"], ["y"], consumed_inputs=[0])],
         {"a": a2}, {}, lambda v: np.maximum(v["a"] + v["a"], 0)),
        ("Gemm opset 6, broadcast=1 bias", 6,
         [node("Gemm", ["a", "w", "c"], ["y"], broadcast=1)],
         {"a": a2}, {"w": rand(3, 4), "c": rand(4)}, lambda v: v["a"] @ v["w"] + v["c"]),
        ("BatchNormalization opset 6, is_test", 6,
         [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], is_test=1, spatial=1)],
         {"x": x4}, {"s": np.array([1, 2, 3], F), "b": np.array([0, 1, 2], F),
                     "m": np.array([0.5, 0, -0.5], F), "v": np.array([1, 4, 0.25], F)},
         lambda v: (v["x"] - v["m"][:, None, None]) / np.sqrt(v["v"][:, None, None] + 1e-5)
         * v["s"][:, None, None] + v["b"][:, None, None]),
        ("Dropout opset 6, is_test", 6, [node("Dropout", ["a"], ["y"], is_test=1)],
         {"a": a2}, {}, lambda v: v["a"]),
        ("Concat opset 3, default axis 1", 3, [node("Concat", ["a", "a"], ["y"])],
         {"a": a2}, {}, lambda v: np.concatenate([v["a"], v["a"]], 1)),
    ]


def save(path, name, opset, nodes, inputs, inits, y):
    elem = {np.dtype(F): T.FLOAT, np.dtype(np.float64): T.DOUBLE, np.dtype(np.int32): T.INT32,
            np.dtype(bool): T.BOOL}
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(k, T.FLOAT, a.shape) for k, a in inputs.items()],
        [helper.make_tensor_value_info("y", elem[y.dtype], y.shape)],
        [numpy_helper.from_array(a, k) for k, a in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)


def check_legacy(mlbc, work):
    for i, (name, opset, nodes, inputs, inits, ref) in enumerate(cases()):
        d = os.path.join(work, "legacy%d" % i)
        y = np.asarray(ref(dict(inputs, **inits)))
        path = os.path.join(work, "legacy%d.onnx" % i)
        save(path, "legacy", opset, nodes, inputs, inits, y)
        try:
            exe = mlbctest.compile_model(mlbc, path, d)
            elem = {np.dtype(F): 1, np.dtype(np.float64): 11, np.dtype(np.int32): 6,
                    np.dtype(bool): 9}[y.dtype]
            got = mlbctest.execute(exe, d, list(inputs.values()), [1] * len(inputs),
                                   [(elem, y.shape)])[0]
            mlbctest.compare("y", got, y)
            check(True, name)
        except mlbctest.Failure as e:
            check(False, name, e)


# Legacy models mlbc must refuse, with the message naming what is wrong.
BAD = [
    ("Add, broadcast=1 with B not matching A from axis",
     [helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=2)], 6,
     "does not match A [2,3,4,5] from axis 2"),
    ("Add, broadcast=1 with an axis past A's rank",
     [helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=4)], 6,
     "axis 4 does not place B [3] within A"),
    ("Cast to a type name that does not exist",
     [helper.make_node("Cast", ["a"], ["y"], to="FLOAT128")], 1,
     "cannot cast to element type 'FLOAT128'"),
]


def check_bad(mlbc, work):
    for i, (name, nodes, opset, want) in enumerate(BAD):
        path = os.path.join(work, "bad%d.onnx" % i)
        save(path, "bad", opset, nodes, {"a": np.zeros((2, 3, 4, 5), F)}, {"b": np.zeros(3, F)},
             np.zeros((2, 3, 4, 5), F))
        r = mlbctest.run([mlbc, path, "-o", os.path.join(work, "bad%d.c" % i)])
        ok = r.returncode == 1 and want in r.stderr and "error:" in r.stderr
        check(ok and not os.path.exists(os.path.join(work, "bad%d.c" % i)), "refused: " + name,
              "exit %d: %s" % (r.returncode, r.stderr.strip()))


# Runs the model three times in one context, on three inputs, and writes each run's result:
# a splat computed by init must survive the runs (nothing else may reuse its bytes).
RUNS_C = r"""
#include <stdio.h>
#include <string.h>
#include "model.h"
static model_ctx ctx;
int main(int argc, char **argv)
{
    static float x[256 * 1024], y[3][256 * 1024];
    int r, i;
    model_init(&ctx);
    SET_WEIGHTS
    for (r = 0; r < 3; r++) {
        for (i = 0; i < 256 * 1024; i++)
            x[i] = (float)((i * 7 + r * 13) % 29) - 14.0f;
        if (model_eval(&ctx, x, y[r]))
            return 3;
    }
    fwrite(y, sizeof y, 1, stdout);
    (void)argc;
    (void)argv;
    return 0;
}
"""


def check_splats(mlbc, work):
    """y = -(-(Relu(x) + c) * e), c = ConstantOfShape 0.5, e = Expand(2, shape): both 1 MiB,
    and c dead before t and u are made, so a plan that did not keep c's bytes would give them
    to t or u."""
    shape = np.array([256, 1024], np.int64)
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["c"],
                              value=numpy_helper.from_array(np.array([0.5], F))),
             helper.make_node("Expand", ["two", "shape"], ["e"]),
             helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "c"], ["s"]),
             helper.make_node("Neg", ["s"], ["t"]), helper.make_node("Mul", ["t", "e"], ["u"]),
             helper.make_node("Neg", ["u"], ["y"])]
    g = helper.make_graph(nodes, "splats", [helper.make_tensor_value_info("x", T.FLOAT, [256, 1024])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [256, 1024])],
                          [numpy_helper.from_array(shape, "shape"),
                           numpy_helper.from_array(np.array(2, F), "two")])
    path = os.path.join(work, "splats.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    for mode in ("embedded", "weights file"):
        splats_run(mlbc, path, os.path.join(work, "splats_" + mode.split()[0]), mode)


# With a weights file, NAME_set_weights computes the splats; before it, run returns 3.
FILE_SETUP = r"""{
        static model_weights_file storage;
        int status;
        const model_weights *w = model_weights_load(argv[1], &storage, &status);
        if (!w || model_run(&ctx) != 3)
            return 5;
        model_set_weights(&ctx, w);
    }"""


def splats_run(mlbc, path, d, mode):
    file = mode == "weights file"
    wfile = os.path.join(d, "model.weights")
    c = mlbctest.compile_model(mlbc, path, d, build=False,
                               extra=["--weights-file", wfile] if file else [])
    src = open(c).read()
    run_fn = src[src.index("int model_run("):]
    run_fn = run_fn[:run_fn.index("\n}\n")]
    once_fn = src[src.index("static void model_once("):] if "model_once(" in src else ""
    caller = src[src.index("void model_set_weights(" if file else "void model_init("):]
    caller = caller[:caller.index("\n}\n")]
    fills = [k for k in ("ConstantOfShape", "Expand") if k in run_fn or k not in once_fn]
    check(not fills and "model_once(ctx);" in caller,
          "%s: splat constants are computed once (model_once, by %s), not by run" % (
              mode, "set_weights" if file else "init"), "computed in run: %s" % fills)
    with open(os.path.join(d, "runs.c"), "w") as f:
        f.write(RUNS_C.replace("SET_WEIGHTS", FILE_SETUP if file else ""))
    exe = os.path.join(d, "runs")
    r = mlbctest.run(["cc", "-std=c99", "-O1", "-Wall", "-Wextra", "-pedantic", "-I", d,
                      os.path.join(d, "runs.c"), c, "-o", exe, "-lm"])
    if r.returncode or "warning:" in r.stderr:
        check(False, "%s: splats: three runs in one context" % mode, r.stderr)
        return
    out = subprocess.run([exe, wfile], capture_output=True, timeout=30)
    got = np.frombuffer(out.stdout, F).reshape(3, 256 * 1024) if out.returncode == 0 else None
    i = np.arange(256 * 1024)
    want = [(np.maximum(((i * 7 + r * 13) % 29) - 14.0, 0) + 0.5) * 2 for r in range(3)]
    ok = got is not None and all(np.array_equal(got[r], np.array(want[r], F)) for r in range(3))
    check(ok, "%s: splats: three runs in one context give the reference each time" % mode,
          "status %d" % out.returncode)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    work = os.path.abspath(os.path.join(args.build, "legacy-tests"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    check_legacy(mlbc, work)
    check_bad(mlbc, work)
    check_splats(mlbc, work)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
