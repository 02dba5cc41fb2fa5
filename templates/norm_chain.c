// LayerNorm as torch exports it below opset 17 (compiler/passes/fuse.c): per row of K features,
// mean = ReduceMean(x), d = x - mean, var = ReduceMean(d * d), y = d / sqrt(var + eps), then
// a Mul by a scale and an Add of a bias per feature if the model has them. A few passes over
// a row in cache instead of nine kernels and eight tensors. Each value is rounded where its
// node rounded it, the sums in ReduceMean's order (the lanes of templates/reduce.c), so the
// bits are those of the nodes apart. The squares and the scaled values are stored (in y's
// row) and read back after a fence, as the nodes' kernels pass them on, and the variance
// goes through a volatile: clang at -ffp-contract=fast would otherwise fuse a product with
// the sum or the bias after it, or the variance's division by a power of 2 (a product for
// it) with the epsilon. The loops over a row are two, the features up to a multiple of 16 and
// the rest: gcc -O2 vectorises only loops that leave nothing over (one loop over 100
// features ran 4 a step).
/* ${DOC} */
static void ${FN}(const float *restrict x, ${PARAMS}float *restrict y)
{
    float acc[${L}]${REST}, mean, sd;
    volatile float var;
    long r, k;
    int j;
    for (r = 0; r < ${ROWS}; r++) {
        const float *restrict xr = x + r * ${K};
        float *restrict yr = y + r * ${K};
${SUM_X}        mean = acc[0] / ${KF};
${SQUARES}        MLBC_FENCE_AT(yr);
${SUM_D2}        var = acc[0] / ${KF};
        sd = sqrtf(${VAR_EPS});
${OUT}    }
}
