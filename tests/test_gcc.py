"""The GCC 12 inlining plugin (plugins/gcc, docs/GCC.md) against the real Debian gcc-12:
the policy's decisions change the objects as it says ("never" gives the -fno-inline object,
"always" removes every call GCC can inline), the release-mode model decides what the code mlbc
generated for it computes on the logged features, and in development mode our Python host
(runtime/python/mlbc_gym) decides over the pipes, with a log that the Python and C readers read
alike.

    python3 tests/test_gcc.py --build BUILD [-k SUBSTRING] [-v] [--keep]

Builds BUILD/gcc/mlbc_inline.so with plugins/gcc/Makefile when needed (BUILD/mlbc and
BUILD/libmlbc_rt.a must exist: make BUILD=BUILD). Ends with one line "N passed, M failed".
Every compiler run has a timeout.
"""
import collections
import functools
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import harness
from harness import Failure, expect, first_line

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

GCC = "gcc"
GXX = "g++"
OBJDUMP = "objdump"
TIMEOUT = 60                    # seconds, for every compiler run
run = functools.partial(harness.run, timeout=TIMEOUT)
check_run = functools.partial(harness.check_run, timeout=TIMEOUT)

FEATURES = (
    "callee_size callee_self_size callee_min_size callee_time callee_growth callee_callers "
    "callee_calls callee_blocks callee_local callee_called_once callee_declared_inline "
    "callee_external callee_address_taken call_growth call_time call_speedup call_hints "
    "call_stmt_size call_loop_depth call_frequency call_hot call_args call_constant_args "
    "call_recursive caller_size caller_blocks caller_calls caller_callers").split()
LOGGED = FEATURES + ["inlining_decision", "inlined"]

CALLS_C = "tests/gcc/calls.c"
SHAPES_CC = "tests/gcc/shapes.cc"
# Sources of the repository compiled as they are (C99/C11, -D_GNU_SOURCE, include dirs below).
REPO_SOURCES = ["runtime/json.c", "runtime/logread.c", "compiler/front/text_print.c"]


# ---- fixtures ---------------------------------------------------------------------------------

class Ctx(harness.Ctx):
    def plugin(self):
        def make():
            self.tool("mlbc")
            self.tool("libmlbc_rt.a")
            check_run(["make", "-s", "-f", "plugins/gcc/Makefile", "BUILD=" + self.build],
                      "make -f plugins/gcc/Makefile", timeout=300, cwd=ROOT)
            p = os.path.join(self.build, "gcc", "mlbc_inline.so")
            expect(os.path.exists(p), "%s was not built" % p)
            return p
        return self.fixture("plugin", make)

    def c_tool(self, name, extra=()):
        """tests/gcc/NAME.c, linked with the runtime library (and extra sources)."""
        def make():
            d = self.path("ctools")
            os.makedirs(d, exist_ok=True)
            exe = os.path.join(d, name)
            check_run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-D_GNU_SOURCE",
                       "-I", os.path.join(ROOT, "runtime"), "-I", os.path.join(self.build, "gcc"),
                       os.path.join(HERE, "gcc", name + ".c")] + list(extra)
                      + [self.tool("libmlbc_rt.a"), "-lm", "-o", exe], "cc " + name)
            return exe
        return self.fixture("ctool:" + name, make)

    def policy_direct(self):
        self.plugin()
        return self.c_tool("policy_direct",
                           [os.path.join(self.build, "gcc", "mlbc_inline_policy.c")])


def src_flags(ctx, src):
    """The flags of a repository source; its generated headers (onnx.pb-c.h) are in BUILD."""
    f = ["-I", os.path.join(ROOT, "compiler"), "-I", os.path.join(ROOT, "runtime"),
         "-I", ctx.build]
    if src.endswith(".c"):
        f += ["-std=gnu11", "-D_GNU_SOURCE"]
    return f


def compiler_of(src):
    return GXX if src.endswith(".cc") else GCC


def plugin_args(ctx, **kw):
    """-fplugin=... -fplugin-arg-mlbc_inline-KEY=VALUE for each keyword (_ for -)."""
    a = ["-fplugin=" + ctx.plugin()]
    for k, v in kw.items():
        a.append("-fplugin-arg-mlbc_inline-%s=%s" % (k.replace("_", "-"), v))
    return a


def compile_obj(ctx, src, obj, extra=(), opt="-O2", timeout=TIMEOUT, env=None):
    cmd = [compiler_of(src), opt, "-c", os.path.join(ROOT, src), "-o", obj] \
        + src_flags(ctx, src) + list(extra)
    r = check_run(cmd, "%s %s" % (compiler_of(src), src), timeout=timeout, env=env)
    return r


def plain_object(ctx, src, flags=()):
    key = "plain:%s:%s" % (src, " ".join(flags))

    def make():
        d = ctx.path("plain")
        os.makedirs(d, exist_ok=True)
        obj = os.path.join(d, re.sub(r"\W", "_", key) + ".o")
        compile_obj(ctx, src, obj, flags)
        return obj
    return ctx.fixture(key, make)


