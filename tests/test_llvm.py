"""mlbc policies inside LLVM 19 itself (llvm-19-dev headers, libLLVM-19, a stock clang-19):

  a. tests/llvm/release_runner.cpp: LLVM's llvm::ReleaseModeModelRunner<T> over the C++
     classes of `mlbc --cxx-wrapper` (inliner with llvm::FeatureMap, regalloc eviction with
     its 21 specs, model selector) decides exactly as the generated C called directly, on the
     reference samples (models/ref/*.npz) and on random inputs;
     and a composite of two models (`mlbc size=A speed=B`, tests/llvm/composite_runner.cpp)
     gives, per model_selector, the decisions of that model compiled alone;
  b. the clang pass plugin (plugins/clang/mlbc_inline_plugin.cpp, built per policy by
     plugins/clang/build.sh) runs LLVM's MLInlineAdvisor over ReleaseModeModelRunner<policy>:
     its objects equal those of a stock clang-19 steered over its interactive channel by
     build/mlbc-serve with the same model;
  c. the same plugin in development mode (MLBC_CHANNEL) over mlbc's pipe runner, answered by
     our Python host (mlbc_gym) with the same policy: the same objects, and the very bytes
     clang-19's own InteractiveModelRunner sends;
  d. the plugin's statistics (MLBC_STATS): evaluations, ns per evaluation, model share of
     compile time.

    python3 tests/test_llvm.py --build BUILD [-k SUBSTRING] [-v] [--keep]

Ends with one line "N passed, M failed[, K skipped]". Every compiler run has a timeout.
"""
import ctypes
import functools
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

import harness
from harness import Failure, expect, first_line

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CLANG = "/usr/bin/clang-19"
CLANGXX = "/usr/bin/clang++-19"
LLVM_CONFIG = "llvm-config-19"
TIMEOUT = 60                    # seconds, for every compiler run
BUILD_TIMEOUT = 180             # seconds, for building the plugin / the runner test
run = functools.partial(harness.run, timeout=TIMEOUT)
check_run = functools.partial(harness.check_run, timeout=TIMEOUT)

SOURCES = [  # (name, file relative to ROOT); compiled with -Icompiler -IBUILD
    ("calls.c", "tests/clang/calls.c"),
    ("util.c", "compiler/ir/util.c"),
    ("text_print.c", "compiler/front/text_print.c"),
    ("op_select.c", "compiler/ops/op_select.c"),
]
N_FEATURES = 38                 # LLVM 19's inliner features (llvm-mlgo.md §7)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


# ---- fixtures (built once, on first use; a failure fails every test that needs it) --------

class Ctx(harness.Ctx):
    def policy_so(self):
        """models/inliner.onnx as a shared object (mlbc-serve --model, ctypes)."""
        def make():
            d = self.path("policy")
            os.makedirs(d, exist_ok=True)
            c = os.path.join(d, "policy.c")
            check_run([self.tool("mlbc"), os.path.join(ROOT, "models", "inliner.onnx"), "-o",
                       c, "-n", "policy"], "mlbc inliner.onnx")
            so = os.path.join(d, "policy.so")
            check_run(["cc", "-O2", "-shared", "-fPIC", "-o", so, c, "-lm"], "cc -shared")
            return so
        return self.fixture("policy.so", make)

    def plugin(self, model="models/inliner.onnx", name="policy"):
        """plugins/clang/build.sh MODEL OUT.so: the clang-19 pass plugin for one policy."""
        def make():
            d = self.path("plugins")
            os.makedirs(d, exist_ok=True)
            out = os.path.join(d, name + ".so")
            check_run(["sh", os.path.join(ROOT, "plugins", "clang", "build.sh"), "--build",
                       self.build, "-n", name, "--cache", d, os.path.join(ROOT, model), out],
                      "plugins/clang/build.sh " + model, timeout=BUILD_TIMEOUT)
            return out
        return self.fixture("plugin:" + model, make)


def cflags(ctx):
    return ["-I", os.path.join(ROOT, "compiler"), "-I", ctx.build]


def compile_cmd(ctx, src, obj, extra=(), opt="-O2"):
    return [CLANG, opt, "-c", os.path.join(ROOT, src), "-o", obj] + cflags(ctx) + list(extra)


def inliner_flags(base):
    return ["-mllvm", "-enable-ml-inliner=release",
            "-mllvm", "-inliner-interactive-channel-base=" + base]


