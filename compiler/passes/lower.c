/* lower.c - control flow (If, Loop, Scan) and legacy broadcasting lowered to plain nodes
 * during inference.
 *
 * Generated code has fixed shapes and allocates nothing, so control flow is resolved at
 * compile time. When the inference sweep reaches a control-flow node (its inputs inferred,
 * and folded where constant), copies of its subgraphs' nodes replace it; they are inferred
 * and folded as they are made, so a nested If, Loop or Scan is lowered in turn, and go into
 * the schedule right after the node (infer.c).
 *
 * If with a constant condition keeps the taken branch. With a run-time condition both
 * branches run and Where selects each output, so both must give the same type and shape.
 * Loop and Scan are unrolled: the iteration count must be known here, and each iteration's
 * number is a constant, which makes bodies that index with it static. What the unrolling
 * assumes of run-time values (a Loop's trip count and initial condition) is checked at run
 * time: run() returns 2 otherwise.
 *
 * Legacy broadcasting (opset < 7: broadcast=1 with an axis, PRelu's per-channel slope)
 * becomes the opset-7 op on B unsqueezed to line up at that axis.
 *
 * Names: a subgraph sees the names of the graphs around it (ONNX scoping, through Env,
 * scope.c).
 * Each copy of a subgraph gets its own values and nodes, named "<node>/<copy>/<name>".
 */
#include <string.h>

#include "mlbc.h"

/* ---- nodes and values made by a lowering ---- */

/* The limit holds for the whole graph: what earlier control-flow nodes made (g->lowered)
 * plus this node's splice, where everything nested in it adds too. A copy of a subgraph
 * counts as one node more, so that copies of an empty body (a loop that only passes its
 * state on) cannot go on forever. */
static int over_budget(const Splice *s, size_t more)
{
    return (size_t)s->g->lowered + (size_t)s->nnodes + (size_t)s->copies + more >
           MLBC_MAX_UNROLLED_NODES;
}

static void budget(Splice *s, Node *ctl, size_t more)
{
    if (over_budget(s, more))
        node_die(ctl, "lowering it would make more than %d nodes with the model's other "
                 "control flow: mlbc unrolls control flow (the limit is "
                 "MLBC_MAX_UNROLLED_NODES in config.h)", MLBC_MAX_UNROLLED_NODES);
}

/* A node made by the lowering of CTL itself (not copied from a subgraph). */
static Node *made_node(Splice *s, Node *ctl, const char *op, Value **in, int nin, int nout)
{
    Node *n = xalloc(sizeof *n);
    n->op = op;
    n->domain = "";
    n->name = strf("%s/%s.%d", ctl->name, op, s->nnodes);
    n->opset = ctl->opset > 13 ? ctl->opset : 13;  /* opset-13 forms: Unsqueeze takes axes */
    n->nin = nin;
    n->nout = nout;
    n->in = xalloc(sizeof(Value *) * (nin + 1));
    memcpy(n->in, in, sizeof(Value *) * nin);
    n->out = xalloc(sizeof(Value *) * (nout + 1));
    return n;
}

/* OP of the default domain on IN, with an int attribute ATTR (unless NULL) of value K.
 * Its output is OUT (a value of the control-flow node), or a new value if OUT is NULL. */
static Value *plain(Splice *s, Node *ctl, const char *op, Value **in, int nin,
                    const char *attr_name, int64_t k, Value *out)
{
    Node *n = made_node(s, ctl, op, in, nin, 1);
    if (attr_name) {
        Onnx__AttributeProto *a = xalloc(sizeof *a);
        onnx__attribute_proto__init(a);
        a->name = (char *)attr_name;
        a->has_type = a->has_i = 1;
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        a->i = k;
        n->attr = xalloc(sizeof *n->attr);
        n->attr[0] = a;
        n->nattr = 1;
    }
    n->out[0] = out ? out : new_value(s->g, n->name);
    n->out[0]->producer = n;
    splice_node(s, n);
    return n->out[0];
}

/* A scalar of type DT holding X, or with LEN >= 0 a vector of LEN copies of X. */
static Value *constant(Splice *s, Node *ctl, DType dt, int len, int64_t x)
{
    Value *v = new_value(s->g, strf("%s/const.%d", ctl->name, s->g->nvalues));
    v->dt = dt;
    v->rank = len >= 0;
    v->dim[0] = len;
    alloc_data(v);
    for (int64_t i = 0; i < numel(v); i++)
        value_set_i(v, i, x);
    return v;
}

