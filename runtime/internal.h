/* internal.h - what the runner implementations share; not part of the public API. */
#ifndef MLBC_RT_INTERNAL_H
#define MLBC_RT_INTERNAL_H

#include "mlbc_runtime.h"

#ifdef __GNUC__
#define MLBC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MLBC_PRINTF(f, a)
#endif

/* One implementation of the runner interface. */
typedef struct runner_ops {
    const void *(*evaluate)(mlbc_runner *r);
    int (*set_context)(mlbc_runner *r, const char *name);    /* NULL: ignored */
    void (*destroy)(mlbc_runner *r);                          /* frees impl state only */
} runner_ops;

struct mlbc_runner {
    const runner_ops *ops;
    int ninputs;
    mlbc_tensor_spec *specs;        /* ninputs feature specs, copied */
    mlbc_tensor_spec advice;
    void **inputs;                  /* stable buffers: the model's, or owned below */
    unsigned char *owned;           /* one allocation for buffers the runner owns */
    unsigned char *bound;           /* per input: 1 if the model reads it */
    char error[256];
    int failed;                     /* sticky for pipe runners */
    void *impl;
};

/* Allocates the runner and copies the specs; inputs are left NULL for the caller to bind. */
mlbc_runner *runner_new(const runner_ops *ops, const mlbc_tensor_spec *features, int n,
                        const mlbc_tensor_spec *advice, char *err, size_t errlen);
/* Gives every still-unbound input a zeroed buffer owned by the runner. 0 on success. */
int runner_own_unbound(mlbc_runner *r);
/* Records the error and marks the runner failed: from then on evaluate and set_context
 * return at once (NULL / -1) without calling the implementation (sticky; pipe runners).
 * A per-call error (release runners) is written with set_err(r->error, ...) instead; the
 * next evaluate clears it. */
void runner_fail(mlbc_runner *r, const char *fmt, ...) MLBC_PRINTF(2, 3);
/* snprintf into err (when err and errlen are non-zero). */
void set_err(char *err, size_t errlen, const char *fmt, ...) MLBC_PRINTF(3, 4);

/* Largest tensor a spec may describe (runner buffers, log payloads): what the runtime
 * will allocate for a peer's or a file's say-so. Deliberately below the compiler's
 * MLBC_MAX_TENSOR_BYTES (compiler/config.h), which bounds tensors of a model being compiled. */
#define MLBC_RT_MAX_TENSOR_BYTES ((size_t)1 << 28)
/* 0 if the spec is usable: terminated name, known type, rank 0..MAX, dims >= 0 and at
 * most MLBC_RT_MAX_TENSOR_BYTES; otherwise -1 and an error naming the tensor. */
int spec_check(const mlbc_tensor_spec *s, char *err, size_t errlen);

/* The release runner over a model descriptor, also behind the shared-object runner: on
 * success the runner calls unload(handle) when freed (unload may be NULL). */
mlbc_runner *release_runner_new(const mlbc_model_desc *model,
                                const mlbc_tensor_spec *features, int nfeatures,
                                const mlbc_tensor_spec *advice,
                                const mlbc_release_options *opt, void (*unload)(void *),
                                void *handle, char *err, size_t errlen);

/* Longest path the runtime builds (cache entries, temporary files). */
#define MLBC_PATH_MAX 4096

/* mlbc's default model name for a file: "dir/policy.onnx" -> "policy" (malloc'd, with
 * room for 5 more characters); NULL when out of memory. */
char *model_name_from_path(const char *path);
/* 1 if the path names an ONNX model (.onnx, .onnxtxt) rather than a shared object. */
int is_onnx_path(const char *path);
/* mlbc_model_open, compiling first when the path is an ONNX model or onnx is given (NULL:
 * the defaults of mlbc_onnx_options). */
void *model_open(const char *path, const char *symbol, const mlbc_onnx_options *onnx,
                 const mlbc_model_desc **desc, char *err, size_t errlen);

/* RFC 1321 MD5 of len bytes. */
void md5(const void *data, size_t len, unsigned char digest[16]);

#endif
