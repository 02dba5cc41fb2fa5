// Float division of an array by one value, mlbc_vdivs_f32: Softmax's rows by their sums, a
// Div by a scalar (attention's 1 / sqrt(d), GELU's x / sqrt(2)). Plain -O2 divides 4 floats
// an instruction (SSE2); the vector paths 16 or 8 (a transformer block over 64 tokens, gcc
// -O2 on AMD Zen 5: 3% faster). Division is correctly rounded on every path, so the bits are
// the same.
/* y[i] = x[i] / d for i < n; x and y may be the same array. */
static void mlbc_vdivs_f32_c(long i, long n, const float *x, float d, float *y)
{
    for (; i < n; i++)
        y[i] = x[i] / d;
}

#if MLBC_X86
MLBC_PATH MLBC_AVX512 static void mlbc_vdivs_f32_avx512(long n, const float *x, float d,
                                                         float *y)
{
    const __m512 v = _mm512_set1_ps(d);
    long i;
    for (i = 0; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_div_ps(_mm512_loadu_ps(x + i), v));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, _mm512_maskz_div_ps(m, _mm512_maskz_loadu_ps(m, x + i), v));
    }
}

MLBC_PATH MLBC_AVX2 static void mlbc_vdivs_f32_avx2(long n, const float *x, float d, float *y)
{
    const __m256 v = _mm256_set1_ps(d);
    long i;
    for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_div_ps(_mm256_loadu_ps(x + i), v));
    mlbc_vdivs_f32_c(i, n, x, d, y);
}
#endif

static void mlbc_vdivs_f32(long n, const float *x, float d, float *y)
{
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        mlbc_vdivs_f32_avx512(n, x, d, y);
        return;
    }
    if (isa == 1) {
        mlbc_vdivs_f32_avx2(n, x, d, y);
        return;
    }
#endif
    mlbc_vdivs_f32_c(0, n, x, d, y);
}
