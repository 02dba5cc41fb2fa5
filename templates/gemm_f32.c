// Float matrix product with explicit fused multiply-adds, B in panels of 16 columns (packed at
// compile time, or read in place): the entry point mlbc_gemm_f32 and its path drivers. The
// arithmetic, the tiles and the panel layout are in templates/gemm_tile_f32.c
// (mlbc_gemm_f32_c(), pulled in before this); B's row k is k * bks floats after row 0.
#if MLBC_X86
/* One row of A by NP panels (1 to 16) in groups of 4, each panel loaded and used at once:
 * panel p's row k at b + (p / 4) gs + (p % 4) ps + k ks, the last group's rows kl apart.
 * mlbc_gemm_f32's one-row products of 9 to 16 panels (gs = 4 bps, ps = bps, ks = kl = bks)
 * and mlbc_gemv_f32's blocks (templates/gemv_f32.c) take it, with the chains of
 * mlbc_tile_avx512. 16 accumulators cover 256 columns a pass over A's row, where the 8-panel
 * tile covers 128: a 1 x 128 by 128 x 512 product took 2.95 us instead of 3.2-3.3 (16 panels
 * held for the rows, as that tile holds them, would spill). A pointer per group, not one
 * offset per panel: clang had chained the panels' addresses in adds, 16 a step, a longer
 * step than its FMAs at two a cycle (AMD Zen 5: 1.2x slower than gcc). */
MLBC_TILE MLBC_AVX512 void mlbc_row_avx512(int np, long K, const float *a, const float *b,
                                           long gs, long ps, long ks, long kl, int padded,
                                           int cols, const float *c, long csn, float *y)
{
    __mmask16 last = (__mmask16)((1u << cols) - 1), lastload = padded ? 0xFFFF : last;
    __m512 acc[16];
    const float *g[4];
    long k;
    int p, ng = (np + 3) / 4;
    MLBC_UNROLL for (p = 0; p < ng; p++)
        g[p] = b + p * gs;
    MLBC_UNROLL16 for (p = 0; p < np; p++)
        acc[p] = _mm512_setzero_ps();
    for (k = 0; k < K; k++) {
        __m512 x = _mm512_set1_ps(a[k]);
        MLBC_UNROLL16 for (p = 0; p < np; p++) {
            const float *bk = g[p / 4] + p % 4 * ps;
            acc[p] = _mm512_fmadd_ps(x, p == np - 1 ? _mm512_maskz_loadu_ps(lastload, bk)
                                                    : _mm512_loadu_ps(bk), acc[p]);
        }
        MLBC_UNROLL for (p = 0; p < ng; p++)
            g[p] += p == ng - 1 ? kl : ks;
    }
    MLBC_UNROLL16 for (p = 0; p < np; p++) {
        __mmask16 mk = p == np - 1 ? last : (__mmask16)0xFFFF;
        __m512 s = acc[p];
        if (c)
            s = _mm512_add_ps(s, csn ? _mm512_maskz_loadu_ps(mk, c + p * 16)
                                     : _mm512_set1_ps(c[0]));
        _mm512_mask_storeu_ps(y + p * 16, mk, s);
    }
}

/* mlbc_gemm_f32's one row: blocks of up to 16 panels, those of more than 8 in one pass */
#define MLBC_ROW_ARGS(NP) NP, K, a + m * lda, b + p * bps, 4 * bps, bps, bks, bks, pad, cols, \
                          c ? c + m * csm + p * 16 * csn : 0, csn, y + m * ldy + p * 16
#define MLBC_ONE_ROW16_AVX512 \
    if (q <= 8) MLBC_BY_PANELS8(mlbc_tile_avx512) else switch (q) { \
    case 9: mlbc_row_avx512(MLBC_ROW_ARGS(9)); break; \
    case 10: mlbc_row_avx512(MLBC_ROW_ARGS(10)); break; \
    case 11: mlbc_row_avx512(MLBC_ROW_ARGS(11)); break; \
    case 12: mlbc_row_avx512(MLBC_ROW_ARGS(12)); break; \
    case 13: mlbc_row_avx512(MLBC_ROW_ARGS(13)); break; \
    case 14: mlbc_row_avx512(MLBC_ROW_ARGS(14)); break; \
    case 15: mlbc_row_avx512(MLBC_ROW_ARGS(15)); break; \
    default: mlbc_row_avx512(MLBC_ROW_ARGS(16)); break; }

MLBC_PATH MLBC_AVX512 static void mlbc_gemm_f32_avx512(long M, long N, long K, const float *a, long lda,
                                             const float *b, long bps, long bks, int padded,
                                             const float *c, long csm, long csn, float *y, long ldy)
{
    const long *offs = 0, *apix = 0, hs = 8; /* no table: the tiles' row offsets fold to k * bks */
    const int split = 0;
    MLBC_GEMM_LOOP(8, MLBC_ONE_ROW16_AVX512, MLBC_TWO_ROWS_AVX512, MLBC_ROWS_AVX512, 16, 4, 2)
}

MLBC_PATH MLBC_AVX2 static void mlbc_gemm_f32_avx2(long M, long N, long K, const float *a, long lda,
                                         const float *b, long bps, long bks, int padded,
                                         const float *c, long csm, long csn, float *y, long ldy)
{
    const long *offs = 0, *apix = 0, hs = 8;
    const int split = 0;
    MLBC_GEMM_LOOP(6, MLBC_ONE_ROW_AVX2, MLBC_TWO_ROWS_AVX2, MLBC_ROWS_AVX2, 4, 2, 1)
}
#endif

/* Y[M][N] = A B (+ C): a[m][k] = a[m * lda + k], B in panels (see mlbc_gemm_f32_c), c[m][n] =
 * c[m * csm + n * csn] or no c; y[m][n] = y[m * ldy + n]. */
static void mlbc_gemm_f32(long M, long N, long K, const float *a, long lda, const float *b,
                          long bps, long bks, int padded, const float *c, long csm, long csn,
                          float *y, long ldy)
{
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        mlbc_gemm_f32_avx512(M, N, K, a, lda, b, bps, bks, padded, c, csm, csn, y, ldy);
        return;
    }
    if (isa == 1) {
        mlbc_gemm_f32_avx2(M, N, K, a, lda, b, bps, bks, padded, c, csm, csn, y, ldy);
        return;
    }
#endif
#if MLBC_NEON
    mlbc_gemm_f32_neon(M, N, K, a, lda, 0, b, bps, 8, bks, 0, padded, c, csm, csn, y, ldy);
#else
    (void)padded;
    mlbc_gemm_f32_c(M, N, K, a, lda, 0, b, bps, 8, bks, 0, c, csm, csn, y, ldy);
#endif
}
