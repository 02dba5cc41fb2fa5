/* logread.c - reader for LLVM training logs and captured interactive streams: header (with
 * "score" and/or "advice"), adjacent contexts, observations with or without outcomes.
 * Bounded (a record line is at most MAX_LINE bytes, a payload at most
 * MLBC_RT_MAX_TENSOR_BYTES); anything truncated or malformed is an error with its byte
 * offset. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_LINE ((size_t)1 << 20)

struct mlbc_log_reader {
    FILE *in;
    uint64_t offset;            /* bytes consumed so far */
    int n;
    mlbc_tensor_spec *features;
    mlbc_tensor_spec score, advice;
    int has_score, has_advice;
    unsigned char *payload;     /* every feature at an aligned offset, then the score */
    void **tensors;             /* n feature pointers, then the score's */
    char *line;
    size_t linecap;
    char *context;
    int64_t last;               /* latest observation of this context record, -1: none */
    int state;                  /* 0 reading, 1 at the end, -1 failed */
    char error[256];
};

static int fail(mlbc_log_reader *r, uint64_t at, const char *fmt, ...) MLBC_PRINTF(3, 4);

static int fail(mlbc_log_reader *r, uint64_t at, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->error, sizeof r->error, "byte %llu: %s", (unsigned long long)at, msg);
    r->state = -1;
    return -1;
}

/* One record line without its '\n' into r->line. 1: a line, 0: clean end of input. */
static int read_line(mlbc_log_reader *r, size_t *len)
{
    uint64_t start = r->offset;
    int c;
    *len = 0;
    while ((c = getc(r->in)) != '\n') {
        if (c == EOF) {
            if (!*len && !ferror(r->in))
                return 0;
            return fail(r, r->offset, ferror(r->in) ? "read error" : "truncated record");
        }
        if (*len + 1 >= r->linecap) {
            size_t cap = r->linecap ? r->linecap * 2 : 4096;
            char *p;
            if (cap > MAX_LINE + 1)
                return fail(r, start, "record line longer than 1 MiB");
            if (!(p = realloc(r->line, cap)))
                return fail(r, start, "out of memory");
            r->line = p;
            r->linecap = cap;
        }
        r->line[(*len)++] = (char)c;
        r->offset++;
    }
    r->offset++;
    return 1;
}

static int read_tensor(mlbc_log_reader *r, void *dst, const mlbc_tensor_spec *s,
                       const char *what)
{
    size_t n = mlbc_spec_bytes(s), got = fread(dst, 1, n, r->in);
    r->offset += got;
    if (got < n)
        return fail(r, r->offset, "truncated in %s '%.60s' (%zu of %zu bytes)", what, s->name,
                    got, n);
    return 0;
}

static int read_newline(mlbc_log_reader *r, const char *after)
{
    int c = getc(r->in);
    if (c == '\n') {
        r->offset++;
        return 0;
    }
    if (c == EOF)
        return fail(r, r->offset, "truncated: no newline after the %s", after);
    return fail(r, r->offset, "expected a newline after the %s", after);
}

/* A spec of the header (at byte 0) from its JSON form: name, type, port, shape. */
static int parse_spec(mlbc_log_reader *r, const json_doc *d, const json_value *v,
                      mlbc_tensor_spec *s)
{
    const json_value *name = json_member(d, v, "name"), *type = json_member(d, v, "type");
    const json_value *port = json_member(d, v, "port"), *shape = json_member(d, v, "shape");
    char err[200];
    int rank = 0;
    if (!name || name->kind != JSON_STRING || !type || type->kind != JSON_STRING || !port
        || port->kind != JSON_INT || !shape || shape->kind != JSON_ARRAY)
        return fail(r, 0, "a tensor spec needs name, type, port and shape");
    if (strlen(name->s) >= MLBC_SPEC_MAX_NAME)
        return fail(r, 0, "tensor name '%.60s...' too long", name->s);
    memset(s, 0, sizeof *s);
    strcpy(s->name, name->s);
    if (!(s->type = mlbc_type_from_llvm_name(type->s)))
        return fail(r, 0, "unknown tensor type '%.60s'", type->s);
    if (shape->count > MLBC_SPEC_MAX_RANK)
        return fail(r, 0, "tensor '%s' has too many dimensions", s->name);
    for (int c = shape->first; c >= 0; c = d->v[c].next) {
        if (d->v[c].kind != JSON_INT)
            return fail(r, 0, "tensor '%s': a dimension is not an integer", s->name);
        s->shape[rank++] = d->v[c].i;
    }
    s->rank = rank;
    if (spec_check(s, err, sizeof err))
        return fail(r, 0, "%s", err);
    return 0;
}

/* A feature's room in the payload buffer: its bytes, rounded up to keep every slot aligned. */
static size_t slot_size(const mlbc_tensor_spec *s)
{
    return (mlbc_spec_bytes(s) + 15) & ~(size_t)15;
}

static int parse_header(mlbc_log_reader *r, const json_doc *d, size_t *total)
{
    const json_value *root = &d->v[0], *f = json_member(d, root, "features");
    const json_value *score = json_member(d, root, "score");
    const json_value *advice = json_member(d, root, "advice");
    if (!f || f->kind != JSON_ARRAY)
        return fail(r, 0, "the header has no \"features\" array");
    if (!(r->features = calloc((size_t)f->count + 1, sizeof *r->features)))
        return fail(r, 0, "out of memory");
    for (int c = f->first; c >= 0; c = d->v[c].next, r->n++) {
        if (parse_spec(r, d, &d->v[c], &r->features[r->n]))
            return -1;
        *total += slot_size(&r->features[r->n]);
        if (*total > MLBC_RT_MAX_TENSOR_BYTES)
            return fail(r, 0, "observations larger than %zu bytes",
                        (size_t)MLBC_RT_MAX_TENSOR_BYTES);
    }
    if ((r->has_score = score != NULL) && parse_spec(r, d, score, &r->score))
        return -1;
    if ((r->has_advice = advice != NULL) && parse_spec(r, d, advice, &r->advice))
        return -1;
    return 0;
}

