"""make install / make uninstall, and the installed tree used the ways a build uses it: the
file list (with DESTDIR: nothing outside it), a CMake project with find_package(mlbc) and
mlbc_add_model (re-run when the model changes), a Make project with pkg-config linking
libmlbc_rt.a, the man pages, the Python package (installed by make, and by pip offline).
Real make, cmake, pkg-config, cc, man and pip; everything happens in a temporary directory."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import mlbctest

passed = failed = 0
ROOT = mlbctest.ROOT
PYVER = "%d.%d" % sys.version_info[:2]
TOOLS = ("mlbc", "mlbc-serve", "mlbc-replay")


def check(ok, name, why=""):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    print(("PASS %s" if ok else "FAIL %s: " + str(why)[:600]) % name)


def sh(cmd, timeout=120, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, -999, e.stdout or "", "timed out: %s" % cmd)


def out(r):
    return ("status %d: " % r.returncode) + (r.stderr.strip() or r.stdout.strip())[-500:]


def expected_files(prefix):
    """Every file make install must create, relative to the root of the install."""
    p = prefix.lstrip("/")
    py = "lib/python3/dist-packages" if prefix == "/usr" else "lib/python%s/dist-packages" % PYVER
    names = ["bin/" + t for t in TOOLS]
    names += ["lib/libmlbc_rt.a", "include/mlbc/mlbc_runtime.h", "include/mlbc/mlbc_model_desc.h",
              "lib/libmlbc_grpc.a", "lib/mlbc/libmlbc_grpc.so", "include/mlbc/mlbc_grpc.h",
              "lib/pkgconfig/mlbc-grpc.pc",
              "lib/pkgconfig/mlbc.pc", "lib/cmake/mlbc/mlbcConfig.cmake",
              "lib/cmake/mlbc/mlbcConfigVersion.cmake"]
    names += ["share/man/man1/%s.1" % t for t in TOOLS]
    names += ["%s/mlbc_gym/%s" % (py, f) for f in
              sorted(os.listdir(os.path.join(ROOT, "runtime", "python", "mlbc_gym")))
              if f.endswith(".py")]
    return {os.path.join(p, n) for n in names}


def tree(root):
    """(files, directories) under root, relative to it."""
    files, dirs = set(), set()
    for d, subdirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        for s in subdirs:
            dirs.add(os.path.normpath(os.path.join(rel, s)))
        for n in names:
            files.add(os.path.normpath(os.path.join(rel, n)))
    return files, dirs


def make(build, *args):
    return sh(["make", "-C", ROOT, "--no-print-directory", "BUILD=" + build,
               "PYTHON=" + sys.executable] + list(args), timeout=600)


# ---- the projects that use the installed tree -----------------------------------------

def inliner_samples():
    """The inliner's reference samples: feature names (reversed, so that binding by name
    matters), values [sample][feature], expected decisions."""
    z = np.load(os.path.join(ROOT, "models", "ref", "inliner.npz"))
    names = [k.split(":")[1] for k in z.files if k.startswith("in:") and k.endswith(":0")][::-1]
    n = 0
    while "out:inlining_decision:%d" % n in z.files:
        n += 1
    values = [[int(z["in:%s:%d" % (f, k)].reshape(-1)[0]) for f in names] for k in range(n)]
    want = [int(z["out:inlining_decision:%d" % k].reshape(-1)[0]) for k in range(n)]
    return names, values, want


def samples_header(names, values):
    rows = ",\n".join("    {%s}" % ", ".join("INT64_C(%d)" % v for v in row) for row in values)
    return ("#include <stdint.h>\n#define NFEAT %d\n#define NSAMPLES %d\n"
            "static const char *const feat_names[NFEAT] = {%s};\n"
            "static const int64_t feat_values[NSAMPLES][NFEAT] = {\n%s\n};\n" % (
                len(names), len(values), ", ".join('"%s"' % n for n in names), rows))


# One program for both projects: the generated API directly, then (WITH_RUNTIME) the
# runtime's release runner binding the same features by name, plus one the model lacks.
MAIN_C = r"""
#include <stdint.h>
#include <stdio.h>
#include "policy.h"
#include "samples.h"
#ifdef WITH_RUNTIME
#include "mlbc_runtime.h"
#endif

