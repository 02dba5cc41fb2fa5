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
  * gRPC, both of the Bridge's modes: mlbc's runner as the client of the Bridge test's
    recorded servers, mlbc_gym.serve_bridge answering its recorded client; and the training
    mode, where the compiler serves (tests/bridge/bridge_grpc_server.c, the runner's server
    role) and a trainer calls: mlbc_gym.drive_bridge, a grpcio client as the Bridge's
    GrpcCompilerInterface, the recorded requests of the real one; hostile trainers; the same
    under ASan+UBSan.

    python3 tests/test_bridge.py --build build        # ends with "N passed, M failed"
"""
import argparse
import os
import select
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


def build_grpc_program(name, build_dir):
    """tests/bridge/NAME.c against libmlbc_grpc.a and libmlbc_rt.a, warnings as errors."""
    out = os.path.join(build_dir, "test_bridge", name)
    p = subprocess.run(["cc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
                        "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "runtime"), "-o", out,
                        os.path.join(HERE, "bridge", name + ".c"),
                        os.path.join(build_dir, "libmlbc_grpc.a"),
                        os.path.join(build_dir, "libmlbc_rt.a")] +
                       mlbctest.pkg_flags("--libs", "grpc++", "protobuf") + ["-lstdc++"] +
                       mlbctest.RT_LIBS, capture_output=True, text=True)
    T.result(p.returncode == 0, "build " + name, (p.stderr or p.stdout)[-600:])
    return out if p.returncode == 0 else None


def test_grpc_client(build_dir, work):
    """mlbc_runner_grpc_bridge against the recorded Bridge servers: its requests are the
    Bridge's C++ client's bytes, its replies read as the Bridge's test expects."""
    exe = build_grpc_program("bridge_grpc_client", build_dir)
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


# ---- gRPC training mode: mlbc's runner serves the application's method, a trainer calls ------

TRAINING = os.path.join(FIXTURES, "grpc", "training.desc")
QUERY = "CompilerService/queryCompiler"
QUERY_PATH = "/BridgeTraining.CompilerService/queryCompiler"
# every field of training.proto's EmbeddingResponse, as bridge_grpc_server's features
TRAINING_FEATURES = ("embedding:float:4", "action_mask:int32_t:3", "function_id:int64_t",
                     "size_ratio:double", "has_loops:bool", "costs:double:2",
                     "sizes:int64_t:2", "depth:int32_t", "weight:float")
PROTO_TYPES = {"int32": "int32_t", "int64": "int64_t", "float": "float", "double": "double",
               "bool": "bool"}
DONE = ("OUT_OF_RANGE", "done: the compiler has made its last decision")    # freed
WAIT = 30                   # seconds any one step may take before it is a hang
MARGIN_MS = 1500            # what a failing evaluate may take beyond its bound (slow machine)


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def parse_spec(spec):
    """bridge_grpc_server's NAME:TYPE[:COUNT] -> (name, type, count or None: a scalar)."""
    name, t, *count = spec.split(":")
    return name, t, int(count[0]) if count else None


def feature_value(t, k, i, j):
    """bridge_grpc_server's value(): feature i's element j at decision k, as a field holds
    it."""
    v = k * 7 + i * 3 + j
    real = k + 0.1 * (i + 1) + 0.25 * j
    return {"int32_t": -2000000000 + v, "int64_t": 9007199254740993 + v, "double": real,
            "float": f32(real), "bool": (k + i + j) % 2 == 1}[t]


def expected_features(specs, k):
    return {name: [feature_value(t, k, i, j) for j in range(count or 1)]
            for i, (name, t, count) in enumerate(map(parse_spec, specs))}


def advice_value(t, k, j):
    """What the trainers here advise at decision k (element j): exact in its type only."""
    return {"int32_t": -7 - 1000003 * k + j, "int64_t": 2 ** 62 + 12345 + k + j,
            "float": 1.1 * (k + 1) + j, "double": k + 1 / 3 + j,
            "bool": (k + j) % 2 == 0}[t]


