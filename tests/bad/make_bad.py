"""Writes the bad-input corpus (run by hand; the files are committed). Each case is a model
mlbc must refuse with exit status 1, a message naming the problem, and no output file.
expect.txt maps file -> a substring the error message must contain."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import onnxshim  # noqa: F401,E402
from onnx import helper, TensorProto as T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
cases = {}


def vi(name, t=T.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, t, list(shape) if shape is not None else None)


def model(nodes, ins, outs, inits=(), opset=13, domain_opsets=()):
    g = helper.make_graph(nodes, "bad", ins, outs, list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domain_opsets]
    return helper.make_model(g, opset_imports=ops, producer_name="make_bad.py")


def save(name, m, expect, check=False):
    data = m.SerializeToString() if not isinstance(m, bytes) else m
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    cases[name] = expect


good = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")])
raw = good.SerializeToString()
save("truncated.onnx", raw[: len(raw) // 2], "malformed or truncated protobuf")
save("garbage.onnx", bytes(range(7, 250, 3)) * 4, "malformed or truncated protobuf")
save("empty.onnx", b"", "no graph")
save("cycle.onnx", model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                          helper.make_node("Add", ["x", "b"], ["y"])], [vi("x")], [vi("y")]),
     "cycle")
save("undefined.onnx", model([helper.make_node("Add", ["x", "nowhere"], ["y"])], [vi("x")], [vi("y")]),
     "'nowhere', which is not defined")
save("type_mismatch.onnx", model([helper.make_node("Add", ["x", "k"], ["y"])],
                                 [vi("x"), vi("k", T.INT64)], [vi("y")]), "same element type")
save("declared_type.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x")],
                                 [vi("y", T.INT32)]), "declared int32 but computes float")
save("absurd_dims.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                               [vi("x", shape=(1 << 20, 1 << 20))], [vi("y", shape=(1 << 20, 1 << 20))]),
     "too large")
big = helper.make_tensor("w", T.FLOAT, [1], b"\0" * 4, raw=True)
big.dims[:] = [1 << 20, 1 << 20]
save("absurd_weight.onnx", model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
                                 [big]), "too large")
raw7 = helper.make_tensor("w", T.FLOAT, [3], b"\0" * 12, raw=True)
raw7.raw_data = b"\0" * 7
save("raw_size.onnx", model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
                            [raw7]),
     "7 bytes of raw data")
two = helper.make_tensor("w", T.FLOAT, [2], [1.0, 2.0])
two.dims[:] = [3]
save("typed_count.onnx", model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
                               [two]),
     "holds 2 values")
save("unknown_op.onnx", model([helper.make_node("FrobnicateTensor", ["x"], ["y"])], [vi("x")], [vi("y")]),
     "unsupported op 'FrobnicateTensor'")
save("unknown_domain.onnx", model([helper.make_node("Relu", ["x"], ["y"], domain="com.example")],
                                  [vi("x")], [vi("y")], domain_opsets=[("com.example", 1)]),
     "domain 'com.example'")
save("no_opset.onnx", helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                                          [vi("x")], [vi("y")]), opset_imports=[]),
     "imports no opset")
ext = helper.make_tensor("w", T.FLOAT, [3], b"\0" * 12, raw=True)
ext.ClearField("raw_data")
ext.data_location = T.EXTERNAL
ext.external_data.add(key="location", value="weights.bin")
save("external_data.onnx", model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", shape=(3,))],
                                 [vi("y", shape=(3,))], [ext]), "external data")
save("string_input.onnx", model([helper.make_node("Identity", ["x"], ["y"])], [vi("x", T.STRING)],
                                [vi("y", T.STRING)]), "string")
save("symbolic_unbound.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape=("N", 3))],
                                    [vi("y", shape=("N", 3))]), "--dim N=SIZE")
save("unknown_dim.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape=(None, 3))],
                               [vi("y", shape=(None, 3))]), "unknown dimension")
save("high_rank.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape=(1,) * 12)],
                             [vi("y", shape=(1,) * 12)]), "rank 12")
save("duplicate.onnx", model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["x"], ["y"])],
                             [vi("x")], [vi("y")]), "defined more than once")
save("no_output.onnx", model([helper.make_node("Relu", ["x"], ["z"])], [vi("x")], [vi("y")]),
     "'y' is not produced")
save("bad_broadcast.onnx", model([helper.make_node("Add", ["x", "z"], ["y"])], [vi("x"), vi("z", shape=(4,))],
                                 [vi("y")]), "cannot be broadcast")
save("bad_elem_type.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", 99)], [vi("y")]),
     "unsupported element type")
save("sequence_input.onnx", model([helper.make_node("Identity", ["x"], ["y"])],
                                  [helper.make_tensor_sequence_value_info("x", T.FLOAT, [2])],
                                  [helper.make_tensor_sequence_value_info("y", T.FLOAT, [2])]),
     "only tensors are supported")

# Names protobuf leaves absent (NULL in protobuf-c): found by fuzzing control-flow models.
nameless = vi("x")
nameless.ClearField("name")
save("nameless_input.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [nameless], [vi("y")]),
     "a graph input with an empty name")
body_out = vi("s_out", shape=(2,))
body_out.ClearField("name")
body = helper.make_graph([helper.make_node("Identity", ["s_in"], ["s_next"])], "body",
                         [vi("s_in", shape=(2,)), vi("x_t", shape=(2,))], [body_out])
save("nameless_subgraph_output.onnx",
     model([helper.make_node("Scan", ["s0", "xs"], ["s"], body=body, num_scan_inputs=1)],
           [vi("s0", shape=(2,)), vi("xs", shape=(3, 2))], [vi("s", shape=(2,))], opset=11),
     "output '' is not defined")
# A required first output left out (an empty name), the only one or before a named one: a
# crash in the folding of Size, found by fuzz-text.
save("omitted_output.onnx",
     model([helper.make_node("Size", ["x"], ["", "n"]), helper.make_node("Identity", ["n"], ["y"])],
           [vi("x")], [vi("y", T.INT64, ())]),
     "output 0 is required")
save("omitted_only_output.onnx",
     model([helper.make_node("Size", ["x"], [""]), helper.make_node("Relu", ["x"], ["y"])],
           [vi("x")], [vi("y")]),
     "output 0 is required")

with open(os.path.join(HERE, "expect.txt"), "w") as f:
    f.write("# file<TAB>substring the error message must contain (written by make_bad.py)\n")
    for k in sorted(cases):
        f.write("%s\t%s\n" % (k, cases[k]))
print("%d cases" % len(cases))
