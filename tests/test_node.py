"""ONNX backend node suite: every node test of Debian's python3-onnx, compiled by mlbc,
built with the generated-code contract, run on the test's inputs and compared.

Tests whose inputs or outputs are not plain tensors (sequences, optionals, strings) are
skipped. Every other test must pass, or be listed with a reason in node_xfail.txt; an
unexpected failure *and* an unexpected pass both fail the suite, so the list only shrinks.
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys

import mlbctest
from mlbctest import Failure, onnx
from onnxshim import numpy_helper

XFAIL = os.path.join(mlbctest.HERE, "node_xfail.txt")


def generate(datadir):
    """The suite is generated offline from the installed onnx package (cached)."""
    if os.path.isdir(os.path.join(datadir, "node")):
        return
    datadir = os.path.abspath(datadir)  # the generator runs in tests/
    tmp = datadir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    code = ("import onnxshim, sys; from onnx.backend.test.cmd_tools import main; "
            "sys.argv = ['x', 'generate-data', '-o', %r]; main()" % tmp)
    subprocess.run([sys.executable, "-c", code], cwd=mlbctest.HERE, check=True,
                   capture_output=True)
    os.rename(tmp, datadir)


def read_xfail():
    xf = {}
    if os.path.exists(XFAIL):
        for line in open(XFAIL):
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, why = line.partition(" ")
                xf[name] = why.strip()
    return xf


def main_op(test, model):
    """The op a test is about: the node type whose snake_case name prefixes the test name."""
    best = ""
    for n in model.graph.node:
        snake = re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", n.op_type).lower()
        if test[5:].startswith(snake) and len(n.op_type) > len(best):
            best = n.op_type
    return best or (model.graph.node[-1].op_type if model.graph.node else "?")


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


# --sanitize: the generated code under ASan+UBSan (out-of-bounds scratch, misaligned loads,
# signed overflow, float-to-int casts out of range); any report fails the test.
SAN_CFLAGS = mlbctest.CFLAGS + ("-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
              "-fno-omit-frame-pointer")
sanitize = False


def run_test(mlbc, testdir, workroot, blas=False):
    """Returns (status, op, message) with status pass, fail or skip. With blas, the model is
    compiled with --blas and linked with OpenBLAS; message says how many CBLAS calls it has."""
    name = os.path.basename(testdir)
    model = onnx.load(os.path.join(testdir, "model.onnx"))
    op = main_op(name, model)
    types = mlbctest.tensor_types(model)
    if types is None:
        return "skip", op, "sequence, optional or string values"
    in_types, out_types = types
    work = os.path.join(workroot, name + ("-blas" if blas else ""))
    try:
        exe = mlbctest.compile_model(mlbc, os.path.join(testdir, "model.onnx"), work,
                                     ["--blas"] if blas else (),
                                     cflags=SAN_CFLAGS if sanitize else mlbctest.CFLAGS,
                                     libs=["-lopenblas"] if blas else ())
        with open(os.path.join(work, "model.c")) as f:
            calls = len(re.findall(r"\bcblas_s\w+\s*\(", f.read()))
        for ds in sorted(glob.glob(os.path.join(testdir, "test_data_set_*"))):
            ins = [load_pb(p) for p in sorted(glob.glob(ds + "/input_*.pb"),
                                              key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))]
            outs = [load_pb(p) for p in sorted(glob.glob(ds + "/output_*.pb"),
                                               key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))]
            got = mlbctest.execute(exe, work, ins, in_types,
                                   [(t, o.shape) for t, o in zip(out_types, outs)])
            for i, (g, w) in enumerate(zip(got, outs)):
                mlbctest.compare("output %d" % i, g, w)
    except Failure as e:
        return "fail", op, str(e)
    shutil.rmtree(work, ignore_errors=True)
    return "pass", op, "%d CBLAS calls" % calls if blas else ""


def blas_cases(root):
    """Gemms big enough for --blas and of the kinds mlbc gives CBLAS (a transposed A, a scaled
    product), written as node-test directories: the suite's own are all too small."""
    from onnx import helper
    import numpy as np
    rng = np.random.default_rng(7)
    cases = []
    for name, (M, K, N), ta, tb, alpha, beta in [("transA_alpha_beta", (24, 40, 20), 1, 0, 0.5, 2.0),
                                                   ("alpha_transB", (33, 64, 17), 0, 1, -1.5, 1.0)]:
        d = os.path.join(root, "test_gemm_blas_" + name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        a = rng.standard_normal((K, M) if ta else (M, K)).astype(np.float32)
        b = rng.standard_normal((N, K) if tb else (K, N)).astype(np.float32)
        c = rng.standard_normal((N,)).astype(np.float32)
        am, bm = (a.T if ta else a).astype(np.float64), (b.T if tb else b).astype(np.float64)
        y = (alpha * am @ bm + beta * c).astype(np.float32)
        f32 = onnx.TensorProto.FLOAT
        g = helper.make_graph(
            [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=ta, transB=tb,
                              alpha=alpha, beta=beta)], name,
            [helper.make_tensor_value_info(v, f32, x.shape) for v, x in (("a", a), ("b", b), ("c", c))],
            [helper.make_tensor_value_info("y", f32, y.shape)])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
                  os.path.join(d, "model.onnx"))
        for i, x in enumerate((a, b, c)):
            with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(x).SerializeToString())
        with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y).SerializeToString())
        cases.append(d)
    return cases


