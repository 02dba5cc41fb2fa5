// Resize/Upsample over static shapes: the tap tables of the resized axes are built first
// (TAPS, at run time: scales and roi may be inputs), then each output element is the
// weighted sum of its taps (LOOPS). Axes kept as they are read straight through; nested
// tap sums go from the first resized axis (outermost) to the last, as in the ONNX
// reference, with one accumulator per axis, each step an explicit fused multiply-add.
// SCALES and ROI declare those inputs when they are read at run time.
/* ${DOC} */
static void ${FN}(const ${T} *restrict x, ${SCALES}${ROI}${T} *restrict y)
{
${DECLS}${TAPS}${LOOPS}}
