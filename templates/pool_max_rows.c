// Float MaxPool along the last spatial axis when every window lies inside the input row (no
// padding on that axis), vectorised across outputs. For an output row y (OL outputs, holding
// their accumulators) and NR input rows x + k * RS, k ascending:
//     y[o] = v > y[o] ? v : y[o]  for v = x[k * RS + o * S + kl * D], kl ascending,
// the taps and the update of the generic kernel (templates/pool_nd.c) in the same order, so
// the same bits: v NaN keeps y[o], ties keep the earlier tap (-0 vs +0). SSE2's maxps(v, y)
// is exactly that update, and NEON's bit select on v > y; the lanes are four outputs, a tap
// being the unit-stride load at o + kl * D (S = 1) or the even lanes of the 8 floats from
// o * 2 (tap offset 0) or the odd lanes of the 8 from o * 2 + kl * D - 1 (S = 2, a window of
// at least two taps): no load reads outside the windows of the four outputs.
// Paths: templates/pool_isa.c.
/* ${DOC} */
#if MLBC_POOL_SSE2
static inline __m128 ${FN}_tap(const float *restrict x, long t)
{
    if (${S} == 1)
        return _mm_loadu_ps(x + t);
    if (t == 0)
        return _mm_shuffle_ps(_mm_loadu_ps(x), _mm_loadu_ps(x + 4), _MM_SHUFFLE(2, 0, 2, 0));
    return _mm_shuffle_ps(_mm_loadu_ps(x + t - 1), _mm_loadu_ps(x + t + 3),
                          _MM_SHUFFLE(3, 1, 3, 1));
}
#elif MLBC_POOL_NEON
static inline float32x4_t ${FN}_tap(const float *restrict x, long t)
{
    if (${S} == 1)
        return vld1q_f32(x + t);
    return t == 0 ? vld2q_f32(x).val[0] : vld2q_f32(x + t - 1).val[1];
}
#endif

static void ${FN}(const float *restrict x, long nr, float *restrict y)
{
    long o, k, kl;
#if MLBC_POOL_SSE2 || MLBC_POOL_NEON
    const long ov = ${OL} / 4 * 4;          /* outputs in blocks of four, then one by one */
#else
    const long ov = 0;
#endif
#if MLBC_POOL_SSE2
    for (o = 0; o < ov; o += 4) {
        __m128 acc = _mm_loadu_ps(y + o);
        for (k = 0; k < nr; k++)
            for (kl = 0; kl < ${K}; kl++)
                acc = _mm_max_ps(${FN}_tap(x + k * ${RS} + o * ${S}, kl * ${D}), acc);
        _mm_storeu_ps(y + o, acc);
    }
#elif MLBC_POOL_NEON
    for (o = 0; o < ov; o += 4) {
        float32x4_t acc = vld1q_f32(y + o);
        for (k = 0; k < nr; k++)
            for (kl = 0; kl < ${K}; kl++) {
                const float32x4_t v = ${FN}_tap(x + k * ${RS} + o * ${S}, kl * ${D});
                acc = vbslq_f32(vcgtq_f32(v, acc), v, acc);
            }
        vst1q_f32(y + o, acc);
    }
#endif
    for (o = ov; o < ${OL}; o++)
        for (k = 0; k < nr; k++)
            for (kl = 0; kl < ${K}; kl++) {
                const float v = x[k * ${RS} + o * ${S} + kl * ${D}];
                y[o] = v > y[o] ? v : y[o];
            }
}
