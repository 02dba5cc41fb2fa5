// Pad in constant mode: fill the output with the value, then copy the input's rows into
// the window the pads leave (memcpy of contiguous runs). Negative pads crop the input.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${BODY}}
