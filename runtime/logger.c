/* logger.c - the training-log writer, byte-compatible with LLVM's TrainingLogger (Logger):
 * a JSON header line, then context records, numbered observations (the raw feature tensors
 * and a newline) and outcomes (the raw reward and a newline). */
#include <stdlib.h>
#include <string.h>

#include "json.h"

typedef struct counter {
    char *context;      /* NULL: free slot */
    int64_t last;       /* number of the context's latest observation */
} counter;

struct mlbc_logger {
    FILE *out;
    int n;
    mlbc_tensor_spec *features;
    mlbc_tensor_spec reward;
    int has_reward;
    char *context;      /* the current context ("" until the first context record) */
    counter *counts;    /* open addressing, as LLVM's StringMap<size_t> keyed by context */
    size_t cap, used;
    jbuf line;
    int failed;         /* a write failed: nothing more is written */
};

static size_t hash(const char *s)
{
    size_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static counter *slot(counter *t, size_t cap, const char *context)
{
    size_t i = hash(context) & (cap - 1);
    while (t[i].context && strcmp(t[i].context, context))
        i = (i + 1) & (cap - 1);
    return &t[i];
}

static int grow(mlbc_logger *lg)
{
    size_t cap = lg->cap ? lg->cap * 2 : 64;
    counter *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < lg->cap; i++)
        if (lg->counts[i].context)
            *slot(t, cap, lg->counts[i].context) = lg->counts[i];
    free(lg->counts);
    lg->counts = t;
    lg->cap = cap;
    return 0;
}

static int write_bytes(mlbc_logger *lg, const void *p, size_t n)
{
    if (!lg->failed && n && fwrite(p, 1, n, lg->out) != n)
        lg->failed = 1;
    return lg->failed ? -1 : 0;
}

/* Writes the JSON record built in lg->line and its newline. */
static int write_line(mlbc_logger *lg)
{
    jb_raw(&lg->line, "\n", 1);
    if (lg->line.failed)
        lg->failed = 1;
    write_bytes(lg, lg->line.data, lg->line.len);
    lg->line.len = 0;
    return lg->failed ? -1 : 0;
}

static int spec_loggable(const mlbc_tensor_spec *s)
{
    return !spec_check(s, NULL, 0) && mlbc_type_llvm_name(s->type);
}

mlbc_logger *mlbc_logger_open(FILE *out, const mlbc_tensor_spec *features, int nfeatures,
                              const mlbc_tensor_spec *reward, const mlbc_tensor_spec *advice)
{
    mlbc_logger *lg;
    if (!out || nfeatures < 0 || (nfeatures && !features) || (reward && !spec_loggable(reward))
        || (advice && !spec_loggable(advice)))
        return NULL;
    for (int i = 0; i < nfeatures; i++)
        if (!spec_loggable(&features[i]))
            return NULL;
    if (!(lg = calloc(1, sizeof *lg)))
        return NULL;
    if (!(lg->context = calloc(1, 1))
        || !(lg->features = calloc((size_t)nfeatures + 1, sizeof *features)) || grow(lg)) {
        mlbc_logger_close(lg);
        return NULL;
    }
    lg->out = out;
    lg->n = nfeatures;
    if (nfeatures)
        memcpy(lg->features, features, (size_t)nfeatures * sizeof *features);
    if ((lg->has_reward = reward != NULL))
        lg->reward = *reward;
    jb_header(&lg->line, features, nfeatures, reward, advice, 0);
    if (write_line(lg)) {
        mlbc_logger_close(lg);
        return NULL;
    }
    return lg;
}

int mlbc_logger_context(mlbc_logger *lg, const char *name)
{
    char *copy;
    if (!lg || lg->failed)
        return -1;
    if (!name)
        name = "";
    if (!(copy = strdup(name))) {
        lg->failed = 1;
        return -1;
    }
    free(lg->context);
    lg->context = copy;
    jb_raw(&lg->line, "{\"context\":", 11);
    jb_str(&lg->line, name);
    jb_raw(&lg->line, "}", 1);
    return write_line(lg);
}

int mlbc_logger_observation(mlbc_logger *lg, const void *const *tensors)
{
    counter *c;
    if (!lg || lg->failed || (lg->n && !tensors))
        return -1;
    for (int i = 0; i < lg->n; i++)
        if (!tensors[i])
            return -1;
    if (2 * (lg->used + 1) > lg->cap && grow(lg)) {
        lg->failed = 1;
        return -1;
    }
    c = slot(lg->counts, lg->cap, lg->context);
    if (!c->context) {
        if (!(c->context = strdup(lg->context))) {
            lg->failed = 1;
            return -1;
        }
        c->last = -1;
        lg->used++;
    }
    jb_record(&lg->line, "observation", ++c->last);
    if (write_line(lg))
        return -1;
    for (int i = 0; i < lg->n; i++)
        write_bytes(lg, tensors[i], mlbc_spec_bytes(&lg->features[i]));
    return write_bytes(lg, "\n", 1);
}

int mlbc_logger_outcome(mlbc_logger *lg, const void *reward)
{
    counter *c;
    if (!lg || lg->failed || !lg->has_reward || !reward)
        return -1;
    if (!(c = slot(lg->counts, lg->cap, lg->context))->context)
        return -1;  /* no observation in this context yet */
    jb_record(&lg->line, "outcome", c->last);
    if (write_line(lg))
        return -1;
    write_bytes(lg, reward, mlbc_spec_bytes(&lg->reward));
    return write_bytes(lg, "\n", 1);
}

int mlbc_logger_close(mlbc_logger *lg)
{
    int rc;
    if (!lg)
        return -1;
    rc = lg->failed || (lg->out && fflush(lg->out)) ? -1 : 0;
    for (size_t i = 0; i < lg->cap; i++)
        free(lg->counts[i].context);
    free(lg->counts);
    free(lg->context);
    free(lg->features);
    jb_free(&lg->line);
    free(lg);
    return rc;
}
