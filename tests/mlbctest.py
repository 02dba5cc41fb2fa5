"""Shared test plumbing: compile a model with mlbc, build it with the generic driver, run
it on numpy inputs and compare results. Real parts only: the real mlbc binary, a real C
compiler, real files."""
import atexit
import fcntl
import os
import shutil
import subprocess
import tempfile
import threading

import numpy as np

import onnxshim  # noqa: F401  (numpy aliases before onnx)
from onnxshim import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# ONNX element type -> numpy dtype of the C buffer (16-bit floats travel as raw bits).
NP_OF = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
         7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32,
         13: np.uint64, 16: np.uint16}


class Failure(Exception):
    pass


class Tally:
    """A test program's PASS and FAIL lines and their closing line."""

    def __init__(self):
        self.passed = self.failed = 0

    def result(self, ok, name, why=""):
        self.passed, self.failed = self.passed + ok, self.failed + (not ok)
        print("%s %s%s" % ("PASS" if ok else "FAIL", name, "" if ok else ": " + why), flush=True)

    def close(self):
        """Prints 'N passed, M failed'; the program's exit status."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0


# What a program linking the runtime (libmlbc_rt.a) needs after it, as the Makefile's RT_LIBS.
RT_LIBS = ["-lprotobuf-c", "-ldl", "-lm", "-lpthread"]

# The environment of the runtime's test programs built with ASan+UBSan (test_pipe,
# test_grpc): a finding, a leak included, ends the program with status 86 or 87.
SAN_ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:exitcode=86",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87"}


def runtime_sources(build):
    """The runtime built from source (sanitizer builds): its C files, the protoc-c output of
    runtime/mlbc.proto in BUILD/rt, and the include flags both need."""
    rt = os.path.join(ROOT, "runtime")
    srcs = sorted(os.path.join(rt, f) for f in os.listdir(rt) if f.endswith(".c"))
    gen = os.path.join(os.path.abspath(build), "rt")
    return srcs + [os.path.join(gen, "mlbc.pb-c.c")], ["-I" + rt, "-I" + gen]


def runtime_program_builds(src, exe, build):
    """The two builds of a test program over the runtime: (kind, path, command) for "plain"
    (linked with BUILD/libmlbc_rt.a, warnings as errors) and "asan" (the runtime's sources
    with ASan+UBSan, leak detection on: run it with san_env)."""
    srcs, inc = runtime_sources(build)
    common = ["-std=c11", "-Wall", "-Wextra", "-D_GNU_SOURCE"] + inc
    return [("plain", exe, ["cc", "-O1", "-g", "-Werror"] + common +
             ["-o", exe, src, os.path.join(build, "libmlbc_rt.a")] + RT_LIBS),
            ("asan", exe + "_asan",
             ["cc", "-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
              "-fno-sanitize-recover=undefined", "-Wno-unused-parameter"] + common +
             ["-o", exe + "_asan", src] + srcs + RT_LIBS)]


def pkg_flags(what, *names):
    """pkg-config's flags (what: --cflags or --libs) for names."""
    return subprocess.run(["pkg-config", what] + list(names), capture_output=True,
                          text=True).stdout.split()


