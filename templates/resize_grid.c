// GridSample (2-D, PyTorch semantics): output pixel (h, w) of image n samples X[n, c] at
// the grid's normalised point (gx, gy) in [-1, 1], unnormalised with ALIGN, then
// MODE 0 nearest (round half to even) / 1 bilinear / 2 bicubic (A = -0.75), padding
// PAD 0 zeros (taps outside read 0) / 1 border (clamp) / 2 reflection. For nearest and
// bilinear the padding applies to the point; for bicubic to each tap, as PyTorch does.
// Computed in double; the taps are summed row by row. Every product that is added goes
// through mlbc_madd (a fused multiply-add), so contraction cannot change the result.
/* ${DOC} */
static double ${FN}_coord(double v, long size)
{
    const int pad = ${PAD};
    if (pad == 2) {
        const double lo = ${ALIGN} ? 0.0 : -0.5, span = ${ALIGN} ? (double)(size - 1) : (double)size;
        double extra, flips;
        if (span <= 0)
            return 0;
        v = fabs(v - lo);
        extra = fmod(v, span);
        flips = floor(v / span);
        v = fmod(flips, 2.0) == 0 ? extra + lo : span - extra + lo;
    }
    if (pad >= 1)
        v = !(v > 0) ? 0 : v > (double)(size - 1) ? (double)(size - 1) : v;
    return v;
}

static double ${FN}_at(const ${T} *restrict img, long x, long y)
{
    if (${PAD} != 0 && ${MODE} == 2) {
        x = (long)${FN}_coord((double)x, ${W});
        y = (long)${FN}_coord((double)y, ${H});
    }
    if (x < 0 || x >= ${W} || y < 0 || y >= ${H})
        return 0;
    return (double)img[y * ${W} + x];
}

static void ${FN}_cubic(double t, double *c)
{
    /* A = -0.75: ((A d - 5A) d + 8A) d - 4A for |d| in [1, 2], ((A + 2) d - (A + 3)) d d + 1
     * below 1 */
    const double d0 = t + 1, d1 = t, d2 = 1 - t, d3 = 2 - t;
    c[0] = mlbc_madd(mlbc_madd(mlbc_madd(-0.75, d0, 3.75), d0, -6.0), d0, 3.0);
    c[1] = mlbc_madd(mlbc_madd(1.25, d1, -2.25) * d1, d1, 1.0);
    c[2] = mlbc_madd(mlbc_madd(1.25, d2, -2.25) * d2, d2, 1.0);
    c[3] = mlbc_madd(mlbc_madd(mlbc_madd(-0.75, d3, 3.75), d3, -6.0), d3, 3.0);
}

static void ${FN}(const ${T} *restrict x, const ${T} *restrict grid, ${T} *restrict y)
{
    ${FOR_N}
        for (long p = 0; p < ${HW}; p++) {
            const double gx = (double)grid[(n * ${HW} + p) * 2];
            const double gy = (double)grid[(n * ${HW} + p) * 2 + 1];
            /* ((g + 1) size - 1) / 2, the halving folded into the fused multiply-add */
            double ix = ${ALIGN} ? (gx + 1) / 2 * (${W} - 1) : mlbc_madd(gx + 1, ${W} / 2.0, -0.5);
            double iy = ${ALIGN} ? (gy + 1) / 2 * (${H} - 1) : mlbc_madd(gy + 1, ${H} / 2.0, -0.5);
            if (${MODE} != 2) {
                ix = ${FN}_coord(ix, ${W});
                iy = ${FN}_coord(iy, ${H});
            }
            /* Keep the coordinates where converting to long is defined. */
            ix = !(ix > -8) ? -8 : ix > ${W} + 8 ? ${W} + 8 : ix;
            iy = !(iy > -8) ? -8 : iy > ${H} + 8 ? ${H} + 8 : iy;
            ${FOR_C} {
                const ${T} *img = x + (n * ${C} + c) * ${H} * ${W};
                double v;
                if (${MODE} == 0) {
                    v = ${FN}_at(img, (long)nearbyint(ix), (long)nearbyint(iy));
                } else if (${MODE} == 1) {
                    const double fx = floor(ix), fy = floor(iy), tx = ix - fx, ty = iy - fy;
                    const long x0 = (long)fx, y0 = (long)fy;
                    const double r0 = mlbc_madd(1 - tx, ${FN}_at(img, x0, y0),
                                                tx * ${FN}_at(img, x0 + 1, y0));
                    const double r1 = mlbc_madd(1 - tx, ${FN}_at(img, x0, y0 + 1),
                                                tx * ${FN}_at(img, x0 + 1, y0 + 1));
                    v = mlbc_madd(1 - ty, r0, ty * r1);
                } else {
                    const double fx = floor(ix), fy = floor(iy);
                    const long x0 = (long)fx - 1, y0 = (long)fy - 1;
                    double cx[4], cy[4];
                    ${FN}_cubic(ix - fx, cx);
                    ${FN}_cubic(iy - fy, cy);
                    v = 0;
                    for (int j = 0; j < 4; j++) {
                        double row = 0;
                        for (int i = 0; i < 4; i++)
                            row = mlbc_madd(cx[i], ${FN}_at(img, x0 + i, y0 + j), row);
                        v = mlbc_madd(cy[j], row, v);
                    }
                }
                y[(n * ${C} + c) * ${HW} + p] = (${T})v;
            }
        }
}
