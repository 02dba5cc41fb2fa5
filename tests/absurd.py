"""Absurd sizes (issue 11): models that declare far more than any policy has. mlbc must answer
each with a clear error, exit status 1, under 512 MB of RSS and within 2 s: never a crash (a
stack overflow counts), never a run out of memory. The models are written here in protobuf's
wire format (onnx's helpers would take minutes or recurse too deep), or streamed to mlbc's
standard input where they are larger than a test should write to disk."""
import os
import subprocess
import threading
import time

MAX_RSS_KB = 512 * 1024
MAX_SECONDS = 2.0


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def head(field, length):
    """The tag and length of a length-delimited field."""
    return varint(field << 3 | 2) + varint(length)


def field(num, payload):
    return head(num, len(payload)) + payload


def vint(num, v):
    return varint(num << 3) + varint(v)


# ModelProto: ir_version 8, opset_import {version 13}; the graph (field 7) follows.
MODEL_HEAD = vint(1, 8) + field(8, vint(2, 13))


def nested_subgraphs(levels):
    """Graph i holds one If node whose then_branch is graph i + 1 (each nested field the last of
    its message, so the file is the prefixes, outermost first, then the empty innermost)."""
    node_fixed, attr_fixed = field(4, b"If"), field(1, b"then_branch") + vint(20, 5)
    prefixes, inner = [], 0
    for _ in range(levels):
        attr = len(attr_fixed) + len(head(6, inner)) + inner
        node = len(node_fixed) + len(head(5, attr)) + attr
        prefixes.append(head(1, node) + node_fixed + head(5, attr) + attr_fixed + head(6, inner))
        inner = len(head(1, node)) + node
    return MODEL_HEAD + head(7, inner) + b"".join(reversed(prefixes))


def nested_types(levels):
    """A graph input whose type is a sequence of a sequence of ... (TypeProto.sequence_type,
    Sequence.elem_type), levels deep."""
    inner = b""
    for _ in range(levels):
        inner = field(4, field(1, inner))
    graph = field(11, field(1, b"x") + field(2, inner))
    return MODEL_HEAD + field(7, graph)


def high_rank(rank):
    """A graph input of RANK dimensions of 1 (TypeProto.tensor_type.shape.dim)."""
    dims = field(1, vint(1, 1)) * rank
    tensor_type = vint(1, 1) + field(2, dims)
    return MODEL_HEAD + field(7, field(11, field(1, b"x") + field(2, field(1, tensor_type))))


def empty_nodes(count):
    return MODEL_HEAD + head(7, 2 * count) + b"\x0a\x00" * count


