"""The gRPC runner (runtime/grpc.cc, mlbc_grpc.h) against mlbc_gym's gRPC side (rpc.py), in
both roles, over loopback: a C compiler stand-in (tests/grpc/grpc_peer.c) as the client of
mlbc_gym's model server and as the server mlbc_gym's driver steps; absent, killed and
stalled peers (bounded time, a clear error, NULL); tokens and TLS (certificates made here
with openssl); garbage bytes on the sockets.

    python3 tests/test_grpc.py --build build        # ends with "N passed, M failed"
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# The refused handshakes below are the point: gRPC's core need not log each one.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))

import mlbc_gym  # noqa: E402
import mlbctest  # noqa: E402
from mlbc_gym import HostError  # noqa: E402

WAIT = 30                   # seconds any one step of a test may take before it is a hang
MARGIN_MS = 1500            # what a failing evaluate may take beyond its bound (slow machine)
LOCAL = "127.0.0.1"

passed = failed = 0
ENGINE = "native"           # mlbc_gym's model server: mlbc's C++ server, or grpcio's
TAG = ""                    # before each check's name: the engine or the peer's build


def check(name, ok, detail=""):
    global passed, failed
    name = TAG + name
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + detail if detail else ""))
    sys.stdout.flush()
    return ok


def build(build_dir):
    """grpc_peer against libmlbc_grpc.a and libmlbc_rt.a, warnings as errors."""
    out = os.path.join(build_dir, "test_grpc", "grpc_peer")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = ["cc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
           "-Iruntime", "-o", out, os.path.join(HERE, "grpc", "grpc_peer.c"),
           os.path.join(build_dir, "libmlbc_grpc.a"), os.path.join(build_dir, "libmlbc_rt.a")
           ] + mlbctest.pkg_flags("--libs", "grpc++", "protobuf") + ["-lstdc++"] + \
        mlbctest.RT_LIBS
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    check("build grpc_peer", p.returncode == 0, (p.stderr or p.stdout).strip()[:800])
    return out if p.returncode == 0 else None


def build_asan(build_dir):
    """grpc_peer with runtime/grpc.cc and the C runtime built from source under ASan and
    UBSan (mlbctest.grpc_asan_build)."""
    out = os.path.join(build_dir, "test_grpc", "grpc_peer_asan")
    exe, errs = mlbctest.grpc_asan_build(os.path.join(HERE, "grpc", "grpc_peer.c"), out,
                                         build_dir)
    check("build grpc_peer under ASan+UBSan", exe is not None, errs)
    return exe


# ---- the C peer ---------------------------------------------------------------------------

def expected(k):
    """What policy() answers for grpc_peer's decision k (its features are made from k)."""
    return k * 1000 + int(sum(k + 0.5 * i for i in range(6)) * 2) + (1 + 2 + 3 + 4 + k)


def policy_of(calls):
    def policy(f, context, index):
        calls.append((context, index))
        return f["a"][0] * 1000 + int(sum(f.get("b", [])) * 2) + sum(f.get("c", []))
    return policy


