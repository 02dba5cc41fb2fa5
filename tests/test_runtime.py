"""The runtime library (libmlbc_rt): builds tests/runtime/test_runtime.c against BUILD's
libmlbc_rt.a and two models compiled by mlbc (models/inliner.onnx, tests/runtime/
selector.onnxtxt), once plain and once with the runtime sources under ASan+UBSan, then:

* the C checks (specs, release, shared-object and ONNX runners, model selector, env loop by
  index and by label, JSON, logger and reader) in both builds;
* the release runner against the generated code and PyTorch's reference decisions
  (models/ref/inliner.npz), plus random feature vectors, also through the ONNX runner;
* processes racing to compile one model into an empty ONNX cache; shared objects planted in
  the cache (another user's folder or entry, group- or other-writable entries, links) never
  loaded; a model path that mlbc could read as SELECTOR=PATH compiled as named;
* the logger against an independent Python writer of LLVM's format and, when clang++-19 and
  libLLVM-19 are there, against LLVM's own llvm::Logger, byte for byte;
* the reader on logs and streams written here (adjacent contexts, observations without
  outcomes, payloads holding newlines, other spacing and key order), on corrupt and truncated
  input (an error with the right byte offset, never a crash), on every prefix of a log and
  on random mutations.

Work files go to BUILD/runtime-work. Ends with 'N passed, M failed[, K skipped]'."""
import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys

import numpy as np

import mlbctest
from mlbctest import onnx

ROOT = mlbctest.ROOT
RT = os.path.join(ROOT, "runtime")
CFLAGS = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter", "-D_GNU_SOURCE"]
SAN = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]
WRAP = "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc"   # test_runtime.c counts allocations
SAN_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:exitcode=99",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=98")
SAN_REPORT = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:")

counts = {"passed": 0, "failed": 0, "skipped": 0}


def result(ok, name, why=""):
    counts["passed" if ok else "failed"] += 1
    print("PASS %s" % name if ok else "FAIL %s: %s" % (name, why))
    return ok


def skip(name, why):
    counts["skipped"] += 1
    print("SKIP %s: %s" % (name, why))


def run(cmd, env=None, **kw):
    return subprocess.run(cmd, capture_output=True, env=env, timeout=300, **kw)


def text(b):
    return b.decode("utf-8", "replace")


# ---- building ----------------------------------------------------------------------------

def build(build_dir, work):
    """mlbc the two models, the shared object, both test programs. Returns their paths."""
    mlbc = os.path.join(build_dir, "mlbc")
    lib = os.path.join(build_dir, "libmlbc_rt.a")
    for model, name in ((os.path.join(ROOT, "models", "inliner.onnx"), "inliner"),
                        (os.path.join(ROOT, "tests", "runtime", "selector.onnxtxt"), "selector")):
        c = os.path.join(work, name + ".c")
        r = run([mlbc, model, "-o", c])
        if not result(r.returncode == 0, "mlbc %s" % os.path.basename(model), text(r.stderr)):
            return None
        # The generated code is checked elsewhere; here it is just linked, unsanitized.
        r = run(["cc", "-O1", "-c", "-I", work, "-o", c[:-2] + ".o", c])
        if r.returncode:
            return result(False, "cc %s" % name, text(r.stderr)) and None
    so = os.path.join(work, "selector.so")
    r = run(["cc", "-shared", "-fPIC", "-O1", "-o", so, os.path.join(work, "selector.c")])
    if not result(r.returncode == 0, "cc -shared -fPIC selector.so", text(r.stderr)):
        return None
    src = os.path.join(ROOT, "tests", "runtime", "test_runtime.c")
    objs = [os.path.join(work, "inliner.o"), os.path.join(work, "selector.o")]
    rt_srcs, rt_inc = mlbctest.runtime_sources(build_dir)
    inc = rt_inc + ["-I", work]
    exes = {}
    variants = (
        ("plain", CFLAGS + inc + [src] + objs + [lib]),
        ("asan", CFLAGS + SAN + inc + [src] + objs + rt_srcs),
    )
    for tag, args in variants:
        exe = os.path.join(work, "test_runtime" + ("" if tag == "plain" else "_" + tag))
        r = run(["cc"] + args + ["-o", exe, WRAP] + mlbctest.RT_LIBS)
        warn = [l for l in text(r.stderr).splitlines() if "warning:" in l]
        if not result(r.returncode == 0 and not warn, "build test_runtime (%s, no warnings)" % tag,
                      (warn or text(r.stderr).splitlines() or ["?"])[0]):
            return None
        exes[tag] = exe
    return exes, so


