"""Development mode: the C pipe runner (runtime/pipe.c) against the Python host (mlbc_gym), and
against hosts that misbehave; the Python training-log reader and writer against the C logger
and reader. The C programs in tests/pipe/ are built twice: against BUILD/libmlbc_rt.a, and
from the runtime sources with -fsanitize=address,undefined (leak detection on).

    python3 tests/test_pipe.py --build build        # ends with "N passed, M failed"
"""
import argparse
import concurrent.futures
import io
import os
import random
import unittest.mock
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))

import mlbc_gym  # noqa: E402
import mlbctest  # noqa: E402
from mlbc_gym import LogReader, LogWriter, ProtocolError, TensorSpec  # noqa: E402

TIMEOUT_MS = 1000           # the client's pipe timeout in the misbehaving-host tests
MARGIN_MS = 700             # what a failing operation may take beyond the timeout
SAN_RE = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:")

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + detail if detail else ""))
    sys.stdout.flush()
    return ok


# ---- building the C programs -----------------------------------------------------------------

def build(build_dir):
    out = os.path.join(build_dir, "test_pipe")
    os.makedirs(out, exist_ok=True)
    bins = {}
    for prog in ("pipe_client", "pipe_logtool"):
        src = os.path.join(HERE, "pipe", prog + ".c")
        for kind, path, cmd in mlbctest.runtime_program_builds(src, os.path.join(out, prog),
                                                               build_dir):
            p = subprocess.run(cmd, capture_output=True, text=True)
            if check("build %s (%s)" % (prog, kind), p.returncode == 0,
                     (p.stderr or p.stdout).strip()[:600]):
                bins[(prog, kind)] = path
    return bins


client_env = mlbctest.san_env


def san_clean(kind, stderr):
    return kind != "asan" or not SAN_RE.search(stderr)


# ---- the good host: mlbc_gym.serve driving the C client ------------------------------------------

ADVICE = {"int64": TensorSpec("advice", "int64_t", [1]),
          "float": TensorSpec("advice", "float", [1]),
          "int64x3": TensorSpec("advice", "int64_t", [3])}


def expected(advice, k):
    v = 1012 * k + 35                     # see policy() below
    if advice == "float":
        return [2 * k + 2.75]
    if advice == "int64x3":
        return [v, v + 1, v + 2]
    return [v]


def big_values(k, n):
    """pipe_client's feature e in its evaluation k (--big n)."""
    return [float((k * 131 + j) % 977) for j in range(n)]


def make_policy(advice, calls, as_numpy=False, shaped=True):
    def policy(f, ctx, idx):
        if as_numpy:
            # the JSON framing carries no shapes or types: flat arrays there
            assert not shaped or (f["b"].shape == (2, 3) and f["d"].dtype.name == "uint8"), f
            assert shaped or f["b"].shape == (6,), f
            f = {k: v.reshape(-1).tolist() for k, v in f.items()}
        calls.append((ctx, idx, f["a"][0]))
        if "e" in f and list(f["e"]) != big_values(f["a"][0], len(f["e"])):
            calls.append("e of evaluation %d is not its own" % f["a"][0])
        a, b, c, d = f["a"][0], f["b"], f["c"][0], f["d"]
        v = a * 1000 + int(sum(b) * 2) + c + sum(d)
        if advice == "float":
            return a + 0.25 + b[5]
        if advice == "int64x3":
            return [v, v + 1, v + 2]
        return v
    return policy


def parse_client(text):
    adv, sessions, other = {}, 0, []
    for line in text.splitlines():
        w = line.split()
        if w and w[0] == "advice":
            adv.setdefault(sessions, []).append((int(w[1]), [float(x) for x in w[2:]]))
        elif w and w[0] == "session":
            sessions += 1
        else:
            other.append(line)
    return adv, sessions, other


def good_run(tmp, bins, kind, framing, advice, ops, sessions=2, as_numpy=False, record=None,
             extra=()):
    base = os.path.join(tmp, "ch")
    calls = []
    cmd = [bins[("pipe_client", kind)], base, "--framing", framing, "--timeout", "10000",
           "--advice", advice, "--sessions", str(sessions)] + list(extra) + list(ops)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.monotonic()
        res = mlbc_gym.serve(base, make_policy(advice, calls, as_numpy, framing != "json"),
                             command=cmd,
                             framing=framing, advice=ADVICE[advice], numpy=as_numpy,
                             record=record, command_timeout=60,
                             popen_kwargs={"stdout": out, "stderr": err,
                                           "env": client_env(kind)})
        took = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        return res, out.read(), err.read(), calls, took


