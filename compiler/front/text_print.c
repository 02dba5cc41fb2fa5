/* text_print.c - Onnx__ModelProto -> ONNX textual syntax.
 *
 * The output is what onnx 1.12's onnx.parser.parse_model reads back into the same model
 * whenever the model only uses what that syntax can say; text_parse.y reads it back in every
 * case, and printing what it reads gives the same text again. Choices:
 *   - Initializers all go to the "<...>" list after the outputs (never "= {...}" in the
 *     input list), which keeps their order; tensors with raw_data print as value lists.
 *   - Floats print in the shortest of %.6g..%.9g (doubles %.15g..%.17g) that reads back to
 *     the same bits. onnx 1.12 has no inf/nan literals: they print as inf, -inf, nan, -nan,
 *     which later onnx releases and mlbc accept (a NaN's payload is not kept).
 *   - Strings print byte for byte between double quotes (onnx 1.12 has no escapes). A
 *     string holding '"' cannot be said that way: it prints as '...' with backslashes
 *     before '\' and '\'', an mlbc extension.
 *   - Names that are not identifiers print quoted ("x.1"), node names as labels
 *     ([name] Y = ...), float16/bfloat16 values as their bit patterns, complex values as
 *     (re, im) pairs, external data as = ["location": ...] (later onnx forms), sparse tensor
 *     attributes as (values, indices, [dims]) (mlbc extension).
 *   - What the syntax cannot hold is left out: doc strings other than the model's and
 *     functions', denotations, quantization annotations, sparse initializers, training info.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc.h"

typedef Onnx__AttributeProto__AttributeType AttrType;

static void put_graph(Buf *b, const Onnx__GraphProto *g, int ind, int top);

static void indent(Buf *b, int n) { buf_printf(b, "%*s", n, ""); }

/* ---- names and strings ---- */

static int is_ident(const char *s, size_t n)
{
    if (!n || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

static void put_str(Buf *b, const char *s, size_t n)
{
    if (!n) {   /* protobuf-c leaves empty bytes without data: no NULL to memchr/memcpy */
        buf_puts(b, "\"\"");
        return;
    }
    if (!memchr(s, '"', n)) {
        buf_puts(b, "\"");
        buf_put(b, s, n);
        buf_puts(b, "\"");
        return;
    }
    buf_puts(b, "'");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' || s[i] == '\'')
            buf_puts(b, "\\");
        buf_put(b, &s[i], 1);
    }
    buf_puts(b, "'");
}

static void put_cstr(Buf *b, const char *s) { put_str(b, s ? s : "", s ? strlen(s) : 0); }

static void put_name(Buf *b, const char *s)
{
    if (s && is_ident(s, strlen(s)))
        buf_puts(b, s);
    else
        put_cstr(b, s);
}

/* These are type keywords when '(' follows, as it does after a nested graph's name. */
static int is_type_keyword(const char *s)
{
    static const char *const kw[] = {"seq", "map", "optional", "sparse_tensor", "opaque"};
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
        if (!strcmp(s, kw[i]))
            return 1;
    return 0;
}

/* A domain like "com.microsoft" prints bare when every part is an identifier. */
static void put_dotted(Buf *b, const char *s)
{
    for (const char *p = s;;) {
        size_t n = strcspn(p, ".");
        if (!is_ident(p, n)) {
            put_cstr(b, s);
            return;
        }
        if (!p[n])
            break;
        p += n + 1;
    }
    buf_puts(b, s);
}

/* Names of a node's inputs or outputs. An empty name prints as nothing (onnx 1.12 reads
 * "a, , b"), except in first place, where it needs the later form "". */
static void put_ids(Buf *b, char **ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int empty = !ids[i] || !*ids[i];
        if (i)
            buf_puts(b, empty && i + 1 == n ? "," : ", ");
        if (i == 0 || !empty)
            put_name(b, ids[i]);
    }
}

/* ---- numbers ---- */

