/* op_rnn.c - LSTM, GRU, RNN.
 *
 * Float (template rnn_f32, one kernel per direction): the input projections of all steps
 * (or of blocks of steps, keeping the buffer within 64 KiB of stack) and batch rows at once,
 * then per step the recurrent product of the whole batch, both by the fused multiply-add
 * matrix kernel (mlbc_gemm_f32 over W and R packed at compile time, mlbc_gemv_f32 over R for
 * a batch of one; mlbc_dots_f32 reading run-time W and R in place), then the gates and the
 * cell update of each row: with the default activations by array passes of the vector sigmoid/tanh (templates vmath_*),
 * otherwise in one loop. Biases of W (and of R where the cell adds it outside a gate product)
 * are the projection's c operand, and an LSTM's or RNN's projected inputs the recurrent
 * product's, where all rows are at the same step.
 *
 * Double and 16-bit floats (templates rnn_lstm.c, rnn_gru.c, rnn_rnn.c): the recurrence runs
 * over time and batch with the state held in the kernel; each gate value is a contiguous dot
 * product of a row of W (or R) with the input (or state) vector, using a fixed-order
 * multi-accumulator dot product (templates/rnn_dot_*.c). The ONNX weight layout
 * [dirs, gates*H, I] already has contiguous rows, so the same kernel serves constant and
 * run-time weights.
 *
 * Layout, optional inputs and outputs, activations, clip and peepholes are resolved here into
 * code fragments substituted into the templates. Every multiply-add outside the matrix
 * kernels is contraction-proof (madd(), sum2()): the generated code gives the same bits
 * whatever compiler, flags or CPU path.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "mlbc.h"

typedef struct RnnInfo {
    int gates;              /* 4 LSTM, 3 GRU, 1 RNN */
    int nact;               /* activations per direction */
    int dirs, layout;
    int64_t seq, batch, in, hid;
} RnnInfo;

enum { IN_X, IN_W, IN_R, IN_B, IN_LENS, IN_H0, IN_C0, IN_P };

static int gates_of(const Node *n)
{
    return !strcmp(n->op, "LSTM") ? 4 : !strcmp(n->op, "GRU") ? 3 : 1;
}

static void need_dims(Node *n, const Value *v, int rank, const int64_t *dim, const char *what)
{
    int bad = v->rank != rank;
    for (int i = 0; i < rank && !bad; i++)
        bad = v->dim[i] != dim[i];
    if (bad) {
        Value want = {.rank = rank};
        memcpy(want.dim, dim, sizeof(int64_t) * rank);
        node_die(n, "%s '%s' has shape %s; expected %s", what, v->name, shape_str(v),
                 shape_str(&want));
    }
}

