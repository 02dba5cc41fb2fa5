/* bench.h - the timing protocol shared by every benchmark program in bench/.
 *
 * A program defines bench_setup() and bench_step() and links with harness.c, whose main()
 * takes "ITERS BATCHES [ARGS...]":
 *   ITERS = 0   print the smallest power of two of steps that makes one batch last at least
 *               BENCH_BATCH_NS (calibration; doubling up to it is the warm-up);
 *   ITERS > 0   warm up with one batch, then print, for each of BATCHES batches of ITERS
 *               steps, the mean time of one step in nanoseconds, one per line.
 * ARGS go to bench_setup(). Exit status 0, 2 for bad arguments, 3 if a step failed. */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

#define BENCH_BATCH_NS 2e6

void *bench_setup(int argc, char **argv);   /* prepare the inputs; NULL on error */
int bench_step(void *state);                /* one run; non-zero on failure */

/* Deterministic pseudo-random numbers (same sequence in every program and run). */
uint32_t bench_rand(void);
float bench_randf(void);                    /* uniform in [-1, 1) */

#endif