class Peer:
    """grpc_peer running: lines() parses its output once it has exited."""

    def __init__(self, exe, role, address, *opts, listens=None):
        self.proc = subprocess.Popen([exe, role, address] + [str(o) for o in opts],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.head = []
        self.port = None
        if listens or (listens is None and role == "server"):
            line = self._readline()
            self.head.append(line)
            if line.startswith("port "):
                self.port = int(line.split()[1])

    def _readline(self):
        """One line, or "" after WAIT seconds (a timer kills a silent peer)."""
        timer = threading.Timer(WAIT, self.proc.kill)
        timer.start()
        try:
            return self.proc.stdout.readline()
        finally:
            timer.cancel()

    def finish(self):
        """(exit status, advice {k: value}, nulls {k: (ms, error)}, other lines)."""
        try:
            out, _ = self.proc.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            out += "\n(killed after %d s: a hang)" % WAIT
        advice, nulls, other = {}, {}, []
        for line in self.head + out.splitlines():
            w = line.split(None, 3)
            if w and w[0] == "advice":
                advice[int(w[1])] = int(w[2])
            elif w and w[0] == "null":
                nulls[int(w[1])] = (float(w[2]), w[3] if len(w) > 3 else "")
            elif line.strip() and not line.startswith("port "):
                other.append(line.strip())
        return self.proc.returncode, advice, nulls, other


def run_client(exe, address, *opts):
    return Peer(exe, "client", address, *opts).finish()


def free_port():
    """A loopback port nobody listens on (bound and released)."""
    with socket.socket() as s:
        s.bind((LOCAL, 0))
        return s.getsockname()[1]


def serve_model(policy, address, **options):
    """mlbc_gym's model server on the engine under test."""
    return mlbc_gym.serve_model(policy, address, engine=ENGINE, **options)


# ---- a model server in a child process (to be killed) -------------------------------------

def child_model_server(die_at, token=None):
    """--child-model-server: serves, prints its port, and SIGKILLs itself on decision die_at."""
    def policy(f, context, index):
        if f["a"][0] == die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return policy_of([])(f, context, index)
    srv = serve_model(policy, LOCAL + ":0", token=token)
    print("port %d" % srv.port, flush=True)
    time.sleep(WAIT)


# ---- tests --------------------------------------------------------------------------------

def test_client(exe):
    calls = []
    with serve_model(policy_of(calls), LOCAL + ":0") as srv:
        rc, adv, nulls, other = run_client(exe, "%s:%d" % (LOCAL, srv.port), "--n", 6)
    check("client: advice from mlbc_gym's model server", rc == 0 and not nulls and
          adv == {k: expected(k) for k in range(6)}, "rc %s %s %s %s" % (rc, adv, nulls, other))
    want = {"native": ("NativeModelServer", 1), "grpcio": ("ModelServer", 0)}[ENGINE]
    check("client: the %s engine served, on %d stream(s)" % (ENGINE, want[1]),
          (type(srv).__name__, srv.streams) == want, "%s, %d" % (type(srv).__name__,
                                                                  srv.streams))
    check("client: contexts and indexes reach the policy",
          calls == [("f0", 0), ("f0", 1), ("f1", 0), ("f1", 1), ("f2", 0), ("f2", 1)],
          str(calls))
    spec = mlbc_gym.TensorSpec("advice", "int64_t", [2])
    with serve_model(lambda f, c, i: [1, 2], LOCAL + ":0", advice=spec) as srv:
        rc, adv, nulls, other = run_client(exe, "%s:%d" % (LOCAL, srv.port), "--n", 2)
    check("client: advice of the wrong size is refused (NULL, sticky)",
          rc == 0 and not adv and "bad advice" in nulls.get(0, (0, ""))[1] and 1 in nulls,
          "%s %s %s" % (adv, nulls, other))

    seen = []

    def arrays(f, c, i):
        seen.append({k: (v.dtype.name, v.shape) for k, v in f.items()})
        return int(f["a"][0]) * 1000 + int(f["b"].sum() * 2) + int(f["c"].sum())
    with serve_model(arrays, LOCAL + ":0", numpy=True) as srv:
        rc, adv, nulls, other = run_client(exe, "%s:%d" % (LOCAL, srv.port), "--n", 3)
    want = {"a": ("int64", (1,)), "b": ("float32", (2, 3)), "c": ("uint8", (4,))}
    check("client: numpy=True: the policy gets arrays of the features' types and shapes",
          adv == {k: expected(k) for k in range(3)} and seen == [want] * 3,
          "%s %s %s" % (adv, nulls, seen[:1]))

    def raising(f, c, i):
        if f["a"][0] == 1:
            raise ValueError("no advice for you")
        return 5
    with serve_model(raising, LOCAL + ":0") as srv:
        rc, adv, nulls, other = run_client(exe, "%s:%d" % (LOCAL, srv.port), "--n", 3)
    err = nulls.get(1, (0, ""))[1]
    check("client: a policy that raises: that decision NULL (INTERNAL, naming it), sticky; "
          "the server keeps the exception",
          rc == 0 and adv == {0: 5} and "INTERNAL" in err and
          "policy raised ValueError: no advice for you" in err and 2 in nulls and
          isinstance(srv.exception, ValueError), "%s %s %s %r" % (adv, nulls, other,
                                                                   srv.exception))


def test_server(exe):
    calls = []
    peer = Peer(exe, "server", LOCAL + ":0", "--n", 5, "--timeout", 10000)
    try:
        n = mlbc_gym.drive("%s:%s" % (LOCAL, peer.port), policy_of(calls), timeout=WAIT)
    except HostError as e:
        n = str(e)
    rc, adv, nulls, other = peer.finish()
    check("server: mlbc_gym's driver steps the C server to done", n == 5 and rc == 0 and
          adv == {k: expected(k) for k in range(5)} and not nulls and other == ["done"],
          "drive %s, rc %s %s %s %s" % (n, rc, adv, nulls, other))
    check("server: contexts and indexes reach the driver's policy",
          calls == [("f0", 0), ("f0", 1), ("f1", 0), ("f1", 1), ("f2", 0)], str(calls))
    with tempfile.TemporaryDirectory() as tmp:
        addr = "unix:" + os.path.join(tmp, "sock")
        peer = Peer(exe, "server", addr, "--n", 2)
        try:
            n = mlbc_gym.drive(addr, policy_of([]), timeout=WAIT)
        except HostError as e:
            n = str(e)
        rc, adv, nulls, other = peer.finish()
    check("server: on a unix socket", peer.port == 0 and n == 2 and
          adv == {0: expected(0), 1: expected(1)}, "port %s, drive %s, %s %s %s"
          % (peer.port, n, adv, nulls, other))


def bounded_null(name, res, k, bound_ms, words):
    """Decision k was NULL within bound_ms with an error holding words; later ones NULL at
    once (sticky)."""
    rc, adv, nulls, other = res
    ms, err = nulls.get(k, (None, ""))
    later = [nulls[j][0] for j in nulls if j > k]
    check(name, rc == 0 and ms is not None and ms < bound_ms + MARGIN_MS and
          all(w in err for w in words) and later and max(later) < 200 and
          "done" in other, "rc %s, decision %d: %s ms %r; later %s; %s %s"
          % (rc, k, ms, err, later, adv, other))


def test_faults(exe):
    res = run_client(exe, "%s:%d" % (LOCAL, free_port()), "--n", 3, "--timeout", 1000,
                     "--retries", 2, "--backoff", 50)
    bounded_null("client: no model server: 3 attempts with backoff, then NULL", res, 0,
                 3 * 1000 + 150, ["no model server reachable", "3 attempt(s)"])

    child = Peer(sys.executable, os.path.abspath(__file__), "--child-model-server", "2",
                 "--engine", ENGINE, listens=True)
    port = child.port
    res = run_client(exe, "%s:%s" % (LOCAL, port), "--n", 4, "--timeout", 1000,
                     "--retries", 2, "--backoff", 50)
    child.finish()
    bounded_null("client: model server killed mid-call: NULL, sticky", res, 2, 3 * 1000 + 150,
                 ["UNAVAILABLE"])
    check("client: advice before the kill", res[1] == {0: expected(0), 1: expected(1)},
          str(res[1]))

    release = threading.Event()

    def stall(f, context, index):
        if f["a"][0] == 1:
            release.wait(WAIT)
        return 0
    with serve_model(stall, LOCAL + ":0") as srv:
        res = run_client(exe, "%s:%d" % (LOCAL, srv.port), "--n", 3, "--timeout", 700)
        release.set()
    bounded_null("client: stalled model server: NULL after the deadline", res, 1, 700,
                 ["DEADLINE_EXCEEDED"])

    peer = Peer(exe, "server", LOCAL + ":0", "--n", 2, "--timeout", 800)
    bounded_null("server: no driver: NULL after the timeout", peer.finish(), 0, 800,
                 ["no driver fetched observation 0"])

    peer = Peer(exe, "server", LOCAL + ":0", "--n", 4, "--timeout", 800)
    d = mlbc_gym.Driver("%s:%s" % (LOCAL, peer.port), timeout=WAIT)
    d.reset()
    d.step(7)
    d.close()               # the driver goes away with observation 1 unanswered
    res = peer.finish()
    bounded_null("server: driver gone: NULL after the timeout", res, 1, 800,
                 ["no driver answered observation 1"])
    check("server: advice before the driver left", res[1] == {0: 7}, str(res[1]))

    t0 = time.monotonic()
    try:
        mlbc_gym.Driver("%s:%d" % (LOCAL, free_port()), timeout=1).reset()
        err = "no error"
    except HostError as e:
        err = str(e)
    took = time.monotonic() - t0
    check("driver: no compiler: HostError after its timeout",
          "UNAVAILABLE" in err and took < 1 + MARGIN_MS / 1000, "%.1f s: %s" % (took, err))

    rc, adv, nulls, other = run_client(exe, "0.0.0.0:1")
    check("client: a non-loopback address is refused", rc == 2 and
          any("not a loopback address" in o for o in other), str(other))
    rc, adv, nulls, other = Peer(exe, "server", "0.0.0.0:0").finish()
    check("server: a non-loopback address is refused", rc == 2 and
          any("not a loopback address" in o for o in other), str(other))
    try:
        serve_model(policy_of([]), "0.0.0.0:0")
        err = ""
    except HostError as e:
        err = str(e)
    check("mlbc_gym: a non-loopback address is refused", "not a loopback" in err, err)


def test_token(exe):
    calls = []
    with serve_model(policy_of(calls), LOCAL + ":0", token="s3cret") as srv:
        addr = "%s:%d" % (LOCAL, srv.port)
        none = run_client(exe, addr, "--n", 2)
        wrong = run_client(exe, addr, "--n", 2, "--token", "s3creT")
        refused = list(calls)
        right = run_client(exe, addr, "--n", 2, "--token", "s3cret")
    for name, res in (("no token", none), ("a wrong token", wrong)):
        check("token: a client with %s is refused, the policy never called" % name,
              not res[1] and "UNAUTHENTICATED" in res[2].get(0, (0, ""))[1] and not refused,
              "%s %s" % (res, refused))
    check("token: a client with the token is answered",
          right[1] == {0: expected(0), 1: expected(1)}, str(right))

    peer = Peer(exe, "server", LOCAL + ":0", "--n", 2, "--token", "s3cret")
    addr = "%s:%s" % (LOCAL, peer.port)
    errs = []
    for token in (None, "wrong"):
        d = mlbc_gym.Driver(addr, timeout=WAIT, token=token)
        for call in (d.reset, lambda: d.step(999)):
            try:
                call()
                errs.append("answered")
            except HostError as e:
                errs.append(str(e))
        d.close()
    try:
        n = mlbc_gym.drive(addr, policy_of([]), timeout=WAIT, token="s3cret")
    except HostError as e:
        n = str(e)
    rc, adv, nulls, other = peer.finish()
    check("token: drivers without or with a wrong token are refused",
          len(errs) == 4 and all("UNAUTHENTICATED" in e for e in errs), str(errs))
    check("token: their advice was not acted on; the right driver's was",
          n == 2 and adv == {0: expected(0), 1: expected(1)}, "%s %s %s" % (n, adv, nulls))


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True,
                   timeout=WAIT)


