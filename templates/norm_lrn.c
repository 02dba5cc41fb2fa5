// LRN: x viewed as [N][C][S]; y = x / (bias + alpha / size * sum of x^2 over the channel
// window [c - ${LO}, c + ${HI}] clipped to [0, C))^beta. The window sum runs over channels in
// order into a chunk of up to CH spatial positions (unit-stride inner loops).
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, ${TX} *restrict y)
{
    ${CT} acc[${CH}];
    long n, c, cc, s0, j;
    ${FOR_N}
        ${FOR_C} {
            const long lo = c - ${LO} < 0 ? 0 : c - ${LO};
            const long hi = c + ${HI} > ${C} - 1 ? ${C} - 1 : c + ${HI};
            ${FOR_S0} {
                const long ns = ${S} - s0 < ${CH} ? ${S} - s0 : ${CH};
                for (j = 0; j < ns; j++)
                    acc[j] = 0;
                for (cc = lo; cc <= hi; cc++) {
                    const ${TX} *restrict xr = x + (n * ${C} + cc) * ${S} + s0;
                    for (j = 0; j < ns; j++) {
                        const ${CT} v = ${LOADR};
                        acc[j] = ${SQJ};
                    }
                }
                for (j = 0; j < ns; j++)
                    y[(n * ${C} + c) * ${S} + s0 + j] = ${STORE};
            }
        }
}
