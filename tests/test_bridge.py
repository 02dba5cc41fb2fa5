"""mlbc against the real ML-Compiler-Bridge (IITH-Compilers/ML-Compiler-Bridge, snapshot of
2024-03-14), offline: what each side of the Bridge's own pipe test (its MLBridgeTest C++
compiler side, its mlbridge-test.py Python model side) wrote, message by message, recorded
once from the real Bridge built here (tests/bridge/fixtures/, README there), replayed against
mlbc's side and compared byte for byte.

  * mlbc as the compiler side: tests/bridge/bridge_client.c (the Bridge test's ten
    evaluations through mlbc_runner_evaluate_bridge) against a replay of the Bridge's
    Python host: FIFOs made as it makes them (0666 less the umask), opened in its order; its
    recorded replies sent; mlbc's requests must be the Bridge's C++ bytes.
  * mlbc_gym as the model side (advice=None: replies typed as the Bridge's host types them)
    against a replay of the Bridge's C++ compiler, which opens BASE.in, and BASE.out only
    later: its recorded requests sent; mlbc_gym's replies must be the Bridge's Python bytes,
    and BASE.in must never see an end of file during the session.
  * Both of mlbc's sides together, hostile replies to the learned-count evaluation, the
    FIFO modes the Bridge framings accept, and the Bridge's ONNX test model.

    python3 tests/test_bridge.py --build build        # ends with "N passed, M failed"
"""
import argparse
import os
import select
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

sys.path.insert(0, os.path.join(HERE, "bridge"))
from answers import answers as bridge_answers  # noqa: E402

FIXTURES = os.path.join(HERE, "bridge", "fixtures")
LABELS = ("int", "long", "float", "double", "char", "bool", "vec_int", "vec_long",
          "vec_float", "vec_double")
FORMATS = {"bytes": ("pipe-bytes", "bitstream"), "json": ("pipe-json", "json")}
T = mlbctest.Tally()


def fixture(fmt, i, direction):
    with open(os.path.join(FIXTURES, FORMATS[fmt][0], "%02d_%s.%s.bin" % (
            i + 1, LABELS[i], direction)), "rb") as f:
        return f.read()


def build(build_dir):
    out = os.path.join(build_dir, "test_bridge")
    os.makedirs(out, exist_ok=True)
    bins = {}
    for kind, path, cmd in mlbctest.runtime_program_builds(
            os.path.join(HERE, "bridge", "bridge_client.c"), os.path.join(out, "bridge_client"),
            build_dir):
        p = subprocess.run(cmd, capture_output=True, text=True)
        T.result(p.returncode == 0, "build bridge_client (%s)" % kind,
                 (p.stderr or p.stdout).strip()[:600])
        if p.returncode == 0:
            bins[kind] = path
    return bins


client_env = mlbctest.san_env


def read_message(fd, deadline):
    """One length-prefixed message from fd (blocking descriptor), as its raw bytes, prefix
    included; b"" at end of file."""
    data = b""
    want = 8
    while len(data) < want:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError("%d of %d bytes" % (len(data), want))
        chunk = os.read(fd, want - len(data))
        if not chunk:
            return data
        data += chunk
        if len(data) == 8:
            want = 8 + int.from_bytes(data, "little")
    return data


# ---- mlbc as the compiler side, the Bridge's Python host replayed -------------------------------

