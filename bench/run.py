"""make bench: latency, compile time and code size of mlbc's generated code, against the same
code built at -O0, a hand-written C loop, OpenBLAS, the memory-read floor and, when libtorch is
installed, the same example models run by libtorch (TorchScript).

Every number comes from this one run. The timed programs are interleaved: in each round every
program runs once, in a new order, for a few batches; a latency is the median over all
batches. Nothing is asserted: the output is a report (see bench/README.md).
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import numpy as np  # noqa: E402

import onnxshim  # noqa: E402,F401  (numpy aliases before onnx)
from onnxshim import numpy_helper, onnx  # noqa: E402

CC = os.environ.get("CC", "cc")
CXX = os.environ.get("CXX", "g++")
TORCH_API = "/usr/include/torch/csrc/api/include"     # Debian's libtorch-dev
TORCH_LIBS = ["torch", "torch_cpu", "c10"]
FC_SHAPES = [(500, 1), (5000, 1), (50000, 1), (500, 64), (5000, 64)]
COMPILE_RUNS = 7
BATCHES_PER_ROUND = 4
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")   # everything single-threaded


class Error(Exception):
    pass


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, **kw)
    if p.returncode:
        lines = (p.stderr or p.stdout).strip().splitlines()
        lines = [x for x in lines if "error" in x] or lines
        raise Error(lines[0] if lines else "%s: exit status %d" % (cmd[0], p.returncode))
    return p.stdout


def cc(args, out, blas=False):
    run([CC, "-std=c99", *args, "-o", out] + (["-lopenblas"] if blas else []) + ["-lm"])
    return out


def harness(work, program, flags, out, blas=False):
    """A benchmark program: bench/PROGRAM.c linked with WORK/harness.o (see main)."""
    return cc(flags + ["-I", HERE, os.path.join(HERE, program + ".c"),
                       os.path.join(work, "harness.o")], os.path.join(work, out), blas)


# ---- machine ---------------------------------------------------------------------------

def machine_facts():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [("nproc", run(["nproc"]).strip()), ("cpu", cpu),
            ("cc", run([CC, "--version"]).splitlines()[0]),
            ("load average", "%.2f %.2f %.2f" % os.getloadavg())]


def largest_cache_bytes():
    """From sysfs ("4096K", "480M"); 0 if unknown."""
    best, base = 0, "/sys/devices/system/cpu/cpu0/cache"
    for d in os.listdir(base) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, d, "size")) as f:
                m = re.fullmatch(r"(\d+)([KMG]?)", f.read().strip())
        except OSError:
            continue
        if m:
            best = max(best, int(m.group(1)) << " KMG".index(m.group(2) or " ") * 10)
    return best


# ---- timing ----------------------------------------------------------------------------

class Timed:
    """One benchmark program (bench.h protocol): calibrated once, sampled every round."""

    def __init__(self, exe, args):
        self.exe, self.args, self.iters, self.samples, self.error = exe, args, 0, [], None

    def sample(self, batches):
        if self.error:
            return
        try:
            out = run([self.exe, str(self.iters), str(batches)] + self.args)
        except Error as e:
            self.error = str(e)
            return
        if self.iters == 0:
            self.iters = int(out)
        else:
            self.samples += [float(x) for x in out.split()]

    def median(self):
        return statistics.median(self.samples) if self.samples and not self.error else None

    def spread(self):
        """Interquartile range as a fraction of the median."""
        q = statistics.quantiles(self.samples, n=4)
        return (q[2] - q[0]) / self.median()


_timed = {}


def timed(exe, *args):
    """The one Timed of a command line (rows share their references)."""
    return _timed.setdefault((exe,) + args, Timed(exe, list(args)))


def measure(progs, rounds):
    """Calibrate (and warm up) each program, then ROUNDS rounds in a new order each."""
    for t in progs:
        t.sample(0)
    for r in range(rounds):
        random.Random(r).shuffle(progs)
        for t in progs:
            t.sample(BATCHES_PER_ROUND)


# ---- what is measured --------------------------------------------------------------------

class Row:
    """One mlbc build of one model, and the programs its latency is compared with."""

    def __init__(self, name, model, flags=(), refs=None):
        self.name, self.model, self.flags = name, model, list(flags)
        self.refs = dict(refs or {})
        self.error = self.params = self.flops = self.weight_bytes = self.obj_bytes = None
        self.compile_s, self.timed = [], {}

    def mlbc(self, mlbc):
        return [mlbc, self.model, "-o", self.c_file, "-n", "model"] + self.flags

    def prepare(self, mlbc, work):
        """mlbc --info, mlbc, then cc at -O2 and -O0 and link with model_main.c."""
        sub = re.sub(r"[^A-Za-z0-9]+", "_", self.name).strip("_")
        os.makedirs(os.path.join(work, sub), exist_ok=True)
        self.c_file = os.path.join(work, sub, "model.c")
        info = run(self.mlbc(mlbc) + ["--info"])
        self.params, self.weight_bytes = map(int, re.search(
            r"parameters\s+(\d+)\s+\((\d+) bytes\)", info).groups())
        self.flops = float(re.search(r"flops per run\s+(\S+)", info).group(1))
        run(self.mlbc(mlbc))
        for opt in ("-O2", "-O0"):
            obj = cc([opt, "-c", self.c_file], os.path.join(work, sub, "model%s.o" % opt))
            self.timed[opt] = timed(harness(
                work, "model_main", ["-O2", "-I", os.path.join(work, sub), "-include",
                                     "model.h", "-DMODEL_DESC=model_desc", obj],
                os.path.join(sub, "run" + opt), "--blas" in self.flags))
        sizes = run(["size", os.path.join(work, sub, "model-O2.o")]).splitlines()[1].split()
        self.obj_bytes = int(sizes[0]) + int(sizes[1])          # text (with rodata) + data


def libtorch_missing():
    """Why the libtorch peer cannot be built on this machine, or None."""
    if not shutil.which(CXX):
        return "no C++ compiler %s" % CXX
    for header in ("/usr/include/torch/script.h", os.path.join(TORCH_API, "torch", "all.h")):
        if not os.path.exists(header):
            return "no %s (Debian package libtorch-dev)" % header
    for lib in TORCH_LIBS:      # g++ prints the bare name back when it cannot find the file
        if not os.path.isabs(run([CXX, "-print-file-name=lib%s.so" % lib]).strip()):
            return "no lib%s.so (Debian package libtorch-dev)" % lib
    return None


def libtorch_peer(work):
    """The libtorch timing program (libtorch_main.cpp + harness.o), built once; None (and a
    line saying why) if libtorch is missing or the program does not build."""
    exe = os.path.join(work, "libtorch_main")
    try:
        why = libtorch_missing()
        if why is None:
            run([CXX, "-std=c++17", "-O2", "-I", HERE, "-I", TORCH_API,
                 os.path.join(HERE, "libtorch_main.cpp"), os.path.join(work, "harness.o"),
                 "-o", exe] + ["-l" + lib for lib in TORCH_LIBS])
            return exe
    except Error as e:
        why = "cannot build libtorch_main.cpp: %s" % e
    print("libtorch peer: skipped (no \"vs libtorch\" column): %s" % why)
    return None


def torchscript_file(row):
    return os.path.join(HERE, "torchscript", os.path.basename(row.model)[:-len(".onnx")] + ".pt")


def torch_inputs(model):
    """libtorch_main.cpp's input arguments: "DTYPE:D0xD1..." per graph input, in graph order."""
    g = onnx.load(model).graph
    init = {t.name for t in g.initializer}
    return ["%d:%s" % (i.type.tensor_type.elem_type,
                       "x".join(str(d.dim_value) for d in i.type.tensor_type.shape.dim))
            for i in g.input if i.name not in init]


