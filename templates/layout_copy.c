// Data movement as copy loop nests (compiler/op_layout.c): each nest walks the output and
// the input with their own static strides, axes merged where both are contiguous; where the
// innermost run is contiguous on both sides it is one memcpy.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${BODY}}
