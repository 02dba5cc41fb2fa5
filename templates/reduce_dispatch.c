// Reduction whose axes arrive at run time: the compiler specialised one kernel per set of
// axes that agrees with the declared output shape; this picks it. Returns 1 (and writes
// nothing) for axes out of range or not matching the declared shape.
/* ${DOC} */
static int ${FN}(const ${TA} *restrict axes, const ${TX} *restrict x, ${TY} *restrict y)
{
    unsigned long mask = 0;
    long i;
    ${FOR_I} {
        const long a = axes[i] < 0 ? (long)axes[i] + ${RANK} : (long)axes[i];
        if (a < 0 || a >= ${RANK})
            return 1;
        mask |= 1ul << a;
    }
${CASES}    return 1;
}
