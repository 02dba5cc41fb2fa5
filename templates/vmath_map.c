// The array loop of the vectorised float functions (templates vmath_exp, vmath_sigmoid,
// vmath_tanh, vmath_erf): MLBC_VMAP(F) defines F##_f32 from the per-element function F on
// each path, F##_c, F##_avx512 and F##_avx2. Included after `isa` (the loop calls mlbc_isa()).
// A template may define more than one array loop (vmath_sigmoid: sigmoid and SiLU), of which a
// model calls one: MLBC_MAYBE_UNUSED.
/* y[i] = F(x[i]) for i < n, on the CPU's best path: F##_c, F##_avx512 (16 lanes, the tail
 * masked) and F##_avx2 (8 lanes, the tail through a zero-padded copy) are the same function
 * of one element. x and y may be the same array. */
#if MLBC_X86
#define MLBC_VMAP(F) \
    static void F##_f32_c(long n, const float *x, float *y) \
    { \
        long i; \
        for (i = 0; i < n; i++) \
            y[i] = F##_c(x[i]); \
    } \
    MLBC_PATH MLBC_AVX512 static void F##_f32_avx512(long n, const float *x, float *y) \
    { \
        long i; \
        for (i = 0; i + 16 <= n; i += 16) \
            _mm512_storeu_ps(y + i, F##_avx512(_mm512_loadu_ps(x + i))); \
        if (i < n) { \
            __mmask16 m = (__mmask16)((1u << (n - i)) - 1); \
            _mm512_mask_storeu_ps(y + i, m, F##_avx512(_mm512_maskz_loadu_ps(m, x + i))); \
        } \
    } \
    MLBC_PATH MLBC_AVX2 static void F##_f32_avx2(long n, const float *x, float *y) \
    { \
        float b[8] = {0}; \
        long i, j; \
        for (i = 0; i + 8 <= n; i += 8) \
            _mm256_storeu_ps(y + i, F##_avx2(_mm256_loadu_ps(x + i))); \
        if (i < n) { \
            for (j = 0; j < n - i; j++) \
                b[j] = x[i + j]; \
            _mm256_storeu_ps(b, F##_avx2(_mm256_loadu_ps(b))); \
            for (j = 0; j < n - i; j++) \
                y[i + j] = b[j]; \
        } \
    } \
    static MLBC_MAYBE_UNUSED void F##_f32(long n, const float *x, float *y) \
    { \
        int isa = mlbc_isa(); \
        if (isa == 2) \
            F##_f32_avx512(n, x, y); \
        else if (isa == 1) \
            F##_f32_avx2(n, x, y); \
        else \
            F##_f32_c(n, x, y); \
    }
#else
#define MLBC_VMAP(F) \
    static MLBC_MAYBE_UNUSED void F##_f32(long n, const float *x, float *y) \
    { \
        long i; \
        for (i = 0; i < n; i++) \
            y[i] = F##_c(x[i]); \
    }
#endif
