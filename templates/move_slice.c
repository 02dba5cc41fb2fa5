// Slice with starts/ends (and axes, steps) known only at run time. x is [DIMS] and the
// output has the declared shape [ODIMS]. Parameters are normalised and clamped as ONNX
// specifies; a zero step, a bad or repeated axis, or a result shape other than the declared
// one makes the kernel return 1 before it writes anything. The innermost axis is copied with
// memcpy when its step is 1.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, ${PARAMS}, ${T} *restrict y)
{
    static const long long dim[${R}] = {${DIMS}}, odim[${R}] = {${ODIMS}};
    static const long long xstride[${R}] = {${XSTRIDES}};
    long long start[${R}], step[${R}], n[${R}], idx[${R}];
    unsigned char seen[${R}];
    long i, k;
    int r;
    for (r = 0; r < ${R}; r++) {
        start[r] = 0;
        step[r] = 1;
        n[r] = dim[r];
        idx[r] = 0;
        seen[r] = 0;
    }
    ${FOR_K} {
        long long a = ${AXIS}, s = starts[k], e = ends[k], st = ${STEP}, d;
        if (a < 0)
            a += ${R};
        if (a < 0 || a >= ${R} || seen[a] || st == 0)
            return 1;
        seen[a] = 1;
        d = dim[a];
        if (s < 0)
            s += d;
        if (e < 0)
            e += d;
        if (st > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            n[a] = e > s ? (e - s - 1) / st + 1 : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            n[a] = s > e ? 1 - (s - e - 1) / st : 0;
        }
        start[a] = s;
        step[a] = st;
    }
    for (r = 0; r < ${R}; r++)
        if (n[r] != odim[r])
            return 1;
    ${FOR_I} {
        long long off = start[${R1}];
        for (r = 0; r < ${R1}; r++)
            off += (start[r] + idx[r] * step[r]) * xstride[r];
        if (step[${R1}] == 1) {
            mlbc_copy(y + i * ${LAST}, x + off, ${LAST} * sizeof *y);
        } else {
            ${FOR_LAST}
                y[i * ${LAST} + k] = x[off + k * step[${R1}]];
        }
        for (r = ${R1} - 1; r >= 0 && ++idx[r] == odim[r]; r--)
            idx[r] = 0;
    }
    return 0;
}
