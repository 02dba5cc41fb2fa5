// Float LSTM, GRU or RNN, one direction, through the fused multiply-add matrix kernel
// (template gemm_f32; dots_f32 when W and R are run-time inputs):
//   1. every TC steps, the input projections of those steps for every batch row at once,
//      xw = X W^T + bias (the W bias, plus the R bias wherever the cell adds it outside a
//      gate product): one product of (steps) x N per row (PROWS = batch), or, when all rows
//      have the same length and X's rows of a step are contiguous, one of (steps x batch)
//      x N for the whole batch (PROWS = 1);
//   2. each step, the recurrent product g = H R^T for the whole batch (M = batch; a large R
//      in column blocks, swept forward and backward on alternate steps), which for an LSTM
//      or RNN whose rows share their length adds the step's xw itself (its c operand: the
//      same sum, y = s + c, as g + xw after it);
//   3. one loop per row over the hidden units: gate = xw + g, activations, the cell update
//      (fragment CELL, from compiler/op_rnn.c; with the default activations array passes of
//      the vector sigmoid and tanh, and for the LSTM its state pass, rnn_lstm_state), the new
//      state written in place (the product has already read it) and stored to Y.
// Batch rows past their sequence length stop (Y zero there, Y_h/Y_c keep their last state).
// Every multiply-add outside the products goes through double (mlbc_maddf or a sum of two
// exact products), so contraction cannot change the results.
/* ${DOC} */
static int ${FN}(${PARAMS})
{
    float xw[${XW}], g[${BATCH}][${NR}], h[${BATCH}][${H}]${STATE};
    long base[${BATCH}] = {0}, s, b, j;
${PROLOGUE}    ${FOR_B}
        for (j = 0; j < ${H}; j++) {
${INIT}        }
    ${FOR_S} {
        if (s % ${TC} == 0)
            ${FOR_PB} {
                const long len = ${LEN};
                const long lo = ${LO}, hi = ${HI};
                base[b] = lo;
                if (lo < hi)
                    ${PROJECT};
            }
        ${RECUR}
${CELL}    }
${EPILOGUE}    return 0;
}
