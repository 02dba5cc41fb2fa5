// Transposed convolution by gathering: output position o receives x[i] * w[k] for every
// tap with o = i * stride - pad + k * dil, i.e. i = (o + pad - k * dil) / stride when that
// divides exactly and lies inside the input. Spatial dimensions are padded to three.
// Summation order, fixed: one sum per output over c, then kd, kh, kw ascending; then bias.
// MAC is s + x * w, for floats an explicit fused multiply-add (fmaf / fma).
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long n, g, m, od, oh, ow, c, kd, kh, kw;
    ${FOR_N}
        ${FOR_G}
            ${FOR_M}
                ${FOR_OD}
                    ${FOR_OH}
                        ${FOR_OW} {
                            ${CT} s = 0;
                            ${FOR_C}
                                ${FOR_KD} {
                                    const long td = od + ${PD} - kd * ${DD}, id = td / ${SD};
                                    if (td >= 0 && td % ${SD} == 0 && id < ${ID})
                                        ${FOR_KH} {
                                            const long th = oh + ${PH} - kh * ${DH}, ih = th / ${SH};
                                            if (th >= 0 && th % ${SH} == 0 && ih < ${IH})
                                                ${FOR_KW} {
                                                    const long tw = ow + ${PW} - kw * ${DW}, iw = tw / ${SW};
                                                    if (tw >= 0 && tw % ${SW} == 0 && iw < ${IW})
                                                        s = ${MAC};
                                                }
                                        }
                                }
                            y[((((n * ${G} + g) * ${MG} + m) * ${OD} + od) * ${OH} + oh) * ${OW} + ow] = ${STORE};
                        }
}
