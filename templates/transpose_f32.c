// mlbc_transpose_f32: a float matrix transposed, for Transpose and the layout copies that swap
// the unit-stride axis (compiler/ops/op_layout.c). Element by element, a strided load and a
// store each, it took 9% of an attention network at gcc -O2 (three 64 x 128 transposes, 6 us
// for the largest, AMD Zen 5); the AVX2 path moves tiles of up to 8 x 8 through registers.
// Only data moves: every path gives the same bits.
/* y[j * ldy + i] = x[i * ldx + j] for i < R, j < C */
static void mlbc_transpose_f32_c(long R, long C, const float *restrict x, long ldx,
                                 float *restrict y, long ldy)
{
    long i, j;
    for (i = 0; i < R; i++)
        for (j = 0; j < C; j++)
            y[j * ldy + i] = x[i * ldx + j];
}

#if MLBC_X86
/* p[0 .. n) = v's first n lanes (n at most 8): runs of 8, 4, 2 and 1 */
MLBC_TILE MLBC_AVX2 void mlbc_store_lanes_avx2(float *p, __m256 v, long n)
{
    __m128 h = _mm256_castps256_ps128(v);
    if (n == 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    if (n >= 4) {
        _mm_storeu_ps(p, h);
        h = _mm256_extractf128_ps(v, 1);
        p += 4;
        n -= 4;
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)p, h);
        h = _mm_movehl_ps(h, h);
        p += 2;
        n -= 2;
    }
    if (n)
        _mm_store_ss(p, h);
}

/* A tile of NR rows of NC columns (each at most 8) of x into y: the rows loaded (columns past
 * NC masked off, rows past NR zero), transposed in registers (mlbc_tile8_avx2), each of the
 * NC columns stored as NR floats. */
MLBC_TILE MLBC_AVX2 void mlbc_transpose_tile_avx2(long nr, long nc, const float *x, long ldx,
                                                   float *y, long ldy)
{
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)nc),
                                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 r[8];
    long k;
    MLBC_UNROLL for (k = 0; k < 8; k++)
        r[k] = k >= nr   ? _mm256_setzero_ps()
               : nc == 8 ? _mm256_loadu_ps(x + k * ldx)
                         : _mm256_maskload_ps(x + k * ldx, m);
    mlbc_tile8_avx2(r);
    MLBC_UNROLL for (k = 0; k < 8; k++)
        if (k < nc)
            mlbc_store_lanes_avx2(y + k * ldy, r[k], nr);
}

/* The tiles of rows i to i + NR (NR a constant: the tile's loads and stores specialised) */
#define MLBC_TRANSPOSE_ROWS(NR) \
    do { \
        for (j = 0; j + 8 <= C; j += 8) \
            mlbc_transpose_tile_avx2(NR, 8, x + i * ldx + j, ldx, y + j * ldy + i, ldy); \
        if (j < C) \
            mlbc_transpose_tile_avx2(NR, C - j, x + i * ldx + j, ldx, y + j * ldy + i, ldy); \
    } while (0)

/* x [R][C] (rows ldx apart) into y [C][R] (rows ldy apart) in tiles of 8 x 8, those at the
 * edges narrower (a transpose with an axis of 4, a sequence's length, had run element by
 * element: 0.5 ns a float at gcc -O2). */
MLBC_PATH MLBC_AVX2 static void mlbc_transpose_f32_avx2(long R, long C, const float *restrict x,
                                                        long ldx, float *restrict y, long ldy)
{
    long i, j;
    for (i = 0; i < R; i += 8)
        switch (R - i < 8 ? R - i : 8) {
        case 1: MLBC_TRANSPOSE_ROWS(1); break;
        case 2: MLBC_TRANSPOSE_ROWS(2); break;
        case 3: MLBC_TRANSPOSE_ROWS(3); break;
        case 4: MLBC_TRANSPOSE_ROWS(4); break;
        case 5: MLBC_TRANSPOSE_ROWS(5); break;
        case 6: MLBC_TRANSPOSE_ROWS(6); break;
        case 7: MLBC_TRANSPOSE_ROWS(7); break;
        default: MLBC_TRANSPOSE_ROWS(8); break;
        }
}
#endif

static void mlbc_transpose_f32(long R, long C, const float *restrict x, long ldx,
                               float *restrict y, long ldy)
{
#if MLBC_X86
    if (mlbc_isa() >= 1) {
        mlbc_transpose_f32_avx2(R, C, x, ldx, y, ldy);
        return;
    }
#endif
    mlbc_transpose_f32_c(R, C, x, ldx, y, ldy);
}
