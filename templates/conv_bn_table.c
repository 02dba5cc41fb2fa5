// The per-channel terms of a BatchNormalization fused into a float Conv, once per call:
// t[m] = a = scale / sqrt(var + epsilon), computed as templates/norm_batch.c does, t[M + m]
// the mean and t[2M + m] the bias (templates/conv_bn.c applies them).
/* ${DOC} */
static void ${FN}(const float *restrict scale, const float *restrict bias,
                  const float *restrict mean, const float *restrict var, float *restrict t)
{
    long m;
    for (m = 0; m < ${M}; m++) {
        t[m] = scale[m] / sqrtf(var[m] + ${EPS});
        t[${M} + m] = mean[m];
        t[${M2} + m] = bias[m];
    }
}
