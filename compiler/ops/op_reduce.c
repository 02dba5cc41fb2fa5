/* op_reduce.c - reductions and the ops that reduce along an axis: ReduceSum, ReduceMean,
 * ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
 * ReduceSumSquare, ArgMax, ArgMin, Softmax, LogSoftmax, Hardmax, CumSum and TopK.
 *
 * Reduce* kernels: the input's axes are grouped into runs of kept and reduced axes (size-1
 * axes dropped, neighbours of the same kind merged), then one of two loop shapes is
 * generated (see templates/reduce.c): "rows" when the innermost run is reduced (lanes of
 * independent accumulators), "columns" when it is kept (a chunk of accumulators, one per
 * output). The ops along one axis view the input as [A][K][B] (A outer, K the axis, B inner).
 *
 * Axes, an axis or k given as run-time inputs rather than constants: the declared output
 * shape is trusted, one kernel is specialised per consistent choice, and a small dispatcher
 * picks it at run time (status 2 from NAME_run if the data disagree).
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

#define CHUNK 256 /* column kernels: outputs accumulated at once (local arrays) */
#define COLS 32   /* Reduce* column kernels: the same, in registers (gen_cols) */

/* ---- element types ---- */

static void need_numeric(Node *n, const Value *v)
{
    if (!dtype_size(v->dt) || v->dt == DT_STRING || v->dt == DT_BOOL)
        node_die(n, "input '%s' has element type %s, which this op does not support", v->name,
                 dtype_name(v->dt));
}

/* The three extents of x around axis: [A][K][B]. */
static void split_axis(const Value *x, int axis, int64_t *A, int64_t *K, int64_t *B)
{
    *A = numel_dims(axis, x->dim);
    *K = x->rank ? x->dim[axis] : 1;
    *B = x->rank ? numel_dims(x->rank - axis - 1, x->dim + axis + 1) : 1;
}

static int64_t chunk_of(int64_t B) { return B < CHUNK ? (B > 0 ? B : 1) : CHUNK; }

/* ---- Reduce* ---- */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LSE, R_SUMSQ };

static const struct {
    const char *op;
    int kind;
} reduce_ops[] = {
    {"ReduceSum", R_SUM}, {"ReduceMean", R_MEAN}, {"ReduceMax", R_MAX},
    {"ReduceMin", R_MIN}, {"ReduceProd", R_PROD}, {"ReduceL1", R_L1},
    {"ReduceL2", R_L2}, {"ReduceLogSum", R_LOGSUM}, {"ReduceLogSumExp", R_LSE},
    {"ReduceSumSquare", R_SUMSQ},
};

static int reduce_kind(const Node *n)
{
    for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++)
        if (!strcmp(reduce_ops[i].op, n->op))
            return reduce_ops[i].kind;
    die("internal: '%s' is not a reduction", n->op);
}

typedef struct ReduceInfo {
    unsigned long mask;     /* reduced axes, when known at compile time */
    int64_t seq_rows;       /* > 0: a Transpose folded in (reduce_takes_transpose), the input
                             * is seq_rows rows of the reduced elements, each summed in order */
    int runtime;            /* axes are a run-time input */
    int ncand;              /* runtime: masks that agree with the declared output */
    unsigned long cand[256];
} ReduceInfo;

/* Axes from the input (ReduceSum 13+, all 18+) rather than the attribute. */
static int axes_is_input(const Node *n)
{
    return n->opset >= 18 || (!strcmp(n->op, "ReduceSum") && n->opset >= 13);
}

static int reduced_shape(const Value *x, unsigned long mask, int keep, int64_t *dim)
{
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (!(mask >> i & 1))
            dim[r++] = x->dim[i];
        else if (keep)
            dim[r++] = 1;
    return r;
}

static unsigned long axes_mask(Node *n, const int64_t *axes, int count, int rank)
{
    unsigned long m = 0;
    for (int i = 0; i < count; i++)
        m |= 1ul << norm_axis(n, axes[i], rank);
    return m;
}

static void reduce_infer(Node *n)
{
    Value *x = input(n, 0);
    if (!x)
        node_die(n, "input 0 is required");
    need_numeric(n, x);
    int keep = (int)attr_int(n, "keepdims", 1);
    int noop = (int)attr_int(n, "noop_with_empty_axes", 0);
    int rank = x->rank;
    ReduceInfo *ri = xalloc(sizeof *ri);
    n->aux = ri;
    int64_t axes[MLBC_MAX_RANK * 4];
    int count = 0;
    if (axes_is_input(n)) {
        if (n->nin > 2)
            node_die(n, "takes 1 or 2 inputs, got %d", n->nin);
        Value *a = input(n, 1);
        if (a && numel(a) > 0) {
            if (a->dt != DT_INT64)
                node_die(n, "axes must be int64, not %s", dtype_name(a->dt));
            if (a->rank != 1)
                node_die(n, "axes must be 1-D");
            if (!a->data) {
                ri->runtime = 1;
            } else {
                count = const_ints(n, a, axes, MLBC_MAX_RANK * 4);
            }
        }
    } else {
        if (n->nin != 1)
            node_die(n, "takes 1 input at opset %d, got %d", n->opset, n->nin);
        count = attr_ints(n, "axes", axes, MLBC_MAX_RANK * 4);
        if (count < 0)
            count = 0;
    }
    int64_t dim[MLBC_MAX_RANK];
    if (ri->runtime) {
        if (!use_declared(n, 0, x->dt))
            node_die(n, "the axes input '%s' is not a constant and output '%s' has no declared "
                     "static shape; give axes as an initializer or declare the output shape",
                     n->in[1]->name, n->out[0]->name);
        int64_t na = numel(n->in[1]);
        Value *y = n->out[0];
        for (unsigned long m = 1; m < (1ul << rank); m++) {
            int bits = 0;
            for (unsigned long t = m; t; t &= t - 1)
                bits++;
            if (bits > na)
                continue;
            int r = reduced_shape(x, m, keep, dim);
            if (r != y->rank || memcmp(dim, y->dim, sizeof(int64_t) * r))
                continue;
            if (ri->ncand == (int)(sizeof ri->cand / sizeof ri->cand[0]))
                node_die(n, "too many choices of run-time axes agree with the declared output "
                         "shape; give axes as a constant");
            ri->cand[ri->ncand++] = m;
        }
        if (!ri->ncand)
            node_die(n, "no choice of %lld axes reduces %s to the declared output shape %s",
                     (long long)na, shape_str(x), shape_str(y));
        return;
    }
    if (count == 0)
        ri->mask = noop ? 0 : (rank ? (1ul << rank) - 1 : 0);
    else
        ri->mask = axes_mask(n, axes, count, rank);
    int r = reduced_shape(x, ri->mask, keep, dim);
    set_output(n, 0, x->dt, r, dim);
}

unsigned long reduce_mean_axes(Node *n)
{
    const ReduceInfo *ri = n->aux;
    if (strcmp(n->op, "ReduceMean") || *n->domain || !ri || ri->runtime || ri->seq_rows ||
        !n->in[0] || n->in[0]->dt != DT_FLOAT)
        return 0;
    return ri->mask;
}

/* A float ReduceSum or ReduceMean R of V, the output of a Transpose by PERM of X, which sums
 * each output over its reduced elements in memory order (the columns kernel: V's last axis
 * is kept), where those elements are X's last axes in the same order and the kept ones
 * precede them, in the same order too: R then reads X as rows of those elements and sums
 * each in order (templates/sum_seq_f32.c): the same sums, and V is never made. Size-1
 * axes aside. Returns whether R took X. */
int reduce_takes_transpose(Node *r, Value *x, const int *perm)
{
    ReduceInfo *ri = r->aux;
    Value *v = r->in[0];
    if ((strcmp(r->op, "ReduceSum") && strcmp(r->op, "ReduceMean")) || *r->domain || !ri ||
        ri->runtime || ri->seq_rows || v->dt != DT_FLOAT || r->out[0]->dt != DT_FLOAT ||
        !numel(r->out[0]))
        return 0;
    int kept = -1, red = -1, first_red = -1, last = -1;  /* positions in x */
    int64_t rows = 1;
    for (int i = 0; i < v->rank; i++) {
        if (v->dim[i] == 1)
            continue;
        int *prev = ri->mask >> i & 1 ? &red : &kept;
        if (perm[i] < *prev)
            return 0;
        *prev = perm[i];
        if (prev == &red && first_red < 0)
            first_red = perm[i];
        if (prev == &kept)
            rows *= v->dim[i];
        last = i;
    }
    if (red < 0 || ri->mask >> last & 1 || kept > first_red)
        return 0;
    ri->seq_rows = rows;
    r->in[0] = x;
    return 1;
}

