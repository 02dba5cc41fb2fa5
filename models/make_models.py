#!/usr/bin/python3
"""Export mlbc's example models with PyTorch and write their reference data.

Run by hand (never in CI), from anywhere:

    /usr/bin/python3 models/make_models.py            # all models
    /usr/bin/python3 models/make_models.py cnn rnn_policy

For each model NAME it writes

    models/NAME.onnx      the exported graph (static shapes, batch 1)
    models/ref/NAME.npz   reference samples: for sample k = 0, 1, ... (at least 3)
                          "in:<onnx input name>:<k>"   and
                          "out:<onnx output name>:<k>"
                          with exactly the ONNX element type and shape; the outputs are
                          computed by PyTorch.

Every exported model is checked with onnx.checker (full check) and onnx.shape_inference, and
every reference sample is re-computed from the *exported ONNX graph* by the small numpy
evaluator in models/onnx_np.py (onnx 1.12 has no onnx.reference, and no onnxruntime is
installed); the script fails if PyTorch and the graph disagree.

Everything is deterministic: fixed seeds, one thread, doc strings stripped.
Needs Debian's python3-torch (1.13), python3-onnx (1.12), numpy (1.24).
"""

import io
import math
import os
import sys
import warnings
from collections import Counter, OrderedDict

import numpy as np

# onnx 1.12 still uses the numpy aliases removed in numpy 1.24.
np.float = float
np.int = int
np.bool = bool
np.object = object
np.str = str
np.complex = complex

import onnx  # noqa: E402
import onnx.checker  # noqa: E402
import onnx.shape_inference  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onnx_np  # noqa: E402

# The exporter's UserWarnings (RNN batch size, prim::Constant shape inference, tracer) are
# expected for these models; the checks below are what matters.
warnings.filterwarnings("ignore", category=UserWarning)
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


# --------------------------------------------------------------------------------------------
# helpers

def stripped(data):
    """The ModelProto of an export's bytes, doc strings stripped, checked (full check)."""
    m = onnx.load_from_string(data)
    m.doc_string = ""
    m.graph.doc_string = ""
    for n in m.graph.node:
        n.doc_string = ""
    onnx.checker.check_model(m, full_check=True)
    return m


def export(model, args, path, input_names, output_names, opset):
    """torch.onnx.export into memory, strip doc strings, check, save. Returns the ModelProto."""
    model.eval()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, args, buf, input_names=input_names,
                          output_names=output_names, opset_version=opset,
                          do_constant_folding=True, export_params=True,
                          training=torch.onnx.TrainingMode.EVAL)
    m = stripped(buf.getvalue())
    inferred = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    onnx.checker.check_model(inferred)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return m


ONNX_TO_NP = {
    onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.BOOL: np.bool_,
}


def io_specs(values):
    out = []
    for v in values:
        t = v.type.tensor_type
        shape = tuple(d.dim_value for d in t.shape.dim)
        assert all(d.HasField("dim_value") for d in t.shape.dim), "symbolic dim in " + v.name
        out.append((v.name, ONNX_TO_NP[t.elem_type], shape))
    return out


