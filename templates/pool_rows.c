// Float MaxPool and AveragePool along the last spatial axis when every window lies inside the
// input row (no padding on that axis), vectorised across outputs. For an output row y of OL
// outputs, their accumulators starting at *init (or y's values when init is NULL), and NR
// input rows x + k * RS, k ascending, for v = x[k * RS + o * S + kl * D], kl ascending:
//     y[o] = v > y[o] ? v : y[o]  (MAX 1)    or    y[o] = y[o] + v  (MAX 0),
// the taps and the update of the generic kernel (templates/pool_nd.c) in the same order, so
// the same bits. For max, v NaN keeps y[o] and ties keep the earlier tap (-0 vs +0): x86's
// maxps(v, y) (SSE2, AVX2, AVX-512 alike) is exactly that update, and NEON's bit select on
// v > y; for add, acc + v is the generic kernel's acc += v, from the same start (+0).
// The lanes are outputs, a tap being the unit-stride load at o + kl * D (S = 1), or for S = 2
// (a window of at least two taps) the even lanes of the floats from o * 2 (tap offset 0) or
// the odd lanes of those from o * 2 + kl * D - 1: no load reads outside the outputs' windows.
// On x86-64 the AVX-512 path takes 16 outputs at a time, then both it and the AVX2 path 8;
// SSE2 (always there) takes the fours left, then the scalar loop the rest. The start value is
// a broadcast, not stores of it for the vectors to load: a wide load of narrower stores
// just made waits for them (store-to-load forwarding fails), and that had taken half the time.
// Paths: templates/pool_isa.c and templates/isa.c.
/* ${DOC} */
#if MLBC_POOL_SSE2
/* the update of 4 outputs' accumulators by their tap v */
static inline __m128 ${FN}_upd(__m128 acc, __m128 v)
{
    return ${MAX} ? _mm_max_ps(v, acc) : _mm_add_ps(acc, v);
}

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
static inline float32x4_t ${FN}_upd(float32x4_t acc, float32x4_t v)
{
    return ${MAX} ? vbslq_f32(vcgtq_f32(v, acc), v, acc) : vaddq_f32(acc, v);
}

static inline float32x4_t ${FN}_tap(const float *restrict x, long t)
{
    if (${S} == 1)
        return vld1q_f32(x + t);
    return t == 0 ? vld2q_f32(x).val[0] : vld2q_f32(x + t - 1).val[1];
}
#endif

#if MLBC_X86
MLBC_TILE MLBC_AVX2 __m256 ${FN}_upd8(__m256 acc, __m256 v)
{
    return ${MAX} ? _mm256_max_ps(v, acc) : _mm256_add_ps(acc, v);
}

/* 8 outputs' tap at offset t (see above) */
MLBC_TILE MLBC_AVX2 __m256 ${FN}_tap8(const float *restrict x, long t)
{
    if (${S} == 1)
        return _mm256_loadu_ps(x + t);
    /* per 128-bit lane [a0 a2 b0 b2 | a4 a6 b4 b6], then its 64-bit pairs in order */
    const __m256 p = t == 0 ? _mm256_shuffle_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(x + 8),
                                                _MM_SHUFFLE(2, 0, 2, 0))
                            : _mm256_shuffle_ps(_mm256_loadu_ps(x + t - 1),
                                                _mm256_loadu_ps(x + t + 7),
                                                _MM_SHUFFLE(3, 1, 3, 1));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(p), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* outputs o .. OL - 1 in blocks of 8; returns where it stopped */
MLBC_TILE MLBC_AVX2 long ${FN}_eights(const float *restrict x, long nr, float *restrict y,
                                 const float *init, long o)
{
    for (; o + 8 <= ${OL}; o += 8) {
        __m256 acc = init ? _mm256_set1_ps(*init) : _mm256_loadu_ps(y + o);
        for (long k = 0; k < nr; k++)
            for (long kl = 0; kl < ${K}; kl++)
                acc = ${FN}_upd8(acc, ${FN}_tap8(x + k * ${RS} + o * ${S}, kl * ${D}));
        _mm256_storeu_ps(y + o, acc);
    }
    return o;
}

