// Gather along one axis. The data is viewed as [OUTER, N, INNER] and the output as
// [OUTER, NIDX, INNER]: each index selects a contiguous run of INNER elements. Negative
// indices count from the end; any index out of range makes the kernel return 1 before it
// writes anything.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${IT} *restrict ind, ${T} *restrict y)
{
    long o, k;
    ${FOR_K}
        if (ind[k] < -${N} || ind[k] >= ${N})
            return 1;
    ${FOR_O}
        ${FOR_K} {
            const long i = (long)ind[k] + (ind[k] < 0 ? ${N} : 0);
            mlbc_copy(y + (o * ${NIDX} + k) * ${INNER}, x + (o * ${N} + i) * ${INNER},
                      ${INNER} * sizeof *y);
        }
    return 0;
}