def write_ref(m, name, samples, run_torch, atol=1e-5, rtol=1e-4):
    """samples: list of lists of numpy arrays (one per graph input, in graph order).
    run_torch(list of arrays) -> list of numpy outputs (graph order)."""
    ins = io_specs([i for i in m.graph.input
                    if i.name not in {t.name for t in m.graph.initializer}])
    outs = io_specs(m.graph.output)
    data = OrderedDict()
    for k, sample in enumerate(samples):
        assert len(sample) == len(ins)
        feeds = {}
        for (iname, dt, shape), a in zip(ins, sample):
            a = np.ascontiguousarray(a)
            assert a.dtype == dt and a.shape == shape, (name, iname, a.dtype, a.shape, dt, shape)
            data["in:%s:%d" % (iname, k)] = a
            feeds[iname] = a
        got_t = run_torch(sample)
        got_o = onnx_np.run(m, feeds)
        for (oname, dt, shape), t_out in zip(outs, got_t):
            t_out = np.ascontiguousarray(t_out)
            assert t_out.dtype == dt and t_out.shape == shape, (name, oname, t_out.dtype,
                                                                 t_out.shape, dt, shape)
            o_out = got_o[oname]
            assert o_out.dtype == dt and o_out.shape == shape, (name, oname, o_out.dtype,
                                                                 o_out.shape)
            if np.issubdtype(dt, np.floating):
                if not np.allclose(t_out, o_out, atol=atol, rtol=rtol):
                    raise SystemExit("%s sample %d output %s: torch and ONNX graph differ "
                                     "(max abs diff %g)" % (name, k, oname,
                                                            np.abs(t_out - o_out).max()))
            elif not np.array_equal(t_out, o_out):
                raise SystemExit("%s sample %d output %s: torch %s, ONNX graph %s"
                                 % (name, k, oname, t_out, o_out))
            data["out:%s:%d" % (oname, k)] = t_out
    os.makedirs(os.path.join(HERE, "ref"), exist_ok=True)
    path = os.path.join(HERE, "ref", name + ".npz")
    # np.savez writes zip entries with the current time; write them ourselves with a fixed
    # date so that re-running the script gives byte-identical files.
    import zipfile
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for key, a in data.items():
            b = io.BytesIO()
            np.lib.format.write_array(b, a, allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, b.getvalue())
    return len(samples)


def summary(m, name, path, nsamples):
    init = {t.name for t in m.graph.initializer}
    ops = Counter(n.op_type for n in m.graph.node)
    nparams = sum(int(np.prod(t.dims)) for t in m.graph.initializer)
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0]
    print("== %s: opset %d, %d bytes, %d nodes, %d initializers (%d values), %d ref samples"
          % (name, opset, os.path.getsize(path), len(m.graph.node), len(init), nparams,
             nsamples))
    ins = [i for i in m.graph.input if i.name not in init]
    fmt = lambda v: "%s %s%s" % (v[0], np.dtype(v[1]).name, list(v[2]))  # noqa: E731
    if len(ins) > 4:
        print("   inputs : %d (%s ... %s)" % (len(ins), fmt(io_specs(ins[:1])[0]),
                                             fmt(io_specs(ins[-1:])[0])))
    else:
        print("   inputs : " + ", ".join(fmt(v) for v in io_specs(ins)))
    print("   outputs: " + ", ".join(fmt(v) for v in io_specs(m.graph.output)))
    print("   ops    : " + ", ".join("%s %d" % kv for kv in sorted(ops.items())))


def t2n(t):
    return t.detach().cpu().numpy()


# --------------------------------------------------------------------------------------------
# 1. inliner: MLGO-style policy over LLVM 19's 38 inliner features

INLINER_FEATURES = [
    "sroa_savings", "sroa_losses", "load_elimination", "call_penalty", "call_argument_setup",
    "load_relative_intrinsic", "lowered_call_arg_setup", "indirect_call_penalty",
    "jump_table_penalty", "case_cluster_penalty", "switch_default_dest_penalty",
    "switch_penalty", "unsimplified_common_instructions", "num_loops", "dead_blocks",
    "simplified_instructions", "constant_args", "constant_offset_ptr_args", "callsite_cost",
    "cold_cc_penalty", "last_call_to_static_bonus", "is_multiple_blocks", "nested_inlines",
    "nested_inline_cost_estimate", "threshold", "callee_basic_block_count", "callsite_height",
    "node_count", "nr_ctant_params", "cost_estimate", "edge_count", "caller_users",
    "caller_conditionally_executed_blocks", "caller_basic_block_count",
    "callee_conditionally_executed_blocks", "callee_users", "is_callee_avail_external",
    "is_caller_avail_external",
]
assert len(INLINER_FEATURES) == 38

