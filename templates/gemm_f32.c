// Float matrix product with explicit fused multiply-adds, B in panels of 16 columns (packed at
// compile time, or read in place): the entry point mlbc_gemm_f32 and its path drivers. The
// arithmetic, the tiles and the panel layout are in templates/gemm_tile_f32.c
// (mlbc_gemm_f32_c(), pulled in before this), the one-row tile for 9 to 16 panels and the
// path without x86 vector code in templates/gemm_shared_f32.c (mlbc_gemm_f32_base()). B's
// row k is k * bks floats after row 0.
#if MLBC_X86
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

/* The paths' drivers NAME_avx512 and NAME_avx2, functions of their own (ATTR) */
#define MLBC_GEMM_DRIVERS(NAME, ATTR) \
ATTR MLBC_AVX512 static void NAME##_avx512(long M, long N, long K, const float *a, long lda, \
        const float *b, long bps, long bks, int padded, const float *c, long csm, long csn, \
        float *y, long ldy) \
{ \
    const long *offs = 0, *apix = 0, hs = 8; /* no table: row offsets fold to k * bks */ \
    const int split = 0; \
    MLBC_GEMM_LOOP(8, MLBC_ONE_ROW16_AVX512, MLBC_TWO_ROWS_AVX512, MLBC_ROWS_AVX512, 16, 4, 2) \
} \
ATTR MLBC_AVX2 static void NAME##_avx2(long M, long N, long K, const float *a, long lda, \
        const float *b, long bps, long bks, int padded, const float *c, long csm, long csn, \
        float *y, long ldy) \
{ \
    const long *offs = 0, *apix = 0, hs = 8; \
    const int split = 0; \
    MLBC_GEMM_LOOP(6, MLBC_ONE_ROW_AVX2, MLBC_TWO_ROWS_AVX2, MLBC_ROWS_AVX2, 4, 2, 1) \
}
/* gcc's noipa keeps the sizes generic (specialised, an LSTM step's 16 x 256 x 256 ran 1.15x
 * slower); the small products' copy takes them (attention's, 1.3x faster at gcc -O2) */
MLBC_GEMM_DRIVERS(mlbc_gemm_f32, MLBC_PATH)
MLBC_GEMM_DRIVERS(mlbc_gemm_f32_small, MLBC_PRODUCT MLBC_MAYBE_UNUSED)
#define MLBC_GEMM_X86(NAME) \
    int isa = mlbc_isa(); \
    if (isa == 2) { \
        NAME##_avx512(M, N, K, a, lda, b, bps, bks, padded, c, csm, csn, y, ldy); \
        return; \
    } \
    if (isa == 1) { \
        NAME##_avx2(M, N, K, a, lda, b, bps, bks, padded, c, csm, csn, y, ldy); \
        return; \
    }
#else
#define MLBC_GEMM_X86(NAME)
#endif

/* Y[M][N] = A B (+ C): a[m][k] = a[m * lda + k], B in panels (see mlbc_gemm_f32_c), c[m][n] =
 * c[m * csm + n * csn] or no c; y[m][n] = y[m * ldy + n]. */
MLBC_MAYBE_UNUSED static void mlbc_gemm_f32(long M, long N, long K, const float *a, long lda,
                                            const float *b, long bps, long bks, int padded,
                                            const float *c, long csm, long csn, float *y,
                                            long ldy)
{
    MLBC_GEMM_X86(mlbc_gemm_f32)
    mlbc_gemm_f32_base(M, N, K, a, lda, b, bps, bks, padded, c, csm, csn, y, ldy);
}

/* The same for a product of at most MLBC_GEMM_SMALL multiply-adds (compiler/config.h). A
 * file may call either alone. */
MLBC_MAYBE_UNUSED static void mlbc_gemm_f32_small(long M, long N, long K, const float *a,
                                                  long lda, const float *b, long bps, long bks,
                                                  int padded, const float *c, long csm,
                                                  long csn, float *y, long ldy)
{
    MLBC_GEMM_X86(mlbc_gemm_f32_small)
    mlbc_gemm_f32_base(M, N, K, a, lda, b, bps, bks, padded, c, csm, csn, y, ldy);
}
