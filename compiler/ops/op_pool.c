/* op_pool.c - MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool,
 * MaxUnpool.
 *
 * Windowed pools share one geometry (kernel_shape, strides, dilations, pads or auto_pad,
 * ceil_mode) and one kernel shape: rows of accumulators along the last spatial axis,
 * updated tap by tap with unit-stride loops (templates/pool_nd.c). The loop nest is
 * generated here, specialised to the shapes. Float MaxPool and AveragePool whose windows
 * lie inside the rows, at stride 1 or 2, take a row kernel vectorised on each CPU path
 * instead (templates/pool_rows.c): the same updates in the same order. Global pools reduce
 * each (n, c) plane with several independent accumulators (templates/pool_global.c).
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

#define MAXS (MLBC_MAX_RANK - 2)   /* spatial axes */

enum { P_MAX, P_AVG, P_LP };

typedef struct PoolGeom {
    int r;                                  /* spatial rank */
    int64_t L[MAXS], K[MAXS], S[MAXS], D[MAXS], PB[MAXS], PE[MAXS], O[MAXS];
} PoolGeom;

static int pool_kind(const Node *n)
{
    if (strstr(n->op, "Max"))
        return P_MAX;
    if (strstr(n->op, "Average"))
        return P_AVG;
    return P_LP;
}

/* The identity of max in the computation type. */
static const char *lowest(DType t)
{
    switch (t) {
    case DT_INT8: return "INT8_MIN";
    case DT_INT16: return "INT16_MIN";
    case DT_INT32: return "INT32_MIN";
    case DT_INT64: return "INT64_MIN";
    case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64: return "0";
    default: return "-INFINITY";
    }
}

static void need_pool_type(Node *n, const Value *x, int kind)
{
    static const DType floats[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_UNDEF};
    static const DType maxes[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_INT8,
                                  DT_UINT8, DT_UNDEF};
    need_type(n, x, kind == P_MAX ? maxes : floats);
}

/* The p of LpPool: a float attribute in opset 1, an int after. */
static double lp_p(Node *n)
{
    Onnx__AttributeProto *a = attr(n, "p");
    if (!a)
        return 2;
    double p = a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ? a->f : (double)a->i;
    if (!(p > 0))
        node_die(n, "p must be positive, not %g", p);
    return p;
}

static void read_axis_attr(Node *n, const char *name, int64_t *out, int count, int64_t dflt)
{
    int k = attr_ints(n, name, out, count);
    if (k < 0 || (k == 0 && strcmp(name, "kernel_shape"))) {
        for (int i = 0; i < count; i++)
            out[i] = dflt;
        return;
    }
    if (k != count)
        node_die(n, "attribute '%s' has %d values; the input has %d spatial axes", name, k,
                 strcmp(name, "pads") ? count : count / 2);
}

/* Geometry of a windowed pool of x (N, C, spatial...). */
static void pool_geom(Node *n, const Value *x, PoolGeom *g)
{
    if (x->rank < 3)
        node_die(n, "input '%s' must have rank >= 3 (N, C, spatial axes), not %d", x->name,
                 x->rank);
    int r = g->r = x->rank - 2;
    int64_t pads[2 * MAXS];
    if (attr_ints(n, "kernel_shape", g->K, MAXS) != r)
        node_die(n, "kernel_shape must be given with %d values", r);
    read_axis_attr(n, "strides", g->S, r, 1);
    read_axis_attr(n, "dilations", g->D, r, 1);
    read_axis_attr(n, "pads", pads, 2 * r, 0);
    int ceil_mode = (int)attr_int(n, "ceil_mode", 0);
    const char *ap = attr_str(n, "auto_pad", "NOTSET");
    if (!*ap)
        ap = "NOTSET";
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") &&
        strcmp(ap, "SAME_LOWER"))
        node_die(n, "auto_pad '%s' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER", ap);
    for (int a = 0; a < r; a++) {
        int64_t L = g->L[a] = x->dim[a + 2], K = g->K[a], S = g->S[a], D = g->D[a];
        if (K < 1 || S < 1 || D < 1)
            node_die(n, "kernel_shape, strides and dilations must be positive");
        if (pads[a] < 0 || pads[a + r] < 0)
            node_die(n, "pads must not be negative");
        int64_t ek = (K - 1) * D + 1, O;
        if (!strcmp(ap, "NOTSET")) {
            g->PB[a] = pads[a];
            g->PE[a] = pads[a + r];
            int64_t span = L + g->PB[a] + g->PE[a] - ek;
            if (span < 0)
                node_die(n, "the window (%lld) is larger than the padded input (%lld) on "
                         "spatial axis %d", (long long)ek, (long long)(L + g->PB[a] + g->PE[a]),
                         a);
            O = (ceil_mode ? (span + S - 1) / S : span / S) + 1;
            /* A last window starting past the input and its leading pad is dropped. */
            if (ceil_mode && (O - 1) * S >= L + g->PB[a])
                O--;
        } else if (!strcmp(ap, "VALID")) {
            g->PB[a] = g->PE[a] = 0;
            if (L < ek)
                node_die(n, "the window (%lld) is larger than the input (%lld) on spatial "
                         "axis %d", (long long)ek, (long long)L, a);
            O = (L - ek) / S + 1;
        } else {
            O = (L + S - 1) / S;
            int64_t total = (O - 1) * S + ek - L;
            if (total < 0)
                total = 0;
            int upper = !strcmp(ap, "SAME_UPPER");
            g->PB[a] = upper ? total / 2 : total - total / 2;
            g->PE[a] = total - g->PB[a];
        }
        g->O[a] = O;
    }
}

