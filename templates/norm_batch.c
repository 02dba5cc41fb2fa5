// BatchNormalization, inference form: x viewed as [N][C][S]; per channel c,
// y = (x - mean[c]) * (scale[c] / sqrt(var[c] + epsilon)) + bias[c]; unit-stride inner loop.
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, const ${TS} *restrict scale, const ${TS} *restrict bias,
                  const ${TM} *restrict mean, const ${TM} *restrict var, ${TX} *restrict y)
{
    long n, c, i;
    ${FOR_N}
        for (c = 0; c < ${C}; c++) {
            const ${CT} a = ${SCALE} / sqrt${SFX}(${VAR} + ${EPS});
            const ${CT} m = ${MEAN}, b = ${BIAS};
            const ${TX} *restrict xr = x + (n * ${C} + c) * ${S};
            ${TX} *restrict yr = y + (n * ${C} + c) * ${S};
            for (i = 0; i < ${S}; i++)
                yr[i] = ${STORE};
        }
}
