"""make bench: latency, compile time and code size of mlbc's generated code built with eight
flag sets (gcc and clang-19, -O2/-O3, with and without -march=native) and with --blas, against
ONNX Runtime (one thread), libtorch (TorchScript) when installed, the same code built at -O0, a
hand-written C loop, OpenBLAS, the memory-read floor and the FLOP ceiling of the CPU, for every
models/*.onnx, the shape families of models/kinds.py and a fixed-seed sample of the random
networks of models/gen.py (the distribution of mlbc/ORT over them), and torch's own layers as
torch exports them (tests/torch_layers); plots of it and of the round trip.

Every number comes from this one run. The timed programs are interleaved: in each round every
program runs once, in a new order, for a few batches; a latency is the median over all
batches. Nothing is asserted: the output is a report (see bench/README.md).
"""
import argparse
import concurrent.futures
import hashlib
import math
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

import peers  # noqa: E402  (ONNX Runtime, FLOP ceilings, network kinds)
import plots  # noqa: E402

CC = os.environ.get("CC", "cc")
CXX = os.environ.get("CXX", "g++")
GCC, CLANG = "gcc", "clang-19"
# (label, compiler, flags): the first is the reference, "plain -O2, no -march", as a
# distribution builds it; every other flag set is reported as a ratio to it.
FLAG_SETS = [(c + " " + " ".join(f), exe, f) for c, exe in (("gcc", GCC), ("clang-19", CLANG))
             for f in (["-O2"], ["-O3"], ["-O2", "-march=native"], ["-O3", "-march=native"])]
REF = FLAG_SETS[0][0]
FLAG_LIMIT = 1.1                # requirement: no flag set slower than 1.1x the reference
FASTEST_LIMIT = 1.25            # flagged: the reference more than 1.25x the fastest flag set
GEN_SEED, GEN_COUNT = 31, 50    # the sample of models/gen.py's random networks
GEN_TARGETS = (("median", 0.5), ("worst", 1.0))     # mlbc/ORT over that sample (issue 31)
GEMM_TARGET = 0.60              # GEMM-bound layers: this share of the FLOP ceiling
BLAS_LIMIT = 1.05               # --blas "never slower": above this, beyond this run's noise
TORCH_API = "/usr/include/torch/csrc/api/include"     # Debian's libtorch-dev
TORCH_LIBS = ["torch", "torch_cpu", "c10"]
FC_SHAPES = [(500, 1), (5000, 1), (50000, 1), (500, 64), (5000, 64)]
COMPILE_RUNS = 7
BATCHES_PER_ROUND = 4
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")   # everything single-threaded
STATS = {"median": statistics.median, "min": min}
STAT = statistics.median        # of the batches of a program: its latency (--stat)


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
    """What the results hold for. The CPU's name alone can hide a generation ("AMD EPYC"
    is Zen 4 or Zen 5, whose AVX-512 ceilings differ twofold): family and model too."""
    info = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if not line.strip():
                break                   # the first CPU's block
            info.setdefault(key.strip(), value.strip())
    cpu = "%s (family %s, model %s%s)" % (
        info.get("model name", "?"), info.get("cpu family", "?"), info.get("model", "?"),
        ", avx512f" if "avx512f" in info.get("flags", "").split() else "")
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

    def __init__(self, exe, args, batches=BATCHES_PER_ROUND):
        self.exe, self.args, self.iters, self.samples, self.error = exe, args, 0, [], None
        self.batches = batches

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
        """The latency: median of the batches (--stat min: the fastest batch)."""
        return STAT(self.samples) if self.samples and not self.error else None

    def spread(self):
        """Interquartile range as a fraction of the latency."""
        q = statistics.quantiles(self.samples, n=4)
        return (q[2] - q[0]) / self.median()


_timed = {}


def timed(exe, *args):
    """The one Timed of a command line (rows share their references)."""
    return _timed.setdefault((exe,) + args, Timed(exe, list(args)))


def measure(progs, rounds):
    """Calibrate (and warm up) each program, then ROUNDS rounds in a new order each; a
    program without a batch count of its own (ortbench, peak) runs once per round."""
    for t in progs:
        t.sample(0)
    for r in range(rounds):
        random.Random(r).shuffle(progs)
        for t in progs:
            t.sample(getattr(t, "batches", 1))


# ---- what is measured --------------------------------------------------------------------

