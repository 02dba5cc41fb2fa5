/* op_rnn.c - LSTM, GRU, RNN.
 *
 * Float (template rnn_f32, one kernel per direction): the input projections of all steps
 * (or of blocks of steps, keeping the buffer within 64 KiB of stack) and batch rows at once,
 * then per step the recurrent product of the whole batch, both by the fused multiply-add
 * matrix kernel (mlbc_gemm_f32 over W and R packed at compile time; mlbc_dots_f32 reading
 * run-time W and R in place), then the gates and the cell update of each row: with the
 * default activations by array passes of the vector sigmoid/tanh (templates vmath_*),
 * otherwise in one loop. Biases of W (and of R where the cell adds it outside a gate product)
 * are the projection's c operand.
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

/* An output that is present and used (an unused one has no buffer). */
static Value *live_out(Node *n, int i)
{
    Value *v = i < n->nout ? n->out[i] : NULL;
    return v && (v->nuse > 0 || v->result_index >= 0) ? v : NULL;
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
 * products: a constant is packed at compile time as B = rows^T in panels of 16 columns for
 * mlbc_gemm_f32 (pk[p][k][l] = M[r0 + 16 p + l][k], zero past the last row and past k, the
 * panels gemm_panel_stride(k) apart); a run-time
 * input is read in place by mlbc_dots_f32 (its rows are contiguous along k). */
static const char *pack_or_ref(Emit *e, Node *n, const Value *m, int d, int64_t r0, int64_t rows,
                               int64_t k)
{
    int64_t off = (d * numel(m) / m->dim[0]) + r0 * k;
    if (!m->data)
        return at_off(ref(e, m), off);
    int64_t np = (rows + 15) / 16, ps = gemm_panel_stride(k), count = np * ps, i = 0;
    Buf data = {0};
    for (int64_t p = 0; p < np; p++)
        for (int64_t kk = 0; kk < ps / 16; kk++)
            for (int64_t l = 0; l < 16; l++, i++) {
                int64_t row = p * 16 + l;
                buf_puts(&data, i % 16 ? " " : "\n    ");
                double v = row < rows && kk < k ? value_get_f(m, off + row * k + kk) : 0;
                buf_float_lit(&data, v, DT_FLOAT);
                if (i + 1 < count)
                    buf_puts(&data, ",");
            }
    return kernel(e, n, "linalg_weights",
                  "DOC", strf("%s: '%s' direction %d, rows [%lld, %lld) transposed, in column "
                              "panels of 16", n->op, m->name, d, (long long)r0,
                              (long long)(r0 + rows)),
                  "T", "float", "LEN", lit(count), "DATA", data.p, NULL);
}

/* The float cell (template rnn_f32) of direction d: the fragments shared with the other
 * types come from rnn_emit (params, prologue, epilogue, Y stores, initial state, length). */
static const char *emit_f32(Emit *e, Node *n, const RnnInfo *ri, int d, int reverse,
                            const Act *act, double clip, const char *params, const char *pro,
                            const char *epi, const char *yzero, const char *ystore,
                            const char *h0e, const char *c0e, const char *len, int has_bias,
                            int peep)
{
    int G = ri->gates;
    int64_t S = ri->seq, B = ri->batch, H = ri->hid, I = ri->in, N = G * H;
    int lbr = G == 3 && attr_int(n, "linear_before_reset", 0), split = G == 3 && !lbr;
    int input_forget = G == 4 && attr_int(n, "input_forget", 0);
    int wpk = n->in[IN_W]->data != NULL, rpk = n->in[IN_R]->data != NULL;
    int64_t NR = split ? 2 * H : N;
    /* Steps projected at once: all of them, or as many as keep xw within 64 KiB. */
    int64_t TC = 16384 / (B * N);
    TC = TC < 1 ? 1 : TC > S ? S : TC;
    const char *i8 = "        ", *i12 = "            ", *i16 = "                ";
    Buf state = {0}, init = {0}, cell = {0}, body = {0};
    /* The default activations (sigmoid gates, tanh candidate and output), without clip or
     * peepholes: by array passes of the vector kernels (templates vmath_*) over the gates of a
     * row, between element loops. Otherwise one loop per row computes everything. */
    int vec = clip <= 0 && !peep && !input_forget && !strcmp(act[0].name, G == 1 ? "tanh" : "sigmoid");
    for (int k = 1; k < ri->nact; k++)
        vec &= !strcmp(act[k].name, "tanh");

    /* The products: Y[M][cols] = A[M][k] M^T (+ c), M packed (gemm) or read in place (dots). */
#define PRODUCT(packed, M, cols, k, a, lda, mat, c, y)                                             \
    ((packed) ? strf("mlbc_gemm_f32(%s, %s, %s, %s, %s, %s, %s, 16, 1, %s, %s, %s)", M, lit(cols), \
                     lit(k), a, lda, mat, lit(gemm_panel_stride(k)), c, y, lit(cols))              \
              : strf("mlbc_dots_f32(%s, %s, %s, %s, %s, %s, %s, %s, %s)", M, lit(cols), lit(k),    \
                     a, lda, mat, lit(k), c, y))
    /* Without sequence lengths all rows project the same steps; in layout 0 the rows (t, b)
     * of X are then contiguous, and one product projects the whole batch: xw[t - lo][b][n]
     * (base[0] = lo). Else one product per row: xw[b][t - base[b]][n]. */
    int fold = !input(n, IN_LENS) && !ri->layout && B > 1;
    const char *project, *xp, *bias_arg = has_bias ? "bias, 0, 1" : "0, 0, 0";
    if (fold) {
        project = PRODUCT(wpk, strf("(hi - lo) * %s", lit(B)), N, I,
                          strf("x + lo * %s", lit(B * I)), lit(I), "w", bias_arg, "xw");
        xp = strf("xw + ((t - base[0]) * %s + b) * %s", lit(B), lit(N));
    } else {
        const char *xlo = strf("x + %s", ri->layout ? strf("(b * %s + lo) * %s", lit(S), lit(I))
                                                  : strf("(lo * %s + b) * %s", lit(B), lit(I)));
        project = PRODUCT(wpk, "hi - lo", N, I, xlo, lit(ri->layout ? I : B * I), "w", bias_arg,
                          strf("xw + b * %s", lit(TC * N)));
        xp = strf("xw + (b * %s + t - base[b]) * %s", lit(TC), lit(N));
    }
    const char *recur = PRODUCT(rpk, lit(B), NR, H, "h[0]", lit(H), "r", "0, 0, 0", "g[0]");

    if (G == 4)
        buf_printf(&state, ", c[%s][%s]%s", lit(B), lit(H), vec ? strf(", ct[%s]", lit(H)) : "");
    if (split)  /* z: the update gate (the vector path keeps it in g) */
        buf_printf(&state, "%s, rh[%s][%s], gq[%s][%s]",
                   vec ? "" : strf(", z[%s][%s]", lit(B), lit(H)), lit(B), lit(H), lit(B), lit(H));
    if (has_bias)
        buf_printf(&state, ", bias[%s]", lit(N));
    if (lbr)
        buf_printf(&state, ", rbh[%s]", lit(H));
    buf_printf(&init, "%sh[b][j] = %s;\n", i12, h0e);
    if (G == 4)
        buf_printf(&init, "%sc[b][j] = %s;\n", i12, c0e);
    if (split)
        buf_printf(&init, "%srh[b][j] = 0;\n", i12);

    /* The loop over rows of a step, around BODY (the unit j's update). */
#define ROWS(out, zero)                                                                            \
    do {                                                                                           \
        buf_printf(out, "%sfor (b = 0; b < %s; b++) {\n", i8, lit(B));                             \
        buf_printf(out, "%sconst long len = %s;\n%sconst long t = %s;\n%sconst float *xp;\n",      \
                   i12, len, i12, reverse ? "len - 1 - s" : "s", i12);                             \
        buf_printf(out, "%sif (s >= len) {\n%s%scontinue;\n%s}\n", i12, zero, i16, i12);           \
        buf_printf(out, "%sxp = %s;\n", i12, xp);                                                 \
        if (!vec)                                                                                  \
            buf_printf(out, "%sfor (j = 0; j < %s; j++) {\n", i12, lit(H));                        \
    } while (0)
#define GATE(v, k) buf_printf(&body, "%sfloat %s = xp[%s] + g[b][%s];\n", i16, v,                  \
                              k ? strf("%s + j", lit(k * H)) : "j", k ? strf("%s + j", lit(k * H)) : "j")
#define LOOP(out, count, ...) (buf_printf(out, "%sfor (j = 0; j < %s; j++)\n%s", i12, lit(count), i16), \
                               buf_printf(out, __VA_ARGS__))
