/* naive_fc.c - the fully-connected layer y = x.W + b (x: 1xN, W: NxM row-major, b: M) as
 * anyone would write it in C: the textbook loop nest (one dot product per output; the row
 * loop of a batch of one left out), sizes known at compile time (-DFC_N= -DFC_M=) like in the
 * generated code. Linked with harness.c. */
#include "bench.h"

static float x[FC_N], w[FC_N][FC_M], b[FC_M], y[FC_M];

void *bench_setup(int argc, char **argv)
{
    for (int i = 0; i < FC_N; i++)
        x[i] = bench_randf();
    for (int i = 0; i < FC_N; i++)
        for (int j = 0; j < FC_M; j++)
            w[i][j] = bench_randf();
    for (int j = 0; j < FC_M; j++)
        b[j] = bench_randf();
    return y;
}

int bench_step(void *state)
{
    for (int j = 0; j < FC_M; j++) {
        float s = b[j];
        for (int i = 0; i < FC_N; i++)
            s += x[i] * w[i][j];
        y[j] = s;
    }
    return 0;
}
