// One row of A by a constant float B packed for it, mlbc_gemv_f32: a batch-1 policy's layers,
// a recurrent step. B is streamed once per call, so its layout is made of contiguous streams
// the hardware prefetcher follows: column blocks of 64, each row by row, where mlbc_gemm_f32's
// panels make a stream per 16 columns (AMD Zen 5, 1 x 128 by 128 x 512: 1.6 us instead of
// 1.9 at gcc -O2 and 2.3 at clang -O2; with AVX2, 1 x 300 x 256: 1.9 us instead of 2.6-4.4).
#if MLBC_X86
/* AVX-512: four blocks a pass, 16 accumulators (mlbc_row_avx512, in gemm_f32.c) */
#define MLBC_GEMV_PASS16(NP) mlbc_row_avx512(NP, K, a, b, 64 * K, 16, 64, \
                                             16 * (NP - 4 * ((NP - 1) / 4)), 1, cols, \
                                             c ? c + n0 * csn : 0, csn, y + n0)

MLBC_PRODUCT MLBC_AVX512 static void mlbc_gemv_f32_avx512(long N, long K, const float *a,
                                                       const float *b, const float *c, long csn,
                                                       float *y)
{
    long n0;
    for (n0 = 0; n0 < N; n0 += 256, b += 256 * K) {
        int np = (int)(N - n0 < 256 ? (N - n0 + 15) / 16 : 16);
        int cols = (int)(N - n0 - 16 * (np - 1) < 16 ? N - n0 - 16 * (np - 1) : 16);
        switch (np) {
        case 1: MLBC_GEMV_PASS16(1); break;
        case 2: MLBC_GEMV_PASS16(2); break;
        case 3: MLBC_GEMV_PASS16(3); break;
        case 4: MLBC_GEMV_PASS16(4); break;
        case 5: MLBC_GEMV_PASS16(5); break;
        case 6: MLBC_GEMV_PASS16(6); break;
        case 7: MLBC_GEMV_PASS16(7); break;
        case 8: MLBC_GEMV_PASS16(8); break;
        case 9: MLBC_GEMV_PASS16(9); break;
        case 10: MLBC_GEMV_PASS16(10); break;
        case 11: MLBC_GEMV_PASS16(11); break;
        case 12: MLBC_GEMV_PASS16(12); break;
        case 13: MLBC_GEMV_PASS16(13); break;
        case 14: MLBC_GEMV_PASS16(14); break;
        case 15: MLBC_GEMV_PASS16(15); break;
        default: MLBC_GEMV_PASS16(16); break;
        }
    }
}

/* AVX2: one block of NP panels (1 to 4) a pass, rows bks floats apart, its panels loaded and
 * used at once in 2 NP accumulators (mlbc_tile_avx2 holds loaded panels for its rows: with
 * one row, 8 panel halves and 8 accumulators spilled under gcc, 1.5x slower; 6 panels a
 * pass, 12 accumulators, were as slow). The chains are mlbc_tile_avx2's. */
MLBC_TILE MLBC_AVX2 void mlbc_row_avx2(int np, long K, const float *a, const float *b,
                                       long bks, int cols, const float *c, long csn, float *y)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), iota);
    const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8), iota);
    __m256 acc[8];
    long k;
    int p, h;
    MLBC_UNROLL for (p = 0; p < 2 * np; p++)
        acc[p] = _mm256_setzero_ps();
    for (k = 0; k < K; k++, b += bks) {
        __m256 x = _mm256_broadcast_ss(a + k);
        MLBC_UNROLL for (p = 0; p < 2 * np; p++)
            acc[p] = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 8 * p), acc[p]);
    }
    MLBC_UNROLL for (p = 0; p < np; p++)
        MLBC_UNROLL for (h = 0; h < 2; h++) {
            int part = p == np - 1 && cols < 16;
            __m256i mk = h ? m1 : m0;
            float *yp = y + p * 16 + 8 * h;
            __m256 s = acc[2 * p + h];
            if (c && csn)
                s = _mm256_add_ps(s, part ? _mm256_maskload_ps(c + p * 16 + 8 * h, mk)
                                          : _mm256_loadu_ps(c + p * 16 + 8 * h));
            else if (c)
                s = _mm256_add_ps(s, _mm256_set1_ps(c[0]));
            if (part)
                _mm256_maskstore_ps(yp, mk, s);
            else
                _mm256_storeu_ps(yp, s);
        }
}

#define MLBC_GEMV_PASS8(NP) mlbc_row_avx2(NP, K, a, b, 16 * NP, cols, c ? c + n0 * csn : 0, \
                                          csn, y + n0)

MLBC_PRODUCT MLBC_AVX2 static void mlbc_gemv_f32_avx2(long N, long K, const float *a,
                                                   const float *b, const float *c, long csn,
                                                   float *y)
{
    long n0;
    for (n0 = 0; n0 < N; n0 += 64, b += 64 * K) {
        int np = (int)(N - n0 < 64 ? (N - n0 + 15) / 16 : 4);
        int cols = (int)(N - n0 - 16 * (np - 1) < 16 ? N - n0 - 16 * (np - 1) : 16);
        switch (np) {
        case 1: MLBC_GEMV_PASS8(1); break;
        case 2: MLBC_GEMV_PASS8(2); break;
        case 3: MLBC_GEMV_PASS8(3); break;
        default: MLBC_GEMV_PASS8(4); break;
        }
    }
}
#endif

/* y[n] = sum over k of a[k] B[k][n] (+ c[n * csn]). B in column blocks of 64 (the last one
 * narrower), each block row by row, [K][w], w its columns rounded up to 16 (zeros past N);
 * block j starts at j * 64 * K. The chains are mlbc_gemm_f32's, and so are the bits: the
 * other paths take mlbc_gemm_f32_base block by block, as panels 16 floats apart with rows w
 * apart (not mlbc_gemm_f32, whose x86 paths would be compiled for nothing). */
static void mlbc_gemv_f32(long N, long K, const float *a, const float *b, const float *c,
                          long csn, float *y)
{
    long n0;
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        mlbc_gemv_f32_avx512(N, K, a, b, c, csn, y);
        return;
    }
    if (isa == 1) {
        mlbc_gemv_f32_avx2(N, K, a, b, c, csn, y);
        return;
    }
#endif
    for (n0 = 0; n0 < N; n0 += 64, b += 64 * K) {
        long w = N - n0 < 64 ? N - n0 : 64;
        mlbc_gemm_f32_base(1, w, K, a, K, b, 16, (w + 15) / 16 * 16, 1, c ? c + n0 * csn : 0,
                           0, csn, y + n0, N);
    }
}