def make_certs(d):
    """ca, server (localhost, 127.0.0.1), client (by ca); rogue-ca and rogue (by rogue-ca)."""
    for ca in ("ca", "rogue-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                "/CN=" + ca, "-keyout", ca + ".key", "-out", ca + ".pem", cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, ca in (("server", "ca"), ("client", "ca"), ("rogue", "rogue-ca")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout",
                name + ".key", "-out", name + ".csr", cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey",
                ca + ".key", "-CAcreateserial", "-days", "2", "-extfile", "san.ext",
                "-out", name + ".pem", cwd=d)
    return lambda n: os.path.join(d, n)


def test_tls(exe, tmp):
    p = make_certs(tmp)
    server_tls = {"tls_cert": p("server.pem"), "tls_key": p("server.key")}
    calls = []
    with serve_model(policy_of(calls), LOCAL + ":0", **server_tls) as srv:
        addr = "%s:%d" % (LOCAL, srv.port)
        good = run_client(exe, addr, "--n", 2, "--ca", p("ca.pem"))
        n_good = len(calls)
        plain = run_client(exe, addr, "--n", 1, "--retries", -1)
        rogue = run_client(exe, addr, "--n", 1, "--retries", -1, "--ca", p("rogue-ca.pem"))
    check("tls: a client verifying the server's certificate is answered",
          good[1] == {0: expected(0), 1: expected(1)}, str(good))
    check("tls: a plaintext client and one trusting another CA are refused, nothing acted on",
          not plain[1] and 0 in plain[2] and not rogue[1] and 0 in rogue[2] and
          len(calls) == n_good, "%s %s %s" % (plain, rogue, calls))

    peer = Peer(exe, "server", LOCAL + ":0", "--n", 2, "--cert", p("server.pem"), "--key",
                p("server.key"), "--ca", p("ca.pem"))
    addr = "%s:%s" % (LOCAL, peer.port)
    errs = []
    for who in ({"tls_ca": p("ca.pem")},
                {"tls_ca": p("ca.pem"), "tls_cert": p("rogue.pem"), "tls_key": p("rogue.key")}):
        d = mlbc_gym.Driver(addr, timeout=2, **who)
        for call in (d.reset, lambda: d.step(999)):
            try:
                call()
                errs.append("answered")
            except HostError as e:
                errs.append(str(e))
        d.close()
    try:
        n = mlbc_gym.drive(addr, policy_of([]), timeout=WAIT, tls_ca=p("ca.pem"),
                           tls_cert=p("client.pem"), tls_key=p("client.key"))
    except HostError as e:
        n = str(e)
    rc, adv, nulls, other = peer.finish()
    check("tls: drivers without a client certificate or with another CA's are refused",
          len(errs) == 4 and "answered" not in errs, str(errs))
    check("tls: a driver with a client certificate steps the server; nothing else acted on",
          n == 2 and adv == {0: expected(0), 1: expected(1)}, "%s %s %s %s" % (n, adv, nulls,
                                                                            other))


