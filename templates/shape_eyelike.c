// EyeLike: zeros with ones on diagonal K of a ROWS x COLS matrix; the loop runs over the
// rows that diagonal crosses.
/* ${DOC} */
static void ${FN}(${T} *restrict y)
{
    memset(y, 0, ${BYTES});
    for (long i = ${I0}; i < ${I1}; i++)
        y[${IDX}] = ${ONE};
}
