// NegativeLogLikelihoodLoss. The input is viewed as [N, C, D] (D = d1*...*dk, 1 for a 2-D
// input) and the target as [N, D]. Every target must be a class in [0, C) or ignore_index,
// otherwise the kernel returns 1 before it writes anything (and never reads past x or w).
// Per sample: loss = -x[n][k][d] * w[k] (w = 1 without weights); an ignored sample has loss
// 0 and weight 0. A reduced loss is summed in double in sample order (n, d), each step a
// fused multiply-add of -x[n][k][d] and w[k] (contraction-proof); the mean divides by the
// sum of the applied weights, as the ONNX reference does.
// Keys: T (element type), IT (target type), CT (computation type), LD/ST (load/store
// conversions, empty for float and double), WPARAM, WC (weight of class k), VALID (target
// check on k), DECL, OPEN (opens the block of a sample, unless ignored), ACCUM (use
// xk = x[n][k][d] and wc of sample s: the loss is -xk * wc), FINISH, N, C, D, and the loop
// heads FOR_I (over the N * D targets), FOR_N, FOR_D.
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${IT} *restrict t${WPARAM}, ${T} *restrict y)
{
    long i, n, d;
${DECL}    ${FOR_I} {
        const int64_t k = (int64_t)t[i];
        if (!(${VALID}))
            return 1;
    }
    ${FOR_N}
        ${FOR_D} {
            const long s = n * ${D} + d;  /* sample */
            const int64_t k = (int64_t)t[s];
${OPEN}                const ${CT} wc = ${WC};
                const ${CT} xk = ${LD}(x[(n * ${C} + (long)k) * ${D} + d]);
${ACCUM}            }
        }
${FINISH}    return 0;
}
