"""torch's own layers as torch.onnx (1.13) exports them, at opsets 13 to 18 (issue 31): the
models of tests/torch_layers/ (written by export.py there, by hand, with torch; this test
needs no torch). Each is compiled by mlbc, built warning-free, run on the saved inputs and
compared with torch's own outputs and with models/onnx_np.py's float64 reference; then its
generated C is inspected for the kernels mlbc recognises in that layer today:

    Linear layers    a MatMul whose only reader is an Add of a bias: fused (fuse.c), the Add
                     gone; every MatMul and Gemm a product kernel (mlbc_gemm_f32/_gemv_f32)
    LayerNorm        a LayerNormalization node (torch writes one from opset 17 on) is
                     mlbc_layernorm_f32
    attention        the scale a Div by one value (mlbc_vdivs_f32), Softmax rows through
                     mlbc_vexp_f32 and mlbc_vdivs_f32
    GELU, cells      Erf, Sigmoid, Tanh are mlbc_verf_f32, mlbc_vsigmoid_f32, mlbc_vtanh_f32
    Conv1d           depthwise: the direct kernel; any other: products over tap offsets
    embedding bag    the Gather, and the ReduceMean of its rows, have CPU paths

What mlbc does not recognise today (the LayerNorm chain of opsets 13-16, GELU as one op,
attention as one kernel, GRUCell/LSTMCell as mlbc's recurrent kernels) is not asserted; each
PASS line says which of those patterns the model holds, run op by op.

Models whose generated C is the same (opsets whose exports differ only in what mlbc reads
the same way) are built once; outputs are still compared per model, against that model's
own onnx_np reference.
"""
import argparse
import collections
import concurrent.futures
import glob
import hashlib
import os
import re
import shutil
import sys

import numpy as np

import mlbctest
from mlbctest import Failure, onnx

sys.path.insert(0, os.path.join(mlbctest.ROOT, "models"))
import gen  # noqa: E402  (gen._conv: grouped and 1-D Conv on onnx_np's Conv)
import onnx_np  # noqa: E402

LAYERS = os.path.join(mlbctest.HERE, "torch_layers")
NAME = re.compile(r"^(?P<variant>.+)_op(?P<opset>\d+)\.onnx$")
OPSETS = range(13, 19)


# ---- the float64 reference: onnx_np, plus Loop (nn.EmbeddingBag), Split-18, 1-D Conv ------

