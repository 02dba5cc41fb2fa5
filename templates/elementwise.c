// Elementwise kernel over a broadcast loop nest (compiler/loops.c builds OPEN/CLOSE and
// the index expressions). LOADS reads each operand into a local named a, b, c, ...; STORE
// combines them in the computation type and converts to y's type.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${OPEN}${LOADS}${INDENT}y[${IY}] = ${STORE};
${CLOSE}}
