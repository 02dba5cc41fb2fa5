/* proto.c - Protobuf SerDes (runtime/mlbc.proto, compiled by protoc-c): an Observation out
 * of a runner's input buffers, an Advice into its advice buffer. The pipe runner's protobuf
 * framing sends these messages after an 8-byte length, as the Bridge's other framings do.
 *
 * Tensors travel as raw little-endian bytes: the runtime's hosts (x86-64, AArch64) are
 * little-endian, and a big-endian build refuses the framing (proto_check_host). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mlbc.pb-c.h"
#include "proto.h"

struct proto_obs {
    Mlbc__Observation msg;
    Mlbc__Tensor *tensors;          /* one per input, pointing at the runner's buffers */
    Mlbc__Tensor **ptrs;
};

int proto_check_host(char *err, size_t errlen)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    set_err(err, errlen, "the protobuf framing carries little-endian tensors; this host is "
            "big-endian");
    return -1;
#else
    (void)err, (void)errlen;
    return 0;
#endif
}

proto_obs *proto_obs_new(const mlbc_runner *r)
{
    proto_obs *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    mlbc__observation__init(&o->msg);
    o->tensors = calloc((size_t)r->ninputs + 1, sizeof *o->tensors);
    o->ptrs = calloc((size_t)r->ninputs + 1, sizeof *o->ptrs);
    if (!o->tensors || !o->ptrs) {
        proto_obs_free(o);
        return NULL;
    }
    for (int i = 0; i < r->ninputs; i++) {
        const mlbc_tensor_spec *s = &r->specs[i];
        Mlbc__Tensor *t = &o->tensors[i];
        mlbc__tensor__init(t);
        t->name = (char *)s->name;
        t->type = s->type;
        t->n_shape = (size_t)s->rank;
        t->shape = (int64_t *)s->shape;
        t->data.len = mlbc_spec_bytes(s);
        t->data.data = r->inputs[i];
        o->ptrs[i] = t;
    }
    o->msg.n_features = (size_t)r->ninputs;
    o->msg.features = o->ptrs;
    return o;
}

void proto_obs_free(proto_obs *o)
{
    if (!o)
        return;
    free(o->tensors);
    free(o->ptrs);
    free(o);
}

typedef struct jb_sink {
    ProtobufCBuffer base;
    jbuf *b;
} jb_sink;

static void jb_append(ProtobufCBuffer *sink, size_t n, const uint8_t *data)
{
    jb_raw(((jb_sink *)sink)->b, (const char *)data, n);
}

void proto_obs_pack(proto_obs *o, const char *context, int64_t index, jbuf *b)
{
    o->msg.context = (char *)(context ? context : "");
    o->msg.index = index;
    jb_sink sink = {{jb_append}, b};
    mlbc__observation__pack_to_buffer(&o->msg, &sink.base);
}

size_t proto_advice_limit(const mlbc_tensor_spec *advice)
{
    /* the data, the name, the shape (at most 10 bytes a dimension) and the fields' tags */
    return mlbc_spec_bytes(advice) + strlen(advice->name) + 11 * MLBC_SPEC_MAX_RANK + 64;
}

/* Whether the shape the host gave holds as many elements as the advice spec (no shape: a
 * scalar's, or a shape left out, which the dimensions check below tells apart). */
static int same_count(const Mlbc__Tensor *t, const mlbc_tensor_spec *advice)
{
    if (!t->n_shape)
        return 1;
    int64_t n = 1;
    for (size_t i = 0; i < t->n_shape; i++) {
        if (t->shape[i] < 0 || (t->shape[i] && n > INT64_MAX / t->shape[i]))
            return 0;
        n *= t->shape[i];
    }
    return n == mlbc_spec_count(advice);
}

/* Whether the shapes agree but for dimensions of 1 ([1,6] is [6]; [3,2] is not [2,3]): a
 * model's batch dimension is no mistake, elements read in another order are. */
static int same_dims(const Mlbc__Tensor *t, const mlbc_tensor_spec *advice)
{
    size_t i = 0;
    int j = 0;
    for (;;) {
        while (i < t->n_shape && t->shape[i] == 1)
            i++;
        while (j < advice->rank && advice->shape[j] == 1)
            j++;
        if (i == t->n_shape || j == advice->rank)
            return i == t->n_shape && j == advice->rank;
        if (t->shape[i++] != advice->shape[j++])
            return 0;
    }
}

/* "[2,3]" */
static void shape_text(const int64_t *dims, size_t n, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? "," : "", (long long)dims[i]);
    if (k < len)
        snprintf(buf + k, len - k, "]");
}

int proto_advice_unpack(const mlbc_tensor_spec *advice, const uint8_t *msg, size_t len,
                        void *dst, char *err, size_t errlen)
{
    Mlbc__Advice *a = mlbc__advice__unpack(NULL, len, msg);
    if (!a) {
        set_err(err, errlen, "the reply is not an mlbc.Advice message (%zu bytes)", len);
        return -1;
    }
    const Mlbc__Tensor *t = a->advice;
    int rc = -1;
    if (!t)
        set_err(err, errlen, "the Advice message has no advice tensor");
    else if (t->type != advice->type)       /* bytes of another type are not the advice */
        set_err(err, errlen, "the advice tensor has element type %d, the advice spec %d",
                (int)t->type, advice->type);
    else if (!same_count(t, advice))
        set_err(err, errlen, "the advice tensor's shape does not hold the %lld element(s) of "
                "the advice spec", (long long)mlbc_spec_count(advice));
    else if (!same_dims(t, advice)) {
        char got[120], want[120];
        shape_text(t->shape, t->n_shape, got, sizeof got);
        shape_text(advice->shape, (size_t)advice->rank, want, sizeof want);
        set_err(err, errlen, "the advice tensor has shape %s, the advice spec %s (only "
                "dimensions of 1 may differ)", got, want);
    } else if (t->data.len != mlbc_spec_bytes(advice))
        set_err(err, errlen, "the advice tensor has %zu bytes, the advice %zu", t->data.len,
                mlbc_spec_bytes(advice));
    else {
        memcpy(dst, t->data.data, t->data.len);
        rc = 0;
    }
    mlbc__advice__free_unpacked(a, NULL);
    return rc;
}
