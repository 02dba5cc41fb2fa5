"""The environment: compile one module with clang-19 -Oz while a policy answers its ML
inliner over the interactive channel, and measure the module's .text size.

Two ways to serve a policy:

* in Python, through mlbc_gym.serve() (runtime/python): any callable
  policy(features, context, index) -> 0/1, e.g. the numpy network of policy_net.py;
* compiled: an ONNX policy compiled by mlbc into a shared object and served by
  build/mlbc-serve (no Python in the loop), which also writes a training log.

Decisions take effect immediately in the compiler, so a run is a trajectory: the features of
observation k depend on decisions 0..k-1. Given the same decisions clang is deterministic, so
two runs that answer identically see identical features (collect.py relies on this).
"""
import hashlib
import os
import resource
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))

import mlbc_gym  # noqa: E402

CLANG = os.environ.get("MLBC_TRAIN_CLANG", "clang-19")
OPT_FLAGS = ["-Oz"]
COMPILE_TIMEOUT = 600

# LLVM 19's inliner features, in the order of the interactive header (llvm-mlgo.md §7).
FEATURES = (
    "sroa_savings sroa_losses load_elimination call_penalty call_argument_setup "
    "load_relative_intrinsic lowered_call_arg_setup indirect_call_penalty jump_table_penalty "
    "case_cluster_penalty switch_default_dest_penalty switch_penalty "
    "unsimplified_common_instructions num_loops dead_blocks simplified_instructions "
    "constant_args constant_offset_ptr_args callsite_cost cold_cc_penalty "
    "last_call_to_static_bonus is_multiple_blocks nested_inlines nested_inline_cost_estimate "
    "threshold callee_basic_block_count callsite_height node_count nr_ctant_params "
    "cost_estimate edge_count caller_users caller_conditionally_executed_blocks "
    "caller_basic_block_count callee_conditionally_executed_blocks callee_users "
    "is_callee_avail_external is_caller_avail_external").split()
assert len(FEATURES) == 38
# LLVM 19 quirk (llvm-mlgo.md §13.1): with -inliner-interactive-include-default the
# heuristic's decision is written into slot 25 (callee_basic_block_count), not slot 38.
SLOT_DEFAULT = 25


def inliner_flags(channel, include_default=False):
    f = ["-mllvm", "-enable-ml-inliner=release",
         "-mllvm", "-inliner-interactive-channel-base=" + channel]
    if include_default:
        f += ["-mllvm", "-inliner-interactive-include-default"]
    return f


# ---- .text size of an ELF object --------------------------------------------------------------

def text_size(path):
    """Sum of the sizes of the executable PROGBITS sections (.text, .text.*) of an ELF64
    little-endian relocatable object, read from its section headers."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("%s: not an ELF64 little-endian object" % path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    total = 0
    for i in range(shnum):
        off = shoff + i * shentsize
        sh_type, sh_flags = struct.unpack_from("<IQ", data, off + 4)
        sh_size, = struct.unpack_from("<Q", data, off + 32)
        if sh_type == 1 and sh_flags & 0x4:          # SHT_PROGBITS, SHF_EXECINSTR
            total += sh_size
    return total


# ---- corpus -----------------------------------------------------------------------------------

class Module:
    def __init__(self, name, split, src, bc):
        self.name, self.split, self.src, self.bc = name, split, src, bc

    def __repr__(self):
        return "Module(%s)" % self.name


def load_manifest(path):
    """manifest.tsv written by corpus.sh: NAME, train|heldout, SOURCE, BITCODE (relative to
    the manifest's folder)."""
    base = os.path.dirname(os.path.abspath(path))
    mods = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            name, split, src, bc = line.rstrip("\n").split("\t")
            mods.append(Module(name, split, src, os.path.join(base, bc)))
    return mods


# ---- one compilation ----------------------------------------------------------------------------

class Run:
    """The outcome of compiling one module."""

    def __init__(self):
        self.text = None            # .text bytes of the object
        self.features = []          # per observation: list of 38 ints as the compiler sent them
        self.decisions = []         # per observation: the advice sent
        self.seconds = 0.0          # wall time of the compiler run
        self.cpu = None             # CPU seconds (user + sys) of the compiler and server
                                    # processes; exact only when the process runs one
                                    # compilation at a time (a Pool worker has one thread)
        self.returncode = None
        self.error = None

    @property
    def ok(self):
        return self.error is None and self.returncode == 0 and self.text is not None


_tmp_lock = threading.Lock()
_counter = [0]


def _fresh(workdir, stem):
    with _tmp_lock:
        _counter[0] += 1
        n = _counter[0]
    return os.path.join(workdir, "%s-%d-%d" % (stem, os.getpid(), n))


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def compile_default(mod, workdir, keep=None):
    """clang-19 -Oz with its own heuristic inliner (no ML advisor, no channel)."""
    obj = keep or _fresh(workdir, "o") + ".o"
    return _timed_compile(clang_cmd(mod, obj), obj, keep)


def clang_cmd(mod, obj):
    return [CLANG] + OPT_FLAGS + ["-c", mod.bc, "-o", obj]


def _timed_compile(cmd, obj, keep):
    """Runs a compilation that writes obj: a Run with its .text size, wall and CPU time (of
    every child process); obj is removed unless it is the one to keep."""
    r = Run()
    c0 = _children_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, timeout=COMPILE_TIMEOUT)
    r.seconds = time.perf_counter() - t0
    r.cpu = _children_cpu() - c0
    r.returncode = p.returncode
    if p.returncode == 0:
        r.text = text_size(obj)
    else:
        r.error = p.stderr.decode(errors="replace")[-500:]
    if keep is None and os.path.exists(obj):
        os.unlink(obj)
    return r