# Plausible synthetic distributions: (probability of 0, log-normal mu, sigma, sign) or
# ("bin", p) for 0/1 features, or ("const", v, p) for "v with probability p, else 0".
INLINER_DIST = {
    "sroa_savings": (0.6, 2.5, 1.2, 1), "sroa_losses": (0.7, 2.0, 1.0, 1),
    "load_elimination": (0.8, 2.0, 0.8, 1), "call_penalty": (0.3, 3.5, 0.8, 1),
    "call_argument_setup": (0.2, 2.5, 0.8, 1), "load_relative_intrinsic": ("const", 5, 0.02),
    "lowered_call_arg_setup": (0.3, 2.5, 0.8, 1), "indirect_call_penalty": (0.9, 3.0, 0.5, 1),
    "jump_table_penalty": (0.95, 3.5, 0.5, 1), "case_cluster_penalty": (0.9, 3.0, 0.7, 1),
    "switch_default_dest_penalty": (0.93, 2.0, 0.5, 1), "switch_penalty": (0.9, 3.5, 0.7, 1),
    "unsimplified_common_instructions": (0.1, 3.5, 1.2, 1), "num_loops": ("const", 25, 0.15),
    "dead_blocks": (0.85, 1.0, 0.8, 1), "simplified_instructions": (0.3, 2.5, 1.0, 1),
    "constant_args": (0.6, 0.5, 0.5, 1), "constant_offset_ptr_args": (0.8, 0.5, 0.5, 1),
    "callsite_cost": (0.05, 3.0, 0.7, -1), "cold_cc_penalty": ("const", 2000, 0.01),
    "last_call_to_static_bonus": ("const", -15000, 0.2), "is_multiple_blocks": ("bin", 0.6),
    "nested_inlines": (0.7, 0.8, 0.8, 1), "nested_inline_cost_estimate": (0.7, 4.0, 1.2, 1),
    "threshold": (0.0, 5.4, 0.3, 1), "callee_basic_block_count": (0.0, 1.3, 1.1, 1),
    "callsite_height": (0.2, 1.0, 0.8, 1), "node_count": (0.0, 5.0, 1.0, 1),
    "nr_ctant_params": (0.6, 0.5, 0.5, 1), "cost_estimate": (0.05, 4.0, 1.3, 1),
    "edge_count": (0.0, 5.5, 1.1, 1), "caller_users": (0.05, 1.0, 1.0, 1),
    "caller_conditionally_executed_blocks": (0.2, 1.8, 1.2, 1),
    "caller_basic_block_count": (0.0, 2.0, 1.2, 1),
    "callee_conditionally_executed_blocks": (0.3, 1.2, 1.1, 1),
    "callee_users": (0.0, 0.7, 0.9, 1), "is_callee_avail_external": ("bin", 0.05),
    "is_caller_avail_external": ("bin", 0.02),
}


def inliner_sample(rng, name, n):
    d = INLINER_DIST[name]
    if d[0] == "bin":
        return (rng.random(n) < d[1]).astype(np.int64)
    if d[0] == "const":
        return np.where(rng.random(n) < d[2], d[1], 0).astype(np.int64)
    p0, mu, sigma, sign = d
    v = np.maximum(np.round(np.exp(rng.normal(mu, sigma, n))), 1.0) * sign
    return np.where(rng.random(n) < p0, 0, v).astype(np.int64)


def inliner_rule(feats):
    """Synthetic teacher: inline small callees whose call site is cheap."""
    bb = feats[:, INLINER_FEATURES.index("callee_basic_block_count")]
    cost = feats[:, INLINER_FEATURES.index("cost_estimate")]
    return ((bb <= 3) & (cost < 60)).astype(np.int64)


class InlinerPolicy(nn.Module):
    def __init__(self, boundaries):
        super().__init__()
        for i, q in enumerate(boundaries):
            self.register_buffer("q%d" % i, torch.tensor(q, dtype=torch.float32))
        self.n = [len(q) for q in boundaries]
        self.fc1 = nn.Linear(2 * len(boundaries), 40)
        self.fc2 = nn.Linear(40, 40)
        self.fc3 = nn.Linear(40, 20)
        self.head = nn.Linear(20, 2)

    def features(self, xs):
        parts = []
        for i, v in enumerate(xs):                         # v: int64 [B]
            q = getattr(self, "q%d" % i)                    # float [n]
            b = (q <= v.to(torch.float32).unsqueeze(1))     # bool [B, n]
            x = b.to(torch.float32).sum(dim=1, keepdim=True) / float(self.n[i])
            parts.append(x)
            parts.append(x * x)
        return torch.cat(parts, dim=1)                      # [B, 76]

    def mlp(self, feat):
        h = F.relu(self.fc1(feat))
        h = F.relu(self.fc2(h))
        h = F.relu(self.fc3(h))
        return self.head(h)

    def forward(self, *xs):
        logits = self.mlp(self.features(xs))               # [1, 2]
        return torch.argmax(logits, dim=1)                 # int64 [1], first max wins