def with_plugin(ctx, d, src, name="out", opt="-O2", env=None, **kw):
    """Compiles src with the plugin; returns (object, trace rows, log path, stderr)."""
    obj = os.path.join(d, name + ".o")
    trace = os.path.join(d, name + ".trace")
    log = os.path.join(d, name + ".log")
    r = compile_obj(ctx, src, obj, plugin_args(ctx, trace=trace, log=log, **kw), opt, env=env)
    return obj, read_trace(trace), log, r.stderr.decode(errors="replace")


Row = collections.namedtuple("Row", "caller callee decision inlined note features")


def read_trace(path):
    expect(os.path.exists(path), "no trace written")
    rows = []
    with open(path) as f:
        head = f.readline().rstrip("\n").lstrip("# ").split("\t")
        expect(head[:5] == ["caller", "callee", "decision", "inlined", "note"]
               and head[5:] == FEATURES, "trace header %r" % head[:6])
        for line in f:
            p = line.rstrip("\n").split("\t")
            rows.append(Row(p[0], p[1], int(p[2]), int(p[3]), p[4],
                            dict(zip(FEATURES, map(int, p[5:])))))
    return rows


def call_edges(obj):
    """Counter of (function, called function) over the call and tail-jump instructions of an
    object, resolving relocations against section symbols through the symbol table; an
    indirect call counts as callee '*'."""
    syms = collections.defaultdict(dict)            # section -> {offset: function}
    names = set()
    out = check_run([OBJDUMP, "-t", obj], "objdump -t").stdout.decode()
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) (.{7}) (\S+)\s+[0-9a-f]+\s+(\S+)$", line)
        if m and "F" in m.group(2):
            syms[m.group(3)][int(m.group(1), 16)] = m.group(4)
            names.add(m.group(4))
    out = check_run([OBJDUMP, "-dr", "--no-show-raw-insn", obj], "objdump -dr").stdout.decode()
    edges = collections.Counter()
    fn, pending = None, None

    def settle_without_reloc():
        t = re.search(r"<([^>]+)>", pending[2])
        if t and "+" not in t.group(1) and (t.group(1) != fn or pending[1].startswith("call")):
            edges[(fn, t.group(1))] += 1

    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            if pending:
                settle_without_reloc()
            fn, pending = m.group(2), None
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+R_X86_64_(?:PLT32|PC32)\s+(\S+?)([-+]0x[0-9a-f]+)?$",
                     line)
        if m and pending:
            if int(m.group(1), 16) == pending[0] + 1:
                sym, add = m.group(2), int(m.group(3) or "0", 16)
                if sym in syms and sym not in names:       # a section symbol
                    sym = syms[sym].get(add + 4, "%s+%#x" % (sym, add + 4))
                edges[(fn, sym)] += 1
                pending = None
            continue
        if pending:
            settle_without_reloc()
            pending = None
        m = re.match(r"^\s+([0-9a-f]+):\s+(call\w*|jmp\w*)\s+(.*)$", line)
        if m and fn:
            if m.group(3).startswith("*"):
                if m.group(2).startswith("call"):
                    edges[(fn, "*")] += 1
                continue
            pending = (int(m.group(1), 16), m.group(2), m.group(3))
    if pending:
        settle_without_reloc()
    return edges


def calls_to(edges):
    c = collections.Counter()
    for (_, callee), n in edges.items():
        c[callee] += n
    return c


def edge_diff(a, b):
    keys = sorted(set(a) | set(b))
    d = [(k, a.get(k, 0), b.get(k, 0)) for k in keys if a.get(k, 0) != b.get(k, 0)]
    return "; ".join("%s->%s %d vs %d" % (k[0], k[1], x, y) for k, x, y in d[:4])


def link_and_run(obj, d, name="prog", cxx=False):
    exe = os.path.join(d, name)
    check_run([GXX if cxx else GCC, obj, "-o", exe, "-lm"], "link " + obj)
    return check_run([exe], "run " + exe, timeout=30).stdout.decode()