def fc_model(work, n, m):
    """y = x.W + b as ONNX MatMul + Add (opset 13), float32, batch 1."""
    rng = np.random.RandomState(n * 1000 + m)
    init = [numpy_helper.from_array(rng.uniform(-1, 1, (n, m)).astype(np.float32), "W"),
            numpy_helper.from_array(rng.uniform(-1, 1, (m,)).astype(np.float32), "b")]
    h = onnx.helper
    g = h.make_graph([h.make_node("MatMul", ["x", "W"], ["xW"]),
                      h.make_node("Add", ["xW", "b"], ["y"])], "fc",
                     [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, n])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, m])], init)
    path = os.path.join(work, "fc_%dx%d.onnx" % (n, m))
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    return path


def fc_references(work, n, m, stream):
    """The hand-written C loop, OpenBLAS and the read floor for one layer shape."""
    size = ["-O2", "-DFC_N=%d" % n, "-DFC_M=%d" % m]
    return {"naive C": timed(harness(work, "naive_fc", size, "naive_fc_%dx%d" % (n, m))),
            "OpenBLAS": timed(harness(work, "blas_fc", size, "blas_fc_%dx%d" % (n, m), True)),
            "read floor": timed(stream, str(4 * (n * m + m)))}


def time_compiles(rows, mlbc):
    """mlbc's wall time, COMPILE_RUNS times per model, interleaved."""
    for _ in range(COMPILE_RUNS):
        for row in rows:
            t0 = time.perf_counter()
            run(row.mlbc(mlbc))
            row.compile_s.append(time.perf_counter() - t0)