/* Runs of kept or reduced axes: size-1 axes dropped, neighbours of one kind merged. */
typedef struct Grp {
    int64_t n, xs, ys;
    int red;
} Grp;

static int make_groups(const Value *x, unsigned long mask, Grp *g)
{
    int64_t xs[MLBC_MAX_RANK], ys[MLBC_MAX_RANK], s = 1;
    dense_strides(x->rank, x->dim, xs);
    for (int i = x->rank - 1; i >= 0; i--) {
        ys[i] = mask >> i & 1 ? 0 : s;
        if (!(mask >> i & 1))
            s *= x->dim[i];
    }
    int ng = 0;
    for (int i = 0; i < x->rank; i++) {
        int red = (int)(mask >> i & 1);
        if (x->dim[i] == 1)
            continue;
        if (ng && g[ng - 1].red == red) {
            g[ng - 1].n *= x->dim[i];
            g[ng - 1].xs = xs[i];
            g[ng - 1].ys = ys[i];
            continue;
        }
        g[ng++] = (Grp){x->dim[i], xs[i], ys[i], red};
    }
    if (!ng)
        g[ng++] = (Grp){1, 1, 1, 0};
    return ng;
}

/* Index expression sum(i<g> * stride) over groups whose reduced flag is RED (-1: all). */
static const char *offset(const Grp *g, int ng, int skip_last, int which, int red)
{
    Buf b = {0};
    for (int i = 0; i < ng - skip_last; i++) {
        if (red >= 0 && g[i].red != red)
            continue;
        int64_t st = which ? g[i].ys : g[i].xs;
        if (!st)
            continue;
        if (b.len)
            buf_puts(&b, " + ");
        buf_printf(&b, st == 1 ? "i%d" : "i%d * %s", i, lit(st));
    }
    return b.len ? b.p : "0";
}

/* How one Reduce op computes, as C text over accumulator type A (names: v value, a/m
 * accumulators, sh the LogSumExp shift). */
typedef struct RCode {
    const char *A;          /* accumulator C type */
    DType AT;               /* the same as a DType */
    const char *V;          /* type of the loaded value v */
    const char *init;       /* identity */
    const char *post;       /* %s: the reduced accumulator */
    int kind;
} RCode;

static const char *r_map(const RCode *c, const char *shift)
{
    int intacc = !strcmp(c->A, "uint64_t");
    int sgn = !strcmp(c->V, "int64_t");
    switch (c->kind) {
    case R_L1:
        if (intacc)
            return sgn ? "(v < 0 ? 0 - (uint64_t)v : (uint64_t)v)" : "v";
        return libm_suffix("fabs@(v)", c->AT);
    case R_L2: case R_SUMSQ:
        if (intacc)
            return "(uint64_t)v * (uint64_t)v";
        return !strcmp(c->A, c->V) ? "v * v" : strf("(%s)v * (%s)v", c->A, c->A);
    case R_LSE:
        return libm_suffix(strf(!strcmp(c->A, c->V) ? "exp@(v - %s)" : "exp@((double)v - %s)",
                                shift), c->AT);
    default:
        return intacc ? "(uint64_t)v" : !strcmp(c->A, c->V) ? "v" : strf("(%s)v", c->A);
    }
}

static const char *r_comb_fmt(const RCode *c)
{
    int isint = !strcmp(c->A, "uint64_t") || !strcmp(c->A, "int64_t");
    switch (c->kind) {
    case R_MAX: return isint ? "max_(%s, %s)" : "fmax_nan(%s, %s)";
    case R_MIN: return isint ? "min_(%s, %s)" : "fmin_nan(%s, %s)";
    case R_PROD: return "%s * %s";
    default: return "%s + %s";
    }
}

/* One accumulation step: acc combined with the mapped value v (shift: LogSumExp's). A float
 * sum of squares is an explicit fused multiply-add (fused(): contraction cannot change it). */
static const char *r_step(const RCode *c, const char *acc, const char *shift)
{
    if ((c->kind == R_L2 || c->kind == R_SUMSQ) && (c->AT == DT_FLOAT || c->AT == DT_DOUBLE)) {
        const char *v = !strcmp(c->A, c->V) ? "v" : strf("(%s)v", c->A);
        return fused(c->AT, v, v, acc);
    }
    return strf(r_comb_fmt(c), acc, r_map(c, shift));
}

static const char *int_min(DType t)
{
    switch (t) {
    case DT_INT8: return "INT8_MIN";
    case DT_INT16: return "INT16_MIN";
    case DT_INT32: return "INT32_MIN";
    case DT_INT64: return "INT64_MIN";
    default: return "0";
    }
}

static const char *int_max(DType t)
{
    switch (t) {
    case DT_INT8: return "INT8_MAX";
    case DT_INT16: return "INT16_MAX";
    case DT_INT32: return "INT32_MAX";
    case DT_INT64: return "INT64_MAX";
    case DT_UINT8: return "UINT8_MAX";
    case DT_UINT16: return "UINT16_MAX";
    case DT_UINT32: return "UINT32_MAX";
    default: return "UINT64_MAX";
    }
}

static RCode rcode(int kind, DType t, int64_t count)
{
    RCode c = {0};
    c.kind = kind;
    if (dtype_is_floatish(t)) {
        c.AT = calc_type(t);
        c.V = dtype_ctype(c.AT);
    } else {
        DType vt = dtype_is_signed(t) ? DT_INT64 : DT_UINT64;
        c.V = dtype_ctype(vt);
        if (kind == R_MAX || kind == R_MIN)
            c.AT = vt;
        else if (kind == R_L2 || kind == R_LOGSUM || kind == R_LSE)
            c.AT = DT_DOUBLE;
        else
            c.AT = DT_UINT64;
    }
    c.A = dtype_ctype(c.AT);
    int isf = !strcmp(c.A, "float") || !strcmp(c.A, "double");
    switch (kind) {
    case R_PROD: c.init = "1"; break;
    case R_MAX: c.init = isf ? "-INFINITY" : int_min(t); break;
    case R_MIN: c.init = isf ? "INFINITY" : int_max(t); break;
    default: c.init = "0"; break;
    }
    switch (kind) {
    case R_MEAN:
        if (isf)
            c.post = strf("%%s / %s", float_lit((double)count, c.AT));
        else if (!count)
            c.post = "0 * %s";
        else
            c.post = !strcmp(c.V, "int64_t") ? strf("(int64_t)%%s / %s", lit(count))
                                             : strf("%%s / %s", lit(count));
        break;
    case R_L2: c.post = libm_suffix("sqrt@(%s)", c.AT); break;
    case R_LOGSUM: c.post = libm_suffix("log@(%s)", c.AT); break;
    case R_LSE: c.post = libm_suffix("log@(%s) + sh", c.AT); break;
    default:
        c.post = !strcmp(c.A, "uint64_t") && !strcmp(c.V, "int64_t") ? "(int64_t)%s" : "%s";
        break;
    }
    return c;
}

/* The lanes acc[0..L) folded into acc[0], then the rest of rows of K (K mod L elements) taken
 * last: every "rows" kernel's order. */
static void fold_lanes_rest(Buf *b, int ind, int L, int64_t K, const RCode *c)
{
    lane_fold(b, ind, L, "acc", r_comb_fmt(c));
    if (K % L)
        buf_line(b, ind, "acc[0] = %s;", strf(r_comb_fmt(c), "acc[0]", "rest"));
}

