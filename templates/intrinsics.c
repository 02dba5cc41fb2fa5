// The vector intrinsics' headers, emitted only before kernels that write intrinsics: paths
// that gcc or clang vectorise from plain loops under a target attribute need neither, and
// immintrin.h alone took half of the build of a small model at gcc -O1 (0.25 of 0.5 s).
#if MLBC_X86
#include <immintrin.h>
#endif
#if MLBC_NEON
#include <arm_neon.h>
#endif
