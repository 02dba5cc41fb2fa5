/* op_spectral.c - spectral and text-feature ops: DFT, MelWeightMatrix, TfIdfVectorizer.
 *
 * DFT is a direct O(L^2) transform per signal, in double with an exact twiddle index, so it
 * is deterministic and accurate for the short transforms of feature extraction; a run-time
 * dft_length must agree with the static output shape (run() returns 2 otherwise).
 * MelWeightMatrix is folded when its inputs are constant, else computed at run time into the
 * declared output shape. TfIdfVectorizer supports integer input (pool_int64s); strings are
 * not supported by mlbc.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc.h"

/* Largest transform length of DFT: its twiddle table lives on the stack. */
#define MAX_DFT_LENGTH 16384

static const DType float_types[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_UNDEF};
static const DType int_types[] = {DT_INT32, DT_INT64, DT_UNDEF};

/* ---- DFT ---- */

typedef struct DftPlan {
    int axis;
    int64_t len;        /* transform length L */
    int64_t bins;       /* output points along the axis */
    int onesided, inverse;
} DftPlan;

static int dft_axis(Node *n)
{
    Value *x = n->in[0];
    int r = x->rank;
    int64_t a;
    if (n->opset >= 20) {
        Value *av = input(n, 2);
        if (av && !av->data)
            node_die(n, "the axis input '%s' must be a constant", av->name);
        a = av ? value_get_i(av, 0) : -2;
    } else {
        a = attr_int(n, "axis", 1);
    }
    if (a < 0)
        a += r;
    if (a < 0 || a > r - 2)
        node_die(n, "axis %lld is out of range for input %s (the last dimension holds the "
                 "real and imaginary parts)", (long long)a, shape_str(x));
    return (int)a;
}

static void dft_infer(Node *n)
{
    if (n->nin < 1 || n->nin > 3 || !n->in[0])
        node_die(n, "takes input and optionally dft_length%s", n->opset >= 20 ? ", axis" : "");
    Value *x = n->in[0], *dl = input(n, 1);
    need_type(n, x, float_types);
    if (x->rank < 2 || (x->dim[x->rank - 1] != 1 && x->dim[x->rank - 1] != 2))
        node_die(n, "input '%s' %s must be [batch, ..., 1 or 2]", x->name, shape_str(x));
    int a = dft_axis(n);
    int onesided = attr_int(n, "onesided", 0) != 0, inverse = attr_int(n, "inverse", 0) != 0;
    if (onesided && inverse)
        node_die(n, "onesided inverse transforms are not supported");
    int64_t d[MLBC_MAX_RANK];
    memcpy(d, x->dim, sizeof(int64_t) * x->rank);
    d[x->rank - 1] = 2;
    int64_t L = x->dim[a];
    if (dl) {
        need_type(n, dl, int_types);
        need_scalar(n, dl, "dft_length");
        if (!dl->data) {
            if (!use_declared(n, 0, x->dt))
                node_die(n, "dft_length '%s' is not constant, so the output '%s' needs a "
                         "declared static shape (value_info or graph output)", dl->name,
                         n->out[0]->name);
            Value *y = n->out[0];
            int bad = y->rank != x->rank || y->dim[a] < 1;
            for (int i = 0; i < x->rank && !bad; i++)
                bad = i != a && y->dim[i] != d[i];
            if (bad)
                node_die(n, "output '%s' is declared %s, which does not fit input %s along "
                         "axis %d", y->name, shape_str(y), shape_str(x), a);
            L = onesided ? 2 * (y->dim[a] - 1) : y->dim[a];
            if (L < 1)
                node_die(n, "output '%s' declared %s gives no transform length", y->name,
                         shape_str(y));
        } else {
            L = value_get_i(dl, 0);
        }
    }
    if (L < 1 || L > MAX_DFT_LENGTH)
        node_die(n, "transform length %lld is not in [1, %d]", (long long)L, MAX_DFT_LENGTH);
    d[a] = onesided ? L / 2 + 1 : L;
    if (!dl || dl->data)
        set_output(n, 0, x->dt, x->rank, d);
}

