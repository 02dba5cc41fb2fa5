"""gRPC for mlbc_gym, both roles of runtime/mlbc.proto's services, with the policy API of the
pipe host: policy(features, context, index) -> advice.

    from mlbc_gym import serve_model, drive
    with serve_model(policy, "127.0.0.1:0") as server:   # the compiler's runner is a client
        run_compiler(address="127.0.0.1:%d" % server.port)
    n = drive("127.0.0.1:5050", policy)                   # the compiler's runner is a server

Needs python3-grpcio and make's mlbc_pb2.py / mlbc_pb2_grpc.py; mlbc_gym imports this
module only when one of these names is used, so the pipe paths stay standard-library only.

Security, as the C runner (mlbc_grpc.h): token= sends or requires "authorization: Bearer
TOKEN"; tls_cert/tls_key (PEM paths) make a server speak TLS, tls_ca makes it require client
certificates of that CA; a client with tls_ca speaks TLS and verifies the server against it,
presenting tls_cert/tls_key if given. Addresses are loopback only unless allow_remote=True.
"""
import hmac
import ipaddress
import threading
import time
from concurrent import futures

import grpc

from .host import HostError, _advice_encoder
from .specs import MAX_TENSOR_BYTES, ONNX_CODES, ProtocolError, spec_of_tensor
from .specs import spec as _spec

try:
    from . import mlbc_pb2, mlbc_pb2_grpc
except ImportError as e:      # pragma: no cover - a build without make's generated files
    raise ImportError("mlbc_gym's gRPC needs mlbc_pb2.py and mlbc_pb2_grpc.py (run make: "
                      "protoc generates them from runtime/mlbc.proto): %s" % e)

MAX_MESSAGE = MAX_TENSOR_BYTES + (1 << 20)      # an observation of one largest tensor


def check_address(address, allow_remote=False):
    """Refuses a non-loopback address unless allow_remote: a training channel carries a
    compiler's internals and steers its decisions, so exposing it is never a default."""
    if allow_remote or address.startswith("unix:"):
        return
    host = address[1:address.find("]")] if address.startswith("[") else \
        address.rpartition(":")[0]
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise HostError("%s is not a loopback address (127.0.0.0/8, [::1], localhost, "
                        "unix:PATH); pass allow_remote=True to use another one" % address)


def _read(path):
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


def _metadata(token):
    return (("authorization", "Bearer " + token),) if token else None


def _authorized(context, token):
    """The token, compared in constant time."""
    if not token:
        return True
    got = dict(context.invocation_metadata()).get("authorization", "")
    return hmac.compare_digest(got.encode(), ("Bearer " + token).encode())


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

class ModelServer(mlbc_pb2_grpc.InferenceServicer):
    """Answers Evaluate with policy(features, context, index), one call at a time (as the
    pipe host: a policy need not be thread-safe). It has no EvaluateStream (UNIMPLEMENTED,
    so the C runner makes Evaluate calls): a stream would hold one of the workers for a
    whole compiler session, and a few compilers would starve the rest (.streams is 0).
    serve_model's default engine is native.NativeModelServer where it is built, which
    answers streams. .port is the port listened on; .calls counts the answers; .exception
    holds an exception the policy raised (that call fails with INTERNAL, the compiler
    falls back). stop() or a with block ends it."""

    def __init__(self, policy, address="127.0.0.1:0", advice="int64_t", numpy=False,
                 token=None, tls_cert=None, tls_key=None, tls_ca=None, allow_remote=False,
                 workers=2):
        check_address(address, allow_remote)
        self.policy, self.numpy, self.token = policy, numpy, token
        self.make_advice = _AdviceMaker(advice)
        self.calls = self.streams = 0
        self.exception = None
        self._lock = threading.Lock()
        self._server = grpc.server(futures.ThreadPoolExecutor(workers),
                                   options=[("grpc.max_receive_message_length", MAX_MESSAGE)])
        mlbc_pb2_grpc.add_InferenceServicer_to_server(self, self._server)
        self.port = _listen(self._server, address, tls_cert, tls_key, tls_ca)
        self._server.start()

    def Evaluate(self, request, context):
        if not _authorized(context, self.token):    # before anything sent is looked at
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong token")
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

    def stop(self, grace=1.0):
        self._server.stop(grace).wait(grace + 1.0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _listen(server, address, cert, key, ca):
    """Adds the listening port (TLS with cert and key); returns the port."""
    if cert or key:
        if not (cert and key):
            raise ValueError("a TLS server needs tls_cert and tls_key")
        creds = grpc.ssl_server_credentials([(_read(key), _read(cert))],
                                            root_certificates=_read(ca),
                                            require_client_auth=ca is not None)
        port = server.add_secure_port(address, creds)
    elif ca:
        raise ValueError("tls_ca on a server needs tls_cert and tls_key")
    else:
        port = server.add_insecure_port(address)
    if not port:
        raise HostError("cannot listen on %s (address in use?)" % address)
    return port


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
            check_address(address, options.get("allow_remote", False))
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


class Driver:
    """The ML-Compiler-Bridge's step/reset over a compiler's Training service: reset() gets
    the first observation, step(advice) answers it and gets the next; each returns
    (features, context, index), or None when the compiler is done (.done is then True).
    Every call waits at most timeout seconds (for the compiler to start listening, too),
    then raises HostError."""

    def __init__(self, address, advice="int64_t", numpy=False, timeout=10.0, token=None,
                 tls_cert=None, tls_key=None, tls_ca=None, allow_remote=False):
        check_address(address, allow_remote)
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
        """One Step; an unreachable compiler (not listening yet, or refusing the handshake)
        is tried again with backoff until the timeout, and its last error reported: waiting
        for readiness instead would hide why a connection fails behind DEADLINE_EXCEEDED."""
        deadline = time.monotonic() + self.timeout
        delay = 0.02
        while True:
            left = deadline - time.monotonic()
            try:
                reply = self.stub.Step(req, timeout=max(left, 0.001), metadata=self.metadata)
                break
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE or left <= delay:
                    raise HostError("Step at %s: %s: %s" % (self.address, e.code().name,
                                                            e.details()))
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        if reply.done:
            self.done = True
            return None
        o = reply.observation
        return features_of(o, self.numpy), o.context, o.index

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def drive(address, policy, **options):
    """Steps the compiler at address with policy until it is done; returns the number of
    observations answered (options as Driver's)."""
    with Driver(address, **options) as d:
        obs, n = d.reset(), 0
        while obs is not None:
            obs = d.step(policy(*obs))
            n += 1
        return n