static void put_real(Buf *b, double x, int is_double, int need_point)
{
    if (isnan(x)) {
        buf_puts(b, signbit(x) ? "-nan" : "nan");
        return;
    }
    if (isinf(x)) {
        buf_puts(b, x < 0 ? "-inf" : "inf");
        return;
    }
    char s[48];
    int last = is_double ? 17 : 9;
    for (int prec = is_double ? 15 : 6; prec <= last; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, x);
        if (is_double ? strtod(s, NULL) == x : strtof(s, NULL) == (float)x)
            break;
    }
    buf_puts(b, s);
    /* An attribute's float must not read back as an int. */
    if (need_point && !strpbrk(s, ".e"))
        buf_puts(b, ".0");
}

static void put_i64(Buf *b, int64_t v) { buf_printf(b, "%" PRId64, v); }

/* ---- types ---- */

static int dtype_ok(int dt) { return dt > DT_UNDEF && dt < DT_COUNT; }

/* onnx-ml's TypeProto.opaque_type (field 7) survives in protobuf-c's unknown fields, both
 * from binary models and from text_parse.y; read its domain (1) and name (2). */
static const uint8_t *get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        *v |= (uint64_t)(*p & 0x7f) << shift;
        if (!(*p++ & 0x80))
            return p;
    }
    return NULL;
}

static int opaque_of(const Onnx__TypeProto *t, char **domain, char **name)
{
    for (unsigned i = 0; i < t->base.n_unknown_fields; i++) {
        const ProtobufCMessageUnknownField *f = &t->base.unknown_fields[i];
        if (f->tag != 7 || f->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
            continue;
        *domain = *name = NULL;
        const uint8_t *p = f->data, *end = f->data + f->len;
        uint64_t key, len;
        p = get_varint(p, end, &len);   /* the data starts with the message's length */
        if (!p || len != (uint64_t)(end - p))
            return 0;
        while (p < end) {
            p = get_varint(p, end, &key);
            if (!p || (key & 7) != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED ||
                !(p = get_varint(p, end, &len)) || len > (uint64_t)(end - p))
                return 0;
            if (key >> 3 == 1)
                *domain = xstrndup((const char *)p, len);
            else if (key >> 3 == 2)
                *name = xstrndup((const char *)p, len);
            p += len;
        }
        return 1;
    }
    return 0;
}

static int shape_ok(const Onnx__TensorShapeProto *s) { return !s || s->n_dim == 0 || s->dim; }

/* Whether T can be printed: a type without an element type has no text form. */
static int type_ok(const Onnx__TypeProto *t)
{
    char *domain, *name;
    if (!t)
        return 0;
    switch (t->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        return dtype_ok(t->tensor_type->elem_type) && shape_ok(t->tensor_type->shape);
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        return dtype_ok(t->sparse_tensor_type->elem_type) && shape_ok(t->sparse_tensor_type->shape);
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        return type_ok(t->sequence_type->elem_type);
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        return type_ok(t->optional_type->elem_type);
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        return dtype_ok(t->map_type->key_type) && type_ok(t->map_type->value_type);
    default:
        return opaque_of(t, &domain, &name);
    }
}

static void put_dim(Buf *b, const Onnx__TensorShapeProto__Dimension *d)
{
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
        put_i64(b, d->dim_value);
    else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
        put_name(b, d->dim_param);
    else
        buf_puts(b, "?");
}

/* As onnx 1.12 reads it: "float" is a scalar, "float[]" has unknown rank. */
static void put_tensor_type(Buf *b, int elem, const Onnx__TensorShapeProto *shape)
{
    buf_puts(b, dtype_name(elem));
    if (!shape) {
        buf_puts(b, "[]");
        return;
    }
    for (size_t i = 0; i < shape->n_dim; i++) {
        buf_puts(b, i ? "," : "[");
        put_dim(b, shape->dim[i]);
    }
    if (shape->n_dim)
        buf_puts(b, "]");
}

static void put_opaque(Buf *b, const Onnx__TypeProto *t)
{
    char *domain, *name;
    opaque_of(t, &domain, &name);
    buf_puts(b, "opaque(");
    if (domain) {
        put_dotted(b, domain);
        buf_puts(b, ", ");
        put_dotted(b, name ? name : "");
    } else if (name) {
        put_dotted(b, name);
    }
    buf_puts(b, ")");
}

static void put_type(Buf *b, const Onnx__TypeProto *t)
{
    switch (t->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        put_tensor_type(b, t->tensor_type->elem_type, t->tensor_type->shape);
        break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        buf_puts(b, "sparse_tensor(");
        put_tensor_type(b, t->sparse_tensor_type->elem_type, t->sparse_tensor_type->shape);
        buf_puts(b, ")");
        break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        buf_puts(b, "seq(");
        put_type(b, t->sequence_type->elem_type);
        buf_puts(b, ")");
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        buf_puts(b, "optional(");
        put_type(b, t->optional_type->elem_type);
        buf_puts(b, ")");
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        buf_printf(b, "map(%s, ", dtype_name(t->map_type->key_type));
        put_type(b, t->map_type->value_type);
        buf_puts(b, ")");
        break;
    default:
        put_opaque(b, t);
        break;
    }
}

/* A value info without a printable type prints as a bare name (no type). */
static void put_value_info(Buf *b, const Onnx__ValueInfoProto *v)
{
    if (type_ok(v->type)) {
        put_type(b, v->type);
        buf_puts(b, " ");
    }
    put_name(b, v->name);
}

static void put_value_infos(Buf *b, Onnx__ValueInfoProto **v, size_t n)
{
    buf_puts(b, "(");
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf_puts(b, ", ");
        put_value_info(b, v[i]);
    }
    buf_puts(b, ")");
}