def python_host(base, fmt, replies, got, umask=0o022):
    """The Bridge's PipeCompilerInterface as the recording shows it: removes and makes both
    FIFOs with mkfifo(0o666) under the umask, opens BASE.in to write (blocking until the
    compiler opens it), then BASE.out to read; per message, reads the compiler's request
    into got and writes replies[i] (raw bytes, prefix included). A None reply ends it."""
    old = os.umask(umask)
    try:
        for end in (".in", ".out"):
            if os.path.exists(base + end):
                os.remove(base + end)
            os.mkfifo(base + end, 0o666)
    finally:
        os.umask(old)

    def serve():
        fd_in = os.open(base + ".in", os.O_WRONLY)
        fd_out = os.open(base + ".out", os.O_RDONLY)
        try:
            for reply in replies:
                msg = read_message(fd_out, time.monotonic() + 10)
                if not msg:
                    break
                got.append(msg)
                if reply is None:
                    break
                os.write(fd_in, reply)
        except (OSError, TimeoutError) as e:
            got.append(e)
        finally:
            os.close(fd_in)
            os.close(fd_out)
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def test_compiler_side(bins, work):
    """bridge_client against the recorded Bridge host: every request the Bridge's bytes."""
    for fmt in FORMATS:
        for kind, exe in bins.items():
            base = os.path.join(work, "c_%s_%s" % (fmt, kind))
            got = []
            t = python_host(base, fmt, [fixture(fmt, i, "reply") for i in range(10)], got)
            p = subprocess.run([exe, base, fmt, "--timeout", "5000"], capture_output=True,
                               text=True, timeout=60, env=client_env(kind))
            t.join(10)
            where = "%s, %s" % (fmt, kind)
            T.result(p.returncode == 0 and p.stdout.count(" reply ") == 10 and
                     "misuse refused" in p.stdout,
                     "mlbc's runner as the Bridge test's compiler, its host replayed: 10 "
                     "replies as the Bridge's test expects, a bad call refused first (%s)"
                     % where,
                     (p.stdout + p.stderr)[-600:])
            same = [i for i in range(10) if i < len(got) and got[i] == fixture(fmt, i, "request")]
            bad = [LABELS[i] for i in range(10) if i not in same]
            T.result(not bad, "mlbc's requests are the Bridge's C++ bytes, message by message "
                     "(%s)" % where, "differ: %s; first: %r" % (
                         bad, got[LABELS.index(bad[0])] if bad and LABELS.index(bad[0]) <
                         len(got) else None) if bad else "")
            if kind == "asan":
                T.result(p.returncode not in (86, 87), "no sanitizer finding (%s)" % where,
                         p.stderr[-600:])


def bad_replies(fmt):
    """(what, message index, a reply, the error expected) for the learned-count evaluation."""
    def frame(body):
        return len(body).to_bytes(8, "little") + body
    if fmt == "bytes":
        return [("a vector reply of 6 bytes for floats", 8, frame(b"\0" * 6),
                 "elements of 4 bytes"),
                ("17 values for at most 16", 6, frame(b"\1\0\0\0" * 17),
                 "68-byte reply; refused"),
                ("a bool of 2 (4-byte int)", 5, frame(b"\2\0\0\0"), "out of range"),
                ("an empty reply", 0, frame(b""), "0-byte reply")]
    return [("17 values for at most 16", 6, frame(b'{"out": [%s]}' % b",".join([b"1"] * 17)),
             "1 to 16"),
            ("a bool of 2", 5, frame(b'{"out": 2}'), "out of range"),
            ("a string", 0, frame(b'{"out": "x"}'), "must be numbers"),
            ("a char of 300", 4, frame(b'{"out": 300}'), "out of range")]


def test_hostile_replies(bins, work):
    """Replies the learned count must refuse: the runner fails with a message, no crash."""
    exe = bins.get("asan") or bins.get("plain")
    for fmt in FORMATS:
        for what, at, reply, expect in bad_replies(fmt):
            replies = [fixture(fmt, i, "reply") for i in range(at)] + [reply, None]
            base = os.path.join(work, "h_%s_%d" % (fmt, at))
            got = []
            t = python_host(base, fmt, replies, got)
            p = subprocess.run([exe, base, fmt, "--timeout", "3000"], capture_output=True,
                               text=True, timeout=60, env=client_env("asan"))
            t.join(10)
            T.result(p.returncode == 3 and expect in p.stdout and
                     "%s error" % LABELS[at] in p.stdout,
                     "refused: %s (%s)" % (what, fmt), (p.stdout + p.stderr)[-400:])


