// Vectorised float erf over an array (vmath_expk: exp kernel, paths, loop).
/* mlbc_verf_f32(n, x, y): y[i] = erf(x[i]), within 2 ulp of the correctly rounded result
 * (measured on every float), odd (computed on |x|, the sign put back: erf(-0) = -0), the
 * same bits on every path and with every compiler. With a = |x|:
 *   a < 0.921875  a + a q(a^2): q of degree 6 fitted to erf(a) / a - 1, Horner in fmas, then
 *                 one fma (tiny and subnormal a are rounded once)
 *   beyond        1 - exp(l(min(a, 4))): l of degree 8 fitted to log(erfc a) (weighted by
 *                 erfc / erf, the relative error it makes in erf), Horner in fmas; exp from
 *                 vmath_expk, exp = (h + l) s2: y = 1 - h s2 (an fma), then y plus the
 *                 rounding error of y less l s2 (fmas); erf rounds to 1 from a = 3.92
 *   NaN           NaN (quieted); +-inf gives +-1. */
static inline float mlbc_verf_c(float x)
{
    uint32_t b, sign;
    float a, z, q, ys, c, l, s2, h, y;
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
    l = fmaf(-0x1.0dfbe2p-21f, c, -0x1.e923a2p-17f);
    l = fmaf(l, c, 0x1.a1a66cp-12f);
    l = fmaf(l, c, -0x1.0a0016p-8f);
    l = fmaf(l, c, 0x1.981068p-6f);
    l = fmaf(l, c, -0x1.ba799ap-4f);
    l = fmaf(l, c, -0x1.445e5ap-1f);
    l = fmaf(l, c, -0x1.2122eap+0f);
    l = fmaf(l, c, 0x1.525132p-13f);
    h = mlbc_expk_c(l, &l, &s2);
    y = fmaf(-h, s2, 1.0f);
    y = y + fmaf(-l, s2, fmaf(-h, s2, 1.0f - y));
    y = a < 0.921875f ? ys : y;
    memcpy(&b, &y, sizeof b);
    b |= sign;
    memcpy(&y, &b, sizeof y);
    return x != x ? x + x : y;
}

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 mlbc_verf_avx512(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512i sm = _mm512_set1_epi32((int)0x80000000u);
    __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), sm);
    __m512 a = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), sign));
    __m512 z = _mm512_mul_ps(a, a), q, ys, c, l, s2, h, y;
    q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.5f113ap-14f), z, _mm512_set1_ps(-0x1.aae984p-11f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0x1.54dad8p-8f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-0x1.b8107cp-6f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0x1.ce2e2p-4f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-0x1.812744p-2f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0x1.06eba8p-3f));
    ys = _mm512_fmadd_ps(a, q, a);
    c = _mm512_min_ps(a, _mm512_set1_ps(4.0f));
    l = _mm512_fmadd_ps(_mm512_set1_ps(-0x1.0dfbe2p-21f), c, _mm512_set1_ps(-0x1.e923a2p-17f));
    l = _mm512_fmadd_ps(l, c, _mm512_set1_ps(0x1.a1a66cp-12f));
    l = _mm512_fmadd_ps(l, c, _mm512_set1_ps(-0x1.0a0016p-8f));
    l = _mm512_fmadd_ps(l, c, _mm512_set1_ps(0x1.981068p-6f));
    l = _mm512_fmadd_ps(l, c, _mm512_set1_ps(-0x1.ba799ap-4f));
    l = _mm512_fmadd_ps(l, c, _mm512_set1_ps(-0x1.445e5ap-1f));
    l = _mm512_fmadd_ps(l, c, _mm512_set1_ps(-0x1.2122eap+0f));
    l = _mm512_fmadd_ps(l, c, _mm512_set1_ps(0x1.525132p-13f));
    h = mlbc_expk_avx512(l, &l, &s2);
    y = _mm512_fnmadd_ps(h, s2, _mm512_set1_ps(1.0f));
    y = _mm512_add_ps(y, _mm512_fnmadd_ps(l, s2, _mm512_fnmadd_ps(h, s2, _mm512_sub_ps(one, y))));
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.921875f), _CMP_LT_OQ), y, ys);
    y = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), sign));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, _mm512_add_ps(x, x));
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_verf_avx2(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
    __m256 a = _mm256_xor_ps(x, sign);
    __m256 z = _mm256_mul_ps(a, a), q, ys, c, l, s2, h, y;
    q = _mm256_fmadd_ps(_mm256_set1_ps(0x1.5f113ap-14f), z, _mm256_set1_ps(-0x1.aae984p-11f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(0x1.54dad8p-8f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(-0x1.b8107cp-6f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(0x1.ce2e2p-4f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(-0x1.812744p-2f));
    q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(0x1.06eba8p-3f));
    ys = _mm256_fmadd_ps(a, q, a);
    c = _mm256_min_ps(a, _mm256_set1_ps(4.0f));
    l = _mm256_fmadd_ps(_mm256_set1_ps(-0x1.0dfbe2p-21f), c, _mm256_set1_ps(-0x1.e923a2p-17f));
    l = _mm256_fmadd_ps(l, c, _mm256_set1_ps(0x1.a1a66cp-12f));
    l = _mm256_fmadd_ps(l, c, _mm256_set1_ps(-0x1.0a0016p-8f));
    l = _mm256_fmadd_ps(l, c, _mm256_set1_ps(0x1.981068p-6f));
    l = _mm256_fmadd_ps(l, c, _mm256_set1_ps(-0x1.ba799ap-4f));
    l = _mm256_fmadd_ps(l, c, _mm256_set1_ps(-0x1.445e5ap-1f));
    l = _mm256_fmadd_ps(l, c, _mm256_set1_ps(-0x1.2122eap+0f));
    l = _mm256_fmadd_ps(l, c, _mm256_set1_ps(0x1.525132p-13f));
    h = mlbc_expk_avx2(l, &l, &s2);
    y = _mm256_fnmadd_ps(h, s2, _mm256_set1_ps(1.0f));
    y = _mm256_add_ps(y, _mm256_fnmadd_ps(l, s2, _mm256_fnmadd_ps(h, s2, _mm256_sub_ps(one, y))));
    y = _mm256_blendv_ps(y, ys, _mm256_cmp_ps(a, _mm256_set1_ps(0.921875f), _CMP_LT_OQ));
    y = _mm256_or_ps(y, sign);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
#endif

MLBC_VMAP(mlbc_verf)
