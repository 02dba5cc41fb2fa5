#!/usr/bin/python3
"""Real torch.onnx exports of torch's own layers, for tests/test_torch_layers.py (issue 31).

RUN BY HAND; NEEDS TORCH (Debian's python3-torch, 1.13). torch is not a dependency of mlbc:
`make test` only reads what this script wrote (the .onnx and .npz files next to it).

    /usr/bin/python3 tests/torch_layers/export.py            # every file of this folder
    /usr/bin/python3 tests/torch_layers/export.py --only tel  # the variants matching a regex
    /usr/bin/python3 tests/torch_layers/export.py --list     # print the node lists too

Small instances of

    tel       nn.TransformerEncoderLayer(d_model 64, 4 heads, ffn 128, batch_first, dropout 0)
              on [1, 16, 64]: post_gelu, post_relu, pre_gelu, pre_relu (norm_first False/True)
    mha       nn.MultiheadAttention(64, 4 heads, batch_first), self-attention, output only
              (need_weights=False): self [1, 16, 64]; self_mask [2, 16, 64] with a boolean
              key_padding_mask [2, 16] (True: padding) as a second input
    grucell   nn.GRUCell(16, 32), state in and out: b1, b8 (batch 1 and 8)
    lstmcell  nn.LSTMCell(16, 32), (h, c) in and out: b1, b8
    conv1d    nn.Conv1d on [1, 16, 64]: plain (16 -> 32, k 3, pad 1), groups (groups 4),
              depthwise (16 -> 16, groups 16, k 5, pad 2), dilation (dilation 2, pad 2)
    embbag    ids [4, 8] into a table of 100 x 32: gather_mean (nn.Embedding, then .mean(1)),
              embeddingbag_mean (nn.EmbeddingBag(mode='mean') itself: a Loop over the bags)

each written as <layer>_<variant>_op<N>.onnx for N = 13..17 by torch.onnx.export, and for
N = 18 by rewriting the opset-17 export (to_opset18 below: torch 1.13 cannot export opset
18, and onnx 1.12 has no converter to it; onnx 1.12's checker does not know opset 18 either,
so the opset-18 files are not checked here: ONNX Runtime 1.30 loads and runs them).
<layer>_<variant>.npz holds two samples of inputs and torch's outputs, keys 'in:<input>:<k>'
and 'out:<output>:<k>' (models/ref's scheme); the weights and inputs are the same at every
opset, so one .npz serves all six files.

Exports are deterministic (fixed seeds, one thread, doc strings stripped, fixed zip times):
re-running gives byte-identical files. Biases and LayerNorm scales are randomised (torch
initialises them to 0 and 1, and the exporter then shares identical initializers).

TransformerEncoderLayer and MultiheadAttention are exported with autograd on (their
parameters require grad): under torch.no_grad() torch 1.13 takes their fused inference
path, and the export fails (aten::_transformer_encoder_layer_fwd,
aten::_native_multi_head_attention are not exportable).
"""
import argparse
import io
import os
import re
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "models"))

import numpy as np  # noqa: E402

import onnxshim  # noqa: E402,F401  (numpy aliases before onnx)
from onnxshim import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import kinds  # noqa: E402  (write_npz: fixed zip timestamps)
import make_models  # noqa: E402  (stripped: doc strings out, checked)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning)
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

OPSETS = (13, 14, 15, 16, 17)      # torch 1.13's exporter: 17 at most
OPSET18_FROM = 17
NSAMPLES = 2


# ---- the layers ----------------------------------------------------------------------------

