// Depthwise float Conv (compiler/op_conv.c, one input channel per group), direct: per output
// row of a channel, each tap's weight times the input row it reaches, summed into the row's
// outputs (acc) with explicit fused multiply-adds, the bias first and then the taps in order
// (kh, kw), padding included as zeros. So each output is the same chain of fmaf on every
// path and with every compiler. Output plane j (image j / M, channel j % M) reads input
// plane j / MG (xs): in place, or (FIRST, SRC) copied into one of two zero-bordered planes
// of xp a plane ahead, as its phases when strided along W (templates/conv_phases.c; ROW and
// COL then find a tap's phase, and its row of outputs reads consecutive floats). The row
// loop goes over a multiple of 16 outputs (BLOCKS) and the rest (TAIL), of constant trip
// counts, which gcc -O2 vectorises (with the CPU's FMA on the AVX2 and AVX-512 paths:
// isa_paths.c); from xp, over ACCW outputs, whole vectors whose lanes past OW are dropped.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    float acc[${ACCW}];
    long j, oh, kh, kw, i;
${FIRST}    for (j = 0; j < ${NM}; j++) {
        const long m = j % ${M};
        const float *restrict wm = w + m * ${KHW};
        float *restrict ym = y + j * ${OHW};
${SRC}        for (oh = 0; oh < ${OH}; oh++) {
            for (i = 0; i < ${ACCW}; i++)
                acc[i] = ${BIAS};
            for (kh = 0; kh < ${KH}; kh++)
                for (kw = 0; kw < ${KW}; kw++) {
                    const float wv = wm[kh * ${KW} + kw];
                    const float *restrict xr = xs + (${ROW}) * ${XW} + ${COL};
${BLOCKS}${TAIL}                }
${STORES}        }
    }
}
