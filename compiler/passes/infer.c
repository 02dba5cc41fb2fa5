/* infer.c - type and shape inference and constant folding.
 *
 * One sweep in schedule order: infer a node's outputs, then fold it if all its inputs are
 * constant. Folding as we go lets later shape rules see folded values (the
 * Shape -> Gather -> Concat -> Reshape chains of exported PyTorch models). A control-flow
 * node (If, Loop, Scan) is lowered when the sweep reaches it: plain nodes replace it, inferred
 * and folded as they are made (lower.c), and go into the schedule right after it.
 */
#include <string.h>

#include "mlbc.h"

static void bind_op(Node *n)
{
    n->def = find_op(n->op);
    if (!n->def)
        die("unsupported op '%s' (node '%s', opset %d)", n->op, n->name, n->opset);
}

static int all_const(const Node *n)
{
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] && !n->in[i]->data)
            return 0;
    return 1;
}

/* A declared type or static shape that disagrees with inference is an error in the model. */
static void check_declared(Node *n, const Value *v)
{
    if (v->decl_dt && v->decl_dt != v->dt)
        node_die(n, "'%s' is declared %s but computes %s", v->name, dtype_name(v->decl_dt),
                 dtype_name(v->dt));
    if (v->decl_rank < 0)
        return;
    int bad = v->decl_rank != v->rank;
    for (int i = 0; i < v->rank && !bad; i++)
        bad = v->decl_dim[i] >= 0 && v->decl_dim[i] != v->dim[i];
    if (bad)
        node_die(n, "'%s' is declared with a shape of rank %d that disagrees with the "
                 "inferred shape %s", v->name, v->decl_rank, shape_str(v));
}

static void infer_node(Node *n)
{
    /* the op's rules may take output 0 as given */
    if ((n->nout < 1 || !n->out[0]) && !op_has(n, OP_OPTIONAL_OUT0))
        node_die(n, "output 0 is required (it has no name)");
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] && n->in[i]->rank < 0)
            node_die(n, "input '%s' has no known shape", n->in[i]->name);
    n->def->infer(n);
    for (int i = 0; i < n->nout; i++) {
        Value *v = n->out[i];
        if (!v)
            continue;
        if (v->rank < 0 || !v->dt)
            node_die(n, "could not infer the shape of output '%s'", v->name);
        check_declared(n, v);
    }
}

static void fold_node(Node *n)
{
    if (!n->def->fold || !all_const(n))
        return;
    for (int i = 0; i < n->nout; i++)
        if (n->out[i])
            alloc_data(n->out[i]);
    if (n->def->fold(n)) {
        n->dead = 1;
        return;
    }
    for (int i = 0; i < n->nout; i++)
        if (n->out[i])
            n->out[i]->data = NULL;
}

/* Some rules know their result from shapes alone (Shape, Size): infer sets the data. */
static int outputs_known(const Node *n)
{
    for (int i = 0; i < n->nout; i++)
        if (n->out[i] && !n->out[i]->data)
            return 0;
    return !n->keep;
}

static void infer_fold(Node *n)
{
    infer_node(n);
    if (outputs_known(n))
        n->dead = 1;
    else
        fold_node(n);
}

void splice_node(Splice *s, Node *n)
{
    if (!n->def)
        bind_op(n);
    if (lower_node(s, n))
        return;
    infer_fold(n);
    s->nodes = xgrow(s->nodes, s->nnodes, &s->cap, sizeof(Node *));
    s->nodes[s->nnodes++] = n;
}

/* Put the nodes of s into g's schedule at position AT. A node may lower to none (a Scan
 * whose body folds away): s->nodes is then null, which memcpy may not take even for 0 bytes. */
static void insert_nodes(Graph *g, int at, const Splice *s)
{
    if (!s->nnodes)
        return;
    Node **p = xalloc(sizeof(Node *) * (g->nnodes + s->nnodes + 1));
    memcpy(p, g->nodes, sizeof(Node *) * at);
    memcpy(p + at, s->nodes, sizeof(Node *) * s->nnodes);
    memcpy(p + at + s->nnodes, g->nodes + at, sizeof(Node *) * (g->nnodes - at));
    g->nodes = p;
    g->nnodes += s->nnodes;
    for (int i = 0; i < g->nnodes; i++)
        g->nodes[i]->index = i;
}

void bind_ops(Graph *g)
{
    for (int i = 0; i < g->nnodes; i++)
        bind_op(g->nodes[i]);
}

void infer_graph(Graph *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        Splice s = {.g = g};
        if (!lower_node(&s, n)) {
            infer_fold(n);
            continue;
        }
        insert_nodes(g, i + 1, &s);
        g->lowered += s.nnodes + s.copies;
        i += s.nnodes;
    }
}