/* ---- tensor values ---- */

/* Element I of little-endian raw data of SIZE-byte elements. */
static uint64_t raw_at(const Onnx__TensorProto *t, size_t i, size_t size)
{
    uint64_t v = 0;
    for (size_t k = 0; k < size; k++)
        v |= (uint64_t)t->raw_data.data[i * size + k] << (8 * k);
    return v;
}

/* Bytes per raw element; complex numbers count as two floats or doubles. */
static size_t raw_size(int dt)
{
    switch (dt) {
    case DT_COMPLEX64: return 4;
    case DT_COMPLEX128: return 8;
    case DT_STRING: return 0;
    default: return dtype_size(dt);
    }
}

static size_t n_values(const Onnx__TensorProto *t)
{
    if (t->has_raw_data)
        return raw_size(t->data_type) ? t->raw_data.len / raw_size(t->data_type) : 0;
    switch (t->data_type) {
    case DT_FLOAT: case DT_COMPLEX64: return t->n_float_data;
    case DT_DOUBLE: case DT_COMPLEX128: return t->n_double_data;
    case DT_INT64: return t->n_int64_data;
    case DT_UINT32: case DT_UINT64: return t->n_uint64_data;
    case DT_STRING: return t->n_string_data;
    default: return t->n_int32_data;
    }
}

static float f32_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double f64_of_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void put_raw_value(Buf *b, const Onnx__TensorProto *t, size_t i)
{
    size_t size = raw_size(t->data_type);
    uint64_t u = raw_at(t, i, size);
    switch (t->data_type) {
    case DT_FLOAT: case DT_COMPLEX64: put_real(b, f32_of_bits((uint32_t)u), 0, 0); break;
    case DT_DOUBLE: case DT_COMPLEX128: put_real(b, f64_of_bits(u), 1, 0); break;
    case DT_INT8: put_i64(b, (int8_t)u); break;
    case DT_INT16: put_i64(b, (int16_t)u); break;
    case DT_INT32: put_i64(b, (int32_t)u); break;
    case DT_INT64: put_i64(b, (int64_t)u); break;
    default: buf_printf(b, "%" PRIu64, u); break;   /* unsigned, bool, 16-bit floats */
    }
}

