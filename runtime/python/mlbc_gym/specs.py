"""Tensor specs as LLVM's TensorSpec writes them in JSON, and raw tensor (de)coding.

A spec is {"name": str, "type": "int64_t" | "float" | ..., "port": 0, "shape": [..]}.
Tensors travel as raw row-major bytes in the compiler's native byte order.
"""
import json
import struct
import sys

try:  # numpy is optional
    import numpy as _np
except ImportError:  # pragma: no cover - exercised by the numpy-less test run
    _np = None

# LLVM element type name -> (struct/memoryview code, size, numpy dtype name)
TYPES = {
    "float": ("f", 4, "float32"),
    "double": ("d", 8, "float64"),
    "int8_t": ("b", 1, "int8"),
    "uint8_t": ("B", 1, "uint8"),
    "int16_t": ("h", 2, "int16"),
    "uint16_t": ("H", 2, "uint16"),
    "int32_t": ("i", 4, "int32"),
    "uint32_t": ("I", 4, "uint32"),
    "int64_t": ("q", 8, "int64"),
    "uint64_t": ("Q", 8, "uint64"),
}

# ONNX TensorProto.DataType codes (mlbc.proto's Tensor.type, mlbc_runtime.h's MLBC_*) <->
# LLVM names; ONNX's bool (9) travels as one byte, read as uint8_t.
ONNX_CODES = {"float": 1, "uint8_t": 2, "int8_t": 3, "uint16_t": 4, "int16_t": 5,
              "int32_t": 6, "int64_t": 7, "double": 11, "uint32_t": 12, "uint64_t": 13}
ONNX_TYPES = dict([(c, t) for t, c in ONNX_CODES.items()] + [(9, "uint8_t")])

# Convenience aliases accepted wherever a type name is expected.
ALIASES = {"int64": "int64_t", "int32": "int32_t", "int16": "int16_t", "int8": "int8_t",
           "uint64": "uint64_t", "uint32": "uint32_t", "uint16": "uint16_t",
           "uint8": "uint8_t", "float32": "float", "float64": "double"}


# The largest tensor a spec may describe, in bytes: the C runtime's MLBC_RT_MAX_TENSOR_BYTES
# (runtime/internal.h). A peer's header declaring more is refused before anything is read.
MAX_TENSOR_BYTES = 1 << 28


class ProtocolError(Exception):
    """The peer broke the wire format (malformed header, truncated record, ...)."""


def _type_name(t):
    t = ALIASES.get(t, t)
    if t not in TYPES:
        raise ValueError("unknown tensor element type %r (expected one of %s)"
                         % (t, ", ".join(TYPES)))
    return t


def _dim(d, name):
    """A dimension (or port): a non-negative integer; JSON's 2.0 counts, 2.5 or true do not."""
    if isinstance(d, bool) or not isinstance(d, (int, float)) and \
            not (_np is not None and isinstance(d, _np.integer)):
        raise ValueError("dimension %r of %r is not an integer" % (d, name))
    if isinstance(d, float) and not d.is_integer():
        raise ValueError("dimension %r of %r is not an integer" % (d, name))
    d = int(d)
    if d < 0:
        raise ValueError("negative dimension in the shape of %r" % name)
    return d