/* One reduction pass over the rows of a "rows" kernel, into lanes acc[0..L): element k of the
 * innermost run in lane k mod L, the last K mod L elements of each run into rest, which the
 * folded lanes take last. (Into lane 0, they had made gcc -O2 store the lanes and read them
 * back for the fold, a store-to-load forward that fails: a ReduceMean over 32 rows of 100,
 * 0.95 -> 0.25 us at gcc -O2 on AMD Zen 5.) */
static void rows_pass(Buf *b, int ind, const Grp *g, int ng, const RCode *c, int kind,
                      DType tx, int L)
{
    RCode pc = *c;
    pc.kind = kind;
    if (kind != c->kind) /* the max pass of ReduceLogSumExp (float accumulators only) */
        pc.init = "-INFINITY";
    int64_t K = g[ng - 1].n, KM = K - K % L;
    /* float sums: the lanes as one vector (sum_lanes8) */
    int vec = L == 8 && (kind == R_SUM || kind == R_MEAN) && tx == DT_FLOAT &&
              c->AT == DT_FLOAT;
    if (vec) {
        buf_line(b, ind, "mlbc_f8 lanes = {0};");
    } else if (L > 1) {
        buf_line(b, ind, "for (j = 0; j < %d; j++)", L);
        buf_line(b, ind + 1, "acc[j] = %s;", pc.init);
    } else {
        buf_line(b, ind, "acc[0] = %s;", pc.init);
    }
    if (K % L)
        buf_line(b, ind, "rest = %s;", pc.init);
    for (int i = 0; i < ng - 1; i++)
        if (g[i].red) {
            buf_line(b, ind, "for (i%d = 0; i%d < %s; i%d++) {", i, i, lit(g[i].n), i);
            ind++;
        }
    const char *base = offset(g, ng, 1, 0, -1);
    if (KM) {
        if (vec) {
            sum_lanes8(b, ind, !strcmp(base, "0") ? "x" : strf("x + %s", base), KM);
        } else if (L > 1) {
            buf_line(b, ind, "for (k = 0; k < %s; k += %d)", lit(KM), L);
            buf_line(b, ind + 1, "for (j = 0; j < %d; j++) {", L);
            buf_line(b, ind + 2, "const %s v = %s;", pc.V,
                     load_elem(tx, strf("x[%s + k + j]", base)));
            buf_line(b, ind + 2, "acc[j] = %s;", r_step(&pc, "acc[j]", "sh"));
            buf_line(b, ind + 1, "}");
        } else {
            buf_line(b, ind, "for (k = 0; k < %s; k++) {", lit(KM));
            buf_line(b, ind + 1, "const %s v = %s;", pc.V, load_elem(tx, strf("x[%s + k]", base)));
            buf_line(b, ind + 1, "acc[0] = %s;", r_step(&pc, "acc[0]", "sh"));
            buf_line(b, ind, "}");
        }
    }
    if (K % L) {
        buf_line(b, ind, "for (k = %s; k < %s; k++) {", lit(KM), lit(K));
        buf_line(b, ind + 1, "const %s v = %s;", pc.V, load_elem(tx, strf("x[%s + k]", base)));
        buf_line(b, ind + 1, "rest = %s;", r_step(&pc, "rest", "sh"));
        buf_line(b, ind, "}");
    }
    for (int i = 0; i < ng - 1; i++)
        if (g[i].red)
            buf_line(b, --ind, "}");
    if (vec)
        buf_line(b, ind, "memcpy(acc, &lanes, sizeof lanes);");
    fold_lanes_rest(b, ind, L, K, &pc);
}

int reduce_lanes(int64_t K, int acc_bytes)
{
    return K >= 32 ? (acc_bytes < 8 ? 8 : 4) : K >= 8 ? 4 : 1;
}

/* Float sums of rows of K in lanes (sum_lanes8), ROWS of them at once: a chain per row,
 * independent ones interleaved (gcc -O2 runs the rows' loops one after another, each chain
 * waiting on its adds: 8 rows of 256, 1.55x clang -O3's time). Each row's lanes, rest and
 * fold are rows_pass's, in its order: the same bits. Kernels whose rows are one kept axis. */
static void rows_interleaved(Buf *b, const Grp *g, const RCode *c, DType ty, int rows)
{
    int64_t R = g[0].n, K = g[1].n, KM = K - K % 8;
    buf_line(b, 1, "for (i0 = 0; i0 + %d <= %s; i0 += %d) {", rows, lit(R), rows);
    buf_line(b, 2, "mlbc_f8 lanes[%d];", rows);
    buf_line(b, 2, "memset(lanes, 0, sizeof lanes);");
    buf_line(b, 2, "for (k = 0; k < %s; k += 8) {", lit(KM));
    for (int r = 0; r < rows; r++)
        buf_line(b, 3, "MLBC_F8_ADD(lanes[%d], x + (i0 + %d) * %s + k);", r, r, lit(K));
    buf_line(b, 2, "}");
    buf_line(b, 2, "for (int r = 0; r < %d; r++) {", rows);
    buf_line(b, 3, "memcpy(acc, &lanes[r], sizeof acc);");
    if (K % 8) {
        buf_line(b, 3, "rest = 0;");
        buf_line(b, 3, "for (k = %s; k < %s; k++)", lit(KM), lit(K));
        buf_line(b, 4, "rest = %s;", strf(r_comb_fmt(c), "rest",
                                          strf("x[(i0 + r) * %s + k]", lit(K))));
    }
    fold_lanes_rest(b, 3, 8, K, c);
    buf_line(b, 3, "y[i0 + r] = %s;", store_as(ty, c->AT, strf(c->post, "acc[0]")));
    buf_line(b, 2, "}");
    buf_line(b, 1, "}");
}

static const char *gen_rows(const Grp *g, int ng, const RCode *c, DType tx, DType ty)
{
    Buf b = {0};
    int64_t K = g[ng - 1].n;
    int wide = !strcmp(c->A, "double") || !strcmp(c->A, "uint64_t") || !strcmp(c->A, "int64_t");
    int L = reduce_lanes(K, wide ? 8 : 4);
    buf_line(&b, 1, "%s acc[%d]%s;", c->A, L, K % L ? ", rest" : "");
    if (c->kind == R_LSE)
        buf_line(&b, 1, "%s sh;", c->A);
    Buf decl = {0};
    for (int i = 0; i < ng - 1; i++)
        buf_printf(&decl, "i%d, ", i);
    if (K > 0)
        buf_puts(&decl, "k, ");
    if (decl.len) {
        decl.p[decl.len - 2] = 0;
        buf_line(&b, 1, "long %s;", decl.p);
    }
    if (L > 1)
        buf_line(&b, 1, "int j;");
    int rows = L == 8 && (c->kind == R_SUM || c->kind == R_MEAN) && tx == DT_FLOAT &&
               c->AT == DT_FLOAT && ng == 2 && !g[0].red && g[0].n >= 4 ? 4 : 1;
    if (rows > 1) {
        rows_interleaved(&b, g, c, ty, rows);
        if (g[0].n % rows == 0)
            return b.p;
    }
    int ind = 1;
    for (int i = 0; i < ng - 1; i++)
        if (!g[i].red) {
            const char *from = i || rows == 1 ? "0" : lit(g[0].n - g[0].n % rows);
            buf_line(&b, ind, "for (i%d = %s; i%d < %s; i%d++) {", i, from, i, lit(g[i].n), i);
            ind++;
        }
    if (c->kind == R_LSE) {
        rows_pass(&b, ind, g, ng, c, R_MAX, tx, L);
        buf_line(&b, ind, "sh = isinf(acc[0]) ? 0 : acc[0];");
    }
    rows_pass(&b, ind, g, ng, c, c->kind, tx, L);
    buf_line(&b, ind, "y[%s] = %s;", offset(g, ng, 1, 1, 0),
         store_as(ty, c->AT, strf(c->post, "acc[0]")));
    for (int i = 0; i < ng - 1; i++)
        if (!g[i].red)
            buf_line(&b, --ind, "}");
    return b.p;
}

/* "A + B" of two index expressions, either of which may be "0". */
static const char *plus(const char *a, const char *b)
{
    return !strcmp(a, "0") ? b : !strcmp(b, "0") ? a : strf("%s + %s", a, b);
}

