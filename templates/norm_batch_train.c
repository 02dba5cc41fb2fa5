// BatchNormalization, training form: x viewed as [N][C][S]. Per channel c the batch mean
// and (population) variance over N x S are computed in two passes, each summing in L
// interleaved lanes over s (element s in lane s mod L, the tail in lane 0; lanes carried
// across n, folded by halving at the end): a fixed order, so results are deterministic.
// y uses the batch statistics; the running statistics are blended with momentum.
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, const ${TS} *restrict scale, const ${TS} *restrict bias,
                  const ${TM} *restrict mean, const ${TM} *restrict var, ${TX} *restrict y,
                  ${TM} *restrict run_mean, ${TM} *restrict run_var)
{
    long n, c, i;
    int j, w;
    for (c = 0; c < ${C}; c++) {
        ${CT} acc[${L}], bm, bv, a, b;
        for (j = 0; j < ${L}; j++)
            acc[j] = 0;
        for (n = 0; n < ${N}; n++) {
            const ${TX} *restrict xr = x + (n * ${C} + c) * ${S};
            for (i = 0; i < ${SM}; i += ${L})
                for (j = 0; j < ${L}; j++)
                    acc[j] += ${LOADIJ};
            for (i = ${SM}; i < ${S}; i++)
                acc[0] += ${LOADI};
        }
        for (w = ${L} / 2; w > 0; w /= 2)
            for (j = 0; j < w; j++)
                acc[j] += acc[j + w];
        bm = acc[0] / ${CNT};
        for (j = 0; j < ${L}; j++)
            acc[j] = 0;
        for (n = 0; n < ${N}; n++) {
            const ${TX} *restrict xr = x + (n * ${C} + c) * ${S};
            for (i = 0; i < ${SM}; i += ${L})
                for (j = 0; j < ${L}; j++) {
                    const ${CT} d = ${LOADIJ} - bm;
                    acc[j] = ${SQJ};
                }
            for (i = ${SM}; i < ${S}; i++) {
                const ${CT} d = ${LOADI} - bm;
                acc[0] = ${SQ0};
            }
        }
        for (w = ${L} / 2; w > 0; w /= 2)
            for (j = 0; j < w; j++)
                acc[j] += acc[j + w];
        bv = acc[0] / ${CNT};
        a = ${SCALE} / sqrt${SFX}(bv + ${EPS});
        b = ${BIAS};
        for (n = 0; n < ${N}; n++) {
            const ${TX} *restrict xr = x + (n * ${C} + c) * ${S};
            ${TX} *restrict yr = y + (n * ${C} + c) * ${S};
            for (i = 0; i < ${S}; i++)
                yr[i] = ${STORE};
        }
${RUNNING}    }
}
