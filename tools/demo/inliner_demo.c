/* inliner_demo.c - what a compiler does with an mlbc-compiled inlining policy: fill the
 * features of a call site by name, run, read the decision. Also times the decision. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inliner.h"

static void set_feature(inliner_ctx *ctx, const char *name, int64_t value)
{
    int i = inliner_lookup_arg_index(name);
    if (i < 0) {
        fprintf(stderr, "model has no feature '%s'\n", name);
        exit(1);
    }
    *(int64_t *)inliner_arg_data(ctx, i) = value;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int64_t decide(inliner_ctx *ctx, int64_t callee_blocks, int64_t cost)
{
    set_feature(ctx, "callee_basic_block_count", callee_blocks);
    set_feature(ctx, "callsite_cost", cost);
    set_feature(ctx, "cost_estimate", cost);
    set_feature(ctx, "callee_users", 1);
    if (inliner_run(ctx) != 0) {
        fprintf(stderr, "model run failed\n");
        exit(1);
    }
    return *(int64_t *)inliner_result_data(ctx, inliner_lookup_result_index("inlining_decision"));
}

int main(void)
{
    static inliner_ctx ctx;
    inliner_init(&ctx);
    printf("small callee (2 blocks, cost 5):    inline = %lld\n", (long long)decide(&ctx, 2, 5));
    printf("large callee (120 blocks, cost 900): inline = %lld\n", (long long)decide(&ctx, 120, 900));

    enum { BATCH = 1000, ROUNDS = 31 };
    double t[ROUNDS];
    volatile int64_t sink = 0;
    for (int r = 0; r < ROUNDS + 3; r++) {           /* 3 warm-up rounds */
        double t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            ctx.arg0[0] = i;                            /* vary one feature */
            inliner_run(&ctx);
            sink += ctx.res0[0];
        }
        if (r >= 3)
            t[r - 3] = (now_ns() - t0) / BATCH;
    }
    qsort(t, ROUNDS, sizeof t[0], cmp);
    printf("latency: %.0f ns per decision (median of %d batches of %d)\n", t[ROUNDS / 2], ROUNDS,
           BATCH);
    return 0;
}
