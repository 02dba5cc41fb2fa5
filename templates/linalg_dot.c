// One row of a matrix product whose right operand is stored transposed (b[n][k], contiguous
// in k) and is not a constant (a constant one is packed into panels instead):
//     y[n] = alpha * sum_k a[k] * b[n][k]  (+ beta * c[n])
// Summation order, fixed: eight partial sums, acc[j] over k < K8 with k % 8 == j in
// ascending k; s = ((acc0 + acc4) + (acc2 + acc6)) + ((acc1 + acc5) + (acc3 + acc7)); then
// the tail k = K8 .. K-1 added to s in ascending k. The j loop is unit-stride in a and b.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    long n, k, j;
    ${FOR_N} {
        ${CT} acc[8] = {0}, s;
        ${FOR_K8}
            for (j = 0; j < 8; j++)
                acc[j] = ${MACJ};
        s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
        ${FOR_KT}
            s = ${MACK};
        y[n] = ${STORE};
    }
}
