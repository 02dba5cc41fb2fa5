/* op_rnn.c - LSTM, GRU, RNN.
 *
 * One kernel per direction (templates/rnn_lstm.c, rnn_gru.c, rnn_rnn.c): the recurrence
 * runs over time and batch with the state held in the kernel; each gate value is a
 * contiguous dot product of a row of W (or R) with the input (or state) vector, using a
 * fixed-order multi-accumulator dot product (templates/rnn_dot_*.c). The ONNX weight
 * layout [dirs, gates*H, I] already has contiguous rows, so the same kernel serves constant
 * and run-time weights. Layout, optional inputs and outputs, activations, clip and
 * peepholes are resolved here into code fragments substituted into the template.
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
    if (!strcmp(nm, "affine")) return strf("%s * %s + %s", al, v, be);
    if (!strcmp(nm, "leakyrelu")) return strf("%s >= 0 ? %s : %s * %s", v, v, al, v);
    if (!strcmp(nm, "thresholdedrelu")) return strf("%s > %s ? %s : 0", v, al, v);
    if (!strcmp(nm, "scaledtanh")) return libm_suffix(strf("%s * tanh@(%s * %s)", al, be, v), at);
    if (!strcmp(nm, "hardsigmoid"))
        return strf("fmax%s(0, fmin%s(1, %s * %s + %s))", f, f, al, v, be);
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

    const char *dot = t == DT_FLOAT16 ? "mlbc_dot_h" : t == DT_DOUBLE ? "mlbc_dot_d" : "mlbc_dot_f";

    for (int d = 0; d < D; d++) {
        int reverse = !strcmp(dir, "reverse") || d == 1;
        const Act *act = acts + d * ri.nact;
        Buf params = {0}, call = {0}, pro = {0}, epi = {0}, yzero = {0}, ystore = {0};
        buf_printf(&params, "const %s *restrict x, const %s *restrict w, const %s *restrict r", T,
                   T, T);
        buf_printf(&call, "%s, %s, %s", ref(e, x), at_off(ref(e, w), d * G * H * I),
                   at_off(ref(e, r), d * G * H * H));
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
            buf_printf(&ystore, "%sy[%s + j] = %s;\n", i16, YROW("t"), store_as(t, at, "hn[j]"));
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

        /* The cell. */
        Buf gates = {0};
        const char *tmpl, *rh = "", *decl = "";
        Buf zr = {0}, hgate = {0};
        if (G == 4) {
            tmpl = "rnn_lstm";
            if (p)
                buf_printf(&gates, "%sgi += %s * cp;\n", i16, load_elem(t, "p[j]"));
            apply(&gates, i16, &act[0], "gi", clip, at);
            if (input_forget) {
                buf_printf(&gates, "%sgf = 1 - gi;\n", i16);
            } else {
                if (p)
                    buf_printf(&gates, "%sgf += %s * cp;\n", i16,
                               load_elem(t, strf("p[%s + j]", lit(2 * H))));
                apply(&gates, i16, &act[0], "gf", clip, at);
            }
            apply(&gates, i16, &act[1], "gc", clip, at);
            buf_printf(&gates, "%scn = gf * cp + gi * gc;\n", i16);
            if (p)
                buf_printf(&gates, "%sgo += %s * cn;\n", i16,
                           load_elem(t, strf("p[%s + j]", lit(H))));
            apply(&gates, i16, &act[0], "go", clip, at);
            buf_printf(&gates, "%shn[j] = go * (%s);\n", i16, act_expr(&act[2], "cn", at));
        } else if (G == 3) {
            tmpl = "rnn_gru";
            apply(&zr, i16, &act[0], "gz", clip, at);
            apply(&zr, i16, &act[0], "gr", clip, at);
            buf_printf(&zr, "%sz[j] = gz;\n", i16);
            if (lbr) {
                decl = strf(", rbh[%s]", lit(H));
                buf_printf(&zr, "%srh[j] = gr * (%s(r + (%s + j) * %s, h[b], %s) + rbh[j]);\n",
                           i16, dot, lit(2 * H), lit(H), lit(H));
                rh = "rh[j]";
            } else {
                buf_printf(&zr, "%srh[j] = gr * h[b][j];\n", i16);
                rh = strf("%s(r + (%s + j) * %s, rh, %s)", dot, lit(2 * H), lit(H), lit(H));
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
            "HGATE", hgate.p ? hgate.p : "", "RH", rh, "DECL", decl, NULL);
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
