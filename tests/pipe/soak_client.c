/* soak_client - the compiler side of tests/pipe/soak.py: one long-lived process that runs
 * pipe-runner sessions in a row, as a compiler embedding the runtime does, so that its RSS
 * and open descriptors can be watched across a thousand of them.
 *
 * Reads one line per session on stdin:   FRAMING BASE EVALUATIONS TIMEOUT_MS
 * and answers with one line on stdout:
 *   ok V...                    every evaluation's advice (feature a is the evaluation's
 *                              number k, the good host answers k + 1)
 *   fail I MS V... | MESSAGE   evaluation I (from 0) returned NULL after MS ms, V... the
 *                              advice before it; then one more evaluate must return NULL at
 *                              once (the runner stays failed), else the line says "stuck"
 *   open-fail MS MESSAGE       mlbc_runner_pipe failed
 * Ends at end of input.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mlbc_runtime.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int framing_of(const char *s)
{
    return !strcmp(s, "bitstream") ? MLBC_FRAMING_BRIDGE_BITSTREAM
         : !strcmp(s, "json") ? MLBC_FRAMING_BRIDGE_JSON
         : !strcmp(s, "protobuf") ? MLBC_FRAMING_BRIDGE_PROTOBUF : MLBC_FRAMING_LLVM;
}

/* Runs one session's evaluations on R, printing its result line. */
static void evaluate_all(mlbc_runner *r, int evaluations)
{
    char values[4096] = "";
    size_t used = 0;
    for (int k = 0; k < evaluations; k++) {
        *(int64_t *)mlbc_runner_input(r, 0) = k;
        float *b = mlbc_runner_input(r, 1);
        for (int j = 0; j < 4; j++)
            b[j] = (float)k + 0.25f * (float)j;
        double t0 = now_ms();
        const int64_t *advice = mlbc_runner_evaluate(r);
        if (!advice) {
            double took = now_ms() - t0;
            t0 = now_ms();
            const void *again = mlbc_runner_evaluate(r);
            int stuck = again || now_ms() - t0 > 50;
            printf("fail %d %.0f%s |%s %s\n", k, took, values, stuck ? " stuck" : "",
                   mlbc_runner_error(r));
            return;
        }
        if (used < sizeof values - 32)
            used += (size_t)snprintf(values + used, sizeof values - used, " %lld",
                                     (long long)*advice);
    }
    printf("ok%s\n", values);
}

int main(void)
{
    int64_t one[1] = {1}, four[1] = {4};
    mlbc_tensor_spec features[2] = {
        mlbc_spec("a", MLBC_INT64, 1, one),
        mlbc_spec("b", MLBC_FLOAT, 1, four),
    };
    mlbc_tensor_spec advice = mlbc_spec("advice", MLBC_INT64, 1, one);
    char framing[32], base[4096];
    int evaluations, timeout_ms;
    while (scanf("%31s %4095s %d %d", framing, base, &evaluations, &timeout_ms) == 4) {
        mlbc_pipe_options opt = {framing_of(framing), timeout_ms, NULL};
        char err[512] = "";
        double t0 = now_ms();
        mlbc_runner *r = mlbc_runner_pipe(base, features, 2, &advice, &opt, err, sizeof err);
        if (!r)
            printf("open-fail %.0f %s\n", now_ms() - t0, err);
        else
            evaluate_all(r, evaluations);
        mlbc_runner_free(r);
        fflush(stdout);
    }
    return 0;
}
