// DFT along one axis: x viewed as [OUTER, S, INNER, C] (C = 1 real, 2 complex), y as
// [OUTER, BINS, INNER, 2]. Each of the OUTER * INNER signals is its first NS = min(S, L)
// samples, zero-padded to L points; y[k] = ${WHAT} for k < BINS, accumulated in double in
// n order with a table of the L twiddles (k n taken mod L exactly). ${CHECKDOC}
/* ${DOC} */
static int ${FN}(const ${T} *restrict x${DLPARAM}, ${T} *restrict y)
{
    const double two_pi = 6.283185307179586476925286766559;
    double cs[${L}], sn[${L}], xr[${NSA}], xi[${NSA}];
    long o, j, k, n, m;
${DLCHECK}    for (m = 0; m < ${L}; m++) {
        cs[m] = cos(two_pi * (double)m / ${L});
        sn[m] = sin(two_pi * (double)m / ${L});
    }
    ${FOR_O}
        ${FOR_J} {
            const ${T} *xs = x + o * ${XO} + j * ${C};
            ${T} *ys = y + o * ${YO} + j * 2;
            for (n = 0; n < ${NS}; n++) {
                xr[n] = ${LOADR};
                xi[n] = ${LOADI};
            }
            for (k = 0; k < ${BINS}; k++) {
                double re = 0, im = 0;
                m = 0;
                for (n = 0; n < ${NS}; n++) {
                    re = ${RE};
                    im = ${IM};
                    m += k;
                    if (m >= ${L})
                        m -= ${L};
                }
                ys[k * ${YS}] = ${STORERE};
                ys[k * ${YS} + 1] = ${STOREIM};
            }
        }
    return 1;
}
