"""LLVM training logs (llvm::Logger / TrainingLogger format) and captured interactive streams.

    header      {"features":[SPEC,...]}            + optional "score":SPEC, "advice":SPEC
    context     {"context":"NAME"}
    observation {"observation":N}\\n TENSOR_0 ... TENSOR_n-1 \\n
    outcome     {"outcome":N}\\n SCORE_TENSOR \\n    (the reward of observation N)

Every JSON record is one line. Observation numbers count from 0 per context name. The reader
accepts what LLVM's own log_reader.py does not: adjacent context records (regalloc streams),
observations without outcomes, interactive streams (header with "advice", no rewards), and
several sessions concatenated (a new header line starts a new session).
"""
import os
import sys

from .specs import TYPES, ProtocolError, TensorSpec, dumps, loads, spec as _spec
from .specs import _np

MAX_LINE = 1 << 24          # a header or record line longer than this is refused
_OBSERVATION = b'{"observation":'


def observation_number(line):
    """N for a line that is exactly {"observation":N}\\n as LLVM writes it (the record that
    comes thousands of times per session), else None: anything else, including other
    spellings of the same JSON, goes through the JSON decoder."""
    if line.startswith(_OBSERVATION) and line.endswith(b"}\n"):
        digits = line[15:-2]
        if digits.isdigit() and (digits[:1] != b"0" or len(digits) == 1):
            return int(digits)
    return None


class Record:
    """One record of a log: kind is "header", "context", "observation" or "outcome".

    observation: .id, .context, .features (dict name -> list or numpy array), .raw (list of
    bytes, one per feature in header order); outcome: .id, .context, .score (list or array),
    .raw_score; header: .features_spec, .score_spec, .advice_spec; context: .context.
    """

    __slots__ = ("kind", "context", "id", "features", "raw", "score", "raw_score",
                 "features_spec", "score_spec", "advice_spec", "offset")

    def __init__(self, kind, context=None, **kw):
        self.kind = kind
        self.context = context
        for k in self.__slots__[2:]:
            setattr(self, k, kw.get(k))

    def __repr__(self):
        if self.kind == "observation":
            return "Record(observation %r/%d)" % (self.context, self.id)
        if self.kind == "outcome":
            return "Record(outcome %r/%d: %r)" % (self.context, self.id, self.score)
        if self.kind == "context":
            return "Record(context %r)" % self.context
        return "Record(header, %d features)" % len(self.features_spec)


class Observation:
    """An observation with its outcome merged in (score is None when there is none)."""

    __slots__ = ("context", "id", "features", "raw", "score")

    def __init__(self, context, id, features, raw, score=None):
        self.context, self.id, self.features, self.raw, self.score = \
            context, id, features, raw, score

    def __iter__(self):  # (context, id, features, score), as LLVM's reader yields
        return iter((self.context, self.id, self.features, self.score))

    def __repr__(self):
        return "Observation(%r, %d, score=%r)" % (self.context, self.id, self.score)


