// Relu fused into a float Conv (compiler/fuse.c), applied to a tile of the matrix product's
// output while it is in cache: y[i] = a > 0 ? a : 0, a = y[i] - the expression of the Relu
// node it replaces (op_elementwise.c), so the same bits: NaN and -0 give +0. In blocks of 8
// (an inner loop of constant trip count, which gcc -O2 vectorises), then one by one.
/* ${DOC} */
static void ${FN}(float *y, long n)
{
    long i, q;
    for (i = 0; i + 8 <= n; i += 8)
        for (q = 0; q < 8; q++) {
            const float a = y[i + q];
            y[i + q] = a > 0 ? a : 0;
        }
    for (q = 0; q < n - i; q++) {  /* counted from i: "for (; i < n; i++)" draws a false
                                      * -Waggressive-loop-optimizations warning from gcc */
        const float a = y[i + q];
        y[i + q] = a > 0 ? a : 0;
    }
}