static void put_value(Buf *b, const Onnx__TensorProto *t, size_t i)
{
    if (t->has_raw_data) {
        put_raw_value(b, t, i);
        return;
    }
    switch (t->data_type) {
    case DT_FLOAT: case DT_COMPLEX64: put_real(b, t->float_data[i], 0, 0); break;
    case DT_DOUBLE: case DT_COMPLEX128: put_real(b, t->double_data[i], 1, 0); break;
    case DT_INT64: put_i64(b, t->int64_data[i]); break;
    case DT_UINT32: case DT_UINT64: buf_printf(b, "%" PRIu64, t->uint64_data[i]); break;
    case DT_STRING: put_str(b, (const char *)t->string_data[i].data, t->string_data[i].len); break;
    default: put_i64(b, t->int32_data[i]); break;
    }
}

/* "{v, v, ...}"; long lists wrap every 8 values, indented under the tensor. */
static void put_values(Buf *b, const Onnx__TensorProto *t, int ind)
{
    size_t n = n_values(t);
    int wrap = n > 16;
    buf_puts(b, "{");
    for (size_t i = 0; i < n; i++) {
        if (wrap && i % 8 == 0) {
            buf_puts(b, i ? ",\n" : "\n");
            indent(b, ind + 4);
        } else if (i) {
            buf_puts(b, ", ");
        }
        put_value(b, t, i);
    }
    if (wrap) {
        buf_puts(b, "\n");
        indent(b, ind);
    }
    buf_puts(b, "}");
}

static void put_external(Buf *b, const Onnx__TensorProto *t)
{
    buf_puts(b, "[");
    for (size_t i = 0; i < t->n_external_data; i++) {
        buf_puts(b, i ? ", " : "");
        put_cstr(b, t->external_data[i]->key);
        buf_puts(b, ": ");
        put_cstr(b, t->external_data[i]->value);
    }
    buf_puts(b, "]");
}

static int is_external(const Onnx__TensorProto *t)
{
    return t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* "float[2,3] name = {...}" for an initializer (IS_INIT), "float[2,3] name {...}" or
 * "float[2,3] {...}" for a constant. A scalar has no brackets. */
static void put_tensor(Buf *b, const Onnx__TensorProto *t, int ind, int is_init)
{
    buf_puts(b, dtype_name(t->data_type));
    for (size_t i = 0; i < t->n_dims; i++) {
        buf_puts(b, i ? "," : "[");
        put_i64(b, t->dims[i]);
    }
    if (t->n_dims)
        buf_puts(b, "]");
    if (is_init || (t->name && *t->name)) {
        buf_puts(b, " ");
        put_name(b, t->name);
    }
    buf_puts(b, is_init ? " = " : " ");
    if (is_init && is_external(t))
        put_external(b, t);
    else
        put_values(b, t, ind);
}

static int tensor_ok(const Onnx__TensorProto *t) { return t && dtype_ok(t->data_type); }

/* ---- attributes ---- */

static const char *const attr_type_names[] = {
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT] = "float",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT] = "int",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING] = "string",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR] = "tensor",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH] = "graph",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR] = "sparse_tensor",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO] = "type_proto",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS] = "floats",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS] = "ints",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS] = "strings",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS] = "tensors",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS] = "graphs",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS] = "sparse_tensors",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS] = "type_protos",
};

/* Also used by text_parse.y, so both sides spell the types alike. */
const char *text_attr_type_name(int type)
{
    int n = (int)(sizeof attr_type_names / sizeof *attr_type_names);
    return type > 0 && type < n ? attr_type_names[type] : NULL;
}

/* The attribute's kind: its type field, or for old protos without one, the field set. */
static AttrType attr_kind(const Onnx__AttributeProto *a)
{
    if (a->has_type && text_attr_type_name(a->type))
        return a->type;
    return a->has_f ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
         : a->has_i ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
         : a->has_s ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
         : a->t ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR
         : a->g ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH
         : a->sparse_tensor ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR
         : a->tp ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO
         : a->n_floats ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
         : a->n_ints ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS
         : a->n_strings ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS
         : a->n_tensors ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS
         : a->n_graphs ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS
         : a->n_sparse_tensors ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS
         : a->n_type_protos ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS
         : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static size_t list_len(const Onnx__AttributeProto *a, AttrType k)
{
    switch (k) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return a->n_floats;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return a->n_ints;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return a->n_strings;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return a->n_tensors;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return a->n_graphs;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return a->n_sparse_tensors;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return a->n_type_protos;
    default: return 0;
    }
}

