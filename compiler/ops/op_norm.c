/* op_norm.c - normalisations: LayerNormalization, BatchNormalization (inference and
 * training forms), InstanceNormalization, LRN and MeanVarianceNormalization.
 *
 * LayerNormalization, InstanceNormalization and MeanVarianceNormalization share one kernel
 * generator (templates/norm.c): the input's axes are split into kept axes (one
 * normalisation group per kept index) and reduced axes (the elements of a group); adjacent
 * axes are merged where every operand (x, scale, bias, statistics) walks them contiguously.
 * Statistics are computed in float (double for double inputs or stash_type = double).
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

#define CHUNK 256 /* LRN: spatial positions accumulated at once (a local array) */

static int lanes(int64_t K, DType c)
{
    return K >= 32 ? (c == DT_DOUBLE ? 4 : 8) : K >= 8 ? 4 : 1;
}

/* ---- the shared normalisation kernel ---- */

enum { OP_X, OP_S, OP_B, OP_STAT, NOPS };

typedef struct Norm {
    Value *x, *scale, *bias, *y, *mean, *inv;
    unsigned long mask;         /* reduced axes */
    int64_t st[NOPS][MLBC_MAX_RANK]; /* strides over x's shape (0: broadcast) */
    double eps;
    int eps_outside;            /* MVN: (x - mean) / (sqrt(var) + eps) */
    DType calc;                 /* computation type */
} Norm;

typedef struct Grp {
    int64_t n, st[NOPS];
    int red;
} Grp;

static int make_groups(const Norm *p, Grp *g)
{
    const Value *x = p->x;
    int ng = 0;
    for (int i = 0; i < x->rank; i++) {
        int red = (int)(p->mask >> i & 1);
        if (x->dim[i] == 1)
            continue;
        int merge = ng && g[ng - 1].red == red;
        for (int k = 0; k < NOPS && merge; k++)
            merge = g[ng - 1].st[k] == p->st[k][i] * x->dim[i];
        if (merge) {
            g[ng - 1].n *= x->dim[i];
            for (int k = 0; k < NOPS; k++)
                g[ng - 1].st[k] = p->st[k][i];
            continue;
        }
        g[ng].n = x->dim[i];
        g[ng].red = red;
        for (int k = 0; k < NOPS; k++)
            g[ng].st[k] = p->st[k][i];
        ng++;
    }
    return ng;
}

/* sum(i<g> * stride) of operand K over groups of kind RED (-1: all), except group SKIP. */
static const char *offset(const Grp *g, int ng, int k, int red, int skip)
{
    Buf b = {0};
    for (int i = 0; i < ng; i++) {
        if (i == skip || (red >= 0 && g[i].red != red) || !g[i].st[k])
            continue;
        if (b.len)
            buf_puts(&b, " + ");
        buf_printf(&b, g[i].st[k] == 1 ? "i%d" : "i%d * %s", i, lit(g[i].st[k]));
    }
    return b.len ? b.p : "0";
}

/* Index of operand K at the innermost reduced position "k" (inner = last group index). */
static const char *at(const Grp *g, int ng, int k, int inner)
{
    const char *base = offset(g, ng, k, -1, inner);
    if (inner < 0 || !g[inner].st[k])
        return base;
    const char *kk = g[inner].st[k] == 1 ? "k" : strf("k * %s", lit(g[inner].st[k]));
    return strcmp(base, "0") ? strf("%s + %s", base, kk) : kk;
}

