/* plan.c - static memory plan for intermediate tensors.
 *
 * Every intermediate gets a byte range in one scratch arena of the context. Two values may
 * share bytes only if their lifetimes (defining node .. last consuming node, inclusive) do
 * not overlap; inclusive ends keep a node's outputs apart from its inputs. Placement is
 * greedy, largest first, at the lowest offset that fits: simple and near-optimal for the
 * chain-shaped graphs of policies.
 *
 * The output of a reshape-like node (Reshape, Flatten, Squeeze, Unsqueeze, Identity) is the
 * same bytes as its input, so it shares the input's buffer instead of getting a copy: values
 * are written once, by their producer, so sharing is safe whoever else reads the input. The
 * shared buffer then lives until the last use of any value in it. A graph result keeps its
 * own buffer (the caller reads it there).
 *
 * An output that nothing reads (Dropout's mask, TopK's indices, LayerNormalization's mean)
 * still gets bytes, as its kernel may write it: a sink at the end of the arena, where each
 * node's unread outputs lie side by side while it runs, the same bytes for every node.
 *
 * A node computed from constants only whose output was too large to fold into the binary
 * (a ConstantOfShape or Expand splat, a Tile of a weight) runs once, in NAME_init: its
 * outputs live across runs, so their bytes are never shared.
 *
 * A kernel's workspace (Node.ws_bytes: a padded copy, a column buffer) is a block of the
 * same arena that lives during its node only, so it reuses bytes the node's neighbours free
 * instead of growing the caller's stack.
 */
#include <stdlib.h>

#include "mlbc.h"

static int64_t align_up(int64_t x) { return (x + MLBC_ALIGN - 1) / MLBC_ALIGN * MLBC_ALIGN; }

static int64_t bytes_of(const Value *v) { return align_up(numel(v) * (int64_t)dtype_size(v->dt)); }

static int needs_scratch(const Value *v)
{
    return v->producer && !v->producer->dead && !v->data && v->result_index < 0 && v->nuse > 0
           && !v->alias;
}

static void find_aliases(Graph *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        Value *x = n->in[0], *y = n->out[0];
        if (n->dead || !op_has(n, OP_VIEW) || y->data || x->data || y->result_index >= 0)
            continue;
        y->alias = x->alias ? x->alias : x;
    }
}

static int from_constants(const Value *v)
{
    return v->data || (v->producer && v->producer->once);
}

/* Nodes of constant inputs that infer could not fold (their output is too large to embed):
 * run once by NAME_init instead of on every run. Not graph results, nor run-time checks. */
static void mark_once(Graph *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        int once = !n->dead && !n->keep && n->nin > 0;
        for (int k = 0; k < n->nin && once; k++)
            once = !n->in[k] || from_constants(n->in[k]);
        for (int k = 0; k < n->nout && once; k++)
            once = !n->out[k] || n->out[k]->result_index < 0;
        n->once = once;
    }
}

/* A byte range to place: a value's buffer or a node's workspace, live over [first, last]. */
typedef struct Block {
    int64_t size, *offset;
    int first, last, order;             /* order: a tie-break, for a deterministic plan */
} Block;

static int by_size_desc(const void *a, const void *b)
{
    const Block *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->order - y->order;
}

static void lifetimes(Graph *g)
{
    for (int i = 0; i < g->nvalues; i++) {
        Value *v = g->values[i];
        v->id = i;
        v->first = v->producer ? v->producer->index : -1;
        v->last = v->first;
    }
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (n->dead)
            continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] && n->in[k]->last < i)
                n->in[k]->last = i;
    }
    for (int i = 0; i < g->nvalues; i++) {     /* a shared buffer lives as long as its users */
        Value *v = g->values[i];
        if (v->alias && v->alias->last < v->last)
            v->alias->last = v->last;
    }
    for (int i = 0; i < g->nvalues; i++) {     /* what init computes lives across runs */
        Value *v = g->values[i];
        if (v->producer && v->producer->once) {
            Value *b = v->alias ? v->alias : v;
            b->first = 0;
            b->last = g->nnodes;
        }
    }
}

/* Placed blocks by when they live: bucket t lists the blocks live in nodes [t*SPAN, t*SPAN+SPAN),
 * so placing a block looks only at blocks that may live at the same time (a linear look at
 * all of them made an unrolled loop of 10^4 nodes quadratic). */