/* Header line -> specs and the payload buffers. */
static int open_header(mlbc_log_reader *r)
{
    json_doc d;
    size_t len, at, total = 0;
    char err[128];
    int rc = read_line(r, &len);
    if (rc <= 0)
        return rc ? -1 : fail(r, 0, "empty input: no header");
    if (json_parse(&d, r->line, len, err, sizeof err, &at))
        rc = fail(r, at, "header: %s", err);
    else if (d.v[0].kind != JSON_OBJECT)
        rc = fail(r, 0, "the header is not a JSON object");
    else
        rc = parse_header(r, &d, &total) ? -1 : 0;
    json_free(&d);
    if (rc)
        return -1;
    if (!(r->payload = calloc(1, total + mlbc_spec_bytes(&r->score) + 1))
        || !(r->tensors = calloc((size_t)r->n + 1, sizeof *r->tensors)))
        return fail(r, 0, "out of memory");
    for (size_t i = 0, off = 0; i < (size_t)r->n; i++) {
        r->tensors[i] = r->payload + off;
        off += slot_size(&r->features[i]);
    }
    r->tensors[r->n] = r->payload + total;
    return 0;
}

mlbc_log_reader *mlbc_log_open(FILE *in, char *err, size_t errlen)
{
    mlbc_log_reader *r;
    if (!in) {
        set_err(err, errlen, "no input");
        return NULL;
    }
    if (!(r = calloc(1, sizeof *r)) || !(r->context = calloc(1, 1))) {
        mlbc_log_close(r);
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    r->in = in;
    r->last = -1;
    if (open_header(r)) {
        set_err(err, errlen, "%s", r->error);
        mlbc_log_close(r);
        return NULL;
    }
    return r;
}

static int record(mlbc_log_reader *r, const json_doc *d, uint64_t at, mlbc_log_record *rec)
{
    const json_value *root = &d->v[0], *m;
    if (root->kind != JSON_OBJECT || root->count != 1)
        return fail(r, at, "expected a context, observation or outcome record");
    m = &d->v[root->first];
    if (!strcmp(m->key, "context") && m->kind == JSON_STRING) {
        char *copy = strdup(m->s);
        if (!copy)
            return fail(r, at, "out of memory");
        free(r->context);
        r->context = copy;
        r->last = -1;
        rec->kind = MLBC_RECORD_CONTEXT;
        return 0;
    }
    if (m->kind != JSON_INT || m->i < 0
        || (strcmp(m->key, "observation") && strcmp(m->key, "outcome")))
        return fail(r, at, "expected a context, observation or outcome record");
    rec->id = m->i;
    if (!strcmp(m->key, "observation")) {
        if (r->last >= 0 && m->i != r->last + 1)
            return fail(r, at, "observation out of sequence in context '%.60s'", r->context);
        r->last = m->i;
        rec->kind = MLBC_RECORD_OBSERVATION;
        rec->tensors = (const void *const *)r->tensors;
        for (int i = 0; i < r->n; i++)
            if (read_tensor(r, r->tensors[i], &r->features[i], "feature"))
                return -1;
        return read_newline(r, "observation");
    }
    if (!r->has_score)
        return fail(r, at, "an outcome, but the header has no score");
    if (m->i != r->last)
        return fail(r, at, "the outcome is not for the latest observation of context '%.60s'",
                    r->context);
    rec->kind = MLBC_RECORD_OUTCOME;
    rec->tensors = (const void *const *)&r->tensors[r->n];
    if (read_tensor(r, r->tensors[r->n], &r->score, "score"))
        return -1;
    return read_newline(r, "outcome");
}

int mlbc_log_next(mlbc_log_reader *r, mlbc_log_record *rec)
{
    json_doc d;
    size_t len, at;
    uint64_t start;
    char err[128];
    int rc;
    if (!r || !rec)
        return -1;
    if (r->state)
        return r->state > 0 ? 0 : -1;
    memset(rec, 0, sizeof *rec);
    start = r->offset;
    if ((rc = read_line(r, &len)) <= 0) {
        r->state = rc ? -1 : 1;
        return rc;
    }
    if (json_parse(&d, r->line, len, err, sizeof err, &at))
        rc = fail(r, start + at, "%s", err);
    else
        rc = record(r, &d, start, rec);
    json_free(&d);
    rec->context = r->context;
    return rc ? -1 : 1;
}

int mlbc_log_num_features(const mlbc_log_reader *r)
{
    return r ? r->n : 0;
}

const mlbc_tensor_spec *mlbc_log_feature(const mlbc_log_reader *r, int i)
{
    return r && i >= 0 && i < r->n ? &r->features[i] : NULL;
}

const mlbc_tensor_spec *mlbc_log_score(const mlbc_log_reader *r)
{
    return r && r->has_score ? &r->score : NULL;
}

const mlbc_tensor_spec *mlbc_log_advice(const mlbc_log_reader *r)
{
    return r && r->has_advice ? &r->advice : NULL;
}

const char *mlbc_log_error(const mlbc_log_reader *r)
{
    return r ? r->error : "no reader";
}

void mlbc_log_close(mlbc_log_reader *r)
{
    if (!r)
        return;
    free(r->features);
    free(r->payload);
    free(r->tensors);
    free(r->line);
    free(r->context);
    free(r);
}
