// GatherND: the index tensor is B batches of M tuples of K coordinates; each tuple picks a
// contiguous run of S elements of its batch of x (batch size XB elements) and the runs are
// stored one after another. Negative coordinates count from the end; one out of range makes
// the kernel return 1.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${IT} *restrict ind, ${T} *restrict y)
{
    long b, m, i, off;
    ${FOR_B}
        ${FOR_M} {
            const ${IT} *t = ind + (b * ${M} + m) * ${K};
            off = b * ${XB};
${COORDS}            mlbc_copy(y + (b * ${M} + m) * ${S}, x + off, ${S} * sizeof *y);
        }
    return 0;
}
