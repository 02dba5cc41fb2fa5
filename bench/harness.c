/* harness.c - main() of every benchmark program: calibration and batch timing (bench.h). */
#define _POSIX_C_SOURCE 199309L  /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

uint32_t bench_rand(void)
{
    rng_state ^= rng_state << 13;       /* xorshift64 */
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

float bench_randf(void)
{
    return (float)(bench_rand() >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Wall time of ITERS steps in ns, or -1 if a step failed. */
static double batch(void *state, long iters)
{
    double t0 = now_ns();
    for (long i = 0; i < iters; i++)
        if (bench_step(state))
            return -1;
    return now_ns() - t0;
}

static int failed(const char *prog)
{
    fprintf(stderr, "%s: a step failed\n", prog);
    return 3;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ITERS BATCHES [ARGS...]\n", argv[0]);
        return 2;
    }
    long iters = atol(argv[1]), batches = atol(argv[2]);
    void *state = bench_setup(argc - 3, argv + 3);
    if (!state) {
        fprintf(stderr, "%s: bad arguments or out of memory\n", argv[0]);
        return 2;
    }
    if (iters == 0) {
        double t;
        for (iters = 1; (t = batch(state, iters)) >= 0 && t < BENCH_BATCH_NS; iters *= 2)
            ;
        if (t < 0)
            return failed(argv[0]);
        printf("%ld\n", iters);
        return 0;
    }
    if (batch(state, iters) < 0)
        return failed(argv[0]);
    for (long b = 0; b < batches; b++) {
        double t = batch(state, iters);
        if (t < 0)
            return failed(argv[0]);
        printf("%.3f\n", t / iters);
    }
    return 0;
}
