/* config.h - every tunable limit of the compiler, in one place. */
#ifndef MLBC_CONFIG_H
#define MLBC_CONFIG_H

#define MLBC_VERSION "0.1.0"

#define MLBC_MAX_RANK 8                       /* highest tensor rank accepted */
#define MLBC_MAX_TENSOR_BYTES (1LL << 31)     /* one tensor: refuse larger (2 GiB) */
#define MLBC_MAX_TOTAL_BYTES (1LL << 32)      /* all buffers of a context together */
#define MLBC_MAX_INPUT_BYTES (1LL << 31)      /* model file size */
#define MLBC_ALIGN 64                         /* scratch buffers start on this boundary */
#define MLBC_BLAS_MIN_FLOPS 4096              /* --blas: products at least this big use BLAS */
#define MLBC_COMMENT_WIDTH 100                /* generated comments wrap at this column */
#define MLBC_MAX_UNROLLED_NODES 50000         /* nodes (+1 per subgraph copy) one If/Loop/Scan
                                                 may lower into */

#endif