JUNK = [b"\x00" * 64, bytes(range(256)) * 8, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\xff" * 300]


def send_junk(port):
    """Each junk in its own connection; the peer may answer or close, never hang us."""
    for junk in JUNK:
        with socket.create_connection((LOCAL, port), timeout=5) as s:
            try:
                s.sendall(junk)
                s.shutdown(socket.SHUT_WR)
                while s.recv(4096):
                    pass
            except OSError:
                pass            # reset by the peer: refusing junk is its right


def test_garbage(exe):
    calls = []
    with serve_model(policy_of(calls), LOCAL + ":0") as srv:
        send_junk(srv.port)
        res = run_client(exe, "%s:%d" % (LOCAL, srv.port), "--n", 2)
    check("garbage: mlbc_gym's model server survives junk and keeps serving",
          res[1] == {0: expected(0), 1: expected(1)} and len(calls) == 2, str(res))
    peer = Peer(exe, "server", LOCAL + ":0", "--n", 2)
    send_junk(peer.port)
    try:
        n = mlbc_gym.drive("%s:%s" % (LOCAL, peer.port), policy_of([]), timeout=WAIT)
    except HostError as e:
        n = str(e)
    rc, adv, nulls, other = peer.finish()
    check("garbage: the C server survives junk and keeps serving",
          n == 2 and rc == 0 and adv == {0: expected(0), 1: expected(1)},
          "%s %s %s %s" % (n, adv, nulls, other))


def junk_server(stop):
    """A listener that greets every connection with junk and holds it open until stop."""
    ls = socket.socket()
    ls.bind((LOCAL, 0))
    ls.listen(8)
    ls.settimeout(0.1)
    conns = []

    def loop():
        while not stop.is_set():
            try:
                c, _ = ls.accept()
            except socket.timeout:
                continue
            conns.append(c)
            try:
                c.sendall(JUNK[1])
            except OSError:
                pass
        for c in conns + [ls]:
            c.close()
    threading.Thread(target=loop, daemon=True).start()
    return ls.getsockname()[1]


def test_bad_servers(exe):
    stop = threading.Event()
    port = junk_server(stop)
    res = run_client(exe, "%s:%d" % (LOCAL, port), "--n", 2, "--timeout", 700, "--retries", 1,
                     "--backoff", 50)
    stop.set()
    bounded_null("client: a server answering junk: NULL, sticky", res, 0, 2 * 700 + 50,
                 ["Evaluate failed"])
    spec = mlbc_gym.TensorSpec("advice", "int64_t", [1 << 18])
    with serve_model(lambda f, c, i: bytes(spec.nbytes), LOCAL + ":0",
                              advice=spec) as srv:
        res = run_client(exe, "%s:%d" % (LOCAL, srv.port), "--n", 2)
    bounded_null("client: a 2 MB reply to an 8-byte advice is refused unread", res, 0, 10000,
                 ["RESOURCE_EXHAUSTED"])


def test_cli(exe):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "runtime", "python"))
    p = subprocess.run([sys.executable, "-c", "import sys, mlbc_gym; mlbc_gym.serve; "
                        "print(sorted(m for m in sys.modules if m.startswith(('grpc', "
                        "'google'))))"], capture_output=True, text=True, env=env, timeout=WAIT)
    check("import mlbc_gym (the pipe host) imports neither grpc nor protobuf",
          p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr)
    addr = "%s:%d" % (LOCAL, free_port())
    try:
        p = subprocess.run([sys.executable, "-m", "mlbc_gym", "serve-grpc", addr, "--constant",
                            "5", "--", exe, "client", addr, "--n", "2"], capture_output=True,
                           text=True, env=env, timeout=WAIT)
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        out, err = "", "a hang"
    check("cli: python3 -m mlbc_gym serve-grpc ADDRESS -- COMMAND answers the command (and "
          "warns that without a token every local user can connect)",
          out.startswith("advice 0 5 ") and "advice 1 5 " in out and
          "2 observations answered" in err and "warning: no token" in err, out + err)


# ---- mlbc-serve --listen: a model compiled by mlbc as the model server -------------------------

TWICE = """<ir_version: 8, opset_import: ["" : 17]>
twice (int64[1] a) => (int64[1] advice)
{
  advice = Add (a, a)
}
"""


def i64(v):
    return v.to_bytes(8, "little", signed=True)


def evaluate(stub, feats, token=None, context=""):
    """One Evaluate call: feats is [(name, type, shape, data)]; (advice int or None, code)."""
    import grpc
    from mlbc_gym import mlbc_pb2
    obs = mlbc_pb2.Observation(context=context)
    for name, typ, shape, data in feats:
        obs.features.add(name=name, type=typ, shape=shape, data=data)
    md = [("authorization", "Bearer " + token)] if token else []
    try:
        a = stub.Evaluate(obs, timeout=WAIT, metadata=md)
    except grpc.RpcError as e:
        return e.details(), e.code().name
    return int.from_bytes(a.advice.data, "little", signed=True), "OK"


