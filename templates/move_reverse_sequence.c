// ReverseSequence: for each batch b the first lens[b] steps along the time axis are
// reversed and the rest copied; a step of one batch is a run of INNER elements (strides BS
// and TS in x and y). A length outside [0, T] makes the kernel return 1.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${IT} *restrict lens, ${T} *restrict y)
{
    long b, t;
    for (b = 0; b < ${B}; b++)
        if (lens[b] < 0 || lens[b] > ${TT})
            return 1;
    for (b = 0; b < ${B}; b++) {
        const long n = (long)lens[b];
        for (t = 0; t < ${TT}; t++) {
            const long s = t < n ? n - 1 - t : t;
            mlbc_copy(y + b * ${BS} + t * ${TS}, x + b * ${BS} + s * ${TS}, ${INNER} * sizeof *y);
        }
    }
    return 0;
}
