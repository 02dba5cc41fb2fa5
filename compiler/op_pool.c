/* op_pool.c - MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, LpPool. */
#include "mlbc.h"

const OpDef ops_pool[] = {
    {0},
};
