// ${OP} along an axis with inner stride: x viewed as [A][K][B], normalised over K for each
// (a, b). Numerically stable (the maximum is subtracted before exp). Columns go in chunks
// of CH with their maxima and sums in local arrays; the sums run over k in order, so
// results are deterministic, and the inner loops are unit-stride over b. PRE (float) parks
// x - max in y and exponentiates it there with mlbc_vexp_f32; EXP is then y's value.
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, ${TY} *restrict y)
{
    ${C} m[${CH}], s[${CH}];
    long a, b0, j, k;
    ${FOR_A} {
        const ${TX} *restrict xa = x + a * ${KB};
        ${TY} *restrict ya = y + a * ${KB};
        ${FOR_B0} {
            const long nb = ${B} - b0 < ${CH} ? ${B} - b0 : ${CH};
            for (j = 0; j < nb; j++) {
                m[j] = -INFINITY;
                s[j] = 0;
            }
            for (k = 0; k < ${K}; k++)
                for (j = 0; j < nb; j++)
                    m[j] = fmax_nan(m[j], ${LOAD});
${PRE}            for (k = 0; k < ${K}; k++)
                for (j = 0; j < nb; j++) {
                    const ${C} e = ${EXP};
${STOREE}                    s[j] += e;
                }
            for (j = 0; j < nb; j++)
                s[j] = ${FINISH};
            for (k = 0; k < ${K}; k++)
                for (j = 0; j < nb; j++)
                    ya[k * ${B} + b0 + j] = ${OUT};
        }
    }
}