/* A summation pass over the reduced elements of one group into acc[0]. */
static void sum_pass(Buf *b, int ind, const Grp *g, int ng, int inner, int L, const Norm *p,
                     const char *what)
{
    DType tx = p->x->dt;
    const char *C = dtype_ctype(p->calc);
    buf_line(b, ind, "%s", loop_head("", "j", L, 1));
    buf_line(b, ind + 1, "acc[j] = 0;");
    for (int i = 0; i < ng; i++)
        if (g[i].red && i != inner) {
            buf_line(b, ind, "for (i%d = 0; i%d < %s; i%d++) {", i, i, lit(g[i].n), i);
            ind++;
        }
    const char *base = offset(g, ng, OP_X, -1, inner);
    int mean = !strcmp(what, "mean");
    const char *term = mean ? "acc[%s] + v"
                       : p->calc == DT_FLOAT ? "mlbc_accf(v - mean, v - mean, acc[%s])"
                                             : fused(p->calc, "(v - mean)", "(v - mean)", "acc[%s]");
    if (inner < 0) {
        buf_line(b, ind, "{");
        buf_line(b, ind + 1, "const %s v = %s;", C, load_elem(tx, strf("x[%s]", base)));
        buf_line(b, ind + 1, "acc[0] = %s;", strf(term, "0"));
        buf_line(b, ind, "}");
    } else {
        int64_t K = g[inner].n, KM = K - K % L;
        if (KM && L > 1) {
            buf_line(b, ind, "for (k = 0; k < %s; k += %d)", lit(KM), L);
            buf_line(b, ind + 1, "for (j = 0; j < %d; j++) {", L);
            buf_line(b, ind + 2, "const %s v = %s;", C, load_elem(tx, strf("x[%s + k + j]", base)));
            buf_line(b, ind + 2, "acc[j] = %s;", strf(term, "j"));
            buf_line(b, ind + 1, "}");
        }
        if (K % L || (KM && L == 1)) {
            buf_line(b, ind, "for (k = %s; k < %s; k++) {", lit(L > 1 ? KM : 0), lit(K));
            buf_line(b, ind + 1, "const %s v = %s;", C, load_elem(tx, strf("x[%s + k]", base)));
            buf_line(b, ind + 1, "acc[0] = %s;", strf(term, "0"));
            buf_line(b, ind, "}");
        }
    }
    for (int i = 0; i < ng; i++)
        if (g[i].red && i != inner)
            buf_line(b, --ind, "}");
    lane_fold(b, ind, L, "acc", "%s + %s");
}

/* The body for a LayerNormalization that mlbc_layernorm_f32 (templates/norm_layer_f32.c)
 * computes with the same bits as the loops below: float, rows of n >= 32 contiguous features
 * (8 lanes), scale and bias per feature, no statistics output; else NULL. */
static const char *layernorm_rows(const Norm *p, const Grp *g, int ng)
{
    if (p->calc != DT_FLOAT || p->x->dt != DT_FLOAT || !p->scale || p->eps_outside ||
        p->mean || p->inv || !ng)
        return NULL;
    const Grp *in = &g[ng - 1];
    if (!in->red || in->st[OP_X] != 1 || in->st[OP_S] != 1 || (p->bias && in->st[OP_B] != 1) ||
        lanes(in->n, DT_FLOAT) != 8)
        return NULL;
    for (int i = 0; i < ng - 1; i++)
        if (g[i].red || g[i].st[OP_S] || (p->bias && g[i].st[OP_B]))
            return NULL;
    return strf("    mlbc_layernorm_f32(%s, %s, x, scale, %s, %s, y);\n",
                lit(numel(p->x) / in->n), lit(in->n), p->bias ? "bias" : "0",
                float_lit(p->eps, DT_FLOAT));
}

