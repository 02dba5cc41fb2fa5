/* op_linalg.c - Gemm, MatMul, MatMulInteger, Einsum.
 *
 * The three matrix products share one code path: a Prod describes one (possibly batched)
 * product Y = alpha * op(A) op(B) + beta * C with element strides, and one of these kernels
 * computes it:
 *
 *   fma     plain float operands, A contiguous along K, alpha = beta = 1 (every exported
 *           Linear layer, attention's products): mlbc_gemm_f32 (templates/gemm_f32.c),
 *           register tiles over rows and 16-column panels with explicit fused multiply-adds
 *           and run-time vector paths; a constant B is packed into those panels at compile
 *           time (for a single row of A, into mlbc_gemv_f32's column blocks), another is
 *           read in place. Fewer than 4 columns over a long K take mlbc_dots_f32 (sixteen
 *           partial chains). The same bits on every path.
 *   blas    --blas, a float product the fma kernels do not cover, of at least
 *           MLBC_BLAS_MIN_FLOPS multiply-adds: cblas_sgemm, or cblas_sgemv for a single row.
 *   packed  any other type (16-bit floats, double, integers) with a constant B: column
 *           panels of 8 (w[p][k][l] = B[k][8p + l]), a[k] broadcast (linalg_panel.c).
 *   panel   the same, B not constant but contiguous along N, read in place.
 *   dot     B not constant and contiguous along K (transB): dot products with eight
 *           accumulators (templates/linalg_dot.c).
 *
 * Summation orders are fixed and documented in the templates; every float multiply-add is
 * an explicit fused one (fmaf/fma), so no compiler flag changes a result. alpha, beta and
 * the bias C are applied in the kernel's store, so Gemm is one pass over Y.
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

/* ---- types and constants in generated code ---- */

/* The type a product accumulates in: float for the 16-bit floats, the unsigned type of the
 * same width for integers (wrap-around instead of undefined signed overflow). */
static DType acc_type(DType t)
{
    switch (t) {
    case DT_FLOAT16: case DT_BFLOAT16: case DT_FLOAT: return DT_FLOAT;
    case DT_DOUBLE: return DT_DOUBLE;
    case DT_INT8: case DT_UINT8: case DT_INT16: case DT_UINT16: case DT_INT32: case DT_UINT32:
        return DT_UINT32;
    default: return DT_UINT64;
    }
}

/* "k + 1" scaled by a stride, simplified: "k + 1", "(k + 1) * 3", "0". */
static const char *scaled(const char *x, int64_t stride)
{
    if (stride == 0)
        return "0";
    if (stride == 1)
        return x;
    return strf(strchr(x, ' ') ? "(%s) * %s" : "%s * %s", x, lit(stride));
}

/* "p + q" with zero terms dropped. */
static const char *plus(const char *p, const char *q)
{
    if (!strcmp(p, "0"))
        return q;
    if (!strcmp(q, "0"))
        return p;
    return strf("%s + %s", p, q);
}

/* ---- the matrix product ---- */

typedef struct Prod {
    Node *n;
    Value *A, *B, *C, *Y, *za, *zb;     /* C, za, zb may be NULL */
    int64_t M, N, K;
    int64_t sam, sak, sbk, sbn;         /* element strides inside one matrix */
    int64_t csm, csn;                   /* C broadcast over [M, N] */
    int64_t zam, zbn;                   /* zero points: 0 per tensor, 1 per row / column */
    int brank;                          /* batch dimensions of Y */
    int64_t bdim[MLBC_MAX_RANK];
    int64_t bsa[MLBC_MAX_RANK], bsb[MLBC_MAX_RANK]; /* batch strides, in matrices */
    int64_t nbatch, nmat_b;             /* matrices in Y, in B */
    double alpha, beta;
    DType ct;
    const char *what;                   /* for comments */
} Prod;

/* The A element at k-expression kx of the current row, as ct (with its zero point). */
static const char *load_a(const Prod *p, const char *kx)
{
    const char *x = strf("a[%s]", scaled(kx, p->sak));
    if (p->za)
        return strf("(%s)((int32_t)%s - (int32_t)za[0])", dtype_ctype(p->ct), x);
    return load_as(p->A->dt, p->ct, x);
}

/* The B element (k-expression kx, column-offset expression nx) read from B itself. */
static const char *load_b(const Prod *p, const char *kx, const char *nx)
{
    const char *x = strf("b[%s]", plus(scaled(kx, p->sbk), scaled(nx, p->sbn)));
    if (p->zb)
        return strf("(%s)((int32_t)%s - (int32_t)zb[%s])", dtype_ctype(p->ct), x,
                    scaled(nx, p->zbn));
    return load_as(p->B->dt, p->ct, x);
}

static int is_integral(double x) { return x == floor(x) && fabs(x) < 9e15; }

/* The stored value of output lane nx from the sum s (of type ct). */
static const char *store_y(const Prod *p, const char *nx)
{
    DType ct = p->ct, ty = p->Y->dt;
    int fl = ct == DT_FLOAT || ct == DT_DOUBLE;
    const char *cx = p->C ? strf("c[%s]", scaled(nx, p->csn)) : NULL;
    if (ct == DT_FLOAT && (p->alpha != 1 || (cx && p->beta != 1))) {
        /* Each product of two floats is exact in double: contraction cannot change this. */
        const char *e = p->alpha != 1 ? strf("(double)%s * s", float_lit(p->alpha, ct)) : "(double)s";
        if (cx) {
            const char *c = load_as(p->C->dt, ct, cx);
            e = strf(p->beta != 1 ? "%s + (double)%s * %s" : "%s + (double)%s%s", e,
                     p->beta != 1 ? float_lit(p->beta, ct) : "", c);
        }
        return store_as(ty, ct, strf("(float)(%s)", e));
    }
    if (ct == DT_DOUBLE && p->alpha != 1 && cx) {
        const char *c = load_as(p->C->dt, ct, cx);
        if (p->beta != 1)
            c = strf("%s * %s", float_lit(p->beta, ct), c);
        return store_as(ty, ct, madd(ct, float_lit(p->alpha, ct), "s", c));
    }
    if (fl || (is_integral(p->alpha) && is_integral(p->beta))) {
        const char *e = "s";
        if (p->alpha != 1)
            e = fl ? strf("%s * s", float_lit(p->alpha, ct))
                   : strf("(%s)%s * s", dtype_ctype(ct), lit((int64_t)p->alpha));
        if (cx) {
            const char *c = load_as(p->C->dt, ct, cx);
            if (p->beta != 1)
                c = fl ? strf("%s * %s", float_lit(p->beta, ct), c)
                       : strf("(%s)%s * %s", dtype_ctype(ct), lit((int64_t)p->beta), c);
            e = strf("%s + %s", e, c);
        }
        return store_as(ty, ct, e);
    }
    /* Integer product with a fractional alpha or beta: scale in double. */
    const char *sv = strf("(double)(%s)s", dtype_is_signed(ty) ? dtype_ctype(ty) : dtype_ctype(ct));
    const char *e = strf("%s * %s", float_lit(p->alpha, DT_DOUBLE), sv);
    if (cx)
        e = strf("%s + %s * (double)%s", e, float_lit(p->beta, DT_DOUBLE), cx);
    return strf("(%s)(%s)", dtype_ctype(ty), e);
}

