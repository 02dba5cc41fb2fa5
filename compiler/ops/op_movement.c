/* op_movement.c - data movement with data-dependent addressing: Slice, Gather,
 * GatherElements, GatherND, ScatterElements (and its deprecated alias Scatter), ScatterND,
 * Trilu, OneHot, ReverseSequence, Compress.
 *
 * These ops move elements without looking at their values, so every element type works the
 * same way (bool as one byte, float16/bfloat16 as their raw 16 bits); only the scatter
 * reductions compute. Kernels are specialised to the static shapes and copy contiguous runs
 * with memcpy.
 *
 * Indices, lengths and slice parameters read from tensors at run time are checked before
 * use: such a kernel returns int, non-zero on bad data, and its call is a check() so the run
 * function returns 2 instead of touching memory out of bounds. Constant indices are checked
 * here, at compile time. Where the output's shape depends on run-time data (Slice with
 * non-constant parameters, OneHot depth, Compress condition) the declared output shape is
 * used (use_declared) and the kernel checks that the data agree with it.
 */
#include <string.h>

#include "mlbc.h"

static const DType index_types[] = {DT_INT32, DT_INT64, DT_UNDEF};

/* ---- helpers ---- */

static const char *ct(const Value *v) { return dtype_ctype(v->dt); }

/* Any element type with a fixed size can be moved. */
static void need_movable(Node *n, const Value *v)
{
    if (!dtype_size(v->dt) || v->dt == DT_STRING)
        node_die(n, "input '%s' has element type %s, which is not supported", v->name,
                 dtype_name(v->dt));
}

static void need_inputs(Node *n, int min, int max)
{
    if (n->nin < min || n->nin > max)
        node_die(n, "takes %d to %d inputs, got %d", min, max, n->nin);
    for (int i = 0; i < min; i++)
        if (!n->in[i])
            node_die(n, "input %d is required", i);
}

/* Constant indices are checked when the model is compiled: [-n, n) is valid. */
static void check_const_indices(Node *n, const Value *ind, int64_t size, const char *what)
{
    if (!ind->data)
        return;
    for (int64_t i = 0; i < numel(ind); i++) {
        int64_t k = value_get_i(ind, i);
        if (k < -size || k >= size)
            node_die(n, "%s %lld (element %lld of '%s') is out of range for size %lld", what,
                     (long long)k, (long long)i, ind->name, (long long)size);
    }
}

/* Call a kernel that returns non-zero on bad data; run then returns 2. DATA is the tensor
 * whose contents are checked: if the code holds it, it was checked at compile time and the
 * call cannot fail. */
static void call_checked(Emit *e, const Value *data, const char *fn, const char *args,
                         const char *why)
{
    if (value_in_code(e, data))
        stmt(e, "%s(%s); /* cannot fail: '%s' is constant */", fn, args,
             c_comment(data->name));
    else
        check(e, strf("%s(%s) == 0", fn, args), why);
}

