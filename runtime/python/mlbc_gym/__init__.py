"""mlbc_gym: the host side of compiler development mode ("gym"), standard library only.

  serve(base, policy, command=[...])   answer a compiler over BASE.in / BASE.out (LLVM's
                                       InteractiveModelRunner protocol, or the two
                                       ML-Compiler-Bridge framings)
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