def test_fifo_modes(bins, work):
    """The Bridge framings take the Bridge's FIFOs (0666 less a umask of 022), not ones group
    or others may write; mlbc's own framing keeps mode 0600."""
    exe = bins.get("plain")
    for umask, ok in ((0o022, True), (0o002, False), (0o020, False), (0o000, False)):
        base = os.path.join(work, "m_%03o" % umask)
        got = []
        t = python_host(base, "json", [fixture("json", i, "reply") for i in range(10)], got,
                        umask)
        p = subprocess.run([exe, base, "json", "--timeout", "1500"], capture_output=True,
                           text=True, timeout=60)
        mode = 0o666 & ~umask
        if ok:
            T.result(p.returncode == 0, "FIFOs of mode %04o accepted (Bridge framing)" % mode,
                     p.stdout[-300:])
        else:
            T.result(p.returncode == 2 and "lets other users write" in p.stdout,
                     "FIFOs of mode %04o refused: others may write (Bridge framing)" % mode,
                     p.stdout[-300:])
            # the host blocks in open() until someone opens the other end: release it
            for end in (".in", ".out"):
                try:
                    fd = os.open(base + end, os.O_RDWR | os.O_NONBLOCK)
                    os.close(fd)
                except OSError:
                    pass
        t.join(5)
    # the LLVM framing (mlbc's own hosts) still refuses 0644
    base = os.path.join(work, "m_llvm")
    old = os.umask(0o022)
    for end in (".in", ".out"):
        os.mkfifo(base + end, 0o666)
    os.umask(old)
    p = subprocess.run([exe, base, "llvm", "--timeout", "500"], capture_output=True, text=True,
                       timeout=30)
    T.result(p.returncode == 2 and "lets other users open it" in p.stdout,
             "FIFOs of mode 0644 refused in the LLVM framing", p.stdout[-300:])


# ---- mlbc_gym as the model side, the Bridge's C++ compiler replayed --------------------------------

def cpp_compiler(base, fmt, report, gap=0.3):
    """The Bridge's PipeModelRunner as the recording shows it: opens BASE.in to read, then
    after gap seconds BASE.out to write; sends each recorded request and reads the reply.
    report: the replies, and whether BASE.in ever reached an end of file (POLLHUP: every
    writer gone) before the session was over."""
    deadline = time.monotonic() + 10
    while not (os.path.exists(base + ".in") and os.path.exists(base + ".out")):
        if time.monotonic() > deadline:
            report["error"] = "no FIFOs"
            return
        time.sleep(0.01)
    fd_in = os.open(base + ".in", os.O_RDONLY | os.O_NONBLOCK)
    poller = select.poll()
    poller.register(fd_in, select.POLLHUP)
    # a FIFO never written shows no POLLHUP; one whose every writer has gone does
    t_end = time.monotonic() + gap
    hup = False
    while time.monotonic() < t_end:
        for _, ev in poller.poll(10):
            hup |= bool(ev & select.POLLHUP)
    fd_out = os.open(base + ".out", os.O_WRONLY)
    os.set_blocking(fd_in, True)
    replies = []
    try:
        for i in range(10):
            os.write(fd_out, fixture(fmt, i, "request"))
            replies.append(read_message(fd_in, time.monotonic() + 10))
    except (OSError, TimeoutError) as e:
        report["error"] = repr(e)
    report.update(replies=replies, hup=hup)
    os.close(fd_out)
    os.close(fd_in)


def test_model_side(work):
    """mlbc_gym (advice=None) against the recorded Bridge compiler: every reply the Bridge's
    Python bytes; one session; BASE.in open throughout."""
    for fmt, (_, framing) in FORMATS.items():
        base = os.path.join(work, "g_%s" % fmt)
        answers = bridge_answers(fmt)
        report = {}
        t = threading.Thread(target=cpp_compiler, args=(base, fmt, report), daemon=True)
        t.start()
        res = mlbc_gym.serve(base, lambda f, c, i: answers[i], framing=framing, advice=None,
                             sessions=1, open_timeout=10)
        t.join(15)
        replies = report.get("replies", [])
        bad = [LABELS[i] for i in range(10)
               if i >= len(replies) or replies[i] != fixture(fmt, i, "reply")]
        T.result(not report.get("error") and not bad,
                 "mlbc_gym's replies are the Bridge's Python bytes, message by message (%s)"
                 % fmt, "%s; differ: %s; first: %r" % (
                     report.get("error"), bad, replies[LABELS.index(bad[0])]
                     if bad and LABELS.index(bad[0]) < len(replies) else None))
        T.result(len(res.sessions) == 1 and res.sessions[0].observations == 10 and
                 not res.sessions[0].error,
                 "one session of 10 messages although BASE.out opened 0.3 s after BASE.in "
                 "(%s)" % fmt, repr(res.sessions)[:300])
        T.result(report.get("hup") is False,
                 "BASE.in never reached end of file before the compiler opened BASE.out "
                 "(%s)" % fmt, "the host closed BASE.in: the compiler would read end of file")


