// Elementwise kernel over a broadcast loop nest (compiler/loops.c builds OPEN/CLOSE and
// the index expressions). BODY reads each operand into a local named a, b, c, ...,
// combines them in the computation type and stores y in its type; REST is empty, or the
// innermost loop's last trips (loop_nest_split) with BODY again.
/* ${DOC} */
static void ${FN}(${PARAMS})
{
${OPEN}${BODY}${REST}${CLOSE}}