def advice_policy(spec, seen):
    """A policy advising advice_value for the advice spec; seen gets each decision's
    features."""
    _, t, count = parse_spec(spec)

    def policy(feats, context, index):
        seen.append(feats)
        vals = [advice_value(t, index, j) for j in range(count or 1)]
        return vals if count else vals[0]
    return policy


def advice_as_received(spec, k):
    """advice_value as the runner holds it, bridge_grpc_server printing it."""
    _, t, count = parse_spec(spec)
    conv = {"float": f32, "bool": int}.get(t, lambda x: x)
    return [conv(advice_value(t, k, j)) for j in range(count or 1)]


class Compiler:
    """bridge_grpc_server, running: .address once it listens (None if the runner could not
    be made; finish() says why)."""

    def __init__(self, exe, desc, features, advice, *opts, address="127.0.0.1:0",
                 kind="plain"):
        cmd = [exe, address, desc]
        for f in features:
            cmd += ["--feature", f]
        self.p = subprocess.Popen(cmd + ["--advice", advice] + [str(o) for o in opts],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=client_env(kind))
        self.first = ""
        first = self.line()
        port = first.split()[1] if first.startswith("port ") else None
        self.address = None if port is None else address if address.startswith("unix:") \
            else "127.0.0.1:" + port

    def line(self):
        """Its next line of output (kept for finish)."""
        line = self.p.stdout.readline()
        self.first += line
        return line

    def finish(self):
        """({decision: ("advice", ms, [values]) or ("null", ms, error)}, exit status,
        all it printed)."""
        try:
            out, err = self.p.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        out = self.first + out
        decisions = {}
        for line in out.splitlines():
            what, _, rest = line.partition(" ")
            if what in ("advice", "null"):
                k, ms, rest = (rest.split(" ", 2) + [""])[:3]
                decisions[int(k)] = (what, float(ms), rest if what == "null" else [
                    float.fromhex(v) if "0x" in v else int(v) for v in rest.split()])
        return decisions, self.p.returncode, out + err


def trainer_calls(address, requests, path=QUERY_PATH, reply_class=None, token=None,
                  timeout=WAIT):
    """The Bridge's GrpcCompilerInterface in client mode, as its evaluate() calls
    self.stub.queryCompiler(out) with what populate_buffer put there: one channel, a unary
    call of path per request (bytes), in order, until one fails. [reply (parsed by
    reply_class if given) or (status code name, details)]."""
    import grpc
    got = []
    with grpc.insecure_channel(address) as ch:
        call = ch.unary_unary(path, response_deserializer=reply_class and
                              reply_class.FromString)
        for req in requests:
            try:
                got.append(call(req, timeout=timeout, metadata=token and (
                    ("authorization", "Bearer " + token),)))
            except grpc.RpcError as e:
                got.append((e.code().name, e.details()))
                break
    return got


def training_classes():
    from mlbc_gym.bridge import load_method
    return load_method(TRAINING, QUERY)[2:]


def run_drive(compiler, desc, advice, method=None, **options):
    """mlbc_gym.drive_bridge against compiler: (decisions answered or the HostError, the
    features each decision's policy saw)."""
    seen = []
    try:
        n = mlbc_gym.drive_bridge(advice_policy(advice, seen), desc, compiler.address, method,
                                  **options)
    except mlbc_gym.HostError as e:
        n = e
    return n, seen


def episode_exact(got, n, seen, features, advice, decisions):
    """"" if an episode of n decisions went as it should, both sides exact; else what did
    not."""
    want = [expected_features(features, k) for k in range(n)]
    names = [parse_spec(f)[0] for f in features]
    saw = [{k: f[k] for k in names if k in f} for f in seen]
    printed = {k: d[2] for k, d in decisions.items()}
    return "; ".join(why for ok, why in (
        (got == n, "drive_bridge: %r" % (got,)),
        (saw == want, "features %r, not %r" % (saw, want)),
        (printed == {k: advice_as_received(advice, k) for k in range(n)},
         "advice %r" % printed)) if not ok)


