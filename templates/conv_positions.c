// Float Conv of a batch of planes whose border pixels have many taps in the padding
// (compiler/op_conv.c, positions_pay): the output pixels fall in classes of the same taps
// inside the plane (the interior one class, each side and corner of the border others; on
// planes of a few pixels, each pixel its own). Per class and block of NB images, one product:
// its rows the block's (image, pixel) pairs, row r's taps at x + apix[r] + offs[t] (the
// class's taps, ascending), B those taps' weights packed for the class at compile time, at[c]
// floats in, its panels stride[c] apart (mlbc_gemm_f32_pix). Each output is mlbc_gemm_f32's
// chain over all the taps less those in the padding: such a tap adds w * 0 = +-0 (W is
// constant and finite) to a chain that starts at +0 and is never -0 (a sum is -0 only if both
// terms are), so leaving it out changes nothing, and the bits are those of the products that
// read the zeros. The product's [row][channel] output yp gets the fused BatchNormalization
// and activation (BN); its rows are copied to their pixels in yb, the block's [image][pixel]
// [channel], whose images go into y's channel planes (OUT: templates/conv_pix_out.c, the
// Relu on the way): written pixel by pixel into the planes, the classes' rows took 30% of a
// network (8x8 planes, 48 channels) in strided stores.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${BUFS}    long n0, nb, c, n, i;
${INIT}    for (n0 = 0; n0 < ${N}; n0 += nb) {
        nb = ${N} - n0 < ${NB} ? ${N} - n0 : ${NB};
        for (c = 0; c < ${CLASSES}; c++) {
            const long rows = nb * npix[c];
            mlbc_gemm_f32_pix(rows, ${MG}, taps[c], x + n0 * ${ISP}, apix + arow[c],
                              offs + tfirst[c], w + at[c], stride[c], ${CARGS}, yp, ${MG});
${BN}            for (n = 0; n < nb; n++)
                for (i = 0; i < npix[c]; i++)
                    memcpy(yb + (n * ${OSP} + pix[pfirst[c] + i]) * ${MG},
                           yp + (n * npix[c] + i) * ${MG}, sizeof(float) * ${MG});
        }
        for (n = 0; n < nb; n++)
            ${OUT}(yb + n * ${OSP} * ${MG}, ${ROWS}, y + (n0 + n) * ${MG} * ${OSP});
    }
}
