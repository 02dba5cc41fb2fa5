"""The host side of the round-trip study (bench/roundtrip.py): answers y = x.W + b with numpy.

  roundtrip_host.py gym BASE WEIGHTS SIZES SESSIONS TIMEOUT_S
      mlbc_gym.serve() on BASE.in / BASE.out (LLVM InteractiveModelRunner framing, numpy
      features): one session per pipe runner, SESSIONS in all; the policy looks the layer
      up by the length of the feature vector.
  roundtrip_host.py gym-protobuf BASE WEIGHTS SIZES SESSIONS TIMEOUT_S
      the same with the protobuf framing (runtime/mlbc.proto); it ends 3 s after the last
      session (sessions on reopened FIFOs merge there, so they are not counted).
  roundtrip_host.py llvm BASE WEIGHTS SIZES SESSIONS TIMEOUT_S
      a minimal host of the same LLVM framing (a diagnostic: it splits the pipe runner's
      cost between the C runner and mlbc_gym): buffered reads of the record lines, each
      payload read straight into a preallocated buffer, np.frombuffer + dot, 4 bytes back.
      Not a general host: one float feature, float advice, no error recovery.
  roundtrip_host.py grpc PORT_FILE WEIGHTS SIZES TIMEOUT_S
  roundtrip_host.py grpc-grpcio PORT_FILE WEIGHTS SIZES TIMEOUT_S
      mlbc_gym's gRPC model server (serve_model, numpy features) on a free loopback port,
      written to PORT_FILE once it listens; answers until SIGTERM (exit 0) or TIMEOUT_S.
      grpc: its native engine (mlbc's C++ server, MLBC_GRPC_LIB), grpc-grpcio: grpcio's.
  roundtrip_host.py raw BASE WEIGHTS SIZES QUERIES ROUNDS TIMEOUT_S
      the pipe floor: no protocol at all. For each round and each size N, QUERIES times:
      read exactly 4*N bytes from BASE.out into a preallocated buffer, np.frombuffer + dot,
      write the 4-byte float32 answer to BASE.in.

WEIGHTS: for each size in SIZES (comma-separated) in order, N float32 W then 1 float32 b.
Both modes give up after TIMEOUT_S seconds without a peer (opening) or, for gym, silence.
Exit status 0 when every expected query was answered.
"""
import errno
import os
import select
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "runtime", "python"))


def load_weights(path, sizes):
    data = np.fromfile(path, dtype=np.float32)
    if data.size != sum(n + 1 for n in sizes):
        raise SystemExit("%s: %d floats, expected %d" % (path, data.size,
                                                          sum(n + 1 for n in sizes)))
    layers, off = {}, 0
    for n in sizes:
        layers[n] = (data[off:off + n], data[off + n])
        off += n + 1
    return layers


def gym(base, layers, sessions, timeout, framing="llvm"):
    from mlbc_gym import serve

    def policy(features, context, index):
        x = features["x"]
        w, b = layers[x.shape[-1]]
        return x.dot(w)[0] + b                 # x is [1, N]

    # The protobuf framing has no header: a runner that reopens the FIFOs before this end saw
    # the previous end of file continues the same session here, so sessions cannot be
    # counted; the host stops when no runner opens them for a while instead.
    counted = framing == "llvm"
    result = serve(base, policy, framing=framing, advice="float", numpy=True,
                   sessions=sessions if counted else None,
                   open_timeout=timeout if counted else min(timeout, 3.0), read_timeout=timeout)
    if result.errors or (len(result.sessions) != sessions if counted else not result.sessions):
        raise SystemExit("gym host: %d of %d sessions%s" % (
            len(result.sessions), sessions,
            "; " + "; ".join(result.errors) if result.errors else ""))


def grpc_server(port_file, layers, timeout, engine):
    import signal
    import threading
    from mlbc_gym import TensorSpec, serve_model

    def policy(features, context, index):
        x = features["x"]
        w, b = layers[x.shape[-1]]
        return x.dot(w)[0] + b                 # x is [1, N]

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with serve_model(policy, "127.0.0.1:0", advice=TensorSpec("y", "float", [1, 1]),
                     numpy=True, engine=engine) as server:
        with open(port_file + ".tmp", "w") as f:
            f.write("%d\n" % server.port)
        os.replace(port_file + ".tmp", port_file)
        done.wait(timeout)


