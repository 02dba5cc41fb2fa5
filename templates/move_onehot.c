// OneHot: y viewed as [OUTER, DEPTH, INNER] is filled with values[0] (off), then
// y[o, v, i] = values[1] (on) for v = ind[o, i] (+ DEPTH if negative) when v is in range;
// indices out of range leave their column off.
/* ${DOC} */
static void ${FN}(const ${IT} *restrict ind, const ${T} *restrict values, ${T} *restrict y)
{
    const ${T} off = values[0], on = values[1];
    long o, i;
    for (i = 0; i < ${NY}; i++)
        y[i] = off;
    for (o = 0; o < ${OUTER}; o++)
        ${FOR_I} {
            ${VT} v = ${LOAD};
            if (v < 0)
                v += ${DEPTH};
            if (v >= 0 && v < ${DEPTH})
                y[(o * ${DEPTH} + (long)v) * ${INNER} + i] = on;
        }
}
