// Vectorised float exp over an array (vmath_expk: the kernel, the paths and the array loop).
/* mlbc_vexp_f32(n, x, y): y[i] = exp(x[i]) = (h + l) s2 (vmath_expk), rounded once where the
 * result is a normal float: within 1 ulp of the correctly rounded result (measured on every
 * float), subnormal results and overflow to inf included; exp(-inf) = 0, exp(+-0) = 1, NaN
 * stays NaN (quieted). The same bits on every path and with every compiler. */
static inline float mlbc_vexp_c(float x)
{
    float l, s2, h = mlbc_expk_c(x, &l, &s2);
    float y = fmaf(l, s2, h * s2);
    return x != x ? x + x : y;
}

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 mlbc_vexp_avx512(__m512 x)
{
    __m512 l, s2, h = mlbc_expk_avx512(x, &l, &s2);
    __m512 y = _mm512_fmadd_ps(l, s2, _mm512_mul_ps(h, s2));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, _mm512_add_ps(x, x));
}

MLBC_TILE MLBC_AVX2 __m256 mlbc_vexp_avx2(__m256 x)
{
    __m256 l, s2, h = mlbc_expk_avx2(x, &l, &s2);
    __m256 y = _mm256_fmadd_ps(l, s2, _mm256_mul_ps(h, s2));
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
#endif

MLBC_VMAP(mlbc_vexp)