/* "a, b, c" of integer literals. */
static const char *lit_list(int n, const int64_t *x)
{
    Buf b = {0};
    for (int i = 0; i < n; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", lit(x[i]));
    return b.p ? b.p : "";
}

/* Checks of one index coordinate in a generated loop: t[j] into axis size `size` with
 * stride `stride`, accumulated in `off` (GatherND, ScatterND). */
static void coord_lines(Buf *b, const char *ind, int j, int64_t size, int64_t stride,
                        const char *ind_)
{
    buf_printf(b, "%si = (long)%s[%d] + (%s[%d] < 0 ? %s : 0);\n", ind_, ind, j, ind, j,
               lit(size));
    buf_printf(b, "%sif (i < 0 || i >= %s)\n%s    return 1;\n", ind_, lit(size), ind_);
    if (stride == 1)
        buf_printf(b, "%soff += i;\n", ind_);
    else
        buf_printf(b, "%soff += i * %s;\n", ind_, lit(stride));
}

/* The scatter reductions: DST (an lvalue) combined with SRC. */
static const char *parse_reduction(Node *n)
{
    const char *r = attr_str(n, "reduction", "none");
    if (!strcmp(r, "none") || (n->opset >= 16 && (!strcmp(r, "add") || !strcmp(r, "mul"))) ||
        (n->opset >= 18 && (!strcmp(r, "max") || !strcmp(r, "min"))))
        return r;
    node_die(n, "reduction '%s' is not defined for this opset", r);
}

static const char *update_stmt(Emit *e, DType t, const char *red, const char *dst,
                               const char *src)
{
    if (!strcmp(red, "none"))
        return strf("%s = %s;", dst, src);
    if (dtype_is_half(t)) {
        const char *a = load_elem(t, dst), *b = load_elem(t, src);
        if (!strcmp(red, "add"))
            return strf("%s = %s;", dst, store_elem(t, strf("%s + %s", a, b)));
        if (!strcmp(red, "mul"))
            return strf("%s = %s;", dst, store_elem(t, strf("%s * %s", a, b)));
        return strf("if (%s %s %s)\n    %s = %s;", b, !strcmp(red, "max") ? ">" : "<", a, dst,
                    src);
    }
    if (t == DT_BOOL) {
        int any = !strcmp(red, "add") || !strcmp(red, "max");
        return strf("%s %s= %s;", dst, any ? "|" : "&", src);
    }
    if (!strcmp(red, "add"))
        return strf("%s += %s;", dst, src);
    if (!strcmp(red, "mul"))
        return strf("%s *= %s;", dst, src);
    return strf("if (%s %s %s)\n    %s = %s;", src, !strcmp(red, "max") ? ">" : "<", dst, dst,
                src);
}

/* Indent every line after the first of S by IND. */
static const char *indent_rest(const char *s, const char *ind)
{
    Buf b = {0};
    for (; *s; s++) {
        buf_put(&b, s, 1);
        if (*s == '\n')
            buf_puts(&b, ind);
    }
    return b.p ? b.p : "";
}

/* ---- Slice ---- */

typedef struct SliceInfo {
    int dynamic;                        /* parameters known only at run time */
    int64_t start[MLBC_MAX_RANK], step[MLBC_MAX_RANK];
} SliceInfo;

/* Normalise and clamp one slice of an axis of size d as ONNX does; returns the count.
 * Written so that no intermediate overflows, whatever the int64 inputs. */
static int64_t slice_axis(int64_t d, int64_t s, int64_t e, int64_t st, int64_t *start)
{
    if (s < 0)
        s += d;
    if (e < 0)
        e += d;
    if (st > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        *start = s;
        return e > s ? (e - s - 1) / st + 1 : 0;
    }
    s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    *start = s;
    return s > e ? 1 - (s - e - 1) / st : 0;
}

/* The parameter inputs (opset >= 10): 1 starts, 2 ends, 3 axes, 4 steps. */
static int slice_params_const(Node *n)
{
    for (int i = 1; i < n->nin; i++)
        if (n->in[i] && !n->in[i]->data)
            return 0;
    return 1;
}

static void slice_infer(Node *n)
{
    if (n->opset < 10)
        need_inputs(n, 1, 1);
    else
        need_inputs(n, 3, 5);
    Value *x = n->in[0];
    need_movable(n, x);
    int r = x->rank;
    if (r < 1)
        node_die(n, "data '%s' must have rank >= 1", x->name);
    SliceInfo *si = xalloc(sizeof *si);
    n->aux = si;
    int64_t starts[MLBC_MAX_RANK], ends[MLBC_MAX_RANK], axes[MLBC_MAX_RANK],
        steps[MLBC_MAX_RANK];
    int k, nax = -1, nst = -1;
    if (n->opset < 10) {
        k = attr_ints(n, "starts", starts, MLBC_MAX_RANK);
        int ke = attr_ints(n, "ends", ends, MLBC_MAX_RANK);
        if (k < 0 || ke < 0)
            node_die(n, "attributes 'starts' and 'ends' are required");
        if (ke != k)
            node_die(n, "'starts' has %d values but 'ends' has %d", k, ke);
        nax = attr_ints(n, "axes", axes, MLBC_MAX_RANK);
    } else {
        for (int i = 1; i < n->nin; i++) {
            Value *p = n->in[i];
            if (!p)
                continue;
            need_type(n, p, index_types);
            if (p->rank != 1)
                node_die(n, "input %d ('%s') must be 1-D, not %s", i, p->name, shape_str(p));
            if (p->dim[0] != n->in[1]->dim[0])
                node_die(n, "input %d ('%s') has %lld values but starts has %lld", i, p->name,
                         (long long)p->dim[0], (long long)n->in[1]->dim[0]);
        }
        if (n->in[1]->dim[0] > r)
            node_die(n, "%lld slice parameters for a tensor of rank %d",
                     (long long)n->in[1]->dim[0], r);
        if (!slice_params_const(n)) {
            si->dynamic = 1;
            if (!use_declared(n, 0, x->dt))
                node_die(n, "the slice parameters are not constant, so the output '%s' needs "
                         "a declared static shape (value_info or graph output)",
                         n->out[0]->name);
            Value *y = n->out[0];
            if (y->rank != r)
                node_die(n, "output '%s' is declared with rank %d, but the data has rank %d",
                         y->name, y->rank, r);
            for (int i = 0; i < r; i++)
                if (y->dim[i] > x->dim[i])
                    node_die(n, "output '%s' is declared %s, larger than the data %s", y->name,
                             shape_str(y), shape_str(x));
            return;
        }
        k = const_ints(n, n->in[1], starts, MLBC_MAX_RANK);
        const_ints(n, n->in[2], ends, MLBC_MAX_RANK);
        if (input(n, 3))
            nax = const_ints(n, n->in[3], axes, MLBC_MAX_RANK);
        if (input(n, 4))
            nst = const_ints(n, n->in[4], steps, MLBC_MAX_RANK);
    }
    if (nax >= 0 && nax != k)
        node_die(n, "'axes' has %d values but 'starts' has %d", nax, k);
    int64_t dim[MLBC_MAX_RANK];
    int seen[MLBC_MAX_RANK] = {0};
    for (int i = 0; i < r; i++) {
        si->start[i] = 0;
        si->step[i] = 1;
        dim[i] = x->dim[i];
    }
    for (int i = 0; i < k; i++) {
        int a = norm_axis(n, nax >= 0 ? axes[i] : i, r);
        if (seen[a])
            node_die(n, "axis %d is sliced twice", a);
        seen[a] = 1;
        int64_t st = nst >= 0 ? steps[i] : 1;
        if (st == 0)
            node_die(n, "step 0 (for axis %d) is not allowed", a);
        si->step[a] = st;
        dim[a] = slice_axis(x->dim[a], starts[i], ends[i], st, &si->start[a]);
    }
    set_output(n, 0, x->dt, r, dim);
}

static int slice_fold(Node *n)
{
    SliceInfo *si = n->aux;
    if (si->dynamic)
        return 0;
    Value *x = n->in[0], *y = n->out[0];
    int r = x->rank;
    size_t es = dtype_size(x->dt);
    int64_t xs[MLBC_MAX_RANK], idx[MLBC_MAX_RANK] = {0};
    dense_strides(r, x->dim, xs);
    for (int64_t i = 0; i < numel(y); i++) {
        int64_t off = 0;
        for (int d = 0; d < r; d++)
            off += (si->start[d] + idx[d] * si->step[d]) * xs[d];
        memcpy((char *)y->data + i * es, (const char *)x->data + off * es, es);
        for (int d = r - 1; d >= 0 && ++idx[d] == y->dim[d]; d--)
            idx[d] = 0;
    }
    return 1;
}

static void slice_emit_static(Emit *e, Node *n)
{
    SliceInfo *si = n->aux;
    Value *x = n->in[0], *y = n->out[0];
    int r = x->rank;
    int64_t xs[MLBC_MAX_RANK], st[MLBC_MAX_OPERANDS][MLBC_MAX_RANK], base = 0;
    dense_strides(r, x->dim, xs);
    dense_strides(r, y->dim, st[0]);
    for (int d = 0; d < r; d++) {
        base += si->start[d] * xs[d];
        st[1][d] = si->step[d] * xs[d];
    }
    /* The innermost run that is contiguous in x: trailing axes taken whole with step 1. */
    int64_t run = 1;
    int a = r;
    while (a > 0) {
        int d = a - 1;
        if (y->dim[d] != 1) {
            if (st[1][d] != run)
                break;
            run *= y->dim[d];
        }
        a--;
    }
    Loops l = loop_nest(a, y->dim, 2, st);
    const char *src = !strcmp(l.idx[1], "0") ? lit(base)
                      : base ? strf("%s + %s", lit(base), l.idx[1]) : l.idx[1];
    const char *body = run > 1 ? strf("mlbc_copy(y + %s, x + %s, %s * sizeof *y);", l.idx[0], src,
                                      lit(run))
                               : strf("y[%s] = x[%s];", l.idx[0], src);
    Buf doc = {0};
    buf_printf(&doc, "Slice %s%s -> %s:", dtype_name(x->dt), shape_str(x), shape_str(y));
    for (int d = 0; d < r; d++)
        buf_printf(&doc, " %lld:%+lld", (long long)si->start[d], (long long)si->step[d]);
    const char *fn = kernel(e, n, "move_copy", "DOC", doc.p, "T", ct(x), "OPEN", l.open,
                            "CLOSE", l.close, "INDENT", l.indent, "BODY", body, NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

static void slice_emit(Emit *e, Node *n)
{
    SliceInfo *si = n->aux;
    if (!si->dynamic) {
        slice_emit_static(e, n);
        return;
    }
    Value *x = n->in[0], *y = n->out[0];
    Value *axes = input(n, 3), *steps = input(n, 4);
    int r = x->rank;
    int64_t xs[MLBC_MAX_RANK];
    dense_strides(r, x->dim, xs);
    Buf params = {0}, args = {0};
    buf_printf(&params, "const %s *restrict starts, const %s *restrict ends", ct(n->in[1]),
               ct(n->in[2]));
    buf_printf(&args, "%s, %s, %s", ref(e, x), ref(e, n->in[1]), ref(e, n->in[2]));
    if (axes) {
        buf_printf(&params, ", const %s *restrict axes", ct(axes));
        buf_printf(&args, ", %s", ref(e, axes));
    }
    if (steps) {
        buf_printf(&params, ", const %s *restrict steps", ct(steps));
        buf_printf(&args, ", %s", ref(e, steps));
    }
    buf_printf(&args, ", %s", ref(e, y));
    int64_t outer = numel(y) ? dims_prod(y->dim, 0, r - 1) : 0;
    const char *fn = kernel(e, n, "move_slice",
        "DOC", strf("Slice %s%s -> %s, parameters at run time", dtype_name(x->dt),
                    shape_str(x), shape_str(y)),
        "T", ct(x), "PARAMS", params.p, "R", strf("%d", r),
        "FOR_K", loop_head("", "k", n->in[1]->dim[0], 1),
        "DIMS", lit_list(r, x->dim), "ODIMS", lit_list(r, y->dim), "XSTRIDES", lit_list(r, xs),
        "AXIS", axes ? "axes[k]" : "k", "STEP", steps ? "steps[k]" : "1",
        "R1", strf("%d", r - 1), "FOR_I", loop_head("", "i", outer, 1),
        "LAST", lit(y->dim[r - 1]), "FOR_LAST", loop_head("", "k", y->dim[r - 1], 1), NULL);
    check(e, strf("%s(%s) == 0", fn, args.p),
          "Slice parameters invalid or disagree with the declared shape");
}

/* ---- Gather ---- */

static void gather_infer(Node *n)
{
    need_inputs(n, 2, 2);
    Value *x = n->in[0], *ind = n->in[1];
    need_movable(n, x);
    need_type(n, ind, index_types);
    if (x->rank < 1)
        node_die(n, "data '%s' must have rank >= 1", x->name);
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    check_const_indices(n, ind, x->dim[axis], "index");
    int64_t dim[2 * MLBC_MAX_RANK];
    int r = 0;
    for (int i = 0; i < axis; i++)
        dim[r++] = x->dim[i];
    for (int i = 0; i < ind->rank; i++)
        dim[r++] = ind->dim[i];
    for (int i = axis + 1; i < x->rank; i++)
        dim[r++] = x->dim[i];
    if (r > MLBC_MAX_RANK)
        node_die(n, "output rank %d is not supported", r);
    set_output(n, 0, x->dt, r, dim);
}

static int gather_fold(Node *n)
{
    Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    int64_t outer = dims_prod(x->dim, 0, axis), size = x->dim[axis];
    int64_t inner = dims_prod(x->dim, axis + 1, x->rank), nidx = numel(ind);
    size_t es = dtype_size(x->dt);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < nidx; k++) {
            int64_t i = value_get_i(ind, k);
            if (i < 0)
                i += size;
            memcpy((char *)y->data + (o * nidx + k) * inner * es,
                   (const char *)x->data + (o * size + i) * inner * es, (size_t)inner * es);
        }
    return 1;
}

static void gather_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    /* rows of 16 elements or more: their copies vectorise (an embedding's rows) */
    int64_t inner = dims_prod(x->dim, axis + 1, x->rank);
    const char *fn = kernel_paths(e, n, inner >= 16 ? numel(y) : 0, "move_gather",
        "DOC", strf("Gather axis %d: %s%s by %s%s -> %s", axis, dtype_name(x->dt),
                    shape_str(x), dtype_name(ind->dt), shape_str(ind), shape_str(y)),
        "T", ct(x), "IT", ct(ind), "OUTER", lit(dims_prod(x->dim, 0, axis)),
        "N", lit(x->dim[axis]), "INNER", lit(inner),
        "NIDX", lit(numel(ind)), "FOR_O", loop_head("", "o", dims_prod(x->dim, 0, axis), 1),
        "FOR_K", loop_head("", "k", numel(ind), 1), NULL);
    call_checked(e, ind, fn, strf("%s, %s, %s", ref(e, x), ref(e, ind), ref(e, y)),
                 "Gather index out of range");
}

/* ---- GatherElements, ScatterElements, Scatter ---- */

/* Shared shape rule: data and indices of one rank, indices no larger than the data off
 * the axis. Returns the axis. */
static int elements_axis(Node *n, Value *x, Value *ind)
{
    need_movable(n, x);
    need_type(n, ind, index_types);
    if (x->rank < 1 || ind->rank != x->rank)
        node_die(n, "data %s and indices %s must have the same rank >= 1", shape_str(x),
                 shape_str(ind));
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    for (int i = 0; i < x->rank; i++)
        if (i != axis && ind->dim[i] > x->dim[i])
            node_die(n, "indices %s exceed the data %s on axis %d", shape_str(ind),
                     shape_str(x), i);
    check_const_indices(n, ind, x->dim[axis], "index");
    return axis;
}

static void gather_elements_infer(Node *n)
{
    need_inputs(n, 2, 2);
    elements_axis(n, n->in[0], n->in[1]);
    copy_shape(n, 0, n->in[1], n->in[0]->dt);
}

/* Loop nest over the index tensor: operand 0 walks it (and y or u), operand 1 walks x
 * without the axis term. */
static Loops elements_loops(const Value *x, const Value *ind, int axis)
{
    int64_t st[MLBC_MAX_OPERANDS][MLBC_MAX_RANK];
    dense_strides(ind->rank, ind->dim, st[0]);
    dense_strides(x->rank, x->dim, st[1]);
    st[1][axis] = 0;
    return loop_nest(ind->rank, ind->dim, 2, st);
}

static void gather_elements_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    int64_t xs[MLBC_MAX_RANK];
    dense_strides(x->rank, x->dim, xs);
    Loops l = elements_loops(x, ind, axis);
    const char *fn = kernel(e, n, "move_gather_elements",
        "DOC", strf("GatherElements axis %d: %s%s by %s%s", axis, dtype_name(x->dt),
                    shape_str(x), dtype_name(ind->dt), shape_str(ind)),
        "T", ct(x), "IT", ct(ind), "OPEN", l.open, "CLOSE", l.close, "INDENT", l.indent,
        "IY", l.idx[0], "IX", l.idx[1], "N", lit(x->dim[axis]), "S", lit(xs[axis]), NULL);
    call_checked(e, ind, fn, strf("%s, %s, %s", ref(e, x), ref(e, ind), ref(e, y)),
                 "GatherElements index out of range");
}