static void dft_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *dl = input(n, 1), *y = n->out[0];
    int r = x->rank, a = dft_axis(n);
    int onesided = attr_int(n, "onesided", 0) != 0, inverse = attr_int(n, "inverse", 0) != 0;
    int64_t bins = y->dim[a];
    int64_t L = !dl ? x->dim[a] : dl->data ? value_get_i(dl, 0)
                                            : onesided ? 2 * (bins - 1) : bins;
    int64_t S = x->dim[a], C = x->dim[r - 1], NS = S < L ? S : L;
    int64_t inner = dims_prod(x->dim, a + 1, r - 1), outer = dims_prod(x->dim, 0, a);
    int rt = dl && !dl->data;
    const char *xn = strf("xs[n * %s]", lit(inner * C));
    const char *xi = C == 2 ? strf("xs[n * %s + 1]", lit(inner * C)) : NULL;
    const char *scale = inverse ? strf(" / %s", lit(L)) : "";
    const char *fn = kernel(e, n, "spectral_dft",
        "DOC", strf("DFT%s%s of %s%s along axis %d, %lld points -> %s", inverse ? " (inverse)" : "",
                    onesided ? " (one-sided)" : "", dtype_name(x->dt), shape_str(x), a,
                    (long long)L, shape_str(y)),
        "WHAT", inverse ? "1/L sum_n x[n] e^(+2 pi i k n / L)" : "sum_n x[n] e^(-2 pi i k n / L)",
        "CHECKDOC", rt ? "Returns 0 if\n// the run-time dft_length is not L." : "Returns 1.",
        "T", dtype_ctype(x->dt),
        "DLPARAM", rt ? strf(", const %s *restrict dft_length", dtype_ctype(dl->dt)) : "",
        "DLCHECK", rt ? strf("    if (dft_length[0] != %s)\n        return 0;\n", lit(L)) : "",
        "L", lit(L), "NS", lit(NS), "NSA", lit(NS > 0 ? NS : 1),
        "FOR_O", loop_head("", "o", outer, 1),
        "FOR_J", loop_head("", "j", inner, 1), "C", lit(C), "XO", lit(S * inner * C),
        "YO", lit(bins * inner * 2),
        "YS", lit(inner * 2), "BINS", lit(bins),
        "LOADR", strf("(double)%s", load_elem(x->dt, xn)),
        "LOADI", xi ? strf("(double)%s", load_elem(x->dt, xi)) : "0.0",
        /* re += xr cs -+ xi sn, im += xi cs +- xr sn, in double with explicit fused
         * multiply-adds (contraction-proof) */
        "RE", strf("mlbc_madd(xr[n], cs[m], mlbc_madd(%sxi[n], sn[m], re))", inverse ? "-" : ""),
        "IM", strf("mlbc_madd(xi[n], cs[m], mlbc_madd(%sxr[n], sn[m], im))", inverse ? "" : "-"),
        "STORERE", store_elem(x->dt, strf("re%s", scale)),
        "STOREIM", store_elem(x->dt, strf("im%s", scale)), NULL);
    if (rt)
        check(e, strf("%s(%s, %s, %s)", fn, ref(e, x), ref(e, dl), ref(e, y)),
              "DFT: dft_length disagrees with the declared output shape");
    else
        stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

static double dft_flops(Node *n)
{
    Value *x = n->in[0];
    int a = dft_axis(n);
    return (double)numel(n->out[0]) * 4.0 * (double)x->dim[a];
}

/* ---- MelWeightMatrix ---- */

static DType mel_dtype(Node *n)
{
    DType t = (DType)attr_int(n, "output_datatype", DT_FLOAT);
    for (const DType *p = float_types; *p; p++)
        if (*p == t)
            return t;
    node_die(n, "output_datatype %d is not a float type", (int)t);
}

