/* op_resize.c - spatial resampling: Resize (opsets 10, 11, 13), the deprecated Upsample
 * (opsets 7, 9) and GridSample (opset 16).
 *
 * Resize follows the ONNX reference implementation: per axis, an output index o maps to a
 * source coordinate x (coordinate_transformation_mode), the taps around x get nearest,
 * linear or cubic weights, indices are clamped to the input (edge padding), and an
 * N-dimensional result is the nested weighted sum over the resized axes. The scales, sizes
 * and roi inputs are usually constants but may be run-time inputs: then the output shape
 * is the declared one (use_declared), a run-time check verifies the input agrees with it,
 * and the tap tables are computed at run time from the input (they always are; it costs
 * O(sum of output sizes)). Axes that provably map onto themselves (same size, scale 1) are
 * read straight through.
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

enum { NEAREST, LINEAR, CUBIC };

typedef struct Rz {
    int mode, taps;                 /* taps per axis: 1, 2, 4 */
    const char *coord;              /* coordinate_transformation_mode */
    const char *nearest;            /* nearest_mode, or "simple" (opset < 11) */
    double a, extrap;
    int exclude;
    Value *roi, *scales, *sizes;    /* present and non-empty, else NULL */
    int const_scales;               /* scales known at compile time: cs[] */
    double cs[MLBC_MAX_RANK];
} Rz;

static const DType resize_types[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_INT8,
                                     DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32,
                                     DT_INT64, DT_UINT64, DT_BOOL, DT_UNDEF};

static Value *nonempty(Node *n, int i)
{
    Value *v = input(n, i);
    return v && numel(v) > 0 ? v : NULL;
}

static int rz_mode(Node *n, int is_up)
{
    const char *mode = attr_str(n, "mode", "nearest");
    if (!strcmp(mode, "nearest"))
        return NEAREST;
    if (!strcmp(mode, "linear") || (is_up && !strcmp(mode, "bilinear")))
        return LINEAR;
    if (!strcmp(mode, "cubic") && !is_up && n->opset >= 11)
        return CUBIC;
    node_die(n, "mode '%s' is not supported", mode);
}

/* Upsample-7: the scales are an attribute. */
static void rz_scales_attr(Node *n, Rz *z)
{
    float s[MLBC_MAX_RANK];
    int k = attr_floats(n, "scales", s, MLBC_MAX_RANK);
    if (k < 0)
        node_die(n, "attribute 'scales' is required");
    if (k != n->in[0]->rank)
        node_die(n, "'scales' has %d values for an input of rank %d", k, n->in[0]->rank);
    z->const_scales = 1;
    for (int i = 0; i < k; i++)
        z->cs[i] = s[i];
}

/* Upsample and Resize-10: asymmetric coordinates, nearest rounds down when upsampling and up
 * when downsampling (as ONNX Runtime does). */
static void rz_parse_10(Node *n, Rz *z, int is_up)
{
    z->coord = "asymmetric";
    z->nearest = "simple";
    if (is_up && n->opset < 9) {
        rz_scales_attr(n, z);
        return;
    }
    if (n->nin != 2 || !n->in[1])
        node_die(n, "takes inputs X and scales");
    z->scales = n->in[1];
}

static int one_of(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}

/* Resize-11 and later: the attributes, and the inputs roi, scales and sizes. */
static void rz_parse_11(Node *n, Rz *z)
{
    static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                          "asymmetric", "tf_half_pixel_for_nn",
                                          "tf_crop_and_resize", NULL};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                      "ceil", NULL};
    z->coord = attr_str(n, "coordinate_transformation_mode", "half_pixel");
    z->nearest = attr_str(n, "nearest_mode", "round_prefer_floor");
    z->a = attr_float(n, "cubic_coeff_a", -0.75);
    z->exclude = (int)attr_int(n, "exclude_outside", 0);
    z->extrap = attr_float(n, "extrapolation_value", 0.0);
    if (!one_of(z->coord, coords))
        node_die(n, "coordinate_transformation_mode '%s' is not supported", z->coord);
    if (!one_of(z->nearest, nms))
        node_die(n, "nearest_mode '%s' is not supported", z->nearest);
    if (n->nin < 2 || n->nin > 4)
        node_die(n, "takes 2 to 4 inputs, got %d", n->nin);
    z->roi = nonempty(n, 1);
    z->scales = nonempty(n, 2);
    z->sizes = nonempty(n, 3);
    if (z->scales && z->sizes)
        node_die(n, "only one of 'scales' and 'sizes' may be given");
    if (!z->scales && !z->sizes)
        node_die(n, "one of 'scales' and 'sizes' is required");
    if (!strcmp(z->coord, "tf_crop_and_resize") && !z->roi)
        node_die(n, "tf_crop_and_resize needs the roi input");
}

