"""The host (training) side of development mode: answers a compiler's observations.

    from mlbc_gym import serve
    def policy(features, context, index):
        return 0                                   # e.g. never inline
    result = serve("/tmp/ch", policy, command=["clang-19", "-O2", "-c", "x.c", "-mllvm",
                   "-enable-ml-inliner=release", "-mllvm",
                   "-inliner-interactive-channel-base=/tmp/ch"])

serve() creates BASE.in and BASE.out with mkfifo, starts the command, and serves sessions in
a row (each one a header, contexts and observations, ended by EOF) until the command has
exited. Opening never blocks: BASE.in is opened for writing first (O_NONBLOCK, retried while
no compiler has it open for reading), then BASE.out for reading, the order LLVM requires. The
watchdog is that retry loop: when the command exits without (re)opening the pipes, as clang
does at -O0, the host stops instead of hanging in open().
"""
import ctypes
import errno
import json
import os
import select
import stat
import struct
import subprocess
import sys
import threading
import time

from .log import LogReader, observation_number
from .specs import (ONNX_CODES, TYPES, ProtocolError, TensorSpec, _np, dumps, flatten, loads,
                    spec as _spec, spec_of_tensor)

FRAMINGS = ("llvm", "bitstream", "json", "protobuf")
MAX_MESSAGE = 1 << 28           # largest Bridge message accepted (bytes)
_SLICE = 0.05                   # poll slice, seconds
_SLICE_MS = int(_SLICE * 1000)
STREAM_BUFFER = 1 << 12         # bytes: a small record whole, or a large one's first page
READ_CHUNK = 1 << 20            # a message's first piece; the next ones double (_FdStream.read)


class HostError(Exception):
    """A session failed (protocol error, the compiler went away mid-record, ...)."""


class Session:
    """What happened in one session of one channel."""

    def __init__(self, channel, framing):
        self.channel = channel
        self.framing = framing
        self.features = None        # list of TensorSpec (LLVM and bitstream framings)
        self.advice = None          # TensorSpec
        self.observations = 0
        self.contexts = []          # context names in order of appearance (LLVM, protobuf)
        self.error = None           # None, or a message

    def __repr__(self):
        return "Session(%s, %d observations%s)" % (
            self.channel, self.observations, ", error: " + self.error if self.error else "")


class ServeResult:
    def __init__(self):
        self.returncode = None      # the command's exit status (None without a command)
        self.sessions = []
        self.timed_out = False      # the command was killed after command_timeout

    @property
    def observations(self):
        return sum(s.observations for s in self.sessions)

    @property
    def errors(self):
        return [s.error for s in self.sessions if s.error]

    @property
    def ok(self):
        return not self.errors and not self.timed_out and self.returncode in (0, None)

    def __repr__(self):
        return "ServeResult(returncode=%r, sessions=%r)" % (self.returncode, self.sessions)


# ---- file descriptor plumbing -------------------------------------------------------------