/* DST = a copy of SRC; nothing if DST is an omitted output. */
static void connect(Splice *s, Node *ctl, Value *src, Value *dst)
{
    if (dst)
        plain(s, ctl, "Identity", &src, 1, NULL, 0, dst);
}

/* DST = the N values ITEMS stacked on a new axis AXIS, in reverse order if REVERSE. */
static void stack(Splice *s, Node *ctl, Value **items, int64_t n, int axis, int reverse,
                  Value *dst)
{
    Value **parts = xalloc(sizeof(Value *) * n);
    Value *axes = constant(s, ctl, DT_INT64, 1, axis);
    for (int64_t i = 0; i < n; i++) {
        Value *in[2] = {items[reverse ? n - 1 - i : i], axes};
        parts[i] = plain(s, ctl, "Unsqueeze", in, 2, NULL, 0, n == 1 ? dst : NULL);
    }
    if (n > 1)
        plain(s, ctl, "Concat", parts, (int)n, "axis", axis, dst);
}

/* ---- run-time checks of what an unrolling assumed ---- */

/* At run time, scalar X CMP K must hold, or run() returns 2 saying WHY. The check goes to
 * position AT of s, before what it guards: X is an input of the control-flow node. */
static void guard(Splice *s, Node *ctl, int at, Value *x, const char *cmp, int64_t k,
                  const char *why)
{
    Guard *g = xalloc(sizeof *g);
    *g = (Guard){cmp, k, why};
    Node *n = made_node(s, ctl, "Check", &x, 1, 0);
    n->def = find_internal_op("Check");
    n->aux = g;
    n->keep = 1;
    splice_node(s, n);
    memmove(s->nodes + at + 1, s->nodes + at, sizeof(Node *) * (s->nnodes - 1 - at));
    s->nodes[at] = n;
}

/* ---- copies of subgraphs ---- */

typedef struct Body {
    Node *ctl;                          /* the control-flow node */
    const char *attr;                   /* its graph attribute */
    const Onnx__GraphProto *g;
    Env *invariant;                     /* initializers and Constant nodes: one copy */
    Value **index;                      /* int64 scalars 0, 1, ...: iteration numbers */
    int64_t nindex;
} Body;

static void bind(Body *b, Env *env, const char *name, Value *v)
{
    if (!env_bind(env, name, v))
        node_die(b->ctl, "subgraph '%s' defines '%s' more than once", b->attr, name);
}