def listen(build_dir, tmp, *opts, env=None):
    """mlbc-serve -v --listen for the TWICE model: (process, port), port None if it did not
    say one (the process is then gone). env: variables added to the environment."""
    model = os.path.join(tmp, "twice.onnxtxt")
    with open(model, "w") as f:
        f.write(TWICE)
    env = dict(os.environ, MLBC_CACHE_DIR=os.path.join(tmp, "cache"), **(env or {}))
    srv = subprocess.Popen([os.path.join(build_dir, "mlbc-serve"), "--model", model, "--listen",
                            LOCAL + ":0", "-v"] + list(opts), stderr=subprocess.PIPE, env=env,
                           bufsize=0)      # unbuffered: the lines after the first stay for later
    line = srv.stderr.readline().decode()
    if "port " not in line:
        srv.kill()
        srv.wait()
        return srv, None
    return srv, int(line.split("port ")[1])


def stop_listening(srv):
    """SIGTERM; what mlbc-serve said on stderr after its port."""
    srv.send_signal(signal.SIGTERM)
    try:
        return srv.communicate(timeout=WAIT)[1].decode()
    except subprocess.TimeoutExpired:
        srv.kill()
        return "a hang after SIGTERM"


def test_listen(build_dir, tmp):
    import grpc
    from mlbc_gym import mlbc_pb2_grpc
    srv, port = listen(build_dir, tmp, "--token", "tok")
    if not check("listen: mlbc-serve --listen says its port", port is not None):
        return
    stub = mlbc_pb2_grpc.InferenceStub(grpc.insecure_channel("%s:%d" % (LOCAL, port)))
    answers = [evaluate(stub, [("a", 7, [1], i64(k))], "tok") for k in (0, 1, -5, 21)]
    check("listen: the compiled model answers Evaluate (advice = a + a)",
          answers == [(0, "OK"), (2, "OK"), (-10, "OK"), (42, "OK")], str(answers))
    res = evaluate(stub, [("z", 1, [2], bytes(8)), ("a", 7, [1], i64(3))], "tok", "f")
    check("listen: features the model does not use are ignored", res == (6, "OK"), str(res))
    res = evaluate(stub, [("a", 7, [1], i64(1))])
    check("listen: no token: UNAUTHENTICATED", res[1] == "UNAUTHENTICATED", str(res))
    res = evaluate(stub, [("b", 7, [1], i64(1))], "tok")
    check("listen: a feature set without the model's input: FAILED_PRECONDITION naming it",
          res[1] == "FAILED_PRECONDITION" and "'a'" in res[0], str(res))
    res = evaluate(stub, [("a", 1, [1], i64(1)[:4])], "tok")
    check("listen: the input with another type is refused", res[1] == "FAILED_PRECONDITION",
          str(res))
    for feats, what in (([("a", 7, [1], b"\0" * 3)], "3 bytes for an int64"),
                        ([("a", 7, [1 << 40], b"")], "2^40 elements"),
                        ([("a", 99, [1], i64(1))], "an unknown type"),
                        ([("a", 7, [1] * 9, i64(1))], "rank 9"),
                        ([("a" * 200, 7, [1], i64(1))], "a 200-byte name")):
        res = evaluate(stub, feats, "tok")
        check("listen: %s: INVALID_ARGUMENT" % what, res[1] == "INVALID_ARGUMENT", str(res))
    send_junk(port)
    res = evaluate(stub, [("a", 7, [1], i64(50))], "tok")
    check("listen: junk on the socket, then still serving", res == (100, "OK"), str(res))
    err = stop_listening(srv)
    check("listen: SIGTERM ends it, 6 calls answered", "6 call(s) answered" in err, err[-300:])


def test_streams(exe, build_dir, tmp):
    """The runner's decisions as the messages of one EvaluateStream call, which mlbc-serve
    --listen's C++ server has (mlbc_gym's has not: Evaluate calls there)."""
    srv, port = listen(build_dir, tmp, "--token", "tok")
    addr = "%s:%s" % (LOCAL, port)
    res = run_client(exe, addr, "--n", 5, "--token", "tok")
    bad = run_client(exe, addr, "--n", 2, "--token", "bad", "--timeout", 2000)
    err = stop_listening(srv)
    check("stream: 5 decisions answered on one EvaluateStream call (advice = a + a)",
          res[0] == 0 and res[1] == {k: 2 * k for k in range(5)} and
          "5 call(s) answered, 1 stream(s)" in err, "%s %s" % (res, err[-300:]))
    bounded_null("stream: a wrong token is refused, nothing answered (the count above)", bad,
                 0, 2000, ["UNAUTHENTICATED"])

    calls = []
    with mlbc_gym.serve_model(policy_of(calls), LOCAL + ":0", engine="grpcio") as gym:
        res = run_client(exe, "%s:%d" % (LOCAL, gym.port), "--n", 3)
    check("stream: mlbc_gym's grpcio server has no EvaluateStream: Evaluate calls instead",
          res[1] == {k: expected(k) for k in range(3)} and gym.calls == 3, str(res))

    for what, outcome, sig, opts, bound, words in (
            ("killed", "NULL after 3 attempts", signal.SIGKILL,
             ["--timeout", 1000, "--retries", 2, "--backoff", 50], 3 * 1000 + 150,
             ["no model server reachable", "UNAVAILABLE"]),
            ("stalled", "NULL after one deadline", signal.SIGSTOP, ["--timeout", 700], 700,
             ["DEADLINE_EXCEEDED"])):
        srv, port = listen(build_dir, tmp)
        client = Peer(exe, "client", "%s:%s" % (LOCAL, port), "--n", 3, "--pause", 300,
                      *opts, listens=False)
        first = client._readline()
        client.head.append(first)
        srv.send_signal(sig)
        res = client.finish()
        srv.send_signal(signal.SIGCONT)
        stop_listening(srv)
        check("stream: advice before the model server was " + what,
              first.startswith("advice 0 0 "), first)
        bounded_null("stream: model server %s mid-session: %s, sticky" % (what, outcome), res,
                     1, bound, words)


# ---- other local users and hostile peers (issue 30) ---------------------------------------

def secret_file(tmp, name, token, mode=0o600):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(token + "\n")
    os.chmod(path, mode)
    return path


