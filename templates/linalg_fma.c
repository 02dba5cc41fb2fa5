// One matrix of a float product by the fused multiply-add kernels (templates/gemm_f32.c,
// dots_f32.c), called with the product's sizes and strides.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    ${CALL};
}
