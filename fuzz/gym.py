"""gym.py - a coverage-guided mutation fuzzer for mlbc_gym's readers of untrusted bytes,
standard library only (libFuzzer cannot see Python's branches).

    python3 fuzz/gym.py TARGET [--runs N] [--seconds S]     a campaign
    python3 fuzz/gym.py TARGET FILE...                      runs each file once (regression)

Targets, each fed the bytes a peer could send:
    log        read_log over a training log or captured stream (lists, then numpy arrays)
    llvm       the host's LLVM InteractiveModelRunner framing (Channel._serve_llvm)
    bitstream  the Bridge's bitstream framing (Channel._serve_bridge)
    json       the Bridge's JSON framing
    protobuf   the Bridge's protobuf framing (runtime/mlbc.proto; needs make's mlbc_pb2)
The reader must end in ProtocolError, HostError or EOFError (an empty log) or succeed: any
other exception, an input running past --timeout seconds or a MemoryError under the address
space limit is a finding, saved to build/fuzz/crash-gym-TARGET/ with its traceback.

Coverage: sys.settrace follows line-to-line arcs inside the mlbc_gym package; an input that
reaches an arc no earlier input did joins the corpus (build/fuzz/corpus-gym-TARGET/).
Mutations are libFuzzer's usual ones plus a dictionary of the formats' tokens and
replacement of decimal numbers (shapes, lengths, ids) by edge values.
"""
import argparse
import hashlib
import io
import os
import random
import re
import resource
import signal
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))

import mlbc_gym                                     # noqa: E402
from mlbc_gym import host, log                      # noqa: E402
from mlbc_gym.specs import ProtocolError            # noqa: E402

PACKAGE = os.path.dirname(os.path.abspath(mlbc_gym.__file__))
EXPECTED = (ProtocolError, host.HostError, EOFError)
TOKENS = [b"\x0a\x01f", b"\x1a\x0a", b"\x10\x07", b"\x18\x02", b"\x22\x08", b'{"features":[', b'{"name":"f","type":"float","shape":[2]}', b'"int64_t"',
          b'"double"', b'"int32_t"', b'"uint8_t"', b'"advice":', b'"score":', b'"port":1',
          b'{"context":"c"}\n', b'{"observation":0}\n', b'{"outcome":0}\n', b'"shape":[]',
          b'\n', b'{', b'}', b'[', b']', b'"', b':', b',', b'null', b'true', b'-', b'1e9']
NUMBERS = [b"0", b"1", b"-1", b"2", b"255", b"65536", b"2147483648", b"4294967296",
           b"9223372036854775807", b"18446744073709551616", b"1099511627776", b"1e400",
           b"100000000000000000000000000000000000000000"]


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


# ---- the targets: bytes in, a reader run to its end -------------------------------------

class _Bytes(io.RawIOBase):
    """Raw stream over bytes, read in chunks of at most `chunk` (as a pipe delivers them)."""

    def __init__(self, data, chunk):
        super().__init__()
        self.data, self.pos, self.chunk = memoryview(data), 0, chunk

    def readable(self):
        return True

    def readinto(self, view):
        n = min(len(view), self.chunk, len(self.data) - self.pos)
        view[:n] = self.data[self.pos:self.pos + n]
        self.pos += n
        return n


def _file(data, chunk=4096):
    """A log file's stream (read_log takes any binary file)."""
    return io.BufferedReader(_Bytes(data, chunk), 1 << 16)


class _PipeStream(host._FdStream):
    """The host's own stream over its pipe (host._FdStream), its readv(2) replaced by reads
    of bytes in chunks of at most `chunk`."""

    def __init__(self, data, chunk=4096):      # no descriptor: nothing to poll
        self.buf = bytearray(host.STREAM_BUFFER)
        self.view = memoryview(self.buf)
        self.pos = self.end = 0
        self.tee = None
        self.data, self.at, self.chunk = memoryview(data), 0, chunk

    def _readv(self, bufs, wait_first):
        n = 0
        for b in bufs:
            k = min(len(b), self.chunk - n, len(self.data) - self.at)
            b[:k] = self.data[self.at:self.at + k]
            self.at += k
            n += k
        return n


def run_log(data):
    for as_numpy in (False, True):
        log.read_log(_file(data), as_numpy)


