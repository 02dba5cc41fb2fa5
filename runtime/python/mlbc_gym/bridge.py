"""An ML-Compiler-Bridge application service over gRPC, from the model's side: protoc generates
the service per application from its .proto, and given that .proto's descriptor set (protoc
--include_imports --descriptor_set_out=app.desc app.proto) these speak it with the pipe
host's policy, policy(features, context, index) -> advice. features maps each field's name to
a list of its values (one for a singular field); context is None; index counts the calls.
The advice goes in a message's first field, as the Bridge's Python puts it there (ctypes
values as their value, numpy as lists; a repeated field takes a list).

The Bridge's inference mode: the compiler calls (its gRPCModelRunner as a client, or mlbc's
mlbc_runner_grpc_bridge), serve_bridge answers with the request's fields as the features:

    from mlbc_gym import serve_bridge
    with serve_bridge(policy, "app.desc", "127.0.0.1:50051") as server:
        run_compiler()

Its training mode: the compiler serves the method (mlbc_runner_grpc_bridge's server role),
drive_bridge calls it as the Bridge's GrpcCompilerInterface does in client mode, with the
advice in the request and the reply's fields as the features:

    from mlbc_gym import drive_bridge
    n = drive_bridge(policy, "app.desc", "127.0.0.1:50051", "Service/queryCompiler")

The security and size options are rpc.py's (token, TLS, loopback unless allow_remote,
max_message; timeout for a driver).
"""
import threading

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from .host import HostError, _bridge_value
from .native import check_address, resolve_token
from .rpc import _Calling, _channel, _metadata, _retrying, _Served


def _message_class(pool, descriptor):
    make = getattr(message_factory, "GetMessageClass", None)        # protobuf 4.x
    return make(descriptor) if make else \
        message_factory.MessageFactory(pool).GetPrototype(descriptor)


