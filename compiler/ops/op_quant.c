/* op_quant.c - linear quantization: QuantizeLinear, DequantizeLinear (per tensor and per
 * axis), DynamicQuantizeLinear, QLinearMatMul and QLinearConv (1-D, 2-D).
 *
 * Rounding is half to even (nearbyint in the default rounding mode) and results saturate
 * to the range of the quantized type, as ONNX specifies. Scales and zero points may be
 * run-time inputs; they are read by the kernels, never folded into the code.
 */
#include <string.h>

#include "mlbc.h"

static const char *ct(const Value *v) { return dtype_ctype(v->dt); }

/* Range of a quantized type, as float literals. */
static void qrange(Node *n, DType t, const char **lo, const char **hi)
{
    switch (t) {
    case DT_UINT8: *lo = "0.0f"; *hi = "255.0f"; return;
    case DT_INT8: *lo = "-128.0f"; *hi = "127.0f"; return;
    case DT_UINT16: *lo = "0.0f"; *hi = "65535.0f"; return;
    case DT_INT16: *lo = "-32768.0f"; *hi = "32767.0f"; return;
    default: node_die(n, "quantized type %s is not supported", dtype_name(t));
    }
}

static const DType qtypes[] = {DT_UINT8, DT_INT8, DT_UINT16, DT_INT16, DT_UNDEF};

/* Scale (input si) and zero point (zi) of a per-tensor or per-axis quantization of x:
 * returns the axis, or -1 for per tensor. */
static int qparams(Node *n, const Value *x, int si, int zi)
{
    Value *s = input(n, si), *z = input(n, zi);
    if (!s)
        node_die(n, "the scale input is required");
    int axis = -1;
    if (numel(s) != 1 || s->rank > 1) {
        if (s->rank != 1 || n->opset < 13)
            node_die(n, "scale '%s' must be a scalar%s, not %s", s->name,
                     n->opset < 13 ? "" : " or a 1-D tensor", shape_str(s));
        axis = norm_axis(n, attr_int(n, "axis", 1), x->rank);
        if (s->dim[0] != x->dim[axis])
            node_die(n, "scale '%s' has %lld values for axis %d of size %lld", s->name,
                     (long long)s->dim[0], axis, (long long)x->dim[axis]);
    } else if (s->rank == 1 && n->opset >= 13 && x->rank > 0) {
        /* A 1-element 1-D scale is per axis of a size-1 axis: the same as per tensor. */
        axis = -1;
    }
    if (z && (z->rank != s->rank || numel(z) != numel(s)))
        node_die(n, "zero point '%s' %s must have the scale's shape %s", z->name, shape_str(z),
                 shape_str(s));
    return axis;
}

static void quantize_infer(Node *n)
{
    if (n->nin < 2 || n->nin > 3 || !n->in[0] || !n->in[1])
        node_die(n, "takes inputs x, scale and optionally zero_point");
    static const DType xt[] = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_FLOAT16, DT_UNDEF};
    static const DType st[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_UNDEF};
    need_type(n, n->in[0], xt);
    need_type(n, n->in[1], st);
    Value *z = input(n, 2);
    if (z)
        need_type(n, z, qtypes);
    qparams(n, n->in[0], 1, 2);
    copy_shape(n, 0, n->in[0], z ? z->dt : DT_UINT8);
}

static void dequantize_infer(Node *n)
{
    if (n->nin < 2 || n->nin > 3 || !n->in[0] || !n->in[1])
        node_die(n, "takes inputs x, scale and optionally zero_point");
    static const DType xt[] = {DT_UINT8, DT_INT8, DT_UINT16, DT_INT16, DT_INT32, DT_UNDEF};
    static const DType st[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_UNDEF};
    need_type(n, n->in[0], xt);
    need_type(n, n->in[1], st);
    Value *z = input(n, 2);
    if (z)
        need_same_type(n, n->in[0], z);
    qparams(n, n->in[0], 1, 2);
    copy_shape(n, 0, n->in[0], n->in[1]->dt);
}

