// QLinearConv, 2-D (1-D as H = 1): for each image, output channel m (group m / MG) and
// pixel, the int32 sum over the group's input channels and kernel taps of
// (x - x_zero_point) * (w - w_zero_point[m]) (padding reads the zero point, adding 0), plus
// the int32 bias, requantized: y = saturate(round_half_even(acc * x_scale * w_scale[m] /
// y_scale) + y_zero_point). WS/WZ index the per-channel (m) or per-tensor (0) weights.
/* ${DOC} */
static void ${FN}(const ${XT} *restrict x, const float *restrict x_scale,
                  const ${XT} *restrict x_zero_point, const ${WT} *restrict w,
                  const float *restrict w_scale, const ${WT} *restrict w_zero_point,
                  const float *restrict y_scale, const ${YT} *restrict y_zero_point,
                  const int32_t *restrict bias, ${YT} *restrict y)
{
    const int32_t xz = (int32_t)x_zero_point[0];
    (void)bias;
    ${FOR_N}
        ${FOR_M} {
            const long g = m / ${MG};
            const int32_t wz = (int32_t)w_zero_point[${WZ}];
            const float mul = x_scale[0] * w_scale[${WS}] / y_scale[0];
            ${FOR_OH}
                ${FOR_OW} {
                    int32_t acc = ${BIAS};
                    ${FOR_C} {
                        const ${XT} *xc = x + (n * ${C} + g * ${CG} + c) * ${H} * ${W};
                        const ${WT} *wc = w + (m * ${CG} + c) * ${KH} * ${KW};
                        ${FOR_KH} {
                            const long ih = oh * ${SH} - ${PH} + kh * ${DH};
                            if (ih >= 0 && ih < ${H})
                                ${FOR_KW} {
                                    const long iw = ow * ${SW} - ${PW} + kw * ${DW};
                                    if (iw >= 0 && iw < ${W})
                                        acc += ((int32_t)xc[ih * ${W} + iw] - xz) *
                                               ((int32_t)wc[kh * ${KW} + kw] - wz);
                                }
                        }
                    }
                    {
                        const float v = nearbyintf((float)acc * mul) + (float)y_zero_point[0];
                        y[((n * ${M} + m) * ${OH} + oh) * ${OW} + ow] =
                            (${YT})(!(v >= ${LO}) ? ${LO} : v > ${HI} ? ${HI} : v);
                    }
                }
        }
}
