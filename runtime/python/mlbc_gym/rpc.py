"""gRPC for mlbc_gym, both roles of runtime/mlbc.proto's services, with the policy API of the
pipe host: policy(features, context, index) -> advice.

    from mlbc_gym import serve_model, drive
    with serve_model(policy, "127.0.0.1:0") as server:   # the compiler's runner is a client
        run_compiler(address="127.0.0.1:%d" % server.port)
    n = drive("127.0.0.1:5050", policy)                   # the compiler's runner is a server

Needs python3-grpcio and make's mlbc_pb2.py / mlbc_pb2_grpc.py; mlbc_gym imports this
module only when one of these names is used, so the pipe paths stay standard-library only.

Security, as the C runner (mlbc_grpc.h): token= (or token_file=, a file only this user may
read or write) sends or requires "authorization: Bearer TOKEN", checked on a call's metadata
before its request is read; tls_cert/tls_key (PEM paths) make a server speak TLS, tls_ca
makes it require client certificates of that CA; a client with tls_ca speaks TLS and
verifies the server against it, presenting tls_cert/tls_key if given. Addresses are
loopback only unless allow_remote=True, and a token goes there without TLS only with
allow_insecure=True. Without a token, a loopback TCP port answers every local user; a
server's unix:PATH socket is created 0600 (only this user may connect) and never replaces
what is at PATH. A model server reads messages of at most max_message bytes (64 MiB).
"""
import hmac
import os
import tempfile
import threading
import time
from concurrent import futures

import grpc

from .host import HostError, _advice_encoder
from .native import check_address, resolve_token
from .specs import MAX_TENSOR_BYTES, ONNX_CODES, ProtocolError, spec_of_tensor
from .specs import spec as _spec

try:
    from . import mlbc_pb2, mlbc_pb2_grpc
except ImportError as e:      # pragma: no cover - a build without make's generated files
    raise ImportError("mlbc_gym's gRPC needs mlbc_pb2.py and mlbc_pb2_grpc.py (run make: "
                      "protoc generates them from runtime/mlbc.proto): %s" % e)

MAX_MESSAGE = MAX_TENSOR_BYTES + (1 << 20)      # an observation of one largest tensor
SERVER_MAX_MESSAGE = 64 << 20                   # what a model server reads by default


def _read(path):
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


def _metadata(token):
    return (("authorization", "Bearer " + token),) if token else None


def _refuse(request_iterator, context):
    context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong token")


class _TokenCheck(grpc.ServerInterceptor):
    """The token, compared in constant time on a call's metadata, before its request is read:
    a refused call gets a streaming handler that never reads the request."""

    def __init__(self, token):
        self.want = ("Bearer " + token).encode()
        self.refuse = grpc.stream_unary_rpc_method_handler(_refuse)

    def intercept_service(self, continuation, details):
        got = dict(details.invocation_metadata).get("authorization", "")
        if hmac.compare_digest(got.encode(errors="replace"), self.want):
            return continuation(details)
        return self.refuse


def features_of(obs, numpy=False):
    """An mlbc.Observation's tensors as the policy's dict name -> flat list (or array)."""
    feats = {}
    for t in obs.features:
        s = spec_of_tensor(t)
        feats[s.name] = s.decode(t.data, numpy)
    return feats


class _AdviceMaker:
    """policy output -> mlbc.Advice of the advice spec."""

    def __init__(self, advice):
        self.spec = _spec(advice)
        self.encode = _advice_encoder(self.spec)

    def __call__(self, out):
        a = mlbc_pb2.Advice()
        a.advice.name, a.advice.type = self.spec.name, ONNX_CODES[self.spec.type]
        a.advice.shape.extend(self.spec.shape)
        a.advice.data = self.encode(out)
        return a


# ---- model server: the compiler calls Inference/Evaluate ------------------------------------

