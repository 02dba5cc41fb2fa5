// GELU as torch exports nn.GELU, fused by fuse.c: t = x / c (or x * c), erf(t), + one, * x,
// * half, each rounded to float as its node rounded it, in one pass over the array instead
// of five (vmath_erf: erf on each path, the same bits; vmath_map: the loop and its paths).
// No product here meets a sum, so no compiler contracts one into a fused multiply-add.
/* ${DOC} */
static inline float ${FN}_c(float x)
{
    return ((mlbc_verf_c(x ${OP} ${C}) + ${ONE}) * x) * ${HALF};
}

#if MLBC_X86
MLBC_TILE MLBC_AVX512 __m512 ${FN}_avx512(__m512 x)
{
    __m512 e = mlbc_verf_avx512(_mm512_${VOP}_ps(x, _mm512_set1_ps(${C})));
    e = _mm512_add_ps(e, _mm512_set1_ps(${ONE}));
    return _mm512_mul_ps(_mm512_mul_ps(e, x), _mm512_set1_ps(${HALF}));
}

MLBC_TILE MLBC_AVX2 __m256 ${FN}_avx2(__m256 x)
{
    __m256 e = mlbc_verf_avx2(_mm256_${VOP}_ps(x, _mm256_set1_ps(${C})));
    e = _mm256_add_ps(e, _mm256_set1_ps(${ONE}));
    return _mm256_mul_ps(_mm256_mul_ps(e, x), _mm256_set1_ps(${HALF}));
}
#endif

MLBC_VMAP(${FN})
