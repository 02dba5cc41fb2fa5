// BatchNormalization (inference) fused into a float Conv (compiler/fuse.c), applied to the
// MG channels of a tile of the product's output while it is in cache: channel m's n floats
// at y + m * ld become (y - mean) * a + b, as the BatchNormalization's own kernel computes
// them (templates/norm_batch.c; t is the table of templates/conv_bn_table.c), then the fused
// Relu if any (ACT): the same bits. In blocks of 16 (an inner loop of constant trip count,
// which gcc -O2 vectorises), then one by one.
/* ${DOC} */
static void ${FN}(float *restrict y, long ld, long n, const float *restrict t)
{
    long m, i, q;
    for (m = 0; m < ${MG}; m++) {
        const float a = t[m], mu = t[${M} + m], b = t[${M2} + m];
        float *restrict yr = y + m * ld;
        for (i = 0; i + 16 <= n; i += 16)
            for (q = 0; q < 16; q++) {
                const float v = ${BN};
                yr[i + q] = ${ACT};
            }
        for (q = 0; q < n - i; q++) {   /* counted from i, as in templates/conv_relu.c */
            const float v = ${BN};
            yr[i + q] = ${ACT};
        }
    }
}
