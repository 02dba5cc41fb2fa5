// Vectorised float erf over an array (vmath_map: paths, loop).
/* mlbc_verf_f32(n, x, y): y[i] = erf(x[i]), within 1 ulp of the correctly rounded result
 * (measured on every float), odd (computed on |x|, the sign put back: erf(-0) = -0), the
 * same bits on every path and with every compiler. With a = |x|:
 *   a < 0.921875  a + a q(a^2): q of degree 6 fitted to erf(a) / a - 1, Horner in fmas, then
 *                 one fma (tiny and subnormal a are rounded once)
 *   beyond        c = min(a, 4) in one of 7 intervals of width 1/2 from 0.875, k = the
 *                 interval, t = c - its centre (both exact): erf = hi + (lo + t p(t)),
 *                 p of degree 6 fitted per interval (least squares on Chebyshev nodes, each
 *                 coefficient rounded to float before the lower ones were refitted), hi + lo
 *                 the constant term in two floats; the coefficients are picked by k from
 *                 8-entry tables (a permute on the vector paths), Horner in fmas, one final
 *                 rounding; erf rounds to 1 from a = 3.92
 *   NaN           NaN (quieted); +-inf gives +-1.
 * Both branches are computed for every lane, so the table form replaced 1 - exp(l(a)) (its
 * exp and error terms: 1.6x the operations). */
/* per interval k (entry 7 is padding: k <= 6), the constant term hi + lo and p's
 * coefficients c1 (t) to c7 (t^7), as tools/fit-erf.py prints them */
static const float mlbc_erf_hi[8] = {
    0x1.c6dad2p-1f, 0x1.f4f694p-1f, 0x1.fea422p-1f, 0x1.ffe514p-1f,
    0x1.fffeb4p-1f, 0x1.fffff6p-1f, 1.0f, 1.0f};
static const float mlbc_erf_lo[8] = {
    0x1.15fb38p-26f, -0x1.1d7638p-27f, -0x1.cf98ccp-27f, 0x1.7793bp-26f,
    -0x1.4303fp-29f, 0x1.8c93dcp-29f, -0x1.74ae6p-28f, 0.0f};
static const float mlbc_erf_c1[8] = {
    0x1.45e99cp-2f, 0x1.499d48p-4f, 0x1.94624ep-7f, 0x1.2ce89ap-10f,
    0x1.0f9e18p-14f, 0x1.296a4p-19f, 0x1.8b0bd2p-25f, 0.0f};
static const float mlbc_erf_c2[8] = {
    -0x1.6ea6e8p-2f, -0x1.0bcfdp-3f, -0x1.ada81ap-6f, -0x1.8af13p-9f,
    -0x1.a86aaep-13f, -0x1.0d9346p-17f, -0x1.9796cap-23f, 0.0f};
static const float mlbc_erf_c3[8] = {
    0x1.4cb3cap-3f, 0x1.d66348p-4f, 0x1.0ea464p-5f, 0x1.407f72p-8f,
    0x1.a3744p-12f, 0x1.395022p-16f, 0x1.0fea3ep-21f, 0.0f};
static const float mlbc_erf_c4[8] = {
    0x1.cac97cp-6f, -0x1.9745aep-5f, -0x1.b00168p-6f, -0x1.62d854p-8f,
    -0x1.240b98p-11f, -0x1.049e7cp-15f, -0x1.05752ep-20f, 0.0f};
static const float mlbc_erf_c5[8] = {
    -0x1.f657ccp-5f, -0x1.190928p-9f, 0x1.998318p-7f, 0x1.147d56p-8f,
    0x1.2e68a2p-11f, 0x1.4b8fe4p-15f, 0x1.880ef6p-20f, 0.0f};
static const float mlbc_erf_c6[8] = {
    0x1.e4cc96p-7f, 0x1.d5dabp-7f, -0x1.b076cap-10f, -0x1.25d2bp-9f,
    -0x1.e8d5cp-12f, -0x1.6104cep-15f, -0x1.03df06p-19f, 0.0f};
static const float mlbc_erf_c7[8] = {
    0x1.390fb6p-7f, -0x1.88643cp-8f, -0x1.f45fa4p-10f, 0x1.59a3fep-11f,
    0x1.1b175cp-12f, 0x1.1451f8p-15f, 0x1.f24162p-20f, 0.0f};

static inline float mlbc_verf_c(float x)
{
    uint32_t b, sign;
    float a, z, q, ys, c, u, t, p, y;
    int k;
    memcpy(&b, &x, sizeof b);
    sign = b & 0x80000000u;
    b ^= sign;
    memcpy(&a, &b, sizeof a);
    z = a * a;
    q = fmaf(0x1.5f113ap-14f, z, -0x1.aae984p-11f);
    q = fmaf(q, z, 0x1.54dad8p-8f);
    q = fmaf(q, z, -0x1.b8107cp-6f);
    q = fmaf(q, z, 0x1.ce2e2p-4f);
    q = fmaf(q, z, -0x1.812744p-2f);
    q = fmaf(q, z, 0x1.06eba8p-3f);
    ys = fmaf(a, q, a);
    c = a < 4.0f ? a : 4.0f;
    u = c - 0.875f;
    u = (u > 0.0f ? u : 0.0f) * 2.0f;
    k = (int)u;
    t = c - ((float)k * 0.5f + 1.125f);
    p = fmaf(mlbc_erf_c7[k], t, mlbc_erf_c6[k]);
    p = fmaf(p, t, mlbc_erf_c5[k]);
    p = fmaf(p, t, mlbc_erf_c4[k]);
    p = fmaf(p, t, mlbc_erf_c3[k]);
    p = fmaf(p, t, mlbc_erf_c2[k]);
    p = fmaf(p, t, mlbc_erf_c1[k]);
    y = mlbc_erf_hi[k] + fmaf(p, t, mlbc_erf_lo[k]);
    y = a < 0.921875f ? ys : y;
    memcpy(&b, &y, sizeof b);
    b |= sign;
    memcpy(&y, &b, sizeof y);
    return x != x ? x + x : y;
}

