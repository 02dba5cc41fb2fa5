/* op_conv.c - Conv, ConvTranspose, ConvInteger.
 *
 * Shapes are static, so every kernel is specialised: spatial dimensions are padded to three
 * (1-D and 2-D convolutions become 3-D ones with unit extents, which the C compiler folds
 * away), and strides, pads, dilations and extents are constants in the code.
 *
 * A float Conv is a matrix product per image and group (templates/conv_gemm.c): the input is
 * laid out as columns (im2col, in tiles of output pixels bounded by CONV_TILE_BYTES on the
 * stack) and multiplied by W's rows through mlbc_gemm_f32, explicit fused multiply-adds with
 * the same bits on every path. With a unit stride along the last axis there is no im2col:
 * the tap of 16 consecutive output pixels of a row is 16 consecutive floats of the input (or
 * of its zero-padded copy), so mlbc_gemm_f32_taps reads them in place through a table of tap
 * offsets, one product per output row or per tile of rows (emit_row_products), the same
 * chains as through the columns. A 1-D or 2-D Conv strided along W gets there too: its
 * padded input is copied as its phases (templates/conv_phases.c), in which every tap of
 * consecutive output pixels is a run of consecutive floats again.
 *
 * A Relu that only reads such a Conv's output is fused into it (compiler/fuse.c sets the
 * Conv's aux, a ConvEpilogue): each tile (or output row) of the product's output goes through
 * templates/conv_relu.c while it is in cache. So does a MaxPool after it whose windows
 * do not overlap along H, when the products are of whole output rows: the tile's rows, a
 * window's height at a time, go through the pool's row kernel (templates/pool_rows.c)
 * straight into the pooled output, and the Conv's own output is never stored; a fused Relu
 * is then the pool's start value (emit_tile_pool). Products with pixels as rows have their
 * own pass for all three (templates/conv_pix_out.c). A 2x2, stride-2 MaxPool over rows of
 * nearly whole panels is taken on the product's registers instead, with AVX-512
 * (templates/gemm_taps_pool_f32.c, emit_pooled_pairs).
 *
 * Other Conv types and ConvInteger compute panels of up to 8 output channels of one group at
 * once, the channels being vector lanes (templates/conv_panel.c). A constant W (the usual
 * case) is re-laid out at compile time so that the 8 weights of a tap are contiguous: w[g]
 * [panel][c][kd][kh][kw][lane], with ConvInteger's weight zero point already subtracted.
 * ConvTranspose gathers, one output element at a time (templates/conv_transpose.c). Their
 * float and double accumulations are explicit fused multiply-adds (fused(): fmaf / fma),
 * which contraction cannot change.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "mlbc.h"

#define PANEL 8
#define NSP 3                           /* spatial dimensions of the kernels */
#define CONV_TILE_BYTES 65536           /* float Conv, sized to stay in cache: the column
                                           buffer (or output tile) of a tile of pixels, */