# ---- the C checks ------------------------------------------------------------------------

def onnx_env(build_dir, work, env=None):
    """The ONNX runner's defaults for the test programs: build/mlbc, a cache in work."""
    return dict(env or os.environ, MLBC=os.path.join(build_dir, "mlbc"),
                MLBC_CACHE_DIR=os.path.join(work, "onnx-cache-shared"))


def onnx_setup(work):
    """The models the ONNX checks compile, in the folder they run in; an empty cache."""
    shutil.copy(os.path.join(ROOT, "models", "inliner.onnx"), work)
    shutil.copy(os.path.join(ROOT, "tests", "runtime", "selector.onnxtxt"), work)
    shutil.rmtree(os.path.join(work, "onnx-cache-shared"), ignore_errors=True)


def c_checks(exe, so, env, tag):
    work = os.path.dirname(so)
    shutil.rmtree(os.path.join(work, "onnx-cache"), ignore_errors=True)
    os.makedirs(os.path.join(work, "onnx-cache"))
    r = run([exe, "checks", so], env=env, cwd=work)
    out = text(r.stdout)
    m = re.search(r"^(\d+) passed, (\d+) failed$", out, re.M)
    for line in out.splitlines():
        if not re.match(r"^\d+ passed", line):
            print("  " + line)
    if SAN_REPORT.search(text(r.stderr)) or not m or r.returncode not in (0, 1):
        return result(False, "C checks (%s)" % tag,
                      "status %d: %s" % (r.returncode, text(r.stderr)[-600:]))
    counts["passed"] += int(m.group(1))
    counts["failed"] += int(m.group(2))
    print("%s C checks (%s): %s passed, %s failed" % (
        "PASS" if m.group(2) == "0" else "FAIL", tag, m.group(1), m.group(2)))
    return True


# ---- release runner vs generated code vs PyTorch -----------------------------------------

def decisions(exe, work, rows, env):
    path = os.path.join(work, "features.bin")
    np.asarray(rows, dtype=np.int64).tofile(path)
    r = run([exe, "compare", path, str(len(rows)), os.path.join(work, "inliner.onnx")], env=env)
    if r.returncode:
        raise mlbctest.Failure(text(r.stderr))
    return [tuple(int(x) for x in line.split()) for line in text(r.stdout).splitlines()]


def check_decisions(exe, work, env):
    model = onnx.load(os.path.join(ROOT, "models", "inliner.onnx"))
    names = [v.name for v in model.graph.input
             if v.name not in {t.name for t in model.graph.initializer}]
    ref = np.load(os.path.join(ROOT, "models", "ref", "inliner.npz"))
    ks = sorted({int(k.rsplit(":", 1)[1]) for k in ref.keys()})
    rows = [[int(ref["in:%s:%d" % (n, k)][0]) for n in names] for k in ks]
    want = [int(ref["out:inlining_decision:%d" % k][0]) for k in ks]
    try:
        got = decisions(exe, work, rows, env)
        result(got == [(w, w, w) for w in want], "release runner = generated code = ONNX "
               "runner = PyTorch on %d reference samples" % len(ks),
               "got %s, want %s" % (got, want))
        rng = np.random.default_rng(7)
        rows = rng.integers(0, 400, size=(500, len(names))) * (rng.random((500, len(names))) < 0.6)
        got = decisions(exe, work, rows.tolist(), env)
        same = sum(a == b == c for a, b, c in got)
        kinds = {a for a, _, _ in got}
        result(len(got) == 500 and same == 500 and kinds == {0, 1},
               "release runner = generated code = ONNX runner on 500 random feature vectors",
               "%d of %d agree, decisions %s" % (same, len(got), kinds))
    except mlbctest.Failure as e:
        result(False, "release runner decisions", str(e))


# ---- the ONNX runner: processes racing on an empty cache ---------------------------------

