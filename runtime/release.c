/* release.c - the release runner: a model compiled by mlbc, bound by name through its
 * descriptor as LLVM's ReleaseModeModelRunner binds a TF-AOT model (feed/fetch prefixes,
 * model selector). evaluate is run() and nothing else: no allocation, no I/O. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct release {
    const mlbc_model_desc *model;
    void *ctx;                  /* the model's context, runner-owned */
    void *advice;               /* the model's result buffer */
    void (*unload)(void *);
    void *handle;
} release;

static const char *const selector_missing =
    "A model selector was specified but the underlying model does not expose a "
    "model_selector input";
static const char *const selector_required =
    "A model selector was not specified but the underlying model requires selecting one "
    "because it exposes a model_selector input";

static const void *release_evaluate(mlbc_runner *r)
{
    release *m = r->impl;
    int status = m->model->run(m->ctx);
    if (status) {
        set_err(r->error, sizeof r->error, "model '%s' failed a run-time check (status %d)",
                m->model->name, status);
        return NULL;
    }
    return m->advice;
}

static void release_destroy(mlbc_runner *r)
{
    release *m = r->impl;
    if (!m)
        return;
    free(m->ctx);
    if (m->unload)
        m->unload(m->handle);
    free(m);
}

static const runner_ops release_ops = {release_evaluate, NULL, release_destroy, NULL};

/* Index of prefix + name among the model's n arguments (results), else of plain name;
 * -1 if absent. *found: the name that matched. */
static int lookup(int (*find)(const char *), int n, const char *prefix, const char *name,
                  char *buf, const char **found)
{
    int i;
    strcpy(buf, prefix);
    strcat(buf, name);
    *found = buf;
    if ((i = find(buf)) < 0 && *prefix) {
        *found = name;
        i = find(name);
    }
    return i < n ? i : -1;
}

static const char *type_name(int type)
{
    const char *s = mlbc_type_llvm_name(type);
    return s ? s : type == MLBC_BOOL ? "bool" : "an unsupported type";
}

/* Element type and count must agree; the shapes may differ ([1,33] binds to [33]). */
static int shape_ok(const mlbc_tensor_desc *d, const mlbc_tensor_spec *s, const char *what,
                    const char *onnx_name, char *err, size_t errlen)
{
    if (d->dtype == s->type && d->count == mlbc_spec_count(s))
        return 1;
    set_err(err, errlen, "%s '%s': the model's '%s' is %s with %lld elements, the spec %s "
            "with %lld", what, s->name, onnx_name, type_name(d->dtype), (long long)d->count,
            type_name(s->type), (long long)mlbc_spec_count(s));
    return 0;
}

/* MD5 of the selector: [0] = bytes 8..15, [1] = bytes 0..7, both little-endian. */
static void select_model(uint64_t *tensor, const char *selector)
{
    unsigned char h[16];
    md5(selector, strlen(selector), h);
    tensor[0] = tensor[1] = 0;
    for (int i = 7; i >= 0; i--) {
        tensor[0] = tensor[0] << 8 | h[8 + i];
        tensor[1] = tensor[1] << 8 | h[i];
    }
}

static int bind_selector(release *m, const char *feed, const char *selector, char *buf,
                         char *err, size_t errlen)
{
    static const mlbc_tensor_spec spec = {"model_selector", MLBC_UINT64, 1, {2}};
    const mlbc_model_desc *d = m->model;
    const char *found;
    int i = lookup(d->lookup_arg_index, d->num_args, feed, spec.name, buf, &found);
    if (i < 0) {
        if (*selector)
            set_err(err, errlen, "%s", selector_missing);
        return *selector ? -1 : 0;
    }
    if (!*selector) {
        set_err(err, errlen, "%s", selector_required);
        return -1;
    }
    if (!shape_ok(&d->args[i], &spec, "model selector", found, err, errlen))
        return -1;
    select_model(d->arg_data(m->ctx, i), selector);
    return 0;
}

