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

static int by_size_desc(const void *a, const void *b)
{
    const Value *x = *(Value *const *)a, *y = *(Value *const *)b;
    int64_t bx = bytes_of(x), by = bytes_of(y);
    if (bx != by)
        return bx < by ? 1 : -1;
    return x->id - y->id;  /* deterministic */
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
}

int64_t plan_memory(Graph *g)
{
    find_aliases(g);
    lifetimes(g);
    Value **vs = xalloc(sizeof(Value *) * (g->nvalues + 1));
    int nv = 0;
    for (int i = 0; i < g->nvalues; i++)
        if (needs_scratch(g->values[i]))
            vs[nv++] = g->values[i];
    qsort(vs, nv, sizeof *vs, by_size_desc);
    int64_t total = 0;
    for (int i = 0; i < nv; i++) {
        Value *v = vs[i];
        int64_t size = bytes_of(v), off = 0;
        /* Retry from the end of any overlapping block until nothing overlaps. */
        for (int moved = 1; moved;) {
            moved = 0;
            for (int j = 0; j < i; j++) {
                Value *u = vs[j];
                if (u->last < v->first || v->last < u->first)
                    continue;
                int64_t ue = u->offset + bytes_of(u);
                if (off < ue && u->offset < off + size) {
                    off = ue;
                    moved = 1;
                }
            }
        }
        v->offset = off;
        if (off + size > total)
            total = off + size;
        if (total > MLBC_MAX_TOTAL_BYTES)
            die("intermediate tensors need more than %lld bytes; refusing to compile",
                (long long)MLBC_MAX_TOTAL_BYTES);
    }
    return total;
}