static int is_list(AttrType k)
{
    switch (k) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
        return 1;
    default:
        return 0;
    }
}

static int sparse_ok(const Onnx__SparseTensorProto *s)
{
    return s && tensor_ok(s->values) && tensor_ok(s->indices);
}

/* Whether element I (or the single value) of an attribute of kind K can be printed. */
static int value_ok(const Onnx__AttributeProto *a, AttrType k, size_t i)
{
    switch (k) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return tensor_ok(a->t);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return a->g != NULL;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return sparse_ok(a->sparse_tensor);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return type_ok(a->tp);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return tensor_ok(a->tensors[i]);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return sparse_ok(a->sparse_tensors[i]);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return type_ok(a->type_protos[i]);
    default: return k != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
    }
}

/* An attribute whose value has no text form (no type, a tensor of no known type, ...) is
 * left out rather than printed as something that would not read back. */
static int attr_ok(const Onnx__AttributeProto *a)
{
    if (a->ref_attr_name)
        return 1;
    AttrType k = attr_kind(a);
    if (!is_list(k))
        return value_ok(a, k, 0);
    for (size_t i = 0; i < list_len(a, k); i++)
        if (!value_ok(a, k, i))
            return 0;
    return 1;
}

static void put_sparse(Buf *b, const Onnx__SparseTensorProto *s, int ind)
{
    buf_puts(b, "(");
    put_tensor(b, s->values, ind, 0);
    buf_puts(b, ", ");
    put_tensor(b, s->indices, ind, 0);
    buf_puts(b, ", [");
    for (size_t i = 0; i < s->n_dims; i++) {
        buf_puts(b, i ? ", " : "");
        put_i64(b, s->dims[i]);
    }
    buf_puts(b, "])");
}

/* Element I of a list attribute of kind K, or its single value. */
static void put_attr_value(Buf *b, const Onnx__AttributeProto *a, AttrType k, size_t i, int ind)
{
    switch (k) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: put_real(b, a->f, 0, 1); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: put_i64(b, a->i); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: put_str(b, (const char *)a->s.data, a->s.len); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: put_tensor(b, a->t, ind, 0); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: put_graph(b, a->g, ind, 0); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: put_sparse(b, a->sparse_tensor, ind); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: put_type(b, a->tp); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: put_real(b, a->floats[i], 0, 1); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: put_i64(b, a->ints[i]); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
        put_str(b, (const char *)a->strings[i].data, a->strings[i].len);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: put_tensor(b, a->tensors[i], ind, 0); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: put_graph(b, a->graphs[i], ind, 0); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: put_sparse(b, a->sparse_tensors[i], ind); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: put_type(b, a->type_protos[i]); break;
    default: break;
    }
}

/* "name = value"; the type is written only where the value cannot say it: an empty list
 * ("name: ints = []") and a typed reference ("name: float = @alpha"). */
static void put_attr(Buf *b, const Onnx__AttributeProto *a, int ind)
{
    put_name(b, a->name);
    AttrType k = attr_kind(a);
    if (a->ref_attr_name) {
        if (a->has_type && text_attr_type_name(a->type))
            buf_printf(b, ": %s", text_attr_type_name(a->type));
        buf_puts(b, " = @");
        put_name(b, a->ref_attr_name);
        return;
    }
    if (!is_list(k)) {
        buf_puts(b, " = ");
        put_attr_value(b, a, k, 0, ind);
        return;
    }
    size_t n = list_len(a, k);
    if (!n)
        buf_printf(b, ": %s", text_attr_type_name(k));
    buf_puts(b, " = [");
    for (size_t i = 0; i < n; i++) {
        buf_puts(b, i ? ", " : "");
        put_attr_value(b, a, k, i, ind);
    }
    buf_puts(b, "]");
}

/* ---- nodes and graphs ---- */

static int has_subgraph(const Onnx__NodeProto *n)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->g || n->attribute[i]->n_graphs)
            return 1;
    return 0;
}