static void mel_infer(Node *n)
{
    if (n->nin != 5)
        node_die(n, "takes num_mel_bins, dft_length, sample_rate, lower_edge_hertz, "
                 "upper_edge_hertz");
    for (int i = 0; i < 5; i++) {
        if (!n->in[i])
            node_die(n, "input %d is required", i);
        need_scalar(n, n->in[i], i == 0 ? "num_mel_bins" : i == 1 ? "dft_length"
                                 : i == 2 ? "sample_rate" : "edge frequency");
        need_type(n, n->in[i], i < 3 ? int_types : float_types);
    }
    need_same_type(n, n->in[0], n->in[1]);
    need_same_type(n, n->in[0], n->in[2]);
    need_same_type(n, n->in[3], n->in[4]);
    DType t = mel_dtype(n);
    Value *mb = n->in[0], *dl = n->in[1];
    if (mb->data && dl->data) {
        int64_t d[2] = {value_get_i(dl, 0) / 2 + 1, value_get_i(mb, 0)};
        if (d[0] < 1 || d[1] < 1)
            node_die(n, "num_mel_bins %lld and dft_length %lld must be positive",
                     (long long)d[1], (long long)value_get_i(dl, 0));
        set_output(n, 0, t, 2, d);
        return;
    }
    if (!use_declared(n, 0, t))
        node_die(n, "num_mel_bins or dft_length is not constant, so the output '%s' needs a "
                 "declared static shape (value_info or graph output)", n->out[0]->name);
    Value *y = n->out[0];
    if (y->rank != 2 || y->dim[0] < 1 || y->dim[1] < 1)
        node_die(n, "output '%s' is declared %s, expected [dft_length / 2 + 1, num_mel_bins]",
                 y->name, shape_str(y));
    if ((mb->data && value_get_i(mb, 0) != y->dim[1]) ||
        (dl->data && value_get_i(dl, 0) / 2 + 1 != y->dim[0]))
        node_die(n, "output '%s' is declared %s, which disagrees with the constant inputs",
                 y->name, shape_str(y));
}

/* The kernel's arithmetic, for constant inputs: mel ends in float (or double). */
static int mel_fold(Node *n)
{
    Value *y = n->out[0];
    for (int i = 0; i < 5; i++)
        if (!n->in[i]->data)
            return 0;
    if (dtype_is_half(y->dt))
        return 0;
    int64_t M = y->dim[1], NB = y->dim[0];
    double dl = (double)value_get_i(n->in[1], 0), sr = (double)value_get_i(n->in[2], 0);
    double lo = value_get_f(n->in[3], 0), hi = value_get_f(n->in[4], 0), lo_mel, step;
    if (n->in[3]->dt == DT_DOUBLE) {
        lo_mel = 2595.0 * log10(1.0 + lo / 700.0);
        step = fma(2595.0, log10(1.0 + hi / 700.0), -lo_mel) / (double)(M + 2);
    } else {
        float l = 2595.0f * log10f(1.0f + (float)lo / 700.0f);
        lo_mel = l;
        step = fmaf(2595.0f, log10f(1.0f + (float)hi / 700.0f), -l) / (float)(M + 2);
    }
    int64_t *fb = xalloc(sizeof(int64_t) * (size_t)(M + 2));
    for (int64_t i = 0; i < M + 2; i++) {
        double hz = 700 * (pow(10.0, fma((double)i, step, lo_mel) / 2595) - 1);
        fb[i] = (int64_t)floor((dl + 1) * hz / sr);
    }
    for (int64_t i = 0; i < M; i++) {
        int64_t left = fb[i], centre = fb[i + 1], right = fb[i + 2];
        if (centre == left) {
            if (centre >= 0 && centre < NB)
                value_set_f(y, centre * M + i, 1.0);
        } else {
            for (int64_t j = left; j <= centre; j++)
                if (j >= 0 && j < NB)
                    value_set_f(y, j * M + i, (double)(j - left) / (double)(centre - left));
        }
        for (int64_t j = centre; j < right; j++)
            if (j >= 0 && j < NB)
                value_set_f(y, j * M + i, (double)(right - j) / (double)(right - centre));
    }
    return 1;
}