static void scatter_elements_infer(Node *n)
{
    need_inputs(n, 3, 3);
    Value *x = n->in[0], *ind = n->in[1], *u = n->in[2];
    elements_axis(n, x, ind);
    need_same_type(n, x, u);
    if (u->rank != ind->rank || memcmp(u->dim, ind->dim, sizeof(int64_t) * u->rank))
        node_die(n, "updates %s must have the shape of the indices %s", shape_str(u),
                 shape_str(ind));
    parse_reduction(n);
    copy_shape(n, 0, x, DT_UNDEF);
}

static void scatter_elements_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *ind = n->in[1], *u = n->in[2], *y = n->out[0];
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    const char *red = parse_reduction(n);
    int64_t xs[MLBC_MAX_RANK];
    dense_strides(x->rank, x->dim, xs);
    Loops l = elements_loops(x, ind, axis);
    const char *dst = strcmp(l.idx[1], "0") ? strf("y[%s + k * %s]", l.idx[1], lit(xs[axis]))
                                            : strf("y[k * %s]", lit(xs[axis]));
    const char *upd = update_stmt(e, x->dt, red, dst, strf("u[%s]", l.idx[0]));
    const char *fn = kernel(e, n, "move_scatter_elements",
        "DOC", strf("ScatterElements axis %d, reduction %s: %s%s by %s%s", axis, red,
                    dtype_name(x->dt), shape_str(x), dtype_name(ind->dt), shape_str(ind)),
        "T", ct(x), "IT", ct(ind), "NX", lit(numel(x)), "OPEN", l.open, "CLOSE", l.close,
        "INDENT", l.indent, "IU", l.idx[0], "N", lit(x->dim[axis]),
        "UPDATE", indent_rest(upd, strf("%s    ", l.indent)), NULL);
    call_checked(e, ind, fn,
                 strf("%s, %s, %s, %s", ref(e, x), ref(e, ind), ref(e, u), ref(e, y)),
                 "ScatterElements index out of range");
}