static void pool_infer(Node *n)
{
    if (n->nin != 1 || !n->in[0])
        node_die(n, "takes exactly one input");
    Value *x = n->in[0];
    int kind = pool_kind(n);
    need_pool_type(n, x, kind);
    PoolGeom g;
    pool_geom(n, x, &g);
    if (kind == P_LP)
        lp_p(n);
    if (kind == P_MAX) {
        int64_t so = attr_int(n, "storage_order", 0);
        if (so != 0 && so != 1)
            node_die(n, "storage_order must be 0 or 1");
    }
    int64_t dim[MLBC_MAX_RANK];
    dim[0] = x->dim[0];
    dim[1] = x->dim[1];
    for (int a = 0; a < g.r; a++)
        dim[a + 2] = g.O[a];
    set_output(n, 0, x->dt, x->rank, dim);
    if (n->nout > 1)
        set_output(n, 1, DT_INT64, x->rank, dim);
}

/* ---- emission ---- */

/* "v * c", or "v" when c is 1. */
static const char *times(const char *v, int64_t c)
{
    return c == 1 ? v : strf("%s * %s", v, lit(c));
}

/* "x + c" / "x - c", or "x" when c is 0. */
static const char *plus(const char *x, int64_t c)
{
    return c == 0 ? x : c > 0 ? strf("%s + %s", x, lit(c)) : strf("%s - %s", x, lit(-c));
}

/* "x / c", or "x" when c is 1. */
static const char *over(const char *x, int64_t c)
{
    return c == 1 ? x : strf("(%s) / %s", x, lit(c));
}

static const char *ints_str(const int64_t *v, int n)
{
    Buf b = {0};
    for (int i = 0; i < n; i++)
        buf_printf(&b, i ? "x%lld" : "%lld", (long long)v[i]);
    return b.p ? b.p : "";
}

/* What the parts of a windowed pool's kernel share. */
typedef struct PoolK {
    Node *n;
    PoolGeom g;
    Value *ind;                         /* the indices output, or NULL */
    int kind, l, colmajor, include_pad;
    double p;                           /* LpPool's p */
    DType t, at;                        /* element and computation types */
    const char *T, *A, *sf;
    int64_t XS[MAXS], YS[MAXS], IS[MAXS], xplane, yplane, OL;
} PoolK;

