// Transposed convolution by gathering: output position o receives x[i] * w[k] for every
// tap with o = i * stride - pad + k * dil, i.e. i = (o + pad - k * dil) / stride when that
// divides exactly and lies inside the input. Spatial dimensions are padded to three.
// Summation order, fixed: one sum per output over c, then kd, kh, kw ascending; then bias.
// MAC is s + x * w, for floats an explicit fused multiply-add (fmaf / fma).
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long n, g, m, od, oh, ow, c, kd, kh, kw;
    for (n = 0; n < ${N}; n++)
        for (g = 0; g < ${G}; g++)
            for (m = 0; m < ${MG}; m++)
                for (od = 0; od < ${OD}; od++)
                    for (oh = 0; oh < ${OH}; oh++)
                        for (ow = 0; ow < ${OW}; ow++) {
                            ${CT} s = 0;
                            for (c = 0; c < ${CG}; c++)
                                for (kd = 0; kd < ${KD}; kd++) {
                                    const long td = od + ${PD} - kd * ${DD}, id = td / ${SD};
                                    if (td < 0 || td % ${SD} != 0 || id >= ${ID})
                                        continue;
                                    for (kh = 0; kh < ${KH}; kh++) {
                                        const long th = oh + ${PH} - kh * ${DH}, ih = th / ${SH};
                                        if (th < 0 || th % ${SH} != 0 || ih >= ${IH})
                                            continue;
                                        for (kw = 0; kw < ${KW}; kw++) {
                                            const long tw = ow + ${PW} - kw * ${DW}, iw = tw / ${SW};
                                            if (tw < 0 || tw % ${SW} != 0 || iw >= ${IW})
                                                continue;
                                            s = ${MAC};
                                        }
                                    }
                                }
                            y[((((n * ${G} + g) * ${MG} + m) * ${OD} + od) * ${OH} + oh) * ${OW} + ow] = ${STORE};
                        }
}