class _Served:
    """A grpcio server with the module's security and size options: started by _serve,
    ended by stop() or a with block (ModelServer, bridge.BridgeModelServer)."""

    def _serve(self, add_handlers, address, token, token_file, tls_cert, tls_key, tls_ca,
               allow_remote, allow_insecure, workers, max_message):
        token = resolve_token(token, token_file)
        check_address(address, allow_remote, token, tls_cert is not None, allow_insecure)
        self._server = grpc.server(
            futures.ThreadPoolExecutor(workers),
            interceptors=[_TokenCheck(token)] if token else None,
            options=[("grpc.max_receive_message_length", max_message or SERVER_MAX_MESSAGE)])
        add_handlers(self._server)
        self.port, self._socket = _listen(self._server, address, tls_cert, tls_key, tls_ca)
        self._server.start()

    def stop(self, grace=1.0):
        self._server.stop(grace).wait(grace + 1.0)
        if self._socket:
            self._socket.remove()
            self._socket = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class ModelServer(mlbc_pb2_grpc.InferenceServicer, _Served):
    """Answers Evaluate with policy(features, context, index), one call at a time (as the
    pipe host: a policy need not be thread-safe). It has no EvaluateStream (UNIMPLEMENTED,
    so the C runner makes Evaluate calls): a stream would hold one of the workers for a
    whole compiler session, and a few compilers would starve the rest (.streams is 0).
    serve_model's default engine is native.NativeModelServer where it is built, which
    answers streams. .port is the port listened on; .calls counts the answers; .exception
    holds an exception the policy raised (that call fails with INTERNAL, the compiler
    falls back). stop() or a with block ends it. The security and size options are the
    module's (see above)."""

    def __init__(self, policy, address="127.0.0.1:0", advice="int64_t", numpy=False,
                 token=None, tls_cert=None, tls_key=None, tls_ca=None, allow_remote=False,
                 workers=2, token_file=None, allow_insecure=False, max_message=None):
        self.policy, self.numpy = policy, numpy
        self.make_advice = _AdviceMaker(advice)
        self.calls = self.streams = 0
        self.exception = None
        self._lock = threading.Lock()
        self._serve(lambda server: mlbc_pb2_grpc.add_InferenceServicer_to_server(self, server),
                    address, token, token_file, tls_cert, tls_key, tls_ca, allow_remote,
                    allow_insecure, workers, max_message)

    def Evaluate(self, request, context):
        try:
            feats = features_of(request, self.numpy)
        except ProtocolError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        with self._lock:
            try:
                reply = self.make_advice(self.policy(feats, request.context, request.index))
            except Exception as e:
                self.exception = e
                context.abort(grpc.StatusCode.INTERNAL, "policy raised %s: %s"
                              % (type(e).__name__, e))
            self.calls += 1
        return reply


class _SocketFile:
    """A server's unix socket, which it made and removes (if it is still that file)."""

    def __init__(self, path):
        self.path, self.id = path, _file_id(path)

    def remove(self):
        if _file_id(self.path) == self.id:
            os.unlink(self.path)


def _file_id(path):
    try:
        st = os.lstat(path)
        return st.st_dev, st.st_ino
    except OSError:
        return None


def _private_port(add_port, address):
    """add_port (which binds at once) on a unix: address, privately and replacing nothing:
    gRPC binds with the umask's mode after removing any socket at the path, so it binds in
    a directory of its own (0700) beside the path; the socket, made 0600 there, is then
    linked to the path, which fails if anything is there. (port, _SocketFile)."""
    path = address[5:]
    path = path[2:] if path.startswith("//") else path
    if os.path.lexists(path):
        raise HostError("%s exists: a unix socket is made, never replaced; remove it if it "
                        "is stale" % path)
    d = tempfile.mkdtemp(prefix=".mlbc-grpc-", dir=os.path.dirname(path) or ".")
    temp = os.path.join(d, "s")
    try:
        port = add_port("unix:" + temp)
        if port:
            os.chmod(temp, 0o600)
            os.link(temp, path)
        return port, _SocketFile(path) if port else None
    except OSError as e:
        raise HostError("cannot make the socket %s: %s" % (path, e.strerror))
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
        os.rmdir(d)


def _listen(server, address, cert, key, ca):
    """Adds the listening port (TLS with cert and key); (port, the unix socket or None)."""
    if cert or key:
        if not (cert and key):
            raise ValueError("a TLS server needs tls_cert and tls_key")
        creds = grpc.ssl_server_credentials([(_read(key), _read(cert))],
                                            root_certificates=_read(ca),
                                            require_client_auth=ca is not None)
        add_port = lambda a: server.add_secure_port(a, creds)       # noqa: E731
    elif ca:
        raise ValueError("tls_ca on a server needs tls_cert and tls_key")
    else:
        add_port = server.add_insecure_port
    port, sock = _private_port(add_port, address) if address.startswith("unix:") else \
        (add_port(address), None)
    if not port:
        raise HostError("cannot listen on %s (address in use?)" % address)
    return port, sock


