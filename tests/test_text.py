"""Text front end cross-check against onnx 1.12's onnx.parser.

For every tests/text/*.onnxtxt:
  1. mlbc --emit-onnx equals onnx.parser.parse_model of the same text (proto equality);
  2. mlbc --print of it is read by onnx.parser and by mlbc into that same model, and
     printing what mlbc read gives the same text again;
  3. mlbc --print of the emitted binary .onnx gives that same text too.
Files whose first line says "# mlbc-only" use forms newer than onnx 1.12 (or mlbc
extensions): onnx.parser is not consulted for them; everything else is checked.
For every binary model in models/ (and in BUILD/onnx-node-data when the node suite has made
it): --print reads back through mlbc into the same model, up to what the syntax cannot hold
(doc strings; raw_data comes back as typed values) and prints the same again.
For every tests/text/bad/*.onnxtxt: mlbc exits 1 with "mlbc: error: FILE:LINE:COL:" at the
position its first line gives ("# expect: LINE:COL"), without a crash.
Prints PASS/FAIL per check and ends with "N passed, M failed"."""
import argparse
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile

import onnxshim  # noqa: F401  (numpy aliases before onnx)
from onnxshim import onnx
import onnx.parser  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from google.protobuf import text_format  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TEXT = os.path.join(HERE, "text")

passed = failed = 0


class Failure(Exception):
    pass


def result(name, why=None):
    global passed, failed
    if why is None:
        passed += 1
        print("PASS %s" % name)
    else:
        failed += 1
        print("FAIL %s: %s" % (name, why))


