// LSTM, one direction, double or 16-bit floats (float: template rnn_f32). Rows of W and R: gate i [0,H), o [H,2H), f [2H,3H), c [3H,4H).
// Every gate value is bias + (W row . x_t) + (R row . h_{t-1}), contiguous dot products
// (helper rnn_dot_*). State h, c lives in the kernel; batch entries past their sequence
// length stop (Y zero there, Y_h/Y_c keep their last state). Fragments in capitals come
// from compiler/op_rnn.c: layout-dependent offsets, activations, clip, peepholes; their
// multiply-adds are contraction-proof (mlbc_madd/maddf).
/* ${DOC} */
static int ${FN}(${PARAMS})
{
    ${A} h[${BATCH}][${H}], c[${BATCH}][${H}], hn[${H}], xv[${I}], bias[4 * ${H}];
    long s, b, i, j;
${PROLOGUE}    ${FOR_B}
        for (j = 0; j < ${H}; j++) {
            h[b][j] = ${H0};
            c[b][j] = ${C0};
        }
    ${FOR_S}
        ${FOR_B} {
            const long len = ${LEN};
            const long t = ${TIME};
            if (s < len) {
                for (i = 0; i < ${I}; i++)
                    xv[i] = ${XLOAD};
                for (j = 0; j < ${H}; j++) {
                    const ${A} cp = c[b][j];
                    ${A} gi = bias[j] + ${DOT}(w + j * ${I}, xv, ${I}) + ${DOT}(r + j * ${H}, h[b], ${H});
                    ${A} go = bias[${H} + j] + ${DOT}(w + (${H} + j) * ${I}, xv, ${I}) +
                         ${DOT}(r + (${H} + j) * ${H}, h[b], ${H});
                    ${A} gf = bias[2 * ${H} + j] + ${DOT}(w + (2 * ${H} + j) * ${I}, xv, ${I}) +
                         ${DOT}(r + (2 * ${H} + j) * ${H}, h[b], ${H});
                    ${A} gc = bias[3 * ${H} + j] + ${DOT}(w + (3 * ${H} + j) * ${I}, xv, ${I}) +
                         ${DOT}(r + (3 * ${H} + j) * ${H}, h[b], ${H});
                    ${A} cn;
${GATES}                    c[b][j] = cn;
                }
                for (j = 0; j < ${H}; j++) {
                    h[b][j] = hn[j];
${YSTORE}                }
${ELSE}            }
        }
${EPILOGUE}    return 0;
}
