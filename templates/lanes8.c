// Eight float lanes of a sum as one value (compiler/back/loops.c, sum_lanes8): lane j takes the
// elements whose index is j mod 8, in order, as in a loop over an array of 8 accumulators. Such
// a loop is vectorised differently by each compiler and -O level: gcc -O3 -march=native took
// each lane for a separate in-order reduction, and a 16 x 1024 GlobalAveragePool ran 5.3x
// slower than at gcc -O2, clang 2.2x (AMD Zen 5). A vector of the C compiler's own type is
// added as one, in the same order, at every level: the same bits, and no vectoriser involved.
// Elsewhere, and in the portable C build (which the same-bits test runs), an array of 8.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(MLBC_PORTABLE) && \
    !(defined(MLBC_ISA_MAX) && MLBC_ISA_MAX == 0)
typedef float mlbc_f8 __attribute__((vector_size(32)));
#define MLBC_F8_ADD(acc, p) do { \
    mlbc_f8 v_; \
    memcpy(&v_, (p), sizeof v_); \
    (acc) += v_; \
} while (0)
#else
typedef struct { float l[8]; } mlbc_f8;
#define MLBC_F8_ADD(acc, p) do { \
    int j_; \
    for (j_ = 0; j_ < 8; j_++) \
        (acc).l[j_] += (p)[j_]; \
} while (0)
#endif
