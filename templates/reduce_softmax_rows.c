// ${OP} over contiguous rows: x viewed as [A][K]. Numerically stable: the row maximum is
// subtracted before exp. ${LANES_NOTE}
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, ${TY} *restrict y)
{
    long a, k;
${DECL}    ${FOR_A} {
        const ${TX} *restrict xr = x + a * ${K};
        ${TY} *restrict yr = y + a * ${K};
        ${C} mx, sum;
${MAX}${SUM}${OUT}    }
}