def _serve(framing, data):
    for numpy in (False, True):
        ch = host.Channel("/nonexistent", None, framing=framing, numpy=numpy,
                          advice="int64_t")
        # Advice of the session's spec (an LLVM header may give any), as raw bytes: the
        # policy is right, and encoding a large list under settrace would be the slow part.
        ch.policy = lambda features, context, index: (
            [1] if framing == "json" else bytes(ch._current.advice.nbytes))
        ch._begin()
        sink = os.open(os.devnull, os.O_WRONLY)
        try:
            if framing == "llvm":
                ch._serve_llvm(_PipeStream(data), sink, lambda: False)
            else:
                ch._serve_bridge(_PipeStream(data), sink, lambda: False)
        finally:
            os.close(sink)


TARGETS = {
    "log": run_log,
    "llvm": lambda d: _serve("llvm", d),
    "bitstream": lambda d: _serve("bitstream", d),
    "json": lambda d: _serve("json", d),
    "protobuf": lambda d: _serve("protobuf", d),
}


# ---- seeds --------------------------------------------------------------------------------

def _frame(msg):
    return len(msg).to_bytes(8, sys.byteorder) + msg


def seeds(target):
    """Valid inputs written by mlbc_gym's own writer and framings."""
    feats = [mlbc_gym.TensorSpec("a", "float", [2]), mlbc_gym.TensorSpec("b", "int64_t", [1])]
    buf = io.BytesIO()
    score = mlbc_gym.TensorSpec("reward", "float", [1])
    advice = mlbc_gym.TensorSpec("advice", "int64_t", [1])
    w = log.LogWriter(buf, feats, score=score if target == "log" else None,
                      advice=advice if target == "llvm" else None)
    for ctx in ("f", "g"):
        w.context(ctx)
        for i in range(2):
            w.observation([[0.5, -1.0], [i]])
            if target == "log":
                w.outcome([float(i)])
    w.flush()
    out = [buf.getvalue()]
    head = b'{"features":[{"name":"a","type":"float","shape":[2]}]}\n'
    if target == "bitstream":
        out = [_frame(head + b"\0\0\0?\0\0\0@\n") * 2]
    elif target == "json":
        out = [_frame(b'{"a":[1.5,2],"b":3}') + _frame(b'{"a":[[1],[2]]}')]
    elif target == "protobuf":
        from mlbc_gym import mlbc_pb2
        obs = mlbc_pb2.Observation(context="f", index=0)
        for name, type, shape, data in (("a", 1, [2], b"\0\0\0?\0\0\0@"), ("b", 7, [], bytes(8))):
            obs.features.add(name=name, type=type, shape=shape, data=data)
        out = [_frame(obs.SerializeToString()) * 2]
    return out


# ---- mutation ---------------------------------------------------------------------------

def mutate(data, corpus, rnd):
    data = bytearray(data)
    for _ in range(1 + rnd.randrange(4)):
        op = rnd.randrange(9)
        pos = rnd.randrange(len(data) + 1)
        if op == 0 and data:
            data[pos % len(data)] ^= 1 << rnd.randrange(8)
        elif op == 1 and data:
            data[pos % len(data)] = rnd.choice(b"\0\xff\x7f\n{}\":,[]-0123456789")
        elif op == 2:
            data[pos:pos] = rnd.choice(TOKENS)
        elif op == 3 and data:
            del data[pos:pos + 1 + rnd.randrange(16)]
        elif op == 4 and data:
            n = 1 + rnd.randrange(32)
            data[pos:pos] = data[pos:pos + n]
        elif op == 5:
            other = rnd.choice(corpus)
            cut = rnd.randrange(len(other) + 1)
            data = data[:pos] + bytearray(other[cut:])
        elif op == 6:
            nums = list(re.finditer(rb"-?\d+", bytes(data)))
            if nums:
                m = rnd.choice(nums)
                data[m.start():m.end()] = rnd.choice(NUMBERS)
        elif op == 7 and len(data) >= 8:
            at = pos % (len(data) - 7)       # a Bridge length prefix, or any 8 bytes
            data[at:at + 8] = rnd.choice([0, 1, 7, 1 << 28, 1 << 40, (1 << 64) - 1]).to_bytes(
                8, sys.byteorder)
        elif op == 8 and data:
            data[pos % len(data)] = rnd.randrange(256)
    return bytes(data[:1 << 16])


# ---- coverage -----------------------------------------------------------------------------

