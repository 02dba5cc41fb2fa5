/* wire.c - a first look at a binary ONNX model, before protobuf-c unpacks it.
 *
 * protobuf-c unpacks nested messages by recursion and allocates every message and string it
 * reads: 10^5 nested subgraphs overflow its stack, and ten million empty nodes (20 MB of file)
 * take gigabytes and many seconds. This walk reads tags and lengths only, with a bounded stack
 * of its own, and refuses such a model with a clear error before anything is unpacked. What is
 * not well-formed it leaves to protobuf-c, whose error is then the one mlbc reports.
 */
#include "mlbc.h"

/* The messages that have message fields (LEAF: one that has none). */
enum { MODEL, GRAPH, NODE, ATTR, FUNC, TRAINING, VALUE_INFO, TYPE, TYPE_ONE, TYPE_MAP,
       TENSOR_TYPE, SHAPE, TENSOR, SPARSE, ANNOTATION, LEAF };

/* Field FIELD of message MSG is a message CHILD (onnx.proto); every other length-delimited
 * field is a string, bytes or a packed array: one allocation each. */
static const struct {
    unsigned char msg, field, child;
} subs[] = {
    {MODEL, 7, GRAPH}, {MODEL, 8, LEAF}, {MODEL, 14, LEAF}, {MODEL, 20, TRAINING},
    {MODEL, 25, FUNC},
    {TRAINING, 1, GRAPH}, {TRAINING, 2, GRAPH}, {TRAINING, 3, LEAF}, {TRAINING, 4, LEAF},
    {GRAPH, 1, NODE}, {GRAPH, 5, TENSOR}, {GRAPH, 11, VALUE_INFO}, {GRAPH, 12, VALUE_INFO},
    {GRAPH, 13, VALUE_INFO}, {GRAPH, 14, ANNOTATION}, {GRAPH, 15, SPARSE},
    {FUNC, 7, NODE}, {FUNC, 9, LEAF},
    {NODE, 5, ATTR},
    {ATTR, 5, TENSOR}, {ATTR, 6, GRAPH}, {ATTR, 10, TENSOR}, {ATTR, 11, GRAPH},
    {ATTR, 14, TYPE}, {ATTR, 15, TYPE}, {ATTR, 22, SPARSE}, {ATTR, 23, SPARSE},
    {VALUE_INFO, 2, TYPE},
    {TYPE, 1, TENSOR_TYPE}, {TYPE, 4, TYPE_ONE}, {TYPE, 5, TYPE_MAP}, {TYPE, 8, TENSOR_TYPE},
    {TYPE, 9, TYPE_ONE}, {TYPE_ONE, 1, TYPE}, {TYPE_MAP, 2, TYPE},
    {TENSOR_TYPE, 2, SHAPE}, {SHAPE, 1, LEAF},
    {TENSOR, 3, LEAF}, {TENSOR, 13, LEAF},
    {SPARSE, 1, TENSOR}, {SPARSE, 2, TENSOR},
    {ANNOTATION, 2, LEAF},
};

static int child_message(int msg, uint64_t field)
{
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
        if (subs[i].msg == msg && subs[i].field == field)
            return subs[i].child;
    return -1;
}

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 1;
    }
    return 0;
}

typedef struct Frame {
    const uint8_t *p, *end;
    int msg;
} Frame;

/* Advances f past one field; returns the message it opens (its body in *body), -1 for any
 * other field, -2 where the bytes are not well-formed. */
static int next_field(Frame *f, Frame *body, long *parts)
{
    uint64_t tag, n;
    if (!read_varint(&f->p, f->end, &tag))
        return -2;
    size_t left = (size_t)(f->end - f->p), skip;
    switch (tag & 7) {
    case 0:
        return read_varint(&f->p, f->end, &n) ? -1 : -2;
    case 1:
        skip = 8;
        break;
    case 5:
        skip = 4;
        break;
    case 2:
        if (!read_varint(&f->p, f->end, &n))
            return -2;
        left = (size_t)(f->end - f->p);
        if (n > left)
            return -2;
        if (++*parts > MLBC_MAX_PROTO_PARTS)
            die("the model has more than %d messages and strings (MLBC_MAX_PROTO_PARTS): too "
                "many to load", MLBC_MAX_PROTO_PARTS);
        *body = (Frame){f->p, f->p + n, child_message(f->msg, tag >> 3)};
        f->p += n;
        return body->msg;
    default:
        return -2;
    }
    if (skip > left)
        return -2;
    f->p += skip;
    return -1;
}

void check_wire(const char *data, size_t len)
{
    Frame stack[MLBC_MAX_NESTING];
    int depth = 0;
    long parts = 0, nodes = 0;
    stack[0] = (Frame){(const uint8_t *)data, (const uint8_t *)data + len, MODEL};
    while (depth >= 0) {
        Frame *f = &stack[depth], body;
        if (f->p == f->end) {
            depth--;
            continue;
        }
        int child = next_field(f, &body, &parts);
        if (child == -2)
            return;
        if (child < 0)
            continue;
        if (child == NODE && ++nodes > MLBC_MAX_NODES)
            die("the model has more than %d nodes (MLBC_MAX_NODES)", MLBC_MAX_NODES);
        if (depth + 1 == MLBC_MAX_NESTING)
            die("the model nests messages (subgraphs, types) more than %d deep "
                "(MLBC_MAX_NESTING)", MLBC_MAX_NESTING);
        stack[++depth] = body;
    }
}
