// SoftmaxCrossEntropyLoss. Scores are viewed as [N, C, D] (D = d1*...*dk, 1 for a 2-D
// input) and labels as [N, D]. Per position: log_prob[c] = x[c] - lse with
// lse = m + log(sum_c exp(x[c] - m)), m the maximum over the classes; then the loss is the
// NegativeLogLikelihoodLoss of log_prob. Positions are taken in blocks of up to B so that
// the loops over classes walk x with unit stride. Every label must be a class in [0, C) or
// ignore_index, otherwise the kernel returns 1 before it writes anything. A reduced loss is
// summed in double in sample order (n, d), each step a fused multiply-add (contraction-proof);
// the mean divides by the sum of the applied weights (ignored samples weigh 0), as the ONNX
// reference does.
// Keys as in loss_nll, plus SFX (libm suffix), B (block), LPPARAM/LOGPROB (log_prob output),
// FOR_D0 (blocks), FOR_C and FOR_C1 (classes from 0, from 1).
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${IT} *restrict t${WPARAM}, ${T} *restrict y${LPPARAM})
{
    long i, n, c, d0, j;
${DECL}    ${FOR_I} {
        const int64_t k = (int64_t)t[i];
        if (!(${VALID}))
            return 1;
    }
    ${FOR_N}
        ${FOR_D0} {
            /* class c at block position j: xb[c * D + j] */
            const ${T} *const xb = x + n * ${CD} + d0;
            const long nb = ${D} - d0 < ${B} ? ${D} - d0 : ${B};
            ${CT} m[${B}], lse[${B}];
            for (j = 0; j < nb; j++)
                m[j] = ${LD}(xb[j]);
            ${FOR_C1}
                for (j = 0; j < nb; j++) {
                    const ${CT} v = ${LD}(xb[c * ${D} + j]);
                    m[j] = v > m[j] ? v : m[j];
                }
            for (j = 0; j < nb; j++)
                lse[j] = 0;
            ${FOR_C}
                for (j = 0; j < nb; j++)
                    lse[j] += exp${SFX}(${LD}(xb[c * ${D} + j]) - m[j]);
            for (j = 0; j < nb; j++)
                lse[j] = m[j] + log${SFX}(lse[j]);
${LOGPROB}            for (j = 0; j < nb; j++) {
                const long s = n * ${D} + d0 + j;  /* sample */
                const int64_t k = (int64_t)t[s];
${OPEN}                    const ${CT} wc = ${WC};
                    const ${CT} xk = ${LD}(xb[(long)k * ${D} + j]) - lse[j];  /* log_prob */
${ACCUM}                }
            }
        }
${FINISH}    return 0;
}
