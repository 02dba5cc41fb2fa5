/* desc.c - fuzz target: the checks of a model descriptor against the caller's features and
 * advice (mlbc_model_check, runtime/model.c; desc_ok and binding in mlbc_runner_release,
 * runtime/release.c), as a shared object's descriptor meets them. The input decodes to a
 * descriptor (names, element types, ranks, shapes, counts, which pointers are NULL, what
 * the lookup functions answer), features, advice and prefixes. The descriptor is well
 * formed in memory (a shape array of rank elements, NUL-terminated names, working
 * functions): mlbc generates it; its values are the fuzzer's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc_runtime.h"

typedef struct Reader {
    const uint8_t *p, *end;
} Reader;

static unsigned byte(Reader *r) { return r->p < r->end ? *r->p++ : 0; }

static const char *const names[] = {"f", "g", "feed_f", "advice", "fetch_advice",
                                    "model_selector", "feed_model_selector", "", "x"};
static const char *name(Reader *r) { return names[byte(r) % 9]; }

static int64_t dim(Reader *r)
{
    unsigned b = byte(r);
    return b < 250 ? (int64_t)b % 7 : b == 250 ? -1 : b == 251 ? INT64_MAX : INT64_MIN;
}

/* The descriptor being checked: the lookup functions answer from it. */
static mlbc_model_desc d;
static mlbc_tensor_desc tensors[8];
static int64_t shapes[8][MLBC_SPEC_MAX_RANK];
static int lookup_bias;                 /* nonzero: lookups answer out of range */
static unsigned char scratch[4096];     /* every tensor's bytes (the runner is not evaluated) */

static int find(const mlbc_tensor_desc *t, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, s))
            return i + lookup_bias;
    return -1;
}
static int find_arg(const char *s) { return find(d.args, d.num_args, s); }
static int find_result(const char *s) { return find(d.results, d.num_results, s); }
static void init(void *ctx) {}
static int run(void *ctx) { return 0; }
static void *data(void *ctx, int i) { return scratch; }

static void tensor(Reader *r, mlbc_tensor_desc *t, int64_t *shape)
{
    t->name = name(r);
    t->dtype = (int)byte(r) % 18;
    t->rank = (int)(byte(r) % (MLBC_SPEC_MAX_RANK + 1));
    uint64_t count = 1;                 /* wraps like a lying descriptor's would */
    for (int i = 0; i < t->rank; i++)
        count *= (uint64_t)(shape[i] = dim(r));
    if (byte(r) & 1)
        count = (uint64_t)dim(r);       /* a count that disagrees with the shape */
    t->shape = shape;
    t->count = (int64_t)count;
    t->bytes = (int64_t)(count * 8);
}

static void descriptor(Reader *r)
{
    memset(&d, 0, sizeof d);
    unsigned null = byte(r);            /* bit k: the k-th pointer is NULL */
    d.name = null & 1 ? NULL : "m";
    d.ctx_size = null & 2 ? 0 : 64;
    d.num_args = (int)(byte(r) % 5);
    d.num_results = (int)(byte(r) % 4);
    for (int i = 0; i < d.num_args + d.num_results; i++)
        tensor(r, &tensors[i], shapes[i]);
    d.args = null & 4 ? NULL : tensors;
    d.results = tensors + d.num_args;
    d.init = init;
    d.run = null & 8 ? NULL : run;
    d.arg_data = d.result_data = data;
    d.lookup_arg_index = null & 16 ? NULL : find_arg;
    d.lookup_result_index = find_result;
    lookup_bias = null & 32 ? 7 : 0;
}

static mlbc_tensor_spec spec(Reader *r)
{
    const char *n = name(r);
    int type = (int)byte(r) % 18, rank = (int)(byte(r) % 4);
    int64_t shape[3] = {dim(r), dim(r), dim(r)};
    return mlbc_spec(n, type, rank, shape);
}

int LLVMFuzzerTestOneInput(const uint8_t *data_, size_t size)
{
    Reader r = {data_, data_ + size};
    descriptor(&r);
    mlbc_tensor_spec f[3], advice;
    int nf = (int)(byte(&r) % 4);
    for (int i = 0; i < nf; i++)
        f[i] = spec(&r);
    advice = spec(&r);
    unsigned o = byte(&r);
    mlbc_release_options opt = {o & 1 ? "feed_" : NULL, o & 2 ? "fetch_" : NULL,
                                o & 4 ? "sel" : NULL};
    char err[256];
    if (!(o & 8) && d.args && d.lookup_arg_index)   /* it reads what desc_ok vouches for */
        mlbc_model_check(&d, f, nf, o & 16 ? NULL : &advice, &opt, err, sizeof err);
    mlbc_runner *run_ = mlbc_runner_release(&d, f, nf, &advice, &opt, err, sizeof err);
    if (getenv("MLBC_FUZZ_VERBOSE"))    /* to see how far a reproducer gets */
        fprintf(stderr, "desc: %s\n", run_ ? "bound" : err);
    if (run_)
        mlbc_runner_free(run_);
    return 0;
}
