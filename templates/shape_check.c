// Run-time check of a shape-like input that was not constant at compile time: the compiler
// took the output's declared static shape, and this returns 1 if the input's data agree
// with it (0 makes the run fail). COND is built by compiler/op_shape.c or op_layout.c.
/* ${DOC} */
static int ${FN}(const ${T} *restrict s)
{
    return ${COND};
}