static const char *gen_norm(const Norm *p, int64_t count)
{
    Grp g[MLBC_MAX_RANK];
    int ng = make_groups(p, g);
    const char *rows = layernorm_rows(p, g, ng);
    if (rows)
        return rows;
    /* The innermost run, if reduced and contiguous in x, gets the lanes and the k loop. */
    int inner = ng && g[ng - 1].red && g[ng - 1].st[OP_X] == 1 ? ng - 1 : -1;
    int L = inner >= 0 ? lanes(g[inner].n, p->calc) : 1;
    DType C = p->calc;
    const char *CT = dtype_ctype(C);
    Buf b = {0}, decl = {0};
    /* float sums run in double (mlbc_accf) */
    buf_line(&b, 1, "%s acc[%d];", C == DT_FLOAT ? "double" : CT, L);
    buf_line(&b, 1, "%s mean, var, inv;", CT);
    for (int i = 0; i < ng; i++)
        if (i != inner)
            buf_printf(&decl, "%si%d", decl.len ? ", " : "", i);
    if (inner >= 0)
        buf_printf(&decl, "%sk", decl.len ? ", " : "");
    if (decl.len)
        buf_line(&b, 1, "long %s;", decl.p);
    buf_line(&b, 1, "int j;");
    int ind = 1;
    for (int i = 0; i < ng; i++)
        if (!g[i].red) {
            buf_line(&b, ind, "for (i%d = 0; i%d < %s; i%d++) {", i, i, lit(g[i].n), i);
            ind++;
        }
    const char *cnt = float_lit((double)count, C);
    sum_pass(&b, ind, g, ng, inner, L, p, "mean");
    buf_line(&b, ind, "mean = acc[0] / %s;", cnt);
    sum_pass(&b, ind, g, ng, inner, L, p, "var");
    buf_line(&b, ind, "var = acc[0] / %s;", cnt);
    if (p->eps_outside)
        buf_line(&b, ind, "inv = 1 / (sqrt%s(var) + %s);", libm_sfx(C), float_lit(p->eps, C));
    else
        buf_line(&b, ind, "inv = 1 / sqrt%s(var + %s);", libm_sfx(C), float_lit(p->eps, C));
    if (p->mean)
        buf_line(&b, ind, "mean_out[%s] = %s;", offset(g, ng, OP_STAT, 0, -1),
             store_as(p->mean->dt, C, "mean"));
    if (p->inv)
        buf_line(&b, ind, "inv_out[%s] = %s;", offset(g, ng, OP_STAT, 0, -1),
             store_as(p->inv->dt, C, "inv"));
    /* Pass 3: y over the group's elements. */
    for (int i = 0; i < ng; i++)
        if (g[i].red && i != inner) {
            buf_line(&b, ind, "for (i%d = 0; i%d < %s; i%d++)", i, i, lit(g[i].n), i);
            ind++;
        }
    int close = 0;
    if (inner >= 0) {
        buf_line(&b, ind, "for (k = 0; k < %s; k++)", lit(g[inner].n));
        ind++;
        close = 1;
    }
    /* ((x - mean) * inv) * scale + bias, the last multiply-add contraction-proof */
    const char *d = strf("(%s - mean)", load_elem(p->x->dt, strf("x[%s]", at(g, ng, OP_X, inner))));
    const char *f = "inv";
    if (p->scale) {
        d = strf("%s * inv", d);
        f = load_elem(p->scale->dt, strf("scale[%s]", at(g, ng, OP_S, inner)));
    }
    const char *v = strf("%s * %s", d, f);
    if (p->bias)
        v = madd(p->calc, d, f, load_elem(p->bias->dt, strf("bias[%s]", at(g, ng, OP_B, inner))));
    buf_line(&b, ind, "y[%s] = %s;", at(g, ng, OP_X, inner), store_as(p->y->dt, C, v));
    ind -= close;
    for (int i = 0; i < ng; i++)
        if (g[i].red && i != inner)
            ind--;
    for (int i = 0; i < ng; i++)
        if (!g[i].red)
            buf_line(&b, --ind, "}");
    return b.p;
}

static void emit_norm(Emit *e, Node *n, Norm *p, const char *doc)
{
    Value *x = p->x;
    if (!numel(x))
        return;
    dense_strides(x->rank, x->dim, p->st[OP_X]);
    int64_t s = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        p->st[OP_STAT][i] = p->mask >> i & 1 ? 0 : s;
        if (!(p->mask >> i & 1))
            s *= x->dim[i];
    }
    int64_t count = numel(x) / s;
    Buf params = {0}, args = {0};
    buf_printf(&params, "const %s *restrict x", dtype_ctype(x->dt));
    buf_puts(&args, ref(e, x));
    if (p->scale) {
        buf_printf(&params, ", const %s *restrict scale", dtype_ctype(p->scale->dt));
        buf_printf(&args, ", %s", ref(e, p->scale));
    }
    if (p->bias) {
        buf_printf(&params, ", const %s *restrict bias", dtype_ctype(p->bias->dt));
        buf_printf(&args, ", %s", ref(e, p->bias));
    }
    buf_printf(&params, ", %s *restrict y", dtype_ctype(p->y->dt));
    buf_printf(&args, ", %s", ref(e, p->y));
    if (p->mean) {
        buf_printf(&params, ", %s *restrict mean_out", dtype_ctype(p->mean->dt));
        buf_printf(&args, ", %s", ref(e, p->mean));
    }
    if (p->inv) {
        buf_printf(&params, ", %s *restrict inv_out", dtype_ctype(p->inv->dt));
        buf_printf(&args, ", %s", ref(e, p->inv));
    }
    const char *fn = kernel(e, n, "norm", "DOC", doc, "PARAMS", params.p,
                            "BODY", gen_norm(p, count), NULL);
    stmt(e, "%s(%s);", fn, args.p);
}