def run_blas(mlbc, tests, workroot, pool):
    """The Gemm and MatMul node tests again with --blas and real OpenBLAS, and Gemms that reach
    CBLAS (mlbc gives it only the products its own kernels do not take): each must pass, and
    those must have CBLAS calls. Returns (passed, problems)."""
    tests = [t for t in tests if re.match(r"test_(gemm|matmul)", os.path.basename(t))]
    tests += blas_cases(os.path.join(workroot, "blas-cases"))
    futs = {pool.submit(run_test, mlbc, t, workroot, True): os.path.basename(t) for t in tests}
    passed, via, bad = 0, 0, []
    for f in concurrent.futures.as_completed(futs):
        status, _, msg = f.result()
        if status == "pass":
            passed += 1
            via += not msg.startswith("0 ")
            if "_blas_" in futs[f] and msg.startswith("0 "):
                bad.append("FAIL --blas %s: no CBLAS call in its C" % futs[f])
        elif status == "fail":
            bad.append("FAIL --blas %s: %s" % (futs[f], msg))
    print("--blas (OpenBLAS): %d of %d Gemm/MatMul node tests pass, %d of them through CBLAS"
          % (passed, len(tests), via))
    return passed, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--filter", default="", help="regex on test names")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--sanitize", action="store_true",
                    help="build the generated code with ASan+UBSan (no --blas pass)")
    ap.add_argument("--every", type=int, default=1, help="every Nth test only")
    ap.add_argument("--generate-only", action="store_true",
                    help="only generate the node-suite data")
    ap.add_argument("--write-xfail", action="store_true",
                    help="rewrite node_xfail.txt from this run's failures")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    datadir = os.path.abspath(os.path.join(args.build, "onnx-node-data"))
    generate(datadir)
    if args.generate_only:
        return 0
    workroot = os.path.abspath(os.path.join(args.build, "node-work"))
    tests = sorted(glob.glob(os.path.join(datadir, "node", "test_*")))
    tests = [t for t in tests if re.search(args.filter, os.path.basename(t))][::args.every]
    global sanitize
    sanitize = args.sanitize
    xfail = read_xfail()

    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = {pool.submit(run_test, mlbc, t, workroot): os.path.basename(t) for t in tests}
        for f in concurrent.futures.as_completed(futs):
            results[futs[f]] = f.result()
        blas_passed, blas_bad = (0, []) if sanitize else run_blas(mlbc, tests, workroot, pool)

    per_op = collections.defaultdict(lambda: [0, 0, 0])
    n_pass = n_skip = n_xfail = 0
    bad = []
    for name in sorted(results):
        status, op, msg = results[name]
        per_op[op][{"pass": 0, "fail": 1, "skip": 2}[status]] += 1
        if status == "skip":
            n_skip += 1
        elif status == "pass":
            n_pass += 1
            if name in xfail:
                bad.append("UNEXPECTED PASS %s (listed in node_xfail.txt: remove it)" % name)
        elif name in xfail:
            n_xfail += 1
            if args.verbose:
                print("xfail %s: %s" % (name, msg))
        else:
            bad.append("FAIL %s: %s" % (name, msg))
    print("per-op results (pass/fail/skip):")
    for op in sorted(per_op):
        p, f, s = per_op[op]
        print("  %-28s %3d %3d %3d" % (op, p, f, s))
    bad += blas_bad
    for line in bad:
        print(line)
    expressible = len(results) - n_skip
    print("node suite: %d of %d expressible tests pass; %d expected failures (node_xfail.txt), "
          "%d unexpected results; %d skipped (not plain tensors)"
          % (n_pass, expressible, n_xfail, len(bad), n_skip))
    if args.write_xfail:
        with open(XFAIL, "w") as f:
            f.write("# ONNX node tests expected to fail, with the reason. make test fails if one\n"
                    "# of them passes (remove it then) or if a test not listed here fails.\n")
            for name in sorted(results):
                status, op, msg = results[name]
                if status == "fail":
                    why = re.sub(r"^mlbc: error: \S+: ", "", msg.replace("\n", " "))
                    why = re.sub(r"/\S*/node-work/", "", why)
                    f.write("%s %s\n" % (name, why[:160]))
    # Expected failures count as skipped in the closing line, never as passed.
    print("%d passed, %d failed, %d skipped" % (n_pass + blas_passed, len(bad), n_skip + n_xfail))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