#define CONV_PAD_BYTES (16 << 20)       /* and at most this for a group's zero-padded input
                                           (both in the node's workspace, plan.c) */

/* ---- geometry ---- */

typedef struct Geom {
    int nsp;                            /* spatial dimensions of the model's tensors */
    int64_t N, C, M, G, CG, MG;         /* batch, in/out channels, groups, per group */
    int64_t in[NSP], out[NSP], k[NSP], s[NSP], d[NSP], pb[NSP], pe[NSP];
} Geom;

static void spatial_attr(Node *n, const char *name, int nsp, int64_t *out, int64_t dflt)
{
    int64_t v[2 * MLBC_MAX_RANK];
    int c = attr_ints(n, name, v, 2 * MLBC_MAX_RANK);
    for (int i = 0; i < nsp; i++)
        out[i] = dflt;
    if (c < 0)
        return;
    if (c != nsp)
        node_die(n, "attribute '%s' has %d values, expected %d", name, c, nsp);
    for (int i = 0; i < nsp; i++)
        out[i] = v[i];
}

/* Common checks and attributes of the three ops; transposed: W is [C, M/G, k...]. */
static void geom_common(Node *n, Geom *g, int transposed)
{
    Value *x = n->in[0], *w = n->in[1];
    if (x->rank < 3 || x->rank > 2 + NSP)
        node_die(n, "input X must have rank 3 to %d, got %s", 2 + NSP, shape_str(x));
    if (w->rank != x->rank)
        node_die(n, "W %s must have the rank of X %s", shape_str(w), shape_str(x));
    memset(g, 0, sizeof *g);
    g->nsp = x->rank - 2;
    g->N = x->dim[0];
    g->C = x->dim[1];
    g->G = attr_int(n, "group", 1);
    if (g->G < 1 || g->C % g->G)
        node_die(n, "group %lld does not divide the %lld input channels", (long long)g->G,
                 (long long)g->C);
    g->CG = g->C / g->G;
    if (transposed) {
        if (w->dim[0] != g->C)
            node_die(n, "W %s must have %lld input channels", shape_str(w), (long long)g->C);
        g->MG = w->dim[1];
        g->M = g->MG * g->G;
    } else {
        g->M = w->dim[0];
        if (w->dim[1] != g->CG)
            node_die(n, "W %s must have C/group = %lld channels", shape_str(w),
                     (long long)g->CG);
        if (g->M % g->G)
            node_die(n, "group %lld does not divide the %lld output channels",
                     (long long)g->G, (long long)g->M);
        g->MG = g->M / g->G;
    }
    int64_t ks[NSP];
    spatial_attr(n, "kernel_shape", g->nsp, ks, -1);
    spatial_attr(n, "strides", g->nsp, g->s, 1);
    spatial_attr(n, "dilations", g->nsp, g->d, 1);
    for (int i = 0; i < g->nsp; i++) {
        g->in[i] = x->dim[2 + i];
        g->k[i] = w->dim[2 + i];
        if (ks[i] >= 0 && ks[i] != g->k[i])
            node_die(n, "kernel_shape disagrees with W %s", shape_str(w));
        if (g->s[i] < 1 || g->d[i] < 1)
            node_die(n, "strides and dilations must be positive");
    }
    int64_t pads[2 * NSP];
    int c = attr_ints(n, "pads", pads, 2 * NSP);
    if (c >= 0 && c != 2 * g->nsp)
        node_die(n, "attribute 'pads' has %d values, expected %d", c, 2 * g->nsp);
    for (int i = 0; i < g->nsp; i++) {
        g->pb[i] = c > 0 ? pads[i] : 0;
        g->pe[i] = c > 0 ? pads[g->nsp + i] : 0;
    }
    Value *b = input(n, 2);
    if (b && n->in[2] && strcmp(n->op, "ConvInteger")) {
        if (b->rank != 1 || b->dim[0] != g->M)
            node_die(n, "bias %s must have one value per output channel (%lld)", shape_str(b),
                     (long long)g->M);
        need_same_type(n, x, b);
    }
}

static const char *auto_pad(Node *n)
{
    const char *ap = attr_str(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER") &&
        strcmp(ap, "VALID"))
        node_die(n, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
    return ap;
}

static void conv_geom(Node *n, Geom *g)
{
    geom_common(n, g, 0);
    const char *ap = auto_pad(n);
    for (int i = 0; i < g->nsp; i++) {
        int64_t ext = (g->k[i] - 1) * g->d[i] + 1;
        if (!strncmp(ap, "SAME", 4)) {
            g->out[i] = (g->in[i] + g->s[i] - 1) / g->s[i];
            int64_t total = (g->out[i] - 1) * g->s[i] + ext - g->in[i];
            if (total < 0)
                total = 0;
            g->pb[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
            continue;
        }
        if (!strcmp(ap, "VALID"))
            g->pb[i] = g->pe[i] = 0;
        int64_t span = g->in[i] + g->pb[i] + g->pe[i] - ext;
        if (span < 0)
            node_die(n, "the kernel (extent %lld) is larger than the padded input (%lld)",
                     (long long)ext, (long long)(g->in[i] + g->pb[i] + g->pe[i]));
        g->out[i] = span / g->s[i] + 1;
    }
}

static int64_t floordiv2(int64_t x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

static void convt_geom(Node *n, Geom *g)
{
    geom_common(n, g, 1);
    const char *ap = auto_pad(n);
    int64_t op[NSP], os[MLBC_MAX_RANK];
    spatial_attr(n, "output_padding", g->nsp, op, 0);
    int nos = attr_ints(n, "output_shape", os, MLBC_MAX_RANK);
    if (nos >= 0 && nos != g->nsp && nos != g->nsp + 2)
        node_die(n, "attribute 'output_shape' has %d values, expected %d", nos, g->nsp);
    for (int i = 0; i < g->nsp; i++) {
        int64_t ext = (g->k[i] - 1) * g->d[i] + 1;
        int64_t full = g->s[i] * (g->in[i] - 1) + op[i] + ext;
        if (nos >= 0 || !strncmp(ap, "SAME", 4)) {
            g->out[i] = nos >= 0 ? os[nos - g->nsp + i] : g->in[i] * g->s[i];
            /* As ONNX's reference: floor division, so that a negative total (output_shape
             * larger than the natural size) extends the end, like output_padding. */
            int64_t total = full - g->out[i], half = floordiv2(total);
            if (!strcmp(ap, "SAME_UPPER")) {
                g->pb[i] = half;
                g->pe[i] = total - half;
            } else {
                g->pb[i] = total - half;
                g->pe[i] = half;
            }
            continue;
        }
        if (!strcmp(ap, "VALID"))
            g->pb[i] = g->pe[i] = 0;
        g->out[i] = full - g->pb[i] - g->pe[i];
    }
}

static const DType float_types[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_UNDEF};
static const DType int8_types[] = {DT_INT8, DT_UINT8, DT_UNDEF};

static void set_conv_output(Node *n, const Geom *g, DType dt)
{
    int64_t dim[2 + NSP] = {g->N, g->M};
    for (int i = 0; i < g->nsp; i++) {
        if (g->out[i] < 0)
            node_die(n, "the output would have a negative size");
        dim[2 + i] = g->out[i];
    }
    set_output(n, 0, dt, 2 + g->nsp, dim);
}

static void check_inputs(Node *n, int lo, int hi)
{
    if (n->nin < lo || n->nin > hi || !n->in[0] || !n->in[1])
        node_die(n, "takes %d to %d inputs, X and W required", lo, hi);
}

static void conv_infer(Node *n)
{
    Geom g;
    int integer = !strcmp(n->op, "ConvInteger");
    check_inputs(n, 2, integer ? 4 : 3);
    if (integer) {
        need_type(n, n->in[0], int8_types);
        need_type(n, n->in[1], int8_types);
        Value *zx = input(n, 2), *zw = input(n, 3);
        if (zx && (need_same_type(n, n->in[0], zx), numel(zx) != 1))
            node_die(n, "x_zero_point must be a scalar");
        if (zw)
            need_same_type(n, n->in[1], zw);
    } else {
        need_type(n, n->in[0], float_types);
        need_same_type(n, n->in[0], n->in[1]);
    }
    conv_geom(n, &g);
    Value *zw = integer ? input(n, 3) : NULL;
    if (zw && numel(zw) != 1 && numel(zw) != g.M)
        node_die(n, "w_zero_point must be a scalar or have one value per output channel");
    set_conv_output(n, &g, integer ? DT_INT32 : n->in[0]->dt);
    n->ws_bytes = conv_workspace(n);
}

static void convt_infer(Node *n)
{
    Geom g;
    check_inputs(n, 2, 3);
    need_type(n, n->in[0], float_types);
    need_same_type(n, n->in[0], n->in[1]);
    convt_geom(n, &g);
    set_conv_output(n, &g, n->in[0]->dt);
}

/* Padded to NSP spatial dimensions: leading unit dimensions. */
static void pad3(const Geom *g, const int64_t *v, int64_t *out, int64_t fill)
{
    int lead = NSP - g->nsp;
    for (int i = 0; i < NSP; i++)
        out[i] = i < lead ? fill : v[i - lead];
}

static int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

/* The geometry padded to three spatial dimensions (D, H, W) */
typedef struct Geom3 {
    int64_t in[NSP], out[NSP], k[NSP], s[NSP], d[NSP], pb[NSP], pe[NSP];
} Geom3;

static Geom3 geom3(const Geom *g)
{
    Geom3 t;
    pad3(g, g->in, t.in, 1);
    pad3(g, g->out, t.out, 1);
    pad3(g, g->k, t.k, 1);
    pad3(g, g->s, t.s, 1);
    pad3(g, g->d, t.d, 1);
    pad3(g, g->pb, t.pb, 0);
    pad3(g, g->pe, t.pe, 0);
    return t;
}

/* The room for the substitutions of a Conv kernel (pairs and the final NULL). */
#define CONV_KV 160

/* Substitutions for the spatial geometry: ID IH IW OD OH OW KD KH KW SD.. DD.. PD.., FOR_O*
 * and FOR_K*, appended to kv (k entries so far, CONV_KV at most). */
static void geom_kv(const Geom *g, const char **kv, int *k)
{
    if (*k + 2 * 8 * NSP + 1 > CONV_KV)
        die("internal: more than %d substitutions for a Conv kernel", CONV_KV);
    Geom3 t = geom3(g);
    const char *ax = "DHW";
    for (int i = 0; i < NSP; i++) {
        const int64_t *src[] = {t.in, t.out, t.k, t.s, t.d, t.pb};
        const char *pre[] = {"I", "O", "K", "S", "D", "P"};
        for (int j = 0; j < 6; j++) {
            kv[(*k)++] = strf("%s%c", pre[j], ax[i]);
            kv[(*k)++] = lit(src[j][i]);
        }
        kv[(*k)++] = strf("FOR_O%c", ax[i]);
        kv[(*k)++] = loop_head("", strf("o%c", tolower(ax[i])), t.out[i], 1);
        kv[(*k)++] = strf("FOR_K%c", ax[i]);
        kv[(*k)++] = loop_head("", strf("k%c", tolower(ax[i])), t.k[i], 1);
    }
}

static const char *geom_doc(const Geom *g)
{
    Buf b = {0};
    const char *names[] = {"in", "kernel", "strides", "dilations", "pads"};
    const int64_t *vals[] = {g->in, g->k, g->s, g->d, g->pb};
    for (int j = 0; j < 5; j++) {
        buf_printf(&b, "%s%s ", j ? ", " : "", names[j]);
        for (int i = 0; i < g->nsp; i++)
            buf_printf(&b, "%s%lld", i ? "x" : "", (long long)vals[j][i]);
        if (j == 4)
            for (int i = 0; i < g->nsp; i++)
                buf_printf(&b, "%s%lld", i ? "x" : "/", (long long)g->pe[i]);
    }
    return b.p;
}

/* ---- Conv, ConvInteger ---- */

typedef struct ConvK {
    Node *n;
    Geom g;
    Value *X, *W, *B, *Y, *zx, *zw;
    DType ct;
    int packed;
    const ConvEpilogue *ep;             /* fused after it (fuse.c), or NULL */
} ConvK;

/* "x + 0" reads badly: drop it. */
static const char *drop_zeros(const char *s)
{
    Buf o = {0};
    while (*s) {
        if (!strncmp(s, " + 0,", 5) || !strncmp(s, " + 0)", 5) || !strcmp(s, " + 0")) {
            s += 4;
            continue;
        }
        buf_put(&o, s++, 1);
    }
    return o.p ? o.p : "";
}

static const char *conv_params(const ConvK *c, const char *tw)
{
    Buf b = {0};
    buf_printf(&b, "const %s *restrict x, const %s *restrict w, ", dtype_ctype(c->X->dt), tw);
    if (c->B)
        buf_printf(&b, "const %s *restrict bias, ", dtype_ctype(c->B->dt));
    if (c->zx)
        buf_printf(&b, "const %s *restrict zx, ", dtype_ctype(c->zx->dt));
    if (c->zw && !c->packed)
        buf_printf(&b, "const %s *restrict zw, ", dtype_ctype(c->zw->dt));
    buf_printf(&b, "%s *restrict y", dtype_ctype(c->Y->dt));
    return b.p;
}

/* W packed per group and panel: [g][panel][tap][lane], lanes padded to a power of two.
 * Packed when the weights are written. */
static void pack_conv_weights(const void *arg, void *dst)
{
    const ConvK *c = arg;
    const Geom *g = &c->g;
    int64_t taps = g->CG * numel_dims(g->nsp, g->k), full = g->MG / PANEL, rem = g->MG % PANEL;
    int64_t count = 0;
    for (int64_t gr = 0; gr < g->G; gr++)
        for (int64_t p = 0; p <= full; p++) {
            int64_t width = p < full ? PANEL : rem ? pow2ceil(rem) : 0;
            for (int64_t t = 0; t < taps; t++)
                for (int64_t l = 0; l < width; l++, count++) {
                    int64_t m = gr * g->MG + p * PANEL + l, at = m * taps + t;
                    if (p * PANEL + l >= g->MG)
                        continue;               /* dst is zeroed */
                    if (c->ct == DT_UINT32)
                        set_acc(dst, count, c->ct, 0, value_get_i(c->W, at) -
                                (c->zw ? value_get_i(c->zw, numel(c->zw) > 1 ? m : 0) : 0));
                    else
                        set_acc(dst, count, c->ct, value_get_f(c->W, at), 0);
                }
        }
}

static const char *emit_conv_weights(Emit *e, const ConvK *c, int64_t *panel_size)
{
    const Geom *g = &c->g;
    int64_t taps = g->CG * numel_dims(g->nsp, g->k), full = g->MG / PANEL, rem = g->MG % PANEL;
    ConvK *arg = xalloc(sizeof *arg);
    *arg = *c;
    *panel_size = taps * PANEL;
    return weight_array(e, c->n,
        strf("conv W %d zw %d ct %d G %lld MG %lld taps %lld", c->W->id,
             c->zw ? c->zw->id : -1, (int)c->ct, (long long)g->G, (long long)g->MG,
             (long long)taps),
        (WeightArray){.doc = strf("%s: '%s' %s%s as [group][panel of %d channels][tap][channel]%s",
                                  c->n->op, c_comment(c->W->name), dtype_name(c->W->dt),
                                  shape_str(c->W),
                                  PANEL, c->zw ? ", zero point subtracted" : ""),
                      .dt = c->ct, .pack = pack_conv_weights, .arg = arg,
                      .count = g->G * taps * (full * PANEL + (rem ? pow2ceil(rem) : 0))});
}

/* Floats of a group's weights packed for mlbc_gemm_f32_pix (pack_pix_weights). */
static int64_t pix_group_floats(const Geom *g, int64_t taps)
{
    return (g->MG + 15) / 16 * gemm_panel_stride(taps);
}

/* W transposed for mlbc_gemm_f32_pix, per group: [panel of 16 channels][tap][channel], each
 * panel gemm_panel_stride(taps) floats (zeros past the taps and the channels). */
static void pack_pix_weights(const void *arg, void *dst)
{
    const ConvK *c = arg;
    const Geom *g = &c->g;
    int64_t taps = g->CG * numel_dims(g->nsp, g->k), rows = gemm_panel_stride(taps) / 16;
    const float *w = c->W->data;
    float *out = dst;
    for (int64_t gr = 0; gr < g->G; gr++)
        for (int64_t q = 0; q * 16 < g->MG; q++)
            for (int64_t t = 0; t < rows; t++)
                for (int64_t l = 0; l < 16; l++, out++)
                    if (t < taps && q * 16 + l < g->MG)
                        *out = w[(gr * g->MG + q * 16 + l) * taps + t];
}

static const char *emit_pix_weights(Emit *e, const ConvK *c)
{
    const Geom *g = &c->g;
    int64_t taps = g->CG * numel_dims(g->nsp, g->k);
    ConvK *arg = xalloc(sizeof *arg);
    *arg = *c;
    return weight_array(e, c->n,
        strf("conv pix W %d G %lld MG %lld taps %lld", c->W->id, (long long)g->G,
             (long long)g->MG, (long long)taps),
        (WeightArray){.doc = strf("%s: '%s' %s%s transposed, as [group][panel of 16 channels]"
                                  "[tap][channel]", c->n->op, c_comment(c->W->name),
                                  dtype_name(c->W->dt), shape_str(c->W)),
                      .dt = DT_FLOAT, .pack = pack_pix_weights, .arg = arg,
                      .count = g->G * pix_group_floats(g, taps)});
}

/* x at row pointer xr, index ix, as ct (with the zero point for ConvInteger). */
static const char *conv_lx(const ConvK *c, const char *ix)
{
    const char *xe = strf("xr[%s]", ix);
    return c->zx ? strf("(uint32_t)((int32_t)%s - (int32_t)zx[0])", xe)
                 : load_as(c->X->dt, c->ct, xe);
}

/* The kernel for output positions ow in [ow0, ow1): blocks of four positions (block4), or
 * one position at a time. */
static const char *emit_conv_panel(Emit *e, const ConvK *c, int64_t lanes, int64_t ls,
                                   const char *tw, int block4, int64_t ow0, int64_t ow1)
{
    const Geom *g = &c->g;
    int64_t out3[NSP], s3[NSP], taps = g->CG * numel_dims(g->nsp, g->k);
    pad3(g, g->out, out3, 1);
    pad3(g, g->s, s3, 1);
    const char *lw;
    if (c->packed)
        lw = strf("w[tap * %s + l]", lit(lanes));
    else {
        const char *we = strf("w[tap + l * %s]", lit(taps));
        lw = c->zw ? strf("(uint32_t)((int32_t)%s - (int32_t)zw[%s])", we,
                          numel(c->zw) > 1 ? "l" : "0")
                   : load_as(c->W->dt, c->ct, we);
    }
    const char *kv[CONV_KV];
    int k = 0;
#define KV(a, b) (kv[k++] = (a), kv[k++] = (b))
    for (int j = 0; j < (block4 ? 4 : 1); j++) {
        const char *acc = block4 ? strf("a%d[l]", j) : "acc[l]";
        const char *sum = acc;
        if (c->B)
            sum = strf("%s + %s", acc, load_as(c->B->dt, c->ct, "bias[l]"));
        if (c->ct == DT_UINT32)
            sum = strf("(int32_t)(%s)", sum);
        KV(strf("STORE%s", block4 ? lit(j) : ""), store_as(c->Y->dt, c->ct, sum));
        KV(strf("LX%d", j), conv_lx(c, j ? strf("iw + %s", lit(j * s3[2])) : "iw"));
        KV(strf("MAC%s", block4 ? lit(j) : ""), fused(c->ct, strf("x%d", j), lw, acc));
    }
    KV("DOC", strf("%s: %lld output channel(s) of %s, %s; %s", c->n->op, (long long)ls,
                   shape_str(c->Y), block4 ? "four positions at a time" : "one position at a time",
                   geom_doc(g)));
    KV("PARAMS", conv_params(c, tw));
    KV("CT", dtype_ctype(c->ct));
    KV("TX", dtype_ctype(c->X->dt));
    KV("TY", dtype_ctype(c->Y->dt));
    KV("L", lit(lanes));
    KV("FOR_L", loop_head("", "l", lanes, 1));
    KV("LS", lit(ls));
    KV("FOR_LS", loop_head("", "l", ls, 1));
    KV("CG", lit(g->CG));
    KV("FOR_C", loop_head("", "c", g->CG, 1));
    KV("OSP", lit(prod3(out3)));
    KV("FOR_POS", loop_range("", "ow", ow0, ow1, block4 ? 4 : 1));
    KV("SW2", lit(2 * s3[2]));
    KV("SW3", lit(3 * s3[2]));
#undef KV
    geom_kv(g, kv, &k);
    kv[k] = NULL;
    return kernelv(e, c->n, block4 ? "conv_panel4" : "conv_panel", kv);
}

/* Float Conv through mlbc_gemm_f32: plain float operands (the bias too) and at least one tap. */
static int gemm_eligible(const ConvK *c)
{
    return !c->zx && !c->zw && c->X->dt == DT_FLOAT && c->W->dt == DT_FLOAT &&
           c->Y->dt == DT_FLOAT && (!c->B || c->B->dt == DT_FLOAT) &&
           c->g.CG * numel_dims(c->g.nsp, c->g.k) > 0;
}

/* A 1x1 convolution with unit strides and no padding: its columns are x itself. */
static int pointwise(const Geom *g)
{
    for (int i = 0; i < g->nsp; i++)
        if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] || g->pe[i])
            return 0;
    return 1;
}

/* The im2col kernel for any tile of output pixels, padding by bounds checks
 * (templates/conv_im2col.c). */
static const char *emit_im2col(Emit *e, const ConvK *c)
{
    const char *kv[CONV_KV];
    int k = 0;
    kv[k++] = "DOC";
    kv[k++] = strf("Conv: columns of %s for a matrix product, %lld taps per pixel; %s",
                   shape_str(c->X), (long long)(c->g.CG * numel_dims(c->g.nsp, c->g.k)),
                   geom_doc(&c->g));
    kv[k++] = "CG";
    kv[k++] = lit(c->g.CG);
    kv[k++] = "FOR_C";
    kv[k++] = loop_head("", "c", c->g.CG, 1);
    geom_kv(&c->g, kv, &k);
    kv[k] = NULL;
    return kernelv(e, c->n, "conv_im2col", kv);
}

/* The zero-padded copy of a group's input, of extents xp (templates/conv_pad.c), into a buffer
 * whose zeros conv_emit_gemm writes once a call: one loop over the input's rows copies each,
 * with no loop of one trip (an earlier version kept its channel and depth loops: without them,
 * gcc 12 -O3 -march=native computed wrong rows in test_same_bits; never reduced). */
static const char *emit_pad(Emit *e, const ConvK *c, const int64_t *xp)
{
    const Geom *g = &c->g;
    int64_t in3[NSP], p3[NSP];
    pad3(g, g->in, in3, 1);
    pad3(g, g->pb, p3, 0);
    /* Row r is x[c][id][ih]: an index of more than one value is r over the rows it spans,
     * modulo its extent unless it is the outermost that varies; r itself if it is alone. */
    const char *name[] = {"c", "id", "ih"};
    int64_t n[] = {g->CG, in3[0], in3[1]}, span[] = {in3[0] * in3[1], in3[1], 1};
    int64_t step[] = {prod3(xp), xp[1] * xp[2], xp[2]}, rows = g->CG * in3[0] * in3[1];
    int64_t off = (p3[0] * xp[1] + p3[1]) * xp[2] + p3[2];
    int many = (n[0] > 1) + (n[1] > 1) + (n[2] > 1) > 1;
    Buf row = {0}, dst = {0};
    for (int i = 0; i < NSP; i++) {
        if (n[i] == 1)
            continue;
        const char *v = span[i] > 1 ? strf("r / %s", lit(span[i])) : "r";
        if (n[i] * span[i] < rows)
            v = strf("%s %% %s", v, lit(n[i]));
        const char *ix = many ? name[i] : "r";
        if (many)
            buf_printf(&row, "%s%s = %s", row.len ? ", " : "        const long ", name[i], v);
        buf_printf(&dst, "%s%s", dst.len ? " + " : "",
                   step[i] == 1 ? ix : strf("%s * %s", ix, lit(step[i])));
    }
    if (row.len)
        buf_puts(&row, ";\n");
    if (off || !dst.len)
        buf_printf(&dst, "%s%s", dst.len ? " + " : "", lit(off));
    return kernel(e, c->n, "conv_pad",
                  "DOC", strf("Conv: %s zero-padded, %lldx%lldx%lld per channel", shape_str(c->X),
                              (long long)xp[0], (long long)xp[1], (long long)xp[2]),
                  "IW", lit(in3[2]),
                  "FOR_R", loop_head("long ", "r", rows, 1), "ROW", row.len ? row.p : "",
                  "DST", dst.p, NULL);
}

/* The im2col kernel of whole output rows from a source of extents src (the input, or its
 * padded copy) without bounds checks (templates/conv_im2col_rows.c). */
static const char *emit_im2col_rows(Emit *e, const ConvK *c, const int64_t *src, int padded)
{
    const Geom *g = &c->g;
    int64_t out3[NSP], k3[NSP], s3[NSP], d3[NSP];
    pad3(g, g->out, out3, 1);
    pad3(g, g->k, k3, 1);
    pad3(g, g->s, s3, 1);
    pad3(g, g->d, d3, 1);
    return kernel(e, c->n, "conv_im2col_rows",
                  "DOC", strf("Conv: columns of %s%s for a matrix product, %lld taps per pixel; %s",
                              shape_str(c->X), padded ? " zero-padded" : "",
                              (long long)(g->CG * prod3(k3)), geom_doc(g)),
                  "CG", lit(g->CG), "ID", lit(src[0]), "IH", lit(src[1]), "IW", lit(src[2]),
                  "OH", lit(out3[1]), "OW", lit(out3[2]), "KD", lit(k3[0]), "KH", lit(k3[1]),
                  "KW", lit(k3[2]), "SD", lit(s3[0]), "SH", lit(s3[1]), "SW", lit(s3[2]),
                  "DD", lit(d3[0]), "DH", lit(d3[1]), "DW", lit(d3[2]),
                  "FOR_C", loop_head("", "c", g->CG, 1), "FOR_KD", loop_head("", "kd", k3[0], 1),
                  "FOR_KH", loop_head("", "kh", k3[1], 1), "FOR_KW", loop_head("", "kw", k3[2], 1),
                  NULL);
}

/* Pixels per tile of at most `budget` bytes at per_pixel bytes each, in units of `unit`
 * pixels, as even as can be; all of them (osp) if they fit. */
static int64_t tile_pixels(int64_t osp, int64_t per_pixel, int64_t unit, int64_t budget)
{
    if (osp * per_pixel <= budget)
        return osp;
    int64_t most = budget / per_pixel / unit * unit;
    if (most < unit)
        most = unit;
    int64_t ntiles = (osp + most - 1) / most;
    return ((osp + ntiles - 1) / ntiles + unit - 1) / unit * unit;
}

/* A static table of the kernel, `static const long NAME[n]`, under a one-line comment. */
static void emit_long_table(Buf *b, const char *comment, const char *name, const int64_t *v,
                            int64_t n)
{
    int64_t col = 96; /* lines of up to 96 columns */
    buf_printf(b, "    /* %s */\n    static const long %s[%s] = {", comment, name, lit(n));
    for (int64_t i = 0; i < n; i++) {
        const char *x = lit(v[i]);
        if (col + 2 + (int64_t)strlen(x) > 96) {
            buf_puts(b, i ? ",\n        " : "\n        ");
            col = 8;
        } else {
            buf_puts(b, ", ");
            col += 2;
        }
        buf_puts(b, x);
        col += (int64_t)strlen(x);
    }
    buf_puts(b, "};\n");
}

/* The table of the rows of A for mlbc_gemm_f32_pix (templates/gemm_pix_f32.c): output pixel
 * i * OW + ow of a product of NR rows is i * XW + ow floats after its first in the source. */
static void emit_pixel_offsets(Buf *b, int64_t nr, int64_t ow, int64_t xw)
{
    int64_t n = nr * ow, *v = xalloc(sizeof *v * n);
    for (int64_t i = 0; i < n; i++)
        v[i] = i / ow * xw + i % ow;
    emit_long_table(b, "where each output pixel of a product is in the source, from its first",
                    "pix", v, n);
}

/* How a float Conv's products get their columns (conv_emit_gemm), decided once for the
 * emitter and for the workspace it needs (conv_workspace). */
typedef struct GemmPlan {
    int direct;                         /* a 1x1 convolution: the columns are x itself */
    int padded;                         /* the group's input zero-padded into xp first */
    int rows;                           /* whole output rows, no bounds checks */
    int shifted;                        /* unit stride along the last axis: taps read in place */
    int64_t phases[2];                  /* xp split into phases along H and W (the strides;
                                           1 1: not split), so that taps read it in place */
    int64_t step[NSP];                  /* the source's stride from one output to the next:
                                           the Conv's, 1 along an axis split into phases */
    int64_t src[NSP];                   /* extents of what the taps read: x, xp or a phase */
    int64_t tile;                       /* output pixels per product (im2col) */
    int64_t nr;                         /* output rows per product (shifted, unit stride
                                           along H as well), 0 if one row each */
    int64_t yw;                         /* with nr: the row stride of the output tile yt */
    int row_panels;                     /* with nr: output rows of 16 pixels, a panel each,
                                           or of 8, a panel's halves */
    int row_calls;                      /* with nr: rows of 16k pixels (k > 1), a call each */
    int pix;                            /* with nr: pixels as the product's rows, channels as
                                           its columns (mlbc_gemm_f32_pix), output yp */
    int pool2;                          /* with nr = 2: the fused 2x2 MaxPool taken on the
                                           product's registers (mlbc_gemm_f32_taps_pool) */
    int whole;                          /* with nr: one product covers the plane and its tile
                                           is laid out as y is: written straight into y */
    int64_t pad_floats, buf_floats;     /* workspace: xp, then the columns or output tile, */
    int64_t bn_floats;                  /* then a fused BatchNormalization's table, */
    int64_t mean_floats;                /* then a fused mean's lanes (templates/
                                           conv_pix_mean.c) */
} GemmPlan;

/* What is applied to each tile of a Conv's products: the kernels of the fused Relu, MaxPool
 * and BatchNormalization (channels as rows, pixels as rows: bn_pix) or NULL, and the
 * BatchNormalization's table for the group. */
typedef struct TileOps {
    const char *relu, *map, *pool, *bn, *bn_pix, *bnt;
} TileOps;

#define MAP_RUN 64                      /* floats at least a call of a map activation */

/* The fused activation's kernel over an array (templates/vmath_*.c, the node's own: the same
 * bits), applied in place to each tile after the rest; NULL for a Relu (an expression in the
 * tile's other kernels) or none. */
static const char *act_map(const ConvK *c)
{
    static const char *const maps[][2] = {
        {"Silu", "mlbc_vsilu_f32"}, {"Sigmoid", "mlbc_vsigmoid_f32"}, {"Tanh", "mlbc_vtanh_f32"},
    };
    const char *act = c->ep ? c->ep->act : NULL;
    for (size_t i = 0; act && i < sizeof maps / sizeof maps[0]; i++)
        if (!strcmp(act, maps[i][0]))
            return maps[i][1];
    if (act && strcmp(act, "Relu"))
        node_die(c->n, "internal: no fused %s", act);
    return NULL;
}

static int act_relu(const ConvK *c)
{
    return c->ep && c->ep->act && !strcmp(c->ep->act, "Relu");
}

/* The statement applying the tile's activation (the Relu kernel or the map) to the N floats
 * at Y, or "" */
static const char *act_stmt(const TileOps *ops, const char *y, const char *n)
{
    if (ops->relu)
        return strf("%s(%s, %s);", ops->relu, y, n);
    return ops->map ? strf("%s(%s, %s, %s);", ops->map, n, y, y) : "";
}

/* The table of tap offsets for mlbc_gemm_f32_taps (templates/gemm_taps_f32.c), a static array
 * of the kernel: tap ((c * KD + kd) * KH + kh) * KW + kw (W's order) of an output pixel is
 * ((c * XD + kd * DD) * XH + kh * DH) * XW + kw * DW floats after its first tap in a source of
 * extents src (XD x XH x XW); in phases (GemmPlan.phases), channel c's SH x SW phases of XH x
 * XW each, it is pixel (kh * DH / SH, kw * DW / SW) of phase (kh * DH % SH, kw * DW % SW). */
static void emit_tap_offsets(Buf *b, const ConvK *c, const GemmPlan *p)
{
    const Geom *g = &c->g;
    const int64_t *src = p->src;
    int64_t sh = p->phases[0], sw = p->phases[1];
    int64_t k3[NSP], d3[NSP];
    pad3(g, g->k, k3, 1);
    pad3(g, g->d, d3, 1);
    int64_t taps = g->CG * prod3(k3), *v = xalloc(sizeof *v * taps);
    for (int64_t t = 0; t < taps; t++) {
        int64_t kw = t % k3[2], kh = t / k3[2] % k3[1], kd = t / (k3[2] * k3[1]) % k3[0];
        int64_t ch = t / prod3(k3), h = kh * d3[1], w = kw * d3[2];
        int64_t phase = (ch * src[0] + kd * d3[0]) * sh * sw + h % sh * sw + w % sw;
        v[t] = (phase * src[1] + h / sh) * src[2] + w / sw;
    }
    emit_long_table(b, "where each tap of an output pixel is in the source, from its first",
                    "offs", v, taps);
}

/* Whether phase R of N along axis A of the Conv is read: some tap K * D has R = K * D % N (a
 * 1x1 kernel of stride 2 reads one phase of the four). */
static int phase_read(const Geom3 *t, int a, int64_t n, int64_t r)
{
    for (int64_t k = 0; k < t->k[a] && k < n; k++)
        if (k * t->d[a] % n == r)
            return 1;
    return 0;
}

/* The padded copy of CG channels of a group's input as their ph[0] x ph[1] phases of XH x XW
 * (templates/conv_phases.c), in a buffer of xn floats: zeroed first if ZERO (else the caller
 * zeroed it once: each call writes the same places). Phases no tap reads are left out. */
static const char *emit_phases(Emit *e, const ConvK *c, int64_t cg, const int64_t *ph,
                               int64_t xh, int64_t xw, int64_t xn, int zero)
{
    Geom3 t = geom3(&c->g);
    /* Phase b takes the input columns iw = b - PW (mod SW) from iw0[b] on: cols[b] of them,
     * to column (PW + iw0[b]) / SW on. One loop deals the columns all phases read have (its
     * loads interleaved, which gcc -O2 vectorises; a loop per phase it does not), then the
     * last column of those that have one more. */
    Buf one = {0}, last = {0};
    int64_t sw = ph[1], common = t.in[2];
    int64_t *iw0 = xalloc(sw * sizeof *iw0), *cols = xalloc(sw * sizeof *cols);
    for (int64_t b = 0; b < sw; b++) {
        iw0[b] = ((b - t.pb[2]) % sw + sw) % sw;
        int read = phase_read(&t, 2, sw, b);
        cols[b] = iw0[b] < t.in[2] && read ? (t.in[2] - iw0[b] + sw - 1) / sw : 0;
        common = read && cols[b] < common ? cols[b] : common;
    }
    for (int64_t b = 0; b < sw; b++) {
        const char *to = lit(b * xh * xw + (t.pb[2] + iw0[b]) / sw);
        if (common && cols[b])
            buf_printf(&one, "                yr[%s + j] = xr[%s];\n", to,
                       iw0[b] ? strf("%s + %s * j", lit(iw0[b]), lit(sw)) : strf("%s * j", lit(sw)));
        if (cols[b] > common)
            buf_printf(&last, "            yr[%s + %s] = xr[%s];\n", to, lit(common),
                       lit(iw0[b] + sw * common));
    }
    Buf deal = {0};
    if (common)
        buf_printf(&deal, "            for (j = 0; j < %s; j++) {\n%s            }\n", lit(common),
                   one.p);
    if (last.p)
        buf_puts(&deal, last.p);
    /* the rows of phases no tap reads: skipped (a mask of the read ones) */
    uint64_t rows = 0;
    for (int64_t r = 0; r < ph[0] && ph[0] <= 64; r++)
        rows |= (uint64_t)phase_read(&t, 1, ph[0], r) << r;
    const char *skip = ph[0] > 64 || rows == ~(uint64_t)0 >> (64 - ph[0]) ? ""
        : strf("            if (!(0x%llxu >> (%s + ih) %% %s & 1))\n                continue;\n",
               (unsigned long long)rows, lit(t.pb[1]), lit(ph[0]));
    return kernel_paths(e, c->n, cg * t.in[1] * t.in[2], "conv_phases",
                  "DOC", strf("Conv: %s zero-padded, as %lldx%lld phases of %lldx%lld per channel",
                              shape_str(c->X), (long long)ph[0], (long long)ph[1],
                              (long long)xh, (long long)xw),
                  "ZERO", zero ? strf("    memset(xp, 0, sizeof(float) * %s);\n", lit(xn)) : "",
                  "FOR_C", loop_head("", "c", cg, 1), "IH", lit(t.in[1]),
                  "IW", lit(t.in[2]),
                  "PH", lit(t.pb[1]), "SH", lit(ph[0]), "SW", lit(ph[1]), "XH", lit(xh),
                  "XW", lit(xw), "SKIP", skip, "DEAL", deal.p ? deal.p : "", NULL);
}

/* Whether a product over the rows of a plane (at most NR, of OW pixels) computes fewer
 * columns per output with pixels as its rows (mlbc_gemm_f32_pix: the output channels in
 * panels of 16) than with channels as rows (mlbc_gemm_f32_taps: the wrap-around garbage of
 * each row and a partial last panel). Its output goes into y in one pass either way
 * (templates/conv_pix_out.c): 16 -> 32 channels on 14x14 with a 2x2 pool, 14% fewer columns,
 * took 16.9 us instead of 19.8; 1 -> 16 on 28x28, 3% fewer, 4.1 instead of 5.8. Rows of 8
 * pixels, the halves of panels, waste no column, but each panel is two loads: there a tie
 * goes to pixels as rows (32 -> 32 channels on 8x8: 10.9 us instead of 12.2; 11-13% less on
 * four other shapes). The weights must be constants, packed for it at compile time. */
static int pix_pays(const ConvK *c, const GemmPlan *p, int64_t oh, int64_t ow)
{
    int64_t mg = c->g.MG, nr = p->nr < oh ? p->nr : oh, pixels = nr * ow;
    int64_t pix_cols = (mg + 15) / 16 * 16;
    if (!c->W->data)
        return 0;
    if (p->row_panels)
        return ow == 8 && (pixels + 15) / 16 * 16 * mg >= pix_cols * pixels;
    int64_t taps_cols = ((nr - 1) * p->src[2] + ow + 15) / 16 * 16;
    return taps_cols * mg > pix_cols * pixels;
}

/* Whether a fused 2x2, stride-2 MaxPool is taken on the product's registers, two output
 * rows of OW pixels a call (templates/gemm_taps_pool_f32.c): its tiles are 16-column panels
 * of each row, so it pays where they are nearly full (none of the rows' garbage columns is
 * computed, but a partial last panel is). */
static int pool_2x2_pays(const ConvK *c, int64_t ow)
{
    const ConvEpilogue *ep = c->ep;
    if (!ep || ep->pool_k[0] != 2 || ep->pool_k[1] != 2 || ep->pool_s[0] != 2 ||
        ep->pool_s[1] != 2 || ow < 16)
        return 0;
    int64_t cols = ow / 2 * 2, panels = (cols + 15) / 16;
    return (panels * 16 - cols) * 8 <= panels * 16;
}

static void gemm_plan(const ConvK *c, GemmPlan *p)
{
    const Geom *g = &c->g;
    int64_t in3[NSP], out3[NSP], pb3[NSP], pe3[NSP], s3[NSP];
    pad3(g, g->in, in3, 1);
    pad3(g, g->out, out3, 1);
    pad3(g, g->pb, pb3, 0);
    pad3(g, g->pe, pe3, 0);
    pad3(g, g->s, s3, 1);
    int64_t osp = prod3(out3), taps = g->CG * numel_dims(g->nsp, g->k);
    memset(p, 0, sizeof *p);
    p->direct = pointwise(g);
    p->rows = !p->direct;
    p->phases[0] = p->phases[1] = 1;
    memcpy(p->step, s3, sizeof s3);
    for (int i = 0; i < NSP; i++) {
        p->src[i] = in3[i] + pb3[i] + pe3[i];
        p->padded |= pb3[i] || pe3[i];
        p->rows &= pb3[i] >= 0 && pe3[i] >= 0;
    }
    /* A stride along W (2-D and 1-D Convs): the padded input is copied as its phases, phase
     * (a, b) holding rows a, a + SH, ... and columns b, b + SW, ... of it (templates/
     * conv_phases.c). Output pixel (oh, ow)'s tap (kh, kw) is then pixel (oh + kh * DH / SH,
     * ow + kw * DW / SW) of phase (kh * DH % SH, kw * DW % SW): a unit stride, taps read in
     * place, where im2col would copy every tap of every pixel (taps / (SH * SW) times the
     * input: 6.25 for a 5x5 kernel of stride 2). */
    if (p->rows && s3[2] > 1 && in3[0] == 1) {
        p->phases[0] = s3[1];
        p->phases[1] = s3[2];
        p->src[1] = (p->src[1] + s3[1] - 1) / s3[1];
        p->src[2] = (p->src[2] + s3[2] - 1) / s3[2];
        p->step[1] = p->step[2] = 1;
        p->padded = 1;
    }
    int64_t nphases = p->phases[0] * p->phases[1];
    p->rows &= !p->padded || g->CG * nphases * prod3(p->src) * 4 <= CONV_PAD_BYTES;
    p->padded &= p->rows;
    if (!p->rows) {
        memcpy(p->src, in3, sizeof in3);
        memcpy(p->step, s3, sizeof s3);
        p->phases[0] = p->phases[1] = nphases = 1;
    }
    /* tap k of the output pixels ow .. ow + 15 of a row: 16 consecutive source floats */
    p->shifted = p->rows && p->step[2] == 1;
    /* A row's right padding is the next row's left: max(pb, pe) zeros between rows, not pb +
     * pe, so products over several rows compute fewer garbage columns (1 of 15 instead of 2
     * of 16 for rows of 14 and a 3x3 kernel). Taps past the end of a row read the zeros that
     * follow it; the last row's run on past its plane (into the next plane's zeros, or the
     * slack after the buffer). */
    int64_t slack = 0;
    if (p->shifted && p->padded && nphases == 1) {
        int64_t share = pb3[2] < pe3[2] ? pb3[2] : pe3[2];
        p->src[2] -= share;
        slack = share;
    }
    p->rows &= p->shifted || out3[2] * taps * 4 <= CONV_TILE_BYTES;
    if (!p->rows && p->padded) {        /* a row's columns are over a tile: templates/
                                           conv_im2col.c, which pads by its bounds checks */
        p->padded = 0;
        memcpy(p->src, in3, sizeof in3);
    }
    p->tile = p->direct || p->shifted ? osp : tile_pixels(osp, taps * 4, p->rows ? out3[2] : 16,
                                                          CONV_TILE_BYTES);
    p->pad_floats = p->padded ? g->CG * nphases * prod3(p->src) + slack : 0;
    if (p->shifted && p->step[1] == 1) {
        /* rows per product: the tile yt within the budget, the rows of a plane split evenly,
         * whole pooling windows in each */
        int64_t kh = c->ep && c->ep->pool_k[0] ? c->ep->pool_k[0] : 1, oh = out3[1];
        int64_t most = CONV_TILE_BYTES / (g->MG * p->src[2] * 4) / kh * kh;
        if (most < kh)
            most = kh;
        int64_t nprod = (oh + most - 1) / most;
        p->nr = ((oh + nprod - 1) / nprod + kh - 1) / kh * kh;
        /* rows of whole panels need no columns past them (emit_row_products) */
        p->row_panels = out3[2] == 16 || out3[2] == 8;
        p->row_calls = out3[2] % 16 == 0 && out3[2] > 16;
        /* rows of 32, 48 ... pixels, a product each, go straight into y as those of a Conv
         * strided along H do (nr 0) unless a pool takes them: a tile copied out as soon as
         * it was stored stalled on its stores (a grouped conv1d of 64 steps at gcc -O2:
         * 1.6x clang's) */
        if (p->row_calls && !(c->ep && c->ep->pool_k[0]))
            p->nr = p->row_calls = 0;
        p->pix = p->nr && !p->row_calls && pix_pays(c, p, oh, out3[2]);
        p->yw = p->row_panels || p->pix ? out3[2] : p->src[2];
        p->pool2 = !p->pix && pool_2x2_pays(c, out3[2]);
        if (p->pool2) {
            p->nr = 2;
            p->yw = out3[2] / 2 * 2;    /* the pooled columns */
        }
        /* a tile laid out as y, copied out row by row, is y (a 16x16 plane's: 9% of a small
         * CNN at gcc -O2) */
        p->whole = p->nr >= oh && p->yw == out3[2] && out3[0] == 1 && !p->pix && !p->pool2 &&
                   !(c->ep && c->ep->pool_k[0]);
        p->buf_floats = p->whole ? 0 : g->MG * p->nr * p->yw;     /* 0 with nr */
    } else if (!p->direct && !p->shifted) {
        p->buf_floats = taps * p->tile;
    }
    p->bn_floats = c->ep && c->ep->bn ? 3 * g->M : 0;
    p->mean_floats = c->ep && c->ep->mean ? 8 * g->MG : 0;
}

/* Outputs of the fused MaxPool along H (axis 0) or W (1) of a 2-D Conv: floor mode, no pads. */
static int64_t pooled(const ConvK *c, int axis)
{
    return (c->g.out[axis] - c->ep->pool_k[axis]) / c->ep->pool_s[axis] + 1;
}

static const char *epilogue_doc(const ConvK *c)
{
    const ConvEpilogue *ep = c->ep;
    if (!ep)
        return "";
    const char *act = strf("%s%s", ep->bn ? "; then BatchNormalization" : "",
                           ep->act ? strf("; then %s", ep->act) : "");
    if (ep->mean)
        return strf("%s; then the mean of each plane (%s) -> %s", act, ep->mean, shape_str(c->Y));
    if (!ep->pool_k[0])
        return act;
    return strf("%s; then MaxPool, kernel %lldx%lld, strides %lldx%lld -> %s", act,
                (long long)ep->pool_k[0], (long long)ep->pool_k[1], (long long)ep->pool_s[0],
                (long long)ep->pool_s[1], shape_str(c->Y));
}

/* The fused MaxPool of a tile of NR output rows (yt, rows yw apart): each window's height
 * of rows into one pooled row, -inf then the rows in order, as op_pool.c's kernel does (the
 * same bits); a last window that the rows do not fill has no output (floor mode). With a
 * fused Relu before the pool, +0 instead of -inf stands for it, and the tile is not passed
 * through the Relu: the row kernel keeps its value unless a tap is greater (v > acc, so NaN
 * and -0 never replace it), which leaves max(relu(tap)) = max(+0, taps > +0) either way. */
static void emit_tile_pool(Buf *body, const ConvK *c, const GemmPlan *p, const char *pool)
{
    const char *ind = "                        ";
    int64_t kh = c->ep->pool_k[0], ph = pooled(c, 0), pw = pooled(c, 1);
    buf_printf(body,
               "%s%s\n"
               "%s    for (i = 0; i + %s <= nr; i += %s) {\n"
               "%s        const float init = %s;\n"
               "%s        %s(yt + m * %s + i * %s, %s,\n"
               "%s           yg + m * %s + (od * %s + (oh + i) / %s) * %s, &init);\n"
               "%s    }\n",
               ind, loop_head("", "m", c->g.MG, 1), ind, lit(kh), lit(kh),
               ind, c->ep->act ? "0" : "-INFINITY", ind, pool, lit(p->nr * p->yw), lit(p->yw),
               lit(kh), ind, lit(ph * pw), lit(ph), lit(kh), lit(pw), ind);
}

/* The call that takes the output yp of a product with pixels as rows, NR rows of OW pixels
 * from output row (od, oh), into y (templates/conv_pix_out.c): copied, through the fused Relu
 * if any, or pooled by the fused MaxPool, in one pass. */
static const char *pix_out_kernel(Emit *e, const ConvK *c, int64_t ow)
{
    const ConvEpilogue *ep = c->ep;
    int pool = ep && ep->pool_k[0], act = act_relu(c);
    int64_t kh = pool ? ep->pool_k[0] : 1, pw = pool ? pooled(c, 1) : ow;
    kernel(e, c->n, "pool_isa", NULL);
    return kernel(e, c->n, "conv_pix_out",
        "DOC", strf("Conv: a product's output, [pixel][channel], into channel planes: %s%s",
                    pool ? "pooled" : "copied", act ? ", after the Relu" : ""),
        "MG", lit(c->g.MG), "OW", lit(ow), "PW", lit(pw), "KH", lit(kh),
        "KW", lit(pool ? ep->pool_k[1] : 1), "S", lit(pool ? ep->pool_s[1] : 1),
        "YPS", lit(numel(c->Y) / (c->g.N * c->g.M)), "CLAMP", pool || act ? "1" : "0",
        "INIT", pool && !act ? "-INFINITY" : "0", NULL);
}

static const char *pix_out_call(Emit *e, const ConvK *c, int64_t oh, int64_t ow)
{
    const ConvEpilogue *ep = c->ep;
    int pool = ep && ep->pool_k[0];
    int64_t kh = pool ? ep->pool_k[0] : 1, pw = pool ? pooled(c, 1) : ow;
    if (pool)
        oh = pooled(c, 0);
    return strf("%s(yp, nr / %s, yg + (od * %s + oh / %s) * %s)", pix_out_kernel(e, c, ow),
                lit(kh), lit(oh), lit(kh), lit(pw));
}

/* The fold into s[0] of the 8 lanes s of a fused mean (at indent IND), as the node it took
 * folds them: GlobalAveragePool's or a ReduceMean's rows'. */
static const char *mean_fold(const ConvK *c, int ind)
{
    Buf fold = {0};
    buf_line(&fold, ind, "s[0] = %s;", !strcmp(c->ep->mean, "GlobalAveragePool")
                                          ? GLOBAL_POOL_SUM : REDUCE_LANES_SUM);
    return fold.p;
}

/* The call that takes the output yp of a product with pixels as rows, NR rows of OW pixels
 * from output row oh, into the fused mean of each plane (templates/conv_pix_mean.c), in the
 * order of additions of the node it took. */
static const char *pix_mean_call(Emit *e, const ConvK *c, int64_t oh, int64_t ow)
{
    const char *fold = mean_fold(c, 2);
    const char *fn = kernel_paths(e, c->n, MLBC_PATHS_MIN, "conv_pix_mean",
        "DOC", strf("Conv: a product's output, [pixel][channel], into the mean of each plane "
                    "(%s)%s", c->ep->mean, act_relu(c) ? ", after the Relu" : ""),
        "MG", lit(c->g.MG), "OW", lit(ow), "OH", lit(oh), "FOLD", fold,
        "PLANE", float_lit((double)(oh * ow), DT_FLOAT),
        "ACT", act_relu(c) ? "v > 0 ? v : 0" : "v", NULL);
    return strf("%s(yp, nr, oh, lanes, yg)", fn);
}

/* The products of pairs of output rows with the fused 2x2 MaxPool taken on their registers
 * (GemmPlan.pool2): a call a pooled row, the rows from ROW of xs on; POOL, the row kernel of
 * the paths without AVX-512, which take the pair's product into yt first. */
static void emit_pooled_pairs(Buf *body, const ConvK *c, const GemmPlan *p, const char *xs,
                              const char *row, const char *wg, const char *pool)
{
    const Geom *g = &c->g;
    const char *ind = "                ";
    int64_t taps = g->CG * numel_dims(g->nsp, g->k), ph = pooled(c, 0), pw = pooled(c, 1);
    const char *plane = lit(g->out[0] * g->out[1]), *mg = lit(g->MG);
    const char *bias = !c->B ? "0, 0" : g->G > 1 ? strf("bias + g * %s, 1", mg) : "bias, 1";
    buf_printf(body, "%sfor (od = p0 / %s; od < (p0 + np) / %s; od++)\n", ind, plane, plane);
    buf_printf(body, "%s    for (oh = 0; oh + 2 <= %s; oh += 2)\n", ind, lit(g->out[0]));
    buf_printf(body, "%s        mlbc_gemm_f32_taps_pool(%s, %s, %s, %s, %s, %s + %s, %s, offs, "
               "%s, %s, yg + (od * %s + oh / 2) * %s, %s, yt, %s);\n", ind, mg, lit(2 * pw),
               lit(taps), wg, lit(taps), xs, row, lit(p->src[2]), bias,
               c->ep->act ? "0" : "-INFINITY", lit(ph), lit(pw), lit(ph * pw), pool);
}

/* The products of a Conv of unit stride along the last axis, B read in place from xs (extents
 * src, XD x XH x XW) through the tap offsets: output row (od, oh) starts at (od * SD, oh * SH,
 * 0) of the source. With SH = 1 as well, the next output row starts XW floats further, so one
 * product covers NR rows: its column i * XW + ow is output pixel (oh + i, ow), and its columns
 * OW .. XW - 1 of each row are the wrap-around garbage of pixels that do not exist. Those
 * products write into the tile yt, whose rows are copied out (then the fused Relu, while they
 * are in cache) or pooled; short rows thus share 16-column panels instead of filling a panel
 * each. Rows of whole panels or half panels waste no column on the garbage: rows of 16
 * pixels are panels XW floats apart (bps), rows of 8 the halves of panels (hs = XW), one
 * product for the NR rows, into rows of 16 or 8 in yt; rows of 32, 48 ... pixels are a
 * product each. Where pixels as the product's rows waste fewer columns (GemmPlan.pix), its
 * output yp, [pixel][channel], goes into y in one pass (pix_out_call) instead; where a 2x2
 * pool takes the product's registers (GemmPlan.pool2), a call per pair of rows. Else one
 * product per output row (N = OW) writes straight into y. */
static void emit_row_products(Emit *e, Buf *body, const ConvK *c, const GemmPlan *p,
                              const char *xs, const char *wg, const char *cargs,
                              const TileOps *ops, const char **decls)
{
    const char *relu = ops->relu, *pool = ops->pool;
    const Geom *g = &c->g;
    const int64_t *src = p->src, *s3 = p->step;
    const char *ind = "                ";
    int64_t out3[NSP], taps = g->CG * numel_dims(g->nsp, g->k);
    pad3(g, g->out, out3, 1);
    const char *ow = lit(out3[2]), *osp = lit(prod3(out3)), *mg = lit(g->MG);
    const char *call = strf("mlbc_gemm_f32_taps(%s, %%s, %s, %s, %s, %s + %%s, %%s, %%s, offs, %s, "
                            "%%s, %%s);\n",
                            mg, lit(taps), wg, lit(taps), xs, cargs);
    if (!p->nr) {
        const char *start = out3[0] == 1 ? strf("r * %s", lit(s3[1] * src[2]))
                            : strf("(r / %s * %s + r %% %s * %s) * %s", lit(out3[1]),
                                   lit(s3[0] * src[1]), lit(out3[1]), lit(s3[1]), lit(src[2]));
        /* the activation per row of each channel, or, for a map over rows shorter than
         * MAP_RUN, over the group's planes once their rows are done */
        int by_row = ops->relu || out3[2] >= MAP_RUN;
        /* the epilogue (BatchNormalization, activation) after the products of every `rows`
         * output rows, on runs of rows * OW floats of each channel: per row of 32 floats,
         * the channels' rows 4 KiB apart (32x32 planes) all fell in one set of the L1 cache,
         * and the epilogue, reading back what the products had just written, took 16% of a
         * network's time (g39_020) */
        int64_t rows = (MLBC_CONV_EPILOGUE_RUN + out3[2] - 1) / out3[2];
        const char *r0 = rows > 1 ? "r0" : "r", *run = rows > 1 ? strf("nr * %s", ow) : ow;
        const char *act = act_stmt(ops, strf("yg + m * %s + %s * %s", osp, r0, ow), run);
        *decls = strf(", r%s%s", rows > 1 ? ", r0, nr" : "", *act && by_row ? ", m" : "");
        if (rows > 1)
            buf_printf(body,
                       "%sfor (r0 = p0 / %s; r0 < (p0 + np) / %s; r0 += nr) {\n"
                       "%s    nr = (p0 + np) / %s - r0 < %s ? (p0 + np) / %s - r0 : %s;\n"
                       "%s    for (r = r0; r < r0 + nr; r++)\n%s        ",
                       ind, ow, ow, ind, ow, lit(rows), ow, lit(rows), ind, ind);
        else
            buf_printf(body, "%sfor (r = p0 / %s; r < (p0 + np) / %s; r++) {\n%s    ", ind, ow,
                       ow, ind);
        buf_printf(body, call, ow, start, "16", "8", strf("yg + r * %s", ow), osp);
        if (ops->bn)
            buf_printf(body, "%s    %s(yg + %s * %s, %s, %s, %s);\n", ind, ops->bn, r0, ow, osp,
                       run, ops->bnt);
        if (*act && by_row)
            buf_printf(body, "%s    %s\n%s        %s\n", ind, loop_head("", "m", g->MG, 1), ind,
                       act);
        buf_printf(body, "%s}\n", ind);
        if (*act && !by_row)
            buf_printf(body, "%s%s\n", ind, act_stmt(ops, "yg", lit(g->MG * prod3(out3))));
        return;
    }
    int64_t oh = out3[1];
    const char *xw = lit(src[2]), *ldy = lit(p->nr * p->yw), *plane = lit(oh * out3[2]);
    const char *row = strf("(od * %s + oh) * %s", lit(s3[0] * src[1]), xw);
    if (p->pool2) {
        *decls = ", od, oh";
        emit_pooled_pairs(body, c, p, xs, row, wg, pool);
        return;
    }
    *decls = ", od, oh, nr, m, i";
    buf_printf(body,
               "%sfor (od = p0 / %s; od < (p0 + np) / %s; od++)\n"
               "%s    for (oh = 0; oh < %s; oh += nr) {\n"
               "%s        nr = %s - oh < %s ? %s - oh : %s;\n"
               "%s        ",
               ind, plane, plane, ind, lit(oh), ind, lit(oh), lit(p->nr), lit(oh), lit(p->nr), ind);
    if (p->pix) {
        *decls = ", od, oh, nr";
        buf_printf(body,
                   "mlbc_gemm_f32_pix(nr * %s, %s, %s, %s + %s, pix, offs, %s, %s, %s, yp, %s);\n",
                   ow, mg, lit(taps), xs, row, wg, lit(gemm_panel_stride(taps)), cargs, mg);
        if (ops->bn_pix)
            buf_printf(body, "%s        %s(yp, nr * %s, %s);\n", ind, ops->bn_pix, ow, ops->bnt);
        if (ops->map)
            buf_printf(body, "%s        %s\n", ind,
                       act_stmt(ops, "yp", strf("nr * %s", lit(out3[2] * g->MG))));
        buf_printf(body, "%s        %s;\n%s    }\n", ind,
                   c->ep && c->ep->mean ? pix_mean_call(e, c, oh, out3[2])
                                        : pix_out_call(e, c, oh, out3[2]), ind);
        return;
    }
    /* the tile: yt, or y itself (whole) */
    const char *yo = p->whole ? "yg" : "yt", *ldo = p->whole ? osp : ldy;
    if (p->row_calls) {
        buf_printf(body, "for (i = 0; i < nr; i++)\n%s            ", ind);
        buf_printf(body, call, ow, strf("%s + i * %s", row, xw), "16", "8", strf("yt + i * %s", xw),
                   ldy);
    } else if (p->row_panels) {
        int half = out3[2] == 8;
        buf_printf(body, call, strf("nr * %s", ow), row, half ? lit(2 * src[2]) : xw,
                   half ? xw : "8", yo, ldo);
    } else {
        buf_printf(body, call, strf("(nr - 1) * %s + %s", xw, ow), row, "16", "8", yo, ldo);
    }
    /* the fused activation over the whole tile, a long loop that every -O vectorises (the
     * columns past each row are thrown away anyway); per 16-float row, gcc -O3 unrolled the
     * Relu into branches */
    if (ops->bn)
        buf_printf(body, "%s        %s(%s, %s, %s, %s);\n", ind, ops->bn, yo, ldo, ldo, ops->bnt);
    if (relu || ops->map)
        buf_printf(body, "%s        %s\n", ind,
                   act_stmt(ops, yo, lit(g->MG * (p->whole ? prod3(out3) : p->nr * p->yw))));
    if (p->whole)
        *decls = ", od, oh, nr";
    else if (pool)
        emit_tile_pool(body, c, p, pool);
    else
        buf_printf(body,
                   "%s        %s\n"
                   "%s            for (i = 0; i < nr; i++) {\n"
                   "%s                float *restrict yr = yg + m * %s + (od * %s + oh + i) * %s;\n"
                   "%s                memcpy(yr, yt + m * %s + i * %s, %s * sizeof *yr);\n"
                   "%s            }\n",
                   ind, loop_head("", "m", g->MG, 1), ind, ind, osp, lit(oh), ow, ind, ldy,
                   lit(p->yw), ow, ind);
    buf_printf(body, "%s    }\n", ind);
}

/* The kernel's parameters and the call's arguments: x, w, the bias, y, the workspace. */
static void gemm_operands(Emit *e, const ConvK *c, const GemmPlan *p, const char *wref,
                          Buf *params, Buf *args)
{
    buf_puts(params, "const float *restrict x, const float *restrict w, ");
    buf_printf(args, "%s, %s, ", ref(e, c->X), wref);
    if (c->B) {
        buf_puts(params, "const float *restrict bias, ");
        buf_printf(args, "%s, ", ref(e, c->B));
    }
    if (p->bn_floats) {
        buf_puts(params, "const float *restrict bn_scale, const float *restrict bn_bias, "
                         "const float *restrict bn_mean, const float *restrict bn_var, ");
        for (int i = 3; i < 7; i++)
            buf_printf(args, "%s, ", ref(e, c->n->in[i]));
    }
    buf_puts(params, "float *restrict y");
    buf_puts(args, ref(e, c->Y));
    if (p->pad_floats + p->buf_floats + p->bn_floats) {
        buf_puts(params, ", float *restrict ws");
        buf_printf(args, ", %s", workspace_ref(e, c->n));
    }
}

/* A fused BatchNormalization (and the Relu after it): its table in the workspace after the
 * Conv's other buffers, filled once per call (templates/conv_bn_table.c), and the kernel
 * that applies it to a tile (templates/conv_bn.c) with the expressions of op_norm.c's and
 * the Relu's kernels. */
static void emit_bn(Emit *e, const ConvK *c, const GemmPlan *p, TileOps *ops, Buf *bufs,
                    Buf *init)
{
    const Geom *g = &c->g;
    const char *m = lit(g->M), *m2 = lit(2 * g->M);
    const char *table = kernel(e, c->n, "conv_bn_table",
        "DOC", strf("Conv: the fused BatchNormalization's terms, epsilon %g", c->ep->bn_eps),
        "M", m, "M2", m2, "EPS", float_lit(c->ep->bn_eps, DT_FLOAT), NULL);
    int64_t at = p->pad_floats + p->buf_floats;
    buf_printf(bufs, "    float *restrict bnt = %s; /* the BatchNormalization's a, mean, bias */\n",
               at ? strf("ws + %s", lit(at)) : "ws");
    buf_printf(init, "    %s(bn_scale, bn_bias, bn_mean, bn_var, bnt);\n", table);
    if (p->pix && ops->map) {           /* the map in the same pass, none after it */
        ops->bn_pix = kernel(e, c->n, "conv_bn_pix_map",
            "DOC", strf("Conv: the fused BatchNormalization, then %s, on a product's "
                        "[pixel][channel]", c->ep->act),
            "MG", lit(g->MG), "M", m, "M2", m2,
            "MAP", xstrndup(ops->map, strlen(ops->map) - 4), NULL);  /* mlbc_vsilu(_f32) */
        ops->map = NULL;
    } else if (p->pix)                  /* conv_pix_out applies the Relu after it */
        ops->bn_pix = kernel_paths(e, c->n, MLBC_PATHS_MIN, "conv_bn_pix",
            "DOC", "Conv: the fused BatchNormalization, on a product's [pixel][channel]",
            "MG", lit(g->MG), "BN", fused(DT_FLOAT, strf("(yr[m] - t[%s + m])", m), "t[m]",
                                          strf("t[%s + m]", m2)), NULL);
    else
        ops->bn = kernel_paths(e, c->n, MLBC_PATHS_MIN, "conv_bn",
            "DOC", strf("Conv: the fused BatchNormalization%s", act_relu(c) ? ", then the Relu" : ""),
            "MG", lit(g->MG), "M", m, "M2", m2,
            "BN", fused(DT_FLOAT, "(yr[i + q] - mu)", "a", "b"),
            "ACT", act_relu(c) ? "v > 0 ? v : 0" : "v",
            NULL);
    ops->bnt = g->G > 1 ? strf("bnt + g * %s", lit(g->MG)) : "bnt";
}

/* The Conv's own output shape (its node's output is the fused pool's). */
static const char *conv_shape(const ConvK *c)
{
    Buf b = {0};
    buf_printf(&b, "[%lld,%lld", (long long)c->g.N, (long long)c->g.M);
    for (int i = 0; i < c->g.nsp; i++)
        buf_printf(&b, ",%lld", (long long)c->g.out[i]);
    buf_puts(&b, "]");
    return b.p;
}

/* Float Conv as matrix products (templates/conv_gemm.c). B, the columns, is read in place
 * from x itself (pointwise) or, for a unit stride along the last axis, from x or its padded
 * copy through a table of tap offsets, one product per output row (when that copy fits the
 * budget); else it is copied by im2col, from whole output rows of x or of its padded copy (when
 * that copy and a row fit the budgets), or else from any range of pixels with bounds checks. */
static void conv_emit_gemm(Emit *e, ConvK *c)
{
    const Geom *g = &c->g;
    GemmPlan p;
    gemm_plan(c, &p);
    int64_t in3[NSP], out3[NSP];
    pad3(g, g->in, in3, 1);
    pad3(g, g->out, out3, 1);
    int64_t isp = prod3(in3), osp = prod3(out3), taps = g->CG * numel_dims(g->nsp, g->k);

    /* the weights of group g (packed transposed for pixels as rows) and the bias, per row of
     * the product (a channel) or per column (pixels as rows) */
    int64_t wgroup = p.pix ? pix_group_floats(g, taps) : g->MG * taps;
    const char *wg = g->G > 1 ? strf("w + g * %s", lit(wgroup)) : "w";
    const char *bstride = p.pix ? "0, 1" : "1, 0";
    const char *cargs = !c->B ? "0, 0, 0"
                        : g->G > 1 ? strf("bias + g * %s, %s", lit(g->MG), bstride)
                                   : strf("bias, %s", bstride);
    const char *pool = c->ep && c->ep->pool_k[0] && !p.pix
                       ? pool_rows_kernel(e, c->n, 1, pooled(c, 1), c->ep->pool_k[1],
                                          c->ep->pool_s[1], 1, p.yw) : NULL;
    /* a Relu before a fused pool is the pool's (emit_tile_pool), after a BatchNormalization
     * conv_bn's; other activations are their maps, after everything else */
    const char *relu = act_relu(c) && !(c->ep->pool_k[0] || p.pix || p.bn_floats)
                       ? kernel(e, c->n, "conv_relu", "DOC", "Conv: the fused Relu", NULL) : NULL;
    TileOps ops = {.relu = relu, .map = act_map(c), .pool = pool};
    Buf bufs = {0}, init = {0}, pre = {0}, body = {0};
    if (p.bn_floats)
        emit_bn(e, c, &p, &ops, &bufs, &init);
    const char *decls = "", *ind = "                ";
    if (p.mean_floats)
        buf_printf(&bufs, "    float *restrict lanes = ws + %s; /* the fused mean's: "
                   "[8][channel] */\n", lit(p.pad_floats + p.buf_floats + p.bn_floats));
    if (p.padded)
        buf_printf(&bufs, "    float *restrict xp = ws; /* the group's input, zero-padded: %s */\n",
                   lit(p.pad_floats));
    if (p.buf_floats)
        buf_printf(&bufs, "    float *restrict %s = %s; /* %s */\n",
                   p.pix ? "yp" : p.shifted ? "yt" : "xcol",
                   p.pad_floats ? strf("ws + %s", lit(p.pad_floats)) : "ws",
                   p.pix ? strf("[%s rows of %s pixels][channel]: a product's output",
                                lit(p.nr), lit(p.yw))
                   : p.shifted ? strf("[channel][%s rows of %s]: a product's output",
                                      lit(p.nr), lit(p.yw))
                               : "[tap][pixel of the tile]");
    if (p.pix)
        emit_pixel_offsets(&bufs, p.nr, out3[2], p.src[2]);
    if (p.direct) {
        buf_printf(&body, "%smlbc_gemm_f32(%s, np, %s, %s, %s, xg + p0, 16, %s, 0, %s, yg + p0, %s);\n",
                   ind, lit(g->MG), lit(taps), wg, lit(taps), lit(isp), cargs, lit(osp));
    } else {
        const char *xs = p.padded ? "xp" : "xg";
        if (p.padded)
            buf_printf(&pre, "            %s(xg, xp);\n",
                       p.phases[1] > 1 ? emit_phases(e, c, g->CG, p.phases, p.src[1], p.src[2],
                                                     p.pad_floats, 1)
                                       : emit_pad(e, c, p.src));
        if (p.padded && p.phases[1] == 1)   /* the zeros around the copies, once */
            buf_printf(&init, "    memset(xp, 0, sizeof(float) * %s);\n", lit(p.pad_floats));
        if (p.shifted) {
            emit_tap_offsets(&bufs, c, &p);
            emit_row_products(e, &body, c, &p, xs, wg, cargs, &ops, &decls);
        } else {
            if (p.rows)
                buf_printf(&body, "%s%s(%s, p0 / %s, np / %s, xcol);\n", ind,
                           emit_im2col_rows(e, c, p.src, p.padded), xs, lit(out3[2]),
                           lit(out3[2]));
            else
                buf_printf(&body, "%s%s(xg, p0, np, xcol);\n", ind, emit_im2col(e, c));
            buf_printf(&body, "%smlbc_gemm_f32(%s, np, %s, %s, %s, xcol, 16, np, 0, %s, yg + p0, "
                       "%s);\n", ind, lit(g->MG), lit(taps), wg, lit(taps), cargs, lit(osp));
        }
    }
    if (ops.bn && !p.shifted)
        buf_printf(&body, "%s%s(yg + p0, %s, np, %s);\n", ind, ops.bn, lit(osp), ops.bnt);
    if ((relu || ops.map) && !p.shifted) {
        /* The tile's output: all of the group's planes when the tile is all pixels, else a
         * run of np pixels per channel. */
        if (p.tile == osp) {
            buf_printf(&body, "%s%s\n", ind, act_stmt(&ops, "yg", lit(g->MG * osp)));
        } else {
            decls = ", m";
            buf_printf(&body, "%s%s\n%s    %s\n", ind, loop_head("", "m", g->MG, 1), ind,
                       act_stmt(&ops, strf("yg + m * %s + p0", lit(osp)), "np"));
        }
    }
    Buf params = {0}, args = {0};
    gemm_operands(e, c, &p, p.pix ? emit_pix_weights(e, c) : ref(e, c->W), &params, &args);
    const char *fn = kernel(e, c->n, "conv_gemm",
        "DOC", strf("Conv: %s -> %s, group %lld, %lld taps, %s; %s%s", shape_str(c->X),
                    conv_shape(c), (long long)g->G, (long long)taps,
                    p.direct ? "the columns are x"
                    : p.shifted ? "the columns read in place, a product per output row"
                    : p.tile == osp ? "one tile" : strf("tiles of %lld pixels", (long long)p.tile),
                    geom_doc(g), epilogue_doc(c)),
        "PARAMS", params.p, "BUFS", bufs.p ? bufs.p : "", "DECLS", decls,
        "INIT", init.p ? init.p : "",
        "FOR_N", loop_head("", "n", g->N, 1), "FOR_G", loop_head("", "g", g->G, 1),
        "C", lit(g->C), "CG", lit(g->CG), "M", lit(g->M),
        "MG", lit(g->MG), "ISP", lit(isp), "OSP", lit(osp), "T", lit(p.tile),
        "FOR_P0", loop_head("", "p0", osp, p.tile),
        "YSP", lit(numel(c->Y) / (g->N * g->M)), "PRE", pre.p ? pre.p : "", "TILE", body.p, NULL);
    stmt(e, "%s(%s);", fn, args.p);
}

/* ---- a batch of planes whose border pixels have taps in the padding ---- */

#define POS_BATCH 8                     /* batches of at least this many images */
#define POS_ROWS 256                    /* a product's rows (images x pixels), its output in L1 */
#define POS_WEIGHTS 262144              /* the classes' packed weights, floats: 1 MB, an L2 */
#define POS_CLASSES 64                  /* classes of output pixels at most */

/* Output pixel P's taps inside the input plane of a Conv of one group, ascending (W's order:
 * channel, kh, kw): each one's index into TAP, where it reads an image into OFF; returns how
 * many. */
static int64_t position_taps(const Geom *g, int64_t p, int64_t *tap, int64_t *off)
{
    Geom3 t = geom3(g);
    int64_t oh = p / t.out[2], ow = p % t.out[2], n = 0;
    for (int64_t ci = 0; ci < g->CG; ci++)
        for (int64_t kh = 0; kh < t.k[1]; kh++)
            for (int64_t kw = 0; kw < t.k[2]; kw++) {
                int64_t ih = oh * t.s[1] - t.pb[1] + kh * t.d[1];
                int64_t iw = ow * t.s[2] - t.pb[2] + kw * t.d[2];
                if (ih < 0 || ih >= t.in[1] || iw < 0 || iw >= t.in[2])
                    continue;
                tap[n] = (ci * t.k[1] + kh) * t.k[2] + kw;
                off[n++] = (ci * t.in[1] + ih) * t.in[2] + iw;
            }
    return n;
}

/* The output pixels in classes of the same taps inside the plane, read at the same distances
 * from the pixel's first (a plane's interior is one class, each side and corner of its
 * border others; on a plane of a few pixels, each pixel its own). */
typedef struct {
    int64_t n, maxpix, kept;            /* classes, most pixels in one, taps over all pixels */
    int64_t ntaps;                      /* taps over all classes (in tap, off) */
    int64_t *npix, *pfirst;             /* per class: its pixels, where they start in pix */
    int64_t *pix, *base;                /* the pixels class by class, each one's first tap */
    int64_t *ntap, *tfirst;             /* per class: its taps, where they start in tap, off */
    int64_t *tap, *off;                 /* their indices into W, their distance from the first */
} Classes;

/* CL of G's output pixels; 0 if a pixel has no tap inside the plane or there are more than
 * POS_CLASSES classes. */
static int position_classes(const Geom *g, Classes *cl)
{
    int64_t taps = g->CG * numel_dims(g->nsp, g->k), osp = numel_dims(g->nsp, g->out);
    int64_t *tap = xalloc(sizeof *tap * taps), *off = xalloc(sizeof *off * taps);
    int64_t *of = xalloc(sizeof *of * osp), *first = xalloc(sizeof *first * osp);
    int64_t most = osp < POS_CLASSES ? osp : POS_CLASSES;
    *cl = (Classes){.npix = xalloc(sizeof(int64_t) * most),
                    .ntap = xalloc(sizeof(int64_t) * most),
                    .tfirst = xalloc(sizeof(int64_t) * most),
                    .tap = xalloc(sizeof(int64_t) * taps * most),
                    .off = xalloc(sizeof(int64_t) * taps * most)};
    int64_t nt = 0, c;
    for (int64_t p = 0; p < osp; p++) {
        int64_t k = position_taps(g, p, tap, off);
        if (!k)
            return 0;
        first[p] = off[0];
        for (int64_t t = 0; t < k; t++)
            off[t] -= first[p];
        for (c = 0; c < cl->n; c++)
            if (cl->ntap[c] == k && !memcmp(cl->tap + cl->tfirst[c], tap, sizeof *tap * k) &&
                !memcmp(cl->off + cl->tfirst[c], off, sizeof *off * k))
                break;
        if (c == cl->n) {
            if (c == most)
                return 0;
            cl->ntap[c] = k;
            cl->tfirst[c] = nt;
            memcpy(cl->tap + nt, tap, sizeof *tap * k);
            memcpy(cl->off + nt, off, sizeof *off * k);
            nt += k;
            cl->npix[cl->n++] = 0;
        }
        of[p] = c;
        cl->npix[c]++;
        cl->kept += k;
    }
    cl->ntaps = nt;
    cl->pfirst = xalloc(sizeof(int64_t) * cl->n);
    cl->pix = xalloc(sizeof(int64_t) * osp);
    cl->base = xalloc(sizeof(int64_t) * osp);
    for (c = 0; c < cl->n; c++) {
        cl->pfirst[c] = c ? cl->pfirst[c - 1] + cl->npix[c - 1] : 0;
        cl->maxpix = cl->npix[c] > cl->maxpix ? cl->npix[c] : cl->maxpix;
    }
    int64_t *at = xalloc(sizeof *at * cl->n);
    memcpy(at, cl->pfirst, sizeof *at * cl->n);
    for (int64_t p = 0; p < osp; p++) {
        cl->pix[at[of[p]]] = p;
        cl->base[at[of[p]]++] = first[p];
    }
    return 1;
}

/* Images per product: as many as keep its rows within POS_ROWS, one at least. */
static int64_t position_images(const Geom *g, const Classes *cl)
{
    int64_t nb = POS_ROWS / cl->maxpix;
    return nb < 1 ? 1 : nb > g->N ? g->N : nb;
}

/* The weights conv_positions packs: per class, its taps' rows of all the panels. */
static int64_t position_weights(const Geom *g, const Classes *cl)
{
    int64_t floats = 0;
    for (int64_t c = 0; c < cl->n; c++)
        floats += (g->MG + 15) / 16 * gemm_panel_stride(cl->ntap[c]);
    return floats;
}

/* The shape conv_emit_positions takes, and its classes: one group, 1-D or 2-D, a batch, no
 * fused pool or mean, a quarter of the taps or more in the padding (a 3x3 kernel on 2x2
 * planes: 5 of 9), the classes' weights in L2. */
static int positions_shape(const ConvK *c, Classes *cl)
{
    const Geom *g = &c->g;
    if (!gemm_eligible(c) || g->G != 1 || g->nsp > 2 || g->N < POS_BATCH ||
        (c->ep && (c->ep->pool_k[0] || c->ep->mean)) || !position_classes(g, cl))
        return 0;
    int64_t taps = g->CG * numel_dims(g->nsp, g->k), osp = numel_dims(g->nsp, g->out);
    return cl->kept * 4 <= osp * taps * 3 && position_weights(g, cl) <= POS_WEIGHTS;
}

/* And whether it keeps the bits: W constant and finite (see the template). */
static int positions_pay(const Emit *e, const ConvK *c, Classes *cl)
{
    return value_in_code(e, c->W) && value_all_finite(c->W) && positions_shape(c, cl);
}

/* W for conv_positions: per class, its taps' weights packed as pack_pix_weights packs all of
 * them ([panel of 16 channels][tap][channel], zeros past the taps and channels). */
typedef struct {
    ConvK c;                            /* a copy: the weights are packed when written out */
    Classes cl;
} PositionWeights;

static void pack_position_weights(const void *arg, void *dst)
{
    const PositionWeights *pw = arg;
    const Geom *g = &pw->c.g;
    const Classes *cl = &pw->cl;
    int64_t taps = g->CG * numel_dims(g->nsp, g->k);
    const float *w = pw->c.W->data;
    float *out = dst;
    for (int64_t c = 0; c < cl->n; c++) {
        int64_t k = cl->ntap[c], rows = gemm_panel_stride(k) / 16;
        const int64_t *tap = cl->tap + cl->tfirst[c];
        for (int64_t q = 0; q * 16 < g->MG; q++)
            for (int64_t t = 0; t < rows; t++)
                for (int64_t l = 0; l < 16; l++, out++)
                    if (t < k && q * 16 + l < g->MG)
                        *out = w[(q * 16 + l) * taps + tap[t]];
    }
}

/* templates/conv_positions.c: the classes' tables (pixels, taps, where a product's rows
 * start in x), their packed weights, the fused BatchNormalization and activation on the
 * products' output. */
static void conv_emit_positions(Emit *e, ConvK *c, const Classes *cl)
{
    const Geom *g = &c->g;
    int64_t taps = g->CG * numel_dims(g->nsp, g->k), osp = numel_dims(g->nsp, g->out);
    int64_t isp = g->C * numel_dims(g->nsp, g->in), nb = position_images(g, cl), wall = 0;
    int64_t *at = xalloc(sizeof *at * cl->n), *stride = xalloc(sizeof *stride * cl->n);
    int64_t *apix = xalloc(sizeof *apix * nb * osp), *arow = xalloc(sizeof *arow * cl->n);
    for (int64_t k = 0; k < cl->n; k++) {
        stride[k] = gemm_panel_stride(cl->ntap[k]);
        at[k] = wall;
        wall += (g->MG + 15) / 16 * stride[k];
        arow[k] = nb * cl->pfirst[k];
        for (int64_t n = 0; n < nb; n++)
            for (int64_t i = 0; i < cl->npix[k]; i++)
                apix[arow[k] + n * cl->npix[k] + i] = n * isp + cl->base[cl->pfirst[k] + i];
    }
    PositionWeights *arg = xalloc(sizeof *arg);
    *arg = (PositionWeights){*c, *cl};
    const char *wref = weight_array(e, c->n,
        strf("conv positions W %d %s", c->W->id, geom_doc(g)),
        (WeightArray){.doc = strf("%s: '%s' %s%s, per class of output pixels their taps inside "
                                  "the plane, as [panel of 16 channels][tap][channel]", c->n->op,
                                  c_comment(c->W->name), dtype_name(c->W->dt), shape_str(c->W)),
                      .dt = DT_FLOAT, .pack = pack_position_weights, .arg = arg,
                      .count = wall});
    GemmPlan p = {.pix = 1, .buf_floats = nb * (cl->maxpix + osp) * g->MG,
                  .bn_floats = c->ep && c->ep->bn ? 3 * g->M : 0};
    TileOps ops = {.map = act_map(c)};
    Buf bufs = {0}, init = {0}, bn = {0}, params = {0}, args = {0};
    buf_printf(&bufs, "    float *restrict yp = ws; /* [row][channel]: a product's output */\n"
               "    float *restrict yb = ws + %s; /* [image][pixel][channel]: the block's */\n",
               lit(nb * cl->maxpix * g->MG));
    if (p.bn_floats)
        emit_bn(e, c, &p, &ops, &bufs, &init);
    emit_long_table(&bufs, "the output pixels, class by class", "pix", cl->pix, osp);
    emit_long_table(&bufs, "the pixels of class c", "npix", cl->npix, cl->n);
    emit_long_table(&bufs, "where they are in pix", "pfirst", cl->pfirst, cl->n);
    emit_long_table(&bufs, "where a product's rows (image, pixel) start in x, from its first "
                    "image", "apix", apix, nb * osp);
    emit_long_table(&bufs, "where class c's rows are in apix", "arow", arow, cl->n);
    emit_long_table(&bufs, "the taps of class c inside the plane", "taps", cl->ntap, cl->n);
    emit_long_table(&bufs, "where they are in offs", "tfirst", cl->tfirst, cl->n);
    emit_long_table(&bufs, "each tap's distance in x from a pixel's first", "offs", cl->off,
                    cl->ntaps);
    emit_long_table(&bufs, "where class c's weights start", "at", at, cl->n);
    emit_long_table(&bufs, "and their panels' stride", "stride", stride, cl->n);
    if (ops.bn_pix)
        buf_printf(&bn, "            %s(yp, rows, bnt);\n", ops.bn_pix);
    if (ops.map)
        buf_printf(&bn, "            %s\n", act_stmt(&ops, "yp", strf("rows * %s", lit(g->MG))));
    int64_t ow = g->out[g->nsp - 1];
    const char *out = pix_out_kernel(e, c, ow);
    gemm_operands(e, c, &p, wref, &params, &args);
    const char *fn = kernel(e, c->n, "conv_positions",
        "DOC", strf("Conv: %s -> %s, %lld taps, a product per class of output pixels over %lld "
                    "images at a time, the taps in the padding left out (%lld of %lld kept, %lld "
                    "classes); %s%s", shape_str(c->X), conv_shape(c), (long long)taps,
                    (long long)nb, (long long)cl->kept, (long long)(taps * osp),
                    (long long)cl->n, geom_doc(g), epilogue_doc(c)),
        "PARAMS", params.p, "BUFS", bufs.p, "INIT", init.p ? init.p : "", "OSP", lit(osp),
        "N", lit(g->N), "NB", lit(nb), "CLASSES", lit(cl->n), "ISP", lit(isp), "MG", lit(g->MG),
        "CARGS", c->B ? "bias, 0, 1" : "0, 0, 0", "BN", bn.p ? bn.p : "", "OUT", out,
        "ROWS", lit(osp / ow), NULL);
    stmt(e, "%s(%s);", fn, args.p);
}

/* A float Conv's operands and element types, and ConvInteger's zero points. */
/* ---- depthwise ---- */

/* A float Conv of one input channel per group (depthwise, any channel multiplier), 1-D or
 * 2-D, rows of at most DEPTHWISE_ROW outputs, no pool after it: templates/conv_depthwise.c.
 * Its products would be one column each: a conv1d of 7 steps over 192 channels, batch 96,
 * took 1.86 ms so at gcc -O2 and 1.03 ms as rows of one vector (AMD EPYC). */
#define DEPTHWISE_ROW 4096              /* longest row taken; longer ones keep the products */

static int depthwise(const ConvK *c)
{
    const Geom *g = &c->g;
    int64_t ow = g->out[g->nsp - 1];
    return gemm_eligible(c) && g->G > 1 && g->CG == 1 && g->nsp <= 2 &&
           ow <= DEPTHWISE_ROW && !(c->ep && c->ep->pool_k[0]);
}

/* A depthwise Conv's zero-padded input plane: its extents (H, W; of one phase when strided
 * along W, split as the products' xp is, so that a tap's row of outputs reads consecutive
 * floats), its phases ph (SH x SW, or 1 x 1) and its floats; 0 when the kernel reads x in
 * place (no padding, unit stride along W, rows of whole vectors of 16 outputs). */
static int64_t depthwise_plane(const Geom *g, int64_t *xh, int64_t *xw, int64_t *ph)
{
    Geom3 t = geom3(g);
    int split = t.s[2] > 1;
    ph[0] = split ? t.s[1] : 1;
    ph[1] = split ? t.s[2] : 1;
    *xh = (t.in[1] + t.pb[1] + t.pe[1] + ph[0] - 1) / ph[0];
    *xw = (t.in[2] + t.pb[2] + t.pe[2] + ph[1] - 1) / ph[1];
    return split || t.pb[1] || t.pe[1] || t.pb[2] || t.pe[2] || t.out[2] % 16
               ? ph[0] * ph[1] * *xh * *xw : 0;
}

/* The sums of a depthwise Conv's row: whole vectors of 16 (the lanes past OW read on into
 * the next row or the plane's slack and are never stored). */
static int64_t depthwise_accw(const Geom *g)
{
    return (g->out[g->nsp - 1] + 15) / 16 * 16;
}

#define DEPTHWISE_CHUNK 4               /* vectors of 16 sums a chunk of rows keeps */
#define DEPTHWISE_TINY 8                /* output planes of at most this many pixels take
                                           conv_depthwise_tiny (statements per pixel) */
#define DEPTHWISE_TINY_TAPS 49          /* and kernels of at most this many taps */

/* Chunk code of a depthwise Conv: ROWS output rows from row oh on, NB vectors of 16 sums
 * of each from output C on (arrays a0, a1..., which gcc -O2 keeps in registers: one array of
 * the row's sums it kept in memory, a store and a load per tap; each loop of 16
 * MLBC_LANES), the taps in order, then stored. Rows of one vector go ROWS at a time: one
 * broadcast of a tap's weight and one pass of the tap loops serve them all, and their
 * chains of fmas are independent (a row at a time, a 16 x 16 plane's taps took half of a
 * conv + SiLU network's time). ROWSTEP: the input floats between two rows' taps. END > 0:
 * chunks from C = 0 to END, of whole vectors; else one chunk at C = C0, whose last vector may
 * reach past OW: its outputs stored in runs of 8, 4, 2, 1 (constant trip counts, whole
 * vectors again). */
static void depthwise_chunk(Buf *b, int rows, int64_t rowstep, int nb, int64_t c0, int64_t end,
                            int64_t ow, const char *tap, const char *bias, int relu)
{
    Buf init = {0}, fma = {0}, store = {0};
    int64_t whole = end ? nb : (ow - c0) / 16;
    for (int r = 0; r < rows; r++)
        for (int v = 0; v < nb; v++) {
            int k = r * nb + v;
            const char *at = strf("%s%si", r ? strf("%s + ", lit(r * rowstep)) : "",
                                  v ? strf("%d + ", 16 * v) : "");
            const char *out = strf("ym[%s * %s + c + %s", r ? strf("(oh + %d)", r) : "oh",
                                   lit(ow), v ? strf("%d + ", 16 * v) : "");
            buf_printf(&init, "a%d[i] = ", k);
            buf_printf(&fma, "                        MLBC_LANES\n"
                             "                        for (i = 0; i < 16; i++)\n"
                             "                            a%d[i] = fmaf(wv, xr[%s], a%d[i]);\n",
                       k, at, k);
            if (v < whole)
                buf_printf(&store, "                    %si] = %s;\n", out,
                           relu ? strf("a%d[i] > 0 ? a%d[i] : 0", k, k) : strf("a%d[i]", k));
        }
    buf_printf(b, end ? "            for (c = 0; c < %s; c += %d) {\n"
                      : "            c = %s;\n            {\n", lit(end ? end : c0), 16 * nb);
    buf_printf(b, "                float a0[16]");
    for (int k = 1; k < rows * nb; k++)
        buf_printf(b, ", a%d[16]", k);
    buf_printf(b, ";\n                MLBC_LANES\n                for (i = 0; i < 16; i++)\n"
                  "                    %s%s;\n"
                  "%s%s                    }\n", init.p, bias, tap, fma.p);
    if (whole)
        buf_printf(b, "                MLBC_LANES\n                for (i = 0; i < 16; i++) {\n%s"
                      "                }\n", store.p);
    for (int r = 0; r < rows && whole < nb; r++) {   /* the rows' last, partial vectors */
        int k = r * nb + (int)whole;
        for (int64_t from = 0, n = 8, left = ow - c0 - 16 * whole; from < left; n /= 2)
            if (left - from >= n) {
                buf_printf(b, "                MLBC_LANES\n"
                              "                for (i = %s; i < %s; i++)\n"
                              "                    ym[%s * %s + c + %s + i] = %s;\n",
                           lit(from), lit(from + n), r ? strf("(oh + %d)", r) : "oh", lit(ow),
                           lit(16 * whole),
                           relu ? strf("a%d[i] > 0 ? a%d[i] : 0", k, k) : strf("a%d[i]", k));
                from += n;
            }
    }
    buf_puts(b, "            }\n");
}

/* S in parentheses if it is more than a name */
static const char *paren(const char *s)
{
    return strchr(s, ' ') ? strf("(%s)", s) : s;
}

/* "V * K", or V when K is 1 */
static const char *times(const char *v, int64_t k)
{
    return k == 1 ? v : strf("%s * %s", v, lit(k));
}

/* The statement that copies input plane SRC into the zero-bordered plane DST (its phases
 * when split), at INDENT: PHASES the phases' kernel, or NULL for rows copied one by one. */
static const char *depthwise_pad(const Geom3 *t, const char *phases, int64_t xw, const char *src,
                                 const char *dst, const char *indent)
{
    if (phases)
        return strf("%s%s(%s, %s);\n", indent, phases, src, dst);
    return strf("%sfor (i = 0; i < %s; i++)\n%s    mlbc_copy(%s + (i + %s) * %s + %s, %s + i * %s, "
                "%s * sizeof *xp);\n", indent, lit(t->in[1]), indent, dst, lit(t->pb[1]), lit(xw),
                lit(t->pb[2]), src, lit(t->in[2]), lit(t->in[2]));
}

/* The fused mean of the finished output plane ym (conv_takes_mean), into y[j]: its lanes of
 * 8 in order, folded as the node it took folds them, then divided: that node's bits. */
static const char *depthwise_mean(const ConvK *c, int64_t ohw)
{
    Buf b = {0};
    buf_line(&b, 2, "{");
    buf_line(&b, 3, "mlbc_f8 lanes = {0};");
    buf_line(&b, 3, "float s[8];");
    buf_line(&b, 3, "for (i = 0; i < %s; i += 8)", lit(ohw));
    buf_line(&b, 4, "MLBC_F8_ADD(lanes, ym + i);");
    buf_line(&b, 3, "memcpy(s, &lanes, sizeof lanes);");
    buf_puts(&b, mean_fold(c, 3));
    buf_line(&b, 3, "y[j] = s[0] / %s;", float_lit((double)ohw, DT_FLOAT));
    buf_line(&b, 2, "}");
    return b.p;
}

/* A depthwise Conv's fused activation other than Relu, over each run of output planes (OHW
 * floats each, NM of them) of at least MAP_RUN floats, in cache (a call a plane of one
 * output: 2.4x the time of the network); "" for none. */
static const char *plane_act(const ConvK *c, int64_t ohw, int64_t nm)
{
    const char *map = act_map(c);
    if (!map)
        return "";
    int64_t run = (MAP_RUN + ohw - 1) / ohw;
    return run == 1 ? strf("        %s(%s, ym, ym);\n", map, lit(ohw))
           : strf("        if (j %% %s == %s || j == %s)\n"
                  "            %s((j %% %s + 1) * %s, y + (j - j %% %s) * %s, "
                  "y + (j - j %% %s) * %s);\n", lit(run), lit(run - 1), lit(nm - 1),
                  map, lit(run), lit(ohw), lit(run), lit(ohw), lit(run), lit(ohw));
}

/* Whether a depthwise Conv takes templates/conv_depthwise_tiny.c: output planes of at most
 * DEPTHWISE_TINY pixels, no fused mean, constant finite weights and a constant bias without
 * -0 (what lets it leave out the taps in the padding: see the template). */
static int depthwise_tiny(const Emit *e, const ConvK *c)
{
    const Geom *g = &c->g;
    if ((c->ep && c->ep->mean) || numel_dims(g->nsp, g->out) > DEPTHWISE_TINY ||
        numel_dims(g->nsp, g->k) > DEPTHWISE_TINY_TAPS || !value_in_code(e, c->W) ||
        !value_all_finite(c->W) || (c->B && !value_in_code(e, c->B)))
        return 0;
    for (int64_t i = 0; c->B && i < numel(c->B); i++)
        if (value_get_f(c->B, i) == 0 && signbit(value_get_f(c->B, i)))
            return 0;
    return 1;
}

/* templates/conv_depthwise_tiny.c: each output pixel's statements, its taps inside the
 * plane only. */
static void conv_emit_depthwise_tiny(Emit *e, const ConvK *c)
{
    const Geom *g = &c->g;
    Geom3 t = geom3(g);
    int64_t ohw = t.out[1] * t.out[2], nm = g->N * g->M;
    int64_t khw = t.k[1] * t.k[2], *tap = xalloc(sizeof *tap * khw);
    int64_t *off = xalloc(sizeof *off * khw);
    Buf out = {0}, params = {0}, args = {0};
    for (int64_t p = 0; p < ohw; p++) {     /* one input channel: the taps of its plane */
        int64_t k = position_taps(g, p, tap, off);
        buf_printf(&out, "        a = %s;\n", c->B ? "bias[m]" : "0");
        for (int64_t i = 0; i < k; i++)
            buf_printf(&out, "        a = fmaf(wm[%s], xs[%s], a);\n", lit(tap[i]), lit(off[i]));
        buf_printf(&out, "        ym[%s] = %s;\n", lit(p), act_relu(c) ? "a > 0 ? a : 0" : "a");
    }
    buf_printf(&params, "const float *restrict x, const float *restrict w, %sfloat *restrict y",
               c->B ? "const float *restrict bias, " : "");
    const char *fn = kernel_paths(e, c->n, MLBC_PATHS_MIN, "conv_depthwise_tiny",
        "DOC", strf("Conv: %s -> %s, depthwise (group %lld), %lld taps%s, direct, the taps in "
                    "the padding left out", shape_str(c->X), shape_str(c->Y), (long long)g->G,
                    (long long)numel_dims(g->nsp, g->k),
                    c->ep && c->ep->act ? strf(", the fused %s", c->ep->act) : ""),
        "PARAMS", params.p, "NM", lit(nm), "M", lit(g->M), "KHW", lit(khw),
        "IN", g->MG == 1 ? "j" : strf("(j / %s)", lit(g->MG)), "ISP", lit(t.in[1] * t.in[2]),
        "OSP", lit(ohw), "OUTPUTS", out.p, "ACT", plane_act(c, ohw, nm), NULL);
    buf_printf(&args, "%s, %s, ", ref(e, c->X), ref(e, c->W));
    if (c->B)
        buf_printf(&args, "%s, ", ref(e, c->B));
    buf_puts(&args, ref(e, c->Y));
    stmt(e, "%s(%s);", fn, args.p);
}

static void conv_emit_depthwise(Emit *e, const ConvK *c)
{
    if (depthwise_tiny(e, c)) {
        conv_emit_depthwise_tiny(e, c);
        return;
    }
    const Geom *g = &c->g;
    Geom3 t = geom3(g);
    int64_t xh, xw, ph[2];
    int64_t plane = depthwise_plane(g, &xh, &xw, ph), ow = t.out[2], nm = g->N * g->M;
    int64_t accw = depthwise_accw(g);
    int64_t stride = plane + accw - ow;  /* a plane and its slack, which its rows read on into */
    int split = ph[1] > 1;              /* else the stride along W is 1 */
    const char *h = times("kh", t.d[1]), *w = times("kw", t.d[2]);
    const char *row = strf("%s + %s", times("oh", t.s[1]), h), *col = w;
    /* input plane j / MG of x feeds output plane j */
    const char *in = g->MG == 1 ? "j" : strf("j / %s", lit(g->MG));
    const char *in1 = g->MG == 1 ? "(j + 1)" : strf("(j + 1) / %s", lit(g->MG));
    Buf params = {0}, src = {0};
    int mean = c->ep && c->ep->mean;    /* y: the planes' means, each plane made in yb */
    buf_printf(&params, "const float *restrict x, const float *restrict w, %sfloat *restrict y%s%s",
               c->B ? "const float *restrict bias, " : "", plane ? ", float *restrict xp" : "",
               mean ? ", float *restrict yb" : "");
    if (split) {
        /* tap (kh, kw): row oh + kh DH / SH, column kw DW / SW of phase (kh DH % SH, kw DW %
         * SW), the phase's XH rows of XW after the others */
        const char *phase = strf("%s %% %s", paren(w), lit(ph[1]));
        if (ph[0] > 1)
            phase = strf("%s %% %s * %s + %s", paren(h), lit(ph[0]), lit(ph[1]), phase);
        row = strf("(%s) * %s + oh + %s", phase, lit(xh),
                   ph[0] > 1 ? strf("%s / %s", paren(h), lit(ph[0])) : h);
        col = strf("%s / %s", paren(w), lit(ph[1]));
    }
    const char *phases = split ? emit_phases(e, c, 1, ph, xh, xw, plane, 0) : NULL;
    const char *first = "";
    if (plane) {
        /* two planes, the next input plane copied one ahead of its use: read at once, a copy
         * stalled every load on its stores (a row of 14: 29% of a conv1d network's time) */
        first = strf("    for (i = 0; i < %s; i++)\n        xp[i] = 0;\n%s", lit(2 * stride),
                     depthwise_pad(&t, phases, xw, "x", "xp", "    "));
        buf_printf(&src, "        const float *restrict xs = xp + (%s & 1) * %s;\n", in,
                   lit(stride));
        buf_printf(&src, "        if (%sj + 1 < %s)\n%s",
                   g->MG == 1 ? "" : strf("(j + 1) %% %s == 0 && ", lit(g->MG)), lit(nm),
                   depthwise_pad(&t, phases, xw, strf("x + %s * %s", in1, lit(t.in[1] * t.in[2])),
                                 strf("xp + (%s & 1) * %s", in1, lit(stride)), "            "));
    } else {
        buf_printf(&src, "        const float *restrict xs = x + %s * %s;\n", in,
                   lit(t.in[1] * t.in[2]));
    }
    /* chunks of DEPTHWISE_CHUNK vectors, then one of the vectors left (the tap loops inside
     * a chunk: a loop over blocks inside the taps, clang -O2 vectorised across the blocks
     * with gathers, 9.5x slower with -march=native) */
    Buf chunks = {0};
    const char *tap = strf("                for (kh = 0; kh < %s; kh++)\n"
                           "                    for (kw = 0; kw < %s; kw++) {\n"
                           "                        const float wv = wm[kh * %s + kw];\n"
                           "                        const float *restrict xr = xs + (%s) * %s + %s"
                           " + c;\n", lit(t.k[1]), lit(t.k[2]), lit(t.k[2]), row,
                           lit(plane ? xw : t.in[2]), col);
    const char *bias = c->B ? "bias[m]" : "0";
    /* a partial last vector goes in the chunk left over, which is then never empty; rows of
     * fewer vectors than a chunk go several to a chunk, the rows left over in one more */
    int64_t nv = accw / 16, full = (ow % 16 ? nv - 1 : nv) / DEPTHWISE_CHUNK;
    int64_t rest = nv - full * DEPTHWISE_CHUNK, end = full * 16 * DEPTHWISE_CHUNK;
    int64_t rows = full ? 1 : DEPTHWISE_CHUNK / rest, oh = t.out[1];
    int64_t rowstep = split ? xw : t.s[1] * (plane ? xw : t.in[2]);
    rows = rows < oh ? rows : oh;
    for (int part = 0; part < 2; part++) {   /* the loop over rows, then the rows left */
        int64_t r = part ? oh % rows : rows;
        if (!r)
            continue;
        if (part)
            buf_printf(&chunks, "        oh = %s;\n        {\n", lit(oh - r));
        else
            buf_printf(&chunks, "        for (oh = 0; oh < %s; %s) {\n", lit(oh - oh % rows),
                       rows == 1 ? "oh++" : strf("oh += %s", lit(rows)));
        if (full)   /* then rows is 1 */
            depthwise_chunk(&chunks, 1, 0, DEPTHWISE_CHUNK, 0, end, ow, tap, bias, act_relu(c));
        if (rest)
            depthwise_chunk(&chunks, (int)r, rowstep, (int)rest, end, 0, ow, tap, bias,
                            act_relu(c));
        buf_puts(&chunks, "        }\n");
    }
    const char *act = plane_act(c, t.out[1] * ow, nm);
    /* paths whatever its size: on the build's own target (SSE2 at plain -O2) fmaf is a call */
    const char *fn = kernel_paths(e, c->n, MLBC_PATHS_MIN, "conv_depthwise",
        "DOC", strf("Conv: %s -> %s, depthwise (group %lld), %lld taps%s, direct%s",
                    shape_str(c->X), shape_str(c->Y), (long long)g->G,
                    (long long)numel_dims(g->nsp, g->k),
                    c->ep && c->ep->act ? strf(", the fused %s", c->ep->act) : "",
                    mean ? strf("; then the mean of each plane (%s)", c->ep->mean) : ""),
        "PARAMS", params.p, "FIRST", first, "SRC", src.p, "CHUNKS", chunks.p, "ACT", act,
        "MEAN", mean ? depthwise_mean(c, t.out[1] * ow) : "", "NM", lit(nm), "M", lit(g->M),
        "KHW", lit(t.k[1] * t.k[2]),
        "YM", mean ? "yb" : strf("y + j * %s", lit(t.out[1] * ow)), NULL);
    Buf args = {0};
    buf_printf(&args, "%s, %s, ", ref(e, c->X), ref(e, c->W));
    if (c->B)
        buf_printf(&args, "%s, ", ref(e, c->B));
    buf_puts(&args, ref(e, c->Y));
    if (plane)
        buf_printf(&args, ", %s", workspace_ref(e, c->n));
    if (mean)
        buf_printf(&args, ", %s + %s", workspace_ref(e, c->n), lit(plane ? 2 * stride : 0));
    stmt(e, "%s(%s);", fn, args.p);
}

static void conv_setup(Node *n, ConvK *c)
{
    *c = (ConvK){.n = n, .X = n->in[0], .W = n->in[1], .Y = n->out[0], .ep = n->aux};
    conv_geom(n, &c->g);
    if (!strcmp(n->op, "ConvInteger")) {
        c->zx = input(n, 2);
        c->zw = input(n, 3);
        c->ct = DT_UINT32;
    } else {
        c->B = input(n, 2);
        c->ct = calc_type(c->X->dt);
    }
}

int conv_takes_activation(Node *n)
{
    ConvK c;
    conv_setup(n, &c);
    return numel(c.Y) > 0 && gemm_eligible(&c);
}

int conv_takes_batchnorm(Node *n)
{
    ConvK c;
    conv_setup(n, &c);
    return numel(c.Y) > 0 && gemm_eligible(&c) && !depthwise(&c);
}

/* A plain 2-D MaxPool (maxpool_plain_2d) that reads only a Conv's output (fuse.c has checked
 * that), whose windows do not overlap along H, with a stride along W that its row kernel
 * takes, after a Conv whose products are of whole output rows: each tile is pooled as it is
 * made. Fills EP (the Conv's activation, then the pool). */
int conv_takes_maxpool(Node *conv, Node *pool, ConvEpilogue *ep)
{
    int64_t k[2], s[2];
    const ConvEpilogue *before = conv->aux;
    if (strcmp(pool->op, "MaxPool") || *pool->domain || !conv_takes_activation(conv) ||
        (before && (before->bn || (before->act && strcmp(before->act, "Relu")))) ||
        conv->in[0]->rank != 4 || !maxpool_plain_2d(pool, k, s) || s[0] != k[0] ||
        !(s[1] == 1 || (s[1] == 2 && k[1] >= 2)))
        return 0;
    *ep = (ConvEpilogue){.act = conv->aux ? ((ConvEpilogue *)conv->aux)->act : NULL,
                         .pool_k = {k[0], k[1]}, .pool_s = {s[0], s[1]}};
    ConvK ck;
    GemmPlan p;
    conv_setup(conv, &ck);
    if (depthwise(&ck))                 /* its own kernel, the pool a pass after it */
        return 0;
    ck.ep = ep;
    gemm_plan(&ck, &p);
    return p.nr > 0;
}

int conv_takes_mean(Node *conv, Node *next, ConvEpilogue *ep)
{
    const ConvEpilogue *before = conv->aux;
    int gap = !strcmp(next->op, "GlobalAveragePool") && !*next->domain;
    if (!(gap || reduce_mean_axes(next) == 0xCul) || !conv_takes_activation(conv) ||
        (before && before->pool_k[0]) || conv->in[0]->rank != 4 || conv->in[0]->dt != DT_FLOAT)
        return 0;
    ConvK ck;
    GemmPlan p;
    conv_setup(conv, &ck);
    /* the unfused node adds in 8 lanes with no tail: op_pool.c's global_emit from 8 pixels,
     * op_reduce.c's rows from 32 */
    int64_t plane = ck.g.out[0] * ck.g.out[1];
    if (plane % 8 || plane < (gap ? 8 : 32))
        return 0;
    *ep = before ? *before : (ConvEpilogue){0};
    ep->mean = gap ? "GlobalAveragePool" : "ReduceMean";
    ck.ep = ep;
    if (depthwise(&ck))     /* each plane's mean after it: its activation a plane at once */
        return !act_map(&ck) || plane >= MAP_RUN;
    gemm_plan(&ck, &p);
    return p.pix;
}

/* The padded input and the columns or output tile of a float Conv's products. */
int64_t conv_workspace(Node *n)
{
    ConvK c;
    conv_setup(n, &c);
    if (!numel(c.Y) || !gemm_eligible(&c))
        return 0;
    int64_t xh, xw, ph[2];
    if (depthwise(&c)) {
        int64_t plane = depthwise_plane(&c.g, &xh, &xw, ph);
        int64_t out = c.ep && c.ep->mean ? c.g.out[0] * c.g.out[1] : 0;  /* the plane, yb */
        return (plane ? 2 * (plane + depthwise_accw(&c.g) - c.g.out[c.g.nsp - 1]) : 0) * 4 +
               out * 4;
    }
    GemmPlan p;
    gemm_plan(&c, &p);
    int64_t floats = p.pad_floats + p.buf_floats + p.bn_floats + p.mean_floats;
    /* or conv_emit_positions' (it depends on the weights, which emit sees) */
    Classes cl;
    int64_t pos = positions_shape(&c, &cl) ? position_images(&c.g, &cl) * c.g.MG *
                  (cl.maxpix + numel_dims(c.g.nsp, c.g.out)) + p.bn_floats : 0;
    return (floats > pos ? floats : pos) * 4;
}

static void conv_emit(Emit *e, Node *n)
{
    ConvK c;
    conv_setup(n, &c);
    if (!numel(c.Y))
        return;
    Geom *g = &c.g;
    if (depthwise(&c)) {
        conv_emit_depthwise(e, &c);
        return;
    }
    Classes cl;
    if (positions_pay(e, &c, &cl)) {
        conv_emit_positions(e, &c, &cl);
        return;
    }
    if (gemm_eligible(&c)) {
        conv_emit_gemm(e, &c);
        return;
    }
    if (n->aux)
        node_die(n, "internal: a fused activation needs the matrix-product path");
    int64_t taps = g->CG * numel_dims(g->nsp, g->k);
    c.packed = c.W->data && taps > 0 && (!c.zw || c.zw->data);
    const char *wref, *tw;
    int64_t panel_size = 0;
    if (c.packed) {
        wref = emit_conv_weights(e, &c, &panel_size);
        tw = dtype_ctype(c.ct);
    } else {
        wref = ref(e, c.W);
        tw = dtype_ctype(c.W->dt);
    }
    int64_t in3[NSP], out3[NSP];
    pad3(g, g->in, in3, 1);
    pad3(g, g->out, out3, 1);
    int64_t isp = prod3(in3), osp = prod3(out3);
    int64_t full = g->MG / PANEL, rem = g->MG % PANEL;
    /* Per group: the packed weights of a group, or W's rows of the group's channels. */
    int64_t wgroup = c.packed ? taps * (full * PANEL + (rem ? pow2ceil(rem) : 0)) : g->MG * taps;
    Buf calls = {0};
    const char *decls = "";
    for (int part = 0; part < 2; part++) {
        int64_t npan = part ? (rem ? 1 : 0) : full;
        if (!npan)
            continue;
        int64_t lanes = part ? (c.packed ? pow2ceil(rem) : rem) : PANEL, ls = part ? rem : PANEL;
        const char *p0 = part ? lit(full * PANEL) : npan > 1 ? "p * 8" : "0";
        /* channel offset inside the group */
        const char *woff = c.packed ? (part ? lit(full * panel_size) : npan > 1 ? strf("p * %s", lit(panel_size)) : "0")
                                    : (part ? lit(full * PANEL * taps) : npan > 1 ? strf("p * %s", lit(PANEL * taps)) : "0");
        Buf a = {0};
        buf_printf(&a, "x + (n * %s + g * %s) * %s, w + g * %s + %s, ", lit(g->C), lit(g->CG),
                   lit(isp), lit(wgroup), woff);
        if (c.B)
            buf_printf(&a, "bias + g * %s + %s, ", lit(g->MG), p0);
        if (c.zx)
            buf_puts(&a, "zx, ");
        if (c.zw && !c.packed)
            buf_printf(&a, numel(c.zw) > 1 ? "zw + g * %s + %s, " : "zw, ", lit(g->MG), p0);
        buf_printf(&a, "y + (n * %s + g * %s + %s) * %s", lit(g->M), lit(g->MG), p0, lit(osp));
        const char *args = drop_zeros(a.p);
        /* Output columns: blocks of four, then the rest one at a time. */
        int64_t ow = out3[2], ow4 = ow / 4 * 4;
        for (int blk = 1; blk >= 0; blk--) {
            int64_t lo = blk ? 0 : ow4, hi = blk ? ow4 : ow;
            if (lo == hi)
                continue;
            const char *fn = emit_conv_panel(e, &c, lanes, ls, tw, blk, lo, hi);
            if (npan > 1)
                buf_printf(&calls, "            for (p = 0; p < %s; p++)\n                %s(%s);\n",
                           lit(npan), fn, args);
            else
                buf_printf(&calls, "            %s(%s);\n", fn, args);
        }
        if (npan > 1)
            decls = ", p";
    }
    const char *fn = kernel(e, n, "conv_main",
                            "DOC", strf("%s: %s -> %s, group %lld", n->op, shape_str(c.X),
                                        shape_str(c.Y), (long long)g->G),
                            "PARAMS", conv_params(&c, tw), "DECLS", decls,
                            "FOR_N", loop_head("", "n", g->N, 1),
                            "FOR_G", loop_head("", "g", g->G, 1), "CALLS", calls.p, NULL);
    Buf args = {0};
    buf_printf(&args, "%s, %s, ", ref(e, c.X), wref);
    if (c.B)
        buf_printf(&args, "%s, ", ref(e, c.B));
    if (c.zx)
        buf_printf(&args, "%s, ", ref(e, c.zx));
    if (c.zw && !c.packed)
        buf_printf(&args, "%s, ", ref(e, c.zw));
    stmt(e, "%s(%s%s);", fn, args.p, ref(e, c.Y));
}

static double conv_flops(Node *n)
{
    Geom g;
    conv_geom(n, &g);
    return 2.0 * g.N * g.M * numel_dims(g.nsp, g.out) * g.CG * numel_dims(g.nsp, g.k);
}

/* ---- ConvTranspose ---- */

static void convt_emit(Emit *e, Node *n)
{
    Geom g;
    convt_geom(n, &g);
    Value *x = n->in[0], *w = n->in[1], *b = input(n, 2), *y = n->out[0];
    if (!numel(y))
        return;
    DType ct = calc_type(x->dt);
    int64_t in3[NSP], k3[NSP];
    pad3(&g, g.in, in3, 1);
    pad3(&g, g.k, k3, 1);
    /* channel of x: n * C + g * CG + c; of w: (g * CG + c) * MG + m */
    const char *xe = strf("x[(((n * %s + g * %s + c) * %s + id) * %s + ih) * %s + iw]", lit(g.C),
              lit(g.CG), lit(in3[0]), lit(in3[1]), lit(in3[2]));
    const char *we = strf("w[((((g * %s + c) * %s + m) * %s + kd) * %s + kh) * %s + kw]",
                          lit(g.CG), lit(g.MG), lit(k3[0]), lit(k3[1]), lit(k3[2]));
    Buf params = {0};
    buf_printf(&params, "const %s *restrict x, const %s *restrict w, ", dtype_ctype(x->dt),
               dtype_ctype(w->dt));
    if (b)
        buf_printf(&params, "const %s *restrict bias, ", dtype_ctype(b->dt));
    buf_printf(&params, "%s *restrict y", dtype_ctype(y->dt));
    const char *sum = "s";
    if (b)
        sum = strf("s + %s", load_as(b->dt, ct, strf("bias[g * %s + m]", lit(g.MG))));
    const char *kv[CONV_KV];
    int k = 0;
#define KV(a, v) (kv[k++] = (a), kv[k++] = (v))
    KV("DOC", strf("ConvTranspose: %s -> %s, group %lld; %s", shape_str(x), shape_str(y),
                   (long long)g.G, geom_doc(&g)));
    KV("PARAMS", params.p);
    KV("CT", dtype_ctype(ct));
    KV("FOR_N", loop_head("", "n", g.N, 1));
    KV("G", lit(g.G));
    KV("FOR_G", loop_head("", "g", g.G, 1));
    KV("MG", lit(g.MG));
    KV("FOR_M", loop_head("", "m", g.MG, 1));
    KV("CG", lit(g.CG));
    KV("FOR_C", loop_head("", "c", g.CG, 1));
    KV("MAC", fused(ct, load_as(x->dt, ct, xe), load_as(w->dt, ct, we), "s"));
    KV("STORE", store_as(y->dt, ct, sum));
#undef KV
    geom_kv(&g, kv, &k);
    kv[k] = NULL;
    const char *fn = kernelv(e, n, "conv_transpose", kv);
    if (b)
        stmt(e, "%s(%s, %s, %s, %s);", fn, ref(e, x), ref(e, w), ref(e, b), ref(e, y));
    else
        stmt(e, "%s(%s, %s, %s);", fn, ref(e, x), ref(e, w), ref(e, y));
}

static double convt_flops(Node *n)
{
    Geom g;
    convt_geom(n, &g);
    return 2.0 * g.N * g.C * numel_dims(g.nsp, g.in) * g.MG * numel_dims(g.nsp, g.k);
}

const OpDef ops_conv[] = {
    {"Conv", conv_infer, NULL, conv_emit, conv_flops, 0},
    {"ConvInteger", conv_infer, NULL, conv_emit, conv_flops, 0},
    {"ConvTranspose", convt_infer, NULL, convt_emit, convt_flops, 0},
    {0},
};
