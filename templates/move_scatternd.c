// ScatterND: y = x, then each of M tuples of K coordinates names a contiguous run of S
// elements of y, updated from the matching run of u (assigned, or combined by the
// reduction), in tuple order. Negative coordinates count from the end; one out of range
// makes the kernel return 1.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${IT} *restrict ind,
    const ${T} *restrict u, ${T} *restrict y)
{
    long m, i, off;
    memcpy(y, x, ${NX} * sizeof *y);
    for (m = 0; m < ${M}; m++) {
        const ${IT} *t = ind + m * ${K};
        off = 0;
${COORDS}${UPDATE}
    }
    return 0;
}
