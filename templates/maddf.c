// Multiply-adds outside the matrix kernels, written so that contraction cannot change them
// (the generated file's "same bits everywhere" note). Plain static inline: they vectorise.
/* a * b + c for floats: the product of two floats is exact in double, so the one rounding
 * (double, then float) is the same whether or not the compiler fuses the multiply-add. */
static inline float mlbc_maddf(float a, float b, float c)
{
    return (float)((double)a * b + c);
}