def test_good_host(bins):
    ops = ["obs=2", "ctx=f1", "ctx=f2", "obs=1", "ctx=f1", "obs=1"]
    for kind in ("plain", "asan"):
        if ("pipe_client", kind) not in bins:
            continue
        for framing in ("llvm", "bitstream", "json", "protobuf"):
            for advice in ("int64", "float", "int64x3"):
                name = "host %s framing, %s advice, 2 sessions, adjacent contexts (%s)" % (
                    framing, advice, kind)
                with tempfile.TemporaryDirectory() as tmp:
                    res, out, err, calls, took = good_run(tmp, bins, kind, framing, advice, ops)
                adv, nsess, other = parse_client(out)
                want = [(k, expected(advice, k)) for k in range(4)]
                problems = []
                if res.returncode != 0 or "done" not in other:
                    problems.append("client exit %s, output %r" % (res.returncode, other[-3:]))
                if nsess != 2 or any(adv.get(s) != want for s in (1, 2)):
                    problems.append("advice %r, want %r" % (adv, want))
                if res.errors:
                    problems.append("host errors %r" % res.errors)
                if sum(s.observations for s in res.sessions) != 8:
                    problems.append("host counted %d observations" % res.observations)
                if framing in ("llvm", "protobuf"):
                    # LLVM numbering: per context name; "" gets 0,1; f2 0; f1 0 (f1 had
                    # no observation when f2 started, so its first one is 0). The protobuf
                    # framing names the context in each observation, numbered the same way.
                    want_calls = [("", 0, 0), ("", 1, 1), ("f2", 0, 2), ("f1", 0, 3)] * 2
                    if calls != want_calls:
                        problems.append("policy calls %r" % calls)
                    if framing == "llvm" and (len(res.sessions) != 2 or
                                              res.sessions[0].contexts != ["", "f1", "f2", "f1"]):
                        problems.append("sessions %r contexts %r" % (
                            res.sessions, [s.contexts for s in res.sessions]))
                else:
                    if [c[0] for c in calls] != [None] * 8:
                        problems.append("contexts in a Bridge framing: %r" % calls)
                if not san_clean(kind, err):
                    problems.append("sanitizer: " + err[-800:])
                check(name, not problems, "; ".join(problems))

    # a context given as option, a context name seen again continues its numbering
    if ("pipe_client", "plain") in bins:
        with tempfile.TemporaryDirectory() as tmp:
            res, out, err, calls, _ = good_run(
                tmp, bins, "plain", "llvm", "int64",
                ["obs=1", "ctx=g", "obs=1", "ctx=main", "obs=1"], sessions=1,
                extra=["--context", "main"])
        check("llvm framing: first context from the options; numbering continues per name",
              res.ok and calls == [("main", 0, 0), ("g", 0, 1), ("main", 1, 2)],
              "%r %r %r" % (res, calls, out))

        if mlbc_gym.have_numpy():
            for framing in ("llvm", "bitstream", "json", "protobuf"):
                with tempfile.TemporaryDirectory() as tmp:
                    res, out, err, calls, _ = good_run(tmp, bins, "plain", framing, "int64",
                                                       ["obs=3"], sessions=1, as_numpy=True)
                adv, _, _ = parse_client(out)
                check("host hands numpy arrays to the policy (%s framing)" % framing,
                      res.ok and adv.get(1) == [(k, expected("int64", k)) for k in range(3)],
                      "%r %r" % (res, out[-300:]))

        # the recorded stream (record=) is a log LogReader reads back: 2 headers, adjacent
        # contexts, the payload bytes including newlines
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "stream.log")
            res, out, err, calls, _ = good_run(tmp, bins, "plain", "llvm", "float",
                                               ["obs=1", "ctx=x", "ctx=y", "obs=2"],
                                               record=rec)
            with open(rec, "rb") as f:
                original = f.read()
            r = LogReader(io.BytesIO(original))
            recs = list(r.records())
            again = io.BytesIO()
            w = LogWriter(again, r.features, advice=r.advice)
            for x in recs:
                if x.kind == "header":
                    w = LogWriter(again, x.features_spec, advice=x.advice_spec)
                elif x.kind == "context":
                    w.context(x.context)
                else:
                    w.observation(x.raw)
            check("the C runner's stream is what LogWriter (and so LLVM) writes, byte for byte",
                  again.getvalue() == original, "%d vs %d bytes" % (
                      len(again.getvalue()), len(original)))
            kinds = [x.kind for x in recs]
            obs = [x for x in recs if x.kind == "observation"]
            check("recorded interactive stream reads back (2 sessions, adjacent contexts)",
                  res.ok and r.advice == ADVICE["float"] and kinds.count("header") == 1 and
                  kinds.count("context") == 6 and len(obs) == 6 and
                  obs[1].context == "y" and obs[1].features["d"] == [10, 10, 1, 0] and
                  obs[2].id == 1,
                  "%r %r" % (kinds, obs))


def private_file(path, data=b""):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, data)
    os.close(fd)


def contents(path):
    """The file's bytes, None when it is gone."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def channel_files(tmp):
    """BASE.in a regular file holding the three int64 answers in advance, BASE.out an empty
    one; both this user's, mode 0600 (what --files accepts)."""
    base = os.path.join(tmp, "ch")
    private_file(base + ".in", b"".join(struct.pack("=q", 7 * k) for k in range(3)))
    private_file(base + ".out")
    return base


def test_lent_observations(bins):
    """Observations of 16 KB and more are lent to the FIFO (vmsplice), not copied: the host
    must see each evaluation's own values although the client rewrites the same buffers for
    the next one. Where BASE.out is a regular file (allowed with --files) the runner writes
    instead."""
    ops = ["obs=2", "ctx=f1", "obs=2"]
    want = [(k, expected("int64", k)) for k in range(4)]
    for kind in ("plain", "asan"):
        for framing in ("llvm", "protobuf"):
            with tempfile.TemporaryDirectory() as tmp:
                res, out, err, calls, _ = good_run(tmp, bins, kind, framing, "int64", ops,
                                                   as_numpy=True, extra=["--big", "20000"])
            adv, nsess, _ = parse_client(out)
            bad = [c for c in calls if isinstance(c, str)]
            check("80 KB observations, each seen with its own values (%s framing, %s)"
                  % (framing, kind),
                  res.ok and nsess == 2 and all(adv.get(s) == want for s in (1, 2)) and
                  len(calls) == 8 and san_clean(kind, err),
                  "%r %r %s %s" % (res, bad or calls[:2], out[-300:], err[-600:]))
        with tempfile.TemporaryDirectory() as tmp:
            base = channel_files(tmp)
            p = subprocess.run([bins[("pipe_client", kind)], base, "--timeout", "2000",
                                "--big", "20000", "--files", "obs=3"], capture_output=True,
                               text=True,
                               timeout=60, env=client_env(kind))
            with open(base + ".out", "rb") as f:
                recs = [x for x in LogReader(f).records() if x.kind == "observation"]
            check("a regular file as BASE.out gets the 80 KB observations written (%s)" % kind,
                  p.returncode == 0 and [x.id for x in recs] == [0, 1, 2] and
                  all(x.features["e"] == big_values(x.id, 20000) for x in recs) and
                  "advice 2 14" in p.stdout and san_clean(kind, p.stderr),
                  "status %s: %s %s" % (p.returncode, p.stdout[-300:], p.stderr[-600:]))


# ---- misbehaving hosts ---------------------------------------------------------------------------

