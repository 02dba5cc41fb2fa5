// Convolution over the batch and the groups: each call computes a panel of output channels.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long n, g${DECLS};
    for (n = 0; n < ${N}; n++)
        for (g = 0; g < ${G}; g++) {
${CALLS}        }
}
