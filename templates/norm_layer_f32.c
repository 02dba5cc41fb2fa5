// LayerNormalization of float rows, mlbc_layernorm_f32: a transformer's normalisation over
// its n >= 32 features, scale and bias per feature. The arithmetic is that of the loops
// templates/norm.c gets for 8 lanes, so the vector paths give their bits: the 8 lane sums in
// double are one 512-bit register (two 256-bit ones with AVX2), and the last multiply-add is
// in double, its product exact. At gcc -O2 on AMD Zen 5, rows of 64: 2.3x faster than the
// scalar loops, a transformer block over 64 tokens 9% faster; four rows at a time, 1.6x
// faster again on 16 rows of 64 and 2.1x on 64 of 256 (AMD EPYC, AVX-512), where one row
// at a time had been slower than torch's chain of nine ops for LayerNorm below opset 17.
/* A row's statistic from the lane sums of its first k elements (k a multiple of 8, the rest
 * fewer than 8): the rest of the row into lane 0, then lane j adds lane j + w for w = 4, 2, 1.
 * Of x (sq = 0), or of (x - mean)^2, x - mean a float whose square is exact in double
 * (sq = 1). Each path does this in its own registers, inlining the rest (mlbc_ln_rest): no
 * lanes stored and read back by code compiled without the path's instruction set. */
static inline __attribute__((always_inline)) double mlbc_ln_rest(long k, long n, const float *x,
                                                                 float mean, int sq, double l0)
{
    for (; k < n; k++)
        l0 = sq ? mlbc_accf(x[k] - mean, x[k] - mean, l0) : l0 + x[k];
    return l0;
}

static double mlbc_ln_sum_c(long n, const float *x, float mean, int sq)
{
    double acc[8] = {0};
    long k, n8 = n - n % 8;
    int j, w;
    for (k = 0; k < n8; k += 8)
        for (j = 0; j < 8; j++)
            acc[j] = sq ? mlbc_accf(x[k + j] - mean, x[k + j] - mean, acc[j]) : acc[j] + x[k + j];
    acc[0] = mlbc_ln_rest(k, n, x, mean, sq, acc[0]);
    for (w = 4; w > 0; w /= 2)
        for (j = 0; j < w; j++)
            acc[j] += acc[j + w];
    return acc[0];
}

/* y[k] for k from K on: ((x - mean) inv) scale + bias, the multiply-add in double (its product
 * exact, one rounding to double, then to float), or ((x - mean) inv) scale without a bias.
 * Inlined: the vector paths' last elements are computed with their instruction set. */
static inline __attribute__((always_inline)) void mlbc_ln_out_c(long k, long n, const float *x,
                                                                float mean, float inv,
                                                                const float *s, const float *b,
                                                                float *y)
{
    for (; k < n; k++)
        y[k] = b ? mlbc_maddf((x[k] - mean) * inv, s[k], b[k]) : (x[k] - mean) * inv * s[k];
}

/* The float statistics from the sums, rounded as the scalar loops round them. */
static float mlbc_ln_mean(double sum, long n)
{
    return (float)(sum / (float)n);
}

static float mlbc_ln_inv(double sum, long n, float eps)
{
    return 1 / sqrtf(mlbc_ln_mean(sum, n) + eps);
}

#if MLBC_X86
/* The lanes' tree in a 512-bit register: lanes 0-3 add 4-7, then lanes 0-1 add 2-3, then lane 0
 * adds lane 1 (a + b is b + a, bit for bit). */
static inline __attribute__((always_inline)) MLBC_AVX512 double mlbc_ln_sum_avx512(
    __m512d a, long k, long n, const float *x, float mean, int sq)
{
    __m128d l0 = _mm_set_sd(mlbc_ln_rest(k, n, x, mean, sq, _mm512_cvtsd_f64(a)));
    a = _mm512_mask_broadcastsd_pd(a, 1, l0);
    a = _mm512_add_pd(a, _mm512_shuffle_f64x2(a, a, 0x4E));
    a = _mm512_add_pd(a, _mm512_permutex_pd(a, 0x4E));
    a = _mm512_add_pd(a, _mm512_permute_pd(a, 0x55));
    return _mm512_cvtsd_f64(a);
}