/* ---- GatherND, ScatterND ---- */

static void gathernd_infer(Node *n)
{
    need_inputs(n, 2, 2);
    Value *x = n->in[0], *ind = n->in[1];
    need_movable(n, x);
    need_type(n, ind, index_types);
    int r = x->rank, q = ind->rank;
    int64_t b = attr_int(n, "batch_dims", 0);
    if (r < 1 || q < 1)
        node_die(n, "data and indices must have rank >= 1");
    if (b < 0 || b >= q || b >= r)
        node_die(n, "batch_dims %lld must be less than both ranks (%d, %d)", (long long)b, r, q);
    int64_t k = ind->dim[q - 1];
    if (k < 1 || k > r - b)
        node_die(n, "the last dimension of the indices (%lld) must be in [1, %lld]",
                 (long long)k, (long long)(r - b));
    for (int i = 0; i < b; i++)
        if (ind->dim[i] != x->dim[i])
            node_die(n, "batch dimension %d differs: data %s, indices %s", i, shape_str(x),
                     shape_str(ind));
    for (int64_t i = 0; ind->data && i < numel(ind); i++) {
        int64_t d = x->dim[b + i % k], v = value_get_i(ind, i);
        if (v < -d || v >= d)
            node_die(n, "index %lld (element %lld of '%s') is out of range for size %lld",
                     (long long)v, (long long)i, ind->name, (long long)d);
    }
    int64_t dim[2 * MLBC_MAX_RANK];
    int rr = 0;
    for (int i = 0; i < q - 1; i++)
        dim[rr++] = ind->dim[i];
    for (int i = (int)(b + k); i < r; i++)
        dim[rr++] = x->dim[i];
    if (rr > MLBC_MAX_RANK)
        node_die(n, "output rank %d is not supported", rr);
    set_output(n, 0, x->dt, rr, dim);
}