static void qlinear_emit(Emit *e, Node *n)
{
    int quant = !strcmp(n->op, "QuantizeLinear");
    Value *x = n->in[0], *s = n->in[1], *z = input(n, 2), *y = n->out[0];
    int axis = qparams(n, x, 1, 2);
    int64_t D = axis < 0 ? 1 : x->dim[axis], outer = 1, inner = 1;
    for (int i = 0; i < x->rank; i++) {
        if (axis >= 0 && i < axis)
            outer *= x->dim[i];
        else if (axis >= 0 && i > axis)
            inner *= x->dim[i];
    }
    if (axis < 0)
        inner = numel(x);
    DType cdt = x->dt == DT_DOUBLE || s->dt == DT_DOUBLE ? DT_DOUBLE : DT_FLOAT;
    const char *CT = dtype_ctype(cdt);
    const char *sidx = axis < 0 ? "s_[0]" : "s_[c]";
    const char *S = load_as(s->dt, cdt, sidx);
    const char *ZP = z ? load_as(z->dt, cdt, axis < 0 ? "z_[0]" : "z_[c]") : "0";
    Buf params = {0};
    buf_printf(&params, "const %s *restrict x, const %s *restrict s_, ", ct(x), ct(s));
    if (z)
        buf_printf(&params, "const %s *restrict z_, ", ct(z));
    buf_printf(&params, "%s *restrict y", ct(y));
    const char *expr, *doc;
    if (quant) {
        const char *lo, *hi;
        qrange(n, y->dt, &lo, &hi);
        const char *rnd = cdt == DT_DOUBLE ? "nearbyint" : "nearbyintf";
        /* Saturate in the computation type first: converting an out-of-range float to an
         * integer type is undefined in C. NaN goes to the low end. */
        expr = strf("(%s)(!(%s(v / s) + z >= %s) ? %s : %s(v / s) + z > %s ? %s : %s(v / s) + z)",
                    ct(y), rnd, lo, lo, rnd, hi, hi, rnd);
        doc = strf("QuantizeLinear %s%s -> %s (%s)", dtype_name(x->dt), shape_str(x),
                   dtype_name(y->dt), axis < 0 ? "per tensor" : strf("axis %d", axis));
    } else {
        expr = store_elem(y->dt, "(v - z) * s");
        doc = strf("DequantizeLinear %s%s -> %s (%s)", dtype_name(x->dt), shape_str(x),
                   dtype_name(y->dt), axis < 0 ? "per tensor" : strf("axis %d", axis));
    }
    const char *fn = kernel(e, n, "quant_linear", "DOC", doc, "PARAMS", params.p,
        "D", lit(D), "FOR_I", loop_head("long ", "i", outer, 1),
        "FOR_C", loop_head("long ", "c", D, 1),
        "INNER", lit(inner), "CT", CT, "S", S, "ZP", ZP,
        "XT", ct(x), "YT", ct(y), "LOAD", load_as(x->dt, cdt, "xi[k]"), "EXPR", expr, NULL);
    if (z)
        stmt(e, "%s(%s, %s, %s, %s);", fn, ref(e, x), ref(e, s), ref(e, z), ref(e, y));
    else
        stmt(e, "%s(%s, %s, %s);", fn, ref(e, x), ref(e, s), ref(e, y));
}

/* Constant quantized weights are dequantized at compile time, in float like the kernel. */
static int dequantize_fold(Node *n)
{
    Value *x = n->in[0], *s = n->in[1], *z = input(n, 2), *y = n->out[0];
    if (y->dt != DT_FLOAT)
        return 0;
    int axis = qparams(n, x, 1, 2);
    int64_t inner = 1;
    for (int i = axis + 1; axis >= 0 && i < x->rank; i++)
        inner *= x->dim[i];
    for (int64_t i = 0; i < numel(x); i++) {
        int64_t c = axis < 0 ? 0 : (i / inner) % x->dim[axis];
        float zv = z ? (float)value_get_i(z, c) : 0.0f;
        ((float *)y->data)[i] = ((float)value_get_i(x, i) - zv) * (float)value_get_f(s, c);
    }
    return 1;
}

/* ---- DynamicQuantizeLinear ---- */

