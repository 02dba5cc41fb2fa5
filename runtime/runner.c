/* runner.c - the generic part of every runner: specs, stable input buffers, errors, and
 * the dispatch to one implementation (release.c, so.c, pipe.c). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BUFFER_ALIGN 16

void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void runner_fail(mlbc_runner *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    r->failed = 1;
}

mlbc_runner *runner_new(const runner_ops *ops, const mlbc_tensor_spec *features, int n,
                        const mlbc_tensor_spec *advice, char *err, size_t errlen)
{
    mlbc_runner *r;
    if (!advice) {
        set_err(err, errlen, "a runner needs an advice spec");
        return NULL;
    }
    if (n < 0 || (n && !features)) {
        set_err(err, errlen, "bad feature list (%d specs)", n);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (spec_check(&features[i], err, errlen))
            return NULL;
    if (spec_check(advice, err, errlen))
        return NULL;
    r = calloc(1, sizeof *r);
    if (!r || !(r->specs = calloc((size_t)n + 1, sizeof *r->specs))
        || !(r->inputs = calloc((size_t)n + 1, sizeof *r->inputs))
        || !(r->bound = calloc((size_t)n + 1, 1))) {
        mlbc_runner_free(r);
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    if (n)
        memcpy(r->specs, features, (size_t)n * sizeof *features);
    r->ops = ops;
    r->ninputs = n;
    r->advice = *advice;
    return r;
}

static size_t aligned(size_t n)
{
    return (n + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN;
}

int runner_own_unbound(mlbc_runner *r)
{
    size_t total = 0, at = 0;
    for (int i = 0; i < r->ninputs; i++)
        if (!r->inputs[i])
            total += aligned(mlbc_spec_bytes(&r->specs[i]));
    if (!total)
        total = BUFFER_ALIGN;   /* zero-sized tensors still get a distinct, valid pointer */
    if (!(r->owned = calloc(1, total)))
        return -1;
    for (int i = 0; i < r->ninputs; i++)
        if (!r->inputs[i]) {
            r->inputs[i] = r->owned + at;
            at += aligned(mlbc_spec_bytes(&r->specs[i]));
        }
    return 0;
}

void *mlbc_runner_input(mlbc_runner *r, int i)
{
    return r && i >= 0 && i < r->ninputs ? r->inputs[i] : NULL;
}

int mlbc_runner_input_index(const mlbc_runner *r, const char *feature)
{
    for (int i = 0; r && feature && i < r->ninputs; i++)
        if (!strcmp(r->specs[i].name, feature))
            return i;
    return -1;
}

int mlbc_runner_num_inputs(const mlbc_runner *r)
{
    return r ? r->ninputs : 0;
}

const mlbc_tensor_spec *mlbc_runner_input_spec(const mlbc_runner *r, int i)
{
    return r && i >= 0 && i < r->ninputs ? &r->specs[i] : NULL;
}

const mlbc_tensor_spec *mlbc_runner_advice_spec(const mlbc_runner *r)
{
    return r ? &r->advice : NULL;
}

int mlbc_runner_input_bound(const mlbc_runner *r, int i)
{
    return r && i >= 0 && i < r->ninputs ? r->bound[i] : 0;
}

int mlbc_runner_set_context(mlbc_runner *r, const char *name)
{
    if (!r || r->failed)
        return -1;
    return r->ops->set_context ? r->ops->set_context(r, name ? name : "") : 0;
}

const void *mlbc_runner_evaluate(mlbc_runner *r)
{
    if (!r || r->failed)
        return NULL;
    r->error[0] = 0;
    return r->ops->evaluate(r);
}

const void *mlbc_runner_evaluate_bridge(mlbc_runner *r, const mlbc_tensor_spec *features,
                                        const void *const *data, int n, int advice_type,
                                        int64_t max_count, int64_t *count)
{
    if (!r || r->failed)
        return NULL;
    r->error[0] = 0;
    if (!r->ops->evaluate_bridge) {
        set_err(r->error, sizeof r->error, "features per evaluation need a pipe runner in "
                "the Bridge's bitstream or JSON framing");
        return NULL;
    }
    return r->ops->evaluate_bridge(r, features, data, n, advice_type, max_count, count);
}

const char *mlbc_runner_error(const mlbc_runner *r)
{
    return r ? r->error : "no runner";
}

void mlbc_runner_free(mlbc_runner *r)
{
    if (!r)
        return;
    if (r->ops && r->ops->destroy)
        r->ops->destroy(r);
    free(r->owned);
    free(r->bound);
    free(r->inputs);
    free(r->specs);
    free(r);
}