#define ACT(out, v, count, th) buf_printf(out, "%smlbc_v%s_f32(%s, %s, %s);\n", i12, \
                                      th ? "tanh" : "sigmoid", lit(count), v, v)
    if (vec) {
        /* Gate sums in place in g (or gq), activated there. */
        int64_t nsum = split ? 2 * H : G == 3 ? 2 * H : N;
        Buf pre = {0};
        LOOP(&pre, nsum, "g[b][j] += xp[j];\n");
        if (G == 4) {
            buf_puts(&body, pre.p);
            ACT(&body, "g[b]", 3 * H, 0);
            ACT(&body, strf("g[b] + %s", lit(3 * H)), H, 1);
            LOOP(&body, H, "c[b][j] = ct[j] = %s;\n", sum2(DT_FLOAT, strf("g[b][%s + j]", lit(2 * H)),
                 "c[b][j]", "g[b][j]", strf("g[b][%s + j]", lit(3 * H))));
            ACT(&body, "ct", H, 1);
            buf_printf(&body, "%sfor (j = 0; j < %s; j++) {\n%sh[b][j] = g[b][%s + j] * ct[j];\n",
                       i12, lit(H), i16, lit(H));
        } else if (lbr) {
            buf_puts(&body, pre.p);
            ACT(&body, "g[b]", 2 * H, 0);
            LOOP(&body, H, "g[b][%s + j] = %s;\n", lit(2 * H),
                 madd(DT_FLOAT, strf("g[b][%s + j]", lit(H)), strf("(g[b][%s + j] + rbh[j])", lit(2 * H)),
                      strf("xp[%s + j]", lit(2 * H))));
            ACT(&body, strf("g[b] + %s", lit(2 * H)), H, 1);
            buf_printf(&body, "%sfor (j = 0; j < %s; j++) {\n%sh[b][j] = %s;\n", i12, lit(H), i16,
                       sum2(DT_FLOAT, "(1 - g[b][j])", strf("g[b][%s + j]", lit(2 * H)), "g[b][j]",
                            "h[b][j]"));
        } else if (split) {
            buf_puts(&body, pre.p);
            ACT(&body, "g[b]", 2 * H, 0);
            LOOP(&body, H, "rh[b][j] = g[b][%s + j] * h[b][j];\n", lit(H));
            ROWS(&cell, "");
            buf_printf(&cell, "%s%s}\n", body.p, i8);
            buf_printf(&cell, "%s%s;\n", i8,
                       PRODUCT(rpk, lit(B), H, H, "rh[0]", lit(H), "r2", "0, 0, 0", "gq[0]"));
            body = (Buf){0};
            LOOP(&body, H, "gq[b][j] += xp[%s + j];\n", lit(2 * H));
            ACT(&body, "gq[b]", H, 1);
            buf_printf(&body, "%sfor (j = 0; j < %s; j++) {\n%sh[b][j] = %s;\n", i12, lit(H), i16,
                       sum2(DT_FLOAT, "(1 - g[b][j])", "gq[b][j]", "g[b][j]", "h[b][j]"));
        } else {
            LOOP(&body, H, "g[b][j] += xp[j];\n");
            ACT(&body, "g[b]", H, 1);
            buf_printf(&body, "%sfor (j = 0; j < %s; j++) {\n%sh[b][j] = g[b][j];\n", i12, lit(H), i16);
        }
    } else if (G == 4) {
        GATE("gi", 0);
        GATE("go", 1);
        GATE("gf", 2);
        GATE("gc", 3);
        buf_printf(&body, "%sconst float cp = c[b][j];\n%sfloat cn;\n", i16, i16);
        if (peep)
            buf_printf(&body, "%sgi = %s;\n", i16, madd(DT_FLOAT, "p[j]", "cp", "gi"));
        apply(&body, i16, &act[0], "gi", clip, DT_FLOAT);
        if (input_forget) {
            buf_printf(&body, "%sgf = 1 - gi;\n", i16);
        } else {
            if (peep)
                buf_printf(&body, "%sgf = %s;\n", i16,
                           madd(DT_FLOAT, strf("p[%s + j]", lit(2 * H)), "cp", "gf"));
            apply(&body, i16, &act[0], "gf", clip, DT_FLOAT);
        }
        apply(&body, i16, &act[1], "gc", clip, DT_FLOAT);
        buf_printf(&body, "%scn = %s;\n", i16, sum2(DT_FLOAT, "gf", "cp", "gi", "gc"));
        if (peep)
            buf_printf(&body, "%sgo = %s;\n", i16,
                       madd(DT_FLOAT, strf("p[%s + j]", lit(H)), "cn", "go"));
        apply(&body, i16, &act[0], "go", clip, DT_FLOAT);
        buf_printf(&body, "%sc[b][j] = cn;\n", i16);
        buf_printf(&body, "%sh[b][j] = go * (%s);\n", i16, act_expr(&act[2], "cn", DT_FLOAT));
    } else if (G == 3 && lbr) {
        GATE("gz", 0);
        GATE("gr", 1);
        buf_printf(&body, "%sfloat gh;\n", i16);
        apply(&body, i16, &act[0], "gz", clip, DT_FLOAT);
        apply(&body, i16, &act[0], "gr", clip, DT_FLOAT);
        buf_printf(&body, "%sgh = %s;\n", i16,
                   madd(DT_FLOAT, "gr", strf("(g[b][%s + j] + rbh[j])", lit(2 * H)),
                        strf("xp[%s + j]", lit(2 * H))));
        apply(&body, i16, &act[1], "gh", clip, DT_FLOAT);
        buf_printf(&body, "%sh[b][j] = %s;\n", i16, sum2(DT_FLOAT, "(1 - gz)", "gh", "gz", "h[b][j]"));
    } else if (G == 3) {
        /* First the z and r gates and the reset state rh = r h (rows past their length keep
         * a stale one, unused), then its product gq = rh R_h^T, then the candidate. */
        GATE("gz", 0);
        GATE("gr", 1);
        apply(&body, i16, &act[0], "gz", clip, DT_FLOAT);
        apply(&body, i16, &act[0], "gr", clip, DT_FLOAT);
        buf_printf(&body, "%sz[b][j] = gz;\n%srh[b][j] = gr * h[b][j];\n", i16, i16);
        ROWS(&cell, "");
        buf_printf(&cell, "%s%s}\n%s}\n", body.p, i12, i8);
        buf_printf(&cell, "%s%s;\n", i8,
                   PRODUCT(rpk, lit(B), H, H, "rh[0]", lit(H), "r2", "0, 0, 0", "gq[0]"));
        body = (Buf){0};
        buf_printf(&body, "%sfloat gh = xp[%s + j] + gq[b][j];\n", i16, lit(2 * H));
        apply(&body, i16, &act[1], "gh", clip, DT_FLOAT);
        buf_printf(&body, "%sh[b][j] = %s;\n", i16,
                   sum2(DT_FLOAT, "(1 - z[b][j])", "gh", "z[b][j]", "h[b][j]"));
    } else {
        GATE("gv", 0);
        apply(&body, i16, &act[0], "gv", clip, DT_FLOAT);
        buf_printf(&body, "%sh[b][j] = gv;\n", i16);
    }
    ROWS(&cell, yzero ? yzero : "");
    buf_printf(&cell, "%s%s%s}\n%s}\n", body.p, ystore ? ystore : "", i12, i8);