/* Attributes inline ("<a = 1, b = 2>"), or one per line when a graph makes them long. */
static void put_attrs(Buf *b, const Onnx__NodeProto *n, int ind, int multiline)
{
    const char *sep = multiline ? "<\n" : "<";
    int any = 0;
    for (size_t i = 0; i < n->n_attribute; i++) {
        if (!attr_ok(n->attribute[i]))
            continue;
        buf_puts(b, any ? (multiline ? ",\n" : ", ") : sep);
        if (multiline)
            indent(b, ind + 2);
        put_attr(b, n->attribute[i], ind + 2);
        any = 1;
    }
    if (any && multiline) {
        buf_puts(b, "\n");
        indent(b, ind);
    }
    if (any)
        buf_puts(b, ">");
}

/* "[label] outs = domain.Op <attrs> (ins)"; with graph attributes "... (ins) <attrs>". */
static void put_node(Buf *b, const Onnx__NodeProto *n, int ind)
{
    indent(b, ind);
    if (n->name && *n->name) {
        buf_puts(b, "[");
        put_name(b, n->name);
        buf_puts(b, "] ");
    }
    put_ids(b, n->output, n->n_output);
    buf_puts(b, n->n_output ? " = " : "= ");
    if (n->domain && *n->domain) {
        put_dotted(b, n->domain);
        buf_puts(b, ".");
    }
    put_name(b, n->op_type);
    int sub = has_subgraph(n);
    if (!sub && n->n_attribute) {
        buf_puts(b, " ");
        put_attrs(b, n, ind, 0);
    }
    buf_puts(b, " (");
    put_ids(b, n->input, n->n_input);
    buf_puts(b, ")");
    if (sub) {
        buf_puts(b, " ");
        put_attrs(b, n, ind, 1);
    }
    buf_puts(b, "\n");
}

static void put_nodes(Buf *b, Onnx__NodeProto **nodes, size_t n, int ind)
{
    buf_puts(b, "\n");
    indent(b, ind);
    buf_puts(b, "{\n");
    for (size_t i = 0; i < n; i++)
        put_node(b, nodes[i], ind + 2);
    indent(b, ind);
    buf_puts(b, "}");
}

static size_t n_bad_initializers(const Onnx__GraphProto *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_initializer; i++)
        n += !tensor_ok(g->initializer[i]);
    return n;
}

/* The "<...>" list after the outputs: initializers (those of a known element type), then
 * value infos, one per line. */
static void put_decls(Buf *b, const Onnx__GraphProto *g, int ind)
{
    if (g->n_initializer == n_bad_initializers(g) && !g->n_value_info)
        return;
    buf_puts(b, "\n");
    indent(b, ind);
    buf_puts(b, "<");
    const char *sep = "\n";
    for (size_t i = 0; i < g->n_initializer + g->n_value_info; i++) {
        if (i < g->n_initializer && !tensor_ok(g->initializer[i]))
            continue;
        buf_puts(b, sep);
        sep = ",\n";
        indent(b, ind + 2);
        if (i < g->n_initializer)
            put_tensor(b, g->initializer[i], ind + 2, 1);
        else
            put_value_info(b, g->value_info[i - g->n_initializer]);
    }
    buf_puts(b, "\n");
    indent(b, ind);
    buf_puts(b, ">");
}

/* What the syntax cannot hold in the model's graph is at least mentioned. */
static void put_dropped(Buf *b, const Onnx__GraphProto *g)
{
    if (g->n_sparse_initializer)
        buf_printf(b, "# %zu sparse initializer(s) not shown\n", g->n_sparse_initializer);
    if (n_bad_initializers(g))
        buf_printf(b, "# %zu initializer(s) of unknown element type not shown\n",
                   n_bad_initializers(g));
}

/* TOP: the model's graph, which may be nameless; a nested graph needs a name, and one named
 * like a type keyword is quoted so that it does not read as a type. */
