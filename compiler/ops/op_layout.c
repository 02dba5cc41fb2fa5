/* op_layout.c - layout operators: Transpose, Concat, Split, Tile, DepthToSpace,
 * SpaceToDepth (pure copies with static strides) and Pad.
 *
 * Every op but Pad is described as a list of Copy nests: walk DIM with output strides OST
 * and input strides IST (elements) from offsets OOFF/IOFF. The same description folds
 * constants (interpreted here) and emits the kernel (template layout_copy), so the two
 * cannot disagree. Element values are never looked at: every element type works, the
 * 16-bit float types included.
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

/* Tile and Pad grow their input; beyond this size a kernel beats an embedded array. */
#define FOLD_MAX_BYTES (64 * 1024)
#define MAXR (2 * MLBC_MAX_RANK)

typedef struct Copy {
    int src, dst;               /* input and output index */
    int rank;
    int64_t dim[MAXR], ist[MAXR], ost[MAXR];
    int64_t ioff, ooff;
} Copy;

/* ---- copy nests: normalise, fold, emit ---- */

/* Drop size-1 axes and merge an axis into the next where both sides allow it. Returns 0 if
 * the copy moves nothing. */
static int collapse(Copy *c)
{
    int r = 0;
    for (int i = 0; i < c->rank; i++) {
        if (c->dim[i] == 0)
            return 0;
        if (c->dim[i] == 1)
            continue;
        if (r > 0 && c->ost[r - 1] == c->ost[i] * c->dim[i] &&
            c->ist[r - 1] == c->ist[i] * c->dim[i]) {
            c->dim[r - 1] *= c->dim[i];
            c->ost[r - 1] = c->ost[i];
            c->ist[r - 1] = c->ist[i];
            continue;
        }
        c->dim[r] = c->dim[i];
        c->ost[r] = c->ost[i];
        c->ist[r] = c->ist[i];
        r++;
    }
    c->rank = r;
    return 1;
}

static void fold_copy(Node *n, const Copy *c)
{
    size_t es = dtype_size(n->out[c->dst]->dt);
    const char *src = n->in[c->src]->data;
    char *dst = n->out[c->dst]->data;
    int64_t idx[MAXR] = {0}, total = numel_dims(c->rank, c->dim);
    for (int64_t k = 0; k < total; k++) {
        int64_t io = c->ioff, oo = c->ooff;
        for (int d = 0; d < c->rank; d++) {
            io += idx[d] * c->ist[d];
            oo += idx[d] * c->ost[d];
        }
        memcpy(dst + oo * es, src + io * es, es);
        for (int d = c->rank - 1; d >= 0 && ++idx[d] == c->dim[d]; d--)
            idx[d] = 0;
    }
}

static void fold_copies(Node *n, Copy *cs, int nc)
{
    for (int i = 0; i < nc; i++)
        if (collapse(&cs[i]))
            fold_copy(n, &cs[i]);
}

/* OFF + sum of i<d> * stride over the first NLOOP axes. */
static const char *index_expr(int64_t off, int nloop, const int64_t *stride)
{
    Buf b = {0};
    for (int i = 0; i < nloop; i++) {
        if (!stride[i])
            continue;
        if (b.len)
            buf_puts(&b, " + ");
        buf_printf(&b, stride[i] == 1 ? "i%d" : "i%d * %s", i, lit(stride[i]));
    }
    if (off || !b.len)
        buf_printf(&b, b.len ? " + %s" : "%s", lit(off));
    return b.p;
}

static const char *ptr_plus(const char *p, const char *idx)
{
    return strcmp(idx, "0") ? strf("%s + %s", p, idx) : p;
}

/* Blocked 2-D transpose: the output's inner axis Q (unit stride out) and the input's
 * inner axis P (unit stride in) are walked in BLOCK x BLOCK tiles, so both sides stay in
 * cache. Used when both axes are long. */
#define BLOCK 16

/* The copy swaps the output's unit-stride (last) axis with the input's, axis *P, both at
 * least MIN long. */
static int transpose_axes(const Copy *c, int64_t min, int *p)
{
    int r = c->rank;
    if (r < 2 || c->ost[r - 1] != 1 || c->ist[r - 1] == 1 || c->dim[r - 1] < min)
        return 0;
    for (int i = 0; i < r - 1; i++)
        if (c->ist[i] == 1 && c->dim[i] >= min) {
            *p = i;
            return 1;
        }
    return 0;
}

/* A float copy that swaps the unit-stride axis with another, one of them at least 8 long:
 * the 2-D transposes over the other axes, by mlbc_transpose_f32 (templates/transpose_f32.c). */
static int float_transpose(Buf *b, const Copy *c, const char *xn, const char *yn)
{
    int r = c->rank, q = r - 1, p;
    if (!transpose_axes(c, 2, &p) || (c->dim[p] < 8 && c->dim[q] < 8))
        return 0;
    int64_t ist[MLBC_MAX_RANK], ost[MLBC_MAX_RANK];
    memcpy(ist, c->ist, sizeof(int64_t) * r);
    memcpy(ost, c->ost, sizeof(int64_t) * r);
    ist[p] = ist[q] = ost[p] = ost[q] = 0;
    const char *ind = "    ";
    for (int i = 0; i < q; i++)
        if (i != p) {
            buf_printf(b, "%sfor (long i%d = 0; i%d < %s; i%d++)\n", ind, i, i,
                       lit(c->dim[i]), i);
            ind = strf("%s    ", ind);
        }
    buf_printf(b, "%smlbc_transpose_f32(%s, %s, %s, %s, %s, %s);\n", ind, lit(c->dim[q]),
               lit(c->dim[p]), ptr_plus(xn, index_expr(c->ioff, r, ist)), lit(c->ist[q]),
               ptr_plus(yn, index_expr(c->ooff, r, ost)), lit(c->ost[p]));
    return 1;
}

