// Float matrix product with explicit fused multiply-adds: the same bits on every path.
//   y[m][n] = s (+ c[m][n]),  s = 0, then s = fmaf(a[m][k], b[k][n], s) for k = 0 .. K-1:
// one chain per output, one rounding per step. The vector paths only choose which outputs
// are computed together (register tiles of rows by 16-column panels), never an output's own
// chain, so AVX-512, AVX2 and portable C agree bit for bit; an x86 CPU without FMA takes the
// C path, where fmaf is libm's, correctly rounded. Contraction cannot change anything: every
// product is already fused, the bias is one addition.
//
// B is read in panels of 16 columns: b[k][n] = b[(n / 16) * bps + row(k) + n % 16], with
// row(k) = k * bks, or offs[k] when there is a table of row offsets. A panel's columns 8 to
// 15 are hs floats after its column 0: hs = 8 but in the taps of output rows of 8 pixels,
// where a panel is two rows (templates/gemm_taps_f32.c; split, a constant of the AVX-512
// driver, says so). A constant B is packed so at compile time (bps = 16 K, bks = 16, the last
// panel zero-padded: padded = 1); a B computed at run time is read in place (bps = 16, bks =
// its row stride, padded = 0: the last panel's loads are masked). The table serves a
// convolution of unit stride along its last axis (templates/gemm_taps_f32.c): the tap k of 16
// consecutive output pixels is 16 consecutive floats of its input, offs[k] after the first
// tap's. Or the table serves A (templates/gemm_pix_f32.c): with apix, a table of row offsets,
// a[m][k] = a[apix[m] + offs[k]] (the taps of output pixel m, a row of A), and B's row k is
// k * bks.
//
// This template holds what the entry points share: the C path and the register tiles, which
// take the table as an argument, and the loop over tiles (MLBC_GEMM_LOOP), expanded by each
// path driver of each entry point. The tiles are always inlined: where a driver passes no
// table (a null constant), or one declared not null, the choice of row(k) folds away and the
// k loop has no branch (for mlbc_gemm_f32, the same code as without a table). They build on
// the paths of templates/isa.c (mlbc_isa()).

/* The offset of B's row k (MLBC_ROW(k) in the paths): the table's entry, or k * bks; and of
 * A's element (r, k) of the rows from am on, through the tables or with row stride lda. */
#define MLBC_ROW(k) (offs && !apix ? offs[k] : (k) * bks)
#define MLBC_AEL(r, k) (apix ? apix[am + (r)] + offs[k] : (r) * lda + (k))

static void mlbc_gemm_f32_c(long M, long N, long K, const float *a, long lda, const long *apix,
                            const float *b, long bps, long hs, long bks, const long *offs,
                            const float *c, long csm, long csn, float *y, long ldy)
{
    const long am = 0;
    long m, p, k, l;
    for (p = 0; p * 16 < N; p++) {
        const float *bp = b + p * bps;
        long w = N - p * 16 < 16 ? N - p * 16 : 16;
        for (m = 0; m < M; m++) {
            float s[16] = {0};
            for (k = 0; k < K; k++) {
                const float *bk = bp + MLBC_ROW(k);
                for (l = 0; l < w; l++)
                    s[l] = fmaf(a[MLBC_AEL(m, k)], bk[l / 8 * hs + l % 8], s[l]);
            }
            for (l = 0; l < w; l++)
                y[m * ldy + p * 16 + l] = c ? s[l] + c[m * csm + (p * 16 + l) * csn] : s[l];
        }
    }
}

#if MLBC_X86
/* A tile of MR rows by NP panels (16 columns each) of b, accumulated in registers. The
 * tile's last panel has `cols` columns (1..16): its stores, its bias loads and, when B is not
 * padded, its loads are masked. FULL, a constant, says that all loads are whole panels (B
 * padded or the last panel full): a masked load, even by all ones, made the 8-row tiles 5%
 * slower. */
