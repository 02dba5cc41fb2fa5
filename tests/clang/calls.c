/* A small program for compiling with clang-19's ML advisors (tests/test_clang.py): many call
 * sites of small and large static functions for the inliner, loops with many live values for
 * the register allocator. It prints checksums, so a build with any advice that yields a valid
 * program prints the same lines as the default build. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 64

typedef struct vec { double x, y, z; } vec;

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static int sq(int v) { return v * v; }
static unsigned rotl(unsigned v, int k) { return (v << (k & 31)) | (v >> ((32 - k) & 31)); }
static vec vadd(vec a, vec b) { vec r = { a.x + b.x, a.y + b.y, a.z + b.z }; return r; }
static vec vscale(vec a, double s) { vec r = { a.x * s, a.y * s, a.z * s }; return r; }
static double vdot(vec a, vec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

static unsigned hash_bytes(const unsigned char *p, size_t n)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
        h = rotl(h, (int)(i % 7) + 1);
    }
    return h;
}

static int classify(int v)
{
    switch (v & 15) {
    case 0: return sq(v) % 7;
    case 1: case 2: return clamp(v, -5, 5);
    case 3: return v * 3 + 1;
    case 5: return v / 2;
    case 8: return -v;
    case 13: return sq(v & 255) - v;
    default: return v & 3;
    }
}

/* Many simultaneously live values: pressure on the register allocator. */
static int64_t mix(const int *a, int n)
{
    int64_t s0 = 1, s1 = 2, s2 = 3, s3 = 5, s4 = 7, s5 = 11, s6 = 13, s7 = 17;
    int64_t s8 = 19, s9 = 23, s10 = 29, s11 = 31, s12 = 37, s13 = 41, s14 = 43, s15 = 47;
    for (int i = 0; i < n; i++) {
        int64_t v = a[i];
        s0 += v * s15; s1 ^= v + s0; s2 += s1 * 3; s3 -= s2 ^ v;
        s4 += s3 >> 2; s5 ^= s4 * 7; s6 += s5 - v; s7 ^= s6 << 1;
        s8 += s7 % 1000003; s9 ^= s8 + v; s10 += s9 * 5; s11 -= s10 ^ s0;
        s12 += s11 >> 3; s13 ^= s12 * 9; s14 += s13 - s1; s15 ^= (s14 << 2) + classify(a[i]);
    }
    return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7 + s8 + s9 + s10 + s11 + s12 + s13 + s14 + s15;
}

static double simulate(int steps)
{
    vec p[8], v[8];
    for (int i = 0; i < 8; i++) {
        vec a = { i * 0.5, 1.0 - i * 0.25, i * i * 0.125 };
        vec b = { 0.01 * i, -0.02, 0.03 };
        p[i] = a;
        v[i] = b;
    }
    double e = 0;
    for (int s = 0; s < steps; s++)
        for (int i = 0; i < 8; i++) {
            vec f = vscale(p[i], -0.001);
            for (int j = 0; j < 8; j++)
                if (j != i) f = vadd(f, vscale(p[j], 0.0001 * (j - i)));
            v[i] = vadd(v[i], f);
            p[i] = vadd(p[i], vscale(v[i], 0.1));
            e += vdot(v[i], v[i]);
        }
    return e;
}

static int gcd(int a, int b) { while (b) { int t = a % b; a = b; b = t; } return a; }

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static void sort(int *a, int n)
{
    for (int i = 1; i < n; i++) {
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static int count_words(const char *s)
{
    int n = 0, in = 0;
    for (; *s; s++) {
        int sp = *s == ' ' || *s == '\n' || *s == '\t';
        if (!sp && !in) n++;
        in = !sp;
    }
    return n;
}

int main(void)
{
    int a[N];
    unsigned seed = 12345;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        a[i] = (int)(seed >> 16) % 1000 - 500;
    }
    printf("mix %lld\n", (long long)mix(a, N));
    int c = 0;
    for (int i = 0; i < N; i++) c += classify(a[i]) + clamp(a[i], -100, 100);
    printf("classify %d\n", c);
    sort(a, N);
    printf("sorted %d %d %d\n", a[0], a[N / 2], a[N - 1]);
    int g = 0;
    for (int i = 1; i < N; i++) g += gcd(a[i] < 0 ? -a[i] : a[i] + 1, i + 1);
    printf("gcd %d fib %d\n", g, fib(20));
    printf("simulate %.6f\n", simulate(50));
    const char *text = "the quick brown fox\njumps over\tthe lazy dog";
    printf("hash %08x words %d\n", hash_bytes((const unsigned char *)text, strlen(text)),
           count_words(text));
    return 0;
}
