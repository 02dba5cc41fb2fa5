// mlbc_copy(dst, src, n): memcpy of n bytes, for the rows that kernels move. gcc's generic
// tuning (a build without -march or -mtune) expands a memcpy of a known size from 33 bytes to
// 8 KiB into `rep movsq`, which takes tens of cycles to start: an embedding bag's 64 rows of
// 384 bytes spent 45% of its time there at plain gcc -O2 (AMD EPYC). A known size that is a
// multiple of 16 bytes is copied as 8-byte words instead, in two loops that gcc vectorises at
// -O2: whole 64-byte blocks, then 16-byte ones (-O2 vectorises a loop only if no iterations are
// left over for a scalar loop: one loop of 50 words, 400 bytes, stayed scalar; an embedding
// bag of 50 rows of 100 floats 28% -> 8% of its network's time). The prologue's
// no-tree-loop-distribute-patterns keeps gcc from making them a memcpy again.
static inline void mlbc_copy(void *restrict dst, const void *restrict src, size_t n)
{
#if defined(__GNUC__) && !defined(__clang__)
    if (__builtin_constant_p(n) && n % 16 == 0) {
        unsigned char *restrict d = (unsigned char *)dst;
        const unsigned char *restrict s = (const unsigned char *)src;
        unsigned long long v;
        size_t i;
        for (i = 0; i < n - n % 64; i += 8) {
            memcpy(&v, s + i, 8);
            memcpy(d + i, &v, 8);
        }
        for (; i < n; i += 8) {
            memcpy(&v, s + i, 8);
            memcpy(d + i, &v, 8);
        }
        return;
    }
#endif
    memcpy(dst, src, n);
}
