/* op_shape.c - Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (copies of the data
 * under another shape), Shape and Size (known from the static shapes alone), Constant,
 * ConstantOfShape, Expand, Range and EyeLike.
 *
 * Shapes are static, so a shape-like input (Reshape's shape, Squeeze's axes, Expand's shape,
 * ConstantOfShape's input, Range's bounds) is normally a constant, folded by now. Where it is
 * not, the output takes its declared static shape (Range: or one declared downstream, see
 * declared_downstream in infer.c) and a run-time check compares the data with it (templates
 * shape_check, shape_axes; Range checks inside its kernel).
 *
 * Reshape-like ops (OP_VIEW) normally cost nothing: the planner makes the output share the
 * input's buffer (plan.c). Where it cannot (the output is a graph result) they copy with one
 * memcpy.
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

/* Folding an op whose output is larger than its inputs (ConstantOfShape, Expand, Range,
 * EyeLike) turns the output into an embedded array; beyond this size a kernel is better. */
#define FOLD_MAX_BYTES (64 * 1024)

/* ---- reshape-like: the data are copied unchanged ---- */

static int copy_fold(Node *n)
{
    memcpy(n->out[0]->data, n->in[0]->data, (size_t)nbytes(n->out[0]));
    return 1;
}

static void copy_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    if (y->alias)
        stmt(e, "/* no copy: the output shares the input's buffer */");
    else if (nbytes(y))
        stmt(e, "memcpy(%s, %s, %s); /* %s -> %s */", ref(e, y), ref(e, x), lit(nbytes(y)),
             dims_doc(x), dims_doc(y));
}

/* The element count may not change under a reshape. */
static void same_count(Node *n)
{
    if (numel(n->in[0]) != numel(n->out[0]))
        node_die(n, "cannot reshape %s (%lld elements) to %s (%lld elements)",
                 shape_str(n->in[0]), (long long)numel(n->in[0]), shape_str(n->out[0]),
                 (long long)numel(n->out[0]));
}

static void reshape_infer(Node *n)
{
    Value *x = need_input(n, 0, "data");
    int64_t s[MLBC_MAX_RANK], dim[MLBC_MAX_RANK];
    int k, allowzero = n->opset >= 14 && attr_int(n, "allowzero", 0);
    if (n->opset < 5) {
        k = attr_ints(n, "shape", s, MLBC_MAX_RANK);
        if (k < 0)
            node_die(n, "attribute 'shape' is required");
    } else {
        Value *sv = need_ints(n, 1, "shape");
        if (!sv->data) {
            declared_or_die(n, 0, x->dt, 1);
            if (n->out[0]->rank != ints_count(sv))
                node_die(n, "the shape input has %lld values but output '%s' is declared "
                         "with rank %d", (long long)ints_count(sv), n->out[0]->name,
                         n->out[0]->rank);
            same_count(n);
            return;
        }
        k = const_ints(n, sv, s, MLBC_MAX_RANK);
    }
    int infer_at = -1;
    int64_t known = 1;
    for (int i = 0; i < k; i++) {
        if (s[i] == -1) {
            if (infer_at >= 0)
                node_die(n, "the shape has more than one -1");
            infer_at = i;
            continue;
        }
        if (s[i] < -1)
            node_die(n, "the shape has invalid dimension %lld", (long long)s[i]);
        if (s[i] == 0 && !allowzero) {
            if (i >= x->rank)
                node_die(n, "shape[%d] is 0 (copy the input's dimension) but the input has "
                         "rank %d", i, x->rank);
            dim[i] = x->dim[i];
        } else {
            dim[i] = s[i];
        }
        if (dim[i] > MLBC_MAX_TENSOR_BYTES || (dim[i] && known > MLBC_MAX_TENSOR_BYTES / dim[i]))
            node_die(n, "shape[%d] = %lld makes the output too large", i, (long long)dim[i]);
        known *= dim[i];
    }
    if (infer_at >= 0) {
        if (known == 0 || numel(x) % known)
            node_die(n, "cannot reshape %s: the -1 dimension cannot be inferred (the other "
                     "dimensions multiply to %lld)", shape_str(x), (long long)known);
        dim[infer_at] = numel(x) / known;
    }
    set_output(n, 0, x->dt, k, dim);
    same_count(n);
}