/* The same with lanes 0-3 in a0 and 4-7 in a1. */
static inline __attribute__((always_inline)) MLBC_AVX2 double mlbc_ln_sum_avx2(
    __m256d a0, __m256d a1, long k, long n, const float *x, float mean, int sq)
{
    __m128d l0 = _mm_set_sd(mlbc_ln_rest(k, n, x, mean, sq, _mm256_cvtsd_f64(a0)));
    __m128d t;
    a0 = _mm256_add_pd(_mm256_blend_pd(a0, _mm256_castpd128_pd256(l0), 1), a1);
    t = _mm_add_pd(_mm256_castpd256_pd128(a0), _mm256_extractf128_pd(a0, 1));
    return _mm_cvtsd_f64(_mm_add_sd(t, _mm_unpackhi_pd(t, t)));
}

/* R rows (R 4, or 1 for the last ones) at once: each row's arithmetic is the one-row loop's,
 * but the R rows' sums are independent chains that the core runs side by side (the sums are
 * bound by the latency of their adds: one row at a time ran at a third of the speed).
 * Inlined with R a constant, the loops over the rows unrolled: their values in registers. */
static inline __attribute__((always_inline)) MLBC_AVX512 void mlbc_ln_rows_avx512(
    int R, long n, const float *x, const float *s, const float *b, float eps, float *y)
{
    __m512d a[4];
    __m256 m8[4], i8[4];
    float mean[4], inv[4];
    long k = 0;
    int j;
    MLBC_UNROLL
    for (j = 0; j < R; j++)
        a[j] = _mm512_setzero_pd();
    for (k = 0; k + 8 <= n; k += 8)
        MLBC_UNROLL
        for (j = 0; j < R; j++)
            a[j] = _mm512_add_pd(a[j], _mm512_cvtps_pd(_mm256_loadu_ps(x + j * n + k)));
    MLBC_UNROLL
    for (j = 0; j < R; j++) {
        mean[j] = mlbc_ln_mean(mlbc_ln_sum_avx512(a[j], k, n, x + j * n, 0, 0), n);
        m8[j] = _mm256_set1_ps(mean[j]);
        a[j] = _mm512_setzero_pd();
    }
    for (k = 0; k + 8 <= n; k += 8)
        MLBC_UNROLL
        for (j = 0; j < R; j++) {
            __m512d d = _mm512_cvtps_pd(_mm256_sub_ps(_mm256_loadu_ps(x + j * n + k), m8[j]));
            a[j] = _mm512_fmadd_pd(d, d, a[j]);
        }
    MLBC_UNROLL
    for (j = 0; j < R; j++) {
        inv[j] = mlbc_ln_inv(mlbc_ln_sum_avx512(a[j], k, n, x + j * n, mean[j], 1), n, eps);
        i8[j] = _mm256_set1_ps(inv[j]);
    }
    MLBC_UNROLL
    for (j = 0; j < R; j++) {
        const float *xr = x + j * n;
        float *yr = y + j * n;
        for (k = 0; k + 8 <= n; k += 8) {
            __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + k), m8[j]), i8[j]);
            __m256 sk = _mm256_loadu_ps(s + k);
            _mm256_storeu_ps(yr + k, b ? _mm512_cvtpd_ps(_mm512_fmadd_pd(
                                             _mm512_cvtps_pd(t), _mm512_cvtps_pd(sk),
                                             _mm512_cvtps_pd(_mm256_loadu_ps(b + k))))
                                       : _mm256_mul_ps(t, sk));
        }
        mlbc_ln_out_c(k, n, xr, mean[j], inv[j], s, b, yr);
    }
}

MLBC_PATH MLBC_AVX512 static void mlbc_layernorm_f32_avx512(long rows, long n, const float *x,
                                                             const float *s, const float *b,
                                                             float eps, float *y)
{
    long r = 0;
    for (; r + 4 <= rows; r += 4)
        mlbc_ln_rows_avx512(4, n, x + r * n, s, b, eps, y + r * n);
    for (; r < rows; r++)
        mlbc_ln_rows_avx512(1, n, x + r * n, s, b, eps, y + r * n);
}

