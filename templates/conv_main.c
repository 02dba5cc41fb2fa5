// Convolution over the batch and the groups: each call computes a panel of output channels.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long n, g${DECLS};
    ${FOR_N}
        ${FOR_G} {
${CALLS}        }
}
