// Batched call of a per-matrix kernel over broadcast batch dimensions: operand offsets are
// counted in matrices (MA, MB, MY elements each).
/* ${DOC} */
static void ${FN}(const ${AT} *restrict a, const float *restrict a_scale,
                  const ${AT} *restrict a_zero_point, const ${BT} *restrict b,
                  const float *restrict b_scale, const ${BT} *restrict b_zero_point,
                  const float *restrict y_scale, const ${YT} *restrict y_zero_point,
                  ${YT} *restrict y)
{
${OPEN}${INDENT}${MM}(a + (${IA}) * ${MA}, a_scale, a_zero_point, b + (${IB}) * ${MB}, b_scale,
${INDENT}    b_zero_point, y_scale, y_zero_point, y + (${IY}) * ${MY});
${CLOSE}}