/* The types and sizes of the scales, sizes and roi inputs; constant scales kept in z->cs. */
static void rz_check_inputs(Node *n, Rz *z)
{
    int r = n->in[0]->rank;
    if (z->scales) {
        static const DType ft[] = {DT_FLOAT, DT_UNDEF};
        need_type(n, z->scales, ft);
        if (numel(z->scales) != r)
            node_die(n, "scales '%s' has %lld values for an input of rank %d", z->scales->name,
                     (long long)numel(z->scales), r);
        if (z->scales->data) {
            z->const_scales = 1;
            for (int i = 0; i < r; i++)
                z->cs[i] = value_get_f(z->scales, i);
        }
    }
    if (z->sizes) {
        static const DType it[] = {DT_INT64, DT_UNDEF};
        need_type(n, z->sizes, it);
        if (numel(z->sizes) != r)
            node_die(n, "sizes '%s' has %lld values for an input of rank %d", z->sizes->name,
                     (long long)numel(z->sizes), r);
    }
    if (z->roi && !strcmp(z->coord, "tf_crop_and_resize")) {
        static const DType rt[] = {DT_FLOAT, DT_DOUBLE, DT_UNDEF};
        need_type(n, z->roi, rt);
        if (numel(z->roi) != 2 * r)
            node_die(n, "roi '%s' has %lld values; rank %d needs %d", z->roi->name,
                     (long long)numel(z->roi), r, 2 * r);
    }
}

static void rz_parse(Node *n, Rz *z)
{
    memset(z, 0, sizeof *z);
    int is_up = !strcmp(n->op, "Upsample");
    z->mode = rz_mode(n, is_up);
    z->taps = z->mode == NEAREST ? 1 : z->mode == LINEAR ? 2 : 4;
    z->a = -0.75;
    if (is_up || n->opset < 11)
        rz_parse_10(n, z, is_up);
    else
        rz_parse_11(n, z);
    rz_check_inputs(n, z);
}

static void resize_infer(Node *n)
{
    if (n->nin < 1 || !n->in[0])
        node_die(n, "input X is required");
    Value *x = n->in[0];
    need_type(n, x, resize_types);
    Rz z;
    rz_parse(n, &z);
    if (z.mode != NEAREST && (x->dt == DT_BOOL))
        node_die(n, "bool input needs mode nearest");
    int r = x->rank;
    int64_t dim[MLBC_MAX_RANK];
    if (z.sizes && z.sizes->data) {
        for (int i = 0; i < r; i++)
            dim[i] = value_get_i(z.sizes, i);
    } else if (z.const_scales) {
        for (int i = 0; i < r; i++) {
            double d = z.cs[i] * (double)x->dim[i];
            if (!(d >= 0) || d > 9e15)
                node_die(n, "scale %g is not valid for axis %d", z.cs[i], i);
            dim[i] = (int64_t)d;
        }
    } else {
        if (!use_declared(n, 0, x->dt))
            node_die(n, "the %s input '%s' is not constant and the output has no declared "
                     "static shape", z.sizes ? "sizes" : "scales",
                     z.sizes ? z.sizes->name : z.scales->name);
        if (n->out[0]->rank != r)
            node_die(n, "declared output rank %d differs from the input's %d", n->out[0]->rank,
                     r);
        return;
    }
    set_output(n, 0, x->dt, r, dim);
}