static void cols_pass(Buf *b, int ind, const Grp *g, int ng, const RCode *c, int kind,
                      DType tx, int64_t nb, const char *b0)
{
    RCode pc = *c;
    pc.kind = kind;
    if (kind != c->kind) /* the max pass of ReduceLogSumExp (float accumulators only) */
        pc.init = "-INFINITY";
    buf_line(b, ind, "for (j = 0; j < %s; j++)", lit(nb));
    buf_line(b, ind + 1, "acc[j] = %s;", pc.init);
    for (int i = 0; i < ng - 1; i++)
        if (g[i].red) {
            buf_line(b, ind, "for (i%d = 0; i%d < %s; i%d++)", i, i, lit(g[i].n), i);
            ind++;
        }
    /* A chunk of constant size, unrolled whole: its accumulators stay in registers from one
     * reduced element to the next instead of a store and a load each (gcc -O2 does not
     * unroll it by itself: 1.6x slower than -O3 over 20 rows of 48) */
    buf_line(b, ind, "#pragma GCC unroll 16");
    buf_line(b, ind, "for (j = 0; j < %s; j++) {", lit(nb));
    buf_line(b, ind + 1, "const %s v = %s;", pc.V,
         load_elem(tx, strf("x[%s + j]", plus(offset(g, ng, 1, 0, -1), b0))));
    buf_line(b, ind + 1, "acc[j] = %s;", r_step(&pc, "acc[j]", "sh[j]"));
    buf_line(b, ind, "}");
}

/* The outputs B0 .. B0 + NB - 1 of a columns kernel (NB a constant) */
static void cols_chunk(Buf *b, int ind, const Grp *g, int ng, const RCode *c, DType tx,
                       DType ty, int64_t nb, const char *b0)
{
    if (c->kind == R_LSE) {
        cols_pass(b, ind, g, ng, c, R_MAX, tx, nb, b0);
        buf_line(b, ind, "for (j = 0; j < %s; j++)", lit(nb));
        buf_line(b, ind + 1, "sh[j] = isinf(acc[j]) ? 0 : acc[j];");
    }
    cols_pass(b, ind, g, ng, c, c->kind, tx, nb, b0);
    const char *post = c->kind == R_LSE ? libm_suffix("log@(acc[j]) + sh[j]", c->AT)
                                        : strf(c->post, "acc[j]");
    buf_line(b, ind, "for (j = 0; j < %s; j++)", lit(nb));
    buf_line(b, ind + 1, "y[%s + j] = %s;", plus(offset(g, ng, 1, 1, 0), b0),
         store_as(ty, c->AT, post));
}

/* Outputs in chunks of COLS, then one of the rest: every chunk's size a constant, its
 * accumulators in registers (one chunk of 100 floats stayed in memory at gcc -O2, 4 a step:
 * an embedding bag's sum of 50 rows 390 -> 90 ns). */
static const char *gen_cols(const Grp *g, int ng, const RCode *c, DType tx, DType ty)
{
    Buf b = {0};
    int64_t B = g[ng - 1].n, CH = B < COLS ? (B > 0 ? B : 1) : COLS, BM = B - B % CH;
    buf_line(&b, 1, "%s acc[%s];", c->A, lit(CH));
    if (c->kind == R_LSE)
        buf_line(&b, 1, "%s sh[%s];", c->A, lit(CH));
    Buf decl = {0};
    for (int i = 0; i < ng - 1; i++)
        buf_printf(&decl, "i%d, ", i);
    buf_line(&b, 1, "long %sj%s;", decl.p ? decl.p : "", BM > CH ? ", b0" : "");
    int ind = 1;
    for (int i = 0; i < ng - 1; i++)
        if (!g[i].red) {
            buf_line(&b, ind, "for (i%d = 0; i%d < %s; i%d++) {", i, i, lit(g[i].n), i);
            ind++;
        }
    if (BM > CH) {
        buf_line(&b, ind, "for (b0 = 0; b0 < %s; b0 += %s) {", lit(BM), lit(CH));
        cols_chunk(&b, ind + 1, g, ng, c, tx, ty, CH, "b0");
        buf_line(&b, ind, "}");
    } else if (BM) {
        cols_chunk(&b, ind, g, ng, c, tx, ty, CH, "0");
    }
    if (B % CH)
        cols_chunk(&b, ind, g, ng, c, tx, ty, B % CH, lit(BM));
    for (int i = 0; i < ng - 1; i++)
        if (!g[i].red)
            buf_line(&b, --ind, "}");
    return b.p;
}

static const char *mask_str(unsigned long mask, int rank)
{
    Buf b = {0};
    buf_puts(&b, "{");
    for (int i = 0; i < rank; i++)
        if (mask >> i & 1)
            buf_printf(&b, b.len > 1 ? ",%d" : "%d", i);
    buf_puts(&b, "}");
    return b.p;
}

/* The kernel reducing x over MASK into y (y's data layout does not depend on keepdims). */
static const char *reduce_kernel(Emit *e, Node *n, unsigned long mask)
{
    Value *x = n->in[0], *y = n->out[0];
    Grp g[MLBC_MAX_RANK + 1];
    int ng = make_groups(x, mask, g);
    int64_t count = numel(y) ? numel(x) / numel(y) : 0;
    int kind = reduce_kind(n);
    /* the max or min of one element is that element, NaN and -0 included (the max of one
     * row of 128, seq 1's readout, had taken a third of its network at gcc -O2) */
    if (count == 1 && (kind == R_MAX || kind == R_MIN) && x->dt == y->dt)
        return kernel(e, n, "reduce",
                      "DOC", strf("%s over axes %s of %s%s -> %s: of one element each, a copy",
                                  n->op, mask_str(mask, x->rank), dtype_name(x->dt),
                                  shape_str(x), shape_str(y)),
                      "TX", dtype_ctype(x->dt), "TY", dtype_ctype(y->dt),
                      "BODY", strf("    memcpy(y, x, sizeof *y * %s);\n", lit(numel(y))), NULL);
    RCode c = rcode(kind, x->dt, count);
    int rows = g[ng - 1].red;
    const char *body = rows ? gen_rows(g, ng, &c, x->dt, y->dt)
                            : gen_cols(g, ng, &c, x->dt, y->dt);
    return kernel_paths(e, n, numel(x), "reduce",
                  "DOC", strf("%s over axes %s of %s%s -> %s; %s, accumulating in %s", n->op,
                              mask_str(mask, x->rank), dtype_name(x->dt), shape_str(x),
                              shape_str(y), rows ? "rows" : "columns", c.A),
                  "TX", dtype_ctype(x->dt), "TY", dtype_ctype(y->dt), "BODY", body, NULL);
}

/* A reduction with a Transpose folded in (reduce_takes_transpose): the rows' sums in order
 * (templates/sum_seq_f32.c), then a mean's division, as the columns kernel does it. */
static const char *seq_kernel(Emit *e, Node *n, int64_t rows)
{
    Value *x = n->in[0];
    int64_t k = numel(x) / rows;
    RCode c = rcode(reduce_kind(n), x->dt, k);
    Buf body = {0};
    buf_line(&body, 1, "mlbc_sum_seq_f32(%s, %s, x, y);", lit(rows), lit(k));
    if (strcmp(c.post, "%s")) {
        buf_line(&body, 1, "for (long i = 0; i < %s; i++)", lit(rows));
        buf_line(&body, 2, "y[i] = %s;", strf(c.post, "y[i]"));
    }
    return kernel(e, n, "reduce",
                  "DOC", strf("%s of float%s, the Transpose before it folded in: %s rows of %s, "
                              "each summed in order", n->op, shape_str(x), lit(rows), lit(k)),
                  "TX", "float", "TY", "float", "BODY", body.p, NULL);
}

