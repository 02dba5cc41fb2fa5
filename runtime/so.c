/* so.c - the shared-object runner: a model compiled by mlbc and built with
 * `cc -shared -fPIC`, loaded with dlopen and bound like the release runner. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void unload(void *handle)
{
    dlclose(handle);
}

/* "dir/policy.so" -> "policy_desc", as mlbc names a model by default: the base name up to
 * its first '.', other characters than [A-Za-z0-9] made '_', "m_" before a leading digit. */
static char *derive_symbol(const char *path)
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
    strcpy(p, "_desc");
    return s;
}

mlbc_runner *mlbc_runner_shared_object(const char *path, const char *symbol,
                                       const mlbc_tensor_spec *features, int nfeatures,
                                       const mlbc_tensor_spec *advice,
                                       const mlbc_release_options *opt, char *err,
                                       size_t errlen)
{
    char *file, *derived = NULL;
    void *handle;
    const mlbc_model_desc *desc;
    mlbc_runner *r;
    if (!path || !*path) {
        set_err(err, errlen, "no shared object given");
        return NULL;
    }
    /* A name without '/' would be searched on the library path, not in this directory. */
    if (!(file = malloc(strlen(path) + 3))) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    sprintf(file, "%s%s", strchr(path, '/') ? "" : "./", path);
    handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    free(file);
    if (!handle) {
        set_err(err, errlen, "cannot load model: %s", dlerror());
        return NULL;
    }
    if (!symbol && !(symbol = derived = derive_symbol(path))) {
        dlclose(handle);
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    if (!(desc = dlsym(handle, symbol))) {
        set_err(err, errlen, "%s: no model descriptor '%s' (mlbc -n NAME defines NAME_desc)",
                path, symbol);
        free(derived);
        dlclose(handle);
        return NULL;
    }
    free(derived);
    r = release_runner_new(desc, features, nfeatures, advice, opt, unload, handle, err, errlen);
    if (!r)
        dlclose(handle);
    return r;
}
