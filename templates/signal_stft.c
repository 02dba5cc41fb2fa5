// STFT: for each batch b and frame f (starting at f * step), the DFT of L samples times the
// window, bins 0 .. BINS-1: y = sum_n x[n] w[n] e^(-2 pi i k n / L), accumulated in double
// in n order with a twiddle table and explicit fused multiply-adds (contraction-proof). The signal is real (C = 1) or complex (C = 2); y holds
// (re, im) pairs. The run-time frame step must give the F frames of the static shape:
// returns 0 if it does not (nor a run-time frame_length, FLCHECK, the length L).
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${ST} *restrict frame_step${WPARAM},
                 ${T} *restrict y)
{
    const double two_pi = 6.283185307179586476925286766559;
    double cs[${L}], sn[${L}];
    const long step = (long)frame_step[0];
    if (step <= 0 || (${TLEN} - ${L}) / step + 1 != ${F})
        return 0;
${FLCHECK}    for (long m = 0; m < ${L}; m++) {
        cs[m] = cos(two_pi * (double)m / ${L});
        sn[m] = sin(two_pi * (double)m / ${L});
    }
    ${FOR_B}
        for (long f = 0; f < ${F}; f++) {
            const ${T} *xf = x + b * ${XB} + f * step * ${C};
            ${T} *yf = y + (b * ${F} + f) * ${BINS} * 2;
            for (long k = 0; k < ${BINS}; k++) {
                double re = 0, im = 0;
                for (long n = 0; n < ${L}; n++) {
                    const long m = k * n % ${L};
                    const double vr = (double)xf[n * ${C}]${WMUL};
                    const double vi = ${VI};
                    re = mlbc_madd(vr, cs[m], mlbc_madd(vi, sn[m], re));
                    im = mlbc_madd(vi, cs[m], mlbc_madd(-vr, sn[m], im));
                }
                yf[2 * k] = (${T})re;
                yf[2 * k + 1] = (${T})im;
            }
        }
    return 1;
}
