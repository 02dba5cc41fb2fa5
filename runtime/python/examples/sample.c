/* A small translation unit with call sites for the inliner and enough live values for the
 * register allocator; used by the examples. */
static int sq(int x) { return x * x; }
static int add3(int a, int b, int c) { return a + b + c; }
static int poly(int x) { return add3(sq(x), 3 * x, 7); }

int checksum(const int *v, int n)
{
    int s = 0, t = 1, u = 2, w = 3;
    for (int i = 0; i < n; i++) {
        s += poly(v[i]);
        t ^= sq(v[i] + s);
        u += add3(s, t, v[i]);
        w = w * 31 + (u >> 3) + t;
    }
    return s ^ t ^ u ^ w;
}

int table(int *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = poly(i) + sq(i) - add3(i, i, i);
    return checksum(out, n);
}

/* Many values live across a loop: more than x86-64 has registers, so the greedy allocator
 * has to evict or split (the eviction advisor is asked). */
long pressure(const long *v, int n)
{
    long a0 = 1, a1 = 2, a2 = 3, a3 = 4, a4 = 5, a5 = 6, a6 = 7, a7 = 8, a8 = 9, a9 = 10;
    long b0 = 11, b1 = 12, b2 = 13, b3 = 14, b4 = 15, b5 = 16, b6 = 17, b7 = 18;
    for (int i = 0; i < n; i++) {
        long x = v[i];
        a0 += x; a1 ^= a0; a2 += a1 * x; a3 -= a2; a4 += a3 ^ x; a5 *= a4 | 1; a6 += a5;
        a7 ^= a6 + x; a8 += a7; a9 -= a8 * x; b0 += a9; b1 ^= b0 + a1; b2 += b1 * a2;
        b3 -= b2 ^ a3; b4 += b3 + a4; b5 ^= b4 * a5; b6 += b5 - a6; b7 ^= b6 + a7;
    }
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 +
           b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7;
}