class _FdStream:
    """A non-blocking descriptor as a buffered stream (readline, read, readinto) that blocks
    with bounds: a wait returns end of file once stop() is true (the compiler has gone, so a
    pipe it never opened counts as ended) and raises HostError after timeout seconds of
    silence (None: no bound).

    Built for the observation path: readinto reads the rest of its destination and whatever
    follows into this buffer with one readv(2), so a payload is read straight into its array
    (only what the line's read took along is copied) and the newline after it costs no call
    of its own. A record's first read waits with poll(2) first (the compiler is thinking, and
    a FIFO whose writer has not opened it yet reads as end of file); later reads try first."""

    def __init__(self, fd, stop, timeout=None, tee=None, size=STREAM_BUFFER):
        self.fd, self.stop, self.timeout, self.tee = fd, stop, timeout, tee
        self.buf = bytearray(size)
        self.view = memoryview(self.buf)
        self.pos = self.end = 0
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)

    def _wait(self):
        """Blocks until the descriptor is readable; False when the compiler is gone."""
        waited = 0.0
        while not self.poller.poll(_SLICE_MS):
            waited += _SLICE
            if self.stop():
                return False
            if self.timeout is not None and waited >= self.timeout:
                raise HostError("the compiler sent nothing for %.1f s" % self.timeout)
        return True

    def _readv(self, bufs, wait_first):
        """One readv(2) into bufs: the byte count; 0 at end of file or once stop() is true."""
        if wait_first and not self.poller.poll(_SLICE_MS) and not self._wait():
            return 0
        while True:
            try:
                n = os.readv(self.fd, bufs)
            except (BlockingIOError, InterruptedError):
                if not self._wait():
                    return 0
                continue
            if n and self.tee is not None:
                left = n
                for b in bufs:
                    self.tee.write(b[:left])
                    left -= len(b)
                    if left <= 0:
                        break
            return n

    def readline(self, limit=-1):
        """Up to and including the next newline (at most limit bytes); b"" at end of file."""
        if self.pos == self.end:
            self.pos, self.end = 0, self._readv([self.view], True)
        parts, size = [], 0
        while self.pos < self.end:
            nl = self.buf.find(b"\n", self.pos, self.end)
            stop = self.end if nl < 0 else nl + 1
            if 0 <= limit < size + stop - self.pos:
                stop = self.pos + limit - size
            parts.append(self.view[self.pos:stop].tobytes())
            size += stop - self.pos
            self.pos = stop
            if (nl >= 0 and stop == nl + 1) or size == limit:
                break
            if self.pos == self.end:
                self.pos, self.end = 0, self._readv([self.view], True)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readinto(self, view, wait_first=False):
        """Fills view (a writable byte view) unless the stream ends first: the byte count.
        wait_first: a record's first read, which waits with poll(2) first."""
        want = len(view)
        got = min(want, self.end - self.pos)
        view[:got] = self.view[self.pos:self.pos + got]
        self.pos += got
        while got < want:
            self.pos = self.end = 0
            n = self._readv([view[got:], self.view], wait_first and got == 0)
            if n == 0:
                break
            if n > want - got:
                self.end = n - (want - got)
                n = want - got
            got += n
        return got

    def read(self, n):
        """n bytes, fewer only at end of file. A length prefix is only a peer's claim: past
        READ_CHUNK, the bytes are read into pieces that double as they arrive, so a message
        that never comes costs nothing near its announced size."""
        if self.end - self.pos >= n:
            self.pos += n
            return bytes(self.buf[self.pos - n:self.pos])
        parts, got, size = [], 0, READ_CHUNK
        while got < n:
            part = bytearray(min(size, n - got))
            # a message's first read waits: before the compiler opens BASE.out, the FIFO
            # reads as end of file (the Bridge's opens BASE.out after BASE.in, sometimes
            # long after), which is no end of a session
            k = self.readinto(memoryview(part), got == 0)
            parts.append(part if k == len(part) else part[:k])
            got += k
            if k < len(part):
                break
            size *= 2
        return bytes(parts[0]) if len(parts) == 1 else b"".join(parts)


def _open_stream(fd, stop, timeout=None, tee=None):
    return _FdStream(fd, stop, timeout, tee)


def _write_all(fd, data, stop, timeout=None):
    try:
        done = os.write(fd, data)               # the usual case: the pipe has room
    except (BlockingIOError, InterruptedError):
        done = 0
    except BrokenPipeError:
        raise HostError("the compiler closed its end of the advice pipe")
    if done < len(data):
        _write_rest(fd, memoryview(data)[done:], stop, timeout)


def _write_rest(fd, view, stop, timeout):
    """Writes the rest of _write_all's bytes, waiting in poll slices while the pipe is
    full."""
    waited = 0.0
    poller = None
    while view:
        try:
            view = view[os.write(fd, view):]
            continue
        except (BlockingIOError, InterruptedError):
            pass
        except BrokenPipeError:
            raise HostError("the compiler closed its end of the advice pipe")
        if poller is None:
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
        if not poller.poll(_SLICE_MS):
            waited += _SLICE
            if stop():
                raise HostError("the compiler went away while the host was answering")
            if timeout is not None and waited >= timeout:
                raise HostError("the compiler did not read the advice for %.1f s" % timeout)


def _advice_encoder(spec):
    """advice -> raw bytes for spec; a scalar advice (the usual case) is packed directly,
    anything struct cannot pack as is goes through spec.encode and its checks."""
    if spec.count != 1:
        return spec.encode
    pack = struct.Struct("=" + TYPES[spec.type][0]).pack

    def encode(value):
        try:
            return pack(value)
        except (struct.error, TypeError, ValueError, OverflowError):
            return spec.encode(value)
    return encode