def status_kib(pid, field):
    """A /proc/PID/status size (VmRSS: resident now, VmHWM: its peak), in KiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def refused_start(cmd):
    """A command that must refuse to start: (exit status, stderr)."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT)
    return p.returncode, p.stderr


def test_token_sources(exe, build_dir, tmp):
    """Tokens out of ps: --token-file (a file only its owner may use) and MLBC_GRPC_TOKEN;
    a warning where a TCP port is open to every local user."""
    good = secret_file(tmp, "token", "s3cret")
    loose = secret_file(tmp, "loose-token", "s3cret", 0o640)
    peer = Peer(exe, "server", LOCAL + ":0", "--n", 2, "--token-file", good)
    addr = "%s:%s" % (LOCAL, peer.port)
    try:
        mlbc_gym.Driver(addr, timeout=WAIT).reset()
        err = "answered"
    except HostError as e:
        err = str(e)
    try:
        n = mlbc_gym.drive(addr, policy_of([]), timeout=WAIT, token_file=good)
    except (HostError, TypeError) as e:
        n = str(e)
    rc, adv, nulls, other = peer.finish()
    check("token file: a server's token from --token-file: no token refused, the file's "
          "token (given by file too) steps it", "UNAUTHENTICATED" in err and n == 2 and
          adv == {0: expected(0), 1: expected(1)}, "%s; %s %s %s" % (err, n, adv, other))

    twice = os.path.join(tmp, "twice.onnxtxt")
    with open(twice, "w") as f:
        f.write(TWICE)
    serve = [os.path.join(build_dir, "mlbc-serve"), "--model", twice, "--listen", LOCAL + ":0"]
    fifo = os.path.join(tmp, "token.fifo")     # refused, not waited on for a writer
    os.mkfifo(fifo, 0o600)
    for path, what in ((loose, "readable by its group"), (tmp, "a directory"), (fifo, "a FIFO")):
        rc, err = refused_start(serve + ["--token-file", path])
        check("token file: one %s is refused at start" % what,
              rc == 1 and "chmod 600" in err, "rc %s: %s" % (rc, err[-300:]))
    rc, adv, nulls, other = run_client(exe, LOCAL + ":1", "--token-file", loose)
    check("token file: the runner refuses one others may read", rc == 2 and
          any("chmod 600" in o for o in other), str(other))
    try:
        serve_model(policy_of([]), LOCAL + ":0", token_file=loose).stop()
        err = "served"
    except (HostError, TypeError) as e:
        err = str(e)
    check("token file: mlbc_gym refuses one others may read", "chmod 600" in err, err)

    import grpc
    from mlbc_gym import mlbc_pb2_grpc
    srv, port = listen(build_dir, tmp, env={"MLBC_GRPC_TOKEN": "envtok"})
    with grpc.insecure_channel("%s:%s" % (LOCAL, port)) as chan:
        stub = mlbc_pb2_grpc.InferenceStub(chan)
        res = [evaluate(stub, [("a", 7, [1], i64(4))], t) for t in (None, "envtok")]
    err = stop_listening(srv)
    check("MLBC_GRPC_TOKEN: mlbc-serve --listen requires it (no token: UNAUTHENTICATED)",
          res[0][1] == "UNAUTHENTICATED" and res[1] == (8, "OK") and "warning" not in err,
          "%s %s" % (res, err[-300:]))
    srv, port = listen(build_dir, tmp)
    err = stop_listening(srv)
    check("no token on a TCP port: mlbc-serve warns that every local user can connect",
          "warning: no token: every user of this machine" in err, err[-300:])

    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "runtime", "python"))
    peer = Peer(exe, "server", LOCAL + ":0", "--n", 2, "--token", "s3cret")
    p = subprocess.run([sys.executable, "-m", "mlbc_gym", "drive", "%s:%s" % (LOCAL, peer.port),
                        "--constant", "3", "--token-file", good], capture_output=True,
                       text=True, env=env, timeout=WAIT)
    rc, adv, nulls, other = peer.finish()
    check("cli: python3 -m mlbc_gym drive --token-file", adv == {0: 3, 1: 3},
          "%s %s %s" % (adv, other, p.stderr[-300:]))
    addr = "%s:%d" % (LOCAL, free_port())
    env["MLBC_GRPC_TOKEN"] = "s3cret"
    p = subprocess.run([sys.executable, "-m", "mlbc_gym", "serve-grpc", addr, "--constant", "5",
                        "--", exe, "client", addr, "--n", "1", "--retries", "-1"],
                       capture_output=True, text=True, env=env, timeout=WAIT)
    check("cli: mlbc_gym serve-grpc takes MLBC_GRPC_TOKEN (a client without it: refused)",
          "UNAUTHENTICATED" in p.stdout and "advice" not in p.stdout, p.stdout + p.stderr)


def test_unix_sockets(exe, tmp):
    """A unix: server's socket is this user's alone (0600) and replaces nothing."""
    path = os.path.join(tmp, "s.sock")
    peer = Peer(exe, "server", "unix:" + path, "--n", 1, "--timeout", 3000)
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else None
    try:
        n = mlbc_gym.drive("unix:" + path, policy_of([]), timeout=WAIT)
    except HostError as e:
        n = str(e)
    peer.finish()
    check("unix socket: the runner's is mode 0600, it serves, and is gone after",
          mode == 0o600 and n == 1 and not os.path.exists(path), "mode %s, %s" % (
              oct(mode) if mode else mode, n))
    for engine in ("native", "grpcio"):
        try:
            with mlbc_gym.serve_model(policy_of([]), "unix:" + path, engine=engine):
                mode = os.stat(path).st_mode & 0o777
        except (HostError, OSError) as e:
            mode = str(e)
        check("unix socket: mlbc_gym's %s server's is mode 0600, gone after" % engine,
              mode == 0o600 and not os.path.exists(path), str(oct(mode) if
                                                               isinstance(mode, int) else mode))
    other = socket.socket(socket.AF_UNIX)
    other.bind(path)                # someone else's server, listening there
    other.listen(1)
    try:
        rc, adv, nulls, out = Peer(exe, "server", "unix:" + path, "--n", 1,
                                   "--timeout", 500).finish()
        try:
            mlbc_gym.serve_model(policy_of([]), "unix:" + path, engine="grpcio").stop()
            err = "replaced"
        except HostError as e:
            err = str(e)
        with socket.socket(socket.AF_UNIX) as c:
            c.settimeout(5)
            c.connect(path)         # still the other server's
            other.accept()[0].close()
        check("unix socket: a socket already at the path is neither replaced nor stolen",
              rc == 2 and any("never replaced" in o for o in out) and "never replaced" in err,
              "%s; %s" % (out, err))
    except OSError as e:
        check("unix socket: a socket already at the path is neither replaced nor stolen",
              False, "the other server's socket is gone: %s" % e)
    finally:
        other.close()


