// Run-time check of Squeeze/Unsqueeze axes that were not constant at compile time. FULL is
// the longer shape (Squeeze's input, Unsqueeze's output), PART the shorter one. The K axes
// must name distinct dimensions of FULL (negative counts from the end) that are 1 and
// whose removal leaves PART. Returns 1 if they do.
/* ${DOC} */
static int ${FN}(const ${T} *restrict axes)
{
    static const long full[${R}] = {${FULL}};
    static const long part[${RP1}] = {${PART}};
    unsigned long mask = 0;
    long i, j = 0;
    ${FOR_K} {
        long a = (long)axes[i];
        if (a < 0)
            a += ${R};
        if (a < 0 || a >= ${R} || ((mask >> a) & 1))
            return 0;
        mask |= 1ul << a;
    }
    for (i = 0; i < ${R}; i++) {
        if ((mask >> i) & 1) {
            if (full[i] != 1)
                return 0;
        } else if (part[j++] != full[i]) {
            return 0;
        }
    }
    return 1;
}
