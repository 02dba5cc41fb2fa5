"""The example models of models/: each compiled by mlbc, built, run on the reference
inputs saved by models/make_models.py and compared with PyTorch's outputs
(models/ref/NAME.npz: keys 'in:<input>:<k>' and 'out:<output>:<k>')."""
import argparse
import glob
import os
import sys

import numpy as np

import mlbctest
from mlbctest import Failure, onnx


def samples(ref):
    ks = sorted({int(k.rsplit(":", 1)[1]) for k in ref.keys()})
    return ks


def check_model(mlbc, path, work):
    name = os.path.splitext(os.path.basename(path))[0]
    ref = np.load(os.path.join(mlbctest.ROOT, "models", "ref", name + ".npz"))
    model = onnx.load(path)
    in_types, out_types = mlbctest.tensor_types(model)
    inits = {t.name for t in model.graph.initializer}
    in_names = [v.name for v in model.graph.input if v.name not in inits]
    out_names = [v.name for v in model.graph.output]
    exe = mlbctest.compile_model(mlbc, path, os.path.join(work, name))
    n = 0
    for k in samples(ref):
        ins = [ref["in:%s:%d" % (i, k)] for i in in_names]
        want = [ref["out:%s:%d" % (o, k)] for o in out_names]
        got = mlbctest.execute(exe, os.path.join(work, name), ins, in_types,
                               [(t, w.shape) for t, w in zip(out_types, want)])
        for o, g, w in zip(out_names, got, want):
            mlbctest.compare("%s sample %d" % (o, k), g, w)
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    work = os.path.abspath(os.path.join(args.build, "models-work"))
    passed = failed = 0
    for path in sorted(glob.glob(os.path.join(mlbctest.ROOT, "models", "*.onnx"))):
        name = os.path.basename(path)
        try:
            n = check_model(mlbc, path, work)
            print("PASS %s (%d reference samples)" % (name, n))
            passed += 1
        except (Failure, KeyError, FileNotFoundError) as e:
            print("FAIL %s: %s" % (name, e))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
