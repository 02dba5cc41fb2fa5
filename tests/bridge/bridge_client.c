/* bridge_client - the ML-Compiler-Bridge's own pipe test (its MLBridgeTest's pipe-bytes and
 * pipe-json), written against mlbc's runner: what a compiler written for the Bridge does
 * with mlbc_runner_evaluate_bridge instead of its PipeModelRunner.
 *
 *   bridge_client BASE bytes|json|llvm [--timeout MS]
 *
 * Ten evaluations, one feature each, named request_LABEL, as the Bridge's test sends them
 * (a char as an int32, a bool as a bool), each reply read as the Bridge's test reads it
 * (bytes: the request's own type, a char as int8; JSON: int64 for integers, double for
 * reals, as the Bridge's JSON SerDes returns them) and checked against the values its
 * Python side answers, within 1e-5. Prints "LABEL reply V..." per evaluation; on a wrong
 * reply "LABEL wrong ..." (exit 1), on a failed evaluation "LABEL error MSG" (exit 3),
 * "open-error MSG" (exit 2). With llvm, it only opens the channel in mlbc's LLVM framing
 * (the FIFO checks of mlbc's own framing): "opened" (exit 0) or "open-error MSG". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc_runtime.h"

typedef struct message {
    const char *label;
    int type;                       /* the request's element type */
    int count;
    double value[3];                /* the request */
    int reply_type[2];              /* the reply's: bytes, JSON */
    int replies;
    double reply[4];                /* what the Bridge's Python side answers */
    int json_replies;               /* where its JSON answer differs (vec_long, long) */
    double json_reply[3];
} message;

static const message messages[] = {
    {"int", MLBC_INT32, 1, {11}, {MLBC_INT32, MLBC_INT64}, 1, {12}, 0, {0}},
    {"long", MLBC_INT64, 1, {1234567890}, {MLBC_INT64, MLBC_INT64}, 1, {1234567891}, 1,
     {12345}},
    {"float", MLBC_FLOAT, 1, {3.14}, {MLBC_FLOAT, MLBC_DOUBLE}, 1, {4.14}, 0, {0}},
    {"double", MLBC_DOUBLE, 1, {0.123456789123456789}, {MLBC_DOUBLE, MLBC_DOUBLE}, 1,
     {1.123456789123456789}, 0, {0}},
    {"char", MLBC_INT32, 1, {'a'}, {MLBC_INT8, MLBC_INT8}, 1, {'b'}, 0, {0}},
    {"bool", MLBC_BOOL, 1, {1}, {MLBC_BOOL, MLBC_BOOL}, 1, {0}, 0, {0}},
    {"vec_int", MLBC_INT32, 3, {11, 22, 33}, {MLBC_INT32, MLBC_INT64}, 3, {12, 23, 34}, 0, {0}},
    {"vec_long", MLBC_INT64, 3, {123456780, 222, 333}, {MLBC_INT64, MLBC_INT64}, 3,
     {123456780, 123456781, 123456782}, 3, {6780, 6781, 6782}},
    {"vec_float", MLBC_FLOAT, 3, {11.1, 22.2, 33.3}, {MLBC_FLOAT, MLBC_DOUBLE}, 4,
     {1.11, 2.22, -3.33, 0}, 0, {0}},
    {"vec_double", MLBC_DOUBLE, 3, {-1.1111111111, -2.2222222222, -3.3333333333},
     {MLBC_DOUBLE, MLBC_DOUBLE}, 2, {1.12345678912345670, -1.12345678912345671}, 0, {0}},
};

/* Element i of the request, stored as its type. */
static void put(unsigned char *d, int type, int i, double v)
{
    switch (type) {
    case MLBC_INT32: ((int32_t *)d)[i] = (int32_t)v; break;
    case MLBC_INT64: ((int64_t *)d)[i] = (int64_t)v; break;
    case MLBC_FLOAT: ((float *)d)[i] = (float)v; break;
    case MLBC_DOUBLE: ((double *)d)[i] = v; break;
    default: d[i] = (unsigned char)v; break;        /* bool */
    }
}