static void dynq_infer(Node *n)
{
    if (n->nin != 1 || !n->in[0])
        node_die(n, "takes one input");
    static const DType xt[] = {DT_FLOAT, DT_UNDEF};
    need_type(n, n->in[0], xt);
    copy_shape(n, 0, n->in[0], DT_UINT8);
    set_output(n, 1, DT_FLOAT, 0, NULL);
    set_output(n, 2, DT_UINT8, 0, NULL);
}

static void dynq_emit(Emit *e, Node *n)
{
    Value *x = n->in[0];
    const char *fn = kernel(e, n, "quant_dynamic",
        "DOC", strf("DynamicQuantizeLinear float%s -> uint8", shape_str(x)),
        "N", lit(numel(x)), NULL);
    /* Outputs not used by the model still need somewhere to go. */
    const char *o[3];
    for (int i = 0; i < 3; i++)
        o[i] = i < n->nout && n->out[i] && n->out[i]->nuse ? ref(e, n->out[i]) : NULL;
    if (!o[0] || !o[1] || !o[2]) {
        stmt(e, "{");
        stmt(e, "    uint8_t y_unused[%s];", lit(numel(x) ? numel(x) : 1));
        stmt(e, "    float s_unused[1];");
        stmt(e, "    uint8_t z_unused[1];");
        stmt(e, "    %s(%s, %s, %s, %s);", fn, ref(e, x), o[0] ? o[0] : "y_unused",
             o[1] ? o[1] : "s_unused", o[2] ? o[2] : "z_unused");
        stmt(e, "}");
        return;
    }
    stmt(e, "%s(%s, %s, %s, %s);", fn, ref(e, x), o[0], o[1], o[2]);
}

/* ---- QLinearMatMul ---- */

/* Per-tensor (1 value) or per-row of a / per-column of b (LEN values): index expression. */
static const char *qm_index(Node *n, int i, int64_t len, const char *var)
{
    Value *v = n->in[i];
    if (numel(v) == 1)
        return "0";
    if (numel(v) == len)
        return var;
    node_die(n, "input '%s' %s must hold 1 or %lld values", v->name, shape_str(v),
             (long long)len);
}

/* v's shape in DIM as a matrix (or a batch of them), as MatMul sees it: a 1-D v is a row
 * ([1, K]) or, as the second operand (second), a column ([K, 1]). Returns the rank. */
static int matrix_dims(const Value *v, int second, int64_t *dim)
{
    int r = v->rank;
    memcpy(dim, v->dim, sizeof(int64_t) * r);
    if (r != 1)
        return r;
    if (second) {
        dim[1] = 1;
    } else {
        dim[1] = dim[0];
        dim[0] = 1;
    }
    return 2;
}

static void qmatmul_infer(Node *n)
{
    if (n->nin != 8)
        node_die(n, "takes 8 inputs, got %d", n->nin);
    for (int i = 0; i < 8; i++)
        if (!n->in[i])
            node_die(n, "input %d is required", i);
    Value *a = n->in[0], *b = n->in[3];
    static const DType t8[] = {DT_UINT8, DT_INT8, DT_UNDEF};
    static const DType ft[] = {DT_FLOAT, DT_UNDEF};
    need_type(n, a, t8);
    need_type(n, b, t8);
    need_same_type(n, a, n->in[2]);
    need_same_type(n, b, n->in[5]);
    need_type(n, n->in[1], ft);
    need_type(n, n->in[4], ft);
    need_type(n, n->in[6], ft);
    need_type(n, n->in[7], t8);
    if (a->rank < 1 || b->rank < 1)
        node_die(n, "inputs must have rank >= 1");
    if (numel(n->in[6]) != 1 || numel(n->in[7]) != 1)
        node_die(n, "y_scale and y_zero_point must be scalars");
    int64_t ad[MLBC_MAX_RANK], bd[MLBC_MAX_RANK], yd[MLBC_MAX_RANK];
    int ar = matrix_dims(a, 0, ad), br = matrix_dims(b, 1, bd);
    if (ad[ar - 1] != bd[br - 2])
        node_die(n, "inner dimensions differ: %s x %s", shape_str(a), shape_str(b));
    int r = broadcast(n, ar - 2, ad, br - 2, bd, yd);
    int64_t M = ad[ar - 2], N = bd[br - 1];
    qm_index(n, 1, M, "i");
    qm_index(n, 4, N, "j");
    if (numel(n->in[1]) != numel(n->in[2]) || numel(n->in[4]) != numel(n->in[5]))
        node_die(n, "scales and zero points must have the same shapes");
    if (a->rank > 1)
        yd[r++] = M;
    if (b->rank > 1)
        yd[r++] = N;
    set_output(n, 0, n->in[7]->dt, r, yd);
}

