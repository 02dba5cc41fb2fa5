// Accumulations of float products outside the matrix kernels (the generated file's "same
// bits everywhere" note).
/* acc + a * b, accumulated in double: the product of two floats is exact in double, so the
 * sum is the same whether or not the compiler fuses it, and the running sum never passes
 * through a float rounding that an optimiser might drop (gcc -O3's SLP vectoriser does). */
static inline double mlbc_accf(float a, float b, double acc)
{
    return (double)a * b + acc;
}