static void copy_body(Buf *b, const Copy *c, const char *xn, const char *yn, DType t)
{
    int r = c->rank, p;
    size_t es = dtype_size(t);
    if (t == DT_FLOAT && float_transpose(b, c, xn, yn))
        return;
    if (transpose_axes(c, 2 * BLOCK, &p)) {
        /* Loops: the other axes, then block p, block q, then p, q inside the tile. */
        const char *ind = "    ";
        for (int i = 0; i < r - 1; i++) {
            if (i == p)
                continue;
            buf_printf(b, "%sfor (long i%d = 0; i%d < %s; i%d++)\n", ind, i, i,
                       lit(c->dim[i]), i);
            ind = strf("%s    ", ind);
        }
        int q = r - 1;
        buf_printf(b, "%sfor (long b%d = 0; b%d < %s; b%d += %d)\n", ind, p, p,
                   lit(c->dim[p]), p, BLOCK);
        ind = strf("%s    ", ind);
        buf_printf(b, "%sfor (long b%d = 0; b%d < %s; b%d += %d) {\n", ind, q, q,
                   lit(c->dim[q]), q, BLOCK);
        const char *in2 = strf("%s    ", ind);
        buf_printf(b, "%sconst long e%d = b%d + %d < %s ? b%d + %d : %s;\n", in2, p, p, BLOCK,
                   lit(c->dim[p]), p, BLOCK, lit(c->dim[p]));
        buf_printf(b, "%sconst long e%d = b%d + %d < %s ? b%d + %d : %s;\n", in2, q, q, BLOCK,
                   lit(c->dim[q]), q, BLOCK, lit(c->dim[q]));
        buf_printf(b, "%sfor (long i%d = b%d; i%d < e%d; i%d++)\n", in2, p, p, p, p, p);
        buf_printf(b, "%s    for (long i%d = b%d; i%d < e%d; i%d++)\n", in2, q, q, q, q, q);
        buf_printf(b, "%s        %s[%s] = %s[%s];\n", in2, yn, index_expr(c->ooff, r, c->ost),
                   xn, index_expr(c->ioff, r, c->ist));
        buf_printf(b, "%s}\n", ind);
        return;
    }
    int inner = r > 0 && c->ist[r - 1] == 1 && c->ost[r - 1] == 1;
    int nloop = inner ? r - 1 : r;
    const char *ind = "    ";
    for (int i = 0; i < nloop; i++) {
        buf_printf(b, "%sfor (long i%d = 0; i%d < %s; i%d++)\n", ind, i, i, lit(c->dim[i]), i);
        ind = strf("%s    ", ind);
    }
    const char *oi = index_expr(c->ooff, nloop, c->ost), *ii = index_expr(c->ioff, nloop, c->ist);
    if (inner)
        buf_printf(b, "%smlbc_copy(%s, %s, %s);\n", ind, ptr_plus(yn, oi), ptr_plus(xn, ii),
                   lit(c->dim[r - 1] * (int64_t)es));
    else
        buf_printf(b, "%s%s[%s] = %s[%s];\n", ind, yn, oi, xn, ii);
}

/* Append a parameter to a list; long lists wrap at about 80 columns. */
static void add_param(Buf *b, size_t *line, const char *text)
{
    if (b->len && b->len - *line + strlen(text) > 72) {
        buf_puts(b, ",\n    ");
        *line = b->len;
    } else if (b->len) {
        buf_puts(b, ", ");
    }
    buf_puts(b, text);
}

static void emit_copies(Emit *e, Node *n, Copy *cs, int nc, const char *doc)
{
    char *used_in = xalloc((size_t)n->nin + 1), *used_out = xalloc((size_t)n->nout + 1);
    int any = 0;
    for (int i = 0; i < nc; i++)
        if (collapse(&cs[i])) {
            used_in[cs[i].src] = used_out[cs[i].dst] = any = 1;
        } else {
            cs[i].rank = -1;  /* nothing to move */
        }
    if (!any)
        return;
    int nx = 0, ny = 0;
    for (int i = 0; i < n->nin; i++)
        nx += used_in[i];
    for (int i = 0; i < n->nout; i++)
        ny += used_out[i];
    DType t = n->out[cs[0].dst]->dt;
    const char *ct = dtype_ctype(t);
    Buf params = {0}, body = {0}, call = {0};
    size_t line = 0;
    for (int i = 0; i < n->nin; i++)
        if (used_in[i]) {
            add_param(&params, &line, strf("const %s *restrict %s", ct,
                                           nx > 1 ? strf("x%d", i) : "x"));
            buf_printf(&call, "%s%s", call.len ? ", " : "", ref(e, n->in[i]));
        }
    for (int i = 0; i < n->nout; i++)
        if (used_out[i]) {
            add_param(&params, &line, strf("%s *restrict %s", ct, ny > 1 ? strf("y%d", i) : "y"));
            buf_printf(&call, ", %s", ref(e, n->out[i]));
        }
    for (int i = 0; i < nc; i++)
        if (cs[i].rank >= 0)
            copy_body(&body, &cs[i], nx > 1 ? strf("x%d", cs[i].src) : "x",
                      ny > 1 ? strf("y%d", cs[i].dst) : "y", t);
    const char *fn = kernel(e, n, "layout_copy", "DOC", doc, "PARAMS", params.p, "BODY",
                            body.p, NULL);
    stmt(e, "%s(%s);", fn, call.p);
}

/* Input 0 copied to output 0 with the given output dims and input strides. */
static Copy whole(int rank, const int64_t *dim, const int64_t *ist)
{
    Copy c = {0};
    c.rank = rank;
    memcpy(c.dim, dim, sizeof(int64_t) * rank);
    memcpy(c.ist, ist, sizeof(int64_t) * rank);
    dense_strides(rank, dim, c.ost);
    return c;
}

/* ---- Transpose ---- */

void transpose_perm(Node *n, int r, int *perm)
{
    int64_t p[MLBC_MAX_RANK];
    int k = attr_ints(n, "perm", p, MLBC_MAX_RANK), seen[MLBC_MAX_RANK] = {0};
    if (k < 0) {
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
        return;
    }
    if (k != r)
        node_die(n, "perm has %d values but the input has rank %d", k, r);
    for (int i = 0; i < r; i++) {
        if (p[i] < 0 || p[i] >= r || seen[p[i]])
            node_die(n, "perm is not a permutation of 0..%d", r - 1);
        seen[p[i]] = 1;
        perm[i] = (int)p[i];
    }
}