/* ---- LayerNormalization ---- */

static DType stash_type(Node *n)
{
    int64_t st = attr_int(n, "stash_type", 1);
    if (st != DT_FLOAT && st != DT_DOUBLE && st != DT_FLOAT16 && st != DT_BFLOAT16)
        node_die(n, "stash_type %lld is not supported", (long long)st);
    return (DType)st;
}

static void layernorm_infer(Node *n)
{
    Value *x = input(n, 0), *s = input(n, 1), *b = input(n, 2);
    if (!x || !s || n->nin > 3)
        node_die(n, "takes inputs X, Scale and optional B");
    need_floatish(n, x);
    need_same_type(n, x, s);
    if (b)
        need_same_type(n, x, b);
    int axis = norm_axis(n, attr_int(n, "axis", -1), x->rank);
    int64_t dim[MLBC_MAX_RANK];
    if (broadcast(n, x->rank, x->dim, s->rank, s->dim, dim) != x->rank ||
        memcmp(dim, x->dim, sizeof(int64_t) * x->rank))
        node_die(n, "Scale %s does not broadcast to X %s", shape_str(s), shape_str(x));
    if (b && (broadcast(n, x->rank, x->dim, b->rank, b->dim, dim) != x->rank ||
              memcmp(dim, x->dim, sizeof(int64_t) * x->rank)))
        node_die(n, "B %s does not broadcast to X %s", shape_str(b), shape_str(x));
    copy_shape(n, 0, x, DT_UNDEF);
    memcpy(dim, x->dim, sizeof(int64_t) * x->rank);
    for (int i = axis; i < x->rank; i++)
        dim[i] = 1;
    set_output(n, 1, stash_type(n), x->rank, dim);
    set_output(n, 2, stash_type(n), x->rank, dim);
}

static void layernorm_emit(Emit *e, Node *n)
{
    Value *x = n->in[0];
    int axis = norm_axis(n, attr_int(n, "axis", -1), x->rank);
    Norm p = {0};
    p.x = x;
    p.scale = n->in[1];
    p.bias = input(n, 2);
    p.y = n->out[0];
    p.mean = n->nout > 1 ? n->out[1] : NULL;
    p.inv = n->nout > 2 ? n->out[2] : NULL;
    for (int i = axis; i < x->rank; i++)
        p.mask |= 1ul << i;
    bcast_strides(p.scale, x->rank, x->dim, p.st[OP_S]);
    if (p.bias)
        bcast_strides(p.bias, x->rank, x->dim, p.st[OP_B]);
    p.eps = attr_float(n, "epsilon", 1e-5);
    p.calc = x->dt == DT_DOUBLE || stash_type(n) == DT_DOUBLE ? DT_DOUBLE : DT_FLOAT;
    emit_norm(e, n, &p, strf("LayerNormalization of %s%s over axes %d.., epsilon %g",
                             dtype_name(x->dt), shape_str(x), axis, p.eps));
}

/* ---- NormChain: LayerNorm as torch exports it below opset 17 (fuse.c) ---- */

/* The lines summing a row's K values V (a statement defining v from element "IDX" of the
 * row) into acc[0], as ReduceMean's rows kernel orders its sum over L lanes */