def _bridge_value(value):
    """advice -> what the ML-Compiler-Bridge's Python host puts in its JSON reply: ctypes
    values as their value, numpy arrays and scalars as lists and numbers, tuples as lists."""
    if isinstance(value, ctypes._SimpleCData):
        return value.value
    if _np is not None and isinstance(value, (_np.ndarray, _np.generic)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_bridge_value(v) for v in value]
    return value


def _bridge_bytes(value):
    """advice -> bytes as the Bridge's Python host packs it (its SerDes, bytes format): an int
    or a bool as a 4-byte int, a float as a 4-byte float, a ctypes value as its C type
    (c_long, c_double: 8 bytes), a one-character string as its byte, lists element by
    element; numpy arrays and scalars as their dtype's bytes, bytes as they are."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, ctypes._SimpleCData):
        return bytes(value)
    if _np is not None and isinstance(value, (_np.ndarray, _np.generic)):
        return _np.ascontiguousarray(value).tobytes()
    if isinstance(value, (list, tuple)):
        return b"".join(_bridge_bytes(v) for v in value)
    if isinstance(value, str) and len(value) == 1:
        return value.encode("latin-1")
    try:
        if isinstance(value, int):
            return struct.pack("=i", value)
        if isinstance(value, float):
            return struct.pack("=f", value)
    except struct.error as e:
        raise HostError("advice %r does not fit the Bridge's 4-byte packing (%s): give a "
                        "ctypes value (c_long, c_double) instead" % (value, e))
    raise HostError("advice of type %s: the Bridge's packing takes int, float, bool, ctypes, "
                    "lists, numpy arrays and bytes" % type(value).__name__)


def check_private(fd, path):
    """A channel end must be a FIFO that belongs to this user and is closed to others (mode
    0600): one planted in a shared folder by someone else (or a file put there) could read the
    compiler's features or answer for us. Checked on the descriptor, after opening, so that
    the path cannot be swapped in between (fd may also be an os.stat_result, for a check
    before opening)."""
    st = fd if isinstance(fd, os.stat_result) else os.fstat(fd)
    if not stat.S_ISFIFO(st.st_mode):
        raise HostError("refusing %s: it is not a FIFO" % path)
    if st.st_uid != os.geteuid():
        raise HostError("refusing %s: the FIFO belongs to uid %d, not to this user (%d)" % (
            path, st.st_uid, os.geteuid()))
    if st.st_mode & 0o077:
        raise HostError("refusing %s: its mode %04o lets other users open it (mode 0600 is "
                        "needed)" % (path, stat.S_IMODE(st.st_mode)))


def make_fifo(path):
    """mkfifo path (mode 0600); an existing FIFO is kept if it is this user's and private,
    refused otherwise. Anything else at the path is refused and left alone: a regular file
    there may be a stale one (clang writes BASE.out as a file when it finds no FIFO), or
    someone's data; only its owner can tell."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISFIFO(st.st_mode):
        check_private(st, path)
        return
    if st is not None:
        kind = "a regular file" if stat.S_ISREG(st.st_mode) else \
            "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a FIFO"
        raise HostError("%s exists and is %s; it is left as it is: remove it first if it is "
                        "stale (a compiler that found no FIFO writes a regular file there)" % (
                            path, kind))
    os.mkfifo(path, 0o600)


# ---- one channel ----------------------------------------------------------------------------