def test_training_types(exe, work, kind="plain"):
    """mlbc's runner serving each of the Bridge test's services in training mode (its
    reply's action the feature, its request's field the advice), driven by
    mlbc_gym.drive_bridge: 3 decisions each, values exact both ways."""
    desc, why = descriptor_sets(work)
    if not desc:
        return T.result(False, "descriptor sets for the training mode", why)
    for number, label, t, rep in GRPC_TYPES:
        count = ":3" if rep else ""
        features = ["action:%s%s" % (PROTO_TYPES[t], count)]
        advice = "request_%s:%s%s" % (label, PROTO_TYPES[t], count)
        path = os.path.join(desc, "MLBridgeTest_%s.desc" % label)
        c = Compiler(exe, path, features, advice, "--n", 3, "--timeout", 5000, kind=kind)
        got, seen = run_drive(c, path, advice, timeout=WAIT) if c.address else (None, [])
        decisions, rc, out = c.finish()
        bad = episode_exact(got, 3, seen, features, advice, decisions)
        T.result(not bad and rc == 0 and "done" in out,
                 "%straining mode: mlbc's runner serves the Bridge test's %s service, "
                 "mlbc_gym.drive_bridge calls it: 3 decisions, exact" % (kind_tag(kind), label),
                 bad or out[-300:])


def kind_tag(kind):
    return "" if kind == "plain" else "[%s] " % kind


def test_training_all_types(exe, kind="plain"):
    """Every field type in one observation (training.proto's EmbeddingResponse), the advice
    in ActionRequest.action, a token: drive_bridge, then a plain grpcio client calling
    queryCompiler as the Bridge's GrpcCompilerInterface does."""
    tag = kind_tag(kind)
    advice = "action:int32_t"
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, advice, "--n", 4, "--token", "s3cret",
                 kind=kind)
    got, seen = run_drive(c, TRAINING, advice, QUERY, token="s3cret", timeout=WAIT) \
        if c.address else (None, [])
    decisions, rc, out = c.finish()
    bad = episode_exact(got, 4, seen, TRAINING_FEATURES, advice, decisions)
    T.result(not bad and rc == 0 and "done" in out,
             tag + "training mode: every field type in one observation, with a token: 4 "
             "decisions, exact", bad or out[-300:])

    request, reply = training_classes()
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, advice, "--n", 3, kind=kind)
    actions = [None, 5, 6, 7]
    got = trainer_calls(c.address, [request(action=a).SerializeToString() if a is not None
                                    else b"" for a in actions], reply_class=reply) \
        if c.address else []
    decisions, rc, out = c.finish()
    feats = [mlbc_gym.bridge._fields(g) for g in got[:3] if not isinstance(g, tuple)]
    want = [expected_features(TRAINING_FEATURES, k) for k in range(3)]
    T.result(feats == want and got[3:] == [DONE] and
             {k: d[2] for k, d in decisions.items()} == {0: [5], 1: [6], 2: [7]} and rc == 0,
             tag + "training mode: a GrpcCompilerInterface-like grpcio client calling "
             "queryCompiler: the observations, its actions, then OUT_OF_RANGE (done)",
             "%r %r %s" % (got[3:], decisions, out[-300:]))


def test_training_recorded(exe, kind="plain"):
    """The Bridge's own GrpcCompilerInterface (client mode) against mlbc's runner, recorded
    once (tests/bridge/README.md): its six calls' requests replayed, mlbc's replies must be
    the bytes it got then, its actions the advice, its last call OUT_OF_RANGE."""
    def read(name):
        with open(os.path.join(FIXTURES, "grpc", name), "rb") as f:
            return f.read()
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, "action:int32_t", "--n", 5, kind=kind)
    got = trainer_calls(c.address, [read("training_%02d.request.pb" % i) for i in range(6)]) \
        if c.address else []
    decisions, rc, out = c.finish()
    bad = [i for i in range(5) if i >= len(got) or got[i] != read("training_%02d.reply.pb" % i)]
    T.result(not bad and got[5:] == [DONE] and rc == 0 and
             {k: d[2] for k, d in decisions.items()} == {0: [7], 1: [0], 2: [-1],
                                                          3: [2 ** 31 - 1], 4: [-2 ** 31]},
             kind_tag(kind) + "training mode: the Bridge's GrpcCompilerInterface's recorded "
             "requests replayed: mlbc's replies are the recorded bytes, its actions the advice",
             "replies differ: %s; %r %s" % (bad, got[5:], out[-300:]))