static void gathernd_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *ind = n->in[1], *y = n->out[0];
    int r = x->rank, q = ind->rank, b = (int)attr_int(n, "batch_dims", 0);
    int k = (int)ind->dim[q - 1];
    int64_t xs[MLBC_MAX_RANK];
    dense_strides(r, x->dim, xs);
    Buf coords = {0};
    for (int j = 0; j < k; j++)
        coord_lines(&coords, "t", j, x->dim[b + j], xs[b + j], "            ");
    const char *fn = kernel(e, n, "move_gathernd",
        "DOC", strf("GatherND batch_dims %d: %s%s by %s%s -> %s", b, dtype_name(x->dt),
                    shape_str(x), dtype_name(ind->dt), shape_str(ind), shape_str(y)),
        "T", ct(x), "IT", ct(ind), "FOR_B", loop_head("", "b", dims_prod(x->dim, 0, b), 1),
        "M", lit(dims_prod(ind->dim, b, q - 1)),
        "FOR_M", loop_head("", "m", dims_prod(ind->dim, b, q - 1), 1), "K", lit(k), "S", lit(dims_prod(x->dim, b + k, r)),
        "XB", lit(dims_prod(x->dim, b, r)), "COORDS", coords.p, NULL);
    call_checked(e, ind, fn, strf("%s, %s, %s", ref(e, x), ref(e, ind), ref(e, y)),
                 "GatherND index out of range");
}