# (name, framing, mode, extra client args, allowed exit codes, error regex); the client runs
# "obs=3" unless the extra args end with operations of their own
BAD = [
    ("host never opens the FIFOs", "llvm", "never_open", [], {2},
     r"open-error .*no host opened .*\.out for reading within 1000 ms"),
    ("FIFOs do not exist", "llvm", None, [], {2}, r"open-error .*does not exist"),
    ("host dies before the header", "llvm", "die_before_header", [], {2, 3},
     r"closed .*\.(out|in) before its first answer.*no host reopened it within 1000 ms"),
    ("host dies after the header", "llvm", "die_after_header", [], {2, 3},
     r"-error .*closed .*\.(out|in) before its first answer.*no host reopened it"),
    ("host dies after the header", "bitstream", "die_after_header", [], {3},
     r"eval-error .*closed .*\.(out|in) before its first answer.*no host reopened it"),
    ("host dies after the header", "json", "die_after_header", [], {3},
     r"eval-error .*closed .*\.(out|in) before its first answer.*no host reopened it"),
    ("host dies in the middle of a reply", "llvm", "die_mid_reply", [], {3},
     r"eval-error .*end of file\) after 4 of the 8 bytes"),
    ("host dies in the middle of a reply", "bitstream", "die_mid_reply", [], {3},
     r"eval-error .*end of file\) after 2 of the 8 bytes"),
    ("host stalls (no reply)", "llvm", "stall", [], {3},
     r"eval-error .*no advice from the host within 1000 ms \(0 of 8"),
    ("host stalls (no reply)", "bitstream", "stall", [], {3},
     r"eval-error .*no reply length from the host within 1000 ms"),
    ("host stalls (no reply)", "json", "stall", [], {3},
     r"eval-error .*within 1000 ms"),
    # 1.6 MB: larger than the 1 MB the runner asks its FIFO to hold (runtime/pipe.c fit_pipe)
    ("host never reads (observation larger than the pipe)", "llvm", "never_read",
     ["--big", "400000"], {3}, r"eval-error .*did not read an observation within 1000 ms"),
    # 800 KB fits there whole: written at once, the runner waits for advice instead
    ("host never reads (observation fits the enlarged FIFO)", "llvm", "never_read",
     ["--big", "200000"], {3}, r"eval-error .*no advice from the host within 1000 ms"),
    ("short reply", "llvm", "short", [], {3}, r"eval-error .*within 1000 ms \(4 of 8 bytes"),
    ("short reply", "bitstream", "short", [], {3}, r"eval-error .*\(2 of 8 bytes"),
    ("long reply", "llvm", "long", [], {3},
     r"eval-error .*sent more than the 8 bytes of advice \(desynchronised"),
    ("long reply", "bitstream", "long", [], {3}, r"eval-error .*sent more than the \d+ bytes of the reply"),
    ("long reply", "json", "long", [], {3}, r"eval-error .*sent more than the \d+ bytes of the reply"),
    ("surplus bytes arriving late", "llvm", "long_late", ["obs=1", "sleep=600", "obs=1"], {3},
     r"eval-error .*more than the 8-byte advice before this observation"),
    ("host closes the advice pipe early", "llvm", "close_in_early", [], {3},
     r"eval-error .*closed .*\.in before its first answer"),
    ("host closes the observation pipe early", "llvm", "close_out_early", [], {2, 3},
     r"the host closed .*\.out before its first answer"),
    ("host closes the advice pipe after answering", "llvm", "close_in_later", [], {3},
     r"eval-error .*closed .*\.in \(end of file\) after 0 of the 8"),
    ("host closes the observation pipe after answering", "llvm", "close_out_later", [], {3},
     r"eval-error .*the host closed .*\.out"),
    ("huge length prefix", "bitstream", "huge_length", [], {3},
     r"eval-error .*1099511627776-byte reply; refused"),
    ("huge length prefix", "json", "huge_length", [], {3}, r"eval-error .*refused"),
    ("zero length prefix", "json", "zero_length", [], {3}, r"eval-error .*0-byte reply; refused"),
    ("garbage reply", "bitstream", "garbage", [], {3},
     r"eval-error .*3-byte reply, the advice has 8 bytes"),
    ("garbage reply", "json", "garbage", [], {3}, r"eval-error .*reply is not JSON"),
    ("host dies after the header", "protobuf", "die_after_header", [], {3},
     r"eval-error .*closed .*\.(out|in) before its first answer.*no host reopened it"),
    ("host dies in the middle of a reply", "protobuf", "die_mid_reply", [], {3},
     r"eval-error .*end of file\) after 2 of the 8 bytes"),
    ("host stalls (no reply)", "protobuf", "stall", [], {3}, r"eval-error .*within 1000 ms"),
    ("long reply", "protobuf", "long", [], {3}, r"eval-error .*sent more than the \d+ bytes of the reply"),
    ("huge length prefix", "protobuf", "huge_length", [], {3}, r"eval-error .*refused"),
    ("garbage reply", "protobuf", "garbage", [], {3},
     r"eval-error .*not an mlbc.Advice message \(3 bytes\)"),
    ("protobuf reply of another type", "protobuf", "proto_type", [], {3},
     r"element type 1, the advice spec 7"),
    ("protobuf reply of another size", "protobuf", "proto_size", [], {3},
     r"advice tensor has 4 bytes, the advice 8"),
    ("protobuf reply of another shape", "protobuf", "proto_shape", [], {3},
     r"shape does not hold the 1 element"),
    ("protobuf reply without a tensor", "protobuf", "proto_no_tensor", [], {3},
     r"Advice message has no advice tensor"),
    ("JSON reply without \"out\"", "json", "json_no_out", [], {3}, r"no \"out\" member"),
    ("JSON reply with 2 values for 1", "json", "json_count", [], {3},
     r"has 2 value\(s\), the advice has 1"),
    ("JSON reply with a string", "json", "json_string", [], {3}, r"must be numbers"),
    ("JSON reply out of range", "json", "json_range", [], {3}, r"non-integral or huge"),
    ("JSON reply with trailing garbage", "json", "json_trailing", [], {3}, r"not JSON"),
]


def run_bad(bins, kind, framing, mode, extra):
    ops = [] if any(a.startswith(("obs=", "ctx=", "sleep=")) for a in extra) else ["obs=3"]
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "ch")
        host = None
        if mode is not None:
            mlbc_gym.make_fifo(base + ".in")
            mlbc_gym.make_fifo(base + ".out")
            host = subprocess.Popen([sys.executable, os.path.join(HERE, "pipe", "bad_host.py"),
                                     base, framing, mode], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
        cmd = [bins[("pipe_client", kind)], base, "--framing", framing, "--timeout",
               str(TIMEOUT_MS)] + list(extra) + list(ops)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=client_env(kind),
                               timeout=3 * TIMEOUT_MS / 1000 + 20)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = "hang", e.stdout or "", e.stderr or ""
        took = (time.monotonic() - t0) * 1000
        host_err = ""
        if host is not None:
            host.kill()
            host_err = host.communicate()[1]
        return rc, out if isinstance(out, str) else out.decode(), \
            err if isinstance(err, str) else err.decode(), took, host_err


