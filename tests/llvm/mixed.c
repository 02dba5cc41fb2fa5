/* mixed.c - a fixed input for the inliner tests: small helpers LLVM's heuristic inlines and
 * large, often-called functions it keeps out of line, so both decisions occur. */
#include <stdio.h>
#include <string.h>

static int square(int x) { return x * x; }
static int clamp(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }

/* Large and called at seven sites: inlining it everywhere costs more than the threshold. */
static unsigned checksum(const unsigned char *p, size_t n, unsigned seed)
{
    unsigned h = seed ^ 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 16777619u;
        if (h & 1)
            h ^= h >> 13;
        else
            h += h << 7;
        switch (p[i] & 7) {
        case 0: h += 3; break;
        case 1: h ^= 0x9e3779b9u; break;
        case 2: h = (h << 5) | (h >> 27); break;
        case 3: h -= p[i]; break;
        case 4: h *= 33; break;
        case 5: h ^= h >> 16; break;
        case 6: h += (unsigned)square(p[i]); break;
        default: h = ~h; break;
        }
    }
    for (int r = 0; r < 4; r++) {
        h ^= h >> 15;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
    }
    return h;
}

int main(int argc, char **argv)
{
    unsigned t = 0;
    for (int i = 0; i < argc; i++) {
        const unsigned char *s = (const unsigned char *)argv[i];
        size_t n = strlen(argv[i]);
        t += checksum(s, n, 1) + checksum(s, n, 2) + checksum(s, n, 3) + checksum(s, n, 4);
        t += checksum(s, n / 2, 5) + checksum(s, n / 3, 6) + checksum(s, n / 4, 7);
        t += (unsigned)clamp(square((int)n), 0, 1000);
    }
    printf("%u\n", t);
    return 0;
}
