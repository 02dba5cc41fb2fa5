// Run-time check that the scales or sizes input of Resize/Upsample gives the declared
// static output shape: COND over s, the input's elements.
/* ${DOC} */
static int ${FN}(const ${T} *restrict s)
{
    return ${COND};
}
