/* op_loss.c - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
 *
 * Both view the scores as [N, C, D] (D = d1*...*dk) and the targets as [N, D]. Targets are
 * run-time data: the kernels check every one (a class in [0, C) or ignore_index) before
 * they read anything it selects and return 1 otherwise, which makes run() return 2.
 */
#include <string.h>

#include "mlbc.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

static int is_sce(const Node *n) { return !strcmp(n->op, "SoftmaxCrossEntropyLoss"); }

static int reduction(Node *n)
{
    const char *r = attr_str(n, "reduction", "mean");
    if (!strcmp(r, "none"))
        return RED_NONE;
    if (!strcmp(r, "sum"))
        return RED_SUM;
    if (!strcmp(r, "mean"))
        return RED_MEAN;
    node_die(n, "reduction must be none, sum or mean, not '%s'", r);
}

/* Positions per sample: d1*...*dk (1 for [N, C] scores). */
static int64_t positions(const Value *x) { return numel_dims(x->rank - 2, x->dim + 2); }


static void loss_infer(Node *n)
{
    int sce = is_sce(n);
    if (n->nin < 2 || n->nin > 3 || !n->in[0] || !n->in[1])
        node_die(n, "takes scores, targets and optional weights (2 or 3 inputs), got %d",
                 n->nin);
    if (n->nout < 1 || n->nout > (sce ? 2 : 1) || !n->out[0])
        node_die(n, "has %d output(s); it produces the loss%s", n->nout,
                 sce ? " and optionally log_prob" : "");
    Value *x = n->in[0], *t = n->in[1], *w = input(n, 2);
    static const DType ft[] = {DT_FLOAT16, DT_FLOAT, DT_DOUBLE, DT_UNDEF};
    static const DType ft_bf[] = {DT_FLOAT16, DT_FLOAT, DT_DOUBLE, DT_BFLOAT16, DT_UNDEF};
    static const DType it[] = {DT_INT32, DT_INT64, DT_UNDEF};
    need_type(n, x, sce && n->opset >= 13 ? ft_bf : ft);
    need_type(n, t, it);
    if (x->rank < 2)
        node_die(n, "scores '%s' must have shape [N, C, d1, ...], got %s", x->name,
                 shape_str(x));
    int ok = t->rank == x->rank - 1 && t->dim[0] == x->dim[0];
    for (int k = 1; ok && k < t->rank; k++)
        ok = t->dim[k] == x->dim[k + 1];
    if (!ok)
        node_die(n, "targets '%s' %s do not match scores '%s' %s (expected [N, d1, ...])",
                 t->name, shape_str(t), x->name, shape_str(x));
    if (w) {
        need_same_type(n, x, w);
        if (w->rank != 1 || w->dim[0] != x->dim[1])
            node_die(n, "weights '%s' must have shape [%lld] (one per class), got %s", w->name,
                     (long long)x->dim[1], shape_str(w));
    }
    if (sce && x->dim[1] == 0 && numel(t) > 0)
        node_die(n, "scores '%s' %s have no classes", x->name, shape_str(x));
    if (reduction(n) == RED_NONE)
        copy_shape(n, 0, t, x->dt);
    else
        set_output(n, 0, x->dt, 0, NULL);
    if (sce)
        copy_shape(n, 1, x, x->dt);
}

static double loss_flops(Node *n)
{
    Value *x = n->in[0];
    double samples = (double)numel(n->in[1]);
    return is_sce(n) ? 4.0 * (double)numel(x) + 3.0 * samples : 3.0 * samples;
}

/* ---- emission ---- */

/* Conversions between the element type and the computation type, as function names (not
 * load_elem/store_elem): the templates apply ${LD} and ${ST} to their own expressions. */
static const char *load_fn(DType t)
{
    return t == DT_FLOAT16 ? "mlbc_h2f" : t == DT_BFLOAT16 ? "mlbc_bf2f" : "";
}

static const char *store_fn(DType t)
{
    return t == DT_FLOAT16 ? "mlbc_f2h" : t == DT_BFLOAT16 ? "mlbc_f2bf" : "";
}

static const char *indent(int k) { return strf("%*s", 4 * k, ""); }

