// Float convolution as a matrix product, per image, group and tile of output pixels:
//     y[m][pixel] = sum over taps of w[m][tap] * xcol[tap][pixel]  (+ bias[m])
// with w the group's rows of W read in place ([MG][taps], taps = C/G * kernel size) and xcol
// the group's input as columns (templates/conv_im2col.c; a 1x1 convolution with unit strides
// and no padding reads x itself). mlbc_gemm_f32 computes each output as one chain of fused
// multiply-adds over the taps ascending, then adds the bias: the same bits on every path.
// Tiles of at most T pixels bound the column buffer; it and the zero-padded input are in ws,
// the node's workspace (a block of the context's scratch arena, compiler/passes/plan.c), not
// on the stack. The product writes each output channel's pixels of the tile in place (its
// row stride is the plane, OSP). With a unit stride along the last axis there are no columns:
// mlbc_gemm_f32_taps reads the (zero-padded) input in place through a table of tap offsets
// (offs), the same chains, into an output tile yt that is copied out, or pooled by a fused
// MaxPool into y (whose planes are then YSP floats, not OSP); a product that covers the whole
// plane in y's own layout writes into y. A fused BatchNormalization's
// per-channel terms are computed once per call (INIT) into the table bnt, in ws too.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${BUFS}    long n, g, p0${DECLS};
${INIT}    ${FOR_N}
        ${FOR_G} {
            const float *restrict xg = x + (n * ${C} + g * ${CG}) * ${ISP};
            float *restrict yg = y + (n * ${M} + g * ${MG}) * ${YSP};
${PRE}            ${FOR_P0} {
                const long np = ${OSP} - p0 < ${T} ? ${OSP} - p0 : ${T};
${TILE}            }
        }
}