int main(void)
{
    static policy_ctx ctx;
    int s, f;
    policy_init(&ctx);
    printf("direct:");
    for (s = 0; s < NSAMPLES; s++) {
        for (f = 0; f < NFEAT; f++) {
            int i = policy_lookup_arg_index(feat_names[f]);
            if (i < 0) { fprintf(stderr, "no input %s\n", feat_names[f]); return 2; }
            *(int64_t *)policy_arg_data(&ctx, i) = feat_values[s][f];
        }
        if (policy_run(&ctx) != 0) return 3;
        printf(" %lld", (long long)*(const int64_t *)policy_result_data(&ctx, 0));
    }
    printf("\n");
#ifdef WITH_RUNTIME
    {
        static mlbc_tensor_spec specs[NFEAT + 1];
        mlbc_tensor_spec advice;
        const int64_t one = 1;
        char err[256];
        mlbc_runner *r;
        for (f = 0; f < NFEAT; f++)
            specs[f] = mlbc_spec(feat_names[f], MLBC_INT64, 1, &one);
        specs[NFEAT] = mlbc_spec("a_feature_the_model_lacks", MLBC_INT64, 1, &one);
        advice = mlbc_spec("inlining_decision", MLBC_INT64, 1, &one);
        r = mlbc_runner_release(&policy_desc, specs, NFEAT + 1, &advice, NULL, err, sizeof err);
        if (!r) { fprintf(stderr, "runner: %s\n", err); return 4; }
        if (mlbc_runner_num_inputs(r) != NFEAT + 1 || !mlbc_runner_input_bound(r, 0) ||
            mlbc_runner_input_bound(r, NFEAT) || !mlbc_runner_input(r, NFEAT))
            return 5;
        printf("runner:");
        for (s = 0; s < NSAMPLES; s++) {
            const int64_t *a;
            for (f = 0; f < NFEAT; f++)
                *(int64_t *)mlbc_runner_input(r, f) = feat_values[s][f];
            a = mlbc_runner_evaluate(r);
            if (!a) { fprintf(stderr, "evaluate: %s\n", mlbc_runner_error(r)); return 6; }
            printf(" %lld", (long long)*a);
        }
        printf("\n");
        mlbc_runner_free(r);
    }
#endif
    return 0;
}
"""

DQN_C = r"""
#include <stdint.h>
#include <stdio.h>
#include "dqn.h"
#include "dqn_samples.h"

int main(void)
{
    static dqn_ctx ctx;
    int s, j, iq = dqn_lookup_result_index("q"), ia = dqn_lookup_result_index("action");
    if (dqn_lookup_arg_index("embedding") != 0 || iq < 0 || ia < 0) return 2;
    dqn_init(&ctx);
    for (s = 0; s < NSAMPLES; s++) {
        float *x = dqn_arg_data(&ctx, 0);
        const float *q;
        for (j = 0; j < NEMB; j++) x[j] = emb[s][j];
        if (dqn_run(&ctx) != 0) return 3;
        q = dqn_result_data(&ctx, iq);
        printf("action %lld q", (long long)*(const int64_t *)dqn_result_data(&ctx, ia));
        for (j = 0; j < NQ; j++) printf(" %.9g", q[j]);
        printf("\n");
    }
    return 0;
}
"""

CMAKE_GRPC_C = r"""
#include <stdio.h>
#include "mlbc_grpc.h"