# ---- report ------------------------------------------------------------------------------

def si(x):
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return "%.3g%s" % (x / div, unit)
    return "%.3g" % x


def ns(t):
    return "%.0f" % t if t else "-"


def ratio(mine, other):
    if not (mine and other):
        return "-"
    r = mine / other
    return "%.2f" % r if r >= 0.01 else "%.2g" % r     # two digits even far below 1 (libtorch)


def table(title, header, lines, notes=()):
    print("\n== %s" % title)
    lines = [header] + lines
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(line, widths))).rstrip())
    for note in notes:
        print(note)


def mlbc_table(title, rows, dram_bw, peers=()):
    lines, missing = [], []
    for r in rows:
        mine = r.error is None and r.timed["-O2"].median()
        if not mine:
            missing.append("%s: not measured: %s" % (r.name, r.error or r.timed["-O2"].error))
            continue
        ref = {k: t.median() for k, t in r.refs.items()}
        lines.append([r.name, si(r.params), si(r.flops),
                      "%.1f" % (statistics.median(r.compile_s) * 1e3),
                      "%.1f" % (r.obj_bytes / 1024), ns(mine),
                      "%.0f" % (r.timed["-O2"].spread() * 100),
                      ratio(mine, r.timed["-O0"].median()), ratio(mine, ref.get("naive C")),
                      ratio(mine, ref.get("OpenBLAS")), ratio(mine, ref["read floor"]),
                      ratio(mine, dram_bw and r.weight_bytes / dram_bw)]
                     + [ratio(mine, ref.get(p)) for p in peers])
    table(title, ["model", "params", "FLOPs", "compile ms", "object KiB", "ns/run", "IQR %",
                  "vs -O0", "vs naive C", "vs OpenBLAS", "vs read floor", "vs DRAM floor"]
          + ["vs " + p for p in peers], lines, missing)


def reference_table(refs, dram_bw):
    lines = []
    for (n, m), ref in refs.items():
        weights = 4 * (n * m + m)
        lines.append(["fc %dx%d" % (n, m), "%.1f" % (weights / 1024)]
                     + [ns(ref[k].median()) for k in ("naive C", "OpenBLAS", "read floor")]
                     + [ns(dram_bw and weights / dram_bw)])
    table("fully-connected layer: the references alone (ns/run)",
          ["layer", "weights KiB", "naive C -O2", "OpenBLAS", "read floor", "DRAM floor"],
          lines)