def same_file(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


def python_dump(gym, path):
    """The log as gcc_logdump prints it, from the Python reader."""
    with open(path, "rb") as f:
        r = gym.LogReader(f)
        out = ["feature %s %s [%s]" % (s.name, s.type, ",".join(map(str, s.shape)))
               for s in r.features]
        if r.score:
            out.append("score %s" % r.score.name)
        for rec in r.records():
            if rec.kind == "context":
                out.append("context %s" % rec.context)
            elif rec.kind == "observation":
                out.append("observation %d %s" % (rec.id, " ".join(
                    str(rec.features[s.name][0]) for s in r.features)))
            else:
                out.append("record %s" % rec.kind)
    return "\n".join(out) + "\n"


def first_diff(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return "line %d: %r vs %r" % (i + 1, x[:70], y[:70])
    return "%d lines vs %d" % (len(al), len(bl))


def log_observations(gym, path):
    reader, obs = gym.read_log(path)
    names = [s.name for s in reader.features]
    expect(names == LOGGED, "log features %s... differ from the plugin's list" % names[:3])
    expect(all(s.type == "int64_t" and s.shape == [1] for s in reader.features),
           "log features are not int64_t [1]")
    return obs


def check_log_matches_trace(gym, log, rows):
    obs = log_observations(gym, log)
    expect(len(obs) == len(rows), "log has %d observations, trace %d" % (len(obs), len(rows)))
    per_ctx = collections.Counter()
    for o, r in zip(obs, rows):
        expect(o.context == r.caller, "log context %r, trace caller %r" % (o.context, r.caller))
        expect(o.id == per_ctx[r.caller], "observation numbers are not 0..n-1 per context")
        per_ctx[r.caller] += 1
        got = {k: v[0] for k, v in o.features.items()}
        want = dict(r.features, inlining_decision=r.decision, inlined=r.inlined)
        expect(got == want, "log and trace differ at %s -> %s" % (r.caller, r.callee))
    return obs


# ---- a. arguments and modes ------------------------------------------------------------------

def t_bad_arguments(ctx):
    d = ctx.fresh("bad-args")
    obj = os.path.join(d, "x.o")
    src = os.path.join(ROOT, CALLS_C)
    cases = [
        (dict(mode="sometimes"), "unknown mode"),
        (dict(colour="red"), "unknown option"),
        (dict(mode="pipe"), "channel=BASE"),
        (dict(model="/nonexistent/policy.so"), "/nonexistent/policy.so"),
        (dict(model="/nonexistent/policy.onnx"), "cannot read the model '/nonexistent/policy.onnx'"),
        (dict(timeout="soon", channel=os.path.join(d, "ch")), "bad timeout"),
        (dict(max_size="-3"), "bad max-size"),
        (dict(early="late"), "early=late"),
    ]
    for kw, msg in cases:
        r = run([GCC, "-O2", "-c", src, "-o", obj] + plugin_args(ctx, **kw))
        err = r.stderr.decode(errors="replace")
        expect(r.returncode != 0, "%r was accepted" % kw)
        expect(msg in err and "mlbc_inline" in err, "%r: message %r" % (kw, first_line(err)))
    r = run([GCC, "-O2", "-c", src, "-o", obj, "-fplugin=" + ctx.plugin(),
             "-fplugin-arg-mlbc_inline-log"])
    expect(r.returncode != 0 and b"needs a value" in r.stderr, "log without a value accepted")
    r = check_run([GCC, "-O2", "-c", src, "-o", obj, "-fplugin=" + ctx.plugin(),
                   "-fplugin-arg-mlbc_inline-help"], "help")
    expect(b"mode=gcc|never|always|model|pipe" in r.stderr, "help text missing")


def t_gcc_mode_identical(src):
    def t(ctx):
        gym = ctx.gym()
        d = ctx.fresh("gcc-mode-" + os.path.basename(src))
        obj, rows, log, _ = with_plugin(ctx, d, src, mode="gcc")
        expect(rows, "no call site observed")
        expect(same_file(obj, plain_object(ctx, src)),
               "mode=gcc changed the object (it must only observe)")
        expect(all(r.decision == r.inlined and r.inlined in (0, 1) and r.note == "gcc"
                   for r in rows), "mode=gcc: logged decision is not what GCC did")
        check_log_matches_trace(gym, log, rows)
        return "%d call sites observed, GCC inlined %d; object byte-identical" % (
            len(rows), sum(r.inlined for r in rows))
    return t


def t_never(src):
    """mode=never: every candidate call stays; the object equals gcc -fno-inline's."""
    def t(ctx):
        d = ctx.fresh("never-" + os.path.basename(src))
        obj, rows, _, _ = with_plugin(ctx, d, src, mode="never")
        expect(rows, "no call site asked")
        expect(all(r.decision == 0 and r.inlined == 0 and r.note == "refused" for r in rows),
               "a refused call site was inlined: %s" % [
                   (r.caller, r.callee) for r in rows if r.inlined != 0][:3])
        flags = ["-fno-inline"] + (["-ffold-simple-inlines"] if src.endswith(".cc") else [])
        noinl = plain_object(ctx, src, flags)
        got, want = call_edges(obj), call_edges(noinl)
        expect(got == want, "call edges differ from -fno-inline: " + edge_diff(got, want))
        expect(sum(got.values()) >= len(rows), "fewer calls than asked call sites")
        note = ""
        if src.endswith(".c"):
            expect(same_file(obj, noinl), "same call edges, but the object differs from the "
                   "-fno-inline object")
            note = ", object byte-identical"
        plain = call_edges(plain_object(ctx, src))
        return "%d call sites refused; %d calls kept (-O2: %d)%s" % (
            len(rows), sum(got.values()), sum(plain.values()), note)
    return t


def t_always_calls(ctx):
    """mode=always on calls.c: the only calls left are those GCC cannot inline."""
    d = ctx.fresh("always-calls")
    obj, rows, _, _ = with_plugin(ctx, d, CALLS_C, mode="always")
    expect(rows and all(r.decision == 1 for r in rows), "advice is not 1 everywhere")
    bad = [(r.caller, r.callee, r.note) for r in rows
           if (r.note == "forced") != (r.inlined == 1)]
    expect(not bad, "forced but not inlined (or the reverse): %s" % bad[:3])
    notes = collections.Counter(r.note for r in rows)
    expect(notes["forced"] == len(rows), "not every call site forced: %s" % dict(notes))
    left = call_edges(obj)
    # What may stay: library calls, the noinline function, the call through a pointer.
    allowed = {"printf", "fprintf", "never_me", "*"}
    extra = [k for k in left if k[1] not in allowed]
    expect(not extra, "calls left that GCC could inline: %s" % extra[:4])
    asked = {r.callee for r in rows}
    expect({"sq", "poly", "mix", "add3", "fact", "api_scale", "cold_path"} <= {
        c.split(".")[0] for c in asked}, "call sites missing from the trace: %s" % sorted(asked))
    defined = set(f for f, _ in left)
    expect("sq" not in defined and "poly" not in defined,
           "inlined static functions still have a body: %s" % sorted(defined))
    want = link_and_run(plain_object(ctx, CALLS_C), d, "plain")
    got = link_and_run(obj, d)
    expect(got == want, "the program prints %r, not %r" % (got.strip(), want.strip()))
    plain = call_edges(plain_object(ctx, CALLS_C))
    return "%d call sites forced, %d calls left (-O2: %d)" % (
        len(rows), sum(left.values()), sum(plain.values()))


def t_always_bounded(ctx):
    """mode=always on a file with recursion and wide call trees: refused in cycles, capped by
    max-size, compiles in bounded time, and every forced site is inlined."""
    d = ctx.fresh("always-text_print")
    t0 = time.time()
    obj, rows, _, _ = with_plugin(ctx, d, "compiler/front/text_print.c", mode="always")
    took = time.time() - t0
    notes = collections.Counter(r.note for r in rows)
    expect(notes["recursive"] > 0, "no call site in a recursion cycle refused: %s" % notes)
    bad = [(r.caller, r.callee, r.note, r.inlined) for r in rows
           if (r.note == "forced") != (r.inlined == 1)]
    expect(not bad, "outcome differs from the forcing: %s" % bad[:3])
    left = calls_to(call_edges(obj))
    for r in rows:
        if r.note == "recursive":
            expect(left[r.callee] > 0, "recursive call %s -> %s vanished" % (r.caller, r.callee))
    obj2, rows2, _, _ = with_plugin(ctx, d, "compiler/front/text_print.c", "small", mode="always",
                                    max_size=300)
    n2 = collections.Counter(r.note for r in rows2)
    expect(n2["max-size"] > notes["max-size"], "max-size=300 refused nothing more: %s" % n2)
    expect(os.path.getsize(obj2) < os.path.getsize(obj), "max-size=300 did not shrink")
    return "%s in %.1f s; max-size=300: %s" % (dict(notes), took, dict(n2))


def t_programs_unchanged(ctx):
    d = ctx.fresh("programs")
    want = link_and_run(plain_object(ctx, CALLS_C), d, "plain")
    for mode in ("gcc", "never", "always", "model"):
        obj, _, _, _ = with_plugin(ctx, d, CALLS_C, mode, mode=mode)
        got = link_and_run(obj, d, "prog-" + mode)
        expect(got == want, "mode=%s: the program prints %r, not %r" % (mode, got, want))
    want = link_and_run(plain_object(ctx, SHAPES_CC), d, "plain-cc", cxx=True)
    for mode in ("never", "always", "model"):
        obj, rows, _, _ = with_plugin(ctx, d, SHAPES_CC, "cc-" + mode, mode=mode)
        got = link_and_run(obj, d, "prog-cc-" + mode, cxx=True)
        expect(got == want, "C++ mode=%s: the program prints %r, not %r" % (mode, got, want))
        if mode == "always":
            recursive = [r for r in rows if r.note == "recursive"]
            expect(len(recursive) == 2 and all("is_" in r.callee for r in recursive),
                   "C++: the mutual recursion is_even/is_odd is not what was refused: %s"
                   % [(r.caller, r.callee) for r in recursive])
            expect(all(r.inlined == 1 for r in rows if r.note == "forced"),
                   "C++: a forced call site was not inlined")
    return "calls.c: 4 modes, shapes.cc: 3 modes print %r" % want.strip()


def t_opt_levels(ctx):
    d = ctx.fresh("opt-levels")
    counts = {}
    for opt in ("-O0", "-O1", "-Os", "-O3"):
        for mode in ("never", "always", "model"):
            _, rows, _, _ = with_plugin(ctx, d, CALLS_C, "x", opt=opt, mode=mode)
            counts[opt] = len(rows)
            if opt == "-O0":
                expect(not rows, "-O0: call sites were asked")
            else:
                expect(rows, "%s mode=%s: no call site asked" % (opt, mode))
                if mode == "never":
                    expect(all(r.inlined == 0 for r in rows), "%s: never inlined" % opt)
    return " ".join("%s:%d" % kv for kv in counts.items())


STATS = re.compile(r"mlbc_inline: stats: mode=(\w+) evaluations=(\d+) model_ns=(\d+) "
                   r"ns_per_evaluation=(\d+) process_cpu_ms=([\d.]+) wall_ms_since_load=[\d.]+ "
                   r"model_share_of_cpu=([\d.]+)% model_share_of_wall=[\d.]+%")


def t_stats(ctx):
    """stats=FILE: one evaluation per call site asked, consistent figures, same object."""
    d = ctx.fresh("stats")
    src = "compiler/front/text_print.c"
    out = os.path.join(d, "stats.txt")
    obj, rows, _, _ = with_plugin(ctx, d, src, "s", opt="-Oz", stats=out)
    ref, _, _, _ = with_plugin(ctx, d, src, "r", opt="-Oz")
    expect(same_file(obj, ref), "the object changes with stats")
    with open(out) as f:
        lines = f.read().splitlines()
    m = STATS.fullmatch(lines[0]) if len(lines) == 1 else None
    expect(m, "stats file: %r" % lines[:2])
    mode, n, ns, per, cpu, share = m.groups()
    n, ns, per, cpu, share = int(n), int(ns), int(per), float(cpu), float(share)
    expect(mode == "model" and n == len(rows) and n > 100, "%d evaluations, %d call sites"
           % (n, len(rows)))
    expect(ns > 0 and abs(per - ns / n) <= 1, "model_ns %d, %d per evaluation" % (ns, per))
    expect(cpu > 0 and abs(share - 100 * ns / 1e6 / cpu) < 0.0006, "share %.3f%%" % share)
    _, _, _, err = with_plugin(ctx, d, src, "n", opt="-Oz", mode="never", stats="")
    m = STATS.search(err)
    expect(m and m.group(1) == "never" and m.group(2) == "0", "mode=never stats: %r"
           % first_line(err))
    return "%d evaluations, %d ns each, %.3f%% of cc1's CPU" % (n, per, share)


def t_lto(ctx):
    d = ctx.fresh("lto")
    obj = os.path.join(d, "x.o")
    trace = os.path.join(d, "t")
    r = compile_obj(ctx, CALLS_C, obj, ["-flto"] + plugin_args(ctx, mode="never", trace=trace))
    expect(b"link-time optimization is not supported" in r.stderr, "no LTO warning")
    expect(not os.path.exists(trace), "a trace was written under -flto")


def t_early_gcc(ctx):
    """early=gcc: GCC's early inliner runs first, the policy decides what remains."""
    d = ctx.fresh("early-gcc")
    _, rows_off, _, _ = with_plugin(ctx, d, CALLS_C, "off", mode="never")
    _, rows_gcc, _, _ = with_plugin(ctx, d, CALLS_C, "gcc", mode="never", early="gcc")
    expect(0 < len(rows_gcc) < len(rows_off), "early=gcc: %d call sites asked, off: %d"
           % (len(rows_gcc), len(rows_off)))
    expect(all(r.inlined == 0 for r in rows_gcc), "early=gcc: a refused site was inlined")
    return "asked %d (early inliner off) vs %d (GCC's early inliner first)" % (
        len(rows_off), len(rows_gcc))


# ---- b. release mode: the built-in compiled policy -------------------------------------------

def t_model_equals_generated(src):
    def t(ctx):
        gym = ctx.gym()
        d = ctx.fresh("model-" + os.path.basename(src))
        obj, rows, log, _ = with_plugin(ctx, d, src, mode="model")
        obs = check_log_matches_trace(gym, log, rows)
        feed = " ".join(FEATURES) + "\n" + "".join(
            " ".join(str(o.features[n][0]) for n in FEATURES) + "\n" for o in obs)
        r = check_run([ctx.policy_direct()], "policy_direct", input=feed.encode())
        want = [int(x) for x in r.stdout.split()]
        got = [o.features["inlining_decision"][0] for o in obs]
        expect(len(want) == len(got), "policy_direct gave %d decisions for %d observations"
               % (len(want), len(got)))
        diff = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
        expect(not diff, "decision %d: plugin %d, generated code %d" % (
            diff[0], got[diff[0]], want[diff[0]]) if diff else "")
        expect(0 in got and 1 in got, "the policy decided only %s here" % set(got))
        replay = os.path.join(ctx.build, "mlbc-replay")
        note = ""
        if os.path.exists(replay):
            so = ctx.fixture("policy.so", lambda: policy_so(ctx, os.path.join(
                ROOT, "plugins/gcc/inline_policy.onnxtxt"), "policy"))
            check_run([replay, "--model", so, "--check", log], "mlbc-replay --check")
            note = "; mlbc-replay --check agrees"
        bad = [(r.caller, r.callee, r.note) for r in rows
               if (r.note == "forced") != (r.inlined == 1)]
        expect(not bad, "outcome differs from the decision: %s" % bad[:3])
        return "%d decisions (%d inline) == generated code%s" % (len(got), sum(got), note)
    return t


def policy_so(ctx, model, name):
    d = ctx.path("policies")
    os.makedirs(d, exist_ok=True)
    c = os.path.join(d, name + ".c")
    check_run([ctx.tool("mlbc"), model, "-o", c, "-n", name], "mlbc " + model)
    so = os.path.join(d, name + ".so")
    check_run(["cc", "-O2", "-shared", "-fPIC", "-o", so, c, "-lm"], "cc -shared")
    return so


def t_model_in_object(ctx):
    """calls.c under the built-in policy: refused calls are in the object, callees whose every
    call site was forced are called nowhere."""
    d = ctx.fresh("model-object")
    obj, rows, _, _ = with_plugin(ctx, d, CALLS_C, mode="model")
    left = calls_to(call_edges(obj))
    by_callee = collections.defaultdict(list)
    for r in rows:
        by_callee[r.callee].append(r)
    refused = forced_only = 0
    for callee, rs in by_callee.items():
        if all(r.inlined == 1 for r in rs):
            expect(left[callee] == 0, "%s: every call site inlined, %d calls left"
                   % (callee, left[callee]))
            forced_only += 1
        if any(r.decision == 0 for r in rs):
            expect(left[callee] > 0, "%s: a refused call site vanished" % callee)
            refused += 1
    expect(refused and forced_only, "want both kinds of callee: %d refused, %d inlined"
           % (refused, forced_only))
    return "%d callees inlined everywhere, %d with refused calls kept" % (forced_only, refused)


THRESHOLD_POLICY = """<ir_version: 8, opset_import: ["" : 17]>
threshold (int64[1] callee_size, int64[1] call_recursive) => (int64[1] inlining_decision)
<int64[1] limit = {%d}, int64[1] zero = {0}>
{
    small = LessOrEqual (callee_size, limit)
    plain = Equal (call_recursive, zero)
    both = And (small, plain)
    inlining_decision = Cast <to = 7> (both)
}
"""


def t_model_shared_object(ctx):
    """model=POLICY.so: another policy compiled by mlbc, loaded without rebuilding the plugin."""
    d = ctx.fresh("model-so")
    src = os.path.join(d, "threshold.onnxtxt")
    with open(src, "w") as f:
        f.write(THRESHOLD_POLICY % 6)
    so = policy_so(ctx, src, "threshold")
    obj, rows, _, _ = with_plugin(ctx, d, CALLS_C, mode="model", model=so)
    want = [int(r.features["callee_size"] <= 6 and not r.features["call_recursive"])
            for r in rows]
    expect([r.decision for r in rows] == want, "decisions do not follow callee_size <= 6")
    expect(0 in want and 1 in want, "trivial test: %s" % set(want))
    left = calls_to(call_edges(obj))
    for r in rows:
        if r.decision == 0:
            expect(left[r.callee] > 0, "refused %s -> %s vanished" % (r.caller, r.callee))
    return "%d decisions follow callee_size <= 6 (%d inline)" % (len(rows), sum(want))


def t_model_onnx(ctx):
    """model=POLICY.onnxtxt: the ONNX model itself, compiled by the runtime into a cache on
    the first compile and found there on the second (same decisions as model=POLICY.so)."""
    d = ctx.fresh("model-onnx")
    src = os.path.join(d, "threshold.onnxtxt")
    with open(src, "w") as f:
        f.write(THRESHOLD_POLICY % 6)
    so = policy_so(ctx, src, "threshold")
    cache = os.path.join(d, "cache")
    env = dict(os.environ, MLBC=ctx.tool("mlbc"), MLBC_CACHE_DIR=cache)
    _, want, _, _ = with_plugin(ctx, d, CALLS_C, "so", mode="model", model=so)
    _, rows, _, _ = with_plugin(ctx, d, CALLS_C, "onnx", mode="model", model=src, env=env)
    entries = os.listdir(cache)
    expect(len(entries) == 1 and entries[0].startswith("threshold."), "cache: %s" % entries)
    mtime = os.stat(os.path.join(cache, entries[0])).st_mtime_ns
    _, again, _, _ = with_plugin(ctx, d, CALLS_C, "again", mode="model", model=src, env=env)
    expect(os.listdir(cache) == entries
           and os.stat(os.path.join(cache, entries[0])).st_mtime_ns == mtime,
           "the second compile did not use the cache entry")
    dec = [r.decision for r in rows]
    expect(dec == [r.decision for r in want] == [r.decision for r in again],
           "decisions differ from model=threshold.so")
    return "%d decisions == model=POLICY.so, cache hit the second time" % len(dec)


# ---- c. development mode: our Python host over the pipes ------------------------------------

def serve_compile(ctx, d, policy, src, extra=(), name="out", **kw):
    gym = ctx.gym()
    base = os.path.join(d, "ch")
    obj = os.path.join(d, name + ".o")
    trace = os.path.join(d, name + ".trace")
    log = os.path.join(d, name + ".log")
    cmd = [compiler_of(src), "-O2", "-c", os.path.join(ROOT, src), "-o", obj] \
        + src_flags(ctx, src) \
        + plugin_args(ctx, channel=base, log=log, trace=trace, timeout=20000) + list(extra)
    res = gym.serve(base, policy, command=cmd, command_timeout=TIMEOUT,
                    popen_kwargs={"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}, **kw)
    expect(not res.timed_out, "the compiler timed out under the host")
    expect(res.returncode == 0, "the compiler exited %r under the host" % res.returncode)
    expect(not res.errors, "host session error: %s" % "; ".join(res.errors))
    return res, obj, read_trace(trace), log


def t_pipe_host_decides(ctx):
    gym = ctx.gym()
    d = ctx.fresh("pipe-host")
    answers = {}

    def policy(f, context, index):
        a = int(f["callee_size"][0] <= 6 and f["call_recursive"][0] == 0)
        answers[(context, index)] = a
        return a
    res, obj, rows, log = serve_compile(ctx, d, policy, CALLS_C)
    expect(len(res.sessions) == 1, "%d sessions for one TU" % len(res.sessions))
    s = res.sessions[0]
    expect([x.name for x in s.features] == FEATURES, "header features %s..."
           % [x.name for x in s.features][:3])
    expect(all(x.type == "int64_t" and x.shape == [1] for x in s.features), "feature types")
    expect(s.advice.name == "inlining_decision" and s.advice.type == "int64_t",
           "advice spec %r" % s.advice)
    expect(s.contexts == list(dict.fromkeys(r.caller for r in rows)),
           "contexts %r are not the callers" % s.contexts[:4])
    expect(res.observations == len(rows), "host saw %d observations, trace has %d"
           % (res.observations, len(rows)))
    obs = check_log_matches_trace(gym, log, rows)
    logged = {(o.context, o.id): o.features["inlining_decision"][0] for o in obs}
    expect(logged == answers, "logged decisions differ from the host's answers")
    expect(0 in answers.values() and 1 in answers.values(), "trivial policy run")
    bad = [(r.caller, r.callee) for r in rows if r.decision != r.inlined]
    expect(not bad, "the host's decision did not take effect: %s" % bad[:3])
    left = calls_to(call_edges(obj))
    for r in rows:
        if r.decision == 0:
            expect(left[r.callee] > 0, "refused %s -> %s vanished" % (r.caller, r.callee))
    for callee in {r.callee for r in rows}:
        if all(r.decision == 1 for r in rows if r.callee == callee):
            expect(left[callee] == 0, "%s still called after the host inlined it" % callee)
    want = link_and_run(plain_object(ctx, CALLS_C), d, "plain")
    expect(link_and_run(obj, d) == want, "the program prints something else")
    return "%d observations, %d inlined by the host" % (len(rows), sum(answers.values()))


def t_pipe_log_readers(ctx):
    """The development-mode log (a larger file): C reader == Python reader; the host recorded
    the same features the log holds."""
    gym = ctx.gym()
    d = ctx.fresh("pipe-log")
    record = os.path.join(d, "stream.bin")

    def policy(f, context, index):
        return int(f["call_growth"][0] <= 4)
    res, _, rows, log = serve_compile(ctx, d, policy, "compiler/front/text_print.c", record=record)
    want = python_dump(gym, log)
    r = check_run([ctx.c_tool("gcc_logdump"), log], "gcc_logdump")
    got = r.stdout.decode()
    expect(got == want, "C reader vs Python reader: " + first_diff(got, want))
    # The recorded stream (what the plugin sent the host) has the same observations.
    _, stream = gym.read_log(record)
    _, logged = gym.read_log(log)
    expect(len(stream) == len(logged), "stream %d vs log %d observations"
           % (len(stream), len(logged)))
    for a, b in zip(stream, logged):
        expect(a.context == b.context and all(a.features[n] == b.features[n] for n in FEATURES),
               "stream and log differ at %s #%d" % (b.context, b.id))
    r = check_run([ctx.c_tool("gcc_logdump"), record], "gcc_logdump on the stream")
    return "%d observations in %d contexts; C and Python readers agree" % (
        len(logged), len(set(o.context for o in logged)))


def t_pipe_cli_never(ctx):
    """python3 -m mlbc_gym serve --constant 0 -- gcc ...: the -fno-inline object."""
    d = ctx.fresh("pipe-cli")
    base = os.path.join(d, "ch")
    obj = os.path.join(d, "x.o")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "runtime", "python"))
    cmd = [sys.executable, "-m", "mlbc_gym", "serve", base, "--constant", "0", "--timeout",
           str(TIMEOUT), "--", GCC, "-O2", "-c", os.path.join(ROOT, CALLS_C), "-o", obj] \
        + src_flags(ctx, CALLS_C) + plugin_args(ctx, channel=base)
    r = check_run(cmd, "mlbc_gym serve", timeout=TIMEOUT + 10, env=env)
    expect(same_file(obj, plain_object(ctx, CALLS_C, ["-fno-inline"])),
           "host answering 0 did not give the -fno-inline object")
    expect(b"observations" in r.stderr or r.returncode == 0, "no session report")


def t_pipe_two_tus(ctx):
    gym = ctx.gym()
    d = ctx.fresh("pipe-two")
    base = os.path.join(d, "ch")
    cmd = [GCC, "-O2", "-c", os.path.join(ROOT, CALLS_C), os.path.join(ROOT, "runtime/json.c"),
           "-std=gnu11", "-D_GNU_SOURCE", "-I", os.path.join(ROOT, "runtime")] \
        + plugin_args(ctx, channel=base)
    res = gym.serve(base, lambda f, c, i: 1, command=cmd, command_timeout=TIMEOUT,
                    popen_kwargs={"stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
                                  "cwd": d})
    expect(res.returncode == 0 and not res.errors, "exit %r, errors %r"
           % (res.returncode, res.errors))
    expect(len(res.sessions) == 2 and all(s.observations for s in res.sessions),
           "%d sessions: %r" % (len(res.sessions), res.sessions))
    return "%s observations" % [s.observations for s in res.sessions]


def t_pipe_no_host(ctx):
    """No host: after the timeout GCC decides, with a warning; nothing hangs."""
    d = ctx.fresh("pipe-no-host")
    base = os.path.join(d, "ch")
    os.mkfifo(base + ".in", 0o600)
    os.mkfifo(base + ".out", 0o600)
    t0 = time.time()
    obj, rows, _, err = with_plugin(ctx, d, CALLS_C, channel=base, timeout=700)
    took = time.time() - t0
    expect("mlbc_inline" in err and "GCC decides" in err, "no warning: %r" % first_line(err))
    expect(took < 20, "took %.1f s" % took)
    expect(rows and all(r.decision == -1 for r in rows), "decisions without a host")
    # -O0 asks nothing, so it never waits for a host.
    t0 = time.time()
    _, rows0, _, err0 = with_plugin(ctx, d, CALLS_C, "o0", opt="-O0", channel=base,
                                    timeout=5000)
    expect(not rows0 and time.time() - t0 < 4 and "GCC decides" not in err0,
           "-O0 waited for a host")
    return "gave up after %.1f s" % took


def t_pipe_host_dies(ctx):
    """A host that reads the header and the first observation, then goes away: the compiler
    finishes with a warning and GCC decides the rest."""
    d = ctx.fresh("pipe-host-dies")
    base = os.path.join(d, "ch")
    os.mkfifo(base + ".in", 0o600)
    os.mkfifo(base + ".out", 0o600)
    obj = os.path.join(d, "x.o")
    trace = os.path.join(d, "t")
    proc = subprocess.Popen([GCC, "-O2", "-c", os.path.join(ROOT, CALLS_C), "-o", obj]
                            + plugin_args(ctx, channel=base, timeout=2000, trace=trace),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    got = bytearray()

    def host():
        deadline = time.time() + 20
        fd_in = None
        while fd_in is None and time.time() < deadline and proc.poll() is None:
            try:
                fd_in = os.open(base + ".in", os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.02)
        if fd_in is None:
            return
        fd_out = os.open(base + ".out", os.O_RDONLY)
        while b'{"observation":0}' not in got and time.time() < deadline:
            chunk = os.read(fd_out, 4096)
            if not chunk:
                break
            got.extend(chunk)
        os.close(fd_in)
        os.close(fd_out)
    th = threading.Thread(target=host, daemon=True)
    th.start()
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise Failure("the compiler hung after the host went away")
    th.join(5)
    err = err.decode(errors="replace")
    expect(b'"features"' in got, "host got no header")
    expect(proc.returncode == 0, "exit %d: %s" % (proc.returncode, first_line(err)))
    expect("the policy failed" in err, "no warning: %r" % first_line(err))
    rows = read_trace(trace)
    expect(rows and all(r.decision == -1 for r in rows), "decisions after the host died")


# ---- main ------------------------------------------------------------------------------------

def tests():
    t = [("plugin arguments: errors name the problem", t_bad_arguments)]
    for src in (CALLS_C, "compiler/front/text_print.c"):
        t.append(("mode=gcc observes only: object identical, log = GCC's decisions (%s)"
                  % os.path.basename(src), t_gcc_mode_identical(src)))
    for src in [CALLS_C, SHAPES_CC] + REPO_SOURCES:
        t.append(("mode=never: calls as with -fno-inline (%s)" % os.path.basename(src),
                  t_never(src)))
    t += [
        ("mode=always: only calls GCC cannot inline remain (calls.c)", t_always_calls),
        ("mode=always: recursion refused, max-size caps growth (text_print.c)",
         t_always_bounded),
        ("program output unchanged in every mode (C and C++)", t_programs_unchanged),
        ("-O0/-O1/-Os/-O3", t_opt_levels),
        ("-flto: warning, no decisions", t_lto),
        ("stats: the model's share of compile time", t_stats),
        ("early=gcc: the policy decides after GCC's early inliner", t_early_gcc),
    ]
    for src in (CALLS_C, "compiler/front/text_print.c", SHAPES_CC):
        t.append(("release mode: logged decisions == generated code (%s)"
                  % os.path.basename(src), t_model_equals_generated(src)))
    t += [
        ("release mode: the object follows the model", t_model_in_object),
        ("model=POLICY.so: a policy loaded at run time", t_model_shared_object),
        ("model=POLICY.onnxtxt: compiled at run time into the cache", t_model_onnx),
        ("development mode: the Python host decides, log == host's answers", t_pipe_host_decides),
        ("development mode: log read alike by C and Python readers", t_pipe_log_readers),
        ("development mode: mlbc_gym serve --constant 0 == -fno-inline", t_pipe_cli_never),
        ("development mode: two TUs, two sessions", t_pipe_two_tus),
        ("development mode: no host -> GCC decides after the timeout", t_pipe_no_host),
        ("development mode: host dies -> compiler finishes", t_pipe_host_dies),
    ]
    return t


def missing():
    plugin_dir = run([GCC, "-print-file-name=plugin"]).stdout.decode().strip()
    if not os.path.exists(os.path.join(plugin_dir, "include", "gcc-plugin.h")) \
            or not shutil.which(OBJDUMP):
        return ("gcc plugin headers or objdump missing: skipping (apt-get install "
                "gcc-12-plugin-dev binutils)")
    return None


if __name__ == "__main__":
    sys.exit(harness.main(tests, Ctx, "mlbc-gcc-", missing))
