// Depthwise float Conv whose output planes are a few pixels (compiler/op_conv.c,
// depthwise_tiny): each output the chain of templates/conv_depthwise.c, the bias first and
// then fmaf over the taps in order (kh, kw), but without the taps that fall in the padding,
// and x read in place. Such a tap adds w * 0 = +-0 (the weights are constants, all finite)
// to a sum that is never -0 (it starts at a bias that is not -0, and a sum of two numbers is
// -0 only if both are): it changes nothing, so the bits are that kernel's. Its planes of 16
// lanes a row, padded copy and all, had cost 8 ns for each 1x1 output plane (a 3x3 Conv of
// stride 2 on 2x2 planes, 96 channels, batch 96: a quarter of its network's time).
// OUTPUTS: a statement list per output pixel (the taps that reach the plane, as constants);
// a fused Relu as the sum is stored, another activation (ACT) over runs of planes.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long j;
    for (j = 0; j < ${NM}; j++) {
        const long m = j % ${M};
        const float *restrict wm = w + m * ${KHW};
        const float *restrict xs = x + ${IN} * ${ISP};
        float *restrict ym = y + j * ${OSP};
        float a;
        (void)wm, (void)xs;     /* unread if every tap falls in the padding */
${OUTPUTS}${ACT}    }
}