def test_bad_hosts(bins):
    """The cases three at a time: each mostly waits out the client's timeout."""
    for kind in ("plain", "asan"):
        if ("pipe_client", kind) not in bins:
            continue
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            runs = pool.map(lambda case: run_bad(bins, kind, *case[1:4]), BAD)
        for (name, framing, mode, extra, rcs, pattern), run in zip(BAD, runs):
            rc, out, err, took, host_err = run
            problems = []
            if rc not in rcs:
                problems.append("exit %r, expected %s" % (rc, sorted(rcs)))
            line = next((l for l in out.splitlines() if "error" in l.split(" ", 1)[0]), "")
            if not re.search(pattern, out):
                problems.append("output %r does not match %r" % (out.strip()[-400:], pattern))
            m = re.match(r"\S+ (\d+) ", line)
            if m and int(m.group(1)) > TIMEOUT_MS + MARGIN_MS:
                problems.append("the failing call took %s ms" % m.group(1))
            if took > 3 * TIMEOUT_MS + 3000:
                problems.append("the client took %.0f ms" % took)
            if rc == 3:
                m = re.search(r"after-failure (\d+) (\w+)", out)
                if not m or m.group(2) != "NULL" or int(m.group(1)) > 50:
                    problems.append("evaluate after the failure: %r" % (m and m.group(0)))
            if "signals ok" not in out:
                problems.append("SIGPIPE left pending, blocked or changed")
            if "Traceback" in host_err:
                problems.append("bad host crashed: " + host_err[-300:])
            if not san_clean(kind, err):
                problems.append("sanitizer: " + err[-800:])
            check("%s, %s framing: clear error in bounded time (%s)" % (name, framing, kind),
                  not problems, "; ".join(problems))

        # MLCompilerBridge's Python host packs ints as 4 bytes: accepted and widened
        rc, out, err, took, _ = run_bad(bins, kind, "bitstream", "bits_int32", [])
        adv, _, _ = parse_client(out)
        check("bitstream: 4-byte integer replies are widened to int64 (%s)" % kind,
              rc == 0 and [v for _, v in adv.get(1, [])] == [[-5], [-6], [-7]] and
              san_clean(kind, err), "%r %r %r" % (rc, out, err[-500:]))


# ---- the Python host against misbehaving compilers -------------------------------------------------

def fake_compiler(base, script):
    """A Python 'compiler' run as a command: opens as LLVM does and runs script(fin, fout)."""
    code = ("import os,sys,struct,time\n"
            "fin=os.open(%r,os.O_RDONLY)\nfout=os.open(%r,os.O_WRONLY)\n" % (
                base + ".in", base + ".out") + script)
    return [sys.executable, "-c", code]


HEADER = (b'{"features":[{"name":"x","type":"int64_t","port":0,"shape":[2]}],'
          b'"advice":{"name":"y","type":"float","port":0,"shape":[1]}}\n')


def test_stream_lying_length():
    """A Bridge length prefix is a claim: reading the message it announces must cost what
    arrives, not the claim (gym-json, 2026-11-27: a 10-byte input with a 256 MB prefix took
    0.18 s and 256 MB, and over 1 s on a loaded core)."""
    import tracemalloc
    from mlbc_gym import host
    r, w = os.pipe()
    try:
        os.set_blocking(r, False)
        os.write(w, b"Oops")
        os.close(w)
        w = None
        stream = host._open_stream(r, lambda: False, timeout=5)
        tracemalloc.start()
        data = stream.read(host.MAX_MESSAGE)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        check("a %d-byte message announced, 4 bytes sent: they are read, at most 8 MB "
              "allocated" % host.MAX_MESSAGE, data == b"Oops" and peak < 8 << 20,
              "%r, peak %d bytes" % (data[:16], peak))
    finally:
        os.close(r)
        if w is not None:
            os.close(w)


