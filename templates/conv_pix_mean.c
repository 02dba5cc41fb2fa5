// The output of a Conv product whose rows are pixels (yp, [pixel][channel], MG channels a
// pixel; compiler/ops/op_conv.c) into the mean of each channel's plane of OH x OW pixels, for
// a GlobalAveragePool or ReduceMean over the plane fused after the Conv: the planes are never
// stored, only 8 lanes a channel (lanes: [lane][channel]). Pixel q of the plane (row-major) is
// added to lane q mod 8, in order, from +0; the last rows fold the lanes as the unfused node
// does (FOLD) and divide by the plane's pixels: the same bits, but for a NaN's sign and
// payload: where two NaNs meet in a sum, which one it keeps is the operands' order, which the
// C compiler may swap (gcc -O2 and -O3 -march=native did), so any NaN comes out as NAN. ACT
// is a fused Relu's expression of the value v, or v.
/* ${DOC} */
static void ${FN}(const float *restrict yp, long rows, long oh, float *restrict lanes,
                  float *restrict y)
{
    const long q0 = oh * ${OW}, n = rows * ${OW};
    long p, m;
    int j;
    if (oh == 0)
        for (m = 0; m < 8 * ${MG}; m++)
            lanes[m] = 0;
    for (p = 0; p < n; p++) {
        float *restrict a = lanes + (q0 + p) % 8 * ${MG};
        const float *restrict yr = yp + p * ${MG};
        for (m = 0; m < ${MG}; m++) {
            const float v = yr[m];
            a[m] = a[m] + (${ACT});
        }
    }
    if (oh + rows < ${OH})
        return;
    for (m = 0; m < ${MG}; m++) {
        float s[8];
        for (j = 0; j < 8; j++)
            s[j] = lanes[j * ${MG} + m];
${FOLD}
        y[m] = s[0] != s[0] ? NAN : s[0] / ${PLANE};
    }
}
