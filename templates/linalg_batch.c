// Batched matrix product: one call of the matrix kernel per batch element, operands walked
// with numpy broadcasting over the batch dimensions.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${OPEN}${INDENT}${CALL};
${CLOSE}}
