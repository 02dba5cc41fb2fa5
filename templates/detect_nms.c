// NonMaxSuppression: for each batch b and class c, the boxes whose score is above the score
// threshold (all boxes without one) are visited by descending score, ties by ascending box
// number (a stable merge sort); a box is selected unless its IoU with a box already selected
// for (b, c) exceeds the IoU threshold, until max_output_boxes_per_class are selected.
// Boxes are corners [y1, x1, y2, x2] in any order (CENTER 0) or [x, y, w, h] (CENTER 1);
// the IoU test is ONNX Runtime's, in float, except that the union is formed in double from
// the exact products (so that contraction cannot change it). Rows (b, c, box) are stored
// in batch, class, selection order. Exactly K rows must result (the output's static size):
// otherwise the kernel returns 1 (and never writes beyond row K).
/* ${DOC} */
static void ${FN}_extent(const float *restrict box, float *restrict e)
{
${EXTENT}}

static int ${FN}_suppress(const float *restrict a, const float *restrict b, float thr)
{
    float ea[4], eb[4], ix0, ix1, iy0, iy1, inter, wa, ha, wb, hb, uni;
    ${FN}_extent(a, ea);
    ${FN}_extent(b, eb);
    ix0 = ea[0] > eb[0] ? ea[0] : eb[0];
    ix1 = ea[1] < eb[1] ? ea[1] : eb[1];
    if (ix1 <= ix0)
        return 0;
    iy0 = ea[2] > eb[2] ? ea[2] : eb[2];
    iy1 = ea[3] < eb[3] ? ea[3] : eb[3];
    if (iy1 <= iy0)
        return 0;
    inter = (ix1 - ix0) * (iy1 - iy0);
    if (inter <= 0.0f)
        return 0;
    wa = ea[1] - ea[0];
    ha = ea[3] - ea[2];
    wb = eb[1] - eb[0];
    hb = eb[3] - eb[2];
    /* area_a + area_b - inter from the products, exact in double, with fused multiply-adds */
    uni = (float)mlbc_madd(-(double)(ix1 - ix0), iy1 - iy0,
                           mlbc_madd((double)wa, ha, (double)wb * hb));
    if (wa * ha <= 0.0f || wb * hb <= 0.0f || uni <= 0.0f)
        return 0;
    return inter / uni > thr;
}

static int ${FN}(const float *restrict boxes, const float *restrict scores${PARAMS},
                 int64_t *restrict y)
{
    long cand[${NA}], tmp[${NA}], sel[${NA}];
    const long max_out = ${MAXOUT};
    const float iou_thr = ${IOU};
    long b, c, total = 0;
    ${FOR_B}
        ${FOR_C} {
            const float *s = scores + (b * ${C} + c) * ${N};
            const float *bx = boxes + b * ${N} * 4;
            long nc = 0, ns = 0, j, w, lo;
            ${FOR_J}
                if (${KEEP})
                    cand[nc++] = j;
            for (w = 1; w < nc; w *= 2) {
                for (lo = 0; lo < nc; lo += 2 * w) {
                    const long mid = lo + w < nc ? lo + w : nc;
                    const long hi = lo + 2 * w < nc ? lo + 2 * w : nc;
                    long p = lo, q = mid, k = lo;
                    while (p < mid && q < hi)
                        tmp[k++] = s[cand[q]] > s[cand[p]] ? cand[q++] : cand[p++];
                    while (p < mid)
                        tmp[k++] = cand[p++];
                    while (q < hi)
                        tmp[k++] = cand[q++];
                }
                memcpy(cand, tmp, (size_t)nc * sizeof *cand);
            }
            for (j = 0; j < nc && ns < max_out; j++) {
                const long k = cand[j];
                long q;
                int keep = 1;
                for (q = 0; q < ns && keep; q++)
                    keep = !${FN}_suppress(bx + sel[q] * 4, bx + k * 4, iou_thr);
                if (!keep)
                    continue;
                sel[ns++] = k;
                if (total < ${K}) {
                    y[total * 3] = b;
                    y[total * 3 + 1] = c;
                    y[total * 3 + 2] = k;
                }
                total++;
            }
        }
    return total != ${K};
}