static void mel_emit(Emit *e, Node *n)
{
    Value *y = n->out[0], *lo = n->in[3];
    DType ft = lo->dt;
    int dbl = ft == DT_DOUBLE;
    const char *ct = dbl ? "double" : "float";
    const char *tolog = dbl ? "log10(1.0 + %s / 700.0)" : "log10f(1.0f + %s / 700.0f)";
    const char *fn = kernel(e, n, "spectral_mel",
        "DOC", strf("MelWeightMatrix %s -> %s", dtype_name(y->dt), shape_str(y)),
        "IT", dtype_ctype(n->in[0]->dt), "FT", dtype_ctype(ft), "T", dtype_ctype(y->dt),
        "CT", ct, "M", lit(y->dim[1]), "NB", lit(y->dim[0]), "NY", lit(numel(y)),
        "LOG_LO", strf(tolog, load_elem(ft, "lower_edge[0]")),
        "LOG_HI", strf(tolog, load_elem(ft, "upper_edge[0]")), "FMA", dbl ? "fma" : "fmaf",
        "ONE", store_elem(y->dt, "1.0"),
        "STORE_UP", store_elem(y->dt, "(double)(j - left) / (double)(centre - left)"),
        "STORE_DOWN", store_elem(y->dt, "(double)(right - j) / (double)(right - centre)"), NULL);
    check(e, strf("%s(%s, %s, %s, %s, %s, %s)", fn, ref(e, n->in[0]), ref(e, n->in[1]),
                  ref(e, n->in[2]), ref(e, lo), ref(e, n->in[4]), ref(e, y)),
          "MelWeightMatrix: num_mel_bins or dft_length disagrees with the output shape");
}

/* ---- TfIdfVectorizer ---- */

typedef struct Gram {
    const int64_t *item;    /* n items in the pool */
    int64_t col;            /* output column */
    int64_t order;          /* position in the pool */
    int64_t len;            /* n */
} Gram;