def test_host_robustness():
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "ch")
        t0 = time.monotonic()
        res = mlbc_gym.serve(base, lambda f, c, i: 0, command=["true"], command_timeout=30)
        check("host watchdog: a command that never opens the pipes (like -O0) ends the host",
              res.ok and not res.sessions and time.monotonic() - t0 < 5, repr(res))

        t0 = time.monotonic()
        res = mlbc_gym.serve(base, lambda f, c, i: 0, open_timeout=0.5)
        took = time.monotonic() - t0
        check("host without a command gives up after open_timeout",
              not res.sessions and 0.4 < took < 3, "%r %.2f s" % (res, took))

        # a float advice answered to a hand-written compiler; the reply is 4 native bytes
        script = ("os.write(fout, %r)\n"
                  "os.write(fout, b'{\"context\":\"a\"}\\n{\"context\":\"b\"}\\n')\n"
                  "for k in range(3):\n"
                  "    os.write(fout, b'{\"observation\":%%d}\\n' %% k + struct.pack('=2q', k, 10) + b'\\n')\n"
                  "    r = os.read(fin, 4)\n"
                  "    assert struct.unpack('=f', r)[0] == k * 0.5 + 10, r\n"
                  "os.close(fout); os.close(fin)\n" % HEADER)
        res = mlbc_gym.serve(base, lambda f, c, i: f["x"][0] * 0.5 + f["x"][1],
                             command=fake_compiler(base, script), command_timeout=30)
        check("host answers float advice in native bytes (adjacent contexts)",
              res.ok and res.observations == 3 and res.sessions[0].contexts == ["a", "b"],
              repr(res))

        # numpy features: the host reuses an observation's arrays only when the policy kept
        # nothing of them; kept arrays, views and dicts keep their own values
        if mlbc_gym.have_numpy():
            script = ("os.write(fout, %r)\n"
                      "for k in range(6):\n"
                      "    os.write(fout, b'{\"observation\":%%d}\\n' %% k + struct.pack('=2q', k, -k) + b'\\n')\n"
                      "    assert len(os.read(fin, 4)) == 4\n"
                      "os.close(fout); os.close(fin)\n" % HEADER)
            kept, seen, ids = [], [], []

            def keeping(f, c, i):
                seen.append(f["x"].tolist())
                ids.append(id(f["x"]))
                if i == 1:
                    kept.append(f["x"])             # the array itself
                elif i == 3:
                    kept.append(f["x"][1:])         # a view of it
                elif i == 4:
                    kept.append(f)                  # the dict
                return 0
            res = mlbc_gym.serve(base, keeping, numpy=True,
                                 command=fake_compiler(base, script), command_timeout=30)
            got = [kept[0].tolist(), kept[1].tolist(), kept[2]["x"].tolist()]
            check("numpy features a policy kept are never overwritten by later observations",
                  res.ok and seen == [[k, -k] for k in range(6)] and
                  got == [[1, -1], [-3], [4, -4]], "%r %r %r" % (res, seen, got))
            check("numpy feature arrays are reused when the policy kept nothing of them",
                  ids[0] == ids[1] and ids[2] == ids[3] and len(set(ids)) == 4, repr(ids))

        # malformed header / truncated observation: the session records an error, no hang
        for what, body in (("malformed header", b"{not json}\n"),
                           ("truncated observation", HEADER + b'{"observation":0}\n\1\2\3')):
            script = "os.write(fout, %r)\nos.close(fout)\ntime.sleep(0.2)\n" % body
            t0 = time.monotonic()
            res = mlbc_gym.serve(base, lambda f, c, i: 0, command=fake_compiler(base, script),
                                 command_timeout=30)
            check("host reports a %s and goes on" % what,
                  len(res.errors) == 1 and time.monotonic() - t0 < 5, repr(res))

        # a compiler that opens BASE.in, then dies before opening BASE.out
        script = "os._exit(0)\n"
        cmd = [sys.executable, "-c", "import os\nfin=os.open(%r,os.O_RDONLY)\nos._exit(0)\n"
               % (base + ".in")]
        t0 = time.monotonic()
        res = mlbc_gym.serve(base, lambda f, c, i: 0, command=cmd, command_timeout=30)
        check("host survives a compiler that dies between the two opens",
              res.ok and time.monotonic() - t0 < 5, repr(res))

        # a policy that raises: serve() re-raises it and the compiler is killed, not left
        # spinning on a closed advice pipe
        script = ("os.write(fout, %r)\n"
                  "os.write(fout, b'{\"observation\":0}\\n' + bytes(16) + b'\\n')\n"
                  "time.sleep(60)\n" % HEADER)

        def bad_policy(f, c, i):
            raise ValueError("policy bug")
        t0 = time.monotonic()
        try:
            mlbc_gym.serve(base, bad_policy, command=fake_compiler(base, script),
                           command_timeout=60)
            raised = None
        except ValueError as e:
            raised = e
        check("a policy exception is re-raised and the compiler killed",
              raised is not None and time.monotonic() - t0 < 10, repr(raised))

        # a policy answering the wrong number of values: error, no desynchronisation
        script = ("os.write(fout, %r)\n"
                  "os.write(fout, b'{\"observation\":0}\\n' + bytes(16) + b'\\n')\n"
                  "time.sleep(60)\n" % HEADER)
        try:
            mlbc_gym.serve(base, lambda f, c, i: [1, 2], command=fake_compiler(base, script),
                           command_timeout=60)
            raised = None
        except ValueError as e:
            raised = e
        check("advice of the wrong size is refused by the host",
              raised is not None and "2 value(s)" in str(raised), repr(raised))

        # the same FIFOs served from a separate thread, the compiler started independently
        box = {}

        def serve_two():
            box["res"] = mlbc_gym.serve(base, lambda f, c, i: 1, sessions=2, open_timeout=30)
        t = threading.Thread(target=serve_two)
        t.start()
        for _ in range(2):
            subprocess.run(fake_compiler(base, "os.write(fout, %r)\n"
                                         "os.write(fout, b'{\"observation\":0}\\n' + bytes(16) + b'\\n')\n"
                                         "assert os.read(fin, 4) == struct.pack('=f', 1.0)\n"
                                         "os.close(fin); os.close(fout)\n" % HEADER),
                           timeout=30)
        t.join(30)
        res = box.get("res")
        check("host without a command serves a given number of sessions",
              res is not None and len(res.sessions) == 2 and res.observations == 2, repr(res))


# ---- training logs ------------------------------------------------------------------------------------

# The same log as pipe_logtool writes with the C logger.
LOG_FEATURES = [TensorSpec("a", "int64_t", [1]), TensorSpec("b", "float", [2, 3]),
                TensorSpec("d", "uint8_t", [4])]
LOG_SCORE = TensorSpec("reward", "float", [1])


def write_reference_log(f):
    w = LogWriter(f, LOG_FEATURES, score=LOG_SCORE)
    w.context("f0")
    for k in range(5):
        if k == 2:
            w.context("empty")
            w.context("f1")
        w.observation({"a": 100 + k, "b": [[k + 0.25 * j for j in range(3)],
                                           [k + 0.25 * j for j in range(3, 6)]],
                       "d": [10, 10, k, 255]})
        if k != 3:
            w.outcome(0.5 * k)
    w.flush()


def check_reference_log(obs):
    want_ctx = ["f0", "f0", "f1", "f1", "f1"]
    want_id = [0, 1, 0, 1, 2]
    ok = len(obs) == 5
    for k, o in enumerate(obs if ok else []):
        ok &= (o.context == want_ctx[k] and o.id == want_id[k] and
               o.features["a"] == [100 + k] and
               o.features["b"] == [k + 0.25 * j for j in range(6)] and
               o.features["d"] == [10, 10, k, 255] and
               o.score == (None if k == 3 else [0.5 * k]))
    return ok