/* Parameter list of the row and matrix kernels. */
static const char *params(const Prod *p, const char *tw)
{
    Buf b = {0};
    buf_printf(&b, "const %s *restrict a, const %s *restrict b, ", dtype_ctype(p->A->dt), tw);
    if (p->C)
        buf_printf(&b, "const %s *restrict c, ", dtype_ctype(p->C->dt));
    if (p->za)
        buf_printf(&b, "const %s *restrict za, ", dtype_ctype(p->za->dt));
    if (p->zb)
        buf_printf(&b, "const %s *restrict zb, ", dtype_ctype(p->zb->dt));
    buf_printf(&b, "%s *restrict y", dtype_ctype(p->Y->dt));
    return b.p;
}

/* Arguments of a row-kernel call for row m, starting at column expression n0x (in the
 * matrix kernel: a, b, c, za, zb, y are the matrix's pointers); bx is the b argument. */
static const char *row_args(const Prod *p, const char *bx, const char *n0x)
{
    Buf b = {0};
    buf_printf(&b, "a + %s, %s, ", scaled("m", p->sam), bx);
    if (p->C)
        buf_printf(&b, "c + %s, ", plus(scaled("m", p->csm), scaled(n0x, p->csn)));
    if (p->za)
        buf_printf(&b, "za + %s, ", scaled("m", p->zam));
    if (p->zb)
        buf_printf(&b, "zb + %s, ", scaled(n0x, p->zbn));
    buf_printf(&b, "y + %s", plus(scaled("m", p->N), n0x));
    /* "x + 0" reads badly: drop it. */
    Buf o = {0};
    for (const char *s = b.p; *s;) {
        if (!strncmp(s, " + 0,", 5) || !strcmp(s, " + 0")) {
            s += 4;
            continue;
        }
        buf_put(&o, s++, 1);
    }
    return o.p;
}

/* Columns per panel of the generic kernels (the last, partial panel computes a power of two
 * lanes), and of the float FMA kernels (16, the last panel zero-padded to 16). */
#define PANEL 8
#define FMA_PANEL 16

static int64_t panel_lanes(int64_t rem, int fma) { return fma ? FMA_PANEL : pow2ceil(rem); }

/* Rows of a packed panel: K, or for the FMA kernels up to gemm_panel_stride (zeros past K). */
static int64_t panel_rows(const Prod *p, int fma)
{
    return fma ? gemm_panel_stride(p->K) / FMA_PANEL : p->K;
}

static int64_t packed_matrix_size(const Prod *p, int fma)
{
    int64_t w = fma ? FMA_PANEL : PANEL, full = p->N / w, rem = p->N % w;
    return panel_rows(p, fma) * (full * w + (rem ? panel_lanes(rem, fma) : 0));
}

/* B (and its zero point) re-laid out at compile time, all matrices of B one after the other:
 * in column panels (w[p][k][l] = B[k][W p + l], W = 8 or for the FMA kernels 16), for a
 * one-row FMA product in mlbc_gemv_f32's column blocks (gemv_index), or, for the dot
 * kernels, transposed (w[n][k] = B[k][n]). Packed when the weights are written. */
typedef enum { PANELS, FMA_PANELS, GEMV_BLOCKS, TRANSPOSED } Layout;

typedef struct Packing {
    Prod p;
    Layout lay;
} Packing;

/* The float B of a one-row product in column blocks (floats only: the FMA kernels') */
static void pack_gemv(const Prod *p, const float *bf, float *dst)
{
    for (int64_t mat = 0; mat < p->nmat_b; mat++, dst += gemv_size(p->K, p->N))
        for (int64_t k = 0; k < p->K; k++)
            for (int64_t col = 0; col < p->N; col++)
                dst[gemv_index(p->K, p->N, k, col)] =
                    bf[mat * p->K * p->N + k * p->sbk + col * p->sbn];
}

static void pack_b(const void *arg, void *dst)
{
    const Packing *pk = arg;
    const Prod *p = &pk->p;
    if (pk->lay == GEMV_BLOCKS) {       /* float to float, as the FMA kernels are */
        pack_gemv(p, p->B->data, dst);
        return;
    }
    int fma = pk->lay == FMA_PANELS, transposed = pk->lay == TRANSPOSED;
    int64_t pw = fma ? FMA_PANEL : PANEL, full = p->N / pw, rem = p->N % pw;
    int ints = !(p->ct == DT_FLOAT || p->ct == DT_DOUBLE);
    /* float to float, by far the most common, without the generic accessors (100M
     * parameters: 0.4 s instead of 3) */
    const float *bf = p->B->dt == DT_FLOAT && p->ct == DT_FLOAT ? p->B->data : NULL;
    int64_t count = 0;
    for (int64_t mat = 0; mat < p->nmat_b; mat++)
        for (int64_t pn = 0; pn < (transposed ? p->N : full + 1); pn++) {
            int64_t width = transposed  ? 1
                            : pn < full ? pw
                            : rem       ? panel_lanes(rem, fma)
                                        : 0;
            for (int64_t k = 0; k < (transposed ? p->K : panel_rows(p, fma)); k++)
                for (int64_t l = 0; l < width; l++, count++) {
                    int64_t col = transposed ? pn : pn * pw + l;
                    if (col >= p->N || k >= p->K)
                        continue;               /* dst is zeroed */
                    int64_t at = mat * p->K * p->N + k * p->sbk + col * p->sbn;
                    if (bf)
                        ((float *)dst)[count] = bf[at];
                    else if (ints)
                        set_acc(dst, count, p->ct, 0, value_get_i(p->B, at) -
                                (p->zb ? value_get_i(p->zb, col * p->zbn) : 0));
                    else
                        set_acc(dst, count, p->ct, value_get_f(p->B, at), 0);
                }
        }
}