def peer_table(rows):
    lines, missing = [], []
    for r in rows:
        t = r.refs.get("libtorch")
        if t is None:
            missing.append("%s: no %s (see bench/make_torchscript.py)"
                           % (r.name, os.path.relpath(torchscript_file(r), ROOT)))
        elif t.median() is None:
            missing.append("%s: not measured: %s" % (r.name, t.error))
        else:
            lines.append([r.name, ns(t.median()), "%.0f" % (t.spread() * 100)])
    table("example models: libtorch alone (TorchScript, 1 thread, batch 1; ns/run)",
          ["model", "libtorch", "IQR %"], lines, missing)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=8,
                    help="rounds of %d batches per program (default 8)" % BATCHES_PER_ROUND)
    args = ap.parse_args()
    os.chdir(ROOT)
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    work = os.path.abspath(os.path.join(args.build, "bench"))
    os.makedirs(work, exist_ok=True)
    t_start = time.time()

    print("mlbc benchmark: %s" % run([mlbc, "--version"]).strip())
    for key, value in machine_facts():
        print("%-13s %s" % (key, value))
    if os.getloadavg()[0] > len(os.sched_getaffinity(0)):
        print("warning: the machine is busy (load above the number of CPUs): "
              "expect wide IQRs and shifted ratios")

    cc(["-O2", "-c", os.path.join(HERE, "harness.c")], os.path.join(work, "harness.o"))
    peer = libtorch_peer(work)
    stream = harness(work, "stream", ["-O3", "-march=native", "-funroll-loops"], "stream")
    dram_bytes = max(64 << 20, 2 * largest_cache_bytes())
    dram = timed(stream, str(dram_bytes))
    refs = {(n, m): fc_references(work, n, m, stream) for n, m in FC_SHAPES}
    fc_paths = {(n, m): fc_model(work, n, m) for n, m in FC_SHAPES}
    models = [Row(p[:-5], os.path.join("models", p))
              for p in sorted(os.listdir("models")) if p.endswith(".onnx")]
    fcs = [Row(" ".join(["fc %dx%d" % shape] + flags), fc_paths[shape], flags, refs[shape])
           for shape in FC_SHAPES for flags in ([], ["--blas"])]
    for row in models + fcs:
        try:
            row.prepare(mlbc, work)
            row.refs.setdefault("read floor", timed(stream, str(row.weight_bytes)))
        except Error as e:
            row.error = str(e)
    for row in models if peer else []:
        if os.path.exists(torchscript_file(row)):
            row.refs["libtorch"] = timed(peer, torchscript_file(row), *torch_inputs(row.model))

    time_compiles([r for r in models + fcs if r.error is None], mlbc)
    measure(list(_timed.values()), args.rounds)

    dram_bw = dram.median() and dram_bytes / dram.median()
    print("streaming read: %s over %d MiB (2x the largest cache)" % (
        "%.1f GB/s" % dram_bw if dram_bw else "not measured", dram_bytes >> 20))
    print("latency: median of %d batches (>= 2 ms each) per program in %d interleaved rounds;"
          " ratios: mlbc's -O2 latency / the other's (below 1: mlbc faster)"
          % (args.rounds * BATCHES_PER_ROUND, args.rounds))
    mlbc_table("example models (models/*.onnx)", models, dram_bw, ["libtorch"] if peer else [])
    mlbc_table("fully-connected layer y = x.W + b, float32, batch 1, N inputs x M outputs",
               fcs, dram_bw)
    reference_table(refs, dram_bw)
    if peer:
        peer_table(models)
    import roundtrip  # the ML-Compiler-Bridge round-trip study (bench/README.md, "Round trip")
    roundtrip.study(args.build)
    print("\n(%.0f s)" % (time.time() - t_start))


if __name__ == "__main__":
    main()