class Channel:
    """One channel (BASE.in / BASE.out) and the policy that answers it.

    policy(features, context, index) -> advice: features is a dict name -> flat list (or a
    numpy array of the spec's shape with numpy=True); context is the current context name
    (None in the Bridge framings, which have none); index is the observation number (per
    context in the LLVM framing, per session in the Bridge framings). The advice may be a
    number, a (nested) list, a numpy array, or raw bytes.

    advice: the advice spec for the Bridge framings (the compiler does not send it there);
    in the LLVM framing the header's "advice" spec is used (this one only if it lacks one).
    """

    def __init__(self, base, policy, framing="llvm", advice="int64_t", numpy=False,
                 record=None, max_sessions=None, open_timeout=None, read_timeout=None,
                 on_session=None):
        if framing not in FRAMINGS:
            raise ValueError("framing must be one of %s" % ", ".join(FRAMINGS))
        self.base = str(base)
        self.policy = policy
        self.framing = framing
        self.advice = _spec(advice) if advice is not None else None
        self.numpy = numpy
        self.record = record
        self.max_sessions = max_sessions
        self.open_timeout = open_timeout
        self.read_timeout = read_timeout
        self.on_session = on_session
        self.sessions = []
        self.exception = None       # an exception raised by the policy, re-raised by serve

    @property
    def in_path(self):
        return self.base + ".in"

    @property
    def out_path(self):
        return self.base + ".out"

    def create(self):
        make_fifo(self.in_path)
        make_fifo(self.out_path)

    def _open_pair(self, stop, abort):
        """BASE.in for writing (retried while no compiler reads it), then BASE.out for
        reading. Returns (fd_in, fd_out) or None when the compiler is gone / the wait is
        over."""
        t0 = time.monotonic()
        delay = 0.001
        while True:
            gone = stop()             # sample before trying: a last attempt after exit
            try:
                fd_in = os.open(self.in_path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW |
                                os.O_CLOEXEC)
                try:
                    check_private(fd_in, self.in_path)
                except HostError:
                    os.close(fd_in)
                    raise
                break
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
            if gone or abort.is_set():
                return None
            if self.open_timeout is not None and time.monotonic() - t0 >= self.open_timeout:
                return None
            time.sleep(delay)
            delay = min(delay * 2, 0.01)
        fd_out = os.open(self.out_path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW |
                         os.O_CLOEXEC)
        try:
            check_private(fd_out, self.out_path)
        except HostError:
            os.close(fd_in)
            os.close(fd_out)
            raise
        return fd_in, fd_out

    def run(self, stop, abort):
        """Serves sessions until the compiler is gone (stop()), max_sessions, open_timeout,
        or abort is set."""
        tee = open(self.record, "ab") if isinstance(self.record, str) else self.record
        try:
            while not abort.is_set():
                if self.max_sessions is not None and len(self.sessions) >= self.max_sessions:
                    return
                fds = self._open_pair(stop, abort)
                if fds is None:
                    return
                fd_in, fd_out = fds
                self._begin()
                try:
                    stream = _open_stream(fd_out, lambda: stop() or abort.is_set(),
                                       self.read_timeout, tee)
                    if self.framing == "llvm":
                        self._serve_llvm(stream, fd_in, stop)
                    else:
                        self._serve_bridge(stream, fd_in, stop)
                except (HostError, ProtocolError) as e:
                    self._current.error = str(e)
                except Exception as e:  # the policy raised: stop everything
                    self._current.error = "policy raised %s: %s" % (type(e).__name__, e)
                    self.exception = e
                    abort.set()
                finally:
                    os.close(fd_in)
                    os.close(fd_out)
                    if tee is not None:
                        tee.flush()
                self._end()
        except Exception as e:      # opening failed (FIFO removed, permissions, ...)
            self.exception = e
            abort.set()
        finally:
            if tee is not None and tee is not self.record:
                tee.close()

    def _begin(self):
        self._current = Session(self.base, self.framing)
        return self._current

    def _end(self):
        sess = self._current
        if sess.observations or sess.error or sess.features is not None:
            self.sessions.append(sess)
            if self.on_session is not None:
                self.on_session(sess)

    # -- LLVM InteractiveModelRunner framing
    def _llvm_session(self, sess, reader):
        """Session sess takes the specs of the header reader just read; returns it and the
        advice encoder."""
        sess.features = reader.features
        sess.advice = reader.advice or self.advice
        if sess.advice is None:
            raise HostError("the header has no advice spec and none was given")
        return sess, _advice_encoder(sess.advice)

    def _serve_llvm(self, stream, fd_in, stop):
        try:
            reader = LogReader(stream, self.numpy)
        except EOFError:
            return                  # opened and closed without a header
        sess, encode = self._llvm_session(self._current, reader)
        while True:
            at, line = reader.next_line()
            if line is None:
                return
            n = observation_number(line)
            if n is not None:       # the hot path: no JSON, no Record, no copies
                reader.count_observation(n)
                # no local name for the features: arrays nobody kept are reused
                out = self.policy(reader.read_features(), reader.context, n)
                _write_all(fd_in, encode(out), stop, self.read_timeout)
                sess.observations += 1
                continue
            rec = reader.record(line, at)
            if rec.kind == "context":
                sess.contexts.append(rec.context)
            elif rec.kind == "header":
                # A new session on the same descriptors: the next compiler (or runner)
                # reopened the FIFOs before this end noticed the previous EOF.
                self._end()
                sess, encode = self._llvm_session(self._begin(), reader)
            elif rec.kind == "observation":     # spelled unlike LLVM, e.g. with spaces
                out = self.policy(rec.features, rec.context, rec.id)
                _write_all(fd_in, encode(out), stop, self.read_timeout)
                sess.observations += 1
            else:
                raise ProtocolError("unexpected %s record in an interactive stream" % rec.kind)

    # -- ML-Compiler-Bridge framings: 8-byte length + message
    def _serve_bridge(self, stream, fd_in, stop):
        sess = self._current
        advice = self.advice
        sess.advice = advice
        # no advice spec: each reply typed by the policy's value, as the Bridge does
        encode = _advice_encoder(advice) if advice is not None else _bridge_bytes
        self._bitstream_line = None
        index, context = 0, None
        if self.framing == "protobuf" and advice is None:
            raise HostError("the protobuf framing needs an advice spec")
        if self.framing == "protobuf":
            pb = _mlbc_pb2()
            reply = pb.Advice()
            reply.advice.name, reply.advice.type = advice.name, ONNX_CODES[advice.type]
            reply.advice.shape.extend(advice.shape)
        while True:
            hdr = stream.read(8)
            if not hdr:
                return
            if len(hdr) < 8:
                raise ProtocolError("truncated length prefix (%d of 8 bytes)" % len(hdr))
            n = int.from_bytes(hdr, sys.byteorder)
            if n > MAX_MESSAGE:
                raise ProtocolError("message of %d bytes announced (limit %d)"
                                    % (n, MAX_MESSAGE))
            msg = stream.read(n)
            if len(msg) < n:
                raise ProtocolError("truncated message (%d of %d bytes)" % (len(msg), n))
            if self.framing == "bitstream":
                features = self._parse_bitstream(sess, msg)
            elif self.framing == "protobuf":
                features, context, index = self._parse_protobuf(sess, pb, msg)
            else:
                features = self._parse_json(msg)
            out = self.policy(features, context, index)
            if self.framing == "bitstream":
                body = encode(out)
            elif self.framing == "protobuf":
                reply.advice.data = encode(out)
                body = reply.SerializeToString()
            elif advice is None:
                if isinstance(out, (bytes, bytearray)):
                    raise HostError("the JSON framing cannot send raw bytes")
                body = json.dumps({"out": _bridge_value(out)}).encode("utf-8")
            else:
                if isinstance(out, (bytes, bytearray)):
                    raise HostError("the JSON framing cannot send raw bytes")
                flat = flatten(out)
                value = flat[0] if len(flat) == 1 and not isinstance(out, (list, tuple)) \
                    else flat
                body = dumps({"out": value})
            _write_all(fd_in, len(body).to_bytes(8, sys.byteorder) + body, stop,
                       self.read_timeout)
            sess.observations += 1
            index += 1

    def _bitstream_specs(self, line):
        """The specs of a bitstream header line; a compiler sends the same line with every
        message, so the last one parsed is kept."""
        if line != self._bitstream_line:
            try:
                h = loads(line)
                self._bitstream_specs_of = [TensorSpec.from_json(s) for s in h["features"]]
            except (ValueError, KeyError, TypeError) as e:
                raise ProtocolError("bad bitstream header: %s" % e)
            self._bitstream_line = line
        return self._bitstream_specs_of

    def _parse_bitstream(self, sess, msg):
        nl = msg.find(b"\n")
        if nl < 0:
            raise ProtocolError("bitstream message without a header line")
        specs = self._bitstream_specs(msg[:nl])
        if sess.features is None:
            sess.features = specs
        off = nl + 1
        feats = {}
        view = memoryview(msg)
        for s in specs:
            if off + s.nbytes > len(msg):
                raise ProtocolError("bitstream message too short for tensor %r" % s.name)
            if self.numpy and s.nbytes and _np is not None:   # a view of the message, no copy
                feats[s.name] = _np.frombuffer(msg, TYPES[s.type][2], s.count,
                                               off).reshape(s.shape)
            else:
                feats[s.name] = s.decode(view[off:off + s.nbytes], self.numpy)
            off += s.nbytes
        if msg[off:] != b"\n":
            raise ProtocolError("bitstream message: %d unexpected byte(s) after the tensors"
                                % (len(msg) - off))
        return feats

    def _parse_protobuf(self, sess, pb, msg):
        """(features, context, index) of an mlbc.Observation message."""
        try:
            obs = pb.Observation.FromString(msg)
        except Exception as e:      # google.protobuf's DecodeError, or a RuntimeWarning's kin
            raise ProtocolError("the message is not an mlbc.Observation: %s" % e)
        feats, specs = {}, []
        for t in obs.features:
            s = spec_of_tensor(t)
            feats[s.name] = s.decode(t.data, self.numpy)
            specs.append(s)
        if sess.features is None:
            sess.features = specs
        if not sess.contexts or sess.contexts[-1] != obs.context:
            sess.contexts.append(obs.context)
        return feats, obs.context, obs.index

    def _parse_json(self, msg):
        try:
            obj = loads(msg)
        except ValueError as e:
            raise ProtocolError("bad JSON message: %s" % e)
        if not isinstance(obj, dict):
            raise ProtocolError("JSON message is not an object")
        feats = {}
        for k, v in obj.items():
            v = flatten(v)
            if self.numpy:
                import numpy as np
                v = np.asarray(v)
            feats[k] = v
        return feats


