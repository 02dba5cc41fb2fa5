/* graph.c - queries and small builders of the IR for shape rules and passes: shapes,
 * attributes, constants, inputs checked for what an op needs. Nothing here writes C. */
#include <math.h>
#include <string.h>

#include "mlbc.h"

_Noreturn void node_die(Node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    die("node '%s' (%s, opset %d): %s", n->name, n->op, n->opset, msg);
}

int64_t numel_dims(int rank, const int64_t *dim)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dim[i];
    return n;
}

int64_t dims_prod(const int64_t *dim, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= dim[i];
    return p;
}

int64_t numel(const Value *v) { return numel_dims(v->rank, v->dim); }

int same_type(const Value *a, const Value *b)
{
    if (a->dt != b->dt || a->rank != b->rank)
        return 0;
    for (int k = 0; k < a->rank; k++)
        if (a->dim[k] != b->dim[k])
            return 0;
    return 1;
}

const char *shape_str(const Value *v)
{
    if (v->rank < 0)
        return "[?]";
    Buf b = {0};
    buf_puts(&b, "[");
    for (int i = 0; i < v->rank; i++)
        buf_printf(&b, i ? ",%lld" : "%lld", (long long)v->dim[i]);
    buf_puts(&b, "]");
    return b.p;
}

void set_output(Node *n, int i, DType dt, int rank, const int64_t *dim)
{
    if (i >= n->nout || !n->out[i])
        return;
    Value *v = n->out[i];
    if (rank < 0 || rank > MLBC_MAX_RANK)
        node_die(n, "output rank %d is not supported", rank);
    int64_t total = 1;
    for (int k = 0; k < rank; k++) {
        if (dim[k] < 0)
            node_die(n, "output '%s' would have negative dimension %lld", v->name,
                     (long long)dim[k]);
        if (dim[k] && total > MLBC_MAX_TENSOR_BYTES / dim[k])
            node_die(n, "output '%s' is too large; refusing to compile it", v->name);
        total *= dim[k];
    }
    if (total * (int64_t)dtype_size(dt) > MLBC_MAX_TENSOR_BYTES)
        node_die(n, "output '%s' is too large (%lld elements); refusing to compile it",
                 v->name, (long long)total);
    v->dt = dt;
    v->rank = rank;
    if (rank)
        memcpy(v->dim, dim, sizeof(int64_t) * rank);
}

void copy_shape(Node *n, int i, const Value *like, DType dt)
{
    set_output(n, i, dt ? dt : like->dt, like->rank, like->dim);
}

int norm_axis(Node *n, int64_t axis, int rank)
{
    if (axis < -rank || axis >= (rank ? rank : 1))
        node_die(n, "axis %lld is out of range for rank %d", (long long)axis, rank);
    return (int)(axis < 0 ? axis + rank : axis);
}

int axis_view(Node *n, const char *why, int64_t *outer, int64_t *size, int64_t *inner)
{
    Value *x = n->in[0];
    if (!attr(n, "axis")) {
        *outer = *inner = 1;
        *size = numel(x);
        return -1;
    }
    if (x->rank < 1)
        node_die(n, "input '%s' must have rank >= 1 %s", x->name, why);
    int a = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    *outer = dims_prod(x->dim, 0, a);
    *size = x->dim[a];
    *inner = dims_prod(x->dim, a + 1, x->rank);
    return a;
}

void need_type(Node *n, const Value *v, const DType *allowed)
{
    for (; *allowed; allowed++)
        if (v->dt == *allowed)
            return;
    node_die(n, "input '%s' has element type %s, which this op does not support", v->name,
             dtype_name(v->dt));
}

void need_same_type(Node *n, const Value *a, const Value *b)
{
    if (a->dt != b->dt)
        node_die(n, "inputs '%s' (%s) and '%s' (%s) must have the same element type", a->name,
                 dtype_name(a->dt), b->name, dtype_name(b->dt));
}