def check_race(exe, work, env, nproc=4):
    """nproc processes compile the same model into an empty cache at once: each succeeds and
    gives the model's decision, and the cache ends with one entry and no temporary files."""
    cache = os.path.join(work, "onnx-race")
    shutil.rmtree(cache, ignore_errors=True)
    model = os.path.join(work, "selector.onnxtxt")
    procs = [subprocess.Popen([exe, "race", model, cache], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env) for _ in range(nproc)]
    outs = [(p.communicate(timeout=120), p.returncode) for p in procs]
    lines = [text(o).strip() for (o, _), _ in outs]
    ok = all(rc == 0 for _, rc in outs) and all(l.split()[-1:] == ["1"] for l in lines)
    names = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
    compiled = sum(l.startswith("compiled") for l in lines)
    result(ok and len(names) == 1 and names[0].endswith(".so") and compiled >= 2,
           "ONNX runner: %d processes racing on an empty cache all succeed (%d compiled), one "
           "entry left" % (nproc, compiled),
           "%s; cache holds %s; %s" % (lines, names,
                                       [text(e)[-300:] for (_, e), _ in outs if e]))


# ---- the ONNX cache trusts only this user's bytes ------------------------------------------

NOBODY = 65534
EVIL_C = r"""
#include <stdio.h>
__attribute__((constructor)) static void planted(void)
{
    FILE *f = fopen(MARKER, "w");
    if (f)
        fclose(f);
}
"""


def race_once(exe, model, cache, env, cwd=None, umask=None):
    """One `test_runtime race MODEL CACHE`: (exit status, stdout, stderr)."""
    r = subprocess.run([exe, "race", model, cache], capture_output=True, env=env, cwd=cwd,
                       timeout=120, preexec_fn=(lambda: os.umask(umask)) if umask else None)
    return r.returncode, text(r.stdout).strip(), text(r.stderr).strip()


def check_cache_trust(exe, work, env):
    """Entry names are predictable (MD5 of the model, mlbc's version, the options): a shared
    object planted under one by another user, or reached through a link, must never be
    loaded; it is refused with the path and what was found. The normal path still works."""
    root = os.path.join(work, "onnx-trust")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    model = os.path.join(work, "selector.onnxtxt")
    rc, out, err = race_once(exe, model, os.path.join(root, "learn"), env, umask=0o002)
    entries = os.listdir(os.path.join(root, "learn"))
    mode = stat.S_IMODE(os.stat(os.path.join(root, "learn", entries[0])).st_mode) \
        if entries else 0
    again = race_once(exe, model, os.path.join(root, "learn"), env)
    if not result(rc == 0 and out == "compiled 1" and len(entries) == 1,
                  "ONNX cache: compiled under umask 002", "%s %s %s" % (rc, err, entries)):
        return
    result(mode == 0o600 and again[:2] == (0, "cached 1"), "ONNX cache: the entry is "
           "published mode 0600 whatever the umask, and found again", "%04o %s" % (mode, again))
    entry, marker = entries[0], os.path.join(root, "planted-code-ran")
    evil = os.path.join(root, "evil.so")
    with open(evil + ".c", "w") as f:
        f.write(EVIL_C)
    r = run(["cc", "-shared", "-fPIC", "-DMARKER=\"%s\"" % marker, "-o", evil, evil + ".c"])
    if not result(r.returncode == 0, "cc evil.so", text(r.stderr)):
        return

    def plant(case, folder_mode=0o700, folder_owner=None, entry_mode=0o644, entry_owner=None,
              link_entry=False):
        cache = os.path.join(root, case)
        os.makedirs(cache)
        if link_entry:
            os.symlink(evil, os.path.join(cache, entry))
        else:
            shutil.copy(evil, os.path.join(cache, entry))
            os.chmod(os.path.join(cache, entry), entry_mode)
            if entry_owner is not None:
                os.chown(os.path.join(cache, entry), entry_owner, entry_owner)
        os.chmod(cache, folder_mode)
        if folder_owner is not None:
            os.chown(cache, folder_owner, folder_owner)
        return cache

    cases = [("a link as the entry", plant("link-entry", link_entry=True),
              "it is a symbolic link"),
             ("an entry of mode 0620", plant("mode-0620", entry_mode=0o620), "mode 0620"),
             ("an entry of mode 0666", plant("mode-0666", entry_mode=0o666), "mode 0666")]
    real = plant("real-folder", entry_mode=0o600)
    os.symlink(real, os.path.join(root, "link-folder"))
    cases.append(("a link as the cache folder", os.path.join(root, "link-folder"),
                  "it is a symbolic link"))
    if os.geteuid() == 0:
        cases += [("a 0777 cache folder of uid %d" % NOBODY,
                   plant("shared", 0o777, NOBODY, 0o755, NOBODY), "belongs to uid %d" % NOBODY),
                  ("our folder, an entry of uid %d" % NOBODY,
                   plant("foreign-entry", entry_owner=NOBODY), "belongs to uid %d" % NOBODY)]
    else:
        skip("ONNX cache: planted by another user", "needs root to chown")
    for what, cache, want in cases:
        rc, out, err = race_once(exe, model, cache, env)
        ran = os.path.exists(marker)
        if ran:
            os.unlink(marker)
        result(rc != 0 and not ran and want in err and "refusing %s" % cache in err,
               "ONNX cache: %s is refused, nothing loaded from it" % what,
               "status %d, planted code ran: %s; %s %s" % (rc, ran, out, err))


