/* fuse.c - pattern fusions after inference: a chain of nodes replaced by one node whose
 * result is exactly the same.
 *
 * Bucketize. MLGO policies quantise each feature x against constant quantile boundaries q
 * as count(q <= x): exported, that is ReduceSum(Cast(LessOrEqual(q, x))) over the boundary
 * axis - a comparison with every boundary, a cast and a sum, per feature. With q sorted the
 * count is a binary search (upper bound for <=, lower bound for <), exact for every x
 * including NaN (no comparison holds: count 0).
 *
 * Conv + activation. A float Conv (the matrix-product or depthwise kernel of op_conv.c) whose
 * output only a Relu, Silu (below), Sigmoid or Tanh reads: that node becomes the Conv, its aux
 * a ConvEpilogue naming the fused activation, and op_conv.c applies the activation's own
 * expression or vector kernel to each tile of the product's output while it is in cache,
 * instead of a pass over the whole tensor: the same bits.
 *
 * Conv + BatchNormalization (+ activation). Likewise a BatchNormalization in inference mode that
 * alone reads such a Conv's output (of other than one channel per group): its parameters
 * become the Conv's inputs 3-6 and op_conv.c applies the BatchNormalization's own expression
 * (then the activation's) to each tile, channel by channel: two passes over the output fewer, the
 * same bits. (Folding it into the weights, as ONNX Runtime does, would change them.)
 *
 * Conv (+ Relu) + MaxPool. Likewise a MaxPool that only reads such a Conv's output and that
 * op_conv.c can apply to each tile (conv_takes_maxpool): the MaxPool node becomes the Conv,
 * the epilogue gains the pool, and the Conv's full-size output is never stored. So does a
 * GlobalAveragePool or ReduceMean over each plane (conv_takes_mean): the Conv adds each tile
 * into lanes in the node's own order, the same bits.
 *
 * Sigmoid + Mul (SiLU, as torch exports it): a float Sigmoid whose output only a Mul of its
 * input by it reads: the Mul node becomes Silu (op_internal.c), one pass instead of two, the
 * same bits. It is fused first, so that a Conv before it can take it.
 *
 * LayerNorm as torch exports it below opset 17: ReduceMean over the last axis, Sub, Pow 2 (or
 * Mul of the difference by itself), ReduceMean, Add of a constant epsilon, Sqrt, Div, then a
 * Mul by a scale and an Add of a bias per feature if they follow: the last node becomes
 * NormChain (op_norm.c), the statistics of each row in two passes and y in a third, each value
 * rounded where its node rounded it: the same bits, one kernel instead of nine.
 *
 * MatMul + Add. A float MatMul whose output only an Add of a bias reads (one value per
 * column, or one in all: a Linear layer on a batch of sequences, exported so): the Add node
 * becomes the MatMul with the bias as a third input, the c operand of op_linalg.c's product,
 * which the kernels add to each finished sum as the Add did: the same bits, one pass fewer.
 *
 * GELU as torch exports nn.GELU (exact, below opset 20): Div of x by sqrt 2 (or a Mul by a
 * constant), Erf, Add of 1, Mul by x, Mul by 1/2: the last becomes Gelu of x (op_internal.c),
 * one pass instead of five, each step rounded to float as its node rounded it: the same bits.
 *
 * Transpose + Transpose that cancel (torch's x.transpose(1, 2) undone by the next layer): the
 * second becomes an Identity of the first's input, whose buffer it shares; nothing moves.
 *
 * Transpose + ReduceSum or ReduceMean (torch's x.transpose(1, 2).mean(1)): where the Reduce
 * sums each output over elements that are the last axes of the Transpose's input, in their
 * order there, it reads that input as rows, each summed in order (op_reduce.c): the same
 * additions in the same order, the same bits, and the transposed copy is never made.
 */
#include <stdlib.h>
#include <string.h>

#include "mlbc.h"

