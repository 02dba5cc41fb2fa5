// Square tiles of floats transposed in registers: row k of the tile in r[k] becomes column k
// (r[k][j] = old r[j][k]). Only data moves: the same bits on every path.
#if MLBC_X86
/* 8 x 8: three rounds of shuffles (pairs of floats, pairs of pairs, the 128-bit halves) */
MLBC_TILE MLBC_AVX2 void mlbc_tile8_avx2(__m256 r[8])
{
    __m256 t[8], u[8];
    int k;
    MLBC_UNROLL for (k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    MLBC_UNROLL for (k = 0; k < 8; k += 4) {
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
    }
    MLBC_UNROLL for (k = 0; k < 4; k++) {
        r[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
        r[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    }
}

/* 16 x 16: pairs of floats, pairs of pairs (as doubles), then 128-bit quarters twice: the
 * quarters holding column c of rows 0-3, 4-7, 8-11 and 12-15 gathered into one register */
MLBC_TILE MLBC_AVX512 void mlbc_tile16_avx512(__m512 r[16])
{
    __m512 t[16], u[16];
    int k, c;
    MLBC_UNROLL16 for (k = 0; k < 16; k += 2) {
        t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
    }
    MLBC_UNROLL16 for (k = 0; k < 16; k += 4) {
        __m512d a = _mm512_castps_pd(t[k]), b = _mm512_castps_pd(t[k + 1]),
                c2 = _mm512_castps_pd(t[k + 2]), d = _mm512_castps_pd(t[k + 3]);
        u[k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c2));
        u[k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c2));
        u[k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        u[k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    /* u[4 q + c], quarter L: rows 4q..4q+3 at column 4 L + c */
    MLBC_UNROLL for (c = 0; c < 4; c++) {
        t[c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
        t[4 + c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd);
        t[8 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
        t[12 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);
    }
    MLBC_UNROLL for (c = 0; c < 4; c++) {
        r[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88);
        r[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0xdd);
        r[4 + c] = _mm512_shuffle_f32x4(t[4 + c], t[12 + c], 0x88);
        r[12 + c] = _mm512_shuffle_f32x4(t[4 + c], t[12 + c], 0xdd);
    }
}
#endif
