/* op_rnn.c - LSTM, GRU, RNN. */
#include "mlbc.h"

const OpDef ops_rnn[] = {
    {0},
};
