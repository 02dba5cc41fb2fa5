// Dot product of a contiguous weight row with a contiguous vector (RNN gate rows): 8
// independent partial sums, lane k taking the elements i with i mod 8 = k, combined
// pairwise at the end. The order is fixed, so results do not depend on the C compiler,
// and gcc -O2 vectorises the lanes. inline: a cell calls it 8 times per unit with constant
// lengths, which the compiler then specialises (7% of an LSTM + GRU policy).
static inline float mlbc_dot_f(const float *restrict w, const float *restrict v, long n)
{
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    long i = 0, k;
    for (; i + 8 <= n; i += 8)
        for (k = 0; k < 8; k++)
            s[k] += w[i + k] * v[i + k];
    for (k = 0; i + k < n; k++)
        s[k] += w[i + k] * v[i + k];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