/* No model server at 127.0.0.1:1: evaluate fails at once (no retries), the fallback. */
int main(void)
{
    int64_t one[1] = {1};
    mlbc_tensor_spec f = mlbc_spec("x", MLBC_INT64, 1, one), a = mlbc_spec("y", MLBC_INT64, 1, one);
    mlbc_grpc_options o = {.timeout_ms = 500, .retries = -1};
    char err[256];
    mlbc_runner *r = mlbc_runner_grpc("127.0.0.1:1", &f, 1, &a, &o, err, sizeof err);
    if (!r) {
        printf("error: %s\n", err);
        return 1;
    }
    const void *adv = mlbc_runner_evaluate(r);
    printf("%s: %s\n", adv ? "advice" : "fallback", mlbc_runner_error(r));
    mlbc_runner_free(r);
    return adv != NULL;
}
"""

CMAKELISTS = r"""
cmake_minimum_required(VERSION 3.13)
project(uses_mlbc C)
find_package(mlbc 0.1 REQUIRED)
message(STATUS "MLBC_EXECUTABLE=${MLBC_EXECUTABLE}")

add_executable(decide main.c)
target_compile_definitions(decide PRIVATE WITH_RUNTIME)
target_link_libraries(decide PRIVATE mlbc::runtime)
mlbc_add_model(decide inliner.onnx NAME policy)

# The gRPC runner from C: mlbc::grpc brings grpc++ and libstdc++.
add_executable(grpc_check grpc_check.c)
target_link_libraries(grpc_check PRIVATE mlbc::grpc)

# Generated code alone (no runtime), through CBLAS: mlbc_add_model links what it needs.
add_executable(dqn_blas dqn_main.c)
mlbc_add_model(dqn_blas models/dqn.onnx NAME dqn OPTIONS --blas)
"""

MAKEFILE = """\
# A plain Make build: mlbc from the installed prefix, flags from pkg-config.
MLBC    := $(shell pkg-config --variable=mlbc mlbc)
CFLAGS  := -O2 -Wall $(shell pkg-config --cflags mlbc)
LDLIBS  := $(shell pkg-config --libs mlbc)

all: decide decide_model_only

policy.c: inliner.onnx
\t$(MLBC) inliner.onnx -o policy.c -n policy
policy.h: policy.c

decide: main.c policy.c policy.h samples.h
\t$(CC) $(CFLAGS) -DWITH_RUNTIME -I. -o $@ main.c policy.c $(LDLIBS)

