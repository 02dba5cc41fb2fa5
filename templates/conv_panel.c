// Direct convolution, one (batch n, group g, panel of L output channels) at a time, over the
// output positions with ow in the range FOR_POS walks; spatial dimensions are padded to three
// (size 1, stride 1, no pad).
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
    ${FOR_OD}
        ${FOR_OH}
            ${FOR_POS} {
                ${CT} acc[${L}];
                ${FOR_L}
                    acc[l] = 0;
                ${FOR_C}
                    ${FOR_KD} {
                        const long id = od * ${SD} - ${PD} + kd * ${DD};
                        if (id >= 0 && id < ${ID})
                            ${FOR_KH} {
                                const long ih = oh * ${SH} - ${PH} + kh * ${DH};
                                if (ih >= 0 && ih < ${IH})
                                    ${FOR_KW} {
                                        const long iw = ow * ${SW} - ${PW} + kw * ${DW};
                                        if (iw >= 0 && iw < ${IW}) {
                                            const long tap = ((c * ${KD} + kd) * ${KH} + kh) * ${KW} + kw;
                                            const ${TX} *restrict xr = x + ((c * ${ID} + id) * ${IH} + ih) * ${IW};
                                            const ${CT} x0 = ${LX0};
                                            ${FOR_L}
                                                acc[l] = ${MAC};
                                        }
                                    }
                            }
                    }
                ${FOR_LS}
                    y[l * ${OSP} + (od * ${OH} + oh) * ${OW} + ow] = ${STORE};
            }
}
