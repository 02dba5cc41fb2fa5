/* gemm_shapes.c - mlbc's matrix-product kernel alone, at the shapes of the policy networks
 * (models/kinds.py): the products of their layers, B packed at compile time as the generated
 * code packs a weight matrix, A and B warm in cache as in a policy called again and again.
 * One row of A takes mlbc_gemv_f32, as in the generated code.
 * This is the "GEMM-bound layer" of issue 8, apart from the rest of a model (activations,
 * copies) that the model rows include.
 *
 *   gemm_shapes [REPS]   prints "MxKxN GFLOP/s" per shape, the best of REPS runs of ~5 ms
 *
 * Built with plain -O2 like the generated code; the kernel takes its run-time path (AVX-512,
 * AVX2+FMA or C) as in a model. The templates are included as mlbc emits them. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../templates/isa.c"
#include "../templates/intrinsics.c"
#include "../templates/gemm_tile_f32.c"
#include "../templates/gemm_shared_f32.c"
#include "../templates/gemm_f32.c"
#include "../templates/gemv_f32.c"

/* M rows (batch, tokens, time steps), K inputs, N outputs: layers of the kinds' families */
static const long shapes[][3] = {
    {1, 300, 256},   {1, 128, 512},  {1, 256, 1024},  /* batch 1: DQN layer, LSTM steps */
    {16, 300, 256},  {16, 256, 128},                   /* DQN, batch 16 */
    {32, 64, 128},   {32, 128, 96},  {64, 128, 96},   /* MLP batch 32 / 64 */
    {32, 256, 256},  {20, 64, 512},  {8, 300, 64},    /* MLP w256; LSTM input projection; GGNN */
    {16, 64, 256},   {16, 256, 64},  {64, 64, 256},   /* transformer FFN, 16 and 64 tokens */
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double gflops(long M, long K, long N, int reps)
{
    long np = (N + 15) / 16;
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * np * 16 * K);
    float *c = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * M * N);
    if (!a || !b || !c || !y)
        return 0;
    for (long i = 0; i < M * K; i++)
        a[i] = (float)(i % 7) / 8 - 0.3f;
    for (long i = 0; i < np * 16 * K; i++)
        b[i] = (float)(i % 5) / 16 - 0.1f;
    for (long i = 0; i < N; i++)
        c[i] = 0.25f;
    long calls = (long)(5e6 / (M * K * N) * 100) + 1;  /* about 5 ms at 100 GFLOP/s */
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (long i = 0; i < calls; i++) {
            if (M == 1)
                mlbc_gemv_f32(N, K, a, b, c, 1, y);
            else
                mlbc_gemm_f32(M, N, K, a, K, b, 16 * K, 16, 1, c, 0, 1, y, N);
            __asm__ __volatile__("" : : "r"(y) : "memory");
        }
        double t = (now_s() - t0) / calls;
        best = t < best ? t : best;
    }
    free(a), free(b), free(c), free(y);
    return 2.0 * M * K * N / best * 1e-9;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 3;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        printf("%ldx%ldx%ld %.2f\n", shapes[i][0], shapes[i][1], shapes[i][2],
               gflops(shapes[i][0], shapes[i][1], shapes[i][2], reps));
    return 0;
}
