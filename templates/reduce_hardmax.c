// Hardmax: 1 at the first maximum along the axis, 0 elsewhere; x viewed as [A][K][B].
// Columns go in chunks of CH with the running maxima in local arrays (unit-stride inner
// loops). A NaN counts as the maximum (numpy's argmax rule).
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, ${TY} *restrict y)
{
    ${C} best[${CH}];
    long bi[${CH}];
    long a, b0, j, k;
    ${FOR_A} {
        const ${TX} *restrict xa = x + a * ${KB};
        ${TY} *restrict ya = y + a * ${KB};
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
            ${FOR_K}
                for (j = 0; j < nb; j++)
                    ya[k * ${B} + b0 + j] = k == bi[j] ? ${ONE} : ${ZERO};
        }
    }
}
