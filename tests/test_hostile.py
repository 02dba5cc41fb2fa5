"""Hostile strings (issue 30). mlbc's output is compiled into other programs, and the runtime
compiles models it is handed at run time, so every string a model supplies is an attacker's:
names (graph, inputs, outputs, initializers, intermediates, value_info, nodes, the Resize's
run-time sizes), doc strings (model, graph, node, value), producer name and version, domains,
metadata, string attributes, a composite's selector, and the model file's name (the default
-n NAME). A generator puts each payload (ends and openers of comments, trigraphs, line
splices, quotes, control bytes, NUL, bytes 0x80-0xff, U+2028/U+2029, 5000 bytes, code that
would define mlbc_pwned_N and print a marker) at every such place, at the start and at the
end of names. For each model mlbc must either refuse it (a "mlbc: error:" line, exit 1, no
output left) or write C that gcc -std=c99, gcc -std=gnu99 and clang-19 -std=c99 build with
-Wall -Wextra -pedantic without a warning, that holds no raw control or non-ASCII byte,
whose objects define no payload symbol, and that, linked with a driver which finds every
input and output by its exact name, computes the model's outputs (numpy) and prints no marker.
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import mlbctest
from onnxshim import onnx
from onnx import helper, TensorProto as T

passed = failed = skipped = 0


def result(ok, name, why=""):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    print(("PASS %s" if ok else "FAIL %s: " + str(why)[:600]) % name)


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s: %s" % (name, why))


# ---- payloads ----

def payloads():
    """(label, bytes, whether it is also a selector and a file name); N in a payload is its
    number, so that its symbol and marker are its own."""
    return [
        ("comment end + constructor", b"*/ __attribute__((constructor)) static void "
         b"mlbc_pwned_N(void) { puts(\"MLBC-PWNED-N\"); } /*", True),
        ("comment openers", b"a/*b // c /*/", True),
        ("trigraph backslash at end", b"x??/", True),
        ("trigraph closes a literal", b"x??/\"; int mlbc_pwned_N; static const char *q = \"",
         True),
        ("all trigraphs", b"??=??'??(??)??!??<??>??-??/", True),
        ("trigraph splices a comment end", b"*??/\n/ int mlbc_pwned_N; /*", False),
        ("backslash-newline splices a comment end", b"*\\\n/ int mlbc_pwned_N; /*", False),
        ("newline + directive", b"\n#define mlbc_pwned_N 1\nint mlbc_pwned_N;\n", True),
        ("quotes and backslashes", b"q\"'\\\"\\", True),
        ("control bytes", b"\r\t\v\f\x01\x02\x1b\x7f", False),
        ("NUL inside", b"a\x00*/ int mlbc_pwned_N; /*", False),
        ("bytes 0x80-0xff", bytes(range(0x80, 0x100)), True),
        ("U+2028 U+2029", "a\u2028b\u2029c".encode(), False),
        ("5000 bytes", (b"*/??/" + b"n" * 95) * 50, True),
        ("digits, formats, template keys, helper calls", b"123 %s%n ${DOC}${FN} "
         b"mlbc_vdivs_f32( ctx-> model_run mlbc_expneg_", True),
    ]


# ---- the model: every string a placeholder, replaced in its protobuf bytes ----

SIZES = [1, 2, 4, 4]


def base_model(mark):
    """A Resize with run-time sizes, MatMul + Add, Relu + Gather of constant indices, and a
    Bucketize chain; MARK(site) gives each string site's placeholder."""
    V = lambda s: mark("v:" + s)            # noqa: E731  a value's name
    nodes = [
        helper.make_node("Resize", [V("x"), "", "", V("sizes")], [V("y")], mode="nearest",
                         name=mark("node"), doc_string=mark("node doc")),
        helper.make_node("MatMul", [V("a"), V("w")], [V("m")], name=mark("node")),
        helper.make_node("Add", [V("m"), V("bias")], [V("z")], name=mark("node")),
        helper.make_node("Relu", [V("a")], [V("r")], name=mark("node")),
        helper.make_node("Gather", [V("r"), V("idx")], [V("g")], axis=0, name=mark("node")),
        helper.make_node("LessOrEqual", [V("bounds"), V("q")], [V("c")], name=mark("node")),
        helper.make_node("Cast", [V("c")], [V("f")], to=T.FLOAT, name=mark("node")),
        helper.make_node("ReduceSum", [V("f"), V("axes")], [V("u")], keepdims=1,
                         name=mark("node")),
    ]
    # an attribute no op reads: its name and string value are the model's too
    nodes[3].attribute.extend([helper.make_attribute(mark("attr name"), mark("attr string"))])
    vi = lambda s, t, shape: helper.make_tensor_value_info(V(s), t, shape,  # noqa: E731
                                                           doc_string=mark("value doc"))
    inits = [onnx.numpy_helper.from_array(v, V(k)) for k, v in WEIGHTS.items()]
    g = helper.make_graph(
        nodes, mark("graph name"),
        [vi("x", T.FLOAT, [1, 2, 2, 2]), vi("sizes", T.INT64, [4]), vi("a", T.FLOAT, [2, 3]),
         vi("q", T.FLOAT, [4, 1])],
        [vi("y", T.FLOAT, SIZES), vi("z", T.FLOAT, [2, 2]), vi("g", T.FLOAT, [2, 3]),
         vi("u", T.FLOAT, [4, 1])],
        inits, doc_string=mark("graph doc"), value_info=[vi("m", T.FLOAT, [2, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)],
                          producer_name=mark("producer name"),
                          producer_version=mark("producer version"), domain=mark("domain"),
                          doc_string=mark("model doc"))
    helper.set_model_props(m, {mark("metadata key"): mark("metadata value")})
    return m


WEIGHTS = {"w": np.arange(6, dtype=np.float32).reshape(3, 2) / 4 - 0.5,
           "bias": np.array([0.5, -1], np.float32), "idx": np.array([1, 0], np.int64),
           "bounds": np.array([3, -1, 0.5, 7, 2], np.float32),
           "axes": np.array([-1], np.int64)}
INPUTS = {"x": np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2) / 4 - 1,
          "sizes": np.array(SIZES, np.int64),
          "a": np.array([[-1, 2, 0.5], [3, -0.25, 1]], np.float32),
          "q": np.array([[-5], [0.5], [3], [9]], np.float32)}