static void pool_setup(Node *n, PoolK *k)
{
    memset(k, 0, sizeof *k);
    k->n = n;
    k->ind = read_output(n, 1);        /* the indices only where read */
    k->kind = pool_kind(n);
    pool_geom(n, n->in[0], &k->g);
    int r = k->g.r;
    k->l = r - 1;
    k->t = n->in[0]->dt;
    k->at = calc_type(k->t);
    k->T = dtype_ctype(k->t);
    k->A = dtype_ctype(k->at);
    k->sf = libm_sfx(k->at);
    k->colmajor = k->ind && attr_int(n, "storage_order", 0) == 1;
    k->include_pad = k->kind == P_AVG && attr_int(n, "count_include_pad", 0);
    k->p = k->kind == P_LP ? lp_p(n) : 0;
    k->xplane = k->yplane = 1;
    for (int a = r - 1; a >= 0; a--) {
        k->XS[a] = k->xplane;
        k->YS[a] = k->yplane;
        k->xplane *= k->g.L[a];
        k->yplane *= k->g.O[a];
    }
    int64_t s = 1;
    for (int a = 0; a < r; a++) {
        k->IS[a] = k->colmajor ? s : k->XS[a];
        s *= k->g.L[a];
    }
    k->OL = k->g.O[k->l];
}

/* The update of output column u by the tap v = xr[XI] in the generic kernel. */
static const char *tap_update(const PoolK *k, const char *xi)
{
    Buf up = {0};
    buf_line(&up, 0, "const %s v = %s;", k->A, load_elem(k->t, strf("xr[%s]", xi)));
    if (k->kind == P_MAX && k->ind)
        buf_line(&up, 0, "ia[u] = v > acc[u] ? ib + %s : ia[u];",
                 times(strf("(%s)", xi), k->IS[k->l]));
    if (k->kind == P_MAX)
        buf_line(&up, 0, "acc[u] = v > acc[u] ? v : acc[u];");
    else if (k->kind == P_AVG)
        buf_line(&up, 0, "acc[u] += v;");
    else if (k->p == 1)
        buf_line(&up, 0, "acc[u] += fabs%s(v);", k->sf);
    else if (k->p == 2)
        buf_line(&up, 0, "acc[u] = %s;", fused(k->at, "v", "v", "acc[u]"));
    else
        buf_line(&up, 0, "acc[u] += pow%s(fabs%s(v), %.17g);", k->sf, k->sf, k->p);
    return up.p;
}

/* Generic kernel, at depth d inside the loops over c and the outer output axes: the row of
 * accumulators acc (and indices ia), updated tap by tap. */
static void emit_taps(Buf *b, int d, const PoolK *k)
{
    const PoolGeom *g = &k->g;
    int l = k->l;
    buf_line(b, d, "%s acc[%s];", k->A, lit(k->OL));
    if (k->ind)
        buf_line(b, d, "int64_t ia[%s];", lit(k->OL));
    buf_line(b, d, "for (long o = 0; o < %s; o++)", lit(k->OL));
    buf_line(b, d + 1, "acc[o] = %s;", k->kind == P_MAX ? lowest(k->at) : "0");
    if (k->ind) {
        buf_line(b, d, "for (long o = 0; o < %s; o++)", lit(k->OL));
        buf_line(b, d + 1, "ia[o] = 0;");
    }
    int dk = d;
    for (int a = 0; a < l; a++) {
        buf_line(b, dk, "for (long k%d = lo%d; k%d < hi%d; k%d++) {", a, a, a, a, a);
        dk++;
    }
    Buf xoff = {0}, ioff = {0};
    buf_printf(&ioff, "c * %s", lit(k->xplane));
    for (int a = 0; a < l; a++) {
        const char *pos = strf("(s%d + %s)", a, times(strf("k%d", a), g->D[a]));
        buf_printf(&xoff, "%s%s", a ? " + " : "", times(pos, k->XS[a]));
        buf_printf(&ioff, " + %s", times(pos, k->IS[a]));
    }
    if (!xoff.p)
        buf_puts(&xoff, "0");
    buf_line(b, dk, "const %s *restrict xr = xc + %s;", k->T, xoff.p);
    if (k->ind)
        buf_line(b, dk, "const int64_t ib = %s;", ioff.p);
    buf_line(b, dk, "for (long kl = 0; kl < %s; kl++) {", lit(g->K[l]));
    dk++;
    buf_line(b, dk, "const long off = %s;", plus(times("kl", g->D[l]), -g->PB[l]));
    buf_line(b, dk, "const long olo = off < 0 ? %s : 0;", over(plus("-off", g->S[l] - 1), g->S[l]));
    buf_line(b, dk, "const long oe = %s;",
             over(strf("%s - off", lit(g->L[l] + g->S[l] - 1)), g->S[l]));
    buf_line(b, dk, "const long ohi = oe < %s ? oe : %s;", lit(k->OL), lit(k->OL));
    /* Columns in blocks of 8 (an inner loop of constant trip count, which gcc -O2
     * vectorises), then the rest one by one; the update of column u is the same. */
    const char *up = tap_update(k, strf("%s + off", times("u", g->S[l])));
    buf_line(b, dk, "long o = olo;");
    for (int pass = k->OL < 8; pass < 2; pass++) {
        int in = dk + 1 + (pass == 0);
        if (pass == 0) {
            buf_line(b, dk, "for (; o + 8 <= ohi; o += 8)");
            buf_line(b, dk + 1, "for (long q = 0; q < 8; q++) {");
        } else {
            /* counted from o, not up to ohi: gcc -O2 then sees the bound of acc[] */
            buf_line(b, dk, "for (long q = 0; q < ohi - o; q++) {");
        }
        buf_line(b, in, "const long u = o + q;");
        for (const char *ln = up; *ln;) {
            const char *nl = strchr(ln, '\n');
            buf_line(b, in, "%.*s", (int)(nl - ln), ln);
            ln = nl + 1;
        }
        buf_line(b, in - 1, "}");
    }
    for (dk--; dk >= d; dk--)
        buf_line(b, dk, "}");
}

