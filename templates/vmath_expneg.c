// The exp kernel of vmath_sigmoid and vmath_tanh on each path: exp(x) for x <= 0, one float
// rounding from exact (vmath_expk is the one that also returns its error). Same bits on every
// path, as there: the same IEEE operations in the same order, products only inside explicit
// fused multiply-adds or alone.
/* For x in [-104, 0]: exp(x) = p 2^k rounded once (to a subnormal from x < -87.3 on), within
 * about 1.3 * 2^-24 relative of exp(x) where it is normal.
 *   k = nearest integer to x / ln 2 (fma with 1.5 * 2^23, whose low bits are then k)
 *   r = x - k ln 2 (ln 2 = hi + lo; x - k hi is exact), |r| <= 0.3466
 *   exp(r) = 1 + r q(r), q = 1 + r/2 + ... of degree 5 (relative error 4e-9), Horner in fmas
 *   p 2^k = (p 2^ceil(k/2)) 2^floor(k/2), both factors normal for k in [-150, 0]: the first
 *            product is exact, the second rounds; AVX-512's scalef rounds p 2^k once too. */
static inline float mlbc_expneg_c(float x)
{
    uint32_t kb, e1, e2;
    float t, kf, r, q, s1, s2;
    t = fmaf(x, 0x1.715476p+0f, 0x1.8p23f);
    kf = t - 0x1.8p23f;
    r = fmaf(kf, -0x1.62e43p-1f, x);
    r = fmaf(kf, 0x1.05c61p-29f, r);
    q = fmaf(0x1.6a23fp-10f, r, 0x1.123a0ap-7f);
    q = fmaf(q, r, 0x1.5558f2p-5f);
    q = fmaf(q, r, 0x1.555492p-3f);
    q = fmaf(q, r, 0x1.fffffcp-2f);
    q = fmaf(q, r, 1.0f);
    memcpy(&kb, &t, sizeof kb);
    kb = kb - 0x4b400000u + 256u;       /* k + 256, in [106, 256] */
    e2 = ((kb >> 1) - 1u) << 23;        /* floor(k / 2) + 127 */
    e1 = (kb - (kb >> 1) - 1u) << 23;   /* ceil(k / 2) + 127 */
    memcpy(&s1, &e1, sizeof s1);
    memcpy(&s2, &e2, sizeof s2);
    return fmaf(q, r, 1.0f) * s1 * s2;
}

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 mlbc_expneg_avx512(__m512 x)
{
    __m512 t, kf, r, q;
    t = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), _mm512_set1_ps(0x1.8p23f));
    kf = _mm512_sub_ps(t, _mm512_set1_ps(0x1.8p23f));
    r = _mm512_fmadd_ps(kf, _mm512_set1_ps(-0x1.62e43p-1f), x);
    r = _mm512_fmadd_ps(kf, _mm512_set1_ps(0x1.05c61p-29f), r);
    q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.6a23fp-10f), r, _mm512_set1_ps(0x1.123a0ap-7f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.5558f2p-5f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.555492p-3f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.fffffcp-2f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(_mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f)), kf);
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_expneg_avx2(__m256 x)
{
    __m256 t, kf, r, q;
    __m256i kb, e1, e2;
    t = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), _mm256_set1_ps(0x1.8p23f));
    kf = _mm256_sub_ps(t, _mm256_set1_ps(0x1.8p23f));
    r = _mm256_fmadd_ps(kf, _mm256_set1_ps(-0x1.62e43p-1f), x);
    r = _mm256_fmadd_ps(kf, _mm256_set1_ps(0x1.05c61p-29f), r);
    q = _mm256_fmadd_ps(_mm256_set1_ps(0x1.6a23fp-10f), r, _mm256_set1_ps(0x1.123a0ap-7f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.5558f2p-5f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.555492p-3f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.fffffcp-2f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
    kb = _mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(256 - 0x4b400000));
    e2 = _mm256_sub_epi32(_mm256_srli_epi32(kb, 1), _mm256_set1_epi32(1));
    e1 = _mm256_sub_epi32(_mm256_sub_epi32(kb, _mm256_srli_epi32(kb, 1)), _mm256_set1_epi32(1));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f)),
                                       _mm256_castsi256_ps(_mm256_slli_epi32(e1, 23))),
                         _mm256_castsi256_ps(_mm256_slli_epi32(e2, 23)));
}
#endif