def test_insecure(exe, build_dir, tmp):
    """A token off loopback without TLS would go in clear: refused unless forced. The
    addresses are TEST-NET (192.0.2.0/24): nothing is bound or dialled there."""
    far = "192.0.2.1:50051"
    rc, adv, nulls, other = run_client(exe, far, "--remote", "--token", "t", "--n", 0)
    check("insecure: a client with a token, no TLS, off loopback: refused", rc == 2 and
          any("clear text" in o for o in other), "rc %s %s" % (rc, other))
    rc, adv, nulls, other = run_client(exe, far, "--remote", "--token", "t", "--n", 0,
                                       "--insecure")
    check("insecure: ... unless --insecure (allow_insecure)", rc == 0 and other == ["done"],
          "rc %s %s" % (rc, other))
    rc, adv, nulls, other = Peer(exe, "server", "192.0.2.1:0", "--remote", "--token",
                                 "t").finish()
    check("insecure: a server likewise", rc == 2 and any("clear text" in o for o in other),
          "rc %s %s" % (rc, other))
    errs = []
    for make in (lambda: mlbc_gym.Driver(far, token="t", allow_remote=True),
                 lambda: serve_model(policy_of([]), "192.0.2.1:0", token="t",
                                     allow_remote=True)):
        try:
            make()
            errs.append("made")
        except HostError as e:
            errs.append(str(e))
    check("insecure: mlbc_gym's driver and server likewise",
          all("clear text" in e for e in errs), str(errs))
    rc, err = refused_start([os.path.join(build_dir, "mlbc-serve"), "--remote", far,
                             "--allow-remote", "--token", "t", "--timeout", "1000",
                             "--channel", os.path.join(tmp, "ch")])
    check("insecure: mlbc-serve --remote likewise, at start", rc == 1 and "clear text" in err,
          "rc %s: %s" % (rc, err[-300:]))


def refused_unread(server, pid, stub, want):
    """A 48 MiB request without the token is refused before it is read (the server's peak
    RSS does not grow); one with the token is then answered want (its a is 21)."""
    evaluate(stub, [("a", 7, [1], i64(1))], "tok")      # warm: the model is bound once
    before = status_kib(pid, "VmHWM")
    big = bytes(48 << 20)
    res = evaluate(stub, [("a", 7, [1], i64(1)), ("z", 2, [len(big)], big)])
    grew = status_kib(pid, "VmHWM") - before
    ok = evaluate(stub, [("a", 7, [1], i64(21))], "tok")
    check("%s: no token, a 48 MiB request: refused unread (peak RSS +%d KiB)" % (server, grew),
          res[1] == "UNAUTHENTICATED" and grew < 16 << 10 and ok == (want, "OK"),
          "%s, +%d KiB, then %s" % (res, grew, ok))


def test_hostile_peers(build_dir, tmp):
    """What a peer can make mlbc-serve --listen hold: an unauthenticated request is refused
    before it is read; a message's size and the bound feature sets are bounded."""
    import grpc
    from mlbc_gym import mlbc_pb2_grpc
    srv, port = listen(build_dir, tmp, "--token", "tok")
    chan = grpc.insecure_channel("%s:%s" % (LOCAL, port))
    stub = mlbc_pb2_grpc.InferenceStub(chan)
    refused_unread("mlbc-serve --listen", srv.pid, stub, 42)
    huge = bytes(65 << 20)
    res = evaluate(stub, [("a", 7, [1], i64(1)), ("z", 2, [len(huge)], huge)], "tok")
    check("a 65 MiB request with the token: RESOURCE_EXHAUSTED (64 MiB at most)",
          res[1] == "RESOURCE_EXHAUSTED", str(res))
    del huge
    before = status_kib(srv.pid, "VmRSS")
    unused = bytes(6 << 20)
    answers = [evaluate(stub, [("a", 7, [1], i64(k)), ("z%d" % k, 2, [len(unused)], unused)],
                        "tok")[0] for k in range(48)]
    grew = status_kib(srv.pid, "VmRSS") - before
    check("48 feature sets of 6 MiB each: answered, the server holds at most its budget "
          "(RSS +%d MiB)" % (grew >> 10), answers == [2 * k for k in range(48)] and
          grew < 150 << 10, "%s, +%d KiB" % (answers, grew))
    chan.close()
    stop_listening(srv)


def test_engines_unread():
    """mlbc_gym's model servers, in a child process each, refuse a call without the token
    before reading it."""
    import grpc
    from mlbc_gym import mlbc_pb2_grpc
    for engine in ("native", "grpcio"):
        child = Peer(sys.executable, os.path.abspath(__file__), "--child-model-server", "-1",
                     "--engine", engine, "--token", "tok", listens=True)
        with grpc.insecure_channel("%s:%s" % (LOCAL, child.port)) as chan:
            # policy_of's answer for a = 21 and no b or c
            refused_unread("mlbc_gym's %s server" % engine, child.proc.pid,
                           mlbc_pb2_grpc.InferenceStub(chan), 21000)
        child.proc.kill()
        child.finish()


