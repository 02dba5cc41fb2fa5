// The instruction-set paths of generated code, shared by every kernel that has vector
// variants. On x86-64 a path is taken per call from the CPU's features (a load and a test,
// the state being libgcc's); AArch64 always takes NEON. -DMLBC_ISA_MAX=0|1 caps the path
// (0: portable C only, no vector code compiled; 1: up to AVX2).
// Whatever the path, the results are the same bits: see the kernels' notes.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && \
    !defined(MLBC_PORTABLE) && !(defined(MLBC_ISA_MAX) && MLBC_ISA_MAX == 0)
#define MLBC_X86 1
#define MLBC_UNROLL _Pragma("GCC unroll 8")
#define MLBC_UNROLL16 _Pragma("GCC unroll 16")
/* unused: mlbc_gemv_f32's fallback takes the C path of templates/gemm_tile_f32.c and none of
 * the x86 tiles beside it */
#define MLBC_TILE static inline __attribute__((always_inline, unused))
/* The loops of a kernel with paths (templates/isa_paths.c), inlined into each path. */
#define MLBC_LOOPS static inline __attribute__((always_inline))
/* gcc tunes the paths for a generic CPU whatever -mtune or -march says: tuned for AMD Zen
 * (-march=native there) it keeps the tiles' row pointers in vector registers, and the
 * products ran 1.25x slower. clang takes no tune= here. */
#if defined(__clang__)
#define MLBC_AVX512 __attribute__((target("avx512f,avx2,fma")))
#define MLBC_AVX2 __attribute__((target("avx2,fma")))
#else
#define MLBC_AVX512 __attribute__((target("avx512f,avx2,fma,tune=generic")))
#define MLBC_AVX2 __attribute__((target("avx2,fma,tune=generic")))
#endif
/* A vector path is compiled on its own, not inlined or specialised for its callers:
 * constants would flow into tile shapes that the sizes at hand never reach, and gcc warns
 * about those. */
#if defined(__clang__)
#define MLBC_PATH __attribute__((noinline))
#else
#define MLBC_PATH __attribute__((noipa))
#endif
/* A matrix product's path that takes its callers' constant sizes, as clang's does: gcc's noipa
 * had kept a Conv1d's products of 8 x 64 x 12 generic, 1.3x slower (gcc -O2, AMD Zen 5); the
 * product drivers draw no warning from them. */
#define MLBC_PRODUCT __attribute__((noinline))
#else
#define MLBC_X86 0
#define MLBC_LOOPS static
#endif
/* AArch64 always has NEON with fused multiply-add: no run-time choice there. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__) && defined(__ARM_NEON) && \
    !defined(MLBC_PORTABLE) && !(defined(MLBC_ISA_MAX) && MLBC_ISA_MAX == 0)
#define MLBC_NEON 1
#ifndef MLBC_UNROLL
#define MLBC_UNROLL _Pragma("GCC unroll 8")
#endif
#else
#define MLBC_NEON 0
#endif
#ifndef MLBC_ISA_MAX
#define MLBC_ISA_MAX 2
#endif
/* A loop over one vector's lanes: vectorised whole, not unrolled into scalars first (gcc
 * -O3 unrolled a depthwise Conv's loops of 16 and packed the scalars back one by one: 8x
 * slower than -O2). */
#if defined(__GNUC__) || defined(__clang__)
#define MLBC_LANES _Pragma("GCC unroll 1")
#else
#define MLBC_LANES
#endif
/* a function a model may not call (one of a template's array loops) */
#if defined(__GNUC__) || defined(__clang__)
#define MLBC_MAYBE_UNUSED __attribute__((unused))
#else
#define MLBC_MAYBE_UNUSED
#endif

#if MLBC_X86
/* The path the compiler's target guarantees already (-march=native on an AVX-512 machine,
 * -mavx2 -mfma): no run-time test up to it, and the paths below it, never taken, are not
 * compiled (a third of the build time of a file of matrix products at gcc -O2). */
#if defined(__AVX512F__)
#define MLBC_ISA_TARGET 2
#elif defined(__AVX2__) && defined(__FMA__)
#define MLBC_ISA_TARGET 1
#else
#define MLBC_ISA_TARGET 0
#endif
/* 2: AVX-512F, 1: AVX2 with FMA, 0: portable C. Always inlined: gcc -O1 would call it,
 * and compile the paths it cannot take. */
static inline __attribute__((always_inline)) int mlbc_isa(void)
{
    if (MLBC_ISA_MAX >= 2 && (MLBC_ISA_TARGET >= 2 || __builtin_cpu_supports("avx512f")))
        return 2;
    if (MLBC_ISA_MAX >= 1 && (MLBC_ISA_TARGET >= 1 ||
                              (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))))
        return 1;
    return 0;
}
#endif