/* AveragePool: the output row yr from its sums in ACC[o], divided by the taps counted. */
static void emit_average(Buf *b, int d, const PoolK *k, const char *acc)
{
    const PoolGeom *g = &k->g;
    int l = k->l;
    Buf cnt = {0};
    buf_puts(&cnt, "1");
    for (int a = 0; a < l; a++) {
        if (k->include_pad)
            buf_printf(&cnt, " * mlbc_pool_taps(%s, %s, %s, %s)", plus(strf("s%d", a), g->PB[a]),
                       lit(g->L[a] + g->PB[a] + g->PE[a]), lit(g->K[a]), lit(g->D[a]));
        else
            buf_printf(&cnt, " * (hi%d > lo%d ? hi%d - lo%d : 0)", a, a, a, a);
    }
    buf_line(b, d, "const long nrow = %s;", cnt.p);
    buf_line(b, d, "for (long o = 0; o < %s; o++) {", lit(k->OL));
    /* windows all inside the row: K taps each (a call an output had been 10% of a small CNN
     * at gcc -O2) */
    if (!g->PB[l] && !g->PE[l] && (k->OL - 1) * g->S[l] + (g->K[l] - 1) * g->D[l] < g->L[l])
        buf_line(b, d + 1, "const long n = nrow * %s;", lit(g->K[l]));
    else if (k->include_pad)
        buf_line(b, d + 1, "const long n = nrow * mlbc_pool_taps(%s, %s, %s, %s);",
             times("o", g->S[l]), lit(g->L[l] + g->PB[l] + g->PE[l]), lit(g->K[l]), lit(g->D[l]));
    else
        buf_line(b, d + 1, "const long n = nrow * mlbc_pool_taps(%s, %s, %s, %s);",
             plus(times("o", g->S[l]), -g->PB[l]), lit(g->L[l]), lit(g->K[l]), lit(g->D[l]));
    buf_line(b, d + 1, "yr[o] = %s;",
             store_elem(k->t, strf("n ? %s[o] / (%s)n : 0", acc, k->A)));
    buf_line(b, d, "}");
}

/* Generic kernel: the accumulators to the output row yr (and the indices to ir). */
static void emit_finish(Buf *b, int d, const PoolK *k, const char *yoff)
{
    buf_line(b, d, "%s *restrict yr = yc + %s;", k->T, yoff);
    if (k->ind)
        buf_line(b, d, "int64_t *restrict ir = ind + c * %s + (%s);", lit(k->yplane), yoff);
    if (k->kind == P_AVG) {
        emit_average(b, d, k, "acc");
        return;
    }
    const char *res = "acc[o]", *sf = k->sf;
    if (k->kind == P_LP)
        res = k->p == 1 ? "acc[o]" : k->p == 2 ? strf("sqrt%s(acc[o])", sf)
                                               : strf("pow%s(acc[o], %.17g)", sf, 1 / k->p);
    buf_line(b, d, "for (long o = 0; o < %s; o++)", lit(k->OL));
    buf_line(b, d + 1, "yr[o] = %s;", store_elem(k->t, res));
    if (k->ind) {
        buf_line(b, d, "for (long o = 0; o < %s; o++)", lit(k->OL));
        buf_line(b, d + 1, "ir[o] = ia[o];");
    }
}