# (what, the descriptor set and the runner's advice, the request after the opening call,
#  what the error says)
BAD_REQUESTS = (
    ("advice out of its type's range", TRAINING, "action:int8_t",
     lambda req: req(action=300).SerializeToString(), "does not fit the advice's type"),
    ("advice of another wire type (a string)", TRAINING, "action:int32_t",
     lambda req: b"\x0a\x03abc", "comes in another wire type"),
    ("an undecodable request", TRAINING, "action:int32_t", lambda req: b"\x0a\xff",
     "is not a BridgeTraining.ActionRequest"),
    ("advice of 4 values for 3", "vec_int", "request_vec_int:int32_t:3",
     lambda req: b"\x0a\x04\x01\x02\x03\x04", "has 4 value(s), the advice 3"),
)


def test_training_bad_requests(exe, work, kind="plain"):
    """A request whose advice does not fit: the trainer gets INVALID_ARGUMENT saying why,
    the runner fails for good with that message (evaluate NULL, the caller's fallback)."""
    request, _ = training_classes()
    for what, desc, advice, make, says in BAD_REQUESTS:
        features = TRAINING_FEATURES
        if desc == "vec_int":
            desc = os.path.join(work, "desc", "MLBridgeTest_vec_int.desc")
            features = ["action:int32_t:3"]
        c = Compiler(exe, desc, features, advice, "--n", 2, "--timeout", 5000, kind=kind)
        path = "/MLBridgeTestgRPC_vec_int.MLBridgeTestService/getAdvice" \
            if "vec_int" in desc else QUERY_PATH
        got = trainer_calls(c.address, [b"", make(request)], path) if c.address else []
        decisions, rc, out = c.finish()
        first, second = decisions.get(0, ("", 0, "")), decisions.get(1, ("", 0, ""))
        T.result(len(got) == 2 and got[1][0] == "INVALID_ARGUMENT" and says in got[1][1] and
                 first[0] == "null" and says in first[2] and second[0] == "null" and
                 second[1] < 1000 and rc == 0 and "done" in out,
                 "%srefused: %s (the trainer told, evaluate NULL from then on)"
                 % (kind_tag(kind), what), "%r %s" % (got[1:], out[-400:]))


