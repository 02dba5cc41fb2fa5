/* op_norm.c - LayerNormalization, BatchNormalization, InstanceNormalization, LRN, MeanVarianceNormalization. */
#include "mlbc.h"

const OpDef ops_norm[] = {
    {0},
};