MLBC_TILE MLBC_AVX512 __m512 ${FN}_upd16(__m512 acc, __m512 v)
{
    return ${MAX} ? _mm512_max_ps(v, acc) : _mm512_add_ps(acc, v);
}

/* 16 outputs' tap at offset t: lanes picked from 32 floats */
MLBC_TILE MLBC_AVX512 __m512 ${FN}_tap16(const float *restrict x, long t)
{
    if (${S} == 1)
        return _mm512_loadu_ps(x + t);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4,
                                          2, 0);
    if (t == 0)
        return _mm512_permutex2var_ps(_mm512_loadu_ps(x), even, _mm512_loadu_ps(x + 16));
    return _mm512_permutex2var_ps(_mm512_loadu_ps(x + t - 1),
                                  _mm512_add_epi32(even, _mm512_set1_epi32(1)),
                                  _mm512_loadu_ps(x + t + 15));
}

MLBC_PATH MLBC_AVX512 static long ${FN}_avx512(const float *restrict x, long nr,
                                               float *restrict y, const float *init)
{
    long o;
    for (o = 0; o + 16 <= ${OL}; o += 16) {
        __m512 acc = init ? _mm512_set1_ps(*init) : _mm512_loadu_ps(y + o);
        for (long k = 0; k < nr; k++)
            for (long kl = 0; kl < ${K}; kl++)
                acc = ${FN}_upd16(acc, ${FN}_tap16(x + k * ${RS} + o * ${S}, kl * ${D}));
        _mm512_storeu_ps(y + o, acc);
    }
    return ${FN}_eights(x, nr, y, init, o);
}

MLBC_PATH MLBC_AVX2 static long ${FN}_avx2(const float *restrict x, long nr,
                                           float *restrict y, const float *init)
{
    return ${FN}_eights(x, nr, y, init, 0);
}
#endif

static void ${FN}(const float *restrict x, long nr, float *restrict y, const float *init)
{
    long o = 0, k, kl;
#if MLBC_POOL_SSE2 || MLBC_POOL_NEON
    const long ov = ${OL} / 4 * 4;          /* outputs in vectors, then one by one */
#else
    const long ov = 0;
#endif
#if MLBC_X86
    /* rows of fewer than 8 outputs take no wider path: no call to one (rows of 4 of a 2x2
     * AveragePool took 11% of a network in calls that returned at once) */
    const int isa = ${OL} >= 8 ? mlbc_isa() : 0;
    if (isa == 2)
        o = ${FN}_avx512(x, nr, y, init);
    else if (isa == 1)
        o = ${FN}_avx2(x, nr, y, init);
#endif
#if MLBC_POOL_SSE2
    for (; o < ov; o += 4) { /* o: a multiple of 4 (of 8 after the wider paths) */
        __m128 acc = init ? _mm_set1_ps(*init) : _mm_loadu_ps(y + o);
        for (k = 0; k < nr; k++)
            for (kl = 0; kl < ${K}; kl++)
                acc = ${FN}_upd(acc, ${FN}_tap(x + k * ${RS} + o * ${S}, kl * ${D}));
        _mm_storeu_ps(y + o, acc);
    }
#elif MLBC_POOL_NEON
    for (; o < ov; o += 4) {
        float32x4_t acc = init ? vdupq_n_f32(*init) : vld1q_f32(y + o);
        for (k = 0; k < nr; k++)
            for (kl = 0; kl < ${K}; kl++)
                acc = ${FN}_upd(acc, ${FN}_tap(x + k * ${RS} + o * ${S}, kl * ${D}));
        vst1q_f32(y + o, acc);
    }
#endif
    for (o = ov; o < ${OL}; o++) {
        if (init)
            y[o] = *init;
        for (k = 0; k < nr; k++)
            for (kl = 0; kl < ${K}; kl++) {
                const float v = x[k * ${RS} + o * ${S} + kl * ${D}];
                y[o] = ${MAX} ? (v > y[o] ? v : y[o]) : y[o] + v;
            }
    }
}