def check_model_named(exe, work, env):
    """A model at "x=y.onnxtxt" beside another "y.onnxtxt": mlbc reads SELECTOR=PATH, so the
    runner must still compile the file it hashed, the one named."""
    folder = os.path.join(work, "onnx-eq")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(work, "selector.onnxtxt")) as f:
        src = f.read()
    with open(os.path.join(folder, "x=y.onnxtxt"), "w") as f:
        f.write(src)
    with open(os.path.join(folder, "y.onnxtxt"), "w") as f:      # decides 0, not 1
        f.write(src.replace("{0.5}", "{2.0}"))
    rc, out, err = race_once(exe, "x=y.onnxtxt", "cache", env, cwd=folder)
    rc2, out2, err2 = race_once(exe, "y.onnxtxt", "cache", env, cwd=folder)
    result(rc == 0 and out == "compiled 1" and rc2 == 0 and out2 == "compiled 0",
           "ONNX runner: the model 'x=y.onnxtxt' is the one compiled, not 'y.onnxtxt'",
           "%d %r %s / %d %r %s" % (rc, out, err, rc2, out2, err2))


# ---- LLVM's training-log format, written independently in Python ------------------------

SIZES = {"float": 4, "double": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
         "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}


def quote(name):
    """A JSON string as LLVM's json::OStream writes it (after fixUTF8)."""
    s = name.decode("utf-8", "replace")
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) >= 0x20:
            out.append(ch)
        else:
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(ch, "\\u%04x" % ord(ch)))
    return ('"' + "".join(out) + '"').encode("utf-8")


def spec_json(spec):
    name, typ, shape = spec
    return (b'{"name":' + quote(name) + b',"type":"' + typ.encode() + b'","port":0,"shape":['
            + ",".join(str(d) for d in shape).encode() + b"]}")


def nbytes(spec):
    return SIZES[spec[1]] * int(np.prod(spec[2], dtype=np.int64))


class Script:
    """A log as commands: the script text for test_runtime/llvm_logger, the bytes LLVM
    writes for it and the dump test_runtime's reader should print."""

    def __init__(self, features, score=None, advice=None):
        self.features, self.score, self.advice, self.cmds = features, score, advice, []

    def ctx(self, name):
        self.cmds.append(("context", name))
        return self

    def obs(self, seed, outcome=None):
        self.cmds.append(("observation", seed))
        if outcome is not None:
            self.cmds.append(("outcome", outcome))
        return self

    def text(self):
        def spec_line(kind, s):
            return "%s %s %s %s" % (kind, s[0].hex() or "-", s[1], " ".join(map(str, s[2])))
        lines = [spec_line("feature", f) for f in self.features]
        lines += [spec_line("score", self.score)] if self.score else []
        lines += [spec_line("advice", self.advice)] if self.advice else []
        for c, a in self.cmds:
            lines.append("%s %s" % (c, (a.hex() or "-") if c == "context" else a))
        return "\n".join(lines) + "\n"

    def expected(self):
        head = b'{"features":[' + b",".join(spec_json(f) for f in self.features) + b"]"
        if self.score:
            head += b',"score":' + spec_json(self.score)
        if self.advice:
            head += b',"advice":' + spec_json(self.advice)
        out = [head + b"}\n"]
        dump = [self.spec_dump("feature", f) for f in self.features]
        dump += [self.spec_dump("score", self.score)] if self.score else []
        dump += [self.spec_dump("advice", self.advice)] if self.advice else []
        ids, context, last = {}, b"", -1
        for c, a in self.cmds:
            if c == "context":
                context = a
                out.append(b'{"context":' + quote(a) + b"}\n")
                dump.append("context " + fixed(a).hex())
            elif c == "observation":
                last = ids[context] = ids.get(context, -1) + 1
                size = sum(nbytes(f) for f in self.features)
                data = bytes((a + k) & 255 for k in range(size))
                out.append(b'{"observation":%d}\n' % last + data + b"\n")
                dump.append("observation %d %s" % (last, data.hex()))
            else:
                data = bytes((a + k) & 255 for k in range(nbytes(self.score)))
                out.append(b'{"outcome":%d}\n' % last + data + b"\n")
                dump.append("outcome %d %s" % (last, data.hex()))
        return b"".join(out), "".join(line + "\n" for line in dump)

    @staticmethod
    def spec_dump(kind, s):
        return " ".join([kind, fixed(s[0]).hex(), s[1]] + [str(d) for d in s[2]])