def serve_model(policy, address="127.0.0.1:0", engine="auto", **options):
    """A started model server, options as ModelServer's. engine "native": on mlbc's C++
    gRPC server (native.NativeModelServer: libmlbc_grpc.so through ctypes; it answers
    EvaluateStream too, and costs a fraction of grpcio per call); "grpcio": ModelServer;
    "auto": native where the library is found, else grpcio."""
    if engine not in ("auto", "native", "grpcio"):
        raise ValueError("engine %r: auto, native or grpcio" % (engine,))
    if engine != "grpcio":
        from . import native
        lib = native.load()
        if lib is not None or engine == "native":
            options.pop("workers", None)
            return native.NativeModelServer(policy, address, lib=lib, **options)
    return ModelServer(policy, address, **options)


# ---- driver: steps a compiler that serves Training/Step -----------------------------------

def _channel(address, tls_cert, tls_key, tls_ca):
    opts = [("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.enable_retries", 0)]
    if tls_ca is None:
        if tls_cert or tls_key:
            raise ValueError("a TLS client needs tls_ca")
        return grpc.insecure_channel(address, options=opts)
    creds = grpc.ssl_channel_credentials(_read(tls_ca), _read(tls_key), _read(tls_cert))
    return grpc.secure_channel(address, creds, options=opts)


def _retrying(call, timeout):
    """call(seconds left)'s result. An unreachable compiler (not listening yet, or refusing
    the handshake: UNAVAILABLE) is called again with backoff until timeout seconds have
    passed; then, or on another error, the last grpc.RpcError is raised. Waiting for
    readiness instead would hide why a connection fails behind DEADLINE_EXCEEDED."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        left = deadline - time.monotonic()
        try:
            return call(max(left, 0.001))
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNAVAILABLE or left <= delay:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


class _Calling:
    """A driver's channel (.channel), closed by close() or a with block (Driver,
    bridge.BridgeDriver)."""

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Driver(_Calling):
    """The ML-Compiler-Bridge's step/reset over a compiler's Training service: reset() gets
    the first observation, step(advice) answers it and gets the next; each returns
    (features, context, index), or None when the compiler is done (.done is then True).
    Every call waits at most timeout seconds (for the compiler to start listening, too),
    then raises HostError."""

    def __init__(self, address, advice="int64_t", numpy=False, timeout=10.0, token=None,
                 tls_cert=None, tls_key=None, tls_ca=None, allow_remote=False, token_file=None,
                 allow_insecure=False):
        token = resolve_token(token, token_file)
        check_address(address, allow_remote, token, tls_ca is not None, allow_insecure)
        self.address, self.numpy, self.timeout = address, numpy, timeout
        self.make_advice = _AdviceMaker(advice)
        self.metadata = _metadata(token)
        self.channel = _channel(address, tls_cert, tls_key, tls_ca)
        self.stub = mlbc_pb2_grpc.TrainingStub(self.channel)
        self.done = False

    def reset(self):
        return self._step(mlbc_pb2.StepRequest())

    def step(self, advice):
        req = mlbc_pb2.StepRequest()
        req.advice.CopyFrom(self.make_advice(advice))
        return self._step(req)

    def _step(self, req):
        try:
            reply = _retrying(lambda left: self.stub.Step(req, timeout=left,
                                                          metadata=self.metadata),
                              self.timeout)
        except grpc.RpcError as e:
            raise HostError("Step at %s: %s: %s" % (self.address, e.code().name, e.details()))
        if reply.done:
            self.done = True
            return None
        o = reply.observation
        return features_of(o, self.numpy), o.context, o.index


def drive(address, policy, **options):
    """Steps the compiler at address with policy until it is done; returns the number of
    observations answered (options as Driver's)."""
    with Driver(address, **options) as d:
        obs, n = d.reset(), 0
        while obs is not None:
            obs = d.step(policy(*obs))
            n += 1
        return n
