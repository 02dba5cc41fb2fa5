/* internal.h - what the runner implementations share; not part of the public API. */
#ifndef MLBC_RT_INTERNAL_H
#define MLBC_RT_INTERNAL_H

#include <sys/types.h>

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
    /* mlbc_runner_evaluate_bridge; NULL: the runner has none */
    const void *(*evaluate_bridge)(mlbc_runner *r, const mlbc_tensor_spec *features,
                                   const void *const *data, int n, int advice_type,
                                   int64_t max_count, int64_t *count);
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
/* A cache entry of the ONNX runner (onnx.c), found or compiled by onnx_entry_find. */
typedef struct onnx_entry {
    char path[MLBC_PATH_MAX];       /* CACHE/NAME.KEY.so, for messages and callers */
    char load[MLBC_PATH_MAX];       /* "/proc/self/fd/DIR/NAME.KEY.so": what dlopen opens */
    int dir;                        /* the cache folder, checked; the caller closes it */
} onnx_entry;
/* mlbc_onnx_compile, the entry to be loaded through the checked folder's descriptor: what
 * was checked is what is loaded, even if the folder's path is renamed meanwhile. Returns as
 * mlbc_onnx_compile; e->dir is open unless it fails. */
int onnx_entry_find(const char *model, const mlbc_onnx_options *opt, onnx_entry *e,
                    char *err, size_t errlen);
/* mlbc_model_open, compiling first when the path is an ONNX model or onnx is given (NULL:
 * the defaults of mlbc_onnx_options). */
void *model_open(const char *path, const char *symbol, const mlbc_onnx_options *onnx,
                 const mlbc_model_desc **desc, char *err, size_t errlen);

/* What a file the runtime reads, loads or writes in a place others may reach must be: its
 * type, this (effective) user's, and without the mode bits `forbidden`. Another user's bytes
 * must never become a model we load (the ONNX cache) or advice we believe (the pipes). */
typedef struct trust_rule {
    const char *prefix;             /* of the message: "pipe: " or "" */
    const char *what;               /* "the FIFO", "the cache folder"... */
    mode_t type;                    /* S_IFIFO, S_IFREG or S_IFDIR */
    mode_t forbidden;               /* S_IWGRP | S_IWOTH: others may not write it */
    const char *fix;                /* what the user can do, said after the reason */
} trust_rule;

/* 0 if descriptor fd (opened from path, with O_NOFOLLOW) passes rule t, checked with fstat
 * on the descriptor: what was checked is what is used, whatever the path names meanwhile.
 * Else -1, err naming the path, the type, owner or mode found, and t->fix. */
int check_ours(int fd, const char *path, const trust_rule *t, char *err, size_t errlen);
/* The refusal of a path that O_NOFOLLOW would not open because it is a symbolic link (open
 * failed with ELOOP, or ENOTDIR with O_DIRECTORY): 1 with err filled, else 0 (errno kept). */
int refuse_link(int dirfd, const char *name, const char *path, const trust_rule *t, char *err,
                size_t errlen);

/* RFC 1321 MD5 of len bytes. */
void md5(const void *data, size_t len, unsigned char digest[16]);

#endif