def _split(ins, a, n_out):
    if "num_outputs" not in a:
        return onnx_np._split(ins, a, n_out)
    x, axis = ins[0], a.get("axis", 0)
    part = -(-x.shape[axis] // a["num_outputs"])      # the last part may be smaller
    return np.split(x, range(part, x.shape[axis], part), axis=axis)


def _loop(ins, a, env):
    """Loop(M, cond, carried...) -> (carried..., scan outputs stacked on a new axis 0)."""
    body = a["body"]
    trips = int(ins[0]) if ins[0] is not None else None
    cond = bool(ins[1]) if len(ins) > 1 and ins[1] is not None else True
    carried = list(ins[2:])
    scans = [[] for _ in range(len(body.output) - 1 - len(carried))]
    i = 0
    while (trips is None or i < trips) and cond:
        inner = dict(env)
        inner[body.input[0].name] = np.array(i, np.int64)
        inner[body.input[1].name] = np.array(cond)
        for v, x in zip(body.input[2:], carried):
            inner[v.name] = x
        _evaluate(body, inner)
        outs = [inner[o.name] for o in body.output]
        cond = bool(outs[0])
        carried = outs[1:1 + len(carried)]
        for s, x in zip(scans, outs[1 + len(carried):]):
            s.append(x)
        i += 1
    return carried + [np.stack(s) for s in scans]


def _evaluate(graph, env):
    for node in graph.node:
        if node.domain not in ("", "ai.onnx"):
            raise NotImplementedError("domain " + node.domain)
        ins = [env[i] if i else None for i in node.input]
        a = onnx_np._attrs(node)
        op = node.op_type
        if op == "Loop":
            outs = _loop(ins, a, env)
        elif op == "Split":
            outs = _split(ins, a, len(node.output))
        elif op == "Conv":
            outs = gen._conv(ins, a)
        elif op in onnx_np.OPS:
            outs = onnx_np.OPS[op](ins, a)
        else:
            raise NotImplementedError("reference: op %s (node %s)" % (op, node.name))
        for name, v in zip(node.output, outs):
            if name:
                v = np.asarray(v)
                env[name] = v.astype(np.float64) if op == "Constant" and v.dtype == np.float32 \
                    else v


def reference(model, feeds):
    """The graph outputs computed in float64, float32 outputs rounded back (onnx_np.run's
    float64=True, with the ops above)."""
    from onnx import numpy_helper
    wide = lambda v: v.astype(np.float64) if v.dtype == np.float32 else v  # noqa: E731
    env = {t.name: wide(numpy_helper.to_array(t)) for t in model.graph.initializer}
    env.update({k: wide(np.asarray(v)) for k, v in feeds.items()})
    _evaluate(model.graph, env)
    res = {}
    for o in model.graph.output:
        v = env[o.name]
        res[o.name] = v.astype(np.float32) if o.type.tensor_type.elem_type == 1 else v
    return res


# ---- the generated C ---------------------------------------------------------------------

def run_steps(code):
    """model_run's nodes in order: [(op, node name, [functions its lines call])]."""
    body = code[code.index("\nint model_run("):]
    body = body[:body.index("\n}\n")]
    steps, lines, i = [], body.split("\n"), 0
    while i < len(lines):
        m = re.match(r"    /\* (\w+) '([^']*)'", lines[i])
        if m:
            while "*/" not in lines[i]:
                i += 1
            steps.append((m.group(1), m.group(2), []))
        elif steps:
            steps[-1][2].extend(re.findall(r"\b(\w+)\(", lines[i]))
        i += 1
    return steps


def functions(code):
    """name -> (the comment just above its definition, its body) of the file's functions."""
    out = {}
    for m in re.finditer(r"^((?:/\*[^\n]*\n(?: \*[^\n]*\n)*)?)(?:MLBC_\w+ )*(?:static )?"
                         r"(?:inline )?(?:void|int|float) (\w+)\([^)]*\)\n\{\n(.*?)\n\}\n",
                         code, re.M | re.S):
        out[m.group(2)] = (re.sub(r"\s*\n \* ", " ", m.group(1)), m.group(3))
    return out


def reaches(fns, name, target, depth=4):
    """Does function NAME call TARGET, itself or through the file's functions it calls?"""
    if name == target:
        return True
    if depth == 0 or name not in fns:
        return False
    return any(reaches(fns, f, target, depth - 1)
               for f in set(re.findall(r"\b(\w+)\(", fns[name][1])) if f != name)


def has_paths(code, name):
    return re.search(r"MLBC_AVX512 static (?:void|int) %s_avx512\(" % re.escape(name), code)


# ---- what each model holds, read from its ONNX graph ---------------------------------------

def consumers(graph):
    use = collections.defaultdict(list)
    for n in graph.node:
        for i in n.input:
            use[i].append(n)
    return use


def bias_adds(model):
    """Names of the Adds of a constant bias that are a MatMul's only reader (fuse.c's
    try_matmul_add takes them)."""
    g = model.graph
    consts = {t.name for t in g.initializer}
    use, outs = consumers(g), {o.name for o in g.output}
    names = []
    for n in g.node:
        if n.op_type != "MatMul" or n.input[1] not in consts or n.output[0] in outs:
            continue
        readers = use[n.output[0]]
        if len(readers) == 1 and readers[0].op_type == "Add":
            other = [i for i in readers[0].input if i != n.output[0]]
            if other and other[0] in consts:
                names.append(readers[0].name)
    return names


def depthwise_convs(model):
    """Names of the Conv nodes with one input channel per group."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    names = set()
    for n in g.node:
        if n.op_type == "Conv":
            group = next((a.i for a in n.attribute if a.name == "group"), 1)
            w = inits.get(n.input[1])
            if group > 1 and w is not None and w.dims[1] == 1:
                names.add(n.name)
    return names


def patterns(model):
    """The decomposed layers in MODEL that mlbc runs op by op today: {pattern: count}."""
    g = model.graph
    use = consumers(g)
    ops = collections.Counter(n.op_type for n in g.node)
    found = collections.Counter()
    for n in g.node:
        after = [c.op_type for c in use[n.output[0]]] if n.output else []
        if n.op_type == "Pow" and after == ["ReduceMean"]:
            found["LayerNorm as ReduceMean-Sub-Pow-ReduceMean-Add-Sqrt-Div-Mul-Add"] += 1
        elif n.op_type == "Erf" and after == ["Add"]:
            found["GELU as Div-Erf-Add-Mul-Mul"] += 1
        elif n.op_type == "Softmax":
            found["attention as MatMul-Softmax-MatMul"] += 1
        elif n.op_type == "Loop":
            found["EmbeddingBag as a Loop (unrolled)"] += 1
        elif n.op_type == "Split" and ops["Gemm"] == 2 and ops["Sigmoid"] in (2, 3):
            found["%s cell as Gemm-Split-Sigmoid/Tanh-Mul-Add" % (
                "LSTM" if ops["Sigmoid"] == 3 else "GRU")] = 1
    return found


# ---- the checks of one model's C -----------------------------------------------------------

VMATH = {"Erf": "mlbc_verf_f32", "Sigmoid": "mlbc_vsigmoid_f32", "Tanh": "mlbc_vtanh_f32"}


def inspect(model, code):
    """Asserts the kernels mlbc picks for MODEL in CODE; returns {what: count}."""
    steps, fns = run_steps(code), functions(code)
    ran = {name for _, name, _ in steps}
    depthwise = depthwise_convs(model)
    seen = collections.Counter()

    def kernel(op, name, calls):
        ks = [c for c in calls if c in fns or c.startswith("mlbc_")]
        if not ks:
            raise Failure("%s '%s': no kernel call in model_run" % (op, name))
        return ks[0]

    fused = bias_adds(model)
    left = [a for a in fused if a in ran]
    if left:
        raise Failure("MatMul + bias Add not fused: %s" % ", ".join(left))
    if fused:
        seen["MatMul+bias fused"] = len(fused)
    previous = None
    for op, name, calls in steps:
        if op in ("MatMul", "Gemm"):
            k = kernel(op, name, calls)
            gemv = reaches(fns, k, "mlbc_gemv_f32")
            if not (gemv or reaches(fns, k, "mlbc_gemm_f32")):
                raise Failure("%s '%s': %s is no mlbc_gemm_f32/mlbc_gemv_f32 product"
                              % (op, name, k))
            seen["mlbc_gemv_f32" if gemv else "mlbc_gemm_f32"] += 1
        elif op == "LayerNormalization":
            k = kernel(op, name, calls)
            if not reaches(fns, k, "mlbc_layernorm_f32"):
                raise Failure("LayerNormalization '%s': %s does not call mlbc_layernorm_f32"
                              % (name, k))
            seen["mlbc_layernorm_f32"] += 1
        elif op in VMATH:
            if VMATH[op] not in calls:
                raise Failure("%s '%s': no %s" % (op, name, VMATH[op]))
            seen[VMATH[op]] += 1
        elif op == "Softmax":
            k = kernel(op, name, calls)
            if not (reaches(fns, k, "mlbc_vexp_f32") and reaches(fns, k, "mlbc_vdivs_f32")):
                raise Failure("Softmax '%s': %s does not use mlbc_vexp_f32 and mlbc_vdivs_f32"
                              % (name, k))
            seen["softmax(vexp, vdivs)"] += 1
        elif op == "Div" and re.search(r"attn/Div_1$", name):     # q / sqrt(head size)
            if "mlbc_vdivs_f32" not in calls:
                raise Failure("Div '%s' (the attention's scale): no mlbc_vdivs_f32" % name)
            seen["scale by mlbc_vdivs_f32"] += 1
        elif op == "Conv":
            k = kernel(op, name, calls)
            about = " ".join(fns[f][0] for f in (k, k + "_any") if f in fns)  # or its paths
            if name in depthwise:
                if not re.search(r"depthwise \(group \d+\), \d+ taps, direct", about):
                    raise Failure("Conv '%s' (depthwise): not the direct kernel: %s"
                                  % (name, about.strip()))
                seen["conv depthwise direct"] += 1
            else:
                if not reaches(fns, k, "mlbc_gemm_f32_taps"):
                    raise Failure("Conv '%s': %s is no product over tap offsets" % (name, k))
                seen["conv taps product"] += 1
        elif op == "Gather" or (op == "ReduceMean" and previous == "Gather"):
            k = kernel(op, name, calls)
            if not has_paths(code, k):
                raise Failure("%s '%s': %s has no CPU paths" % (op, name, k))
            seen["%s with paths" % op] += 1
        previous = op
    return seen


# ---- one model ------------------------------------------------------------------------------

class Case:
    def __init__(self, path):
        m = NAME.match(os.path.basename(path))
        self.path, self.variant, self.opset = path, m.group("variant"), int(m.group("opset"))
        self.name = os.path.basename(path)[:-5]
        self.model = onnx.load(path)
        ref = np.load(os.path.join(LAYERS, self.variant + ".npz"))
        inits = {t.name for t in self.model.graph.initializer}
        self.in_names = [v.name for v in self.model.graph.input if v.name not in inits]
        self.out_names = [v.name for v in self.model.graph.output]
        ks = sorted({int(k.rsplit(":", 1)[1]) for k in ref.keys()})
        self.samples = [([ref["in:%s:%d" % (i, k)] for i in self.in_names],
                         [ref["out:%s:%d" % (o, k)] for o in self.out_names]) for k in ks]
        self.in_types, self.out_types = mlbctest.tensor_types(self.model)
        self.seen = self.exe = self.dir = None

    def compile(self, mlbc, work):
        """mlbc only, and its C inspected; returns a key of the generated code."""
        self.dir = os.path.join(work, self.name)
        shutil.rmtree(self.dir, ignore_errors=True)
        c = mlbctest.compile_model(mlbc, self.path, self.dir, build=False)
        with open(c) as f:
            code = f.read()
        with open(os.path.join(self.dir, "model.h")) as f:
            header = f.read()
        self.seen = inspect(self.model, code)
        return hashlib.sha256((code + "\0" + header).encode()).hexdigest()

    def check(self):
        """The samples against torch's outputs and the float64 reference."""
        for k, (ins, want) in enumerate(self.samples):
            got = mlbctest.execute(self.exe, self.dir, ins, self.in_types,
                                   [(t, w.shape) for t, w in zip(self.out_types, want)])
            ref = reference(self.model, dict(zip(self.in_names, ins)))
            for o, g, w in zip(self.out_names, got, want):
                mlbctest.compare("%s sample %d vs torch" % (o, k), g, w)
                mlbctest.compare("%s sample %d vs onnx_np" % (o, k), g, ref[o])
        return len(self.samples)

    def summary(self):
        rec = ", ".join("%s x%d" % kv for kv in sorted(self.seen.items()))
        miss = ", ".join("%s x%d" % kv for kv in sorted(patterns(self.model).items()))
        return (rec or "-") + ("; op by op: " + miss if miss else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--filter", default="", help="regex on model names")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    work = os.path.abspath(os.path.join(args.build, "torch-layers-work"))
    errors = (Failure, KeyError, FileNotFoundError, ValueError, NotImplementedError)
    tally = mlbctest.Tally()

    paths = sorted(glob.glob(os.path.join(LAYERS, "*_op*.onnx")))
    every = [os.path.basename(p) for p in paths if NAME.match(os.path.basename(p))]
    paths = [p for p in paths if os.path.basename(p) in every and re.search(args.filter, p)]
    cases, bad, groups = [], {}, collections.OrderedDict()
    for p in paths:
        try:
            cases.append(Case(p))
        except errors as e:
            bad[os.path.basename(p)[:-5]] = e
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        keys = [(c, pool.submit(c.compile, mlbc, work)) for c in cases]
        for c, f in keys:
            try:
                groups.setdefault(f.result(), []).append(c)
            except errors as e:
                bad[c.name] = e
        builds = [(g, pool.submit(mlbctest.build_driver, g[0].dir)) for g in groups.values()]
        for g, f in builds:
            try:
                for c in g:
                    c.exe = f.result()
            except errors as e:
                for c in g:
                    bad[c.name] = e
        runs = [(c, pool.submit(c.check)) for c in cases if c.name not in bad]
        for c, f in runs:
            try:
                tally.result(True, "%s (%d samples vs torch and onnx_np; %s)"
                             % (c.name, f.result(), c.summary()))
            except errors as e:
                bad[c.name] = e
    for name, e in sorted(bad.items()):
        tally.result(False, name, str(e))
    # every layer at every opset: a file gone missing is a failure, not a smaller test
    variants = sorted({NAME.match(n).group("variant") for n in every})
    missing = ["%s_op%d" % (v, o) for v in variants for o in OPSETS
               if "%s_op%d.onnx" % (v, o) not in every]
    if missing or not every:
        tally.result(False, "tests/torch_layers", "missing (tests/torch_layers/export.py "
                     "writes them): %s" % (", ".join(missing) or "every model"))
    print("(%d models of %d layer variants; %d distinct builds)"
          % (len(cases), len(variants), len(groups)))
    return tally.close()


if __name__ == "__main__":
    sys.exit(main())