static const char *row_sum(int L, int64_t K, const char *v)
{
    Buf b = {0};
    int64_t KM = K - K % L;
    buf_line(&b, 2, "%s", loop_head("", "j", L, 1));
    buf_line(&b, 3, "acc[j] = 0;");
    if (K % L)
        buf_line(&b, 2, "rest = 0;");
    buf_line(&b, 2, "%s {", loop_head("", "k", KM, L));
    if (L > 1) {
        buf_line(&b, 3, "%s {", loop_head("", "j", L, 1));
        buf_line(&b, 4, "%s", strf(v, "k + j"));
        buf_line(&b, 4, "acc[j] = acc[j] + v;");
        buf_line(&b, 3, "}");
    } else {
        buf_line(&b, 3, "%s", strf(v, "k"));
        buf_line(&b, 3, "acc[0] = acc[0] + v;");
    }
    buf_line(&b, 2, "}");
    if (K % L) {
        buf_line(&b, 2, "%s {", loop_range("", "k", KM, K, 1));
        buf_line(&b, 3, "%s", strf(v, "k"));
        buf_line(&b, 3, "rest = rest + v;");
        buf_line(&b, 2, "}");
    }
    lane_fold(&b, 2, L, "acc", "%s + %s");
    if (K % L)
        buf_line(&b, 2, "acc[0] = acc[0] + rest;");
    return b.p;
}

/* Statement STMT for k over a row of K features, in loops as loop_nest_split splits them */
static const char *row_loops(int64_t K, const char *stmt)
{
    Buf b = {0};
    int64_t KV = whole_vectors(K);
    for (int part = 0; part < 2; part++) {
        int64_t from = part ? KV : 0, to = part ? K : KV;
        if (from < to) {
            buf_line(&b, 2, "%s", loop_range("", "k", from, to, 1));
            buf_line(&b, 3, "%s", stmt);
        }
    }
    return b.p;
}

/* "A op B" or "B op A": the operands in their node's order */
static const char *in_order(const char *a, const char *op, const char *b, int b_first)
{
    return b_first ? strf("%s %s %s", b, op, a) : strf("%s %s %s", a, op, b);
}

void norm_chain_emit(Emit *e, Node *n)
{
    const NormChain *c = n->aux;
    Value *x = n->in[0];
    int64_t K = x->dim[x->rank - 1];
    if (!numel(x))
        return;
    int L = reduce_lanes(K, 4);
    const char *y = "(xr[k] - mean) / sd", *eps = float_lit(c->eps, DT_FLOAT);
    Buf params = {0}, args = {0};
    buf_puts(&args, ref(e, x));
    for (int k = 1; k < n->nin; k++) {
        const char *name = c->scale && k == 1 ? "s" : "b";
        buf_printf(&params, "const float *restrict %s, ", name);
        buf_printf(&args, ", %s", ref(e, n->in[k]));
    }
    if (c->scale)
        y = in_order(strf("(%s)", y), "*", "s[k]", c->scale_first);
    const char *out = row_loops(K, strf("yr[k] = %s;", y));
    if (c->bias)
        out = strf("%s        MLBC_FENCE_AT(yr);\n%s", out,
                   row_loops(K, strf("yr[k] = %s;", in_order("yr[k]", "+", "b[k]",
                                                            c->bias_first))));
    const char *fn = kernel_paths(e, n, numel(x), "norm_chain",
        "DOC", strf("LayerNorm as %s: float%s over its last axis, epsilon %s%s%s", c->was,
                    shape_str(x), eps, c->scale ? ", a scale" : "", c->bias ? ", a bias" : ""),
        "PARAMS", params.len ? params.p : "", "L", lit(L), "REST", K % L ? ", rest" : "",
        "ROWS", lit(numel(x) / K), "K", lit(K), "KF", float_lit((double)K, DT_FLOAT),
        "SUM_X", row_sum(L, K, "const float v = xr[%s];"),
        "SQUARES", row_loops(K, "yr[k] = (xr[k] - mean) * (xr[k] - mean);"),
        "SUM_D2", row_sum(L, K, "const float v = yr[%s];"),
        "VAR_EPS", in_order("var", "+", eps, c->eps_first),
        "OUT", out, NULL);
    stmt(e, "%s(%s, %s);", fn, args.p, ref(e, n->out[0]));
}

/* ---- InstanceNormalization ---- */

