// Einsum over static shapes: the output indices are the outer loops, the summed indices the
// inner ones; each output element is one sum accumulated in ascending index order.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${BODY}}