def plugin_env(**kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLBC_")}
    env.update({k: str(v) for k, v in kw.items()})
    return env


STATS = re.compile(r"mlbc-inline-plugin: stats: (.*)$", re.M)


def parse_stats(text):
    """The plugin's MLBC_STATS lines as dicts (numbers converted)."""
    out = []
    for m in STATS.finditer(text):
        d = {}
        for kv in m.group(1).split():
            k, _, v = kv.partition("=")
            v = v.rstrip("%")
            try:
                d[k] = int(v)
            except ValueError:
                try:
                    d[k] = float(v)
                except ValueError:
                    d[k] = v
        out.append(d)
    return out


def plugin_compile(ctx, src, obj, opt="-O2", plugin=None, stats=True, env_extra=None,
                   extra=()):
    """clang-19 OPT -c SRC -fpass-plugin=PLUGIN; returns (object bytes, stats dict or None)."""
    plugin = plugin or ctx.plugin()
    sf = obj + ".stats"
    if os.path.exists(sf):
        os.unlink(sf)
    env = plugin_env(**(env_extra or {}))
    if stats:
        env.update(MLBC_STATS="1", MLBC_STATS_FILE=sf)
    r = run(compile_cmd(ctx, src, obj, ["-fpass-plugin=" + plugin] + list(extra), opt),
            env=env)
    expect(r.returncode == 0, "clang-19 -fpass-plugin %s: exit %d: %s"
           % (src, r.returncode, first_line(r.stderr)))
    st = None
    if stats:
        expect(os.path.exists(sf), "no MLBC_STATS output")
        with open(sf) as f:
            lines = parse_stats(f.read())
        expect(len(lines) == 1, "%d stats lines" % len(lines))
        st = lines[0]
    return read_bytes(obj), st


def serve_compile(ctx, d, src, opt="-O2", tag="serve"):
    """A stock clang-19 steered by mlbc-serve with the compiled policy over its interactive
    channel; returns (object bytes, logged decisions)."""
    gym = ctx.gym()
    base, log = os.path.join(d, tag + "-ch"), os.path.join(d, tag + ".log")
    obj = os.path.join(d, tag + ".o")
    cmd = [ctx.tool("mlbc-serve"), "--model", ctx.policy_so(), "--channel", base,
           "--timeout", "60000", "--log", log, "--"] + compile_cmd(ctx, src, obj,
                                                                    inliner_flags(base), opt)
    check_run(cmd, "mlbc-serve clang-19 " + src)
    _, obs = gym.read_log(log)
    return read_bytes(obj), [o.features["inlining_decision"][0] for o in obs]


def plain_object(ctx, src, opt="-O2"):
    key = "plain:%s:%s" % (src, opt)

    def make():
        d = ctx.path("plain")
        os.makedirs(d, exist_ok=True)
        obj = os.path.join(d, re.sub(r"\W", "_", key) + ".o")
        check_run(compile_cmd(ctx, src, obj, (), opt), "clang-19 " + src)
        return read_bytes(obj)
    return ctx.fixture(key, make)


class CPolicy:
    """The generated C of models/inliner.onnx called through ctypes: the Python host's policy
    (the same code as in the plugin and in mlbc-serve)."""

    def __init__(self, so, name="policy"):
        class Desc(ctypes.Structure):
            _fields_ = [("name", ctypes.c_char_p), ("ctx_size", ctypes.c_size_t)]
        lib = ctypes.CDLL(so)
        self.lib = lib
        size = Desc.in_dll(lib, name + "_desc").ctx_size
        self.ctx = ctypes.create_string_buffer(size + 64)
        self.run_fn = getattr(lib, name + "_run")
        self.arg = getattr(lib, name + "_arg_data")
        self.arg.restype = ctypes.c_void_p
        self.res = getattr(lib, name + "_result_data")
        self.res.restype = ctypes.c_void_p
        self.lookup = getattr(lib, name + "_lookup_arg_index")
        self.lookup.argtypes = [ctypes.c_char_p]
        getattr(lib, name + "_init")(self.ctx)
        rl = getattr(lib, name + "_lookup_result_index")
        rl.argtypes = [ctypes.c_char_p]
        self.out = rl(b"inlining_decision")
        self.slots = {}
        self.calls = 0

    def __call__(self, features, context, index):
        for name, values in features.items():
            if name not in self.slots:
                i = self.lookup(name.encode())
                self.slots[name] = self.arg(self.ctx, i) if i >= 0 else None
            p = self.slots[name]
            if p is not None:
                ctypes.c_int64.from_address(p).value = values[0]
        if self.run_fn(self.ctx) != 0:
            raise RuntimeError("the policy's run failed")
        self.calls += 1
        return ctypes.c_int64.from_address(self.res(self.ctx, self.out)).value


def host_compile(ctx, d, policy, src, tag, plugin_mode, record=True, env_extra=None,
                 opt="-O2"):
    """Runs clang-19 under our Python host: plugin_mode -> the plugin in development mode
    (MLBC_CHANNEL), else clang-19's own InteractiveModelRunner. Returns (object bytes,
    recorded stream bytes or None, ServeResult)."""
    gym = ctx.gym()
    base = os.path.join(d, tag + "-ch")
    obj = os.path.join(d, tag + ".o")
    rec = os.path.join(d, tag + ".stream") if record else None
    env = plugin_env(**(env_extra or {}))
    if plugin_mode:
        env["MLBC_CHANNEL"] = base
        cmd = compile_cmd(ctx, src, obj, ["-fpass-plugin=" + ctx.plugin()], opt)
    else:
        cmd = compile_cmd(ctx, src, obj, inliner_flags(base), opt)
    res = gym.serve(base, policy, command=cmd, command_timeout=TIMEOUT, record=rec,
                    popen_kwargs={"env": env, "stdout": subprocess.DEVNULL,
                                  "stderr": subprocess.DEVNULL})
    expect(not res.timed_out, "clang-19 timed out under the host")
    expect(res.returncode == 0, "clang-19 exit %r under the host" % res.returncode)
    expect(not res.errors, "host session error: %s" % "; ".join(res.errors))
    return read_bytes(obj), (read_bytes(rec) if rec else None), res


# ---- a. ReleaseModeModelRunner<mlbc class> (tests/llvm/release_runner.cpp) -----------------

def reference_records(ctx):
    """models/ref/{inliner,regalloc_evict}.npz as release_runner reads them: per sample the
    graph inputs' raw bytes in graph order, then the int64 reference output."""
    def make():
        try:
            import numpy as np
        except ImportError:
            raise Failure("numpy is needed to read models/ref/*.npz (apt-get install "
                          "python3-numpy)")
        d = ctx.path("refs")
        os.makedirs(d, exist_ok=True)
        out = {}
        for model, result in (("inliner", "inlining_decision"),
                              ("regalloc_evict", "index_to_evict")):
            info = check_run([ctx.tool("mlbc"), os.path.join(ROOT, "models", model + ".onnx"),
                              "--info"], "mlbc --info").stdout.decode()
            inputs = re.findall(r"^\s+input\s+(\S+)\s+(\w+)\[", info, re.M)
            z = np.load(os.path.join(ROOT, "models", "ref", model + ".npz"))
            path = os.path.join(d, model + ".bin")
            k = 0
            with open(path, "wb") as f:
                while "out:%s:%d" % (result, k) in z.files:
                    for name, typ in inputs:
                        a = z["in:%s:%d" % (name, k)]
                        want = {"int64": np.int64, "float": np.float32}[typ]
                        expect(a.dtype == want, "%s: %s is %s" % (model, name, a.dtype))
                        f.write(np.ascontiguousarray(a).tobytes())
                    f.write(np.asarray(z["out:%s:%d" % (result, k)], np.int64)
                            .reshape(-1)[:1].tobytes())
                    k += 1
            expect(k > 0, "%s.npz has no samples" % model)
            out[model] = path
        return out
    return ctx.fixture("refs", make)


def release_runner(ctx):
    def make():
        expect(shutil.which(LLVM_CONFIG), "%s not found" % LLVM_CONFIG)
        d = ctx.path("release-runner")
        os.makedirs(d, exist_ok=True)
        objs = []
        for model, name in (("models/inliner.onnx", "inliner"),
                            ("models/regalloc_evict.onnx", "evict"),
                            ("tests/llvm/selector_model.onnxtxt", "selector")):
            c = os.path.join(d, name + ".c")
            check_run([ctx.tool("mlbc"), os.path.join(ROOT, model), "-o", c, "-n", name,
                       "--cxx-wrapper"], "mlbc " + model)
            o = os.path.join(d, name + ".o")
            check_run(["cc", "-O2", "-std=c99", "-c", c, "-o", o], "cc " + name + ".c")
            objs.append(o)
        cxx = check_run([LLVM_CONFIG, "--cxxflags"], "llvm-config").stdout.decode().split()
        ld = check_run([LLVM_CONFIG, "--ldflags"], "llvm-config").stdout.decode().split()
        libs = check_run([LLVM_CONFIG, "--libs"], "llvm-config").stdout.decode().split()
        exe = os.path.join(d, "release_runner")
        check_run([CLANGXX] + cxx + ["-O1", "-Wall", "-Wextra", "-Wno-unused-parameter",
                                     "-I", d, os.path.join(HERE, "llvm", "release_runner.cpp")]
                  + objs + ["-o", exe] + ld + libs + ["-lm"], "clang++-19 release_runner.cpp",
                  timeout=BUILD_TIMEOUT)
        return exe
    return ctx.fixture("release_runner", make)


def t_release_runner(ctx):
    """One result per check of release_runner.cpp."""
    refs = reference_records(ctx)
    r = run([release_runner(ctx), "--ref-inliner", refs["inliner"], "--ref-evict",
             refs["regalloc_evict"], "--random", "2000"])
    results = parse_checks(r, "release runner: ")
    expect_names = ["inliner: reference samples", "inliner: random inputs",
                    "evict: reference samples", "evict: random inputs",
                    "selector: the model receives"]
    for n in expect_names:
        if not any(n in name for _, name, _ in results):
            results.append((False, "release runner: " + n, "check missing"))
    return results


def t_composite_runner(ctx):
    """tests/llvm/composite_runner.cpp: `mlbc size=A speed=B` (one composite, model_selector)
    inside LLVM's ReleaseModeModelRunner gives, per selector, the decisions of that model
    compiled alone; an unknown selector or none: NAME_UNKNOWN_SELECTOR."""
    expect(shutil.which(LLVM_CONFIG), "%s not found" % LLVM_CONFIG)
    d = ctx.fresh("composite-runner")
    size, speed = (os.path.join(HERE, "llvm", "composite_%s.onnxtxt" % m) for m in ("size", "speed"))
    objs = []
    for name, models in (("policies", ["size=" + size, "speed=" + speed]), ("size", [size]),
                         ("speed", [speed])):
        c = os.path.join(d, name + ".c")
        check_run([ctx.tool("mlbc")] + models + ["-o", c, "-n", name, "--cxx-wrapper"],
                  "mlbc " + " ".join(models))
        objs.append(os.path.join(d, name + ".o"))
        check_run(["cc", "-O2", "-std=c99", "-c", c, "-o", objs[-1]], "cc " + name + ".c")
    cxx = check_run([LLVM_CONFIG, "--cxxflags"], "llvm-config").stdout.decode().split()
    ld = check_run([LLVM_CONFIG, "--ldflags"], "llvm-config").stdout.decode().split()
    libs = check_run([LLVM_CONFIG, "--libs"], "llvm-config").stdout.decode().split()
    exe = os.path.join(d, "composite_runner")
    check_run([CLANGXX] + cxx + ["-O1", "-Wall", "-Wextra", "-Wno-unused-parameter", "-I", d,
                                 os.path.join(HERE, "llvm", "composite_runner.cpp")]
              + objs + ["-o", exe] + ld + libs + ["-lm"], "clang++-19 composite_runner.cpp",
              timeout=BUILD_TIMEOUT)
    results = parse_checks(run([exe]), "composite: ")
    for n in ("selector 'size'", "selector 'speed'", "decide differently", "unknown selector",
              "no selector"):
        if not any(n in name for _, name, _ in results):
            results.append((False, "composite: " + n, "check missing"))
    return results


def t_override(ctx):
    """plugins/clang/llvm_override.sh: InlinerSizeModel.{h,o} / RegAllocEvictModel.{h,o} and the
    TENSORFLOW_AOT_PATH stub for LLVM_OVERRIDE_MODEL_*; the headers compiled as LLVM's own
    sources use them (tests/llvm/override_check.cpp, -fno-rtti -fno-exceptions)."""
    d = ctx.path("override")
    os.makedirs(d, exist_ok=True)
    check_run(["sh", os.path.join(ROOT, "plugins", "clang", "llvm_override.sh"), "--build",
               ctx.build, "--inliner", os.path.join(ROOT, "models", "inliner.onnx"),
               "--evict", os.path.join(ROOT, "models", "regalloc_evict.onnx"), d],
              "llvm_override.sh")
    results = []
    for f in ("InlinerSizeModel.h", "InlinerSizeModel.o", "RegAllocEvictModel.h",
              "RegAllocEvictModel.o", "tf-stub/xla_aot_runtime_src/CMakeLists.txt",
              "cmake-flags.txt"):
        expect(os.path.exists(os.path.join(d, f)), "llvm_override.sh wrote no " + f)
    with open(os.path.join(d, "tf-stub/xla_aot_runtime_src/CMakeLists.txt")) as f:
        expect("add_library(tf_xla_runtime" in f.read(), "the stub defines no tf_xla_runtime")
    with open(os.path.join(d, "cmake-flags.txt")) as f:
        flags = f.read().split()
    want = ["-DTENSORFLOW_AOT_PATH=" + os.path.join(d, "tf-stub")] + [
        "-DLLVM_OVERRIDE_MODEL_%s_%s=%s" % (k, m.upper(), os.path.join(d, m + ext))
        for m in ("InlinerSizeModel", "RegAllocEvictModel")
        for k, ext in (("HEADER", ".h"), ("OBJECT", ".o"))]
    results.append((sorted(flags) == sorted(want), "override: cmake-flags.txt",
                    " ".join(os.path.basename(f.split("=")[0]) for f in flags)))
    cxx = check_run([LLVM_CONFIG, "--cxxflags"], "llvm-config").stdout.decode().split()
    ld = check_run([LLVM_CONFIG, "--ldflags"], "llvm-config").stdout.decode().split()
    exe = os.path.join(d, "override_check")
    check_run([CLANGXX] + cxx + ["-fno-rtti", "-O1", "-Wall", "-Wextra",
                                 "-Wno-unused-parameter", "-DLLVM_HAVE_TF_AOT_INLINERSIZEMODEL",
                                 "-DLLVM_HAVE_TF_AOT_REGALLOCEVICTMODEL", "-I", d,
                                 os.path.join(HERE, "llvm", "override_check.cpp"),
                                 os.path.join(d, "InlinerSizeModel.o"),
                                 os.path.join(d, "RegAllocEvictModel.o"), "-o", exe] + ld +
              ["-lLLVM-19", "-lm"], "clang++-19 override_check.cpp", timeout=BUILD_TIMEOUT)
    r = run([exe])
    results += parse_checks(r, "override: ")

    # The same files through CMake, the way LLVM's build consumes them (without LLVM).
    title = "override: an LLVM-like CMake project takes the stub and the override files"
    cmake = shutil.which("cmake")
    if not cmake:
        results.append((None, title, "cmake not installed"))
        return results
    b = os.path.join(d, "cmake-build")
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    libs = check_run([LLVM_CONFIG, "--libs"], "llvm-config").stdout.decode().split()
    check_run([cmake] + gen + ["-S", os.path.join(HERE, "llvm", "cmake_mimic"), "-B", b] +
              flags + ["-DLLVM_CXXFLAGS=" + " ".join(cxx),
                       "-DLLVM_LDFLAGS=" + " ".join(ld + libs)], "cmake configure",
              timeout=BUILD_TIMEOUT)
    check_run([cmake, "--build", b], "cmake --build", timeout=BUILD_TIMEOUT)
    r = run([os.path.join(b, "override_check_cmake")])
    sub = parse_checks(r, "")
    bad = [n for ok, n, _ in sub if not ok]
    results.append((not bad, title, "%d checks pass%s" % (len(sub) - len(bad), (
        "; failed: " + ", ".join(bad)) if bad else "")))
    return results


def parse_checks(r, prefix):
    """The "ok|FAIL  check -- detail" lines of a C++ check program as results."""
    results = []
    summary = False
    for line in r.stdout.decode(errors="replace").splitlines():
        m = re.match(r"^(ok|FAIL)\s+(.*?)(?: -- (.*))?$", line)
        if m:
            results.append((m.group(1) == "ok", prefix + m.group(2), m.group(3) or ""))
        elif re.match(r"^\d+ passed, \d+ failed$", line):
            summary = True
    if not summary or r.returncode not in (0, 1):
        results.append((False, prefix + "ran to the end", "exit %d: %s" % (
            r.returncode, first_line(r.stderr))))
    return results


# ---- b. the plugin (release mode) vs mlbc-serve over clang-19's interactive channel -------

def t_plugin_equals_serve(src, opt="-O2"):
    def t(ctx):
        d = ctx.fresh("plugin-vs-serve-%s%s" % (os.path.basename(src), opt))
        served, decisions = serve_compile(ctx, d, src, opt)
        got, st = plugin_compile(ctx, src, os.path.join(d, "plugin.o"), opt)
        expect(decisions, "mlbc-serve logged no decision")
        expect(got == served, "the plugin's object differs from mlbc-serve's (%d vs %d bytes)"
               % (len(got), len(served)))
        expect(st["mode"] == "release" and st["advisors"] == 1, "stats %r" % st)
        expect(st["evaluations"] == len(decisions), "the plugin evaluated the model %d times, "
               "mlbc-serve answered %d observations" % (st["evaluations"], len(decisions)))
        differs = got != plain_object(ctx, src, opt)
        return "%d decisions (%d inline), objects identical (%d bytes; %s the default %s " \
               "object)" % (len(decisions), sum(1 for x in decisions if x), len(got),
                            "differs from" if differs else "same as", opt)
    return t


def t_stats_neutral(ctx):
    """MLBC_STATS wraps the runner for timing; the object must not change."""
    d = ctx.fresh("stats-neutral")
    src = "compiler/ir/util.c"
    a, _ = plugin_compile(ctx, src, os.path.join(d, "a.o"), stats=False)
    b, st = plugin_compile(ctx, src, os.path.join(d, "b.o"), stats=True)
    expect(a == b, "MLBC_STATS changes the object")
    expect(st["evaluations"] > 0 and st["model_ns"] > 0, "stats %r" % st)


def t_measure_Oz(ctx):
    """Evaluations, ns per evaluation and the model's share of compile time, at -Oz (median
    of three runs per file)."""
    d = ctx.fresh("measure-Oz")
    notes = []
    tot_evals = tot_ns = 0
    for name, src in SOURCES:
        runs = []
        for k in range(3):
            _, st = plugin_compile(ctx, src, os.path.join(d, "%s-%d.o" % (name, k)), "-Oz")
            runs.append(st)
        expect(len(set(s["evaluations"] for s in runs)) == 1, "evaluation counts vary")
        ev = runs[0]["evaluations"]
        ns = statistics.median(s["model_ns"] for s in runs)
        cpu = statistics.median(s["process_cpu_ms"] for s in runs)
        share = statistics.median(s["model_share_of_cpu"] for s in runs)
        tot_evals += ev
        tot_ns += ns
        notes.append("%s %d evals, %.0f ns/eval, %.3f%% of %.0f ms" % (
            name, ev, ns / ev if ev else 0, share, cpu))
        expect(share < 5.0, "%s: the model takes %.1f%% of compile time" % (name, share))
    return "; ".join(notes) + "; overall %.0f ns/eval" % (tot_ns / max(tot_evals, 1))


def t_two_tus(ctx):
    """One clang command, two TUs: two advisors, each object as compiled alone."""
    d = ctx.fresh("two-tus")
    sf = os.path.join(d, "stats")
    srcs = ["tests/clang/calls.c", "compiler/ir/util.c"]
    env = plugin_env(MLBC_STATS="1", MLBC_STATS_FILE=sf)
    check_run([CLANG, "-O2", "-c"] + [os.path.join(ROOT, s) for s in srcs] + cflags(ctx) +
              ["-fpass-plugin=" + ctx.plugin()], "clang-19 two TUs", cwd=d, env=env)
    for s in srcs:
        alone, _ = plugin_compile(ctx, s, os.path.join(d, "alone-" + os.path.basename(s)
                                                       + ".o"), stats=False)
        both = read_bytes(os.path.join(d, os.path.basename(s)[:-2] + ".o"))
        expect(alone == both, "%s differs when compiled together" % s)
    with open(sf) as f:
        st = parse_stats(f.read())      # one line per cc1 process
    expect(sum(s["advisors"] for s in st) == 2, "stats %r" % st)


def t_O0(ctx):
    """-O0 has no inliner run: no advisor, the plain -O0 object."""
    d = ctx.fresh("O0")
    obj = os.path.join(d, "o.o")
    sf = obj + ".stats"
    check_run(compile_cmd(ctx, "tests/clang/calls.c", obj, ["-fpass-plugin=" + ctx.plugin()],
                          "-O0"), "clang-19 -O0",
              env=plugin_env(MLBC_STATS="1", MLBC_STATS_FILE=sf))
    expect(read_bytes(obj) == plain_object(ctx, "tests/clang/calls.c", "-O0"),
           "-O0 object differs")
    expect(not os.path.exists(sf), "an advisor was created at -O0")


def t_mllvm_options(ctx):
    """Loaded early with -fplugin too, the plugin's settings are -mllvm options."""
    d = ctx.fresh("mllvm")
    obj = os.path.join(d, "o.o")
    p = ctx.plugin()
    r = check_run(compile_cmd(ctx, "tests/clang/calls.c", obj,
                              ["-fplugin=" + p, "-fpass-plugin=" + p, "-mllvm", "-mlbc-stats"]),
                  "clang-19 -mllvm -mlbc-stats", env=plugin_env())
    st = parse_stats(r.stderr.decode())
    expect(len(st) == 1 and st[0]["evaluations"] > 0, "stderr: %r" % r.stderr[-300:])
    got, _ = plugin_compile(ctx, "tests/clang/calls.c", os.path.join(d, "p.o"), stats=False)
    expect(read_bytes(obj) == got, "object differs")


def t_selector_plugin(ctx):
    """A policy with a model_selector input (tests/llvm/selector_model.onnxtxt: the decision
    is the selector's MD5 high half, non-zero for "size", so: always inline) inside clang."""
    p = ctx.plugin("tests/llvm/selector_model.onnxtxt", "selector")
    d = ctx.fresh("selector-plugin")
    src = "tests/clang/calls.c"
    r = run(compile_cmd(ctx, src, os.path.join(d, "none.o"), ["-fpass-plugin=" + p]),
            env=plugin_env())
    expect(r.returncode != 0 and b"A model selector was not specified" in r.stderr,
           "no selector: exit %d, %r" % (r.returncode, first_line(r.stderr)))
    got, st = plugin_compile(ctx, src, os.path.join(d, "size.o"), plugin=p,
                             env_extra={"MLBC_MODEL_SELECTOR": "size"})
    always, _, res = host_compile(ctx, d, lambda f, c, i: 1, src, "always", False, False)
    expect(got == always, "selector 'size' object differs from the always-inline object")
    expect(st["evaluations"] == res.observations, "%d evaluations vs %d observations"
           % (st["evaluations"], res.observations))
    r = run(compile_cmd(ctx, src, os.path.join(d, "sel.o"), ["-fpass-plugin=" + ctx.plugin()]),
            env=plugin_env(MLBC_MODEL_SELECTOR="size"))
    expect(r.returncode != 0 and b"does not expose a model_selector input" in r.stderr,
           "selector for the inliner policy: exit %d, %r" % (r.returncode,
                                                             first_line(r.stderr)))


def t_wrong_model(ctx):
    """A policy without an inlining_decision output: a clear error, not a crash."""
    p = ctx.plugin("models/regalloc_evict.onnx", "evict")
    d = ctx.fresh("wrong-model")
    r = run(compile_cmd(ctx, "tests/clang/calls.c", os.path.join(d, "o.o"),
                        ["-fpass-plugin=" + p]), env=plugin_env())
    err = r.stderr.decode(errors="replace")
    expect(r.returncode == 1 and "no output named 'inlining_decision'" in err,
           "exit %d: %r" % (r.returncode, first_line(err)))


def t_model_by_path(ctx):
    """MLBC_MODEL=inliner.onnx: the same plugin runs the ONNX model given at run time
    (compiled by libmlbc_rt into a fresh cache): the object and the evaluations are the
    built-in policy's; bad models are clear errors."""
    d = ctx.fresh("model-by-path")
    src = "tests/clang/calls.c"
    cache = os.path.join(d, "cache")
    model = os.path.join(ROOT, "models", "inliner.onnx")
    env = {"MLBC_MODEL": model, "MLBC": ctx.tool("mlbc"), "MLBC_CACHE_DIR": cache}
    builtin, st0 = plugin_compile(ctx, src, os.path.join(d, "builtin.o"))
    got, st = plugin_compile(ctx, src, os.path.join(d, "onnx.o"), env_extra=env)
    expect(got == builtin, "MLBC_MODEL=inliner.onnx gives another object than the built-in "
           "inliner policy")
    expect(st["mode"] == "release" and st["policy"] == model
           and st["evaluations"] == st0["evaluations"] > 0, "stats %r vs %r" % (st, st0))
    expect(len(os.listdir(cache)) == 1, "cache holds %s" % os.listdir(cache))
    for bad, words in ((os.path.join(d, "none.onnx"), "cannot read the model"),
                       (os.path.join(ROOT, "tests", "llvm", "selector_model.onnxtxt"),
                        "A model selector was not specified")):
        r = run(compile_cmd(ctx, src, os.path.join(d, "bad.o"), ["-fpass-plugin=" + ctx.plugin()]),
                env=plugin_env(**dict(env, MLBC_MODEL=bad)))
        err = r.stderr.decode(errors="replace")
        expect(r.returncode == 1 and "MLBC_MODEL " + bad in err and words in err,
               "MLBC_MODEL=%s: exit %d, %r" % (bad, r.returncode, first_line(err)))
    return "%d evaluations, object identical to the built-in policy's" % st["evaluations"]


# ---- c. development mode: the plugin's pipe runner against our hosts -------------------------

def t_dev_python_host(src):
    def t(ctx):
        d = ctx.fresh("dev-python-" + os.path.basename(src))
        pol = CPolicy(ctx.policy_so())
        dev_obj, dev_stream, res = host_compile(ctx, d, pol, src, "plugin-dev", True)
        n_dev = pol.calls
        rel_obj, _ = plugin_compile(ctx, src, os.path.join(d, "release.o"), stats=False)
        expect(res.observations > 0 and len(res.sessions) == 1,
               "%d observations in %d sessions" % (res.observations, len(res.sessions)))
        expect(dev_obj == rel_obj, "development-mode object differs from the release plugin's")
        clang_obj, clang_stream, _ = host_compile(ctx, d, pol, src, "clang-interactive", False)
        expect(clang_obj == rel_obj, "clang-19's interactive object differs")
        expect(dev_stream == clang_stream, "the plugin's stream differs from clang-19's "
               "InteractiveModelRunner's at byte %d of %d" % (
                   next((i for i, (a, b) in enumerate(zip(dev_stream, clang_stream))
                         if a != b), min(len(dev_stream), len(clang_stream))),
                   len(clang_stream)))
        return "%d observations; object == release plugin == clang-19 interactive; " \
               "stream byte-identical (%d bytes)" % (n_dev, len(dev_stream))
    return t


def t_dev_serve(ctx):
    """The development-mode plugin served by mlbc-serve."""
    d = ctx.fresh("dev-serve")
    src = "compiler/front/text_print.c"
    base, log, obj = os.path.join(d, "ch"), os.path.join(d, "s.log"), os.path.join(d, "d.o")
    sf = obj + ".stats"
    check_run([ctx.tool("mlbc-serve"), "--model", ctx.policy_so(), "--channel", base,
               "--timeout", "60000", "--log", log, "--"] +
              compile_cmd(ctx, src, obj, ["-fpass-plugin=" + ctx.plugin()]), "mlbc-serve",
              env=plugin_env(MLBC_CHANNEL=base, MLBC_STATS="1", MLBC_STATS_FILE=sf))
    rel, _ = plugin_compile(ctx, src, os.path.join(d, "r.o"), stats=False)
    expect(read_bytes(obj) == rel, "object differs from the release plugin's")
    with open(sf) as f:
        st = parse_stats(f.read())[0]
    _, obs = ctx.gym().read_log(log)
    expect(st["mode"] == "development" and st["evaluations"] == len(obs), "stats %r, %d "
           "logged" % (st, len(obs)))
    return "%d round trips, %.0f us each (pipe + mlbc-serve + model)" % (
        st["evaluations"], st["ns_per_evaluation"] / 1000)


def t_dev_include_default(ctx):
    """MLBC_INCLUDE_DEFAULT: a 39th feature inlining_default carries LLVM's heuristic decision
    (callee_basic_block_count stays the real count, unlike clang-19's flag, llvm-mlgo.md
    §13.1); replying it gives the default -O2 object byte for byte."""
    d = ctx.fresh("dev-default")
    src = "tests/llvm/mixed.c"
    seen = {"default": [], "bb": []}

    def pol(f, c, i):
        seen["default"].append(f["inlining_default"][0])
        seen["bb"].append(f["callee_basic_block_count"][0])
        return f["inlining_default"][0]
    obj, _, res = host_compile(ctx, d, pol, src, "dev", True, False,
                               env_extra={"MLBC_INCLUDE_DEFAULT": "1"})
    names = [s.name for s in res.sessions[0].features]
    expect(len(names) == N_FEATURES + 1 and names[-1] == "inlining_default",
           "features ...%s" % names[-2:])
    expect(set(seen["default"]) <= {0, 1} and len(set(seen["default"])) == 2,
           "inlining_default values %s" % sorted(set(seen["default"]))[:5])
    expect(max(seen["bb"]) > 1, "callee_basic_block_count looks like a decision")
    expect(obj == plain_object(ctx, src), "object differs from the default -O2 build")
    return "%d observations, %d inlined, object == default -O2" % (
        len(seen["default"]), sum(seen["default"]))


def t_dev_missing_channel(ctx):
    d = ctx.fresh("dev-missing")
    t0 = time.time()
    r = run(compile_cmd(ctx, "tests/clang/calls.c", os.path.join(d, "o.o"),
                        ["-fpass-plugin=" + ctx.plugin()]),
            env=plugin_env(MLBC_CHANNEL=os.path.join(d, "nothing"), MLBC_TIMEOUT_MS="300"))
    err = r.stderr.decode(errors="replace")
    expect(r.returncode == 1 and "mlbc-inline-plugin: development mode:" in err and
           "does not exist" in err, "exit %d: %r" % (r.returncode, first_line(err)))
    expect(time.time() - t0 < 20, "took %.0f s" % (time.time() - t0))
    expect(not os.path.exists(os.path.join(d, "o.o")), "an object was written")


def read_exact(fd, n):
    b = b""
    while len(b) < n:
        c = os.read(fd, n - len(b))
        if not c:
            raise EOFError
        b += c
    return b


def read_line(fd):
    b = b""
    while not b.endswith(b"\n"):
        b += read_exact(fd, 1)
    return b


def t_dev_host_quits(ctx):
    """A host that answers three observations and closes the channel: the plugin says so
    once, finishes the compilation with LLVM's default heuristic, nothing hangs."""
    d = ctx.fresh("dev-quits")
    base = os.path.join(d, "ch")
    os.mkfifo(base + ".in", 0o600)
    os.mkfifo(base + ".out", 0o600)
    answered = []

    def host():
        try:
            fi = os.open(base + ".in", os.O_WRONLY)
            fo = os.open(base + ".out", os.O_RDONLY)
            try:
                read_line(fo)                       # header
                read_line(fo)                       # {"context":""}
                for _ in range(3):
                    read_line(fo)                   # {"observation":N}
                    read_exact(fo, N_FEATURES * 8 + 1)
                    os.write(fi, (1).to_bytes(8, "little"))
                    answered.append(1)
            finally:
                os.close(fi)
                os.close(fo)
        except (OSError, EOFError):
            pass
    th = threading.Thread(target=host, daemon=True)
    th.start()
    obj = os.path.join(d, "o.o")
    t0 = time.time()
    r = run(compile_cmd(ctx, "compiler/front/text_print.c", obj, ["-fpass-plugin=" + ctx.plugin()]),
            env=plugin_env(MLBC_CHANNEL=base, MLBC_TIMEOUT_MS="5000", MLBC_STATS="1"))
    th.join(5)
    err = r.stderr.decode(errors="replace")
    expect(r.returncode == 0, "exit %d: %s" % (r.returncode, first_line(err)))
    expect(len(answered) == 3, "the host answered %d" % len(answered))
    expect(err.count("using LLVM's default inlining heuristic from now on") == 1,
           "stderr: %r" % err[:300])
    st = parse_stats(err)
    expect(st and st[0]["fallbacks"] > 0, "stats %r" % st)
    expect(os.path.exists(obj), "no object")
    return "%.1f s; %d decisions by the fallback" % (time.time() - t0, st[0]["fallbacks"])


# ---- main ------------------------------------------------------------------------------------

def tests():
    t = [("release runner", t_release_runner),
         ("composite of two models through ReleaseModeModelRunner", t_composite_runner),
         ("LLVM_OVERRIDE_MODEL_* files", t_override)]
    for name, src in SOURCES:
        t.append(("plugin == mlbc-serve over clang-19's channel, -O2 (%s)" % name,
                  t_plugin_equals_serve(src)))
    for name, src in SOURCES[:2]:
        t.append(("plugin == mlbc-serve over clang-19's channel, -Oz (%s)" % name,
                  t_plugin_equals_serve(src, "-Oz")))
    t += [
        ("plugin: MLBC_STATS does not change the object", t_stats_neutral),
        ("plugin: model share of compile time at -Oz", t_measure_Oz),
        ("plugin: two TUs in one clang command", t_two_tus),
        ("plugin: -O0 creates no advisor", t_O0),
        ("plugin: -fplugin + -mllvm -mlbc-stats", t_mllvm_options),
        ("plugin: model_selector policy inside clang", t_selector_plugin),
        ("plugin: a model without inlining_decision is refused", t_wrong_model),
        ("plugin: MLBC_MODEL=inliner.onnx, compiled at run time", t_model_by_path),
    ]
    for name, src in SOURCES[:2]:
        t.append(("development mode vs Python host: same object and stream (%s)" % name,
                  t_dev_python_host(src)))
    t += [
        ("development mode served by mlbc-serve", t_dev_serve),
        ("development mode: MLBC_INCLUDE_DEFAULT reply gives the default object",
         t_dev_include_default),
        ("development mode: missing channel is a clear error", t_dev_missing_channel),
        ("development mode: host quits early, default heuristic takes over", t_dev_host_quits),
    ]
    return t


def missing():
    if any(not os.path.exists(p) for p in (CLANG, CLANGXX)) or not shutil.which(LLVM_CONFIG) \
            or not os.path.exists("/usr/lib/llvm-19/include/llvm/Analysis/MLInlineAdvisor.h"):
        return ("clang-19, clang++-19 or llvm-19-dev not installed: skipping (apt-get install "
                "clang-19 llvm-19-dev)")
    return None


if __name__ == "__main__":
    # the inliner's plugin (18 s) builds while the first tests build their LLVM programs
    sys.exit(harness.main(tests, Ctx, "mlbc-llvm-", missing, warm=[lambda ctx: ctx.plugin()]))