#if MLBC_X86
/* the entry of table mlbc_erf_NAME for each lane's interval k */
#define MLBC_ERF_PICK512(NAME) \
    _mm512_permutexvar_ps(k, _mm512_zextps256_ps512(_mm256_loadu_ps(mlbc_erf_##NAME)))
#define MLBC_ERF_PICK256(NAME) _mm256_permutevar8x32_ps(_mm256_loadu_ps(mlbc_erf_##NAME), k)

MLBC_TILE MLBC_AVX512 __m512 mlbc_verf_avx512(__m512 x)
{
    const __m512i sm = _mm512_set1_epi32((int)0x80000000u);
    __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), sm);
    __m512 a = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), sign));
    __m512 z = _mm512_mul_ps(a, a), q, ys, c, u, t, p, y;
    __m512i k;
    q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.5f113ap-14f), z, _mm512_set1_ps(-0x1.aae984p-11f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0x1.54dad8p-8f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-0x1.b8107cp-6f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0x1.ce2e2p-4f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-0x1.812744p-2f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0x1.06eba8p-3f));
    ys = _mm512_fmadd_ps(a, q, a);
    c = _mm512_min_ps(a, _mm512_set1_ps(4.0f));
    u = _mm512_sub_ps(c, _mm512_set1_ps(0.875f));
    u = _mm512_mul_ps(_mm512_max_ps(u, _mm512_setzero_ps()), _mm512_set1_ps(2.0f));
    k = _mm512_cvttps_epi32(u);
    t = _mm512_sub_ps(c, _mm512_fmadd_ps(_mm512_cvtepi32_ps(k), _mm512_set1_ps(0.5f),
                                         _mm512_set1_ps(1.125f)));
    p = _mm512_fmadd_ps(MLBC_ERF_PICK512(c7), t, MLBC_ERF_PICK512(c6));
    p = _mm512_fmadd_ps(p, t, MLBC_ERF_PICK512(c5));
    p = _mm512_fmadd_ps(p, t, MLBC_ERF_PICK512(c4));
    p = _mm512_fmadd_ps(p, t, MLBC_ERF_PICK512(c3));
    p = _mm512_fmadd_ps(p, t, MLBC_ERF_PICK512(c2));
    p = _mm512_fmadd_ps(p, t, MLBC_ERF_PICK512(c1));
    y = _mm512_add_ps(MLBC_ERF_PICK512(hi), _mm512_fmadd_ps(p, t, MLBC_ERF_PICK512(lo)));
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.921875f), _CMP_LT_OQ), y, ys);
    y = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), sign));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, _mm512_add_ps(x, x));
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_verf_avx2(__m256 x)
{
    __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
    __m256 a = _mm256_xor_ps(x, sign);
    __m256 z = _mm256_mul_ps(a, a), q, ys, c, u, t, p, y;
    __m256i k;
    q = _mm256_fmadd_ps(_mm256_set1_ps(0x1.5f113ap-14f), z, _mm256_set1_ps(-0x1.aae984p-11f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(0x1.54dad8p-8f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(-0x1.b8107cp-6f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(0x1.ce2e2p-4f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(-0x1.812744p-2f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(0x1.06eba8p-3f));
    ys = _mm256_fmadd_ps(a, q, a);
    c = _mm256_min_ps(a, _mm256_set1_ps(4.0f));
    u = _mm256_sub_ps(c, _mm256_set1_ps(0.875f));
    u = _mm256_mul_ps(_mm256_max_ps(u, _mm256_setzero_ps()), _mm256_set1_ps(2.0f));
    k = _mm256_cvttps_epi32(u);
    t = _mm256_sub_ps(c, _mm256_fmadd_ps(_mm256_cvtepi32_ps(k), _mm256_set1_ps(0.5f),
                                         _mm256_set1_ps(1.125f)));
    p = _mm256_fmadd_ps(MLBC_ERF_PICK256(c7), t, MLBC_ERF_PICK256(c6));
    p = _mm256_fmadd_ps(p, t, MLBC_ERF_PICK256(c5));
    p = _mm256_fmadd_ps(p, t, MLBC_ERF_PICK256(c4));
    p = _mm256_fmadd_ps(p, t, MLBC_ERF_PICK256(c3));
    p = _mm256_fmadd_ps(p, t, MLBC_ERF_PICK256(c2));
    p = _mm256_fmadd_ps(p, t, MLBC_ERF_PICK256(c1));
    y = _mm256_add_ps(MLBC_ERF_PICK256(hi), _mm256_fmadd_ps(p, t, MLBC_ERF_PICK256(lo)));
    y = _mm256_blendv_ps(y, ys, _mm256_cmp_ps(a, _mm256_set1_ps(0.921875f), _CMP_LT_OQ));
    y = _mm256_or_ps(y, sign);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
#endif

MLBC_VMAP(mlbc_verf)
