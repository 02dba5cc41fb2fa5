// The 128-bit vector paths of the pooling kernels (templates/pool_rows.c), emitted once.
// They need no run-time choice (unlike templates/isa.c's): SSE2 is part of x86-64 and NEON
// of AArch64.
// -DMLBC_ISA_MAX=0 forces portable C, as for every kernel; the same bits on every path.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && \
    !defined(MLBC_PORTABLE) && !(defined(MLBC_ISA_MAX) && MLBC_ISA_MAX == 0)
#include <emmintrin.h>
#define MLBC_POOL_SSE2 1
#else
#define MLBC_POOL_SSE2 0
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__) && defined(__ARM_NEON) && \
    !defined(MLBC_PORTABLE) && !(defined(MLBC_ISA_MAX) && MLBC_ISA_MAX == 0)
#include <arm_neon.h>
#define MLBC_POOL_NEON 1
#else
#define MLBC_POOL_NEON 0
#endif
