// RoiAlign (${MODE}): region r of rois is (x1, y1, x2, y2) * SCALE - OFFSET over image
// batch_indices[r] of x [N, C, H, W]. Each of its PH x PW bins takes the ${MODE} of gh x gw
// bilinear samples (${GRID}) at the sub-bin centres, as ONNX Runtime computes it in ${T}:
// samples outside [-1, size] count as 0 and the max mode takes the max of the four weighted
// corners. Samples are visited row by row and the channels are accumulated together.
// Returns 1 before writing anything if a batch index is out of range. Products that are
// added go through MADD / the fused multiply-adds of ACCUM (contraction-proof).
/* ${DOC} */
static int ${FN}(const ${T} *restrict x, const ${T} *restrict rois, const ${IT} *restrict bi,
                 ${T} *restrict y)
{
    long r, ph, pw, iy, ix, c;
    for (r = 0; r < ${R}; r++)
        if (bi[r] < 0 || bi[r] >= ${N})
            return 1;
    for (r = 0; r < ${R}; r++) {
        const ${T} *xb = x + (long)bi[r] * ${CHW};
        const ${T} x1 = ${MADD}(rois[r * 4], ${SCALE}, -${OFFSET});
        const ${T} y1 = ${MADD}(rois[r * 4 + 1], ${SCALE}, -${OFFSET});
        const ${T} x2 = ${MADD}(rois[r * 4 + 2], ${SCALE}, -${OFFSET});
        const ${T} y2 = ${MADD}(rois[r * 4 + 3], ${SCALE}, -${OFFSET});
        ${T} rw = x2 - x1, rh = y2 - y1;
${CLAMP}        const ${T} bh = rh / ${PH}, bw = rw / ${PW};
        const long gh = ${GH}, gw = ${GW};
${COUNT}        ${T} *yr = y + r * ${C} * ${PHW};
        for (ph = 0; ph < ${PH}; ph++)
            for (pw = 0; pw < ${PW}; pw++) {
                ${T} *yo = yr + ph * ${PW} + pw;
                ${FOR_C}
                    yo[c * ${PHW}] = 0;
                for (iy = 0; iy < gh; iy++) {
                    const ${T} yy = ${MADD}((${T})ph, bh, y1) + ((${T})iy + (${T})0.5) * bh / (${T})gh;
                    for (ix = 0; ix < gw; ix++) {
                        const ${T} xx = ${MADD}((${T})pw, bw, x1) + ((${T})ix + (${T})0.5) * bw / (${T})gw;
                        ${T} sy = yy, sx = xx, w1 = 0, w2 = 0, w3 = 0, w4 = 0;
                        long p1 = 0, p2 = 0, p3 = 0, p4 = 0;
                        if (!(sy < -1 || sy > ${H} || sx < -1 || sx > ${W})) {
                            long ylo, xlo, yhi, xhi;
                            ${T} ly, lx;
                            if (sy <= 0)
                                sy = 0;
                            if (sx <= 0)
                                sx = 0;
                            ylo = (long)sy;
                            xlo = (long)sx;
                            if (ylo >= ${H} - 1) {
                                yhi = ylo = ${H} - 1;
                                sy = (${T})ylo;
                            } else {
                                yhi = ylo + 1;
                            }
                            if (xlo >= ${W} - 1) {
                                xhi = xlo = ${W} - 1;
                                sx = (${T})xlo;
                            } else {
                                xhi = xlo + 1;
                            }
                            ly = sy - (${T})ylo;
                            lx = sx - (${T})xlo;
                            w1 = (1 - ly) * (1 - lx);
                            w2 = (1 - ly) * lx;
                            w3 = ly * (1 - lx);
                            w4 = ly * lx;
                            p1 = ylo * ${W} + xlo;
                            p2 = ylo * ${W} + xhi;
                            p3 = yhi * ${W} + xlo;
                            p4 = yhi * ${W} + xhi;
                        }
                        ${FOR_C} {
                            const ${T} *d = xb + c * ${HW};
${ACCUM}                        }
                    }
                }
${FINISH}            }
    }
    return 0;
}
