// Dot product of a contiguous weight row with a contiguous vector (RNN gate rows): 8
// independent partial sums, lane k taking the elements i with i mod 8 = k, combined
// pairwise at the end. The order is fixed, so results do not depend on the C compiler,
// and gcc -O2 vectorises the lanes. Each step is a contraction-proof multiply-add
// (the exact product in double).
static inline float mlbc_dot_h(const uint16_t *restrict w, const float *restrict v, long n)
{
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    long i = 0, k;
    for (; i + 8 <= n; i += 8)
        for (k = 0; k < 8; k++)
            s[k] = mlbc_maddf(mlbc_h2f(w[i + k]), v[i + k], s[k]);
    for (k = 0; i + k < n; k++)
        s[k] = mlbc_maddf(mlbc_h2f(w[i + k]), v[i + k], s[k]);
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
