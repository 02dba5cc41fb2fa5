"""Against the real Debian clang-19 and libLLVM-19: our Python host (runtime/python/mlbc_gym)
drives clang-19's ML inliner and register-allocation advisors, mlbc-serve steers clang-19 with
policies compiled by mlbc, and training logs written by LLVM's own llvm::Logger and by our
logger are read identically by our C reader, our Python reader and mlbc-replay.

    python3 tests/test_clang.py --build BUILD [-k SUBSTRING] [-v]

Ends with one line "N passed, M failed[, K skipped]". Every compiler run has a timeout.
"""
import collections
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import harness
from harness import expect, first_line

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CLANG = "/usr/bin/clang-19"
CLANGXX = "/usr/bin/clang++-19"
OBJDUMP = "llvm-objdump-19"
NM = "llvm-nm-19"
LLVM_CONFIG = "llvm-config-19"
TIMEOUT = 120                   # seconds, for every compiler run
run = functools.partial(harness.run, timeout=TIMEOUT)
check_run = functools.partial(harness.check_run, timeout=TIMEOUT)
SAN_FLAGS = ("-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "
             "-fno-sanitize-recover=all")           # as tests/test_errors.py builds mlbc

INLINER_FEATURES = (
    "sroa_savings sroa_losses load_elimination call_penalty call_argument_setup "
    "load_relative_intrinsic lowered_call_arg_setup indirect_call_penalty jump_table_penalty "
    "case_cluster_penalty switch_default_dest_penalty switch_penalty "
    "unsimplified_common_instructions num_loops dead_blocks simplified_instructions "
    "constant_args constant_offset_ptr_args callsite_cost cold_cc_penalty "
    "last_call_to_static_bonus is_multiple_blocks nested_inlines nested_inline_cost_estimate "
    "threshold callee_basic_block_count callsite_height node_count nr_ctant_params "
    "cost_estimate edge_count caller_users caller_conditionally_executed_blocks "
    "caller_basic_block_count callee_conditionally_executed_blocks callee_users "
    "is_callee_avail_external is_caller_avail_external").split()
EVICT_FEATURES = (
    "mask is_free nr_urgent nr_broken_hints is_hint is_local nr_rematerializable "
    "nr_defs_and_uses weighed_reads_by_max weighed_writes_by_max weighed_read_writes_by_max "
    "weighed_indvars_by_max hint_weights_by_max start_bb_freq_by_max end_bb_freq_by_max "
    "hottest_bb_freq_by_max liverange_size use_def_density max_stage min_stage progress").split()
SLOT_DEFAULT = 25               # LLVM 19 quirk: include-default writes into slot 25 (§13.1)


# ---- fixtures (built once, on first use; a failure fails every test that needs it) --------

class Ctx(harness.Ctx):
    def rtlib(self):
        p = os.path.join(self.build, "libmlbc_rt.a")
        expect(os.path.exists(p), "%s is not built" % p)
        return p

    # mlbc + cc -shared: the compiled example policies
    def policy_so(self, model, name):
        def make():
            d = self.path("policies")
            os.makedirs(d, exist_ok=True)
            c = os.path.join(d, name + ".c")
            check_run([self.tool("mlbc"), os.path.join(ROOT, "models", model), "-o", c,
                       "-n", name], "mlbc " + model)
            so = os.path.join(d, name + ".so")
            check_run(["cc", "-O2", "-shared", "-fPIC", "-o", so, c, "-lm"], "cc -shared")
            return so
        return self.fixture("policy:" + name, make)

    def direct_driver(self):
        def make():
            so = self.policy_so("inliner.onnx", "policy")
            d = os.path.dirname(so)
            exe = os.path.join(d, "inliner_direct")
            check_run(["cc", "-O2", "-std=c99", "-Wall", "-Wextra", "-I", d,
                       os.path.join(HERE, "clang", "inliner_direct.c"),
                       os.path.join(d, "policy.c"), "-o", exe, "-lm"], "cc inliner_direct")
            return exe
        return self.fixture("inliner_direct", make)

    def san_tool(self, name):
        """BUILD/asan/NAME: the tool built with ASan+UBSan (the build tests/test_errors.py
        makes for mlbc), every report fatal."""
        def make():
            san = os.path.join(self.build, "asan")
            check_run(["make", "-s", "-j%d" % (os.cpu_count() or 2), "BUILD=" + san,
                       "CFLAGS=" + SAN_FLAGS,
                       "CXXFLAGS=" + SAN_FLAGS, os.path.join(san, name)],
                      "make %s (ASan+UBSan)" % name, cwd=ROOT)
            return os.path.join(san, name)
        return self.fixture("san:" + name, make)

    def c_tool(self, name):
        """tests/clang/NAME.c linked with the runtime library."""
        def make():
            d = self.path("ctools")
            os.makedirs(d, exist_ok=True)
            exe = os.path.join(d, name)
            check_run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-D_GNU_SOURCE",
                       "-I", os.path.join(ROOT, "runtime"), "-I", os.path.join(HERE, "clang"),
                       os.path.join(HERE, "clang", name + ".c"), self.rtlib(), "-lm", "-o",
                       exe], "cc " + name)
            return exe
        return self.fixture("ctool:" + name, make)


# ---- compiling with clang-19 ------------------------------------------------------------------

SOURCES = [  # (name, file, include dirs relative to ROOT or BUILD)
    ("calls.c", "tests/clang/calls.c"),
    ("util.c", "compiler/ir/util.c"),
    ("text_print.c", "compiler/front/text_print.c"),
    ("op_select.c", "compiler/ops/op_select.c"),
]


def cflags(ctx):
    return ["-I", os.path.join(ROOT, "compiler"), "-I", ctx.build]


def inliner_flags(base, include_default=False):
    f = ["-mllvm", "-enable-ml-inliner=release",
         "-mllvm", "-inliner-interactive-channel-base=" + base]
    if include_default:
        f += ["-mllvm", "-inliner-interactive-include-default"]
    return f


def evict_flags(base):
    return ["-mllvm", "-regalloc-enable-advisor=release",
            "-mllvm", "-regalloc-evict-interactive-channel-base=" + base]


def priority_flags(base):
    return ["-mllvm", "-regalloc-enable-priority-advisor=release",
            "-mllvm", "-regalloc-priority-interactive-channel-base=" + base]


def compile_cmd(ctx, src, obj, extra=(), opt="-O2"):
    return [CLANG, opt, "-c", os.path.join(ROOT, src), "-o", obj] + cflags(ctx) + list(extra)


def plain_object(ctx, src, flags=()):
    key = "plain:%s:%s" % (src, " ".join(flags))

    def make():
        d = ctx.path("plain")
        os.makedirs(d, exist_ok=True)
        obj = os.path.join(d, re.sub(r"\W", "_", key) + ".o")
        check_run(compile_cmd(ctx, src, obj, flags), "clang-19 " + src)
        return obj
    return ctx.fixture(key, make)


