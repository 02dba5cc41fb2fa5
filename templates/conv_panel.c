// Direct convolution, one (batch n, group g, panel of L output channels) at a time, over the
// output positions with ow in [OW0, OW1); spatial dimensions are padded to three (size 1,
// stride 1, no pad).
//     y[l][o] = sum over c, kd, kh, kw of x[c][o * s - pad + k * dil] * w[l][c][k]  (+ bias[l])
// where taps that fall in the padding are skipped (they contribute zero). w[l] is the W
// expression: a panel packed at compile time (w[tap * L + l], lanes contiguous) or W itself.
// Summation order, fixed: one sum per lane over c, then kd, kh, kw ascending; then the bias.
// MAC is acc[l] + x0 * w[l], for floats an explicit fused multiply-add (fmaf / fma).
// The lane loops are unit-stride over packed weights, so gcc -O2 vectorises them.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long od, oh, ow, c, kd, kh, kw, l;
    for (od = 0; od < ${OD}; od++)
        for (oh = 0; oh < ${OH}; oh++)
            for (ow = ${OW0}; ow < ${OW1}; ow++) {
                ${CT} acc[${L}];
                for (l = 0; l < ${L}; l++)
                    acc[l] = 0;
                for (c = 0; c < ${CG}; c++)
                    for (kd = 0; kd < ${KD}; kd++) {
                        const long id = od * ${SD} - ${PD} + kd * ${DD};
                        if (id < 0 || id >= ${ID})
                            continue;
                        for (kh = 0; kh < ${KH}; kh++) {
                            const long ih = oh * ${SH} - ${PH} + kh * ${DH};
                            if (ih < 0 || ih >= ${IH})
                                continue;
                            for (kw = 0; kw < ${KW}; kw++) {
                                const long iw = ow * ${SW} - ${PW} + kw * ${DW};
                                const long tap = ((c * ${KD} + kd) * ${KH} + kh) * ${KW} + kw;
                                const ${TX} *restrict xr = x + ((c * ${ID} + id) * ${IH} + ih) * ${IW};
                                ${CT} x0;
                                if (iw < 0 || iw >= ${IW})
                                    continue;
                                x0 = ${LX0};
                                for (l = 0; l < ${L}; l++)
                                    acc[l] = ${MAC};
                            }
                        }
                    }
                for (l = 0; l < ${LS}; l++)
                    y[l * ${OSP} + (od * ${OH} + oh) * ${OW} + ow] = ${STORE};
            }
}