static void rnn_info(Node *n, RnnInfo *ri)
{
    int G = ri->gates = gates_of(n);
    ri->nact = G == 4 ? 3 : G == 3 ? 2 : 1;
    int maxin = G == 4 ? 8 : 6;
    if (n->nin < 3 || n->nin > maxin)
        node_die(n, "takes 3 to %d inputs, got %d", maxin, n->nin);
    for (int i = 0; i < 3; i++)
        if (!n->in[i])
            node_die(n, "input %d is required", i);
    Value *x = n->in[IN_X], *w = n->in[IN_W], *r = n->in[IN_R];
    static const DType floats[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_UNDEF};
    need_type(n, x, floats);
    const char *dir = attr_str(n, "direction", "forward");
    if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
        ri->dirs = 1;
    else if (!strcmp(dir, "bidirectional"))
        ri->dirs = 2;
    else
        node_die(n, "direction must be forward, reverse or bidirectional, not '%s'", dir);
    ri->layout = n->opset >= 14 ? (int)attr_int(n, "layout", 0) : 0;
    if (ri->layout != 0 && ri->layout != 1)
        node_die(n, "layout must be 0 or 1");
    if (x->rank != 3)
        node_die(n, "X must have rank 3, not %d", x->rank);
    ri->seq = x->dim[ri->layout ? 1 : 0];
    ri->batch = x->dim[ri->layout ? 0 : 1];
    ri->in = x->dim[2];
    if (r->rank != 3)
        node_die(n, "R must have rank 3, not %d", r->rank);
    ri->hid = attr_int(n, "hidden_size", r->dim[2]);
    if (ri->hid < 1)
        node_die(n, "hidden_size must be positive");
    int64_t D = ri->dirs, H = ri->hid, B = ri->batch;
    int64_t dw[3] = {D, G * H, ri->in}, dr[3] = {D, G * H, H}, db[2] = {D, 2 * G * H};
    int64_t dh[3] = {ri->layout ? B : D, ri->layout ? D : B, H}, dp[2] = {D, 3 * H};
    need_same_type(n, x, w);
    need_same_type(n, x, r);
    need_dims(n, w, 3, dw, "W");
    need_dims(n, r, 3, dr, "R");
    Value *v;
    if ((v = input(n, IN_B))) {
        need_same_type(n, x, v);
        need_dims(n, v, 2, db, "B");
    }
    if ((v = input(n, IN_LENS))) {
        static const DType ints[] = {DT_INT32, DT_INT64, DT_UNDEF};
        need_type(n, v, ints);
        need_dims(n, v, 1, &ri->batch, "sequence_lens");
        if (v->data)
            for (int64_t b = 0; b < ri->batch; b++)
                if (value_get_i(v, b) < 0 || value_get_i(v, b) > ri->seq)
                    node_die(n, "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                             (long long)value_get_i(v, b), (long long)ri->seq);
    }
    for (int i = IN_H0; i <= IN_C0; i++)
        if ((v = input(n, i))) {
            need_same_type(n, x, v);
            need_dims(n, v, 3, dh, i == IN_H0 ? "initial_h" : "initial_c");
        }
    if ((v = input(n, IN_P))) {
        need_same_type(n, x, v);
        need_dims(n, v, 2, dp, "P");
    }
}

/* ---- code fragments ---- */

typedef struct Act {
    const char *name;
    double alpha, beta;
} Act;

static int uses_alpha(const char *nm)
{
    static const char *const names[] = {"affine", "leakyrelu", "thresholdedrelu", "scaledtanh",
                                        "hardsigmoid", "elu", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(nm, names[i]))
            return 1;
    return 0;
}

static int uses_beta(const char *nm)
{
    return !strcmp(nm, "affine") || !strcmp(nm, "scaledtanh") || !strcmp(nm, "hardsigmoid");
}

/* The activations of every direction, in order (f, g, h for LSTM; per direction).
 * activation_alpha/beta are consumed in order by the functions that take them. */
static void read_acts(Node *n, const RnnInfo *ri, Act *acts)
{
    static const char *const gated[] = {"sigmoid", "tanh", "tanh"}, *const simple[] = {"tanh"};
    const char *const *d = ri->gates > 1 ? gated : simple;
    int total = ri->nact * ri->dirs;
    Onnx__AttributeProto *a = attr(n, "activations");
    if (a && a->n_strings != (size_t)ri->nact && a->n_strings != (size_t)total)
        node_die(n, "activations has %zu names; expected %d", a->n_strings, total);
    float al[32], be[32];
    int nal = attr_floats(n, "activation_alpha", al, 32), nbe = attr_floats(n, "activation_beta", be, 32);
    int ia = 0, ib = 0;
    for (int k = 0; k < total; k++) {
        const char *nm;
        if (a && a->n_strings) {
            size_t i = (size_t)k % a->n_strings;
            nm = xstrndup((const char *)a->strings[i].data, a->strings[i].len);
        } else {
            nm = d[k % ri->nact];
        }
        char *low = xstrdup(nm);
        for (char *p = low; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        Act *x = &acts[k];
        x->name = low;
        if (!strcmp(low, "leakyrelu"))
            x->alpha = 0.01;
        else if (!strcmp(low, "hardsigmoid"))
            x->alpha = 0.2, x->beta = 0.5;
        else if (!strcmp(low, "affine") || !strcmp(low, "thresholdedrelu") ||
                 !strcmp(low, "scaledtanh") || !strcmp(low, "elu"))
            x->alpha = 1.0, x->beta = !strcmp(low, "scaledtanh") ? 1.0 : 0.0;
        if (uses_alpha(low) && ia < nal)
            x->alpha = al[ia++];
        if (uses_beta(low) && ib < nbe)
            x->beta = be[ib++];
        static const char *const known[] = {"sigmoid", "tanh", "relu", "affine", "leakyrelu",
                                            "thresholdedrelu", "scaledtanh", "hardsigmoid",
                                            "elu", "softsign", "softplus", NULL};
        int ok = 0;
        for (int i = 0; known[i]; i++)
            ok |= !strcmp(low, known[i]);
        if (!ok)
            node_die(n, "activation '%s' is not supported", nm);
    }
}

/* Activation applied to variable v (a plain name) in the computation type. */
static const char *act_expr(const Act *a, const char *v, DType at)
{
    const char *f = libm_sfx(at);
    const char *al = float_lit(a->alpha, at), *be = float_lit(a->beta, at);
    const char *nm = a->name;
    if (!strcmp(nm, "sigmoid")) return strf("1 / (1 + exp%s(-%s))", f, v);
    if (!strcmp(nm, "tanh")) return libm_suffix(strf("tanh@(%s)", v), at);
    if (!strcmp(nm, "relu")) return strf("%s > 0 ? %s : 0", v, v);
    if (!strcmp(nm, "affine")) return madd(at, al, v, be);
    if (!strcmp(nm, "leakyrelu")) return strf("%s >= 0 ? %s : %s * %s", v, v, al, v);
    if (!strcmp(nm, "thresholdedrelu")) return strf("%s > %s ? %s : 0", v, al, v);
    if (!strcmp(nm, "scaledtanh")) return libm_suffix(strf("%s * tanh@(%s * %s)", al, be, v), at);
    if (!strcmp(nm, "hardsigmoid"))
        return strf("fmax%s(0, fmin%s(1, %s))", f, f, madd(at, al, v, be));
    if (!strcmp(nm, "elu")) return strf("%s >= 0 ? %s : %s * (exp%s(%s) - 1)", v, v, al, f, v);
    if (!strcmp(nm, "softsign")) return strf("%s / (1 + fabs%s(%s))", v, f, v);
    /* softplus */
    return strf("%s > 30 ? %s : log1p%s(exp%s(%s))", v, v, f, f, v);
}

/* Statement "v = act(clip(v));" at the given indentation. */
static void apply(Buf *b, const char *ind, const Act *a, const char *v, double clip, DType at)
{
    if (clip > 0) {
        const char *c = float_lit(clip, at);
        buf_printf(b, "%s%s = %s < -%s ? -%s : %s > %s ? %s : %s;\n", ind, v, v, c, c, v, c, c, v);
    }
    buf_printf(b, "%s%s = %s;\n", ind, v, act_expr(a, v, at));
}

/* "a * b + c * d" in the computation type, contraction-proof: for float (and the 16-bit
 * floats) both products are exact in double and the sum is rounded once there, then to
 * float; for double an explicit fma adds the rounded product c * d. */
static const char *sum2(DType at, const char *a, const char *b, const char *c, const char *d)
{
    if (at == DT_FLOAT)
        return strf("(float)((double)%s * %s + (double)%s * %s)", a, b, c, d);
    return madd(at, a, b, strf("%s * %s", c, d));
}

static void rnn_infer(Node *n)
{
    RnnInfo ri;
    rnn_info(n, &ri);
    DType t = n->in[IN_X]->dt;
    int64_t S = ri.seq, D = ri.dirs, B = ri.batch, H = ri.hid;
    int64_t dy0[4] = {S, D, B, H}, dy1[4] = {B, S, D, H};
    int64_t dh0[3] = {D, B, H}, dh1[3] = {B, D, H};
    int maxout = ri.gates == 4 ? 3 : 2;
    if (n->nout > maxout)
        node_die(n, "has at most %d outputs", maxout);
    set_output(n, 0, t, 4, ri.layout ? dy1 : dy0);
    for (int i = 1; i < n->nout; i++)
        set_output(n, i, t, 3, ri.layout ? dh1 : dh0);
    /* Activations are checked here so a bad name fails at compile time. */
    Act acts[6];
    read_acts(n, &ri, acts);
}

/* "p + off", or "p" when off is 0. */
static const char *at_off(const char *p, int64_t off)
{
    return off ? strf("%s + %s", p, lit(off)) : p;
}

/* Rows [r0, r0 + rows) of direction d of W or R ([dirs][gates * hidden][k]) for the float
 * products: a constant is packed (when the weights are written) as B = rows^T in panels of 16
 * columns for mlbc_gemm_f32 (pk[p][k][l] = M[r0 + 16 p + l][k], zero past the last row and
 * past k, the panels gemm_panel_stride(k) apart), or for mlbc_gemv_f32 in its column blocks
 * (gemv_index); a run-time input is read in place by mlbc_dots_f32 (its rows are contiguous
 * along k). */
typedef struct RowsPacking {
    const Value *m;
    int64_t off, rows, k;
    int gemv;
} RowsPacking;

static void pack_rows(const void *arg, void *dst)
{
    const RowsPacking *r = arg;
    int64_t np = (r->rows + 15) / 16, ps = gemm_panel_stride(r->k), i = 0;
    if (r->gemv) {
        for (int64_t row = 0; row < r->rows; row++)
            for (int64_t kk = 0; kk < r->k; kk++)
                ((float *)dst)[gemv_index(r->k, r->rows, kk, row)] =
                    (float)value_get_f(r->m, r->off + row * r->k + kk);
        return;
    }
    for (int64_t p = 0; p < np; p++)
        for (int64_t kk = 0; kk < ps / 16; kk++)
            for (int64_t l = 0; l < 16; l++, i++) {
                int64_t row = p * 16 + l;
                if (row < r->rows && kk < r->k)
                    ((float *)dst)[i] = (float)value_get_f(r->m, r->off + row * r->k + kk);
            }
}

static const char *pack_or_ref(Emit *e, Node *n, const Value *m, int d, int64_t r0, int64_t rows,
                               int64_t k, int gemv)
{
    int64_t off = (d * numel(m) / m->dim[0]) + r0 * k;
    if (!m->data)
        return at_off(ref(e, m), off);
    RowsPacking *arg = xalloc(sizeof *arg);
    *arg = (RowsPacking){m, off, rows, k, gemv};
    const char *layout = gemv ? "column blocks of 64" : "column panels of 16";
    return weight_array(e, n,
        strf("rows %d off %lld rows %lld k %lld %s", m->id, (long long)off, (long long)rows,
             (long long)k, layout),
        (WeightArray){.doc = strf("%s: '%s' direction %d, rows [%lld, %lld) transposed, in %s",
                                  n->op, c_comment(m->name), d, (long long)r0,
                                  (long long)(r0 + rows), layout),
                      .dt = DT_FLOAT, .pack = pack_rows, .arg = arg,
                      .count = gemv ? gemv_size(k, rows)
                                    : (rows + 15) / 16 * gemm_panel_stride(k)});
}

/* R in mlbc_gemv_f32's layout: its product has one row (rnn_weights packs it, emit_f32 calls
 * it) */
static int r_in_blocks(const RnnInfo *ri) { return ri->batch == 1; }

/* W likewise when its product has one row too: one step of one row (a cell step with state in
 * and out; through mlbc_gemm_f32 the row took the general product's path) */
static int w_in_blocks(const RnnInfo *ri) { return ri->batch == 1 && ri->seq == 1; }

/* What the emitters of one node share: its inputs, outputs and options, then per direction
 * the kernel's parameters and call and the fragments every template takes. */
typedef struct RnnGen {
    RnnInfo ri;
    DType t, at;                    /* element and computation types */
    const char *T;
    Value *x, *w, *r, *bias, *lens, *h0, *c0, *p, *y, *yh, *yc;
    double clip;
    int lbr, input_forget, runtime_lens;
    Act acts[6];
    int d, reverse;                 /* the direction */
    const Act *act;                 /* its activations */
    Buf params, call, pro, epi, yzero, ystore;
    const char *len, *hrow;         /* row b's length; offset of its state rows */
    const char *h0e, *c0e;          /* the initial state of unit j */
} RnnGen;

static const char *const i8 = "        ", *const i12 = "            ",
                  *const i16 = "                ";

/* TEXT, lines of code, indented 4 more: a row's step, in the if that checks its length. */
static const char *deeper(const char *text)
{
    Buf b = {0};
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        buf_printf(&b, "%s%.*s\n", len ? "    " : "", (int)len, p);
        p += len + (p[len] == '\n');
    }
    return b.p ? b.p : "";
}

/* The else of the if that checks a row's length: Y zero there ("" without Y). */
static const char *past_len(const RnnGen *g)
{
    return g->yzero.p ? strf("%s} else {\n%s", i12, g->yzero.p) : "";
}

static void rnn_gen(Node *n, RnnGen *g)
{
    memset(g, 0, sizeof *g);
    rnn_info(n, &g->ri);
    int G = g->ri.gates;
    g->x = n->in[IN_X];
    g->w = n->in[IN_W];
    g->r = n->in[IN_R];
    g->t = g->x->dt;
    g->at = calc_type(g->t);
    g->T = dtype_ctype(g->t);
    g->bias = input(n, IN_B);
    g->lens = input(n, IN_LENS);
    g->h0 = input(n, IN_H0);
    g->c0 = G == 4 ? input(n, IN_C0) : NULL;
    g->p = G == 4 ? input(n, IN_P) : NULL;
    g->y = read_output(n, 0);
    g->yh = read_output(n, 1);
    g->yc = G == 4 ? read_output(n, 2) : NULL;
    g->clip = attr_float(n, "clip", 0);
    g->lbr = G == 3 && attr_int(n, "linear_before_reset", 0);
    g->input_forget = G == 4 && attr_int(n, "input_forget", 0);
    read_acts(n, &g->ri, g->acts);
    /* sequence_lens: constant and all full is the same as absent. */
    if (g->lens && g->lens->data) {
        int full = 1;
        for (int64_t b = 0; b < g->ri.batch; b++)
            full &= value_get_i(g->lens, b) == g->ri.seq;
        if (full)
            g->lens = NULL;
    } else if (g->lens) {
        g->runtime_lens = 1;
    }
}

/* Starts direction d: its activations, and the offset of state rows (initial_h, Y_h, ...)
 * by layout. */
static void rnn_direction(Node *n, RnnGen *g, int d)
{
    int64_t D = g->ri.dirs, B = g->ri.batch, H = g->ri.hid;
    g->d = d;
    g->reverse = !strcmp(attr_str(n, "direction", "forward"), "reverse") || d == 1;
    g->act = g->acts + d * g->ri.nact;
    g->params = g->call = g->pro = g->epi = g->yzero = g->ystore = (Buf){0};
    g->len = lit(g->ri.seq);
    g->h0e = g->c0e = "0";
    g->hrow = g->ri.layout ? strf("(b * %s + %d) * %s", lit(D), d, lit(H))
              : d          ? strf("(%s + b) * %s", lit(d * B), lit(H))
                           : strf("b * %s", lit(H));
}

/* Offset of row b's Y row at time TV, by layout. */
static const char *yrow(const RnnGen *g, const char *tv)
{
    int64_t S = g->ri.seq, D = g->ri.dirs, B = g->ri.batch, H = g->ri.hid;
    if (g->ri.layout)
        return strf("((b * %s + %s) * %s + %d) * %s", lit(S), tv, lit(D), g->d, lit(H));
    return strf("((%s * %s + %d) * %s + b) * %s", tv, lit(D), g->d, lit(B), lit(H));
}

/* X, W and R. For the float products W and R are packed when constant (GRU without
 * linear_before_reset: R's z, r rows and its h rows apart, in r and r2). */
static void rnn_weights(Emit *e, Node *n, RnnGen *g)
{
    int G = g->ri.gates, d = g->d;
    int64_t H = g->ri.hid, I = g->ri.in;
    const char *T = g->T;
    Value *x = g->x, *w = g->w, *r = g->r;
    buf_printf(&g->params, "const %s *restrict x, const %s *restrict w, const %s *restrict r",
               T, T, T);
    if (g->t != DT_FLOAT) {
        buf_printf(&g->call, "%s, %s, %s", ref(e, x), at_off(ref(e, w), d * G * H * I),
                   at_off(ref(e, r), d * G * H * H));
        return;
    }
    int split = G == 3 && !g->lbr, one = r_in_blocks(&g->ri);
    buf_printf(&g->call, "%s, %s, %s", ref(e, x),
               pack_or_ref(e, n, w, d, 0, G * H, I, w_in_blocks(&g->ri)),
               pack_or_ref(e, n, r, d, 0, split ? 2 * H : G * H, H, one));
    if (split) {
        buf_puts(&g->params, ", const float *restrict r2");
        buf_printf(&g->call, ", %s", pack_or_ref(e, n, r, d, 2 * H, H, H, one));
    }
}

/* Bias: W and R biases summed (GRU with linear_before_reset keeps R's h bias apart). */
static void rnn_bias(Emit *e, RnnGen *g)
{
    int G = g->ri.gates;
    int64_t H = g->ri.hid;
    DType t = g->t;
    Buf *pro = &g->pro;
    if (!g->bias) {
        if (t != DT_FLOAT)  /* the float products take no bias then */
            buf_printf(pro, "    for (j = 0; j < %s; j++)\n%sbias[j] = 0;\n", lit(G * H), i8);
        if (g->lbr)
            buf_printf(pro, "    for (j = 0; j < %s; j++)\n%srbh[j] = 0;\n", lit(H), i8);
        return;
    }
    buf_printf(&g->params, ", const %s *restrict bb", g->T);
    buf_printf(&g->call, ", %s", at_off(ref(e, g->bias), g->d * 2 * G * H));
    buf_printf(pro, "    for (j = 0; j < %s; j++)\n", lit(G * H));
    buf_printf(pro, "%sbias[j] = %s + %s;\n", i8, load_elem(t, "bb[j]"),
               load_elem(t, strf("bb[%s + j]", lit(G * H))));
    if (g->lbr) {
        buf_printf(pro, "    for (j = 0; j < %s; j++) {\n", lit(H));
        buf_printf(pro, "%sbias[%s + j] = %s;\n", i8, lit(2 * H),
                   load_elem(t, strf("bb[%s + j]", lit(2 * H))));
        buf_printf(pro, "%srbh[j] = %s;\n", i8, load_elem(t, strf("bb[%s + j]", lit(5 * H))));
        buf_printf(pro, "    }\n");
    }
}

/* sequence_lens (a run-time one is checked first), initial_h, initial_c and P. */
static void rnn_inputs(Emit *e, RnnGen *g)
{
    const char *T = g->T;
    if (g->lens) {
        buf_printf(&g->params, ", const %s *restrict lens", dtype_ctype(g->lens->dt));
        buf_printf(&g->call, ", %s", ref(e, g->lens));
        g->len = "(long)lens[b]";
        if (g->runtime_lens) {
            buf_printf(&g->pro, "    %s\n", loop_head("", "b", g->ri.batch, 1));
            buf_printf(&g->pro, "%sif (lens[b] < 0 || lens[b] > %s)\n%s    return 1;\n", i8,
                       lit(g->ri.seq), i8);
        }
    }
    if (g->h0) {
        buf_printf(&g->params, ", const %s *restrict h0", T);
        buf_printf(&g->call, ", %s", ref(e, g->h0));
        g->h0e = load_elem(g->t, strf("h0[%s + j]", g->hrow));
    }
    if (g->c0) {
        buf_printf(&g->params, ", const %s *restrict c0", T);
        buf_printf(&g->call, ", %s", ref(e, g->c0));
        g->c0e = load_elem(g->t, strf("c0[%s + j]", g->hrow));
    }
    if (g->p) {
        buf_printf(&g->params, ", const %s *restrict p", T);
        buf_printf(&g->call, ", %s", at_off(ref(e, g->p), g->d * 3 * g->ri.hid));
    }
}

/* Y (zero past a row's length, stored each step), Y_h and Y_c (stored at the end). */
static void rnn_outputs(Emit *e, RnnGen *g)
{
    DType t = g->t, at = g->at;
    const char *T = g->T, *H = lit(g->ri.hid);
    if (g->y) {
        buf_printf(&g->params, ", %s *restrict y", T);
        buf_printf(&g->call, ", %s", ref(e, g->y));
        buf_printf(&g->yzero, "%sfor (j = 0; j < %s; j++)\n%s    y[%s + j] = %s;\n", i16, H,
                   i16, yrow(g, "s"), store_as(t, at, "0"));
        buf_printf(&g->ystore, "%sy[%s + j] = %s;\n", i16, yrow(g, "t"),
                   store_as(t, at, t == DT_FLOAT ? "h[b][j]" : "hn[j]"));
    }
    if (!g->yh && !g->yc)
        return;
    buf_printf(&g->epi, "    %s\n", loop_head("", "b", g->ri.batch, 1));
    buf_printf(&g->epi, "%sfor (j = 0; j < %s; j++) {\n", i8, H);
    if (g->yh) {
        buf_printf(&g->params, ", %s *restrict yh", T);
        buf_printf(&g->call, ", %s", ref(e, g->yh));
        buf_printf(&g->epi, "%s    yh[%s + j] = %s;\n", i8, g->hrow, store_as(t, at, "h[b][j]"));
    }
    if (g->yc) {
        buf_printf(&g->params, ", %s *restrict yc", T);
        buf_printf(&g->call, ", %s", ref(e, g->yc));
        buf_printf(&g->epi, "%s    yc[%s + j] = %s;\n", i8, g->hrow, store_as(t, at, "c[b][j]"));
    }
    buf_printf(&g->epi, "%s}\n", i8);
}

/* The kernel comment's list of options. */
static void doc_options(Buf *doc, const RnnGen *g)
{
    for (int k = 0; k < g->ri.nact; k++)
        buf_printf(doc, "%s%s", k ? ", " : "; activations ", g->act[k].name);
    if (g->clip > 0)
        buf_printf(doc, "; clip %g", g->clip);
    if (g->p)
        buf_puts(doc, "; peepholes");
    if (g->lbr)
        buf_puts(doc, "; linear before reset");
}

/* The LSTM gates from gi, go, gf, gc and the previous cell cp to the new cell cn, in the
 * computation type AT (peepholes, clip, activations; input_forget couples f to i). */
static void lstm_update(Buf *b, const RnnGen *g, DType at)
{
    const Act *act = g->act;
    int64_t H = g->ri.hid;
    DType t = g->t;
    if (g->p)
        buf_printf(b, "%sgi = %s;\n", i16, madd(at, load_elem(t, "p[j]"), "cp", "gi"));
    apply(b, i16, &act[0], "gi", g->clip, at);
    if (g->input_forget) {
        buf_printf(b, "%sgf = 1 - gi;\n", i16);
    } else {
        if (g->p)
            buf_printf(b, "%sgf = %s;\n", i16,
                       madd(at, load_elem(t, strf("p[%s + j]", lit(2 * H))), "cp", "gf"));
        apply(b, i16, &act[0], "gf", g->clip, at);
    }
    apply(b, i16, &act[1], "gc", g->clip, at);
    buf_printf(b, "%scn = %s;\n", i16, sum2(at, "gf", "cp", "gi", "gc"));
    if (g->p)
        buf_printf(b, "%sgo = %s;\n", i16,
                   madd(at, load_elem(t, strf("p[%s + j]", lit(H))), "cn", "go"));
    apply(b, i16, &act[0], "go", g->clip, at);
}

/* ---- float: template rnn_f32 ---- */

/* Where a float product's matrix is: read in place (mlbc_dots_f32), packed in panels
 * (mlbc_gemm_f32) or, for one row, in column blocks (mlbc_gemv_f32). */
typedef enum { IN_PLACE, PANELS, BLOCKS } MatLayout;

/* The float kernel of one direction, as its cell is being built. */
typedef struct F32 {
    const RnnGen *g;
    int vec;                        /* gates by vector array passes */
    int split;                      /* GRU without linear_before_reset: r2, rh, gq */
    MatLayout rlay;                 /* R's */
    int64_t B, H;
    const char *xp;                 /* row b's projected inputs at step t */
    const char *xin, *xin_rs;       /* LSTM and RNN without sequence_lens: the step's projected
                                     * inputs (all rows') and their row stride, the recurrent
                                     * product's c operand, so that g is the gates' sum; NULL
                                     * otherwise */
} F32;

/* The recurrent product's c operand, its columns from COL on (NULL: none). */
static const char *xin_operand(const F32 *f, const char *col)
{
    if (!f->xin)
        return NULL;
    return strf("%s%s%s", f->xin, col ? " + " : "", col ? col : "");
}

/* The products: Y[M][N] = A[M][k] M^T (+ c, contiguous rows CSM apart; NULL: none), Y's rows
 * LDY apart, M laid out as LAY says (BLOCKS: one row). */
static const char *product(MatLayout lay, const char *M, const char *N, int64_t k,
                           const char *a, const char *lda, const char *mat, const char *c,
                           const char *csm, const char *y, int64_t ldy)
{
    if (lay == BLOCKS)
        return strf("mlbc_gemv_f32(%s, %s, %s, %s, %s, %s, %s)", N, lit(k), a, mat,
                    c ? c : "0", c ? "1" : "0", y);
    const char *cargs = c ? strf("%s, %s, 1", c, csm) : "0, 0, 0";
    if (lay == PANELS)
        return strf("mlbc_gemm_f32(%s, %s, %s, %s, %s, %s, %s, 16, 1, %s, %s, %s)", M, N,
                    lit(k), a, lda, mat, lit(gemm_panel_stride(k)), cargs, y, lit(ldy));
    return strf("mlbc_dots_f32(%s, %s, %s, %s, %s, %s, %s, %s, %s)", M, N, lit(k), a, lda, mat,
                lit(k), cargs, y);
}

/* The recurrent product g = h R^T of a step, a statement. A packed R larger than
 * MLBC_SWEEP_BYTES goes in column blocks, forward on even steps and backward on odd ones: each
 * step starts on the blocks the last one read most recently, which are still in cache (the
 * same bits: every column is the same product). */
static const char *recurrent(const F32 *f, int64_t NR)
{
    int64_t H = f->H, panels = (NR + 15) / 16;
    int64_t size = f->rlay == BLOCKS ? gemv_size(H, NR) : panels * gemm_panel_stride(H);
    if (f->rlay == IN_PLACE || panels < MLBC_SWEEP_BLOCKS ||
        size * (int64_t)sizeof(float) <= MLBC_SWEEP_BYTES)
        return strf("%s;", product(f->rlay, lit(f->B), lit(NR), H, "h[0]", lit(H), "r",
                                   xin_operand(f, NULL), f->xin_rs, "g[0]", NR));
    int64_t per = (panels + MLBC_SWEEP_BLOCKS - 1) / MLBC_SWEEP_BLOCKS;
    if (f->rlay == BLOCKS)
        per = (per + 3) / 4 * 4;        /* whole blocks of mlbc_gemv_f32's layout */
    int64_t cols = 16 * per, nb = (NR + cols - 1) / cols;
    int64_t at = f->rlay == BLOCKS ? cols * H : per * gemm_panel_stride(H);
    const char *n = NR % cols ? strf("%s - p * %s < %s ? %s - p * %s : %s", lit(NR), lit(cols),
                                     lit(cols), lit(NR), lit(cols), lit(cols))
                              : lit(cols);
    const char *call = product(f->rlay, lit(f->B), n, H, "h[0]", lit(H),
                               strf("r + p * %s", lit(at)),
                               xin_operand(f, strf("p * %s", lit(cols))), f->xin_rs,
                               strf("g[0] + p * %s", lit(cols)), NR);
    return strf("for (long q = 0; q < %s; q++) {\n%s    const long p = s %% 2 ? %s - q : q;\n"
                "%s    %s;\n%s}", lit(nb), i8, lit(nb - 1), i8, call, i8);
}

/* The first step's recurrent product RECUR when the state starts at zero (no initial_h) and
 * R is constant and finite: each of its products is 0 * r = +-0, their sum from +0 is +0 on
 * every path, so g is 0.0f + c (c the xw operand, a -0 of which that sum makes +0; 0 without
 * one): the same bits without reading R. A GRU policy of one step without state (gru_seq,
 * seq 1) spent three quarters of its time on that product. */
static const char *skip_zero_state(const Emit *e, const F32 *f, int64_t NR, const char *recur)
{
    const Value *r = f->g->r;
    if (f->g->h0 || !value_in_code(e, r) || !value_all_finite(r))
        return recur;
    const char *c = xin_operand(f, NULL);
    const char *v = c ? strf("0.0f + (%s)[b * %s + j]", c, f->xin_rs) : "0";
    const char *body = deeper(recur);
    return strf("if (s == 0) {\n%s    %s\n%s        for (j = 0; j < %s; j++)\n"
                "%s            g[b][j] = %s;\n%s} else {\n%s%.*s\n%s}",
                i8, loop_head("", "b", f->B, 1), i8, lit(NR), i8, v, i8, i8,
                (int)strlen(body) - 1, body, i8);
}

/* RECUR skipped once every row is past its length: a constant sequence_lens gives the longest
 * at compile time, a run-time one is read by the prologue (after its range check) into
 * maxlen (appended to *PRO). A short constant length then costs its steps only (a seq-16
 * LSTM of length 4 had run 16 recurrent products). */
static const char *skip_past_len(const RnnGen *g, const char *recur, const char **pro)
{
    if (!g->lens)
        return recur;
    const char *longest = "maxlen";
    if (g->lens->data) {
        int64_t m = 0;
        for (int64_t b = 0; b < g->ri.batch; b++) {
            int64_t len = value_get_i(g->lens, b);
            m = len > m ? len : m;
        }
        longest = lit(m);
    } else {
        *pro = strf("%s    long maxlen = 0;\n    %s\n%sif (lens[b] > maxlen)\n%s    maxlen = "
                    "lens[b];\n", *pro, loop_head("", "b", g->ri.batch, 1), i8, i8);
    }
    const char *body = deeper(recur);
    return strf("if (s < %s)\n%s%.*s", longest, i8, (int)strlen(body) - 1, body);
}

/* The default activations (sigmoid gates, tanh candidate and output), without clip or
 * peepholes, run as array passes of the vector kernels (templates vmath_*) over the gates of
 * a row, between element loops; otherwise one loop per row computes everything. */
static int f32_vec(const RnnGen *g)
{
    int vec = g->clip <= 0 && !g->p && !g->input_forget &&
              !strcmp(g->act[0].name, g->ri.gates == 1 ? "tanh" : "sigmoid");
    for (int k = 1; k < g->ri.nact; k++)
        vec &= !strcmp(g->act[k].name, "tanh");
    return vec;
}

/* The loop over the rows of a step, up to the loop over units j (not for vec): a row within
 * its length steps in an if, in statements indented as deeper() puts them; end_rows() closes
 * them. */
static void rows(Buf *out, const F32 *f)
{
    buf_printf(out, "%s%s {\n", i8, loop_head("", "b", f->B, 1));
    buf_printf(out, "%sconst long len = %s;\n", i12, f->g->len);
    if (!f->xin || f->g->ystore.p)  /* t: the step's time, for xp and Y */
        buf_printf(out, "%sconst long t = %s;\n", i12, f->g->reverse ? "len - 1 - s" : "s");
    buf_printf(out, "%sif (s < len) {\n", i12);
    if (!f->xin)
        buf_printf(out, "%sconst float *xp = %s;\n", i16, f->xp);
    if (!f->vec)
        buf_printf(out, "%sfor (j = 0; j < %s; j++) {\n", i16, lit(f->H));
}

/* The end of the loop rows() opens, after a row's step: ELSE (past_len()) for a row past its
 * length. */
static void end_rows(Buf *out, const char *els)
{
    buf_printf(out, "%s%s}\n%s}\n", els, i12, i8);
}

/* Gate V (k-th block of units) = projected input + recurrent product. */
static void gate(Buf *body, const F32 *f, const char *v, int k)
{
    const char *j = k ? strf("%s + j", lit(k * f->H)) : "j";
    if (f->xin)
        buf_printf(body, "%sfloat %s = g[b][%s];\n", i16, v, j);
    else
        buf_printf(body, "%sfloat %s = xp[%s] + g[b][%s];\n", i16, v, j, j);
}

/* "for (j = 0; j < count; j++) S" (vector path). */
static void loop(Buf *out, int64_t count, const char *s)
{
    buf_printf(out, "%sfor (j = 0; j < %s; j++)\n%s%s", i12, lit(count), i16, s);
}

/* The vector sigmoid or tanh of COUNT values at V, in place. */
static void vact(Buf *out, const char *v, int64_t count, int th)
{
    buf_printf(out, "%smlbc_v%s_f32(%s, %s, %s);\n", i12, th ? "tanh" : "sigmoid", lit(count), v,
               v);
}

/* The last loop over units of the vector path, open: the new state h = V. */
static void new_state(Buf *out, int64_t H, const char *v)
{
    buf_printf(out, "%sfor (j = 0; j < %s; j++) {\n%sh[b][j] = %s;\n", i12, lit(H), i16, v);
}

/* GRU without linear_before_reset: the pass over the rows that computes z and rh = r h (rows
 * past their length keep a stale one, unused) ends with BODY; then the product
 * gq = rh R_h^T. The cell's last pass computes the candidate. */
static void gru_first_pass(Buf *cell, const F32 *f, const char *body)
{
    rows(cell, f);
    buf_puts(cell, deeper(f->vec ? body : strf("%s%s}\n", body, i12)));
    end_rows(cell, "");
    buf_printf(cell, "%s%s;\n", i8, product(f->rlay, lit(f->B), lit(f->H), f->H, "rh[0]",
                                            lit(f->H), "r2", NULL, NULL, "gq[0]", f->H));
}

/* The vector path's step of row b (gate sums in place in g, or gq, activated there); a
 * GRU's first pass goes to CELL. Returns whether BODY ends inside a loop over units j (for
 * Y's stores; the LSTM opens one only for them). */
static int f32_vec_body(Buf *cell, Buf *body, const F32 *f)
{
    int G = f->g->ri.gates;
    int64_t H = f->H;
    if (!f->xin)
        loop(body, G == 3 ? 2 * H : G * H, "g[b][j] += xp[j];\n");
    if (G == 4) {
        vact(body, "g[b]", 3 * H, 0);
        vact(body, strf("g[b] + %s", lit(3 * H)), H, 1);
        buf_printf(body, "%smlbc_lstm_state_f32(%s, g[b], c[b], h[b]);\n", i12, lit(H));
        if (!f->g->ystore.p)
            return 0;
        buf_printf(body, "%sfor (j = 0; j < %s; j++) {\n", i12, lit(H));
    } else if (f->g->lbr) {
        vact(body, "g[b]", 2 * H, 0);
        loop(body, H, strf("g[b][%s + j] = %s;\n", lit(2 * H),
                           madd(DT_FLOAT, strf("g[b][%s + j]", lit(H)),
                                strf("(g[b][%s + j] + rbh[j])", lit(2 * H)),
                                strf("xp[%s + j]", lit(2 * H)))));
        vact(body, strf("g[b] + %s", lit(2 * H)), H, 1);
        new_state(body, H, sum2(DT_FLOAT, "(1 - g[b][j])", strf("g[b][%s + j]", lit(2 * H)),
                                "g[b][j]", "h[b][j]"));
    } else if (f->split) {
        vact(body, "g[b]", 2 * H, 0);
        loop(body, H, strf("rh[b][j] = g[b][%s + j] * h[b][j];\n", lit(H)));
        gru_first_pass(cell, f, body->p);
        *body = (Buf){0};
        loop(body, H, strf("gq[b][j] += xp[%s + j];\n", lit(2 * H)));
        vact(body, "gq[b]", H, 1);
        new_state(body, H, sum2(DT_FLOAT, "(1 - g[b][j])", "gq[b][j]", "g[b][j]", "h[b][j]"));
    } else {
        vact(body, "g[b]", H, 1);
        new_state(body, H, "g[b][j]");
    }
    return 1;
}

/* The element path's update of unit j of row b; a GRU's first pass goes to CELL. */
static void f32_loop_body(Buf *cell, Buf *body, const F32 *f)
{
    const RnnGen *g = f->g;
    const Act *act = g->act;
    int G = g->ri.gates;
    int64_t H = f->H;
    double clip = g->clip;
    if (G == 4) {
        gate(body, f, "gi", 0);
        gate(body, f, "go", 1);
        gate(body, f, "gf", 2);
        gate(body, f, "gc", 3);
        buf_printf(body, "%sconst float cp = c[b][j];\n%sfloat cn;\n", i16, i16);
        lstm_update(body, g, DT_FLOAT);
        buf_printf(body, "%sc[b][j] = cn;\n", i16);
        buf_printf(body, "%sh[b][j] = go * (%s);\n", i16, act_expr(&act[2], "cn", DT_FLOAT));
        return;
    }
    if (G == 1) {
        gate(body, f, "gv", 0);
        apply(body, i16, &act[0], "gv", clip, DT_FLOAT);
        buf_printf(body, "%sh[b][j] = gv;\n", i16);
        return;
    }
    gate(body, f, "gz", 0);
    gate(body, f, "gr", 1);
    if (g->lbr)
        buf_printf(body, "%sfloat gh;\n", i16);
    apply(body, i16, &act[0], "gz", clip, DT_FLOAT);
    apply(body, i16, &act[0], "gr", clip, DT_FLOAT);
    const char *z = "gz";
    if (g->lbr) {
        buf_printf(body, "%sgh = %s;\n", i16,
                   madd(DT_FLOAT, "gr", strf("(g[b][%s + j] + rbh[j])", lit(2 * H)),
                        strf("xp[%s + j]", lit(2 * H))));
    } else {
        buf_printf(body, "%sz[b][j] = gz;\n%srh[b][j] = gr * h[b][j];\n", i16, i16);
        gru_first_pass(cell, f, body->p);
        *body = (Buf){0};
        buf_printf(body, "%sfloat gh = xp[%s + j] + gq[b][j];\n", i16, lit(2 * H));
        z = "z[b][j]";
    }
    apply(body, i16, &act[1], "gh", clip, DT_FLOAT);
    buf_printf(body, "%sh[b][j] = %s;\n", i16,
               sum2(DT_FLOAT, strf("(1 - %s)", z), "gh", z, "h[b][j]"));
}

/* The update of every row of a step, after the recurrent product. */
static const char *f32_cell(const F32 *f)
{
    Buf cell = {0}, body = {0};
    int open = 1;           /* the body ends inside the loop over units */
    if (f->vec)
        open = f32_vec_body(&cell, &body, f);
    else
        f32_loop_body(&cell, &body, f);
    rows(&cell, f);
    if (open)
        buf_puts(&cell, deeper(strf("%s%s%s}\n", body.p, f->g->ystore.p ? f->g->ystore.p : "",
                                    i12)));
    else
        buf_puts(&cell, deeper(body.p));
    end_rows(&cell, past_len(f->g));
    return cell.p;
}

/* The kernel's arrays beyond xw, g and h, and their initial values. */
static void f32_state(const F32 *f, const char **state, const char **init)
{
    const RnnGen *g = f->g;
    int G = g->ri.gates;
    const char *B = lit(f->B), *H = lit(f->H);
    Buf s = {0}, in = {0};
    if (G == 4)
        buf_printf(&s, ", c[%s][%s]", B, H);
    if (f->split)  /* z: the update gate (the vector path keeps it in g) */
        buf_printf(&s, "%s, rh[%s][%s], gq[%s][%s]", f->vec ? "" : strf(", z[%s][%s]", B, H),
                   B, H, B, H);
    if (g->bias)
        buf_printf(&s, ", bias[%s]", lit(G * f->H));
    if (g->lbr)
        buf_printf(&s, ", rbh[%s]", H);
    buf_printf(&in, "%sh[b][j] = %s;\n", i12, g->h0e);
    if (G == 4)
        buf_printf(&in, "%sc[b][j] = %s;\n", i12, g->c0e);
    if (f->split)
        buf_printf(&in, "%srh[b][j] = 0;\n", i12);
    *state = s.p ? s.p : "";
    *init = in.p;
}

/* The input projection of steps [lo, hi), TC at most, with xw (sets f->xp). Without sequence
 * lengths all rows project the same steps; in layout 0 the rows (t, b) of X are then
 * contiguous, and one product projects the whole batch: xw[t - lo][b][n] (base[0] = lo).
 * Else one product per row: xw[b][t - base[b]][n]. */
static const char *f32_project(F32 *f, int fold, int64_t TC)
{
    const RnnGen *g = f->g;
    int64_t S = g->ri.seq, B = f->B, I = g->ri.in, N = g->ri.gates * f->H;
    MatLayout wlay = !g->w->data ? IN_PLACE : w_in_blocks(&g->ri) ? BLOCKS : PANELS;
    const char *bias = g->bias ? "bias" : NULL;
    /* without sequence lengths every row is at the same step t, and base[b] = base[0] */
    const char *t = g->reverse ? strf("%s - s", lit(S - 1)) : "s";
    if ((g->ri.gates == 4 || g->ri.gates == 1) && !g->lens) {
        f->xin = strf("xw + (%s - base[0]) * %s", t, lit(fold ? B * N : N));
        f->xin_rs = lit(fold ? N : TC * N);
    }
    if (fold) {
        f->xp = strf("xw + ((t - base[0]) * %s + b) * %s", lit(B), lit(N));
        return product(wlay, strf("(hi - lo) * %s", lit(B)), lit(N), I,
                       strf("x + lo * %s", lit(B * I)), lit(I), "w", bias, "0", "xw", N);
    }
    const char *xlo = strf("x + %s", g->ri.layout ? strf("(b * %s + lo) * %s", lit(S), lit(I))
                                                  : strf("(lo * %s + b) * %s", lit(B), lit(I)));
    f->xp = strf("xw + (b * %s + t - base[b]) * %s", lit(TC), lit(N));
    return product(wlay, "hi - lo", lit(N), I, xlo, lit(g->ri.layout ? I : B * I), "w", bias,
                   "0", strf("xw + b * %s", lit(TC * N)), N);
}

/* The float kernel of the direction (template rnn_f32). */
static const char *emit_f32(Emit *e, Node *n, const RnnGen *g)
{
    const RnnInfo *ri = &g->ri;
    int G = ri->gates;
    F32 f = {.g = g, .vec = f32_vec(g), .split = G == 3 && !g->lbr,
             .rlay = !g->r->data ? IN_PLACE : r_in_blocks(ri) ? BLOCKS : PANELS,
             .B = ri->batch, .H = ri->hid};
    int64_t S = ri->seq, B = f.B, H = f.H, N = G * H, NR = f.split ? 2 * H : N;
    /* Steps projected at once: all of them, or as many as keep xw within 64 KiB. */
    int64_t TC = 16384 / (B * N);
    TC = TC < 1 ? 1 : TC > S ? S : TC;
    int fold = !input(n, IN_LENS) && !ri->layout && B > 1;
    const char *project = f32_project(&f, fold, TC), *state, *init;
    const char *pro = g->pro.p ? g->pro.p : "";
    const char *recur = skip_zero_state(e, &f, NR, skip_past_len(g, recurrent(&f, NR), &pro));
    f32_state(&f, &state, &init);
    Buf doc = {0};
    buf_printf(&doc, "%s float, direction %d (%s): seq %lld, batch %lld, input %lld, hidden "
               "%lld, layout %d; inputs projected %lld step(s) at a time", n->op, g->d + 1,
               g->reverse ? "reverse" : "forward", (long long)S, (long long)B,
               (long long)ri->in, (long long)H, ri->layout, (long long)TC);
    doc_options(&doc, g);
    buf_printf(&doc, "; W %s, R %s", g->w->data ? "packed" : "read in place",
               f.rlay == IN_PLACE ? "read in place" : "packed");
    /* paths whatever its size (work MLBC_PATHS_MIN): the cell's loops as wide at plain -O2 as
     * with -march=native (a reverse step of 128 units, g43_035: 3% faster at gcc -O2) */
    return kernel_paths(e, n, MLBC_PATHS_MIN, "rnn_f32", "DOC", doc.p, "PARAMS", g->params.p,
        "XW", lit(TC * B * N), "BATCH", lit(B), "PROWS", lit(fold ? 1 : B), "NR", lit(NR),
        "H", lit(H), "STATE", state,
        "PROLOGUE", pro, "INIT", init, "SEQ", lit(S), "TC", lit(TC),
        "FOR_B", loop_head("", "b", B, 1), "FOR_PB", loop_head("", "b", fold ? 1 : B, 1),
        "FOR_S", loop_head("", "s", S, 1),
        "LEN", g->len,
        "LO", g->reverse ? strf("len - s - %s > 0 ? len - s - %s : 0", lit(TC), lit(TC)) : "s",
        "HI", g->reverse ? "len - s" : strf("s + %s < len ? s + %s : len", lit(TC), lit(TC)),
        "PROJECT", project, "RECUR", recur, "CELL", f32_cell(&f),
        "EPILOGUE", g->epi.p ? g->epi.p : "", NULL);
}

/* ---- double and 16-bit floats: templates rnn_lstm, rnn_gru, rnn_rnn ---- */

/* The GRU fragments: ZR after the z and r gates, GH the candidate's sum, HGATE its
 * activation, DECL the arrays linear_before_reset adds ("" for LSTM and RNN). */
typedef struct GruFrag {
    const char *zr, *gh, *hgate, *decl;
} GruFrag;

static GruFrag gru_fragments(const RnnGen *g, const char *dot)
{
    int64_t H = g->ri.hid, I = g->ri.in;
    DType at = g->at;
    Buf zr = {0}, hgate = {0};
    const char *gh, *decl = "";
    apply(&zr, i16, &g->act[0], "gz", g->clip, at);
    apply(&zr, i16, &g->act[0], "gr", g->clip, at);
    buf_printf(&zr, "%sz[j] = gz;\n", i16);
    const char *xdot = strf("bias[%s + j] + %s(w + (%s + j) * %s, xv, %s)", lit(2 * H), dot,
                            lit(2 * H), lit(I), lit(I));
    if (g->lbr) {
        decl = strf(", rbh[%s], rr[%s]", lit(H), lit(H));
        buf_printf(&zr, "%srr[j] = gr;\n", i16);
        buf_printf(&zr, "%srh[j] = %s(r + (%s + j) * %s, h[b], %s) + rbh[j];\n", i16, dot,
                   lit(2 * H), lit(H), lit(H));
        gh = madd(at, "rr[j]", "rh[j]", xdot);
    } else {
        buf_printf(&zr, "%srh[j] = gr * h[b][j];\n", i16);
        gh = strf("%s + %s(r + (%s + j) * %s, rh, %s)", xdot, dot, lit(2 * H), lit(H), lit(H));
    }
    apply(&hgate, i16, &g->act[1], "gh", g->clip, at);
    return (GruFrag){zr.p, gh, hgate.p, decl};
}

/* The kernel of the direction for double and the 16-bit floats. */
static const char *emit_cell(Emit *e, Node *n, const RnnGen *g)
{
    const RnnInfo *ri = &g->ri;
    int G = ri->gates;
    DType t = g->t, at = g->at;
    int64_t S = ri->seq, B = ri->batch, H = ri->hid, I = ri->in;
    const char *dot = t == DT_FLOAT16 ? "mlbc_dot_h" : "mlbc_dot_d";
    const char *xrow = ri->layout ? strf("(b * %s + t) * %s", lit(S), lit(I))
                                  : strf("(t * %s + b) * %s", lit(B), lit(I));
    GruFrag gru = {"", "", "", ""};
    Buf gates = {0}, doc = {0};
    if (G == 4) {
        lstm_update(&gates, g, at);
        buf_printf(&gates, "%shn[j] = go * (%s);\n", i16, act_expr(&g->act[2], "cn", at));
    } else if (G == 3) {
        gru = gru_fragments(g, dot);
    } else {
        apply(&gates, i16, &g->act[0], "g", g->clip, at);
        buf_printf(&gates, "%shn[j] = g;\n", i16);
    }
    buf_printf(&doc, "%s %s, direction %d of %d (%s): seq %lld, batch %lld, input %lld, "
               "hidden %lld, layout %d", n->op, dtype_name(t), g->d + 1, ri->dirs,
               g->reverse ? "reverse" : "forward", (long long)S, (long long)B, (long long)I,
               (long long)H, ri->layout);
    doc_options(&doc, g);
    if (g->lens)
        buf_puts(&doc, "; sequence_lens");
    return kernel(e, n, G == 4 ? "rnn_lstm" : G == 3 ? "rnn_gru" : "rnn_rnn", "DOC", doc.p,
        "PARAMS", g->params.p, "T", g->T, "A", dtype_ctype(at), "BATCH", lit(B), "H", lit(H),
        "I", lit(I), "SEQ", lit(S), "FOR_B", loop_head("", "b", B, 1),
        "FOR_S", loop_head("", "s", S, 1), "DOT", dot, "PROLOGUE", g->pro.p ? g->pro.p : "",
        "EPILOGUE", g->epi.p ? g->epi.p : "", "H0", g->h0e, "C0", g->c0e, "LEN", g->len,
        "TIME", g->reverse ? "len - 1 - s" : "s", "XLOAD", load_elem(t, strf("x[%s + i]", xrow)),
        "ELSE", past_len(g), "YSTORE", deeper(g->ystore.p ? g->ystore.p : ""),
        "GATES", deeper(gates.p ? gates.p : ""), "ZR", deeper(gru.zr), "HGATE", deeper(gru.hgate),
        "GH", gru.gh, "DECL", gru.decl,
        "BLEND", sum2(at, "(1 - z[j])", "gh", "z[j]", "h[b][j]"), NULL);
}

static void rnn_emit(Emit *e, Node *n)
{
    RnnGen g;
    rnn_gen(n, &g);
    for (int d = 0; d < g.ri.dirs; d++) {
        rnn_direction(n, &g, d);
        rnn_weights(e, n, &g);
        rnn_bias(e, &g);
        rnn_inputs(e, &g);
        rnn_outputs(e, &g);
        const char *fn = g.t == DT_FLOAT ? emit_f32(e, n, &g) : emit_cell(e, n, &g);
        if (g.runtime_lens)
            check(e, strf("%s(%s) == 0", fn, g.call.p),
                  strf("%s: sequence_lens out of range", n->op));
        else
            stmt(e, "%s(%s);", fn, g.call.p);
    }
}

static double rnn_flops(Node *n)
{
    RnnInfo ri;
    rnn_info(n, &ri);
    return 2.0 * (double)ri.seq * (double)ri.batch * ri.dirs * ri.gates * (double)ri.hid *
           (double)(ri.in + ri.hid);
}

const OpDef ops_rnn[] = {
    {"LSTM", rnn_infer, NULL, rnn_emit, rnn_flops, OP_OPTIONAL_OUT0},
    {"GRU", rnn_infer, NULL, rnn_emit, rnn_flops, OP_OPTIONAL_OUT0},
    {"RNN", rnn_infer, NULL, rnn_emit, rnn_flops, OP_OPTIONAL_OUT0},
    {0},
};
