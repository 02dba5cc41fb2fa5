// Trilu: in each of BATCH [N, M] matrices keep the upper (j - i >= k) or lower (j - i <= k)
// triangle and zero the rest; a row is one memcpy and one memset. k is clamped first so
// i + k cannot overflow.
/* ${DOC} */
static void ${FN}(const ${T} *restrict x, long long k, ${T} *restrict y)
{
    long b, i, c;
    if (k < -${N})
        k = -${N};
    if (k > ${M})
        k = ${M};
    ${FOR_B}
        ${FOR_I} {
            const ${T} *xr = x + (b * ${N} + i) * ${M};
            ${T} *yr = y + (b * ${N} + i) * ${M};
            c = (long)(i + k${PLUS1});
            c = c < 0 ? 0 : c > ${M} ? ${M} : c;
${ROW}        }
}
