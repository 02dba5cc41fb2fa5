"""Write a policy_net.Net as an ONNX inliner policy with onnx.helper (no PyTorch).

The graph has MLGO's shape and the pattern of models/inliner.onnx, so that mlbc's Bucketize
fusion (compiler/passes/fuse.c) turns each feature's quantisation into a binary search:

  x_i (int64[1]) -> Cast(float) -> Unsqueeze(axes 1) [1,1]
     -> LessOrEqual(q_i [n], .) [1,n] -> Cast(float) -> ReduceSum(axes 1, keepdims) [1,1]
     -> Div(n) -> v ; Mul(v, v) -> v^2
  Concat(axis 1) of [v_0, v_0^2, v_1, ...] [1,70]
  -> Gemm(W1, b1, transB) -> Relu -> Gemm -> Relu -> Gemm -> Relu -> Gemm [1,2]
  -> ArgMax(axis 1, keepdims 0) -> inlining_decision int64[1]

Inputs are named like LLVM's features (the 35 of the network), the output
"inlining_decision", as mlbc-serve and LLVM's release-mode runner bind them by name.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import onnxshim  # noqa: E402,F401  (python3-onnx 1.12 under numpy 1.24)
from onnx import TensorProto, checker, helper, numpy_helper  # noqa: E402

from policy_net import NET_FEATURES  # noqa: E402

OPSET = 13


def to_model(net, name="mlbc_trained_inliner"):
    nodes, inits = [], []

    def const(nm, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    axes1 = const("axes_1", np.array([1], np.int64))
    parts = []
    for j, (feat, q) in enumerate(zip(NET_FEATURES, net.qs)):
        p = "f%d_" % j
        qn = const("q%d" % j, np.asarray(q, np.float32))
        nn = const(p + "n", np.array(float(len(q)), np.float32))
        nodes += [
            helper.make_node("Cast", [feat], [p + "x"], to=TensorProto.FLOAT, name=p + "cast"),
            helper.make_node("Unsqueeze", [p + "x", axes1], [p + "u"], name=p + "unsqueeze"),
            helper.make_node("LessOrEqual", [qn, p + "u"], [p + "le"], name=p + "le"),
            helper.make_node("Cast", [p + "le"], [p + "lef"], to=TensorProto.FLOAT,
                             name=p + "cast_le"),
            helper.make_node("ReduceSum", [p + "lef", axes1], [p + "b"], keepdims=1,
                             name=p + "count"),
            helper.make_node("Div", [p + "b", nn], [p + "v"], name=p + "div"),
            helper.make_node("Mul", [p + "v", p + "v"], [p + "v2"], name=p + "square"),
        ]
        parts += [p + "v", p + "v2"]
    nodes.append(helper.make_node("Concat", parts, ["features"], axis=1, name="concat"))
    h = "features"
    for k, (W, b) in enumerate(zip(net.W, net.b)):
        wn = const("W%d" % k, np.asarray(W, np.float32))
        bn = const("b%d" % k, np.asarray(b, np.float32))
        out = "dense%d" % k
        nodes.append(helper.make_node("Gemm", [h, wn, bn], [out], transB=1, name=out))
        h = out
        if k < len(net.W) - 1:
            nodes.append(helper.make_node("Relu", [h], [h + "_relu"], name=h + "_relu"))
            h = h + "_relu"
    nodes.append(helper.make_node("Identity", [h], ["logits"], name="logits"))
    nodes.append(helper.make_node("ArgMax", ["logits"], ["inlining_decision"], axis=1,
                                  keepdims=0, name="argmax"))
    inputs = [helper.make_tensor_value_info(f, TensorProto.INT64, [1]) for f in NET_FEATURES]
    outputs = [helper.make_tensor_value_info("inlining_decision", TensorProto.INT64, [1])]
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="mlbc-train")
    model.ir_version = 7
    checker.check_model(model)
    return model


def export(net, path):
    m = to_model(net)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path