def make_inliner():
    rng = np.random.default_rng(1001)
    torch.manual_seed(1001)
    boundaries = []
    for name in INLINER_FEATURES:
        s = inliner_sample(rng, name, 20000)
        nq = int(rng.integers(16, 65))
        boundaries.append(np.quantile(s, np.linspace(0, 1, nq)).astype(np.float32))
    model = InlinerPolicy(boundaries)

    # brief training on the synthetic rule
    ntrain = 8192
    feats = np.stack([inliner_sample(rng, n, ntrain) for n in INLINER_FEATURES], axis=1)
    y = torch.tensor(inliner_rule(feats))
    with torch.no_grad():                                  # the bucketisation is fixed
        pre = model.features([torch.tensor(feats[:, i]) for i in range(38)])
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for step in range(400):
        opt.zero_grad()
        loss = F.cross_entropy(model.mlp(pre), y)
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model.mlp(pre).argmax(1) == y).float().mean().item()
    print("   inliner: trained 400 steps, loss %.3f, accuracy %.3f, inline rate %.2f"
          % (loss.item(), acc, y.float().mean().item()))

    # cross-check the bucketisation against numpy (TF Bucketize = bisect_right)
    chk = np.stack([inliner_sample(rng, n, 512) for n in INLINER_FEATURES], axis=1)
    chk[:8] = np.stack([np.round(q[rng.integers(0, len(q), 8)]) for q in boundaries], axis=1)
    want = []
    for i, q in enumerate(boundaries):
        x = np.searchsorted(q, chk[:, i].astype(np.float32), side="right") / np.float32(len(q))
        want += [x, x * x]
    with torch.no_grad():
        got = t2n(model.features([torch.tensor(chk[:, i]) for i in range(38)]))
    assert np.allclose(np.stack(want, axis=1), got, atol=1e-6), "inliner bucketisation"

    path = os.path.join(HERE, "inliner.onnx")
    args = tuple(torch.zeros(1, dtype=torch.int64) for _ in INLINER_FEATURES)
    m = export(model, args, path, INLINER_FEATURES, ["inlining_decision"], 13)

    def run_torch(sample):
        with torch.no_grad():
            return [t2n(model(*[torch.tensor(a) for a in sample]))]

    # reference samples: 3 "inline" and 3 "don't inline" draws, all zeros, large values
    cand = np.stack([inliner_sample(rng, n, 256) for n in INLINER_FEATURES], axis=1)
    dec = [int(run_torch([cand[j, i:i + 1] for i in range(38)])[0][0]) for j in range(256)]
    pick = [j for j in range(256) if dec[j] == 1][:3] + [j for j in range(256) if dec[j] == 0][:3]
    pick.sort()
    assert len(pick) == 6, "inliner: could not find both decisions"
    samples = [[cand[j, i:i + 1].copy() for i in range(38)] for j in pick]
    samples.append([np.zeros(1, np.int64) for _ in range(38)])
    samples.append([np.array([v], np.int64) for v in rng.integers(-(1 << 40), 1 << 40, 38)])
    decs = [int(run_torch(s)[0][0]) for s in samples]
    assert 0 in decs and 1 in decs
    print("   inliner: reference decisions %s" % decs)
    return m, path, samples, run_torch


# --------------------------------------------------------------------------------------------
# 2. regalloc_evict: per-column MLP over LLVM 19's 21 eviction features