static void put_graph(Buf *b, const Onnx__GraphProto *g, int ind, int top)
{
    const char *name = g->name ? g->name : "";
    if (!top || *name) {
        if (!top && is_type_keyword(name))
            put_cstr(b, name);
        else
            put_name(b, name);
        buf_puts(b, " ");
    }
    put_value_infos(b, g->input, g->n_input);
    buf_puts(b, " => ");
    put_value_infos(b, g->output, g->n_output);
    put_decls(b, g, ind);
    put_nodes(b, g->node, g->n_node, ind);
}

/* ---- models and functions ---- */

static void put_opsets(Buf *b, Onnx__OperatorSetIdProto **o, size_t n)
{
    buf_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        buf_puts(b, i ? ", " : "");
        put_cstr(b, o[i]->domain);
        buf_printf(b, " : %" PRId64, o[i]->version);
    }
    buf_puts(b, "]");
}

/* Header entries "key: value", one per line between "<" and ">". */
static void header_key(Buf *b, int *n, const char *key)
{
    buf_printf(b, "%s  %s: ", *n ? ",\n" : "<\n", key);
    ++*n;
}

static void header_str(Buf *b, int *n, const char *key, const char *value)
{
    if (value) {
        header_key(b, n, key);
        put_cstr(b, value);
    }
}

static void header_end(Buf *b, int n)
{
    if (n)
        buf_puts(b, "\n>\n");
}

static void put_model_header(Buf *b, const Onnx__ModelProto *m)
{
    int n = 0;
    if (m->has_ir_version) {
        header_key(b, &n, "ir_version");
        put_i64(b, m->ir_version);
    }
    if (m->n_opset_import) {
        header_key(b, &n, "opset_import");
        put_opsets(b, m->opset_import, m->n_opset_import);
    }
    header_str(b, &n, "producer_name", m->producer_name);
    header_str(b, &n, "producer_version", m->producer_version);
    header_str(b, &n, "domain", m->domain);
    if (m->has_model_version) {
        header_key(b, &n, "model_version");
        put_i64(b, m->model_version);
    }
    header_str(b, &n, "doc_string", m->doc_string);
    if (m->n_metadata_props) {
        header_key(b, &n, "metadata_props");
        buf_puts(b, "[");
        for (size_t i = 0; i < m->n_metadata_props; i++) {
            buf_puts(b, i ? ", " : "");
            put_cstr(b, m->metadata_props[i]->key);
            buf_puts(b, " : ");
            put_cstr(b, m->metadata_props[i]->value);
        }
        buf_puts(b, "]");
    }
    header_end(b, n);
}

static void put_id_list(Buf *b, const char *open, char **ids, size_t n, const char *close)
{
    buf_puts(b, open);
    put_ids(b, ids, n);
    buf_puts(b, close);
}

/* A function's name may be a type keyword ("(" follows, as for an op), so it prints bare. */
static void put_function(Buf *b, const Onnx__FunctionProto *f)
{
    int n = 0;
    header_str(b, &n, "domain", f->domain);
    if (f->n_opset_import) {
        header_key(b, &n, "opset_import");
        put_opsets(b, f->opset_import, f->n_opset_import);
    }
    header_str(b, &n, "doc_string", f->doc_string);
    header_end(b, n);
    put_name(b, f->name);
    if (f->n_attribute)
        put_id_list(b, " <", f->attribute, f->n_attribute, ">");
    put_id_list(b, " (", f->input, f->n_input, ")");
    put_id_list(b, " => (", f->output, f->n_output, ")");
    put_nodes(b, f->node, f->n_node, 0);
    buf_puts(b, "\n");
}

void print_text(Buf *out, const Onnx__ModelProto *m)
{
    put_model_header(out, m);
    if (m->graph) {
        put_dropped(out, m->graph);
        put_graph(out, m->graph, 0, 1);
    } else {
        buf_puts(out, "() => ()\n{\n}");
    }
    buf_puts(out, "\n");
    if (m->n_training_info)
        buf_printf(out, "# %zu training info entries not shown\n", m->n_training_info);
    for (size_t i = 0; i < m->n_functions; i++) {
        buf_puts(out, "\n");
        put_function(out, m->functions[i]);
    }
}