static void transpose_infer(Node *n)
{
    Value *x = need_input(n, 0, "data");
    int perm[MLBC_MAX_RANK];
    int64_t dim[MLBC_MAX_RANK];
    transpose_perm(n, x->rank, perm);
    for (int i = 0; i < x->rank; i++)
        dim[i] = x->dim[perm[i]];
    set_output(n, 0, x->dt, x->rank, dim);
}

static Copy transpose_copy(Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    int perm[MLBC_MAX_RANK];
    int64_t xs[MLBC_MAX_RANK], ist[MLBC_MAX_RANK];
    transpose_perm(n, x->rank, perm);
    dense_strides(x->rank, x->dim, xs);
    for (int i = 0; i < x->rank; i++)
        ist[i] = xs[perm[i]];
    return whole(y->rank, y->dim, ist);
}

static int transpose_fold(Node *n)
{
    Copy c = transpose_copy(n);
    fold_copies(n, &c, 1);
    return 1;
}

static void transpose_emit(Emit *e, Node *n)
{
    Copy c = transpose_copy(n);
    int perm[MLBC_MAX_RANK];
    Buf p = {0};
    transpose_perm(n, n->in[0]->rank, perm);
    for (int i = 0; i < n->in[0]->rank; i++)
        buf_printf(&p, "%s%d", i ? "," : "", perm[i]);
    emit_copies(e, n, &c, 1, strf("Transpose %s by (%s) -> %s", dims_doc(n->in[0]),
                                  p.p ? p.p : "", shape_str(n->out[0])));
}

/* ---- Concat ---- */

static int concat_axis(Node *n, int rank)
{
    if (n->opset >= 4 && !attr(n, "axis"))
        node_die(n, "attribute 'axis' is required");
    return norm_axis(n, attr_int(n, "axis", 1), rank);
}

static void concat_infer(Node *n)
{
    if (n->nin < 1)
        node_die(n, "needs at least one input");
    Value *x0 = need_input(n, 0, "inputs");
    if (x0->rank == 0)
        node_die(n, "cannot concatenate scalars");
    int axis = concat_axis(n, x0->rank);
    int64_t dim[MLBC_MAX_RANK];
    memcpy(dim, x0->dim, sizeof dim);
    dim[axis] = 0;
    for (int i = 0; i < n->nin; i++) {
        Value *v = need_input(n, i, "inputs");
        need_same_type(n, x0, v);
        if (v->rank != x0->rank)
            node_die(n, "inputs '%s' %s and '%s' %s differ in rank", x0->name, shape_str(x0),
                     v->name, shape_str(v));
        for (int d = 0; d < v->rank; d++)
            if (d != axis && v->dim[d] != x0->dim[d])
                node_die(n, "inputs '%s' %s and '%s' %s differ on axis %d", x0->name,
                         shape_str(x0), v->name, shape_str(v), d);
        dim[axis] += v->dim[axis];
    }
    set_output(n, 0, x0->dt, x0->rank, dim);
}

static int concat_copies(Node *n, Copy *cs)
{
    Value *y = n->out[0];
    int axis = concat_axis(n, y->rank);
    int64_t ost[MLBC_MAX_RANK], at = 0;
    dense_strides(y->rank, y->dim, ost);
    for (int i = 0; i < n->nin; i++) {
        Value *x = n->in[i];
        int64_t ist[MLBC_MAX_RANK];
        dense_strides(x->rank, x->dim, ist);
        cs[i] = whole(x->rank, x->dim, ist);
        memcpy(cs[i].ost, ost, sizeof ost);
        cs[i].src = i;
        cs[i].ooff = at * ost[axis];
        at += x->dim[axis];
    }
    return n->nin;
}

static int concat_fold(Node *n)
{
    Copy *cs = xalloc(sizeof(Copy) * (size_t)n->nin);
    fold_copies(n, cs, concat_copies(n, cs));
    return 1;
}

static void concat_emit(Emit *e, Node *n)
{
    Copy *cs = xalloc(sizeof(Copy) * (size_t)n->nin);
    int nc = concat_copies(n, cs);
    emit_copies(e, n, cs, nc, strf("Concat %d x %s on axis %d -> %s", n->nin,
                                   dtype_name(n->out[0]->dt), concat_axis(n, n->out[0]->rank),
                                   shape_str(n->out[0])));
}

/* ---- Split ---- */

/* Sizes along the axis from the attribute or a constant input; 0 if not given, -1 if they
 * come from a non-constant input. */
static int split_sizes(Node *n, int64_t *sz)
{
    int k = -1;
    Value *s = input(n, 1);
    if (n->opset < 13)
        k = attr_ints(n, "split", sz, n->nout);
    if (k < 0 && s && (n->opset < 2 || n->opset >= 13)) {
        need_ints(n, 1, "split");
        if (!s->data)
            return -1;
        if (ints_count(s) != n->nout)
            node_die(n, "the split input has %lld values for %d outputs",
                     (long long)ints_count(s), n->nout);
        k = const_ints(n, s, sz, n->nout);
    }
    return k < 0 ? 0 : k;
}

