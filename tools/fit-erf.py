#!/usr/bin/python3
"""Prints the tables of templates/vmath_erf.c: per interval k of width 1/2 from 0.875 (centre
m = 1.125 + k/2, t = a - m in [-1/4, 1/4]), erf(m + t) ~ hi + lo + c1 t + ... + c7 t^7, fitted
by least squares on Chebyshev nodes in double; c7 down to c1 each rounded to float before
the lower ones are refitted, so that the rounding of one is absorbed by the next; the
constant left is split into hi + lo. numpy and math.erf only."""
import math
import re

import numpy as np

DEG, INTERVALS, NODES = 7, 7, 4000


def f32(v):
    return float(np.float32(v))


def interval(k):
    m = 1.125 + 0.5 * k
    t = 0.2501 * np.cos(np.pi * (np.arange(NODES) + 0.5) / NODES)
    y = np.frompyfunc(math.erf, 1, 1)(m + t).astype(np.float64)
    v = np.vander(t, DEG + 1, increasing=True)
    fixed = {}
    for j in range(DEG, 0, -1):
        free = [i for i in range(DEG + 1) if i not in fixed]
        rest = y - sum(c * t ** i for i, c in fixed.items())
        sol = np.linalg.lstsq(v[:, free], rest, rcond=None)[0]
        fixed[j] = f32(sol[free.index(j)])
    rest = y - sum(c * t ** i for i, c in fixed.items())
    c0 = float(np.linalg.lstsq(v[:, [0]], rest, rcond=None)[0][0])
    hi = f32(c0)
    return [hi, f32(c0 - hi)] + [fixed[j] for j in range(1, DEG + 1)]


def literal(v):
    if v in (0.0, 1.0):
        return "%.1ff" % v
    m = re.match(r"(-?0x1\.)([0-9a-f]*)p([+-]\d+)", float(v).hex())
    return "%s%sp%sf" % (m.group(1), m.group(2).rstrip("0") or "0", m.group(3).lstrip("+"))


def main():
    rows = [interval(k) for k in range(INTERVALS)] + [[1.0, 0.0] + [0.0] * DEG]  # padding
    for j, name in enumerate(["hi", "lo"] + ["c%d" % i for i in range(1, DEG + 1)]):
        vals = [literal(r[j]) for r in rows]
        print("static const float mlbc_erf_%s[8] = {\n    %s,\n    %s};"
              % (name, ", ".join(vals[:4]), ", ".join(vals[4:])))


if __name__ == "__main__":
    main()
