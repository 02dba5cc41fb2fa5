/* blas_fc.c - the fully-connected layer y = x.W + b through OpenBLAS: y = b, then
 * cblas_sgemv(W^T x) with beta = 1. Sizes from -DFC_N= -DFC_M=; link -lopenblas and harness.c. */
#include <cblas.h>
#include <string.h>

#include "bench.h"

static float x[FC_N], w[FC_N * FC_M], b[FC_M], y[FC_M];

void *bench_setup(int argc, char **argv)
{
    for (int i = 0; i < FC_N; i++)
        x[i] = bench_randf();
    for (int i = 0; i < FC_N * FC_M; i++)
        w[i] = bench_randf();
    for (int j = 0; j < FC_M; j++)
        b[j] = bench_randf();
    return y;
}

int bench_step(void *state)
{
    memcpy(y, b, sizeof y);
    cblas_sgemv(CblasRowMajor, CblasTrans, FC_N, FC_M, 1.0f, w, FC_M, x, 1, 1.0f, y, 1);
    return 0;
}