/* Floats per matrix of B packed in layout LAY */
static int64_t packed_size(const Prod *p, Layout lay)
{
    return lay == TRANSPOSED    ? p->K * p->N
           : lay == GEMV_BLOCKS ? gemv_size(p->K, p->N)
                                : packed_matrix_size(p, lay == FMA_PANELS);
}

static const char *emit_packed(Emit *e, const Prod *p, Layout lay)
{
    int64_t msize = packed_size(p, lay);
    Packing *pk = xalloc(sizeof *pk);
    *pk = (Packing){*p, lay};
    const char *layout = lay == TRANSPOSED    ? "transposed, [N][K]"
                         : lay == GEMV_BLOCKS ? "in column blocks of 64, each [K][16 n]"
                                              : strf("in column panels of %d",
                                                     lay == FMA_PANELS ? FMA_PANEL : PANEL);
    return weight_array(e, p->n,
        strf("B %d zb %d ct %d K %lld N %lld sbk %lld sbn %lld zbn %lld mats %lld %s",
             p->B->id, p->zb ? p->zb->id : -1, (int)p->ct, (long long)p->K, (long long)p->N,
             (long long)p->sbk, (long long)p->sbn, (long long)p->zbn, (long long)p->nmat_b,
             layout),
        (WeightArray){.doc = strf("%s: '%s' %s%s %s%s", p->what, c_comment(p->B->name),
                                  dtype_name(p->B->dt), shape_str(p->B), layout,
                                  p->zb ? ", zero point subtracted" : ""),
                      .dt = p->ct, .count = p->nmat_b * msize, .pack = pack_b, .arg = pk});
}

/* The row kernel for columns [n0, n0 + ls) of a row: lanes l computed (>= ls when packed). */
static const char *emit_panel(Emit *e, const Prod *p, int packed, int64_t lanes, int64_t ls,
                              const char *tw)
{
    const char *w[5];
    const char *ks[5] = {"k", "k + 1", "k + 2", "k + 3", "k"};
    for (int j = 0; j < 5; j++)
        w[j] = packed ? strf("b[%s]", plus(scaled(ks[j], lanes), "l")) : load_b(p, ks[j], "l");
    return kernel(e, p->n, "linalg_panel",
        "DOC", strf("%s: %lld column(s) of a row of %s, K = %lld, %s", p->what, (long long)ls,
                    shape_str(p->Y), (long long)p->K,
                    packed ? "B packed at compile time" : "B read in place"),
        "PARAMS", params(p, tw), "CT", dtype_ctype(p->ct), "L", lit(lanes),
        "FOR_L", loop_head("", "l", lanes, 1), "FOR_LS", loop_head("", "l", ls, 1),
        "FOR_K4", loop_head("", "k", p->K / 4 * 4, 4),
        "FOR_KT", loop_range("", "k", p->K / 4 * 4, p->K, 1),
        "A0", load_a(p, "k"), "A1", load_a(p, "k + 1"), "A2", load_a(p, "k + 2"),
        "A3", load_a(p, "k + 3"), "AK", load_a(p, "k"),
        "MAC0", fused(p->ct, "a0", w[0], "c0[l]"), "MAC1", fused(p->ct, "a1", w[1], "c1[l]"),
        "MAC2", fused(p->ct, "a2", w[2], "c2[l]"), "MAC3", fused(p->ct, "a3", w[3], "c3[l]"),
        "MACK", fused(p->ct, "a0", w[4], "c0[l]"), "STORE", store_y(p, "l"), NULL);
}

static const char *emit_dot(Emit *e, const Prod *p)
{
    return kernel(e, p->n, "linalg_dot",
        "DOC", strf("%s: a row of %s, K = %lld, B transposed", p->what, shape_str(p->Y),
                    (long long)p->K),
        "PARAMS", params(p, dtype_ctype(p->B->dt)), "CT", dtype_ctype(p->ct), "N", lit(p->N),
        "FOR_N", loop_head("", "n", p->N, 1), "FOR_K8", loop_head("", "k", p->K / 8 * 8, 8),
        "FOR_KT", loop_range("", "k", p->K / 8 * 8, p->K, 1),
        "MACJ", fused(p->ct, load_a(p, "k + j"), load_b(p, "k + j", "n"), "acc[j]"),
        "MACK", fused(p->ct, load_a(p, "k"), load_b(p, "k", "n"), "s"),
        "STORE", store_y(p, "n"), NULL);
}

/* The float kernels with explicit fused multiply-adds and run-time vector paths
 * (templates/gemm_f32.c, dots_f32.c): plain float operands, A contiguous along K, no
 * scaling (alpha = beta = 1, as every exported Linear layer has). Other products take the
 * generic kernels. */
static int fma_eligible(const Prod *p)
{
    return p->A->dt == DT_FLOAT && p->B->dt == DT_FLOAT && p->Y->dt == DT_FLOAT && !p->za &&
           !p->zb && p->alpha == 1 && (!p->C || (p->C->dt == DT_FLOAT && p->beta == 1)) &&
           p->sak == 1 && p->K > 0;
}

/* The matrix kernel through mlbc_gemm_f32 (B in panels of 16: packed, or read in place when
 * contiguous along N), mlbc_gemv_f32 (one row of A, B packed for it) or mlbc_dots_f32 (a
 * constant B of fewer than 4 columns, packed transposed, or a B contiguous along K): returns it, and its b argument and elements per
 * matrix of B through bref and bmat. */
