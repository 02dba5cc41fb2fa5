/* op_select.c - selection ops whose output size depends on the data: NonZero and Unique.
 *
 * With a constant input the size is known here (NonZero is folded). Otherwise the outputs'
 * declared static shapes (value_info or graph outputs) are used, and the kernel checks that
 * the data produce exactly that many elements: it returns non-zero, so run() returns 2,
 * before it writes anything if they do not.
 */
#include <math.h>
#include <string.h>

#include "mlbc.h"

/* Largest item count of Unique: the kernel's work arrays live on the stack. */
#define MAX_UNIQUE_ITEMS 32768

static void need_plain(Node *n, const Value *v)
{
    if (!dtype_size(v->dt) || v->dt == DT_STRING || v->dt == DT_COMPLEX64 ||
        v->dt == DT_COMPLEX128)
        node_die(n, "input '%s' has element type %s, which is not supported", v->name,
                 dtype_name(v->dt));
}

/* ---- NonZero ---- */

/* Element i of a constant is non-zero (16-bit floats by their bits: -0 is zero). */
static int const_nonzero(const Value *v, int64_t i)
{
    if (dtype_is_half(v->dt))
        return (((const uint16_t *)v->data)[i] & 0x7fff) != 0;
    if (dtype_is_float(v->dt)) {
        double x = value_get_f(v, i);
        return x != 0 || x != x;
    }
    return value_get_i(v, i) != 0;
}

static void nonzero_infer(Node *n)
{
    if (n->nin != 1 || !n->in[0])
        node_die(n, "takes one input");
    Value *x = n->in[0];
    need_plain(n, x);
    int r = x->rank ? x->rank : 1; /* a scalar counts as a 1-element vector */
    if (x->data) {
        int64_t k = 0;
        for (int64_t i = 0; i < numel(x); i++)
            k += const_nonzero(x, i);
        int64_t d[2] = {r, k};
        set_output(n, 0, DT_INT64, 2, d);
        return;
    }
    if (!use_declared(n, 0, DT_INT64))
        node_die(n, "the input is not constant, so the output '%s' needs a declared static "
                 "shape [%d, count] (value_info or graph output)", n->out[0]->name, r);
    Value *y = n->out[0];
    if (y->rank != 2 || y->dim[0] != r || y->dim[1] > numel(x))
        node_die(n, "output '%s' is declared %s, which does not fit input %s (expected "
                 "[%d, count <= %lld])", y->name, shape_str(y), shape_str(x), r,
                 (long long)numel(x));
}

static int nonzero_fold(Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    int r = x->rank ? x->rank : 1;
    int64_t k = 0, K = y->dim[1];
    for (int64_t i = 0; i < numel(x); i++) {
        if (!const_nonzero(x, i))
            continue;
        int64_t rest = i;
        for (int a = r - 1; a >= 0; a--) {
            int64_t d = x->rank ? x->dim[a] : 1;
            value_set_i(y, a * K + k, rest % d);
            rest /= d;
        }
        k++;
    }
    return 1;
}

static void nonzero_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    int r = x->rank;
    int64_t K = y->dim[1], st[MLBC_MAX_RANK];
    dense_strides(r, x->dim, st);
    Buf coords = {0};
    if (r == 0)
        buf_puts(&coords, "            y[k] = 0;\n");
    for (int a = 0; a < r; a++) {
        const char *dst = a ? strf("y[%s + k]", lit(a * K)) : "y[k]";
        const char *q = st[a] == 1 ? "i" : strf("i / %s", lit(st[a]));
        if (a == 0)
            buf_printf(&coords, "            %s = %s;\n", dst, q);
        else
            buf_printf(&coords, "            %s = %s %% %s;\n", dst, q, lit(x->dim[a]));
    }
    const char *nz = dtype_is_half(x->dt) ? "(x[i] & 0x7fff) != 0" : "x[i] != 0";
    const char *fn = kernel(e, n, "select_nonzero",
        "DOC", strf("NonZero of %s%s -> int64%s", dtype_name(x->dt), shape_str(x),
                    shape_str(y)),
        "T", dtype_ctype(x->dt), "N", lit(numel(x)), "K", lit(K), "NZ", nz,
        "COORDS", coords.p, NULL);
    check(e, strf("%s(%s, %s) == 0", fn, ref(e, x), ref(e, y)),
          "NonZero: the count of non-zero elements disagrees with the declared output shape");
}

/* ---- Unique ---- */

/* Items a and b of a constant are equal (NaN equals NaN, as in the kernel). */
static int const_items_equal(const Value *x, int64_t outer, int64_t m, int64_t inner,
                             int64_t a, int64_t b)
{
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t ia = (o * m + a) * inner + i, ib = (o * m + b) * inner + i;
            if (dtype_is_int(x->dt) || x->dt == DT_BOOL) {
                if (value_get_i(x, ia) != value_get_i(x, ib))
                    return 0;
            } else {
                double p = value_get_f(x, ia), q = value_get_f(x, ib);
                if (p != q && !(p != p && q != q))
                    return 0;
            }
        }
    return 1;
}