/* The axis maps onto itself: same size and the scale is exactly 1 at compile time. */
static int passive_axis(Node *n, const Rz *z, int a)
{
    Value *x = n->in[0], *y = n->out[0];
    int r = x->rank;
    if (x->dim[a] != y->dim[a])
        return 0;
    if (!z->sizes && !(z->const_scales && z->cs[a] == 1.0))
        return 0;
    if (!strcmp(z->coord, "tf_crop_and_resize"))
        return z->roi->data && value_get_f(z->roi, a) == 0.0 &&
               value_get_f(z->roi, r + a) == 1.0;
    return 1;
}

/* Source coordinate of output index o (double) from scale, den (the resized length minus 1,
 * as "scale * length - 1": 0 for a resized length of 1), roi0, roi1. */
static const char *coord_expr(const Rz *z, int64_t in)
{
    const char *c = z->coord;
    if (!strcmp(c, "half_pixel"))
        return "((double)o + 0.5) / scale - 0.5";
    if (!strcmp(c, "pytorch_half_pixel"))
        return "den == 0 ? -0.5 : ((double)o + 0.5) / scale - 0.5";
    if (!strcmp(c, "align_corners"))
        return strf("den == 0 ? 0.0 : (double)o * %s / den", lit(in - 1));
    if (!strcmp(c, "asymmetric"))
        return "(double)o / scale";
    if (!strcmp(c, "tf_half_pixel_for_nn"))
        return "((double)o + 0.5) / scale";
    /* tf_crop_and_resize: roi0 * (in - 1) + the offset, contraction-proof */
    const char *I1 = float_lit((double)(in - 1), DT_DOUBLE);
    return strf("mlbc_madd(roi0, %s, den == 0 ? (roi1 - roi0) * %s / 2 : (double)o * (roi1 - "
                "roi0) * %s / den)", I1, I1, I1);
}

/* Body of the tap loop (after x and f = floor(x)). */
static const char *taps_body(const Rz *z, int64_t in, const char *wt)
{
    Buf b = {0};
    const char *ind = "        ";
    const char *hi = lit(in - 1);
    int tf = !strcmp(z->coord, "tf_crop_and_resize");
    if (z->mode == NEAREST) {
        const char *nm = z->nearest, *pick;
        if (!strcmp(nm, "round_prefer_floor"))
            pick = "x - f <= 0.5 ? f : f + 1";
        else if (!strcmp(nm, "round_prefer_ceil"))
            pick = "x - f < 0.5 ? f : f + 1";
        else if (!strcmp(nm, "floor"))
            pick = "f";
        else if (!strcmp(nm, "ceil"))
            pick = "f + 1";
        else
            pick = "scale < 1 ? f + 1 : f"; /* simple: ceil when downsampling */
        if (strcmp(pick, "f"))
            buf_printf(&b, "%sif (x != f)\n%s    f = %s;\n", ind, ind, pick);
        buf_printf(&b, "%sidx[o] = !(f >= 0) ? 0 : f > %s ? %s : (long)f;\n", ind, hi, hi);
    } else {
        int T = z->taps;
        buf_printf(&b, "%sdouble r, c[%d];\n%slong b, t;\n", ind, T, ind);
        /* An integral x takes the right-hand tap (weight 1), as the reference does. */
        buf_printf(&b, "%sif (x == f)\n%s    f -= 1;\n", ind, ind);
        buf_printf(&b, "%sr = x - f;\n", ind);
        buf_printf(&b, "%sb = !(f >= -8) ? -8 : f > %s ? %s : (long)f;\n", ind, lit(in + 8),
                   lit(in + 8));
        if (z->mode == LINEAR) {
            buf_printf(&b, "%sc[0] = 1 - r;\n%sc[1] = r;\n", ind, ind);
        } else {
            /* Keys' cubic convolution weights, as fused multiply-adds (contraction-proof):
             * |d| in [1, 2]: ((A d - 5A) d + 8A) d - 4A; |d| < 1: ((A + 2) d - (A + 3)) d d + 1 */
            double a = z->a;
            const char *A = float_lit(a, DT_DOUBLE), *A5 = float_lit(-5 * a, DT_DOUBLE);
            const char *A8 = float_lit(8 * a, DT_DOUBLE), *A4 = float_lit(-4 * a, DT_DOUBLE);
            const char *A2 = float_lit(a + 2, DT_DOUBLE), *A3 = float_lit(-(a + 3), DT_DOUBLE);
            static const char *far[2] = {"r + 1", "2 - r"}, *near[2] = {"r", "1 - r"};
            buf_printf(&b, "%sb -= 1;\n", ind);
            for (int k = 0; k < 4; k++) {
                const char *d = k == 0 ? far[0] : k == 3 ? far[1] : near[k - 1];
                if (k == 0 || k == 3)
                    buf_printf(&b, "%s{\n%s    const double d = %s;\n%s    c[%d] = "
                               "mlbc_madd(mlbc_madd(mlbc_madd(%s, d, %s), d, %s), d, %s);\n%s}\n",
                               ind, ind, d, ind, k, A, A5, A8, A4, ind);
                else
                    buf_printf(&b, "%s{\n%s    const double d = %s;\n%s    c[%d] = "
                               "mlbc_madd(mlbc_madd(%s, d, %s) * d, d, 1.0);\n%s}\n",
                               ind, ind, d, ind, k, A2, A3, ind);
            }
        }
        if (z->exclude) {
            buf_printf(&b, "%s{\n%s    double s = 0;\n", ind, ind);
            buf_printf(&b, "%s    for (t = 0; t < %d; t++) {\n", ind, T);
            buf_printf(&b, "%s        if (b + t < 0 || b + t > %s)\n%s            c[t] = 0;\n",
                       ind, hi, ind);
            buf_printf(&b, "%s        s += c[t];\n%s    }\n", ind, ind);
            buf_printf(&b, "%s    for (t = 0; t < %d; t++)\n%s        c[t] /= s;\n%s}\n", ind, T,
                       ind, ind);
        }
        buf_printf(&b, "%sfor (t = 0; t < %d; t++) {\n", ind, T);
        buf_printf(&b, "%s    idx[o * %d + t] = b + t < 0 ? 0 : b + t > %s ? %s : b + t;\n", ind,
                   T, hi, hi);
        buf_printf(&b, "%s    w[o * %d + t] = (%s)c[t];\n%s}\n", ind, T, wt, ind);
    }
    if (tf)
        buf_printf(&b, "%sext[o] = !(x >= 0 && x <= %s);\n", ind, hi);
    return b.p;
}