static void qmatmul_emit(Emit *e, Node *n)
{
    Value *a = n->in[0], *b = n->in[3], *y = n->out[0];
    int64_t ad[MLBC_MAX_RANK], bd[MLBC_MAX_RANK], yd[MLBC_MAX_RANK];
    int ar = matrix_dims(a, 0, ad), br = matrix_dims(b, 1, bd);
    int64_t M = ad[ar - 2], K = ad[ar - 1], N = bd[br - 1];
    int r = broadcast(n, ar - 2, ad, br - 2, bd, yd);
    const char *lo, *hi;
    qrange(n, y->dt, &lo, &hi);
    const char *mm = kernel(e, n, "quant_matmul",
        "DOC", strf("QLinearMatMul [%lld,%lld] x [%lld,%lld] %s x %s -> %s", (long long)M,
                    (long long)K, (long long)K, (long long)N, dtype_name(a->dt),
                    dtype_name(b->dt), dtype_name(y->dt)),
        "AT", ct(a), "BT", ct(b), "YT", ct(y), "M", lit(M), "K", lit(K), "N", lit(N),
        "AS", qm_index(n, 1, M, "i"), "AZ", qm_index(n, 2, M, "i"),
        "BS", qm_index(n, 4, N, "j"), "BZ", qm_index(n, 5, N, "j"), "LO", lo, "HI", hi, NULL);
    const char *fn = mm;
    if (r > 0) {
        /* Batch strides in matrices; broadcast batch axes of a or b get stride 0. */
        int64_t st[MLBC_MAX_OPERANDS][MLBC_MAX_RANK];
        Value va = {0}, vb = {0};
        va.rank = ar - 2;
        memcpy(va.dim, ad, sizeof(int64_t) * va.rank);
        vb.rank = br - 2;
        memcpy(vb.dim, bd, sizeof(int64_t) * vb.rank);
        dense_strides(r, yd, st[0]);
        bcast_strides(&va, r, yd, st[1]);
        bcast_strides(&vb, r, yd, st[2]);
        Loops l = loop_nest(r, yd, 3, st);
        fn = kernel(e, n, "quant_batch", "DOC", strf("QLinearMatMul batches of %s", mm),
            "AT", ct(a), "BT", ct(b), "YT", ct(y), "OPEN", l.open, "CLOSE", l.close,
            "INDENT", l.indent, "MM", mm, "IA", l.idx[1], "MA", lit(M * K), "IB", l.idx[2],
            "MB", lit(K * N), "IY", l.idx[0], "MY", lit(M * N), NULL);
    }
    stmt(e, "%s(%s, %s, %s, %s, %s, %s, %s, %s, %s);", fn, ref(e, a), ref(e, n->in[1]),
         ref(e, n->in[2]), ref(e, b), ref(e, n->in[4]), ref(e, n->in[5]), ref(e, n->in[6]),
         ref(e, n->in[7]), ref(e, y));
}

static double qmatmul_flops(Node *n)
{
    Value *a = n->in[0];
    return 2.0 * (double)numel(n->out[0]) * (double)a->dim[a->rank - 1];
}

/* ---- QLinearConv (1-D and 2-D) ---- */

typedef struct QConv {
    int64_t n, c, h, w, m, kh, kw, oh, ow, group;
    int64_t sh, sw, dh, dw, ph, pw;     /* strides, dilations, leading pads */
} QConv;