static void scatternd_infer(Node *n)
{
    need_inputs(n, 3, 3);
    Value *x = n->in[0], *ind = n->in[1], *u = n->in[2];
    need_movable(n, x);
    need_type(n, ind, index_types);
    need_same_type(n, x, u);
    int r = x->rank, q = ind->rank;
    if (r < 1 || q < 1)
        node_die(n, "data and indices must have rank >= 1");
    int64_t k = ind->dim[q - 1];
    if (k < 1 || k > r)
        node_die(n, "the last dimension of the indices (%lld) must be in [1, %d]",
                 (long long)k, r);
    int64_t want[2 * MLBC_MAX_RANK];
    int rw = 0;
    for (int i = 0; i < q - 1; i++)
        want[rw++] = ind->dim[i];
    for (int i = (int)k; i < r; i++)
        want[rw++] = x->dim[i];
    if (u->rank != rw || memcmp(u->dim, want, sizeof(int64_t) * rw))
        node_die(n, "updates %s must have shape indices.shape[:-1] + data.shape[%lld:]",
                 shape_str(u), (long long)k);
    for (int64_t i = 0; ind->data && i < numel(ind); i++) {
        int64_t d = x->dim[i % k], v = value_get_i(ind, i);
        if (v < -d || v >= d)
            node_die(n, "index %lld (element %lld of '%s') is out of range for size %lld",
                     (long long)v, (long long)i, ind->name, (long long)d);
    }
    parse_reduction(n);
    copy_shape(n, 0, x, DT_UNDEF);
}

static void scatternd_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *ind = n->in[1], *u = n->in[2], *y = n->out[0];
    int r = x->rank, q = ind->rank, k = (int)ind->dim[q - 1];
    const char *red = parse_reduction(n);
    int64_t xs[MLBC_MAX_RANK], s = dims_prod(x->dim, k, r);
    dense_strides(r, x->dim, xs);
    Buf coords = {0};
    for (int j = 0; j < k; j++)
        coord_lines(&coords, "t", j, x->dim[j], xs[j], "        ");
    const char *upd;
    if (!strcmp(red, "none"))
        upd = strf("        memcpy(y + off, u + m * %s, %s * sizeof *y);", lit(s), lit(s));
    else
        upd = strf("        for (i = 0; i < %s; i++)\n            %s", lit(s),
                   indent_rest(update_stmt(e, x->dt, red, "y[off + i]",
                                           strf("u[m * %s + i]", lit(s))),
                               "                "));
    const char *fn = kernel(e, n, "move_scatternd",
        "DOC", strf("ScatterND reduction %s: %s%s by %s%s", red, dtype_name(x->dt),
                    shape_str(x), dtype_name(ind->dt), shape_str(ind)),
        "T", ct(x), "IT", ct(ind), "NX", lit(numel(x)), "M", lit(dims_prod(ind->dim, 0, q - 1)),
        "K", lit(k), "COORDS", coords.p, "UPDATE", upd, NULL);
    call_checked(e, ind, fn,
                 strf("%s, %s, %s, %s", ref(e, x), ref(e, ind), ref(e, u), ref(e, y)),
                 "ScatterND index out of range");
}

/* ---- Trilu ---- */

static void trilu_infer(Node *n)
{
    need_inputs(n, 1, 2);
    Value *x = n->in[0], *k = input(n, 1);
    need_movable(n, x);
    if (x->rank < 2)
        node_die(n, "input '%s' must have rank >= 2, not %d", x->name, x->rank);
    if (k) {
        static const DType i64[] = {DT_INT64, DT_UNDEF};
        need_type(n, k, i64);
        need_scalar(n, k, "k");
    }
    copy_shape(n, 0, x, DT_UNDEF);
}

static void trilu_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *k = input(n, 1), *y = n->out[0];
    int r = x->rank, upper = attr_int(n, "upper", 1) != 0;
    int64_t rows = x->dim[r - 2], cols = x->dim[r - 1];
    const char *M = lit(cols);
    const char *row = upper
        ? strf("            memset(yr, 0, c * sizeof *yr);\n"
               "            memcpy(yr + c, xr + c, (%s - c) * sizeof *yr);\n", M)
        : strf("            memcpy(yr, xr, c * sizeof *yr);\n"
               "            memset(yr + c, 0, (%s - c) * sizeof *yr);\n", M);
    const char *fn = kernel(e, n, "move_trilu",
        "DOC", strf("Trilu %s: %s%s", upper ? "upper" : "lower", dtype_name(x->dt),
                    shape_str(x)),
        "T", ct(x), "BATCH", lit(dims_prod(x->dim, 0, r - 2)), "N", lit(rows), "M", M,
        "PLUS1", upper ? "" : " + 1", "ROW", row,
        "FOR_B", loop_head("", "b", dims_prod(x->dim, 0, r - 2), 1),
        "FOR_I", loop_head("", "i", rows, 1), NULL);
    const char *karg = !k ? "0" : k->data ? lit(value_get_i(k, 0)) : strf("%s[0]", ref(e, k));
    stmt(e, "%s(%s, %s, %s);", fn, ref(e, x), karg, ref(e, y));
}