static const char *emit_fma(Emit *e, const Prod *p, const char **bref, int64_t *bmat)
{
    int packed = p->B->data != NULL;
    int dots = packed ? p->N < 4 : p->sbn != 1;
    const char *call, *cargs = p->C ? strf("c, %s, %s", lit(p->csm), lit(p->csn)) : "0, 0, 0";
    Layout lay = dots ? TRANSPOSED : p->M == 1 ? GEMV_BLOCKS : FMA_PANELS;
    if (packed) {
        *bref = emit_packed(e, p, lay);
        *bmat = packed_size(p, lay);
    } else {
        *bref = ref(e, p->B);
        *bmat = p->K * p->N;
    }
    if (dots)
        call = strf("mlbc_dots_f32(%s, %s, %s, a, %s, b, %s, %s, y)", lit(p->M), lit(p->N),
                    lit(p->K), lit(p->sam), lit(packed ? p->K : p->sbn), cargs);
    else if (packed && lay == GEMV_BLOCKS)
        call = strf("mlbc_gemv_f32(%s, %s, a, b, %s, %s, y)", lit(p->N), lit(p->K),
                    p->C ? "c" : "0", lit(p->C ? p->csn : 0));
    else
        call = strf("mlbc_gemm_f32%s(%s, %s, %s, a, %s, b, %s, %s, %d, %s, y, %s)",
                    (double)p->M * p->N * p->K <= MLBC_GEMM_SMALL ? "_small" : "", lit(p->M),
                    lit(p->N), lit(p->K), lit(p->sam),
                    lit(packed ? gemm_panel_stride(p->K) : FMA_PANEL),
                    lit(packed ? FMA_PANEL : p->sbk), packed, cargs, lit(p->N));
    return kernel(e, p->n, "linalg_fma",
                  "DOC", strf("%s: %s = %s x %s%s", p->what, shape_str(p->Y), shape_str(p->A),
                              shape_str(p->B), packed ? ", B packed at compile time" : ""),
                  "PARAMS", params(p, "float"), "CALL", call, NULL);
}

/* --blas: float products of at least MLBC_BLAS_MIN_FLOPS multiply-adds, except a single dot
 * product (one row, one column), where the dot kernel measured ~3x faster than sgemv (the
 * fc 5000x1 and 50000x1 rows of make bench). */
static int blas_eligible(Emit *e, const Prod *p)
{
    return use_blas(e) && p->Y->dt == DT_FLOAT && p->A->dt == DT_FLOAT && !p->za &&
           !(p->M == 1 && p->N == 1) &&
           (!p->C || p->C->dt == DT_FLOAT) &&
           (double)p->M * p->N * p->K >= MLBC_BLAS_MIN_FLOPS;
}

/* The matrix kernel through CBLAS. */
static const char *emit_blas(Emit *e, const Prod *p)
{
    Buf fill = {0};
    count_blas_call(e);
    int has_c = p->C != NULL;           /* beta == 0 dropped C already */
    if (has_c)
        buf_printf(&fill, "    long m, n;\n    for (m = 0; m < %s; m++)\n"
                   "        for (n = 0; n < %s; n++)\n            y[m * %s + n] = c[%s];\n",
                   lit(p->M), lit(p->N), lit(p->N),
                   plus(scaled("m", p->csm), scaled("n", p->csn)));
    const char *alpha = float_lit(p->alpha, DT_FLOAT);
    const char *beta = has_c ? float_lit(p->beta, DT_FLOAT) : "0.0f";
    int ta = p->sak != 1, tb = p->sbn != 1;
    const char *call;
    if (p->M == 1)
        call = tb ? strf("cblas_sgemv(CblasRowMajor, CblasNoTrans, %s, %s, %s, b, %s, a, %s, "
                         "%s, y, 1)", lit(p->N), lit(p->K), alpha, lit(p->sbn), lit(p->sak), beta)
                  : strf("cblas_sgemv(CblasRowMajor, CblasTrans, %s, %s, %s, b, %s, a, %s, "
                         "%s, y, 1)", lit(p->K), lit(p->N), alpha, lit(p->sbk), lit(p->sak), beta);
    else
        call = strf("cblas_sgemm(CblasRowMajor, %s, %s, %s, %s, %s, %s, a, %s, b, %s, %s, y, %s)",
                    ta ? "CblasTrans" : "CblasNoTrans", tb ? "CblasTrans" : "CblasNoTrans",
                    lit(p->M), lit(p->N), lit(p->K), alpha, lit(ta ? p->sak : p->sam),
                    lit(tb ? p->sbn : p->sbk), beta, lit(p->N));
    return kernel(e, p->n, "linalg_blas",
                  "DOC", strf("%s: %s through CBLAS", p->what, shape_str(p->Y)),
                  "PARAMS", params(p, "float"), "FILL", fill.p ? fill.p : "", "CALL", call,
                  NULL);
}

/* The generic kernels (any element type, zero points, strides): a dot kernel per row, or
 * panels of PANEL columns and one for the rest. A constant B is re-laid out for them: panels,
 * or for fewer than 4 columns (a panel would have too few lanes to vectorise) transposed for
 * the dot kernel; q (with bpk) is then the product as the kernels see it. */
static const char *emit_generic(Emit *e, const Prod *p, Prod *q, Value *bpk, const char **bref,
                                const char **tw, int64_t *bmat)
{
    int packed = p->B->data && p->K > 0 && (!p->zb || p->zb->data);
    int dot = packed ? p->N < 4 : p->sbk == 1 && (p->sbn != 1 || p->N == 1) &&
                                      !dtype_is_half(p->B->dt);
    Buf calls = {0};
    const char *decls = "";
    if (packed) {
        *bref = emit_packed(e, p, dot ? TRANSPOSED : PANELS);
        *tw = dtype_ctype(p->ct);
        *bmat = packed_size(p, dot ? TRANSPOSED : PANELS);
        q->zb = NULL;           /* subtracted while packing */
        *bpk = *p->B;           /* the kernels read the packed copy, already of type ct */
        bpk->dt = p->ct;
        q->B = bpk;
        if (dot)
            q->sbk = 1, q->sbn = p->K;
    } else {
        *bref = ref(e, p->B);
        *tw = dtype_ctype(p->B->dt);
        *bmat = p->K * p->N;
    }
    if (dot) {
        buf_printf(&calls, "        %s(%s);\n", emit_dot(e, q), row_args(q, "b", "0"));
    } else {
        int64_t full = p->N / PANEL, rem = p->N % PANEL;
        if (full) {
            const char *fn = emit_panel(e, q, packed, PANEL, PANEL, *tw);
            const char *bx = packed ? strf("b + p * %s", lit(p->K * PANEL))
                                    : strf("b + %s", scaled("p * 8", p->sbn));
            if (full == 1)
                buf_printf(&calls, "        %s(%s);\n", fn, row_args(q, "b", "0"));
            else {
                decls = ", p";
                buf_printf(&calls, "        for (p = 0; p < %s; p++)\n            %s(%s);\n",
                           lit(full), fn, row_args(q, bx, "p * 8"));
            }
        }
        if (rem) {
            int64_t lanes = packed ? pow2ceil(rem) : rem;
            const char *fn = emit_panel(e, q, packed, lanes, rem, *tw);
            const char *n0 = lit(full * PANEL);
            const char *bx = packed ? strf("b + %s", lit(full * PANEL * p->K))
                                    : strf("b + %s", lit(full * PANEL * p->sbn));
            buf_printf(&calls, "        %s(%s);\n", fn,
                       row_args(q, full ? bx : "b", full ? n0 : "0"));
        }
    }
    return kernel(e, p->n, "linalg_matrix",
                  "DOC", strf("%s: %s = %s x %s", p->what, shape_str(p->Y), shape_str(p->A),
                              shape_str(p->B)),
                  "PARAMS", params(q, *tw), "DECLS", decls, "M", lit(p->M), "CALLS", calls.p,
                  NULL);
}