def test_logs(bins):
    buf = io.BytesIO()
    write_reference_log(buf)
    data = buf.getvalue()
    r, obs = mlbc_gym.read_log(io.BytesIO(data))
    check("python log writer -> reader round trip (adjacent contexts, missing outcome)",
          r.features == LOG_FEATURES and r.score == LOG_SCORE and r.advice is None and
          check_reference_log(obs), repr(obs))

    recs = list(LogReader(io.BytesIO(data)).records())
    check("log records in order",
          [x.kind for x in recs] == ["context", "observation", "outcome", "observation",
                                     "outcome", "context", "context", "observation", "outcome",
                                     "observation", "observation", "outcome"],
          repr(recs))
    check("log header is LLVM's compact JSON",
          data.startswith(b'{"features":[{"name":"a","type":"int64_t","port":0,"shape":[1]},'
                          b'{"name":"b","type":"float","port":0,"shape":[2,3]},') and
          b'],"score":{"name":"reward","type":"float","port":0,"shape":[1]}}\n' in data,
          data[:300])

    # every type, numpy and back, an advice header, a context named with quotes
    specs = [TensorSpec("t_" + t, t, [2]) for t in mlbc_gym.TYPES]
    buf = io.BytesIO()
    w = LogWriter(buf, specs, advice=TensorSpec("adv", "float", [1]))
    w.context('he said "hi"\n')
    vals = [[1, -2] if not t.startswith("u") else [1, 200] for t in mlbc_gym.TYPES]
    vals = [[1.5, -2.25] if t in ("float", "double") else v for t, v in zip(mlbc_gym.TYPES, vals)]
    w.observation(vals)
    r = LogReader(io.BytesIO(buf.getvalue()))
    o = list(r.observations())
    check("every element type round-trips; context names are JSON-escaped",
          r.advice == TensorSpec("adv", "float", [1]) and len(o) == 1 and
          o[0].context == 'he said "hi"\n' and
          [o[0].features[s.name] for s in specs] == vals, repr(o))
    if mlbc_gym.have_numpy():
        r = LogReader(io.BytesIO(buf.getvalue()), as_numpy=True)
        o = list(r.observations())
        check("log reader gives numpy arrays on request",
              str(o[0].features["t_int16_t"].dtype) == "int16" and
              o[0].features["t_double"].tolist() == [1.5, -2.25], repr(o))

    # malformed logs
    bad = {
        "empty": b"",
        "truncated payload": data[:data.index(b'{"observation":0}') + 30],
        "outcome for another observation": data.replace(b'{"outcome":1}', b'{"outcome":7}'),
        "outcome without score": data.split(b"\n", 1)[0].replace(
            b',"score":{"name":"reward","type":"float","port":0,"shape":[1]}', b"") + b"\n" +
        b'{"outcome":0}\n\0\0\0\0\n',
        "unknown record": data.split(b"\n", 1)[0] + b'\n{"what":1}\n',
        "missing newline after payload": data.replace(b"\x0a\x0a\x00\xff\n", b"\x0a\x0a\x00\xffX", 1),
    }
    for what, blob in bad.items():
        try:
            r = LogReader(io.BytesIO(blob))
            list(r.records())
            err = None
        except (ProtocolError, EOFError) as e:
            err = e
        check("log reader refuses: " + what, err is not None, "accepted")

    for kind in ("plain", "asan"):
        tool = bins.get(("pipe_logtool", kind))
        if tool is None:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            clog = os.path.join(tmp, "c.log")
            p = subprocess.run([tool, "write", clog], capture_output=True, text=True,
                               env=client_env(kind))
            ok = p.returncode == 0 and san_clean(kind, p.stderr)
            if ok:
                r, obs = mlbc_gym.read_log(clog)
                ok = r.features == LOG_FEATURES and r.score == LOG_SCORE and \
                    check_reference_log(obs)
            check("python reader reads a log written by the C logger (%s)" % kind, ok,
                  p.stderr[-500:])
            if p.returncode == 0:
                with open(clog, "rb") as f:
                    cbytes = f.read()
                check("python writer and C logger write identical bytes (%s)" % kind,
                      cbytes == data, "C %d bytes, python %d bytes" % (len(cbytes), len(data)))
            plog = os.path.join(tmp, "py.log")
            with open(plog, "wb") as f:
                write_reference_log(f)
            p = subprocess.run([tool, "read", plog], capture_output=True, text=True,
                               env=client_env(kind))
            lines = p.stdout.splitlines()
            check("C reader reads a log written by the python writer (%s)" % kind,
                  p.returncode == 0 and san_clean(kind, p.stderr) and
                  lines[0] == "header 3 reward -" and
                  lines[1:4] == ["context f0", "observation 0 100 0 0.25 0.5 0.75 1 1.25 10 10 0 255",
                                 "outcome 0 0"] and
                  "context empty" in lines and lines[-1] == "outcome 2 2" and
                  "observation 1 103 3 3.25 3.5 3.75 4 4.25 10 10 3 255" in lines,
                  p.stdout[-600:] + p.stderr[-600:])


# ---- the host's observation fast path against the general reader ----------------------------------

def fuzz_stream():
    """A valid interactive stream: several feature types and shapes, adjacent contexts."""
    specs = [TensorSpec("a", "int64_t", [1]), TensorSpec("b", "float", [2, 3]),
             TensorSpec("c", "uint8_t", [3])]
    buf = io.BytesIO()
    w = LogWriter(buf, specs, advice=TensorSpec("adv", "int64_t", [1]))
    for k in range(6):
        if k % 3 == 0:
            w.context("f%d" % k)
            w.context("g%d" % k)
        w.observation([k, [[k + 0.5] * 3] * 2, [10, 0x0A, 255]])
    return buf.getvalue()


def host_verdict(blob, as_numpy):
    """(observations answered, error) of the host's LLVM loop over blob, run in process."""
    ch = mlbc_gym.Channel("/nonexistent", lambda f, c, i: 0, numpy=as_numpy)
    sess = ch._begin()
    with open(os.devnull, "wb") as sink:
        try:
            ch._serve_llvm(io.BufferedReader(io.BytesIO(blob)), sink.fileno(), lambda: False)
        except (mlbc_gym.host.HostError, ProtocolError) as e:
            return sess.observations, str(e)
    return sess.observations, None


def reader_verdict(blob):
    """The same through LogReader.records() with every record line parsed by json.loads
    (the fast observation parse turned off): observations, error."""
    n = 0
    try:
        with unittest.mock.patch.object(mlbc_gym.log, "observation_number", lambda line: None):
            for rec in LogReader(io.BytesIO(blob)).records():
                if rec.kind == "observation":
                    n += 1
                elif rec.kind not in ("context", "header"):
                    return n, "unexpected " + rec.kind
    except EOFError:
        return 0, None
    except ProtocolError as e:
        return n, str(e)
    return n, None


def start_soak(build_dir, sessions=100):
    """tests/pipe/soak.py: sessions in a row with faults injected (make check-full: 1000).
    The runner's RSS and both processes' descriptors must not move at all; the host's RSS
    swings by a few MB with the 256 KB messages of the compiler-killed sessions (see soak.py).
    It runs while the other tests do (it mostly waits); finish_soak() checks it."""
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "pipe", "soak.py"), "--build",
                          build_dir, "--sessions", str(sessions)], stdout=out, stderr=err)
    return p, out, err


def finish_soak(soak):
    p, outf, errf = soak
    late = ""
    try:
        p.wait(timeout=600)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        late = "\n(killed after 600 s)"
    outf.seek(0)
    errf.seek(0)
    out, err = outf.read(), errf.read() + late
    first = (out.splitlines() or [""])[0]
    check("pipe soak: %s" % first[:200], p.returncode == 0, out[-2000:] + err[-1000:])