# Only generated code: needs nothing but -lm.
decide_model_only: main.c policy.c policy.h samples.h
\t$(CC) -O2 -Wall -I. -o $@ main.c policy.c -lm
"""


def parse_decisions(text):
    got = {}
    for line in text.splitlines():
        k, _, rest = line.partition(":")
        got[k] = [int(v) for v in rest.split()]
    return got


def dqn_project(proj):
    z = np.load(os.path.join(ROOT, "models", "ref", "dqn.npz"))
    n = 0
    while "in:embedding:%d" % n in z.files:
        n += 1
    emb = [z["in:embedding:%d" % k].reshape(-1) for k in range(n)]
    q = [z["out:q:%d" % k].reshape(-1) for k in range(n)]
    act = [int(z["out:action:%d" % k].reshape(-1)[0]) for k in range(n)]
    with open(os.path.join(proj, "dqn_samples.h"), "w") as f:
        f.write("#define NSAMPLES %d\n#define NEMB %d\n#define NQ %d\n" % (n, len(emb[0]), len(q[0])))
        f.write("static const float emb[NSAMPLES][NEMB] = {\n%s\n};\n" % ",\n".join(
            "{%s}" % ", ".join("%.9gf" % v for v in e) for e in emb))
    with open(os.path.join(proj, "dqn_main.c"), "w") as f:
        f.write(DQN_C)
    os.makedirs(os.path.join(proj, "models"))
    shutil.copy(os.path.join(ROOT, "models", "dqn.onnx"), os.path.join(proj, "models"))
    return q, act


def check_dqn(r, q, act):
    lines = r.stdout.splitlines()
    ok = r.returncode == 0 and len(lines) == len(act)
    why = out(r)
    for line, qk, ak in zip(lines, q, act) if ok else ():
        f = line.split()
        got_q = np.array([float(v) for v in f[3:]], np.float64)
        if int(f[1]) != ak or got_q.shape != qk.shape or \
                not np.allclose(got_q, qk, rtol=1e-3, atol=1e-5):
            ok, why = False, "got %r, want action %d q %s..." % (line[:120], ak, qk[:3])
            break
    check(ok, "CMake: dqn (mlbc_add_model OPTIONS --blas, no runtime) matches models/ref "
          "on %d samples" % len(act), why)


def cmake_project(tmp, root, prefix_path, names, values, want):
    """find_package(mlbc) against the installed tree at root (a DESTDIR staging directory:
    the config file must find everything relative to itself)."""
    proj, bld = os.path.join(tmp, "cmake-proj"), os.path.join(tmp, "cmake-build")
    os.makedirs(proj)
    for name, text in (("CMakeLists.txt", CMAKELISTS), ("main.c", MAIN_C), ("grpc_check.c", CMAKE_GRPC_C),
                       ("samples.h", samples_header(names, values))):
        with open(os.path.join(proj, name), "w") as f:
            f.write(text)
    model = os.path.join(proj, "inliner.onnx")
    shutil.copy(os.path.join(ROOT, "models", "inliner.onnx"), model)
    q, act = dqn_project(proj)

    env = dict(os.environ)
    env.pop("CMAKE_GENERATOR", None)
    r = sh(["cmake", "-G", "Unix Makefiles", "-S", proj, "-B", bld,
            "-DCMAKE_PREFIX_PATH=" + prefix_path], env=env)
    exe = re.search(r"MLBC_EXECUTABLE=(\S+)", r.stdout)
    check(r.returncode == 0 and exe and exe.group(1) == os.path.join(prefix_path, "bin", "mlbc"),
          "CMake: find_package(mlbc 0.1) from a relocated (DESTDIR) tree, MLBC_EXECUTABLE inside it",
          out(r) if r.returncode else exe and exe.group(1))
    if r.returncode:
        return
    r = sh(["cmake", "--build", bld, "-j2"], env=env, timeout=300)
    check(r.returncode == 0 and "mlbc: compiling inliner.onnx" in r.stdout
          and "mlbc: compiling models/dqn.onnx" in r.stdout,
          "CMake: mlbc_add_model runs mlbc at build time and the targets build", out(r))
    if r.returncode:
        return
    gen = os.path.join(bld, "mlbc", "decide", "policy.c")
    gen_dqn = os.path.join(bld, "mlbc", "dqn_blas", "dqn.c")
    check(os.path.exists(gen) and os.path.exists(gen[:-2] + ".h") and
          not os.path.exists(os.path.join(proj, "policy.c")),
          "CMake: generated policy.c/.h in the build directory, not the source directory")

    r = sh([os.path.join(bld, "decide")])
    got = parse_decisions(r.stdout)
    check(r.returncode == 0 and got.get("direct") == want and got.get("runner") == want,
          "CMake: decide (generated API and mlbc::runtime release runner) gives the reference "
          "decisions %s" % want, out(r) + " " + r.stdout)

    link = open(os.path.join(bld, "CMakeFiles", "dqn_blas.dir", "link.txt")).read()
    # dqn's products are all mlbc's own kernels': --blas shows in the header's note only
    check("--blas: no product here" in open(gen_dqn[:-2] + ".h").read() and "openblas" in link
          and " -lm" in link + " " and "mlbc_rt" not in link,
          "CMake: OPTIONS --blas reaches mlbc and links OpenBLAS and -lm (and no runtime)", link)
    check_dqn(sh([os.path.join(bld, "dqn_blas")]), q, act)
    r = sh([os.path.join(bld, "grpc_check")])
    check(r.returncode == 0 and r.stdout.startswith("fallback: grpc 127.0.0.1:1: Evaluate failed")
          and "no model server reachable" in r.stdout,
          "CMake: a C program linking mlbc::grpc gets the gRPC runner's fallback (no server)",
          out(r) + " " + r.stdout)

    # Up to date: nothing runs mlbc again. Then touch one model: only its mlbc re-runs.
    r = sh(["cmake", "--build", bld], env=env)
    check(r.returncode == 0 and "mlbc: compiling" not in r.stdout,
          "CMake: an up-to-date build does not re-run mlbc", out(r) + r.stdout[-300:])
    before = os.stat(gen).st_mtime_ns
    time.sleep(0.05)
    os.utime(model)
    r = sh(["cmake", "--build", bld], env=env)
    check(r.returncode == 0 and "mlbc: compiling inliner.onnx" in r.stdout and
          "dqn.onnx" not in r.stdout and os.stat(gen).st_mtime_ns > before and
          "Linking C executable decide" in r.stdout,
          "CMake: touching inliner.onnx re-runs mlbc for it (only) and relinks", out(r) + r.stdout[-400:])
    r = sh([os.path.join(bld, "decide")])
    check(r.returncode == 0 and parse_decisions(r.stdout).get("runner") == want,
          "CMake: the rebuilt program still gives the reference decisions", out(r))


def make_project(tmp, prefix, names, values, want, version):
    proj = os.path.join(tmp, "make-proj")
    os.makedirs(proj)
    for name, text in (("Makefile", MAKEFILE), ("main.c", MAIN_C),
                       ("samples.h", samples_header(names, values))):
        with open(os.path.join(proj, name), "w") as f:
            f.write(text)
    shutil.copy(os.path.join(ROOT, "models", "inliner.onnx"), proj)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    env.pop("PKG_CONFIG_LIBDIR", None)

    r = sh(["pkg-config", "--cflags", "--libs", "mlbc"], env=env)
    flags = r.stdout.split()
    check(r.returncode == 0 and "-I%s/include/mlbc" % prefix in flags and
          "-L%s/lib" % prefix in flags and "-lmlbc_rt" in flags and
          flags.index("-lmlbc_rt") < flags.index("-ldl"),
          "pkg-config --cflags --libs mlbc: -I<prefix>/include/mlbc -L<prefix>/lib -lmlbc_rt -ldl ...",
          out(r) + r.stdout)
    r = sh(["pkg-config", "--modversion", "mlbc"], env=env)
    r2 = sh(["pkg-config", "--variable=mlbc", "mlbc"], env=env)
    check(r.stdout.strip() == version and r2.stdout.strip() == os.path.join(prefix, "bin", "mlbc"),
          "pkg-config: --modversion is %s, variable mlbc is the installed compiler" % version,
          r.stdout + r2.stdout + r.stderr)
    r = sh(["pkg-config", "--validate", "mlbc"], env=env)
    check(r.returncode == 0, "pkg-config --validate mlbc", out(r))
    check_grpc_link(proj, env)

    r = sh(["make", "-C", proj, "--no-print-directory"], env=env)
    check(r.returncode == 0 and "warning" not in r.stderr,
          "Make: mlbc via pkg-config, a program linking libmlbc_rt.a and one with the model only",
          out(r))
    if r.returncode:
        return
    r = sh([os.path.join(proj, "decide")])
    got = parse_decisions(r.stdout)
    check(r.returncode == 0 and got.get("direct") == want and got.get("runner") == want,
          "Make: decide (generated API and release runner) gives the reference decisions", out(r))
    r = sh([os.path.join(proj, "decide_model_only")])
    got = parse_decisions(r.stdout)
    check(r.returncode == 0 and got.get("direct") == want and "runner" not in got,
          "Make: generated code alone, linked with just -lm, gives the reference decisions", out(r))


def man_pages(prefix):
    env = dict(os.environ, MANWIDTH="100", MANPATH=os.path.join(prefix, "share", "man"),
               LC_ALL="C.UTF-8")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    for tool in TOOLS:
        page = os.path.join(prefix, "share", "man", "man1", tool + ".1")
        r = sh(["man", "--warnings", "-l", page], env=env)
        text = re.sub("[\u2010-]\n\\s*", "", r.stdout)  # words hyphenated across lines
        h = sh([os.path.join(prefix, "bin", tool), "--help"])
        opts = sorted(set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", h.stdout)) - {"-shared", "-fPIC"})
        missing = [o for o in opts if o not in text]
        check(r.returncode == 0 and not r.stderr.strip() and "NAME" in text and
              ("%s -" % tool) in text and h.returncode == 0 and len(opts) >= 5 and not missing,
              "man -l %s.1 renders without warnings and documents all %d options of %s --help"
              % (tool, len(opts), tool), out(r) + " missing: %s" % missing)
        r = sh(["man", "-w", tool], env=env)
        check(r.returncode == 0 and os.path.realpath(r.stdout.strip()) == os.path.realpath(page),
              "man -w %s finds the installed page under MANPATH=<prefix>/share/man" % tool, out(r))


def python_package(tmp, prefix):
    site = os.path.join(prefix, "lib", "python%s" % PYVER, "dist-packages")
    code = "import mlbc_gym, sys; print(mlbc_gym.__file__); print(mlbc_gym.__version__)"
    r = sh([sys.executable, "-c", code], cwd=tmp, env=dict(os.environ, PYTHONPATH=site))
    lines = r.stdout.split()
    check(r.returncode == 0 and lines and lines[0].startswith(site + os.sep),
          "make install: import mlbc_gym from <prefix>/lib/python%s/dist-packages" % PYVER, out(r))
    r = sh([sys.executable, "-m", "mlbc_gym", "--help"], cwd=tmp,
           env=dict(os.environ, PYTHONPATH=site))
    check(r.returncode == 0 and "serve" in r.stdout, "make install: python3 -m mlbc_gym --help", out(r))
    native = ("import mlbc_gym; from mlbc_gym import native; print(native.library_path()); "
              "s = mlbc_gym.serve_model(lambda f, c, i: 1, '127.0.0.1:0'); "
              "print(type(s).__name__, s.port > 0); s.stop()")
    env = {k: v for k, v in os.environ.items() if k != "MLBC_GRPC_LIB"}
    r = sh([sys.executable, "-c", native], cwd=tmp, env=dict(env, PYTHONPATH=site))
    lib = os.path.join(prefix, "lib", "mlbc", "libmlbc_grpc.so")
    check(r.returncode == 0 and r.stdout.split() == [lib, "NativeModelServer", "True"],
          "make install: mlbc_gym's serve_model runs on <prefix>/lib/mlbc/libmlbc_grpc.so",
          out(r))

    # pip, offline and without build isolation (Debian's setuptools). pip builds in the
    # source directory (build/, *.egg-info), so it is given a copy of runtime/python.
    src = os.path.join(tmp, "python-src")
    shutil.copytree(os.path.join(ROOT, "runtime", "python"), src,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    target = os.path.join(tmp, "pip-target")
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = sh([sys.executable, "-m", "pip", "install", "--no-index", "--no-build-isolation",
            "--no-cache-dir", "--root-user-action=ignore", "--target", target, src],
           env=env, cwd=tmp, timeout=180)
    check(r.returncode == 0, "pip install --no-index --no-build-isolation --target DIR runtime/python",
          out(r))
    r = sh([sys.executable, "-c", code], cwd=tmp, env=dict(os.environ, PYTHONPATH=target))
    lines = r.stdout.split()
    dist = [d for d in (os.listdir(target) if os.path.isdir(target) else [])
            if d.startswith("mlbc_gym-") and d.endswith(".dist-info")]
    check(r.returncode == 0 and lines and lines[0].startswith(target + os.sep) and
          dist == ["mlbc_gym-%s.dist-info" % lines[1]],
          "pip: import mlbc_gym from the target, dist-info version = mlbc_gym.__version__",
          out(r) + " %s" % dist)


def python_dir_on_path(build):
    """The directory make install chooses for mlbc_gym is one Debian's python searches,
    for PREFIX=/usr/local and PREFIX=/usr (make -n: nothing is installed)."""
    r = sh([sys.executable, "-c", "import site; print('\\n'.join(site.getsitepackages()))"])
    sitepkgs = r.stdout.split()
    for prefix in ("/usr/local", "/usr"):
        r = make(build, "-n", "install", "PREFIX=" + prefix, "DESTDIR=/nonexistent-stage")
        dests = re.findall(r"/nonexistent-stage(\S*)/mlbc_gym/", r.stdout)
        check(r.returncode == 0 and dests and all(d in sitepkgs for d in dests),
              "make -n install PREFIX=%s puts mlbc_gym in a directory on %s's sys.path (%s)"
              % (prefix, os.path.basename(sys.executable), dests and dests[0]),
              out(r) + " site: %s" % sitepkgs)


GRPC_C = r"""#include <stdio.h>
#include <string.h>
#include "mlbc_grpc.h"
int main(void)
{
    int64_t one[] = {1};
    mlbc_tensor_spec f = mlbc_spec("f", MLBC_INT64, 1, one);
    char err[256];
    mlbc_runner *r = mlbc_runner_grpc("0.0.0.0:1", &f, 1, &f, NULL, err, sizeof err);
    puts(err);
    return r != NULL || !strstr(err, "not a loopback address");
}
"""


def check_grpc_link(proj, env):
    """A C program linked by pkg-config mlbc-grpc alone runs the installed gRPC runner."""
    src, exe = os.path.join(proj, "grpc.c"), os.path.join(proj, "grpc_refuse")
    with open(src, "w") as f:
        f.write(GRPC_C)
    r = sh(["pkg-config", "--cflags", "--libs", "mlbc-grpc"], env=env)
    if r.returncode == 0:
        r = sh(["cc", "-Wall", "-Wextra", "-Werror", "-o", exe, src] + r.stdout.split(), env=env)
    if r.returncode == 0:
        r = sh([exe])
    check(r.returncode == 0, "pkg-config mlbc-grpc: a C program links the installed gRPC "
          "runner and runs it", out(r))


def check_layout(root, prefix, what):
    files, dirs = tree(root)
    want = expected_files(prefix)
    check(files == want, "%s: installs exactly the %d expected files" % (what, len(want)),
          "missing %s, unexpected %s" % (sorted(want - files), sorted(files - want)))
    bad = [f for f in files if f.endswith((".o", ".d", ".c", ".in")) or
           os.path.basename(f) in ("internal.h", "json.h", "test_unit")]
    check(not bad, "%s: no build-tree artefacts or internal headers" % what, bad)
    base = os.path.join(root, prefix.lstrip("/"))
    modes = {f: os.stat(os.path.join(root, f)).st_mode & 0o777 for f in files}
    wrong = [f for f, m in modes.items()
             if m != (0o755 if os.path.dirname(f).endswith("/bin") or f.startswith("bin/") else 0o644)]
    check(not wrong, "%s: tools mode 755, other files 644" % what, wrong)
    # The public headers are self-contained: a C file including only the installed one compiles.
    for h in ("mlbc_runtime.h", "mlbc_grpc.h"):
        r = sh(["cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only",
                "-I", os.path.join(base, "include", "mlbc"), "-x", "c", "-"],
               input='#include "%s"\nint main(void) { return MLBC_INT64 != 7; }\n' % h)
        check(r.returncode == 0, "%s: installed %s compiles on its own (c99 -pedantic)"
              % (what, h), out(r))
    return base


def check_uninstalled(root, prefix, what):
    files, dirs = tree(root)
    ours = [d for d in dirs if d.endswith(("include/mlbc", "lib/cmake/mlbc", "mlbc_gym"))]
    check(not files and not ours, "%s: make uninstall leaves no file and none of our directories"
          % what, sorted(files) + ours)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    # Run from `make test`: the parent make's flags (jobserver, command-line variables)
    # must not reach the makes run here.
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PKG_CONFIG_SYSROOT_DIR"):
        os.environ.pop(k, None)
    build = os.path.abspath(args.build)
    if build.startswith(ROOT + os.sep):
        build = os.path.relpath(build, ROOT)  # the same make targets as the build itself
    for tool in ("make", "cmake", "pkg-config", "cc", "man"):
        if not shutil.which(tool):
            check(False, "%s is installed (tools/install-deps.sh)" % tool)
    r = sh([os.path.join(ROOT, build, "mlbc"), "--version"])
    version = r.stdout.split()[-1] if r.returncode == 0 and r.stdout.split() else "?"
    names, values, want = inliner_samples()
    assert len(set(want)) > 1  # the reference decisions are not all alike

    tmp = tempfile.mkdtemp(prefix="mlbc-install-")
    try:
        # 1. DESTDIR staging: everything under DESTDIR/PREFIX, nothing at PREFIX itself.
        stage = os.path.join(tmp, "stage")
        vprefix = "/opt/mlbc-test-%d-%d" % (os.getpid(), int(time.time()))
        r = make(build, "install", "PREFIX=" + vprefix, "DESTDIR=" + stage)
        check(r.returncode == 0, "make install PREFIX=%s DESTDIR=<tmp>" % vprefix, out(r))
        files, dirs = tree(stage)
        outside = [f for f in files | dirs
                   if not (f + "/").startswith(vprefix.lstrip("/") + "/") and
                   not (vprefix.lstrip("/") + "/").startswith(f + "/")]
        check(not outside and not os.path.exists(vprefix),
              "DESTDIR: nothing lands outside DESTDIR/PREFIX, nothing at PREFIX itself", outside)
        sbase = check_layout(stage, vprefix, "DESTDIR install")
        pc = open(os.path.join(sbase, "lib", "pkgconfig", "mlbc.pc")).read()
        check(re.search(r"^prefix=%s$" % re.escape(vprefix), pc, re.M) and
              re.search(r"^Version: %s$" % re.escape(version), pc, re.M),
              "mlbc.pc names the real PREFIX (not DESTDIR) and version %s" % version, pc[-300:])

        # 2. A plain install into a temporary prefix.
        prefix = os.path.join(tmp, "prefix")
        r = make(build, "install", "PREFIX=" + prefix)
        check(r.returncode == 0, "make install PREFIX=<tmp>/prefix", out(r))
        check_layout(prefix, "/", "PREFIX install")
        r = sh([os.path.join(prefix, "bin", "mlbc"), "--version"], cwd=tmp)
        check(r.returncode == 0 and r.stdout.strip() == "mlbc " + version,
              "installed mlbc runs from any directory", out(r))
        python_dir_on_path(build)

        # 3. Using it.
        cmake_project(tmp, stage, sbase, names, values, want)
        make_project(tmp, prefix, names, values, want, version)
        man_pages(prefix)
        python_package(tmp, prefix)

        # 4. Uninstall both: no file of ours is left.
        r = make(build, "uninstall", "PREFIX=" + vprefix, "DESTDIR=" + stage)
        check(r.returncode == 0, "make uninstall PREFIX=%s DESTDIR=<tmp>" % vprefix, out(r))
        check_uninstalled(stage, vprefix, "DESTDIR")
        r = make(build, "uninstall", "PREFIX=" + prefix)
        r2 = make(build, "uninstall", "PREFIX=" + prefix)
        check(r.returncode == 0 and r2.returncode == 0,
              "make uninstall PREFIX=<tmp>/prefix (and again: nothing to do)", out(r) + out(r2))
        check_uninstalled(prefix, "/", "PREFIX")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
