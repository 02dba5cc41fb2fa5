// Simple RNN, one direction, double or 16-bit floats (float: template rnn_f32): h_t = f(bias + (W row . x_t) + (R row . h_{t-1})), contiguous
// dot products (helper rnn_dot_*). Batch entries past their sequence length stop (Y zero
// there, Y_h keeps the last state). Fragments in capitals come from compiler/op_rnn.c.
/* ${DOC} */
static int ${FN}(${PARAMS})
{
    ${A} h[${BATCH}][${H}], hn[${H}], xv[${I}], bias[${H}];
    long s, b, i, j;
${PROLOGUE}    ${FOR_B}
        for (j = 0; j < ${H}; j++)
            h[b][j] = ${H0};
    ${FOR_S}
        ${FOR_B} {
            const long len = ${LEN};
            const long t = ${TIME};
            if (s < len) {
                for (i = 0; i < ${I}; i++)
                    xv[i] = ${XLOAD};
                for (j = 0; j < ${H}; j++) {
                    ${A} g = bias[j] + ${DOT}(w + j * ${I}, xv, ${I}) + ${DOT}(r + j * ${H}, h[b], ${H});
${GATES}                }
                for (j = 0; j < ${H}; j++) {
                    h[b][j] = hn[j];
${YSTORE}                }
${ELSE}            }
        }
${EPILOGUE}    return 0;
}
