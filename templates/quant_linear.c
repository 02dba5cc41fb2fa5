// QuantizeLinear / DequantizeLinear over x viewed as [OUTER, D, INNER]: channel c of the
// quantization axis uses scale[c] and zero point ZP (D = 1: per tensor). EXPR maps the
// element v = x[...] to y with s = the scale and z = the zero point, both in type CT.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    ${FOR_I}
        ${FOR_C} {
            const ${CT} s = ${S};
            const ${CT} z = ${ZP};
            const ${XT} *restrict xi = x + (i * ${D} + c) * ${INNER};
            ${YT} *restrict yi = y + (i * ${D} + c) * ${INNER};
            (void)s;
            (void)z;
            for (long k = 0; k < ${INNER}; k++) {
                const ${CT} v = ${LOAD};
                yi[k] = ${EXPR};
            }
        }
}