def test_training_faults(exe, kind="plain"):
    """A trainer that never calls, one with a wrong token, one that goes away mid-episode,
    a compiler that stalls: bounded waits, clear messages, evaluate NULL."""
    tag = kind_tag(kind)
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, "action:int32_t", "--n", 2, "--timeout",
                 800, "--token", "s3cret", kind=kind)
    wrong = [trainer_calls(c.address, [b""], token=t, timeout=5) for t in ("wrong", None)]
    decisions, rc, out = c.finish()
    first = decisions.get(0, ("", 0, ""))
    T.result(all(w[0][0] == "UNAUTHENTICATED" for w in wrong),
             tag + "training mode: a wrong token or none refused (UNAUTHENTICATED)",
             repr(wrong))
    T.result(first[0] == "null" and 800 <= first[1] < 800 + MARGIN_MS and
             "no call to %s for observation 0 within 800 ms" % QUERY_PATH in first[2] and
             decisions.get(1, ("",))[0] == "null" and rc == 0 and "done" in out,
             tag + "training mode: no trainer's call in time: evaluate NULL after the "
             "timeout, saying so", out[-400:])

    # the trainer dies while its call waits for the compiler's next observation (the compiler
    # has taken its advice and pauses)
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, "action:int32_t", "--n", 3, "--pause",
                 1000, "--timeout", 5000, kind=kind)
    script = ("import sys; sys.path.insert(0, %r); import mlbc_gym\n"
              "d = mlbc_gym.BridgeDriver(%r, %r, %r, timeout=30)\n"
              "d.reset(); d.step(1); print('answered')"
              % (os.path.join(ROOT, "runtime", "python"), TRAINING, c.address, QUERY))
    trainer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               text=True)
    took = c.line()
    trainer.kill()
    said = trainer.communicate()[0]
    decisions, rc, out = c.finish()
    gone = decisions.get(1, ("", 0, ""))
    T.result(took.startswith("advice 0 ") and not said and gone[0] == "null" and
             gone[1] < 1000 and "went away" in gone[2] and rc == 0 and "done" in out,
             tag + "training mode: the trainer dies mid-episode: the next evaluate NULL at "
             "once, saying so", out[-400:])

    # the compiler stalls with the trainer's call waiting: the call ends DEADLINE_EXCEEDED
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, "action:int32_t", "--n", 2, "--pause",
                 2200, "--timeout", 1000, kind=kind)
    t0 = time.monotonic()
    got, _ = run_drive(c, TRAINING, "action:int32_t", QUERY, timeout=WAIT)
    took = time.monotonic() - t0
    decisions, rc, out = c.finish()
    late = decisions.get(1, ("", 0, ""))
    T.result(isinstance(got, mlbc_gym.HostError) and "DEADLINE_EXCEEDED" in str(got) and
             "no observation within 1000 ms" in str(got) and 1.0 <= took < 1.0 + MARGIN_MS /
             1000 and late[0] == "null" and "no observation within 1000 ms" in late[2] and
             late[1] < 1000 and rc == 0,
             tag + "training mode: a compiler that stalls: the trainer's call ends "
             "DEADLINE_EXCEEDED after the timeout, the runner fails", "%r %.2f s %s" % (
                 got, took, out[-300:]))


def test_training_one_call(exe, kind="plain"):
    """While the trainer's call waits for the compiler: another call is refused
    (FAILED_PRECONDITION), so are another method (UNIMPLEMENTED) and a request larger than
    the advice needs (RESOURCE_EXHAUSTED); the episode goes on."""
    import grpc
    request, reply = training_classes()
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, "action:int32_t", "--n", 2, "--pause",
                 1000, "--timeout", 5000, kind=kind)
    others = []
    with grpc.insecure_channel(c.address) as ch:
        query = ch.unary_unary(QUERY_PATH)
        query(b"", timeout=WAIT)
        waiting = query.future(request(action=3).SerializeToString(), timeout=WAIT)
        c.line()                    # its advice taken: the call waits through the pause
        for path, req in ((QUERY_PATH, b""),
                          ("/BridgeTraining.CompilerService/watchCompiler", b""),
                          ("/Other.Service/queryCompiler", b""),
                          (QUERY_PATH, b"\x08\x03\x12\xc8\x01" + b"x" * 200)):
            others += trainer_calls(c.address, [req], path, timeout=5)
        e = waiting.exception()
        waited = (e.code().name if e else len(reply.FromString(waiting.result()).embedding),
                  trainer_calls(c.address, [request(action=4).SerializeToString()])[0][0])
    decisions, rc, out = c.finish()
    T.result([o[0] for o in others] == ["FAILED_PRECONDITION", "UNIMPLEMENTED",
                                        "UNIMPLEMENTED", "RESOURCE_EXHAUSTED"] and
             waited == (4, "OUT_OF_RANGE") and
             {k: d[2] for k, d in decisions.items()} == {0: [3], 1: [4]} and rc == 0,
             kind_tag(kind) + "training mode: one call at a time; other methods and "
             "oversized requests refused; the episode goes on", "%r %r %s" % (
                 others, waited, out[-300:]))