def test_layouts():
    """mlbc_gym's native server decodes a feature set once: at most MAX_LAYOUTS are kept."""
    import grpc
    from mlbc_gym import mlbc_pb2_grpc
    with serve_model(lambda f, c, i: len(f), LOCAL + ":0") as srv, \
            grpc.insecure_channel("%s:%d" % (LOCAL, srv.port)) as chan:
        stub = mlbc_pb2_grpc.InferenceStub(chan)
        answers = [evaluate(stub, [("f%d" % k, 7, [1], bytes(8))])[0] for k in range(100)]
        kept = len(srv._layouts)
    check("mlbc_gym's native server keeps at most 64 of 100 feature sets' layouts",
          answers == [1] * 100 and kept <= 64, "%s, %d kept" % (answers[:3], kept))


def raw_advice_server(advice):
    """A grpcio model server answering every Evaluate with the mlbc.Advice advice."""
    import grpc
    from concurrent import futures
    from mlbc_gym import mlbc_pb2_grpc

    class Fixed(mlbc_pb2_grpc.InferenceServicer):
        def Evaluate(self, request, context):
            return advice
    srv = grpc.server(futures.ThreadPoolExecutor(2))
    mlbc_pb2_grpc.add_InferenceServicer_to_server(Fixed(), srv)
    port = srv.add_insecure_port(LOCAL + ":0")
    srv.start()
    return srv, port


def test_advice_checks(exe):
    """Advice of the right byte count but another element type or shape is refused."""
    from mlbc_gym import mlbc_pb2
    for shape, ok in (([3, 2], False), ([1, 2, 3], True)):
        spec = mlbc_gym.TensorSpec("advice", "int64_t", shape)
        with serve_model(lambda f, c, i: list(range(6)), LOCAL + ":0", advice=spec) as srv:
            res = run_client(exe, "%s:%d" % (LOCAL, srv.port), "--n", 1,
                             "--advice-shape", "2,3")
        err = res[2].get(0, (0, ""))[1]
        if ok:
            check("advice of shape [1,2,3] for [2,3] (a dimension of 1 more) is taken",
                  res[1] == {0: 0}, str(res))
        else:
            check("advice of shape [3,2] for [2,3] (same bytes) is refused: NULL, naming both",
                  not res[1] and "shape [3,2], the advice spec [2,3]" in err, str(res))
    a = mlbc_pb2.Advice()
    a.advice.name, a.advice.type, a.advice.data = "advice", 0, i64(5)
    a.advice.shape.append(1)
    srv, port = raw_advice_server(a)
    res = run_client(exe, "%s:%d" % (LOCAL, port), "--n", 1)
    srv.stop(None)
    err = res[2].get(0, (0, ""))[1]
    check("advice without an element type (8 bytes for an int64) is refused: NULL",
          not res[1] and "element type 0, the advice spec 7" in err, str(res))
    peer = Peer(exe, "server", LOCAL + ":0", "--n", 1, "--advice-shape", "2,3",
                "--timeout", 1500)
    d = mlbc_gym.Driver("%s:%s" % (LOCAL, peer.port), timeout=WAIT,
                        advice=mlbc_gym.TensorSpec("advice", "int64_t", [3, 2]))
    try:
        d.reset()
        d.step(list(range(6)))
        err = "taken"
    except HostError as e:
        err = str(e)
    d.close()
    res = peer.finish()
    check("a driver's advice of shape [3,2] for [2,3]: INVALID_ARGUMENT, not acted on",
          "INVALID_ARGUMENT" in err and "shape [3,2]" in err and not res[1],
          "%s; %s" % (err, res))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--child-model-server", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--engine", default="native", help=argparse.SUPPRESS)
    ap.add_argument("--token", help=argparse.SUPPRESS)
    args = ap.parse_args()
    global ENGINE, TAG
    ENGINE = args.engine
    if args.child_model_server is not None:
        return child_model_server(args.child_model_server, args.token)
    os.chdir(ROOT)
    os.environ.pop("MLBC_GRPC_TOKEN", None)     # the servers here have the tokens they are given
    # the native engine's library: this build's (children inherit it)
    os.environ["MLBC_GRPC_LIB"] = os.path.abspath(os.path.join(args.build, "lib", "mlbc",
                                                               "libmlbc_grpc.so"))
    t0 = time.monotonic()
    exe = build(args.build)
    if exe:
        test_server(exe)
        with tempfile.TemporaryDirectory() as tmp:
            test_listen(args.build, tmp)
            test_streams(exe, args.build, tmp)
            test_token_sources(exe, args.build, tmp)
            test_unix_sockets(exe, tmp)
            test_insecure(exe, args.build, tmp)
            test_hostile_peers(args.build, tmp)
        test_engines_unread()
        test_layouts()
        test_advice_checks(exe)
        test_cli(exe)
        tls = check("openssl is installed", subprocess.run(
            ["openssl", "version"], capture_output=True).returncode == 0)
        for ENGINE in ("native", "grpcio"):     # what mlbc_gym's model server stands on
            TAG = "" if ENGINE == "native" else "[grpcio] "
            test_client(exe)
            test_faults(exe)
            test_token(exe)
            with tempfile.TemporaryDirectory() as tmp:
                if tls:
                    test_tls(exe, tmp)
            test_garbage(exe)
            test_bad_servers(exe)
        ENGINE, TAG = "native", "[asan] "
        asan = build_asan(args.build)
        if asan:                # the runner's own code checked; exit 86/87 on a finding
            os.environ.update(mlbctest.SAN_ENV)
            with tempfile.TemporaryDirectory() as tmp:
                test_streams(asan, args.build, tmp)
            test_client(asan)
            test_faults(asan)
            test_garbage(asan)
        TAG = ""
    print("(%.1f s)" % (time.monotonic() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