def test_host_fuzz():
    """Every prefix and 600 mutations (bytes replaced, inserted, deleted) of a stream: the host's fast path answers exactly
    the observations the general reader finds and fails exactly where it fails, with a
    ProtocolError or HostError, never another exception."""
    good = fuzz_stream()
    rng = random.Random(7)
    blobs = [good[:k] for k in range(len(good) + 1)]
    for line in (b'{"observation":01}', b'{"observation": 1}', b'{"observation":1 }',
                 b'{"observation":-1}', b'{"observation":1.0}', b'{"observation":"1"}',
                 b'{"observation":1,"x":2}', b'{"observation":true}',
                 b'{"observation":123456789012345678901234567890}', b'{ "observation":1}'):
        blobs.append(good.replace(b'{"observation":1}', line, 1))
    for _ in range(600):
        b = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            i, c = rng.randrange(len(b)), rng.choice(b'\n}0 "' + bytes([rng.randrange(256)]))
            op = rng.randrange(3)
            if op == 0:
                b[i] = c                # replace
            elif op == 1:
                b.insert(i, c)          # insert
            else:
                del b[i]                # delete
        blobs.append(bytes(b))
    for as_numpy in (False, True) if mlbc_gym.have_numpy() else (False,):
        odd = []
        for blob in blobs:
            try:
                h = host_verdict(blob, as_numpy)
            except Exception as e:  # noqa: BLE001 - any other exception is the bug we look for
                odd.append("%r: %s: %s" % (blob[:60], type(e).__name__, e))
                continue
            r = reader_verdict(blob)
            if h[0] != r[0] or (h[1] is None) != (r[1] is None):
                odd.append("%r: host %r, reader %r" % (blob[:60], h, r))
        check("host fast path == general reader on %d streams (numpy=%s)"
              % (len(blobs), as_numpy), not odd, "; ".join(odd[:3]))


# ---- a real clang-19 (smoke tests; tests/test_clang.py has the full suite) ------------------------

def test_clang():
    clang = shutil.which("clang-19")
    if not clang:
        print("skip clang-19 smoke tests: clang-19 not installed")
        return
    src = os.path.join(ROOT, "tests", "pipe", "pipe_client.c")
    inc = ["-I" + os.path.join(ROOT, "runtime")]
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "ch")
        res = mlbc_gym.serve(base, lambda f, c, i: 0, command=[
            clang, "-O2", "-c", src] + inc + ["-o", os.path.join(tmp, "a.o"), "-mllvm",
                                              "-enable-ml-inliner=release", "-mllvm",
                                              "-inliner-interactive-channel-base=" + base],
            command_timeout=120)
        s = res.sessions[0] if res.sessions else None
        check("clang-19 inliner served ('never inline')",
              res.ok and len(res.sessions) == 1 and s.observations > 0 and
              len(s.features) == 38 and s.advice.name == "inlining_decision", repr(res))

        # what clang-19 sends, re-encoded by LogWriter, gives the same bytes
        rec = os.path.join(tmp, "clang.stream")
        res = mlbc_gym.serve(base, lambda f, c, i: 1, record=rec, command=[
            clang, "-O2", "-c", src] + inc + ["-o", os.path.join(tmp, "a.o"), "-mllvm",
                                              "-enable-ml-inliner=release", "-mllvm",
                                              "-inliner-interactive-channel-base=" + base],
            command_timeout=120)
        with open(rec, "rb") as f:
            original = f.read()
        r = LogReader(io.BytesIO(original))
        again = io.BytesIO()
        w = LogWriter(again, r.features, advice=r.advice)
        for x in r.records():
            if x.kind == "context":
                w.context(x.context)
            elif x.kind == "observation":
                w.observation(x.raw)
        check("a clang-19 stream re-encoded by LogWriter is byte-identical",
              res.ok and len(original) > 3000 and again.getvalue() == original,
              "%d vs %d bytes" % (len(original), len(again.getvalue())))

        ev, pr = base + "_ev", base + "_pr"
        res = mlbc_gym.serve_channels(
            [mlbc_gym.Channel(ev, lambda f, c, i: 32),
             mlbc_gym.Channel(pr, lambda f, c, i: float(f["li_size"][0]))],
            command=[clang, "-O2", "-c", src] + inc + [
                "-o", os.path.join(tmp, "b.o"), "-mllvm", "-regalloc-enable-advisor=release",
                "-mllvm", "-regalloc-evict-interactive-channel-base=" + ev,
                "-mllvm", "-regalloc-enable-priority-advisor=release",
                "-mllvm", "-regalloc-priority-interactive-channel-base=" + pr],
            command_timeout=120)
        by = {s.channel: s for s in res.sessions}
        check("clang-19 regalloc eviction and priority served together",
              res.ok and ev in by and pr in by and by[ev].observations > 0 and
              by[pr].observations > 0 and by[pr].advice.type == "float" and
              len(by[ev].features) == 21, repr(res))

        t0 = time.monotonic()
        res = mlbc_gym.serve(base, lambda f, c, i: 0, command=[
            clang, "-O0", "-c", src] + inc + ["-o", os.path.join(tmp, "c.o"), "-mllvm",
                                              "-enable-ml-inliner=release", "-mllvm",
                                              "-inliner-interactive-channel-base=" + base],
            command_timeout=120)
        check("clang-19 -O0 never opens the channel; the host does not hang",
              res.ok and not res.sessions and time.monotonic() - t0 < 30, repr(res))


# ---- FIFOs that others could use -------------------------------------------------------------

NOBODY = 65534


def planted(tmp, mode, owner=None):
    """BASE.in and BASE.out as someone else might leave them in a shared folder."""
    base = os.path.join(tmp, "ch")
    for end in (".in", ".out"):
        os.mkfifo(base + end, 0o600)
        os.chmod(base + end, mode)
        if owner is not None:
            os.chown(base + end, owner, -1)
    return base