def test_training_setup(exe, work):
    """What cannot be served is refused at creation with a message; a unix: socket is made
    0600; TLS with client certificates."""
    for what, args, says in (
            ("a streaming method", [TRAINING, "--method", "CompilerService/watchCompiler"],
             "is a streaming method"),
            ("no such method", [TRAINING, "--method", "CompilerService/nothing"],
             "has no method CompilerService/nothing"),
            ("not a descriptor set", ["/etc/hostname"], "is not a FileDescriptorSet"),
            ("a feature of no field", [TRAINING, "--feature", "nothing:float"],
             "no field of that name"),
            ("integer advice from a real field",
             [os.path.join(work, "desc", "MLBridgeTest_float.desc"), "--feature",
              "action:float"], "a real field for integer advice")):
        c = Compiler(exe, args[0], TRAINING_FEATURES if args[0] == TRAINING and
                     "--feature" not in args else [], "action:int32_t", *args[1:])
        _, rc, out = c.finish()
        T.result(rc == 2 and says in out, "training mode refuses at creation: " + what,
                 out[-300:])
    try:
        mlbc_gym.drive_bridge(None, TRAINING, "127.0.0.1:1", "CompilerService/watchCompiler")
        refused = "not refused"
    except mlbc_gym.HostError as e:
        refused = str(e)
    T.result("streaming method" in refused,
             "mlbc_gym.drive_bridge refuses a streaming method", refused)

    sock = os.path.join(work, "training.sock")
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, "action:int32_t", "--n", 2,
                 address="unix:" + sock)
    mode = os.stat(sock).st_mode & 0o777 if c.address else None
    got, seen = run_drive(c, TRAINING, "action:int32_t", QUERY, timeout=WAIT)
    decisions, rc, out = c.finish()
    T.result(mode == 0o600 and got == 2 and len(decisions) == 2 and
             not os.path.exists(sock),
             "training mode on a unix: socket made 0600 (removed after)",
             "mode %r, %r %s" % (mode, got, out[-300:]))

    from test_grpc import make_certs
    p = make_certs(work)
    c = Compiler(exe, TRAINING, TRAINING_FEATURES, "action:int32_t", "--n", 2, "--timeout",
                 5000, "--cert", p("server.pem"), "--key", p("server.key"), "--ca",
                 p("ca.pem"))
    no_cert, _ = run_drive(c, TRAINING, "action:int32_t", QUERY, timeout=1,
                           tls_ca=p("ca.pem"))
    got, seen = run_drive(c, TRAINING, "action:int32_t", QUERY, timeout=WAIT,
                          tls_ca=p("ca.pem"), tls_cert=p("client.pem"),
                          tls_key=p("client.key"))
    decisions, rc, out = c.finish()
    T.result(isinstance(no_cert, mlbc_gym.HostError) and got == 2 and
             [d[0] for d in decisions.values()] == ["advice", "advice"],
             "training mode over TLS with client certificates: a trainer without one "
             "refused, one with it served", "%r %r %s" % (no_cert, got, out[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    build_dir = os.path.abspath(args.build)
    bins = build(build_dir)
    asan_build, asan = start_asan_build(build_dir)
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
        exe = build_grpc_program("bridge_grpc_server", build_dir)
        if exe:
            test_training(exe, work)
        asan_build.join()
        T.result(asan["exe"] is not None, "build bridge_grpc_server under ASan+UBSan "
                 "(runtime/grpc.cc and the runtime instrumented)", asan["why"])
        if asan["exe"]:             # a finding ends it with status 86 or 87: a failed check
            test_training(asan["exe"], work, "asan")
    return T.close()


def test_training(exe, work, kind="plain"):
    """The training mode's tests, all (plain) or those of the runner's own code paths."""
    test_training_types(exe, work, kind)
    test_training_all_types(exe, kind)
    test_training_recorded(exe, kind)
    test_training_bad_requests(exe, work, kind)
    test_training_faults(exe, kind)
    test_training_one_call(exe, kind)
    if kind == "plain":
        test_training_setup(exe, work)


def start_asan_build(build_dir):
    """bridge_grpc_server under ASan+UBSan, built while the other tests run (its objects
    are kept: mlbctest.grpc_asan_build); (thread, result dict)."""
    out = {"exe": None, "why": ""}

    def run():
        out["exe"], out["why"] = mlbctest.grpc_asan_build(
            os.path.join(HERE, "bridge", "bridge_grpc_server.c"),
            os.path.join(build_dir, "test_bridge", "bridge_grpc_server_asan"), build_dir)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


if __name__ == "__main__":
    sys.exit(main())