/* The call of the matrix kernel MAT: directly, or through a loop over the batch (B's
 * matrices BMAT elements apart). */
static void emit_prod_call(Emit *e, const Prod *p, const Prod *q, const char *mat,
                           const char *bref, const char *tw, int64_t bmat)
{
    Buf args = {0};
    if (q->C)
        buf_printf(&args, "%s, ", ref(e, q->C));
    if (q->za)
        buf_printf(&args, "%s, ", ref(e, q->za));
    if (q->zb)
        buf_printf(&args, "%s, ", ref(e, q->zb));
    const char *extra = args.p ? args.p : "";
    if (p->nbatch == 1) {
        stmt(e, "%s(%s, %s, %s%s);", mat, ref(e, p->A), bref, extra, ref(e, p->Y));
        return;
    }
    int64_t st[MLBC_MAX_OPERANDS][MLBC_MAX_RANK];
    dense_strides(p->brank, p->bdim, st[0]);
    for (int i = 0; i < p->brank; i++) {
        st[0][i] *= p->M * p->N;
        st[1][i] = p->bsa[i] * p->M * p->K;
        st[2][i] = p->bsb[i] * bmat;
    }
    Loops l = loop_nest(p->brank, p->bdim, 3, st);
    Buf cargs = {0};
    if (q->C)
        buf_puts(&cargs, "c, ");
    if (q->za)
        buf_puts(&cargs, "za, ");
    if (q->zb)
        buf_puts(&cargs, "zb, ");
    const char *fn = kernel(e, p->n, "linalg_batch",
        "DOC", strf("%s: %lld products %s", p->what, (long long)p->nbatch, shape_str(p->Y)),
        "PARAMS", params(q, tw), "OPEN", l.open, "CLOSE", l.close, "INDENT", l.indent,
        "CALL", strf("%s(a + %s, b + %s, %sy + %s)", mat, l.idx[1], l.idx[2],
                     cargs.p ? cargs.p : "", l.idx[0]), NULL);
    stmt(e, "%s(%s, %s, %s%s);", fn, ref(e, p->A), bref, extra, ref(e, p->Y));
}

static void emit_prod(Emit *e, Prod *p)
{
    if (!numel(p->Y))
        return;
    if (p->C && p->beta == 0)
        p->C = NULL;

    const char *mat, *bref, *tw;
    int64_t bmat;                       /* elements per matrix of the b argument */
    Prod q = *p;
    Value bpk;                          /* a packed B, as the kernels see it */
    /* mlbc's FMA kernels first: single-threaded OpenBLAS was slower than them at every size
     * measured (1x500x64 to 1024^3, 1.1x to 6.7x), so --blas only takes the products they
     * do not cover (a transposed A, a scaled Gemm), where it beats the generic kernels. */
    if (fma_eligible(p)) {
        mat = emit_fma(e, p, &bref, &bmat);
        tw = "float";
    } else if (blas_eligible(e, p)) {
        mat = emit_blas(e, p);
        bref = ref(e, p->B);
        tw = dtype_ctype(p->B->dt);
        bmat = p->K * p->N;
    } else {
        mat = emit_generic(e, p, &q, &bpk, &bref, &tw, &bmat);
    }
    emit_prod_call(e, p, &q, mat, bref, tw, bmat);
}

/* ---- Gemm ---- */

static const DType gemm_types[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_INT32,
                                   DT_INT64, DT_UINT32, DT_UINT64, DT_UNDEF};

static void gemm_dims(Node *n, int64_t *M, int64_t *N, int64_t *K, int64_t *K2)
{
    Value *a = n->in[0], *b = n->in[1];
    int ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
    *M = ta ? a->dim[1] : a->dim[0];
    *K = ta ? a->dim[0] : a->dim[1];
    *K2 = tb ? b->dim[1] : b->dim[0];
    *N = tb ? b->dim[0] : b->dim[1];
}

static void gemm_infer(Node *n)
{
    if (n->nin < 2 || n->nin > 3 || !n->in[0] || !n->in[1])
        node_die(n, "takes inputs A, B and an optional C");
    if (n->opset < 11 && !input(n, 2))
        node_die(n, "input C is required before opset 11");
    Value *a = n->in[0], *b = n->in[1], *c = input(n, 2);
    need_type(n, a, gemm_types);
    need_same_type(n, a, b);
    if (a->rank != 2 || b->rank != 2)
        node_die(n, "A and B must be matrices, got %s and %s", shape_str(a), shape_str(b));
    int64_t M, N, K, K2;
    gemm_dims(n, &M, &N, &K, &K2);
    if (K != K2)
        node_die(n, "inner dimensions differ: A %s, B %s (transA=%d, transB=%d)",
                 shape_str(a), shape_str(b), (int)attr_int(n, "transA", 0),
                 (int)attr_int(n, "transB", 0));
    if (c) {
        need_same_type(n, a, c);
        int64_t want[2] = {M, N};
        if (c->rank > 2)
            node_die(n, "C must have rank 2 or less, got %s", shape_str(c));
        for (int i = 0; i < c->rank; i++) {
            int64_t d = c->dim[i], w = want[2 - c->rank + i];
            if (d != 1 && d != w)
                node_die(n, "C %s cannot be broadcast to [%lld,%lld]", shape_str(c),
                         (long long)M, (long long)N);
        }
    }
    int64_t dim[2] = {M, N};
    set_output(n, 0, a->dt, 2, dim);
}

static void gemm_emit(Emit *e, Node *n)
{
    Prod p = {.n = n, .A = n->in[0], .B = n->in[1], .C = input(n, 2), .Y = n->out[0],
              .what = "Gemm", .nbatch = 1, .nmat_b = 1};
    int ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
    int64_t K2;
    gemm_dims(n, &p.M, &p.N, &p.K, &K2);
    p.sam = ta ? 1 : p.K;
    p.sak = ta ? p.M : 1;
    p.sbk = tb ? 1 : p.N;
    p.sbn = tb ? p.K : 1;
    p.alpha = attr_float(n, "alpha", 1.0);
    p.beta = attr_float(n, "beta", 1.0);
    p.ct = acc_type(p.Y->dt);
    if (p.C) {
        Value *c = p.C;
        int64_t dm = c->rank == 2 ? c->dim[0] : 1, dn = c->rank >= 1 ? c->dim[c->rank - 1] : 1;
        p.csn = dn == 1 ? 0 : 1;
        p.csm = dm == 1 ? 0 : dn;
        if (!numel(c))
            p.C = NULL;
    }
    emit_prod(e, &p);
}