static void instnorm_infer(Node *n)
{
    Value *x = input(n, 0), *s = input(n, 1), *b = input(n, 2);
    if (!x || !s || !b || n->nin != 3)
        node_die(n, "takes 3 inputs (input, scale, B)");
    need_floatish(n, x);
    need_same_type(n, x, s);
    need_same_type(n, x, b);
    if (x->rank < 3)
        node_die(n, "input must have rank >= 3 (N x C x D1 ...), got %s", shape_str(x));
    if (numel(s) != x->dim[1] || numel(b) != x->dim[1] || s->rank != 1 || b->rank != 1)
        node_die(n, "scale and B must have shape [C] = [%lld]", (long long)x->dim[1]);
    copy_shape(n, 0, x, DT_UNDEF);
}

static void instnorm_emit(Emit *e, Node *n)
{
    Value *x = n->in[0];
    Norm p = {0};
    p.x = x;
    p.scale = n->in[1];
    p.bias = n->in[2];
    p.y = n->out[0];
    for (int i = 2; i < x->rank; i++)
        p.mask |= 1ul << i;
    p.st[OP_S][1] = p.st[OP_B][1] = 1;
    p.eps = attr_float(n, "epsilon", 1e-5);
    p.calc = calc_type(x->dt);
    emit_norm(e, n, &p, strf("InstanceNormalization of %s%s, epsilon %g", dtype_name(x->dt),
                             shape_str(x), p.eps));
}

/* ---- MeanVarianceNormalization ---- */

static unsigned long mvn_mask(Node *n)
{
    Value *x = n->in[0];
    int64_t axes[MLBC_MAX_RANK * 2];
    int count = attr_ints(n, "axes", axes, MLBC_MAX_RANK * 2);
    if (count < 0) {
        count = 3;
        axes[0] = 0, axes[1] = 2, axes[2] = 3;
    }
    unsigned long m = 0;
    for (int i = 0; i < count; i++)
        m |= 1ul << norm_axis(n, axes[i], x->rank);
    return m;
}

static void mvn_infer(Node *n)
{
    Value *x = input(n, 0);
    if (!x || n->nin != 1)
        node_die(n, "takes exactly 1 input");
    need_floatish(n, x);
    mvn_mask(n);
    copy_shape(n, 0, x, DT_UNDEF);
}

static void mvn_emit(Emit *e, Node *n)
{
    Value *x = n->in[0];
    Norm p = {0};
    p.x = x;
    p.y = n->out[0];
    p.mask = mvn_mask(n);
    p.eps = 1e-9;
    p.eps_outside = 1;
    p.calc = calc_type(x->dt);
    emit_norm(e, n, &p, strf("MeanVarianceNormalization of %s%s: (x - mean) / (std + 1e-9)",
                             dtype_name(x->dt), shape_str(x)));
}

/* ---- BatchNormalization ---- */

static int bn_training(Node *n) { return n->opset >= 14 && attr_int(n, "training_mode", 0); }

static void bn_infer(Node *n)
{
    Value *x = input(n, 0);
    if (!x || n->nin != 5)
        node_die(n, "takes 5 inputs (X, scale, B, mean, var)");
    for (int i = 1; i < 5; i++)
        if (!n->in[i])
            node_die(n, "input %d is required", i);
    need_floatish(n, x);
    if (x->rank < 2)
        node_die(n, "X must have rank >= 2 (N x C ...), got %s", shape_str(x));
    if (n->opset < 9 && !attr_int(n, "spatial", 1))
        node_die(n, "spatial = 0 is not supported (flatten to N x (C*D1*...) instead)");
    int64_t C = x->dim[1];
    for (int i = 1; i < 5; i++) {
        Value *v = n->in[i];
        need_floatish(n, v);
        if (v->rank != 1 || v->dim[0] != C)
            node_die(n, "input '%s' must have shape [C] = [%lld], not %s", v->name,
                     (long long)C, shape_str(v));
    }
    need_same_type(n, n->in[1], n->in[2]);
    need_same_type(n, n->in[3], n->in[4]);
    copy_shape(n, 0, x, DT_UNDEF);
    for (int i = 1; i < 5; i++)     /* listed by some exporters, read by nothing (bn_emit) */
        set_output(n, i, n->in[3]->dt, 1, &C);
}

/* Outputs beyond Y that something reads: the running mean and variance in training mode
 * only; never the saved ones. Caffe2-era graphs list all five, unread. */