/* Binds the selector, the features and the advice; buf holds a prefixed name. */
static int bind(mlbc_runner *r, release *m, const char *feed, const char *fetch,
                const char *selector, char *buf, char *err, size_t errlen)
{
    const mlbc_model_desc *d = m->model;
    const char *found;
    int i;
    if (bind_selector(m, feed, selector, buf, err, errlen))
        return -1;
    for (int f = 0; f < r->ninputs; f++) {
        i = lookup(d->lookup_arg_index, d->num_args, feed, r->specs[f].name, buf, &found);
        if (i < 0)
            continue;   /* the model does not read it: runner_own_unbound gives a buffer */
        if (!shape_ok(&d->args[i], &r->specs[f], "feature", found, err, errlen))
            return -1;
        r->inputs[f] = d->arg_data(m->ctx, i);
        r->bound[f] = 1;
    }
    i = lookup(d->lookup_result_index, d->num_results, fetch, r->advice.name, buf, &found);
    if (i < 0) {
        if (*fetch)
            set_err(err, errlen, "advice '%s': model '%s' has no result '%s%s' or '%s'",
                    r->advice.name, d->name, fetch, r->advice.name, r->advice.name);
        else
            set_err(err, errlen, "advice '%s': model '%s' has no result '%s'", r->advice.name,
                    d->name, r->advice.name);
        return -1;
    }
    if (!shape_ok(&d->results[i], &r->advice, "advice", found, err, errlen))
        return -1;
    m->advice = d->result_data(m->ctx, i);
    return 0;
}

static int desc_ok(const mlbc_model_desc *d, char *err, size_t errlen)
{
    if (d && d->name && d->ctx_size && d->num_args >= 0 && d->num_results > 0 && d->init
        && d->run && d->arg_data && d->result_data && d->lookup_arg_index
        && d->lookup_result_index && (d->args || !d->num_args) && d->results)
        return 1;
    set_err(err, errlen, "not a model descriptor generated by mlbc");
    return 0;
}

mlbc_runner *release_runner_new(const mlbc_model_desc *model,
                                const mlbc_tensor_spec *features, int nfeatures,
                                const mlbc_tensor_spec *advice,
                                const mlbc_release_options *opt, void (*unload)(void *),
                                void *handle, char *err, size_t errlen)
{
    const char *feed = opt && opt->feed_prefix ? opt->feed_prefix : "";
    const char *fetch = opt && opt->fetch_prefix ? opt->fetch_prefix : "";
    const char *selector = opt && opt->model_selector ? opt->model_selector : "";
    size_t longest = strlen(feed) > strlen(fetch) ? strlen(feed) : strlen(fetch);
    mlbc_runner *r;
    release *m;
    char *buf;
    int ok;
    if (!desc_ok(model, err, errlen)
        || !(r = runner_new(&release_ops, features, nfeatures, advice, err, errlen)))
        return NULL;
    m = calloc(1, sizeof *m);
    buf = malloc(longest + MLBC_SPEC_MAX_NAME);
    if (!m || !buf || !(m->ctx = calloc(1, model->ctx_size))) {
        free(m);
        free(buf);
        mlbc_runner_free(r);
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    r->impl = m;
    m->model = model;
    model->init(m->ctx);
    ok = !bind(r, m, feed, fetch, selector, buf, err, errlen);
    free(buf);
    if (ok && runner_own_unbound(r)) {
        set_err(err, errlen, "out of memory");
        ok = 0;
    }
    if (!ok) {
        mlbc_runner_free(r);
        return NULL;
    }
    m->unload = unload;
    m->handle = handle;
    return r;
}

mlbc_runner *mlbc_runner_release(const mlbc_model_desc *model,
                                 const mlbc_tensor_spec *features, int nfeatures,
                                 const mlbc_tensor_spec *advice,
                                 const mlbc_release_options *opt, char *err, size_t errlen)
{
    return release_runner_new(model, features, nfeatures, advice, opt, NULL, NULL, err, errlen);
}
