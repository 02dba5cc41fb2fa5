// The output of a Conv product whose rows are pixels (mlbc_gemm_f32_pix; compiler/ops/op_conv.c)
// into y's channel planes, in one pass. yp is [pixel][channel]: the product's rows of OW
// pixels, MG channels a pixel. Output j of channel m (rows of PW outputs, planes YPS floats
// apart) is a window of the KH x KW pixels from row j / PW * KH, column j % PW * S:
//     CLAMP 0 (a 1x1 window): yp's value itself;
//     CLAMP 1: acc = INIT, then acc = v > acc ? v : acc over the window's taps row by row.
// With INIT = -inf that is the fused MaxPool in the tap order and update of
// templates/pool_rows.c; with INIT = +0 a fused Relu (a 1x1 window: a > 0 ? a : 0, as
// the Relu node) or a Relu then MaxPool (max(relu(taps)) = max(+0, taps)): the same bits as
// the unfused nodes. SSE2's maxps(v, acc) and NEON's bit select on v > acc are that update.
// Vector paths (templates/pool_isa.c): four channels of four outputs at a time, transposed in
// registers into four runs of one channel's outputs; on AVX-512 (templates/isa.c) sixteen of
// sixteen, on AVX2 eight of eight, each run one store of a whole vector (the four-by-four
// blocks took a third of a small CNN's time at gcc -O2).
/* ${DOC} */

/* pixel of output j's window, first tap */
static inline long ${FN}_pixel(long j)
{
    return j / ${PW} * ${KH} * ${OW} + j % ${PW} * ${S};
}

/* tap t of a window (row t / KW, column t % KW), from its first, in floats of yp */
static inline long ${FN}_tap(long t)
{
    return (t / ${KW} * ${OW} + t % ${KW}) * ${MG};
}

/* one channel of an output; p: its window's first tap */
static inline float ${FN}_one(const float *restrict p)
{
    float acc = p[0];
    long t;
    if (${CLAMP})
        acc = acc > ${INIT} ? acc : ${INIT};
    for (t = 1; t < ${KH} * ${KW}; t++) {
        const float v = p[${FN}_tap(t)];
        acc = v > acc ? v : acc;
    }
    return acc;
}

#if MLBC_POOL_SSE2
/* four channels of an output, as ${FN}_one */
static inline __m128 ${FN}_four(const float *restrict p)
{
    __m128 acc = _mm_loadu_ps(p);
    long t;
    if (${CLAMP})
        acc = _mm_max_ps(acc, _mm_set1_ps(${INIT}));
    for (t = 1; t < ${KH} * ${KW}; t++)
        acc = _mm_max_ps(_mm_loadu_ps(p + ${FN}_tap(t)), acc);
    return acc;
}

/* four channels of four outputs p[0..3]: channel m + c's outputs j .. j + 3 at y[c * YPS] */
static inline void ${FN}_block(const float *restrict const *p, long m, float *restrict y)
{
    __m128 a0 = ${FN}_four(p[0] + m), a1 = ${FN}_four(p[1] + m);
    __m128 a2 = ${FN}_four(p[2] + m), a3 = ${FN}_four(p[3] + m);
    _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
    _mm_storeu_ps(y, a0);
    _mm_storeu_ps(y + ${YPS}, a1);
    _mm_storeu_ps(y + 2 * ${YPS}, a2);
    _mm_storeu_ps(y + 3 * ${YPS}, a3);
}
#elif MLBC_POOL_NEON
static inline float32x4_t ${FN}_four(const float *restrict p)
{
    float32x4_t acc = vld1q_f32(p);
    long t;
    if (${CLAMP}) {
        const float32x4_t init = vdupq_n_f32(${INIT});
        acc = vbslq_f32(vcgtq_f32(acc, init), acc, init);
    }
    for (t = 1; t < ${KH} * ${KW}; t++) {
        const float32x4_t v = vld1q_f32(p + ${FN}_tap(t));
        acc = vbslq_f32(vcgtq_f32(v, acc), v, acc);
    }
    return acc;
}

