// Vectorised float tanh over an array (vmath_expneg: exp kernel; vmath_map: loop).
/* mlbc_vtanh_f32(n, x, y): y[i] = tanh(x[i]), mlbc's own tanh for arrays (the scalar one is
 * mlbc_tanhf, templates/tanh.c, with the same bound): within 1 ulp of the correctly rounded
 * result (measured on every float), odd (computed on |x|, the sign put back: tanh(-0) = -0),
 * the same bits on every path and with every compiler. With a = |x|:
 *   a < 0.625   a + a^3 p(a^2): p of degree 5 fitted to (tanh a - a) / a^3, Horner in fmas,
 *               then one fma (tiny and subnormal a come out as a, correctly rounded)
 *   beyond      (1 - e) / (1 + e), e = exp(-2 min(a, 9.25)) (vmath_expneg, one rounding):
 *               n + nl = 1 - e and d + dl = 1 + e exactly (Fast2Sum); with r = 1 / d and
 *               q = n r, q + (rho + nl - q dl) r in one fma, rho = n - q d exact: nearly
 *               (1 - e) / (1 + e) rounded once. e <= 0.287 weighs at most 0.35 in the result,
 *               which is >= 0.55; from 9.25 on it rounds to 1
 *   NaN         NaN (quieted); +-inf gives +-1. */
static inline float mlbc_vtanh_c(float x)
{
    uint32_t b, sign;
    float a, z, w, p, ys, e, n, nl, d, dl, r, q, y;
    memcpy(&b, &x, sizeof b);
    sign = b & 0x80000000u;
    b ^= sign;
    memcpy(&a, &b, sizeof a);
    z = a * a;
    w = a * z;
    p = fmaf(0x1.18e1dcp-9f, z, -0x1.0bf4fcp-7f);
    p = fmaf(p, z, 0x1.638b58p-6f);
    p = fmaf(p, z, -0x1.b9ee9p-5f);
    p = fmaf(p, z, 0x1.111066p-3f);
    p = fmaf(p, z, -0x1.555554p-2f);
    ys = fmaf(w, p, a);
    e = mlbc_expneg_c(-2.0f * (a < 9.25f ? a : 9.25f));
    n = 1.0f - e;
    nl = (1.0f - n) - e;
    d = 1.0f + e;
    dl = e - (d - 1.0f);
    r = 1.0f / d;
    q = n * r;
    y = fmaf(fmaf(-q, dl, fmaf(-q, d, n) + nl), r, q);
    y = a < 0.625f ? ys : y;
    memcpy(&b, &y, sizeof b);
    b |= sign;
    memcpy(&y, &b, sizeof y);
    return x != x ? x + x : y;
}

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 mlbc_vtanh_avx512(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u));
    __m512 a = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), sign));
    __m512 z = _mm512_mul_ps(a, a), w = _mm512_mul_ps(a, z), p, ys, e, n, nl, d, dl, r, q, y;
    p = _mm512_fmadd_ps(_mm512_set1_ps(0x1.18e1dcp-9f), z, _mm512_set1_ps(-0x1.0bf4fcp-7f));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(0x1.638b58p-6f));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-0x1.b9ee9p-5f));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(0x1.111066p-3f));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-0x1.555554p-2f));
    ys = _mm512_fmadd_ps(w, p, a);
    e = mlbc_expneg_avx512(_mm512_mul_ps(_mm512_set1_ps(-2.0f),
                                         _mm512_min_ps(a, _mm512_set1_ps(9.25f))));
    n = _mm512_sub_ps(one, e);
    nl = _mm512_sub_ps(_mm512_sub_ps(one, n), e);
    d = _mm512_add_ps(one, e);
    dl = _mm512_sub_ps(e, _mm512_sub_ps(d, one));
    r = _mm512_div_ps(one, d);
    q = _mm512_mul_ps(n, r);
    y = _mm512_fmadd_ps(_mm512_fnmadd_ps(q, dl, _mm512_add_ps(_mm512_fnmadd_ps(q, d, n), nl)),
                        r, q);
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.625f), _CMP_LT_OQ), y, ys);
    y = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), sign));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, _mm512_add_ps(x, x));
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_vtanh_avx2(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
    __m256 a = _mm256_xor_ps(x, sign);
    __m256 z = _mm256_mul_ps(a, a), w = _mm256_mul_ps(a, z), p, ys, e, n, nl, d, dl, r, q, y;
    p = _mm256_fmadd_ps(_mm256_set1_ps(0x1.18e1dcp-9f), z, _mm256_set1_ps(-0x1.0bf4fcp-7f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(0x1.638b58p-6f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-0x1.b9ee9p-5f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(0x1.111066p-3f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-0x1.555554p-2f));
    ys = _mm256_fmadd_ps(w, p, a);
    e = mlbc_expneg_avx2(_mm256_mul_ps(_mm256_set1_ps(-2.0f),
                                       _mm256_min_ps(a, _mm256_set1_ps(9.25f))));
    n = _mm256_sub_ps(one, e);
    nl = _mm256_sub_ps(_mm256_sub_ps(one, n), e);
    d = _mm256_add_ps(one, e);
    dl = _mm256_sub_ps(e, _mm256_sub_ps(d, one));
    r = _mm256_div_ps(one, d);
    q = _mm256_mul_ps(n, r);
    y = _mm256_fmadd_ps(_mm256_fnmadd_ps(q, dl, _mm256_add_ps(_mm256_fnmadd_ps(q, d, n), nl)),
                        r, q);
    y = _mm256_blendv_ps(y, ys, _mm256_cmp_ps(a, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
    y = _mm256_or_ps(y, sign);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
#endif

MLBC_VMAP(mlbc_vtanh)