/* S (of the computation type) as an element of type t. Kept apart from store_as: integers
 * round to nearest even and saturate, as Resize specifies. */
static const char *store_expr(DType t, const char *s)
{
    if (dtype_is_floatish(t))
        return store_as(t, calc_type(t), s);
    const char *lo = NULL, *hi = NULL;
    switch (t) {
    case DT_INT8: lo = "-128.0f"; hi = "127.0f"; break;
    case DT_UINT8: lo = "0.0f"; hi = "255.0f"; break;
    case DT_INT16: lo = "-32768.0f"; hi = "32767.0f"; break;
    case DT_UINT16: lo = "0.0f"; hi = "65535.0f"; break;
    case DT_INT32: lo = "-2147483648.0f"; hi = "2147483520.0f"; break;
    case DT_UINT32: lo = "0.0f"; hi = "4294967040.0f"; break;
    case DT_UINT64: lo = "0.0f"; hi = "18446742974197923840.0f"; break;
    default: lo = "-9223371487098961920.0f"; hi = "9223371487098961920.0f"; break;
    }
    return strf("(%s)(!(%s > %s) ? %s : %s > %s ? %s : nearbyintf(%s))", dtype_ctype(t), s, lo,
                lo, s, hi, hi, s);
}

/* What the Resize emitters share. */
typedef struct RzGen {
    Rz z;
    Value *x, *y;
    int r, T, tf;                   /* rank, taps per axis, tf_crop_and_resize */
    int rt_scales, rt_roi;          /* scales, roi read at run time */
    DType ct;                       /* type of the tap weights and sums */
    const char *CT, *XT;
    int act[MLBC_MAX_RANK], nact;   /* the resized axes */
    int resized[MLBC_MAX_RANK];     /* axis a is one of them */
    int64_t xs[MLBC_MAX_RANK], ys[MLBC_MAX_RANK];
} RzGen;