static inline void ${FN}_block(const float *restrict const *p, long m, float *restrict y)
{
    const float32x4x2_t t01 = vtrnq_f32(${FN}_four(p[0] + m), ${FN}_four(p[1] + m));
    const float32x4x2_t t23 = vtrnq_f32(${FN}_four(p[2] + m), ${FN}_four(p[3] + m));
    vst1q_f32(y, vcombine_f32(vget_low_f32(t01.val[0]), vget_low_f32(t23.val[0])));
    vst1q_f32(y + ${YPS}, vcombine_f32(vget_low_f32(t01.val[1]), vget_low_f32(t23.val[1])));
    vst1q_f32(y + 2 * ${YPS}, vcombine_f32(vget_high_f32(t01.val[0]), vget_high_f32(t23.val[0])));
    vst1q_f32(y + 3 * ${YPS}, vcombine_f32(vget_high_f32(t01.val[1]), vget_high_f32(t23.val[1])));
}
#endif

#if MLBC_X86
/* channels m .. m + 15 of an output (those under mask k; the rest 0), as ${FN}_one */
MLBC_TILE MLBC_AVX512 __m512 ${FN}_16(const float *restrict p, __mmask16 k)
{
    __m512 acc = _mm512_maskz_loadu_ps(k, p);
    long t;
    if (${CLAMP})
        acc = _mm512_max_ps(acc, _mm512_set1_ps(${INIT}));
    for (t = 1; t < ${KH} * ${KW}; t++)
        acc = _mm512_max_ps(_mm512_maskz_loadu_ps(k, p + ${FN}_tap(t)), acc);
    return acc;
}

/* the low (HI 0) or high 64-bit halves of each 128-bit lane of a and b, interleaved */
MLBC_TILE MLBC_AVX512 __m512 ${FN}_pd(__m512 a, __m512 b, int hi)
{
    const __m512d x = _mm512_castps_pd(a), z = _mm512_castps_pd(b);
    return _mm512_castpd_ps(hi ? _mm512_unpackhi_pd(x, z) : _mm512_unpacklo_pd(x, z));
}

/* r[q] = channels m .. m + 15 of outputs j + q (q < nj, the rest 0), transposed into r[c] =
 * outputs j .. j + 15 of channel m + c, stored for c < nc (the first nj of each) */
MLBC_TILE MLBC_AVX512 void ${FN}_block16(const float *restrict yp, long j, long m, int nj,
                                        int nc, float *restrict y)
{
    const __mmask16 kc = (__mmask16)((1u << nc) - 1), kj = (__mmask16)((1u << nj) - 1);
    __m512 r[16], t[16];
    int q, i, k;
    MLBC_UNROLL16 for (q = 0; q < 16; q++)
        r[q] = q < nj ? ${FN}_16(yp + ${FN}_pixel(j + q) * ${MG} + m, kc) : _mm512_setzero_ps();
    /* in each 128-bit lane: pairs, then 4 x 4 blocks (column 4 L + k of rows 4 i .. 4 i + 3
     * in r[4 i + k]); then lanes across registers */
    MLBC_UNROLL16 for (i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    MLBC_UNROLL16 for (i = 0; i < 4; i++)
        MLBC_UNROLL16 for (k = 0; k < 4; k++)
            r[4 * i + k] = ${FN}_pd(t[4 * i + k / 2], t[4 * i + 2 + k / 2], k % 2);
    MLBC_UNROLL16 for (i = 0; i < 2; i++)
        MLBC_UNROLL16 for (k = 0; k < 4; k++) {
            t[8 * i + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0x88);
            t[8 * i + 4 + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0xdd);
        }
    MLBC_UNROLL16 for (k = 0; k < 4; k++) {
        r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
        r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd);
        r[4 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0x88);
        r[12 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0xdd);
    }
    MLBC_UNROLL16 for (q = 0; q < 16; q++)
        if (q < nc)
            _mm512_mask_storeu_ps(y + (m + q) * ${YPS} + j, kj, r[q]);
}

MLBC_PATH MLBC_AVX512 static void ${FN}_avx512(const float *restrict yp, long rows,
                                               float *restrict y)
{
    const long n = rows * ${PW};
    long j, m;
    for (j = 0; j < n; j += 16)
        for (m = 0; m < ${MG}; m += 16)
            ${FN}_block16(yp, j, m, (int)(n - j < 16 ? n - j : 16),
                          (int)(${MG} - m < 16 ? ${MG} - m : 16), y);
}

