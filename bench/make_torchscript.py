#!/usr/bin/python3
"""Save mlbc's example models as TorchScript: the libtorch peer of bench/run.py.

Run by hand (never by make test or make bench), from anywhere:

    /usr/bin/python3 bench/make_torchscript.py            # all models
    /usr/bin/python3 bench/make_torchscript.py cnn rnn_policy

For each model NAME, models/make_models.py's builder rebuilds the PyTorch module (same seeds,
same training, so the same weights); the module is traced at the ONNX input shapes, frozen and
written to bench/torchscript/NAME.pt. The script stops unless

  * the builder's ONNX export, redirected to a temporary directory, is byte-identical to the
    committed models/NAME.onnx (the traced module is the network mlbc compiles), and
  * NAME.pt, loaded back, reproduces every sample of models/ref/NAME.npz (floats to atol 1e-5 /
    rtol 1e-4, like make_models.py; integers exactly).

Nothing under models/ is written. Needs Debian's python3-torch (1.13) and python3-onnx.
"""
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(os.path.dirname(HERE), "models")
sys.path.insert(0, MODELS)
import make_models  # noqa: E402  (first: numpy aliases for onnx; torch on one thread)
import onnx  # noqa: E402
import torch  # noqa: E402


def build(name, tmp):
    """The module and example inputs that the builder of NAME exports; its .onnx goes to TMP."""
    seen = {}
    export = make_models.export

    def capture(model, args, path, *rest):
        seen.update(model=model, args=args)
        return export(model, args, os.path.join(tmp, os.path.basename(path)), *rest)

    make_models.export = capture        # the builders call export() through the module
    try:
        make_models.MODELS[name]()
    finally:
        make_models.export = export
    with open(os.path.join(tmp, name + ".onnx"), "rb") as a, \
            open(os.path.join(MODELS, name + ".onnx"), "rb") as b:
        if a.read() != b.read():
            raise SystemExit("%s: the rebuilt model is not models/%s.onnx" % (name, name))
    return seen["model"].eval(), seen["args"]


def save(model, args, path):
    with torch.no_grad():
        ts = torch.jit.freeze(torch.jit.trace(model, args))   # weights become constants
    ts.save(path)


def check(name, path):
    """Every sample of models/ref/NAME.npz through the saved file; returns how many."""
    m = onnx.load(os.path.join(MODELS, name + ".onnx"))
    init = {t.name for t in m.graph.initializer}
    ins = [i.name for i in m.graph.input if i.name not in init]
    assert len(m.graph.output) == 1, name          # true of every example model
    out = m.graph.output[0].name
    ts = torch.jit.load(path)
    ref = np.load(os.path.join(MODELS, "ref", name + ".npz"))
    k = 0
    while "out:%s:%d" % (out, k) in ref.files:
        with torch.no_grad():
            got = ts(*[torch.from_numpy(ref["in:%s:%d" % (i, k)]) for i in ins]).numpy()
        want = ref["out:%s:%d" % (out, k)]
        same = (np.allclose(got, want, atol=1e-5, rtol=1e-4)
                if np.issubdtype(want.dtype, np.floating) else np.array_equal(got, want))
        if got.dtype != want.dtype or got.shape != want.shape or not same:
            raise SystemExit("%s sample %d: TorchScript gives %s %s %s, reference %s %s %s"
                             % (name, k, got.dtype, got.shape, got, want.dtype, want.shape, want))
        k += 1
    return k


def main(argv):
    names = argv or list(make_models.MODELS)
    os.makedirs(os.path.join(HERE, "torchscript"), exist_ok=True)
    for name in names:
        if name not in make_models.MODELS:
            raise SystemExit("unknown model %r (have: %s)" % (name, ", ".join(make_models.MODELS)))
        path = os.path.join(HERE, "torchscript", name + ".pt")
        with tempfile.TemporaryDirectory() as tmp:
            save(*build(name, tmp), path)
        print("== %s: %d bytes, %d reference samples reproduced"
              % (name, os.path.getsize(path), check(name, path)))


if __name__ == "__main__":
    main(sys.argv[1:])
