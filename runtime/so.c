/* so.c - the shared-object runner: a model compiled by mlbc and built with
 * `cc -shared -fPIC`, loaded with dlopen and bound like the release runner. */
#include "internal.h"

static void unload(void *handle)
{
    mlbc_model_close(handle);
}

mlbc_runner *mlbc_runner_shared_object(const char *path, const char *symbol,
                                       const mlbc_tensor_spec *features, int nfeatures,
                                       const mlbc_tensor_spec *advice,
                                       const mlbc_release_options *opt, char *err,
                                       size_t errlen)
{
    const mlbc_model_desc *desc;
    void *handle = mlbc_model_open(path, symbol, &desc, err, errlen);
    mlbc_runner *r;
    if (!handle)
        return NULL;
    r = release_runner_new(desc, features, nfeatures, advice, opt, unload, handle, err, errlen);
    if (!r)
        mlbc_model_close(handle);
    return r;
}