/* Float MaxPool without indices or AveragePool whose windows all lie inside the rows of the
 * last axis, with stride 1, or 2 and at least two taps: the vectorised row kernel of
 * templates/pool_rows.c (the same updates in the same order as the generic one). Returns its
 * name, or NULL when the pool does not qualify. */
static const char *rows_kernel(Emit *e, const PoolK *k)
{
    const PoolGeom *g = &k->g;
    int l = k->l;
    int64_t S = g->S[l], span = (g->K[l] - 1) * g->D[l];
    if (!(k->kind == P_MAX || k->kind == P_AVG) || k->ind || k->t != DT_FLOAT ||
        g->PB[l] || (k->OL - 1) * S + span >= g->L[l] || !(S == 1 || (S == 2 && span > 0)))
        return NULL;
    int64_t rs = l ? g->D[l - 1] * k->XS[l - 1] : 0;
    return pool_rows_kernel(e, k->n, k->kind == P_MAX, k->OL, g->K[l], S, g->D[l], rs);
}

const char *pool_rows_kernel(Emit *e, Node *n, int max, int64_t ol, int64_t k, int64_t s,
                             int64_t d, int64_t rs)
{
    kernel(e, n, "pool_isa", NULL);  /* its paths, once */
    return kernel(e, n, "pool_rows",
                  "DOC", strf("%s rows: %lld outputs, kernel %lld, stride %lld, dilation "
                              "%lld; rows %lld apart", max ? "MaxPool" : "AveragePool",
                              (long long)ol, (long long)k, (long long)s, (long long)d,
                              (long long)rs),
                  "MAX", max ? "1" : "0", "OL", lit(ol), "K", lit(k), "S", lit(s),
                  "D", lit(d), "RS", lit(rs), NULL);
}

int maxpool_plain_2d(Node *pool, int64_t *k, int64_t *s)
{
    PoolK pk;
    pool_setup(pool, &pk);
    const PoolGeom *g = &pk.g;
    if (pk.kind != P_MAX || pk.ind || pk.t != DT_FLOAT || g->r != 2)
        return 0;
    for (int a = 0; a < 2; a++) {
        if (g->PB[a] || g->PE[a] || g->D[a] != 1 || g->O[a] != (g->L[a] - g->K[a]) / g->S[a] + 1)
            return 0;
        k[a] = g->K[a];
        s[a] = g->S[a];
    }
    return 1;
}

/* The output row yr of a rows_kernel pool: the start (-inf, or +0 for a sum), then the
 * window's rows, those of the last outer axis in one call (which starts from the start
 * itself when it is the only one); an average then divides. */
static void emit_rows(Buf *b, int d, const PoolK *k, const char *yoff, const char *rows)
{
    const PoolGeom *g = &k->g;
    int l = k->l, dk = d;
    buf_line(b, d, "float *restrict yr = yc + %s;", yoff);
    buf_line(b, d, "const float init = %s;", k->kind == P_MAX ? "-INFINITY" : "0");
    if (l > 1) {
        buf_line(b, d, "for (long o = 0; o < %s; o++)", lit(k->OL));
        buf_line(b, d + 1, "yr[o] = init;");
    }
    for (int a = 0; a + 1 < l; a++) {
        buf_line(b, dk, "for (long k%d = lo%d; k%d < hi%d; k%d++) {", a, a, a, a, a);
        dk++;
    }
    Buf xoff = {0};
    for (int a = 0; a < l; a++) {
        const char *ka = a + 1 < l ? strf("k%d", a) : strf("lo%d", a);
        const char *pos = strf("(s%d + %s)", a, times(ka, g->D[a]));
        buf_printf(&xoff, "%s%s", a ? " + " : "", times(pos, k->XS[a]));
    }
    const char *start = l > 1 ? "NULL" : "&init";
    if (l == 0)
        buf_line(b, dk, "%s(xc, 1, yr, %s);", rows, start);
    else
        buf_line(b, dk, "%s(xc + %s, hi%d - lo%d, yr, %s);", rows, xoff.p, l - 1, l - 1, start);
    for (dk--; dk >= d; dk--)
        buf_line(b, dk, "}");
    if (k->kind == P_AVG)
        emit_average(b, d, k, "yr");
}