#undef GATE
#undef ROWS
#undef LOOP
#undef ACT

    Buf doc = {0};
    buf_printf(&doc, "%s float, direction %d (%s): seq %lld, batch %lld, input %lld, hidden %lld, "
               "layout %d; inputs projected %lld step(s) at a time", n->op, d + 1,
               reverse ? "reverse" : "forward", (long long)S, (long long)B, (long long)I,
               (long long)H, ri->layout, (long long)TC);
    for (int k = 0; k < ri->nact; k++)
        buf_printf(&doc, "%s%s", k ? ", " : "; activations ", act[k].name);
    if (clip > 0)
        buf_printf(&doc, "; clip %g", clip);
    if (peep)
        buf_puts(&doc, "; peepholes");
    if (lbr)
        buf_puts(&doc, "; linear before reset");
    buf_printf(&doc, "; W %s, R %s", wpk ? "packed" : "read in place", rpk ? "packed" : "read in place");
    return kernel(e, n, "rnn_f32", "DOC", doc.p, "PARAMS", params, "XW", lit(TC * B * N),
        "BATCH", lit(B), "PROWS", lit(fold ? 1 : B), "NR", lit(NR), "H", lit(H), "STATE", state.p ? state.p : "",
        "PROLOGUE", pro ? pro : "", "INIT", init.p, "SEQ", lit(S), "TC", lit(TC), "LEN", len,
        "LO", reverse ? strf("len - s - %s > 0 ? len - s - %s : 0", lit(TC), lit(TC)) : "s",
        "HI", reverse ? "len - s" : strf("s + %s < len ? s + %s : len", lit(TC), lit(TC)),
        "PROJECT", project, "RECUR", recur, "CELL", cell.p, "EPILOGUE", epi ? epi : "", NULL);