enum { SPAN = 32 };

typedef struct Placed {
    int **bucket, *count, *cap;
    int *seen, *cand;                   /* seen[j]: stamp of the last query that took block j */
} Placed;

static Placed placed_new(int nnodes, int nblocks)
{
    int nb = nnodes / SPAN + 2;         /* once-values live until nnodes */
    return (Placed){xalloc(sizeof(int *) * nb), xalloc(sizeof(int) * nb), xalloc(sizeof(int) * nb),
                    xalloc(sizeof(int) * nblocks), xalloc(sizeof(int) * nblocks)};
}

static void placed_add(Placed *p, const Block *b, int j)
{
    for (int t = b->first / SPAN; t <= b->last / SPAN; t++) {
        p->bucket[t] = xgrow(p->bucket[t], p->count[t], &p->cap[t], sizeof(int));
        p->bucket[t][p->count[t]++] = j;
    }
}

static int by_index(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Indices of the placed blocks live while B is, ascending (the order a plain scan of all
 * placed blocks would meet them in, so the plan does not depend on the index). */
static int overlapping(Placed *p, const Block *bl, const Block *b, int stamp)
{
    int n = 0;
    for (int t = b->first / SPAN; t <= b->last / SPAN; t++)
        for (int k = 0; k < p->count[t]; k++) {
            int j = p->bucket[t][k];
            const Block *u = &bl[j];
            if (p->seen[j] == stamp || u->last < b->first || b->last < u->first)
                continue;
            p->seen[j] = stamp;
            p->cand[n++] = j;
        }
    qsort(p->cand, n, sizeof(int), by_index);
    return n;
}

/* Lowest offset where B overlaps none of the placed blocks live at the same time: retried
 * from the end of any overlapping block until nothing overlaps. */
static int64_t place(Placed *p, const Block *bl, int i)
{
    const Block *b = &bl[i];
    int n = overlapping(p, bl, b, i + 1);
    int64_t off = 0;
    for (int moved = 1; moved;) {
        moved = 0;
        for (int k = 0; k < n; k++) {
            const Block *u = &bl[p->cand[k]];
            if (off < *u->offset + u->size && *u->offset < off + b->size) {
                off = *u->offset + u->size;
                moved = 1;
            }
        }
    }
    return off;
}

static int collect_blocks(Graph *g, Block *bl)
{
    int n = 0;
    for (int i = 0; i < g->nvalues; i++) {
        Value *v = g->values[i];
        if (needs_scratch(v))
            bl[n++] = (Block){bytes_of(v), &v->offset, v->first, v->last, i};
    }
    for (int i = 0; i < g->nnodes; i++) {
        Node *nd = g->nodes[i];
        if (!nd->dead && nd->ws_bytes)
            bl[n++] = (Block){align_up(nd->ws_bytes), &nd->ws_offset, i, i, g->nvalues + i};
    }
    return n;
}

static int unread(const Value *v)
{
    return v && !v->data && v->result_index < 0 && v->nuse == 0 && !v->alias;
}

/* The sink after the arena's TOTAL bytes; returns the new total. */
static int64_t place_sink(Graph *g, int64_t total)
{
    int64_t sink = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        int64_t off = 0;
        for (int k = 0; k < n->nout && !n->dead; k++)
            if (unread(n->out[k])) {
                n->out[k]->offset = total + off;
                off += bytes_of(n->out[k]);
            }
        if (off > sink)
            sink = off;
    }
    return total + sink;
}

int64_t plan_memory(Graph *g)
{
    mark_once(g);
    find_aliases(g);
    lifetimes(g);
    Block *bl = xalloc(sizeof(Block) * (g->nvalues + g->nnodes + 1));
    int nb = collect_blocks(g, bl);
    qsort(bl, nb, sizeof *bl, by_size_desc);
    Placed p = placed_new(g->nnodes, nb);
    int64_t total = 0;
    for (int i = 0; i < nb; i++) {
        *bl[i].offset = place(&p, bl, i);
        placed_add(&p, &bl[i], i);
        if (*bl[i].offset + bl[i].size > total)
            total = *bl[i].offset + bl[i].size;
    }
    total = place_sink(g, total);
    if (total > MLBC_MAX_TOTAL_BYTES)
        die("intermediate tensors need more than %lld bytes; refusing to compile",
            (long long)MLBC_MAX_TOTAL_BYTES);
    return total;
}
