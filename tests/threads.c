/* threads.c - generated code and the release runner under ThreadSanitizer: THREADS threads,
 * each with its own context of the same model (or its own release runner over it), run it
 * RUNS times on inputs that change with every run; each thread's hash of all its results must
 * equal the hash of one thread running alone first. Built by tests/test_threads.py with
 * -fsanitize=thread, -include MODEL.h and -DMODEL_DESC=<name>_desc.
 *
 * usage: threads ctx|runner THREADS RUNS    exit status 0: all hashes equal, 1 otherwise */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc_runtime.h"

extern const mlbc_model_desc MODEL_DESC;

static long runs;
static int use_runner;

/* Argument values of run k: small numbers of the argument's type (indices stay in range for
 * the example models: 0 or 1). */
static void fill(void *p, const mlbc_tensor_desc *t, long k)
{
    for (int64_t i = 0; i < t->count; i++) {
        long v = (k * 31 + i * 7) % 17 - 8;
        switch (t->dtype) {
        case 1: ((float *)p)[i] = (float)v / 8; break;
        case 11: ((double *)p)[i] = (double)v / 8; break;
        case 6: ((int32_t *)p)[i] = (int32_t)((k + i) & 1); break;
        case 7: ((int64_t *)p)[i] = (k + i) & 1; break;
        case 9: ((unsigned char *)p)[i] = (unsigned char)((k + i) & 1); break;
        default: memset(p, 0, (size_t)t->bytes); return;
        }
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t with_context(void)
{
    const mlbc_model_desc *d = &MODEL_DESC;
    void *ctx = malloc(d->ctx_size);
    uint64_t h = 0xcbf29ce484222325ULL;
    if (!ctx)
        return 0;
    d->init(ctx);
    for (long k = 0; k < runs; k++) {
        for (int i = 0; i < d->num_args; i++)
            fill(d->arg_data(ctx, i), &d->args[i], k);
        int status = d->run(ctx);
        h = fnv(h, &status, sizeof status);
        for (int i = 0; i < d->num_results; i++)
            h = fnv(h, d->result_data(ctx, i), (size_t)d->results[i].bytes);
    }
    free(ctx);
    return h;
}

static mlbc_tensor_spec spec_of(const mlbc_tensor_desc *t)
{
    return mlbc_spec(t->name, t->dtype, t->rank, t->shape);
}

static uint64_t with_runner(void)
{
    const mlbc_model_desc *d = &MODEL_DESC;
    mlbc_tensor_spec features[64], advice = spec_of(&d->results[0]);
    char err[256];
    int n = d->num_args < 64 ? d->num_args : 64;
    for (int i = 0; i < n; i++)
        features[i] = spec_of(&d->args[i]);
    mlbc_runner *r = mlbc_runner_release(d, features, n, &advice, NULL, err, sizeof err);
    uint64_t h = 0xcbf29ce484222325ULL;
    if (!r) {
        fprintf(stderr, "release runner: %s\n", err);
        return 0;
    }
    for (long k = 0; k < runs; k++) {
        for (int i = 0; i < n; i++)
            fill(mlbc_runner_input(r, i), &d->args[i], k);
        const void *a = mlbc_runner_evaluate(r);
        h = a ? fnv(h, a, mlbc_spec_bytes(&advice)) : fnv(h, "fail", 4);
    }
    mlbc_runner_free(r);
    return h;
}

static void *worker(void *out)
{
    *(uint64_t *)out = use_runner ? with_runner() : with_context();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "ctx") && strcmp(argv[1], "runner"))) {
        fprintf(stderr, "usage: threads ctx|runner THREADS RUNS\n");
        return 2;
    }
    use_runner = !strcmp(argv[1], "runner");
    int nthreads = atoi(argv[2]);
    runs = atol(argv[3]);
    if (nthreads < 1 || nthreads > 64 || runs < 1)
        return 2;
    uint64_t alone = use_runner ? with_runner() : with_context(), got[64];
    pthread_t t[64];
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, &got[i]))
            return 2;
    int same = 1;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        same &= got[i] == alone && alone != 0;
    }
    printf("%s: %d threads x %ld runs: hash %016llx alone, %s\n", argv[1], nthreads, runs,
           (unsigned long long)alone, same ? "the same in every thread" : "DIFFERENT");
    return same ? 0 : 1;
}
