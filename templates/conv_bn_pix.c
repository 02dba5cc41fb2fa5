// A fused BatchNormalization (templates/conv_bn.c) on the output of a Conv product whose rows
// are pixels (yp, [pixel][channel], MG channels a pixel), while it is in cache, before
// templates/conv_pix_out.c takes it into the channel planes (and applies a fused Relu):
// channel m of each of the npix pixels becomes (y - mean) * a + b with the terms of t, as
// conv_bn.c computes it: the same bits.
/* ${DOC} */
static void ${FN}(float *restrict yp, long npix, const float *restrict t)
{
    long p, m;
    for (p = 0; p < npix; p++) {
        float *restrict yr = yp + p * ${MG};
        for (m = 0; m < ${MG}; m++)
            yr[m] = ${BN};
    }
}