static const char *mode_name(const Rz *z)
{
    return z->mode == NEAREST ? "nearest" : z->mode == LINEAR ? "linear" : "cubic";
}

/* The coordinate mode, and nearest_mode in nearest mode, for kernel comments. */
static const char *rz_how(const Rz *z)
{
    return z->mode == NEAREST ? strf("%s, %s", c_comment(z->coord), c_comment(z->nearest))
                              : c_comment(z->coord);
}

/* A non-constant scales or sizes input must give the declared static output shape. */
static void resize_check_input(Emit *e, Node *n, const RzGen *g)
{
    const Rz *z = &g->z;
    Value *sv = z->sizes ? z->sizes : z->scales, *x = g->x, *y = g->y;
    if (!sv || sv->data)
        return;
    Buf c = {0};
    for (int i = 0; i < g->r; i++) {
        if (i)
            buf_puts(&c, " &&\n           ");
        if (z->sizes)
            buf_printf(&c, "s[%d] == %s", i, lit(y->dim[i]));
        else
            buf_printf(&c, "(double)s[%d] * %s >= %s && (double)s[%d] * %s < %s", i,
                       lit(x->dim[i]), float_lit((double)y->dim[i], DT_DOUBLE), i,
                       lit(x->dim[i]), float_lit((double)y->dim[i] + 1, DT_DOUBLE));
    }
    const char *fn = kernel(e, n, "resize_check", "DOC",
                            strf("%s: '%s' must give the output shape %s", n->op,
                                 c_comment(sv->name), shape_str(y)),
                            "T", dtype_ctype(sv->dt), "COND", g->r ? c.p : "1", NULL);
    check(e, strf("%s(%s)", fn, ref(e, sv)),
          strf("%s: the %s input disagrees with the declared output shape", n->op,
               z->sizes ? "sizes" : "scales"));
}

/* The scale of axis a and den, the resized length minus 1, "scale * in - 1" (0 when the
 * length is 1), as arguments of its tap kernel. A constant scale gives a literal; a run-time
 * scale is a float, whose product with the length is exact in double, so the fused
 * multiply-add rounds as the plain expression does. */
static void axis_scale(const RzGen *g, int a, const char **scale, const char **den)
{
    const Rz *z = &g->z;
    int64_t in = g->x->dim[a], out = g->y->dim[a];
    const char *IN = float_lit((double)in, DT_DOUBLE);
    if (z->sizes)
        *scale = strf("%s / %s", float_lit((double)out, DT_DOUBLE), IN);
    else
        *scale = g->rt_scales ? strf("(double)scales[%d]", a) : float_lit(z->cs[a], DT_DOUBLE);
    if (g->rt_scales) {
        *den = strf("mlbc_madd((double)scales[%d], %s, -1.0)", a, IN);
    } else {
        double s = z->sizes ? (double)out / (double)in : z->cs[a];
        volatile double len = s * (double)in;  /* rounded before the subtraction */
        *den = float_lit(len - 1, DT_DOUBLE);
    }
}

/* roi0, roi1 of axis a as arguments of its tap kernel (only tf_crop_and_resize reads them). */
static void axis_roi(const RzGen *g, int a, const char **r0, const char **r1)
{
    *r0 = "0.0";
    *r1 = "1.0";
    if (g->tf && g->rt_roi) {
        *r0 = strf("(double)roi[%d]", a);
        *r1 = strf("(double)roi[%d]", g->r + a);
    } else if (g->tf) {
        *r0 = float_lit(value_get_f(g->z.roi, a), DT_DOUBLE);
        *r1 = float_lit(value_get_f(g->z.roi, g->r + a), DT_DOUBLE);
    }
}

/* The tap table of resized axis a: its kernel (template resize_taps), its arrays i<a>, w<a>,
 * e<a> declared in DECLS and the call filling them in TAPS. */