/* By items, then pool position. */
static int gram_cmp(const void *pa, const void *pb)
{
    const Gram *a = pa, *b = pb;
    for (int64_t k = 0; k < a->len; k++)
        if (a->item[k] != b->item[k])
            return a->item[k] < b->item[k] ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

static int64_t tfidf_width(Node *n, int64_t *idx, int nidx)
{
    int64_t w = 0;
    for (int i = 0; i < nidx; i++) {
        if (idx[i] < 0)
            node_die(n, "ngram_indexes has a negative entry %lld", (long long)idx[i]);
        if (idx[i] + 1 > w)
            w = idx[i] + 1;
    }
    return w;
}

#define TFIDF_MAX_POOL 1000000

static void tfidf_infer(Node *n)
{
    if (n->nin != 1 || !n->in[0])
        node_die(n, "takes one input");
    Value *x = n->in[0];
    if (attr(n, "pool_strings"))
        node_die(n, "string pools (pool_strings) are not supported: mlbc has no string tensors");
    need_type(n, x, int_types);
    if (x->rank != 1 && x->rank != 2)
        node_die(n, "input '%s' must be [C] or [N, C], not %s", x->name, shape_str(x));
    const char *mode = attr_str(n, "mode", "");
    if (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF"))
        node_die(n, "mode must be TF, IDF or TFIDF, not '%s'", mode);
    int64_t mn = attr_int(n, "min_gram_length", 0), mx = attr_int(n, "max_gram_length", 0);
    if (mn < 1 || mx < mn)
        node_die(n, "min_gram_length %lld and max_gram_length %lld must satisfy 1 <= min <= "
                 "max", (long long)mn, (long long)mx);
    if (attr_int(n, "max_skip_count", 0) < 0)
        node_die(n, "max_skip_count must not be negative");
    int64_t *idx = xalloc(sizeof(int64_t) * TFIDF_MAX_POOL);
    int nidx = attr_ints(n, "ngram_indexes", idx, TFIDF_MAX_POOL);
    if (nidx < 1)
        node_die(n, "needs ngram_indexes");
    if (!attr(n, "pool_int64s") || !attr(n, "ngram_counts"))
        node_die(n, "needs pool_int64s and ngram_counts");
    int64_t w = tfidf_width(n, idx, nidx);
    int64_t d[2] = {x->dim[0], w};
    if (x->rank == 1)
        set_output(n, 0, DT_FLOAT, 1, &w);
    else
        set_output(n, 0, DT_FLOAT, 2, d);
}

/* Sorts the NG GL-grams of g, keeping the first entry of a repeated one (it alone counts, as
 * in ONNX Runtime); returns how many are left. */
static int64_t distinct_grams(Gram *g, int64_t ng, int64_t gl)
{
    qsort(g, (size_t)ng, sizeof *g, gram_cmp);
    int64_t m = 0;
    for (int64_t i = 0; i < ng; i++)
        if (!m || memcmp(g[m - 1].item, g[i].item, sizeof(int64_t) * (size_t)gl))
            g[m++] = g[i];
    return m;
}

/* The initialisers of the scan's tables: the M grams' items (4 a line), their columns (12). */
static void gram_tables(const Gram *g, int64_t m, Buf *items, Buf *cols)
{
    for (int64_t i = 0; i < m; i++) {
        buf_printf(items, "%s%s{", i ? "," : "", i % 4 ? " " : "\n                ");
        for (int64_t k = 0; k < g[i].len; k++)
            buf_printf(items, "%s%s", k ? ", " : "", lit(g[i].item[k]));
        buf_puts(items, "}");
        buf_printf(cols, "%s%s%s", i ? "," : "", i % 12 ? " " : "\n                ",
                   lit(g[i].col));
    }
}

/* The scan of a row of LEN items for the NG GL-grams at POOL (output columns COL), with skip
 * distances up to SKIP + 1. */
static const char *tfidf_scan(const int64_t *pool, const int64_t *col, int64_t ng, int64_t gl,
                              int64_t skip, int64_t len)
{
    Gram *g = xalloc(sizeof(Gram) * (size_t)ng);
    for (int64_t i = 0; i < ng; i++)
        g[i] = (Gram){pool + i * gl, col[i], i, gl};
    int64_t m = distinct_grams(g, ng, gl);
    Buf items = {0}, cols = {0};
    gram_tables(g, m, &items, &cols);
    return fragment("spectral_tfidf_scan", "GL", lit(gl), "M", lit(m), "GRAMS", items.p,
                    "COLS", cols.p, "DMAX", lit(gl == 1 ? 1 : skip + 1), "LAST", lit(gl - 1),
                    "LEN", lit(len), NULL);
}

/* The scans for the pool's n-grams of the lengths MN..MX that fit in a row of LEN items, once
 * ngram_counts and ngram_indexes are checked against the pool. */
static const char *tfidf_scans(Node *n, int64_t mn, int64_t mx, int64_t skip, int64_t len)
{
    int64_t *pool = xalloc(sizeof(int64_t) * TFIDF_MAX_POOL);
    int64_t *idx = xalloc(sizeof(int64_t) * TFIDF_MAX_POOL);
    int64_t counts[64];
    int npool = attr_ints(n, "pool_int64s", pool, TFIDF_MAX_POOL);
    int nidx = attr_ints(n, "ngram_indexes", idx, TFIDF_MAX_POOL);
    int ncounts = attr_ints(n, "ngram_counts", counts, 64);
    Buf scans = {0};
    int64_t gid = 0;    /* n-gram number in the pool */
    for (int lv = 0; lv < ncounts; lv++) {
        int64_t gl = lv + 1;
        int64_t start = counts[lv], end = lv + 1 < ncounts ? counts[lv + 1] : npool;
        if (start < 0 || end > npool || end < start || (end - start) % gl)
            node_die(n, "ngram_counts %lld..%lld of the pool do not hold whole %lld-grams",
                     (long long)start, (long long)end, (long long)gl);
        int64_t ng = (end - start) / gl;
        if (gid + ng > nidx)
            node_die(n, "ngram_indexes has %d entries, fewer than the pool's n-grams", nidx);
        if (gl >= mn && gl <= mx && ng > 0 && gl <= len)
            buf_puts(&scans, tfidf_scan(pool + start, idx + gid, ng, gl, skip, len));
        gid += ng;
    }
    return scans.p ? scans.p : "";
}

/* The W weights as float literals, 8 a line. */
static const char *tfidf_weights(const float *wts, int64_t W)
{
    Buf wb = {0};
    for (int64_t i = 0; i < W; i++) {
        char s[40];
        snprintf(s, sizeof s, "%.9g", (double)wts[i]);
        buf_printf(&wb, "%s%s%s%sf", i ? "," : "", i % 8 ? " " : "\n            ", s,
                   strpbrk(s, ".en") ? "" : ".0");
    }
    return wb.p;
}

/* What the mode does to a row's W counts once they are made. */
static const char *tfidf_final(Node *n, const char *mode, int64_t W)
{
    float *wts = xalloc(sizeof(float) * (size_t)(W + 1));
    int nw = attr_floats(n, "weights", wts, (int)W + 1);
    int tf = !strcmp(mode, "TF"), idf = !strcmp(mode, "IDF");
    if (!tf && nw > 0 && nw < W)
        node_die(n, "weights has %d entries, fewer than the %lld output columns", nw,
                 (long long)W);
    if (!tf && nw > 0)
        return fragment("spectral_tfidf_weight", "W", lit(W), "WEIGHTS", tfidf_weights(wts, W),
                        "VALUE", idf ? "yr[c] > 0 ? weight[c] : 0.0f" : "yr[c] * weight[c]",
                        NULL);
    return idf ? fragment("spectral_tfidf_seen", "W", lit(W), NULL) : "";
}

static void tfidf_emit(Emit *e, Node *n)
{
    Value *x = n->in[0], *y = n->out[0];
    const char *mode = attr_str(n, "mode", "TF");
    int64_t mn = attr_int(n, "min_gram_length", 1), mx = attr_int(n, "max_gram_length", 1);
    int64_t skip = attr_int(n, "max_skip_count", 0);
    int64_t W = y->dim[y->rank - 1];
    int64_t rows = x->rank == 2 ? x->dim[0] : 1, len = x->dim[x->rank - 1];
    const char *scans = tfidf_scans(n, mn, mx, skip, len);
    const char *final = tfidf_final(n, mode, W);
    const char *fn = kernel(e, n, "spectral_tfidf",
        "DOC", strf("TfIdfVectorizer %s, %lld..%lld-grams, skips up to %lld: %s%s -> %s", mode,
                    (long long)mn, (long long)mx, (long long)skip, dtype_name(x->dt),
                    shape_str(x), shape_str(y)),
        "IT", dtype_ctype(x->dt), "FOR_R", loop_head("", "r", rows, 1),
        "LEN", lit(len), "W", lit(W), "SCANS", scans, "FINAL", final, NULL);
    stmt(e, "%s(%s, %s);", fn, ref(e, x), ref(e, y));
}

const OpDef ops_spectral[] = {
    {"DFT", dft_infer, NULL, dft_emit, dft_flops, 0},
    {"MelWeightMatrix", mel_infer, mel_fold, mel_emit, NULL, 0},
    {"TfIdfVectorizer", tfidf_infer, NULL, tfidf_emit, NULL, 0},
    {0},
};