/* ---- OneHot ---- */

/* The axis of the new dimension in the output. */
static int onehot_axis(Node *n)
{
    int r = n->in[0]->rank;
    int64_t axis = attr_int(n, "axis", -1);
    if (axis < -r - 1 || axis > r)
        node_die(n, "axis %lld is out of range for output rank %d", (long long)axis, r + 1);
    return (int)(axis < 0 ? axis + r + 1 : axis);
}

static void onehot_infer(Node *n)
{
    need_inputs(n, 3, 3);
    Value *ind = n->in[0], *depth = n->in[1], *vals = n->in[2];
    if (!dtype_is_int(ind->dt) && !dtype_is_floatish(ind->dt))
        node_die(n, "indices '%s' must be numeric, not %s", ind->name, dtype_name(ind->dt));
    if (!dtype_is_int(depth->dt) && !dtype_is_floatish(depth->dt))
        node_die(n, "depth '%s' must be numeric, not %s", depth->name, dtype_name(depth->dt));
    need_scalar(n, depth, "depth");
    need_movable(n, vals);
    if (numel(vals) != 2 || vals->rank != 1)
        node_die(n, "values '%s' must be [off, on], not %s", vals->name, shape_str(vals));
    int r = ind->rank, a = onehot_axis(n);
    if (depth->data) {
        double d = value_get_f(depth, 0);
        if (!(d >= 1 && d < 9.2e18))
            node_die(n, "depth %g must be positive", d);
        int64_t dim[MLBC_MAX_RANK + 1];
        for (int i = 0, j = 0; i <= r; i++)
            dim[i] = i == a ? (int64_t)d : ind->dim[j++];
        set_output(n, 0, vals->dt, r + 1, dim);
        return;
    }
    if (!use_declared(n, 0, vals->dt))
        node_die(n, "depth is not constant, so the output '%s' needs a declared static shape "
                 "(value_info or graph output)", n->out[0]->name);
    Value *y = n->out[0];
    int bad = y->rank != r + 1 || y->dim[a] < 1;
    for (int i = 0, j = 0; i <= r && !bad; i++)
        if (i != a)
            bad = y->dim[i] != ind->dim[j++];
    if (bad)
        node_die(n, "output '%s' is declared %s, which does not fit indices %s with axis %d",
                 y->name, shape_str(y), shape_str(ind), a);
}

static void onehot_emit(Emit *e, Node *n)
{
    Value *ind = n->in[0], *depth = n->in[1], *vals = n->in[2], *y = n->out[0];
    int a = onehot_axis(n);
    int64_t D = y->dim[a], inner = dims_prod(ind->dim, a, ind->rank);
    if (!depth->data) {
        const char *d = load_elem(depth->dt, strf("%s[0]", ref(e, depth)));
        if (dtype_is_floatish(depth->dt))
            check(e, strf("%s >= %s && %s < %s", d, lit(D), d, lit(D + 1)),
                  "OneHot depth disagrees with the declared output shape");
        else
            check(e, strf("%s == %s", d, lit(D)),
                  "OneHot depth disagrees with the declared output shape");
    }
    int fl = dtype_is_floatish(ind->dt);
    const char *src = load_elem(ind->dt, strf("ind[o * %s + i]", lit(inner)));
    const char *fn = kernel(e, n, "move_onehot",
        "DOC", strf("OneHot axis %d, depth %lld: %s%s -> %s%s", a, (long long)D,
                    dtype_name(ind->dt), shape_str(ind), dtype_name(y->dt), shape_str(y)),
        "T", ct(vals), "IT", ct(ind), "NY", lit(numel(y)),
        "OUTER", lit(dims_prod(ind->dim, 0, a)), "INNER", lit(inner), "DEPTH", lit(D),
        "FOR_I", loop_head("", "i", inner, 1),
        "VT", fl ? "double" : "long long",
        "LOAD", strf(fl ? "(double)%s" : "(long long)%s", src), NULL);
    stmt(e, "%s(%s, %s, %s);", fn, ref(e, ind), ref(e, vals), ref(e, y));
}

/* ---- ReverseSequence ---- */

static void reverse_sequence_infer(Node *n)
{
    need_inputs(n, 2, 2);
    Value *x = n->in[0], *lens = n->in[1];
    need_movable(n, x);
    need_type(n, lens, index_types);
    int64_t ba = attr_int(n, "batch_axis", 1), ta = attr_int(n, "time_axis", 0);
    if (x->rank < 2)
        node_die(n, "input '%s' must have rank >= 2", x->name);
    if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        node_die(n, "batch_axis and time_axis must be 0 and 1 in some order");
    if (lens->rank != 1 || lens->dim[0] != x->dim[ba])
        node_die(n, "sequence_lens %s must be [%lld]", shape_str(lens),
                 (long long)x->dim[ba]);
    for (int64_t i = 0; lens->data && i < numel(lens); i++) {
        int64_t v = value_get_i(lens, i);
        if (v < 0 || v > x->dim[ta])
            node_die(n, "sequence length %lld is out of range [0, %lld]", (long long)v,
                     (long long)x->dim[ta]);
    }
    copy_shape(n, 0, x, DT_UNDEF);
}

