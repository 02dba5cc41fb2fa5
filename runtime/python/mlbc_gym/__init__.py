"""mlbc_gym: the host side of compiler development mode ("gym"), standard library only.

  serve(base, policy, command=[...])   answer a compiler over BASE.in / BASE.out (LLVM's
                                       InteractiveModelRunner protocol, or the two
                                       ML-Compiler-Bridge framings)
  serve_model(policy) / drive(addr, policy) / Driver
                                       the same policies over gRPC (runtime/mlbc.proto): a
                                       model server the compiler calls, or a driver stepping
                                       a compiler that serves (needs python3-grpcio)
  serve_bridge(policy, "app.desc")     the model side of an ML-Compiler-Bridge application's
                                       gRPC service, given its descriptor set (the Bridge's
                                       inference mode: the compiler calls)
  drive_bridge(policy, "app.desc", addr) / BridgeDriver
                                       its training mode: the compiler serves the method,
                                       the trainer calls it with advice
  LogReader / read_log / LogWriter     LLVM training logs (TrainingLogger format)
  TensorSpec                           LLVM's tensor spec and raw tensor coding

See README.md next to this package.
"""
from .specs import TensorSpec, ProtocolError, TYPES, have_numpy
from .log import LogReader, LogWriter, Observation, Record, read_log
from .host import (Channel, HostError, ServeResult, Session, make_fifo, serve,
                   serve_channels)

__all__ = ["TensorSpec", "ProtocolError", "TYPES", "have_numpy", "LogReader", "LogWriter",
           "Observation", "Record", "read_log", "Channel", "HostError", "ServeResult",
           "Session", "make_fifo", "serve", "serve_channels"]
__version__ = "0.1"

_RPC = ("serve_model", "drive", "Driver", "ModelServer")
_BRIDGE = ("serve_bridge", "BridgeModelServer", "drive_bridge", "BridgeDriver")


def __getattr__(name):
    """The gRPC names, importing grpc only when one is used (PEP 562): the pipe paths stay
    standard-library only."""
    if name in _RPC:
        from . import rpc
        return getattr(rpc, name)
    if name in _BRIDGE:
        from . import bridge
        return getattr(bridge, name)
    raise AttributeError("module 'mlbc_gym' has no attribute %r" % name)
