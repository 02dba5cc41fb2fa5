// Tap table of one resized axis of Resize/Upsample: for output index o, the source
// coordinate x (COORD, ONNX coordinate_transformation_mode, from the scale, DEN = the resized
// length minus 1, and the roi), then the T source indices (clamped to [0, IN-1], i.e. edge
// padding) and their weights (BODY). Computed at run time in double because the scale and
// roi may be model inputs; EXT marks where tf_crop_and_resize extrapolates. idx has OUT*T
// entries; PARAMS adds w[OUT*T] (not for nearest) and ext[OUT] (tf_crop_and_resize only).
/* ${DOC} */
static void ${FN}(double scale, double den, double roi0, double roi1, long *restrict idx${PARAMS})
{
    long o;
    (void)scale;
    (void)den;
    (void)roi0;
    (void)roi1;
    ${FOR_O} {
        const double x = ${COORD};
        double f = floor(x);
${BODY}    }
}