static void axis_taps(Emit *e, Node *n, const RzGen *g, int a, Buf *decls, Buf *taps)
{
    int64_t in = g->x->dim[a], out = g->y->dim[a];
    int T = g->T;
    Buf tp = {0};
    if (T > 1)
        buf_printf(&tp, ", %s *restrict w", g->CT);
    if (g->tf)
        buf_puts(&tp, ", unsigned char *restrict ext");
    const char *tfn = kernel(e, n, "resize_taps",
        "DOC", strf("%s taps (%s, %s): %lld -> %lld", n->op, mode_name(&g->z), rz_how(&g->z),
                    (long long)in, (long long)out),
        "PARAMS", tp.p ? tp.p : "", "FOR_O", loop_head("", "o", out, 1),
        "COORD", coord_expr(&g->z, in),
        "BODY", taps_body(&g->z, in, g->CT), NULL);
    buf_printf(decls, "    long i%d[%s];\n", a, lit(out * T));
    if (T > 1)
        buf_printf(decls, "    %s w%d[%s];\n", g->CT, a, lit(out * T));
    if (g->tf)
        buf_printf(decls, "    unsigned char e%d[%s];\n", a, lit(out));
    const char *scale, *den, *r0, *r1;
    axis_scale(g, a, &scale, &den);
    axis_roi(g, a, &r0, &r1);
    buf_printf(taps, "    %s(%s, %s, %s, %s, i%d%s%s);\n", tfn, scale, den, r0, r1, a,
               T > 1 ? strf(", w%d", a) : "", g->tf ? strf(", e%d", a) : "");
}

/* Each output element copies the element its taps select (nearest, or no resized axis);
 * BASE is the offset of the axes read straight through, or NULL. */
static void rz_gather(Buf *loops, const RzGen *g, const char *ind, const char *iy,
                      const char *base)
{
    Buf ix = {0};
    if (base)
        buf_puts(&ix, base);
    for (int k = 0; k < g->nact; k++)
        buf_printf(&ix, "%si%d[o%d] * %s", ix.len ? " + " : "", g->act[k], g->act[k],
                   lit(g->xs[g->act[k]]));
    buf_printf(loops, "%sy[%s] = x[%s];\n", ind, iy, ix.len ? ix.p : "0");
}

/* Each output element is the nested sum over the taps, one accumulator s<a> per resized axis
 * from the first (outermost): the innermost adds weighted elements, each outer one adds its
 * inner sum weighted, all explicit fused multiply-adds (contraction-proof). */
static void rz_sums(Buf *loops, const RzGen *g, const char *ind, const char *iy,
                    const char *base)
{
    const int *act = g->act;
    int T = g->T;
    buf_printf(loops, "%sconst %s *p = x + %s;\n", ind, g->XT, base ? base : "0");
    const char *in2 = ind;
    for (int k = 0; k < g->nact; k++) {
        int a = act[k];
        const char *prev = k ? strf("p%d", act[k - 1]) : "p";
        const char *in3 = strf("%s    ", in2), *tap = strf("o%d * %d + t%d", a, T, a);
        const char *at = strf("i%d[%s] * %s", a, tap, lit(g->xs[a]));
        buf_printf(loops, "%s%s s%d = 0;\n", in2, g->CT, a);
        buf_printf(loops, "%sfor (int t%d = 0; t%d < %d; t%d++) {\n", in2, a, a, T, a);
        if (k + 1 < g->nact) {
            buf_printf(loops, "%sconst %s *p%d = %s + %s;\n", in3, g->XT, a, prev, at);
        } else {
            const char *xv = load_as(g->x->dt, g->ct, strf("%s[%s]", prev, at));
            buf_printf(loops, "%ss%d = %s;\n", in3, a,
                       fused(g->ct, strf("w%d[%s]", a, tap), xv, strf("s%d", a)));
        }
        in2 = in3;
    }
    for (int k = g->nact - 1; k >= 0; k--) {
        int a = act[k], u = k ? act[k - 1] : 0;
        in2 = strf("%.*s", (int)strlen(in2) - 4, in2);
        buf_printf(loops, "%s}\n", in2);
        if (k > 0)
            buf_printf(loops, "%ss%d = %s;\n", in2, u,
                       fused(g->ct, strf("w%d[o%d * %d + t%d]", u, u, T, u), strf("s%d", a),
                             strf("s%d", u)));
    }
    buf_printf(loops, "%sy[%s] = %s;\n", ind, iy, store_expr(g->x->dt, strf("s%d", act[0])));
}