static void reverse_sequence_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *lens = n->in[1], *y = n->out[0];
    int ba = (int)attr_int(n, "batch_axis", 1), ta = (int)attr_int(n, "time_axis", 0);
    int64_t xs[MLBC_MAX_RANK];
    dense_strides(x->rank, x->dim, xs);
    const char *fn = kernel(e, n, "move_reverse_sequence",
        "DOC", strf("ReverseSequence batch axis %d, time axis %d: %s%s", ba, ta,
                    dtype_name(x->dt), shape_str(x)),
        "T", ct(x), "IT", ct(lens), "B", lit(x->dim[ba]), "TT", lit(x->dim[ta]),
        "BS", lit(xs[ba]), "TS", lit(xs[ta]), "INNER", lit(dims_prod(x->dim, 2, x->rank)), NULL);
    call_checked(e, lens, fn, strf("%s, %s, %s", ref(e, x), ref(e, lens), ref(e, y)),
                 "ReverseSequence length out of range");
}

/* ---- Compress ---- */

static void compress_infer(Node *n)
{
    need_inputs(n, 2, 2);
    Value *x = n->in[0], *c = n->in[1];
    need_movable(n, x);
    if (c->dt != DT_BOOL || c->rank != 1)
        node_die(n, "condition '%s' must be a 1-D bool tensor", c->name);
    int64_t outer, size, inner;
    int a = axis_view(n, "to compress along an axis", &outer, &size, &inner);
    int64_t dim[MLBC_MAX_RANK];
    int r = a < 0 ? 1 : x->rank;
    int ax = a < 0 ? 0 : a;
    if (a >= 0)
        memcpy(dim, x->dim, sizeof(int64_t) * r);
    if (c->data) {
        int64_t count = 0;
        for (int64_t j = 0; j < numel(c); j++)
            if (value_get_i(c, j)) {
                if (j >= size)
                    node_die(n, "condition is true at %lld, beyond the axis size %lld",
                             (long long)j, (long long)size);
                count++;
            }
        dim[ax] = count;
        set_output(n, 0, x->dt, r, dim);
        return;
    }
    if (!use_declared(n, 0, x->dt))
        node_die(n, "the condition is not constant, so the output '%s' needs a declared "
                 "static shape (value_info or graph output)", n->out[0]->name);
    Value *y = n->out[0];
    int bad = y->rank != r || y->dim[ax] > size;
    for (int i = 0; i < r && !bad; i++)
        if (i != ax)
            bad = y->dim[i] != dim[i];
    if (bad)
        node_die(n, "output '%s' is declared %s, which does not fit input %s", y->name,
                 shape_str(y), shape_str(x));
}

static void compress_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *c = n->in[1], *y = n->out[0];
    int64_t outer, size, inner;
    int a = axis_view(n, "to compress along an axis", &outer, &size, &inner);
    int64_t nc = numel(c);
    const char *fn = kernel(e, n, "move_compress",
        "DOC", strf("Compress axis %d: %s%s -> %s", a, dtype_name(x->dt), shape_str(x),
                    shape_str(y)),
        "T", ct(x), "NC", lit(nc), "N", lit(size), "NM", lit(nc < size ? nc : size),
        "NOUT", lit(y->dim[a < 0 ? 0 : a]), "FOR_O", loop_head("", "o", outer, 1), "INNER", lit(inner), NULL);
    call_checked(e, c, fn, strf("%s, %s, %s", ref(e, x), ref(e, c), ref(e, y)),
                 "Compress condition disagrees with the declared output shape");
}

const OpDef ops_movement[] = {
    {"Slice", slice_infer, slice_fold, slice_emit, NULL, 0},
    {"Gather", gather_infer, gather_fold, gather_emit, NULL, 0},
    {"GatherElements", gather_elements_infer, NULL, gather_elements_emit, NULL, 0},
    {"GatherND", gathernd_infer, NULL, gathernd_emit, NULL, 0},
    {"ScatterElements", scatter_elements_infer, NULL, scatter_elements_emit, NULL, 0},
    {"Scatter", scatter_elements_infer, NULL, scatter_elements_emit, NULL, 0},
    {"ScatterND", scatternd_infer, NULL, scatternd_emit, NULL, 0},
    {"Trilu", trilu_infer, NULL, trilu_emit, NULL, 0},
    {"OneHot", onehot_infer, NULL, onehot_emit, NULL, 0},
    {"ReverseSequence", reverse_sequence_infer, NULL, reverse_sequence_emit, NULL, 0},
    {"Compress", compress_infer, NULL, compress_emit, NULL, 0},
    {0},
};