def test_both_sides(bins, work):
    """mlbc's runner and mlbc_gym, each as the Bridge has it: the Bridge test's ten messages."""
    for fmt, (_, framing) in FORMATS.items():
        base = os.path.join(work, "b_%s" % fmt)
        answers = bridge_answers(fmt)
        res = mlbc_gym.serve(base, lambda f, c, i: answers[i], framing=framing, advice=None,
                             command=[bins["plain"], base, fmt], command_timeout=60)
        T.result(res.returncode == 0 and len(res.sessions) == 1 and
                 res.sessions[0].observations == 10,
                 "mlbc's runner and mlbc_gym, Bridge-typed (%s)" % fmt,
                 "exit %s, %r" % (res.returncode, res.sessions))


def test_command_line(bins, work):
    """The same from mlbc_gym's command line: --advice bridge and a policy file."""
    for fmt, (_, framing) in FORMATS.items():
        base = os.path.join(work, "cli_%s" % fmt)
        p = subprocess.run(
            [sys.executable, "-m", "mlbc_gym", "serve", base, "--framing", framing, "--advice",
             "bridge", "--policy", os.path.join(HERE, "bridge", "answers.py:%s_policy" % fmt),
             "--timeout", "60", "--", bins["plain"], base, fmt],
            capture_output=True, text=True, timeout=90,
            env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "runtime", "python")))
        T.result(p.returncode == 0 and p.stdout.count(" reply ") == 10 and
                 "10 observations" in p.stderr,
                 "python3 -m mlbc_gym serve --advice bridge (%s)" % fmt,
                 (p.stdout + p.stderr)[-400:])


# ---- gRPC: mlbc's runner as the Bridge test's client, its Python servers replayed ---------------

# The Bridge test's services, from the recording's facts: per datatype its number, the
# request's and the reply's field type, and whether they are repeated (char, 5, untested).
GRPC_TYPES = ((1, "int", "int32", ""), (2, "long", "int64", ""), (3, "float", "float", ""),
              (4, "double", "double", ""), (6, "bool", "bool", ""),
              (7, "vec_int", "int32", "repeated "), (8, "vec_long", "int64", "repeated "),
              (9, "vec_float", "float", "repeated "), (10, "vec_double", "double", "repeated "))


def descriptor_sets(work):
    """Each service as a .proto written here from the recorded facts, and its descriptor set
    (protoc --descriptor_set_out), in WORK/desc; the folder, or None with why."""
    d = os.path.join(work, "desc")
    os.makedirs(d, exist_ok=True)
    for _, label, t, rep in GRPC_TYPES:
        proto = os.path.join(d, "MLBridgeTest_%s.proto" % label)
        with open(proto, "w") as f:
            f.write('syntax = "proto3";\npackage MLBridgeTestgRPC_%s;\n'
                    "service MLBridgeTestService {\n"
                    "  rpc getAdvice(Request) returns (Reply) {}\n}\n"
                    "message Request { %s%s request_%s = 1; }\n"
                    "message Reply { %s%s action = 1; }\n" % (label, rep, t, label, rep, t))
        p = subprocess.run(["protoc", "-I", d, "--include_imports", "--descriptor_set_out=" +
                            os.path.join(d, "MLBridgeTest_%s.desc" % label), proto],
                           capture_output=True, text=True)
        if p.returncode:
            return None, p.stderr[-300:]
    return d, ""


def replay_servers(got):
    """The Bridge's Python servers replayed: datatype i on BASE + i answers getAdvice with
    its recorded reply bytes and keeps the request's bytes in got[label]. (servers, BASE)."""
    import grpc
    from concurrent import futures
    for attempt in range(20):
        base = 20000 + (os.getpid() * 7919 + attempt * 104729) % 40000
        servers = []
        try:
            for number, label, _, _ in GRPC_TYPES:
                def answer(request, context, label=label, number=number):
                    got[label] = request
                    with open(os.path.join(FIXTURES, "grpc", "%02d_%s.reply.pb" % (
                            number, label)), "rb") as f:
                        return f.read()
                srv = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
                srv.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
                    "MLBridgeTestgRPC_%s.MLBridgeTestService" % label,
                    {"getAdvice": grpc.unary_unary_rpc_method_handler(answer)}),))
                if srv.add_insecure_port("127.0.0.1:%d" % (base + number)) != base + number:
                    raise OSError("port taken")
                srv.start()
                servers.append(srv)
            return servers, base
        except (OSError, RuntimeError):
            for srv in servers:
                srv.stop(None)
    raise RuntimeError("no free ports")


