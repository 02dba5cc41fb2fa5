/* op_loss.c - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss. */
#include "mlbc.h"

const OpDef ops_loss[] = {
    {0},
};