/* The loop nest over the output. */
static const char *resize_loops(const RzGen *g)
{
    Buf loops = {0}, iy = {0}, base = {0};
    const char *ind = "    ";
    for (int a = 0; a < g->r; a++) {
        buf_printf(&loops, "%s%s%s\n", ind, loop_head("long ", strf("o%d", a), g->y->dim[a], 1),
                   a + 1 == g->r ? " {" : "");
        ind = strf("%s    ", ind);
        if (g->y->dim[a] > 1)
            buf_printf(&iy, "%so%d * %s", iy.len ? " + " : "", a, lit(g->ys[a]));
        if (!g->resized[a] && g->x->dim[a] > 1)
            buf_printf(&base, "%so%d * %s", base.len ? " + " : "", a, lit(g->xs[a]));
    }
    const char *ind0 = strf("%.*s", (int)strlen(ind) - 4, ind), *IY = iy.len ? iy.p : "0";
    if (!g->r)
        buf_printf(&loops, "%s{\n", ind0);
    if (g->tf && g->nact) {
        /* Points tf_crop_and_resize extrapolates on any axis take extrapolation_value. */
        Buf c = {0};
        for (int k = 0; k < g->nact; k++)
            buf_printf(&c, "%se%d[o%d]", k ? " || " : "", g->act[k], g->act[k]);
        const char *v = strf("(%s)%s", g->CT, float_lit(g->z.extrap, DT_DOUBLE));
        buf_printf(&loops, "%sif (%s) {\n%s    y[%s] = %s;\n%s    continue;\n%s}\n", ind, c.p,
                   ind, IY, store_expr(g->x->dt, v), ind, ind);
    }
    if (g->T == 1 || g->nact == 0)
        rz_gather(&loops, g, ind, IY, base.len ? base.p : NULL);
    else
        rz_sums(&loops, g, ind, IY, base.len ? base.p : NULL);
    buf_printf(&loops, "%s}\n", ind0);
    return loops.p;
}

static void resize_emit(Emit *e, Node *n)
{
    RzGen g = {.x = n->in[0], .y = n->out[0], .r = n->in[0]->rank};
    Value *x = g.x, *y = g.y;
    Rz *z = &g.z;
    rz_parse(n, z);
    g.T = z->taps;
    g.tf = !strcmp(z->coord, "tf_crop_and_resize");
    g.ct = x->dt == DT_DOUBLE ? DT_DOUBLE : DT_FLOAT;
    g.CT = dtype_ctype(g.ct);
    g.XT = dtype_ctype(x->dt);
    g.rt_scales = z->scales && !z->scales->data;
    g.rt_roi = g.tf && !z->roi->data;
    dense_strides(g.r, x->dim, g.xs);
    dense_strides(g.r, y->dim, g.ys);
    for (int a = 0; a < g.r; a++)
        if ((g.resized[a] = !passive_axis(n, z, a)))
            g.act[g.nact++] = a;
    resize_check_input(e, n, &g);

    Buf decls = {0}, taps = {0};
    for (int k = 0; k < g.nact; k++)
        axis_taps(e, n, &g, g.act[k], &decls, &taps);
    const char *scales = g.rt_scales ? "const float *restrict scales, " : "";
    const char *roi = g.rt_roi ? strf("const %s *restrict roi, ", dtype_ctype(z->roi->dt)) : "";
    const char *fn = kernel(e, n, "resize",
        "DOC", strf("%s %s (%s): %s%s -> %s", n->op, mode_name(z), rz_how(z),
                    dtype_name(x->dt), shape_str(x), shape_str(y)),
        "T", g.XT, "SCALES", scales, "ROI", roi, "DECLS", decls.p ? decls.p : "",
        "TAPS", taps.p ? taps.p : "", "LOOPS", resize_loops(&g), NULL);
    /* One by one: ref() emits a constant's weights, in the order it is called. */
    Buf call = {0};
    buf_printf(&call, "%s(%s, ", fn, ref(e, x));
    if (g.rt_scales)
        buf_printf(&call, "%s, ", ref(e, z->scales));
    if (g.rt_roi)
        buf_printf(&call, "%s, ", ref(e, z->roi));
    stmt(e, "%s%s);", call.p, ref(e, y));
}