static void bind_input(Body *b, Env *env, const Onnx__ValueInfoProto *vi, Value *v)
{
    const Onnx__TypeProto *tp = vi->type;
    if (tp && tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        node_die(b->ctl, "subgraph '%s': input '%s' is not a tensor (only tensors are "
                 "supported)", b->attr, vi->name);
    if (tp && tp->tensor_type->has_elem_type && (DType)tp->tensor_type->elem_type != v->dt)
        node_die(b->ctl, "subgraph '%s' declares input '%s' as %s but is given %s '%s'",
                 b->attr, vi->name, dtype_name((DType)tp->tensor_type->elem_type),
                 dtype_name(v->dt), v->name);
    bind(b, env, vi->name, v);
}

/* Made once for every copy: constants cannot differ between iterations. */
static int invariant(const Onnx__NodeProto *np)
{
    return np->n_input == 0 && np->op_type && !strcmp(np->op_type, "Constant");
}

/* Node K of b's subgraph made plain in copy COPY (names in ENV) and spliced. */
static void copy_node(Splice *s, Body *b, Env *env, size_t k, const char *copy)
{
    const Onnx__NodeProto *np = b->g->node[k];
    const char *base = np->name && *np->name ? np->name : strf("#%zu", k);
    const char *prefix = strf("%s/%s/", b->ctl->name, copy);
    Node *n = new_node(np, strf("%s%s", prefix, base), b->ctl->opset);
    for (int i = 0; i < n->nin; i++)
        if (*np->input[i] && !(n->in[i] = env_find(env, np->input[i])))
            node_die(b->ctl, "subgraph '%s': node '%s' uses '%s', which is not defined before "
                     "it", b->attr, base, np->input[i]);
    for (int i = 0; i < n->nout; i++)
        if (*np->output[i]) {
            n->out[i] = new_value(s->g, strf("%s%s", prefix, np->output[i]));
            n->out[i]->producer = n;
            bind(b, env, np->output[i], n->out[i]);
        }
    n->env = env;  /* a nested If, Loop or Scan sees this copy's names */
    splice_node(s, n);
}

/* Graph attribute NAME of CTL, with NIN inputs and NOUT outputs. */
static Body body_of(Splice *s, Node *ctl, const char *name, int nin, int nout)
{
    Onnx__AttributeProto *a = attr(ctl, name);
    if (!a || !a->g)
        node_die(ctl, "the graph attribute '%s' is required", name);
    Body b = {ctl, name, a->g, env_new(ctl->env), NULL, 0};
    if ((int)b.g->n_input != nin || (int)b.g->n_output != nout)
        node_die(ctl, "subgraph '%s' has %zu inputs and %zu outputs, but %d and %d are "
                 "expected", name, b.g->n_input, b.g->n_output, nin, nout);
    if (b.g->n_sparse_initializer)
        node_die(ctl, "subgraph '%s' has sparse initializers, which are not supported", name);
    for (size_t i = 0; i < b.g->n_initializer; i++) {
        const Onnx__TensorProto *t = b.g->initializer[i];
        Value *v = new_value(s->g, strf("%s/%s/%s", ctl->name, name, t->name));
        tensor_to_value(t, v);
        bind(&b, b.invariant, t->name, v);
    }
    for (size_t k = 0; k < b.g->n_node; k++)
        if (invariant(b.g->node[k]))
            copy_node(s, &b, b.invariant, k, name);
    return b;
}

/* The int64 scalar I (an iteration number or an index), one value per body. */
static Value *index_of(Splice *s, Body *b, int64_t i)
{
    if (i >= b->nindex) {
        int64_t cap = 2 * i + 8;
        Value **p = xalloc(sizeof(Value *) * cap);
        if (b->nindex)
            memcpy(p, b->index, sizeof(Value *) * b->nindex);
        b->index = p;
        b->nindex = cap;
    }
    if (!b->index[i])
        b->index[i] = constant(s, b->ctl, DT_INT64, -1, i);
    return b->index[i];
}

/* One copy of b's subgraph named COPY, its inputs bound to ARGS, its nodes made plain and
 * spliced (nested control flow lowered in turn); returns the values of its outputs. */
static Value **instantiate(Splice *s, Body *b, Value **args, const char *copy)
{
    budget(s, b->ctl, b->g->n_node + 1);
    s->copies++;
    Env *env = env_new(b->invariant);
    for (size_t i = 0; i < b->g->n_input; i++)
        bind_input(b, env, b->g->input[i], args[i]);
    for (size_t k = 0; k < b->g->n_node; k++)
        if (!invariant(b->g->node[k]))
            copy_node(s, b, env, k, copy);
    Value **out = xalloc(sizeof(Value *) * (b->g->n_output + 1));
    for (size_t i = 0; i < b->g->n_output; i++)
        if (!(out[i] = env_find(env, b->g->output[i]->name)))
            node_die(b->ctl, "subgraph '%s': output '%s' is not defined", b->attr,
                     b->g->output[i]->name);
    return out;
}

/* Slice I of X along AXIS, without that axis. */
static Value *slice(Splice *s, Body *b, Value *x, int axis, int64_t i)
{
    Value *in[2] = {x, index_of(s, b, i)};
    return plain(s, b->ctl, "Gather", in, 2, "axis", axis, NULL);
}

/* Inputs FROM .. FROM + COUNT - 1 of N carry state: none may be omitted. */
static void need_state(Node *n, int from, int count)
{
    for (int i = from; i < from + count; i++)
        if (!n->in[i])
            node_die(n, "input %d (a state value) is required", i);
}

static void need_bool_scalar(Node *n, Value *v, const char *what)
{
    need_scalar(n, v, what);
    if (v->dt != DT_BOOL)
        node_die(n, "%s '%s' must be bool, not %s", what, v->name, dtype_name(v->dt));
}

/* ---- If ---- */

static int same_type_shape(const Value *a, const Value *b)
{
    return a->dt == b->dt && a->rank == b->rank &&
           !memcmp(a->dim, b->dim, sizeof(int64_t) * a->rank);
}

static void lower_if(Splice *s, Node *n)
{
    Value *c = need_input(n, 0, "cond");
    need_bool_scalar(n, c, "the condition");
    if (c->data) {
        int taken = value_get_i(c, 0) != 0;
        const char *name = taken ? "then_branch" : "else_branch";
        Body b = body_of(s, n, name, 0, n->nout);
        Value **r = instantiate(s, &b, NULL, name);
        for (int k = 0; k < n->nout; k++)
            connect(s, n, r[k], n->out[k]);
        return;
    }
    /* Known at run time only: both branches run, then each output is selected. */
    Body tb = body_of(s, n, "then_branch", 0, n->nout);
    Value **t = instantiate(s, &tb, NULL, "then_branch");
    Body eb = body_of(s, n, "else_branch", 0, n->nout);
    Value **e = instantiate(s, &eb, NULL, "else_branch");
    if (c->rank) {  /* [1] would broadcast scalar outputs to [1] */
        Value *in[2] = {c, constant(s, n, DT_INT64, 0, 0)};
        c = plain(s, n, "Reshape", in, 2, NULL, 0, NULL);
    }
    for (int k = 0; k < n->nout; k++) {
        if (!n->out[k])
            continue;
        if (!same_type_shape(t[k], e[k]))
            node_die(n, "output %d is %s%s from then_branch but %s%s from else_branch; the "
                     "condition is only known at run time, so both branches run and must "
                     "agree", k, dtype_name(t[k]->dt), shape_str(t[k]), dtype_name(e[k]->dt),
                     shape_str(e[k]));
        Value *in[3] = {c, t[k], e[k]};
        plain(s, n, "Where", in, 3, NULL, 0, n->out[k]);
    }
}

/* ---- Scan ---- */

typedef struct Scan {
    Body b;
    int nstate, nin, nout;              /* state values, scan inputs, scan outputs */
    int64_t *in_axis, *in_rev, *out_axis, *out_rev;
    int64_t len;                        /* iterations */
} Scan;

/* Attribute NAME: COUNT flags or axes, zeros if absent (or if NAME is NULL). */
static int64_t *scan_ints(Node *n, const char *name, int count)
{
    int64_t *v = xalloc(sizeof(int64_t) * (count + 1));
    int got = name ? attr_ints(n, name, v, count + 1) : -1;
    if (got >= 0 && got != count)
        node_die(n, "attribute '%s' has %d values; %d are expected", name, got, count);
    return v;
}

/* Runs the iterations over the scan inputs XS (each scanned along its axis); ST holds the
 * initial state and gets the final one; YS[j][t] is scan output j of iteration t. */
static void unroll_scan(Splice *s, Scan *sc, Value **st, Value **xs, Value ***ys,
                        const char *copy)
{
    Value **args = xalloc(sizeof(Value *) * (sc->nstate + sc->nin + 1));
    for (int64_t t = 0; t < sc->len; t++) {
        memcpy(args, st, sizeof(Value *) * sc->nstate);
        for (int j = 0; j < sc->nin; j++)
            args[sc->nstate + j] = slice(s, &sc->b, xs[j], (int)sc->in_axis[j],
                                         sc->in_rev[j] ? sc->len - 1 - t : t);
        Value **r = instantiate(s, &sc->b, args, strf("%s%lld", copy, (long long)t));
        memcpy(st, r, sizeof(Value *) * sc->nstate);
        for (int j = 0; j < sc->nout; j++)
            ys[j][t] = r[sc->nstate + j];
    }
}

/* The common length of the scan inputs XS along their axes (after BATCH leading axes). */
static int64_t scan_length(Node *n, Scan *sc, Value **xs, int batch)
{
    for (int j = 0; j < sc->nin; j++) {
        Value *x = xs[j];
        if (!x)
            node_die(n, "scan input %d is missing", j);
        if (x->rank < 1 + batch)
            node_die(n, "scan input '%s' is %s; it needs an axis to scan", x->name,
                     shape_str(x));
        sc->in_axis[j] = norm_axis(n, sc->in_axis[j], x->rank - batch);
        int64_t len = x->dim[batch + sc->in_axis[j]];
        if (j && len != sc->len)
            node_die(n, "scan inputs have different lengths (%lld and %lld)",
                     (long long)sc->len, (long long)len);
        sc->len = len;
    }
    if (sc->len == 0)
        node_die(n, "the scan inputs are empty; scans of no iterations are not supported");
    return sc->len;
}

static Value ***scan_outputs(Scan *sc)
{
    Value ***ys = xalloc(sizeof(Value **) * (sc->nout + 1));
    for (int j = 0; j < sc->nout; j++)
        ys[j] = xalloc(sizeof(Value *) * sc->len);
    return ys;
}

/* Opset 9 and later: axes and directions per scan input and output. */
static void lower_scan9(Splice *s, Node *n, Scan *sc)
{
    Value **st = xalloc(sizeof(Value *) * (sc->nstate + 1));
    memcpy(st, n->in, sizeof(Value *) * sc->nstate);
    sc->in_axis = scan_ints(n, "scan_input_axes", sc->nin);
    sc->in_rev = scan_ints(n, "scan_input_directions", sc->nin);
    sc->out_axis = scan_ints(n, "scan_output_axes", sc->nout);
    sc->out_rev = scan_ints(n, "scan_output_directions", sc->nout);
    scan_length(n, sc, n->in + sc->nstate, 0);
    Value ***ys = scan_outputs(sc);
    unroll_scan(s, sc, st, n->in + sc->nstate, ys, "");
    for (int k = 0; k < sc->nstate; k++)
        connect(s, n, st[k], n->out[k]);
    for (int j = 0; j < sc->nout; j++) {
        Value *y = n->out[sc->nstate + j];
        if (y)
            stack(s, n, ys[j], sc->len, norm_axis(n, sc->out_axis[j], ys[j][0]->rank + 1),
                  (int)sc->out_rev[j], y);
    }
}

/* Opset 8: axis 0 of every state, input and output is a batch axis (the body sees one batch
 * element: the batch is unrolled too), the scan axis is 1, and sequence_lens comes first. */
static void lower_scan8(Splice *s, Node *n, Scan *sc)
{
    Value *lens = n->in[0], **init = n->in + 1, **xs = n->in + 1 + sc->nstate;
    sc->in_axis = scan_ints(n, NULL, sc->nin);  /* axis 0 of a batch element */
    sc->in_rev = scan_ints(n, "directions", sc->nin);
    sc->out_rev = scan_ints(n, NULL, sc->nout);
    scan_length(n, sc, xs, 1);
    int64_t batch = xs[0]->dim[0];
    for (int k = 0; k < sc->nstate + sc->nin; k++)
        if (!init[k] || init[k]->rank < 1 || init[k]->dim[0] != batch)
            node_die(n, "input %d must have the batch size %lld as its first dimension", k + 1,
                     (long long)batch);
    if (lens) {
        int full = lens->data != NULL && numel(lens) == batch;
        for (int64_t i = 0; full && i < batch; i++)
            full = value_get_i(lens, i) == sc->len;
        if (!full)
            node_die(n, "sequence_lens must be absent or constant with every length %lld "
                     "(the scan length); shorter sequences are not supported",
                     (long long)sc->len);
    }
    int nres = sc->nstate + sc->nout;
    Value ***per_batch = xalloc(sizeof(Value **) * (nres + 1));  /* [result][batch] */
    for (int k = 0; k < nres; k++)
        per_batch[k] = xalloc(sizeof(Value *) * batch);
    Value **st = xalloc(sizeof(Value *) * (sc->nstate + 1));
    Value **xb = xalloc(sizeof(Value *) * (sc->nin + 1));
    for (int64_t i = 0; i < batch; i++) {
        for (int k = 0; k < sc->nstate; k++)
            st[k] = slice(s, &sc->b, init[k], 0, i);
        for (int j = 0; j < sc->nin; j++)
            xb[j] = slice(s, &sc->b, xs[j], 0, i);
        Value ***ys = scan_outputs(sc);
        unroll_scan(s, sc, st, xb, ys, strf("%lld.", (long long)i));
        for (int k = 0; k < sc->nstate; k++)
            per_batch[k][i] = st[k];
        for (int j = 0; j < sc->nout; j++) {
            Value *y = NULL;
            if (n->out[sc->nstate + j]) {
                y = new_value(s->g, strf("%s/%lld/scan%d", n->name, (long long)i, j));
                stack(s, n, ys[j], sc->len, 0, (int)sc->out_rev[j], y);
            }
            per_batch[sc->nstate + j][i] = y;
        }
    }
    for (int k = 0; k < nres; k++)
        if (n->out[k])
            stack(s, n, per_batch[k], batch, 0, 0, n->out[k]);
}

static void lower_scan(Splice *s, Node *n)
{
    int batched = n->opset < 9;
    int64_t nin = attr_int(n, "num_scan_inputs", 0);
    if (nin < 1 || nin > n->nin - batched || n->nout < n->nin - batched - nin)
        node_die(n, "num_scan_inputs %lld does not fit %d inputs and %d outputs",
                 (long long)nin, n->nin, n->nout);
    int nstate = n->nin - batched - (int)nin;
    need_state(n, batched, nstate);
    Scan sc = {body_of(s, n, "body", nstate + (int)nin, n->nout), nstate, (int)nin,
               n->nout - nstate, NULL, NULL, NULL, NULL, 0};
    if (batched)
        lower_scan8(s, n, &sc);
    else
        lower_scan9(s, n, &sc);
}

/* ---- Loop ---- */

/* The iteration count if it is known: a constant M, else the first dimension a scan output
 * declares; -1 if neither. */
static int64_t trip_limit(Node *n, Value *m, int nstate)
{
    if (m && m->data)
        return value_get_i(m, 0) > 0 ? value_get_i(m, 0) : 0;
    for (int k = nstate; k < n->nout; k++) {
        Value *y = n->out[k];
        if (y && y->decl_rank >= 1 && y->decl_dim[0] >= 0)
            return y->decl_dim[0];
    }
    return -1;
}

/* For the message when no trip count is known: a symbolic first dimension to bind. */
static const char *symbolic_trips(Node *n, int nstate)
{
    for (int k = nstate; k < n->nout; k++) {
        Value *y = n->out[k];
        if (y && y->decl_rank >= 1 && y->decl_sym[0])
            return strf(" ('%s' declares '%s': bind it with --dim %s=COUNT)", y->name,
                        y->decl_sym[0], y->decl_sym[0]);
    }
    return " (value_info or graph output)";
}

static void lower_loop(Splice *s, Node *n)
{
    if (n->nin < 2)
        node_die(n, "inputs M and cond are required (either may be the empty name)");
    Value *m = n->in[0], *c = n->in[1];
    int nstate = n->nin - 2, nscan = n->nout - nstate;
    if (nscan < 0)
        node_die(n, "has %d loop-carried inputs but only %d outputs", nstate, n->nout);
    if (m) {
        need_scalar(n, m, "the trip count");
        if (m->dt != DT_INT64)
            node_die(n, "the trip count '%s' must be int64, not %s", m->name,
                     dtype_name(m->dt));
    }
    if (c)
        need_bool_scalar(n, c, "the condition");
    need_state(n, 2, nstate);
    int start = s->nnodes;
    Body b = body_of(s, n, "body", 2 + nstate, 1 + nstate + nscan);
    int never = c && c->data && !value_get_i(c, 0);
    int64_t limit = never ? 0 : trip_limit(n, m, nstate);

    Value **st = n->in + 2, ***iters = NULL, *yes = constant(s, n, DT_BOOL, -1, 1);
    Value **args = xalloc(sizeof(Value *) * (nstate + 3));
    int t = 0, cap = 0;
    int stopped = 0;  /* by the body's condition */
    for (; !stopped && (limit < 0 || t < limit); t++) {
        if (limit < 0 && over_budget(s, b.g->n_node + 1))
            node_die(n, "the trip count is not known at compile time: M is %s, no scan output "
                     "declares a static first dimension%s, and the condition does not become "
                     "false within the unrolling limit", m ? "only known at run time" : "absent",
                     symbolic_trips(n, nstate));
        /* The condition is true on entry: checked below when only known at run time. */
        args[0] = index_of(s, &b, t);
        args[1] = yes;
        memcpy(args + 2, st, sizeof(Value *) * nstate);
        iters = xgrow(iters, t, &cap, sizeof *iters);
        Value **r = iters[t] = instantiate(s, &b, args, strf("%d", t));
        need_bool_scalar(n, r[0], "the body's condition");
        if (!r[0]->data)
            node_die(n, "the body's condition is only known at run time (iteration %lld): a "
                     "data-dependent early exit cannot be unrolled; the condition must pass "
                     "through or be constant", (long long)t);
        stopped = !value_get_i(r[0], 0);
        st = r + 1;
    }
    if (t && c && !c->data)
        guard(s, n, start, c, "!=", 0, "Loop: the initial condition is false, but the loop was "
              "unrolled for a true one");
    if (m && !m->data && !never)
        guard(s, n, start, m, stopped ? ">=" : "==", t, stopped
              ? "Loop: the trip count is below the iterations the body's condition allows"
              : "Loop: the trip count differs from the iteration count the model declares");
    for (int k = 0; k < nstate; k++)
        connect(s, n, st[k], n->out[k]);
    for (int j = 0; j < nscan; j++) {
        Value *y = n->out[nstate + j];
        if (!y)
            continue;
        if (!t)
            node_die(n, "the loop runs no iterations, so scan output '%s' would be empty; "
                     "that is not supported", y->name);
        Value **items = xalloc(sizeof(Value *) * t);
        for (int64_t i = 0; i < t; i++)
            items[i] = iters[i][1 + nstate + j];
        stack(s, n, items, t, 0, 0, y);
    }
}

/* ---- legacy broadcasting (opset < 7) ---- */

/* Before opset 7 a binary op broadcast B onto A only with the attribute broadcast=1: B's
 * dimensions are A's from `axis` on (suffix matching when absent), or 1, or B has one element. And
 * PRelu's slope of C values was per channel (axis 1 of X). The opset-7 op gives the same
 * result once B has 1-dimensions after its own up to A's rank: numpy broadcasting then
 * aligns it at `axis`. Returns the axis, or -1 where numpy broadcasting already agrees. */
static int legacy_axis(Node *n)
{
    static const char *const binary[] = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor",
                                         "Equal", "Greater", "Less"};
    if (n->opset >= 7 || *n->domain || n->nin != 2 || !n->in[0] || !n->in[1])
        return -1;
    const Value *a = n->in[0], *b = n->in[1];
    if (!strcmp(n->op, "PRelu"))
        return a->rank > 2 && b->rank == 1 && b->dim[0] == a->dim[1] && b->dim[0] != 1 ? 1 : -1;
    int legacy = 0;
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
        legacy |= !strcmp(n->op, binary[i]);
    if (!legacy || !attr_int(n, "broadcast", 0) || numel(b) == 1 || !attr(n, "axis"))
        return -1;
    int64_t axis = attr_int(n, "axis", 0);
    if (axis < 0 || axis + b->rank > a->rank)
        node_die(n, "axis %lld does not place B %s within A %s (broadcast=1, opset %d)",
                 (long long)axis, shape_str(b), shape_str(a), n->opset);
    for (int i = 0; i < b->rank; i++)   /* a 1 broadcasts: ONNX Runtime, PyTorch's exports */
        if (b->dim[i] != a->dim[axis + i] && b->dim[i] != 1)
            node_die(n, "B %s does not match A %s from axis %lld (broadcast=1, opset %d)",
                     shape_str(b), shape_str(a), (long long)axis, n->opset);
    return axis + b->rank == a->rank ? -1 : (int)axis;
}