class TensorSpec:
    """name, LLVM element type name, shape (list of ints), port."""

    __slots__ = ("name", "type", "shape", "port")

    def __init__(self, name, type="int64_t", shape=(1,), port=0):
        self.name = str(name)
        self.type = _type_name(type)
        self.shape = [_dim(d, self.name) for d in shape]
        if self.count * TYPES[self.type][1] > MAX_TENSOR_BYTES:
            raise ValueError("tensor %r of shape %s is larger than %d bytes"
                             % (self.name, self.shape, MAX_TENSOR_BYTES))
        self.port = _dim(port, self.name)

    @classmethod
    def from_json(cls, d):
        try:
            return cls(d["name"], d["type"], d.get("shape", []), d.get("port", 0))
        except (KeyError, TypeError, ValueError) as e:
            raise ProtocolError("bad tensor spec %r: %s" % (d, e))

    def to_json(self):
        """The dict in LLVM's key order: name, type, port, shape."""
        return {"name": self.name, "type": self.type, "port": self.port,
                "shape": list(self.shape)}

    @property
    def count(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def element_size(self):
        return TYPES[self.type][1]

    @property
    def nbytes(self):
        return self.count * self.element_size

    @property
    def is_float(self):
        return self.type in ("float", "double")

    def decode(self, data, as_numpy=False):
        """Raw bytes -> flat list (or a numpy array of this shape)."""
        if len(data) != self.nbytes:
            raise ProtocolError("tensor %r: %d bytes, expected %d"
                                % (self.name, len(data), self.nbytes))
        if as_numpy:
            if _np is None:
                raise RuntimeError("numpy is not installed")
            return _np.frombuffer(bytes(data), dtype=TYPES[self.type][2]).reshape(self.shape)
        if not data:
            return []
        return memoryview(bytes(data)).cast(TYPES[self.type][0]).tolist()

    def encode(self, value):
        """A scalar, a (nested) sequence, a numpy array or raw bytes -> raw bytes."""
        if isinstance(value, (bytes, bytearray, memoryview)):
            value = bytes(value)
            if len(value) != self.nbytes:
                raise ValueError("%r: %d raw bytes given, the tensor has %d"
                                 % (self.name, len(value), self.nbytes))
            return value
        flat = flatten(value)
        if len(flat) != self.count:
            raise ValueError("%r: %d value(s) given, the tensor has %d"
                             % (self.name, len(flat), self.count))
        code = TYPES[self.type][0]
        if self.is_float:
            flat = [float(v) for v in flat]
        else:
            conv = []
            for v in flat:
                if isinstance(v, float):
                    if v != int(v):
                        raise ValueError("%r: non-integral value %r for %s"
                                         % (self.name, v, self.type))
                conv.append(int(v))
            flat = conv
        try:
            return struct.pack("=%d%s" % (len(flat), code), *flat)
        except struct.error as e:
            raise ValueError("%r: %s (type %s)" % (self.name, e, self.type))

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.name == other.name and
                self.type == other.type and self.shape == other.shape and
                self.port == other.port)

    def __hash__(self):
        return hash((self.name, self.type, tuple(self.shape)))

    def __repr__(self):
        return "TensorSpec(%r, %r, %r)" % (self.name, self.type, self.shape)


def spec_of_tensor(t):
    """The TensorSpec of an mlbc.Tensor message (runtime/mlbc.proto) a peer sent;
    ProtocolError for an unknown type code or an unusable shape."""
    if t.type not in ONNX_TYPES:
        raise ProtocolError("tensor %r: unknown element type %d" % (t.name, t.type))
    try:
        return TensorSpec(t.name, ONNX_TYPES[t.type], t.shape)
    except ValueError as e:
        raise ProtocolError("tensor %r: %s" % (t.name, e))


def flatten(value):
    """Scalars, nested lists/tuples and numpy arrays -> a flat list of Python numbers.
    Iterative: a peer's JSON may nest as deep as the decoder allows."""
    out, stack = [], [iter((value,))]
    while stack:
        v = next(stack[-1], stack)
        if v is stack:
            stack.pop()
        elif _np is not None and isinstance(v, (_np.ndarray, _np.generic)):
            out.extend(_np.asarray(v).reshape(-1).tolist())
        elif isinstance(v, (list, tuple)):
            stack.append(iter(v))
        else:
            out.append(int(v) if isinstance(v, bool) else v)
    return out


def loads(data):
    """json.loads of a peer's bytes; any way they are not JSON (nesting deeper than Python's
    recursion limit included) is a ValueError."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply")


def spec(value):
    """A TensorSpec from a TensorSpec, a JSON dict, a type name or (name, type, shape)."""
    if isinstance(value, TensorSpec):
        return value
    if isinstance(value, dict):
        return TensorSpec.from_json(value)
    if isinstance(value, str):
        return TensorSpec("advice", value, [1])
    if isinstance(value, (list, tuple)):
        return TensorSpec(*value)
    raise TypeError("cannot make a tensor spec from %r" % (value,))


def dumps(obj):
    """Compact JSON as LLVM's writer emits it (no spaces, UTF-8 kept)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def have_numpy():
    return _np is not None


NATIVE_LITTLE = sys.byteorder == "little"
