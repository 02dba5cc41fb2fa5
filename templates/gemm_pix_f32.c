// Float matrix product whose A rows are found through tables, for convolutions whose output
// rows waste columns in mlbc_gemm_f32_taps (rows of 5, 7, 8 or 14 pixels, say;
// compiler/ops/op_conv.c, pix_pays): the rows are output pixels, a[m][k] = a[apix[m] +
// offs[k]], tap k of pixel m in the (padded) input; the columns are output channels, B the
// weights packed at compile time (bps floats from one panel to the next, 16 a row,
// zero-padded). A tile's rows are any pixels, so no column is wasted whatever the row
// length. The chains, the tiles and the loop over tiles are those of mlbc_gemm_f32
// (templates/gemm_tile_f32.c), so the same bits on every path.
// gcc 12 at -O3 specialises these products for constants their callers share and then bounds
// B's reads by the largest K that any of them passes, warning of reads past the weights that
// no call makes (test_models' positions model, with the per-pixel kernel before the classes
// too). That model runs under ASan+UBSan in make test instead (check_positions).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#if MLBC_X86
MLBC_PRODUCT MLBC_AVX512 __attribute__((nonnull(5, 6))) static void
mlbc_gemm_f32_pix_avx512(long M, long N, long K, const float *a, const long *apix,
                         const long *offs, const float *b, long bps, const float *c, long csm,
                         long csn, float *y, long ldy)
{
    const long lda = 0, bks = 16, hs = 8; /* A's rows are apix[m], B's rows 16 floats apart */
    const int padded = 1, split = 0;
    MLBC_GEMM_LOOP(8, MLBC_ONE_ROW_AVX512, MLBC_TWO_ROWS_AVX512, MLBC_ROWS_AVX512, 8, 4, 2)
}

MLBC_PRODUCT MLBC_AVX2 __attribute__((nonnull(5, 6))) static void
mlbc_gemm_f32_pix_avx2(long M, long N, long K, const float *a, const long *apix,
                       const long *offs, const float *b, long bps, const float *c, long csm,
                       long csn, float *y, long ldy)
{
    const long lda = 0, bks = 16, hs = 8;
    const int padded = 1, split = 0;
    MLBC_GEMM_LOOP(6, MLBC_ONE_ROW_AVX2, MLBC_TWO_ROWS_AVX2, MLBC_ROWS_AVX2, 4, 2, 1)
}
#endif

/* Y[M][N] = A B (+ C) as mlbc_gemm_f32, a[m][k] = a[apix[m] + offs[k]], B packed. */
static void mlbc_gemm_f32_pix(long M, long N, long K, const float *a, const long *apix,
                              const long *offs, const float *b, long bps, const float *c,
                              long csm, long csn, float *y, long ldy)
{
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        mlbc_gemm_f32_pix_avx512(M, N, K, a, apix, offs, b, bps, c, csm, csn, y, ldy);
        return;
    }
    if (isa == 1) {
        mlbc_gemm_f32_pix_avx2(M, N, K, a, apix, offs, b, bps, c, csm, csn, y, ldy);
        return;
    }
#endif
#if MLBC_NEON
    mlbc_gemm_f32_neon(M, N, K, a, 0, apix, b, bps, 8, 16, offs, 1, c, csm, csn, y, ldy);
#else
    mlbc_gemm_f32_c(M, N, K, a, 0, apix, b, bps, 8, 16, offs, c, csm, csn, y, ldy);
#endif
}