def randomise(module, seed):
    """Biases and norm scales away from their 0 and 1 (seeded)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
    return module


class Tel(nn.Module):
    def __init__(self, norm_first, act):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation=act,
                                                batch_first=True, norm_first=norm_first)

    def forward(self, x):
        return self.layer(x)


class Mha(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(64, 4, batch_first=True)

    def forward(self, x, mask=None):
        return self.attn(x, x, x, key_padding_mask=mask, need_weights=False)[0]


class Gru(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(16, 32)

    def forward(self, x, h):
        return self.cell(x, h)


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(16, 32)

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


class Conv(nn.Module):
    def __init__(self, cout, k, groups=1, dilation=1, pad=1):
        super().__init__()
        self.conv = nn.Conv1d(16, cout, k, padding=pad, groups=groups, dilation=dilation)

    def forward(self, x):
        return self.conv(x)


class GatherMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 32)

    def forward(self, ids):
        return self.emb(ids).mean(1)


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(100, 32, mode="mean")

    def forward(self, ids):
        return self.bag(ids)


def floats(g, *shape):
    return torch.randn(*shape, generator=g)


def ids(g, *shape):
    return torch.randint(0, 100, shape, generator=g)


def pad_mask(k):
    """[2, 16], True on padding: the last 3 and 7 keys (sample 0), 5 and 1 (sample 1)."""
    m = torch.zeros(2, 16, dtype=torch.bool)
    for row, n in enumerate(((3, 7), (5, 1))[k]):
        m[row, 16 - n:] = True
    return m


# name -> (module factory, input names, output names, inputs(generator, sample k))
VARIANTS = {}


def variant(name, make, ins, outs, inputs):
    VARIANTS[name] = (make, ins, outs, inputs)


for _nf, _tag in ((False, "post"), (True, "pre")):
    for _act in ("gelu", "relu"):
        variant("tel_%s_%s" % (_tag, _act), lambda nf=_nf, a=_act: Tel(nf, a), ["x"], ["y"],
                lambda g, k: [floats(g, 1, 16, 64)])
variant("mha_self", Mha, ["x"], ["y"], lambda g, k: [floats(g, 1, 16, 64)])
variant("mha_self_mask", Mha, ["x", "mask"], ["y"],
        lambda g, k: [floats(g, 2, 16, 64), pad_mask(k)])
for _b in (1, 8):
    variant("grucell_b%d" % _b, Gru, ["x", "h"], ["h_out"],
            lambda g, k, b=_b: [floats(g, b, 16), 0.5 * floats(g, b, 32)])
    variant("lstmcell_b%d" % _b, Lstm, ["x", "h", "c"], ["h_out", "c_out"],
            lambda g, k, b=_b: [floats(g, b, 16), 0.5 * floats(g, b, 32),
                                0.5 * floats(g, b, 32)])
for _name, _args in (("plain", dict(cout=32, k=3)),
                     ("groups", dict(cout=32, k=3, groups=4)),
                     ("depthwise", dict(cout=16, k=5, groups=16, pad=2)),
                     ("dilation", dict(cout=32, k=3, dilation=2, pad=2))):
    variant("conv1d_" + _name, lambda a=_args: Conv(**a), ["x"], ["y"],
            lambda g, k: [floats(g, 1, 16, 64)])
variant("embbag_gather_mean", GatherMean, ["ids"], ["y"], lambda g, k: [ids(g, 4, 8)])
variant("embbag_embeddingbag_mean", Bag, ["ids"], ["y"], lambda g, k: [ids(g, 4, 8)])


# ---- export ----------------------------------------------------------------------------------

def export(model, args, ins, outs, opset):
    """torch.onnx.export into memory (eval mode, autograd on: see the docstring), doc
    strings stripped, checked by onnx.checker (full check)."""
    buf = io.BytesIO()
    torch.onnx.export(model, tuple(args), buf, input_names=ins, output_names=outs,
                      opset_version=opset, do_constant_folding=True, export_params=True,
                      training=torch.onnx.TrainingMode.EVAL)
    return make_models.stripped(buf.getvalue())


# Opset 18 (ONNX 1.13; see the Changelog's "Version 18 of the default ONNX operator set"):
# ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceMax, ReduceMean, ReduceMin,
# ReduceProd and ReduceSumSquare take their axes as an optional second input instead of an
# attribute (ReduceSum did at 13); Split takes 'split' as an input (since 13) or the new
# attribute num_outputs, and one of the two is required; Pad gains an optional axes input,
# Resize the attributes antialias, axes and keep_aspect_ratio_policy, ScatterElements and
# ScatterND the reductions max and min, LpPool ceil_mode and dilations (defaults unchanged);
# BitwiseAnd/Or/Xor/Not, CenterCropPad, Col2Im, GroupNormalization, Mish,
# OptionalGetElement/HasElement are new. Only the Reduce and Split changes make an opset-17
# node invalid at 18; the others only add inputs, attributes or values whose defaults keep
# the opset-17 meaning, so those nodes are kept as they are.
REDUCE_18 = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
             "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"}


def to_opset18(m17):
    """The opset-17 export M17 rewritten to opset 18 (a new ModelProto): Reduce* axes
    attributes become int64 initializers read as the second input (in Loop bodies too); a
    Split without a split input gets num_outputs; opset import 18, IR version at least 8.
    Of this folder's models only the embedding bags change beyond the opset number (their
    ReduceMean): torch writes Split with a split input, and LayerNormalization at 17."""
    m = onnx.ModelProto()
    m.CopyFrom(m17)
    g = m.graph
    count = 0

    def rewrite(graph):
        nonlocal count
        for n in graph.node:
            for a in n.attribute:              # Loop/If/Scan bodies
                if a.type == onnx.AttributeProto.GRAPH:
                    rewrite(a.g)
                for sub in a.graphs:
                    rewrite(sub)
            if n.domain not in ("", "ai.onnx"):
                continue
            if n.op_type in REDUCE_18:
                axes = [a for a in n.attribute if a.name == "axes"]
                if axes:
                    name = "%s_axes_op18_%d" % (n.output[0], count)
                    count += 1
                    g.initializer.append(numpy_helper.from_array(
                        np.array(list(axes[0].ints), np.int64), name))
                    n.attribute.remove(axes[0])
                    del n.input[1:]
                    n.input.append(name)
            elif n.op_type == "Split":
                if len(n.input) < 2 or not n.input[1]:
                    del n.input[1:]
                    n.attribute.append(helper.make_attribute("num_outputs", len(n.output)))
    rewrite(g)
    for op in m.opset_import:
        if op.domain in ("", "ai.onnx"):
            op.version = 18
    m.ir_version = max(m.ir_version, 8)
    return m


def save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def make(name, out_dir, listing=False):
    make_module, ins, outs, inputs = VARIANTS[name]
    seed = sum(map(ord, name))                 # fixed per variant
    torch.manual_seed(seed)
    model = randomise(make_module(), seed).eval()
    g = torch.Generator().manual_seed(seed + 1)
    samples = [inputs(g, k) for k in range(NSAMPLES)]
    data = {}
    with torch.no_grad():
        for k, args in enumerate(samples):
            got = model(*args)
            got = got if isinstance(got, tuple) else (got,)
            for n, a in zip(ins, args):
                data["in:%s:%d" % (n, k)] = a.numpy()
            for n, a in zip(outs, got):
                data["out:%s:%d" % (n, k)] = a.numpy()
    kinds.write_npz(os.path.join(out_dir, name + ".npz"), data)
    written = []
    for opset in OPSETS:
        m = export(model, samples[0], ins, outs, opset)
        path = os.path.join(out_dir, "%s_op%d.onnx" % (name, opset))
        save(m, path)
        written.append((path, m))
        if opset == OPSET18_FROM:
            m18 = to_opset18(m)
            path = os.path.join(out_dir, "%s_op18.onnx" % name)
            save(m18, path)
            written.append((path, m18))
    for path, m in written:
        print("%-36s %7d B  %3d nodes" % (os.path.basename(path), os.path.getsize(path),
                                         len(m.graph.node)))
        if listing:
            for n in m.graph.node:
                if n.op_type != "Constant":
                    print("    %s %s -> %s" % (n.op_type, list(n.input), list(n.output)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", metavar="REGEX", help="the variants whose name matches")
    ap.add_argument("--out", default=HERE, help="where to write (default: this folder)")
    ap.add_argument("--list", action="store_true", help="print each graph's nodes")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    print("torch %s, onnx %s" % (torch.__version__, onnx.__version__))
    for name in VARIANTS:
        if not args.only or re.search(args.only, name):
            make(name, args.out, args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
