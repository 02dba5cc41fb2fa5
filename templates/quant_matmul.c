// QLinearMatMul of one [M,K] x [K,N] pair of quantized matrices: integer dot products of
// (a - a_zero_point) and (b - b_zero_point) in int32, in k order, then requantized:
// y = saturate(round_half_even(acc * a_scale * b_scale / y_scale) + y_zero_point).
// AS/AZ are indexed per row of a (i), BS/BZ per column of b (j); YT is y's type.
/* ${DOC} */
static void ${FN}(const ${AT} *restrict a, const float *restrict a_scale,
                  const ${AT} *restrict a_zero_point, const ${BT} *restrict b,
                  const float *restrict b_scale, const ${BT} *restrict b_zero_point,
                  const float *restrict y_scale, const ${YT} *restrict y_zero_point,
                  ${YT} *restrict y)
{
    int32_t acc[${N}];
    for (long i = 0; i < ${M}; i++) {
        const int32_t za = (int32_t)a_zero_point[${AZ}];
        for (long j = 0; j < ${N}; j++)
            acc[j] = 0;
        for (long k = 0; k < ${K}; k++) {
            const int32_t av = (int32_t)a[i * ${K} + k] - za;
            for (long j = 0; j < ${N}; j++)
                acc[j] += av * ((int32_t)b[k * ${N} + j] - (int32_t)b_zero_point[${BZ}]);
        }
        for (long j = 0; j < ${N}; j++) {
            const float m = a_scale[${AS}] * b_scale[${BS}] / y_scale[0];
            const float v = nearbyintf((float)acc[j] * m) + (float)y_zero_point[0];
            y[i * ${N} + j] = (${YT})(!(v >= ${LO}) ? ${LO} : v > ${HI} ? ${HI} : v);
        }
    }
}