class LogReader:
    """Reads a log from a binary file object (or anything with readline(limit) and read(n)).

    The header is read at construction: .features, .score, .advice are its specs (score and
    advice None when absent). EOFError if the stream is empty, ProtocolError if malformed.
    """

    def __init__(self, f, as_numpy=False):
        self._f = f
        self.as_numpy = as_numpy
        self.offset = 0
        self.context = None
        self.ids = {}               # context -> latest observation number
        self.sessions = 0
        line = self._line()
        if line is None:
            raise EOFError("empty log")
        self._header(line, 0)

    # -- low level
    def _line(self):
        line = self._f.readline(MAX_LINE + 1)
        if not line:
            return None
        if not line.endswith(b"\n"):
            if len(line) > MAX_LINE:
                raise ProtocolError("byte %d: record line longer than %d bytes"
                                    % (self.offset, MAX_LINE))
            raise ProtocolError("byte %d: truncated record (no end of line): %r"
                                % (self.offset, line[:80]))
        self.offset += len(line)
        return line

    def _exact(self, n, what):
        data = self._f.read(n) if n else b""
        if len(data) != n:
            raise ProtocolError("byte %d: truncated %s (%d of %d bytes)"
                                % (self.offset, what, len(data), n))
        self.offset += n
        return data

    def _newline(self, what):
        end = self._f.read(1)
        if end != b"\n":
            if not end:
                raise ProtocolError("byte %d: truncated %s terminator (0 of 1 bytes)"
                                    % (self.offset, what))
            raise ProtocolError("byte %d: expected a newline after the %s, got %r"
                                % (self.offset, what, end))
        self.offset += 1

    def _header(self, line, at):
        try:
            h = loads(line)
            feats = [TensorSpec.from_json(s) for s in h["features"]]
        except (ValueError, KeyError, TypeError) as e:
            raise ProtocolError("byte %d: bad header: %s" % (at, e))
        self.features = feats
        self._layout = [(f.name, f.nbytes, f) for f in feats]
        self._arrays = [None] * len(feats)
        self.score = TensorSpec.from_json(h["score"]) if h.get("score") else None
        self.advice = TensorSpec.from_json(h["advice"]) if h.get("advice") else None
        self.context = None
        self.ids = {}
        self.sessions += 1

    # -- records
    def next_line(self):
        """(offset, line) of the next record line, or (offset, None) at the end."""
        at = self.offset
        return at, self._line()

    def records(self):
        """Yields Record objects until the end of the stream (the first header is not
        yielded; later headers are, as kind "header")."""
        while True:
            at, line = self.next_line()
            if line is None:
                return
            yield self.record(line, at)

    def record(self, line, at):
        """The Record that line (read at byte offset at) starts, its payload read too."""
        n = observation_number(line)
        if n is not None:
            return self._observation(n, at)
        try:
            obj = loads(line)
        except ValueError as e:
            raise ProtocolError("byte %d: record is not JSON (%s): %r" % (at, e, line[:80]))
        if not isinstance(obj, dict):
            raise ProtocolError("byte %d: record is not a JSON object: %r" % (at, line[:80]))
        if "features" in obj:
            self._header(line, at)
            return Record("header", None, features_spec=self.features,
                          score_spec=self.score, advice_spec=self.advice, offset=at)
        if "context" in obj:
            if not isinstance(obj["context"], str):
                raise ProtocolError("byte %d: context name is not a string" % at)
            self.context = obj["context"]
            return Record("context", self.context, offset=at)
        if "observation" in obj:
            n = obj["observation"]
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise ProtocolError("byte %d: bad observation number %r" % (at, n))
            return self._observation(n, at)
        if "outcome" in obj:
            return self._outcome(obj["outcome"], at)
        raise ProtocolError("byte %d: unknown record %r" % (at, line[:80]))

    def count_observation(self, n):
        """Notes observation n of the current context (outcomes must name the latest)."""
        self.ids["" if self.context is None else self.context] = n

    def _observation(self, n, at):
        raw = [self._exact(s.nbytes, "tensor %r" % s.name) for s in self.features]
        self._newline("observation")
        self.count_observation(n)
        feats = {s.name: s.decode(b, self.as_numpy) for s, b in zip(self.features, raw)}
        return Record("observation", self.context, id=n, features=feats, raw=raw, offset=at)

    def read_features(self):
        """The payload of the observation whose line was just read, as a dict name -> array
        (numpy; read straight from the stream, which then needs readinto) or flat list,
        without raw bytes or a Record: the host's hot path."""
        feats = {}
        for i, (name, nbytes, spec) in enumerate(self._layout):
            if self.as_numpy and nbytes:
                arr, view = self._array(i, spec)
                got = self._f.readinto(view)
                if got != nbytes:
                    raise ProtocolError("byte %d: truncated tensor %r (%d of %d bytes)"
                                        % (self.offset, name, got, nbytes))
                self.offset += got
                feats[name] = arr
            else:
                feats[name] = spec.decode(self._exact(nbytes, "tensor %r" % name),
                                          self.as_numpy)
        self._newline("observation")
        return feats

    def _array(self, i, spec):
        """(array, byte view) to read feature i into: the previous observation's array when
        nothing outside this reader still refers to it (so a policy that kept its features,
        or a view of them, never sees them overwritten), else a new one. Reuse spares a
        large allocation per observation, which glibc serves with fresh zeroed pages."""
        slot = self._arrays[i]
        if slot is not None:
            arr = slot[0]
            if sys.getrefcount(arr) == self._free_refs:
                return slot
        arr = _np.empty(spec.shape, TYPES[spec.type][2])
        self._arrays[i] = slot = (arr, memoryview(arr).cast("B"))
        self._free_refs = sys.getrefcount(arr)   # the same references as the check above
        return slot

    def _outcome(self, n, at):
        if self.score is None:
            raise ProtocolError("byte %d: outcome record in a log without a score spec" % at)
        ctx = "" if self.context is None else self.context
        if self.ids.get(ctx) != n:
            raise ProtocolError("byte %d: outcome %r does not match the latest observation "
                                "%r of context %r" % (at, n, self.ids.get(ctx), ctx))
        raw = self._exact(self.score.nbytes, "score")
        self._newline("outcome")
        return Record("outcome", self.context, id=n,
                      score=self.score.decode(raw, self.as_numpy), raw_score=raw, offset=at)

    def observations(self):
        """Yields Observation objects (context, id, features, score) with each outcome
        merged into its observation; score is None for an observation without one."""
        pending = None
        for rec in self.records():
            if rec.kind == "outcome":
                if pending is not None and pending.id == rec.id and pending.context == rec.context:
                    pending.score = rec.score
                continue
            if pending is not None and rec.kind == "observation":
                yield pending
                pending = None
            if rec.kind == "observation":
                pending = Observation(rec.context, rec.id, rec.features, rec.raw)
        if pending is not None:
            yield pending

    __iter__ = observations