def test_foreign_fifos(bins):
    """The C runner and mlbc_gym refuse a FIFO that another user owns or may open, saying
    why, before a byte crosses it; FIFOs they make themselves are 0600."""
    cases = [("of mode 0644", 0o644, None, "mode 0644 lets other users open it"),
             ("of mode 0666", 0o666, None, "mode 0666 lets other users open it")]
    if os.geteuid() == 0:
        cases.append(("owned by uid %d" % NOBODY, 0o600, NOBODY,
                      "belongs to uid %d" % NOBODY))
    for what, mode, owner, want in cases:
        with tempfile.TemporaryDirectory() as tmp:
            base = planted(tmp, mode, owner)
            p = subprocess.run([bins[("pipe_client", "plain")], base, "--timeout", "2000"],
                               capture_output=True, text=True, timeout=30)
            check("C runner refuses a FIFO %s" % what,
                  p.returncode == 2 and "open-error" in p.stdout and want in p.stdout,
                  "status %s: %s" % (p.returncode, (p.stdout + p.stderr).strip()[:300]))
            try:
                mlbc_gym.make_fifo(base + ".in")
                ok, msg = False, "kept"
            except mlbc_gym.HostError as e:
                ok, msg = want in str(e), str(e)
            check("mlbc_gym refuses a FIFO %s" % what, ok, msg)
    with tempfile.TemporaryDirectory() as tmp:
        mlbc_gym.make_fifo(os.path.join(tmp, "new.in"))
        m = stat.S_IMODE(os.stat(os.path.join(tmp, "new.in")).st_mode)
        check("mlbc_gym makes its FIFOs 0600", m == 0o600, "%04o" % m)
        base = planted(tmp, 0o644)
        fd = os.open(base + ".in", os.O_RDONLY | os.O_NONBLOCK)
        try:
            mlbc_gym.host.check_private(fd, base + ".in")
            ok, msg = False, "accepted"
        except mlbc_gym.HostError as e:
            ok, msg = "mode 0644" in str(e), str(e)
        os.close(fd)
        check("mlbc_gym checks a FIFO on its descriptor after opening", ok, msg)


def test_planted_files(bins):
    """What is not a FIFO is refused unless regular files are asked for (--files), and then
    only this user's, mode 0600, with one link: advice from a planted file is never
    believed, and BASE.out is never followed through a link or truncated when it could be
    someone's file."""
    precious = b"someone's data\n"
    root = os.geteuid() == 0

    def refused(what, base, args, want, victim=None):
        p = subprocess.run([bins[("pipe_client", "plain")], base, "--timeout", "1000"] + args +
                           ["obs=3"], capture_output=True, text=True, timeout=30)
        kept = victim is None or contents(victim) == precious
        check("C runner refuses %s" % what,
              p.returncode == 2 and "open-error" in p.stdout and want in p.stdout and kept,
              "status %s, victim kept: %s: %s" % (p.returncode, kept,
                                                  (p.stdout + p.stderr).strip()[:300]))

    with tempfile.TemporaryDirectory() as tmp:
        base = channel_files(tmp)
        os.chmod(base + ".in", 0o644)
        if root:
            os.chown(base + ".in", NOBODY, NOBODY)
        refused("a regular file planted at BASE.in (FIFOs only, by default)", base, [],
                "it is a regular file, not a FIFO")
    for what, mode, owner, want in [("of mode 0644", 0o644, None, "mode 0644"),
                                    ("of uid %d" % NOBODY, 0o600, NOBODY,
                                     "belongs to uid %d" % NOBODY)][:2 if root else 1]:
        with tempfile.TemporaryDirectory() as tmp:
            base = channel_files(tmp)
            os.chmod(base + ".in", mode)
            if owner is not None:
                os.chown(base + ".in", owner, owner)
            refused("with --files a BASE.in %s" % what, base, ["--files"], want)
    for what, plant, want in [("a symbolic link", os.symlink, "it is a symbolic link"),
                              ("a hard link", os.link, "has 2 links")]:
        with tempfile.TemporaryDirectory() as tmp:
            base = channel_files(tmp)
            victim = os.path.join(tmp, "victim")
            private_file(victim, precious)
            os.unlink(base + ".out")
            plant(victim, base + ".out")
            refused("with --files %s at BASE.out, the file it names untouched" % what, base,
                    ["--files"], want, victim)


def serve_run(build_dir, base, env, *extra):
    """mlbc-serve for the tiny selector model (compiled into a cache in env) on channel base:
    a Popen."""
    model = os.path.join(ROOT, "tests", "runtime", "selector.onnxtxt")
    return subprocess.Popen([os.path.join(build_dir, "mlbc-serve"), "--model", model,
                             "--channel", base] + list(extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_hosts_keep_files(build_dir):
    """mlbc-serve and mlbc_gym refuse a file at a FIFO's path and leave it as it is; at exit
    mlbc-serve removes only the FIFOs it made, and only while they are still there."""
    precious = b"someone's data\n"
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MLBC_CACHE_DIR=os.path.join(tmp, "cache"))
        for end in (".out", ".in"):
            base = os.path.join(tmp, "ch" + end[1:])
            private_file(base + end, precious)
            p = serve_run(build_dir, base, env, "--", "true")
            _, err = p.communicate(timeout=120)
            other = base + (".in" if end == ".out" else ".out")
            check("mlbc-serve refuses a regular file at BASE%s and keeps it" % end,
                  p.returncode == 1 and "is not a FIFO" in err and
                  contents(base + end) == precious and not os.path.exists(other),
                  "status %s: %s" % (p.returncode, err.strip()[:300]))
        base = os.path.join(tmp, "swap")
        p = serve_run(build_dir, base, env, "--timeout", "3000")
        t0 = time.monotonic()
        while not os.path.exists(base + ".out") and time.monotonic() - t0 < 60:
            time.sleep(0.01)
        os.unlink(base + ".out")                # someone's file where our FIFO was
        private_file(base + ".out", precious)
        _, err = p.communicate(timeout=120)
        check("mlbc-serve at exit removes its FIFO BASE.in, not a file put at BASE.out since",
              p.returncode == 1 and not os.path.exists(base + ".in") and
              contents(base + ".out") == precious,
              "status %s, %s: %s" % (p.returncode, os.listdir(tmp), err.strip()[:300]))
        path = os.path.join(tmp, "gym.out")
        private_file(path, precious)
        try:
            mlbc_gym.make_fifo(path)
            ok, msg = False, "accepted"
        except mlbc_gym.HostError as e:
            ok, msg = "is a regular file" in str(e) and "left as it is" in str(e), str(e)
        check("mlbc_gym refuses a regular file at a FIFO's path and keeps it",
              ok and contents(path) == precious, msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    build_dir = os.path.abspath(os.path.join(ROOT, args.build)) \
        if not os.path.isabs(args.build) else args.build
    if not os.path.exists(os.path.join(build_dir, "libmlbc_rt.a")):
        check("runtime library built", False, "no %s/libmlbc_rt.a (run make)" % build_dir)
    else:
        bins = build(build_dir)
        soak = start_soak(build_dir)
        test_good_host(bins)
        test_lent_observations(bins)
        test_bad_hosts(bins)
        test_foreign_fifos(bins)
        test_planted_files(bins)
        test_hosts_keep_files(build_dir)
        test_stream_lying_length()
        test_host_robustness()
        test_host_fuzz()
        test_logs(bins)
        test_clang()
        finish_soak(soak)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
