/* internal.h - what the runner implementations share; not part of the public API. */
#ifndef MLBC_RT_INTERNAL_H
#define MLBC_RT_INTERNAL_H

#include "mlbc_runtime.h"

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
void runner_fail(mlbc_runner *r, const char *fmt, ...);
void set_err(char *err, size_t errlen, const char *fmt, ...);

#endif
