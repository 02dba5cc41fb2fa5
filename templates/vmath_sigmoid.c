// Vectorised float logistic sigmoid over an array (vmath_expk: exp kernel, paths, loop).
/* mlbc_vsigmoid_f32(n, x, y): y[i] = 1 / (1 + exp(-x[i])), within 2 ulp of the correctly
 * rounded result (measured on every float), the same bits on every path and with every
 * compiler. With e = exp(-|x|) = (h + l) s2 (vmath_expk) and d = 1 + e, the quotient
 * N / d (N = 1 for x >= 0, N = e for x < 0: no cancellation either way) is computed from
 * N and d rounded to floats plus their rounding errors (Nl, dl, each from fmas): with
 * r = 1 / d and q = N r, q + (rho + Nl - q dl) r in one fma, rho = N - q d exact.
 * sigmoid(+inf) = 1, sigmoid(-inf) = 0, NaN stays NaN (quieted). */
static inline float mlbc_vsigmoid_c(float x)
{
    uint32_t b;
    float a, l, s2, h, n, nl, d, dl, r, q, rho;
    memcpy(&b, &x, sizeof b);
    b |= 0x80000000u;
    memcpy(&a, &b, sizeof a);           /* -|x| */
    h = mlbc_expk_c(a, &l, &s2);
    n = fmaf(h, s2, 0.0f);
    nl = fmaf(l, s2, fmaf(h, s2, -n));
    d = fmaf(h, s2, 1.0f);
    dl = fmaf(l, s2, fmaf(h, s2, 1.0f - d));
    n = x >= 0.0f ? 1.0f : n;
    nl = x >= 0.0f ? 0.0f : nl;
    r = 1.0f / d;
    q = n * r;
    rho = fmaf(-q, d, n);
    q = fmaf(rho + fmaf(-q, dl, nl), r, q);
    return x != x ? x + x : q;
}

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 mlbc_vsigmoid_avx512(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 a = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(x),
                                                   _mm512_set1_epi32((int)0x80000000u)));
    __m512 l, s2, h = mlbc_expk_avx512(a, &l, &s2), n, nl, d, dl, r, q, rho;
    __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    n = _mm512_fmadd_ps(h, s2, _mm512_setzero_ps());
    nl = _mm512_fmadd_ps(l, s2, _mm512_fmsub_ps(h, s2, n));
    d = _mm512_fmadd_ps(h, s2, one);
    dl = _mm512_fmadd_ps(l, s2, _mm512_fmadd_ps(h, s2, _mm512_sub_ps(one, d)));
    n = _mm512_mask_blend_ps(pos, n, one);
    nl = _mm512_mask_blend_ps(pos, nl, _mm512_setzero_ps());
    r = _mm512_div_ps(one, d);
    q = _mm512_mul_ps(n, r);
    rho = _mm512_fnmadd_ps(q, d, n);
    q = _mm512_fmadd_ps(_mm512_add_ps(rho, _mm512_fnmadd_ps(q, dl, nl)), r, q);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), q, _mm512_add_ps(x, x));
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_vsigmoid_avx2(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 a = _mm256_or_ps(x, _mm256_set1_ps(-0.0f));
    __m256 l, s2, h = mlbc_expk_avx2(a, &l, &s2), n, nl, d, dl, r, q, rho;
    __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
    n = _mm256_fmadd_ps(h, s2, _mm256_setzero_ps());
    nl = _mm256_fmadd_ps(l, s2, _mm256_fmsub_ps(h, s2, n));
    d = _mm256_fmadd_ps(h, s2, one);
    dl = _mm256_fmadd_ps(l, s2, _mm256_fmadd_ps(h, s2, _mm256_sub_ps(one, d)));
    n = _mm256_blendv_ps(n, one, pos);
    nl = _mm256_blendv_ps(nl, _mm256_setzero_ps(), pos);
    r = _mm256_div_ps(one, d);
    q = _mm256_mul_ps(n, r);
    rho = _mm256_fnmadd_ps(q, d, n);
    q = _mm256_fmadd_ps(_mm256_add_ps(rho, _mm256_fnmadd_ps(q, dl, nl)), r, q);
    return _mm256_blendv_ps(q, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
#endif

MLBC_VMAP(mlbc_vsigmoid)
