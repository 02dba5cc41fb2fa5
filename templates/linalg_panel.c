// A panel of output columns of one row of a matrix product, the kernel of Gemm/MatMul:
//     y[l] = alpha * sum_k a[k] * b[k][l]  (+ beta * c[l]),  for the LS stored lanes l
// where b[k][l] is the W expression (a compile-time packed panel w[k * 8 + l], or B itself).
// Summation order, fixed so that results are deterministic: four partial sums per lane,
//     c_j[l] = sum of a[k] * b[k][l] over k < K4 with k % 4 == j, in ascending k,
//     then the tail k = K4 .. K-1 added to c_0[l] in ascending k,
//     s = (c_0[l] + c_2[l]) + (c_1[l] + c_3[l]).
// Each lane is its own sum, so the unit-stride lane loops vectorise at gcc/clang -O2 without
// any reassociation (no -ffast-math): a[k] is broadcast, eight columns advance together.
// Each multiply-add is an explicit fmaf/fma (the same bits on every path). Plain float
// products take the vectorised FMA kernels (gemm_f32.c) instead.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
    ${CT} c0[${L}] = {0}, c1[${L}] = {0}, c2[${L}] = {0}, c3[${L}] = {0};
    long k, l;
    ${FOR_K4} {
        const ${CT} a0 = ${A0};
        const ${CT} a1 = ${A1};
        const ${CT} a2 = ${A2};
        const ${CT} a3 = ${A3};
        ${FOR_L}
            c0[l] = ${MAC0};
        ${FOR_L}
            c1[l] = ${MAC1};
        ${FOR_L}
            c2[l] = ${MAC2};
        ${FOR_L}
            c3[l] = ${MAC3};
    }
    ${FOR_KT} {
        const ${CT} a0 = ${AK};
        ${FOR_L}
            c0[l] = ${MACK};
    }
    ${FOR_LS} {
        const ${CT} s = (c0[l] + c2[l]) + (c1[l] + c3[l]);
        y[l] = ${STORE};
    }
}
