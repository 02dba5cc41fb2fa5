// Put at the top of every generated .c file, after its includes.
/* Same bits everywhere: for the same inputs the results are bit-identical whatever compiler,
 * -O level, -march or -ffp-contract builds this file, and whatever CPU path it takes at run
 * time. Every multiply-add of a matrix product is an explicit fused multiply-add in an order
 * fixed here (vector paths only change which outputs are computed together); anywhere else a
 * product of two floats that is then added is formed in double, where it is exact, so
 * contracting it into a fused multiply-add changes nothing. The pragmas below turn
 * contraction off besides, where the compiler honours them. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
/* align-functions: every function starts on a 64-byte line, so where its loops fall against
 * line boundaries, and with it their speed on some cores (AMD Zen 5: an LSTM 1.2x slower at
 * gcc -O3 -march=native for a 16-byte shift), depends on this file alone, not on the code the
 * linker puts before it. no-tree-loop-distribute-patterns: loops stay loops, not memcpy or
 * memset calls that generic tuning expands into `rep` string instructions (templates/copy.c). */
#pragma GCC optimize("fp-contract=off", "align-functions=64", "no-tree-loop-distribute-patterns")
#else
#pragma STDC FP_CONTRACT OFF
#endif
/* clang -ffp-contract=fast ignores that pragma and fuses across statements, even a product
 * that one kernel stores with an addition in the next once both are inlined into the run
 * function. A compiler-only memory fence after each kernel call keeps results in memory
 * between kernels; it emits no instruction. */
#if defined(__clang__)
#define MLBC_FENCE() __asm__ __volatile__("" ::: "memory")
#else
#define MLBC_FENCE() ((void)0)
#endif
/* The same inside a kernel, for what restrict pointer P points to: without P given to it, the
 * fence does not reach memory that only a restrict pointer reaches, and clang forwards the
 * stored values (and fuses them) across it. */
#if defined(__clang__)
#define MLBC_FENCE_AT(p) __asm__ __volatile__("" ::"r"(p) : "memory")
#else
#define MLBC_FENCE_AT(p) ((void)(p))
#endif