static void reduce_emit(Emit *e, Node *n)
{
    ReduceInfo *ri = n->aux;
    Value *x = n->in[0], *y = n->out[0];
    if (!numel(y))
        return;
    if (ri->seq_rows) {
        stmt(e, "%s(%s, %s);", seq_kernel(e, n, ri->seq_rows), ref(e, x), ref(e, y));
        return;
    }
    if (!ri->runtime) {
        stmt(e, "%s(%s, %s);", reduce_kernel(e, n, ri->mask), ref(e, x), ref(e, y));
        return;
    }
    /* Axes that only cover size-1 dimensions change nothing in the data. */
    unsigned long trivial = 0;
    for (int i = 0; i < x->rank; i++)
        if (x->dim[i] == 1)
            trivial |= 1ul << i;
    Buf cases = {0};
    const char *done[256];
    unsigned long done_mask[256];
    int ndone = 0;
    for (int i = 0; i < ri->ncand; i++) {
        unsigned long eff = ri->cand[i] & ~trivial;
        int seen = 0;
        for (int k = 0; k < ndone; k++)
            seen |= done_mask[k] == eff;
        if (seen)
            continue;
        done_mask[ndone] = eff;
        done[ndone++] = reduce_kernel(e, n, eff);
    }
    for (int k = 0; k < ndone; k++) {
        Buf cond = {0};
        for (int i = 0; i < ri->ncand; i++)
            if ((ri->cand[i] & ~trivial) == done_mask[k])
                buf_printf(&cond, "%smask == %luu", cond.len ? " || " : "", ri->cand[i]);
        buf_printf(&cases, "    if (%s) {\n        %s(x, y);\n        return 0;\n    }\n", cond.p,
                   done[k]);
    }
    Value *a = n->in[1];
    const char *fn = kernel(e, n, "reduce_dispatch",
        "DOC", strf("%s of %s%s -> %s over axes given at run time", n->op, dtype_name(x->dt),
                    shape_str(x), shape_str(y)),
        "TA", dtype_ctype(a->dt), "TX", dtype_ctype(x->dt), "TY", dtype_ctype(y->dt),
        "FOR_I", loop_head("", "i", numel(a), 1), "RANK", lit(x->rank), "CASES", cases.p,
        NULL);
    check(e, strf("%s(%s, %s, %s) == 0", fn, ref(e, a), ref(e, x), ref(e, y)),
          strf("%s: axes disagree with the declared output shape", n->op));
}

/* Compile-time evaluation (shape arithmetic such as ReduceProd of a shape). */
static int reduce_fold(Node *n)
{
    ReduceInfo *ri = n->aux;
    Value *x = n->in[0], *y = n->out[0];
    if (ri->runtime || dtype_is_half(x->dt))
        return 0;
    int kind = reduce_kind(n);
    int64_t ny = numel(y), nx = numel(x);
    int64_t count = ny ? nx / ny : 0;
    int isf = dtype_is_float(x->dt) || kind == R_L2 || kind == R_LOGSUM || kind == R_LSE;
    double *fa = xalloc(sizeof(double) * (size_t)(ny ? ny : 1));
    double *sh = xalloc(sizeof(double) * (size_t)(ny ? ny : 1));
    uint64_t *ia = xalloc(sizeof(uint64_t) * (size_t)(ny ? ny : 1));
    int64_t ys[MLBC_MAX_RANK], s = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        ys[i] = ri->mask >> i & 1 ? 0 : s;
        if (!(ri->mask >> i & 1))
            s *= x->dim[i];
    }
    for (int pass = kind == R_LSE ? 0 : 1; pass < 2; pass++) {
        int k = pass == 0 ? R_MAX : kind;
        for (int64_t o = 0; o < ny; o++) {
            double fi = k == R_PROD ? 1 : k == R_MAX ? -INFINITY : k == R_MIN ? INFINITY : 0;
            fa[o] = fi;
            ia[o] = k == R_PROD ? 1 : 0;
            if (!isf && (k == R_MAX || k == R_MIN))
                ia[o] = (uint64_t)(k == R_MAX ? (dtype_is_signed(x->dt) ? INT64_MIN : 0)
                                              : (dtype_is_signed(x->dt) ? INT64_MAX : -1));
        }
        for (int64_t i = 0; i < nx; i++) {
            int64_t o = 0, r = i;
            for (int d = x->rank - 1; d >= 0; d--) {
                o += (r % x->dim[d]) * ys[d];
                r /= x->dim[d];
            }
            if (isf) {
                double v = value_get_f(x, i), *a = &fa[o];
                switch (k) {
                case R_MAX: *a = v != v || *a != *a ? NAN : v > *a ? v : *a; break;
                case R_MIN: *a = v != v || *a != *a ? NAN : v < *a ? v : *a; break;
                case R_PROD: *a *= v; break;
                case R_L1: *a += fabs(v); break;
                case R_L2: case R_SUMSQ: *a += v * v; break;
                case R_LSE: *a += exp(v - sh[o]); break;
                default: *a += v; break;
                }
            } else {
                int64_t v = value_get_i(x, i);
                uint64_t *a = &ia[o];
                int sg = dtype_is_signed(x->dt);
                switch (k) {
                case R_MAX:
                    if (sg ? v > (int64_t)*a : (uint64_t)v > *a)
                        *a = (uint64_t)v;
                    break;
                case R_MIN:
                    if (sg ? v < (int64_t)*a : (uint64_t)v < *a)
                        *a = (uint64_t)v;
                    break;
                case R_PROD: *a *= (uint64_t)v; break;
                case R_L1: *a += v < 0 ? 0 - (uint64_t)v : (uint64_t)v; break;
                case R_SUMSQ: *a += (uint64_t)v * (uint64_t)v; break;
                default: *a += (uint64_t)v; break;
                }
            }
        }
        if (pass == 0)
            for (int64_t o = 0; o < ny; o++)
                sh[o] = isinf(fa[o]) ? 0 : fa[o];
    }
    for (int64_t o = 0; o < ny; o++) {
        if (isf) {
            double a = fa[o];
            switch (kind) {
            case R_MEAN: a /= (double)count; break;
            case R_L2: a = sqrt(a); break;
            case R_LOGSUM: a = log(a); break;
            case R_LSE: a = log(a) + sh[o]; break;
            default: break;
            }
            value_set_f(y, o, a);
        } else {
            uint64_t a = ia[o];
            if (kind == R_MEAN)
                a = !count ? 0 : dtype_is_signed(x->dt) ? (uint64_t)((int64_t)a / count)
                                                          : a / (uint64_t)count;
            value_set_i(y, o, (int64_t)a);
        }
    }
    return 1;
}

/* ---- ArgMax, ArgMin ---- */

static void arg_infer(Node *n)
{
    Value *x = input(n, 0);
    if (!x || n->nin != 1)
        node_die(n, "takes exactly 1 input");
    need_numeric(n, x);
    int axis = norm_axis(n, attr_int(n, "axis", 0), x->rank);
    int keep = (int)attr_int(n, "keepdims", 1);
    if (x->rank && x->dim[axis] == 0)
        node_die(n, "cannot take %s over an empty axis", n->op);
    int64_t dim[MLBC_MAX_RANK];
    int r = x->rank ? reduced_shape(x, 1ul << axis, keep, dim) : 0;
    set_output(n, 0, DT_INT64, r, dim);
}

/* The update condition of a running extreme: V replaces BEST. For floats, behind a test that is false for nearly every value (v is
 * not beyond best, both numbers) and that gcc keeps a branch: the whole condition as one was
 * if-converted into conditional moves, a chain of 9 cycles an element through best (an ArgMax
 * over 64 rows of 100 at gcc -O2: 15 us instead of 3 when not inlined). */
static const char *better(int largest, int last, DType t, const char *v, const char *best)
{
    const char *cmp = largest ? (last ? ">=" : ">") : (last ? "<=" : "<");
    const char *worse = largest ? (last ? "<" : "<=") : (last ? ">" : ">=");
    if (!dtype_is_floatish(t))
        return strf("%s %s %s", v, cmp, best);
    return last ? strf("!(%s %s %s) && (%s %s %s || %s != %s)", v, worse, best, v, cmp, best, v,
                       v)
                : strf("!(%s %s %s) && (%s %s %s || (%s != %s && %s == %s))", v, worse, best, v,
                       cmp, best, v, v, best, best);
}

static const char *value_ctype(DType t) { return dtype_ctype(calc_type(t)); }