void need_const(Node *n, int i)
{
    Value *v = input(n, i);
    if (v && !v->data)
        node_die(n, "input %d ('%s') must be a constant (an initializer or computable at "
                 "compile time)", i, v->name);
}

void need_floatish(Node *n, const Value *v)
{
    if (!dtype_is_floatish(v->dt))
        node_die(n, "input '%s' has element type %s; this op needs a float type", v->name,
                 dtype_name(v->dt));
}

void need_scalar(Node *n, const Value *v, const char *what)
{
    if (numel(v) != 1 || v->rank > 1)
        node_die(n, "%s '%s' must be a scalar (or a 1-element tensor), not %s", what, v->name,
                 shape_str(v));
}

Value *input(Node *n, int i) { return i < n->nin ? n->in[i] : NULL; }

int broadcast(Node *n, int ra, const int64_t *da_in, int rb, const int64_t *db_in, int64_t *out)
{
    int64_t da[MLBC_MAX_RANK], db[MLBC_MAX_RANK];  /* out may alias an input */
    if (ra)
        memcpy(da, da_in, sizeof(int64_t) * ra);
    if (rb)
        memcpy(db, db_in, sizeof(int64_t) * rb);
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int64_t a = i - (r - ra) >= 0 ? da[i - (r - ra)] : 1;
        int64_t b = i - (r - rb) >= 0 ? db[i - (r - rb)] : 1;
        if (a != b && a != 1 && b != 1)
            node_die(n, "shapes cannot be broadcast: dimension %d is %lld vs %lld", i,
                     (long long)a, (long long)b);
        out[i] = a == 1 ? b : a;
    }
    return r;
}

/* ---- attributes ---- */

Onnx__AttributeProto *attr(Node *n, const char *name)
{
    for (int i = 0; i < n->nattr; i++)
        if (n->attr[i]->name && !strcmp(n->attr[i]->name, name)) {
            if (n->attr[i]->ref_attr_name && *n->attr[i]->ref_attr_name)
                node_die(n, "attribute '%s' refers to a function attribute outside a function",
                         name);
            return n->attr[i];
        }
    return NULL;
}

int64_t attr_int(Node *n, const char *name, int64_t dflt)
{
    Onnx__AttributeProto *a = attr(n, name);
    return a ? a->i : dflt;
}

double attr_float(Node *n, const char *name, double dflt)
{
    Onnx__AttributeProto *a = attr(n, name);
    return a ? a->f : dflt;
}

const char *attr_str(Node *n, const char *name, const char *dflt)
{
    Onnx__AttributeProto *a = attr(n, name);
    return a ? xstrndup((const char *)a->s.data, a->s.len) : dflt;
}

int attr_ints(Node *n, const char *name, int64_t *out, int max)
{
    Onnx__AttributeProto *a = attr(n, name);
    if (!a)
        return -1;
    if ((int)a->n_ints > max)
        node_die(n, "attribute '%s' has %zu values; at most %d are supported", name,
                 a->n_ints, max);
    if (a->n_ints)
        memcpy(out, a->ints, sizeof(int64_t) * a->n_ints);
    return (int)a->n_ints;
}

int attr_floats(Node *n, const char *name, float *out, int max)
{
    Onnx__AttributeProto *a = attr(n, name);
    if (!a)
        return -1;
    if ((int)a->n_floats > max)
        node_die(n, "attribute '%s' has %zu values; at most %d are supported", name,
                 a->n_floats, max);
    if (a->n_floats)
        memcpy(out, a->floats, sizeof(float) * a->n_floats);
    return (int)a->n_floats;
}

/* ---- constant data ---- */

void alloc_data(Value *v)
{
    int64_t bytes = numel(v) * (int64_t)dtype_size(v->dt);
    v->data = xalloc((size_t)(bytes ? bytes : 1));
}

