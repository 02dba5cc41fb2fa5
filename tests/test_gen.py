"""Random policy-shaped networks (models/gen.py, the benchmark's adversary) are computed right:
a fixed-seed sample, each compiled by mlbc, built warning-free, run on random inputs and
compared with models/onnx_np.py in float64 (gen.reference). The named kinds are what mlbc was
tuned on; these are what it was not.

A network mlbc refuses, or computes wrong, fails, unless XFAIL lists it with the reason; an
expected failure that passes fails too (remove it from XFAIL then). One network again:
    /usr/bin/python3 models/gen.py --seed SEED --index I -o x.onnx
"""
import argparse
import concurrent.futures
import os
import sys
import tempfile
import time

import numpy as np

import mlbctest
from mlbctest import Failure

sys.path.insert(0, os.path.join(mlbctest.ROOT, "models"))
import gen  # noqa: E402

SEED, COUNT = 7, 16            # every family but 2-D pooling, in 60 s (bench/run.py: seed 31)
# networks of other seeds that once went wrong, checked too: (seed, index, what)
REGRESSIONS = [(31, 26, "gcc -O2 warned about a Conv1d's pooled output copy's loop it never "
                        "enters (its row count a constant there)"),
               (45, 4, "the generator masked attention over a shortened sequence with the "
                       "token ids' padding mask: shapes ONNX rejects")]
# network name -> why mlbc is expected to fail on it (an issue, a refusal by design)
XFAIL = {}

TALLY = mlbctest.Tally()
result = TALLY.result


def check_action(got, want, logits):
    """ArgMax: the chosen action's reference logit is the largest within the tolerance
    (float32 against float64 may order near-ties differently)."""
    chosen = np.take_along_axis(logits, got.astype(np.int64)[:, None], axis=1)[:, 0]
    if not np.all(np.isclose(chosen, logits.max(axis=1), rtol=1e-3, atol=1e-5)):
        mlbctest.compare("action", got, want)


def check(mlbc, name, model, work):
    """Raises Failure with what is wrong."""
    path = os.path.join(work, name + ".onnx")
    gen.kinds.save(model, path)
    exe = mlbctest.compile_model(mlbc, path, os.path.join(work, name))
    # at plain -O2 too, how distributions build compilers: gcc then propagates constants into
    # the vector paths, and may warn where -O1 does not
    flags = ["-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic"]
    r = mlbctest.run(["gcc", *flags, "-c", os.path.join(work, name, "model.c"), "-o", os.devnull])
    warns = mlbctest.code_warnings("gcc", flags, r.stderr)
    if r.returncode or warns:
        raise Failure("gcc -O2 warns: %s" % (warns[0] if warns else mlbctest.first_line(r.stderr)))
    feeds = gen.random_inputs(model, seed=1)
    want = gen.reference(model, feeds)
    in_types, out_types = mlbctest.tensor_types(model)
    names = [o.name for o in model.graph.output]
    got = mlbctest.execute(exe, os.path.join(work, name), list(feeds.values()), in_types,
                           [(t, want[n].shape) for t, n in zip(out_types, names)])
    for n, g in zip(names, got):
        if n == "action":
            check_action(g, want[n], want["logits"])
        else:
            mlbctest.compare(n, g, want[n])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--count", type=int, default=COUNT)
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    args = ap.parse_args()
    mlbc = os.path.abspath(os.path.join(args.build, "mlbc"))
    t0 = time.time()
    nets = list(gen.networks(args.seed, args.count))
    nets += [gen.build(seed, i) for seed, i, _ in REGRESSIONS]

    def one(net):
        try:
            check(mlbc, net[0], net[1], work)
            return None
        except (Failure, NotImplementedError) as e:
            return "%s: %s" % (type(e).__name__, e) if isinstance(e, NotImplementedError) \
                else str(e)

    with tempfile.TemporaryDirectory(prefix="mlbc-gen-") as work:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for (name, _), why in zip(nets, pool.map(one, nets)):
                if name in XFAIL:
                    result(why is not None, "%s (expected failure: %s)" % (name, XFAIL[name]),
                           "passes now: remove it from XFAIL")
                else:
                    result(why is None, name, why or "")
    unknown = set(XFAIL) - {n for n, _ in nets}
    result(not unknown, "XFAIL names networks of this sample", ", ".join(sorted(unknown)))
    print("(seed %d, %d networks, %.0f s; one alone: models/gen.py --seed %d --index I)"
          % (args.seed, len(nets), time.time() - t0, args.seed))
    return TALLY.close()


if __name__ == "__main__":
    sys.exit(main())