/* The only live consumer of v, or NULL. */
static Node *sole_consumer(Graph *g, const Value *v)
{
    if (v->nuse != 1 || v->result_index >= 0)
        return NULL;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        for (int k = 0; k < n->nin && !n->dead; k++)
            if (n->in[k] == v)
                return n;
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* q must be constant, float, NaN-free, and vary only along the last axis of c. */
static int boundaries_ok(const Value *q, const Value *c)
{
    if (!q->data || !dtype_is_float(q->dt) || q->rank > c->rank)
        return 0;
    int64_t n = c->dim[c->rank - 1];
    for (int k = 0; k < q->rank; k++) {
        int64_t want = k == q->rank - 1 ? n : 1;
        if (q->dim[k] != want)
            return 0;
    }
    for (int64_t i = 0; i < numel(q); i++)
        if (value_get_f(q, i) != value_get_f(q, i))
            return 0;
    return 1;
}

/* x must have c's shape with the last axis 1, so y[i] belongs to x[i]. */
static int features_ok(const Value *x, const Value *c)
{
    if (x->data || x->rank > c->rank)
        return 0;
    for (int k = 0; k < c->rank; k++) {
        int kx = k - (c->rank - x->rank);
        int64_t d = kx >= 0 ? x->dim[kx] : 1;
        if (d != (k == c->rank - 1 ? 1 : c->dim[k]))
            return 0;
    }
    return 1;
}

/* Does the ReduceSum r sum over the last axis of its input and only over size-1 axes
 * besides? (Summing over a size-1 axis changes nothing.) */
static int sums_last_axis(Node *r)
{
    Value *in = r->in[0];
    int64_t axes[MLBC_MAX_RANK];
    int count;
    Value *a = input(r, 1);
    if (r->opset >= 13 && a) {
        if (!a->data || numel(a) > MLBC_MAX_RANK)
            return 0;
        count = const_ints(r, a, axes, MLBC_MAX_RANK);
    } else {
        count = attr_ints(r, "axes", axes, MLBC_MAX_RANK);
    }
    if (count <= 0)
        return count == 0 && attr_int(r, "noop_with_empty_axes", 0) ? 0 : 1;
    int last = 0;
    for (int i = 0; i < count; i++) {
        int64_t ax = axes[i] < 0 ? axes[i] + in->rank : axes[i];
        if (ax < 0 || ax >= in->rank)
            return 0;
        if (ax == in->rank - 1)
            last = 1;
        else if (in->dim[ax] != 1)
            return 0;
    }
    return last;
}

static int try_bucketize(Graph *g, Node *cmp)
{
    const char *op = cmp->op;
    int le = !strcmp(op, "LessOrEqual"), lt = !strcmp(op, "Less");
    int ge = !strcmp(op, "GreaterOrEqual"), gt = !strcmp(op, "Greater");
    if (!(le || lt || ge || gt) || cmp->nin != 2 || !cmp->in[0] || !cmp->in[1])
        return 0;
    /* q <= x, q < x, x >= q, x > q: all count the boundaries below x. */
    Value *q = le || lt ? cmp->in[0] : cmp->in[1];
    Value *x = le || lt ? cmp->in[1] : cmp->in[0];
    Value *c = cmp->out[0];
    if (!c || c->rank < 1 || !boundaries_ok(q, c) || !features_ok(x, c))
        return 0;
    Node *cast = sole_consumer(g, c);
    if (!cast || strcmp(cast->op, "Cast") || !cast->out[0])
        return 0;
    Node *sum = sole_consumer(g, cast->out[0]);
    if (!sum || strcmp(sum->op, "ReduceSum") || sum->in[0] != cast->out[0] ||
        !sums_last_axis(sum) || numel(sum->out[0]) != numel(x))
        return 0;
    DType t = cast->out[0]->dt;
    if (!dtype_is_float(t) && !dtype_is_int(t))
        return 0;

    Bucketize *b = xalloc(sizeof *b);
    b->q = *q;
    b->q.rank = 1;
    b->q.dim[0] = numel(q);
    b->q.data = xalloc((size_t)numel(q) * sizeof(double));
    b->q.dt = DT_DOUBLE;
    for (int64_t i = 0; i < numel(q); i++)
        ((double *)b->q.data)[i] = value_get_f(q, i);
    qsort(b->q.data, (size_t)numel(q), sizeof(double), cmp_double);
    if (q->dt == DT_FLOAT) {  /* keep the boundaries in the comparison's type */
        float *f = xalloc((size_t)numel(q) * sizeof(float));
        for (int64_t i = 0; i < numel(q); i++)
            f[i] = (float)((double *)b->q.data)[i];
        b->q.data = f;
        b->q.dt = DT_FLOAT;
    }
    b->upper = le || ge;
    b->was = strf("ReduceSum(Cast(%s)) of '%s', '%s' and '%s'", op, c_comment(cmp->name),
                  c_comment(cast->name), c_comment(sum->name));
    sum->def = find_internal_op("Bucketize");
    sum->op = "Bucketize";
    sum->in[0] = x;
    sum->nin = 1;
    sum->aux = b;
    return 1;
}

/* NEXT, the only reader of CONV's output, becomes CONV with the epilogue EP. */
static void absorb_conv(Node *next, const Node *conv, const ConvEpilogue *ep)
{
    ConvEpilogue *copy = xalloc(sizeof *copy);
    *copy = *ep;
    next->op = conv->op;
    next->def = conv->def;
    next->opset = conv->opset;
    next->name = conv->name;
    next->in = conv->in;
    next->nin = conv->nin;
    next->nout = 1;
    next->attr = conv->attr;
    next->nattr = conv->nattr;
    next->aux = copy;
    next->ws_bytes = conv_workspace(next);
}

static int is_conv(const Node *n)
{
    return !strcmp(n->op, "Conv") && !*n->domain && n->nout == 1 && n->out[0];
}

/* A BatchNormalization in inference mode, of float scale, bias, mean and var, only its Y
 * read */
static int is_plain_bn(Node *n)
{
    if (strcmp(n->op, "BatchNormalization") || *n->domain || n->nin != 5 || !n->out[0] ||
        n->out[0]->dt != DT_FLOAT || (n->opset >= 14 && attr_int(n, "training_mode", 0)) ||
        (n->opset < 9 && !attr_int(n, "spatial", 1)))
        return 0;
    for (int i = 1; i < 5; i++)
        if (!n->in[i] || n->in[i]->dt != DT_FLOAT || read_output(n, i))
            return 0;
    return 1;
}

static int try_conv_bn(Graph *g, Node *conv)
{
    if (!is_conv(conv) || conv->aux || !conv_takes_batchnorm(conv))
        return 0;
    Node *bn = sole_consumer(g, conv->out[0]);
    if (!bn || !is_plain_bn(bn))
        return 0;
    Value **in = xalloc(7 * sizeof *in);
    for (int i = 0; i < 3; i++)
        in[i] = i < conv->nin ? conv->in[i] : NULL;
    for (int i = 1; i < 5; i++)
        in[2 + i] = bn->in[i];
    double eps = attr_float(bn, "epsilon", 1e-5);
    absorb_conv(bn, conv, &(ConvEpilogue){.bn = 1, .bn_eps = eps});
    bn->in = in;
    bn->nin = 7;
    bn->ws_bytes = conv_workspace(bn);
    return 1;
}

/* The activations a Conv takes into its epilogue: Relu as an expression, the others as
 * their vector kernels over each tile (op_conv.c). */
static int is_conv_activation(const Node *n)
{
    static const char *const acts[] = {"Relu", "Silu", "Sigmoid", "Tanh"};
    if (*n->domain || n->nin != 1 || n->nout != 1 || !n->out[0] || n->out[0]->dt != DT_FLOAT ||
        !same_type(n->in[0], n->out[0]))
        return 0;
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (!strcmp(n->op, acts[i]))
            return 1;
    return 0;
}

static int try_conv_act(Graph *g, Node *conv)
{
    const ConvEpilogue *ep = conv->aux;
    if (!is_conv(conv) || (ep && (!ep->bn || ep->act || ep->pool_k[0])) ||
        !conv_takes_activation(conv))
        return 0;
    Node *act = sole_consumer(g, conv->out[0]);
    if (!act || !is_conv_activation(act))
        return 0;
    ConvEpilogue with = ep ? *ep : (ConvEpilogue){0};
    with.act = act->op;
    absorb_conv(act, conv, &with);
    return 1;
}

/* A Conv and the MaxPool or mean over each plane that alone reads it */
static int try_conv_pool(Graph *g, Node *conv)
{
    const ConvEpilogue *ep = conv->aux;
    if (!is_conv(conv) || (ep && (ep->pool_k[0] || ep->mean)))
        return 0;
    Node *pool = sole_consumer(g, conv->out[0]);
    ConvEpilogue all;
    if (!pool || !(conv_takes_maxpool(conv, pool, &all) || conv_takes_mean(conv, pool, &all)))
        return 0;
    absorb_conv(pool, conv, &all);
    return 1;
}

static int try_silu(Graph *g, Node *sig)
{
    if (strcmp(sig->op, "Sigmoid") || *sig->domain || sig->nin != 1 || !sig->out[0] ||
        sig->out[0]->dt != DT_FLOAT || sig->in[0]->dt != DT_FLOAT)
        return 0;
    Value *x = sig->in[0], *s = sig->out[0];
    Node *mul = sole_consumer(g, s);
    if (!mul || strcmp(mul->op, "Mul") || *mul->domain || mul->nin != 2 || !mul->out[0] ||
        mul->out[0]->dt != DT_FLOAT || numel(mul->out[0]) != numel(x) ||
        !((mul->in[0] == x && mul->in[1] == s) || (mul->in[0] == s && mul->in[1] == x)))
        return 0;
    mul->def = find_internal_op("Silu");
    mul->op = "Silu";
    mul->in[0] = x;
    mul->nin = 1;
    sig->dead = 1;                      /* uses counted as remove_dead would: x's by the Mul */
    x->nuse--;
    s->nuse = 0;
    return 1;
}

/* ---- LayerNorm as torch exports it below opset 17 ---- */

/* N is OP of the default domain with NIN inputs (-1: any) and one float output */
static int is_op(const Node *n, const char *op, int nin)
{
    return n && !n->dead && !strcmp(n->op, op) && !*n->domain && (nin < 0 || n->nin == nin) &&
           n->nout == 1 && n->out[0] && n->out[0]->dt == DT_FLOAT;
}

/* V's producer if it is OP with NIN inputs and V is read once, by no graph output */
static Node *made_by(const Value *v, const char *op, int nin)
{
    return v->nuse == 1 && v->result_index < 0 && is_op(v->producer, op, nin) ? v->producer
                                                                              : NULL;
}

/* R is a ReduceMean of X over its last axis, kept as size 1 */
static int mean_of_rows(const Node *r, const Value *x)
{
    return r && r->in[0] == x && x->rank >= 1 && x->dim[x->rank - 1] > 0 &&
           reduce_mean_axes((Node *)r) == 1ul << (x->rank - 1) && r->out[0]->rank == x->rank;
}

/* A constant float scalar other than NaN, into *v */
static int const_scalar(const Value *c, double *v)
{
    if (!c->data || numel(c) != 1 || !dtype_is_float(c->dt))
        return 0;
    *v = value_get_f(c, 0);
    return *v == *v;
}

/* The square of D: Pow(d, 2) or Mul(d, d) */
static int square_of(const Node *p, const Value *d)
{
    double k;
    if (is_op(p, "Mul", 2))
        return p->in[0] == d && p->in[1] == d;
    return is_op(p, "Pow", 2) && p->in[0] == d && const_scalar(p->in[1], &k) && k == 2;
}

/* The other operand of a binary N that reads V, if it is a float per feature of Y (one
 * value per last axis, the others 1) and N's output has Y's shape; *first: it is input 0. */
static Value *per_feature(const Node *n, const Value *v, const Value *y, int *first)
{
    if ((n->in[0] == v) == (n->in[1] == v) || !same_type(n->out[0], y))
        return NULL;
    Value *f = n->in[0] == v ? n->in[1] : n->in[0];
    *first = f == n->in[0];
    if (f->dt != DT_FLOAT || f->rank < 1 || f->rank > y->rank ||
        f->dim[f->rank - 1] != y->dim[y->rank - 1] || numel(f) != f->dim[f->rank - 1])
        return NULL;
    return f;
}

/* y = (x - mean) / sqrt(mean((x - mean)^2) + eps) over the last axis, as the seven nodes
 * ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (then a Mul by a scale and an Add of a
 * bias per feature) that the Div ends: the last node becomes NormChain, the others die. */
static int try_norm_chain(Graph *g, Node *div)
{
    if (!is_op(div, "Div", 2))
        return 0;
    NormChain c = {0};
    Value *d = div->in[0];
    Node *sq = made_by(div->in[1], "Sqrt", 1);
    Node *add = sq ? made_by(sq->in[0], "Add", 2) : NULL;
    if (!add)
        return 0;
    c.eps_first = const_scalar(add->in[0], &c.eps);
    Value *v = add->in[c.eps_first];
    if (!c.eps_first && !const_scalar(add->in[1], &c.eps))
        return 0;
    Node *var = made_by(v, "ReduceMean", -1);
    Node *p = var && var->in[0]->nuse == 1 && var->in[0]->result_index < 0
                  ? var->in[0]->producer : NULL;
    Node *sub = d->producer;
    if (!p || !square_of(p, d) || !is_op(sub, "Sub", 2) || d->result_index >= 0 ||
        d->nuse != (p->in[1] == d ? 3 : 2))
        return 0;
    Value *x = sub->in[0];
    Node *mean = made_by(sub->in[1], "ReduceMean", -1);
    if (!mean_of_rows(mean, x) || !mean_of_rows(var, p->out[0]) || !same_type(d, x) ||
        !same_type(p->out[0], x) || !same_type(div->out[0], x) ||
        !same_type(add->out[0], v) || !same_type(sq->out[0], v))
        return 0;
    Node *chain[9] = {mean, sub, p, var, add, sq, div}, *next;
    int n = 7;
    Value *in[3] = {x, NULL, NULL};
    if (is_op(next = sole_consumer(g, chain[n - 1]->out[0]), "Mul", 2) &&
        (in[1] = per_feature(next, chain[n - 1]->out[0], x, &c.scale_first)))
        chain[n++] = next;
    if (is_op(next = sole_consumer(g, chain[n - 1]->out[0]), "Add", 2) &&
        (in[2] = per_feature(next, chain[n - 1]->out[0], x, &c.bias_first)))
        chain[n++] = next;
    Node *last = chain[n - 1];
    NormChain *aux = xalloc(sizeof *aux);
    *aux = c;
    aux->scale = in[1] != NULL;
    aux->bias = in[2] != NULL;
    aux->was = strf("the %d nodes '%s' to '%s'", n, c_comment(mean->name),
                    c_comment(last->name));
    Value **ins = xalloc(3 * sizeof *ins);
    int nin = 0;
    for (int k = 0; k < 3; k++)
        if (in[k])
            ins[nin++] = in[k];
    for (int k = 0; k < n - 1; k++)
        chain[k]->dead = 1;
    x->nuse--;                          /* read by mean and sub, now by the chain's node */
    last->def = find_internal_op("NormChain");
    last->op = "NormChain";
    last->in = ins;
    last->nin = nin;
    last->aux = aux;
    return 1;
}

/* ---- GELU as torch exports nn.GELU ---- */

/* N's operand other than V if it is a constant float scalar (into *k), else NULL */
static const Value *other_const(const Node *n, const Value *v, double *k)
{
    const Value *o = n->in[0] == v ? n->in[1] : n->in[1] == v ? n->in[0] : NULL;
    return o && o->dt == DT_FLOAT && const_scalar(o, k) ? o : NULL;
}

/* Div(x, c) or Mul(x, c), Erf, Add of a constant, Mul by x, Mul by a constant, each but the
 * last read only by the next: the last becomes Gelu of x. */
static int try_gelu(Graph *g, Node *erf)
{
    if (!is_op(erf, "Erf", 1))
        return 0;
    Gelu c = {0};
    Node *scale = made_by(erf->in[0], "Div", 2), *add, *mx, *mh;
    c.div = scale != NULL;
    if (!scale)
        scale = made_by(erf->in[0], "Mul", 2);
    if (!scale || !(c.div ? scale->in[1]->dt == DT_FLOAT && const_scalar(scale->in[1], &c.c)
                          : other_const(scale, scale->in[0], &c.c) ||
                            other_const(scale, scale->in[1], &c.c)))
        return 0;
    Value *x = c.div || scale->in[1]->data ? scale->in[0] : scale->in[1];
    if (!is_op(add = sole_consumer(g, erf->out[0]), "Add", 2) ||
        !other_const(add, erf->out[0], &c.one) ||
        !is_op(mx = sole_consumer(g, add->out[0]), "Mul", 2) ||
        !((mx->in[0] == x && mx->in[1] == add->out[0]) ||
          (mx->in[1] == x && mx->in[0] == add->out[0])) ||
        !is_op(mh = sole_consumer(g, mx->out[0]), "Mul", 2) ||
        !other_const(mh, mx->out[0], &c.half) || x->dt != DT_FLOAT)
        return 0;
    Node *chain[5] = {scale, erf, add, mx, mh};
    for (int k = 0; k < 5; k++)
        if (!same_type(chain[k]->out[0], x))
            return 0;
    Gelu *aux = xalloc(sizeof *aux);
    *aux = c;
    aux->was = strf("the 5 nodes '%s' to '%s'", c_comment(scale->name), c_comment(mh->name));
    for (int k = 0; k < 4; k++)
        chain[k]->dead = 1;
    x->nuse--;                          /* read by the scale and by mx, now by the Gelu */
    mh->def = find_internal_op("Gelu");
    mh->op = "Gelu";
    mh->in[0] = x;
    mh->nin = 1;
    mh->aux = aux;
    return 1;
}

/* B, a bias of Y: one value per last axis of Y's (its other axes 1), or one in all */
static int is_bias(const Value *b, const Value *y)
{
    if (b->dt != DT_FLOAT || b->rank > y->rank)
        return 0;
    for (int k = 0; k < b->rank - 1; k++)
        if (b->dim[k] != 1)
            return 0;
    return b->rank == 0 || b->dim[b->rank - 1] == 1 || b->dim[b->rank - 1] == y->dim[y->rank - 1];
}

static int try_matmul_add(Graph *g, Node *mm)
{
    if (strcmp(mm->op, "MatMul") || *mm->domain || mm->nin != 2 || mm->nout != 1 ||
        !mm->out[0] || mm->out[0]->dt != DT_FLOAT || mm->in[1]->rank < 2)
        return 0;
    Value *y = mm->out[0];
    Node *add = sole_consumer(g, y);
    if (!add || strcmp(add->op, "Add") || *add->domain || add->nin != 2 || add->nout != 1 ||
        !add->out[0] || !same_type(add->out[0], y))
        return 0;
    Value *bias = add->in[0] == y ? add->in[1] : add->in[0];
    if (bias == y || !is_bias(bias, y))
        return 0;
    Value **in = xalloc(3 * sizeof *in);
    in[0] = mm->in[0], in[1] = mm->in[1], in[2] = bias;
    add->op = mm->op;
    add->def = mm->def;
    add->opset = mm->opset;
    add->name = mm->name;
    add->in = in;
    add->nin = 3;
    add->attr = mm->attr;
    add->nattr = mm->nattr;
    return 1;
}

/* ---- Transposes that cancel ---- */

static int is_transpose(const Node *n)
{
    return n && !n->dead && !strcmp(n->op, "Transpose") && !*n->domain && n->nin == 1 &&
           n->nout == 1 && n->out[0];
}

/* A Transpose of a Transpose whose permutations compose to the identity (torch's x.transpose
 * (1, 2) undone by the next layer), read by it alone: the second becomes an Identity of the
 * first's input, which shares its buffer (plan.c); no element moves. */
static int try_transpose_pair(Graph *g, Node *t2)
{
    if (!is_transpose(t2))
        return 0;
    Value *mid = t2->in[0];
    Node *t1 = mid->producer;
    if (!is_transpose(t1) || sole_consumer(g, mid) != t2)
        return 0;
    int r = mid->rank, p1[MLBC_MAX_RANK], p2[MLBC_MAX_RANK];
    transpose_perm(t1, r, p1);
    transpose_perm(t2, r, p2);
    for (int i = 0; i < r; i++)
        if (p1[p2[i]] != i)
            return 0;
    t2->def = find_op("Identity");
    t2->op = "Identity";
    t2->in[0] = t1->in[0];
    t2->nattr = 0;
    t1->dead = 1;                       /* uses counted as remove_dead would */
    mid->nuse = 0;
    return 1;
}

/* A Transpose read only by a float ReduceSum or ReduceMean that sums what it would sum, in
 * the same order, from the Transpose's input (torch's x.transpose(1, 2).mean(1) over a
 * sequence: reduce_takes_transpose): the Reduce reads that input, and nothing is copied. */
static int try_transpose_reduce(Graph *g, Node *r)
{
    if (r->nin < 1 || !r->in[0])
        return 0;
    Value *v = r->in[0];
    Node *t = v->producer;
    if (!is_transpose(t) || sole_consumer(g, v) != r)
        return 0;
    int perm[MLBC_MAX_RANK];
    transpose_perm(t, v->rank, perm);
    if (!reduce_takes_transpose(r, t->in[0], perm))
        return 0;
    t->dead = 1;                        /* uses counted as remove_dead would */
    v->nuse = 0;
    return 1;
}

int fuse_graph(Graph *g)
{
    int fused = 0;
    /* SiLU first: a Conv before it then takes it whole */
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead)
            fused += try_silu(g, g->nodes[i]) || try_norm_chain(g, g->nodes[i]) ||
                     try_gelu(g, g->nodes[i]) || try_transpose_pair(g, g->nodes[i]) ||
                     try_transpose_reduce(g, g->nodes[i]);
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead)
            fused += try_bucketize(g, g->nodes[i]) || try_conv_bn(g, g->nodes[i]) ||
                     try_conv_act(g, g->nodes[i]) ||
                     try_conv_pool(g, g->nodes[i]) || try_matmul_add(g, g->nodes[i]);
    return fused;
}