/* channels m .. m + 7 of an output (those under mask k; the rest 0), as ${FN}_one */
MLBC_TILE MLBC_AVX2 __m256 ${FN}_8(const float *restrict p, __m256i k)
{
    __m256 acc = _mm256_maskload_ps(p, k);
    long t;
    if (${CLAMP})
        acc = _mm256_max_ps(acc, _mm256_set1_ps(${INIT}));
    for (t = 1; t < ${KH} * ${KW}; t++)
        acc = _mm256_max_ps(_mm256_maskload_ps(p + ${FN}_tap(t), k), acc);
    return acc;
}

/* as ${FN}_block16, eight channels of eight outputs */
MLBC_TILE MLBC_AVX2 void ${FN}_block8(const float *restrict yp, long j, long m, int nj, int nc,
                                     float *restrict y)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i kc = _mm256_cmpgt_epi32(_mm256_set1_epi32(nc), iota);
    const __m256i kj = _mm256_cmpgt_epi32(_mm256_set1_epi32(nj), iota);
    __m256 r[8], t[8];
    int q;
    MLBC_UNROLL for (q = 0; q < 8; q++)
        r[q] = q < nj ? ${FN}_8(yp + ${FN}_pixel(j + q) * ${MG} + m, kc) : _mm256_setzero_ps();
    MLBC_UNROLL for (q = 0; q < 4; q++) {
        t[2 * q] = _mm256_unpacklo_ps(r[2 * q], r[2 * q + 1]);
        t[2 * q + 1] = _mm256_unpackhi_ps(r[2 * q], r[2 * q + 1]);
    }
    MLBC_UNROLL for (q = 0; q < 2; q++) {
        r[4 * q] = _mm256_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
        r[4 * q + 1] = _mm256_shuffle_ps(t[4 * q], t[4 * q + 2], 0xEE);
        r[4 * q + 2] = _mm256_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
        r[4 * q + 3] = _mm256_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xEE);
    }
    MLBC_UNROLL for (q = 0; q < 4; q++) {
        t[q] = _mm256_permute2f128_ps(r[q], r[4 + q], 0x20);
        t[4 + q] = _mm256_permute2f128_ps(r[q], r[4 + q], 0x31);
    }
    MLBC_UNROLL for (q = 0; q < 8; q++)
        if (q < nc)
            _mm256_maskstore_ps(y + (m + q) * ${YPS} + j, kj, t[q]);
}

MLBC_PATH MLBC_AVX2 static void ${FN}_avx2(const float *restrict yp, long rows, float *restrict y)
{
    const long n = rows * ${PW};
    long j, m;
    for (j = 0; j < n; j += 8)
        for (m = 0; m < ${MG}; m += 8)
            ${FN}_block8(yp, j, m, (int)(n - j < 8 ? n - j : 8),
                         (int)(${MG} - m < 8 ? ${MG} - m : 8), y);
}
#endif

/* rows x PW outputs from a product's output yp into y (channel m at y + m * YPS) */
static void ${FN}(const float *restrict yp, long rows, float *restrict y)
{
    const long n = rows * ${PW};
    long j = 0, m;
#if MLBC_X86
    const int isa = mlbc_isa();
    if (isa == 2) {
        ${FN}_avx512(yp, rows, y);
        return;
    }
    if (isa == 1) {
        ${FN}_avx2(yp, rows, y);
        return;
    }
#endif
#if MLBC_POOL_SSE2 || MLBC_POOL_NEON
    for (; j + 4 <= n; j += 4) {
        const float *restrict p[4];
        long q;
        for (q = 0; q < 4; q++)
            p[q] = yp + ${FN}_pixel(j + q) * ${MG};
        for (m = 0; m + 4 <= ${MG}; m += 4)
            ${FN}_block(p, m, y + m * ${YPS} + j);
        for (; m < ${MG}; m++)
            for (q = 0; q < 4; q++)
                y[m * ${YPS} + j + q] = ${FN}_one(p[q] + m);
    }
    /* no tail: gcc, given rows, warns about the loop below where it is never entered */
    if (${PW} % 4 == 0)
        return;
#endif
    for (; j < n; j++)
        for (m = 0; m < ${MG}; m++)
            y[m * ${YPS} + j] = ${FN}_one(yp + ${FN}_pixel(j) * ${MG} + m);
}
