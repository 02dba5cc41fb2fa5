// Strided copy into a dense y (static Slice): x is read from offset BASE with per-axis
// strides (negative for reversed axes); the innermost contiguous run is one memcpy.
/* ${DOC} */
static void ${FN}(const ${T} *restrict x, ${T} *restrict y)
{
${OPEN}${INDENT}${BODY}
${CLOSE}}
