// A fused BatchNormalization and then a map activation (Silu, Sigmoid, Tanh:
// templates/vmath_*.c) on the output of a Conv product whose rows are pixels (yp, [pixel]
// [channel], MG channels a pixel), in one pass while it is in cache: channel m of each of
// the npix pixels becomes MAP((y - mean) * a + b), the terms in t (templates/conv_bn_table.c).
// The multiply-add is one fused operation on every path, and MAP_c, MAP_avx512 and
// MAP_avx2 are the same function of one element: the bits of conv_bn_pix.c then the map's
// array kernel, a pass fewer (a pass over the tile took as long as a tenth of the product).
/* ${DOC} */
#if MLBC_X86
MLBC_PATH MLBC_AVX512 static void ${FN}_avx512(float *restrict yp, long npix,
                                               const float *restrict t)
{
    long p, m;
    for (p = 0; p < npix; p++) {
        float *restrict yr = yp + p * ${MG};
        for (m = 0; m < ${MG}; m += 16) {
            const __mmask16 k = (__mmask16)(${MG} - m < 16 ? (1u << (${MG} - m)) - 1 : 0xFFFF);
            const __m512 v = _mm512_fmadd_ps(
                _mm512_sub_ps(_mm512_maskz_loadu_ps(k, yr + m),
                              _mm512_maskz_loadu_ps(k, t + ${M} + m)),
                _mm512_maskz_loadu_ps(k, t + m), _mm512_maskz_loadu_ps(k, t + ${M2} + m));
            _mm512_mask_storeu_ps(yr + m, k, ${MAP}_avx512(v));
        }
    }
}

MLBC_PATH MLBC_AVX2 static void ${FN}_avx2(float *restrict yp, long npix,
                                           const float *restrict t)
{
    long p, m;
    for (p = 0; p < npix; p++) {
        float *restrict yr = yp + p * ${MG};
        for (m = 0; m + 8 <= ${MG}; m += 8) {
            const __m256 v = _mm256_fmadd_ps(
                _mm256_sub_ps(_mm256_loadu_ps(yr + m), _mm256_loadu_ps(t + ${M} + m)),
                _mm256_loadu_ps(t + m), _mm256_loadu_ps(t + ${M2} + m));
            _mm256_storeu_ps(yr + m, ${MAP}_avx2(v));
        }
        for (; m < ${MG}; m++)
            yr[m] = ${MAP}_c(fmaf(yr[m] - t[${M} + m], t[m], t[${M2} + m]));
    }
}
#endif

static void ${FN}(float *restrict yp, long npix, const float *restrict t)
{
    long p, m;
#if MLBC_X86
    const int isa = mlbc_isa();
    if (isa == 2) {
        ${FN}_avx512(yp, npix, t);
        return;
    }
    if (isa == 1) {
        ${FN}_avx2(yp, npix, t);
        return;
    }
#endif
    for (p = 0; p < npix; p++) {
        float *restrict yr = yp + p * ${MG};
        for (m = 0; m < ${MG}; m++)
            yr[m] = ${MAP}_c(fmaf(yr[m] - t[${M} + m], t[m], t[${M2} + m]));
    }
}
