// Float matrix product whose B rows are found through a table of offsets, for convolutions of
// unit stride along their last axis (compiler/op_conv.c): B's row k is b + offs[k], its
// 16-column panels are bps floats apart and a panel's columns 8-15 hs floats after its
// column 0 (not padded: the last partial panel's loads are masked). For output rows of a
// convolution, b is the input (or its zero-padded copy) where the first row's first pixel
// meets the first tap, offs[k] is where tap k moves that, and column n is the pixel n floats
// further (bps = 16, hs = 8); or, for rows of 16 pixels, pixel n % 16 of the row n / 16, a
// row bps floats further (hs = 8); or, for rows of 8, pixel n % 8 of the row n / 8 (bps two
// rows, hs one): no im2col copy. The chains, the tiles and the loop over tiles are those of
// mlbc_gemm_f32 (templates/gemm_tile_f32.c, mlbc_gemm_f32_c()), so the same bits on every
// path.
#if MLBC_X86
/* offs is declared not null: the tiles' test for a table folds away, as it does where
 * mlbc_gemm_f32 passes none. Panels of one load each, or of two (split, hs != 8): two
 * drivers, each without a branch in its tiles (one driver with both ran 15% slower). */
#define MLBC_TAPS_AVX512(F, SPLIT) \
MLBC_PRODUCT MLBC_AVX512 __attribute__((nonnull(9))) static void F(long M, long N, long K, \
        const float *a, long lda, const float *b, long bps, long hs, const long *offs, \
        const float *c, long csm, long csn, float *y, long ldy) \
{ \
    const long bks = 0, *apix = 0; /* unused, the rows are offs[k] */ \
    const int padded = 0, split = SPLIT; \
    MLBC_GEMM_LOOP(8, MLBC_ONE_ROW_AVX512, MLBC_TWO_ROWS_AVX512, MLBC_ROWS_AVX512, 8, 4, 2) \
}
MLBC_TAPS_AVX512(mlbc_gemm_f32_taps_avx512, 0)
MLBC_TAPS_AVX512(mlbc_gemm_f32_taps_split_avx512, 1)

MLBC_PRODUCT MLBC_AVX2 __attribute__((nonnull(9))) static void mlbc_gemm_f32_taps_avx2(long M, long N, long K, const float *a,
                                              long lda, const float *b, long bps, long hs,
                                              const long *offs, const float *c, long csm,
                                              long csn, float *y, long ldy)
{
    const long bks = 0, *apix = 0;
    const int padded = 0, split = 0;
    MLBC_GEMM_LOOP(6, MLBC_ONE_ROW_AVX2, MLBC_TWO_ROWS_AVX2, MLBC_ROWS_AVX2, 4, 2, 1)
}
#endif

/* Y[M][N] = A B (+ C) as mlbc_gemm_f32,
 * b[k][n] = b[(n / 16) * bps + offs[k] + (n % 16 / 8) * hs + n % 8]. */
static void mlbc_gemm_f32_taps(long M, long N, long K, const float *a, long lda, const float *b,
                               long bps, long hs, const long *offs, const float *c, long csm,
                               long csn, float *y, long ldy)
{
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        if (hs == 8)
            mlbc_gemm_f32_taps_avx512(M, N, K, a, lda, b, bps, hs, offs, c, csm, csn, y, ldy);
        else
            mlbc_gemm_f32_taps_split_avx512(M, N, K, a, lda, b, bps, hs, offs, c, csm, csn, y,
                                            ldy);
        return;
    }
    if (isa == 1) {
        mlbc_gemm_f32_taps_avx2(M, N, K, a, lda, b, bps, hs, offs, c, csm, csn, y, ldy);
        return;
    }
#endif
#if MLBC_NEON
    mlbc_gemm_f32_neon(M, N, K, a, lda, 0, b, bps, hs, 0, offs, 0, c, csm, csn, y, ldy);
#else
    mlbc_gemm_f32_c(M, N, K, a, lda, 0, b, bps, hs, 0, offs, c, csm, csn, y, ldy);
#endif
}