class Coverage:
    def __init__(self):
        self.arcs = set()
        self.new = 0
        self.prev = 0
        self.files = {}

    def _local(self, frame, event, arg):
        if event == "line":
            arc = (frame.f_code, self.prev, frame.f_lineno)
            self.prev = frame.f_lineno
            if arc not in self.arcs:
                self.arcs.add(arc)
                self.new += 1
        return self._local

    def _global(self, frame, event, arg):
        f = frame.f_code.co_filename
        mine = self.files.get(f)
        if mine is None:
            mine = self.files[f] = f.startswith(PACKAGE)
        return self._local if mine else None

    def run(self, fn, data, timeout):
        """(new arcs, None or the finding's text)."""
        self.new = self.prev = 0
        signal.setitimer(signal.ITIMER_REAL, timeout)
        sys.settrace(self._global)
        try:
            fn(data)
            finding = None
        except EXPECTED:
            finding = None
        except Timeout:
            finding = "timeout: over %.1f s\n" % timeout
        except BaseException:
            finding = traceback.format_exc()
        finally:
            sys.settrace(None)
            signal.setitimer(signal.ITIMER_REAL, 0)
        return self.new, finding


# ---- driver -------------------------------------------------------------------------------

def save(folder, data, text=None):
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
    if text is not None:
        with open(os.path.join(folder, name + ".txt"), "w") as f:
            f.write(text)
    return os.path.join(folder, name)


def load(folder):
    if not os.path.isdir(folder):
        return []
    out = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".txt"):
            with open(os.path.join(folder, name), "rb") as f:
                out.append(f.read())
    return out


def replay(fn, files, timeout):
    """Runs each file once; returns the number of findings."""
    cov, bad = Coverage(), 0
    for path in files:
        with open(path, "rb") as f:
            _, finding = cov.run(fn, f.read(), timeout)
        if finding:
            bad += 1
            print("FINDING %s:\n%s" % (path, finding))
    print("gym-%s: %d inputs replayed, %d findings" % (fn.name, len(files), bad))
    return bad


def campaign(fn, args):
    cov, rnd = Coverage(), random.Random(args.seed)
    corpus_dir = os.path.join(args.build, "fuzz", "corpus-gym-" + fn.name)
    crash_dir = os.path.join(args.build, "fuzz", "crash-gym-" + fn.name)
    regress = os.path.join(ROOT, "fuzz", "regress", "gym-" + fn.name)
    corpus = []
    for data in seeds(fn.name) + load(regress) + load(corpus_dir):
        cov.run(fn, data, args.timeout)
        corpus.append(data)
    t0 = last = time.monotonic()
    runs = findings = 0
    limit = args.runs if args.runs >= 0 else float("inf")
    while runs < limit and time.monotonic() - t0 < args.seconds:
        data = mutate(rnd.choice(corpus), corpus, rnd)
        new, finding = cov.run(fn, data, args.timeout)
        runs += 1
        if finding:
            findings += 1
            print("FINDING saved as %s:\n%s" % (save(crash_dir, data, finding), finding))
            if findings >= args.max_findings:
                break
        elif new:
            corpus.append(data)
            save(corpus_dir, data)
        if time.monotonic() - last >= 30:
            last = time.monotonic()
            print("#%d arcs: %d corpus: %d exec/s: %d" % (
                runs, len(cov.arcs), len(corpus), runs / (last - t0)), flush=True)
    dt = time.monotonic() - t0
    print("gym-%s: %d runs in %.0f s (%d exec/s), %d arcs, corpus %d, %d findings" % (
        fn.name, runs, dt, runs / max(dt, 1e-9), len(cov.arcs), len(corpus), findings))
    return findings


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target", choices=sorted(TARGETS))
    ap.add_argument("files", nargs="*", help="run these inputs once each, no fuzzing")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=-1, help="stop after N inputs (-1: no limit)")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-findings", type=int, default=20)
    args = ap.parse_args()
    # Bounded memory: an allocation a peer's declared size asks for fails here (MemoryError,
    # a finding) instead of swapping the machine.
    resource.setrlimit(resource.RLIMIT_AS, (1 << 31, resource.RLIM_INFINITY))
    signal.signal(signal.SIGALRM, _alarm)
    fn = TARGETS[args.target]
    fn.name = args.target
    bad = replay(fn, args.files, args.timeout) if args.files else campaign(fn, args)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
