// Fill a buffer with one value (ConstantOfShape, Dropout's mask). gcc turns it into memset
// where the value's bytes allow.
/* ${DOC} */
static void ${FN}(${T} *restrict y)
{
    for (long i = 0; i < ${N}; i++)
        y[i] = ${V};
}
