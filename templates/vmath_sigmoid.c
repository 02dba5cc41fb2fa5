// Vectorised float logistic sigmoid over an array (vmath_expneg: exp kernel; vmath_map: loop).
/* mlbc_vsigmoid_f32(n, x, y): y[i] = 1 / (1 + exp(-x[i])), within 1 ulp of the correctly
 * rounded result (measured on every float), the same bits on every path and with every
 * compiler. With e = exp(-|x|) (vmath_expneg, one rounding) and d + dl = 1 + e exactly
 * (Fast2Sum), the quotient N / (d + dl) (N = 1 for x >= 0, N = e for x < 0: no cancellation
 * either way) is q + (rho - q dl) r with r = 1 / d, q = N r and rho = N - q d exact (an fma):
 * nearly N / (1 + e) rounded once. sigmoid(+inf) = 1, sigmoid(-inf) = 0. NaN stays NaN
 * (quieted) through the arithmetic: -|x| is clamped to -104 by a max that keeps NaN (MAXPS
 * returns its second operand if either is NaN), which saved a select of 3 of 24 operations. */
static inline float mlbc_vsigmoid_c(float x)
{
    uint32_t b;
    float a, e, d, dl, n, r, q;
    memcpy(&b, &x, sizeof b);
    b |= 0x80000000u;
    memcpy(&a, &b, sizeof a);           /* -|x| */
    e = mlbc_expneg_c(a < -104.0f ? -104.0f : a); /* NaN stays */
    d = 1.0f + e;
    dl = e - (d - 1.0f);
    n = x >= 0.0f ? 1.0f : e;
    r = 1.0f / d;
    q = n * r;
    return fmaf(fmaf(-q, dl, fmaf(-q, d, n)), r, q);
}

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 mlbc_vsigmoid_avx512(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 a = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(x),
                                                   _mm512_set1_epi32((int)0x80000000u)));
    __m512 e, d, dl, n, r, q;
    e = mlbc_expneg_avx512(_mm512_max_ps(_mm512_set1_ps(-104.0f), a)); /* NaN stays */
    d = _mm512_add_ps(one, e);
    dl = _mm512_sub_ps(e, _mm512_sub_ps(d, one));
    n = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ), e, one);
    r = _mm512_div_ps(one, d);
    q = _mm512_mul_ps(n, r);
    return _mm512_fmadd_ps(_mm512_fnmadd_ps(q, dl, _mm512_fnmadd_ps(q, d, n)), r, q);
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_vsigmoid_avx2(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 a = _mm256_or_ps(x, _mm256_set1_ps(-0.0f));
    __m256 e, d, dl, n, r, q;
    e = mlbc_expneg_avx2(_mm256_max_ps(_mm256_set1_ps(-104.0f), a)); /* NaN stays */
    d = _mm256_add_ps(one, e);
    dl = _mm256_sub_ps(e, _mm256_sub_ps(d, one));
    n = _mm256_blendv_ps(e, one, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
    r = _mm256_div_ps(one, d);
    q = _mm256_mul_ps(n, r);
    return _mm256_fmadd_ps(_mm256_fnmadd_ps(q, dl, _mm256_fnmadd_ps(q, d, n)), r, q);
}
#endif

MLBC_VMAP(mlbc_vsigmoid)

/* mlbc_vsilu_f32(n, x, y): y[i] = x[i] * sigmoid(x[i]), the sigmoid rounded to float first: a
 * Sigmoid and a Mul in one pass (fuse.c), their bits. */
static inline float mlbc_vsilu_c(float x) { return x * mlbc_vsigmoid_c(x); }

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 mlbc_vsilu_avx512(__m512 x)
{
    return _mm512_mul_ps(x, mlbc_vsigmoid_avx512(x));
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_vsilu_avx2(__m256 x)
{
    return _mm256_mul_ps(x, mlbc_vsigmoid_avx2(x));
}
#endif

MLBC_VMAP(mlbc_vsilu)