static void unique_infer(Node *n)
{
    if (n->nin != 1 || !n->in[0])
        node_die(n, "takes one input");
    if (n->nout < 1 || !n->out[0])
        node_die(n, "output Y is required");
    Value *x = n->in[0];
    need_plain(n, x);
    int64_t outer, m, inner;
    int a = axis_view(n, "for an axis", &outer, &m, &inner);
    if (m > MAX_UNIQUE_ITEMS)
        node_die(n, "%lld items are more than the %d supported (the kernel's work arrays "
                 "are on the stack)", (long long)m, MAX_UNIQUE_ITEMS);
    int64_t u = -1;
    const char *from = NULL;
    if (x->data) {
        u = 0;
        for (int64_t j = 0; j < m; j++) {
            int64_t k = 0;
            while (k < j && !const_items_equal(x, outer, m, inner, k, j))
                k++;
            u += k == j;
        }
        from = "the constant input";
    } else {
        /* The unique count from whichever of Y, indices, counts is declared. */
        static const int outs[] = {0, 1, 3};
        for (int k = 0; k < 3 && u < 0; k++) {
            int i = outs[k];
            Value *v = i < n->nout ? n->out[i] : NULL;
            if (!v || v->decl_rank < 0)
                continue;
            int ok = 1;
            for (int d = 0; d < v->decl_rank; d++)
                ok &= v->decl_dim[d] >= 0;
            if (!ok)
                continue;
            int r = i == 0 ? (a < 0 ? 1 : x->rank) : 1;
            if (v->decl_rank != r)
                node_die(n, "output '%s' is declared with rank %d, expected %d", v->name,
                         v->decl_rank, r);
            u = v->decl_dim[i == 0 && a >= 0 ? a : 0];
            from = v->name;
        }
        if (u < 0)
            node_die(n, "the input is not constant, so the number of unique items depends on "
                     "the data: output Y, indices or counts needs a declared static shape "
                     "(value_info or graph output)");
    }
    if (u > m || (m > 0 && u < 1))
        node_die(n, "%lld unique items (from %s) is impossible for %lld items", (long long)u,
                 from, (long long)m);
    int64_t dim[MLBC_MAX_RANK];
    int r = a < 0 ? 1 : x->rank;
    if (a >= 0)
        memcpy(dim, x->dim, sizeof(int64_t) * r);
    dim[a < 0 ? 0 : a] = u;
    int64_t mm = m;
    /* Every declared static shape must agree with the one taken. */
    for (int i = 0; i < 4 && i < n->nout; i++) {
        Value *v = n->out[i];
        if (!v || v->decl_rank < 0)
            continue;
        int vr = i == 0 ? r : 1;
        const int64_t *want = i == 0 ? dim : i == 2 ? &mm : &u;
        int bad = v->decl_rank != vr;
        for (int d = 0; d < vr && !bad; d++)
            bad = v->decl_dim[d] >= 0 && v->decl_dim[d] != want[d];
        if (bad)
            node_die(n, "output '%s' is declared with a shape that disagrees with %lld "
                     "unique items (from %s)", v->name, (long long)u, from);
    }
    set_output(n, 0, x->dt, r, dim);
    set_output(n, 1, DT_INT64, 1, &u);
    set_output(n, 2, DT_INT64, 1, &mm);
    set_output(n, 3, DT_INT64, 1, &u);
}

static const char *opt_ref(Emit *e, Node *n, int i)
{
    return i < n->nout && n->out[i] ? ref(e, n->out[i]) : "(int64_t *)0";
}

static void unique_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    int64_t outer, m, inner;
    int a = axis_view(n, "for an axis", &outer, &m, &inner);
    int64_t u = n->out[0]->dim[a < 0 ? 0 : a];
    int sorted = attr_int(n, "sorted", 1) != 0;
    const char *ct = dtype_ctype(calc_type(x->dt));
    int fl = dtype_is_floatish(x->dt);
    const char *item = strf("x[(o * %s + %%s) * %s + i]", lit(m), lit(inner));
    const char *order = sorted
        ? strf("    for (g = 0; g < %s; g++)\n        pos[g] = g;\n", lit(u))
        : strf("    u = 0;\n    for (j = 0; j < %s; j++)\n        if (first[tmp[j]] == j)\n"
               "            pos[tmp[j]] = u++;\n", lit(m));
    const char *fn = kernel(e, n, "select_unique",
        "DOC", strf("Unique (%s) %s of %s%s -> %lld items", sorted ? "sorted" : "not sorted",
                    a < 0 ? "of all elements" : strf("along axis %d", a), dtype_name(x->dt),
                    shape_str(x), (long long)u),
        "T", dtype_ctype(x->dt), "CT", ct, "I", lit(inner), "M", lit(m),
        "FOR_O", loop_head("", "o", outer, 1), "FOR_I", loop_head("", "i", inner, 1),
        "U", lit(u), "MA", lit(m > 0 ? m : 1), "UA", lit(u > 0 ? u : 1),
        "LOADA", load_elem(x->dt, strf(item, "a")),
        "LOADB", load_elem(x->dt, strf(item, "b")),
        "PLTQ", fl ? "p < q || (p == p && q != q)" : "p < q",
        "QLTP", fl ? "q < p || (q == q && p != p)" : "q < p", "ORDER", order, NULL);
    check(e, strf("%s(%s, %s, %s, %s, %s) == 0", fn, ref(e, x), ref(e, y), opt_ref(e, n, 1),
                  opt_ref(e, n, 2), opt_ref(e, n, 3)),
          "Unique: the number of unique items disagrees with the declared output shape");
}

const OpDef ops_select[] = {
    {"NonZero", nonzero_infer, nonzero_fold, nonzero_emit, NULL, 0},
    {"Unique", unique_infer, NULL, unique_emit, NULL, 0},
    {0},
};