EVICT_FEATURES = [  # (name, dtype); all [1, 33] except progress [1]
    ("mask", np.int64), ("is_free", np.int64), ("nr_urgent", np.float32),
    ("nr_broken_hints", np.float32), ("is_hint", np.int64), ("is_local", np.int64),
    ("nr_rematerializable", np.float32), ("nr_defs_and_uses", np.float32),
    ("weighed_reads_by_max", np.float32), ("weighed_writes_by_max", np.float32),
    ("weighed_read_writes_by_max", np.float32), ("weighed_indvars_by_max", np.float32),
    ("hint_weights_by_max", np.float32), ("start_bb_freq_by_max", np.float32),
    ("end_bb_freq_by_max", np.float32), ("hottest_bb_freq_by_max", np.float32),
    ("liverange_size", np.float32), ("use_def_density", np.float32),
    ("max_stage", np.int64), ("min_stage", np.int64), ("progress", np.float32),
]
assert len(EVICT_FEATURES) == 21
NCOL = 33
# per column: 19 features (all but mask and progress) + is_inf(use_def_density) + progress
EVICT_F = 21


class EvictPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(EVICT_F, 80)
        self.fc2 = nn.Linear(80, 40)
        self.out = nn.Linear(40, 1)

    def logits(self, *xs):
        cols = []
        for (name, dt), v in zip(EVICT_FEATURES, xs):
            if name in ("mask", "progress"):
                continue
            if dt == np.int64:
                v = v.to(torch.float32)                     # int64 -> float
            if name == "use_def_density":                   # may be +inf: indicator + 0
                inf = torch.isinf(v)
                cols.append(v.masked_fill(inf, 0.0))
                cols.append(inf.to(torch.float32))
            elif name in ("max_stage", "min_stage"):
                cols.append(v * (1.0 / 6.0))
            else:
                cols.append(v)
        progress = xs[-1]                                   # [B]
        B = progress.shape[0]
        cols.append(progress.reshape(B, 1).expand(B, NCOL))
        feat = torch.stack(cols, dim=2).reshape(B * NCOL, EVICT_F)   # [33, F] for B = 1
        h = F.relu(self.fc1(feat))
        h = F.relu(self.fc2(h))
        logit = self.out(h).reshape(B, NCOL)
        return logit.masked_fill(xs[0] == 0, -1e30)        # masked, not -inf

    def forward(self, *xs):
        return torch.argmax(self.logits(*xs), dim=1)       # int64 [1]


def evict_batch(rng, n, inf_rate=0.0):
    """Random, LLVM-like observations: float features in [0, 1] normalised by their max."""
    out = []
    mask = (rng.random((n, NCOL)) < 0.5).astype(np.int64)
    mask[:, 32] = (rng.random(n) < 0.9)
    none = mask.sum(1) == 0
    mask[none, 32] = 1
    for name, dt in EVICT_FEATURES:
        if name == "mask":
            v = mask
        elif name == "progress":
            v = rng.random(n).astype(np.float32)
        elif name in ("is_free", "is_hint"):
            v = (rng.random((n, NCOL)) < 0.15).astype(np.int64)
        elif name == "is_local":
            v = rng.integers(0, 3, (n, NCOL)).astype(np.int64)
        elif name == "max_stage":
            v = rng.integers(0, 7, (n, NCOL)).astype(np.int64)
        elif name == "min_stage":
            v = rng.integers(0, 7, (n, NCOL)).astype(np.int64)
        else:
            v = rng.lognormal(0.0, 1.0, (n, NCOL)).astype(np.float32)
            v = v / v.max(axis=1, keepdims=True)
            if name == "use_def_density" and inf_rate > 0:
                v[rng.random((n, NCOL)) < inf_rate] = np.inf
        if name != "mask" and name != "progress":
            v = np.where(mask == 1, v, 0).astype(dt)        # unavailable columns are all-zero
        out.append(v)
    # max_stage >= min_stage
    i_max = [n for n, _ in EVICT_FEATURES].index("max_stage")
    out[i_max + 1], out[i_max] = (np.minimum(out[i_max], out[i_max + 1]),
                                  np.maximum(out[i_max], out[i_max + 1]))
    return out