def _mlbc_pb2():
    """runtime/mlbc.proto for Python (protoc's output, made by make; needs python3-protobuf):
    imported only by the protobuf framing, so the others stay standard-library only."""
    try:
        from . import mlbc_pb2
    except ImportError as e:
        raise HostError("the protobuf framing needs mlbc_pb2 (run make: protoc generates it "
                        "from runtime/mlbc.proto) and python3-protobuf: %s" % e)
    return mlbc_pb2


# ---- serving ---------------------------------------------------------------------------------

def serve_channels(channels, command=None, command_timeout=None, popen_kwargs=None):
    """Serves several channels at once (one thread each, so that a compiler blocked opening
    one channel never stalls another), e.g. regalloc eviction and priority together.
    channels: list of Channel. Returns a ServeResult; re-raises a policy's exception (after
    killing the command, since LLVM 19 would spin forever on a closed advice pipe)."""
    result = ServeResult()
    for ch in channels:
        ch.create()
    gone = threading.Event()
    abort = threading.Event()
    if command is None and all(c.max_sessions is None and c.open_timeout is None
                               for c in channels):
        raise ValueError("without a command, give max_sessions or open_timeout")
    threads = [threading.Thread(target=c.run, args=(gone.is_set, abort), daemon=True,
                                name="mlbc_gym:" + c.base) for c in channels]
    for t in threads:
        t.start()
    proc = None
    try:
        if command is not None:
            proc = subprocess.Popen(command, **(popen_kwargs or {}))
            t0 = time.monotonic()
            while True:
                try:
                    result.returncode = proc.wait(timeout=_SLICE)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if abort.is_set() or (command_timeout is not None and
                                      time.monotonic() - t0 > command_timeout):
                    result.timed_out = not abort.is_set()
                    proc.kill()
                    result.returncode = proc.wait()
                    break
            gone.set()
        for t in threads:
            while t.is_alive():
                t.join(0.1)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        gone.set()
        abort.set()
    for c in channels:
        result.sessions.extend(c.sessions)
    for c in channels:
        if c.exception is not None:
            raise c.exception
    return result


