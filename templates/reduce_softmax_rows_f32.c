// Float ${OP} over contiguous rows, x viewed as [A][K], a block of rows at a time in three
// passes, so that the exponentials of a block are one vectorised call (a call a row waits on
// the exp's latency, and a short row is mostly its scalar tail): per row the maximum and
// x - max parked in y; mlbc_vexp_f32 over the block of y, in place; per row the sum and the
// output (Softmax: the row divided by its sum, by mlbc_vdivs_f32 or, for rows shorter than
// MLBC_VDIVS_MIN, a loop in place; LogSoftmax: x - max - log of the sum). Each row gets the
// same operations in the same order as row by row, so the same bits. ${LANES_NOTE}
/* ${DOC} */
static void ${FN}(const float *restrict x, float *restrict y)
{
    long a0, a, k;
${DECL}    for (a0 = 0; a0 < ${A}; a0 += ${R}) {
        const long nr = ${A} - a0 < ${R} ? ${A} - a0 : ${R};
        for (a = 0; a < nr; a++) {
            const float *restrict xr = x + (a0 + a) * ${K};
            float *restrict yr = y + (a0 + a) * ${K};
            float mx;
${MAX}${KEEP}            for (k = 0; k < ${K}; k++)
                yr[k] = xr[k] - mx;
        }
        mlbc_vexp_f32(nr * ${K}, y + a0 * ${K}, y + a0 * ${K});
        for (a = 0; a < nr; a++) {
${XR}            float *restrict yr = y + (a0 + a) * ${K};
            float sum;
${SUM}${OUT}        }
    }
}
