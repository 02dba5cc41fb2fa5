// MaxUnpool: zero the output, then write each input value at its index. Indices address
// the default (inferred) output shape; when output_shape is larger, that block sits at the
// start of every axis (ONNX reference). Out-of-range indices are ignored.
/* ${DOC} */
static void ${FN}(const ${T} *restrict x, const int64_t *restrict ind, ${T} *restrict y)
{
    for (long i = 0; i < ${NY}; i++)
        y[i] = 0;
    for (long i = 0; i < ${NX}; i++) {
        const int64_t j = ind[i];
        if (j < 0 || j >= ${NINF})
            continue;
${STORE}    }
}