static double resize_flops(Node *n)
{
    Rz z;
    rz_parse(n, &z);
    double t = 1;
    for (int a = 0; a < n->in[0]->rank; a++)
        if (!passive_axis(n, &z, a))
            t *= z.taps;
    return (double)numel(n->out[0]) * t;
}

/* ---- GridSample ---- */

static void grid_attrs(Node *n, int *mode, int *pad)
{
    const char *m = attr_str(n, "mode", "bilinear"), *p = attr_str(n, "padding_mode", "zeros");
    *mode = !strcmp(m, "nearest") ? 0 : !strcmp(m, "bilinear") ? 1 : !strcmp(m, "bicubic") ? 2 : -1;
    *pad = !strcmp(p, "zeros") ? 0 : !strcmp(p, "border") ? 1 : !strcmp(p, "reflection") ? 2 : -1;
    if (*mode < 0)
        node_die(n, "mode '%s' is not supported", m);
    if (*pad < 0)
        node_die(n, "padding_mode '%s' is not supported", p);
}

static void grid_infer(Node *n)
{
    if (n->nin != 2 || !n->in[0] || !n->in[1])
        node_die(n, "takes inputs X and grid");
    Value *x = n->in[0], *g = n->in[1];
    static const DType ft[] = {DT_FLOAT, DT_DOUBLE, DT_UNDEF};
    need_type(n, x, ft);
    need_same_type(n, x, g);
    int mode, pad;
    grid_attrs(n, &mode, &pad);
    if (x->rank != 4)
        node_die(n, "X '%s' must be [N, C, H, W], not %s", x->name, shape_str(x));
    if (g->rank != 4 || g->dim[0] != x->dim[0] || g->dim[3] != 2)
        node_die(n, "grid '%s' must be [N, H_out, W_out, 2] with N = %lld, not %s", g->name,
                 (long long)x->dim[0], shape_str(g));
    int64_t d[4] = {x->dim[0], x->dim[1], g->dim[1], g->dim[2]};
    set_output(n, 0, x->dt, 4, d);
}

static void grid_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *g = n->in[1], *y = n->out[0];
    int mode, pad;
    grid_attrs(n, &mode, &pad);
    int align = attr_int(n, "align_corners", 0) != 0;
    const char *fn = kernel(e, n, "resize_grid",
        "DOC", strf("GridSample %s, padding %s%s: %s%s by grid %s",
                    c_comment(attr_str(n, "mode", "bilinear")),
                    c_comment(attr_str(n, "padding_mode", "zeros")), align ? ", align_corners" : "",
                    dtype_name(x->dt), shape_str(x), shape_str(g)),
        "T", dtype_ctype(x->dt), "MODE", strf("%d", mode), "PAD", strf("%d", pad),
        "ALIGN", strf("%d", align), "N", lit(x->dim[0]), "C", lit(x->dim[1]),
        "FOR_N", loop_head("long ", "n", x->dim[0], 1),
        "FOR_C", loop_head("long ", "c", x->dim[1], 1),
        "H", lit(x->dim[2]), "W", lit(x->dim[3]), "HW", lit(g->dim[1] * g->dim[2]), NULL);
    stmt(e, "%s(%s, %s, %s);", fn, ref(e, x), ref(e, g), ref(e, y));
}

static double grid_flops(Node *n)
{
    int mode, pad;
    grid_attrs(n, &mode, &pad);
    return (double)numel(n->out[0]) * (mode == 0 ? 1 : mode == 1 ? 4 : 16);
}

const OpDef ops_resize[] = {
    {"Resize", resize_infer, NULL, resize_emit, resize_flops, 0},
    {"Upsample", resize_infer, NULL, resize_emit, resize_flops, 0},
    {"GridSample", grid_infer, NULL, grid_emit, grid_flops, 0},
    {0},
};
