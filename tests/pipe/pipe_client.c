/* pipe_client - a compiler stand-in for tests/test_pipe.py: drives mlbc_runner_pipe.
 *
 *   pipe_client BASE [--framing llvm|bitstream|json|protobuf] [--timeout MS] [--advice TYPE[xN]]
 *               [--sessions S] [--context NAME] [--big N] [--files] [OP...]
 *   --files: BASE.in/BASE.out may be regular files (MLBC_PIPE_REGULAR_FILES)
 *   OP: ctx=NAME (a context record) | obs=N (N evaluations) | sleep=MS; default: obs=3
 *
 * Features: a int64[1] = k, b float[2,3] = k + 0.5*i, c int32 (rank 0) = -k,
 * d uint8[4] = {10, 10, k & 255, 0} (newline bytes inside the payload), where k counts the
 * evaluations of the session from 0; with --big N also e float[N], e[j] = (131k + j) mod
 * 977 (a payload larger than a pipe's buffer, different in each evaluation).
 *
 * Prints "session S", "advice K V..." per evaluation, and on failure
 * "open-error MS MSG" (exit 2) or "eval-error MS MSG" / "ctx-error MS MSG" followed by
 * "after-failure MS NULL|VALUE" for one more evaluate (exit 3). Exit 0 when all went well.
 * Before exiting it prints "signals ok" if SIGPIPE is neither pending nor blocked and still
 * has its default disposition (the runner must leave no trace of the EPIPEs it met).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlbc_runtime.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int parse_type(const char *s, int *type, int64_t *n)
{
    static const struct { const char *name; int type; } t[] = {
        {"int64", MLBC_INT64}, {"float", MLBC_FLOAT}, {"double", MLBC_DOUBLE},
        {"int32", MLBC_INT32}, {"uint8", MLBC_UINT8}, {"int8", MLBC_INT8},
        {"uint64", MLBC_UINT64}, {"int16", MLBC_INT16}};
    char name[32];
    const char *x = strchr(s, 'x');
    size_t len = x ? (size_t)(x - s) : strlen(s);
    if (len >= sizeof name)
        return -1;
    memcpy(name, s, len);
    name[len] = 0;
    *n = x ? atoll(x + 1) : 1;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].name, name)) {
            *type = t[i].type;
            return *n > 0 ? 0 : -1;
        }
    return -1;
}

static void print_advice(const mlbc_tensor_spec *s, const void *a)
{
    int64_t n = mlbc_spec_count(s);
    for (int64_t i = 0; i < n; i++) {
        switch (s->type) {
        case MLBC_FLOAT: printf(" %.6g", ((const float *)a)[i]); break;
        case MLBC_DOUBLE: printf(" %.9g", ((const double *)a)[i]); break;
        case MLBC_INT32: printf(" %d", ((const int32_t *)a)[i]); break;
        case MLBC_INT16: printf(" %d", ((const int16_t *)a)[i]); break;
        case MLBC_UINT8: printf(" %u", ((const uint8_t *)a)[i]); break;
        case MLBC_INT8: printf(" %d", ((const int8_t *)a)[i]); break;
        case MLBC_UINT64: printf(" %llu", (unsigned long long)((const uint64_t *)a)[i]); break;
        default: printf(" %lld", (long long)((const int64_t *)a)[i]); break;
        }
    }
    printf("\n");
}

static void report_signals(void)
{
    sigset_t pending, mask;
    struct sigaction sa;
    sigpending(&pending);
    sigprocmask(SIG_BLOCK, NULL, &mask);
    sigaction(SIGPIPE, NULL, &sa);
    int ok = !sigismember(&pending, SIGPIPE) && !sigismember(&mask, SIGPIPE) &&
             sa.sa_handler == SIG_DFL;
    printf("signals %s\n", ok ? "ok" : "BAD");
}

static int after_failure(mlbc_runner *r)
{
    double t0 = now_ms();
    const void *a = mlbc_runner_evaluate(r);
    printf("after-failure %.0f %s\n", now_ms() - t0, a ? "VALUE" : "NULL");
    mlbc_runner_free(r);
    report_signals();
    return 3;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pipe_client BASE [options] [ctx=NAME|obs=N]...\n");
        return 64;
    }
    const char *base = argv[1];
    mlbc_pipe_options opt = {MLBC_FRAMING_LLVM, 0, NULL};
    int advice_type = MLBC_INT64, sessions = 1, first_op = argc, nfeatures = 4, files = 0;
    int64_t big = 0;
    int64_t advice_n = 1;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--framing") && i + 1 < argc) {
            const char *f = argv[++i];
            opt.framing = !strcmp(f, "bitstream") ? MLBC_FRAMING_BRIDGE_BITSTREAM
                        : !strcmp(f, "json") ? MLBC_FRAMING_BRIDGE_JSON
                        : !strcmp(f, "protobuf") ? MLBC_FRAMING_BRIDGE_PROTOBUF
                        : !strcmp(f, "llvm") ? MLBC_FRAMING_LLVM : 99;
        } else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            opt.timeout_ms = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--advice") && i + 1 < argc) {
            if (parse_type(argv[++i], &advice_type, &advice_n)) {
                fprintf(stderr, "bad advice type %s\n", argv[i]);
                return 64;
            }
        } else if (!strcmp(argv[i], "--sessions") && i + 1 < argc) {
            sessions = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--big") && i + 1 < argc) {
            big = atoll(argv[++i]);
            nfeatures = big > 0 ? 5 : 4;
        } else if (!strcmp(argv[i], "--context") && i + 1 < argc) {
            opt.context = argv[++i];
        } else if (!strcmp(argv[i], "--files")) {
            files = MLBC_PIPE_REGULAR_FILES;
        } else {
            first_op = i;
            break;
        }
    }
    opt.framing |= files;
    int64_t one[1] = {1}, b_shape[2] = {2, 3}, d_shape[1] = {4}, adv_shape[1] = {advice_n};
    int64_t e_shape[1] = {big};
    mlbc_tensor_spec features[5] = {
        mlbc_spec("a", MLBC_INT64, 1, one),
        mlbc_spec("b", MLBC_FLOAT, 2, b_shape),
        mlbc_spec("c", MLBC_INT32, 0, NULL),
        mlbc_spec("d", MLBC_UINT8, 1, d_shape),
        mlbc_spec("e", MLBC_FLOAT, 1, e_shape),
    };
    mlbc_tensor_spec advice = mlbc_spec("advice", advice_type, 1, adv_shape);
    static char *default_ops[] = {"obs=3"};
    char **ops = first_op < argc ? argv + first_op : default_ops;
    int nops = first_op < argc ? argc - first_op : 1;

    for (int s = 0; s < sessions; s++) {
        char err[512] = "";
        double t0 = now_ms();
        mlbc_runner *r = mlbc_runner_pipe(base, features, nfeatures, &advice, &opt, err, sizeof err);
        if (!r) {
            printf("open-error %.0f %s\n", now_ms() - t0, err);
            report_signals();
            return 2;
        }
        printf("session %d\n", s);
        fflush(stdout);
        int64_t k = 0;
        for (int o = 0; o < nops; o++) {
            if (!strncmp(ops[o], "ctx=", 4)) {
                t0 = now_ms();
                if (mlbc_runner_set_context(r, ops[o] + 4)) {
                    printf("ctx-error %.0f %s\n", now_ms() - t0, mlbc_runner_error(r));
                    return after_failure(r);
                }
                continue;
            }
            if (!strncmp(ops[o], "sleep=", 6)) {
                struct timespec ts = {atoi(ops[o] + 6) / 1000, atoi(ops[o] + 6) % 1000 * 1000000L};
                nanosleep(&ts, NULL);
                continue;
            }
            int n = !strncmp(ops[o], "obs=", 4) ? atoi(ops[o] + 4) : 0;
            for (int i = 0; i < n; i++, k++) {
                *(int64_t *)mlbc_runner_input(r, 0) = k;
                float *b = mlbc_runner_input(r, 1);
                for (int j = 0; j < 6; j++)
                    b[j] = (float)k + 0.5f * (float)j;
                *(int32_t *)mlbc_runner_input(r, 2) = (int32_t)-k;
                uint8_t *d = mlbc_runner_input(r, 3);
                d[0] = 10, d[1] = 10, d[2] = (uint8_t)(k & 255), d[3] = 0;
                float *e = big ? mlbc_runner_input(r, 4) : NULL;
                for (int64_t j = 0; j < big; j++)
                    e[j] = (float)((k * 131 + j) % 977);
                t0 = now_ms();
                const void *a = mlbc_runner_evaluate(r);
                if (!a) {
                    printf("eval-error %.0f %s\n", now_ms() - t0, mlbc_runner_error(r));
                    return after_failure(r);
                }
                printf("advice %lld", (long long)k);
                print_advice(&advice, a);
                fflush(stdout);
            }
        }
        mlbc_runner_free(r);
    }
    report_signals();
    printf("done\n");
    return 0;
}