/* Non-constant shape: each s[i] must give the declared dimension. */
static void reshape_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0], *sv = input(n, 1);
    if (n->opset >= 5 && sv && !sv->data && y->rank) {
        int allowzero = n->opset >= 14 && attr_int(n, "allowzero", 0);
        Buf c = {0}, neg = {0};
        for (int i = 0; i < y->rank; i++) {
            int zero_ok = !allowzero && i < x->rank && x->dim[i] == y->dim[i];
            cond_and(&c, strf("(s[%d] == %s || s[%d] == -1%s)", i, lit(y->dim[i]), i,
                              zero_ok ? strf(" || s[%d] == 0", i) : ""));
            buf_printf(&neg, "%s(s[%d] == -1)", i ? " + " : "", i);
        }
        if (y->rank > 1)
            cond_and(&c, strf("%s <= 1", neg.p));
        emit_check(e, n, sv, c.p, strf("Reshape: the shape input gives %s", shape_str(y)));
    }
    copy_emit(e, n);
}

static void flatten_infer(Node *n)
{
    Value *x = need_input(n, 0, "input");
    int64_t axis = attr_int(n, "axis", 1);
    if (axis < -x->rank || axis > x->rank)
        node_die(n, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
    if (axis < 0)
        axis += x->rank;
    int64_t dim[2] = {numel_dims((int)axis, x->dim),
                      numel_dims(x->rank - (int)axis, x->dim + axis)};
    set_output(n, 0, x->dt, 2, dim);
}

/* Axes of Squeeze/Unsqueeze: attribute before opset 13, input 1 from 13. Returns the count,
 * -1 if absent, -2 if given by a non-constant input. */
static int get_axes(Node *n, int64_t *ax)
{
    if (n->opset < 13)
        return attr_ints(n, "axes", ax, MLBC_MAX_RANK);
    if (!input(n, 1))
        return -1;
    Value *a = need_ints(n, 1, "axes");
    if (!a->data)
        return -2;
    return const_ints(n, a, ax, MLBC_MAX_RANK);
}

static void squeeze_infer(Node *n)
{
    Value *x = need_input(n, 0, "data");
    int64_t ax[MLBC_MAX_RANK], dim[MLBC_MAX_RANK];
    int k = get_axes(n, ax), drop[MLBC_MAX_RANK] = {0}, r = 0;
    if (k == -2) {
        declared_or_die(n, 0, x->dt, 1);
        if (n->out[0]->rank != x->rank - ints_count(n->in[1]))
            node_die(n, "%lld axes are squeezed from rank %d but output '%s' is declared "
                     "with rank %d", (long long)ints_count(n->in[1]), x->rank,
                     n->out[0]->name, n->out[0]->rank);
        same_count(n);
        return;
    }
    for (int i = 0; i < k; i++) {
        int a = norm_axis(n, ax[i], x->rank);
        if (x->dim[a] != 1)
            node_die(n, "cannot squeeze axis %d of %s: its dimension is not 1", a,
                     shape_str(x));
        drop[a] = 1;
    }
    for (int i = 0; i < x->rank; i++)
        if (k < 0 ? x->dim[i] != 1 : !drop[i])
            dim[r++] = x->dim[i];
    set_output(n, 0, x->dt, r, dim);
}

static void unsqueeze_infer(Node *n)
{
    Value *x = need_input(n, 0, "data");
    int64_t ax[MLBC_MAX_RANK], dim[MLBC_MAX_RANK];
    int k = get_axes(n, ax), ins[MLBC_MAX_RANK] = {0};
    if (k == -1)
        node_die(n, n->opset < 13 ? "attribute 'axes' is required" : "input 1 (axes) is required");
    if (k == -2) {
        declared_or_die(n, 0, x->dt, 1);
        if (n->out[0]->rank != x->rank + ints_count(n->in[1]))
            node_die(n, "%lld axes are inserted into rank %d but output '%s' is declared "
                     "with rank %d", (long long)ints_count(n->in[1]), x->rank,
                     n->out[0]->name, n->out[0]->rank);
        same_count(n);
        return;
    }
    int r = x->rank + k;
    if (r > MLBC_MAX_RANK)
        node_die(n, "output rank %d is not supported (at most %d)", r, MLBC_MAX_RANK);
    for (int i = 0; i < k; i++) {
        int a = norm_axis(n, ax[i], r);
        if (ins[a])
            node_die(n, "axis %d is given twice", a);
        ins[a] = 1;
    }
    for (int i = 0, j = 0; i < r; i++)
        dim[i] = ins[i] ? 1 : x->dim[j++];
    set_output(n, 0, x->dt, r, dim);
}

/* Non-constant axes: check them at run time with template shape_axes. */
static void axes_emit(Emit *e, Node *n)
{
    Value *a = input(n, 1);
    if (n->opset >= 13 && a && !a->data && ints_count(a) > 0) {
        int sq = !strcmp(n->op, "Squeeze");
        const Value *full = sq ? n->in[0] : n->out[0], *part = sq ? n->out[0] : n->in[0];
        Buf f = {0}, p = {0};
        for (int i = 0; i < full->rank; i++)
            buf_printf(&f, "%s%s", i ? ", " : "", lit(full->dim[i]));
        for (int i = 0; i < part->rank; i++)
            buf_printf(&p, "%s%s", i ? ", " : "", lit(part->dim[i]));
        const char *why = strf("%s: the axes input turns %s into %s", n->op,
                               shape_str(n->in[0]), shape_str(n->out[0]));
        const char *fn = kernel(e, n, "shape_axes", "DOC", why, "T", dtype_ctype(a->dt),
            "R", strf("%d", full->rank), "RP1", strf("%d", part->rank ? part->rank : 1),
            "FULL", f.p ? f.p : "0", "PART", p.p ? p.p : "0",
            "FOR_K", loop_head("", "i", ints_count(a), 1), NULL);
        check(e, strf("%s(%s)", fn, ref(e, a)), why);
    }
    copy_emit(e, n);
}

static void identity_infer(Node *n)
{
    Value *x = need_input(n, 0, "input");
    copy_shape(n, 0, x, DT_UNDEF);
}

/* ---- Dropout: inference only ---- */

/* Dropout is the identity unless training_mode is true and the ratio is not 0 (then it is
 * random, which mlbc does not compile). A training_mode that is not constant is checked at
 * run time. */
static int ratio_is_zero(Node *n)
{
    Value *r = input(n, 1);
    return r && r->data && value_get_f(r, 0) == 0;
}

static void dropout_infer(Node *n)
{
    Value *x = need_input(n, 0, "data");
    Value *r = input(n, 1), *tm = input(n, 2);
    if (n->opset >= 12 && r && numel(r) != 1)
        node_die(n, "ratio must be a scalar, not of shape %s", shape_str(r));
    if (n->opset >= 12 && tm) {
        if (tm->dt != DT_BOOL || numel(tm) != 1)
            node_die(n, "training_mode must be a bool scalar");
        if (tm->data && value_get_i(tm, 0) && !ratio_is_zero(n))
            node_die(n, "training_mode is true; mlbc compiles inference only (dropout in "
                     "training mode is random)");
    }
    copy_shape(n, 0, x, DT_UNDEF);
    copy_shape(n, 1, x, n->opset >= 10 ? DT_BOOL : x->dt);
}

/* The mask is all ones: every element is kept. */
static const void *one_of(DType t)
{
    static const float f = 1;
    static const double d = 1;
    static const uint16_t h = 0x3c00, bf = 0x3f80;
    static const int64_t i = 1;  /* little-endian: the low bytes read as 1 at any width */
    return t == DT_FLOAT ? (const void *)&f : t == DT_DOUBLE ? (const void *)&d
         : t == DT_FLOAT16 ? (const void *)&h : t == DT_BFLOAT16 ? (const void *)&bf
         : (const void *)&i;
}

static void fill_data(Value *v, const void *elem)
{
    size_t es = dtype_size(v->dt);
    for (int64_t i = 0; i < numel(v); i++)
        memcpy((char *)v->data + i * es, elem, es);
}

static int dropout_fold(Node *n)
{
    copy_fold(n);
    if (n->nout > 1 && n->out[1])
        fill_data(n->out[1], one_of(n->out[1]->dt));
    return 1;
}

static void emit_fill(Emit *e, Node *n, Value *y, const void *elem)
{
    if (!numel(y))
        return;
    const char *v = elem_lit(y->dt, elem);
    const char *fn = kernel(e, n, "shape_fill", "DOC", strf("%s: %s = %s", n->op, dims_doc(y), v),
                            "T", dtype_ctype(y->dt), "N", lit(numel(y)), "V", v, NULL);
    stmt(e, "%s(%s);", fn, ref(e, y));
}

static void dropout_emit(Emit *e, Node *n)
{
    Value *r = input(n, 1), *tm = input(n, 2);
    if (n->opset >= 12 && tm && !tm->data && !ratio_is_zero(n)) {
        const char *cond = strf("!%s[0]", ref(e, tm));
        if (r && !r->data)
            cond = strf("%s || %s[0] == 0", cond, ref(e, r));
        check(e, cond, "Dropout: training_mode is true (random dropout is not compiled)");
    }
    copy_emit(e, n);
    if (n->nout > 1 && n->out[1])
        emit_fill(e, n, n->out[1], one_of(n->out[1]->dt));
}

/* ---- Shape, Size: the result is known from the static shape; no code ---- */

static void shape_infer(Node *n)
{
    Value *x = need_input(n, 0, "data");
    int64_t r = x->rank, start = 0, end = r;
    if (n->opset >= 15) {
        start = attr_int(n, "start", 0);
        end = attr_int(n, "end", r);
    }
    start = start < 0 ? start + r : start;
    end = end < 0 ? end + r : end;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t count = end > start ? end - start : 0;
    set_output(n, 0, DT_INT64, 1, &count);
    Value *y = n->out[0];
    alloc_data(y);
    for (int64_t i = 0; i < count; i++)
        ((int64_t *)y->data)[i] = x->dim[start + i];
    n->dead = 1;
}

static void size_infer(Node *n)
{
    Value *x = need_input(n, 0, "data");
    static const int64_t scalar[1] = {0};
    set_output(n, 0, DT_INT64, 0, scalar);
    alloc_data(n->out[0]);
    *(int64_t *)n->out[0]->data = numel(x);
    n->dead = 1;
}

/* Never emitted (the node is dead once its output is known); kept for the table's shape. */
static void nothing_emit(Emit *e, Node *n) {}

/* ---- Constant: the output is the attribute's value ---- */

static void constant_infer(Node *n)
{
    Onnx__AttributeProto *a = NULL;
    int found = 0;
    for (int i = 0; i < n->nattr; i++) {
        const char *nm = n->attr[i]->name ? n->attr[i]->name : "";
        if (!strncmp(nm, "value", 5) || !strcmp(nm, "sparse_value")) {
            a = attr(n, nm);
            found++;
        }
    }
    if (found != 1)
        node_die(n, "exactly one value attribute is required, found %d", found);
    Value *y = n->out[0];
    const char *nm = a->name;
    if (!y)
        node_die(n, "output 0 is required");
    if (!strcmp(nm, "value")) {
        if (!a->t)
            node_die(n, "attribute 'value' holds no tensor");
        if (a->t->data_type == DT_STRING)
            node_die(n, "string constants are not supported");
        tensor_to_value(a->t, y);
    } else if (!strcmp(nm, "value_float") || !strcmp(nm, "value_int")) {
        int f = nm[6] == 'f';
        static const int64_t scalar[1] = {0};
        set_output(n, 0, f ? DT_FLOAT : DT_INT64, 0, scalar);
        alloc_data(y);
        if (f)
            *(float *)y->data = a->f;
        else
            *(int64_t *)y->data = a->i;
    } else if (!strcmp(nm, "value_floats") || !strcmp(nm, "value_ints")) {
        int f = nm[6] == 'f';
        int64_t count = f ? (int64_t)a->n_floats : (int64_t)a->n_ints;
        set_output(n, 0, f ? DT_FLOAT : DT_INT64, 1, &count);
        alloc_data(y);
        if (count)
            memcpy(y->data, f ? (void *)a->floats : (void *)a->ints, (size_t)nbytes(y));
    } else if (!strcmp(nm, "sparse_value")) {
        node_die(n, "sparse constants are not supported");
    } else if (!strcmp(nm, "value_string") || !strcmp(nm, "value_strings")) {
        node_die(n, "string constants are not supported");
    } else {
        node_die(n, "unknown attribute '%s'", nm);
    }
    n->dead = 1;
}

/* ---- ConstantOfShape ---- */

typedef struct Fill {
    DType dt;
    unsigned char elem[8];
} Fill;

static void constantofshape_infer(Node *n)
{
    Value *s = need_ints(n, 0, "input");
    Fill *f = xalloc(sizeof *f);
    f->dt = DT_FLOAT;
    Onnx__AttributeProto *a = attr(n, "value");
    if (a) {
        if (!a->t)
            node_die(n, "attribute 'value' holds no tensor");
        if (a->t->data_type == DT_STRING)
            node_die(n, "string values are not supported");
        Value tmp = {.name = "value"};
        tensor_to_value(a->t, &tmp);
        if (numel(&tmp) != 1)
            node_die(n, "attribute 'value' must hold one element, not %lld",
                     (long long)numel(&tmp));
        f->dt = tmp.dt;
        memcpy(f->elem, tmp.data, dtype_size(tmp.dt));
    }
    n->aux = f;
    if (!s->data) {
        declared_or_die(n, 0, f->dt, 0);
        if (n->out[0]->rank != ints_count(s))
            node_die(n, "the shape input has %lld values but output '%s' is declared with "
                     "rank %d", (long long)ints_count(s), n->out[0]->name, n->out[0]->rank);
        return;
    }
    int64_t dim[MLBC_MAX_RANK];
    int k = const_ints(n, s, dim, MLBC_MAX_RANK);
    set_output(n, 0, f->dt, k, dim);
}

static int constantofshape_fold(Node *n)
{
    const Fill *f = n->aux;
    if (nbytes(n->out[0]) > FOLD_MAX_BYTES)
        return 0;
    fill_data(n->out[0], f->elem);
    return 1;
}

/* Non-constant shape-like input S: s[i] must equal the output's dimension i. */
static void check_dims(Emit *e, Node *n, const Value *s, const Value *y)
{
    if (s->data || !y->rank)
        return;
    Buf c = {0};
    for (int i = 0; i < y->rank; i++)
        cond_and(&c, strf("s[%d] == %s", i, lit(y->dim[i])));
    emit_check(e, n, s, c.p, strf("%s: the shape input gives %s", n->op, shape_str(y)));
}

static void constantofshape_emit(Emit *e, Node *n)
{
    const Fill *f = n->aux;
    check_dims(e, n, n->in[0], n->out[0]);
    emit_fill(e, n, n->out[0], f->elem);
}

/* ---- Expand ---- */

static void expand_infer(Node *n)
{
    Value *x = need_input(n, 0, "input"), *s = need_ints(n, 1, "shape");
    int64_t k = ints_count(s);
    if (k > MLBC_MAX_RANK)
        node_die(n, "the shape has %lld values; at most %d are supported", (long long)k,
                 MLBC_MAX_RANK);
    if (!s->data) {
        declared_or_die(n, 0, x->dt, 1);
        Value *y = n->out[0];
        if (y->rank != (k > x->rank ? k : x->rank))
            node_die(n, "output '%s' is declared with rank %d; expanding rank %d by a shape "
                     "of %lld values gives rank %lld", y->name, y->rank, x->rank,
                     (long long)k, (long long)(k > x->rank ? k : x->rank));
        for (int i = 0; i < x->rank; i++) {
            int64_t d = x->dim[i], o = y->dim[i + y->rank - x->rank];
            if (d != 1 && d != o)
                node_die(n, "input %s cannot be expanded to the declared shape %s",
                         shape_str(x), shape_str(y));
        }
        return;
    }
    int64_t sd[MLBC_MAX_RANK], dim[MLBC_MAX_RANK];
    const_ints(n, s, sd, MLBC_MAX_RANK);
    int r = broadcast(n, x->rank, x->dim, (int)k, sd, dim);
    set_output(n, 0, x->dt, r, dim);
}

static int expand_fold(Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    if (nbytes(y) > FOLD_MAX_BYTES && nbytes(y) > nbytes(x))
        return 0;
    int64_t st[MLBC_MAX_RANK];
    size_t es = dtype_size(y->dt);
    bcast_strides(x, y->rank, y->dim, st);
    for (int64_t i = 0; i < numel(y); i++) {
        int64_t rem = i, src = 0;
        for (int d = y->rank - 1; d >= 0; d--) {
            src += rem % y->dim[d] * st[d];
            rem /= y->dim[d];
        }
        memcpy((char *)y->data + i * es, (char *)x->data + src * es, es);
    }
    return 1;
}

static void expand_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *s = n->in[1], *y = n->out[0];
    if (!s->data) {
        /* Aligned from the right, s[j] broadcast with the input's dimension gives y's. */
        Buf c = {0};
        int k = (int)ints_count(s);
        for (int j = 0; j < k; j++) {
            int axis = y->rank - k + j, xi = axis - (y->rank - x->rank);
            int64_t d = xi >= 0 ? x->dim[xi] : 1, o = y->dim[axis];
            cond_and(&c, d == o && o != 1 ? strf("(s[%d] == 1 || s[%d] == %s)", j, j, lit(o))
                                          : strf("s[%d] == %s", j, lit(o)));
        }
        if (k)
            emit_check(e, n, s, c.p, strf("Expand: the shape input gives %s from %s",
                                          shape_str(y), shape_str(x)));
    }
    if (!numel(y))
        return;
    int64_t st[MLBC_MAX_OPERANDS][MLBC_MAX_RANK];
    dense_strides(y->rank, y->dim, st[0]);
    bcast_strides(x, y->rank, y->dim, st[1]);
    Loops l = loop_nest(y->rank, y->dim, 2, st);
    const char *fn = kernel(e, n, "shape_expand",
        "DOC", strf("Expand: %s -> %s", dims_doc(x), shape_str(y)), "T", dtype_ctype(y->dt),
        "OPEN", l.open, "CLOSE", l.close, "INDENT", l.indent, "IY", l.idx[0],
        "IX", l.idx[1], NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

/* ---- Range ---- */

static const DType range_types[] = {DT_FLOAT, DT_DOUBLE, DT_INT16, DT_INT32, DT_INT64, DT_UNDEF};

/* Element count from constant bounds: max(ceil((limit - start) / delta), 0). */
static int64_t range_count(Node *n, const Value *s, const Value *l, const Value *d)
{
    if (dtype_is_float(s->dt)) {
        double a = value_get_f(s, 0), b = value_get_f(l, 0), c = value_get_f(d, 0);
        if (c == 0 || isnan(a) || isnan(b) || isnan(c))
            node_die(n, "delta is 0 or a bound is NaN");
        double k = ceil((b - a) / c);
        if (!(k < 1e15))
            node_die(n, "the range has too many elements");
        return k > 0 ? (int64_t)k : 0;
    }
    int64_t a = value_get_i(s, 0), b = value_get_i(l, 0), c = value_get_i(d, 0);
    if (c == 0)
        node_die(n, "delta is 0");
    double q = ((double)b - (double)a) / (double)c;  /* exact enough to bound the count */
    if (q <= 0)
        return 0;
    if (q > 1e15)
        node_die(n, "the range has too many elements");
    int64_t df = b - a;  /* same sign as c, |df| < 1e15 * |c|: no overflow */
    return df / c + (df % c != 0);
}

static void range_infer(Node *n)
{
    Value *in[3];
    for (int i = 0; i < 3; i++) {
        in[i] = need_input(n, i, i == 0 ? "start" : i == 1 ? "limit" : "delta");
        need_type(n, in[i], range_types);
        need_same_type(n, in[0], in[i]);
        if (numel(in[i]) != 1)
            node_die(n, "'%s' must be a scalar, not of shape %s", in[i]->name,
                     shape_str(in[i]));
    }
    if (!in[0]->data || !in[1]->data || !in[2]->data) {
        int64_t len;
        if (!use_declared(n, 0, in[0]->dt)) {
            if (!declared_downstream(n->out[0], 1, &len))
                declared_or_die(n, 0, in[0]->dt, !in[0]->data ? 0 : !in[1]->data ? 1 : 2);
            set_output(n, 0, in[0]->dt, 1, &len);
        }
        if (n->out[0]->rank != 1)
            node_die(n, "output '%s' must be declared 1-D", n->out[0]->name);
        return;
    }
    int64_t count = range_count(n, in[0], in[1], in[2]);
    set_output(n, 0, in[0]->dt, 1, &count);
}

static int range_fold(Node *n)
{
    Value *y = n->out[0];
    if (nbytes(y) > FOLD_MAX_BYTES)
        return 0;
    for (int64_t i = 0; i < numel(y); i++) {
        switch (y->dt) {
        case DT_FLOAT: {    /* as the kernel: mlbc_maddf((float)i, d, s) */
            float s = (float)value_get_f(n->in[0], 0), d = (float)value_get_f(n->in[2], 0);
            ((float *)y->data)[i] = (float)((double)(float)i * d + s);
            break;
        }
        case DT_DOUBLE:     /* mlbc_madd((double)i, d, s) */
            ((double *)y->data)[i] = fma((double)i, value_get_f(n->in[2], 0),
                                         value_get_f(n->in[0], 0));
            break;
        default:
            value_set_i(y, i, (int64_t)((uint64_t)value_get_i(n->in[0], 0) +
                                        (uint64_t)i * (uint64_t)value_get_i(n->in[2], 0)));
            break;
        }
    }
    return 1;
}

static void range_emit(Emit *e, Node *n)
{
    Value *y = n->out[0];
    int dyn = !n->in[0]->data || !n->in[1]->data || !n->in[2]->data;
    const char *chk = "    (void)limit;\n";
    if (dyn)
        chk = strf("    {\n"
                   "        const double c = ceil(((double)limit[0] - (double)s) / (double)d);\n"
                   "        if (%s)\n"
                   "            return 0;\n"
                   "    }\n",
                   numel(y) ? strf("c != %lld.0", (long long)numel(y)) : "c > 0 || c != c");
    const char *why = strf("Range: %s", dims_doc(y));
    const char *T = dtype_ctype(y->dt);
    const char *fn = kernel(e, n, "shape_range", "DOC", why, "T", T, "N", lit(numel(y)),
                            "CHECK", chk, "VALUE", madd(y->dt, strf("(%s)i", T), "d", "s"), NULL);
    const char *call = strf("%s(%s, %s, %s, %s)", fn, ref(e, n->in[0]), ref(e, n->in[1]),
                            ref(e, n->in[2]), ref(e, y));
    if (dyn)
        check(e, call, strf("%s: the inputs give %lld elements", why, (long long)numel(y)));
    else
        stmt(e, "%s;", call);
}

/* ---- EyeLike ---- */

static void eyelike_infer(Node *n)
{
    Value *x = need_input(n, 0, "input");
    if (x->rank != 2)
        node_die(n, "the input must be 2-D, not of shape %s", shape_str(x));
    DType t = (DType)attr_int(n, "dtype", x->dt);
    if (t <= 0 || t >= DT_COUNT || !dtype_size(t) || t == DT_STRING)
        node_die(n, "dtype %d is not supported", (int)t);
    copy_shape(n, 0, x, t);
}

/* Rows [i0, i1) cross diagonal k. */
static void eye_rows(const Value *y, int64_t k, int64_t *i0, int64_t *i1)
{
    int64_t rows = y->dim[0], cols = y->dim[1];
    *i0 = k < 0 ? -k : 0;
    *i1 = cols - k < rows ? cols - k : rows;
    if (*i1 < *i0)
        *i1 = *i0;
}

static int eyelike_fold(Node *n)
{
    Value *y = n->out[0];
    if (nbytes(y) > FOLD_MAX_BYTES)
        return 0;
    int64_t k = attr_int(n, "k", 0), i0, i1;
    size_t es = dtype_size(y->dt);
    eye_rows(y, k, &i0, &i1);
    for (int64_t i = i0; i < i1; i++)
        memcpy((char *)y->data + (i * y->dim[1] + i + k) * es, one_of(y->dt), es);
    return 1;
}

static void eyelike_emit(Emit *e, Node *n)
{
    Value *y = n->out[0];
    if (!numel(y))
        return;
    int64_t k = attr_int(n, "k", 0), i0, i1;
    eye_rows(y, k, &i0, &i1);
    const char *idx = strf("i * %s", lit(y->dim[1] + 1));
    if (k)
        idx = strf("%s %c %s", idx, k < 0 ? '-' : '+', lit(k < 0 ? -k : k));
    const char *fn = kernel(e, n, "shape_eyelike",
        "DOC", strf("EyeLike: %s, ones on diagonal %lld", dims_doc(y), (long long)k),
        "T", dtype_ctype(y->dt), "BYTES", lit(nbytes(y)), "I0", lit(i0), "I1", lit(i1),
        "IDX", idx, "ONE", elem_lit(y->dt, one_of(y->dt)), NULL);
    stmt(e, "%s(%s);", fn, ref(e, y));
}

const OpDef ops_shape[] = {
    {"Reshape", reshape_infer, copy_fold, reshape_emit, no_flops, OP_VIEW},
    {"Flatten", flatten_infer, copy_fold, copy_emit, no_flops, OP_VIEW},
    {"Squeeze", squeeze_infer, copy_fold, axes_emit, no_flops, OP_VIEW},
    {"Unsqueeze", unsqueeze_infer, copy_fold, axes_emit, no_flops, OP_VIEW},
    {"Identity", identity_infer, copy_fold, copy_emit, no_flops, OP_VIEW},
    {"Dropout", dropout_infer, dropout_fold, dropout_emit, no_flops, 0},
    {"Shape", shape_infer, NULL, nothing_emit, no_flops, 0},
    {"Size", size_infer, NULL, nothing_emit, no_flops, 0},
    {"Constant", constant_infer, NULL, nothing_emit, no_flops, 0},
    {"ConstantOfShape", constantofshape_infer, constantofshape_fold, constantofshape_emit, no_flops, 0},
    {"Expand", expand_infer, expand_fold, expand_emit, no_flops, 0},
    {"Range", range_infer, range_fold, range_emit, NULL, 0},
    {"EyeLike", eyelike_infer, eyelike_fold, eyelike_emit, no_flops, 0},
    {0},
};
