// NonZero: the coordinates of the non-zero elements of x (N elements, row-major), written
// as y[axis][k] for the k-th non-zero element in row-major order. Exactly K elements must
// be non-zero (the output's static size), or the kernel returns 1 before it writes anything.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, int64_t *restrict y)
{
    long i, k = 0;
    for (i = 0; i < ${N}; i++)
        k += ${NZ};
    if (k != ${K})
        return 1;
    k = 0;
    for (i = 0; i < ${N}; i++)
        if (${NZ}) {
${COORDS}            k++;
        }
    return 0;
}
