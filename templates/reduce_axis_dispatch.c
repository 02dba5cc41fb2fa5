// ${OP} whose axis arrives at run time: one specialised kernel per axis; returns 1 (and
// writes nothing) if the axis is out of range.
/* ${DOC} */
static int ${FN}(const ${TA} *restrict axis, const ${TX} *restrict x, ${TY} *restrict y)
{
    const long a = axis[0] < 0 ? (long)axis[0] + ${RANK} : (long)axis[0];
    switch (a) {
${CASES}    default: return 1;
    }
}
