/* so.c - the shared-object runner: a model compiled by mlbc and built with
 * `cc -shared -fPIC`, loaded with dlopen and bound like the release runner; and the ONNX
 * runner, the same over the shared object onnx.c compiles (or finds in its cache). */
#include "internal.h"

static void unload(void *handle)
{
    mlbc_model_close(handle);
}

static mlbc_runner *so_runner(const char *path, const char *symbol,
                              const mlbc_onnx_options *onnx,
                              const mlbc_tensor_spec *features, int nfeatures,
                              const mlbc_tensor_spec *advice, const mlbc_release_options *opt,
                              char *err, size_t errlen)
{
    const mlbc_model_desc *desc;
    void *handle = model_open(path, symbol, onnx, &desc, err, errlen);
    mlbc_runner *r;
    if (!handle)
        return NULL;
    r = release_runner_new(desc, features, nfeatures, advice, opt, unload, handle, err, errlen);
    if (!r)
        mlbc_model_close(handle);
    return r;
}

mlbc_runner *mlbc_runner_shared_object(const char *path, const char *symbol,
                                       const mlbc_tensor_spec *features, int nfeatures,
                                       const mlbc_tensor_spec *advice,
                                       const mlbc_release_options *opt, char *err,
                                       size_t errlen)
{
    return so_runner(path, symbol, NULL, features, nfeatures, advice, opt, err, errlen);
}

mlbc_runner *mlbc_runner_onnx(const char *path, const mlbc_onnx_options *onnx,
                              const mlbc_tensor_spec *features, int nfeatures,
                              const mlbc_tensor_spec *advice, const mlbc_release_options *opt,
                              char *err, size_t errlen)
{
    static const mlbc_onnx_options defaults;
    return so_runner(path, NULL, onnx ? onnx : &defaults, features, nfeatures, advice, opt,
                     err, errlen);
}