static double gemm_flops(Node *n)
{
    int64_t M, N, K, K2;
    gemm_dims(n, &M, &N, &K, &K2);
    return 2.0 * M * N * K + (input(n, 2) ? (double)M * N : 0);
}

/* ---- MatMul, MatMulInteger ---- */

static const DType matmul_types[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_INT32,
                                     DT_INT64, DT_UINT32, DT_UINT64, DT_UNDEF};
static const DType int8_types[] = {DT_INT8, DT_UINT8, DT_UNDEF};

/* numpy matmul shapes: fills p's M, N, K, strides and batch; returns the output shape. */
static int matmul_shape(Node *n, Prod *p, int64_t *ydim)
{
    Value *a = n->in[0], *b = n->in[1];
    if (a->rank < 1 || b->rank < 1)
        node_die(n, "operands must have rank 1 or more, got %s and %s", shape_str(a),
                 shape_str(b));
    int64_t M = a->rank == 1 ? 1 : a->dim[a->rank - 2], K = a->dim[a->rank - 1];
    int64_t K2 = b->rank == 1 ? b->dim[0] : b->dim[b->rank - 2];
    int64_t N = b->rank == 1 ? 1 : b->dim[b->rank - 1];
    if (K != K2)
        node_die(n, "inner dimensions differ: %s x %s", shape_str(a), shape_str(b));
    int ra = a->rank > 2 ? a->rank - 2 : 0, rb = b->rank > 2 ? b->rank - 2 : 0;
    int64_t bd[MLBC_MAX_RANK];
    int br = broadcast(n, ra, a->dim, rb, b->dim, bd);
    p->M = M, p->N = N, p->K = K;
    p->sam = K, p->sak = 1, p->sbk = N, p->sbn = 1;
    p->brank = br;
    memcpy(p->bdim, bd, sizeof(int64_t) * br);
    p->nbatch = numel_dims(br, bd);
    p->nmat_b = numel_dims(rb, b->dim);
    /* Batch strides in matrices; broadcast axes get 0. */
    int64_t sa = 1, sb = 1;
    for (int i = br - 1; i >= 0; i--) {
        int ka = i - (br - ra), kb = i - (br - rb);
        int64_t da = ka >= 0 ? a->dim[ka] : 1, db = kb >= 0 ? b->dim[kb] : 1;
        p->bsa[i] = da == 1 ? 0 : sa;
        p->bsb[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
    }
    int r = br;
    memcpy(ydim, bd, sizeof(int64_t) * br);
    if (a->rank >= 2)
        ydim[r++] = M;
    if (b->rank >= 2)
        ydim[r++] = N;
    return r;
}

static void matmul_infer(Node *n)
{
    int integer = !strcmp(n->op, "MatMulInteger");
    if (integer ? n->nin < 2 || n->nin > 4 : n->nin != 2)
        node_die(n, "wrong number of inputs (%d)", n->nin);
    if (!n->in[0] || !n->in[1])
        node_die(n, "inputs A and B are required");
    Value *a = n->in[0], *b = n->in[1];
    if (integer) {
        need_type(n, a, int8_types);
        need_type(n, b, int8_types);
        for (int i = 2; i < 4; i++) {
            Value *z = input(n, i);
            if (!z)
                continue;
            need_same_type(n, n->in[i - 2], z);
            int64_t want = i == 2 ? (a->rank >= 2 ? a->dim[a->rank - 2] : 1)
                                  : (b->rank >= 2 ? b->dim[b->rank - 1] : 1);
            if (numel(z) != 1 && numel(z) != want)
                node_die(n, "zero point '%s' %s must be a scalar or have one value per %s",
                         z->name, shape_str(z), i == 2 ? "row of A" : "column of B");
        }
    } else {
        need_type(n, a, matmul_types);
        need_same_type(n, a, b);
    }
    Prod p = {0};
    int64_t ydim[MLBC_MAX_RANK + 2];
    int r = matmul_shape(n, &p, ydim);
    set_output(n, 0, integer ? DT_INT32 : a->dt, r, ydim);
}

static void matmul_emit(Emit *e, Node *n)
{
    int integer = !strcmp(n->op, "MatMulInteger");
    Prod p = {.n = n, .A = n->in[0], .B = n->in[1], .Y = n->out[0], .what = n->op,
              .alpha = 1, .beta = 1};
    int64_t ydim[MLBC_MAX_RANK + 2];
    matmul_shape(n, &p, ydim);
    if (integer) {
        p.za = input(n, 2);
        p.zb = input(n, 3);
        p.zam = p.za && numel(p.za) > 1;
        p.zbn = p.zb && numel(p.zb) > 1;
        p.ct = DT_UINT32;
    } else {
        p.ct = acc_type(p.Y->dt);
        p.C = input(n, 2);      /* a bias fused in (fuse.c): one per column, or one */
        p.csn = p.C && numel(p.C) > 1;
    }
    /* A batch of matrices of A times one B (a Linear layer on a batch of sequences, or of
     * single rows as torch's attention writes its projections: [T, 1, D] x [D, 3D]): the
     * batch's rows are one product's, not a product of M rows each (16 one-row products
     * of [16,1,64] x [64,192] took 1.16x the time of one of 16 rows). */
    if (p.nmat_b == 1 && p.nbatch > 1 && !p.zam) {
        p.M *= p.nbatch;
        p.nbatch = 1;
        p.brank = 0;
    }
    emit_prod(e, &p);
}

static double matmul_flops(Node *n)
{
    Prod p = {0};
    int64_t ydim[MLBC_MAX_RANK + 2];
    matmul_shape(n, &p, ydim);
    return 2.0 * p.nbatch * p.M * p.N * p.K;
}

/* ---- Einsum ---- */

#define EIN_MAX_OPS 8
#define EIN_MAX_VARS 64     /* letters plus ellipsis dimensions */

typedef struct Ein {
    int nops;
    int rank[EIN_MAX_OPS + 1];              /* last: the output */
    int var[EIN_MAX_OPS + 1][MLBC_MAX_RANK]; /* variable of each axis */
    int nvars;
    int64_t size[EIN_MAX_VARS];
    int in_out[EIN_MAX_VARS];
} Ein;

/* Variables: 'a'..'z' -> 0..25, 'A'..'Z' -> 26..51, ellipsis dimension i -> 52 + i. */
static int ein_letter(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return 26 + c - 'A';
    return -1;
}

/* Parse one term's letters into vars (ellipsis as -1); returns the count. */
static int ein_term(Node *n, const char *s, size_t len, int *vars, int *has_ell)
{
    int k = 0;
    *has_ell = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ' ')
            continue;
        if (c == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || *has_ell)
                node_die(n, "malformed ellipsis in the equation");
            *has_ell = 1;
            vars[k++] = -1;
            i += 2;
            continue;
        }
        if (ein_letter(c) < 0)
            node_die(n, "bad character '%c' in the equation", c);
        if (k >= MLBC_MAX_RANK)
            node_die(n, "too many indices in one term");
        vars[k++] = ein_letter(c);
    }
    return k;
}

