// What mlbc_gemm_f32 (templates/gemm_f32.c) and mlbc_gemv_f32 (templates/gemv_f32.c) share:
// the AVX-512 tile of one row by up to 16 panels, and the path without x86 vector code,
// mlbc_gemm_f32_base(). Kept apart so that a model whose products all take mlbc_gemv_f32
// does not compile mlbc_gemm_f32's x86 paths, which mlbc_gemv_f32's fallback never takes.
// They build on the paths of templates/isa.c (mlbc_isa()) and the tiles of
// templates/gemm_tile_f32.c.
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

#endif

/* mlbc_gemm_f32 without the x86 vector paths: NEON on AArch64, C elsewhere. */
static void mlbc_gemm_f32_base(long M, long N, long K, const float *a, long lda,
                               const float *b, long bps, long bks, int padded, const float *c,
                               long csm, long csn, float *y, long ldy)
{
#if MLBC_NEON
    mlbc_gemm_f32_neon(M, N, K, a, lda, 0, b, bps, 8, bks, 0, padded, c, csm, csn, y, ldy);
#else
    (void)padded;
    mlbc_gemm_f32_c(M, N, K, a, lda, 0, b, bps, 8, bks, 0, c, csm, csn, y, ldy);
#endif
}
