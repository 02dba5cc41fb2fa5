// Float Softmax over short contiguous rows, x viewed as [A][K], in three passes so that the
// exponentials of all rows are one vectorised call (row by row, each call on K floats would
// be mostly its scalar tail): per row the maximum and x - max parked in y; mlbc_vexp_f32 over
// all of y, in place; per row the sum and the division (mlbc_vdivs_f32, or for rows shorter
// than MLBC_VDIVS_MIN a loop in place, cheaper than the call). Each row gets the
// same operations in the same order as row by row, so the same bits. ${LANES_NOTE}
/* ${DOC} */
static void ${FN}(const float *restrict x, float *restrict y)
{
    long a, k;
${DECL}    ${FOR_A} {
        const float *restrict xr = x + a * ${K};
        float *restrict yr = y + a * ${K};
        float mx;
${MAX}        for (k = 0; k < ${K}; k++)
            yr[k] = xr[k] - mx;
    }
    mlbc_vexp_f32(${AK}, y, y);
    ${FOR_A} {
        float *restrict yr = y + a * ${K};
        float sum;
${SUM}${DIV}
    }
}