def evict_rule(batch):
    """Synthetic teacher: evict the available column with the cheapest, coldest ranges."""
    names = [n for n, _ in EVICT_FEATURES]
    cost = (batch[names.index("weighed_read_writes_by_max")]
            + batch[names.index("hottest_bb_freq_by_max")]
            + 0.5 * batch[names.index("is_hint")])
    cost = np.where(batch[0] == 1, cost, np.inf)
    return cost.argmin(axis=1)


def make_regalloc_evict():
    rng = np.random.default_rng(2002)
    torch.manual_seed(2002)
    model = EvictPolicy()
    batch = evict_batch(rng, 4096, inf_rate=0.01)
    y = torch.tensor(evict_rule(batch))
    xs = [torch.tensor(a) for a in batch]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    order = np.random.default_rng(2003).integers(0, len(y), (300, 256))
    for step in range(300):                                # minibatches of 256
        idx = torch.tensor(order[step])
        opt.zero_grad()
        loss = F.cross_entropy(model.logits(*[x[idx] for x in xs]), y[idx])
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model.logits(*xs).argmax(1) == y).float().mean().item()
    print("   regalloc_evict: trained 300 steps, last loss %.3f, accuracy %.3f"
          % (loss.item(), acc))

    path = os.path.join(HERE, "regalloc_evict.onnx")
    args = tuple(torch.zeros((1, NCOL) if n != "progress" else (1,), dtype=torch.from_numpy(
        np.zeros(0, dt)).dtype) for n, dt in EVICT_FEATURES)
    m = export(model, args, path, [n for n, _ in EVICT_FEATURES], ["index_to_evict"], 13)

    def run_torch(sample):
        with torch.no_grad():
            return [t2n(model(*[torch.tensor(a) for a in sample]))]

    b = evict_batch(rng, 6)
    samples = [[a[j:j + 1].copy() for a in b] for j in range(6)]
    # sample 1: some +inf use_def_density values; sample 2: only column 32 available
    udd = [n for n, _ in EVICT_FEATURES].index("use_def_density")
    samples[1][udd][0, [3, 7, 32]] = np.inf
    samples[1][0][0, [3, 7, 32]] = 1
    samples[2][0][:] = 0
    samples[2][0][0, 32] = 1
    for s in samples:
        assert s[0].sum() >= 1
    print("   regalloc_evict: reference decisions %s"
          % [int(run_torch(s)[0][0]) for s in samples])
    return m, path, samples, run_torch


# --------------------------------------------------------------------------------------------
# 3. cnn

class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)        # folded into conv1 by the exporter
        self.bn2 = nn.BatchNorm2d(8)        # after MaxPool: stays a BatchNormalization op
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.fc = nn.Linear(16 * 3 * 3, 10)

    def forward(self, x):                    # [1, 1, 16, 16]
        x = F.relu(self.bn1(self.conv1(x)))  # [1, 8, 16, 16]
        x = F.max_pool2d(x, 2)               # [1, 8, 8, 8]
        x = self.bn2(x)
        x = F.relu(self.conv2(x))            # [1, 16, 6, 6]
        x = F.avg_pool2d(x, 2, count_include_pad=False)   # [1, 16, 3, 3]
        x = torch.flatten(x, 1)              # [1, 144]
        return F.softmax(self.fc(x), dim=1)  # [1, 10]


def randomise_bn(bn, g):
    with torch.no_grad():
        bn.weight.copy_(1.0 + 0.2 * torch.randn(bn.num_features, generator=g))
        bn.bias.copy_(0.1 * torch.randn(bn.num_features, generator=g))
        bn.running_mean.copy_(0.2 * torch.randn(bn.num_features, generator=g))
        bn.running_var.copy_(0.5 + torch.rand(bn.num_features, generator=g))


