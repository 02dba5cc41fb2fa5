/* stream.c - the read floor: one step sums a buffer of BYTES bytes (the only argument) as
 * 64-bit integers, the fastest way to stream it through the core. Built with -O3
 * -march=native -funroll-loops so that the sum is vectorized; linked with harness.c. */
#include <stdlib.h>

#include "bench.h"

static uint64_t *buf;
static size_t words;
volatile uint64_t bench_sink;

void *bench_setup(int argc, char **argv)
{
    if (argc != 1)
        return NULL;
    words = (strtoull(argv[0], NULL, 10) + 7) / 8;
    buf = malloc(words * 8);
    if (!buf)
        return NULL;
    for (size_t i = 0; i < words; i++)
        buf[i] = bench_rand();
    return buf;
}

int bench_step(void *state)
{
    uint64_t s = 0;
    for (size_t i = 0; i < words; i++)
        s += buf[i];
    bench_sink = s;
    return 0;
}