/* The equation's input terms: the variables of each (-1 for its ellipsis). */
typedef struct EinTerms {
    int var[EIN_MAX_OPS][MLBC_MAX_RANK + 1], n[EIN_MAX_OPS], ell[EIN_MAX_OPS];
    int ell_rank;                           /* the most dimensions an ellipsis stands for */
} EinTerms;

/* Parses the input terms (the LHS_LEN characters of EQ), each checked against its input. */
static void ein_input_terms(Node *n, const char *eq, size_t lhs_len, int nops, EinTerms *T)
{
    const char *s = eq;
    T->ell_rank = 0;
    for (int i = 0; i < nops; i++) {
        const char *end = memchr(s, ',', (size_t)(eq + lhs_len - s));
        if (!end)
            end = eq + lhs_len;
        if ((i < nops - 1) != (end < eq + lhs_len))
            node_die(n, "the equation has a different number of terms than the %d inputs",
                     nops);
        T->n[i] = ein_term(n, s, (size_t)(end - s), T->var[i], &T->ell[i]);
        Value *v = n->in[i];
        int letters = T->n[i] - T->ell[i];
        if (T->ell[i] ? v->rank < letters : v->rank != letters)
            node_die(n, "term %d of the equation does not match input '%s' %s", i, v->name,
                     shape_str(v));
        if (T->ell[i] && v->rank - letters > T->ell_rank)
            T->ell_rank = v->rank - letters;
        s = end + 1;
    }
}

/* Binds input V's axes from R on to the ER dimensions of its ellipsis, right-aligned to
 * ELL_RANK; returns the next axis. */
static int ein_bind_ellipsis(Node *n, Ein *E, const Value *v, int *vars, int r, int er,
                             int ell_rank)
{
    for (int d = 0; d < er; d++) {
        int var = 52 + ell_rank - er + d;
        int64_t sz = v->dim[r];
        if (sz != 1 && E->size[var] != 1 && E->size[var] != sz)
            node_die(n, "ellipsis dimensions cannot be broadcast");
        if (sz != 1)
            E->size[var] = sz;
        vars[r++] = var;
    }
    return r;
}

/* The variables of input I's axes, and the size of each variable. */
static void ein_bind_input(Node *n, Ein *E, const EinTerms *T, int i)
{
    Value *v = n->in[i];
    int r = 0, er = v->rank - (T->n[i] - T->ell[i]);
    for (int t = 0; t < T->n[i]; t++) {
        int var = T->var[i][t];
        if (var < 0) {
            r = ein_bind_ellipsis(n, E, v, E->var[i], r, er, T->ell_rank);
            continue;
        }
        int64_t d = v->dim[r];
        if (E->size[var] >= 0 && E->size[var] != d)
            node_die(n, "index '%c' has sizes %lld and %lld",
                     var < 26 ? 'a' + var : 'A' + var - 26, (long long)E->size[var],
                     (long long)d);
        E->size[var] = d;
        E->var[i][r++] = var;
    }
    E->rank[i] = r;
}

/* The output term as the equation gives it after "->" (ARROW). */
static int ein_explicit_output(Node *n, Ein *E, const char *arrow, int ell_rank)
{
    int o = E->nops, r = 0;
    int ov[MLBC_MAX_RANK + 1], has;
    int k = ein_term(n, arrow + 2, strlen(arrow + 2), ov, &has);
    for (int t = 0; t < k; t++) {
        if (ov[t] < 0) {
            for (int d = 0; d < ell_rank; d++)
                E->var[o][r++] = 52 + d;
            continue;
        }
        if (E->size[ov[t]] < 0)
            node_die(n, "output index '%c' appears in no input", arrow[2 + t]);
        for (int q = 0; q < r; q++)
            if (E->var[o][q] == ov[t])
                node_die(n, "output index repeated in the equation");
        if (r >= MLBC_MAX_RANK)
            node_die(n, "output rank too large");
        E->var[o][r++] = ov[t];
    }
    return r;
}

/* Without "->": the ellipsis dimensions, then the letters used once in alphabetical order. */
static int ein_implicit_output(Node *n, Ein *E, const EinTerms *T)
{
    int o = E->nops, r = 0;
    int count[52] = {0};
    for (int i = 0; i < E->nops; i++)
        for (int t = 0; t < T->n[i]; t++)
            if (T->var[i][t] >= 0)
                count[T->var[i][t]]++;
    for (int d = 0; d < T->ell_rank; d++)
        E->var[o][r++] = 52 + d;
    for (int v = 0; v < 52; v++)
        if (count[v] == 1) {
            if (r >= MLBC_MAX_RANK)
                node_die(n, "output rank too large");
            E->var[o][r++] = v;
        }
    return r;
}

static void ein_parse(Node *n, Ein *E)
{
    const char *eq = attr_str(n, "equation", NULL);
    if (!eq)
        node_die(n, "attribute 'equation' is required");
    memset(E, 0, sizeof *E);
    E->nops = n->nin;
    if (n->nin < 1 || n->nin > EIN_MAX_OPS)
        node_die(n, "takes 1 to %d inputs", EIN_MAX_OPS);
    const char *arrow = strstr(eq, "->");
    EinTerms T;
    ein_input_terms(n, eq, arrow ? (size_t)(arrow - eq) : strlen(eq), E->nops, &T);
    for (int v = 0; v < EIN_MAX_VARS; v++)
        E->size[v] = -1;
    for (int d = 0; d < T.ell_rank; d++)
        E->size[52 + d] = 1;
    for (int i = 0; i < E->nops; i++)
        ein_bind_input(n, E, &T, i);
    E->nvars = 52 + T.ell_rank;
    int o = E->nops;
    E->rank[o] = arrow ? ein_explicit_output(n, E, arrow, T.ell_rank)
                       : ein_implicit_output(n, E, &T);
    for (int q = 0; q < E->rank[o]; q++)
        E->in_out[E->var[o][q]] = 1;
}

