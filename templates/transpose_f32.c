// mlbc_transpose_f32: a float matrix transposed, for Transpose and the layout copies that swap
// the unit-stride axis (compiler/ops/op_layout.c). Element by element, a strided load and a
// store each, it took 9% of an attention network at gcc -O2 (three 64 x 128 transposes, 6 us
// for the largest, AMD Zen 5); the AVX2 path moves 8 x 8 tiles through registers. Only data
// moves: every path gives the same bits.
/* y[j * ldy + i] = x[i * ldx + j] for i in [r0, r1), j in [c0, c1) */
static void mlbc_transpose_f32_c(long r0, long r1, long c0, long c1, const float *restrict x,
                                 long ldx, float *restrict y, long ldy)
{
    long i, j;
    for (i = r0; i < r1; i++)
        for (j = c0; j < c1; j++)
            y[j * ldy + i] = x[i * ldx + j];
}

#if MLBC_X86
/* x [R][C] (rows ldx apart) into y [C][R] (rows ldy apart): 8 x 8 tiles, each 8 row loads,
 * transposed in registers (mlbc_tile8_avx2) and 8 row stores; the edges element by element. */
MLBC_PATH MLBC_AVX2 static void mlbc_transpose_f32_avx2(long R, long C, const float *restrict x,
                                                        long ldx, float *restrict y, long ldy)
{
    long i, j, k;
    for (i = 0; i + 8 <= R; i += 8)
        for (j = 0; j + 8 <= C; j += 8) {
            __m256 r[8];
            MLBC_UNROLL for (k = 0; k < 8; k++)
                r[k] = _mm256_loadu_ps(x + (i + k) * ldx + j);
            mlbc_tile8_avx2(r);
            MLBC_UNROLL for (k = 0; k < 8; k++)
                _mm256_storeu_ps(y + (j + k) * ldy + i, r[k]);
        }
    mlbc_transpose_f32_c(0, R - R % 8, C - C % 8, C, x, ldx, y, ldy);
    mlbc_transpose_f32_c(R - R % 8, R, 0, C, x, ldx, y, ldy);
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
    mlbc_transpose_f32_c(0, R, 0, C, x, ldx, y, ldy);
}
