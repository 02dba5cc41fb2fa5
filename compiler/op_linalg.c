/* op_linalg.c - Gemm, MatMul, MatMulInteger, Einsum. */
#include "mlbc.h"

const OpDef ops_linalg[] = {
    {0},
};
