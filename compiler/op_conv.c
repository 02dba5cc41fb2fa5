/* op_conv.c - Conv, ConvTranspose, ConvInteger. */
#include "mlbc.h"

const OpDef ops_conv[] = {
    {0},
};