static void qconv_geometry(Node *n, QConv *q)
{
    Value *x = n->in[0], *w = n->in[3];
    int sp = x->rank - 2;
    if (sp < 1 || sp > 2 || w->rank != x->rank)
        node_die(n, "only 1-D and 2-D convolutions are supported (X %s, W %s)", shape_str(x),
                 shape_str(w));
    int64_t in[2] = {1, x->dim[2]}, k[2] = {1, w->dim[2]};
    if (sp == 2) {
        in[0] = x->dim[2], in[1] = x->dim[3];
        k[0] = w->dim[2], k[1] = w->dim[3];
    }
    int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pads[4] = {0, 0, 0, 0}, a[4], ks[2];
    int cnt;
    if ((cnt = attr_ints(n, "strides", a, 2)) >= 0) {
        if (cnt != sp)
            node_die(n, "strides needs %d values", sp);
        for (int i = 0; i < sp; i++)
            st[2 - sp + i] = a[i];
    }
    if ((cnt = attr_ints(n, "dilations", a, 2)) >= 0) {
        if (cnt != sp)
            node_die(n, "dilations needs %d values", sp);
        for (int i = 0; i < sp; i++)
            dl[2 - sp + i] = a[i];
    }
    if ((cnt = attr_ints(n, "kernel_shape", ks, 2)) >= 0)
        for (int i = 0; i < cnt && i < sp; i++)
            if (ks[i] != k[2 - sp + i])
                node_die(n, "kernel_shape disagrees with W %s", shape_str(w));
    if ((cnt = attr_ints(n, "pads", a, 4)) >= 0) {
        if (cnt != 2 * sp)
            node_die(n, "pads needs %d values", 2 * sp);
        for (int i = 0; i < sp; i++) {
            pads[2 - sp + i] = a[i];
            pads[2 + 2 - sp + i] = a[sp + i];
        }
    }
    const char *ap = attr_str(n, "auto_pad", "NOTSET");
    int64_t out[2];
    for (int i = 0; i < 2; i++) {
        if (st[i] < 1 || dl[i] < 1)
            node_die(n, "strides and dilations must be positive");
        int64_t ek = (k[i] - 1) * dl[i] + 1;
        if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            out[i] = (in[i] + st[i] - 1) / st[i];
            int64_t total = (out[i] - 1) * st[i] + ek - in[i];
            if (total < 0)
                total = 0;
            pads[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            pads[2 + i] = total - pads[i];
        } else if (!strcmp(ap, "VALID")) {
            pads[i] = pads[2 + i] = 0;
            out[i] = (in[i] - ek) / st[i] + 1;
        } else if (!strcmp(ap, "NOTSET")) {
            out[i] = (in[i] + pads[i] + pads[2 + i] - ek) / st[i] + 1;
        } else {
            node_die(n, "auto_pad '%s' is not supported", ap);
        }
        if (out[i] < 1 || in[i] + pads[i] + pads[2 + i] < ek)
            node_die(n, "the kernel does not fit the padded input");
    }
    q->n = x->dim[0], q->c = x->dim[1], q->h = in[0], q->w = in[1];
    q->m = w->dim[0], q->kh = k[0], q->kw = k[1], q->oh = out[0], q->ow = out[1];
    q->sh = st[0], q->sw = st[1], q->dh = dl[0], q->dw = dl[1];
    q->ph = pads[0], q->pw = pads[1];
    q->group = attr_int(n, "group", 1);
    if (q->group < 1 || q->c % q->group || q->m % q->group || w->dim[1] * q->group != q->c)
        node_die(n, "group %lld does not fit X %s and W %s", (long long)q->group, shape_str(x),
                 shape_str(w));
}