def load_method(descriptors, method=None):
    """(service's full name, method name, request class, reply class) of method ("Service/
    method" or "package.Service/method"; None: the last file's first service's first
    method) in the descriptor set file descriptors. Unary only."""
    try:
        with open(descriptors, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        pool = descriptor_pool.DescriptorPool()
        for fp in fds.file:
            pool.Add(fp)
    except Exception as e:      # DecodeError, TypeError: a file that is no set
        raise HostError("%s is not a FileDescriptorSet (protoc --include_imports "
                        "--descriptor_set_out=FILE APP.proto): %s" % (descriptors, e))
    for fp in reversed(fds.file):
        pkg = fp.package + "." if fp.package else ""
        for sv in fp.service:
            for m in sv.method:
                if method not in (None, sv.name + "/" + m.name, pkg + sv.name + "/" + m.name):
                    continue
                if m.client_streaming or m.server_streaming:
                    raise HostError("%s%s.%s is a streaming method; the Bridge's runners call "
                                    "a unary one" % (pkg, sv.name, m.name))
                md = pool.FindServiceByName(pkg + sv.name).methods_by_name[m.name]
                return (pkg + sv.name, m.name, _message_class(pool, md.input_type),
                        _message_class(pool, md.output_type))
    raise HostError("%s has no %s" % (descriptors, "method " + method if method else "service"))


def _check_advice_field(message_class):
    if not message_class.DESCRIPTOR.fields:
        raise HostError("%s has no field for the advice" % message_class.DESCRIPTOR.name)


def _fields(message):
    """A message's fields as a policy's features: name -> list of values."""
    feats = {}
    for f in message.DESCRIPTOR.fields:
        v = getattr(message, f.name)
        feats[f.name] = list(v) if f.label == f.LABEL_REPEATED else [v]
    return feats


def _with_advice(message_class, out):
    """A message_class holding the policy's output out in its first field."""
    out = _bridge_value(out)
    m = message_class()
    f = message_class.DESCRIPTOR.fields[0]
    if f.label == f.LABEL_REPEATED:
        getattr(m, f.name).extend(out if isinstance(out, list) else [out])
    else:
        setattr(m, f.name, out[0] if isinstance(out, list) and len(out) == 1 else out)
    return m


class BridgeModelServer(_Served):
    """Answers one Bridge application method, one call at a time (a policy need not be
    thread-safe). .port, .calls, .exception (the policy's, or advice that does not fit the
    reply: that call fails with INTERNAL), stop() or a with block, as rpc.ModelServer."""

    def __init__(self, policy, descriptors, address="127.0.0.1:0", method=None, token=None,
                 tls_cert=None, tls_key=None, tls_ca=None, allow_remote=False, workers=2,
                 token_file=None, allow_insecure=False, max_message=None):
        service, name, self.request_class, self.reply_class = load_method(descriptors, method)
        _check_advice_field(self.reply_class)
        self.policy = policy
        self.calls = 0
        self.exception = None
        self._lock = threading.Lock()
        handler = grpc.method_handlers_generic_handler(
            service, {name: grpc.unary_unary_rpc_method_handler(
                self._answer, request_deserializer=self.request_class.FromString,
                response_serializer=self.reply_class.SerializeToString)})
        self._serve(lambda server: server.add_generic_rpc_handlers((handler,)), address, token,
                    token_file, tls_cert, tls_key, tls_ca, allow_remote, allow_insecure,
                    workers, max_message)

    def _answer(self, request, context):
        feats = _fields(request)
        with self._lock:
            try:
                reply = _with_advice(self.reply_class, self.policy(feats, None, self.calls))
            except Exception as e:
                self.exception = e
                context.abort(grpc.StatusCode.INTERNAL, "policy or advice: %s: %s"
                              % (type(e).__name__, e))
            self.calls += 1
        return reply


def serve_bridge(policy, descriptors, address="127.0.0.1:0", **options):
    """A started BridgeModelServer (options as its constructor's)."""
    return BridgeModelServer(policy, descriptors, address, **options)


class BridgeDriver(_Calling):
    """The trainer of the Bridge's training mode, against a compiler serving an application's
    method (mlbc_runner_grpc_bridge in the server role): reset() makes the opening call with
    a default request and gets the first observation; step(advice) sends the advice in the
    request's first field and gets the next. Each returns the reply's fields as a policy's
    features, or None once the compiler has made its last decision (the call ends
    OUT_OF_RANGE; .done is then True). Every call waits at most timeout seconds (for the
    compiler to start listening, too), then raises HostError, as any other failure."""

    def __init__(self, descriptors, address, method=None, timeout=10.0, token=None,
                 tls_cert=None, tls_key=None, tls_ca=None, allow_remote=False, token_file=None,
                 allow_insecure=False):
        service, name, self.request_class, reply_class = load_method(descriptors, method)
        _check_advice_field(self.request_class)
        token = resolve_token(token, token_file)
        check_address(address, allow_remote, token, tls_ca is not None, allow_insecure)
        self.address, self.timeout, self.metadata = address, timeout, _metadata(token)
        self.path = "/%s/%s" % (service, name)
        self.channel = _channel(address, tls_cert, tls_key, tls_ca)
        self.call = self.channel.unary_unary(
            self.path, request_serializer=self.request_class.SerializeToString,
            response_deserializer=reply_class.FromString)
        self.done = False

    def reset(self):
        return self._query(self.request_class())

    def step(self, advice):
        return self._query(_with_advice(self.request_class, advice))

    def _query(self, request):
        try:
            reply = _retrying(lambda left: self.call(request, timeout=left,
                                                     metadata=self.metadata), self.timeout)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.OUT_OF_RANGE:
                self.done = True
                return None
            raise HostError("%s at %s: %s: %s" % (self.path, self.address, e.code().name,
                                                  e.details()))
        return _fields(reply)


def drive_bridge(policy, descriptors, address, method=None, **options):
    """Plays the trainer against the compiler at address with policy until the compiler is
    done; returns the number of observations answered (options as BridgeDriver's)."""
    with BridgeDriver(descriptors, address, method, **options) as d:
        feats, n = d.reset(), 0
        while feats is not None:
            feats = d.step(policy(feats, None, n))
            n += 1
        return n
