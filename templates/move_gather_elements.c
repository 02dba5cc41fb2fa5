// GatherElements: y[p] = x[p with its AXIS coordinate replaced by ind[p]], over the index
// tensor's shape (loop nest from compiler/loops.c; IX is p's offset in x without the axis
// term). Negative indices count from the end; one out of range makes the kernel return 1.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${IT} *restrict ind, ${T} *restrict y)
{
${OPEN}${INDENT}const long k = (long)ind[${IY}] + (ind[${IY}] < 0 ? ${N} : 0);
${INDENT}if (k < 0 || k >= ${N})
${INDENT}    return 1;
${INDENT}y[${IY}] = x[${IX} + k * ${S}];
${CLOSE}    return 0;
}
