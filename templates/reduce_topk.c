// TopK: the ${K1} ${WHICH} of each slice along the axis, sorted, ties broken by the lower index;
// x viewed as [A][K][B]. Each slice is scanned once in index order and kept in insertion
// order directly in the outputs (O(K * k) comparisons, no extra memory).
/* ${DOC} */
static void ${FN}(const ${TX} *restrict x, ${TX} *restrict vy, int64_t *restrict iy)
{
    long a, b, i, n, p, q;
    ${FOR_A}
        ${FOR_B} {
            const ${TX} *restrict xr = x + a * ${KB} + b;
            ${TX} *restrict vr = vy + a * ${K1B} + b;
            int64_t *restrict ir = iy + a * ${K1B} + b;
            n = 0;
            for (i = 0; i < ${K}; i++) {
                const ${C} v = ${LOADV};
                p = n;
                while (p > 0 && ${BETTER})
                    p--;
                if (p >= ${K1})
                    continue;
                for (q = n < ${K1} ? n : ${K1} - 1; q > p; q--) {
                    vr[q * ${B}] = vr[(q - 1) * ${B}];
                    ir[q * ${B}] = ir[(q - 1) * ${B}];
                }
                vr[p * ${B}] = xr[i * ${B}];
                ir[p * ${B}] = i;
                if (n < ${K1})
                    n++;
            }
        }
}
