/* model.c - a compiled model's descriptor on its own: loaded from a shared object, and
 * checked against the features and the advice it is meant to serve. The shared-object runner
 * and the tools (mlbc-serve, mlbc-replay) use both. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* "dir/policy.so" -> "policy", as mlbc names a model by default: the base name up to its
 * first '.', other characters than [A-Za-z0-9] made '_', "m_" before a leading digit. The
 * ONNX runner names what it compiles this way too, so both ends agree. */
char *model_name_from_path(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t n = strcspn(base, ".");
    char *s = malloc(strlen(base) + sizeof "m__desc"), *p = s;
    if (!s)
        return NULL;
    if (!n)
        n = strlen(base);
    if (!n || (base[0] >= '0' && base[0] <= '9'))
        p += sprintf(p, "m_");
    for (size_t i = 0; i < n; i++) {
        char c = base[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        *p++ = alnum ? c : '_';
    }
    *p = 0;
    return s;
}

/* "dir/policy.so" -> "policy_desc" (model_name_from_path leaves room for the suffix). */
static char *derive_symbol(const char *path)
{
    char *s = model_name_from_path(path);
    if (s)
        strcat(s, "_desc");
    return s;
}

/* Loads path, or load when given (what dlopen opens, path being what the user named). */
static void *open_so(const char *path, const char *load, const char *symbol,
                     const mlbc_model_desc **desc, char *err, size_t errlen)
{
    const char *name = load ? load : path;
    char *file, *derived = NULL;
    void *handle;
    if (!path || !*path) {
        set_err(err, errlen, "no shared object given");
        return NULL;
    }
    /* A name without '/' would be searched on the library path, not in this directory. */
    if (!(file = malloc(strlen(name) + 3))) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    sprintf(file, "%s%s", strchr(name, '/') ? "" : "./", name);
    handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    free(file);
    if (!handle) {
        set_err(err, errlen, "cannot load model%s%s: %s", load ? " " : "", load ? path : "",
                dlerror());
        return NULL;
    }
    if (!symbol && !(symbol = derived = derive_symbol(path))) {
        dlclose(handle);
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    if (!(*desc = dlsym(handle, symbol))) {
        set_err(err, errlen, "%s: no model descriptor '%s' (mlbc -n NAME defines NAME_desc; "
                "give another symbol)", path, symbol);
        free(derived);
        dlclose(handle);
        return NULL;
    }
    free(derived);
    return handle;
}

int is_onnx_path(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return (n > 5 && !strcmp(path + n - 5, ".onnx"))
           || (n > 8 && !strcmp(path + n - 8, ".onnxtxt"));
}

void *model_open(const char *path, const char *symbol, const mlbc_onnx_options *onnx,
                 const mlbc_model_desc **desc, char *err, size_t errlen)
{
    onnx_entry e;
    void *handle;
    if (!path || !*path || !(onnx || is_onnx_path(path)))
        return open_so(path, NULL, symbol, desc, err, errlen);
    if (onnx_entry_find(path, onnx, &e, err, errlen) < 0)
        return NULL;
    /* Loaded as /proc/self/fd/DIR/NAME.KEY.so: the checked folder, which only this user can
     * write, and in it the entry just checked. Not as /proc/self/fd/N of the entry's own
     * descriptor: glibc looks a loaded object up by the name it was opened with first, and a
     * later descriptor N would be another file; a name holding the key names one model. */
    handle = open_so(e.path, e.load, symbol, desc, err, errlen);
    close(e.dir);
    return handle;
}

void *mlbc_model_open(const char *path, const char *symbol, const mlbc_model_desc **desc,
                      char *err, size_t errlen)
{
    return model_open(path, symbol, NULL, desc, err, errlen);
}

void mlbc_model_close(void *handle)
{
    if (handle)
        dlclose(handle);
}

/* ---- checking a model against specs ---------------------------------------------------- */

static const char *type_text(int type)
{
    const char *s = mlbc_type_llvm_name(type);
    if (s)
        return s;
    return type == MLBC_BOOL ? "bool" : type == 10 ? "float16" : type == 16 ? "bfloat16" : "?";
}

/* "int64_t[1,33]" */
static const char *shape_text(char *buf, size_t n, int type, int rank, const int64_t *shape)
{
    size_t k = (size_t)snprintf(buf, n, "%s[", type_text(type));
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

/* name is prefix + feature, or feature itself (LLVM's feed_/fetch_ convention) */
static int names(const char *name, const char *prefix, const char *feature)
{
    size_t p = prefix ? strlen(prefix) : 0;
    if (p && strncmp(name, prefix, p) == 0 && strcmp(name + p, feature) == 0)
        return 1;
    return strcmp(name, feature) == 0;
}

static int check_inputs(const mlbc_model_desc *d, const mlbc_tensor_spec *f, int n,
                        const mlbc_release_options *o, char *err, size_t errlen)
{
    char a[160], b[160];
    for (int j = 0; j < d->num_args; j++) {
        const mlbc_tensor_desc *arg = &d->args[j];
        if (o && o->model_selector && names(arg->name, o->feed_prefix, "model_selector"))
            continue;
        int hit = -1;
        for (int i = 0; i < n && hit < 0; i++)
            if (names(arg->name, o ? o->feed_prefix : NULL, f[i].name))
                hit = i;
        shape_text(a, sizeof a, arg->dtype, arg->rank, arg->shape);
        if (hit < 0) {
            set_err(err, errlen, "model input '%s' (%s) is not among the %d features "
                    "(first: '%s')", arg->name, a, n, n ? f[0].name : "");
            return -1;
        }
        if (arg->dtype != f[hit].type || arg->count != mlbc_spec_count(&f[hit])) {
            set_err(err, errlen, "model input '%s' is %s but the feature '%s' is %s",
                    arg->name, a, f[hit].name,
                    shape_text(b, sizeof b, f[hit].type, f[hit].rank, f[hit].shape));
            return -1;
        }
    }
    return 0;
}

static int check_advice(const mlbc_model_desc *d, const mlbc_tensor_spec *adv,
                        const mlbc_release_options *o, char *err, size_t errlen)
{
    char a[160], b[160];
    const mlbc_tensor_desc *r = NULL;
    for (int j = 0; j < d->num_results && !r; j++)
        if (names(d->results[j].name, o ? o->fetch_prefix : NULL, adv->name))
            r = &d->results[j];
    shape_text(b, sizeof b, adv->type, adv->rank, adv->shape);
    if (!r) {
        set_err(err, errlen, "the model has no output '%s' (the advice, %s); its first output "
                "is '%s'", adv->name, b, d->num_results ? d->results[0].name : "");
        return -1;
    }
    if (r->dtype != adv->type || r->count != mlbc_spec_count(adv)) {
        set_err(err, errlen, "model output '%s' is %s but the advice is %s", r->name,
                shape_text(a, sizeof a, r->dtype, r->rank, r->shape), b);
        return -1;
    }
    return 0;
}

int mlbc_model_check(const mlbc_model_desc *model, const mlbc_tensor_spec *features, int n,
                     const mlbc_tensor_spec *advice, const mlbc_release_options *opt,
                     char *err, size_t errlen)
{
    if (check_inputs(model, features, n, opt, err, errlen))
        return -1;
    return advice ? check_advice(model, advice, opt, err, errlen) : 0;
}
