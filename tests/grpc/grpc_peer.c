/* grpc_peer.c - a compiler stand-in for tests/test_grpc.py: a gRPC runner in either role
 * making N decisions over three features (a: int64[1], b: float[2,3], c: uint8[4]; advice
 * int64[1], or int64 of --advice-shape D,D,...), two per context "fK".
 *
 *   grpc_peer client|server ADDRESS [--n N] [--timeout MS] [--retries N] [--backoff MS]
 *             [--token T | --token-file PATH] [--cert PEM --key PEM] [--ca PEM] [--remote]
 *             [--insecure] [--pause MS] [--advice-shape D,D,...]
 *
 * Prints "port P" (server role, once listening), then per decision "advice K V MS" (V: the
 * advice's first element) or "null K MS ERROR" (MS: how long evaluate took), then "done";
 * --pause: MS between two decisions. Exit status 0 unless the runner could not be made
 * (2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlbc_grpc.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int pause_ms;
static int64_t advice_shape[MLBC_SPEC_MAX_RANK] = {1};
static int advice_rank = 1;

/* "2,3" into advice_shape; 0, or -1 if it is not such a list. */
static int parse_shape(const char *v)
{
    advice_rank = 0;
    for (char *end; *v && advice_rank < MLBC_SPEC_MAX_RANK; v = *end ? end + 1 : end) {
        advice_shape[advice_rank++] = strtoll(v, &end, 10);
        if (end == v || (*end && *end != ','))
            return -1;
    }
    return *v ? -1 : 0;
}

/* Parses the options after ROLE ADDRESS into o; returns the decision count, -1 if bad. */
static int parse(int argc, char **argv, mlbc_grpc_options *o)
{
    int n = 4;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--remote")) {
            o->allow_remote = 1;
            continue;
        }
        if (!strcmp(a, "--insecure")) {
            o->allow_insecure = 1;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (!strcmp(a, "--n")) n = atoi(v);
        else if (!strcmp(a, "--timeout")) o->timeout_ms = atoi(v);
        else if (!strcmp(a, "--retries")) o->retries = atoi(v);
        else if (!strcmp(a, "--backoff")) o->backoff_ms = atoi(v);
        else if (!strcmp(a, "--token")) o->token = v;
        else if (!strcmp(a, "--token-file")) o->token_file = v;
        else if (!strcmp(a, "--advice-shape")) {
            if (parse_shape(v)) return -1;
        }
        else if (!strcmp(a, "--cert")) o->tls_cert = v;
        else if (!strcmp(a, "--key")) o->tls_key = v;
        else if (!strcmp(a, "--ca")) o->tls_ca = v;
        else if (!strcmp(a, "--pause")) pause_ms = atoi(v);
        else return -1;
    }
    return n;
}

static void fill(mlbc_runner *r, int k)
{
    *(int64_t *)mlbc_runner_input(r, 0) = k;
    float *b = mlbc_runner_input(r, 1);
    for (int i = 0; i < 6; i++)
        b[i] = (float)k + 0.5f * (float)i;
    unsigned char *c = mlbc_runner_input(r, 2);
    for (int i = 0; i < 4; i++)
        c[i] = (unsigned char)(i + 1 + (i == 3 ? k : 0));
}

int main(int argc, char **argv)
{
    mlbc_grpc_options o = {0};
    int n = argc >= 3 ? parse(argc, argv, &o) : -1;
    if (n < 0 || (strcmp(argv[1], "client") && strcmp(argv[1], "server"))) {
        fprintf(stderr, "usage: grpc_peer client|server ADDRESS [options]\n");
        return 2;
    }
    o.role = strcmp(argv[1], "server") ? MLBC_GRPC_CLIENT : MLBC_GRPC_SERVER;
    int64_t one[] = {1}, b_shape[] = {2, 3}, c_shape[] = {4};
    mlbc_tensor_spec feats[] = {mlbc_spec("a", MLBC_INT64, 1, one),
                                mlbc_spec("b", MLBC_FLOAT, 2, b_shape),
                                mlbc_spec("c", MLBC_UINT8, 1, c_shape)};
    mlbc_tensor_spec advice = mlbc_spec("advice", MLBC_INT64, advice_rank, advice_shape);
    char err[256];
    mlbc_runner *r = mlbc_runner_grpc(argv[2], feats, 3, &advice, &o, err, sizeof err);
    if (!r) {
        printf("error %s\n", err);
        return 2;
    }
    if (o.role == MLBC_GRPC_SERVER)
        printf("port %d\n", mlbc_runner_grpc_port(r));
    fflush(stdout);
    for (int k = 0; k < n; k++) {
        char ctx[16];
        snprintf(ctx, sizeof ctx, "f%d", k / 2);
        if (k % 2 == 0)
            mlbc_runner_set_context(r, ctx);
        if (k > 0 && pause_ms > 0) {
            struct timespec ts = {pause_ms / 1000, pause_ms % 1000 * 1000000L};
            nanosleep(&ts, NULL);
        }
        fill(r, k);
        double t0 = now_ms();
        const int64_t *a = mlbc_runner_evaluate(r);
        double ms = now_ms() - t0;
        if (a)
            printf("advice %d %lld %.0f\n", k, (long long)*a, ms);
        else
            printf("null %d %.0f %s\n", k, ms, mlbc_runner_error(r));
        fflush(stdout);
    }
    mlbc_runner_free(r);
    printf("done\n");
    return 0;
}
