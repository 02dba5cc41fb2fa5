/* bridge_grpc_server - a compiler in the ML-Compiler-Bridge's gRPC training mode, written
 * against mlbc's runner: mlbc_runner_grpc_bridge in the server role serves an application's
 * method; a trainer (mlbc_gym.drive_bridge, the Bridge's GrpcCompilerInterface in client
 * mode) calls it with advice and gets the next observation.
 *
 *   bridge_grpc_server ADDRESS DESC --feature NAME:TYPE[:COUNT]... --advice NAME:TYPE[:COUNT]
 *       [--method M] [--n N] [--timeout MS] [--token T | --token-file F] [--cert PEM
 *       --key PEM] [--ca PEM] [--max-message BYTES] [--pause MS]
 *
 * TYPE: int32_t, int64_t, float, double or bool for a feature; any of mlbc's for the advice.
 * Feature i's element j at decision k is value(TYPE, k, i, j) below (tests/test_bridge.py
 * computes the same). Prints "port P" once listening, then per decision "advice K MS V..."
 * (integers in decimal, reals in C's %a) or "null K MS ERROR" (MS: how long evaluate took),
 * then "done" once the runner is freed; --pause: MS before each decision after the first.
 * Exit status 0, or 2 ("error MSG") if the runner cannot be made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlbc_grpc.h"

#define MAX_FEATURES 16

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* "NAME:TYPE[:COUNT]" into s (a vector of COUNT, else a scalar); 0, or -1 if malformed. */
static int parse_spec(const char *arg, mlbc_tensor_spec *s)
{
    char buf[200];
    snprintf(buf, sizeof buf, "%s", arg);
    char *type = strchr(buf, ':'), *count;
    if (!type)
        return -1;
    *type++ = 0;
    if ((count = strchr(type, ':')))
        *count++ = 0;
    int t = strcmp(type, "bool") ? mlbc_type_from_llvm_name(type) : MLBC_BOOL;
    int64_t n = count ? atoll(count) : 1;
    if (!t || n < 1)
        return -1;
    *s = mlbc_spec(buf, t, count != NULL, &n);
    return 0;
}

/* Feature i's element j at decision k: exact in every type, large int64s included. */
static double real_value(int k, int i, int j)
{
    return k + 0.1 * (i + 1) + 0.25 * j;
}

static void put_value(void *data, int type, int k, int i, int j)
{
    int64_t v = (int64_t)k * 7 + i * 3 + j;
    switch (type) {
    case MLBC_INT32: ((int32_t *)data)[j] = (int32_t)(-2000000000 + v); break;
    case MLBC_INT64: ((int64_t *)data)[j] = 9007199254740993LL + v; break;
    case MLBC_FLOAT: ((float *)data)[j] = (float)real_value(k, i, j); break;
    case MLBC_DOUBLE: ((double *)data)[j] = real_value(k, i, j); break;
    default: ((unsigned char *)data)[j] = (unsigned char)((k + i + j) % 2); break;  /* bool */
    }
}

static void print_advice(const void *a, const mlbc_tensor_spec *s)
{
    for (int64_t j = 0, n = mlbc_spec_count(s); j < n; j++) {
        switch (s->type) {
        case MLBC_FLOAT: printf(" %a", (double)((const float *)a)[j]); break;
        case MLBC_DOUBLE: printf(" %a", ((const double *)a)[j]); break;
        case MLBC_INT8: printf(" %d", ((const int8_t *)a)[j]); break;
        case MLBC_INT16: printf(" %d", ((const int16_t *)a)[j]); break;
        case MLBC_UINT16: printf(" %u", ((const uint16_t *)a)[j]); break;
        case MLBC_INT32: printf(" %d", ((const int32_t *)a)[j]); break;
        case MLBC_UINT32: printf(" %u", ((const uint32_t *)a)[j]); break;
        case MLBC_INT64: printf(" %lld", (long long)((const int64_t *)a)[j]); break;
        case MLBC_UINT64: printf(" %llu", (unsigned long long)((const uint64_t *)a)[j]); break;
        default: printf(" %u", ((const unsigned char *)a)[j]); break;   /* uint8, bool */
        }
    }
}

typedef struct args {
    mlbc_grpc_options o;
    mlbc_tensor_spec features[MAX_FEATURES], advice;
    int nfeatures, have_advice, n, pause_ms;
    const char *method;
} args;

/* The options after ADDRESS DESC into a; 0, or -1 if bad. */
static int parse(int argc, char **argv, args *a)
{
    a->n = 3;
    for (int i = 3; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--feature")) {
            if (a->nfeatures == MAX_FEATURES || parse_spec(v, &a->features[a->nfeatures++]))
                return -1;
        } else if (!strcmp(k, "--advice")) {
            if (parse_spec(v, &a->advice))
                return -1;
            a->have_advice = 1;
        }
        else if (!strcmp(k, "--method")) a->method = v;
        else if (!strcmp(k, "--n")) a->n = atoi(v);
        else if (!strcmp(k, "--timeout")) a->o.timeout_ms = atoi(v);
        else if (!strcmp(k, "--token")) a->o.token = v;
        else if (!strcmp(k, "--token-file")) a->o.token_file = v;
        else if (!strcmp(k, "--cert")) a->o.tls_cert = v;
        else if (!strcmp(k, "--key")) a->o.tls_key = v;
        else if (!strcmp(k, "--ca")) a->o.tls_ca = v;
        else if (!strcmp(k, "--max-message")) a->o.max_message = atol(v);
        else if (!strcmp(k, "--pause")) a->pause_ms = atoi(v);
        else return -1;
    }
    return argc % 2 == 1 && a->have_advice ? 0 : -1;
}

int main(int argc, char **argv)
{
    static args a;
    if (argc < 3 || parse(argc, argv, &a)) {
        fprintf(stderr, "usage: bridge_grpc_server ADDRESS DESC --feature NAME:TYPE[:COUNT]... "
                "--advice NAME:TYPE[:COUNT] [options]\n");
        return 2;
    }
    a.o.role = MLBC_GRPC_SERVER;
    char err[512];
    mlbc_runner *r = mlbc_runner_grpc_bridge(argv[1], argv[2], a.method, a.features,
                                             a.nfeatures, &a.advice, &a.o, err, sizeof err);
    if (!r) {
        printf("error %s\n", err);
        return 2;
    }
    printf("port %d\n", mlbc_runner_grpc_port(r));
    fflush(stdout);
    for (int k = 0; k < a.n; k++) {
        if (k > 0 && a.pause_ms > 0) {
            struct timespec ts = {a.pause_ms / 1000, a.pause_ms % 1000 * 1000000L};
            nanosleep(&ts, NULL);
        }
        for (int i = 0; i < a.nfeatures; i++)
            for (int64_t j = 0; j < mlbc_spec_count(&a.features[i]); j++)
                put_value(mlbc_runner_input(r, i), a.features[i].type, k, i, (int)j);
        double t0 = now_ms();
        const void *adv = mlbc_runner_evaluate(r);
        double ms = now_ms() - t0;
        if (adv) {
            printf("advice %d %.0f", k, ms);
            print_advice(adv, &a.advice);
            printf("\n");
        } else {
            printf("null %d %.0f %s\n", k, ms, mlbc_runner_error(r));
        }
        fflush(stdout);
    }
    mlbc_runner_free(r);
    printf("done\n");
    return 0;
}