def fixed(name):
    return name.decode("utf-8", "replace").encode("utf-8")


WEIRD = [b"", b"f\n\t\r\"\\\x01\x08\x0c\x1f\x7f/", "é€😀".encode(), b"\xff\xfe", b"a\xe2\x82z",
         b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf0\x9f\x98", b"\xc0\xaf",
         b"\xf8\x88\x80\x80\x80", b"\xe1\x80", b"x\xf1\x80\x80", b"_ZN4llvm3fooEv"]


def scripts():
    i64, one = "int64_t", [1]
    inliner = [(n.encode(), i64, one) for n in ("sroa_savings", "callee_users", "threshold")]
    regalloc = [(b"mask", i64, [1, 33]), (b"nr_urgent", "float", [1, 33]),
                (b"progress", "float", [1])]
    every = [(("t_" + t).encode(), t, [2]) for t in SIZES] + [(b"scalar", "double", [])]
    s = {}
    s["inliner training log (decision, score per observation)"] = Script(
        inliner + [(b"inlining_default", i64, one), (b"inlining_decision", i64, one)],
        score=(b"delta_size", i64, one)).ctx(b"")
    for k in range(12):
        s["inliner training log (decision, score per observation)"].obs(k * 7, k)
    s["regalloc training log (adjacent contexts, outcome of the last observation)"] = (
        Script(regalloc + [(b"index_to_evict", i64, one)], score=(b"reward", "float", one))
        .ctx(b"mid0").ctx(b"mid1").obs(1, 0).obs(2, 0).obs(3, 77).ctx(b"mid2").ctx(b"mid1")
        .obs(250, 9).ctx(b"mid3"))
    s["interactive stream (advice, no outcomes, payload bytes 0x0a)"] = (
        Script(inliner, advice=(b"inlining_decision", i64, one)).ctx(b"")
        .obs(10).obs(0x0a - 8).obs(255))
    s["priority stream (float advice)"] = (
        Script([(b"li_size", i64, one), (b"stage", i64, one), (b"weight", "float", one)],
               advice=(b"priority", "float", one)).ctx(b"f").obs(3).ctx(b"g").ctx(b"f").obs(4))
    s["every LLVM type, rank 0, score and advice"] = Script(
        every, score=(b"r", "double", one), advice=(b"a", "uint64_t", [2])).obs(5, 6).obs(7)
    weird = Script([(b"w\"q\\\x02\xff", "int8_t", []), ("é".encode(), "uint16_t", [2])],
                   advice=(b"adv\n", "double", one))
    for n in WEIRD + WEIRD[:3]:
        weird.ctx(n).obs(len(n))
    s["names needing escapes and UTF-8 repair"] = weird
    s["no features, no records"] = Script([])
    return s


def check_logs(exes, work, llvm_logger):
    exe = exes["plain"]
    for title, sc in scripts().items():
        want, dump = sc.expected()
        path = os.path.join(work, "log.bin")
        r = run([exe, "write", path], input=sc.text().encode())
        got = open(path, "rb").read() if r.returncode == 0 else b""
        result(got == want, "logger = LLVM format: " + title,
               "status %d, first difference at byte %d" % (
                   r.returncode, next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                                      min(len(got), len(want)))))
        if llvm_logger:
            lpath = os.path.join(work, "log-llvm.bin")
            r = run([llvm_logger, lpath], input=sc.text().encode())
            lgot = open(lpath, "rb").read() if r.returncode == 0 else b""
            result(lgot == got, "logger = llvm::Logger (libLLVM-19): " + title,
                   "status %d, %d vs %d bytes" % (r.returncode, len(got), len(lgot)))
        pypath = os.path.join(work, "log-py.bin")
        with open(pypath, "wb") as f:
            f.write(want)
        for tag, e in exes.items():
            r = run([e, "read", pypath], env=SAN_ENV if tag == "asan" else None)
            result(r.returncode == 0 and text(r.stdout) == dump,
                   "reader (%s): %s" % (tag, title),
                   "status %d: %s" % (r.returncode, (text(r.stderr) or text(r.stdout))[-400:]))