OUTPUTS = ["y", "z", "g", "u"]


def expected():
    x, a, q, w = INPUTS["x"], INPUTS["a"], INPUTS["q"], WEIGHTS
    return {"y": x.repeat(2, axis=2).repeat(2, axis=3),       # nearest, 2x: i -> i // 2
            "z": a @ w["w"] + w["bias"], "g": np.maximum(a, 0)[w["idx"]],
            "u": (w["bounds"][None, :] <= q).sum(1, keepdims=True).astype(np.float32)}


def varint(n):
    out = bytearray()
    while True:
        out.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def read_varint(b, i):
    n = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("bad varint")
        n |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if b[i - 1] < 0x80:
            return n, i


def rewrite(b, table):
    """B's length-delimited fields that equal a key of TABLE replaced by its value, in nested
    messages too (a field that parses as a message is one); None if nothing changed.
    Protobuf in Python refuses such bytes in a string field (not UTF-8): hence the bytes."""
    out, i, changed = bytearray(), 0, False
    while i < len(b):
        start = i
        key, i = read_varint(b, i)
        kind = key & 7
        if kind == 0:
            i = read_varint(b, i)[1]
        elif kind in (1, 5):
            i += 8 if kind == 1 else 4
        elif kind == 2:
            n, j = read_varint(b, i)
            body, i = b[j:j + n], j + n
            new = table.get(bytes(body))
            if new is None:
                try:
                    new = rewrite(body, table)
                except ValueError:
                    new = None
            if new is not None:
                out += varint(key) + varint(len(new)) + new
                changed = True
                continue
        else:
            raise ValueError("wire type %d" % kind)
        if i > len(b):
            raise ValueError("truncated")
        out += b[start:i]
    return bytes(out) if changed else None


