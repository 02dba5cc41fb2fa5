// Dot product of a contiguous weight row with a contiguous vector (RNN gate rows): 8
// independent partial sums, lane k taking the elements i with i mod 8 = k, combined
// pairwise at the end. The order is fixed, so results do not depend on the C compiler,
// and each step is an explicit fma (contraction-proof; a libm call where the target has no
// FMA instruction).
static inline double mlbc_dot_d(const double *restrict w, const double *restrict v, long n)
{
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    long i = 0, k;
    for (; i + 8 <= n; i += 8)
        for (k = 0; k < 8; k++)
            s[k] = mlbc_madd(w[i + k], v[i + k], s[k]);
    for (k = 0; i + k < n; k++)
        s[k] = mlbc_madd(w[i + k], v[i + k], s[k]);
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
