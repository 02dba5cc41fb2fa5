// One matrix of a (batched) product: the rows of Y, each computed by the row kernels called.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long m${DECLS};
    for (m = 0; m < ${M}; m++) {
${CALLS}    }
}