def read_log(path_or_file, as_numpy=False):
    """Reads a whole log: returns (reader, [Observation, ...]). The reader holds the specs."""
    if isinstance(path_or_file, (str, bytes, os.PathLike)):
        with open(path_or_file, "rb") as f:
            r = LogReader(f, as_numpy)
            return r, list(r.observations())
    r = LogReader(path_or_file, as_numpy)
    return r, list(r.observations())


class LogWriter:
    """Writes a training log byte-for-byte as llvm::Logger does.

        w = LogWriter(f, features=[TensorSpec("x", "int64_t", [1]), ...],
                      score=TensorSpec("reward", "float", [1]))
        w.context("main")
        w.observation({"x": 3, ...})      # or a list in header order
        w.outcome(1.5)
    advice: a spec to add an "advice" key to the header (the interactive stream's header).
    """

    def __init__(self, f, features, score=None, advice=None):
        self._f = f
        self.features = [_spec(s) for s in features]
        self.score = _spec(score) if score is not None else None
        self.advice = _spec(advice) if advice is not None else None
        self.current = ""
        self.ids = {}
        h = {"features": [s.to_json() for s in self.features]}
        if self.score is not None:
            h["score"] = self.score.to_json()
        if self.advice is not None:
            h["advice"] = self.advice.to_json()
        self._f.write(dumps(h) + b"\n")

    def context(self, name):
        self.current = str(name)
        self._f.write(dumps({"context": self.current}) + b"\n")

    def observation(self, values):
        """values: dict name -> value, or a sequence in header order (values or raw bytes).
        Returns the observation's number."""
        if isinstance(values, dict):
            missing = [s.name for s in self.features if s.name not in values]
            if missing:
                raise ValueError("observation lacks feature(s): " + ", ".join(missing))
            values = [values[s.name] for s in self.features]
        values = list(values)
        if len(values) != len(self.features):
            raise ValueError("%d values for %d features" % (len(values), len(self.features)))
        payload = b"".join(s.encode(v) for s, v in zip(self.features, values))
        n = self.ids[self.current] + 1 if self.current in self.ids else 0
        self.ids[self.current] = n
        self._f.write(dumps({"observation": n}) + b"\n" + payload + b"\n")
        return n

    def outcome(self, value):
        """The reward of the latest observation of the current context."""
        if self.score is None:
            raise ValueError("this log has no score spec")
        if self.current not in self.ids:
            raise ValueError("no observation in context %r yet" % self.current)
        data = self.score.encode(value)
        self._f.write(dumps({"outcome": self.ids[self.current]}) + b"\n" + data + b"\n")

    def flush(self):
        self._f.flush()
