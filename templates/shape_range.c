// Range: y[i] = start + i * delta in the element type (VALUE: for float and double a
// contraction-proof multiply-add), N elements. CHECK (possibly empty)
// verifies at run time that the inputs give N elements, ceil((limit - start) / delta)
// clamped at 0; the function returns 0 if they do not.
/* ${DOC} */
static int ${FN}(const ${T} *restrict start, const ${T} *restrict limit,
                 const ${T} *restrict delta, ${T} *restrict y)
{
    const ${T} s = start[0], d = delta[0];
${CHECK}    for (long i = 0; i < ${N}; i++)
        y[i] = (${T})(${VALUE});
    return 1;
}
