// The float LSTM's new state from a row's activated gates (template rnn_f32, default
// activations): the cell update and the output in one vector pass, tanh from vmath_tanh.
/* mlbc_lstm_state_f32(n, g, c, h): with the gates g = [i | o | f | u] of n units each (ONNX's
 * order, u the candidate), for each unit j:
 *   c[j] = f c[j] + i u   (both products exact in double, the sum rounded once, then to
 *                          float: contraction cannot change it)
 *   h[j] = o tanh(c[j])
 * The same operations on every path, so the same bits; the vector paths take the units past
 * the last full vector in masked lanes (AVX-512) or through copies (AVX2). */
static void mlbc_lstm_state_f32_c(long j, long n, const float *g, float *c, float *h)
{
    for (; j < n; j++) {
        c[j] = (float)((double)g[2 * n + j] * c[j] + (double)g[j] * g[3 * n + j]);
        h[j] = g[n + j] * mlbc_vtanh_c(c[j]);
    }
}

#if MLBC_X86
/* f c + i u for 8 lanes (4 with AVX2), in double. */
MLBC_TILE MLBC_AVX512 __m256 mlbc_lstm_sum_avx512(__m256 f, __m256 c, __m256 i, __m256 u)
{
    __m512d fc = _mm512_mul_pd(_mm512_cvtps_pd(f), _mm512_cvtps_pd(c));
    return _mm512_cvtpd_ps(_mm512_fmadd_pd(_mm512_cvtps_pd(i), _mm512_cvtps_pd(u), fc));
}

MLBC_TILE MLBC_AVX2 __m128 mlbc_lstm_sum_avx2(__m128 f, __m128 c, __m128 i, __m128 u)
{
    __m256d fc = _mm256_mul_pd(_mm256_cvtps_pd(f), _mm256_cvtps_pd(c));
    return _mm256_cvtpd_ps(_mm256_fmadd_pd(_mm256_cvtps_pd(i), _mm256_cvtps_pd(u), fc));
}

/* Lanes 8 to 15 (AVX-512F moves them as 4 doubles: it has no 8-float extract). */
MLBC_TILE MLBC_AVX512 __m256 mlbc_hi8_avx512(__m512 x)
{
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
}

/* Units j .. j + 15 of lanes M (the others neither read nor written) */
MLBC_TILE MLBC_AVX512 void mlbc_lstm_block_avx512(__mmask16 m, long n, const float *g, float *c,
                                                   float *h)
{
    __m512 i = _mm512_maskz_loadu_ps(m, g), f = _mm512_maskz_loadu_ps(m, g + 2 * n);
    __m512 u = _mm512_maskz_loadu_ps(m, g + 3 * n), cp = _mm512_maskz_loadu_ps(m, c);
    __m256 lo = mlbc_lstm_sum_avx512(_mm512_castps512_ps256(f), _mm512_castps512_ps256(cp),
                                     _mm512_castps512_ps256(i), _mm512_castps512_ps256(u));
    __m256 hi = mlbc_lstm_sum_avx512(mlbc_hi8_avx512(f), mlbc_hi8_avx512(cp),
                                     mlbc_hi8_avx512(i), mlbc_hi8_avx512(u));
    __m512 cn = _mm512_castpd_ps(_mm512_insertf64x4(
        _mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
    _mm512_mask_storeu_ps(c, m, cn);
    _mm512_mask_storeu_ps(h, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, g + n),
                                              mlbc_vtanh_avx512(cn)));
}

/* the last units in masked lanes: in the C path, at plain -O2, each fmaf of their tanh was a
 * libm call (an LSTM of 24 units: 14% of its time) */
MLBC_PATH MLBC_AVX512 static void mlbc_lstm_state_f32_avx512(long n, const float *g, float *c,
                                                              float *h)
{
    long j;
    for (j = 0; j + 16 <= n; j += 16)
        mlbc_lstm_block_avx512(0xffff, n, g + j, c + j, h + j);
    if (j < n)
        mlbc_lstm_block_avx512((__mmask16)((1u << (n - j)) - 1), n, g + j, c + j, h + j);
}

/* Units of gates i, o, f, u, cell c (8 each), into c and h */
MLBC_TILE MLBC_AVX2 void mlbc_lstm_block_avx2(const float *gi, const float *go, const float *gf,
                                              const float *gu, float *c, float *h)
{
    __m256 i = _mm256_loadu_ps(gi), f = _mm256_loadu_ps(gf);
    __m256 u = _mm256_loadu_ps(gu), cp = _mm256_loadu_ps(c);
    __m128 lo = mlbc_lstm_sum_avx2(_mm256_castps256_ps128(f), _mm256_castps256_ps128(cp),
                                   _mm256_castps256_ps128(i), _mm256_castps256_ps128(u));
    __m128 hi = mlbc_lstm_sum_avx2(_mm256_extractf128_ps(f, 1), _mm256_extractf128_ps(cp, 1),
                                   _mm256_extractf128_ps(i, 1), _mm256_extractf128_ps(u, 1));
    __m256 cn = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
    _mm256_storeu_ps(c, cn);
    _mm256_storeu_ps(h, _mm256_mul_ps(_mm256_loadu_ps(go), mlbc_vtanh_avx2(cn)));
}

/* the last units through copies of 8 (as MLBC_VMAP's AVX2 loop) */
MLBC_PATH MLBC_AVX2 static void mlbc_lstm_state_f32_avx2(long n, const float *g, float *c,
                                                          float *h)
{
    float b[6][8] = {{0}};
    long j, k;
    for (j = 0; j + 8 <= n; j += 8)
        mlbc_lstm_block_avx2(g + j, g + n + j, g + 2 * n + j, g + 3 * n + j, c + j, h + j);
    if (j == n)
        return;
    for (k = 0; k < n - j; k++) {
        b[0][k] = g[j + k];
        b[1][k] = g[n + j + k];
        b[2][k] = g[2 * n + j + k];
        b[3][k] = g[3 * n + j + k];
        b[4][k] = c[j + k];
    }
    mlbc_lstm_block_avx2(b[0], b[1], b[2], b[3], b[4], b[5]);
    for (k = 0; k < n - j; k++) {
        c[j + k] = b[4][k];
        h[j + k] = b[5][k];
    }
}
#endif

static void mlbc_lstm_state_f32(long n, const float *g, float *c, float *h)
{
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        mlbc_lstm_state_f32_avx512(n, g, c, h);
        return;
    }
    if (isa == 1) {
        mlbc_lstm_state_f32_avx2(n, g, c, h);
        return;
    }
#endif
    mlbc_lstm_state_f32_c(0, n, g, c, h);
}
