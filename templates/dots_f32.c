// Float dot products for few outputs over a long K, where one chain per output would wait on
// the FMA latency: sixteen partial chains, lane j over k = j, j + 16, ... (zero-padded to a
// multiple of 16: a padded lane adds +0), each with explicit fused multiply-adds, then a fixed
// reduction tree (mlbc_sum16). Every path (AVX-512, AVX2, portable C) computes exactly this.
/* The fixed reduction of sixteen partial sums: pairs of neighbours, then pairs of pairs. */
static float mlbc_sum16(const float *p)
{
    float q[8], r[4];
    int i;
    for (i = 0; i < 8; i++)
        q[i] = p[2 * i] + p[2 * i + 1];
    for (i = 0; i < 4; i++)
        r[i] = q[2 * i] + q[2 * i + 1];
    return (r[0] + r[1]) + (r[2] + r[3]);
}

static void mlbc_dots_f32_c(long M, long N, long K, const float *a, long lda, const float *w,
                            long ldw, const float *c, long csm, long csn, float *y)
{
    long m, n, k, j;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            float p[16] = {0}, s;
            for (k = 0; k < K; k += 16)
                for (j = 0; j < 16; j++)
                    p[j] = k + j < K ? fmaf(a[m * lda + k + j], w[n * ldw + k + j], p[j])
                                     : p[j] + 0.0f;
            s = mlbc_sum16(p);
            y[m * N + n] = c ? s + c[m * csm + n * csn] : s;
        }
}

#if MLBC_X86
/* mlbc_sum16 in the registers of each path, the same additions (a + b is b + a, bit for bit):
 * neighbours within pairs of lanes, pairs within quadruples, then across 128-bit blocks. Not
 * through memory: a wide store read back as floats, by code compiled without the path's
 * instruction set, cost about 150 ns a call on an Intel Xeon at gcc -O2 (issue 31). */
static inline __attribute__((always_inline)) MLBC_AVX512 float mlbc_sum16_avx512(__m512 p)
{
    p = _mm512_add_ps(p, _mm512_permute_ps(p, 0xB1));          /* q[i] in lane 2i */
    p = _mm512_add_ps(p, _mm512_permute_ps(p, 0x4E));          /* r[i] in lane 4i */
    p = _mm512_add_ps(p, _mm512_shuffle_f32x4(p, p, 0xB1));    /* r0 + r1 in lane 0 */
    p = _mm512_add_ps(p, _mm512_shuffle_f32x4(p, p, 0x4E));
    return _mm512_cvtss_f32(p);
}

/* The same with lanes 0-7 in lo and 8-15 in hi. */
static inline __attribute__((always_inline)) MLBC_AVX2 float mlbc_sum16_avx2(__m256 lo, __m256 hi)
{
    lo = _mm256_add_ps(lo, _mm256_permute_ps(lo, 0xB1));
    hi = _mm256_add_ps(hi, _mm256_permute_ps(hi, 0xB1));
    lo = _mm256_add_ps(lo, _mm256_permute_ps(lo, 0x4E));       /* r0 lane 0, r1 lane 4 */
    hi = _mm256_add_ps(hi, _mm256_permute_ps(hi, 0x4E));       /* r2, r3 */
    return _mm_cvtss_f32(_mm_add_ss(
        _mm_add_ss(_mm256_castps256_ps128(lo), _mm256_extractf128_ps(lo, 1)),
        _mm_add_ss(_mm256_castps256_ps128(hi), _mm256_extractf128_ps(hi, 1))));
}

MLBC_PRODUCT MLBC_AVX512 static void mlbc_dots_f32_avx512(long M, long N, long K, const float *a, long lda,
                                             const float *w, long ldw, const float *c, long csm,
                                             long csn, float *y)
{
    long m, n, k;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            __m512 acc = _mm512_setzero_ps();
            float s;
            for (k = 0; k < K; k += 16) {
                __mmask16 mk = K - k >= 16 ? (__mmask16)0xFFFF
                                           : (__mmask16)((1u << (K - k)) - 1);
                acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk, a + m * lda + k),
                                      _mm512_maskz_loadu_ps(mk, w + n * ldw + k), acc);
            }
            s = mlbc_sum16_avx512(acc);
            y[m * N + n] = c ? s + c[m * csm + n * csn] : s;
        }
}

MLBC_PRODUCT MLBC_AVX2 static void mlbc_dots_f32_avx2(long M, long N, long K, const float *a, long lda,
                                         const float *w, long ldw, const float *c, long csm,
                                         long csn, float *y)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    long m, n, k;
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            const float *am = a + m * lda, *wn = w + n * ldw;
            __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
            float s;
            for (k = 0; k + 16 <= K; k += 16) {
                lo = _mm256_fmadd_ps(_mm256_loadu_ps(am + k), _mm256_loadu_ps(wn + k), lo);
                hi = _mm256_fmadd_ps(_mm256_loadu_ps(am + k + 8), _mm256_loadu_ps(wn + k + 8), hi);
            }
            if (k < K) {
                __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(K - k)), iota);
                __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(K - k - 8)), iota);
                lo = _mm256_fmadd_ps(_mm256_maskload_ps(am + k, m0),
                                     _mm256_maskload_ps(wn + k, m0), lo);
                hi = _mm256_fmadd_ps(_mm256_maskload_ps(am + k + 8, m1),
                                     _mm256_maskload_ps(wn + k + 8, m1), hi);
            }
            s = mlbc_sum16_avx2(lo, hi);
            y[m * N + n] = c ? s + c[m * csm + n * csn] : s;
        }
}
#endif

/* Y[M][N] = A W^T (+ C) by sixteen-way partial sums: w[n][k] = w[n * ldw + k]. */
static void mlbc_dots_f32(long M, long N, long K, const float *a, long lda, const float *w,
                          long ldw, const float *c, long csm, long csn, float *y)
{
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        mlbc_dots_f32_avx512(M, N, K, a, lda, w, ldw, c, csm, csn, y);
        return;
    }
    if (isa == 1) {
        mlbc_dots_f32_avx2(M, N, K, a, lda, w, ldw, c, csm, csn, y);
        return;
    }
#endif
    mlbc_dots_f32_c(M, N, K, a, lda, w, ldw, c, csm, csn, y);
}