def build_grpc_client(build_dir):
    out = os.path.join(build_dir, "test_bridge", "bridge_grpc_client")
    libs = subprocess.run(["pkg-config", "--libs", "grpc++", "protobuf"], capture_output=True,
                          text=True).stdout.split()
    p = subprocess.run(["cc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
                        "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "runtime"), "-o", out,
                        os.path.join(HERE, "bridge", "bridge_grpc_client.c"),
                        os.path.join(build_dir, "libmlbc_grpc.a"),
                        os.path.join(build_dir, "libmlbc_rt.a")] + libs + ["-lstdc++"] +
                       mlbctest.RT_LIBS, capture_output=True, text=True)
    T.result(p.returncode == 0, "build bridge_grpc_client", (p.stderr or p.stdout)[-600:])
    return out if p.returncode == 0 else None


def test_grpc_client(build_dir, work):
    """mlbc_runner_grpc_bridge against the recorded Bridge servers: its requests are the
    Bridge's C++ client's bytes, its replies read as the Bridge's test expects."""
    exe = build_grpc_client(build_dir)
    desc, why = descriptor_sets(work)
    T.result(desc is not None, "descriptor sets of the Bridge test's services (protoc)", why)
    if not exe or not desc:
        return
    got = {}
    servers, base = replay_servers(got)
    try:
        p = subprocess.run([exe, "127.0.0.1", str(base), desc], capture_output=True,
                           text=True, timeout=120)
    finally:
        for srv in servers:
            srv.stop(None)
    T.result(p.returncode == 0 and p.stdout.count(" reply ") == len(GRPC_TYPES),
             "mlbc's runner as the Bridge test's gRPC client, its servers replayed: 9 replies "
             "as the Bridge's test expects", (p.stdout + p.stderr)[-600:])
    bad = []
    for number, label, _, _ in GRPC_TYPES:
        with open(os.path.join(FIXTURES, "grpc", "%02d_%s.request.pb" % (number, label)),
                  "rb") as f:
            if got.get(label) != f.read():
                bad.append(label)
    T.result(not bad, "mlbc's gRPC requests are the Bridge's C++ bytes, service by service",
             "differ: %s" % bad)
    # misfits: (case, exit status, what the message says)
    for case, rc, says in (("no-set", 2, "is not a FileDescriptorSet"),
                           ("not-a-set", 2, "is not a FileDescriptorSet"),
                           ("no-method", 2, "has no method"),
                           ("no-field", 2, "no field of that name"),
                           ("float-feature-int-field", 2, "a float feature for an integer"),
                           ("real-field-int-advice", 2, "a real field for integer advice"),
                           ("out-of-range", 3, "does not fit field"),
                           ("count", 3, "has 4 value(s), the advice 3"),
                           ("reply-out-of-range", 3, "does not fit the advice")):
        servers, base = replay_servers({})
        try:
            p = subprocess.run([exe, "127.0.0.1", str(base), desc, "--case", case],
                               capture_output=True, text=True, timeout=60)
        finally:
            for srv in servers:
                srv.stop(None)
        T.result(p.returncode == rc and says in p.stdout, "refused: %s" % case,
                 "exit %d: %s" % (p.returncode, (p.stdout + p.stderr)[-300:]))


def test_grpc_model_side(work):
    """mlbc_gym.serve_bridge against the recorded Bridge C++ client: each recorded request
    sent as it was, the reply's bytes the Bridge's Python server's."""
    import grpc
    desc, why = descriptor_sets(work)
    if not desc:
        return T.result(False, "descriptor sets for serve_bridge", why)
    answers = {1: 12, 2: 1234567891, 3: 4.14, 4: 1.123456789123456789, 6: False,
               7: [12, 23, 34], 8: [123456780, 123456781, 123456782], 9: [1.11, 2.22, -3.33, 0],
               10: [1.12345678912345670, -1.12345678912345671]}     # its grpc returned_data
    bad = []
    for number, label, _, _ in GRPC_TYPES:
        def read(direction):
            with open(os.path.join(FIXTURES, "grpc", "%02d_%s.%s.pb" % (
                    number, label, direction)), "rb") as f:
                return f.read()
        seen = []
        with mlbc_gym.serve_bridge(lambda f, c, i: seen.append(f) or answers[number],
                                   os.path.join(desc, "MLBridgeTest_%s.desc" % label)) as srv:
            with grpc.insecure_channel("127.0.0.1:%d" % srv.port) as ch:
                call = ch.unary_unary("/MLBridgeTestgRPC_%s.MLBridgeTestService/getAdvice"
                                      % label)
                try:
                    reply = call(read("request"), timeout=10)
                except grpc.RpcError as e:
                    reply = e
        if reply != read("reply"):
            bad.append("%s: %r (features %r)" % (label, reply, seen))
    T.result(not bad, "mlbc_gym.serve_bridge's replies are the Bridge's Python bytes, service "
             "by service (9)", "; ".join(bad)[:600])


