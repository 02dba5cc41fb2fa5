// Window arithmetic of the pooling kernels.
/* Number of taps k in [0, K) of a window starting at s with dilation d landing in [0, L). */
static long mlbc_pool_taps(long s, long L, long K, long d)
{
    long lo = s < 0 ? (-s + d - 1) / d : 0, hi = (L - s + d - 1) / d;
    if (hi > K)
        hi = K;
    return hi > lo ? hi - lo : 0;
}
