"""The ONNX Runtime peer, the FLOP ceilings, the network-kind families and the network
generator of bench/run.py (see bench/README.md). Imported by run.py, which sets up numpy and
onnx first."""
import os
import re
import shutil
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORT_SETUP = os.path.normpath(os.path.join(ROOT, "..", "shared", "peers", "ort", "setup.sh"))
ORT_VERSION = "1.30.0"
ORT_TARGET_NS = 8e6        # one ortbench sample: about as long as the harness's 4 batches
CHECK_RTOL = 1e-4


class Error(Exception):
    pass


def _run(cmd, env=None, timeout=600):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Error("%s: no result within %d s" % (os.path.basename(cmd[0]), timeout))
    except OSError as e:
        raise Error("%s: %s" % (cmd[0], e.strerror))
    if p.returncode:
        lines = (p.stderr or p.stdout).strip().splitlines()
        raise Error(lines[-1] if lines else "%s: exit status %d" % (cmd[0], p.returncode))
    return p.stdout


# ---- ONNX Runtime ------------------------------------------------------------------------

def default_ort_dir():
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "mlbc", "ort-peer")


def ort_peer(where, env):
    """(path of ortbench, None) or (None, why not). WHERE: "none" (skip), a directory that
    has ortbench or gets it from ../shared/peers/ort/setup.sh (needs npm and gcc)."""
    if where == "none":
        return None, "--ort none"
    exe = os.path.join(where, "ortbench")
    if not os.access(exe, os.X_OK):
        if not os.path.exists(ORT_SETUP):
            return None, "no %s" % ORT_SETUP
        for tool in ("npm", "gcc", "tar"):
            if not shutil.which(tool):
                return None, "no %s in PATH (setup.sh needs npm, gcc, tar)" % tool
        print("ONNX Runtime peer: building %s with %s (npm package onnxruntime-node %s, "
              "about 110 MB; once)" % (exe, os.path.relpath(ORT_SETUP, ROOT), ORT_VERSION),
              flush=True)
        try:
            _run(["bash", ORT_SETUP, where], env=env, timeout=900)
        except Error as e:
            return None, "setup.sh failed: %s" % e
        if not os.access(exe, os.X_OK):
            return None, "setup.sh did not make %s" % exe
    return exe, None


def ort_version(exe, model, env):
    """ONNX Runtime's version string as ortbench reports it (runs MODEL once)."""
    out = _run([exe, model, "-n", "1", "-w", "0", "-q"], env=env, timeout=120)
    m = re.search(r"\bort=(\S+)", out)
    return m.group(1) if m else "?"