static void split_infer(Node *n)
{
    Value *x = need_input(n, 0, "input");
    if (x->rank == 0)
        node_die(n, "cannot split a scalar");
    if (n->nout < 1)
        node_die(n, "needs at least one output");
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    int64_t *sz = xalloc(sizeof(int64_t) * (size_t)n->nout), dim[MLBC_MAX_RANK], total = 0;
    int k = split_sizes(n, sz);
    memcpy(dim, x->dim, sizeof dim);
    if (k < 0) {
        for (int i = 0; i < n->nout; i++) {
            if (!n->out[i])
                node_die(n, "output %d is omitted; the split is not constant", i);
            declared_or_die(n, i, x->dt, 1);
            Value *y = n->out[i];
            int bad = y->rank != x->rank;
            for (int d = 0; d < x->rank && !bad; d++)
                bad = d != axis && y->dim[d] != x->dim[d];
            if (bad)
                node_die(n, "output '%s' is declared %s, which is no part of %s on axis %d",
                         y->name, shape_str(y), shape_str(x), axis);
            total += y->dim[axis];
        }
        if (ints_count(n->in[1]) != n->nout)
            node_die(n, "the split input has %lld values for %d outputs",
                     (long long)ints_count(n->in[1]), n->nout);
        if (total != x->dim[axis])
            node_die(n, "the declared outputs add up to %lld on axis %d, not %lld",
                     (long long)total, axis, (long long)x->dim[axis]);
        return;
    }
    if (k == 0) {
        int64_t parts = n->opset >= 18 && attr(n, "num_outputs") ? attr_int(n, "num_outputs", 1)
                                                                 : n->nout;
        if (parts != n->nout)
            node_die(n, "num_outputs is %lld but the node has %d outputs", (long long)parts,
                     n->nout);
        int64_t d = x->dim[axis];
        if (n->opset < 18 && d % parts)
            node_die(n, "dimension %lld of axis %d cannot be split into %lld equal parts",
                     (long long)d, axis, (long long)parts);
        int64_t chunk = (d + parts - 1) / parts;
        for (int i = 0; i < n->nout; i++) {
            sz[i] = d - total < chunk ? d - total : chunk;
            total += sz[i];
        }
        k = n->nout;
    }
    if (k != n->nout)
        node_die(n, "split has %d values for %d outputs", k, n->nout);
    total = 0;
    for (int i = 0; i < k; i++) {
        if (sz[i] < 0 || sz[i] > x->dim[axis])
            node_die(n, "split size %lld is out of range for axis %d of %s", (long long)sz[i],
                     axis, shape_str(x));
        total += sz[i];
    }
    if (total != x->dim[axis])
        node_die(n, "split sizes add up to %lld, but axis %d has dimension %lld",
                 (long long)total, axis, (long long)x->dim[axis]);
    for (int i = 0; i < k; i++) {
        dim[axis] = sz[i];
        set_output(n, i, x->dt, x->rank, dim);
    }
}

static int split_copies(Node *n, Copy *cs)
{
    Value *x = n->in[0];
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank), nc = 0;
    int64_t ist[MLBC_MAX_RANK], at = 0;
    dense_strides(x->rank, x->dim, ist);
    for (int i = 0; i < n->nout; i++) {
        Value *y = n->out[i];
        if (!y)
            continue;  /* an omitted output: its size is still counted below */
        cs[nc] = whole(y->rank, y->dim, ist);
        cs[nc].dst = i;
        cs[nc].ioff = at * ist[axis];
        nc++;
        at += y->dim[axis];
    }
    return nc;
}

static int split_fold(Node *n)
{
    for (int i = 0; i < n->nout; i++)
        if (!n->out[i])
            return 0;
    Copy *cs = xalloc(sizeof(Copy) * (size_t)n->nout);
    fold_copies(n, cs, split_copies(n, cs));
    return 1;
}

static void split_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *s = input(n, 1);
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    for (int i = 0; i < n->nout; i++)
        if (!n->out[i])
            node_die(n, "output %d is omitted; mlbc needs every output of a Split", i);
    if (s && !s->data && n->opset >= 13) {
        Buf c = {0}, sh = {0};
        for (int i = 0; i < n->nout; i++) {
            cond_and(&c, strf("s[%d] == %s", i, lit(n->out[i]->dim[axis])));
            buf_printf(&sh, "%s%lld", i ? "," : "", (long long)n->out[i]->dim[axis]);
        }
        emit_check(e, n, s, c.p, strf("Split: the split input gives (%s)", sh.p));
    }
    Copy *cs = xalloc(sizeof(Copy) * (size_t)n->nout);
    int nc = split_copies(n, cs);
    emit_copies(e, n, cs, nc, strf("Split %s on axis %d into %d", dims_doc(x), axis, n->nout));
}

/* ---- Tile ---- */

static void tile_infer(Node *n)
{
    Value *x = need_input(n, 0, "input");
    int64_t rep[MLBC_MAX_RANK], dim[MLBC_MAX_RANK];
    if (n->opset < 6) {
        /* Tile-1: inputs tiles and axis, scalars. */
        need_const(n, 1);
        need_const(n, 2);
        Value *t = need_input(n, 1, "tiles"), *a = need_input(n, 2, "axis");
        int axis = norm_axis(n, value_get_i(a, 0), x->rank);
        for (int i = 0; i < x->rank; i++)
            rep[i] = i == axis ? value_get_i(t, 0) : 1;
    } else {
        Value *r = need_ints(n, 1, "repeats");
        if (ints_count(r) != x->rank)
            node_die(n, "repeats has %lld values but the input has rank %d",
                     (long long)ints_count(r), x->rank);
        if (!r->data) {
            declared_or_die(n, 0, x->dt, 1);
            Value *y = n->out[0];
            int bad = y->rank != x->rank;
            for (int i = 0; i < x->rank && !bad; i++)
                bad = x->dim[i] ? y->dim[i] % x->dim[i] != 0 : y->dim[i] != 0;
            if (bad)
                node_die(n, "output '%s' is declared %s, which is no tiling of %s", y->name,
                         shape_str(y), shape_str(x));
            return;
        }
        const_ints(n, r, rep, MLBC_MAX_RANK);
    }
    for (int i = 0; i < x->rank; i++) {
        if (rep[i] < 0 || rep[i] > MLBC_MAX_TENSOR_BYTES)
            node_die(n, "repeats has an invalid value %lld", (long long)rep[i]);
        if (x->dim[i] && rep[i] > MLBC_MAX_TENSOR_BYTES / x->dim[i])
            node_die(n, "output '%s' is too large; refusing to compile it", n->out[0]->name);
        dim[i] = x->dim[i] * rep[i];
    }
    set_output(n, 0, x->dt, x->rank, dim);
}

/* The output as (repeat, input index) pairs per axis: a broadcast copy of twice the rank. */
static Copy tile_copy(Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    int64_t xs[MLBC_MAX_RANK], ys[MLBC_MAX_RANK];
    dense_strides(x->rank, x->dim, xs);
    dense_strides(y->rank, y->dim, ys);
    Copy c = {0};
    c.rank = 2 * x->rank;
    for (int i = 0; i < x->rank; i++) {
        c.dim[2 * i] = x->dim[i] ? y->dim[i] / x->dim[i] : 0;
        c.ost[2 * i] = x->dim[i] * ys[i];
        c.ist[2 * i] = 0;
        c.dim[2 * i + 1] = x->dim[i];
        c.ost[2 * i + 1] = ys[i];
        c.ist[2 * i + 1] = xs[i];
    }
    return c;
}

