// mlbc_sum_seq_f32(R, K, x, s): s[i] = the sum of row i of x [R][K] in order from 0,
// ((0 + x[i][0]) + x[i][1]) + ...: the order in which a columns reduction (templates/reduce.c)
// sums the transposed rows, into which fuse.c folds a Transpose before a ReduceSum or
// ReduceMean (torch's x.transpose(1, 2).mean(1)): the copy of the tensor is never made.
// Lanes hold rows: tiles of 16 (8) rows by 16 (8) columns transposed in registers
// (tile_transpose.c), their columns added in order; the last rows one by one. Every path adds
// the same floats in the same order: the same bits.
static void mlbc_sum_seq_f32_c(long r0, long R, long K, const float *restrict x,
                               float *restrict s)
{
    long i, k;
    for (i = r0; i < R; i++) {
        float a = 0;
        for (k = 0; k < K; k++)
            a = a + x[i * K + k];
        s[i] = a;
    }
}

#if MLBC_X86
MLBC_PATH MLBC_AVX512 static void mlbc_sum_seq_f32_avx512(long R, long K, const float *restrict x,
                                                         float *restrict s)
{
    long i, k;
    int j;
    for (i = 0; i + 16 <= R; i += 16) {
        __m512 acc = _mm512_setzero_ps(), r[16];
        for (k = 0; k + 16 <= K; k += 16) {
            MLBC_UNROLL16 for (j = 0; j < 16; j++)
                r[j] = _mm512_loadu_ps(x + (i + j) * K + k);
            mlbc_tile16_avx512(r);
            MLBC_UNROLL16 for (j = 0; j < 16; j++)
                acc = _mm512_add_ps(acc, r[j]);
        }
        if (k < K) {
            __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
            MLBC_UNROLL16 for (j = 0; j < 16; j++)
                r[j] = _mm512_maskz_loadu_ps(m, x + (i + j) * K + k);
            mlbc_tile16_avx512(r);
            for (j = 0; j < K - k; j++)
                acc = _mm512_add_ps(acc, r[j]);
        }
        _mm512_storeu_ps(s + i, acc);
    }
    mlbc_sum_seq_f32_c(i, R, K, x, s);
}

MLBC_PATH MLBC_AVX2 static void mlbc_sum_seq_f32_avx2(long R, long K, const float *restrict x,
                                                     float *restrict s)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    long i, k;
    int j;
    for (i = 0; i + 8 <= R; i += 8) {
        __m256 acc = _mm256_setzero_ps(), r[8];
        for (k = 0; k + 8 <= K; k += 8) {
            MLBC_UNROLL for (j = 0; j < 8; j++)
                r[j] = _mm256_loadu_ps(x + (i + j) * K + k);
            mlbc_tile8_avx2(r);
            MLBC_UNROLL for (j = 0; j < 8; j++)
                acc = _mm256_add_ps(acc, r[j]);
        }
        if (k < K) {
            __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(K - k)), iota);
            MLBC_UNROLL for (j = 0; j < 8; j++)
                r[j] = _mm256_maskload_ps(x + (i + j) * K + k, m);
            mlbc_tile8_avx2(r);
            for (j = 0; j < K - k; j++)
                acc = _mm256_add_ps(acc, r[j]);
        }
        _mm256_storeu_ps(s + i, acc);
    }
    mlbc_sum_seq_f32_c(i, R, K, x, s);
}
#endif

static void mlbc_sum_seq_f32(long R, long K, const float *restrict x, float *restrict s)
{
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        mlbc_sum_seq_f32_avx512(R, K, x, s);
        return;
    }
    if (isa == 1) {
        mlbc_sum_seq_f32_avx2(R, K, x, s);
        return;
    }
#endif
    mlbc_sum_seq_f32_c(0, R, K, x, s);
}