MLBC_TILE MLBC_AVX512 void mlbc_tile_avx512(int mr, int np, int full, long K, const float *a,
                                            long lda, const long *apix, long am,
                                            const float *b, long bps, long hs, int split,
                                            long bks, const long *offs, int padded, int cols,
                                            const float *c, long csm, long csn, float *y,
                                            long ldy)
{
    /* the last panel's loads are masked always, by all ones when B is padded: no branch in
     * the loop (gcc -O3 would unswitch one, and run out of registers); a split panel is two
     * masked loads, columns 0-7 and 8-15 */
    __mmask16 last = (__mmask16)((1u << cols) - 1), lastload = padded ? 0xFFFF : last;
    __m512 acc[8][8], w[8];
    long k;
    int r, p;
    MLBC_UNROLL for (r = 0; r < mr; r++)
        MLBC_UNROLL for (p = 0; p < np; p++)
            acc[r][p] = _mm512_setzero_ps();
    for (k = 0; k < K; k++) {
        MLBC_UNROLL for (p = 0; p < np; p++) {
            const float *bk = b + p * bps + MLBC_ROW(k);
            __mmask16 mk = p == np - 1 ? lastload : (__mmask16)0xFFFF;
            if (split)
                w[p] = _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(mk & 0xFF, bk), mk & 0xFF00,
                                            bk + hs - 8);
            else
                w[p] = p == np - 1 && !full ? _mm512_maskz_loadu_ps(mk, bk) : _mm512_loadu_ps(bk);
        }
        /* each loaded panel held in a register for all rows: tuned for AMD Zen (as by
         * -march=native there), gcc folds the load into every row's multiply-add instead, and
         * with the row pointers then spilled a 4-row tile ran 1.5x slower */
        MLBC_UNROLL for (p = 0; p < np; p++)
            __asm__("" : "+v"(w[p]));
        MLBC_UNROLL for (r = 0; r < mr; r++) {
            __m512 x = _mm512_set1_ps(a[MLBC_AEL(r, k)]);
            MLBC_UNROLL for (p = 0; p < np; p++)
                acc[r][p] = _mm512_fmadd_ps(x, w[p], acc[r][p]);
        }
    }
    MLBC_UNROLL for (r = 0; r < mr; r++)
        MLBC_UNROLL for (p = 0; p < np; p++) {
            __mmask16 mk = p == np - 1 ? last : (__mmask16)0xFFFF;
            __m512 s = acc[r][p];
            if (c)
                s = _mm512_add_ps(s, csn ? _mm512_maskz_loadu_ps(mk, c + r * csm + p * 16)
                                         : _mm512_set1_ps(c[r * csm]));
            _mm512_mask_storeu_ps(y + r * ldy + p * 16, mk, s);
        }
}

/* The same tile with two ymm registers per panel; masked loads and stores only where the
 * last panel is partial (AVX2's masked stores are slow). */
MLBC_TILE MLBC_AVX2 void mlbc_tile_avx2(int mr, int np, int full, long K, const float *a,
                                        long lda, const long *apix, long am,
                                        const float *b, long bps, long hs, int split, long bks,
                                        const long *offs, int padded, int cols, const float *c,
                                        long csm, long csn, float *y, long ldy)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), iota);
    const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8), iota);
    __m256 acc[6][8], w[8];
    long k;
    int r, p, h;
    (void)split; /* the halves are loaded apart anyway */
    MLBC_UNROLL for (r = 0; r < mr; r++)
        MLBC_UNROLL for (p = 0; p < 2 * np; p++)
            acc[r][p] = _mm256_setzero_ps();
    for (k = 0; k < K; k++) {
        MLBC_UNROLL for (p = 0; p < np; p++) {
            const float *bk = b + p * bps + MLBC_ROW(k);
            if (p == np - 1 && !full && !padded && cols < 16) {
                w[2 * p] = _mm256_maskload_ps(bk, m0);
                w[2 * p + 1] = _mm256_maskload_ps(bk + hs, m1);
            } else {
                w[2 * p] = _mm256_loadu_ps(bk);
                w[2 * p + 1] = _mm256_loadu_ps(bk + hs);
            }
        }
        /* each loaded panel held in a register for all rows, as in the AVX-512 tile (gcc
         * -march=native tuned for Zen folds the loads into every row's multiply-add) */
        MLBC_UNROLL for (p = 0; p < 2 * np; p++)
            __asm__("" : "+x"(w[p]));
        MLBC_UNROLL for (r = 0; r < mr; r++) {
            __m256 x = _mm256_broadcast_ss(a + MLBC_AEL(r, k));
            MLBC_UNROLL for (p = 0; p < 2 * np; p++)
                acc[r][p] = _mm256_fmadd_ps(x, w[p], acc[r][p]);
        }
    }
    MLBC_UNROLL for (r = 0; r < mr; r++)
        MLBC_UNROLL for (p = 0; p < np; p++)
            MLBC_UNROLL for (h = 0; h < 2; h++) {
                int part = p == np - 1 && cols < 16;
                __m256i mk = h ? m1 : m0;
                float *yp = y + r * ldy + p * 16 + 8 * h;
                __m256 s = acc[r][2 * p + h];
                if (c && csn)
                    s = _mm256_add_ps(s, part ? _mm256_maskload_ps(c + r * csm + p * 16 + 8 * h, mk)
                                              : _mm256_loadu_ps(c + r * csm + p * 16 + 8 * h));
                else if (c)
                    s = _mm256_add_ps(s, _mm256_set1_ps(c[r * csm]));
                if (part)
                    _mm256_maskstore_ps(yp, mk, s);
                else
                    _mm256_storeu_ps(yp, s);
            }
}