class Site:
    """The placeholders of one model and what each becomes: PAYLOAD at the sites in WHERE
    (all if None), before or after a tag where names must stay distinct."""
    def __init__(self, payload, where=None, tag_first=True):
        self.payload, self.where, self.tag_first = payload, where, tag_first
        self.table, self.names, self.keys = {}, {}, {}

    def mark(self, site):
        if site in self.keys:                           # a value: one name wherever used
            return self.keys[site]
        key = ("@@%d@@" % len(self.table)).encode()
        kind = site.split(":")[0]
        hostile = self.where is None or kind in self.where or site in self.where
        if not hostile:
            value = site.split(":")[-1].replace(" ", "_").encode()
        elif site.startswith("v:"):
            tag = ("%s%d_" % (site[2:], len(self.table))).encode()
            value = tag + self.payload if self.tag_first else self.payload + tag
        else:
            value = self.payload
        self.table[key] = value
        if site.startswith("v:"):
            self.names[site[2:]] = value.split(b"\0")[0]    # protobuf-c's C strings end there
            self.keys[site] = key.decode()
        return key.decode()

    def model_bytes(self, model):
        return rewrite(model.SerializeToString(), self.table)


# ---- mlbc, the compilers, the driver ----

def run_mlbc(mlbc, args, out_c):
    """'ok', 'refused' or a failure message."""
    r = subprocess.run([mlbc] + args + ["-o", out_c], capture_output=True, timeout=60)
    err = r.stderr.decode(errors="replace")
    if r.returncode < 0:
        return "mlbc crashed (signal %d): %s" % (-r.returncode, err[:200])
    left = [p for p in (out_c, out_c[:-2] + ".h") if os.path.exists(p)]
    if r.returncode == 0:
        return "ok" if len(left) == 2 else "exit 0 without its outputs"
    if left:
        return "refused but left %s behind" % left
    if r.returncode in (1, 2) and err.startswith("mlbc: error:"):
        return "refused"
    return "exit %d: %s" % (r.returncode, err[:200])


COMPILERS = [("gcc -std=c99", ["gcc", "-std=c99", "-O1", "-c"]),
             ("gcc -std=gnu99", ["gcc", "-std=gnu99", "-fsyntax-only"]),
             ("clang-19 -std=c99", ["clang-19", "-std=c99", "-fsyntax-only"])]
WARN = ["-Wall", "-Wextra", "-pedantic"]


def compile_all(work, files):
    """Per file, the warnings and errors of each compiler (several files a run, two runs at
    once); gcc -std=c99 leaves the objects."""
    problems = {f: [] for f in files}
    chunks = [files[i::2] for i in range(2)]
    jobs = [(label, cmd, chunk) for label, cmd in COMPILERS for chunk in chunks if chunk]

    def one(job):
        label, cmd, chunk = job
        flags = cmd[1:] + WARN
        r = subprocess.run(cmd[:1] + flags + chunk, cwd=work, capture_output=True, text=True,
                           errors="replace", timeout=600)
        lines = mlbctest.code_warnings(cmd[0], flags, r.stderr) + \
            [l for l in r.stderr.splitlines() if "error:" in l]
        return label, chunk, lines, r.returncode

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for label, chunk, lines, status in pool.map(one, jobs):
            for f in chunk:
                stem = f[:-2]
                mine = [l for l in lines if l.startswith((stem + ".c:", stem + ".h:"))]
                problems[f] += ["%s: %s" % (label, l) for l in mine]
                if status and not mine and label.startswith("gcc -std=c99") and \
                        not os.path.exists(os.path.join(work, stem + ".o")):
                    problems[f].append("%s failed" % label)
    return problems


def c_literal(b):
    return '"%s"' % "".join("\\%03o" % c for c in b)


