// Direct convolution as conv_panel, four output positions (ow, ow+1, ow+2, ow+3) at a time
// for ow in the range FOR_POS walks (from 0, in steps of 4): four independent sums per lane
// and each weight vector loaded once per tap. A tap of a position that falls in the padding
// reads x as 0 (the zero padding itself).
//     y[l][o] = sum over c, kd, kh, kw of x_padded[c][o * s - pad + k * dil] * w[l][c][k]  (+ bias[l])
// Summation order, fixed: one sum per output over c, then kd, kh, kw ascending; then the
// bias. Rows (kd, kh) entirely in the padding are skipped: they add exact zeros. MACj is
// aj[l] + xj * w[l], for floats an explicit fused multiply-add (fmaf / fma).
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long od, oh, ow, c, kd, kh, kw, l;
    ${FOR_OD}
        ${FOR_OH}
            ${FOR_POS} {
                ${CT} a0[${L}], a1[${L}], a2[${L}], a3[${L}];
                ${FOR_L}
                    a0[l] = a1[l] = a2[l] = a3[l] = 0;
                ${FOR_C}
                    ${FOR_KD} {
                        const long id = od * ${SD} - ${PD} + kd * ${DD};
                        if (id >= 0 && id < ${ID})
                            ${FOR_KH} {
                                const long ih = oh * ${SH} - ${PH} + kh * ${DH};
                                if (ih >= 0 && ih < ${IH})
                                    ${FOR_KW} {
                                        const long iw = ow * ${SW} - ${PW} + kw * ${DW};
                                        const long tap = ((c * ${KD} + kd) * ${KH} + kh) * ${KW} + kw;
                                        const ${TX} *restrict xr = x + ((c * ${ID} + id) * ${IH} + ih) * ${IW};
                                        const ${CT} x0 = iw >= 0 && iw < ${IW} ? ${LX0} : 0;
                                        const ${CT} x1 = iw + ${SW} >= 0 && iw + ${SW} < ${IW} ? ${LX1} : 0;
                                        const ${CT} x2 = iw + ${SW2} >= 0 && iw + ${SW2} < ${IW} ? ${LX2} : 0;
                                        const ${CT} x3 = iw + ${SW3} >= 0 && iw + ${SW3} < ${IW} ? ${LX3} : 0;
                                        ${FOR_L}
                                            a0[l] = ${MAC0};
                                        ${FOR_L}
                                            a1[l] = ${MAC1};
                                        ${FOR_L}
                                            a2[l] = ${MAC2};
                                        ${FOR_L}
                                            a3[l] = ${MAC3};
                                    }
                            }
                    }
                ${FOR_LS} {
                    ${TY} *restrict yl = y + l * ${OSP} + (od * ${OH} + oh) * ${OW} + ow;
                    yl[0] = ${STORE0};
                    yl[1] = ${STORE1};
                    yl[2] = ${STORE2};
                    yl[3] = ${STORE3};
                }
            }
}
