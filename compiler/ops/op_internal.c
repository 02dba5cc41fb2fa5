/* op_internal.c - operators that passes make and models never name: lower.c's run-time
 * checks (Check) and fuse.c's Bucketize. They are found with find_internal_op, never by a
 * model's op_type, and their passes build them from IR data only (the structs in mlbc.h),
 * so that no pass depends on the emitter.
 *
 * Check: at run time the scalar input compared with k must hold, or run() returns 2 saying
 * why (an unrolled Loop's trip count, a Scan's length, ...).
 *
 * Bucketize: count(q <= x) (or q < x) against sorted constant boundaries q, per feature, as
 * a binary search (templates/fused_bucketize.c); the output keeps the ReduceSum's type and
 * shape.
 *
 * Silu: x * sigmoid(x), a float Sigmoid and the Mul of its input by it, in one pass
 * (mlbc_vsilu_f32, templates/vmath_sigmoid.c): the sigmoid rounded to float, then the product,
 * as the two nodes computed it.
 *
 * NormChain: LayerNorm written as the nodes torch exports below opset 17, with the nodes'
 * bits (norm_chain_emit in op_norm.c, templates/norm_chain.c).
 *
 * Gelu: nn.GELU written as the nodes torch exports (Div, Erf, Add, Mul, Mul), with the nodes'
 * bits, in one pass (templates/vmath_gelu.c: its constants as exact literals).
 */
#include "mlbc.h"

static void no_infer(Node *n) { (void)n; }  /* outputs kept from the nodes they replace */

static void check_emit(Emit *e, Node *n)
{
    const Guard *g = n->aux;
    check(e, strf("%s[0] %s %s", ref(e, n->in[0]), g->cmp, lit(g->k)), g->why);
}

static void bucketize_emit(Emit *e, Node *n)
{
    const Bucketize *b = n->aux;
    Value *x = n->in[0], *y = n->out[0];
    Buf q = {0};
    for (int64_t i = 0; i < numel(&b->q); i++)
        buf_printf(&q, "%s%s", i ? (i % 8 ? ", " : ",\n        ") : "", cval(&b->q, i));
    const char *fn = kernel(e, n, "fused_bucketize", "TX", dtype_ctype(x->dt),
                            "TY", dtype_ctype(y->dt), "N", lit(numel(&b->q)),
                            "FOR_I", loop_head("long ", "i", numel(x), 1),
                            "CMP", b->upper ? "<=" : "<", "Q", q.p, "WAS", b->was, NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

static double bucketize_flops(Node *n)
{
    const Bucketize *b = n->aux;
    double steps = 1;
    for (int64_t k = numel(&b->q); k > 1; k /= 2)
        steps++;
    return (double)numel(n->in[0]) * steps;
}

static void silu_emit(Emit *e, Node *n)
{
    if (numel(n->out[0]))
        stmt(e, "mlbc_vsilu_f32(%s, %s, %s);", lit(numel(n->out[0])), ref(e, n->in[0]),
             ref(e, n->out[0]));
}

static void gelu_emit(Emit *e, Node *n)
{
    const Gelu *g = n->aux;
    if (!numel(n->out[0]))
        return;
    const char *fn = kernel(e, n, "vmath_gelu", "DOC", strf("GELU, %s", g->was),
                            "OP", g->div ? "/" : "*", "VOP", g->div ? "div" : "mul",
                            "C", float_lit(g->c, DT_FLOAT), "ONE", float_lit(g->one, DT_FLOAT),
                            "HALF", float_lit(g->half, DT_FLOAT), NULL);
    stmt(e, "%s_f32(%s, %s, %s);", fn, lit(numel(n->out[0])), ref(e, n->in[0]),
         ref(e, n->out[0]));
}

const OpDef ops_internal[] = {
    {"Check", no_infer, NULL, check_emit, no_flops, OP_OPTIONAL_OUT0}, /* no output */
    {"Bucketize", no_infer, NULL, bucketize_emit, bucketize_flops, 0},
    {"Silu", no_infer, NULL, silu_emit, NULL, 0},
    {"NormChain", no_infer, NULL, norm_chain_emit, NULL, 0},
    {"Gelu", no_infer, NULL, gelu_emit, NULL, 0},
    {0},
};
