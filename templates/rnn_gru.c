// GRU, one direction. Rows of W and R: gate z [0,H), r [H,2H), h [2H,3H). Every gate
// value is bias + (W row . x_t) + (R row . state), contiguous dot products (helper
// rnn_dot_*). A first pass computes z and the reset-gated state rh, a second the candidate
// state (linear_before_reset decides whether R_h multiplies r (.) h or is gated after).
// Batch entries past their sequence length stop (Y zero there, Y_h keeps the last state).
// Fragments in capitals come from compiler/op_rnn.c.
/* ${DOC} */
static int ${FN}(${PARAMS})
{
    ${A} h[${BATCH}][${H}], hn[${H}], z[${H}], rh[${H}], xv[${I}], bias[3 * ${H}]${DECL};
    long s, b, i, j;
${PROLOGUE}    for (b = 0; b < ${BATCH}; b++)
        for (j = 0; j < ${H}; j++)
            h[b][j] = ${H0};
    for (s = 0; s < ${SEQ}; s++)
        for (b = 0; b < ${BATCH}; b++) {
            const long len = ${LEN};
            const long t = ${TIME};
            if (s >= len) {
${YZERO}                continue;
            }
            for (i = 0; i < ${I}; i++)
                xv[i] = ${XLOAD};
            for (j = 0; j < ${H}; j++) {
                ${A} gz = bias[j] + ${DOT}(w + j * ${I}, xv, ${I}) + ${DOT}(r + j * ${H}, h[b], ${H});
                ${A} gr = bias[${H} + j] + ${DOT}(w + (${H} + j) * ${I}, xv, ${I}) +
                     ${DOT}(r + (${H} + j) * ${H}, h[b], ${H});
${ZR}            }
            for (j = 0; j < ${H}; j++) {
                ${A} gh = bias[2 * ${H} + j] + ${DOT}(w + (2 * ${H} + j) * ${I}, xv, ${I}) + ${RH};
${HGATE}                hn[j] = (1 - z[j]) * gh + z[j] * h[b][j];
            }
            for (j = 0; j < ${H}; j++) {
                h[b][j] = hn[j];
${YSTORE}            }
        }
${EPILOGUE}    return 0;
}
