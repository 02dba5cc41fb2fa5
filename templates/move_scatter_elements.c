// ScatterElements: y = x, then for every position p of the index tensor the element of y at
// p with its AXIS coordinate replaced by ind[p] is updated from u[p] (assigned, or combined
// by the reduction). Negative indices count from the end; one out of range makes the kernel
// return 1. Updates apply in row-major order of p.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${IT} *restrict ind,
    const ${T} *restrict u, ${T} *restrict y)
{
    memcpy(y, x, ${NX} * sizeof *y);
${OPEN}${INDENT}const long k = (long)ind[${IU}] + (ind[${IU}] < 0 ? ${N} : 0);
${INDENT}if (k < 0 || k >= ${N})
${INDENT}    return 1;
${INDENT}${UPDATE}
${CLOSE}    return 0;
}
