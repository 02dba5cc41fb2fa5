/* ops.c - the operator registry: one table per family file (op_*.c), and the operators
 * only passes make (op_internal.c). */
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

const OpDef *find_op(const char *name)
{
    const OpDef *d = NULL;
    for (size_t f = 0; f < sizeof families / sizeof families[0] && !d; f++)
        d = find_in(families[f], name);
    return d;
}

const OpDef *find_internal_op(const char *name) { return find_in(ops_internal, name); }
