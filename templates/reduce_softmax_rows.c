// ${OP} over contiguous rows: x viewed as [A][K]. Numerically stable: the row maximum is
// subtracted before exp. Max and sum use L interleaved lanes (element k in lane k mod L, the
// tail in lane 0) folded by halving (lane j absorbs lane j + w, w = L/2, ..., 1): a fixed
// order, so results are deterministic.
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, ${TY} *restrict y)
{
    long a, k;
    int j, w;
    for (a = 0; a < ${A}; a++) {
        const ${TX} *restrict xr = x + a * ${K};
        ${TY} *restrict yr = y + a * ${K};
        ${C} m[${L}], s[${L}], mx, sum;
        for (j = 0; j < ${L}; j++) {
            m[j] = -INFINITY;
            s[j] = 0;
        }
        for (k = 0; k < ${KM}; k += ${L})
            for (j = 0; j < ${L}; j++)
                m[j] = fmax_nan(m[j], ${LOADKJ});
        for (k = ${KM}; k < ${K}; k++)
            m[0] = fmax_nan(m[0], ${LOADK});
        for (w = ${L} / 2; w > 0; w /= 2)
            for (j = 0; j < w; j++)
                m[j] = fmax_nan(m[j], m[j + w]);
        mx = m[0];
        for (k = 0; k < ${KM}; k += ${L})
            for (j = 0; j < ${L}; j++) {
                const ${C} e = exp${SFX}(${LOADKJ} - mx);
${STOREE_KJ}                s[j] += e;
            }
        for (k = ${KM}; k < ${K}; k++) {
            const ${C} e = exp${SFX}(${LOADK} - mx);
${STOREE_K}            s[0] += e;
        }
        for (w = ${L} / 2; w > 0; w /= 2)
            for (j = 0; j < w; j++)
                s[j] += s[j + w];
        sum = ${FINISH};
        for (k = 0; k < ${K}; k++)
            yr[k] = ${OUT};
    }
}