static void arg_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    if (!numel(y))
        return;
    int axis = x->rank ? norm_axis(n, attr_int(n, "axis", 0), x->rank) : 0;
    int last = (int)attr_int(n, "select_last_index", 0);
    int largest = !strcmp(n->op, "ArgMax");
    int64_t A, K, B;
    split_axis(x, axis, &A, &K, &B);
    const char *fn = kernel(e, n, "reduce_arg",
        "DOC", strf("%s over axis %d of %s%s -> int64%s", n->op, axis, dtype_name(x->dt),
                    shape_str(x), shape_str(y)),
        "TIE", last ? "last" : "first", "TX", dtype_ctype(x->dt), "C", value_ctype(x->dt),
        "CH", lit(chunk_of(B)), "FOR_B0", loop_head("", "b0", B, chunk_of(B)), "A", lit(A),
        "FOR_A", loop_head("", "a", A, 1), "K", lit(K), "B", lit(B), "KB", lit(K * B),
        "FOR_K1", loop_range("", "k", 1, K, 1), "LOAD0", load_elem(x->dt, "xa[b0 + j]"),
        "LOADK", load_elem(x->dt, strf("xa[k * %s + b0 + j]", lit(B))),
        "BETTER", better(largest, last, x->dt, "v", "best[j]"), NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

/* ---- Softmax, LogSoftmax, Hardmax ---- */

static void softmax_infer(Node *n)
{
    Value *x = input(n, 0);
    if (!x || n->nin != 1)
        node_die(n, "takes exactly 1 input");
    need_floatish(n, x);
    if (x->rank == 0)
        node_die(n, "input must have rank >= 1");
    norm_axis(n, attr_int(n, "axis", n->opset < 13 ? 1 : -1), x->rank);
    copy_shape(n, 0, x, DT_UNDEF);
}

/* [A][K][B]: before opset 13 the input is coerced to 2-D at axis. */
static void softmax_view(Node *n, int64_t *A, int64_t *K, int64_t *B)
{
    Value *x = n->in[0];
    int axis = norm_axis(n, attr_int(n, "axis", n->opset < 13 ? 1 : -1), x->rank);
    if (n->opset < 13) {
        *A = numel_dims(axis, x->dim);
        *K = numel_dims(x->rank - axis, x->dim + axis);
        *B = 1;
    } else {
        split_axis(x, axis, A, K, B);
    }
}

/* A lane reduction over k in [0, K) into ACC[0..L): ACC[j] = COMB(ACC[j], term); the
 * terms for lane j and for the tail (k) are TJ and TK; COMB has two %s (accumulator, term). STJ/STK, if given, also receive
 * each term (the exp values Softmax parks in y). */
static void lane_sum(Buf *b, int ind, const char *C, int L, int64_t K, const char *acc,
                     const char *init, const char *comb, const char *tj, const char *tk,
                     const char *stj, const char *stk)
{
    int64_t KM = K - K % L;
    const char *aj = strf("%s[j]", acc), *a0 = strf("%s[0]", acc);
    buf_line(b, ind, "for (j = 0; j < %d; j++)", L);
    buf_line(b, ind + 1, "%s = %s;", aj, init);
    if (KM) {
        buf_line(b, ind, "for (k = 0; k < %s; k += %d)", lit(KM), L);
        buf_line(b, ind + 1, "for (j = 0; j < %d; j++) {", L);
        buf_line(b, ind + 2, "const %s e = %s;", C, tj);
        if (stj)
            buf_line(b, ind + 2, "%s = e;", stj);
        buf_line(b, ind + 2, "%s = %s;", aj, strf(comb, aj, "e"));
        buf_line(b, ind + 1, "}");
    }
    if (K % L) {
        buf_line(b, ind, "for (k = %s; k < %s; k++) {", lit(KM), lit(K));
        buf_line(b, ind + 1, "const %s e = %s;", C, tk);
        if (stk)
            buf_line(b, ind + 1, "%s = e;", stk);
        buf_line(b, ind + 1, "%s = %s;", a0, strf(comb, a0, "e"));
        buf_line(b, ind, "}");
    }
    lane_fold(b, ind, L, acc, comb);
}

/* Row softmax lanes: 8 (float) or 4 for long rows, 4 from 8 elements, else in order. */
static int softmax_lanes(const char *C, int64_t K)
{
    return K >= 32 ? (strcmp(C, "float") ? 4 : 8) : K >= 8 ? 4 : 1;
}

static const char *lanes_note(int L)
{
    if (L == 1)
        return "Max and sum run over k in order, so results are deterministic.";
    return strf("Max and sum use %d interleaved lanes (element k in lane k mod %d, the tail in "
                "lane 0) folded by halving (lane j absorbs lane j + w, w = %d, ..., 1): a fixed "
                "order, so results are deterministic.", L, L, L / 2);
}

/* VAR = the fold of a row's terms by COMB (two %s: accumulator, term) from INIT, in L lanes
 * (lane_sum) or in order; TJ/TK: the term of lane j / of element k; STJ/STK, if given, also
 * receive each term. */
static void row_fold(Buf *b, int ind, const char *C, int L, int64_t K, const char *var,
                     const char *acc, const char *init, const char *comb, const char *tj,
                     const char *tk, const char *stj, const char *stk)
{
    if (L > 1) {
        lane_sum(b, ind, C, L, K, acc, init, comb, tj, tk, stj, stk);
        buf_line(b, ind, "%s = %s[0];", var, acc);
        return;
    }
    buf_line(b, ind, "%s = %s;", var, init);
    buf_line(b, ind, "for (k = 0; k < %s; k++) {", lit(K));
    buf_line(b, ind + 1, "const %s e = %s;", C, tk);
    if (stk)
        buf_line(b, ind + 1, "%s = e;", stk);
    buf_line(b, ind + 1, "%s = %s;", var, strf(comb, var, "e"));
    buf_line(b, ind, "}");
}

/* Float Softmax or LogSoftmax over contiguous rows, in blocks of rows of at most
 * MLBC_SOFTMAX_BLOCK floats (templates/reduce_softmax_rows_f32.c). */
static const char *softmax_rows_f32(Emit *e, Node *n, const char *doc, int64_t A, int64_t K)
{
    int logsm = !strcmp(n->op, "LogSoftmax"), L = softmax_lanes("float", K);
    int64_t R = MLBC_SOFTMAX_BLOCK / K;
    R = R < 1 ? 1 : R > A ? A : R;
    Buf mx = {0}, sum = {0}, out = {0};
    row_fold(&mx, 3, "float", L, K, "mx", "m", "-INFINITY", "fmax_nan(%s, %s)", "xr[k + j]",
             "xr[k]", NULL, NULL);
    row_fold(&sum, 3, "float", L, K, "sum", "s", "0", "%s + %s", "yr[k + j]", "yr[k]", NULL,
             NULL);
    if (logsm) {
        buf_line(&out, 3, "sum = logf(sum);");
        buf_line(&out, 3, "for (k = 0; k < %s; k++)", lit(K));
        buf_line(&out, 4, "yr[k] = xr[k] - mxs[a] - sum;");
    } else if (K >= MLBC_VDIVS_MIN) {
        buf_line(&out, 3, "mlbc_vdivs_f32(%s, yr, sum, yr);", lit(K));
    } else {
        buf_line(&out, 3, "for (k = 0; k < %s; k++)", lit(K));
        buf_line(&out, 4, "yr[k] = yr[k] / sum;");
    }
    Buf decl = {0};
    if (L > 1)
        buf_printf(&decl, "    int j;\n    float m[%d], s[%d];\n", L, L);
    if (logsm)
        buf_printf(&decl, "    float mxs[%s];\n", lit(R));
    return kernel_paths(e, n, A * K, "reduce_softmax_rows_f32", "OP", n->op, "DOC", doc,
                  "A", lit(A), "R", lit(R), "K", lit(K), "LANES_NOTE", lanes_note(L),
                  "DECL", decl.p ? decl.p : "", "MAX", mx.p, "SUM", sum.p, "OUT", out.p,
                  "KEEP", logsm ? "            mxs[a] = mx;\n" : "",
                  "XR", logsm ? strf("            const float *restrict xr = x + (a0 + a) * %s;\n",
                                     lit(K)) : "", NULL);
}

/* Softmax or LogSoftmax of double or 16-bit floats over contiguous rows, one row at a time
 * (templates/reduce_softmax_rows.c). */
static const char *softmax_rows(Emit *e, Node *n, const char *doc, int64_t A, int64_t K)
{
    DType t = n->in[0]->dt;
    int logsm = !strcmp(n->op, "LogSoftmax");
    int keep_e = !logsm && !dtype_is_half(t); /* exp values parked in y, then scaled */
    const char *C = dtype_ctype(calc_type(t)), *S = libm_sfx(calc_type(t));
    int L = softmax_lanes(C, K);
    const char *exp_k = strf("exp%s(%s - mx)", S, load_elem(t, "xr[k]"));
    const char *exp_kj = strf("exp%s(%s - mx)", S, load_elem(t, "xr[k + j]"));
    const char *out = logsm ? store_elem(t, strf("%s - mx - sum", load_elem(t, "xr[k]")))
                      : keep_e ? "yr[k] / sum" : store_elem(t, strf("%s / sum", exp_k));
    Buf mx = {0}, sum = {0};
    row_fold(&mx, 2, C, L, K, "mx", "m", "-INFINITY", "fmax_nan(%s, %s)",
             load_elem(t, "xr[k + j]"), load_elem(t, "xr[k]"), NULL, NULL);
    row_fold(&sum, 2, C, L, K, "sum", "s", "0", "%s + %s", exp_kj, exp_k,
             keep_e ? "yr[k + j]" : NULL, keep_e ? "yr[k]" : NULL);
    if (logsm)
        buf_line(&sum, 2, "sum = log%s(sum);", S);
    return kernel_paths(e, n, A * K, "reduce_softmax_rows", "OP", n->op, "DOC", doc,
                  "TX", dtype_ctype(t),
                  "TY", dtype_ctype(t), "C", C, "A", lit(A), "FOR_A", loop_head("", "a", A, 1),
                  "K", lit(K),
                  "LANES_NOTE", lanes_note(L),
                  "DECL", L > 1 ? strf("    int j;\n    %s m[%d], s[%d];\n", C, L, L) : "",
                  "MAX", mx.p, "SUM", sum.p,
                  "OUT", strf("        for (k = 0; k < %s; k++)\n            yr[k] = %s;\n", lit(K),
                              out), NULL);
}

/* Softmax or LogSoftmax along an axis with inner stride B (templates/reduce_softmax_cols.c).
 * Float: x - max parked in y, exponentiated in place: the whole [K][B] slab at once when one
 * chunk covers B, else row k's nb columns. */
static const char *softmax_cols(Emit *e, Node *n, const char *doc, int64_t A, int64_t K,
                                int64_t B)
{
    DType t = n->in[0]->dt;
    int logsm = !strcmp(n->op, "LogSoftmax"), vexp = t == DT_FLOAT;
    int keep_e = !logsm && !dtype_is_half(t);
    const char *C = dtype_ctype(calc_type(t)), *S = libm_sfx(calc_type(t));
    const char *ld = load_elem(t, strf("xa[k * %s + b0 + j]", lit(B)));
    const char *yk = strf("ya[k * %s + b0 + j]", lit(B));
    const char *out = logsm ? store_elem(t, strf("%s - m[j] - s[j]", ld))
                      : keep_e ? strf("%s / s[j]", yk)
                               : store_elem(t, strf("exp%s(%s - m[j]) / s[j]", S, ld));
    Buf pre = {0};
    if (vexp) {
        buf_line(&pre, 3, "for (k = 0; k < %s; k++)", lit(K));
        buf_line(&pre, 4, "for (j = 0; j < nb; j++)");
        buf_line(&pre, 5, "%s = %s - m[j];", yk, ld);
        if (chunk_of(B) >= B) {
            buf_line(&pre, 3, "mlbc_vexp_f32(%s, ya, ya);", lit(K * B));
        } else {
            buf_line(&pre, 3, "for (k = 0; k < %s; k++)", lit(K));
            buf_line(&pre, 4, "mlbc_vexp_f32(nb, ya + k * %s + b0, ya + k * %s + b0);",
                     lit(B), lit(B));
        }
    }
    return kernel(e, n, "reduce_softmax_cols", "OP", n->op, "DOC", doc, "TX", dtype_ctype(t),
                  "TY", dtype_ctype(t), "C", C, "A", lit(A), "FOR_A", loop_head("", "a", A, 1),
                  "K", lit(K), "B", lit(B), "KB", lit(K * B), "CH", lit(chunk_of(B)),
                  "FOR_B0", loop_head("", "b0", B, chunk_of(B)), "LOAD", ld,
                  "PRE", pre.p ? pre.p : "",
                  "EXP", vexp ? yk : strf("exp%s(%s - m[j])", S, ld),
                  "STOREE", keep_e && !vexp ? strf("                    %s = e;\n", yk) : "",
                  "FINISH", logsm ? strf("log%s(s[j])", S) : "s[j]", "OUT", out, NULL);
}

static void softmax_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    if (!numel(y))
        return;
    int64_t A, K, B;
    softmax_view(n, &A, &K, &B);
    const char *doc = strf("%s over %s of %s%s (viewed as [%lld][%lld][%lld])", n->op,
                           n->opset < 13 ? "the coerced 2-D rows" : "one axis",
                           dtype_name(x->dt), shape_str(x), (long long)A, (long long)K,
                           (long long)B);
    const char *fn = B > 1 ? softmax_cols(e, n, doc, A, K, B)
                     : x->dt == DT_FLOAT ? softmax_rows_f32(e, n, doc, A, K)
                                         : softmax_rows(e, n, doc, A, K);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

static void hardmax_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    if (!numel(y))
        return;
    int64_t A, K, B;
    softmax_view(n, &A, &K, &B);
    DType t = x->dt;
    const char *fn = kernel(e, n, "reduce_hardmax",
        "DOC", strf("Hardmax of %s%s (viewed as [%lld][%lld][%lld])", dtype_name(t),
                    shape_str(x), (long long)A, (long long)K, (long long)B),
        "TX", dtype_ctype(t), "TY", dtype_ctype(t), "C", value_ctype(t),
        "CH", lit(chunk_of(B)), "FOR_B0", loop_head("", "b0", B, chunk_of(B)), "A", lit(A),
        "FOR_A", loop_head("", "a", A, 1), "K", lit(K), "B", lit(B), "KB", lit(K * B),
        "FOR_K1", loop_range("", "k", 1, K, 1), "FOR_K", loop_head("", "k", K, 1),
        "LOAD0", load_elem(t, "xa[b0 + j]"),
        "LOADK", load_elem(t, strf("xa[k * %s + b0 + j]", lit(B))),
        "BETTER", better(1, 0, t, "v", "best[j]"),
        "ONE", t == DT_FLOAT16 ? "0x3c00" : t == DT_BFLOAT16 ? "0x3f80" : "1",
        "ZERO", "0", NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

/* ---- CumSum ---- */

static void cumsum_infer(Node *n)
{
    Value *x = input(n, 0), *a = input(n, 1);
    if (!x || !a || n->nin != 2)
        node_die(n, "takes 2 inputs (x, axis)");
    need_numeric(n, x);
    if ((a->dt != DT_INT32 && a->dt != DT_INT64) || numel(a) != 1 || a->rank > 1)
        node_die(n, "axis must be an int32 or int64 scalar");
    if (x->rank == 0)
        node_die(n, "input must have rank >= 1");
    if (a->data)
        norm_axis(n, value_get_i(a, 0), x->rank);
    copy_shape(n, 0, x, DT_UNDEF);
}

static const char *cumsum_kernel(Emit *e, Node *n, int axis)
{
    Value *x = n->in[0];
    DType t = x->dt;
    int excl = (int)attr_int(n, "exclusive", 0), rev = (int)attr_int(n, "reverse", 0);
    int64_t A, K, B;
    split_axis(x, axis, &A, &K, &B);
    const char *C = dtype_is_floatish(t) ? dtype_ctype(calc_type(t)) : "uint64_t";
    const char *ld = load_elem(t, strf("xa[k * %s + b0 + j]", lit(B)));
    const char *st = strf("                    ya[k * %s + b0 + j] = %s;\n", lit(B),
                          store_elem(t, "acc[j]"));
    const char *add = "                    acc[j] += v;\n";
    return kernel(e, n, "reduce_cumsum",
        "MODE", strf("%s, %s", excl ? "exclusive" : "inclusive", rev ? "reverse" : "forward"),
        "DOC", strf("CumSum over axis %d of %s%s", axis, dtype_name(t), shape_str(x)),
        "TX", dtype_ctype(t), "TY", dtype_ctype(t), "C", C, "CH", lit(chunk_of(B)),
        "FOR_B0", loop_head("", "b0", B, chunk_of(B)),
        "A", lit(A), "FOR_A", loop_head("", "a", A, 1), "B", lit(B), "KB", lit(K * B),
        "START", rev ? lit(K - 1) : "0",
        "COND", rev ? "k >= 0" : strf("k < %s", lit(K)),
        "STEP", rev ? "--" : "++",
        "LOAD", dtype_is_floatish(t) ? ld : strf("(uint64_t)%s", ld),
        "BODY", excl ? strf("%s%s", st, add) : strf("%s%s", add, st), NULL);
}

static void cumsum_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *a = n->in[1], *y = n->out[0];
    if (!numel(y))
        return;
    if (a->data) {
        int axis = norm_axis(n, value_get_i(a, 0), x->rank);
        stmt(e, "%s(%s, %s);", cumsum_kernel(e, n, axis), ref(e, x), ref(e, y));
        return;
    }
    Buf cases = {0};
    for (int i = 0; i < x->rank; i++)
        buf_printf(&cases, "    case %d: %s(x, y); return 0;\n", i, cumsum_kernel(e, n, i));
    const char *fn = kernel(e, n, "reduce_axis_dispatch", "OP", "CumSum",
        "DOC", strf("CumSum of %s%s over an axis given at run time", dtype_name(x->dt),
                    shape_str(x)),
        "TA", dtype_ctype(a->dt), "TX", dtype_ctype(x->dt), "TY", dtype_ctype(y->dt),
        "RANK", lit(x->rank), "CASES", cases.p, NULL);
    check(e, strf("%s(%s, %s, %s) == 0", fn, ref(e, a), ref(e, x), ref(e, y)),
          "CumSum: axis out of range");
}

/* ---- TopK ---- */

static int topk_axis(Node *n) { return norm_axis(n, attr_int(n, "axis", -1), n->in[0]->rank); }

static void topk_infer(Node *n)
{
    Value *x = input(n, 0);
    if (!x)
        node_die(n, "input 0 is required");
    need_numeric(n, x);
    if (x->rank == 0)
        node_die(n, "input must have rank >= 1");
    int axis = topk_axis(n);
    int64_t k;
    int64_t dim[MLBC_MAX_RANK];
    memcpy(dim, x->dim, sizeof(int64_t) * x->rank);
    if (n->opset < 10) {
        if (n->nin != 1)
            node_die(n, "takes 1 input at opset %d", n->opset);
        k = attr_int(n, "k", -1);
    } else {
        Value *kv = input(n, 1);
        if (!kv || n->nin != 2)
            node_die(n, "takes 2 inputs (X, K)");
        if (kv->dt != DT_INT64 || numel(kv) != 1)
            node_die(n, "K must be a 1-element int64 tensor");
        if (!kv->data) {
            if (!use_declared(n, 0, x->dt) || !use_declared(n, 1, DT_INT64))
                node_die(n, "K ('%s') is not a constant and the outputs have no declared "
                         "static shape; give K as an initializer or declare the outputs",
                         kv->name);
            Value *v = n->out[0] ? n->out[0] : n->out[1];
            if (v->rank != x->rank)
                node_die(n, "declared output rank %d differs from the input's %d", v->rank,
                         x->rank);
            for (int i = 0; i < x->rank; i++)
                if (i != axis && v->dim[i] != x->dim[i])
                    node_die(n, "declared output shape %s does not fit input %s", shape_str(v),
                             shape_str(x));
            if (n->out[0] && n->out[1] &&
                (n->out[1]->rank != v->rank ||
                 memcmp(n->out[1]->dim, v->dim, sizeof(int64_t) * v->rank)))
                node_die(n, "the declared shapes of Values and Indices differ");
            k = v->dim[axis];
            if (k > x->dim[axis])
                node_die(n, "declared k = %lld exceeds the axis length %lld", (long long)k,
                         (long long)x->dim[axis]);
            n->aux = xalloc(sizeof(int64_t));
            *(int64_t *)n->aux = k;
            return;
        }
        k = value_get_i(kv, 0);
    }
    if (k < 0 || k > x->dim[axis])
        node_die(n, "k = %lld is out of range for axis length %lld", (long long)k,
                 (long long)x->dim[axis]);
    n->aux = xalloc(sizeof(int64_t));
    *(int64_t *)n->aux = k;
    dim[axis] = k;
    set_output(n, 0, x->dt, x->rank, dim);
    set_output(n, 1, DT_INT64, x->rank, dim);
}

static void topk_emit(Emit *e, Node *n)
{
    Value *x = n->in[0];
    int64_t k = *(int64_t *)n->aux;
    Value *kv = input(n, 1);
    if (kv && !kv->data)
        check(e, strf("%s[0] == %s", ref(e, kv), lit(k)),
              "TopK: K disagrees with the declared output shape");
    if (!k || !numel(x))
        return;
    int axis = topk_axis(n);
    int largest = (int)attr_int(n, "largest", 1);
    int64_t A, K, B;
    split_axis(x, axis, &A, &K, &B);
    if (!n->out[0] || !n->out[1])
        node_die(n, "TopK needs both outputs (Values and Indices)");
    const char *fn = kernel(e, n, "reduce_topk",
        "DOC", strf("TopK, k = %lld, over axis %d of %s%s", (long long)k, axis,
                    dtype_name(x->dt), shape_str(x)),
        "WHICH", largest ? "largest" : "smallest", "TX", dtype_ctype(x->dt),
        "C", value_ctype(x->dt), "A", lit(A), "FOR_A", loop_head("", "a", A, 1), "K", lit(K),
        "B", lit(B), "FOR_B", loop_head("", "b", B, 1), "KB", lit(K * B),
        "K1", lit(k), "K1B", lit(k * B), "LOADV", load_elem(x->dt, strf("xr[i * %s]", lit(B))),
        "BETTER", strf("v %s %s", largest ? ">" : "<",
                       load_elem(x->dt, strf("vr[(p - 1) * %s]", lit(B)))), NULL);
    stmt(e, "%s(%s, %s, %s);", fn, ref(e, x), ref(e, n->out[0]), ref(e, n->out[1]));
}

/* ---- cost estimates (--info) ---- */

static double in_flops(Node *n) { return (double)numel(n->in[0]); }
static double lse_flops(Node *n) { return 3.0 * (double)numel(n->in[0]); }
static double softmax_flops(Node *n) { return 4.0 * (double)numel(n->in[0]); }

static double topk_flops(Node *n)
{
    int64_t k = n->aux ? *(int64_t *)n->aux : 1;
    return (double)numel(n->in[0]) * (double)(k > 0 ? k : 1);
}

const OpDef ops_reduce[] = {
    {"ReduceSum", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ReduceMean", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ReduceMax", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ReduceMin", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ReduceProd", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ReduceL1", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ReduceL2", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ReduceLogSum", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ReduceLogSumExp", reduce_infer, reduce_fold, reduce_emit, lse_flops, 0},
    {"ReduceSumSquare", reduce_infer, reduce_fold, reduce_emit, in_flops, 0},
    {"ArgMax", arg_infer, NULL, arg_emit, in_flops, 0},
    {"ArgMin", arg_infer, NULL, arg_emit, in_flops, 0},
    {"Softmax", softmax_infer, NULL, softmax_emit, softmax_flops, 0},
    {"LogSoftmax", softmax_infer, NULL, softmax_emit, softmax_flops, 0},
    {"Hardmax", softmax_infer, NULL, hardmax_emit, in_flops, 0},
    {"CumSum", cumsum_infer, NULL, cumsum_emit, in_flops, 0},
    {"TopK", topk_infer, NULL, topk_emit, topk_flops, 0},
    {0},
};
