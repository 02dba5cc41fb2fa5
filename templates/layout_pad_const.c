// Pad in constant mode: fill the output with the value, then copy the input's rows into
// the window the pads leave (BODY: memcpy of contiguous runs). Negative pads crop the input.
// PRE reads the leading pads of a run-time pads input.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${PRE}    for (long i = 0; i < ${COUNT}; i++)
        y[i] = ${VALUE};
${BODY}}
