// im2col: one image and group of the input laid out as the columns of a matrix product, for
// the output pixels [p0, p0 + np), pixel = (od * OH + oh) * OW + ow (spatial dimensions are
// padded to three: size 1, stride 1, no pad):
//     xcol[tap][j] = x[c][id][ih][iw] for the pixel p0 + j, where (id, ih, iw) = o * stride -
//                    pad + k * dil, and 0 where that falls in the padding;
//     tap = ((c * KD + kd) * KH + kh) * KW + kw.
// Each output row's run of pixels is filled in three parts: the pixels left of the input row
// (ow < lo), inside it, and right of it (ow >= hi).
/* ${DOC} */
static void ${FN}(const float *restrict x, long p0, long np, float *restrict xcol)
{
    long c, kd, kh, kw, p, ow;
    ${FOR_C}
        ${FOR_KD}
            ${FOR_KH}
                ${FOR_KW} {
                    const long tap = ((c * ${KD} + kd) * ${KH} + kh) * ${KW} + kw;
                    const long off = kw * ${DW} - ${PW};      /* iw = ow * SW + off */
                    const long lo = off >= 0 ? 0 : (${SW} - 1 - off) / ${SW};
                    const long hi = ${IW} - off <= 0 ? 0 : (${IW} - off + ${SW} - 1) / ${SW};
                    for (p = p0; p < p0 + np;) {
                        const long od = p / (${OH} * ${OW}), oh = p / ${OW} % ${OH};
                        const long ow0 = p % ${OW};
                        const long ow1 = ${OW} - ow0 < p0 + np - p ? ${OW} : ow0 + p0 + np - p;
                        const long id = od * ${SD} - ${PD} + kd * ${DD};
                        const long ih = oh * ${SH} - ${PH} + kh * ${DH};
                        float *restrict row = xcol + tap * np + (p - p0);  /* row[ow - ow0] */
                        ow = ow0;
                        if (id >= 0 && id < ${ID} && ih >= 0 && ih < ${IH}) {
                            const float *restrict xr = x + ((c * ${ID} + id) * ${IH} + ih) * ${IW};
                            const long a = lo < ow0 ? ow0 : lo > ow1 ? ow1 : lo;
                            const long b = hi < a ? a : hi > ow1 ? ow1 : hi;
                            for (; ow < a; ow++)
                                row[ow - ow0] = 0;
                            for (; ow < b; ow++)
                                row[ow - ow0] = xr[ow * ${SW} + off];
                        }
                        for (; ow < ow1; ow++)
                            row[ow - ow0] = 0;
                        p += ow1 - ow0;
                    }
                }
}
