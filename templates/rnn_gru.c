// GRU, one direction, double or 16-bit floats (float: template rnn_f32). Rows of W and R:
// gate z [0,H), r [H,2H), h [2H,3H). Every gate value is bias + (W row . x_t) + (R row .
// state), contiguous dot products (helper rnn_dot_*). A first pass computes z and the
// reset-gated state rh (with linear_before_reset: r in rr, R_h h + Rb_h in rh), a second
// the candidate state. Multiply-adds are contraction-proof fragments (mlbc_madd/maddf).
// Batch entries past their sequence length stop (Y zero there, Y_h keeps the last state).
// Fragments in capitals come from compiler/op_rnn.c.
/* ${DOC} */
static int ${FN}(${PARAMS})
{
    ${A} h[${BATCH}][${H}], hn[${H}], z[${H}], rh[${H}], xv[${I}], bias[3 * ${H}]${DECL};
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
                    ${A} gz = bias[j] + ${DOT}(w + j * ${I}, xv, ${I}) + ${DOT}(r + j * ${H}, h[b], ${H});
                    ${A} gr = bias[${H} + j] + ${DOT}(w + (${H} + j) * ${I}, xv, ${I}) +
                         ${DOT}(r + (${H} + j) * ${H}, h[b], ${H});
${ZR}                }
                for (j = 0; j < ${H}; j++) {
                    ${A} gh = ${GH};
${HGATE}                    hn[j] = ${BLEND};
                }
                for (j = 0; j < ${H}; j++) {
                    h[b][j] = hn[j];
${YSTORE}                }
${ELSE}            }
        }
${EPILOGUE}    return 0;
}
