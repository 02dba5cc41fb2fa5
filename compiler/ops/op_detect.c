/* op_detect.c - detection ops: NonMaxSuppression and RoiAlign.
 *
 * NonMaxSuppression's output size (the number of selected boxes) depends on the data: the
 * output's declared static shape is used and the kernel checks at run time that exactly that
 * many boxes are selected (run() returns 2 otherwise). Both kernels follow ONNX Runtime's
 * arithmetic (float IoU; RoiAlign in the element type) so results match it bit for bit
 * where the order of operations allows.
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

/* Boxes per batch for NonMaxSuppression: its work arrays live on the stack. */
#define MAX_NMS_BOXES 32768

static const DType index_types[] = {DT_INT32, DT_INT64, DT_UNDEF};

/* ---- NonMaxSuppression ---- */

static void nms_infer(Node *n)
{
    if (n->nin < 2 || n->nin > 5 || !n->in[0] || !n->in[1])
        node_die(n, "takes boxes, scores and optionally max_output_boxes_per_class, "
                 "iou_threshold, score_threshold");
    static const DType ft[] = {DT_FLOAT, DT_UNDEF};
    static const DType i64[] = {DT_INT64, DT_UNDEF};
    Value *bx = n->in[0], *sc = n->in[1], *mo = input(n, 2), *iou = input(n, 3),
          *st = input(n, 4);
    need_type(n, bx, ft);
    need_type(n, sc, ft);
    if (bx->rank != 3 || bx->dim[2] != 4)
        node_die(n, "boxes '%s' must be [batches, boxes, 4], not %s", bx->name, shape_str(bx));
    if (sc->rank != 3 || sc->dim[0] != bx->dim[0] || sc->dim[2] != bx->dim[1])
        node_die(n, "scores '%s' %s must be [%lld, classes, %lld]", sc->name, shape_str(sc),
                 (long long)bx->dim[0], (long long)bx->dim[1]);
    if (bx->dim[1] > MAX_NMS_BOXES)
        node_die(n, "%lld boxes per batch are more than the %d supported (the kernel's work "
                 "arrays are on the stack)", (long long)bx->dim[1], MAX_NMS_BOXES);
    if (mo) {
        need_type(n, mo, i64);
        need_scalar(n, mo, "max_output_boxes_per_class");
    }
    if (iou) {
        need_type(n, iou, ft);
        need_scalar(n, iou, "iou_threshold");
        if (iou->data && !(value_get_f(iou, 0) >= 0 && value_get_f(iou, 0) <= 1))
            node_die(n, "iou_threshold %g must be in [0, 1]", value_get_f(iou, 0));
    }
    if (st) {
        need_type(n, st, ft);
        need_scalar(n, st, "score_threshold");
    }
    int cpb = (int)attr_int(n, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        node_die(n, "center_point_box must be 0 or 1, not %d", cpb);
    /* No selection at all: a static empty output. */
    if (!mo || (mo->data && value_get_i(mo, 0) <= 0) || numel(bx) == 0 || numel(sc) == 0) {
        int64_t d[2] = {0, 3};
        set_output(n, 0, DT_INT64, 2, d);
        return;
    }
    if (!use_declared(n, 0, DT_INT64))
        node_die(n, "the number of selected boxes depends on the data, so the output '%s' "
                 "needs a declared static shape [count, 3] (value_info or graph output)",
                 n->out[0]->name);
    Value *y = n->out[0];
    if (y->rank != 2 || y->dim[1] != 3)
        node_die(n, "output '%s' is declared %s, expected [count, 3]", y->name, shape_str(y));
    int64_t most = bx->dim[0] * sc->dim[1] * bx->dim[1];
    if (mo->data && value_get_i(mo, 0) < bx->dim[1])
        most = bx->dim[0] * sc->dim[1] * value_get_i(mo, 0);
    if (y->dim[0] > most)
        node_die(n, "output '%s' is declared with %lld rows, but at most %lld boxes can be "
                 "selected", y->name, (long long)y->dim[0], (long long)most);
}

static void nms_emit(Emit *e, Node *n)
{
    Value *bx = n->in[0], *sc = n->in[1], *mo = input(n, 2), *iou = input(n, 3),
          *st = input(n, 4), *y = n->out[0];
    int64_t K = y->dim[0];
    if (K == 0 && (!mo || (mo->data && value_get_i(mo, 0) <= 0))) {
        stmt(e, "/* max_output_boxes_per_class is 0: no box is selected */");
        return;
    }
    int cpb = (int)attr_int(n, "center_point_box", 0);
    Buf params = {0}, args = {0};
    const char *maxout = "0", *iouv = "0.0f", *keep = "1";
    if (mo && mo->data) {
        maxout = lit(value_get_i(mo, 0) < 0 ? 0 : value_get_i(mo, 0));
    } else if (mo) {
        buf_puts(&params, ", const int64_t *restrict max_out_in");
        buf_printf(&args, ", %s", ref(e, mo));
        maxout = "max_out_in[0] < 0 ? 0 : (long)max_out_in[0]";
    }
    if (iou && iou->data) {
        iouv = float_lit(value_get_f(iou, 0), DT_FLOAT);
    } else if (iou) {
        buf_puts(&params, ", const float *restrict iou_in");
        buf_printf(&args, ", %s", ref(e, iou));
        iouv = "iou_in[0]";
    }
    if (st && st->data) {
        keep = strf("s[j] > %s", float_lit(value_get_f(st, 0), DT_FLOAT));
    } else if (st) {
        buf_puts(&params, ", const float *restrict score_in");
        buf_printf(&args, ", %s", ref(e, st));
        keep = "s[j] > score_in[0]";
    }
    /* e = x_min, x_max, y_min, y_max, computed as ONNX Runtime does. */
    const char *extent = cpb
        ? "    e[0] = box[0] - box[2] / 2;\n    e[1] = box[0] + box[2] / 2;\n"
          "    e[2] = box[1] - box[3] / 2;\n    e[3] = box[1] + box[3] / 2;\n"
        : "    e[0] = box[1] < box[3] ? box[1] : box[3];\n"
          "    e[1] = box[1] < box[3] ? box[3] : box[1];\n"
          "    e[2] = box[0] < box[2] ? box[0] : box[2];\n"
          "    e[3] = box[0] < box[2] ? box[2] : box[0];\n";
    int64_t N = bx->dim[1];
    const char *fn = kernel(e, n, "detect_nms",
        "DOC", strf("NonMaxSuppression of %s boxes, %s scores (%s) -> %lld selected",
                    shape_str(bx), shape_str(sc), cpb ? "center, size" : "corners",
                    (long long)K),
        "EXTENT", extent, "PARAMS", params.p ? params.p : "", "NA", lit(N > 0 ? N : 1),
        "MAXOUT", maxout, "IOU", iouv, "KEEP", keep,
        "FOR_B", loop_head("", "b", bx->dim[0], 1), "FOR_C", loop_head("", "c", sc->dim[1], 1),
        "C", lit(sc->dim[1]),
        "FOR_J", loop_head("", "j", N, 1), "N", lit(N), "K", lit(K), NULL);
    check(e, strf("%s(%s, %s%s, %s) == 0", fn, ref(e, bx), ref(e, sc), args.p ? args.p : "",
                  ref(e, y)),
          "NonMaxSuppression: the number of selected boxes disagrees with the declared "
          "output shape");
}

static double nms_flops(Node *n)
{
    double b = (double)n->in[0]->dim[1];
    return (double)n->in[0]->dim[0] * (double)n->in[1]->dim[1] * b * (b + 1);
}

/* ---- RoiAlign ---- */

static int roialign_half_pixel(Node *n)
{
    const char *m = attr_str(n, "coordinate_transformation_mode",
                             n->opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (!strcmp(m, "half_pixel"))
        return 1;
    if (!strcmp(m, "output_half_pixel"))
        return 0;
    node_die(n, "coordinate_transformation_mode '%s' is not half_pixel or output_half_pixel",
             m);
}

static int roialign_max(Node *n)
{
    const char *m = attr_str(n, "mode", "avg");
    if (!strcmp(m, "avg"))
        return 0;
    if (!strcmp(m, "max"))
        return 1;
    node_die(n, "mode '%s' is not avg or max", m);
}

static void roialign_infer(Node *n)
{
    if (n->nin != 3 || !n->in[0] || !n->in[1] || !n->in[2])
        node_die(n, "takes X, rois and batch_indices");
    Value *x = n->in[0], *rois = n->in[1], *bi = n->in[2];
    static const DType ft[] = {DT_FLOAT, DT_DOUBLE, DT_UNDEF};
    need_type(n, x, ft);
    need_same_type(n, x, rois);
    need_type(n, bi, index_types);
    if (x->rank != 4)
        node_die(n, "X '%s' must be [N, C, H, W], not %s", x->name, shape_str(x));
    if (rois->rank != 2 || rois->dim[1] != 4)
        node_die(n, "rois '%s' must be [num_rois, 4], not %s", rois->name, shape_str(rois));
    if (bi->rank != 1 || bi->dim[0] != rois->dim[0])
        node_die(n, "batch_indices '%s' must be [%lld], not %s", bi->name,
                 (long long)rois->dim[0], shape_str(bi));
    for (int64_t i = 0; bi->data && i < numel(bi); i++)
        if (value_get_i(bi, i) < 0 || value_get_i(bi, i) >= x->dim[0])
            node_die(n, "batch index %lld is out of range for batch size %lld",
                     (long long)value_get_i(bi, i), (long long)x->dim[0]);
    int64_t oh = attr_int(n, "output_height", 1), ow = attr_int(n, "output_width", 1);
    if (oh < 1 || ow < 1)
        node_die(n, "output_height and output_width must be positive");
    if (attr_int(n, "sampling_ratio", 0) < 0)
        node_die(n, "sampling_ratio must not be negative");
    roialign_half_pixel(n);
    roialign_max(n);
    int64_t d[4] = {rois->dim[0], x->dim[1], oh, ow};
    set_output(n, 0, x->dt, 4, d);
}

static void roialign_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *rois = n->in[1], *bi = n->in[2], *y = n->out[0];
    DType t = x->dt;
    const char *T = dtype_ctype(t);
    int hp = roialign_half_pixel(n), mx = roialign_max(n);
    int64_t sr = attr_int(n, "sampling_ratio", 0);
    int64_t C = x->dim[1], H = x->dim[2], W = x->dim[3], PH = y->dim[2], PW = y->dim[3];
    const char *PHW = lit(PH * PW);
    const char *accum, *finish;
    if (mx) {
        accum = strf("                            %s v = w1 * d[p1], u = w2 * d[p2];\n"
                     "                            if (v < u)\n"
                     "                                v = u;\n"
                     "                            u = w3 * d[p3];\n"
                     "                            if (v < u)\n"
                     "                                v = u;\n"
                     "                            u = w4 * d[p4];\n"
                     "                            if (v < u)\n"
                     "                                v = u;\n"
                     "                            if ((iy == 0 && ix == 0) || yo[c * %s] < v)\n"
                     "                                yo[c * %s] = v;\n", T, PHW, PHW);
        finish = "";
    } else {
        /* yo += w1 d[p1] + ... + w4 d[p4] as a chain of explicit fused multiply-adds */
        const char *yo = strf("yo[c * %s]", PHW), *acc = yo;
        for (int k = 1; k <= 4; k++)
            acc = fused(t, strf("w%d", k), strf("d[p%d]", k), acc);
        accum = strf("                            %s = %s;\n", yo, acc);
        finish = strf("                %s\n"
                      "                    yo[c * %s] /= count;\n", loop_head("", "c", C, 1), PHW);
    }
    const char *clamp = hp ? "" : strf("        if (rw < 1)\n            rw = 1;\n"
                                       "        if (rh < 1)\n            rh = 1;\n");
    const char *gh = sr > 0 ? lit(sr) : strf("(long)ceil((double)(rh / %s))", lit(PH));
    const char *gw = sr > 0 ? lit(sr) : strf("(long)ceil((double)(rw / %s))", lit(PW));
    double scale = attr_float(n, "spatial_scale", 1.0);
    const char *fn = kernel(e, n, "detect_roialign",
        "DOC", strf("RoiAlign %s, %s, sampling ratio %lld, scale %g: %s%s, %s rois -> %s",
                    mx ? "max" : "avg", hp ? "half_pixel" : "output_half_pixel",
                    (long long)sr, scale, dtype_name(t), shape_str(x), shape_str(rois),
                    shape_str(y)),
        "MODE", mx ? "max" : "average",
        "GRID", sr > 0 ? strf("%lld x %lld", (long long)sr, (long long)sr)
                       : "adaptive: ceil(region size / bins)",
        "T", T, "IT", dtype_ctype(bi->dt), "R", lit(rois->dim[0]), "N", lit(x->dim[0]),
        "C", lit(C), "FOR_C", loop_head("", "c", C, 1), "H", lit(H), "W", lit(W), "HW", lit(H * W),
        "CHW", lit(C * H * W),
        "PH", lit(PH), "PW", lit(PW), "PHW", PHW, "SCALE", float_lit(scale, t),
        "OFFSET", float_lit(hp ? 0.5 : 0.0, t), "CLAMP", clamp, "GH", gh, "GW", gw,
        "ACCUM", accum, "FINISH", finish, "MADD", t == DT_DOUBLE ? "mlbc_madd" : "mlbc_maddf",
        "COUNT", mx ? "" : strf("        const %s count = gh * gw > 0 ? (%s)(gh * gw) : 1;\n", T, T),
        NULL);
    const char *call = strf("%s(%s, %s, %s, %s)", fn, ref(e, x), ref(e, rois), ref(e, bi),
                            ref(e, y));
    if (value_in_code(e, bi))
        stmt(e, "%s; /* cannot fail: '%s' is constant */", call,
             c_comment(bi->name));
    else
        check(e, strf("%s == 0", call), "RoiAlign: batch index out of range");
}

static double roialign_flops(Node *n)
{
    int64_t sr = attr_int(n, "sampling_ratio", 0);
    return (double)numel(n->out[0]) * 4.0 * (double)(sr > 0 ? sr * sr : 4) * 2.0;
}

const OpDef ops_detect[] = {
    {"NonMaxSuppression", nms_infer, NULL, nms_emit, nms_flops, 0},
    {"RoiAlign", roialign_infer, NULL, roialign_emit, roialign_flops, 0},
    {0},
};
