// im2col of whole output rows: one image and group of the input (zero-padded beforehand if
// the Conv pads, by templates/conv_pad.c) laid out as the columns of a matrix product, for
// the output rows [r0, r0 + nr), row = od * OH + oh (spatial dimensions are padded to three):
//     xcol[tap][r][ow] = x[c][od * SD + kd * DD][oh * SH + kh * DH][ow * SW + kw * DW],
//     tap = ((c * KD + kd) * KH + kh) * KW + kw,
// x being ID x IH x IW per channel. Every row is a copy of OW elements: no bounds to check.
/* ${DOC} */
static void ${FN}(const float *restrict x, long r0, long nr, float *restrict xcol)
{
    long c, kd, kh, kw, r, ow;
    ${FOR_C}
        ${FOR_KD}
            ${FOR_KH}
                ${FOR_KW} {
                    const long tap = ((c * ${KD} + kd) * ${KH} + kh) * ${KW} + kw;
                    float *restrict col = xcol + tap * nr * ${OW};
                    for (r = 0; r < nr; r++) {
                        const long od = (r0 + r) / ${OH}, oh = (r0 + r) % ${OH};
                        const long id = od * ${SD} + kd * ${DD}, ih = oh * ${SH} + kh * ${DH};
                        const float *restrict xr =
                            x + ((c * ${ID} + id) * ${IH} + ih) * ${IW} + kw * ${DW};
                        for (ow = 0; ow < ${OW}; ow++)
                            col[r * ${OW} + ow] = xr[ow * ${SW}];
                    }
                }
}
