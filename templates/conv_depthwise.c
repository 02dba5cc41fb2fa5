// Depthwise float Conv (compiler/op_conv.c, one input channel per group), direct: per output
// row of a channel, each tap's weight times the input row it reaches, summed into the row's
// outputs (acc) with explicit fused multiply-adds, the bias first and then the taps in order
// (kh, kw), padding included as zeros (PAD copies the channel into the zero-bordered xp, as
// its phases when strided along W: templates/conv_phases.c, ROW and COL then find a tap's
// phase, and its row of outputs reads consecutive floats). So
// each output is the same chain of fmaf on every path and with every compiler. The row loop
// goes over a multiple of 16 outputs (BLOCKS) and the rest (TAIL), of constant trip counts,
// which gcc -O2 vectorises (with the CPU's FMA on the AVX2 and AVX-512 paths: isa_paths.c).
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    float acc[${OW}];
    long n, m, oh, kh, kw, i;
${ZERO}    ${FOR_N}
        for (m = 0; m < ${M}; m++) {
            const float *restrict xm = x + (n * ${C} + ${CH}) * ${IHW};
            const float *restrict wm = w + m * ${KHW};
            float *restrict ym = y + (n * ${M} + m) * ${OHW};
${PAD}            for (oh = 0; oh < ${OH}; oh++) {
                for (i = 0; i < ${OW}; i++)
                    acc[i] = ${BIAS};
                for (kh = 0; kh < ${KH}; kh++)
                    for (kw = 0; kw < ${KW}; kw++) {
                        const float wv = wm[kh * ${KW} + kw];
                        const float *restrict xr = ${SRC} + (${ROW}) * ${XW} + ${COL};
${BLOCKS}${TAIL}                    }
                for (i = 0; i < ${OW}; i++) {
                    const float a = acc[i];
                    ym[oh * ${OW} + i] = ${STORE};
                }
            }
        }
}