def mlbc(args, what):
    """Run mlbc; a crash, a hang or a non-zero exit is a Failure."""
    try:
        r = subprocess.run([MLBC] + args, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise Failure("%s: mlbc timed out" % what)
    err = r.stderr.decode("utf-8", "replace").strip()
    if r.returncode < 0:
        raise Failure("%s: mlbc killed by signal %d: %s" % (what, -r.returncode, err[-300:]))
    if r.returncode:
        raise Failure("%s: mlbc exit %d: %s" % (what, r.returncode, err[-300:]))
    return r.stdout


def proto_diff(want, got, want_name, got_name):
    a = text_format.MessageToString(want).splitlines(True)
    b = text_format.MessageToString(got).splitlines(True)
    lines = list(difflib.unified_diff(a, b, want_name, got_name, n=2))
    more = "\n  ... (%d more lines)" % (len(lines) - 40) if len(lines) > 40 else ""
    return "\n  " + "  ".join(lines[:40]) + more


def same(a, b):
    """Proto equality, except that a NaN equals itself (compare the wire bytes)."""
    return a == b or a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def load(path, what):
    """onnx.load without fetching external data (the corpus names files that do not exist)."""
    try:
        return onnx.load(path, load_external_data=False)
    except Exception as e:
        raise Failure("%s: onnx cannot load it: %s" % (what, str(e).strip()[-300:]))


def onnx_parse(text, what):
    try:
        return onnx.parser.parse_model(text)
    except Exception as e:  # onnx 1.12 raises ParseError, or IndexError etc. from std::sto*
        raise Failure("%s: onnx.parser rejects it: %s" % (what, str(e).strip()[-300:]))


def check_model(path, work):
    src = open(path, "rb").read()
    text = src.decode("utf-8")
    mlbc_only = text.startswith("# mlbc-only")
    base = os.path.join(work, os.path.basename(path))

    # 1. the proto mlbc builds is the proto onnx.parser builds
    binary = base + ".onnx"
    mlbc([path, "--emit-onnx", binary], "--emit-onnx")
    mine = load(binary, "--emit-onnx output")
    if not mlbc_only:
        ref = onnx_parse(text, "source")
        if not same(ref, mine):
            raise Failure("--emit-onnx differs from onnx.parser:" +
                          proto_diff(ref, mine, "onnx.parser", "mlbc"))

    # 2. the printed text reads back into the same model, and prints the same again
    printed = mlbc([path, "--print"], "--print").decode("utf-8")
    reprinted_src = base + ".printed.onnxtxt"
    open(reprinted_src, "w").write(printed)
    if not mlbc_only:
        again = onnx_parse(printed, "printed text")
        if not same(again, mine):
            raise Failure("onnx.parser reads the printed text differently:" +
                          proto_diff(mine, again, "source", "printed"))
    binary2 = base + ".printed.onnx"
    mlbc(["-x", "text", reprinted_src, "--emit-onnx", binary2], "--emit-onnx of printed text")
    mine2 = load(binary2, "--emit-onnx output of printed text")
    if not same(mine2, mine):
        raise Failure("mlbc reads the printed text differently:" +
                      proto_diff(mine, mine2, "source", "printed"))
    second = mlbc(["-x", "text", reprinted_src, "--print"], "--print of printed text").decode("utf-8")
    if second != printed:
        raise Failure("printing is not stable:\n  " + "  ".join(difflib.unified_diff(
            printed.splitlines(True), second.splitlines(True), "first", "second", n=1)))

    # 3. the binary model prints the same text
    from_binary = mlbc(["-x", "onnx", binary, "--print"], "--print of the binary").decode("utf-8")
    if from_binary != printed:
        raise Failure("--print of the .onnx differs from --print of the text")


def graph_tensors(g):
    yield from g.initializer
    for n in g.node:
        for a in n.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from graph_tensors(sub)


def forget_unprintable(g):
    """Clear what the text form does not carry (doc strings; "" domains read back as set)."""
    g.ClearField("doc_string")
    for v in list(g.input) + list(g.output) + list(g.value_info):
        v.ClearField("doc_string")
    for n in g.node:
        n.ClearField("doc_string")
        if not n.domain:
            n.ClearField("domain")
        for a in n.attribute:
            a.ClearField("doc_string")
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                forget_unprintable(sub)


def canonical(m):
    """M with every tensor as raw_data and unprintable fields cleared, for comparing a
    binary model with what its printed text reads back as."""
    for t in graph_tensors(m.graph):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
    forget_unprintable(m.graph)
    for o in m.opset_import:
        if not o.domain:
            o.ClearField("domain")
    return m


def check_binary(path, work):
    printed = os.path.join(work, "binary.onnxtxt")
    text = mlbc(["-x", "onnx", path, "--print"], "--print")
    open(printed, "wb").write(text)
    back = os.path.join(work, "binary.onnx")
    mlbc(["-x", "text", printed, "--emit-onnx", back], "--emit-onnx of printed text")
    want, got = canonical(load(path, "model")), canonical(load(back, "printed model"))
    if not same(want, got):
        raise Failure("the printed text reads back differently:" +
                      proto_diff(want, got, "model", "printed"))
    if mlbc(["-x", "text", printed, "--print"], "--print of printed text") != text:
        raise Failure("printing is not stable")


def check_binaries(paths, work):
    """One result for many models: the first few failures are named."""
    bad = []
    for p in paths:
        try:
            check_binary(p, work)
        except Failure as e:
            bad.append("%s: %s" % (os.path.relpath(p, ROOT), str(e)[:300]))
    if bad:
        raise Failure("%d of %d:\n  %s" % (len(bad), len(paths), "\n  ".join(bad[:5])))


def check_bad(path, work):
    first = open(path, "rb").readline().decode("utf-8", "replace")
    m = re.search(r"expect:\s*(\d+):(\d+)", first)
    if not m:
        raise Failure("first line has no '# expect: LINE:COL'")
    out = os.path.join(work, "bad.onnx")
    if os.path.exists(out):
        os.remove(out)
    try:
        r = subprocess.run([MLBC, path, "--emit-onnx", out], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise Failure("mlbc timed out")
    err = r.stderr.decode("utf-8", "replace")
    want = "mlbc: error: %s:%s:%s:" % (path, m.group(1), m.group(2))
    if r.returncode != 1:
        raise Failure("exit status %d (want 1): %s" % (r.returncode, err.strip()[-300:]))
    if not err.startswith(want):
        raise Failure("want '%s...', got: %s" % (want, err.strip()[:300]))
    if "Traceback" in err or "Sanitizer" in err:
        raise Failure("crash report: " + err[-300:])
    if os.path.exists(out):
        raise Failure("an output file was written")


def run(name, check, path, work):
    try:
        check(path, work)
        result(name)
    except Failure as e:
        result(name, str(e))


def main():
    global MLBC
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    MLBC = os.path.abspath(os.path.join(args.build, "mlbc"))
    if not os.path.exists(MLBC):
        result("setup", "%s not found (run make)" % MLBC)
    else:
        with tempfile.TemporaryDirectory(prefix="mlbc-text-") as work:
            for path in sorted(glob.glob(os.path.join(TEXT, "*.onnxtxt"))):
                run(os.path.basename(path), check_model, path, work)
            for path in sorted(glob.glob(os.path.join(ROOT, "models", "*.onnx"))):
                run("models/" + os.path.basename(path), check_binary, path, work)
            node = sorted(glob.glob(os.path.join(args.build, "onnx-node-data", "*", "*",
                                                 "model.onnx")))
            if node:
                run("onnx-node-data (%d models)" % len(node), check_binaries, node, work)
            for path in sorted(glob.glob(os.path.join(TEXT, "bad", "*.onnxtxt"))):
                run("bad/" + os.path.basename(path), check_bad, path, work)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