def driver_part(name, site, selector):
    """The driver's function for model NAME: every input found by its exact name and filled,
    the run, every output found by name and printed in hexadecimal."""
    s = ["static int run_%s(void)\n{\n    static %s_ctx ctx;\n    int i;\n" % (name, name),
         "    %s_init(&ctx);\n" % name]
    for k, v in INPUTS.items():
        data = ", ".join(repr(float(e)) if v.dtype == np.float32 else "%dLL" % e
                         for e in v.ravel())
        ctype = "float" if v.dtype == np.float32 else "int64_t"
        s.append("    {\n        static const %s d[] = {%s};\n        i = %s_lookup_arg_index("
                 "%s);\n        if (i < 0) { printf(\"%s lookup %s failed\\n\"); return 1; }\n"
                 "        memcpy(%s_arg_data(&ctx, i), d, sizeof d);\n    }\n"
                 % (ctype, data, name, c_literal(site.names[k]), name, k, name))
    if selector is not None:
        h = hashlib.md5(selector).digest()
        s.append("    i = %s_lookup_arg_index(\"model_selector\");\n    {\n        uint64_t sel[2] "
                 "= {%dULL, %dULL};\n        memcpy(%s_arg_data(&ctx, i), sel, sizeof sel);\n"
                 "    }\n" % (name, int.from_bytes(h[8:], "little"),
                             int.from_bytes(h[:8], "little"), name))
    s.append("    if (%s_run(&ctx) != 0) { printf(\"%s run failed\\n\"); return 1; }\n"
             % (name, name))
    for k in OUTPUTS:
        n = expected()[k].size
        s.append("    i = %s_lookup_result_index(%s);\n    if (i < 0) { printf(\"%s lookup %s "
                 "failed\\n\"); return 1; }\n    {\n        const float *r = %s_result_data"
                 "(&ctx, i);\n        int k;\n        printf(\"%s %s\");\n        for (k = 0; "
                 "k < %d; k++)\n            printf(\" %%a\", (double)r[k]);\n        printf(\"\\n"
                 "\");\n    }\n" % (name, c_literal(site.names[k]), name, k, name, name, k, n))
    s.append("    return 0;\n}\n\n")
    return "".join(s)


def run_driver(work, built):
    """Links the models in BUILT ({name: (stem, site, selector)}) with one driver; {name:
    problem or None} from its output, and the marker, if printed."""
    parts = ["#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n"]
    parts += ['#include "%s.h"\n' % stem for stem, _, _ in built.values()]
    parts += [driver_part(n, site, sel) for n, (_, site, sel) in built.items()]
    parts.append("int main(void)\n{\n    int bad = 0;\n%s    return bad;\n}\n"
                 % "".join("    bad |= run_%s();\n" % n for n in built))
    with open(os.path.join(work, "driver.c"), "w") as f:
        f.write("".join(parts))
    # the driver's own literals of 5000-byte names are long, not the generated code's
    flags = ["-std=c99", "-O1", "-Wall", "-Wextra", "-pedantic", "-Wno-overlength-strings"]
    objs = [stem + ".o" for stem, _, _ in built.values()]
    r = subprocess.run(["gcc"] + flags + ["driver.c"] + objs + ["-o", "driver", "-lm"], cwd=work,
                       capture_output=True, text=True, errors="replace", timeout=300)
    warns = mlbctest.code_warnings("gcc", flags, r.stderr)
    if r.returncode or warns:
        return {n: "driver: " + (warns or r.stderr.splitlines() or ["?"])[0]
                for n in built}, False
    r = subprocess.run(["./driver"], cwd=work, capture_output=True, text=True, errors="replace",
                       timeout=120)
    out = r.stdout + r.stderr
    want = expected()
    got = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] in built and f[1] in want:
            got[(f[0], f[1])] = np.array([float.fromhex(v) for v in f[2:]], np.float32)
    problems = {}
    for n in built:
        bad = [k for k in OUTPUTS if (n, k) not in got or
               not np.array_equal(got[(n, k)], want[k].ravel())]
        problems[n] = "wrong or missing outputs %s (%s)" % (bad, [l for l in out.splitlines()
                                                               if l.startswith(n + " ")][:2]) \
            if bad else None
    return problems, "MLBC-PWNED-" in out      # a name may hold MLBC_PWNED_


