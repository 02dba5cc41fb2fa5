// Expand: copy with numpy broadcasting over a loop nest (compiler/loops.c merges the axes
// that both sides walk contiguously, so a row repeated down a matrix is a unit-stride copy).
/* ${DOC} */
static void ${FN}(const ${T} *restrict x, ${T} *restrict y)
{
${OPEN}${INDENT}y[${IY}] = x[${IX}];
${CLOSE}}
