// Multiply-adds outside the matrix kernels, written so that contraction cannot change them
// (the generated file's "same bits everywhere" note). Plain static inline: they vectorise.
/* a * b + c for doubles: an explicit fused multiply-add, one rounding on every path. */
static inline double mlbc_madd(double a, double b, double c)
{
    return fma(a, b, c);
}