static void bn_check_outputs(Node *n)
{
    for (int i = 1; i < n->nout; i++) {
        if (!read_output(n, i))
            continue;
        if (i >= 3)
            node_die(n, "saved_mean/saved_var outputs are not supported");
        if (!bn_training(n))
            node_die(n, "outputs beyond Y are only defined in training mode%s",
                     n->opset < 14 ? " (not supported before opset 14)" : "");
    }
}

static void bn_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    bn_check_outputs(n);
    if (!numel(x))
        return;
    int64_t N = x->dim[0], C = x->dim[1], S = numel_dims(x->rank - 2, x->dim + 2);
    DType c = calc_type(x->dt);
    const char *CT = dtype_ctype(c);
    DType ts = n->in[1]->dt, tm = n->in[3]->dt;
    double eps = attr_float(n, "epsilon", 1e-5);
    const char *scale = strf("(%s)%s", CT, load_elem(ts, "scale[c]"));
    const char *bias = strf("(%s)%s", CT, load_elem(ts, "bias[c]"));
    const char *loadx = load_elem(x->dt, "xr[i]");
    const char *fn;
    if (!bn_training(n)) {
        /* paths whatever its size: on the build's own target (SSE2 at plain -O2) fmaf is a
         * call; one fused multiply-add a value, as a Conv's fused BatchNormalization */
        fn = kernel_paths(e, n, MLBC_PATHS_MIN, "norm_batch",
            "DOC", strf("BatchNormalization (inference) of %s%s, epsilon %g", dtype_name(x->dt),
                        shape_str(x), eps),
            "TX", dtype_ctype(x->dt), "TS", dtype_ctype(ts), "TM", dtype_ctype(tm), "CT", CT,
            "SFX", libm_sfx(c), "N", lit(N), "FOR_N", loop_head("", "n", N, 1), "C", lit(C),
            "S", lit(S),
            "SCALE", scale, "VAR", strf("(%s)%s", CT, load_elem(tm, "var[c]")),
            "EPS", float_lit(eps, c), "MEAN", strf("(%s)%s", CT, load_elem(tm, "mean[c]")),
            "BIAS", bias, "STORE", store_elem(x->dt, fused(c, strf("(%s - m)", loadx), "a", "b")),
            NULL);
        stmt(e, "%s(%s, %s, %s, %s, %s, %s);", fn, ref(e, x), ref(e, n->in[1]),
             ref(e, n->in[2]), ref(e, n->in[3]), ref(e, n->in[4]), ref(e, y));
        return;
    }
    double mom = attr_float(n, "momentum", 0.9);
    Value *rm = read_output(n, 1), *rv = read_output(n, 2);
    Buf running = {0};
    if (rm)
        buf_printf(&running, "        run_mean[c] = %s;\n",
                   store_elem(tm, madd(c, strf("(%s)%s", CT, load_elem(tm, "mean[c]")),
                                       float_lit(mom, c),
                                       strf("(%s)(bm * %s)", CT, float_lit(1 - mom, c)))));
    else
        buf_puts(&running, "        (void)run_mean;\n");
    if (rv)
        buf_printf(&running, "        run_var[c] = %s;\n",
                   store_elem(tm, madd(c, strf("(%s)%s", CT, load_elem(tm, "var[c]")),
                                       float_lit(mom, c),
                                       strf("(%s)(bv * %s)", CT, float_lit(1 - mom, c)))));
    else
        buf_puts(&running, "        (void)run_var;\n");
    if (!rm || !rv)
        buf_puts(&running, "        (void)mean;\n        (void)var;\n");
    int L = lanes(S, c);
    fn = kernel(e, n, "norm_batch_train",
        "DOC", strf("BatchNormalization (training) of %s%s, epsilon %g, momentum %g",
                    dtype_name(x->dt), shape_str(x), eps, mom),
        "TX", dtype_ctype(x->dt), "TS", dtype_ctype(ts), "TM", dtype_ctype(tm), "CT", CT,
        "SFX", libm_sfx(c), "N", lit(N), "C", lit(C), "S", lit(S), "L", strf("%d", L),
        "SM", lit(S - S % L), "CNT", float_lit((double)(N * S), c),
        "LOADIJ", load_elem(x->dt, "xr[i + j]"), "LOADI", load_elem(x->dt, "xr[i]"),
        "SCALE", scale, "EPS", float_lit(eps, c), "BIAS", bias,
        "SQJ", fused(c, "d", "d", "acc[j]"), "SQ0", fused(c, "d", "d", "acc[0]"),
        "STORE", store_elem(x->dt, madd(c, strf("(%s - bm)", loadx), "a", "b")),
        "RUNNING", running.p, NULL);
    /* An omitted running output still needs a pointer: y stands in (never written). */
    stmt(e, "%s(%s, %s, %s, %s, %s, %s, %s, %s);", fn, ref(e, x), ref(e, n->in[1]),
         ref(e, n->in[2]), ref(e, n->in[3]), ref(e, n->in[4]), ref(e, y),
         rm ? ref(e, rm) : "0", rv ? ref(e, rv) : "0");
}