def build_llvm_logger(work):
    cxx, cfg = shutil.which("clang++-19"), shutil.which("llvm-config-19")
    if not cxx or not cfg:
        return None
    flags = run([cfg, "--cxxflags"]).stdout.decode().split()
    libdir = run([cfg, "--libdir"]).stdout.decode().strip()
    exe = os.path.join(work, "llvm_logger")
    r = run([cxx] + flags + [os.path.join(ROOT, "tests", "runtime", "llvm_logger.cpp"), "-o", exe,
                             "-L" + libdir, "-lLLVM-19", "-Wl,-rpath," + libdir])
    if r.returncode:
        print("  llvm_logger: " + text(r.stderr)[-300:])
        return None
    return exe


# ---- reader: other spellings, corrupt and truncated input ---------------------------------

SPEC_A = {"name": "a", "type": "int64_t", "port": 0, "shape": [1]}
SPEC_R = {"name": "r", "type": "float", "port": 0, "shape": [1]}


def header(features=(SPEC_A,), **extra):
    return (json.dumps(dict({"features": list(features)}, **extra), separators=(",", ":"))
            .encode() + b"\n")


H = header(score=SPEC_R)
CTX = b'{"context":"f"}\n'
OBS = b'{"observation":0}\n' + b"\x01" * 8 + b"\n"


def corrupt_cases():
    """(title, bytes, byte offset, words of the message)."""
    ho = len(H)
    spec = dict(SPEC_A)
    big = dict(spec, shape=[1000000, 1000000])
    return [
        ("empty input", b"", 0, "no header"),
        ("header without newline", H[:-1], ho - 1, "truncated"),
        ("header cut in the middle", H[:20], 20, "truncated"),
        ("header not JSON", b'{"features":[}\n', 13, "unexpected character"),
        ("header is an array", b"[]\n", 0, "not a JSON object"),
        ("header without features", b'{"advice":1}\n', 0, "features"),
        ("spec without port", header([{"name": "a", "type": "float", "shape": []}]), 0, "port"),
        ("unknown type", header([dict(spec, type="float16")]), 0, "float16"),
        ("negative dimension", header([dict(spec, shape=[-1])]), 0, "negative"),
        ("absurd shape", header([big]), 0, "too large"),
        ("absurd payload", header([dict(spec, name="x%d" % i, shape=[4000000]) for i in range(10)]),
         0, "larger than"),
        ("rank 9", header([dict(spec, shape=[1] * 9)]), 0, "dimensions"),
        ("name too long", header([dict(spec, name="n" * 200)]), 0, "too long"),
        ("dimension not an integer", header([dict(spec, shape=[1.5])]), 0, "not an integer"),
        ("nesting too deep", b"[" * 100 + b"\n", 32, "too deep"),
        ("line over 1 MiB", b'{"features":[' + b" " * (2 << 20), 0, "1 MiB"),
        ("NUL in a record", H + b'{"context":"a\0"}\n', ho + 13, "control character"),
        ("invalid UTF-8 in a context", H + b'{"context":"\xff"}\n', ho + 12, "UTF-8"),
        ("empty line", H + b"\n", ho, "end of JSON"),
        ("unknown record", H + b'{"event":1}\n', ho, "expected a context"),
        ("two members", H + b'{"context":"a","observation":0}\n', ho, "expected a context"),
        ("context not a string", H + b'{"context":1}\n', ho, "expected a context"),
        ("negative observation", H + b'{"observation":-1}\n', ho, "expected a context"),
        ("observation id not an integer", H + b'{"observation":1e30}\n', ho, "expected a context"),
        ("payload cut short", H + CTX + OBS[:21], ho + len(CTX) + 21, "(3 of 8 bytes)"),
        ("no newline after payload", H + CTX + OBS[:-1], ho + len(CTX) + len(OBS) - 1,
         "no newline"),
        ("junk after payload", H + CTX + OBS[:-1] + b"X", ho + len(CTX) + len(OBS) - 1,
         "expected a newline"),
        ("observation out of sequence", H + CTX + OBS + b'{"observation":2}\n',
         ho + len(CTX) + len(OBS), "out of sequence"),
        ("outcome for another observation", H + CTX + OBS + b'{"outcome":1}\n',
         ho + len(CTX) + len(OBS), "not for the latest"),
        ("outcome before any observation", H + CTX + b'{"outcome":0}\n', ho + len(CTX),
         "not for the latest"),
        ("outcome without score", header() + OBS + b'{"outcome":0}\n', len(header()) + len(OBS),
         "no score"),
        ("score cut short", H + OBS + b'{"outcome":0}\n\x00\x00', ho + len(OBS) + 16,
         "(2 of 4 bytes)"),
        ("record cut short", H + CTX + b'{"obser', ho + len(CTX) + 7, "truncated"),
    ]


