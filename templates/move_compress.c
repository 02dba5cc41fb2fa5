// Compress: x viewed as [OUTER, N, INNER]; the runs [o, j, :] whose cond[j] is true are
// stored one after another. cond has NC entries; exactly NOUT must be true (the output's
// static size) and none beyond N, or the kernel returns 1 before it writes anything.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const uint8_t *restrict cond, ${T} *restrict y)
{
    long o, j, count = 0;
    for (j = 0; j < ${NC}; j++)
        if (cond[j]) {
            if (j >= ${N})
                return 1;
            count++;
        }
    if (count != ${NOUT})
        return 1;
    ${FOR_O}
        for (j = 0; j < ${NM}; j++)
            if (cond[j]) {
                mlbc_copy(y, x + (o * ${N} + j) * ${INNER}, ${INNER} * sizeof *y);
                y += ${INNER};
            }
    return 0;
}