static void loss_emit(Emit *e, Node *n)
{
    int sce = is_sce(n), red = reduction(n);
    Value *x = n->in[0], *t = n->in[1], *w = input(n, 2), *y = n->out[0];
    Value *lp = sce ? read_output(n, 1) : NULL;
    DType dt = x->dt, ct = calc_type(dt);
    const char *CT = dtype_ctype(ct), *ST = store_fn(dt);
    int64_t N = x->dim[0], C = x->dim[1], D = positions(x);
    Onnx__AttributeProto *ia = attr(n, "ignore_index");
    int64_t ii = attr_int(n, "ignore_index", 0);
    int body = sce ? 4 : 3;     /* indentation of the per-sample statements */
    const char *in1 = indent(body), *in2 = indent(body + 1);


    const char *range = strf("k >= 0 && k < %s", lit(C));
    const char *valid = ia && !(ii >= 0 && ii < C) ? strf("k == %s || (%s)", lit(ii), range)
                                                   : range;
    /* The block of a sample's loss, taken unless the sample is ignored (loss 0). */
    const char *open = strf("%s{\n", in1);
    if (ia)
        open = red == RED_NONE
                   ? strf("%sif (k == %s) {\n%s    y[s] = %s((%s)0);\n%s} else {\n", in1, lit(ii),
                          in1, ST, CT, in1)
                   : strf("%sif (k != %s) {\n", in1, lit(ii));

    /* The sample's loss is -xk * wc; a sum adds it with a fused multiply-add in double (for
     * float the product is exact there), so contraction cannot change it. */
    const char *decl = "", *accum, *finish = "";
    const char *add = strf("%ssum = %s;\n", in2,
                           fused(DT_DOUBLE, "-(double)xk", "(double)wc", "sum"));
    switch (red) {
    case RED_NONE:
        accum = strf("%sy[s] = %s(-xk * wc);\n", in2, ST);
        break;
    case RED_SUM:
        decl = "    double sum = 0;\n";
        accum = add;
        finish = strf("    y[0] = %s((%s)sum);\n", ST, CT);
        break;
    default:
        decl = "    double sum = 0, wsum = 0; /* loss and applied weight */\n";
        accum = strf("%s%swsum += wc;\n", add, in2);
        finish = strf("    y[0] = %s((%s)(sum / wsum));\n", ST, CT);
        break;
    }

    int64_t B = D < 1 ? 1 : D > 64 ? 64 : D;
    const char *logprob = "";
    if (lp)
        logprob = strf("            %s\n"
                       "                for (j = 0; j < nb; j++)\n"
                       "                    lp[n * %s + c * %s + d0 + j] = %s(%s(xb[c * %s + j]) - lse[j]);\n",
                       loop_head("", "c", C, 1), lit(C * D), lit(D), ST, load_fn(dt), lit(D));

    const char *doc = strf("%s: %s%s, %s%s%s, reduction=%s%s -> loss%s%s", n->op,
                           dtype_name(dt), shape_str(x), dtype_name(t->dt), shape_str(t),
                           w ? ", weights" : "", c_comment(attr_str(n, "reduction", "mean")),
                           ia ? strf(", ignore_index=%lld", (long long)ii) : "",
                           shape_str(y), lp ? strf(", log_prob%s", shape_str(lp)) : "");
    const char *fn = kernel(e, n, sce ? "loss_sce" : "loss_nll",
        "DOC", doc, "T", dtype_ctype(dt), "IT", dtype_ctype(t->dt), "CT", CT,
        "LD", load_fn(dt), "ST", ST, "SFX", libm_sfx(ct),
        "WPARAM", w ? strf(", const %s *restrict w", dtype_ctype(dt)) : "",
        "WC", w ? strf("%s(w[k])", load_fn(dt)) : "1",
        "LPPARAM", lp ? strf(", %s *restrict lp", dtype_ctype(dt)) : "",
        "LOGPROB", logprob, "VALID", valid, "DECL", decl, "OPEN", open, "ACCUM", accum,
        "FINISH", finish, "N", lit(N), "C", lit(C), "D", lit(D), "CD", lit(C * D), "B", lit(B),
        "FOR_D", loop_head("", "d", D, 1), "FOR_D0", loop_head("", "d0", D, B),
        "FOR_I", loop_head("", "i", N * D, 1), "FOR_N", loop_head("", "n", N, 1),
        "FOR_C", loop_head("", "c", C, 1), "FOR_C1", loop_range("", "c", 1, C, 1), NULL);
    stmt(e, "if (%s(%s, %s%s, %s%s))", fn, ref(e, x), ref(e, t),
         w ? strf(", %s", ref(e, w)) : "", ref(e, y), lp ? strf(", %s", ref(e, lp)) : "");
    stmt(e, "    return 2; /* a target is neither a class index nor ignore_index */");
}

const OpDef ops_loss[] = {
    {"NegativeLogLikelihoodLoss", loss_infer, NULL, loss_emit, loss_flops, 0},
    {"SoftmaxCrossEntropyLoss", loss_infer, NULL, loss_emit, loss_flops, 0},
    {0},
};
