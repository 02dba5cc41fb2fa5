// MelWeightMatrix: NB = dft_length / 2 + 1 rows (spectrogram bins), M columns (mel bands).
// The band edges are M + 2 points evenly spaced on the mel scale mel(f) = 2595 log10(1 +
// f / 700) from lower to upper edge (mel ends in the edge type, the rest in double, as the
// ONNX reference computes them; the multiply-adds fused), each mapped to bin
// floor((dft_length + 1) f / sample_rate).
// Column i is the triangle rising from edge i to edge i + 1 (value 1 there) and falling to
// edge i + 2; bins outside [0, NB) are dropped. Returns 0 if num_mel_bins or dft_length
// disagree with the static output shape.
/* ${DOC} */
static int ${FN}(const ${IT} *restrict num_mel_bins, const ${IT} *restrict dft_length,
                 const ${IT} *restrict sample_rate, const ${FT} *restrict lower_edge,
                 const ${FT} *restrict upper_edge, ${T} *restrict y)
{
    long fb[${M} + 2], i, j;
    const double dl = (double)dft_length[0], sr = (double)sample_rate[0];
    const ${CT} lo_mel = 2595 * ${LOG_LO};
    const ${CT} step = ${FMA}(2595, ${LOG_HI}, -lo_mel) / (${CT})(${M} + 2);
    if (num_mel_bins[0] != ${M} || dft_length[0] / 2 + 1 != ${NB})
        return 0;
    for (i = 0; i < ${M} + 2; i++) {
        const double hz = 700 * (pow(10.0, mlbc_madd((double)i, (double)step, (double)lo_mel) / 2595) - 1);
        fb[i] = (long)floor((dl + 1) * hz / sr);
    }
    memset(y, 0, ${NY} * sizeof *y);
    for (i = 0; i < ${M}; i++) {
        const long left = fb[i], centre = fb[i + 1], right = fb[i + 2];
        if (centre == left) {
            if (centre >= 0 && centre < ${NB})
                y[centre * ${M} + i] = ${ONE};
        } else {
            for (j = left; j <= centre; j++)
                if (j >= 0 && j < ${NB})
                    y[j * ${M} + i] = ${STORE_UP};
        }
        for (j = centre; j < right; j++)
            if (j >= 0 && j < ${NB})
                y[j * ${M} + i] = ${STORE_DOWN};
    }
    return 1;
}
