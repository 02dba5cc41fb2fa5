// Depthwise float Conv (compiler/op_conv.c, one input channel per group), direct: per output
// row of a channel, each tap's weight times the input row it reaches, summed into the row's
// outputs with explicit fused multiply-adds, the bias first and then the taps in order
// (kh, kw), padding included as zeros. So each output is the same chain of fmaf on every
// path and with every compiler. Output plane j (image j / M, channel j % M) reads input
// plane j / MG (xs): in place, or (FIRST, SRC) copied into one of two zero-bordered planes
// of xp a plane ahead, as its phases when strided along W (templates/conv_phases.c; the
// chunks' ROW and COL then find a tap's phase, and its row of outputs reads consecutive
// floats). A row goes in CHUNKS of up to 4 vectors of 16 sums (rows of fewer vectors
// several to a chunk), which stay in registers while the taps are added (gcc -O2 vectorises
// each loop of 16, with the CPU's FMA on the AVX2 and AVX-512 paths: isa_paths.c); lanes
// past the row's end are computed from what follows it in xp and never stored. A fused Relu
// is taken as the sums are stored; another fused activation (ACT) goes over the finished
// output plane. With a mean of each plane fused (MEAN), the plane is made in yb and y gets
// its mean, in the lanes and fold of the node taken: the planes are never stored.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long j, oh, kh, kw, i, c;
${FIRST}    for (j = 0; j < ${NM}; j++) {
        const long m = j % ${M};
        const float *restrict wm = w + m * ${KHW};
        float *restrict ym = ${YM};
${SRC}${CHUNKS}${ACT}${MEAN}    }
}
