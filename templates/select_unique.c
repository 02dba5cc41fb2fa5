// Unique: x viewed as [O, M, I]; item j is the slice x[:, j, :], compared lexicographically
// (o major, then i; NaN sorts after every number and equals NaN). The M items are sorted by
// a stable bottom-up merge sort, then equal neighbours form groups. Exactly U groups must
// exist (the outputs' static size) or the kernel returns 1 before it writes anything.
// Groups are output in sorted order (SORTED 1) or in order of first occurrence (SORTED 0):
// y[:, g, :] is group g's first item, idx[g] that item's number, cnt[g] the group's size and
// inv[j] the group of item j. idx, inv and cnt may be null (outputs not requested).
/* ${DOC} */
static int ${FN}_cmp(const ${T} *restrict x, long a, long b)
{
    long o, i;
    ${FOR_O}
        ${FOR_I} {
            const ${CT} p = ${LOADA}, q = ${LOADB};
            if (${PLTQ})
                return -1;
            if (${QLTP})
                return 1;
        }
    return 0;
}

static int ${FN}(const ${T} *restrict x, ${T} *restrict y, int64_t *restrict idx,
                 int64_t *restrict inv, int64_t *restrict cnt)
{
    long perm[${MA}], tmp[${MA}], first[${UA}], pos[${UA}], size[${UA}];
    long w, lo, j, g, u;
    for (j = 0; j < ${M}; j++)
        perm[j] = j;
    for (w = 1; w < ${M}; w *= 2) {
        for (lo = 0; lo < ${M}; lo += 2 * w) {
            const long mid = lo + w < ${M} ? lo + w : ${M};
            const long hi = lo + 2 * w < ${M} ? lo + 2 * w : ${M};
            long a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] = ${FN}_cmp(x, perm[b], perm[a]) < 0 ? perm[b++] : perm[a++];
            while (a < mid)
                tmp[k++] = perm[a++];
            while (b < hi)
                tmp[k++] = perm[b++];
        }
        memcpy(perm, tmp, ${M} * sizeof *perm);
    }
    u = ${M} > 0;
    for (j = 1; j < ${M}; j++)
        u += ${FN}_cmp(x, perm[j - 1], perm[j]) != 0;
    if (u != ${U})
        return 1;
    /* tmp[item] = its group in sorted order; the stable sort puts the first item first. */
    g = -1;
    for (j = 0; j < ${M}; j++) {
        if (j == 0 || ${FN}_cmp(x, perm[j - 1], perm[j]) != 0) {
            g++;
            first[g] = perm[j];
            size[g] = 0;
        }
        tmp[perm[j]] = g;
        size[g]++;
    }
${ORDER}    for (g = 0; g < ${U}; g++) {
        const long p = pos[g];
        long o;
        if (idx)
            idx[p] = first[g];
        if (cnt)
            cnt[p] = size[g];
        ${FOR_O}
            memcpy(y + (o * ${U} + p) * ${I}, x + (o * ${M} + first[g]) * ${I},
                   ${I} * sizeof *y);
    }
    if (inv)
        for (j = 0; j < ${M}; j++)
            inv[j] = pos[tmp[j]];
    return 0;
}
