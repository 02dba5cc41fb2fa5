// ArgMax/ArgMin along one axis: x viewed as [A][K][B], one index per (a, b). Columns are
// scanned in chunks of CH so the running best values and indices live in local arrays and
// the inner loops are unit-stride over b. Ties keep the ${TIE} index; a NaN counts as the
// extreme value (numpy's rule).
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, int64_t *restrict y)
{
    ${C} best[${CH}];
    int64_t bi[${CH}];
    long a, b0, j, k;
    ${FOR_A} {
        const ${TX} *restrict xa = x + a * ${KB};
        ${FOR_B0} {
            const long nb = ${B} - b0 < ${CH} ? ${B} - b0 : ${CH};
            for (j = 0; j < nb; j++) {
                best[j] = ${LOAD0};
                bi[j] = 0;
            }
            ${FOR_K1}
                for (j = 0; j < nb; j++) {
                    const ${C} v = ${LOADK};
                    if (${BETTER}) {
                        best[j] = v;
                        bi[j] = k;
                    }
                }
            for (j = 0; j < nb; j++)
                y[a * ${B} + b0 + j] = bi[j];
        }
    }
}
