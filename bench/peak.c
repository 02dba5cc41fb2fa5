/* peak.c - the single-thread FLOP ceilings of this CPU, one per instruction-set path the
 * generated code can take: SSE2 (separate multiply and add), AVX2 256-bit FMA, AVX-512
 * 512-bit FMA. Each kernel keeps 12 independent dependency chains in registers (enough to
 * cover the latency of two pipes on current x86 cores), so it measures throughput, not
 * latency. Best of REPS runs of about 10 ms each.
 *
 *   peak [REPS]    prints "sse2 G", "avx2_fma G", "avx512_fma G" (GFLOP/s, 1 thread) or
 *                  "NAME -" when the CPU lacks the instructions.
 *
 * Built with plain -O2: the AVX kernels carry their own target attributes and run only
 * when __builtin_cpu_supports says so. The constants come from argv-derived volatile
 * loads so that the compiler cannot fold them (x * 1 is x), and an empty asm statement
 * that "changes" every accumulator keeps it from merging the identical chains. */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAINS 12

static volatile float one = 1.0f, tiny = 1e-30f;
static volatile float sink;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* 6 multiply chains + 6 add chains of 4 lanes: 4 FLOPs per instruction. */
static double sse2(long steps)
{
    __m128 m = _mm_set1_ps(one), c = _mm_set1_ps(tiny);
    __m128 a0 = m, a1 = m, a2 = m, a3 = m, a4 = m, a5 = m;
    __m128 b0 = c, b1 = c, b2 = c, b3 = c, b4 = c, b5 = c;
    for (long i = 0; i < steps; i++) {
        a0 = _mm_mul_ps(a0, m); a1 = _mm_mul_ps(a1, m); a2 = _mm_mul_ps(a2, m);
        a3 = _mm_mul_ps(a3, m); a4 = _mm_mul_ps(a4, m); a5 = _mm_mul_ps(a5, m);
        b0 = _mm_add_ps(b0, c); b1 = _mm_add_ps(b1, c); b2 = _mm_add_ps(b2, c);
        b3 = _mm_add_ps(b3, c); b4 = _mm_add_ps(b4, c); b5 = _mm_add_ps(b5, c);
        __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),
                         "+x"(b0), "+x"(b1), "+x"(b2), "+x"(b3), "+x"(b4), "+x"(b5));
    }
    __m128 s = _mm_add_ps(_mm_add_ps(_mm_add_ps(a0, a1), _mm_add_ps(a2, a3)),
                          _mm_add_ps(_mm_add_ps(a4, a5), _mm_add_ps(b0, b1)));
    s = _mm_add_ps(s, _mm_add_ps(_mm_add_ps(b2, b3), _mm_add_ps(b4, b5)));
    sink = _mm_cvtss_f32(s);
    return (double)steps * CHAINS * 4;
}

#define FMA_KERNEL(NAME, TARGET, VEC, SET1, FMA, ADD, LANES, CONSTRAINT)                   \
    __attribute__((target(TARGET))) static double NAME(long steps)                          \
    {                                                                                       \
        VEC m = SET1(one), c = SET1(tiny);                                                  \
        VEC a0 = c, a1 = c, a2 = c, a3 = c, a4 = c, a5 = c;                                 \
        VEC a6 = c, a7 = c, a8 = c, a9 = c, a10 = c, a11 = c;                               \
        for (long i = 0; i < steps; i++) {                                                  \
            a0 = FMA(a0, m, c); a1 = FMA(a1, m, c); a2 = FMA(a2, m, c);                     \
            a3 = FMA(a3, m, c); a4 = FMA(a4, m, c); a5 = FMA(a5, m, c);                     \
            a6 = FMA(a6, m, c); a7 = FMA(a7, m, c); a8 = FMA(a8, m, c);                     \
            a9 = FMA(a9, m, c); a10 = FMA(a10, m, c); a11 = FMA(a11, m, c);                 \
            __asm__ volatile("" : "+" CONSTRAINT(a0), "+" CONSTRAINT(a1), "+" CONSTRAINT(a2),    \
                             "+" CONSTRAINT(a3), "+" CONSTRAINT(a4), "+" CONSTRAINT(a5),     \
                             "+" CONSTRAINT(a6), "+" CONSTRAINT(a7), "+" CONSTRAINT(a8),     \
                             "+" CONSTRAINT(a9), "+" CONSTRAINT(a10), "+" CONSTRAINT(a11));  \
        }                                                                                   \
        VEC s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));          \
        s = ADD(s, ADD(ADD(a8, a9), ADD(a10, a11)));                                        \
        float out[LANES];                                                                   \
        memcpy(out, &s, sizeof out);                                                        \
        sink = out[0];                                                                      \
        return (double)steps * CHAINS * LANES * 2;                                          \
    }

FMA_KERNEL(avx2_fma, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, 8, "x")
FMA_KERNEL(avx512_fma, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, 16,
           "v")

/* Best GFLOP/s of REPS timed runs of KERNEL (each about 10 ms after a calibration). */
static double best(double (*kernel)(long), int reps)
{
    long steps = 1000;
    double t;
    for (;;) {              /* calibrate: also warms up the vector units (AVX frequency) */
        double t0 = now_s();
        kernel(steps);
        t = now_s() - t0;
        if (t > 0.02)
            break;
        steps *= 2;
    }
    steps = (long)(steps * 0.01 / t) + 1;
    double g = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        double flops = kernel(steps);
        double rate = flops / (now_s() - t0) * 1e-9;
        if (rate > g)
            g = rate;
    }
    return g;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    __builtin_cpu_init();
    printf("sse2 %.2f\n", best(sse2, reps));
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        printf("avx2_fma %.2f\n", best(avx2_fma, reps));
    else
        printf("avx2_fma -\n");
    if (__builtin_cpu_supports("avx512f"))
        printf("avx512_fma %.2f\n", best(avx512_fma, reps));
    else
        printf("avx512_fma -\n");
    return 0;
}