static int tile_fold(Node *n)
{
    if (nbytes(n->out[0]) > FOLD_MAX_BYTES && nbytes(n->out[0]) > nbytes(n->in[0]))
        return 0;
    Copy c = tile_copy(n);
    fold_copies(n, &c, 1);
    return 1;
}

static void tile_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *r = input(n, 1), *y = n->out[0];
    if (n->opset >= 6 && !r->data && x->rank) {
        Buf c = {0};
        for (int i = 0; i < x->rank; i++)
            cond_and(&c, x->dim[i] ? strf("s[%d] == %s", i, lit(y->dim[i] / x->dim[i]))
                                   : strf("s[%d] >= 0", i));
        emit_check(e, n, r, c.p, strf("Tile: the repeats give %s from %s", shape_str(y),
                                      shape_str(x)));
    }
    Copy c = tile_copy(n);
    emit_copies(e, n, &c, 1, strf("Tile %s -> %s", dims_doc(x), shape_str(y)));
}

/* ---- DepthToSpace, SpaceToDepth ---- */

static int64_t blocksize(Node *n)
{
    if (!attr(n, "blocksize"))
        node_die(n, "attribute 'blocksize' is required");
    int64_t b = attr_int(n, "blocksize", 0);
    if (b <= 0 || b > 65536)
        node_die(n, "blocksize %lld is out of range", (long long)b);
    return b;
}

static int crd_mode(Node *n)
{
    const char *m = n->opset >= 11 ? attr_str(n, "mode", "DCR") : "DCR";
    if (strcmp(m, "DCR") && strcmp(m, "CRD"))
        node_die(n, "mode must be DCR or CRD, not '%s'", m);
    return !strcmp(m, "CRD");
}

static void d2s_infer(Node *n)
{
    Value *x = need_input(n, 0, "input");
    int64_t b = blocksize(n);
    crd_mode(n);
    if (x->rank != 4)
        node_die(n, "the input must be 4-D, not of shape %s", shape_str(x));
    if (x->dim[1] % (b * b))
        node_die(n, "channels %lld are not a multiple of blocksize^2 = %lld",
                 (long long)x->dim[1], (long long)(b * b));
    int64_t dim[4] = {x->dim[0], x->dim[1] / (b * b), x->dim[2] * b, x->dim[3] * b};
    set_output(n, 0, x->dt, 4, dim);
}

/* y[n, c, h*b + i, w*b + j] = x[n, DCR ? (i*b + j)*C' + c : c*b*b + i*b + j, h, w],
 * walked as the 6-D output (n, c, h, i, w, j). */
static Copy d2s_copy(Node *n)
{
    Value *x = n->in[0];
    int64_t b = blocksize(n), C = x->dim[1], H = x->dim[2], W = x->dim[3], Cp = C / (b * b);
    int crd = crd_mode(n);
    int64_t dim[6] = {x->dim[0], Cp, H, b, W, b};
    int64_t ist[6] = {C * H * W, crd ? b * b * H * W : H * W, W,
                      crd ? b * H * W : b * Cp * H * W, 1, crd ? H * W : Cp * H * W};
    return whole(6, dim, ist);
}

static void s2d_infer(Node *n)
{
    Value *x = need_input(n, 0, "input");
    int64_t b = blocksize(n);
    if (x->rank != 4)
        node_die(n, "the input must be 4-D, not of shape %s", shape_str(x));
    if (x->dim[2] % b || x->dim[3] % b)
        node_die(n, "height and width %lld x %lld are not multiples of blocksize %lld",
                 (long long)x->dim[2], (long long)x->dim[3], (long long)b);
    int64_t dim[4] = {x->dim[0], x->dim[1] * b * b, x->dim[2] / b, x->dim[3] / b};
    set_output(n, 0, x->dt, 4, dim);
}

/* y[n, (i*b + j)*C + c, h, w] = x[n, c, h*b + i, w*b + j], walked as (n, i, j, c, h, w). */
static Copy s2d_copy(Node *n)
{
    Value *x = n->in[0];
    int64_t b = blocksize(n), C = x->dim[1], H = x->dim[2], W = x->dim[3];
    int64_t dim[6] = {x->dim[0], b, b, C, H / b, W / b};
    int64_t ist[6] = {C * H * W, W, 1, H * W, b * W, b};
    return whole(6, dim, ist);
}

static int d2s_fold(Node *n)
{
    Copy c = !strcmp(n->op, "DepthToSpace") ? d2s_copy(n) : s2d_copy(n);
    fold_copies(n, &c, 1);
    return 1;
}

static void d2s_emit(Emit *e, Node *n)
{
    int d2s = !strcmp(n->op, "DepthToSpace");
    Copy c = d2s ? d2s_copy(n) : s2d_copy(n);
    emit_copies(e, n, &c, 1, strf("%s %s, blocksize %lld%s -> %s", n->op, dims_doc(n->in[0]),
                                  (long long)blocksize(n),
                                  d2s ? (crd_mode(n) ? " CRD" : " DCR") : "",
                                  shape_str(n->out[0])));
}

/* ---- Pad ---- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct PadInfo {
    int mode;
    int dyn;                        /* pads from a non-constant input */
    int64_t pb[MLBC_MAX_RANK];      /* leading pads (static) */
    int at[MLBC_MAX_RANK];          /* dyn: index of axis d's leading pad in the input, -1 */
    int npads;                      /* dyn: values in the pads input */
    unsigned char value[8];         /* constant mode: the fill element */
    int value_dyn;                  /* constant_value from a non-constant input */
} PadInfo;