/* The same with lanes 0-3 and 4-7 of the sums in two registers. */
static inline __attribute__((always_inline)) MLBC_AVX2 void mlbc_ln_rows_avx2(
    int R, long n, const float *x, const float *s, const float *b, float eps, float *y)
{
    __m256d a0[4], a1[4];
    __m128 m4[4], i4[4];
    float mean[4], inv[4];
    long k = 0;
    int j;
    MLBC_UNROLL
    for (j = 0; j < R; j++)
        a0[j] = a1[j] = _mm256_setzero_pd();
    for (k = 0; k + 8 <= n; k += 8)
        MLBC_UNROLL
        for (j = 0; j < R; j++) {
            a0[j] = _mm256_add_pd(a0[j], _mm256_cvtps_pd(_mm_loadu_ps(x + j * n + k)));
            a1[j] = _mm256_add_pd(a1[j], _mm256_cvtps_pd(_mm_loadu_ps(x + j * n + k + 4)));
        }
    MLBC_UNROLL
    for (j = 0; j < R; j++) {
        mean[j] = mlbc_ln_mean(mlbc_ln_sum_avx2(a0[j], a1[j], k, n, x + j * n, 0, 0), n);
        m4[j] = _mm_set1_ps(mean[j]);
        a0[j] = a1[j] = _mm256_setzero_pd();
    }
    for (k = 0; k + 8 <= n; k += 8)
        MLBC_UNROLL
        for (j = 0; j < R; j++) {
            __m256d d0 = _mm256_cvtps_pd(_mm_sub_ps(_mm_loadu_ps(x + j * n + k), m4[j]));
            __m256d d1 = _mm256_cvtps_pd(_mm_sub_ps(_mm_loadu_ps(x + j * n + k + 4), m4[j]));
            a0[j] = _mm256_fmadd_pd(d0, d0, a0[j]);
            a1[j] = _mm256_fmadd_pd(d1, d1, a1[j]);
        }
    MLBC_UNROLL
    for (j = 0; j < R; j++) {
        inv[j] = mlbc_ln_inv(mlbc_ln_sum_avx2(a0[j], a1[j], k, n, x + j * n, mean[j], 1), n,
                             eps);
        i4[j] = _mm_set1_ps(inv[j]);
    }
    MLBC_UNROLL
    for (j = 0; j < R; j++) {
        const float *xr = x + j * n;
        float *yr = y + j * n;
        for (k = 0; k + 4 <= n; k += 4) {
            __m128 t = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(xr + k), m4[j]), i4[j]);
            __m128 sk = _mm_loadu_ps(s + k);
            _mm_storeu_ps(yr + k, b ? _mm256_cvtpd_ps(_mm256_fmadd_pd(
                                          _mm256_cvtps_pd(t), _mm256_cvtps_pd(sk),
                                          _mm256_cvtps_pd(_mm_loadu_ps(b + k))))
                                    : _mm_mul_ps(t, sk));
        }
        mlbc_ln_out_c(k, n, xr, mean[j], inv[j], s, b, yr);
    }
}

MLBC_PATH MLBC_AVX2 static void mlbc_layernorm_f32_avx2(long rows, long n, const float *x,
                                                         const float *s, const float *b,
                                                         float eps, float *y)
{
    long r = 0;
    for (; r + 4 <= rows; r += 4)
        mlbc_ln_rows_avx2(4, n, x + r * n, s, b, eps, y + r * n);
    for (; r < rows; r++)
        mlbc_ln_rows_avx2(1, n, x + r * n, s, b, eps, y + r * n);
}
#endif

/* y = LayerNormalization of ROWS rows of N floats, x and y [rows][n], scale s and bias b (or
 * none) [n], epsilon eps. */
static void mlbc_layernorm_f32(long rows, long n, const float *x, const float *s,
                               const float *b, float eps, float *y)
{
    long r;
#if MLBC_X86
    int isa = mlbc_isa();
    if (isa == 2) {
        mlbc_layernorm_f32_avx512(rows, n, x, s, b, eps, y);
        return;
    }
    if (isa == 1) {
        mlbc_layernorm_f32_avx2(rows, n, x, s, b, eps, y);
        return;
    }
#endif
    for (r = 0; r < rows; r++, x += n, y += n) {
        float mean = mlbc_ln_mean(mlbc_ln_sum_c(n, x, 0, 0), n);
        float inv = mlbc_ln_inv(mlbc_ln_sum_c(n, x, mean, 1), n, eps);
        mlbc_ln_out_c(0, n, x, mean, inv, s, b, y);
    }
}
