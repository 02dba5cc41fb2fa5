/* op_shape.c - Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Identity, Dropout, Constant, ConstantOfShape, Expand, Range, EyeLike. */
#include "mlbc.h"

const OpDef ops_shape[] = {
    {0},
};