#undef PRODUCT
}

static void rnn_emit(Emit *e, Node *n)
{
    RnnInfo ri;
    rnn_info(n, &ri);
    int G = ri.gates;
    DType t = n->in[IN_X]->dt, at = calc_type(t);
    const char *T = dtype_ctype(t), *A = dtype_ctype(at);
    int64_t S = ri.seq, D = ri.dirs, B = ri.batch, H = ri.hid, I = ri.in;
    Value *x = n->in[IN_X], *w = n->in[IN_W], *r = n->in[IN_R], *bias = input(n, IN_B);
    Value *lens = input(n, IN_LENS), *h0 = input(n, IN_H0);
    Value *c0 = G == 4 ? input(n, IN_C0) : NULL, *p = G == 4 ? input(n, IN_P) : NULL;
    Value *y = live_out(n, 0), *yh = live_out(n, 1), *yc = G == 4 ? live_out(n, 2) : NULL;
    const char *dir = attr_str(n, "direction", "forward");
    double clip = attr_float(n, "clip", 0);
    int lbr = G == 3 && attr_int(n, "linear_before_reset", 0);
    int input_forget = G == 4 && attr_int(n, "input_forget", 0);
    Act acts[6];
    read_acts(n, &ri, acts);

    /* sequence_lens: constant and all full is the same as absent. */
    int runtime_lens = 0;
    if (lens && lens->data) {
        int full = 1;
        for (int64_t b = 0; b < B; b++)
            full &= value_get_i(lens, b) == S;
        if (full)
            lens = NULL;
    } else if (lens) {
        runtime_lens = 1;
    }

    const char *dot = t == DT_FLOAT16 ? "mlbc_dot_h" : "mlbc_dot_d";  /* float: emit_f32 */

    for (int d = 0; d < D; d++) {
        int reverse = !strcmp(dir, "reverse") || d == 1;
        const Act *act = acts + d * ri.nact;
        Buf params = {0}, call = {0}, pro = {0}, epi = {0}, yzero = {0}, ystore = {0};
        buf_printf(&params, "const %s *restrict x, const %s *restrict w, const %s *restrict r", T,
                   T, T);
        if (t == DT_FLOAT) {
            /* W and R as the products read them: packed when constant (GRU without
             * linear_before_reset: R's z, r rows and its h rows apart, in r and r2). */
            int split = G == 3 && !lbr;
            buf_printf(&call, "%s, %s, %s", ref(e, x), pack_or_ref(e, n, w, d, 0, G * H, I),
                       pack_or_ref(e, n, r, d, 0, split ? 2 * H : G * H, H));
            if (split) {
                buf_puts(&params, ", const float *restrict r2");
                buf_printf(&call, ", %s", pack_or_ref(e, n, r, d, 2 * H, H, H));
            }
        } else {
            buf_printf(&call, "%s, %s, %s", ref(e, x), at_off(ref(e, w), d * G * H * I),
                       at_off(ref(e, r), d * G * H * H));
        }
        const char *i8 = "        ", *i16 = "                ";
        /* Bias: W and R biases summed (GRU with linear_before_reset keeps R's h bias apart). */
        if (bias) {
            buf_printf(&params, ", const %s *restrict bb", T);
            buf_printf(&call, ", %s", at_off(ref(e, bias), d * 2 * G * H));
            buf_printf(&pro, "    for (j = 0; j < %s; j++)\n", lit(G * H));
            buf_printf(&pro, "%sbias[j] = %s + %s;\n", i8, load_elem(t, "bb[j]"),
                       load_elem(t, strf("bb[%s + j]", lit(G * H))));
            if (lbr) {
                buf_printf(&pro, "    for (j = 0; j < %s; j++) {\n", lit(H));
                buf_printf(&pro, "%sbias[%s + j] = %s;\n", i8, lit(2 * H),
                           load_elem(t, strf("bb[%s + j]", lit(2 * H))));
                buf_printf(&pro, "%srbh[j] = %s;\n", i8,
                           load_elem(t, strf("bb[%s + j]", lit(5 * H))));
                buf_printf(&pro, "    }\n");
            }
        } else {
            if (t != DT_FLOAT)  /* the float products take no bias then */
                buf_printf(&pro, "    for (j = 0; j < %s; j++)\n%sbias[j] = 0;\n", lit(G * H), i8);
            if (lbr)
                buf_printf(&pro, "    for (j = 0; j < %s; j++)\n%srbh[j] = 0;\n", lit(H), i8);
        }
        const char *len = lit(S);
        if (lens) {
            buf_printf(&params, ", const %s *restrict lens", dtype_ctype(lens->dt));
            buf_printf(&call, ", %s", ref(e, lens));
            len = "(long)lens[b]";
            if (runtime_lens) {
                buf_printf(&pro, "    for (b = 0; b < %s; b++)\n", lit(B));
                buf_printf(&pro, "%sif (lens[b] < 0 || lens[b] > %s)\n%s    return 1;\n", i8,
                           lit(S), i8);
            }
        }
        /* Offsets of state rows (initial_h, Y_h, ...) and of Y rows, by layout. */
        const char *hrow = ri.layout ? strf("(b * %s + %d) * %s", lit(D), d, lit(H))
                                     : d ? strf("(%s + b) * %s", lit(d * B), lit(H))
                                         : strf("b * %s", lit(H));
        const char *xrow = ri.layout ? strf("(b * %s + t) * %s", lit(S), lit(I))
                                     : strf("(t * %s + b) * %s", lit(B), lit(I));
#define YROW(tv) (ri.layout ? strf("((b * %s + %s) * %s + %d) * %s", lit(S), tv, lit(D), d, lit(H)) \
                            : strf("((%s * %s + %d) * %s + b) * %s", tv, lit(D), d, lit(B), lit(H)))
        const char *h0e = "0", *c0e = "0";
        if (h0) {
            buf_printf(&params, ", const %s *restrict h0", T);
            buf_printf(&call, ", %s", ref(e, h0));
            h0e = load_elem(t, strf("h0[%s + j]", hrow));
        }
        if (c0) {
            buf_printf(&params, ", const %s *restrict c0", T);
            buf_printf(&call, ", %s", ref(e, c0));
            c0e = load_elem(t, strf("c0[%s + j]", hrow));
        }
        if (p) {
            buf_printf(&params, ", const %s *restrict p", T);
            buf_printf(&call, ", %s", at_off(ref(e, p), d * 3 * H));
        }
        if (y) {
            buf_printf(&params, ", %s *restrict y", T);
            buf_printf(&call, ", %s", ref(e, y));
            buf_printf(&yzero, "%sfor (j = 0; j < %s; j++)\n%s    y[%s + j] = %s;\n", i16,
                       lit(H), i16, YROW("s"), store_as(t, at, "0"));
            buf_printf(&ystore, "%sy[%s + j] = %s;\n", i16, YROW("t"),
                       store_as(t, at, t == DT_FLOAT ? "h[b][j]" : "hn[j]"));
        }
        if (yh || yc) {
            buf_printf(&epi, "    for (b = 0; b < %s; b++)\n", lit(B));
            buf_printf(&epi, "%sfor (j = 0; j < %s; j++) {\n", i8, lit(H));
            if (yh) {
                buf_printf(&params, ", %s *restrict yh", T);
                buf_printf(&call, ", %s", ref(e, yh));
                buf_printf(&epi, "%s    yh[%s + j] = %s;\n", i8, hrow, store_as(t, at, "h[b][j]"));
            }
            if (yc) {
                buf_printf(&params, ", %s *restrict yc", T);
                buf_printf(&call, ", %s", ref(e, yc));
                buf_printf(&epi, "%s    yc[%s + j] = %s;\n", i8, hrow, store_as(t, at, "c[b][j]"));
            }
            buf_printf(&epi, "%s}\n", i8);
        }
#undef YROW
        if (t == DT_FLOAT) {
            const char *fn = emit_f32(e, n, &ri, d, reverse, act, clip, params.p, pro.p, epi.p,
                                      yzero.p, ystore.p, h0e, c0e, len, bias != NULL, p != NULL);
            if (runtime_lens)
                check(e, strf("%s(%s) == 0", fn, call.p), strf("%s: sequence_lens out of range", n->op));
            else
                stmt(e, "%s(%s);", fn, call.p);
            continue;
        }

        /* The cell. */
        Buf gates = {0};
        const char *tmpl, *gh = "", *decl = "";
        Buf zr = {0}, hgate = {0};
        if (G == 4) {
            tmpl = "rnn_lstm";
            if (p)
                buf_printf(&gates, "%sgi = %s;\n", i16, madd(at, load_elem(t, "p[j]"), "cp", "gi"));
            apply(&gates, i16, &act[0], "gi", clip, at);
            if (input_forget) {
                buf_printf(&gates, "%sgf = 1 - gi;\n", i16);
            } else {
                if (p)
                    buf_printf(&gates, "%sgf = %s;\n", i16,
                               madd(at, load_elem(t, strf("p[%s + j]", lit(2 * H))), "cp", "gf"));
                apply(&gates, i16, &act[0], "gf", clip, at);
            }
            apply(&gates, i16, &act[1], "gc", clip, at);
            buf_printf(&gates, "%scn = %s;\n", i16, sum2(at, "gf", "cp", "gi", "gc"));
            if (p)
                buf_printf(&gates, "%sgo = %s;\n", i16,
                           madd(at, load_elem(t, strf("p[%s + j]", lit(H))), "cn", "go"));
            apply(&gates, i16, &act[0], "go", clip, at);
            buf_printf(&gates, "%shn[j] = go * (%s);\n", i16, act_expr(&act[2], "cn", at));
        } else if (G == 3) {
            tmpl = "rnn_gru";
            apply(&zr, i16, &act[0], "gz", clip, at);
            apply(&zr, i16, &act[0], "gr", clip, at);
            buf_printf(&zr, "%sz[j] = gz;\n", i16);
            const char *xdot = strf("bias[%s + j] + %s(w + (%s + j) * %s, xv, %s)", lit(2 * H), dot,
                                    lit(2 * H), lit(I), lit(I));
            if (lbr) {
                decl = strf(", rbh[%s], rr[%s]", lit(H), lit(H));
                buf_printf(&zr, "%srr[j] = gr;\n", i16);
                buf_printf(&zr, "%srh[j] = %s(r + (%s + j) * %s, h[b], %s) + rbh[j];\n", i16, dot,
                           lit(2 * H), lit(H), lit(H));
                gh = madd(at, "rr[j]", "rh[j]", xdot);
            } else {
                buf_printf(&zr, "%srh[j] = gr * h[b][j];\n", i16);
                gh = strf("%s + %s(r + (%s + j) * %s, rh, %s)", xdot, dot, lit(2 * H), lit(H),
                          lit(H));
            }
            apply(&hgate, i16, &act[1], "gh", clip, at);
        } else {
            tmpl = "rnn_rnn";
            apply(&gates, i16, &act[0], "g", clip, at);
            buf_printf(&gates, "%shn[j] = g;\n", i16);
        }

        Buf doc = {0};
        buf_printf(&doc, "%s %s, direction %d of %d (%s): seq %lld, batch %lld, input %lld, "
                   "hidden %lld, layout %d", n->op, dtype_name(t), d + 1, (int)D,
                   reverse ? "reverse" : "forward", (long long)S, (long long)B, (long long)I,
                   (long long)H, ri.layout);
        for (int k = 0; k < ri.nact; k++)
            buf_printf(&doc, "%s%s", k ? ", " : "; activations ", act[k].name);
        if (clip > 0)
            buf_printf(&doc, "; clip %g", clip);
        if (p)
            buf_puts(&doc, "; peepholes");
        if (lbr)
            buf_puts(&doc, "; linear before reset");
        if (lens)
            buf_puts(&doc, "; sequence_lens");
        const char *fn = kernel(e, n, tmpl, "DOC", doc.p, "PARAMS", params.p, "T", T, "A", A,
            "BATCH", lit(B), "H", lit(H), "I", lit(I), "SEQ", lit(S), "DOT", dot,
            "PROLOGUE", pro.p ? pro.p : "", "EPILOGUE", epi.p ? epi.p : "",
            "H0", h0e, "C0", c0e, "LEN", len,
            "TIME", reverse ? "len - 1 - s" : "s", "XLOAD", load_elem(t, strf("x[%s + i]", xrow)),
            "YZERO", yzero.p ? yzero.p : "", "YSTORE", ystore.p ? ystore.p : "",
            "GATES", gates.p ? gates.p : "", "ZR", zr.p ? zr.p : "",
            "HGATE", hgate.p ? hgate.p : "", "GH", gh, "DECL", decl,
            "BLEND", sum2(at, "(1 - z[j])", "gh", "z[j]", "h[b][j]"), NULL);
        if (runtime_lens)
            check(e, strf("%s(%s) == 0", fn, call.p), strf("%s: sequence_lens out of range", n->op));
        else
            stmt(e, "%s(%s);", fn, call.p);
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
    {"LSTM", rnn_infer, NULL, rnn_emit, rnn_flops},
    {"GRU", rnn_infer, NULL, rnn_emit, rnn_flops},
    {"RNN", rnn_infer, NULL, rnn_emit, rnn_flops},
    {0},
};