class OrtTimed:
    """ortbench as a timed program: calibrated once, then one invocation per round of about
    ORT_TARGET_NS of Run()s after a warm-up. Its sample is the mean ns per Run() of that
    invocation (mean_ns): a batch mean like the harness's, so that both sides take the same
    statistic; ortbench's own per-Run() median of each invocation is kept in run_medians."""

    def __init__(self, exe, model, env, dims=False, stat=statistics.median):
        self.exe, self.model, self.env, self.stat = exe, model, env, stat
        self.extra = ["-d", "1"] if dims else []
        self.iters, self.samples, self.run_medians, self.error = 0, [], [], None

    def _times(self, iters, warmup):
        out = _run([self.exe, self.model, "-n", str(iters), "-w", str(warmup), "-t", "1",
                    "-q"] + self.extra, env=self.env, timeout=300)
        return (float(re.search(r"mean_ns=([\d.]+)", out).group(1)),
                float(re.search(r"median_ns=(\d+)", out).group(1)))

    def sample(self, batches):
        if self.error:
            return
        try:
            if self.iters == 0:
                t = self._times(50, 20)[1]
                self.iters = int(min(100000, max(20, ORT_TARGET_NS / t)))
            else:
                mean, median = self._times(self.iters, max(10, self.iters // 10))
                self.samples.append(mean)
                self.run_medians.append(median)
        except (Error, AttributeError) as e:
            self.error = str(e) or "no mean_ns or median_ns in ortbench's output"

    def median(self):
        """The latency (the run's statistic, median by default, over the rounds)."""
        return self.stat(self.samples) if self.samples and not self.error else None

    def run_median(self):
        """ortbench's own figure: the median over the rounds of its per-Run() medians."""
        return statistics.median(self.run_medians) if self.run_medians else None

    def spread(self):
        if len(self.samples) < 2:
            return 0.0
        q = statistics.quantiles(self.samples, n=4)
        return (q[2] - q[0]) / self.median()


# ---- output checks -----------------------------------------------------------------------

NP_TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
            7: np.int64, 9: np.bool_, 10: np.uint16, 11: np.float64, 12: np.uint32,
            13: np.uint64, 16: np.uint16}


def compare(mine, other, dtype):
    """Largest error of MINE against OTHER (raw bytes of ONNX element type DTYPE): for
    float32/64 |a - b| / max(|b|, 1% of the tensor's largest |b|, 1e-6); anything else
    (integers, bools, 16-bit floats as raw bits) must be equal (error 0 or 1).
    Returns (error, what) with what None when the check passes."""
    t = NP_TYPES.get(dtype)
    if t is None:
        return None, "element type %d not compared" % dtype
    a, b = np.frombuffer(mine, t), np.frombuffer(other, t)
    if a.shape != b.shape:
        return float("inf"), "%d elements against %d" % (a.size, b.size)
    if a.size == 0:
        return 0.0, None
    if dtype in (1, 11):
        a, b = a.astype(np.float64), b.astype(np.float64)
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return float("inf"), "NaN in one output only"
        ok = ~np.isnan(b)
        if not ok.any():
            return 0.0, None
        a, b = a[ok], b[ok]
        scale = np.maximum(np.abs(b), max(1e-2 * np.abs(b).max(), 1e-6))
        err = float((np.abs(a - b) / scale).max())
        return err, None if err <= CHECK_RTOL else "relative error %.1e" % err
    diff = int(np.count_nonzero(a != b))
    return float(diff > 0), None if diff == 0 else "%d of %d elements differ" % (diff, a.size)


def compare_dirs(mine, other, dtypes, mine_fmt="out%d.bin", other_fmt="out%d.bin"):
    """Compares every output; (largest float error, None) or (error, first mismatch)."""
    worst, bad = 0.0, None
    for i, dtype in enumerate(dtypes):
        try:
            with open(os.path.join(mine, mine_fmt % i), "rb") as f:
                a = f.read()
            with open(os.path.join(other, other_fmt % i), "rb") as f:
                b = f.read()
        except OSError as e:
            return float("inf"), "output %d: %s" % (i, e.strerror)
        err, what = compare(a, b, dtype)
        if err is not None:
            worst = max(worst, err)
        if what and bad is None and err is not None:
            bad = "output %d: %s" % (i, what)
    return worst, bad


# ---- FLOP ceilings -----------------------------------------------------------------------

PATHS = [("sse2", "SSE2"), ("avx2_fma", "AVX2 FMA"), ("avx512_fma", "AVX-512 FMA")]


def code_path():
    """The instruction-set path the generated code takes on this CPU (by its flags)."""
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    if "avx512f" in flags:
        return "avx512_fma", "avx512f"
    if "avx2" in flags and "fma" in flags:
        return "avx2_fma", "avx2, fma"
    return "sse2", "neither avx512f nor avx2 + fma"


class PeakTimed:
    """peak.c, run once per round (REPS short runs per path); keeps the best GFLOP/s."""

    def __init__(self, exe, reps=3):
        self.exe, self.reps, self.best, self.error = exe, reps, {}, None

    def sample(self, batches):
        if self.error or batches == 0:
            return
        try:
            for line in _run([self.exe, str(self.reps)], timeout=120).splitlines():
                name, value = line.split()
                if value != "-":
                    self.best[name] = max(self.best.get(name, 0.0), float(value))
        except (Error, ValueError) as e:
            self.error = str(e)


# ---- network kinds and generator (models/kinds.py, models/gen.py) ----------------------

def load_module(path, name, needs=()):
    """The module at PATH imported as NAME (its directory on sys.path meanwhile), or
    (None, why): it is someone else's code, so any error in it is a reason, not a crash.
    NEEDS: the callables it must define."""
    if not os.path.exists(path):
        return None, "no %s yet" % os.path.relpath(path, ROOT)
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(mod)
        missing = [n for n in needs if not callable(getattr(mod, n, None))]
        if missing:
            return None, "%s has no %s()" % (path, ", ".join(missing))
    except Exception as e:          # noqa: BLE001  (any error in someone else's module)
        return None, "%s does not import: %s: %s" % (path, type(e).__name__, e)
    finally:
        sys.path.pop(0)
    return mod, None


def load_kinds(path):
    """The kinds module at PATH, or (None, why)."""
    mod, why = load_module(path, "mlbc_bench_kinds", ["build"])
    if mod is not None and not isinstance(getattr(mod, "KINDS", None), dict):
        return None, "%s has no KINDS dict" % path
    return mod, why


def load_gen(path):
    """The generator of random networks (models/gen.py) at PATH, or (None, why)."""
    return load_module(path, "mlbc_bench_gen", ["networks", "build"])


def family_name(kind, params):
    return kind + "".join(" %s=%s" % (k, v) for k, v in sorted(params.items()))
