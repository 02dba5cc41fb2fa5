// The zero-padded input of one image and group of a Conv strided along W, copied as its
// phases (compiler/ops/op_conv.c, gemm_plan): padded row y = PH + ih and column x = PW + iw
// of channel c go to row y / SH and column x / SW of phase (y % SH, x % SW), each phase XH x
// XW, the channel's SH x SW phases in a row: xp[c][y % SH][x % SW][y / SH][x / SW]. The
// buffer is zeroed, then every input row is dealt out to its SW phases (PWM = PW % SW).
/* ${DOC} */
static void ${FN}(const float *restrict x, float *restrict xp)
{
    long c, ih, b, iw;
    memset(xp, 0, sizeof(float) * ${XN});
    for (c = 0; c < ${CG}; c++)
        for (ih = 0; ih < ${IH}; ih++) {
            const float *restrict xr = x + (c * ${IH} + ih) * ${IW};
            float *restrict yr = xp + ((c * ${SH} + (${PH} + ih) % ${SH}) * ${SW} * ${XH} +
                                       (${PH} + ih) / ${SH}) * ${XW};
            for (b = 0; b < ${SW}; b++)         /* phase b: the columns iw = b - PW (mod SW) */
                for (iw = (b + ${SW} - ${PWM}) % ${SW}; iw < ${IW}; iw += ${SW})
                    yr[b * ${XH} * ${XW} + (${PW} + iw) / ${SW}] = xr[iw];
        }
}
