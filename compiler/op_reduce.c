/* op_reduce.c - Reduce*, ArgMax, ArgMin, Softmax, LogSoftmax, Hardmax, CumSum, TopK. */
#include "mlbc.h"

const OpDef ops_reduce[] = {
    {0},
};