class Row:
    """One model: mlbc's code for it built with every flag set (FULL rows; the fc layers
    only at the reference flags), at -O0 and with --blas, and the programs its latency is
    compared with (REFS: label -> Timed)."""

    def __init__(self, name, model, flags=(), refs=None, full=False, group="fc"):
        self.name, self.model, self.flags = name, model, list(flags)
        self.refs, self.full, self.group = dict(refs or {}), full, group
        self.error = self.params = self.flops = self.weight_bytes = self.obj_bytes = None
        self.compile_s, self.timed, self.build_errors = [], {}, {}
        self.blas_calls = self.ort_check = self.ort_error = self.blas_same = None
        self.variant_checks = {}            # label -> (error, mismatch or None)
        self.sub = re.sub(r"[^A-Za-z0-9=]+", "_", name).strip("_")
        self.dims = []

    def mlbc(self, mlbc, c_file=None, blas=False):
        return ([mlbc, self.model, "-o", c_file or self.c_file, "-n", "model"] + self.flags
                + (["--blas"] if blas and "--blas" not in self.flags else [])
                + [a for d in self.dims for a in ("--dim", d + "=1")])

    def prepare(self, mlbc, work):
        """mlbc --info and mlbc (and mlbc --blas for FULL rows); returns the build jobs:
        (label, function building and returning the timing program)."""
        self.dir = os.path.join(work, self.sub)
        os.makedirs(self.dir, exist_ok=True)
        self.c_file = os.path.join(self.dir, "model.c")
        self.dims = symbolic_dims(self.model)
        info = run(self.mlbc(mlbc) + ["--info"])
        self.params, self.weight_bytes = map(int, re.search(
            r"parameters\s+(\d+)\s+\((\d+) bytes\)", info).groups())
        self.flops = float(re.search(r"flops per run\s+(\S+)", info).group(1))
        run(self.mlbc(mlbc))
        self.main_obj = cc(["-O2", "-I", HERE, "-I", self.dir, "-include", "model.h",
                            "-DMODEL_DESC=model_desc", "-c", os.path.join(HERE, "model_main.c")],
                           os.path.join(self.dir, "model_main.o"))
        sets = FLAG_SETS if self.full else FLAG_SETS[:1]
        jobs = [(label, self.builder(label, exe, flags, self.dir, "--blas" in self.flags))
                for label, exe, flags in sets]
        jobs.append(("-O0", self.builder("-O0", GCC, ["-O0"], self.dir,
                                         "--blas" in self.flags)))
        if self.full:
            blas_dir = os.path.join(self.dir, "blas")
            os.makedirs(blas_dir, exist_ok=True)
            blas_c = os.path.join(blas_dir, "model.c")
            run(self.mlbc(mlbc, blas_c, blas=True))
            with open(blas_c) as f:
                blas_text = f.read()
            self.blas_calls = len(re.findall(r"\bcblas_s\w+\s*\(", blas_text))
            with open(self.c_file) as f:
                self.blas_same = blas_text == f.read()
            # the same C as the plain build (no product for CBLAS): nothing to time
            if not self.blas_same:
                jobs.append(("--blas", self.builder("--blas", GCC, ["-O2"], blas_dir, True)))
        return jobs

    def builder(self, label, compiler, flags, src_dir, blas):
        def build():
            tag = re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_")
            obj = os.path.join(src_dir, "model_%s.o" % tag)
            compile_cached([compiler, "-std=c99"] + flags, src_dir, obj)
            if label == REF:
                sizes = run(["size", obj]).splitlines()[1].split()
                self.obj_bytes = int(sizes[0]) + int(sizes[1])  # text (with rodata) + data
            return cc([self.main_obj, obj, os.path.join(self.work, "harness.o")],
                      os.path.join(self.dir, "run_" + tag), blas)
        return build

    def check_outputs(self, ort, out_types):
        """Runs every build once on model_main.c's inputs (--io); compares each with the
        reference build, and the reference with ONNX Runtime (ORT: ortbench or None)."""
        ref_dir = os.path.join(self.dir, "io_ref")
        os.makedirs(ref_dir, exist_ok=True)
        run([self.timed[REF].exe, "1", "0", "--io", ref_dir])
        for label, t in self.timed.items():
            if label == REF:
                continue
            d = os.path.join(self.dir, "io_" + re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_"))
            os.makedirs(d, exist_ok=True)
            try:
                run([t.exe, "1", "0", "--io", d])
                self.variant_checks[label] = peers.compare_dirs(d, ref_dir, out_types)
            except Error as e:
                self.variant_checks[label] = (float("inf"), str(e))
        if ort:
            n_in = len(graph_inputs(self.model))
            cmd = [ort, self.model, "-n", "1", "-w", "0", "-q", "-o", ",".join(
                os.path.join(ref_dir, "ort%d.bin" % i) for i in range(len(out_types)))]
            if n_in:
                cmd += ["-i", ",".join(os.path.join(ref_dir, "in%d.bin" % i)
                                       for i in range(n_in))]
            try:
                run(cmd + (["-d", "1"] if self.dims else []))
                self.ort_check = peers.compare_dirs(ref_dir, ref_dir, out_types,
                                                    other_fmt="ort%d.bin")
            except Error as e:          # ORT refuses the model: no outputs to compare
                self.ort_error = re.sub(r"\x1b\[[0-9;]*m", "", str(e))


_versions = {}


def compile_cached(cmd, src_dir, obj):
    """CMD -c SRC_DIR/model.c -o OBJ, unless OBJ was made by the same command (and compiler
    version) from the same model.c and model.h: mlbc rewrites its output on every run, so a
    rerun would otherwise compile every unchanged model eight times again."""
    if cmd[0] not in _versions:
        _versions[cmd[0]] = run([cmd[0], "--version"]).splitlines()[0]
    h = hashlib.sha256("\0".join(cmd + [_versions[cmd[0]]]).encode())
    for name in ("model.c", "model.h"):
        with open(os.path.join(src_dir, name), "rb") as f:
            h.update(f.read())
    stamp = obj + ".stamp"
    try:
        with open(stamp) as f:
            if f.read() == h.hexdigest() and os.path.exists(obj):
                return obj
    except OSError:
        pass
    run(cmd + ["-c", os.path.join(src_dir, "model.c"), "-o", obj])
    with open(stamp, "w") as f:
        f.write(h.hexdigest())
    return obj


def graph_inputs(model):
    g = onnx.load(model).graph
    init = {t.name for t in g.initializer}
    return [i for i in g.input if i.name not in init]


def symbolic_dims(model):
    """Names of the symbolic dimensions of the graph inputs (bound to 1 for mlbc and ORT)."""
    return sorted({d.dim_param for i in graph_inputs(model)
                   for d in i.type.tensor_type.shape.dim if d.dim_param})


def output_types(model):
    return [o.type.tensor_type.elem_type for o in onnx.load(model).graph.output]


def build_all(rows, mlbc, work, jobs):
    """mlbc for every row, then every C build, JOBS at a time; a row whose reference build
    fails gets its error, another failed build is noted in row.build_errors."""
    def prep(row):
        try:
            row.work = work
            return row, row.prepare(mlbc, work)
        except Error as e:
            row.error = str(e)
            return row, []

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        prepared = list(pool.map(prep, rows))
        tasks = [(row, label, pool.submit(fn)) for row, todo in prepared for label, fn in todo]
        for row, label, fut in tasks:
            try:
                row.timed[label] = timed(fut.result())
            except Error as e:
                if label == REF:
                    row.error = row.error or "%s: %s" % (label, e)
                else:
                    row.build_errors[label] = str(e)
    for row in rows:
        if row.error:
            row.timed = {}


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
        mine = r.error is None and r.timed[REF].median()
        if not mine:
            missing.append("%s: not measured: %s" % (r.name, r.error or r.timed[REF].error))
            continue
        ref = {k: t.median() for k, t in r.refs.items()}
        lines.append([r.name, si(r.params), si(r.flops),
                      "%.1f" % (statistics.median(r.compile_s) * 1e3),
                      "%.1f" % (r.obj_bytes / 1024), ns(mine),
                      "%.0f" % (r.timed[REF].spread() * 100),
                      ratio(mine, r.timed["-O0"].median()), ratio(mine, ref.get("naive C")),
                      ratio(mine, ref.get("OpenBLAS")), ratio(mine, ref["read floor"]),
                      ratio(mine, dram_bw and r.weight_bytes / dram_bw)]
                     + [ratio(mine, ref.get(p)) for p in peers])
    if lines or missing:
        table(title, ["model", "params", "FLOPs", "compile ms", "object KiB", "ns/run",
                      "IQR %", "vs -O0", "vs naive C", "vs OpenBLAS", "vs read floor",
                      "vs DRAM floor"] + ["vs " + p for p in peers], lines, missing)


def short(label):
    return label.replace(" -march=native", " nat").replace("clang-19", "clang")


def slowdown(row, label):
    """LABEL's latency over the reference's (above 1: slower), or None."""
    mine, t = row.timed[REF].median(), row.timed.get(label)
    return t.median() / mine if mine and t is not None and t.median() else None


def flag_table(rows):
    """Per model: the reference's ns/run and every other flag set (and --blas) as a ratio."""
    lines, missing, broken, blas_slower, differ, measured = [], [], [], [], [], 0
    slow_ref = []
    for r in rows:
        if r.error or not r.timed[REF].median():
            missing.append("%s: not measured: %s" % (r.name, r.error or r.timed[REF].error))
            continue
        measured += 1
        cells, worst = [], None
        for label, _, _ in FLAG_SETS[1:]:
            x = slowdown(r, label)
            if x is None:
                why = r.build_errors.get(label) or (r.timed[label].error if label in r.timed
                                                    else "not built")
                missing.append("%s, %s: not measured: %s" % (r.name, label, why))
                cells.append("-")
                continue
            cells.append("%.2f%s" % (x, "!" if x > FLAG_LIMIT else ""))
            if x > FLAG_LIMIT:
                broken.append((r.name, label, x))
            if worst is None or x > worst[0]:
                worst = (x, label)
        b = slowdown(r, "--blas")
        if b is not None and b > BLAS_LIMIT:
            blas_slower.append("%s %.2fx" % (r.name, b))
        bad = [lab for lab, (_, what) in r.variant_checks.items() if what]
        if bad:
            differ.append("%s: %s" % (r.name, "; ".join(
                "%s: %s" % (short(lab), r.variant_checks[lab][1]) for lab in bad)))
        fast = over_fastest(r)
        if fast and fast[0] > FASTEST_LIMIT:
            slow_ref.append((r.name, fast))
        lines.append([r.name, ns(r.timed[REF].median()), "%.0f" % (r.timed[REF].spread() * 100)]
                     + cells + [short(worst[1]) if worst else "-",
                                "%.2f%s" % (fast[0], "!" if fast[0] > FASTEST_LIMIT else "")
                                if fast else "-",
                                "same C" if r.blas_same else
                                "%.2f%s" % (b, "!" if b > BLAS_LIMIT else "") if b else "-",
                                str(r.blas_calls) if r.blas_calls is not None else "-",
                                "DIFFER" if bad else "same" if r.variant_checks else "-"])
    header = (["model", REF + " ns", "IQR %"] + [short(lab) for lab, _, _ in FLAG_SETS[1:]]
              + ["slowest", "O2/fastest", "--blas", "BLAS calls", "outputs"])
    notes = [
        "ratios: that build's ns/run / %s's (above 1: slower); nat = -march=native; ! = "
        "requirement broken" % REF,
        "requirement 'no flag set slower than %.1fx %s': %s" % (
            FLAG_LIMIT, REF, "met by all %d models" % measured if not broken else
            "BROKEN in %d of %d models" % (len({m for m, _, _ in broken}), measured))]
    for label, _, _ in FLAG_SETS[1:]:
        hits = sorted((x, m) for m, lab, x in broken if lab == label)
        if hits:
            notes.append("  %-22s slower than %.1fx in %2d models, worst %.2fx (%s)"
                         % (label, FLAG_LIMIT, len(hits), hits[-1][0], hits[-1][1]))
    notes.append("flagged: %s more than %.2fx the fastest flag set (O2/fastest: %s's ns/run over "
                 "the fastest's): %s" % (REF, FASTEST_LIMIT, REF, ", ".join(
                     "%s %.2fx (fastest %s)" % (m, x, short(lab)) for m, (x, lab) in slow_ref)
                     if slow_ref else "none of %d models" % measured))
    notes += [
        "requirement '--blas never slower than the plain build' (! above %.2f, the noise "
        "allowance; 'same C': mlbc --blas wrote the plain build's C, no product being one "
        "CBLAS takes): %s" % (BLAS_LIMIT, "met by all %d models" % measured if not blas_slower
                              else "BROKEN: " + ", ".join(blas_slower))] + missing
    if differ:
        notes.append("WARNING: these builds compute different outputs from %s's (beyond %.0e "
                     "relative): %s" % (REF, peers.CHECK_RTOL, " | ".join(differ)))
    table("flag sets: mlbc's C built with each, ns/run of %s, the others as ratios to it"
          % REF, header, lines, notes)
    return broken, blas_slower


def over_fastest(row):
    """(the reference's latency / the fastest flag set's, that set), or None."""
    mine = row.timed[REF].median()
    sets = [(t.median(), lab) for lab, t in row.timed.items()
            if lab not in ("-O0", "--blas") and t.median()]
    return (mine / min(sets)[0], min(sets)[1]) if mine and sets else None


def gflops(flops, t):
    return flops / t if flops and t else None      # FLOP per ns = GFLOP/s


def ort_result(row, notes, mismatches):
    """ROW's ONNX Runtime peer, its latency and its output check's cell; appends to NOTES
    why it was not measured, to MISMATCHES how its outputs differ from mlbc's."""
    ort, check = row.refs.get("ONNX Runtime"), "-"
    if row.ort_error:
        notes.append("%s: ONNX Runtime cannot run it: %s" % (row.name, row.ort_error))
        return ort, None, "ORT fails"
    if ort is not None and ort.median() is None:
        notes.append("%s: ONNX Runtime not measured: %s" % (row.name, ort.error))
    if row.ort_check:
        err, what = row.ort_check
        check = "MISMATCH" if what else "ok %.0e" % err if err else "ok 0"
        if what:
            mismatches.append("%s: %s" % (row.name, what))
    return ort, ort.median() if ort else None, check


def mismatch_warning(mismatches, where):
    if mismatches:
        return ["!" * 78, "WARNING: ONNX Runtime COMPUTES DIFFERENT OUTPUTS from mlbc (beyond "
                "%.0e relative) for: %s\n(their mlbc/ORT ratios are left out of %s)"
                % (peers.CHECK_RTOL, "; ".join(mismatches), where), "!" * 78]
    return []


def peers_table(rows, ceiling, ort_ok, torch_ok):
    """Per model: GFLOP/s against the ceiling, ONNX Runtime and libtorch."""
    lines, notes, mismatches, headline = [], [], [], []
    for r in rows:
        if r.error or not r.timed[REF].median():
            continue
        mine = r.timed[REF].median()
        fastest = min((t.median(), lab) for lab, t in r.timed.items()
                      if lab not in ("-O0", "--blas") and t.median())
        g, gb = gflops(r.flops, mine), gflops(r.flops, fastest[0])
        pct = (lambda x: "%.1f" % (100 * x / ceiling) if x and ceiling else "-")
        ort, t_ort, check = ort_result(r, notes, mismatches)
        if t_ort and r.ort_check and not r.ort_check[1]:
            headline.append(mine / t_ort)
        lt = r.refs.get("libtorch")
        lines.append([r.name, si(r.flops), ns(mine), "%.2f" % g if g else "-", pct(g),
                      short(fastest[1]), "%.2f" % gb if gb else "-", pct(gb)]
                     + ([ns(t_ort), "%.0f" % (ort.spread() * 100) if t_ort else "-",
                         ns(ort.run_median() if t_ort else None), ratio(mine, t_ort), check]
                        if ort_ok else [])
                     + ([ns(lt.median()) if lt else "-",
                         ratio(mine, lt.median() if lt else None)] if torch_ok else []))
    header = (["model", "FLOPs", REF + " ns", "GFLOP/s", "% ceiling", "fastest set",
               "GFLOP/s", "% ceiling"]
              + (["ORT ns", "ORT IQR %", "ORT p50/Run", "mlbc/ORT", "ORT outputs"]
                 if ort_ok else [])
              + (["libtorch ns", "mlbc/libtorch"] if torch_ok else []))
    if headline:
        gm = math.exp(sum(math.log(x) for x in headline) / len(headline))
        notes.insert(0, "HEADLINE mlbc (%s) / ONNX Runtime: geometric mean %.2f over %d models "
                     "(%s to %s); mlbc faster on %d of them" % (
                         REF, gm, len(headline), ratio(min(headline), 1),
                         ratio(max(headline), 1), sum(x < 1 for x in headline)))
    notes += mismatch_warning(mismatches, "the headline")
    table("against the FLOP ceiling and the peers (mlbc/ORT, mlbc/libtorch: below 1 = mlbc "
          "faster)", header, lines, notes)


def nearest_rank(sorted_values, q):
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def gen_table(rows, ort_why, seed):
    """models/gen.py's sample: per network the reference's latency, its ratio to the fastest
    flag set and to ONNX Runtime; under it the distribution of mlbc/ORT (median, p90, worst,
    the worst networks with the command that regenerates each) against issue 31's targets."""
    lines, notes, mismatches, ratios, refused = [], [], [], [], 0
    for r in rows:
        mine = r.error is None and r.timed[REF].median()
        if not mine:
            notes.append("%s: not measured: %s" % (r.name, r.error or r.timed[REF].error))
            continue
        fast = over_fastest(r)
        ort, t_ort, check = ort_result(r, notes, mismatches)
        refused += bool(r.ort_error)
        if t_ort and r.ort_check and not r.ort_check[1]:
            ratios.append((mine / t_ort, r.name))
        lines.append([r.name, si(r.params), si(r.flops), ns(mine),
                      "%.0f" % (r.timed[REF].spread() * 100),
                      "%.2f%s" % (fast[0], "!" if fast[0] > FASTEST_LIMIT else "")
                      if fast else "-"]
                     + ([ns(t_ort), ratio(mine, t_ort), check] if not ort_why else []))
    notes += mismatch_warning(mismatches, "the distribution")
    if ort_why:
        notes.insert(0, "mlbc/ORT: not measured: %s" % ort_why)
    elif ratios:
        ratios.sort()
        values = [x for x, _ in ratios]
        stats = {"median": statistics.median(values), "p90": nearest_rank(values, 0.9),
                 "worst": values[-1]}
        notes[:0] = [
            "DISTRIBUTION mlbc (%s) / ONNX Runtime over %d networks: median %.2f, p90 %.2f, "
            "worst %.2f; mlbc faster on %d (left out: %d that ONNX Runtime cannot run, %d whose "
            "outputs differ)" % (REF, len(values), stats["median"], stats["p90"], stats["worst"],
                                 sum(x < 1 for x in values), refused, len(mismatches)),
            "targets (issue 31): " + ", ".join(
                "%s <= %.1f %s" % (k, lim, "met" if stats[k] <= lim else "NOT met")
                for k, lim in GEN_TARGETS),
            "worst networks (regenerate one: /usr/bin/python3 models/gen.py --seed %d --index "
            "I -o x.onnx):" % seed] + ["  %.2f  %s" % w for w in reversed(ratios[-5:])]
    table("distribution over the generated networks (models/gen.py, seed %d): %s ns/run, over "
          "the fastest flag set (! above %.2f), against ONNX Runtime (mlbc/ORT below 1: mlbc "
          "faster)"
          % (seed, REF, FASTEST_LIMIT),
          ["network", "params", "FLOPs", REF + " ns", "IQR %", "O2/fastest"]
          + (["ORT ns", "mlbc/ORT", "ORT outputs"] if not ort_why else []), lines, notes)


def gemm_table(gemm, ceiling, path_name):
    """bench/gemm_shapes.c: the matrix-product kernel alone at the layers' shapes."""
    if gemm.error or not gemm.best:
        print("== matrix products alone: not measured: %s" % (gemm.error or "no output"))
        return
    lines, low = [], []
    for shape, g in gemm.best.items():
        m, k, n = (int(x) for x in shape.split("x"))
        share = g / ceiling if ceiling else None
        if share is not None and m > 1 and share < GEMM_TARGET:
            low.append(shape)
        lines.append([shape, str(m), "%.1f" % g,
                      "%.0f" % (100 * share) if share is not None else "-",
                      "batch 1 (weights streamed once per call)" if m == 1 else ""])
    table("matrix products alone: mlbc_gemm_f32 (one row: mlbc_gemv_f32) at the layers' "
          "shapes (M rows x K inputs x N outputs), B packed, warm cache, gcc -O2, best over "
          "the rounds",
          ["M x K x N", "M", "GFLOP/s", "% ceiling", "note"], lines,
          ["ceiling: %s %.1f GFLOP/s (bench/peak.c)" % (path_name, ceiling) if ceiling else
           "ceiling not measured",
           "requirement 'GEMM-bound layers reach %d%% of the ceiling' (batched shapes, M > 1): "
           "%s" % (100 * GEMM_TARGET, "met by all" if not low else
                   "NOT met by " + ", ".join(low))])


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
    lines, missing, no_pt = [], [], []
    for r in rows:
        t = r.refs.get("libtorch")
        if t is None:
            no_pt.append(r.name)
        elif t.median() is None:
            missing.append("%s: not measured: %s" % (r.name, t.error))
        else:
            lines.append([r.name, ns(t.median()), "%.0f" % (t.spread() * 100)])
    if no_pt:
        missing.append("no bench/torchscript/NAME.pt (see bench/make_torchscript.py) for: "
                       + ", ".join(no_pt))
    table("libtorch alone (TorchScript, 1 thread, batch 1; ns/run)",
          ["model", "libtorch", "IQR %"], lines, missing)


def plot_data(rows, ort_ok, torch_ok):
    out = []
    for r in rows:
        if r.error or not r.timed[REF].median():
            continue
        sets = sorted((t.median(), lab) for lab, t in r.timed.items()
                      if lab not in ("-O0", "--blas") and t.median())
        med = (lambda t: t.median() if t is not None else None)
        out.append({"name": r.name, "note": "fastest %s, slowest %s" % (
            short(sets[0][1]), short(sets[-1][1])), "ns": {
                plots.SERIES[0][0]: r.timed[REF].median(),
                plots.SERIES[1][0]: sets[0][0], plots.SERIES[2][0]: sets[-1][0],
                plots.SERIES[3][0]: med(r.timed.get("--blas")),
                plots.SERIES[4][0]: med(r.refs.get("ONNX Runtime")) if ort_ok else None,
                plots.SERIES[5][0]: med(r.refs.get("libtorch")) if torch_ok else None}})
    return out


class Tee:
    """stdout, copied to a file (the report next to the plots)."""

    def __init__(self, path):
        self.file, self.out = open(path, "w"), sys.stdout

    def write(self, text):
        self.out.write(text)
        self.file.write(text)

    def flush(self):
        self.out.flush()
        self.file.flush()


def kind_rows(args, work):
    """Rows for the shape families of models/kinds.py: every alternative of every kind, and
    the defaults when models/KIND.onnx (the same network) is not there; [] and a line saying
    why when the module is missing or broken."""
    mod, why = peers.load_kinds(args.kinds)
    if mod is None:
        print("network kinds: skipped (only models/*.onnx): %s" % why)
        return []
    rows = []
    out_dir = os.path.join(work, "kinds")
    os.makedirs(out_dir, exist_ok=True)
    for kind in mod.KINDS:
        members = [] if os.path.exists(os.path.join("models", kind + ".onnx")) else [("", {})]
        if not args.quick:
            try:
                members += (mod.family(kind) if hasattr(mod, "family") else
                            [(peers.family_name("", a).strip(), a)
                             for a in mod.KINDS[kind][2]])
            except Exception as e:      # noqa: BLE001  (someone else's module)
                print("network kinds: %s: no family: %s: %s" % (kind, type(e).__name__, e))
        for suffix, params in members:
            name = (kind + " " + suffix).strip()
            path = os.path.join(out_dir, re.sub(r"[^A-Za-z0-9_.=-]+", "_", name) + ".onnx")
            row = Row(name, path, full=True, group="kinds")
            try:
                onnx.save(mod.build(kind, **params), path)
            except Exception as e:      # noqa: BLE001
                row.error = "kinds.build(%r, ...): %s: %s" % (kind, type(e).__name__, e)
            rows.append(row)
    return rows


def ort_version(ort, rows):
    """(ONNX Runtime's version, None) from the first model of ROWS it runs, or (None, why):
    it refuses some valid models (layout=1 recurrences), which says nothing of the others."""
    why = None
    for row in rows:
        if row.error is None:
            try:
                return peers.ort_version(ort, row.model, ENV), None
            except peers.Error as e:
                why = why or str(e)
    return None, why or "no model to run"


# torch's own layers as torch 1.13 writes them (tests/torch_layers/export.py): each at opset
# 17, and the TransformerEncoderLayers at 16 too (their LayerNorm a chain of ops below 17)
TORCH_LAYERS = os.path.join(ROOT, "tests", "torch_layers")
TORCH_PICK = r"_op17$|^tel_.*_op16$"


def torch_rows(args):
    """Rows for the torch layers (none with --quick)."""
    if args.quick:
        return []
    names = sorted(f[:-5] for f in os.listdir(TORCH_LAYERS)
                   if f.endswith(".onnx") and re.search(TORCH_PICK, f[:-5]))
    return [Row("torch " + n, os.path.join(TORCH_LAYERS, n + ".onnx"), full=True,
                group="torch") for n in names]


def gen_rows(args, work):
    """Rows for models/gen.py's sample (networks 0..N-1 of the seed) in WORK/gen/; [] and a
    line saying why when there is none."""
    if not args.gen_count:
        return []
    mod, why = peers.load_gen(args.gen)
    if mod is None:
        print("generated networks: skipped: %s" % why)
        return []
    out_dir = os.path.join(work, "gen")
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    try:
        for name, model in mod.networks(args.gen_seed, args.gen_count):
            path = os.path.join(out_dir, name + ".onnx")
            onnx.save(model, path)
            rows.append(Row(name, path, full=True, group="gen"))
    except Exception as e:      # noqa: BLE001  (someone else's module)
        print("generated networks: network %d of seed %d: %s: %s"
              % (len(rows), args.gen_seed, type(e).__name__, e))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", metavar="DIR", help="where the programs, report.txt and the plots "
                    "go (default BUILD/bench)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds of %d batches per program (default 8, --quick 3)"
                    % BATCHES_PER_ROUND)
    ap.add_argument("--quick", action="store_true",
                    help="3 rounds, models/*.onnx only (no shape families), every 10th N of "
                    "the round trip")
    ap.add_argument("--models", metavar="REGEX",
                    help="only the rows whose name matches (re.search), e.g. 'cnn|lstm', "
                    "'^fc'")
    ap.add_argument("--no-roundtrip", action="store_true", help="leave out the round trip")
    ap.add_argument("--ort", metavar="DIR", default=os.environ.get("MLBC_ORT_PEER") or
                    peers.default_ort_dir(),
                    help="where ortbench is, or is built by ../shared/peers/ort/setup.sh "
                    "(default $MLBC_ORT_PEER or %(default)s); 'none' to leave ORT out")
    ap.add_argument("--kinds", default=os.path.join(ROOT, "models", "kinds.py"),
                    help="the network-kinds module (default models/kinds.py)")
    ap.add_argument("--gen", default=os.path.join(ROOT, "models", "gen.py"),
                    help="the generator of random networks (default models/gen.py)")
    ap.add_argument("--gen-seed", type=int, default=GEN_SEED,
                    help="its seed (default %(default)s)")
    ap.add_argument("--gen-count", type=int, default=None,
                    help="how many of its networks (default %d, --quick 0)" % GEN_COUNT)
    ap.add_argument("--stat", choices=sorted(STATS), default="median",
                    help="latency of a program from its batches: median (default) or min, "
                    "the fastest batch (for a machine busy with other jobs)")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="parallel compiles (default: the number of CPUs)")
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 8)
    if args.gen_count is None:
        args.gen_count = 0 if args.quick else GEN_COUNT
    global STAT
    STAT = STATS[args.stat]
    os.chdir(ROOT)
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    work = os.path.abspath(args.out or os.path.join(args.build, "bench"))
    os.makedirs(work, exist_ok=True)
    sys.stdout = Tee(os.path.join(work, "report.txt"))
    t_start = time.time()

    print("mlbc benchmark: %s" % run([mlbc, "--version"]).strip())
    for key, value in machine_facts():
        print("%-13s %s" % (key, value))
    print("%-13s %s" % ("flag sets", "; ".join(
        "%s: %s" % (label, run([exe, "--version"]).splitlines()[0]) for label, exe in
        (("gcc", GCC), ("clang", CLANG)))))
    if os.getloadavg()[0] > len(os.sched_getaffinity(0)):
        print("warning: the machine is busy (load above the number of CPUs): "
              "expect wide IQRs and shifted ratios")

    cc(["-O2", "-c", os.path.join(HERE, "harness.c")], os.path.join(work, "harness.o"))
    peak = peers.PeakTimed(cc(["-O2", os.path.join(HERE, "peak.c")], os.path.join(work, "peak")))
    gemm = peers.PeakTimed(cc(["-O2", os.path.join(HERE, "gemm_shapes.c")],
                              os.path.join(work, "gemm_shapes")))
    peer = libtorch_peer(work)
    ort, ort_why = peers.ort_peer(args.ort, ENV)
    if ort is None:
        print("ONNX Runtime peer: skipped (no ORT columns): %s" % ort_why)
    stream = harness(work, "stream", ["-O3", "-march=native", "-funroll-loops"], "stream")
    dram_bytes = max(64 << 20, 2 * largest_cache_bytes())
    dram = timed(stream, str(dram_bytes))

    keep = (lambda name: re.search(args.models, name)) if args.models else (lambda name: True)
    models = [Row(p[:-5], os.path.join("models", p), full=True, group="models")
              for p in sorted(os.listdir("models")) if p.endswith(".onnx")]
    models = [r for r in models + kind_rows(args, work) + torch_rows(args) +
              gen_rows(args, work) if keep(r.name)]
    shapes = [s for s in FC_SHAPES if keep("fc %dx%d" % s) or keep("fc %dx%d --blas" % s)]
    refs = {(n, m): fc_references(work, n, m, stream) for n, m in shapes}
    fc_paths = {(n, m): fc_model(work, n, m) for n, m in shapes}
    fcs = [Row(" ".join(["fc %dx%d" % shape] + flags), fc_paths[shape], flags, refs[shape])
           for shape in shapes for flags in ([], ["--blas"])
           if keep(" ".join(["fc %dx%d" % shape] + flags))]
    if ort and models:
        version, why = ort_version(ort, models)
        if version:
            print("ONNX Runtime peer: %s (ONNX Runtime %s, 1 intra-op thread)" % (ort, version))
        else:
            print("ONNX Runtime peer: skipped (no ORT columns): ortbench does not run: %s" % why)
            ort, ort_why = None, "ortbench does not run: %s" % why

    t0 = time.time()
    todo = [r for r in models + fcs if r.error is None]
    build_all(todo, mlbc, work, args.jobs)
    print("built %d programs for %d models in %.0f s (%d parallel jobs)" % (
        sum(len(r.timed) for r in todo), len(todo), time.time() - t0, args.jobs))
    for row in todo:
        if row.error is None:
            row.refs.setdefault("read floor", timed(stream, str(row.weight_bytes)))
    for row in models if peer else []:
        if row.error is None and os.path.exists(torchscript_file(row)):
            row.refs["libtorch"] = timed(peer, torchscript_file(row), *torch_inputs(row.model))
    for row in models if ort else []:
        if row.error is None:
            row.refs["ONNX Runtime"] = _timed.setdefault(
                ("ort", row.model), peers.OrtTimed(ort, row.model, ENV, bool(row.dims), STAT))

    def check(row):
        try:
            row.check_outputs(ort, output_types(row.model))
        except Error as e:
            row.variant_checks[REF] = (float("inf"), "--io: %s" % e)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(check, [r for r in models if r.error is None]))

    time_compiles([r for r in models + fcs if r.error is None], mlbc)
    t0 = time.time()
    measure(list(_timed.values()) + [peak, gemm], rounds)
    print("measured %d programs in %d rounds in %.0f s" % (len(_timed), rounds,
                                                           time.time() - t0))

    dram_bw = dram.median() and dram_bytes / dram.median()
    path, flags = peers.code_path()
    names = dict(peers.PATHS)
    ceiling = peak.best.get(path)
    print("streaming read: %s over %d MiB (2x the largest cache)" % (
        "%.1f GB/s" % dram_bw if dram_bw else "not measured", dram_bytes >> 20))
    print("FLOP ceilings (bench/peak.c, 1 thread, best over the rounds): %s GFLOP/s; the "
          "generated code's path on this CPU: %s (%s)" % (
              ", ".join("%s %s" % (names[k], "%.1f" % peak.best[k] if k in peak.best else "-")
                        for k, _ in peers.PATHS), names[path], flags)
          + (" [peak.c: %s]" % peak.error if peak.error else ""))
    print("latency: %s of %d batches (>= 2 ms each) per program in %d interleaved rounds%s;"
          " 'vs' ratios: mlbc's %s latency / the other's (below 1: mlbc faster)"
          % ("median" if STAT is statistics.median else "the fastest", rounds *
             BATCHES_PER_ROUND, rounds, " (ONNX Runtime: of one ~8 ms ortbench per round)"
             if ort else "", REF))
    groups = [("example models (models/*.onnx)", [r for r in models if r.group == "models"]),
              ("shape families (models/kinds.py)", [r for r in models if r.group == "kinds"]),
              ("torch's own layers (tests/torch_layers: torch 1.13's exports, opset 17; "
               "TransformerEncoderLayer at 16 too)", [r for r in models if r.group == "torch"]),
              ("generated networks (models/gen.py, seed %d)" % args.gen_seed,
               [r for r in models if r.group == "gen"])]
    for title, rows in groups:
        mlbc_table(title, rows, dram_bw, ["libtorch"] if peer and rows is groups[0][1] else [])
    if models:
        flag_table(models)
    named = [r for r in models if r.group != "gen"]
    if named:
        peers_table(named, ceiling, bool(ort), bool(peer))
    generated = [r for r in models if r.group == "gen"]
    if generated:
        gen_table(generated, None if ort else ort_why, args.gen_seed)
    gemm_table(gemm, ceiling, names[path])
    if fcs:
        mlbc_table("fully-connected layer y = x.W + b, float32, batch 1, N inputs x M outputs",
                   fcs, dram_bw)
        reference_table(refs, dram_bw)
    if peer and models:
        peer_table([r for r in models if r.group == "models"])
    import roundtrip  # the ML-Compiler-Bridge round-trip study (bench/README.md, "Round trip")
    if not args.no_roundtrip:
        roundtrip.study(args.build, quick=args.quick)

    print("\n== plots")
    for png, fn in (("latency.png", lambda p: plots.latency_plot(
            plot_data(models, bool(ort), bool(peer)), p,
            "Latency per model: mlbc's generated C against ONNX Runtime and libtorch "
            "(1 thread, batch as in the model)", args.stat)),
                    ("roundtrip.png", lambda p: plots.roundtrip_plot(
                        roundtrip.json_path(args.build), p))):
        out, why = fn(os.path.join(work, png))
        print("%s: %s" % (png, out if out else "skipped: %s" % why))
    print("report: %s" % os.path.join(work, "report.txt"))
    print("\n(%.0f s)" % (time.time() - t_start))


if __name__ == "__main__":
    main()