def host_compile(ctx, d, policy, cmd_extra, src, obj_name="out.o", kind="inliner", **kw):
    """Runs clang-19 on src under our Python host; returns (ServeResult, object path)."""
    gym = ctx.gym()
    base = os.path.join(d, "ch")
    obj = os.path.join(d, obj_name)
    flags = {"inliner": inliner_flags, "evict": evict_flags, "priority": priority_flags}[kind]
    extra = flags(base) + list(cmd_extra)
    if kind == "inliner" and kw.pop("include_default", False):
        extra = inliner_flags(base, True) + list(cmd_extra)
    cmd = compile_cmd(ctx, src, obj, extra)
    res = gym.serve(base, policy, command=cmd, command_timeout=TIMEOUT,
                    popen_kwargs={"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}, **kw)
    expect(not res.timed_out, "clang-19 timed out under the host")
    expect(res.returncode == 0, "clang-19 exit %r under the host" % res.returncode)
    expect(not res.errors, "host session error: %s" % "; ".join(res.errors))
    return res, obj


def call_edges(obj):
    """{function: set of called functions} from the disassembly (calls and tail jumps,
    relocations matched by offset; indirect calls as '*')."""
    out = check_run([OBJDUMP, "-dr", "--no-show-raw-insn", obj], "llvm-objdump").stdout.decode()
    edges = collections.defaultdict(set)
    fn = None
    insns = []                  # (fn, addr, mnemonic, operand)
    relocs = {}                 # offset -> symbol
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            fn = m.group(2)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+R_X86_64_\w+\s+(\S+?)(?:[-+]0x[0-9a-f]+)?$", line)
        if m:
            relocs[int(m.group(1), 16)] = m.group(2)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(call\w*|jmp\w*)\s+(.*)$", line)
        if m and fn:
            insns.append((fn, int(m.group(1), 16), m.group(2), m.group(3)))
    for f, addr, mnem, op in insns:
        if op.startswith("*"):
            if mnem.startswith("call"):
                edges[f].add("*")
            continue
        target = relocs.get(addr + 1)
        if target is None:
            t = re.search(r"<([^>]+)>", op)
            if not t or "+" in t.group(1) or t.group(1) == f:
                continue        # a jump inside the function
            target = t.group(1)
        if target.startswith(".L"):
            continue
        edges[f].add(target)
    return dict(edges)


def defined_symbols(obj):
    out = check_run([NM, "--defined-only", obj], "llvm-nm").stdout.decode()
    return sorted(l.split()[-1] for l in out.splitlines() if l.strip())


def link_and_run(ctx, obj, d, name="prog"):
    exe = os.path.join(d, name)
    check_run([CLANG, obj, "-o", exe, "-lm"], "link " + obj)
    return check_run([exe], "run " + exe, timeout=30).stdout.decode()


# ---- a. the inliner under our Python host --------------------------------------------------

def t_inliner_header(ctx):
    d = ctx.fresh("inliner-header")

    def pol(f, c, i):
        return 0
    res, _ = host_compile(ctx, d, pol, [], "tests/clang/calls.c")
    s = res.sessions[0]
    expect([x.name for x in s.features] == INLINER_FEATURES,
           "header features differ from llvm-mlgo.md §7: %s" % [x.name for x in s.features][:5])
    expect(all(x.type == "int64_t" and x.shape == [1] for x in s.features), "types/shapes")
    expect(s.advice.name == "inlining_decision" and s.advice.type == "int64_t",
           "advice spec %r" % s.advice)
    expect(s.contexts == [""], "contexts %r" % s.contexts)
    res, _ = host_compile(ctx, ctx.fresh("inliner-header-default"), pol, [],
                          "tests/clang/calls.c", include_default=True)
    names = [x.name for x in res.sessions[0].features]
    expect(names == INLINER_FEATURES + ["inlining_default"], "include-default header: %s"
           % names[-2:])


def t_never_inline(src):
    def t(ctx):
        d = ctx.fresh("never-" + os.path.basename(src))
        seen = []

        def never(f, c, i):
            seen.append(i)
            return 0
        res, obj = host_compile(ctx, d, never, [], src)
        expect(res.observations > 0, "no observation")
        expect(len(res.sessions) == 1, "%d sessions for one TU" % len(res.sessions))
        expect(seen == list(range(len(seen))), "observation numbers not 0..N-1")
        noinl = call_edges(plain_object(ctx, src, ["-fno-inline"]))
        got = call_edges(obj)
        diff = sorted(f for f in set(noinl) | set(got) if noinl.get(f) != got.get(f))
        expect(not diff, "call edges differ from the -fno-inline build in %s: %s vs %s"
               % (diff[0], sorted(got.get(diff[0], ()))[:8],
                  sorted(noinl.get(diff[0], ()))[:8]) if diff else "")
        plain = call_edges(plain_object(ctx, src))
        return "%d observations, %d call edges kept (default build: %d)" % (
            res.observations, sum(map(len, got.values())), sum(map(len, plain.values())))
    return t


def t_default_identical(src):
    def t(ctx):
        d = ctx.fresh("default-" + os.path.basename(src))
        answers = []

        def heuristic(f, c, i):
            a = f["callee_basic_block_count"][0]   # the default decision (§13 quirk 1)
            answers.append(a)
            return a
        res, obj = host_compile(ctx, d, heuristic, [], src, include_default=True)
        expect(res.observations > 0, "no observation")
        expect(set(answers) <= {0, 1},
               "slot 25 is not a 0/1 decision: %s" % sorted(set(answers))[:5])
        plain = plain_object(ctx, src)
        with open(obj, "rb") as a, open(plain, "rb") as b:
            expect(a.read() == b.read(), "object differs from the default -O2 build")
        return "%d observations, %d inlined, object byte-identical" % (
            res.observations, sum(answers))
    return t


def t_small_callees_program(ctx):
    """Inline iff the callee has <= 2 blocks: the program still prints the same."""
    d = ctx.fresh("inline-small")

    def small(f, c, i):
        return int(f["callee_basic_block_count"][0] <= 2)
    res, obj = host_compile(ctx, d, small, [], "tests/clang/calls.c")
    expect(res.observations > 0, "no observation")
    got = link_and_run(ctx, obj, d)
    want = link_and_run(ctx, plain_object(ctx, "tests/clang/calls.c"), d, "plain")
    expect(got == want, "the program prints something else: %r" % got[:80])


def t_no_session_O0(ctx):
    gym = ctx.gym()
    d = ctx.fresh("inliner-O0")
    base = os.path.join(d, "ch")
    t0 = time.time()
    res = gym.serve(base, lambda f, c, i: 0, command=compile_cmd(
        ctx, "tests/clang/calls.c", os.path.join(d, "o.o"), inliner_flags(base), "-O0"),
        command_timeout=TIMEOUT)
    expect(res.returncode == 0 and not res.sessions, "-O0: %r" % res)
    expect(time.time() - t0 < 30, "took %.0f s" % (time.time() - t0))


def t_two_tus(ctx):
    gym = ctx.gym()
    d = ctx.fresh("inliner-two-tus")
    base = os.path.join(d, "ch")
    cmd = [CLANG, "-O2", "-c", os.path.join(ROOT, "tests/clang/calls.c"),
           os.path.join(ROOT, "compiler/ir/util.c")] + cflags(ctx) + inliner_flags(base)
    res = gym.serve(base, lambda f, c, i: 1, command=cmd, command_timeout=TIMEOUT,
                    popen_kwargs={"cwd": d})
    expect(res.ok, "%r" % res)
    expect(len(res.sessions) == 2, "%d sessions for two TUs" % len(res.sessions))


# ---- b. register allocation advisors --------------------------------------------------------

def evict_policy(stats):
    def pol(f, c, i):
        mask = f["mask"]
        stats["n"] += 1
        if mask[32]:
            return 32               # evict nothing
        for k in range(33):
            if mask[k]:
                stats["evictions"] += 1
                return k
        stats["no_column"] += 1
        return 32
    return pol


def t_evict(src, run_program):
    def t(ctx):
        d = ctx.fresh("evict-" + os.path.basename(src))
        stats = collections.Counter()
        res, obj = host_compile(ctx, d, evict_policy(stats), [], src, kind="evict")
        expect(res.observations > 0, "no observation")
        s = res.sessions[0]
        expect([x.name for x in s.features] == EVICT_FEATURES, "eviction header: %s"
               % [x.name for x in s.features][:4])
        expect(s.advice.name == "index_to_evict", "advice %r" % s.advice)
        expect(stats["no_column"] == 0, "%d observations without any mask column"
               % stats["no_column"])
        expect(len(s.contexts) >= 2, "contexts %r" % s.contexts)
        plain = plain_object(ctx, src)
        expect(defined_symbols(obj) == defined_symbols(plain), "defined symbols differ")
        if run_program:
            expect(link_and_run(ctx, obj, d) == link_and_run(ctx, plain, d, "plain"),
                   "the program prints something else")
        return "%d observations in %d contexts, %d forced evictions" % (
            res.observations, len(s.contexts), stats["evictions"])
    return t


def t_priority(ctx):
    d = ctx.fresh("priority")
    got = []

    def pol(f, c, i):
        got.append(f["weight"][0])
        return float(f["li_size"][0]) * 2.0 + 0.5     # truncated to unsigned by LLVM
    res, obj = host_compile(ctx, d, pol, [], "tests/clang/calls.c", kind="priority")
    s = res.sessions[0]
    expect([x.name for x in s.features] == ["li_size", "stage", "weight"],
           "priority header %r" % s.features)
    expect(s.advice.type == "float" and s.advice.name == "priority", "advice %r" % s.advice)
    expect(res.observations > 0 and all(isinstance(w, float) for w in got), "observations")
    plain = plain_object(ctx, "tests/clang/calls.c")
    expect(link_and_run(ctx, obj, d) == link_and_run(ctx, plain, d, "plain"),
           "the program prints something else")
    return "%d observations" % res.observations


def t_evict_and_priority(ctx):
    gym = ctx.gym()
    d = ctx.fresh("evict+priority")
    stats = collections.Counter()
    be, bp = os.path.join(d, "ev"), os.path.join(d, "pr")
    obj = os.path.join(d, "out.o")
    cmd = compile_cmd(ctx, "tests/clang/calls.c", obj, evict_flags(be) + priority_flags(bp))
    chans = [gym.Channel(be, evict_policy(stats)),
             gym.Channel(bp, lambda f, c, i: f["li_size"][0] + 1.0)]
    res = gym.serve_channels(chans, command=cmd, command_timeout=TIMEOUT)
    expect(res.ok, "%r" % res)
    by = collections.Counter(s.channel for s in res.sessions)
    expect(by[be] == 1 and by[bp] == 1, "sessions %r" % by)
    plain = plain_object(ctx, "tests/clang/calls.c")
    expect(link_and_run(ctx, obj, d) == link_and_run(ctx, plain, d, "plain"),
           "the program prints something else")


# ---- c. mlbc-serve with policies compiled by mlbc -----------------------------------------------

def serve_cmd(ctx, so, base, log=None, extra=()):
    c = [ctx.tool("mlbc-serve"), "--model", so, "--channel", base, "--timeout", "60000"]
    if log:
        c += ["--log", log]
    return c + list(extra)


def python_dump(path_or_bytes, gym):
    """The canonical dump of tests/clang/log_scenarios.h, read by our Python reader."""
    import io
    f = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else open(path_or_bytes, "rb")
    with f:
        r = gym.LogReader(f)
        out = []

        def spec(kind, t):
            out.append("%s %s %s [%s]" % (kind, t.name, t.type, ",".join(map(str, t.shape))))
        for t in r.features:
            spec("feature", t)
        if r.score is not None:
            spec("score", r.score)
        if r.advice is not None:
            spec("advice", r.advice)
        for rec in r.records():
            if rec.kind == "context":
                out.append("context " + (rec.context.encode().hex() or "-"))
            elif rec.kind == "observation":
                out.append("observation %d %s" % (rec.id, " ".join(
                    b.hex() or "-" for b in rec.raw)))
            elif rec.kind == "outcome":
                out.append("outcome %d %s" % (rec.id, rec.raw_score.hex() or "-"))
            else:
                out.append("other-record " + rec.kind)
    return "\n".join(out) + "\n"


def read_decisions(gym, log, name):
    """[(context, id, feature dict)] and the recorded decision, from a log."""
    r, obs = gym.read_log(log)
    return r, [(o.context, o.id, o.features, o.features[name][0]) for o in obs]


def t_serve_sanitized(ctx):
    """mlbc-serve and mlbc-replay built with ASan+UBSan: the inliner session and its replay
    end cleanly with the plain tools' decisions, and no sanitizer says a word."""
    so = ctx.policy_so("inliner.onnx", "policy")
    serve, replay = ctx.san_tool("mlbc-serve"), ctx.san_tool("mlbc-replay")
    d = ctx.fresh("serve-asan")
    base, log, obj = os.path.join(d, "ch"), os.path.join(d, "serve.log"), os.path.join(d, "s.o")
    cmd = [serve] + serve_cmd(ctx, so, base, log)[1:] + ["--"] + compile_cmd(
        ctx, "tests/clang/calls.c", obj, inliner_flags(base))
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1")
    r = check_run(cmd, "mlbc-serve (ASan+UBSan)", env=env)
    rp = check_run([replay, "--model", so, "--check", log], "mlbc-replay (ASan+UBSan)", env=env)
    plain = check_run([ctx.tool("mlbc-replay"), "--model", so, "--check", log], "mlbc-replay")
    # the gRPC path, both ends sanitized: --remote to --listen
    rlog = os.path.join(d, "remote.log")
    srv, port = listening([serve, "--model", so, "--listen", "127.0.0.1:0"], env=env)
    try:
        rr = check_run(remote_cmd(ctx, port, base, rlog, serve=serve) + ["--"] + compile_cmd(
            ctx, "tests/clang/calls.c", obj, inliner_flags(base)),
            "mlbc-serve --remote (ASan+UBSan)", env=env)
    finally:
        _, serr = stop_listening(srv)
    reports = [t for t in (r.stderr, rp.stderr, rr.stderr, serr.encode())
               if b"Sanitizer" in t or b"runtime error" in t]
    expect(not reports, "sanitizer report: %s" % (reports[0][-600:] if reports else ""))
    expect(rp.stdout == plain.stdout and rp.stdout, "the sanitized replay differs")
    with open(log, "rb") as a, open(rlog, "rb") as b:
        expect(a.read() == b.read(), "the sanitized gRPC path logs something else")


def t_serve_inliner(ctx):
    gym = ctx.gym()
    so = ctx.policy_so("inliner.onnx", "policy")
    d = ctx.fresh("serve-inliner")
    base, log, obj = os.path.join(d, "ch"), os.path.join(d, "serve.log"), os.path.join(d, "s.o")
    cmd = serve_cmd(ctx, so, base, log) + ["--"] + compile_cmd(
        ctx, "tests/clang/calls.c", obj, inliner_flags(base))
    check_run(cmd, "mlbc-serve")
    expect(not os.path.exists(base + ".in") and not os.path.exists(base + ".out"),
           "FIFOs left behind")
    r, rows = read_decisions(gym, log, "inlining_decision")
    names = [s.name for s in r.features]
    expect(names == INLINER_FEATURES + ["inlining_decision"], "log features: ...%s" % names[-2:])
    expect(r.score is None and r.advice is None, "log header has score/advice")
    expect(len(rows) > 0, "no observation logged")
    decisions = [x[3] for x in rows]
    expect(set(decisions) == {0, 1}, "decisions %r: the test needs both" % sorted(set(decisions)))

    # 1. replaying the log through the shared-object runner gives the logged decisions
    rp = check_run([ctx.tool("mlbc-replay"), "--model", so, "--check", log], "mlbc-replay")
    lines = rp.stdout.decode().splitlines()
    expect(len(lines) == len(rows), "mlbc-replay printed %d lines for %d observations"
           % (len(lines), len(rows)))
    expect([int(l.split()[-1]) for l in lines] == decisions, "mlbc-replay decisions differ")
    expect(lines[0].startswith('"" 0 '), "replay line format: %r" % lines[0])

    # 2. the generated code called directly, on the same features
    feed = " ".join(INLINER_FEATURES) + "\n" + "".join(
        " ".join(str(f[n][0]) for n in INLINER_FEATURES) + "\n" for _, _, f, _ in rows)
    dr = check_run([ctx.direct_driver()], "inliner_direct", input=feed.encode())
    expect([int(x) for x in dr.stdout.split()] == decisions,
           "the generated code decides differently on the logged features")

    # 3. the decisions took effect: a host replaying them yields the same object
    it = iter(decisions)
    res, obj2 = host_compile(ctx, d, lambda f, c, i: next(it), [], "tests/clang/calls.c",
                             "h.o")
    expect(res.observations == len(decisions), "host saw %d observations, serve %d"
           % (res.observations, len(decisions)))
    with open(obj, "rb") as a, open(obj2, "rb") as b:
        expect(a.read() == b.read(), "object differs from the host replaying the decisions")
    return "%d observations, %d inlined" % (len(decisions), sum(decisions))


def t_serve_sessions(ctx):
    gym = ctx.gym()
    so = ctx.policy_so("inliner.onnx", "policy")
    d = ctx.fresh("serve-sessions")
    base, log = os.path.join(d, "ch"), os.path.join(d, "serve.log")
    cmd = serve_cmd(ctx, so, base, log, ["-v"]) + ["--", CLANG, "-O2", "-c"] + [
        os.path.join(ROOT, s) for _, s in SOURCES[:3]] + cflags(ctx) + inliner_flags(base)
    r = check_run(cmd, "mlbc-serve", cwd=d)
    err = r.stderr.decode()
    expect(err.count("session") >= 3 and "3 session(s)" in err, "stderr: %r" % err[-200:])
    _, obs = gym.read_log(log)
    ctxs = [l for l in python_dump(log, gym).splitlines() if l.startswith("context")]
    expect(len(ctxs) == 3, "%d context records for 3 sessions" % len(ctxs))
    expect([o.id for o in obs] == list(range(len(obs))), "ids do not continue over sessions")
    rp = check_run([ctx.tool("mlbc-replay"), "--model", so, "--check", log], "mlbc-replay")
    expect(len(rp.stdout.splitlines()) == len(obs), "replay count")


def t_serve_evict(ctx):
    so = ctx.policy_so("regalloc_evict.onnx", "evict")
    d = ctx.fresh("serve-evict")
    base, log, obj = os.path.join(d, "ch"), os.path.join(d, "ev.log"), os.path.join(d, "e.o")
    cmd = serve_cmd(ctx, so, base, log) + ["--"] + compile_cmd(
        ctx, "tests/clang/calls.c", obj, evict_flags(base))
    check_run(cmd, "mlbc-serve")
    rp = check_run([ctx.tool("mlbc-replay"), "--model", so, "--check", log], "mlbc-replay")
    picks = [int(l.split()[-1]) for l in rp.stdout.decode().splitlines()]
    expect(picks and all(0 <= p <= 32 for p in picks), "decisions %r" % picks[:5])
    plain = plain_object(ctx, "tests/clang/calls.c")
    expect(link_and_run(ctx, obj, d) == link_and_run(ctx, plain, d, "plain"),
           "the program prints something else")
    return "%d observations, %d evictions" % (len(picks), sum(p != 32 for p in picks))


def t_serve_errors(ctx):
    inl = ctx.policy_so("inliner.onnx", "policy")
    ev = ctx.policy_so("regalloc_evict.onnx", "evict")
    d = ctx.fresh("serve-errors")
    base = os.path.join(d, "ch")
    src = "tests/clang/calls.c"
    o = os.path.join(d, "o.o")
    # a model input missing from the compiler's header: named; clang stopped, not hung
    t0 = time.time()
    r = run(serve_cmd(ctx, ev, base) + ["--"] + compile_cmd(ctx, src, o, inliner_flags(base)),
            timeout=60)
    err = r.stderr.decode()
    expect(r.returncode == 1 and "'mask'" in err, "wrong model: exit %d, %r"
           % (r.returncode, first_line(err)))
    expect(time.time() - t0 < 30, "wrong model took %.0f s" % (time.time() - t0))
    expect(not os.path.exists(base + ".in"), "FIFOs left behind")
    # -O0: no session at all; the compiler's status, no log
    log = os.path.join(d, "none.log")
    r = run(serve_cmd(ctx, inl, base, log) + ["--"] + compile_cmd(ctx, src, o,
                                                                   inliner_flags(base), "-O0"))
    expect(r.returncode == 0 and not os.path.exists(log), "-O0: exit %d" % r.returncode)
    # the compiler fails before the inliner: its status is passed on
    bad = os.path.join(d, "bad.c")
    with open(bad, "w") as f:
        f.write("int f( {\n")
    r = run(serve_cmd(ctx, inl, base) + ["--", CLANG, "-O2", "-c", bad, "-o", o] +
            inliner_flags(base))
    expect(r.returncode == 1, "syntax error: exit %d" % r.returncode)
    # a command that cannot be run
    r = run(serve_cmd(ctx, inl, base) + ["--", os.path.join(d, "no-such-compiler")])
    expect(r.returncode == 127 and "cannot run" in r.stderr.decode(), "exit %d" % r.returncode)
    # no command, nobody comes: --timeout ends the wait
    t0 = time.time()
    r = run([ctx.tool("mlbc-serve"), "--model", inl, "--channel", base, "--timeout", "300"],
            timeout=30)
    expect(r.returncode == 1 and time.time() - t0 < 10, "standalone timeout: exit %d"
           % r.returncode)
    # a missing model and a bad usage
    r = run([ctx.tool("mlbc-serve"), "--model", os.path.join(d, "none.so"), "--channel", base,
             "--", "true"])
    expect(r.returncode == 1 and "none.so" in r.stderr.decode(), "missing model")
    # an ONNX model mlbc refuses: mlbc's message, nothing cached
    refused = os.path.join(d, "refused.onnxtxt")
    with open(refused, "w") as f:
        f.write('<ir_version: 8, opset_import: ["" : 17]>\nrefused (float[2] x) => (float[2] y)'
                '\n{\n  y = NoSuchOp (x)\n}\n')
    cache = os.path.join(d, "cache")
    r = run([ctx.tool("mlbc-serve"), "--model", refused, "--channel", base, "--", "true"],
            env=dict(os.environ, MLBC_CACHE_DIR=cache))
    err = r.stderr.decode()
    expect(r.returncode == 1 and "NoSuchOp" in err and "mlbc: error:" in err
           and os.listdir(cache) == [], "refused ONNX model: exit %d, %r, cache %s"
           % (r.returncode, first_line(err), os.listdir(cache) if os.path.isdir(cache) else "-"))
    r = run([ctx.tool("mlbc-serve"), "--model", inl])
    expect(r.returncode == 2, "usage: exit %d" % r.returncode)
    expect(not os.path.exists(base + ".in") and not os.path.exists(base + ".out"),
           "FIFOs left behind")


# ---- mlbc-serve over gRPC: the compiler's pipes local, the policy remote ------------------------

def listening(cmd, env=None):
    """Starts `mlbc-serve --listen` (cmd); returns (process, port) from its first line."""
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, env=env)
    line = p.stderr.readline().decode()
    m = re.search(r"listening on .*, port (\d+)", line)
    if not m:
        p.kill()
        p.wait()
        raise harness.Failure("mlbc-serve --listen: %r" % line)
    return p, int(m.group(1))


def stop_listening(p):
    """SIGTERMs a listening mlbc-serve; returns its exit status and stderr."""
    p.send_signal(signal.SIGTERM)
    try:
        err = p.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise harness.Failure("mlbc-serve --listen did not end on SIGTERM")
    return p.returncode, err.decode()


def remote_cmd(ctx, port, base, log=None, extra=(), serve=None):
    c = [serve or ctx.tool("mlbc-serve"), "--remote", "127.0.0.1:%d" % port, "--channel",
         base, "--timeout", "60000"] + list(extra)
    return c + (["--log", log] if log else [])


def t_serve_grpc(ctx):
    """clang-19 -> mlbc-serve --remote (pipes) -> gRPC -> mlbc-serve --listen (the policy):
    the same log and object as mlbc-serve --model; then mlbc_gym's model server."""
    gym = ctx.gym()
    so = ctx.policy_so("inliner.onnx", "policy")
    d = ctx.fresh("serve-grpc")
    base, src = os.path.join(d, "ch"), "tests/clang/calls.c"
    local_log, remote_log = os.path.join(d, "local.log"), os.path.join(d, "remote.log")
    local_obj, remote_obj = os.path.join(d, "l.o"), os.path.join(d, "r.o")
    check_run(serve_cmd(ctx, so, base, local_log) + ["--"] + compile_cmd(
        ctx, src, local_obj, inliner_flags(base)), "mlbc-serve --model")
    _, rows = read_decisions(gym, local_log, "inlining_decision")
    decisions = [x[3] for x in rows]

    srv, port = listening([ctx.tool("mlbc-serve"), "--model", so, "--listen", "127.0.0.1:0",
                           "--token", "s3cret", "-v"])
    try:
        check_run(remote_cmd(ctx, port, base, remote_log, ["--token", "s3cret"]) + ["--"] +
                  compile_cmd(ctx, src, remote_obj, inliner_flags(base)), "mlbc-serve --remote")
    finally:
        rc, err = stop_listening(srv)
    with open(local_log, "rb") as a, open(remote_log, "rb") as b:
        expect(a.read() == b.read(), "the log over gRPC differs from the local one")
    with open(local_obj, "rb") as a, open(remote_obj, "rb") as b:
        expect(a.read() == b.read(), "the object over gRPC differs from the local one")
    expect(rc == 128 + signal.SIGTERM and "%d call(s) answered" % len(decisions) in err,
           "model server: exit %d, %r" % (rc, err[-200:]))

    # mlbc_gym's model server, answering the decisions the local model made
    with gym.serve_model(lambda f, c, i: decisions[i], "127.0.0.1:0") as py:
        obj = os.path.join(d, "py.o")
        check_run(remote_cmd(ctx, py.port, base) + ["--"] + compile_cmd(
            ctx, src, obj, inliner_flags(base)), "mlbc-serve --remote (mlbc_gym)")
        calls = py.calls
    with open(local_obj, "rb") as a, open(obj, "rb") as b:
        expect(a.read() == b.read() and calls == len(decisions),
               "mlbc_gym's server: %d calls, object %s" % (calls, "differs"))
    return "%d observations over gRPC, both model servers" % len(decisions)


def t_serve_grpc_faults(ctx):
    """A wrong token, no server, a policy that raises or stalls: mlbc-serve --remote says
    why, stops the compiler (it would wait for advice forever) and ends in bounded time."""
    gym = ctx.gym()
    so = ctx.policy_so("inliner.onnx", "policy")
    d = ctx.fresh("serve-grpc-faults")
    base = os.path.join(d, "ch")

    def compile_remote(port, extra, words, what):
        t0 = time.time()
        r = run(remote_cmd(ctx, port, base, extra=extra) + ["--"] + compile_cmd(
            ctx, "tests/clang/calls.c", os.path.join(d, "o.o"), inliner_flags(base)))
        err = r.stderr.decode()
        expect(r.returncode == 1 and all(w in err for w in words),
               "%s: exit %d, %r" % (what, r.returncode, first_line(err)))
        expect(time.time() - t0 < 30, "%s took %.0f s" % (what, time.time() - t0))
        expect(not os.path.exists(base + ".in"), "%s: FIFOs left behind" % what)

    srv, port = listening([ctx.tool("mlbc-serve"), "--model", so, "--listen", "127.0.0.1:0",
                           "--token", "right", "-v"])
    try:
        compile_remote(port, ["--token", "wrong"], ["UNAUTHENTICATED", "stopping the command"],
                       "wrong token")
        compile_remote(port, [], ["UNAUTHENTICATED"], "no token")
    finally:
        _, err = stop_listening(srv)
    expect("0 call(s) answered" in err, "a refused call was answered: %r" % err[-200:])
    # nobody listens (the port was just freed): bounded retries, then the error
    compile_remote(port, ["--timeout", "2000"], ["no model server reachable", "4 attempt(s)"],
                   "absent server")

    def raises(f, c, i):
        if i == 3:
            raise ValueError("policy bug")
        return 0
    with gym.serve_model(raises, "127.0.0.1:0") as py:
        compile_remote(py.port, [], ["INTERNAL", "policy bug", "observation 3"], "raising policy")

    def stalls(f, c, i):
        time.sleep(3)
        return 0
    with gym.serve_model(stalls, "127.0.0.1:0") as py:
        compile_remote(py.port, ["--timeout", "500"], ["DEADLINE_EXCEEDED"], "stalled policy")
    # usage: one of --model and --remote; --listen needs no channel
    for args in (["--remote", "127.0.0.1:1", "--model", so, "--channel", base],
                 ["--model", so, "--listen", "127.0.0.1:0", "--channel", base]):
        r = run([ctx.tool("mlbc-serve")] + args)
        expect(r.returncode == 2, "%s: exit %d" % (" ".join(args[::2]), r.returncode))
    r = run([ctx.tool("mlbc-serve"), "--model", so, "--listen", "0.0.0.0:0"])
    expect(r.returncode == 1 and "not a loopback address" in r.stderr.decode(),
           "--listen 0.0.0.0 without --allow-remote: exit %d" % r.returncode)


def t_serve_misbehaving(ctx):
    """Compilers that break the protocol, die early or go silent: mlbc-serve ends in time,
    says why, stops the command and removes the FIFOs."""
    so = ctx.policy_so("inliner.onnx", "policy")
    d = ctx.fresh("serve-misbehaving")
    base = os.path.join(d, "ch")
    fake = [sys.executable, os.path.join(HERE, "clang", "fake_compiler.py")]
    cases = [  # mode, extra options, exit status, words in stderr
        ("ok", [], 0, ""),
        ("partial", [], 1, "truncated"),
        ("in-only", [], 0, ""),
        ("garbage", [], 1, "header"),
        ("silent", ["--timeout", "500"], 1, "500 ms"),
    ]
    problems = []
    for mode, opts, status, words in cases:
        t0 = time.time()
        r = run([ctx.tool("mlbc-serve"), "--model", so, "--channel", base] + opts + ["--"] +
                fake + [mode, base], timeout=60)
        took = time.time() - t0
        err = r.stderr.decode()
        if r.returncode != status or words not in err or took > 15:
            problems.append("%s: exit %d in %.1f s: %s" % (mode, r.returncode, took,
                                                          first_line(err)))
        if mode == "ok" and r.stdout.split() != [b"0", b"0", b"0"]:
            problems.append("ok: advice received %r" % r.stdout[:40])
        if os.path.exists(base + ".in") or os.path.exists(base + ".out"):
            problems.append("%s: FIFOs left behind" % mode)
    # SIGTERM: passed on to the command, FIFOs removed, 128+15
    p = subprocess.Popen([ctx.tool("mlbc-serve"), "--model", so, "--channel", base, "--",
                          "sleep", "30"], stderr=subprocess.PIPE)
    t0 = time.time()
    while not os.path.exists(base + ".out") and time.time() - t0 < 10:
        time.sleep(0.01)
    time.sleep(0.1)
    p.terminate()
    try:
        rc = p.wait(15)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    p.stderr.close()
    if rc != 143 or os.path.exists(base + ".in"):
        problems.append("SIGTERM: exit %d, FIFOs %s" % (rc, os.path.exists(base + ".in")))
    expect(not problems, "; ".join(problems))


def t_serve_standalone(onnx=False):
    """mlbc-serve without a command, against our C pipe runner as the compiler
    (mlbc-replay --channel): the decisions the runner gets are the policy's. With onnx,
    mlbc-serve gets models/inliner.onnx itself and compiles it into a fresh cache with the
    mlbc next to it."""
    def t(ctx):
        so = ctx.policy_so("inliner.onnx", "policy")
        log = t_serve_log(ctx)
        d = ctx.fresh("serve-standalone" + ("-onnx" if onnx else ""))
        base, out = os.path.join(d, "ch"), os.path.join(d, "again.log")
        model = os.path.join(ROOT, "models", "inliner.onnx") if onnx else so
        env = dict(os.environ, MLBC_CACHE_DIR=os.path.join(d, "cache"))
        env.pop("MLBC", None)
        srv = subprocess.Popen([ctx.tool("mlbc-serve"), "--model", model, "--channel", base,
                                "--sessions", "1", "--timeout", "30000", "--log", out],
                               stderr=subprocess.PIPE, env=env)
        try:
            t0 = time.time()
            while not os.path.exists(base + ".out") and time.time() - t0 < 30:
                time.sleep(0.01)
            r = run([ctx.tool("mlbc-replay"), "--channel", base, "--advice",
                     "inlining_decision", "--timeout", "30000", log], timeout=60)
            rc = srv.wait(30)
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
            err = srv.stderr.read().decode()
            srv.stderr.close()
        expect(r.returncode == 0, "mlbc-replay --channel: exit %d: %s" % (
            r.returncode, first_line(r.stderr)))
        expect(rc == 0, "mlbc-serve: exit %d: %s" % (rc, first_line(err)))
        want = check_run([ctx.tool("mlbc-replay"), "--model", so, log], "mlbc-replay").stdout
        expect(r.stdout == want, "decisions through mlbc-serve differ from the policy's")
        check_run([ctx.tool("mlbc-replay"), "--model", so, "--check", out],
                  "mlbc-replay --check")
        if onnx:
            entries = os.listdir(os.path.join(d, "cache"))
            expect(len(entries) == 1 and entries[0].startswith("inliner."),
                   "cache holds %s" % entries)
    return t


def t_replay_channel(ctx):
    """mlbc-replay asks our Python host through the pipe runner, as a compiler would."""
    gym = ctx.gym()
    log = t_serve_log(ctx)
    d = ctx.fresh("replay-channel")
    base = os.path.join(d, "ch")
    import threading
    box = {}

    def policy(f, c, i):
        return int(f["callee_basic_block_count"][0] <= 3)

    def host():
        try:
            box["res"] = gym.serve(base, policy, sessions=1, open_timeout=30, read_timeout=30)
        except Exception as e:   # reported below
            box["err"] = e
    th = threading.Thread(target=host, daemon=True)
    th.start()
    t0 = time.time()            # serve() creates BASE.in, then BASE.out
    while not os.path.exists(base + ".out") and time.time() - t0 < 10 and th.is_alive():
        time.sleep(0.01)
    r = run([ctx.tool("mlbc-replay"), "--channel", base, "--advice", "inlining_decision",
             "--timeout", "30000", log], timeout=90)
    th.join(60 if r.returncode == 0 else 0.1)   # the host gives up by itself (open_timeout)
    expect(r.returncode == 0, "mlbc-replay --channel: exit %d: %s"
           % (r.returncode, first_line(r.stderr)))
    expect("err" not in box, "host: %r" % box.get("err"))
    _, rows = read_decisions(gym, log, "inlining_decision")
    want = [policy(f, None, None) for _, _, f, _ in rows]
    got = [int(l.split()[-1]) for l in r.stdout.decode().splitlines()]
    expect(got == want, "decisions through the channel differ from the host's policy")


def t_serve_log(ctx):
    """A training log written by mlbc-serve (shared by several tests)."""
    def make():
        so = ctx.policy_so("inliner.onnx", "policy")
        d = ctx.path("serve-log")
        os.makedirs(d, exist_ok=True)
        base, log = os.path.join(d, "ch"), os.path.join(d, "serve.log")
        check_run(serve_cmd(ctx, so, base, log) + ["--"] + compile_cmd(
            ctx, "compiler/ir/util.c", os.path.join(d, "u.o"), inliner_flags(base)), "mlbc-serve")
        return log
    return ctx.fixture("serve-log", make)


def t_replay_relog(ctx):
    """mlbc-replay --log writes features + decision; both readers agree; --check agrees."""
    gym = ctx.gym()
    so = ctx.policy_so("inliner.onnx", "policy")
    log = t_serve_log(ctx)
    d = ctx.fresh("replay-relog")
    out = os.path.join(d, "relog.log")
    check_run([ctx.tool("mlbc-replay"), "--model", so, "--log", out, log], "mlbc-replay --log")
    with open(log, "rb") as a, open(out, "rb") as b:
        expect(a.read() == b.read(), "re-logging with the same policy changed the log")
    cd = check_run([ctx.c_tool("logdump"), out], "logdump").stdout.decode()
    expect(cd == python_dump(out, gym), "C and Python readers disagree on the re-logged file")


def t_captured_stream(ctx):
    """A regalloc stream captured from BASE.out (adjacent contexts): C reader == Python
    reader, and mlbc-replay evaluates it with the compiled eviction policy."""
    gym = ctx.gym()
    so = ctx.policy_so("regalloc_evict.onnx", "evict")
    d = ctx.fresh("captured")
    cap = os.path.join(d, "captured.out")
    stats = collections.Counter()
    res, _ = host_compile(ctx, d, evict_policy(stats), [], "compiler/front/text_print.c",
                          kind="evict", record=cap)
    dump = python_dump(cap, gym)
    ctx_lines = dump.splitlines()
    adjacent = any(a.startswith("context") and b.startswith("context")
                   for a, b in zip(ctx_lines, ctx_lines[1:]))
    expect(adjacent, "no adjacent contexts in the captured stream (test needs them)")
    cd = check_run([ctx.c_tool("logdump"), cap], "logdump").stdout.decode()
    expect(cd == dump, "C and Python readers disagree on a captured stream")
    rp = check_run([ctx.tool("mlbc-replay"), "--model", so, cap], "mlbc-replay")
    lines = rp.stdout.decode().splitlines()
    expect(len(lines) == res.observations, "%d decisions for %d observations"
           % (len(lines), res.observations))
    _, obs = gym.read_log(cap)
    for o, l in zip(obs, lines):
        k = int(l.split()[-1])
        expect(json.loads(l.rsplit(" ", 2)[0]) == o.context, "context column %r" % l)
        expect(o.features["mask"][k] == 1, "the policy picked a masked column %d" % k)
    return "%d observations, %d contexts" % (res.observations, sum(
        1 for l in ctx_lines if l.startswith("context")))


# ---- d. LLVM's llvm::Logger against our readers and logger ------------------------------------

SCENARIOS = ["types", "inliner", "stream", "evict"]
SIZES = {"float": 4, "double": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
         "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}


def reference_dump(data):
    """An independent minimal reader (this test's own), to check the scenario expectations
    against what llvm::Logger really wrote."""
    pos = 0

    def line():
        nonlocal pos
        e = data.index(b"\n", pos)
        s, pos = data[pos:e], e + 1
        return s

    def take(n):
        nonlocal pos
        b = data[pos:pos + n]
        expect(len(b) == n, "reference reader: truncated")
        pos += n
        return b

    def count(s):
        c = 1
        for x in s["shape"]:
            c *= x
        return c * SIZES[s["type"]]
    h = json.loads(line())
    out = []
    for k, key in (("feature", "features"), ("score", "score"), ("advice", "advice")):
        for s in (h[key] if key == "features" else [h[key]] if key in h else []):
            out.append("%s %s %s [%s]" % (k, s["name"], s["type"], ",".join(map(str, s["shape"]))))
    while pos < len(data):
        r = json.loads(line())
        if "context" in r:
            out.append("context " + (r["context"].encode().hex() or "-"))
        elif "observation" in r:
            ts = [take(count(f)).hex() for f in h["features"]]
            expect(take(1) == b"\n", "reference reader: no newline after payload")
            out.append("observation %d %s" % (r["observation"], " ".join(ts)))
        else:
            t = take(count(h["score"])).hex()
            expect(take(1) == b"\n", "reference reader: no newline after outcome")
            out.append("outcome %d %s" % (r["outcome"], t))
    return "\n".join(out) + "\n"


def llvm_logs(ctx):
    def make():
        expect(shutil.which(LLVM_CONFIG), "%s not found" % LLVM_CONFIG)
        d = ctx.path("llvm-logs")
        os.makedirs(d, exist_ok=True)
        cxx = check_run([LLVM_CONFIG, "--cxxflags"], "llvm-config").stdout.decode().split()
        ld = check_run([LLVM_CONFIG, "--ldflags"], "llvm-config").stdout.decode().split()
        exe = os.path.join(d, "llvm_logger")
        check_run([CLANGXX] + cxx + ["-I", os.path.join(HERE, "clang"),
                                     os.path.join(HERE, "clang", "llvm_logger.cpp"), "-o", exe]
                  + ld + ["-lLLVM-19"], "clang++-19 llvm_logger.cpp")
        check_run([exe, d], "llvm_logger")
        return d
    return ctx.fixture("llvm-logs", make)


def our_logs(ctx):
    def make():
        d = ctx.path("our-logs")
        os.makedirs(d, exist_ok=True)
        check_run([ctx.c_tool("logwrite"), d], "logwrite")
        return d
    return ctx.fixture("our-logs", make)


def t_scenario(name):
    def t(ctx):
        gym = ctx.gym()
        d = llvm_logs(ctx)
        llvm_log = os.path.join(d, name + ".log")
        with open(os.path.join(d, name + ".expect")) as f:
            want = f.read()
        with open(llvm_log, "rb") as f:
            llvm_bytes = f.read()
        expect(reference_dump(llvm_bytes) == want,
               "scenario model disagrees with llvm::Logger (test bug)")
        problems = []
        cd = run([ctx.c_tool("logdump"), llvm_log])
        if cd.returncode or cd.stdout.decode() != want:
            problems.append("C reader on LLVM's log: %s" % (
                first_line(cd.stderr) or first_diff(want, cd.stdout.decode())))
        try:
            pd = python_dump(llvm_log, gym)
            if pd != want:
                problems.append("Python reader on LLVM's log: " + first_diff(want, pd))
        except Exception as e:
            problems.append("Python reader on LLVM's log raised %s: %s" % (type(e).__name__, e))
        ours = os.path.join(our_logs(ctx), name + ".log")
        with open(ours, "rb") as f:
            our_bytes = f.read()
        if our_bytes != llvm_bytes:
            problems.append("our C logger's bytes differ from llvm::Logger's at byte %d"
                            % first_byte_diff(our_bytes, llvm_bytes))
        cd = run([ctx.c_tool("logdump"), ours])
        if cd.returncode or cd.stdout.decode() != want:
            problems.append("C reader on our log: %s" % (
                first_line(cd.stderr) or first_diff(want, cd.stdout.decode())))
        try:
            pd = python_dump(ours, gym)
            if pd != want:
                problems.append("Python reader on our log: " + first_diff(want, pd))
        except Exception as e:
            problems.append("Python reader on our log raised %s: %s" % (type(e).__name__, e))
        try:
            pw = python_write(gym, want)
            if pw != llvm_bytes:
                problems.append("Python LogWriter's bytes differ from llvm::Logger's at byte %d"
                                % first_byte_diff(pw, llvm_bytes))
        except Exception as e:
            problems.append("Python LogWriter raised %s: %s" % (type(e).__name__, e))
        expect(not problems, "; ".join(problems))
        return "%d bytes; LLVM == C logger == Python writer; C == Python reader" % len(llvm_bytes)
    return t


def python_write(gym, dump):
    """Writes the log described by a dump with our Python LogWriter."""
    import io
    feats, score, advice, buf, w = [], None, None, io.BytesIO(), None
    for line in dump.splitlines():
        p = line.split(" ")
        if p[0] in ("feature", "score", "advice"):
            shape = [int(x) for x in p[3].strip("[]").split(",") if x]
            s = gym.TensorSpec(p[1], p[2], shape)
            if p[0] == "feature":
                feats.append(s)
            elif p[0] == "score":
                score = s
            else:
                advice = s
            continue
        if w is None:
            w = gym.LogWriter(buf, feats, score, advice)
        if p[0] == "context":
            w.context(b"".fromhex("" if p[1] == "-" else p[1]).decode())
        elif p[0] == "observation":
            w.observation([bytes.fromhex(x) for x in p[2:]])
        elif p[0] == "outcome":
            w.outcome(bytes.fromhex(p[2]))
    if w is None:
        w = gym.LogWriter(buf, feats, score, advice)
    w.flush()
    return buf.getvalue()


def first_diff(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return "line %d: want %r, got %r" % (i + 1, x[:70], y[:70])
    return "want %d lines, got %d" % (len(al), len(bl))


def first_byte_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def t_replay_llvm_log(ctx):
    """mlbc-replay on the inliner log written by llvm::Logger: the same decisions as the
    generated code called directly."""
    gym = ctx.gym()
    so = ctx.policy_so("inliner.onnx", "policy")
    log = os.path.join(llvm_logs(ctx), "inliner.log")
    rp = check_run([ctx.tool("mlbc-replay"), "--model", so, log], "mlbc-replay")
    got = [int(l.split()[-1]) for l in rp.stdout.decode().splitlines()]
    _, obs = gym.read_log(log)
    feed = " ".join(INLINER_FEATURES) + "\n" + "".join(
        " ".join(str(o.features[n][0]) for n in INLINER_FEATURES) + "\n" for o in obs)
    dr = check_run([ctx.direct_driver()], "inliner_direct", input=feed.encode())
    want = [int(x) for x in dr.stdout.split()]
    expect(len(got) == len(obs) and got == want,
           "mlbc-replay %r vs direct %r" % (got[:8], want[:8]))
    # --check against the log's own (synthetic) decisions must notice differences
    r = run([ctx.tool("mlbc-replay"), "--model", so, "--check", log])
    recorded = [o.features["inlining_decision"][0] for o in obs]
    expect((r.returncode == 0) == (recorded == want), "--check exit %d" % r.returncode)


# ---- main ------------------------------------------------------------------------------------

def tests():
    t = [("inliner: header as in llvm-mlgo.md §7 (+ include-default)", t_inliner_header)]
    for name, src in SOURCES:
        t.append(("inliner: never inline keeps every call (%s)" % name, t_never_inline(src)))
    for name, src in SOURCES:
        t.append(("inliner: replying the default gives the -O2 object (%s)" % name,
                  t_default_identical(src)))
    t += [
        ("inliner: small-callee policy, program output unchanged", t_small_callees_program),
        ("inliner: -O0 opens no channel, host does not hang", t_no_session_O0),
        ("inliner: two TUs, two sessions", t_two_tus),
        ("regalloc eviction (calls.c, program run)", t_evict("tests/clang/calls.c", True)),
        ("regalloc eviction (text_print.c)", t_evict("compiler/front/text_print.c", False)),
        ("regalloc priority: float advice", t_priority),
        ("regalloc eviction + priority on two channels", t_evict_and_priority),
        ("mlbc-serve: inliner policy steers clang; log == replay == generated code",
         t_serve_inliner),
        ("mlbc-serve and mlbc-replay under ASan+UBSan", t_serve_sanitized),
        ("mlbc-serve: three TUs in one command, one log", t_serve_sessions),
        ("mlbc-serve: eviction policy, program output unchanged", t_serve_evict),
        ("mlbc-serve: errors are clear, nothing hangs", t_serve_errors),
        ("mlbc-serve --remote: clang-19's pipes local, the policy over gRPC", t_serve_grpc),
        ("mlbc-serve --remote: bad token, no server, raising or stalled policy",
         t_serve_grpc_faults),
        ("mlbc-serve: misbehaving compilers and SIGTERM end cleanly", t_serve_misbehaving),
        ("mlbc-serve standalone, our pipe runner as the compiler", t_serve_standalone()),
        ("mlbc-serve --model inliner.onnx (compiled at start), standalone",
         t_serve_standalone(onnx=True)),
        ("mlbc-replay --log reproduces mlbc-serve's log", t_replay_relog),
        ("captured regalloc stream: C reader == Python reader, replayed", t_captured_stream),
        ("mlbc-replay --channel asks a Python host", t_replay_channel),
    ]
    for s in SCENARIOS:
        t.append(("llvm::Logger log '%s': readers and writers agree" % s, t_scenario(s)))
    t.append(("mlbc-replay on llvm::Logger's inliner log == generated code", t_replay_llvm_log))
    return t


def missing():
    if not os.path.exists(CLANG) or not shutil.which(OBJDUMP):
        return ("clang-19 or llvm-objdump-19 not installed: skipping (apt-get install clang-19 "
                "llvm-19 llvm-19-dev)")
    return None


if __name__ == "__main__":
    sys.exit(harness.main(tests, Ctx, "mlbc-clang-", missing))
