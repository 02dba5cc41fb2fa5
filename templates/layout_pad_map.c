// Pad in edge, reflect or wrap mode: ${FN}_src maps an output index along an axis, minus
// the leading pad, to the input index (n is the input's dimension); the kernel walks the
// output in order and gathers (BODY). PRE reads the leading pads of a run-time pads input.
static long ${FN}_src(long s, long n)
{
${MAP}}

/* ${DOC} */
static void ${FN}(${PARAMS})
{
${PRE}    long k = 0;
${BODY}}
