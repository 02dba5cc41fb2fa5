"""The two figures of make bench (see bench/README.md, "Plots"): latency per model against
the peers, and the round-trip sweep. Needs matplotlib (Debian: python3-matplotlib); every
function returns (path, None) or (None, why not)."""
import json
import math


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt, None
    except Exception as e:          # noqa: BLE001  (missing or broken: say why, go on)
        return None, "no matplotlib (Debian package python3-matplotlib): %s" % e


# label -> (marker, colour, size)
SERIES = [("mlbc, gcc -O2 (reference)", "o", "#1f77b4", 70),
          ("mlbc, fastest flag set", "^", "#2ca02c", 55),
          ("mlbc, slowest flag set", "v", "#98df8a", 55),
          ("mlbc --blas", "s", "#17becf", 45),
          ("ONNX Runtime 1 thread", "D", "#d62728", 55),
          ("libtorch 1 thread", "X", "#ff7f0e", 65)]


def latency_plot(models, path, title, stat="median"):
    """MODELS: [{"name", "ns": {series label: ns or None}, "note": str}], top to bottom."""
    plt, why = _pyplot()
    if plt is None:
        return None, why
    models = [m for m in models if any(m["ns"].values())]
    if not models:
        return None, "no model was measured"
    height = 2.3 + 0.42 * len(models)
    fig, ax = plt.subplots(figsize=(12, height))
    ys = list(range(len(models)))[::-1]
    for label, marker, colour, size in SERIES:
        pts = [(m["ns"].get(label), y) for m, y in zip(models, ys) if m["ns"].get(label)]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, s=size,
                       color=colour, label=label, zorder=3, alpha=0.9,
                       edgecolors="black", linewidths=0.4)
    for m, y in zip(models, ys):
        vals = [v for v in m["ns"].values() if v]
        ax.plot([min(vals), max(vals)], [y, y], color="#cccccc", lw=1, zorder=1)
    ax.set_xscale("log")
    ax.set_yticks(ys)
    ax.set_yticklabels([m["name"] for m in models], fontsize=9)
    ax.set_ylim(-0.7, len(models) - 0.3)
    lo = min(v for m in models for v in m["ns"].values() if v)
    hi = max(v for m in models for v in m["ns"].values() if v)
    ax.set_xlim(10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi)) * 3)
    for m, y in zip(models, ys):
        if m.get("note"):
            ax.annotate(m["note"], (1.005, y), xycoords=("axes fraction", "data"),
                        fontsize=7.5, va="center", color="#444444", annotation_clip=False)
    ax.grid(True, which="major", axis="x", color="#dddddd", zorder=0)
    ax.grid(True, which="minor", axis="x", color="#f2f2f2", zorder=0)
    ax.set_xlabel("latency of one run, ns (log scale; %s of the interleaved rounds' batches;"
                  " lower is faster)" % stat)
    ax.set_title(title, fontsize=11)
    fig.subplots_adjust(left=0.2, right=0.8, top=1 - 0.45 / height, bottom=1.1 / height)
    fig.legend(loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=9,
               frameon=False)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path, None


ROUNDTRIP_STYLE = {"a": ("-", "o", "#1f77b4"), "b": ("-", "s", "#d62728"),
                   "g": ("-", "x", "#8c564b"), "r": ("--", "x", "#c49c94"),
                   "G": ("-", "+", "#e377c2"),
                   "B": ("--", "s", "#ff9896"), "p": ("-", "D", "#9467bd"),
                   "c": ("-", "^", "#7f7f7f"), "C": ("--", "^", "#bcbd22"),
                   "d": ("-", "v", "#2ca02c"), "A": (":", None, "#1f77b4"),
                   "D": (":", None, "#2ca02c")}


def roundtrip_plot(data_path, path):
    """The ML-Compiler-Bridge figure: ms for the queries at each N, one line per runner,
    from roundtrip.py's JSON (see roundtrip.write_json)."""
    plt, why = _pyplot()
    if plt is None:
        return None, why
    try:
        with open(data_path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        return None, "no round-trip data (%s)" % e
    sizes = data["sizes"]
    fig, ax = plt.subplots(figsize=(11, 6.5))
    for v in data["order"]:
        ms = data["median_ms"][v]
        style, marker, colour = ROUNDTRIP_STYLE.get(v, ("-", None, None))
        ax.plot(sizes, [ms[str(n)] for n in sizes], linestyle=style, marker=marker,
                markersize=3.5 if len(sizes) > 20 else 6, color=colour, lw=1.4,
                label="%s  (total %.1f ms)" % (data["labels"][v], data["total_ms"][v]))
    ax.set_yscale("log")
    ax.set_xlabel("feature vector size N (float32 elements)")
    ax.set_ylabel("ms for %d queries (median of %d rounds; log scale)"
                  % (data["queries"], data["rounds"]))
    ax.set_xlim(0, max(sizes) * 1.02)
    ax.grid(True, which="major", color="#dddddd")
    ax.grid(True, which="minor", axis="y", color="#f2f2f2")
    ax.set_title("Round trip, y = x.W + b with W of N x 1: %d queries per N, one line per "
                 "runner" % data["queries"], fontsize=11)
    ax.legend(fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=2,
              frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path, None
