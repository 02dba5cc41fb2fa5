#!/usr/bin/python3
"""Scale benchmark: how mlbc and the C compiler cope with millions of weights (issue 10).

    /usr/bin/python3 bench/scale.py --build build [--sizes 1m,11m,100m] [--keep DIR]

For each size it writes a random-weight MLP (MatMul + Add + Relu layers, float32, batch 1),
runs `mlbc` on it (embedded weights, and with --weights-file), compiles everything mlbc wrote
with `gcc -O2 -c` (OUT.c is one file: the weights are a string literal in it, or in the weights
file), and prints, from /usr/bin/time -v: wall time and peak RSS of mlbc and of gcc, the
size of the C and of the objects (and the bytes per parameter). Nothing is asserted: the
targets of issue 10 (11.5M parameters: mlbc <= 3 s and 500 MB, gcc <= 20 s and 1.5 GB,
objects <= 4 bytes per parameter + 64 KB) are printed beside the figures.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import numpy as np  # noqa: E402
from onnxshim import onnx  # noqa: E402
from onnx import helper, numpy_helper, TensorProto  # noqa: E402

# name: layer widths. 11m is issue 10's 1024-2048-2048-2048-512 (11.5M parameters).
SIZES = {
    "1m": [512, 1024, 512],
    "11m": [1024, 2048, 2048, 2048, 512],
    "100m": [5120, 5120, 5120, 5120, 5120],
}


def make_mlp(widths, path, seed=0):
    """An MLP of random weights: x[1, w0] -> (MatMul, Add, Relu) per layer, no Relu last."""
    rng = np.random.default_rng(seed)
    nodes, inits, prev = [], [], "x"
    for i, (k, n) in enumerate(zip(widths, widths[1:])):
        w = (rng.standard_normal((k, n), dtype=np.float32) / np.float32(np.sqrt(k)))
        b = rng.standard_normal(n, dtype=np.float32) * np.float32(0.1)
        inits += [numpy_helper.from_array(w, f"W{i}"), numpy_helper.from_array(b, f"B{i}")]
        nodes.append(helper.make_node("MatMul", [prev, f"W{i}"], [f"m{i}"]))
        last = i == len(widths) - 2
        nodes.append(helper.make_node("Add", [f"m{i}", f"B{i}"], ["y" if last else f"a{i}"]))
        if not last:
            nodes.append(helper.make_node("Relu", [f"a{i}"], [f"h{i}"]))
            prev = f"h{i}"
    g = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, widths[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, widths[-1]])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)   # > 2 GB would need external data; 100m is 400 MB
    return sum(a * b + b for a, b in zip(widths, widths[1:]))


def timed(cmd):
    """Runs cmd under /usr/bin/time -v; returns (wall seconds, peak RSS in MB)."""
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", r.stderr)
    h, m, s = wall.groups()
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return int(h or 0) * 3600 + int(m) * 60 + float(s), int(rss.group(1)) / 1024


def measure(mlbc, d, name, mode, params):
    """One row: mlbc on d/name.onnx (mode 'embedded' or 'file'), then gcc -O2 -c of its C."""
    out = os.path.join(d, f"{name}_{mode}")
    cmd = [mlbc, os.path.join(d, f"{name}.onnx"), "-o", out + ".c", "-n", "m"]
    if mode == "file":
        cmd += ["--weights-file", out + ".bin"]
    t_mlbc, r_mlbc = timed(cmd)
    sources, objs = [out + ".c"], [out + ".o"]
    t_cc, r_cc = timed(["gcc", "-O2", "-c", sources[0], "-o", objs[0], "-I", d])
    csize = os.path.getsize(sources[0])
    osize = os.path.getsize(objs[0])
    wsize = os.path.getsize(out + ".bin") if mode == "file" else 0
    print(f"{name:>5} {params:>11,} {mode:>8} | {t_mlbc:7.2f} s {r_mlbc:7.0f} MB | "
          f"{t_cc:7.2f} s {r_cc:7.0f} MB | {csize / 1e6:8.1f} MB C {osize / 1e6:8.2f} MB obj "
          f"({osize / params:.2f} B/param)" +
          (f" + {wsize / 1e6:.1f} MB weights file" if wsize else ""), flush=True)
    for p in sources + objs + ([out + ".bin"] if wsize else []):
        os.remove(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--sizes", default="1m,11m")
    ap.add_argument("--modes", default="embedded,file")
    ap.add_argument("--keep", help="directory for the models and outputs (default: temporary)")
    a = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(a.build, "mlbc"))
    d = a.keep or tempfile.mkdtemp(prefix="mlbc_scale_")
    os.makedirs(d, exist_ok=True)
    print("size  parameters     mode |   mlbc wall, peak RSS |  gcc -O2 wall, peak RSS | output")
    for name in a.sizes.split(","):
        params = make_mlp(SIZES[name], os.path.join(d, f"{name}.onnx"))
        for mode in a.modes.split(","):
            measure(mlbc, d, name, mode, params)
        os.remove(os.path.join(d, f"{name}.onnx"))
    if not a.keep:
        subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
