/* op_movement.c - Transpose, Concat, Split, Slice, Gather, GatherElements, GatherND, Tile, Pad, Trilu, OneHot, DepthToSpace, SpaceToDepth, ScatterElements, ScatterND, ReverseSequence. */
#include "mlbc.h"

const OpDef ops_movement[] = {
    {0},
};