def stream_nodes(out, count=10**9):
    """A graph of COUNT empty nodes (2 bytes each: 2 GB for 10^9), written to OUT."""
    out.write(MODEL_HEAD + head(7, 2 * count))
    block = b"\x0a\x00" * (1 << 19)
    for _ in range(count // (1 << 19) + 1):
        out.write(block)


def stream_string(out, size=2 * 10**9):
    """A graph whose name is a string of SIZE bytes."""
    name = head(2, size)
    out.write(MODEL_HEAD + head(7, len(name) + size) + name)
    block = b"a" * (1 << 20)
    for _ in range(size // (1 << 20) + 1):
        out.write(block)


def text_nested(levels):
    """An If whose then_branch holds an If ... levels deep, in the text syntax."""
    parts = ['<ir_version: 8, opset_import: ["" : 17]>\ndeep (bool c) => (float y0)\n{\n']
    for i in range(levels):
        parts.append("y%d = If (c) <then_branch = g%d () => (float y%d) {\n" % (i, i, i + 1))
    parts.append("y%d = Constant <value = float {1}> ()\n" % levels)
    for i in range(levels):
        parts.append("}, else_branch = e%d () => (float z%d) { z%d = Constant <value = float {1}> () }>\n"
                     % (i, i, i))
    return "".join(parts + ["}\n"])


def text_chain(nodes):
    lines = ['<ir_version: 8, opset_import: ["" : 17]>\nchain (float x0) => (float x%d)\n{\n' % nodes]
    lines += ["x%d = Relu (x%d)\n" % (i + 1, i) for i in range(nodes)]
    return "".join(lines + ["}\n"])


def text_loops(loops, trips, cond="c"):
    """LOOPS Loops in a row, each of TRIPS known trips (a run-time trip count when TRIPS is
    None, so only the body's condition, COND, could end it)."""
    count = "" if trips is None else ", int64 n = {%d}" % trips
    lines = ['<ir_version: 8, opset_import: ["" : 17]>\n'
             'loops (float[2] v0%s) => (float[2] v%d)\n<bool go = {1}%s>\n{\n'
             % (", int64 n" if trips is None else "", loops, count)]
    for i in range(loops):
        lines.append("v%d = Loop (n, go, v%d) <body = b%d (int64 i, bool c, float[2] a) => "
                     "(bool c2, float[2] a2) {\n c2 = Identity (%s)\n a2 = Add (a, a)\n}>\n"
                     % (i + 1, i, i, cond))
    return "".join(lines + ["}\n"])


def run_bounded(cmd, feed=None):
    """Runs CMD (FEED, if given, writes its standard input from a thread); returns (exit status,
    stderr, seconds, max RSS in KB) of that process alone."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if feed else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    writer = None
    if feed:
        def write():
            try:
                feed(p.stdin)
                p.stdin.close()
            except (BrokenPipeError, OSError):
                pass
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
    err = p.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - t0
    if writer:
        writer.join(5)
    return p.returncode, err, seconds, usage.ru_maxrss


def cases(work):
    """(name, the model's path or '-' for stdin, a feed of stdin or None, expected text); the
    declared 2^40 elements are tests/bad/absurd_dims.onnx."""
    def file(name, data):
        path = os.path.join(work, name)
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return path

    sparse = os.path.join(work, "sparse-2GB.onnx")
    with open(sparse, "wb") as f:          # a 2 GB file: refused by its size, never read
        f.write(MODEL_HEAD + head(7, 2 * 10**9))
        f.truncate(2 * 10**9 + 32)
    return [
        ("subgraphs nested 10^5 deep", file("nested.onnx", nested_subgraphs(10**5)), None,
         "more than 100 deep"),
        ("types nested 10^5 deep", file("types.onnx", nested_types(10**5)), None,
         "more than 100 deep"),
        ("a tensor of rank 10^4", file("rank.onnx", high_rank(10**4)), None, "rank 10000"),
        ("10^6 nodes", file("nodes.onnx", empty_nodes(10**6)), None, "more than 50000 nodes"),
        ("10^9 nodes (2 GB on stdin)", "-", stream_nodes, "larger than 134217728 bytes"),
        ("a 2 GB string (on stdin)", "-", stream_string, "larger than 134217728 bytes"),
        ("a 2 GB file", sparse, None, "larger than 134217728 bytes"),
        ("text: subgraphs nested 10^5 deep", file("nested.onnxtxt", text_nested(10**5)), None,
         "nested too deeply"),
        ("text: 6x10^4 nodes", file("chain.onnxtxt", text_chain(60000)), None,
         "more than 50000 nodes"),
        # Small files that unrolling would make large (fuzz-text found the first).
        ("text: a Loop whose condition stays true", file("forever.onnxtxt",
         text_loops(1, None)), None, "does not become false within the unrolling limit"),
        ("text: a Loop of 10^9 trips", file("trips.onnxtxt", text_loops(1, 10**9)), None,
         "more than 10000 nodes"),
        ("text: 100 Loops of 3000 trips", file("loops.onnxtxt", text_loops(100, 3000)), None,
         "more than 10000 nodes with the model's other control flow"),
    ]