/* The tile call for rows [m, m + MR) and panels [p, p + NP), in a driver whose arguments are
 * those of mlbc_gemm_f32 and offs; FULL as in the tiles. */
#define MLBC_TILE_ARGS(MR, NP, FULL) MR, NP, FULL, K, a + m * lda, lda, apix, m, \
                               b + p * bps, bps, hs, \
                               split, bks, offs, pad, cols, \
                               c ? c + m * csm + p * 16 * csn : 0, csm, csn, y + m * ldy + p * 16, ldy
#define MLBC_BY_ROWS6(F, NP, FULL) switch (rows) { /* 3 to 6 */ \
    case 3: F(MLBC_TILE_ARGS(3, NP, FULL)); break; \
    case 4: F(MLBC_TILE_ARGS(4, NP, FULL)); break; \
    case 5: F(MLBC_TILE_ARGS(5, NP, FULL)); break; \
    default: F(MLBC_TILE_ARGS(6, NP, FULL)); break; }
#define MLBC_BY_ROWS8(F, NP, FULL) switch (rows) { /* 3 to 8 */ \
    case 3: case 4: case 5: case 6: MLBC_BY_ROWS6(F, NP, FULL) break; \
    case 7: F(MLBC_TILE_ARGS(7, NP, FULL)); break; \
    default: F(MLBC_TILE_ARGS(8, NP, FULL)); break; }
#define MLBC_BY_PANELS4(F, MR) switch (q) { \
    case 1: F(MLBC_TILE_ARGS(MR, 1, 0)); break; \
    case 2: F(MLBC_TILE_ARGS(MR, 2, 0)); break; \
    case 3: F(MLBC_TILE_ARGS(MR, 3, 0)); break; \
    default: F(MLBC_TILE_ARGS(MR, 4, 0)); break; }
#define MLBC_BY_PANELS8(F) switch (q) { \
    case 1: case 2: case 3: case 4: MLBC_BY_PANELS4(F, 1) break; \
    case 5: F(MLBC_TILE_ARGS(1, 5, 0)); break; \
    case 6: F(MLBC_TILE_ARGS(1, 6, 0)); break; \
    case 7: F(MLBC_TILE_ARGS(1, 7, 0)); break; \
    default: F(MLBC_TILE_ARGS(1, 8, 0)); break; }

/* Tiles of up to MAXR rows (8 with AVX-512's 32 registers, 6 with AVX2's 16), as even as can
 * be: with 6, M = 8 is 4 + 4, not 6 + 2, whose 2-row tile would have too few independent
 * chains to hide the FMA latency. Panels in blocks of WIDE for a
 * single row, MID for two rows, NARROW for more (tiles of several rows share each loaded
 * panel); the block loop is outermost so that a block of B stays in cache while all rows
 * pass. ONE_ROW, TWO_ROWS and ROWS are the tile calls for the three cases. */
#define MLBC_GEMM_LOOP(MAXR, ONE_ROW, TWO_ROWS, ROWS, WIDE, MID, NARROW) \
    long nt = (M + MAXR - 1) / MAXR, np = (N + 15) / 16, p, m, t; \
    long step = M == 1 ? WIDE : M == 2 ? MID : NARROW; \
    for (p = 0; p < np; p += step) { \
        int q = np - p < step ? (int)(np - p) : (int)step; \
        int cols = p + q == np && N % 16 ? (int)(N % 16) : 16; \
        int pad = padded || cols == 16; \
        for (t = 0, m = 0; t < nt; t++) { \
            int rows = (int)(M / nt + (t < M % nt)); \
            if (M == 1) \
                ONE_ROW \
            else if (M == 2) \
                TWO_ROWS \
            else \
                ROWS \
            m += rows; \
        } \
    }
