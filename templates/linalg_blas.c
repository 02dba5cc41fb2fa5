// One matrix of a large float product through CBLAS (mlbc --blas): Y = alpha op(A) op(B) + beta C,
// with C first broadcast into Y when present.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${FILL}    ${CALL};
}