def make_cnn():
    torch.manual_seed(3003)
    g = torch.Generator().manual_seed(3003)
    model = SmallCNN()
    randomise_bn(model.bn1, g)
    randomise_bn(model.bn2, g)
    path = os.path.join(HERE, "cnn.onnx")
    m = export(model, (torch.zeros(1, 1, 16, 16),), path, ["image"], ["probs"], 17)
    rng = np.random.default_rng(3003)
    samples = [[rng.standard_normal((1, 1, 16, 16)).astype(np.float32)] for _ in range(4)]

    def run_torch(sample):
        with torch.no_grad():
            return [t2n(model(torch.tensor(sample[0])))]
    return m, path, samples, run_torch


# --------------------------------------------------------------------------------------------
# 4. rnn_policy

class RNNPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(12, 16)
        self.gru = nn.GRU(16, 16)
        self.head = nn.Linear(16, 4)

    def forward(self, x):                    # [T=8, 1, 12]
        y, _ = self.lstm(x)                  # [8, 1, 16]
        y, _ = self.gru(y)                   # [8, 1, 16]
        return F.log_softmax(self.head(y[-1]), dim=1)   # [1, 4]


def make_rnn_policy():
    torch.manual_seed(4004)
    model = RNNPolicy()
    path = os.path.join(HERE, "rnn_policy.onnx")
    m = export(model, (torch.zeros(8, 1, 12),), path, ["seq"], ["log_probs"], 17)
    rng = np.random.default_rng(4004)
    samples = [[rng.standard_normal((8, 1, 12)).astype(np.float32)] for _ in range(4)]

    def run_torch(sample):
        with torch.no_grad():
            return [t2n(model(torch.tensor(sample[0])))]
    return m, path, samples, run_torch


# --------------------------------------------------------------------------------------------
# 5. transformer: one pre-LN encoder block

class EncoderBlock(nn.Module):
    def __init__(self, seq=8, dim=32, heads=4, hidden=64):
        super().__init__()
        self.seq, self.dim, self.heads, self.hd = seq, dim, heads, dim // heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):                    # [1, 8, 32]
        S, D, H, Hd = self.seq, self.dim, self.heads, self.hd
        h = self.ln1(x)
        qkv = self.qkv(h)                    # [1, 8, 96]
        q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]
        q = q.reshape(1, S, H, Hd).transpose(1, 2)          # [1, 4, 8, 8]
        k = k.reshape(1, S, H, Hd).transpose(1, 2)
        v = v.reshape(1, S, H, Hd).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(Hd)), dim=-1)
        o = torch.matmul(att, v).transpose(1, 2).reshape(1, S, D)
        x = x + self.proj(o)
        h = F.gelu(self.fc1(self.ln2(x)))    # exact (erf) GELU
        return x + self.fc2(h)


def make_transformer():
    torch.manual_seed(5005)
    model = EncoderBlock()
    with torch.no_grad():                    # non-trivial LayerNorm affine parameters
        for ln in (model.ln1, model.ln2):
            ln.weight.copy_(1.0 + 0.1 * torch.randn(32))
            ln.bias.copy_(0.1 * torch.randn(32))
    path = os.path.join(HERE, "transformer.onnx")
    m = export(model, (torch.zeros(1, 8, 32),), path, ["x"], ["y"], 17)
    rng = np.random.default_rng(5005)
    samples = [[rng.standard_normal((1, 8, 32)).astype(np.float32)] for _ in range(4)]

    def run_torch(sample):
        with torch.no_grad():
            return [t2n(model(torch.tensor(sample[0])))]
    return m, path, samples, run_torch


# --------------------------------------------------------------------------------------------

MODELS = OrderedDict([
    ("inliner", make_inliner),
    ("regalloc_evict", make_regalloc_evict),
    ("cnn", make_cnn),
    ("rnn_policy", make_rnn_policy),
    ("transformer", make_transformer),
])


def main(argv):
    names = argv or list(MODELS)
    for n in names:
        if n not in MODELS:
            raise SystemExit("unknown model %r (have: %s)" % (n, ", ".join(MODELS)))
    total = 0
    for n in names:
        m, path, samples, run_torch = MODELS[n]()
        k = write_ref(m, n, samples, run_torch)
        summary(m, n, path, k)
        total += os.path.getsize(path)
    print("total .onnx size: %d bytes" % total)


if __name__ == "__main__":
    main(sys.argv[1:])