/* N as its opset-7 form: B unsqueezed to end at A's last axis, then the op itself. */
static void lower_legacy(Splice *s, Node *n, int axis)
{
    Value *b = n->in[1];
    Value *axes = constant(s, n, DT_INT64, n->in[0]->rank - axis - b->rank, 0);
    for (int64_t i = 0; i < numel(axes); i++)
        value_set_i(axes, i, b->rank + i);
    Value *unsqueeze[2] = {b, axes};
    Value *in[2] = {n->in[0], plain(s, n, "Unsqueeze", unsqueeze, 2, NULL, 0, NULL)};
    plain(s, n, n->op, in, 2, NULL, 0, n->out[0]);
}

static const struct {
    const char *op;
    void (*lower)(Splice *s, Node *n);
} lowerings[] = {{"If", lower_if}, {"Loop", lower_loop}, {"Scan", lower_scan}};

int lower_node(Splice *s, Node *n)
{
    int axis = legacy_axis(n);
    if (axis >= 0) {
        n->dead = 1;
        lower_legacy(s, n, axis);
        return 1;
    }
    for (size_t i = 0; i < sizeof lowerings / sizeof lowerings[0]; i++)
        if (!strcmp(n->op, lowerings[i].op)) {
            n->dead = 1;  /* what the lowering splices replaces it */
            lowerings[i].lower(s, n);
            return 1;
        }
    return 0;
}
