// CumSum along one axis (${MODE}): x viewed as [A][K][B]. A chunk of up to CH running sums
// (in ${C}) is carried along the axis in scan order; inner loops are unit-stride over b.
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, ${TY} *restrict y)
{
    ${C} acc[${CH}];
    long a, b0, j, k;
    ${FOR_A} {
        const ${TX} *restrict xa = x + a * ${KB};
        ${TY} *restrict ya = y + a * ${KB};
        ${FOR_B0} {
            const long nb = ${B} - b0 < ${CH} ? ${B} - b0 : ${CH};
            for (j = 0; j < nb; j++)
                acc[j] = 0;
            for (k = ${START}; ${COND}; k${STEP})
                for (j = 0; j < nb; j++) {
                    const ${C} v = ${LOAD};
${BODY}                }
        }
    }
}