def serve(channel_base, policy, command=None, framing="llvm", advice="int64_t", numpy=False,
          record=None, sessions=None, open_timeout=None, read_timeout=None,
          command_timeout=None, popen_kwargs=None, on_session=None):
    """Creates the FIFOs, runs command (a list, as for subprocess) and answers every
    observation with policy(features, context, index) until the command exits.

    framing: "llvm" (InteractiveModelRunner), "bitstream" or "json" (ML-Compiler-Bridge).
    advice: advice spec for the Bridge framings (TensorSpec, type name or JSON dict); None:
    each reply typed by the policy's value as the Bridge's Python host types it (int: 4 bytes,
    float: a float, ctypes.c_long / c_double: 8 bytes; JSON as json.dumps writes it).
    numpy: hand the policy numpy arrays shaped as the specs instead of flat lists.
    record: path or binary file receiving a copy of everything the compiler sent (for the
        LLVM framing a log that LogReader reads back).
    sessions / open_timeout: without a command, stop after that many sessions / after
        waiting that many seconds for a compiler to open the pipes.
    read_timeout: fail a session whose compiler is silent this long (default: no bound).
    command_timeout: kill the command after that many seconds.
    Returns a ServeResult (returncode, sessions with counts and errors).
    """
    ch = Channel(channel_base, policy, framing, advice, numpy, record, sessions,
                 open_timeout, read_timeout, on_session)
    return serve_channels([ch], command, command_timeout, popen_kwargs)