/* ---- LRN ---- */

static void lrn_infer(Node *n)
{
    Value *x = input(n, 0);
    if (!x || n->nin != 1)
        node_die(n, "takes exactly 1 input");
    need_floatish(n, x);
    if (x->rank < 2)
        node_die(n, "X must have rank >= 2 (N x C ...), got %s", shape_str(x));
    if (attr_int(n, "size", 0) <= 0)
        node_die(n, "attribute 'size' is required and must be positive");
    copy_shape(n, 0, x, DT_UNDEF);
}

static void lrn_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    if (!numel(x))
        return;
    int64_t N = x->dim[0], C = x->dim[1], S = numel_dims(x->rank - 2, x->dim + 2);
    int64_t size = attr_int(n, "size", 1);
    double alpha = attr_float(n, "alpha", 1e-4), beta = attr_float(n, "beta", 0.75);
    double bias = attr_float(n, "bias", 1.0);
    DType c = calc_type(x->dt);
    int64_t CH = S < CHUNK ? S : CHUNK;
    const char *xc = load_elem(x->dt, strf("x[(n * %s + c) * %s + s0 + j]", lit(C), lit(S)));
    const char *fn = kernel(e, n, "norm_lrn",
        "DOC", strf("LRN of %s%s, size %lld, alpha %g, beta %g, bias %g", dtype_name(x->dt),
                    shape_str(x), (long long)size, alpha, beta, bias),
        "TX", dtype_ctype(x->dt), "CT", dtype_ctype(c), "N", lit(N), "C", lit(C),
        "FOR_N", loop_head("", "n", N, 1), "FOR_C", loop_head("", "c", C, 1),
        "S", lit(S), "CH", lit(CH), "FOR_S0", loop_head("", "s0", S, CH),
        "LO", lit((size - 1) / 2), "HI", lit(size / 2),
        "LOADR", load_elem(x->dt, "xr[j]"),
        "SQJ", fused(c, "v", "v", "acc[j]"),
        "STORE", store_elem(x->dt, strf("%s / pow%s(%s, %s)", xc, libm_sfx(c),
                                   madd(c, float_lit(alpha / (double)size, c), "acc[j]",
                                        float_lit(bias, c)),
                                   float_lit(beta, c))), NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

/* ---- cost estimates (--info): per element of X ---- */

static double norm_flops(Node *n) { return 8.0 * (double)numel(n->in[0]); }
static double bn_flops(Node *n) { return (bn_training(n) ? 8.0 : 3.0) * (double)numel(n->in[0]); }

static double lrn_flops(Node *n)
{
    return (2.0 * (double)attr_int(n, "size", 1) + 4.0) * (double)numel(n->in[0]);
}

const OpDef ops_norm[] = {
    {"LayerNormalization", layernorm_infer, NULL, layernorm_emit, norm_flops, 0},
    {"BatchNormalization", bn_infer, NULL, bn_emit, bn_flops, 0},
    {"InstanceNormalization", instnorm_infer, NULL, instnorm_emit, norm_flops, 0},
    {"MeanVarianceNormalization", mvn_infer, NULL, mvn_emit, norm_flops, 0},
    {"LRN", lrn_infer, NULL, lrn_emit, lrn_flops, 0},
    {0},
};
