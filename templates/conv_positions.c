// Float Conv of a batch of planes of a few output pixels, many of whose taps fall in the
// padding (compiler/op_conv.c, positions_pay): per output pixel p, one product over the
// batch's images, y[n][m][p] = sum over p's taps inside the plane of x[n][tap] w[m][tap]
// (+ bias[m]), the taps ascending (mlbc_gemm_f32_pix: A's rows the images through apix,
// their taps through p's part of offs; B those taps' weights, packed for p at compile time,
// at[p] floats in, its panels stride[p] apart). Each output is mlbc_gemm_f32's chain over
// all the taps less those in the padding: such a tap adds w * 0 = +-0 (W is constant and
// finite) to a chain that starts at +0 and is never -0 (a sum is -0 only if both terms are),
// so leaving it out changes nothing, and the bits are those of the products that read the
// zeros. The product's [image][channel] output yp gets the fused BatchNormalization and
// activation (BN), then goes into y, the Relu on the way (STORE).
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${BUFS}    long p, n, m;
${INIT}    for (p = 0; p < ${OSP}; p++) {
        mlbc_gemm_f32_pix(${N}, ${MG}, taps[p], x, apix, offs + first[p], w + at[p],
                          stride[p], ${CARGS}, yp, ${MG});
${BN}        for (n = 0; n < ${N}; n++)
            for (m = 0; m < ${MG}; m++)
                y[(n * ${MG} + m) * ${OSP} + p] = ${STORE};
    }
}