def default_name(file_name):
    """main.c's default -n NAME for a model file's base name."""
    s = file_name.split(b".")[0] or file_name
    s = bytes(c if chr(c).isalnum() and c < 0x80 else ord("_") for c in s)
    return ("m_" if not s or s[:1].isdigit() else "") + s.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    for cc in ("gcc", "clang-19"):
        if not shutil.which(cc):
            skip("hostile strings", cc + " not installed")
            print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
            return 0
    work = tempfile.mkdtemp(prefix="mlbc-hostile-")
    # One model per payload and position with the payload at every site that takes any
    # bytes; the sites that a payload may make wrong (a node's domain, the Resize's mode),
    # the selector and the file name one at a time. Each: (label, name, stem, site, args,
    # selector); mlbc may refuse only where marked.
    cases = []
    for i, (label, raw, more) in enumerate(payloads()):
        p = raw.replace(b"pwned_N", b"pwned_%d" % i).replace(b"PWNED-N", b"PWNED-%d" % i)
        for first in (True, False):
            cases.append(("%s, %s names" % (label, "end of" if first else "start of"),
                          Site(p, None, first), None, None, False))
        for where in ("node domain", "resize mode"):
            cases.append(("%s, %s" % (label, where), Site(p, {where}), None, None, True))
        if not more:
            continue
        sel = b"s" + p.replace(b"\0", b"")             # an argument cannot hold NUL
        cases.append(("%s, composite selector" % label, Site(b"plain", set()), None, sel, True))
        file_name = (b"f%dx" % i + p.replace(b"/", b"_").replace(b"\0", b""))[:200] + b".onnx"
        cases.append(("%s, model file name" % label, Site(b"plain", set()), file_name, None,
                      False))
    built = {}
    files = []
    meta = {}
    for k, (label, site, file_name, sel, may_refuse) in enumerate(cases):
        m = base_model(site.mark)
        if site.where and "node domain" in site.where:
            m.graph.node[1].domain = site.mark("node domain")
        if site.where and "resize mode" in site.where:
            m.graph.node[0].attribute[0].s = site.mark("resize mode").encode()
        data = site.model_bytes(m) or m.SerializeToString()
        # names that NUL cut to the same bytes name one value: the model is another one
        may_refuse |= len(set(site.names.values())) < len(site.names)
        path = os.path.join(work, (file_name if file_name else b"m%d.onnx" % k).decode(
            "utf-8", "surrogateescape"))
        with open(path, "wb") as f:
            f.write(data)
        if site.where is None:                          # --print is ONNX text, not C
            rs = [subprocess.run([mlbc, path, o], capture_output=True, timeout=60)
                  for o in ("--print", "--info")]
            result(rs[0].returncode == 0 and rs[1].returncode in (0, 1),
                   "%s: mlbc --print and --info end normally" % label,
                   "exit statuses %d, %d" % (rs[0].returncode, rs[1].returncode))
        stem = "c%d" % k
        name = default_name(file_name) if file_name else "m%d" % k
        arg = path if sel is None else (sel + b"=" + path.encode("utf-8", "surrogateescape")
                                        ).decode("utf-8", "surrogateescape")
        status = run_mlbc(mlbc, [arg] + ([] if file_name else ["-n", name]),
                          os.path.join(work, stem + ".c"))
        if status == "refused" and may_refuse:
            result(True, "%s: refused with mlbc: error:" % label)
        elif status != "ok":
            result(False, label, "mlbc: " + status)
        else:
            meta[name] = (label, stem)
            files.append(stem + ".c")
            built[name] = (stem, site, sel)
    problems = compile_all(work, files)
    for name, (label, stem) in list(meta.items()):
        text = open(os.path.join(work, stem + ".c"), "rb").read() + \
            open(os.path.join(work, stem + ".h"), "rb").read()
        raw = sorted({c for c in text if (c < 0x20 and c != 0x0A) or c >= 0x7F})
        if raw:
            problems[stem + ".c"].append("raw bytes %s in the C" % raw[:8])
        if os.path.exists(os.path.join(work, stem + ".o")):
            nm = subprocess.run(["nm", stem + ".o"], cwd=work, capture_output=True, text=True)
            syms = [l.split()[-1] for l in nm.stdout.splitlines()]
            pwned = [s for s in syms if re.match(r"mlbc_pwned_\d+$", s)]
            if pwned:
                problems[stem + ".c"].append("payload symbols in nm: %s" % pwned)
        if problems[stem + ".c"]:
            result(False, label, "; ".join(problems[stem + ".c"]))
            del built[name]
    outcome, pwned = run_driver(work, built) if built else ({}, False)
    for name, problem in outcome.items():
        result(problem is None, "%s: builds warning-free, right outputs by exact names"
               % meta[name][0], problem)
    result(not pwned, "no payload ran (no MLBC-PWNED marker)", "the driver printed a marker")
    if args.keep:
        print("work folder: " + work)
    else:
        shutil.rmtree(work, True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