int const_ints(Node *n, const Value *v, int64_t *out, int max)
{
    if (!v->data)
        node_die(n, "'%s' must be constant", v->name);
    if (v->dt != DT_INT64 && v->dt != DT_INT32)
        node_die(n, "'%s' must be int32 or int64, not %s", v->name, dtype_name(v->dt));
    int64_t count = numel(v);
    if (count > max)
        node_die(n, "'%s' has %lld values; at most %d are supported", v->name,
                 (long long)count, max);
    for (int64_t i = 0; i < count; i++)
        out[i] = value_get_i(v, i);
    return (int)count;
}

/* IEEE half and bfloat16 conversions for constants. */
static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double x = e == 0 ? m / 16777216.0 : e == 31 ? (m ? 0.0 / 0.0 : 1.0 / 0.0)
                                                 : (1 + m / 1024.0) * (double)(1 << e) / 32768.0;
    return h & 0x8000 ? -x : x;
}

static double bf16_to_double(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

double value_get_f(const Value *v, int64_t i)
{
    const void *p = v->data;
    switch (v->dt) {
    case DT_FLOAT: return ((const float *)p)[i];
    case DT_DOUBLE: return ((const double *)p)[i];
    case DT_FLOAT16: return half_to_double(((const uint16_t *)p)[i]);
    case DT_BFLOAT16: return bf16_to_double(((const uint16_t *)p)[i]);
    case DT_UINT64: return (double)((const uint64_t *)p)[i];
    default: return (double)value_get_i(v, i);
    }
}

int value_all_finite(const Value *v)
{
    for (int64_t i = 0; i < numel(v); i++)
        if (!isfinite(value_get_f(v, i)))
            return 0;
    return 1;
}

int64_t value_get_i(const Value *v, int64_t i)
{
    const void *p = v->data;
    switch (v->dt) {
    case DT_INT8: return ((const int8_t *)p)[i];
    case DT_UINT8: case DT_BOOL: return ((const uint8_t *)p)[i];
    case DT_INT16: return ((const int16_t *)p)[i];
    case DT_UINT16: return ((const uint16_t *)p)[i];
    case DT_INT32: return ((const int32_t *)p)[i];
    case DT_UINT32: return ((const uint32_t *)p)[i];
    case DT_INT64: return ((const int64_t *)p)[i];
    case DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    default: {
        double x = value_get_f(v, i);
        return x != x ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
    }
    }
}

void value_set_i(Value *v, int64_t i, int64_t x)
{
    void *p = v->data;
    switch (v->dt) {
    case DT_INT8: ((int8_t *)p)[i] = (int8_t)x; break;
    case DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)x; break;
    case DT_BOOL: ((uint8_t *)p)[i] = x != 0; break;
    case DT_INT16: ((int16_t *)p)[i] = (int16_t)x; break;
    case DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)x; break;
    case DT_INT32: ((int32_t *)p)[i] = (int32_t)x; break;
    case DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)x; break;
    case DT_INT64: ((int64_t *)p)[i] = x; break;
    case DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)x; break;
    default: value_set_f(v, i, (double)x); break;
    }
}

void value_set_f(Value *v, int64_t i, double x)
{
    void *p = v->data;
    switch (v->dt) {
    case DT_FLOAT: ((float *)p)[i] = (float)x; break;
    case DT_DOUBLE: ((double *)p)[i] = x; break;
    case DT_BOOL: ((uint8_t *)p)[i] = x != 0; break;
    case DT_FLOAT16: case DT_BFLOAT16:
        die("internal: folding into %s is not supported", dtype_name(v->dt));
    default:
        value_set_i(v, i, x != x ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN
                                                                          : (int64_t)x);
        break;
    }
}

int use_declared(Node *n, int i, DType dt)
{
    Value *v = i < n->nout ? n->out[i] : NULL;
    if (!v || v->decl_rank < 0)
        return 0;
    for (int k = 0; k < v->decl_rank; k++)
        if (v->decl_dim[k] < 0)
            return 0;
    set_output(n, i, dt, v->decl_rank, v->decl_dim);
    return 1;
}

