// The product of a Conv with a 2x2, stride-2 MaxPool after it (compiler/ops/op_conv.c), two
// output rows at a time: B is read in place through the tap offsets as mlbc_gemm_f32_taps
// reads it, the top row's row k at b + offs[k] and the bottom row's rs floats further. For
// the pooled outputs j < N / 2 of channel m:
//     y[m * ldy + j] = the window top 2j, top 2j + 1, bottom 2j, bottom 2j + 1 over init,
// each product value the chain s + c[m * csm] of mlbc_gemm_f32 (templates/gemm_tile_f32.c),
// the window taken in the order and with the update of templates/pool_rows.c
// (acc = v > acc ? v : acc, maxps(v, acc)). So the same bits as the product then the pool:
// which is what the paths without AVX-512 do, a product per row into yt (rows of N), then
// the row kernel `pool`.
// With AVX-512 the product stays in registers and is pooled there: tiles of 4 channels by 2
// rows of 32 columns (16 outputs) or of 16 (8 outputs), the window's taps being lanes picked
// from two registers (vpermt2ps). That spares the tile's stores and the pool's loads, which
// took 5% of a small CNN's time.
#if MLBC_X86
/* channels m .. m + mr - 1 (mr <= 4), the outputs of np panels a row (np = 2: the top's two
 * panels pair up, and the bottom's; np = 1: the top's and the bottom's pair up); acc[r][p]:
 * the top's panels, then the bottom's. The last panel of a row has cols columns: its loads
 * are masked unless FULL (a constant) says it is whole. A tile of fewer than 4 channels
 * repeats its last row's multiply-adds and does not store them. */
MLBC_TILE MLBC_AVX512 void mlbc_pool_tile_avx512(int np, int full, long K, const float *a,
                                                 long lda, int mr, const float *b, long rs,
                                                 const long *offs, int cols, const float *c,
                                                 long csm, float init, float *y, long ldy)
{
    const __mmask16 last = (__mmask16)((1u << cols) - 1);
    const float *ar[4];
    __m512 acc[4][4];
    long k;
    int r, p;
    MLBC_UNROLL for (r = 0; r < 4; r++) {
        ar[r] = a + (r < mr ? r : mr - 1) * lda;
        MLBC_UNROLL for (p = 0; p < 2 * np; p++)
            acc[r][p] = _mm512_setzero_ps();
    }
    /* the rows' broadcasts first, then each panel loaded and used at once: loaded first and
     * held for the rows (as in mlbc_tile_avx512), gcc -O2 spilled one of the four panels and
     * ran 2.5% slower */
    for (k = 0; k < K; k++) {
        const float *bk = b + offs[k];
        __m512 x[4];
        MLBC_UNROLL for (r = 0; r < 4; r++)
            x[r] = _mm512_set1_ps(ar[r][k]);
        MLBC_UNROLL for (p = 0; p < 2 * np; p++) {
            const float *bp = bk + (p >= np ? rs : 0) + 16 * (p % np);
            const __m512 wp = p % np == np - 1 && !full ? _mm512_maskz_loadu_ps(last, bp)
                                                        : _mm512_loadu_ps(bp);
            MLBC_UNROLL for (r = 0; r < 4; r++)
                acc[r][p] = _mm512_fmadd_ps(x[r], wp, acc[r][p]);
        }
    }
    /* lanes 0, 2, .. 30 of a pair of registers; + 1: the odd ones; + 16 (np = 1): the second
     * register's even ones first */
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4,
                                          2, 0);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512i skip = _mm512_set1_epi32(np == 2 ? 0 : 16);
    const __mmask16 outs = np == 2 ? (__mmask16)((1u << (8 + (cols + 1) / 2)) - 1)
                                   : (__mmask16)((1u << (cols + 1) / 2) - 1);
    MLBC_UNROLL for (r = 0; r < 4; r++) {
        __m512 s[4];
        MLBC_UNROLL for (p = 0; p < 2 * np; p++)
            s[p] = c ? _mm512_add_ps(acc[r][p], _mm512_set1_ps(c[(r < mr ? r : 0) * csm]))
                     : acc[r][p];
        const __m512 bx = np == 2 ? s[2] : s[0], by = np == 2 ? s[3] : s[1];
        __m512 v = _mm512_max_ps(_mm512_permutex2var_ps(s[0], even, s[1]), _mm512_set1_ps(init));
        v = _mm512_max_ps(_mm512_permutex2var_ps(s[0], odd, s[1]), v);
        v = _mm512_max_ps(_mm512_permutex2var_ps(bx, _mm512_add_epi32(even, skip), by), v);
        v = _mm512_max_ps(_mm512_permutex2var_ps(bx, _mm512_add_epi32(odd, skip), by), v);
        if (r < mr)
            _mm512_mask_storeu_ps(y + r * ldy, outs, v);
    }
}

/* N: the top row's columns, two an output: 32 of them (16 outputs) a tile, the last 16 or
 * fewer a tile of one panel a row */
MLBC_PRODUCT MLBC_AVX512 static void mlbc_gemm_f32_taps_pool_avx512(long M, long N, long K,
        const float *a, long lda, const float *b, long rs, const long *offs, const float *c,
        long csm, float init, float *y, long ldy)
{
    long j, m;
    for (j = 0; j < N; j += 32) {
        const int np = N - j > 16 ? 2 : 1;
        const int cols = N - j >= 32 ? 16 : (int)(N - j - 16 * (np - 1));
        for (m = 0; m < M; m += 4) {
            const int mr = M - m < 4 ? (int)(M - m) : 4;
#define MLBC_POOL_TILE(NP, FULL) \
            mlbc_pool_tile_avx512(NP, FULL, K, a + m * lda, lda, mr, b + j, rs, offs, cols, \
                                  c ? c + m * csm : 0, csm, init, y + m * ldy + j / 2, ldy)
            if (np == 2 && cols == 16)
                MLBC_POOL_TILE(2, 1);
            else if (np == 2)
                MLBC_POOL_TILE(2, 0);
            else if (cols == 16)
                MLBC_POOL_TILE(1, 1);
            else
                MLBC_POOL_TILE(1, 0);
#undef MLBC_POOL_TILE
        }
    }
}
#endif

/* y[m][j] (row stride ldy) = the 2x2 pool of rows b and b + rs of the product A B (+ c) over
 * init, as above; c[m] = c[m * csm]; N even; yt: M x 2 rows of N floats. */
static void mlbc_gemm_f32_taps_pool(long M, long N, long K, const float *a, long lda,
                                    const float *b, long rs, const long *offs, const float *c,
                                    long csm, float init, float *y, long ldy, float *yt,
                                    void (*pool)(const float *, long, float *, const float *))
{
#if MLBC_X86
    if (mlbc_isa() == 2) {
        mlbc_gemm_f32_taps_pool_avx512(M, N, K, a, lda, b, rs, offs, c, csm, init, y, ldy);
        return;
    }
#endif
    mlbc_gemm_f32_taps(M, N, K, a, lda, b, 16, 8, offs, c, csm, 0, yt, 2 * N);
    mlbc_gemm_f32_taps(M, N, K, a, lda, b + rs, 16, 8, offs, c, csm, 0, yt + N, 2 * N);
    for (long m = 0; m < M; m++)
        pool(yt + m * 2 * N, 2, y + m * ldy, &init);
}
