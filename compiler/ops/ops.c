/* ops.c - the operator registry: one table per family file (op_*.c), and the operators
 * only passes make (op_internal.c). */
#include <stdlib.h>
#include <string.h>

#include "mlbc.h"

extern const OpDef ops_elementwise[], ops_shape[], ops_layout[], ops_movement[], ops_reduce[],
    ops_norm[], ops_linalg[], ops_conv[], ops_pool[], ops_rnn[], ops_loss[],
    ops_resize[], ops_quant[], ops_signal[], ops_select[], ops_detect[], ops_spectral[],
    ops_internal[];

/* Supported ops without rules of their own: inference lowers them (lower.c's lower_node). */
static const OpDef ops_control[] = {
    {"If", NULL, NULL, NULL, NULL, 0},
    {"Loop", NULL, NULL, NULL, NULL, 0},
    {"Scan", NULL, NULL, NULL, NULL, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};

static const OpDef *const families[] = {
    ops_elementwise, ops_shape, ops_layout, ops_movement, ops_reduce, ops_norm,
    ops_linalg, ops_conv, ops_pool, ops_rnn, ops_loss, ops_resize, ops_quant, ops_signal,
    ops_select, ops_detect, ops_spectral, ops_control,
};

static const OpDef *find_in(const OpDef *table, const char *name)
{
    for (const OpDef *d = table; d->name; d++)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

/* Every family's ops sorted by name, built on first use: find_op runs for each node, and an
 * unrolled loop makes tens of thousands. Static storage, not xalloc: fuzz builds release the
 * heap after each input. */
static const OpDef *by_name[512];
static int nby_name;

static int by_op_name(const void *a, const void *b)
{
    return strcmp((*(const OpDef *const *)a)->name, (*(const OpDef *const *)b)->name);
}

static void index_ops(void)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const OpDef *d = families[f]; d->name; d++) {
            if (nby_name == (int)(sizeof by_name / sizeof by_name[0]))
                die("internal: more ops than ops.c's index holds");
            by_name[nby_name++] = d;
        }
    qsort(by_name, nby_name, sizeof by_name[0], by_op_name);
    for (int i = 1; i < nby_name; i++)
        if (!strcmp(by_name[i - 1]->name, by_name[i]->name))
            die("internal: op '%s' has two rows", by_name[i]->name);
}

const OpDef *find_op(const char *name)
{
    if (!nby_name)
        index_ops();
    int lo = 0, hi = nby_name;          /* the first row whose name is >= NAME */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (strcmp(by_name[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nby_name && !strcmp(by_name[lo]->name, name) ? by_name[lo] : NULL;
}

const OpDef *find_internal_op(const char *name) { return find_in(ops_internal, name); }