static void pool_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    PoolK k;
    pool_setup(n, &k);
    const PoolGeom *g = &k.g;
    int r = g->r, l = k.l;

    Buf b = {0};
    buf_line(&b, 1, "%s {", loop_head("long ", "c", x->dim[0] * x->dim[1], 1));
    buf_line(&b, 2, "const %s *restrict xc = x + c * %s;", k.T, lit(k.xplane));
    buf_line(&b, 2, "%s *restrict yc = y + c * %s;", k.T, lit(k.yplane));
    int d = 2;
    for (int a = 0; a < l; a++) {
        buf_line(&b, d, "for (long o%d = 0; o%d < %s; o%d++) {", a, a, lit(g->O[a]), a);
        d++;
        const char *sv = strf("s%d", a);
        buf_line(&b, d, "const long %s = %s;", sv, plus(times(strf("o%d", a), g->S[a]), -g->PB[a]));
        buf_line(&b, d, "const long lo%d = %s < 0 ? %s : 0;", a, sv,
             over(plus(strf("-%s", sv), g->D[a] - 1), g->D[a]));
        buf_line(&b, d, "const long e%d = %s;", a,
             over(strf("%s - %s", lit(g->L[a] + g->D[a] - 1), sv), g->D[a]));
        buf_line(&b, d, "const long hi%d = e%d < %s ? e%d : %s;", a, a, lit(g->K[a]), a,
                 lit(g->K[a]));
    }
    Buf yoff = {0};
    for (int a = 0; a < l; a++)
        buf_printf(&yoff, "%s%s", a ? " + " : "", times(strf("o%d", a), k.YS[a]));
    if (!yoff.p)
        buf_puts(&yoff, "0");
    const char *rows = rows_kernel(e, &k);
    if (rows) {
        emit_rows(&b, d, &k, yoff.p, rows);
    } else {
        emit_taps(&b, d, &k);
        emit_finish(&b, d, &k, yoff.p);
    }
    for (d--; d >= 1; d--)
        buf_line(&b, d, "}");

    const char *params = strf("const %s *restrict x, %s *restrict y%s", k.T, k.T,
                              k.ind ? ", int64_t *restrict ind" : "");
    const char *what = k.kind == P_LP ? strf("LpPool p=%g", k.p) : n->op;
    Buf doc = {0};
    buf_printf(&doc, "%s %s%s -> %s: kernel %s, strides %s, dilations %s", what,
               dtype_name(k.t), shape_str(x), shape_str(y), ints_str(g->K, r), ints_str(g->S, r),
               ints_str(g->D, r));
    buf_printf(&doc, ", pads %s+%s", ints_str(g->PB, r), ints_str(g->PE, r));
    if (k.kind == P_AVG)
        buf_puts(&doc, k.include_pad ? ", padding counted" : ", padding not counted");
    if (k.ind)
        buf_puts(&doc, k.colmajor ? ", indices column-major" : ", indices row-major");
    const char *fn = kernel(e, n, "pool_nd", "DOC", doc.p, "PARAMS", params, "BODY", b.p, NULL);
    stmt(e, "%s(%s, %s%s);", fn, ref(e, x), ref(e, y), k.ind ? strf(", %s", ref(e, k.ind)) : "");
}

static double pool_flops(Node *n)
{
    PoolGeom g;
    pool_geom(n, n->in[0], &g);
    return (double)numel(n->out[0]) * (double)numel_dims(g.r, g.K);
}

/* ---- global pools ---- */