#define MLBC_ONE_ROW_AVX512 MLBC_BY_PANELS8(mlbc_tile_avx512)
#define MLBC_TWO_ROWS_AVX512 MLBC_BY_PANELS4(mlbc_tile_avx512, 2)
/* tiles of several rows, where most of the work is, have a variant of whole-panel loads */
#define MLBC_ROWS_AVX512 if (pad && q == 2) MLBC_BY_ROWS8(mlbc_tile_avx512, 2, 1) \
                         else if (pad) MLBC_BY_ROWS8(mlbc_tile_avx512, 1, 1) \
                         else if (q == 2) MLBC_BY_ROWS8(mlbc_tile_avx512, 2, 0) \
                         else MLBC_BY_ROWS8(mlbc_tile_avx512, 1, 0)
#define MLBC_ONE_ROW_AVX2 MLBC_BY_PANELS4(mlbc_tile_avx2, 1)
#define MLBC_TWO_ROWS_AVX2 if (q == 2) mlbc_tile_avx2(MLBC_TILE_ARGS(2, 2, 0)); \
                           else mlbc_tile_avx2(MLBC_TILE_ARGS(2, 1, 0));
#define MLBC_ROWS_AVX2 if (pad) MLBC_BY_ROWS6(mlbc_tile_avx2, 1, 1) \
                       else MLBC_BY_ROWS6(mlbc_tile_avx2, 1, 0)

#endif

#if MLBC_NEON
/* MR rows by one full panel, four q registers a row; the bias is added lane by lane. */
static inline __attribute__((always_inline)) void
mlbc_tile_neon(int mr, long K, const float *a, long lda, const long *apix, long am,
               const float *b, long hs, long bks, const long *offs, const float *c, long csm,
               long csn, float *y, long ldy)
{
    float32x4_t acc[6][4], w[4];
    long k;
    int r, h;
    MLBC_UNROLL for (r = 0; r < mr; r++)
        MLBC_UNROLL for (h = 0; h < 4; h++)
            acc[r][h] = vdupq_n_f32(0.0f);
    for (k = 0; k < K; k++) {
        const float *bk = b + MLBC_ROW(k);
        MLBC_UNROLL for (h = 0; h < 4; h++)
            w[h] = vld1q_f32(bk + h / 2 * hs + h % 2 * 4);
        MLBC_UNROLL for (r = 0; r < mr; r++) {
            float32x4_t x = vdupq_n_f32(a[MLBC_AEL(r, k)]);
            MLBC_UNROLL for (h = 0; h < 4; h++)
                acc[r][h] = vfmaq_f32(acc[r][h], x, w[h]);
        }
    }
    MLBC_UNROLL for (r = 0; r < mr; r++)
        MLBC_UNROLL for (h = 0; h < 4; h++) {
            float32x4_t s = acc[r][h];
            if (c)
                s = vaddq_f32(s, csn ? vld1q_f32(c + r * csm + 4 * h) : vdupq_n_f32(c[r * csm]));
            vst1q_f32(y + r * ldy + 4 * h, s);
        }
}

/* Full panels in NEON tiles of up to 6 rows; a last panel that is partial and not padded
 * (its loads would pass the end of B) in C: the same chains either way. Inlined into each
 * entry point, like the x86 tiles. */
static inline __attribute__((always_inline)) void
mlbc_gemm_f32_neon(long M, long N, long K, const float *a, long lda, const long *apix,
                   const float *b, long bps, long hs, long bks, const long *offs, int padded,
                   const float *c, long csm, long csn, float *y, long ldy)
{
    long p, m;
    (void)padded;
    for (p = 0; p * 16 < N; p++) {
        const float *bp = b + p * bps, *cp = c ? c + p * 16 * csn : 0;
        long cols = N - p * 16 < 16 ? N - p * 16 : 16;
        if (cols < 16) {
            /* the partial panel: C, into the right columns of y */
            mlbc_gemm_f32_c(M, cols, K, a, lda, apix, bp, bps, hs, bks, offs, cp, csm, csn,
                            y + p * 16, ldy);
            continue;
        }
        for (m = 0; m < M; m += 6) {
            const float *ar = a + m * lda, *cm = cp ? cp + m * csm : 0;
            float *ym = y + m * ldy + p * 16;
#define MLBC_NEON_TILE(MR) \
    mlbc_tile_neon(MR, K, ar, lda, apix, m, bp, hs, bks, offs, cm, csm, csn, ym, ldy)
            switch (M - m < 6 ? (int)(M - m) : 6) {
            case 1: MLBC_NEON_TILE(1); break;
            case 2: MLBC_NEON_TILE(2); break;
            case 3: MLBC_NEON_TILE(3); break;
            case 4: MLBC_NEON_TILE(4); break;
            case 5: MLBC_NEON_TILE(5); break;
            default: MLBC_NEON_TILE(6); break;
            }
#undef MLBC_NEON_TILE
        }
    }
}
#endif