static double get(const void *a, int type, int64_t i)
{
    switch (type) {
    case MLBC_INT8: return ((const int8_t *)a)[i];
    case MLBC_INT32: return ((const int32_t *)a)[i];
    case MLBC_INT64: return (double)((const int64_t *)a)[i];
    case MLBC_FLOAT: return ((const float *)a)[i];
    case MLBC_DOUBLE: return ((const double *)a)[i];
    default: return ((const unsigned char *)a)[i];  /* bool */
    }
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "bytes") && strcmp(argv[2], "json") &&
                     strcmp(argv[2], "llvm"))) {
        fprintf(stderr, "usage: bridge_client BASE bytes|json|llvm [--timeout MS]\n");
        return 2;
    }
    int json = !strcmp(argv[2], "json"), llvm = !strcmp(argv[2], "llvm");
    mlbc_pipe_options o = {llvm ? MLBC_FRAMING_LLVM
                           : json ? MLBC_FRAMING_BRIDGE_JSON : MLBC_FRAMING_BRIDGE_BITSTREAM,
                           argc > 4 && !strcmp(argv[3], "--timeout") ? atoi(argv[4]) : 10000,
                           NULL};
    /* the runner's own advice spec is unused: every evaluation states its own */
    mlbc_tensor_spec unused = mlbc_spec("out", MLBC_INT32, 0, NULL);
    char err[512];
    mlbc_runner *r = mlbc_runner_pipe(argv[1], NULL, 0, &unused, &o, err, sizeof err);
    if (!r) {
        printf("open-error %s\n", err);
        return 2;
    }
    /* bad calls are refused and leave the runner usable: per-call features in mlbc's own
     * framing, a count of at most 0 */
    int64_t none;
    if (mlbc_runner_evaluate_bridge(r, NULL, NULL, 0, MLBC_INT32, llvm ? 1 : 0, &none) ||
        !strstr(mlbc_runner_error(r), llvm ? "need the Bridge's" : "bad evaluation")) {
        printf("misuse not refused: %s\n", mlbc_runner_error(r));
        mlbc_runner_free(r);
        return 4;
    }
    printf("misuse refused\n");
    if (llvm) {
        printf("opened\n");
        mlbc_runner_free(r);
        return 0;
    }
    int rc = 0;
    for (size_t m = 0; m < sizeof messages / sizeof messages[0] && !rc; m++) {
        const message *g = &messages[m];
        char name[64];
        snprintf(name, sizeof name, "request_%s", g->label);
        int64_t shape = g->count;
        /* scalars as the Bridge's test sends them: shape [1] */
        mlbc_tensor_spec f = mlbc_spec(name, g->type, 1, &shape);
        unsigned char data[3 * 8];
        for (int i = 0; i < g->count; i++)
            put(data, g->type, i, g->value[i]);
        const void *in[1] = {data};
        int type = g->reply_type[json];
        int64_t n = 0;
        /* evaluate<T>() for the scalars (one value), evaluate<T *>(out, size) for vectors */
        const void *a = mlbc_runner_evaluate_bridge(r, &f, in, 1, type, g->count == 1 ? 1 : 16,
                                                    &n);
        if (!a) {
            printf("%s error %s\n", g->label, mlbc_runner_error(r));
            rc = 3;
            break;
        }
        const double *want = json && g->json_replies ? g->json_reply : g->reply;
        int64_t wn = json && g->json_replies ? g->json_replies : g->replies;
        printf("%s reply", g->label);
        for (int64_t i = 0; i < n; i++)
            printf(" %.17g", get(a, type, i));
        printf("\n");
        if (n != wn)
            printf("%s wrong: %lld values, not %lld\n", g->label, (long long)n, (long long)wn),
                rc = 1;
        for (int64_t i = 0; i < n && i < wn; i++)
            if (fabs(get(a, type, i) - want[i]) > 1e-5) {
                printf("%s wrong: value %lld is %.17g, not %.17g\n", g->label, (long long)i,
                       get(a, type, i), want[i]);
                rc = 1;
            }
    }
    mlbc_runner_free(r);
    return rc;
}