/* The loop variable of index v: i_a .. i_z, i_A .. i_Z, e0, e1, ... for ellipsis axes. */
static const char *ein_var(int v)
{
    if (v >= 52)
        return strf("e%d", v - 52);
    return strf("i_%c", v < 26 ? 'a' + v : 'A' + v - 26);
}

static const DType ein_types[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_INT8, DT_INT16, DT_INT32,
                                  DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64,
                                  DT_UNDEF};

static void einsum_infer(Node *n)
{
    for (int i = 0; i < n->nin; i++) {
        if (!n->in[i])
            node_die(n, "input %d is missing", i);
        need_type(n, n->in[i], ein_types);
        need_same_type(n, n->in[0], n->in[i]);
    }
    Ein E;
    ein_parse(n, &E);
    int64_t dim[MLBC_MAX_RANK];
    for (int q = 0; q < E.rank[E.nops]; q++)
        dim[q] = E.size[E.var[E.nops][q]];
    set_output(n, 0, n->in[0]->dt, E.rank[E.nops], dim);
}

static void einsum_emit(Emit *e, Node *n)
{
    Ein E;
    ein_parse(n, &E);
    Value *y = n->out[0];
    DType t = y->dt, ct = acc_type(t);
    /* Loop order: output variables (output order), then summed ones (first use order). */
    int order[EIN_MAX_VARS], no = 0, used[EIN_MAX_VARS] = {0};
    for (int q = 0; q < E.rank[E.nops]; q++) {
        int v = E.var[E.nops][q];
        if (!used[v])
            order[no++] = v, used[v] = 1;
    }
    int nout_vars = no;
    for (int i = 0; i < E.nops; i++)
        for (int a = 0; a < E.rank[i]; a++) {
            int v = E.var[i][a];
            if (!used[v])
                order[no++] = v, used[v] = 1;
        }
    /* Index expression of operand i (n->nin = output) from strides of its axes; a
     * broadcast ellipsis axis (size 1 in this operand) does not move. */
    Buf body = {0}, params = {0};
    const char *idx[EIN_MAX_OPS + 1];
    for (int i = 0; i <= E.nops; i++) {
        Value *v = i < E.nops ? n->in[i] : y;
        Buf b = {0};
        int64_t s = 1;
        for (int a = E.rank[i] - 1; a >= 0; a--) {
            if (v->dim[a] != 1) {
                const char *term = scaled(ein_var(E.var[i][a]), s);
                buf_printf(&b, b.len ? " + %s" : "%s", term);
            }
            s *= v->dim[a];
        }
        idx[i] = b.len ? b.p : "0";
        if (i < E.nops)
            buf_printf(&params, "const %s *restrict x%d, ", dtype_ctype(v->dt), i);
    }
    buf_printf(&params, "%s *restrict y", dtype_ctype(t));
    /* Output loops, then one block per output element: s = 0, the summed loops, store. */
    const char *ind = "    ";
    for (int q = 0; q < nout_vars; q++) {
        int v = order[q];
        buf_printf(&body, "%sfor (long %s = 0; %s < %s; %s++)%s\n", ind, ein_var(v), ein_var(v),
                   lit(E.size[v]), ein_var(v), q == nout_vars - 1 ? " {" : "");
        if (q < nout_vars - 1)
            ind = strf("%s    ", ind);
    }
    if (!nout_vars)
        buf_printf(&body, "%s{\n", ind);
    const char *block = strf("%s    ", ind);
    buf_printf(&body, "%s%s s = 0;\n", block, dtype_ctype(ct));
    const char *inner = block;
    for (int q = nout_vars; q < no; q++) {
        int v = order[q];
        buf_printf(&body, "%sfor (long %s = 0; %s < %s; %s++)\n", inner, ein_var(v), ein_var(v),
                   lit(E.size[v]), ein_var(v));
        inner = strf("%s    ", inner);
    }
    /* s += x0 * ... * xn: the last product and the sum as one contraction-proof madd */
    Buf prod = {0};
    for (int i = 0; i < E.nops - 1; i++)
        buf_printf(&prod, "%s%s", i ? " * " : "",
                   load_as(t, ct, strf("x%d[%s]", i, idx[i])));
    const char *last = load_as(t, ct, strf("x%d[%s]", E.nops - 1, idx[E.nops - 1]));
    buf_printf(&body, "%ss = %s;\n", inner,
               prod.p ? fused(ct, E.nops > 2 ? strf("(%s)", prod.p) : prod.p, last, "s")
                      : strf("s + %s", last));
    buf_printf(&body, "%sy[%s] = %s;\n%s}\n", block, idx[E.nops], store_as(t, ct, "s"), ind);
    const char *fn = kernel(e, n, "linalg_einsum",
        "DOC", strf("Einsum '%s': %s", c_comment(attr_str(n, "equation", "")), shape_str(y)),
        "PARAMS", params.p, "BODY", body.p, NULL);
    Buf call = {0};
    for (int i = 0; i < E.nops; i++)
        buf_printf(&call, "%s, ", ref(e, n->in[i]));
    stmt(e, "%s(%s%s);", fn, call.p, ref(e, y));
}

static double einsum_flops(Node *n)
{
    Ein E;
    ein_parse(n, &E);
    double f = 1;
    int seen[EIN_MAX_VARS] = {0};
    for (int i = 0; i < E.nops; i++)
        for (int a = 0; a < E.rank[i]; a++)
            if (!seen[E.var[i][a]]) {
                seen[E.var[i][a]] = 1;
                f *= (double)E.size[E.var[i][a]];
            }
    return f * E.nops;
}

const OpDef ops_linalg[] = {
    {"Gemm", gemm_infer, NULL, gemm_emit, gemm_flops, 0},
    {"MatMul", matmul_infer, NULL, matmul_emit, matmul_flops, 0},
    {"MatMulInteger", matmul_infer, NULL, matmul_emit, matmul_flops, 0},
    {"Einsum", einsum_infer, NULL, einsum_emit, einsum_flops, 0},
    {0},
};
