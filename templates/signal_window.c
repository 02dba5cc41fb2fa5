// Window function of N points: y[k] = A0 - A1 cos(2 pi k / D) + A2 cos(4 pi k / D), with
// D = N (periodic) or N - 1 (symmetric; a 1-point symmetric window is 1), computed in
// double. CHECK (possibly empty) verifies that the size input gives N; returns 0 if not.
/* ${DOC} */
static int ${FN}(const ${ST} *restrict size, ${T} *restrict y)
{
    const double two_pi = 6.283185307179586476925286766559;
    long k;
    (void)size;
${CHECK}    for (k = 0; k < ${N}; k++) {
        const double t = ${D} > 0 ? two_pi * (double)k / ${D} : 0.0;
        const double v = mlbc_madd(${A2}, cos(2 * t), mlbc_madd(-(${A1}), cos(t), ${A0}));
        y[k] = ${STORE};
    }
    return 1;
}
