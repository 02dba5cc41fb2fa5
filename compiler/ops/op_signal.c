/* op_signal.c - window functions (HannWindow, HammingWindow, BlackmanWindow), STFT and Det.
 *
 * A window's length is its size input. When that is a constant the window is folded into
 * a weight; otherwise the output's declared static shape is used and the kernel checks the
 * size at run time before computing the window (in double, with the exact pi).
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

/* Coefficients: y[k] = a0 - a1 cos(2 pi k / D) + a2 cos(4 pi k / D). */
static void window_coeffs(const Node *n, double *a0, double *a1, double *a2)
{
    *a2 = 0;
    if (!strcmp(n->op, "HannWindow")) {
        *a0 = 0.5;
        *a1 = 0.5;
    } else if (!strcmp(n->op, "HammingWindow")) {
        *a0 = 25.0 / 46.0;
        *a1 = 1 - 25.0 / 46.0;
    } else {
        *a0 = 0.42;
        *a1 = 0.5;
        *a2 = 0.08;
    }
}

static const DType window_out_types[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16,
                                         DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                         DT_UINT32, DT_INT64, DT_UINT64, DT_UNDEF};

static DType window_dtype(Node *n)
{
    DType t = (DType)attr_int(n, "output_datatype", DT_FLOAT);
    for (const DType *p = window_out_types; *p; p++)
        if (*p == t)
            return t;
    node_die(n, "output_datatype %d is not supported", (int)t);
}

static void window_infer(Node *n)
{
    if (n->nin != 1 || !n->in[0])
        node_die(n, "takes one input, the size");
    Value *s = n->in[0];
    static const DType st[] = {DT_INT32, DT_INT64, DT_UNDEF};
    need_type(n, s, st);
    if (numel(s) != 1 || s->rank > 1)
        node_die(n, "size '%s' must be a scalar, not %s", s->name, shape_str(s));
    DType t = window_dtype(n);
    if (s->data) {
        int64_t len = value_get_i(s, 0);
        if (len < 0)
            node_die(n, "size %lld is negative", (long long)len);
        set_output(n, 0, t, 1, &len);
        return;
    }
    if (!use_declared(n, 0, t) || n->out[0]->rank != 1)
        node_die(n, "size '%s' is not constant and the output has no declared static "
                 "1-D shape", s->name);
}

static double window_value(Node *n, int64_t k, int64_t len)
{
    double a0, a1, a2;
    window_coeffs(n, &a0, &a1, &a2);
    int64_t d = attr_int(n, "periodic", 1) ? len : len - 1;
    double t = d > 0 ? 6.283185307179586476925286766559 * (double)k / (double)d : 0.0;
    return a0 - a1 * cos(t) + a2 * cos(2 * t);
}

static int window_fold(Node *n)
{
    Value *y = n->out[0];
    if (y->dt == DT_FLOAT16 || y->dt == DT_BFLOAT16)
        return 0;
    for (int64_t k = 0; k < y->dim[0]; k++)
        value_set_f(y, k, window_value(n, k, y->dim[0]));
    return 1;
}

static void window_emit(Emit *e, Node *n)
{
    Value *s = n->in[0], *y = n->out[0];
    int64_t len = y->dim[0];
    double a0, a1, a2;
    window_coeffs(n, &a0, &a1, &a2);
    int periodic = attr_int(n, "periodic", 1) != 0;
    const char *chk = s->data ? "" : strf("    if (size[0] != %s)\n        return 0;\n",
                                          lit(len));
    const char *fn = kernel(e, n, "signal_window",
        "DOC", strf("%s (%s) of %lld points -> %s", n->op, periodic ? "periodic" : "symmetric",
                    (long long)len, dtype_name(y->dt)),
        "ST", dtype_ctype(s->dt), "T", dtype_ctype(y->dt), "CHECK", chk, "N", lit(len),
        "D", float_lit((double)(periodic ? len : len - 1), DT_DOUBLE),
        "A0", float_lit(a0, DT_DOUBLE), "A1", float_lit(a1, DT_DOUBLE),
        "A2", float_lit(a2, DT_DOUBLE), "STORE", store_elem(y->dt, "v"), NULL);
    if (s->data)
        stmt(e, "%s(%s, %s);", fn, ref(e, s), ref(e, y));
    else
        check(e, strf("%s(%s, %s)", fn, ref(e, s), ref(e, y)),
              strf("%s: the size input disagrees with the declared output shape", n->op));
}

