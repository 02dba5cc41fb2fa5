/* Call sites of every kind for the GCC inlining plugin tests (tests/test_gcc.py). The program
 * prints a checksum that must not depend on inlining. */
#include <stdio.h>
#include <stdlib.h>

static int sq(int x) { return x * x; }                    /* tiny, called many times */
static inline int add3(int a, int b, int c) { return a + b + c; }

static int poly(int x)                                     /* small, called from a loop */
{
    return sq(x) + 3 * x - 7;
}

static int mix(const int *v, int n)                        /* medium, several callers */
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        s ^= v[i] * 2654435761u;
        s = (s << 5) | ((unsigned)s >> 27);
        if (s & 1)
            s += poly(v[i]);
        else
            s -= sq(v[i]);
    }
    return s;
}

static int big_once(int *v, int n)                         /* large, called once */
{
    int acc = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            int t = v[i] * 31 + v[j] * 17;
            if (t % 3 == 0)
                acc += t / 3;
            else if (t % 5 == 1)
                acc -= t % 7;
            else if (t % 11 == 4)
                acc ^= t;
            else
                acc += (t >> 2) - (t << 1);
        }
        v[i] = acc & 0xff;
    }
    switch (acc & 7) {
    case 0: acc += 11; break;
    case 1: acc -= 13; break;
    case 2: acc *= 3; break;
    case 3: acc ^= 0x55; break;
    default: acc += mix(v, n); break;
    }
    return acc;
}

static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }   /* recursive */

int api_scale(int x) { return add3(x, x, 1) * 2; }          /* external, small */

__attribute__((noinline)) static int never_me(int x) { return x + 1; }
static inline __attribute__((always_inline)) int must(int x) { return x - 1; }

static int cold_path(int x)
{
    fprintf(stderr, "cold %d\n", x);
    return x * 3;
}

static int (*volatile indirect)(int) = sq;

int main(int argc, char **argv)
{
    int v[16];
    for (int i = 0; i < 16; i++)
        v[i] = (i * 7 + argc) % 13;
    int s = 0;
    for (int i = 0; i < 16; i++)
        s += poly(v[i]);
    s += mix(v, 16);
    s += mix(v, 8);
    s += big_once(v, 16);
    s += fact(argc + 5);
    s += api_scale(s & 15);
    s += never_me(s & 3);
    s += must(s & 7);
    s += indirect(3);
    s += add3(sq(2), sq(3), sq(argc));
    if (argc > 100)
        s += cold_path(s);
    (void)argv;
    printf("checksum %d\n", s);
    return 0;
}
