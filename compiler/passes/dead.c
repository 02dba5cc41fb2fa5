/* dead.c - dead-node removal: after inference has folded constants away, and after fusion
 * has replaced chains, the nodes none of whose outputs anything needs are dropped, and the
 * live uses of every value are counted (the memory plan and the emitter read them).
 */
#include "mlbc.h"

/* Count live uses; drop nodes none of whose outputs are used, back to front. */
void remove_dead(Graph *g)
{
    for (int i = 0; i < g->nvalues; i++)
        g->values[i]->nuse = g->values[i]->result_index >= 0;
    for (int i = g->nnodes - 1; i >= 0; i--) {
        Node *n = g->nodes[i];
        int used = n->keep;
        for (int k = 0; k < n->nout; k++)
            used |= n->out[k] && n->out[k]->nuse > 0;
        if (!used)
            n->dead = 1;
        if (n->dead)
            continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k])
                n->in[k]->nuse++;
    }
}
