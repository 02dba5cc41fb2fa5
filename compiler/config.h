/* config.h - every tunable limit of the compiler, in one place. */
#ifndef MLBC_CONFIG_H
#define MLBC_CONFIG_H

#define MLBC_VERSION "0.1.0"

#define MLBC_MAX_RANK 8                       /* highest tensor rank accepted */
#define MLBC_MAX_TENSOR_BYTES (1LL << 31)     /* one tensor: refuse larger (2 GiB) */
#define MLBC_MAX_TOTAL_BYTES (1LL << 32)      /* all buffers of a context together */
#define MLBC_MAX_INPUT_BYTES (1LL << 27)      /* model file size (128 MiB): what is read and
                                                 unpacked stays well below 512 MB */
#define MLBC_MAX_NODES 50000                  /* nodes of a model, subgraphs included (a model
                                                 at the limit takes ~300 MB and ~3 s) */
#define MLBC_MAX_NESTING 100                  /* protobuf messages within messages */
#define MLBC_MAX_PROTO_PARTS 1000000          /* messages and strings of a binary model: each
                                                 is an allocation of up to ~250 bytes */
#define MLBC_ALIGN 64                         /* scratch buffers start on this boundary */
#define MLBC_BLAS_MIN_FLOPS 4096              /* --blas: products at least this big use BLAS */
#define MLBC_COMMENT_WIDTH 100                /* generated comments wrap at this column */
#define MLBC_COMMENT_NAME 160                 /* a model's string quoted in a comment: at most
                                                 this many bytes, then "..." */
#define MLBC_LITERAL_PIECE 64                 /* a string literal longer than this (escaped)
                                                 goes on as pieces of this size, a line each */
#define MLBC_MAX_UNROLLED_NODES 10000         /* nodes (+1 per subgraph copy) the If/Loop/Scan
                                                 of a model may lower into, together: a
                                                 recurrent policy unrolls into a few
                                                 thousand; this bounds what a small file
                                                 can make mlbc build (~0.3 s) */
#define MLBC_SWEEP_BYTES (512 << 10)          /* a packed recurrent matrix larger than this
                                                 (about half a core's L2 cache) is swept in
                                                 MLBC_SWEEP_BLOCKS column blocks, forward and
                                                 backward on alternate steps: 1.05x faster
                                                 for LSTM hidden 256 on a 1 MiB L2 */
#define MLBC_SWEEP_BLOCKS 4
#define MLBC_CONV_EPILOGUE_RUN 128           /* a Conv of a product per output row applies
                                                 its epilogue to runs of at least this many
                                                 floats of each channel (rows of 32: every
                                                 4 rows), not to each row just written */
#define MLBC_PATHS_MIN 256                    /* a kernel of plain loops over at least this
                                                 many elements is compiled for AVX2 and
                                                 AVX-512 too (kernel_paths): below it a
                                                 call costs more than the wider vectors save,
                                                 and each path is more to compile */
#define MLBC_GEMM_SMALL 65536                 /* a product of at most this many multiply-
                                                 adds calls mlbc_gemm_f32_small, whose paths
                                                 gcc specialises for the sizes: attention's
                                                 small products 1.3x faster at gcc -O2; an
                                                 LSTM step's 16 x 256 x 256, specialised,
                                                 ran 1.15x slower (AMD Zen 5) */
#define MLBC_SOFTMAX_BLOCK 4096              /* floats of a block of a float Softmax's
                                                 rows whose exponentials are one call: a
                                                 call a row of 100 ran on latencies (LogSoftmax
                                                 over 96 rows, AMD Zen 5) */
#define MLBC_VDIVS_MIN 16                     /* a float Div by one value of at least this
                                                 many elements calls mlbc_vdivs_f32; a
                                                 smaller one is a loop in place: the call,
                                                 the CPU check and a masked AVX-512 vector
                                                 took 13 ns for one float (the inliner's 39
                                                 Divs, gcc -O2, Xeon: half its time) */

#endif
