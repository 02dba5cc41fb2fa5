// The exp kernel of vmath_exp and vmath_erf on each path: exp(x) to about 2^-25 relative,
// as a float and its error (vmath_expneg is the cheaper one of sigmoid and tanh).
//
// Same bits on every path: the portable C function and the two vector functions perform the
// same IEEE operations in the same order (fmaf / _mm*_fmadd_ps, single products, min/max
// with the NaN rule of MINPS/MAXPS, integer bit manipulation, selects), so AVX-512, AVX2+FMA
// and C agree bit for bit, whatever the compiler or its flags. No product is ever added
// outside an explicit fused multiply-add: contraction has nothing to fuse.
/* exp kernel: for any float x (NaN aside, which the callers select away), exp(x) =
 * (h + l) * s2 to about 2^-25 relative; h is returned, l and s2 are stored. h and s2 are
 * normal floats, l is below half an ulp of h: h * s2 is exact wherever exp(x) is a normal
 * float, and a caller's fused multiply-add of h * s2 rounds once, subnormal and overflowing
 * results included.
 *   x clamped to [-104, 89] (exp(-104) rounds to 0, exp(89) overflows)
 *   k = nearest integer to x / ln 2 (fma with 1.5 * 2^23, whose low bits are then k)
 *   r + rl = x - k ln 2 (ln 2 = hi + lo; x - k hi is exact, rl = the rounding error of
 *            subtracting k lo), |r| <= 0.3466
 *   exp(r + rl) = p + pl: p = 1 + r q(r) rounded once, q = 1 + r/2 + ... of degree 5
 *            (relative error 4e-9), Horner in fmas; pl = p's rounding error + p rl
 *   2^k = 2^ceil(k/2) * 2^floor(k/2), both normal for the k of the clamped x:
 *            h = p 2^ceil(k/2), l = pl 2^ceil(k/2) (exact), s2 = 2^floor(k/2). */
static inline float mlbc_expk_c(float x, float *l, float *s2)
{
    uint32_t kb, e1, e2;
    float t, kf, rh, r, rl, p, q, pl, s1;
    x = x > -104.0f ? x : -104.0f;
    x = x < 89.0f ? x : 89.0f;
    t = fmaf(x, 0x1.715476p+0f, 0x1.8p23f);
    kf = t - 0x1.8p23f;
    rh = fmaf(kf, -0x1.62e43p-1f, x);
    r = fmaf(kf, 0x1.05c61p-29f, rh);
    rl = fmaf(kf, 0x1.05c61p-29f, rh - r);
    q = fmaf(0x1.6a23fp-10f, r, 0x1.123a0ap-7f);
    q = fmaf(q, r, 0x1.5558f2p-5f);
    q = fmaf(q, r, 0x1.555492p-3f);
    q = fmaf(q, r, 0x1.fffffcp-2f);
    q = fmaf(q, r, 1.0f);
    p = fmaf(q, r, 1.0f);
    pl = fmaf(q, r, 1.0f - p);
    pl = fmaf(p, rl, pl);
    memcpy(&kb, &t, sizeof kb);
    kb = kb - 0x4b400000u + 256u;       /* k + 256, in [106, 384] */
    e2 = (kb >> 1) - 1u;                /* floor(k / 2) + 127 */
    e1 = kb - (kb >> 1) - 1u;           /* ceil(k / 2) + 127 */
    e1 <<= 23;
    e2 <<= 23;
    memcpy(&s1, &e1, sizeof s1);
    memcpy(s2, &e2, sizeof *s2);
    *l = pl * s1;
    return p * s1;
}

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 mlbc_expk_avx512(__m512 x, __m512 *l, __m512 *s2)
{
    __m512 t, kf, rh, r, rl, p, q, pl, s1;
    __m512i kb, e1, e2;
    x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
    x = _mm512_min_ps(x, _mm512_set1_ps(89.0f));
    t = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), _mm512_set1_ps(0x1.8p23f));
    kf = _mm512_sub_ps(t, _mm512_set1_ps(0x1.8p23f));
    rh = _mm512_fmadd_ps(kf, _mm512_set1_ps(-0x1.62e43p-1f), x);
    r = _mm512_fmadd_ps(kf, _mm512_set1_ps(0x1.05c61p-29f), rh);
    rl = _mm512_fmadd_ps(kf, _mm512_set1_ps(0x1.05c61p-29f), _mm512_sub_ps(rh, r));
    q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.6a23fp-10f), r, _mm512_set1_ps(0x1.123a0ap-7f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.5558f2p-5f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.555492p-3f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.fffffcp-2f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
    pl = _mm512_fmadd_ps(q, r, _mm512_sub_ps(_mm512_set1_ps(1.0f), p));
    pl = _mm512_fmadd_ps(p, rl, pl);
    kb = _mm512_add_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(256 - 0x4b400000));
    e2 = _mm512_sub_epi32(_mm512_srli_epi32(kb, 1), _mm512_set1_epi32(1));
    e1 = _mm512_sub_epi32(_mm512_sub_epi32(kb, _mm512_srli_epi32(kb, 1)), _mm512_set1_epi32(1));
    *s2 = _mm512_castsi512_ps(_mm512_slli_epi32(e2, 23));
    s1 = _mm512_castsi512_ps(_mm512_slli_epi32(e1, 23));
    *l = _mm512_mul_ps(pl, s1);
    return _mm512_mul_ps(p, s1);
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_expk_avx2(__m256 x, __m256 *l, __m256 *s2)
{
    __m256 t, kf, rh, r, rl, p, q, pl, s1;
    __m256i kb, e1, e2;
    x = _mm256_max_ps(x, _mm256_set1_ps(-104.0f));
    x = _mm256_min_ps(x, _mm256_set1_ps(89.0f));
    t = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), _mm256_set1_ps(0x1.8p23f));
    kf = _mm256_sub_ps(t, _mm256_set1_ps(0x1.8p23f));
    rh = _mm256_fmadd_ps(kf, _mm256_set1_ps(-0x1.62e43p-1f), x);
    r = _mm256_fmadd_ps(kf, _mm256_set1_ps(0x1.05c61p-29f), rh);
    rl = _mm256_fmadd_ps(kf, _mm256_set1_ps(0x1.05c61p-29f), _mm256_sub_ps(rh, r));
    q = _mm256_fmadd_ps(_mm256_set1_ps(0x1.6a23fp-10f), r, _mm256_set1_ps(0x1.123a0ap-7f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.5558f2p-5f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.555492p-3f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.fffffcp-2f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
    pl = _mm256_fmadd_ps(q, r, _mm256_sub_ps(_mm256_set1_ps(1.0f), p));
    pl = _mm256_fmadd_ps(p, rl, pl);
    kb = _mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(256 - 0x4b400000));
    e2 = _mm256_sub_epi32(_mm256_srli_epi32(kb, 1), _mm256_set1_epi32(1));
    e1 = _mm256_sub_epi32(_mm256_sub_epi32(kb, _mm256_srli_epi32(kb, 1)), _mm256_set1_epi32(1));
    *s2 = _mm256_castsi256_ps(_mm256_slli_epi32(e2, 23));
    s1 = _mm256_castsi256_ps(_mm256_slli_epi32(e1, 23));
    *l = _mm256_mul_ps(pl, s1);
    return _mm256_mul_ps(p, s1);
}
#endif