def check_reader_edges(exes, work):
    path = os.path.join(work, "edge.bin")
    odd = (b'{ "advice" : {"shape":[1], "port":0, "type":"int64_t", "name":"d"},\t"features" : '
           b'[ {"port":0,"shape":[ 2 ],"name":"\\u0061\\/b","type":"int32_t"} ] }\r\n'
           b'{ "context" : "\\ud83d\\ude00" }\n{"observation" : 0}\n' + bytes(range(8)) + b"\n")
    want = ("feature 612f62 int32_t 2\nadvice 64 int64_t 1\ncontext f09f9880\n"
            "observation 0 0001020304050607\n")
    for tag, e in exes.items():
        env = SAN_ENV if tag == "asan" else None
        with open(path, "wb") as f:
            f.write(odd)
        r = run([e, "read", path], env=env)
        result(r.returncode == 0 and text(r.stdout) == want,
               "reader (%s): other spacing, key order and escapes" % tag,
               text(r.stderr) or text(r.stdout))
        for title, data, at, words in corrupt_cases():
            with open(path, "wb") as f:
                f.write(data)
            r = run([e, "read", path], env=env)
            err = text(r.stderr)
            ok = (r.returncode == 1 and not SAN_REPORT.search(err)
                  and err.startswith("error: byte %d: " % at) and words in err)
            result(ok, "reader (%s) rejects: %s" % (tag, title),
                   "status %d: %s" % (r.returncode, err.strip()[:300]))


def check_abuse(exes, work):
    sc = scripts()["regalloc training log (adjacent contexts, outcome of the last observation)"]
    path = os.path.join(work, "abuse.bin")
    with open(path, "wb") as f:
        f.write(sc.expected()[0])
    for tag, e in exes.items():
        r = run([e, "abuse", path, "3000"], env=SAN_ENV if tag == "asan" else None)
        out = text(r.stdout).strip()
        result(r.returncode == 0 and out.endswith(", 0 bad") and not SAN_REPORT.search(
            text(r.stderr)), "reader (%s): every prefix and 3000 mutations of a log" % tag,
            "status %d: %s %s" % (r.returncode, out, text(r.stderr)[-600:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    build_dir = os.path.abspath(args.build)
    work = os.path.join(build_dir, "runtime-work")
    os.makedirs(work, exist_ok=True)
    built = build(build_dir, work)
    if built:
        exes, so = built
        onnx_setup(work)
        env = onnx_env(build_dir, work)
        c_checks(exes["plain"], so, env, "plain")
        c_checks(exes["asan"], so, onnx_env(build_dir, work, SAN_ENV), "ASan+UBSan")
        check_decisions(exes["plain"], work, env)
        check_race(exes["plain"], work, env)
        check_cache_trust(exes["plain"], work, env)
        check_model_named(exes["plain"], work, env)
        llvm_logger = build_llvm_logger(work)
        if not llvm_logger:
            skip("logger = llvm::Logger", "clang++-19 or libLLVM-19 not available")
        check_logs(exes, work, llvm_logger)
        check_reader_edges(exes, work)
        check_abuse(exes, work)
    print("%d passed, %d failed%s" % (counts["passed"], counts["failed"],
                                       ", %d skipped" % counts["skipped"] if counts["skipped"]
                                       else ""))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
