"""The model side of an ML-Compiler-Bridge application service over gRPC: the Bridge's C++
runners call a service that protoc generates per application from its .proto (e.g.
MLBridgeTestService.getAdvice(Request) returns (Reply)). Given that .proto's descriptor set
(protoc --include_imports --descriptor_set_out=app.desc app.proto), this server answers the
method with the pipe host's policy:

    from mlbc_gym import serve_bridge
    with serve_bridge(policy, "app.desc", "127.0.0.1:50051") as server:
        run_compiler()

policy(features, context, index): features maps each request field's name to a list of its
values (one for a singular field); context is None; index counts the calls. Its advice goes
in the reply's first field, as the Bridge's Python puts it there (ctypes values as their
value, numpy as lists; a repeated field takes a list). The security and size options are
rpc.py's (token, TLS, loopback unless allow_remote, max_message).
"""
import threading

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from .host import HostError, _bridge_value
from .rpc import _Served


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


class BridgeModelServer(_Served):
    """Answers one Bridge application method, one call at a time (a policy need not be
    thread-safe). .port, .calls, .exception (the policy's, or advice that does not fit the
    reply: that call fails with INTERNAL), stop() or a with block, as rpc.ModelServer."""

    def __init__(self, policy, descriptors, address="127.0.0.1:0", method=None, token=None,
                 tls_cert=None, tls_key=None, tls_ca=None, allow_remote=False, workers=2,
                 token_file=None, allow_insecure=False, max_message=None):
        service, name, self.request_class, self.reply_class = load_method(descriptors, method)
        if not self.reply_class.DESCRIPTOR.fields:
            raise HostError("%s has no field for the advice" % self.reply_class.DESCRIPTOR.name)
        self.advice_field = self.reply_class.DESCRIPTOR.fields[0]
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
        feats = {}
        for f in request.DESCRIPTOR.fields:
            v = getattr(request, f.name)
            feats[f.name] = list(v) if f.label == f.LABEL_REPEATED else [v]
        with self._lock:
            try:
                out = _bridge_value(self.policy(feats, None, self.calls))
                reply = self.reply_class()
                f = self.advice_field
                if f.label == f.LABEL_REPEATED:
                    getattr(reply, f.name).extend(out if isinstance(out, list) else [out])
                else:
                    setattr(reply, f.name, out[0] if isinstance(out, list) and len(out) == 1
                            else out)
            except Exception as e:
                self.exception = e
                context.abort(grpc.StatusCode.INTERNAL, "policy or advice: %s: %s"
                              % (type(e).__name__, e))
            self.calls += 1
        return reply


def serve_bridge(policy, descriptors, address="127.0.0.1:0", **options):
    """A started BridgeModelServer (options as its constructor's)."""
    return BridgeModelServer(policy, descriptors, address, **options)