/* ---- element types ---- */

int dtype_is_half(DType t) { return t == DT_FLOAT16 || t == DT_BFLOAT16; }

int dtype_is_floatish(DType t) { return dtype_is_float(t) || dtype_is_half(t); }

DType calc_type(DType t) { return dtype_is_half(t) ? DT_FLOAT : t; }

int64_t nbytes(const Value *v) { return numel(v) * (int64_t)dtype_size(v->dt); }

/* ---- shape-like inputs ---- */

double no_flops(Node *n) { return 0; }

Value *need_input(Node *n, int i, const char *what)
{
    Value *v = input(n, i);
    if (!v)
        node_die(n, "input %d (%s) is required", i, what);
    if (!dtype_size(v->dt) || v->dt == DT_STRING)
        node_die(n, "input '%s' has element type %s, which is not supported", v->name,
                 dtype_name(v->dt));
    return v;
}

Value *need_ints(Node *n, int i, const char *what)
{
    Value *v = need_input(n, i, what);
    if (v->dt != DT_INT64 && v->dt != DT_INT32)
        node_die(n, "input %d (%s) must be int64, not %s", i, what, dtype_name(v->dt));
    if (v->rank > 1)
        node_die(n, "input %d (%s) must be 1-D, not of shape %s", i, what, shape_str(v));
    return v;
}

int64_t ints_count(const Value *v) { return v->rank ? v->dim[0] : 1; }

void declared_or_die(Node *n, int out, DType dt, int in)
{
    if (!use_declared(n, out, dt))
        node_die(n, "output '%s' depends on the data of input '%s', which is not constant; "
                 "make that input an initializer or declare a static shape for '%s'",
                 n->out[out]->name, n->in[in]->name, n->out[out]->name);
}

const char *dims_doc(const Value *v) { return strf("%s%s", dtype_name(v->dt), shape_str(v)); }

int op_has(const Node *n, int flag) { return n->def && (n->def->flags & flag); }

Value *read_output(const Node *n, int i)
{
    Value *v = i < n->nout ? n->out[i] : NULL;
    return v && (v->nuse > 0 || v->result_index >= 0) ? v : NULL;
}

static int is_scalar(const Value *x)
{
    return x && x->rank >= 0 && x->rank <= 1 && numel(x) == 1;
}

/* A value whose shape depends on data (Range's length) may take it from downstream: a value
 * with a declared static shape that it reaches through elementwise nodes whose other operands
 * are already inferred scalars has exactly its shape (the run-time check of the rule that
 * asked still compares the data with it). */
int declared_downstream(const Value *v, int rank, int64_t *dim)
{
    const Graph *g = v->graph;
    const Value **same = xalloc(sizeof *same * (g->nvalues + 1));
    int nsame = 0;
    same[nsame++] = v;
    for (int grew = 1; grew;) {
        grew = 0;
        for (int i = 0; i < g->nnodes; i++) {
            Node *m = g->nodes[i];
            if (m->dead || !op_has(m, OP_ELEMENTWISE) || m->out[0]->rank >= 0)
                continue;
            int linked = 0, ok = 1;
            for (int k = 0; k < m->nin && ok; k++) {
                int in_same = 0;
                for (int j = 0; j < nsame && !in_same; j++)
                    in_same = m->in[k] == same[j];
                linked |= in_same;
                ok = in_same || is_scalar(m->in[k]);
            }
            const Value *w = m->out[0];
            int known = 0;
            for (int j = 0; j < nsame && !known; j++)
                known = w == same[j];
            if (!ok || !linked || known)
                continue;
            if (w->decl_rank == rank) {
                int fixed = 1;
                for (int d = 0; d < rank; d++)
                    fixed &= w->decl_dim[d] >= 0;
                if (fixed) {
                    memcpy(dim, w->decl_dim, sizeof(int64_t) * rank);
                    return 1;
                }
            }
            same[nsame++] = w;
            grew = 1;
        }
    }
    return 0;
}