def minimal_llvm(base, layers, sessions, timeout):
    """Sessions end at end of file, or at a new header line when the next runner opened the
    FIFOs before this end saw the previous end of file (as mlbc_gym handles it)."""
    import json
    done = 0
    while done < sessions:
        fd_in, fd_out = open_pair(base, timeout)
        f = os.fdopen(fd_out, "rb", buffering=1 << 12)
        buf = view = x = w = b = None
        while True:
            line = f.readline()
            if not line:
                break                                   # end of file: the session is over
            if line.startswith(b'{"observation":'):
                if f.readinto(view) != len(buf) or f.read(1) != b"\n":
                    raise SystemExit("minimal host: truncated observation")
                os.write(fd_in, (x.dot(w) + b).tobytes())
            elif line.startswith(b'{"features":'):
                if buf is not None:
                    done += 1                           # the previous session, without EOF
                spec = json.loads(line)["features"][0]
                n = spec["shape"][-1]
                w, b = layers[n]
                buf = bytearray(4 * n)
                view = memoryview(buf)
                x = np.frombuffer(buf, dtype=np.float32)
            elif not line.startswith(b'{"context":'):
                raise SystemExit("minimal host: unexpected record %r" % line[:60])
        done += buf is not None
        f.close()
        os.close(fd_in)


def open_pair(base, timeout):
    """BASE.in for writing (retried until the client has its read end), then BASE.out for
    reading, then a wait for the first bytes (a FIFO without a writer yet reads as end of
    file); both blocking afterwards."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd_in = os.open(base + ".in", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            break
        except OSError as e:
            if e.errno != errno.ENXIO or time.monotonic() > deadline:
                raise SystemExit("raw host: cannot open %s.in: %s" % (base, e))
            time.sleep(0.001)
    fd_out = os.open(base + ".out", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    poller = select.poll()
    poller.register(fd_out, select.POLLIN)
    if not poller.poll(max(0, deadline - time.monotonic()) * 1000):
        raise SystemExit("raw host: nothing arrived on %s.out within %g s" % (base, timeout))
    os.set_blocking(fd_in, True)
    os.set_blocking(fd_out, True)
    return fd_in, fd_out


def raw(base, layers, sizes, queries, rounds, timeout):
    fd_in, fd_out = open_pair(base, timeout)
    for _ in range(rounds):
        for n in sizes:
            w, b = layers[n]
            buf = bytearray(4 * n)
            view = memoryview(buf)
            x = np.frombuffer(buf, dtype=np.float32)
            for _ in range(queries):
                got = 0
                while got < 4 * n:
                    k = os.readv(fd_out, [view[got:]])
                    if k == 0:
                        raise SystemExit("raw host: end of file after %d of %d bytes"
                                         % (got, 4 * n))
                    got += k
                os.write(fd_in, (x.dot(w) + b).tobytes())
    os.close(fd_in)
    os.close(fd_out)


def main(argv):
    mode, base, weights, sizes = argv[0], argv[1], argv[2], [int(s) for s in argv[3].split(",")]
    layers = load_weights(weights, sizes)
    if mode in ("gym", "gym-protobuf"):
        gym(base, layers, int(argv[4]), float(argv[5]), mode[4:] or "llvm")
    elif mode in ("grpc", "grpc-grpcio"):
        grpc_server(base, layers, float(argv[4]), "grpcio" if mode == "grpc-grpcio" else "native")
    elif mode == "llvm":
        minimal_llvm(base, layers, int(argv[4]), float(argv[5]))
    elif mode == "raw":
        raw(base, layers, sizes, int(argv[4]), int(argv[5]), float(argv[6]))
    else:
        raise SystemExit("unknown mode %r" % mode)


if __name__ == "__main__":
    main(sys.argv[1:])