static uint16_t to_half(double x)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 255, man = u & 0x7fffff;
    if (exp == 255)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp > 142)
        return (uint16_t)(sign | 0x7c00);
    if (exp < 113) {
        uint32_t shift = 126 - exp, m = man | 0x800000, r;
        if (shift > 24)
            return (uint16_t)sign;
        r = m >> shift;
        uint32_t rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    u = ((exp - 112) << 10) | (man >> 13);
    if ((man & 0x1fff) > 0x1000 || ((man & 0x1fff) == 0x1000 && (u & 1)))
        u++;
    return (uint16_t)(sign | u);
}

/* A double as the bytes of one element of type T. */
static void elem_from(DType t, double x, void *out)
{
    if (t == DT_FLOAT16) {
        uint16_t h = to_half(x);
        memcpy(out, &h, 2);
    } else if (t == DT_BFLOAT16) {
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = (u & 0x7fffffff) > 0x7f800000 ? (uint16_t)((u >> 16) | 0x40)
                                                   : (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
        memcpy(out, &h, 2);
    } else {
        Value v = {.dt = t, .data = out};
        value_set_f(&v, 0, x);
    }
}

static void pad_infer(Node *n)
{
    Value *x = need_input(n, 0, "data");
    int r = x->rank;
    PadInfo *pi = xalloc(sizeof *pi);
    n->aux = pi;
    const char *mode = attr_str(n, "mode", "constant");
    pi->mode = !strcmp(mode, "constant") ? PAD_CONSTANT : !strcmp(mode, "reflect") ? PAD_REFLECT
             : !strcmp(mode, "edge") ? PAD_EDGE : !strcmp(mode, "wrap") ? PAD_WRAP : -1;
    if (pi->mode < 0)
        node_die(n, "mode must be constant, reflect, edge or wrap, not '%s'", mode);
    int64_t pads[2 * MAXR], pe[MLBC_MAX_RANK] = {0}, dim[MLBC_MAX_RANK];
    int axes[MLBC_MAX_RANK], na = r;
    for (int d = 0; d < r; d++) {
        axes[d] = d;
        pi->at[d] = -1;
    }
    int k;
    if (n->opset < 11) {
        k = attr_ints(n, n->opset < 2 ? "paddings" : "pads", pads, 2 * MLBC_MAX_RANK);
        if (k < 0)
            node_die(n, "attribute '%s' is required", n->opset < 2 ? "paddings" : "pads");
        elem_from(x->dt, attr_float(n, "value", 0.0), pi->value);
    } else {
        Value *p = need_ints(n, 1, "pads"), *cv = input(n, 2), *ax = input(n, 3);
        if (ax) {
            int64_t a[MLBC_MAX_RANK], seen[MLBC_MAX_RANK] = {0};
            need_ints(n, 3, "axes");
            need_const(n, 3);
            na = const_ints(n, ax, a, MLBC_MAX_RANK);
            for (int i = 0; i < na; i++) {
                axes[i] = norm_axis(n, a[i], r);
                if (seen[axes[i]]++)
                    node_die(n, "axis %d is given twice", axes[i]);
            }
        }
        if (cv) {
            need_same_type(n, x, cv);
            if (numel(cv) != 1)
                node_die(n, "constant_value must be a scalar, not of shape %s", shape_str(cv));
            if (cv->data)
                memcpy(pi->value, cv->data, dtype_size(cv->dt));
            else
                pi->value_dyn = 1;
        }
        if (ints_count(p) != 2 * na)
            node_die(n, "pads has %lld values; %d axes need %d", (long long)ints_count(p), na,
                     2 * na);
        if (!p->data) {
            pi->dyn = 1;
            pi->npads = 2 * na;
            for (int i = 0; i < na; i++)
                pi->at[axes[i]] = i;
            declared_or_die(n, 0, x->dt, 1);
            Value *y = n->out[0];
            if (y->rank != r)
                node_die(n, "output '%s' is declared with rank %d; the input has rank %d",
                         y->name, y->rank, r);
            for (int d = 0; d < r; d++)
                if (pi->at[d] < 0 && y->dim[d] != x->dim[d])
                    node_die(n, "output '%s' is declared %s, but axis %d is not padded",
                             y->name, shape_str(y), d);
            goto check_mode;
        }
        k = const_ints(n, p, pads, 2 * MLBC_MAX_RANK);
    }
    if (k != 2 * na)
        node_die(n, "pads has %d values; rank %d needs %d", k, na, 2 * na);
    for (int i = 0; i < na; i++) {
        pi->pb[axes[i]] = pads[i];
        pe[axes[i]] = pads[i + na];
    }
    for (int d = 0; d < r; d++) {
        if (pi->pb[d] < -MLBC_MAX_TENSOR_BYTES || pi->pb[d] > MLBC_MAX_TENSOR_BYTES ||
            pe[d] < -MLBC_MAX_TENSOR_BYTES || pe[d] > MLBC_MAX_TENSOR_BYTES)
            node_die(n, "pads %lld and %lld of axis %d are out of range", (long long)pi->pb[d],
                     (long long)pe[d], d);
        dim[d] = x->dim[d] + pi->pb[d] + pe[d];
        if (dim[d] < 0)
            node_die(n, "pads %lld and %lld remove more than axis %d's %lld elements",
                     (long long)pi->pb[d], (long long)pe[d], d, (long long)x->dim[d]);
    }
    set_output(n, 0, x->dt, r, dim);
check_mode:
    if (pi->mode != PAD_CONSTANT)
        for (int d = 0; d < r; d++)
            if (x->dim[d] == 0 && n->out[0]->dim[d] > 0)
                node_die(n, "%s padding of the empty axis %d", mode, d);
}

/* Source index of output index o along an axis of input size len, after leading pad b;
 * -1 outside the input (constant mode). */
static int64_t pad_src(int mode, int64_t o, int64_t b, int64_t len)
{
    int64_t s = o - b;
    switch (mode) {
    case PAD_EDGE: return s < 0 ? 0 : s >= len ? len - 1 : s;
    case PAD_WRAP: s %= len; return s < 0 ? s + len : s;
    case PAD_REFLECT: {
        if (len == 1)
            return 0;
        int64_t p = 2 * (len - 1);
        s %= p;
        if (s < 0)
            s += p;
        return s < len ? s : p - s;
    }
    default: return s >= 0 && s < len ? s : -1;
    }
}

static int pad_fold(Node *n)
{
    const PadInfo *pi = n->aux;
    Value *x = n->in[0], *y = n->out[0];
    if (nbytes(y) > FOLD_MAX_BYTES && nbytes(y) > nbytes(x))
        return 0;
    size_t es = dtype_size(y->dt);
    int64_t xs[MLBC_MAX_RANK];
    dense_strides(x->rank, x->dim, xs);
    for (int64_t i = 0; i < numel(y); i++) {
        int64_t rem = i, src = 0;
        for (int d = y->rank - 1; d >= 0 && src >= 0; d--) {
            int64_t s = pad_src(pi->mode, rem % y->dim[d], pi->pb[d], x->dim[d]);
            src = s < 0 ? -1 : src + s * xs[d];
            rem /= y->dim[d];
        }
        memcpy((char *)y->data + i * es, src < 0 ? (const void *)pi->value : (const char *)x->data + src * es, es);
    }
    return 1;
}

static const char *pad_map_body(int mode)
{
    switch (mode) {
    case PAD_EDGE: return "    return s < 0 ? 0 : s >= n ? n - 1 : s;\n";
    case PAD_WRAP: return "    s %= n;\n    return s < 0 ? s + n : s;\n";
    default:
        return "    const long p = 2 * (n - 1);\n"
               "    if (n == 1)\n        return 0;\n"
               "    s %= p;\n    if (s < 0)\n        s += p;\n"
               "    return s < n ? s : p - s;\n";
    }
}

/* PREFIX (terms each followed by " + ", or NULL) then LAST, dropping a "0" after terms. */
static const char *terms(const char *prefix, const char *last)
{
    if (!prefix)
        return last;
    if (strcmp(last, "0"))
        return strf("%s%s", prefix, last);
    return strf("%.*s", (int)strlen(prefix) - 3, prefix);
}

/* What the Pad emitters share: the leading pad of each axis as C text (a literal, or b<d>
 * read from the pads input), the dense strides and the kernel's parameters and call. */
typedef struct PadGen {
    const PadInfo *pi;
    Value *x, *y;
    int r;
    const char *B[MLBC_MAX_RANK];
    int64_t xs[MLBC_MAX_RANK], ys[MLBC_MAX_RANK];
    Buf pre, params, call;          /* pre: the b<d> declarations */
    const char *doc;
} PadGen;

/* Axis d's pads come from the pads input at run time. */
static int pad_dyn_axis(const PadInfo *pi, int d)
{
    return pi->dyn && pi->at[d] >= 0;
}

/* Run-time pads must give the declared output shape. */
static void pad_check(Emit *e, Node *n, const PadInfo *pi)
{
    Value *x = n->in[0], *y = n->out[0];
    Buf c = {0};
    for (int d = 0; d < x->rank; d++)
        if (pad_dyn_axis(pi, d)) {
            /* Bounded first, so that the sum cannot overflow. */
            int i = pi->at[d], j = pi->at[d] + pi->npads / 2;
            const char *lo = lit(-x->dim[d]), *hi = lit(y->dim[d]);
            cond_and(&c, strf("s[%d] >= %s && s[%d] <= %s && s[%d] >= %s && s[%d] <= %s && "
                              "s[%d] + s[%d] == %s", i, lo, i, hi, j, lo, j, hi, i, j,
                              lit(y->dim[d] - x->dim[d])));
        }
    if (c.len)
        emit_check(e, n, input(n, 1), c.p, strf("Pad: the pads give %s from %s", shape_str(y),
                                                shape_str(x)));
}

/* Fills g->B and g->pre; returns whether any axis is padded or cropped. */
static int pad_leads(PadGen *g)
{
    const PadInfo *pi = g->pi;
    int padded = 0;
    for (int d = 0; d < g->r; d++) {
        if (pad_dyn_axis(pi, d)) {
            g->B[d] = strf("b%d", d);
            buf_printf(&g->pre, "    const long b%d = (long)p[%d];\n", d, pi->at[d]);
            padded = 1;
        } else {
            g->B[d] = lit(pi->dyn ? 0 : pi->pb[d]);
            padded |= pi->pb[d] != 0 || g->x->dim[d] != g->y->dim[d];
        }
    }
    return padded;
}

/* The window [LO, HI) of each output axis that the input covers, declaring lo<d>, hi<d> in
 * BODY for run-time pads; for the last static axis, the run's length and input start.
 * Returns 0 if some static window is empty. */
static int pad_windows(const PadGen *g, Buf *body, const char **LO, const char **HI,
                       int64_t *run, int64_t *skip)
{
    const PadInfo *pi = g->pi;
    int empty = 0;
    for (int d = 0; d < g->r; d++) {
        const char *xd = lit(g->x->dim[d]), *yd = lit(g->y->dim[d]);
        if (pad_dyn_axis(pi, d)) {
            LO[d] = strf("lo%d", d);
            HI[d] = strf("hi%d", d);
            buf_printf(body, "    const long lo%d = b%d > 0 ? b%d : 0;\n", d, d, d);
            buf_printf(body, "    const long hi%d = b%d + %s < %s ? b%d + %s : %s;\n", d, d, xd,
                       yd, d, xd, yd);
        } else {
            int64_t b = pi->dyn ? 0 : pi->pb[d], end = b + g->x->dim[d];
            int64_t lo = b > 0 ? b : 0, hi = end < g->y->dim[d] ? end : g->y->dim[d];
            empty |= hi <= lo;
            *run = hi - lo;
            *skip = lo - b;
            LO[d] = lit(lo);
            HI[d] = lit(hi);
        }
    }
    return !empty;
}

/* The loops over the windows of all axes but the last, around one memcpy of a row. */
static void pad_rows(const PadGen *g, Buf *body, const char *const *LO, const char *const *HI,
                     int64_t run, int64_t skip)
{
    const char *ind = "    ", *const *B = g->B;
    Buf oi = {0}, ii = {0};
    int l = g->r - 1, dyn_l = pad_dyn_axis(g->pi, l);
    for (int d = 0; d < l; d++) {
        buf_printf(body, "%sfor (long o%d = %s; o%d < %s; o%d++)\n", ind, d, LO[d], d, HI[d], d);
        ind = strf("%s    ", ind);
        buf_printf(&oi, "o%d * %s + ", d, lit(g->ys[d]));
        buf_printf(&ii, strcmp(B[d], "0") ? "(o%d - %s) * %s + " : "o%d%.0s * %s + ", d, B[d],
                   lit(g->xs[d]));
    }
    const char *len = dyn_l ? strf("(size_t)(%s - %s) * sizeof *y", HI[l], LO[l])
                            : lit(run * (int64_t)dtype_size(g->y->dt));
    const char *src = dyn_l ? strf("%s%s - %s", ii.p ? ii.p : "", LO[l], B[l])
                            : terms(ii.p, lit(skip));
    const char *cp = strf("memcpy(y + %s, x + %s, %s);\n", terms(oi.p, LO[l]), src, len);
    if (dyn_l)
        buf_printf(body, "%sif (%s > %s)\n%s    %s", ind, HI[l], LO[l], ind, cp);
    else
        buf_printf(body, "%s%s", ind, cp);
}

/* Constant mode: fill the output with the value, then copy the input's rows into the
 * window the pads leave. */
static void pad_emit_const(Emit *e, Node *n, PadGen *g)
{
    const char *v = elem_lit(g->y->dt, g->pi->value);
    if (g->pi->value_dyn) {
        buf_printf(&g->params, ", const %s *restrict c", dtype_ctype(g->y->dt));
        buf_printf(&g->call, ", %s", ref(e, input(n, 2)));
        v = "c[0]";
    }
    const char *LO[MLBC_MAX_RANK], *HI[MLBC_MAX_RANK];
    int64_t run = 0, skip = 0;      /* static innermost run: length, input start */
    Buf body = {0};
    if (pad_windows(g, &body, LO, HI, &run, &skip))
        pad_rows(g, &body, LO, HI, run, skip);
    const char *fn = kernel(e, n, "layout_pad_const", "DOC", g->doc, "PARAMS", g->params.p,
                            "PRE", g->pre.p ? g->pre.p : "", "COUNT", lit(numel(g->y)),
                            "VALUE", v, "BODY", body.p ? body.p : "", NULL);
    stmt(e, "%s(%s);", fn, g->call.p);
}

/* Mapped modes: walk the output in order, each axis adding its source offset. */
static void pad_emit_map(Emit *e, Node *n, PadGen *g)
{
    Buf body = {0};
    const char *ind = "    ", *prev = NULL;
    for (int d = 0; d < g->r; d++) {
        int64_t xd = g->x->dim[d];
        int shifted = strcmp(g->B[d], "0") != 0, moved = shifted || xd != g->y->dim[d];
        const char *o = shifted ? strf("o%d - %s", d, g->B[d]) : strf("o%d", d);
        const char *s = moved ? strf("${FN}_src(%s, %s)", o, lit(xd)) : o;
        const char *term = g->xs[d] == 1 ? s : strf("%s * %s", s, lit(g->xs[d]));
        buf_printf(&body, "%s%s {\n", ind, loop_head("long ", strf("o%d", d), g->y->dim[d], 1));
        ind = strf("%s    ", ind);
        buf_printf(&body, "%sconst long s%d = %s%s%s;\n", ind, d, prev ? prev : "",
                   prev ? " + " : "", term);
        prev = strf("s%d", d);
    }
    buf_printf(&body, "%sy[k++] = x[%s];\n", ind, prev);
    for (int d = g->r - 1; d >= 0; d--) {
        ind = strf("%.*s", (int)strlen(ind) - 4, ind);
        buf_printf(&body, "%s}\n", ind);
    }
    const char *fn = kernel(e, n, "layout_pad_map", "DOC", g->doc, "PARAMS", g->params.p,
                            "PRE", g->pre.p ? g->pre.p : "", "BODY", body.p,
                            "MAP", pad_map_body(g->pi->mode), NULL);
    stmt(e, "%s(%s);", fn, g->call.p);
}

static void pad_emit(Emit *e, Node *n)
{
    const PadInfo *pi = n->aux;
    PadGen g = {.pi = pi, .x = n->in[0], .y = n->out[0], .r = n->in[0]->rank};
    Value *x = g.x, *y = g.y;
    if (pi->dyn)
        pad_check(e, n, pi);
    if (!numel(y))
        return;
    int padded = pad_leads(&g);
    dense_strides(g.r, x->dim, g.xs);
    dense_strides(g.r, y->dim, g.ys);
    const char *ct = dtype_ctype(y->dt);
    buf_printf(&g.params, "const %s *restrict x, %s *restrict y", ct, ct);
    buf_printf(&g.call, "%s, %s", ref(e, x), ref(e, y));
    if (pi->dyn) {
        Value *p = input(n, 1);
        buf_printf(&g.params, ", const %s *restrict p", dtype_ctype(p->dt));
        buf_printf(&g.call, ", %s", ref(e, p));
    }
    g.doc = strf("Pad %s -> %s, mode %s%s", dims_doc(x), shape_str(y),
                 c_comment(attr_str(n, "mode", "constant")), pi->dyn ? ", pads at run time" : "");
    if (!padded || g.r == 0)
        stmt(e, "memcpy(%s, %s, %s); /* %s */", ref(e, y), ref(e, x), lit(nbytes(y)), g.doc);
    else if (pi->mode == PAD_CONSTANT)
        pad_emit_const(e, n, &g);
    else
        pad_emit_map(e, n, &g);
}

const OpDef ops_layout[] = {
    {"Transpose", transpose_infer, transpose_fold, transpose_emit, no_flops, 0},
    {"Concat", concat_infer, concat_fold, concat_emit, no_flops, 0},
    {"Split", split_infer, split_fold, split_emit, no_flops, 0},
    {"Tile", tile_infer, tile_fold, tile_emit, no_flops, 0},
    {"Pad", pad_infer, pad_fold, pad_emit, no_flops, 0},
    {"DepthToSpace", d2s_infer, d2s_fold, d2s_emit, no_flops, 0},
    {"SpaceToDepth", s2d_infer, d2s_fold, d2s_emit, no_flops, 0},
    {0},
};
