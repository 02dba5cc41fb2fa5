/* ops.c - the operator registry: one table per family file (op_*.c). */
#include <string.h>

#include "mlbc.h"

extern const OpDef ops_elementwise[], ops_shape[], ops_layout[], ops_movement[], ops_reduce[],
    ops_norm[], ops_linalg[], ops_conv[], ops_pool[], ops_rnn[], ops_loss[],
    ops_resize[], ops_quant[], ops_signal[], ops_select[], ops_detect[], ops_spectral[],
    ops_control[];

static const OpDef *const families[] = {
    ops_elementwise, ops_shape, ops_layout, ops_movement, ops_reduce, ops_norm,
    ops_linalg, ops_conv, ops_pool, ops_rnn, ops_loss, ops_resize, ops_quant, ops_signal,
    ops_select, ops_detect, ops_spectral, ops_control,
};

const OpDef *find_op(const char *name)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const OpDef *d = families[f]; d->name; d++)
            if (!strcmp(d->name, name))
                return d;
    return NULL;
}