def grpc_asan_build(src, exe, build):
    """A test program of the gRPC runner under ASan+UBSan: src linked with runtime/grpc.cc
    and the C runtime built from source with the sanitizers, and protoc's C++ output of
    runtime/mlbc.proto without (gRPC's own libraries are not instrumented: it checks the
    runner's code, not gRPC's). The objects are kept in BUILD/grpc_asan and remade only
    when older than their source, a runtime header or mlbc.proto (grpc.cc alone takes some
    20 s): test_grpc and test_bridge share them, under a lock as they may run at once.
    (exe, "") or (None, the compilers' errors)."""
    obj = os.path.join(os.path.abspath(build), "grpc_asan")
    os.makedirs(obj, exist_ok=True)
    san = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
           "-D_GNU_SOURCE"]
    srcs, inc = runtime_sources(build)
    rt = os.path.join(ROOT, "runtime")
    gen = os.path.join(os.path.abspath(build), "grpc")
    cxx = ["c++", "-std=c++17", "-c", "-I" + rt, "-I" + gen] + pkg_flags(
        "--cflags", "grpc++", "protobuf")
    jobs = [cxx + san + [os.path.join(rt, "grpc.cc")]]
    jobs += [cxx + ["-O1", os.path.join(gen, f)] for f in ("mlbc.pb.cc", "mlbc.grpc.pb.cc")]
    jobs += [["cc", "-std=c11", "-c"] + san + inc + [s] for s in srcs]
    with open(os.path.join(obj, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        objs, errs = _compile_stale(jobs, obj, [os.path.join(rt, f) for f in os.listdir(rt)
                                                if f.endswith(".h") or f == "mlbc.proto"])
        if not errs:
            p = subprocess.run(["cc", "-std=c11", "-I" + rt] + san + [src, "-o", exe] + objs +
                               pkg_flags("--libs", "grpc++", "protobuf") + ["-lstdc++"] +
                               RT_LIBS, capture_output=True, text=True)
            errs = [p.stderr] if p.returncode else []
    return (None, "".join(errs).strip()[:800]) if errs else (exe, "")


def _compile_stale(jobs, obj, deps):
    """Runs at once the compile commands (source last) whose object in obj is missing or
    older than the source or any of deps; each object written whole (renamed into place).
    (all the objects, the failed commands' output)."""
    newest = max(os.path.getmtime(d) for d in deps)
    objs, procs = [], []
    for j in jobs:
        o = os.path.join(obj, os.path.basename(j[-1]).rsplit(".", 1)[0] + ".o")
        objs.append(o)
        if not os.path.exists(o) or os.path.getmtime(o) < max(os.path.getmtime(j[-1]), newest):
            procs.append((o, subprocess.Popen(j + ["-o", o + ".tmp"], stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT, text=True)))
    errs = []
    for o, p in procs:
        out = p.communicate()[0]
        if p.returncode:
            errs.append(out)
        else:
            os.replace(o + ".tmp", o)
    return objs, errs


def san_env(kind):
    """The environment of a runtime_program_builds build of that kind."""
    env = dict(os.environ)
    if kind == "asan":
        env.update(SAN_ENV)
    return env


def run(cmd, timeout=120, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise Failure("timed out: " + " ".join(cmd[:2]))


def first_line(s):
    s = s.strip()
    return s.splitlines()[0][:300] if s else ""


# How the tests build generated code to check its results: for the instruction set of this
# machine, so that only the path it runs is compiled (templates/isa.c: the vector paths below
# the target's are left out), not all three; a third of the build time of a file of matrix
# products. The file as a distribution builds it, every path in it, is test_same_bits' first
# build, and its outputs there must be the bits of the -march=native builds.
CFLAGS = ("-O1", "-march=native")


def compile_model(mlbc, model, workdir, extra=(), cc="cc", cflags=CFLAGS, build=True, libs=()):
    """mlbc + cc: returns the path of a driver executable for the model (with build=False,
    only mlbc runs: build_driver() then builds workdir/model.c, e.g. once per compiler)."""
    os.makedirs(workdir, exist_ok=True)
    c = os.path.join(workdir, "model.c")
    r = run([mlbc, model, "-o", c, "-n", "model"] + list(extra))
    if r.returncode < 0:
        raise Failure("mlbc CRASHED with signal %d: %s" % (-r.returncode, first_line(r.stderr)))
    if r.returncode:
        raise Failure(first_line(r.stderr) or "mlbc failed")
    return build_driver(workdir, cc, cflags, libs=libs) if build else c


_drivers = {}
_drivers_lock = threading.Lock()
_noise = {}
_noise_lock = threading.Lock()


def toolchain_warnings(cc, flags):
    """The warning lines CC prints with FLAGS for an empty file: the toolchain's own, not the
    code's (clang-19 -march=native on an Intel CPU with AVX10.1 warns "invalid feature
    combination" for any file). Computed once per compiler and flags."""
    key = (cc, tuple(flags))
    with _noise_lock:
        if key not in _noise:
            with tempfile.TemporaryDirectory() as d:
                empty = os.path.join(d, "empty.c")
                with open(empty, "w") as f:
                    f.write("typedef int mlbc_empty;\n")   # ISO C wants a declaration
                r = run([cc, *flags, "-c", empty, "-o", os.path.join(d, "empty.o")])
            _noise[key] = {l for l in r.stderr.splitlines() if "warning:" in l}
        return _noise[key]


def code_warnings(cc, flags, stderr):
    """The warning lines of STDERR, from CC with FLAGS, that are about the code compiled."""
    noise = toolchain_warnings(cc, flags)
    return [l for l in stderr.splitlines() if "warning:" in l and l not in noise]


def driver_object(cc, cflags):
    """driver.c built once per compiler and flags: it sees a model only through its
    descriptor (runtime/mlbc_model_desc.h), model_desc, so every test links the same object."""
    key = (cc, tuple(cflags))
    with _drivers_lock:
        if key not in _drivers:
            if not _drivers:
                _drivers["dir"] = tempfile.mkdtemp(prefix="mlbc-driver-")
                atexit.register(shutil.rmtree, _drivers["dir"], True)
            obj = os.path.join(_drivers["dir"], "driver%d.o" % len(_drivers))
            flags = ["-std=c99", *cflags, "-Wall", "-Wextra", "-pedantic"]
            r = run([cc, *flags, "-include", "stddef.h", "-include", "stdint.h", "-include",
                     os.path.join(ROOT, "runtime", "mlbc_model_desc.h"),
                     "-DMODEL_DESC=model_desc", "-c", os.path.join(HERE, "driver.c"), "-o", obj])
            if r.returncode or code_warnings(cc, flags, r.stderr):
                raise Failure("driver.c: %s: %s" % (os.path.basename(cc), first_line(r.stderr)))
            _drivers[key] = obj
        return _drivers[key]


def build_driver(workdir, cc="cc", cflags=CFLAGS, exe="driver", libs=()):
    """workdir/model.c + driver.c -> workdir/EXE, built by CC (a cross compiler too)."""
    exe = os.path.join(workdir, exe)
    # Generated code must be warning-free (SPEC 2): any warning fails the test.
    flags = ["-std=c99", *cflags, "-Wall", "-Wextra", "-pedantic"]
    r = run([cc, *flags, os.path.join(workdir, "model.c"), driver_object(cc, cflags), "-o", exe,
             *libs, "-lm"])
    if r.returncode:
        raise Failure("%s: %s" % (os.path.basename(cc), first_line(r.stderr)))
    warns = code_warnings(cc, flags, r.stderr)
    if warns:
        raise Failure("%s warns: %s" % (os.path.basename(cc), warns[0]))
    return exe


def to_buffer(a, elem_type):
    a = np.ascontiguousarray(a)
    if elem_type == 16 and a.dtype != np.uint16:   # bfloat16 as float32: keep the top half
        a = (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return a.astype(NP_OF[elem_type]).tobytes()


def from_buffer(data, elem_type, shape):
    return np.frombuffer(data, dtype=NP_OF[elem_type]).reshape(shape)


def execute(exe, workdir, inputs, input_types, output_specs, timeout=20, runner=()):
    """inputs: list of arrays; output_specs: list of (elem_type, shape). runner: a command
    prefix that runs the executable (an emulator such as qemu-aarch64)."""
    for i, (a, t) in enumerate(zip(inputs, input_types)):
        with open(os.path.join(workdir, "in%d.bin" % i), "wb") as f:
            f.write(to_buffer(a, t))
    r = run([*runner, exe, workdir], timeout=timeout)
    if r.returncode < 0:
        raise Failure("generated code CRASHED with signal %d" % -r.returncode)
    if r.returncode:
        raise Failure("driver: " + (first_line(r.stderr) or "status %d" % r.returncode))
    outs = []
    for i, (t, shape) in enumerate(output_specs):
        with open(os.path.join(workdir, "out%d.bin" % i), "rb") as f:
            outs.append(from_buffer(f.read(), t, shape))
    return outs


def compare(name, got, want, rtol=1e-3, atol=1e-5):
    """Floats within tolerance (NaN where NaN), integers and bools exact."""
    want = np.asarray(want)
    if got.shape != want.shape:
        raise Failure("%s: shape %s, expected %s" % (name, got.shape, want.shape))
    if want.dtype.kind in "fc" or want.dtype == np.float16:
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            i = np.argwhere(bad)[0]
            raise Failure("%s: %d of %d values differ, e.g. at %s: %r vs %r" % (
                name, bad.sum(), bad.size, tuple(i), g[tuple(i)], w[tuple(i)]))
    else:
        if not np.array_equal(got.astype(want.dtype), want):
            bad = got.astype(want.dtype) != want
            i = np.argwhere(bad)[0]
            raise Failure("%s: %d of %d values differ, e.g. at %s: %r vs %r" % (
                name, bad.sum(), bad.size, tuple(i), got[tuple(i)], want[tuple(i)]))


def same_bits(a, b):
    """Bytewise equal, and equal up to NaN sign and payload: where two NaNs meet, IEEE 754
    leaves which one an operation returns to the instruction (an FMA's operand order), so
    that is not part of the same-bits contract."""
    if a.tobytes() == b.tobytes():
        return True, True
    if a.dtype.kind == "f" or a.dtype == np.float16:
        na, nb = np.isnan(a), np.isnan(b)
        if np.array_equal(na, nb):
            return False, a[~na].tobytes() == b[~nb].tobytes()
    return False, False


def tensor_types(model):
    """(elem_type, shape) of the runtime inputs and the outputs; None if not all tensors."""
    inits = {t.name for t in model.graph.initializer}
    def spec(vi):
        t = vi.type
        if t.WhichOneof("value") != "tensor_type" or t.tensor_type.elem_type in (0, 8):
            return None
        return t.tensor_type.elem_type
    ins = [spec(v) for v in model.graph.input if v.name not in inits]
    outs = [spec(v) for v in model.graph.output]
    if None in ins or None in outs or any(t not in NP_OF for t in ins + outs):
        return None
    return ins, outs