def compile_with_policy(mod, decide, workdir, include_default=False, record=True, keep=None):
    """Compile mod (its bitcode) with clang-19 -Oz, the ML inliner in interactive mode, and
    decide(features: list of 38 ints, index) -> 0/1 answering every observation through
    mlbc_gym.serve(). Returns a Run with the features and decisions of the trajectory."""
    base = _fresh(workdir, "ch")
    obj = keep or base + ".o"
    r = Run()

    def policy(features, context, index):
        x = [features[n][0] for n in FEATURES]
        d = int(decide(x, index))
        if record:
            r.features.append(x)
            r.decisions.append(d)
        return d

    cmd = clang_cmd(mod, obj) + inliner_flags(base, include_default)
    t0 = time.perf_counter()
    try:
        res = mlbc_gym.serve(base, policy, command=cmd, command_timeout=COMPILE_TIMEOUT,
                             popen_kwargs={"stderr": subprocess.DEVNULL})
        r.returncode = res.returncode
        if res.errors:
            r.error = "; ".join(res.errors)
        elif res.timed_out:
            r.error = "timed out"
    finally:
        r.seconds = time.perf_counter() - t0
        for s in (".in", ".out"):
            try:
                os.unlink(base + s)
            except OSError:
                pass
    if r.returncode == 0 and r.error is None:
        r.text = text_size(obj)
    if keep is None and os.path.exists(obj):
        os.unlink(obj)
    return r


def compile_with_so(mod, policy_so, workdir, serve_tool, log=None, keep=None, symbol=None):
    """Compile mod with clang-19 -Oz steered by a policy compiled by mlbc (shared object),
    served by build/mlbc-serve; with log= it writes the training log."""
    base = _fresh(workdir, "ch")
    obj = keep or base + ".o"
    cmd = [serve_tool, "--model", policy_so, "--channel", base, "--timeout", "120000"]
    if symbol:
        cmd += ["--symbol", symbol]
    if log:
        cmd += ["--log", log]
    cmd += ["--"] + clang_cmd(mod, obj) + inliner_flags(base)
    return _timed_compile(cmd, obj, keep)


def split_of(name):
    """The fixed train / held-out split, as corpus.sh draws it: md5 of the module name,
    first hex digit 0-3 held out (about a quarter)."""
    return "heldout" if hashlib.md5(name.encode()).hexdigest()[0] in "0123" else "train"


def manifest_from_dir(src_dir, out_dir, flags=(), clang=None):
    """A corpus from a folder of C files (the small committed one, tests/train_corpus):
    lowers each *.c to unoptimised bitcode in out_dir and writes out_dir/manifest.tsv.
    Files that do not compile are left out. Returns the manifest's path."""
    clang = clang or CLANG
    os.makedirs(os.path.join(out_dir, "bc"), exist_ok=True)
    lines = []
    for fn in sorted(os.listdir(src_dir)):
        if not fn.endswith(".c"):
            continue
        name = os.path.splitext(fn)[0]
        src = os.path.join(os.path.abspath(src_dir), fn)
        bc = os.path.join("bc", name + ".bc")
        p = subprocess.run([clang, "-Oz", "-w", "-c", "-emit-llvm", "-Xclang",
                            "-disable-llvm-passes", src, "-o", os.path.join(out_dir, bc),
                            "-I", os.path.abspath(src_dir)] + list(flags),
                           capture_output=True, timeout=COMPILE_TIMEOUT)
        if p.returncode == 0:
            lines.append("%s\t%s\t%s\t%s\n" % (name, split_of(name), src, bc))
    path = os.path.join(out_dir, "manifest.tsv")
    with open(path, "w") as f:
        f.writelines(lines)
    return path


def compile_with_plugin(mod, plugin_so, workdir, keep=None):
    """clang-19 -Oz with a compiled policy linked into clang through the pass plugin of
    plugins/clang (LLVM's MLInlineAdvisor + ReleaseModeModelRunner, no channel)."""
    obj = keep or _fresh(workdir, "p") + ".o"
    return _timed_compile(clang_cmd(mod, obj) + ["-fpass-plugin=" + plugin_so], obj, keep)