def test_grpc_both_sides(build_dir, work):
    """mlbc's client and mlbc_gym's server, each as the Bridge has it, with a token: the
    Bridge test's nine services answered; without the token, refused."""
    exe = os.path.join(build_dir, "test_bridge", "bridge_grpc_client")
    desc = os.path.join(work, "desc")
    answers = {1: 12, 2: 1234567891, 3: 4.14, 4: 1.123456789123456789, 6: False,
               7: [12, 23, 34], 8: [123456780, 123456781, 123456782], 9: [1.11, 2.22, -3.33, 0],
               10: [1.12345678912345670, -1.12345678912345671]}
    if not os.path.exists(exe) or not os.path.isdir(desc):
        return T.result(False, "mlbc's gRPC client and mlbc_gym.serve_bridge", "not built")
    for attempt in range(20):
        base = 20000 + (os.getpid() * 31 + attempt * 7877) % 40000
        servers = []
        try:
            for number, label, _, _ in GRPC_TYPES:
                servers.append(mlbc_gym.serve_bridge(
                    lambda f, c, i, n=number: answers[n],
                    os.path.join(desc, "MLBridgeTest_%s.desc" % label),
                    "127.0.0.1:%d" % (base + number), token="s3cret"))
            break
        except mlbc_gym.HostError:
            for srv in servers:
                srv.stop()
    try:
        runs = [subprocess.run([exe, "127.0.0.1", str(base), desc] + (["int"] if not t else []),
                               capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, **({"BRIDGE_TOKEN": t} if t else {})))
                for t in ("s3cret", None)]
    finally:
        for srv in servers:
            srv.stop()
    ok, no = runs
    T.result(ok.returncode == 0 and ok.stdout.count(" reply ") == len(GRPC_TYPES),
             "mlbc's gRPC client and mlbc_gym.serve_bridge, with a token: 9 services",
             (ok.stdout + ok.stderr)[-500:])
    T.result(no.returncode == 3 and "UNAUTHENTICATED" in no.stdout,
             "without the token: refused (UNAUTHENTICATED)", (no.stdout + no.stderr)[-300:])


def test_onnx_model(build_dir, work):
    """The Bridge's test/onnx/dummy_model.onnx (torch's export of 2 - obs, obs [1, 100]):
    compiled by mlbc, on its test's observation ((i - 20) / 100 squared), gives float32's
    2 - obs bit for bit and the test's action, the argmax: 20."""
    import numpy as np
    d = os.path.join(work, "onnx")
    try:
        exe = mlbctest.compile_model(os.path.join(build_dir, "mlbc"),
                                     os.path.join(FIXTURES, "dummy_model.onnx"), d)
        delta = np.arange(-20, 80, dtype=np.float32) / np.float32(100)   # as its C++ computes
        obs = (delta * delta).reshape(1, 100)
        out, = mlbctest.execute(exe, d, [obs], [1], [(1, (1, 100))])
        want = np.float32(2) - obs
        T.result(out.tobytes() == want.tobytes() and int(np.argmax(out)) == 20,
                 "the Bridge's dummy_model.onnx: 2 - obs bit for bit, action 20",
                 "action %d, %d values differ" % (int(np.argmax(out)),
                                                  int((out != want).sum())))
    except mlbctest.Failure as e:
        T.result(False, "the Bridge's dummy_model.onnx", str(e))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    build_dir = os.path.abspath(args.build)
    bins = build(build_dir)
    with tempfile.TemporaryDirectory(prefix="mlbc-bridge-") as work:
        if bins:
            test_compiler_side(bins, work)
            test_hostile_replies(bins, work)
            test_fifo_modes(bins, work)
            test_both_sides(bins, work)
            test_command_line(bins, work)
        test_model_side(work)
        test_onnx_model(build_dir, work)
        test_grpc_client(build_dir, work)
        test_grpc_model_side(work)
        test_grpc_both_sides(build_dir, work)
    return T.close()


if __name__ == "__main__":
    sys.exit(main())