/* ---- Det ---- */

static void det_infer(Node *n)
{
    if (n->nin != 1 || !n->in[0])
        node_die(n, "takes one input");
    Value *x = n->in[0];
    static const DType ft[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_UNDEF};
    need_type(n, x, ft);
    if (x->rank < 2 || x->dim[x->rank - 1] != x->dim[x->rank - 2])
        node_die(n, "input '%s' %s must be [..., M, M]", x->name, shape_str(x));
    if (x->dim[x->rank - 1] > 256)
        node_die(n, "matrices larger than 256 x 256 are not supported (stack use)");
    set_output(n, 0, x->dt, x->rank - 2, x->dim);
}

static void det_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    int64_t m = x->dim[x->rank - 1];
    const char *load = strf("(double)%s", load_elem(x->dt, "x[b * ${MM} + i]"));
    const char *store = store_as(x->dt, DT_DOUBLE, "det");
    /* LOAD refers to ${MM}: substitute it here. */
    const char *mm = lit(m * m > 0 ? m * m : 1);
    Buf l = {0};
    for (const char *p = load; *p; p++) {
        if (!strncmp(p, "${MM}", 5)) {
            buf_puts(&l, mm);
            p += 4;
        } else {
            buf_put(&l, p, 1);
        }
    }
    const char *fn = kernel(e, n, "signal_det",
        "DOC", strf("Det of %s %s", dtype_name(x->dt), shape_str(x)), "T", dtype_ctype(x->dt),
        "MM", mm, "FOR_B", loop_head("long ", "b", numel(y), 1), "M", lit(m), "LOAD", l.p,
        "STORE", store, NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

static double det_flops(Node *n)
{
    double m = (double)n->in[0]->dim[n->in[0]->rank - 1];
    return (double)numel(n->out[0]) * (2.0 / 3.0) * m * m * m;
}

/* ---- STFT ---- */

/* Frame length: the window's, else the constant frame_length input. */
static int64_t stft_length(Node *n)
{
    Value *w = input(n, 2), *fl = input(n, 3);
    if (w) {
        if (w->rank != 1)
            node_die(n, "window '%s' must be 1-D, not %s", w->name, shape_str(w));
        if (fl && fl->data && value_get_i(fl, 0) != w->dim[0])
            node_die(n, "frame_length %lld differs from the window's length %lld",
                     (long long)value_get_i(fl, 0), (long long)w->dim[0]);
        return w->dim[0];
    }
    if (!fl)
        node_die(n, "needs a window or a frame_length");
    if (fl->data)
        return value_get_i(fl, 0);
    /* A run-time frame_length: the declared output's bins decide (for onesided output the
     * even length 2 * (bins - 1)); the kernel checks the input agrees. */
    Value *y = n->out[0];
    if (!use_declared(n, 0, n->in[0]->dt) || y->rank != 4)
        node_die(n, "frame_length '%s' is not constant, there is no window and the output "
                 "has no declared static shape", fl->name);
    return attr_int(n, "onesided", 1) ? 2 * (y->dim[2] - 1) : y->dim[2];
}

static void stft_infer(Node *n)
{
    if (n->nin < 2 || !n->in[0] || !n->in[1])
        node_die(n, "takes inputs signal, frame_step and optionally window, frame_length");
    Value *x = n->in[0], *st = n->in[1];
    static const DType ft[] = {DT_FLOAT, DT_DOUBLE, DT_UNDEF};
    static const DType it[] = {DT_INT32, DT_INT64, DT_UNDEF};
    need_type(n, x, ft);
    need_type(n, st, it);
    if (input(n, 2))
        need_same_type(n, x, n->in[2]);
    if (input(n, 3))
        need_type(n, n->in[3], it);
    if (x->rank != 3 || (x->dim[2] != 1 && x->dim[2] != 2))
        node_die(n, "signal '%s' must be [batch, length, 1 or 2], not %s", x->name,
                 shape_str(x));
    int64_t L = stft_length(n);
    if (L < 1 || L > x->dim[1])
        node_die(n, "frame length %lld does not fit the signal length %lld", (long long)L,
                 (long long)x->dim[1]);
    int onesided = attr_int(n, "onesided", 1) != 0;
    if (onesided && x->dim[2] == 2)
        node_die(n, "onesided output needs a real signal");
    int64_t d[4] = {x->dim[0], 0, onesided ? L / 2 + 1 : L, 2};
    if (st->data) {
        int64_t step = value_get_i(st, 0);
        if (step <= 0)
            node_die(n, "frame_step %lld must be positive", (long long)step);
        d[1] = (x->dim[1] - L) / step + 1;
        set_output(n, 0, x->dt, 4, d);
        return;
    }
    if (!use_declared(n, 0, x->dt))
        node_die(n, "frame_step '%s' is not constant and the output has no declared static "
                 "shape", st->name);
    Value *y = n->out[0];
    if (y->rank != 4 || y->dim[0] != d[0] || y->dim[2] != d[2] || y->dim[3] != 2 ||
        y->dim[1] < 1)
        node_die(n, "declared output shape %s does not fit [%lld, frames, %lld, 2]",
                 shape_str(y), (long long)d[0], (long long)d[2]);
}

static void stft_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *st = n->in[1], *w = input(n, 2), *fl = input(n, 3), *y = n->out[0];
    int64_t L = stft_length(n);
    int rt_fl = fl && !fl->data;
    const char *fn = kernel(e, n, "signal_stft",
        "DOC", strf("STFT of %s%s, %lld-point frames%s -> %s", dtype_name(x->dt),
                    shape_str(x), (long long)L, w ? " with a window" : "", shape_str(y)),
        "T", dtype_ctype(x->dt), "ST", dtype_ctype(st->dt),
        "WPARAM", strf("%s%s", w ? strf(", const %s *restrict window", dtype_ctype(w->dt)) : "",
                       rt_fl ? strf(", const %s *restrict frame_length", dtype_ctype(fl->dt))
                             : ""),
        "FLCHECK", rt_fl ? strf("    if (frame_length[0] != %s)\n        return 0;\n", lit(L)) : "",
        "WMUL", w ? " * (double)window[n]" : "",
        "VI", x->dim[2] == 2 ? (w ? "(double)xf[n * 2 + 1] * (double)window[n]"
                                  : "(double)xf[n * 2 + 1]")
                             : "0.0",
        "L", lit(L), "TLEN", lit(x->dim[1]), "F", lit(y->dim[1]),
        "FOR_B", loop_head("long ", "b", x->dim[0], 1),
        "XB", lit(x->dim[1] * x->dim[2]), "C", lit(x->dim[2]), "BINS", lit(y->dim[2]), NULL);
    const char *call = strf("%s(%s, %s%s%s, %s)", fn, ref(e, x), ref(e, st),
                            w ? strf(", %s", ref(e, w)) : "",
                            rt_fl ? strf(", %s", ref(e, fl)) : "", ref(e, y));
    check(e, call, "STFT: the frame step or length disagrees with the output shape");
}

const OpDef ops_signal[] = {
    {"HannWindow", window_infer, window_fold, window_emit, NULL, 0},
    {"HammingWindow", window_infer, window_fold, window_emit, NULL, 0},
    {"BlackmanWindow", window_infer, window_fold, window_emit, NULL, 0},
    {"STFT", stft_infer, NULL, stft_emit, NULL, 0},
    {"Det", det_infer, NULL, det_emit, det_flops, 0},
    {0},
};