static void qconv_infer(Node *n)
{
    if (n->nin < 8 || n->nin > 9)
        node_die(n, "takes 8 or 9 inputs, got %d", n->nin);
    for (int i = 0; i < 8; i++)
        if (!n->in[i])
            node_die(n, "input %d is required", i);
    static const DType t8[] = {DT_UINT8, DT_INT8, DT_UNDEF};
    static const DType ft[] = {DT_FLOAT, DT_UNDEF};
    static const DType bt[] = {DT_INT32, DT_UNDEF};
    need_type(n, n->in[0], t8);
    need_type(n, n->in[3], t8);
    need_same_type(n, n->in[0], n->in[2]);
    need_same_type(n, n->in[3], n->in[5]);
    need_type(n, n->in[1], ft);
    need_type(n, n->in[4], ft);
    need_type(n, n->in[6], ft);
    need_type(n, n->in[7], t8);
    QConv q;
    qconv_geometry(n, &q);
    if (numel(n->in[1]) != 1 || numel(n->in[2]) != 1 || numel(n->in[6]) != 1 ||
        numel(n->in[7]) != 1)
        node_die(n, "x and y scales and zero points must be scalars");
    if ((numel(n->in[4]) != 1 && numel(n->in[4]) != q.m) || numel(n->in[5]) != numel(n->in[4]))
        node_die(n, "w_scale and w_zero_point must hold 1 or %lld values", (long long)q.m);
    Value *b = input(n, 8);
    if (b) {
        need_type(n, b, bt);
        if (numel(b) != q.m)
            node_die(n, "bias '%s' must hold %lld values", b->name, (long long)q.m);
    }
    int64_t d[4] = {q.n, q.m, q.oh, q.ow};
    if (n->in[0]->rank == 3)
        d[2] = q.ow;
    set_output(n, 0, n->in[7]->dt, n->in[0]->rank, d);
}

static void qconv_emit(Emit *e, Node *n)
{
    QConv q;
    qconv_geometry(n, &q);
    Value *y = n->out[0], *b = input(n, 8);
    const char *lo, *hi;
    qrange(n, y->dt, &lo, &hi);
    const char *wi = numel(n->in[4]) == 1 ? "0" : "m";
    const char *fn = kernel(e, n, "quant_conv",
        "DOC", strf("QLinearConv %s%s * %s%s, group %lld -> %s%s", dtype_name(n->in[0]->dt),
                    shape_str(n->in[0]), dtype_name(n->in[3]->dt), shape_str(n->in[3]),
                    (long long)q.group, dtype_name(y->dt), shape_str(y)),
        "XT", ct(n->in[0]), "WT", ct(n->in[3]), "YT", ct(y), "N", lit(q.n), "M", lit(q.m),
        "MG", lit(q.m / q.group), "CG", lit(q.c / q.group), "C", lit(q.c), "H", lit(q.h),
        "W", lit(q.w), "KH", lit(q.kh), "KW", lit(q.kw), "OH", lit(q.oh), "OW", lit(q.ow),
        "SH", lit(q.sh), "SW", lit(q.sw), "DH", lit(q.dh), "DW", lit(q.dw), "PH", lit(q.ph),
        "PW", lit(q.pw), "WS", wi, "WZ", wi, "BIAS", b ? "bias[m]" : "0", "LO", lo, "HI", hi,
        "FOR_N", loop_head("long ", "n", q.n, 1), "FOR_M", loop_head("long ", "m", q.m, 1),
        "FOR_OH", loop_head("long ", "oh", q.oh, 1), "FOR_OW", loop_head("long ", "ow", q.ow, 1),
        "FOR_C", loop_head("long ", "c", q.c / q.group, 1),
        "FOR_KH", loop_head("long ", "kh", q.kh, 1), "FOR_KW", loop_head("long ", "kw", q.kw, 1),
        NULL);
    Buf call = {0};
    buf_printf(&call, "%s(", fn);
    for (int i = 0; i < 8; i++)
        buf_printf(&call, "%s, ", ref(e, n->in[i]));
    buf_printf(&call, "%s, %s);", b ? ref(e, b) : "0", ref(e, y));
    stmt(e, "%s", call.p);
}

static double qconv_flops(Node *n)
{
    QConv q;
    qconv_geometry(n, &q);
    return 2.0 * (double)numel(n->out[0]) * (double)(q.c / q.group * q.kh * q.kw);
}

const OpDef ops_quant[] = {
    {"QuantizeLinear", quantize_infer, NULL, qlinear_emit, NULL, 0},
    {"DequantizeLinear", dequantize_infer, dequantize_fold, qlinear_emit, NULL, 0},
    {"DynamicQuantizeLinear", dynq_infer, NULL, dynq_emit, NULL, 0},
    {"QLinearMatMul", qmatmul_infer, NULL, qmatmul_emit, qmatmul_flops, 0},
    {"QLinearConv", qconv_infer, NULL, qconv_emit, qconv_flops, 0},
    {0},
};
