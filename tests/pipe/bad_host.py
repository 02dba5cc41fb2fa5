"""A host that misbehaves on purpose, for tests/test_pipe.py.

    python3 bad_host.py BASE FRAMING MODE [GOOD]

FRAMING is llvm, bitstream, json or protobuf. The FIFOs must exist. It opens BASE.in for writing, then
BASE.out for reading (the order LLVM requires), follows the compiler's records far enough to
reach the point MODE is about, then misbehaves. With GOOD, it first answers GOOD observations
correctly (advice 7), so the fault comes later in the session. A 30 s alarm ends it whatever
happens.
"""
import json
import os
import signal
import struct
import sys
import time


def varint(n):
    out = b""
    n &= (1 << 64) - 1                    # negative int64s take ten bytes, as protobuf writes them
    while True:
        out += bytes([(n & 0x7f) | (0x80 if n > 0x7f else 0)])
        n >>= 7
        if not n:
            return out


def field(number, wire, payload):
    """One protobuf field: wire 0 = varint (payload an int), 2 = length-delimited (bytes)."""
    key = varint(number << 3 | wire)
    return key + (varint(payload) if wire == 0 else varint(len(payload)) + payload)


def advice_message(value=7, type=7, shape=(), data=None):
    """An mlbc.Advice (runtime/mlbc.proto) of an int64 VALUE, or of the given fields.

    Encoded by hand rather than with mlbc_pb2: importing protobuf takes 0.1 s, over a second on
    a loaded machine, which the runner's 1000 ms wait for the reply would count."""
    data = struct.pack("=q", value) if data is None else data
    tensor = (field(1, 2, b"advice") + field(2, 0, type) +
              (field(3, 2, b"".join(varint(d) for d in shape)) if shape else b"") +
              field(4, 2, data))
    return field(1, 2, tensor)


SIZES = {"float": 4, "double": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
         "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}


def nbytes(spec):
    n = SIZES[spec["type"]]
    for d in spec["shape"]:
        n *= d
    return n


class Conn:
    def __init__(self, base, framing):
        self.framing = framing
        self.to = os.open(base + ".in", os.O_WRONLY)
        self.frm = os.open(base + ".out", os.O_RDONLY)
        self.buf = b""
        self.payload = None

    def read(self, n):
        while len(self.buf) < n:
            d = os.read(self.frm, 65536)
            if not d:
                raise EOFError
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def line(self):
        while b"\n" not in self.buf:
            d = os.read(self.frm, 65536)
            if not d:
                raise EOFError
            self.buf += d
        i = self.buf.index(b"\n")
        out, self.buf = self.buf[:i + 1], self.buf[i + 1:]
        return out

    def header(self):
        if self.framing == "llvm":
            h = json.loads(self.line())
            self.payload = sum(nbytes(s) for s in h["features"])

    def observation(self):
        """Consumes records up to and including the next observation."""
        if self.framing != "llvm":
            n = struct.unpack("=Q", self.read(8))[0]
            return self.read(n)
        while True:
            rec = json.loads(self.line())
            if "observation" in rec:
                data = self.read(self.payload)
                assert self.read(1) == b"\n"
                return data

    def write(self, data):
        os.write(self.to, data)

    def reply_bytes(self, value=7):
        if self.framing == "llvm":
            return struct.pack("=q", value)
        if self.framing == "bitstream":
            return struct.pack("=Q", 8) + struct.pack("=q", value)
        if self.framing == "protobuf":
            body = advice_message(value)
            return struct.pack("=Q", len(body)) + body
        body = json.dumps({"out": value}).encode()
        return struct.pack("=Q", len(body)) + body

    def reply(self, value=7):
        self.write(self.reply_bytes(value))


def bridge(c, body):
    c.write(struct.pack("=Q", len(body)) + body)


def main():
    base, framing, mode = sys.argv[1:4]
    signal.alarm(30)
    if mode == "never_open":
        time.sleep(30)
        return
    c = Conn(base, framing)
    if mode == "die_before_header":
        os._exit(0)
    c.header()
    for _ in range(int(sys.argv[4]) if len(sys.argv) > 4 else 0):
        c.observation()
        c.reply()
    if mode == "die_after_header":
        os._exit(0)
    if mode == "close_in_early":          # stop answering: close the advice end, keep reading
        os.close(c.to)
        time.sleep(30)
        return
    if mode == "close_out_early":         # stop reading: close BASE.out, keep BASE.in
        os.close(c.frm)
        time.sleep(30)
        return
    if mode == "never_read":              # keep both open, read nothing
        time.sleep(30)
        return
    c.observation()
    if mode == "close_in_later":          # one answer, then close the advice end
        c.reply()
        os.close(c.to)
        time.sleep(30)
        return
    if mode == "close_out_later":         # one answer, then stop reading
        c.reply()
        os.close(c.frm)
        time.sleep(30)
        return
    if mode == "stall":
        time.sleep(30)
    elif mode == "die_mid_reply":
        c.write(struct.pack("=q", 7)[:4] if framing == "llvm" else struct.pack("=Q", 8) + b"\0\0")
        os._exit(0)
    elif mode == "short":
        c.write(struct.pack("=q", 7)[:4] if framing == "llvm" else struct.pack("=Q", 8) + b"\0\0")
        time.sleep(30)
    elif mode == "long":                  # reply and surplus in one write
        c.write(c.reply_bytes() + b"\1\2\3\4")
        time.sleep(30)
    elif mode == "long_late":             # a correct reply, then surplus bytes a bit later
        c.reply()
        time.sleep(0.3)
        c.write(b"\1\2\3\4")
        c.observation()
        time.sleep(30)
    elif mode == "huge_length":
        c.write(struct.pack("=Q", 1 << 40))
        time.sleep(30)
    elif mode == "zero_length":
        c.write(struct.pack("=Q", 0))
        time.sleep(30)
    elif mode == "garbage":
        if framing == "json":
            bridge(c, b"hello, world")
        else:
            bridge(c, b"abc")
        time.sleep(30)
    elif mode == "proto_type":            # a float advice for an int64 one
        bridge(c, advice_message(type=1))
        time.sleep(30)
    elif mode == "proto_size":
        bridge(c, advice_message(data=b"\0\0\0\0"))
        time.sleep(30)
    elif mode == "proto_shape":
        bridge(c, advice_message(shape=(2,)))
        time.sleep(30)
    elif mode == "proto_no_tensor":       # a well-formed message without its one field
        bridge(c, b"\x18\x01")             # (field 3, unknown: skipped)
        time.sleep(30)
    elif mode == "json_no_out":
        bridge(c, b'{"advice": 1}')
        time.sleep(30)
    elif mode == "json_count":
        bridge(c, b'{"out": [1, 2]}')
        time.sleep(30)
    elif mode == "json_string":
        bridge(c, b'{"out": "one"}')
        time.sleep(30)
    elif mode == "json_range":
        bridge(c, b'{"out": 1e300}')
        time.sleep(30)
    elif mode == "json_trailing":
        bridge(c, b'{"out": 1} x')
        time.sleep(30)
    elif mode == "bits_int32":            # MLCompilerBridge's Python packs ints as 4 bytes
        for k in range(3):
            bridge(c, struct.pack("=i", -5 - k))
            if k < 2:
                c.observation()
        time.sleep(30)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    try:
        main()
    except (EOFError, BrokenPipeError):
        pass