static void global_infer(Node *n)
{
    if (n->nin != 1 || !n->in[0])
        node_die(n, "takes exactly one input");
    Value *x = n->in[0];
    need_pool_type(n, x, pool_kind(n));
    if (x->rank < 3)
        node_die(n, "input '%s' must have rank >= 3 (N, C, spatial axes), not %d", x->name,
                 x->rank);
    if (pool_kind(n) == P_LP)
        lp_p(n);
    int64_t dim[MLBC_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        dim[i] = i < 2 ? x->dim[i] : 1;
    set_output(n, 0, x->dt, x->rank, dim);
}

static void global_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    int kind = pool_kind(n);
    DType t = x->dt, at = calc_type(t);
    const char *A = dtype_ctype(at), *sf = libm_sfx(at);
    int64_t plane = numel_dims(x->rank - 2, x->dim + 2), nc = x->dim[0] * x->dim[1];
    double p = kind == P_LP ? lp_p(n) : 0;
    Buf b = {0};
    const char *v = load_elem(t, "xc[i]"), *res;
    if (kind == P_MAX) {
        buf_line(&b, 2, "%s m = %s;", A, lowest(at));
        buf_line(&b, 2, "for (long i = 0; i < %s; i++) {", lit(plane));
        buf_line(&b, 3, "const %s v = %s;", A, v);
        buf_line(&b, 3, "m = v > m ? v : m;");
        buf_line(&b, 2, "}");
        res = "m";
    } else {
        const char *term = kind == P_AVG || p == 1 ? "v" : p == 2 ? "v * v"
                                                       : strf("pow%s(v, %.17g)", sf, p);
        if (kind == P_LP && p != 2)
            term = p == 1 ? strf("fabs%s(v)", sf) : strf("pow%s(fabs%s(v), %.17g)", sf, sf, p);
        int64_t main = plane / 8 * 8;
        buf_line(&b, 2, "%s s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, sum;", A);
        if (!strcmp(term, "v") && t == DT_FLOAT && main) {
            /* the lanes as one vector (sum_lanes8) */
            buf_line(&b, 2, "long k;");
            buf_line(&b, 2, "mlbc_f8 lanes = {0};");
            sum_lanes8(&b, 2, "xc", main);
            buf_line(&b, 2, "memcpy(s, &lanes, sizeof lanes);");
        } else {
            buf_line(&b, 2, "%s", loop_head("long ", "i0", main, 8));
            buf_line(&b, 3, "for (long k = 0; k < 8; k++) {");
            buf_line(&b, 4, "const %s v = %s;", A, load_elem(t, "xc[i0 + k]"));
            buf_line(&b, 4, "s[k] += %s;", term);
            buf_line(&b, 3, "}");
        }
        if (plane % 8) {
            buf_line(&b, 2, "%s {", loop_head("long ", "k", plane % 8, 1));
            buf_line(&b, 3, "const %s v = %s;", A, load_elem(t, strf("xc[%s + k]", lit(main))));
            buf_line(&b, 3, "s[k] += %s;", term);
            buf_line(&b, 2, "}");
        }
        buf_line(&b, 2, "sum = %s;", GLOBAL_POOL_SUM);
        res = kind == P_AVG ? strf("sum / %s", lit(plane))
              : p == 1      ? "sum"
              : p == 2      ? strf("sqrt%s(sum)", sf)
                            : strf("pow%s(sum, %.17g)", sf, 1 / p);
    }
    buf_line(&b, 2, "y[c] = %s;", store_elem(t, res));
    const char *what = kind == P_LP ? strf("GlobalLpPool p=%g", p) : n->op;
    const char *fn = kernel_paths(e, n, numel(x), "pool_global",
        "DOC", strf("%s %s%s -> %s", what, dtype_name(t), shape_str(x), shape_str(y)),
        "T", dtype_ctype(t), "FOR_C", loop_head("long ", "c", nc, 1), "PLANE", lit(plane),
        "BODY", b.p, NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

static double global_flops(Node *n) { return (double)numel(n->in[0]); }

/* ---- MaxUnpool ---- */

/* The output shape MaxUnpool infers from its attributes. */
static void unpool_default(Node *n, const Value *x, int64_t *dim)
{
    int r = x->rank - 2;
    int64_t K[MAXS], S[MAXS], pads[2 * MAXS];
    if (attr_ints(n, "kernel_shape", K, MAXS) != r)
        node_die(n, "kernel_shape must be given with %d values", r);
    read_axis_attr(n, "strides", S, r, 1);
    read_axis_attr(n, "pads", pads, 2 * r, 0);
    dim[0] = x->dim[0];
    dim[1] = x->dim[1];
    for (int a = 0; a < r; a++) {
        dim[a + 2] = (x->dim[a + 2] - 1) * S[a] - (pads[a] + pads[a + r]) + K[a];
        if (dim[a + 2] < 0)
            node_die(n, "the unpooled size of spatial axis %d would be negative", a);
    }
}

static void unpool_infer(Node *n)
{
    if (n->nin < 2 || n->nin > 3 || !n->in[0] || !n->in[1])
        node_die(n, "takes X, I and an optional output_shape");
    Value *x = n->in[0], *ind = n->in[1], *os = input(n, 2);
    static const DType floats[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_UNDEF};
    static const DType i64[] = {DT_INT64, DT_UNDEF};
    need_type(n, x, floats);
    need_type(n, ind, i64);
    if (x->rank < 3)
        node_die(n, "input '%s' must have rank >= 3 (N, C, spatial axes), not %d", x->name,
                 x->rank);
    if (ind->rank != x->rank || numel(ind) != numel(x))
        node_die(n, "indices %s must have the shape of X %s", shape_str(ind), shape_str(x));
    int64_t dim[MLBC_MAX_RANK];
    unpool_default(n, x, dim);
    if (!os) {
        set_output(n, 0, x->dt, x->rank, dim);
        return;
    }
    if (os->data) {
        int64_t od[MLBC_MAX_RANK];
        if (const_ints(n, os, od, MLBC_MAX_RANK) != x->rank)
            node_die(n, "output_shape must have %d values", x->rank);
        set_output(n, 0, x->dt, x->rank, od);
    } else if (!use_declared(n, 0, x->dt)) {
        node_die(n, "output_shape '%s' is not a constant and the output has no declared "
                 "static shape", os->name);
    }
    Value *y = n->out[0];
    if (y->rank != x->rank)
        node_die(n, "output_shape must have %d values", x->rank);
    for (int i = 0; i < x->rank; i++)
        if (y->dim[i] < dim[i] || (i < 2 && y->dim[i] != dim[i]))
            node_die(n, "output_shape %s is smaller than the unpooled shape", shape_str(y));
}

static void unpool_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *ind = n->in[1], *os = input(n, 2), *y = n->out[0];
    int64_t dim[MLBC_MAX_RANK];
    unpool_default(n, x, dim);
    int same = 1;
    for (int i = 0; i < y->rank; i++)
        same &= dim[i] == y->dim[i];
    Buf b = {0};
    if (same) {
        buf_line(&b, 2, "y[j] = x[i];");
    } else {
        int64_t ys[MLBC_MAX_RANK];
        dense_strides(y->rank, y->dim, ys);
        buf_line(&b, 2, "int64_t q = j, o = 0;");
        for (int a = y->rank - 1; a >= 0; a--) {
            buf_line(&b, 2, "o += q %% %s * %s;", lit(dim[a]), lit(ys[a]));
            if (a)
                buf_line(&b, 2, "q /= %s;", lit(dim[a]));
        }
        buf_line(&b, 2, "y[o] = x[i];");
    }
    if (os && !os->data) {
        /* The declared shape was taken: the data must agree with it. */
        for (int i = 0; i < y->rank; i++)
            check(e, strf("%s[%d] == %s", ref(e, os), i, lit(y->dim[i])),
                  "MaxUnpool output_shape differs from the declared output shape");
    }
    const char *fn = kernel(e, n, "pool_unpool",
        "DOC", strf("MaxUnpool %s%s -> %s", dtype_name(x->dt), shape_str(x), shape_str(y)),
        "T", dtype_ctype(x->dt), "NX", lit(numel(x)), "NY", lit(numel(y)),
        "NINF", lit(numel_dims(x->rank, dim)), "STORE", b.p, NULL);
    stmt(e, "%s(%s, %s, %s);", fn, ref(e, x), ref(e, ind), ref(e, y));
}

const OpDef ops_pool[] = {
    {"MaxPool", pool_infer, NULL, pool_emit, pool_flops, 0},
    {"AveragePool", pool_infer, NULL, pool_emit, pool_flops, 0},
    {"LpPool", pool_infer, NULL, pool_emit, pool_flops, 0},
    {"GlobalMaxPool", global_infer, NULL, global_emit, global_flops, 0},
    {"GlobalAveragePool", global_infer, NULL, global_emit, global_flops, 0},
    {"GlobalLpPool", global_infer, NULL, global_emit, global_flops, 0},
    {"MaxUnpool", unpool_infer, NULL, unpool_emit, NULL, 0},
    {0},
};
