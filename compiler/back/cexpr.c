/* cexpr.c - the C text operator emitters write into generated code: 16-bit float loads and
 * stores, exact literals, multiply-adds that contraction cannot change, libm names. Text
 * only: nothing here instantiates a kernel. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc.h"

const char *load_elem(DType t, const char *x)
{
    if (t == DT_FLOAT16)
        return strf("mlbc_h2f(%s)", x);
    if (t == DT_BFLOAT16)
        return strf("mlbc_bf2f(%s)", x);
    return x;
}

const char *load_as(DType t, DType ct, const char *x)
{
    if (dtype_is_half(t) || t == ct)
        return load_elem(t, x);
    return strf("(%s)%s", dtype_ctype(ct), x);
}

const char *store_elem(DType t, const char *x)
{
    if (t == DT_FLOAT16)
        return strf("mlbc_f2h((float)(%s))", x);
    if (t == DT_BFLOAT16)
        return strf("mlbc_f2bf((float)(%s))", x);
    if (t == DT_BOOL)
        return strf("(%s) != 0", x);
    return strf("(%s)(%s)", dtype_ctype(t), x);
}

const char *store_as(DType t, DType ct, const char *x)
{
    return t == ct && !dtype_is_half(t) ? x : store_elem(t, x);
}

const char *libm_sfx(DType calc) { return calc == DT_DOUBLE ? "" : "f"; }

const char *lit(int64_t x)
{
    if (x == INT64_MIN)
        return "(-9223372036854775807LL - 1)";
    if (x > 2147483647 || x < -2147483647)
        return strf("%lldLL", (long long)x);
    return strf("%lld", (long long)x);
}

/* Float functions mlbc computes itself (templates/NAME.c), faster than libm's and as
 * accurate: "tanh@" becomes "mlbc_tanhf" rather than "tanhf". */
static const char *const own_float_fns[] = {"tanh"};

int is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

int has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = s; (p = strstr(p, w)); p++)
        if ((p == s || !is_ident_char(p[-1])) && !is_ident_char(p[n]))
            return 1;
    return 0;
}

const char *libm_suffix(const char *expr, DType calc)
{
    Buf b = {0};
    for (const char *p = expr; *p; p++) {
        if (*p != '@') {
            buf_put(&b, p, 1);
            continue;
        }
        for (size_t i = 0; calc != DT_DOUBLE && i < sizeof own_float_fns / sizeof *own_float_fns;
             i++) {
            size_t n = strlen(own_float_fns[i]);
            const char *fn = p - n;
            if (fn >= expr && !strncmp(fn, own_float_fns[i], n) &&
                (fn == expr || !is_ident_char(fn[-1]))) {
                b.len -= n;                     /* the name is already in b */
                buf_puts(&b, "mlbc_");
                buf_puts(&b, own_float_fns[i]);
            }
        }
        buf_puts(&b, libm_sfx(calc));
    }
    return b.p ? b.p : "";
}

/* %.17g of a double, %.9g of a float, read back to the same value; x's own %.9g text where
 * it names the same float (1e-05f rather than 9.99999975e-06f); ".0" keeps an integral value
 * a floating constant. */
void buf_float_lit(Buf *b, double x, DType calc)
{
    int dbl = calc == DT_DOUBLE;
    double v = dbl ? x : (double)(float)x;
    if (isnan(v)) {
        buf_puts(b, "NAN");
    } else if (isinf(v)) {
        buf_puts(b, v > 0 ? "INFINITY" : "-INFINITY");
    } else {
        char s[48];
        snprintf(s, sizeof s, dbl ? "%.17g" : "%.9g", x);
        if (!dbl && strtof(s, NULL) != (float)x)
            snprintf(s, sizeof s, "%.9g", v);
        buf_printf(b, strpbrk(s, ".e") ? "%s%s" : "%s.0%s", s, dbl ? "" : "f");
    }
}

const char *madd(DType calc, const char *a, const char *b, const char *c)
{
    if (calc == DT_FLOAT || calc == DT_DOUBLE)
        return strf("mlbc_madd%s(%s, %s, %s)", calc == DT_FLOAT ? "f" : "", a, b, c);
    return strf("%s * %s + %s", a, b, c);
}

/* A one-row product reads 8 panels at once, 8 streams gemm_panel_stride(K) floats apart.
 * Streams a multiple of 4 KB apart, give or take 512 bytes, ran 1.3x slower from L2 (AMD
 * Zen 4, K = 64, 128, 256: each panel 64 bytes further than the last was not enough), so
 * from K = 64 on the panels are spaced further, by rows of zeros. */
int64_t gemm_panel_stride(int64_t K)
{
    int64_t s = 16 * K + (K % 16 ? 0 : 16);
    while (K >= 64 && ((s * 4) % 4096 < 512 || (s * 4) % 4096 > 3584))
        s += 16;
    return s;
}

int64_t gemv_index(int64_t K, int64_t N, int64_t k, int64_t n)
{
    int64_t n0 = n / 64 * 64, w = N - n0 < 64 ? (N - n0 + 15) / 16 * 16 : 64;
    return n0 * K + k * w + n - n0;
}

int64_t gemv_size(int64_t K, int64_t N)
{
    return K * ((N + 15) / 16 * 16);
}

const char *fused(DType calc, const char *a, const char *b, const char *c)
{
    if (calc == DT_FLOAT || calc == DT_DOUBLE)
        return strf("fma%s(%s, %s, %s)", calc == DT_FLOAT ? "f" : "", a, b, c);
    return strf("%s * %s + %s", a, b, c);
}

const char *float_lit(double x, DType calc)
{
    Buf b = {0};
    buf_float_lit(&b, x, calc);
    return b.p;
}

void set_acc(void *dst, int64_t idx, DType ct, double f, int64_t i)
{
    Value v = {.dt = ct, .data = dst};
    if (ct == DT_FLOAT || ct == DT_DOUBLE)
        value_set_f(&v, idx, f);
    else
        value_set_i(&v, idx, i);
}

int pow2ceil(int64_t x)
{
    int r = 1;
    while (r < x)
        r *= 2;
    return r;
}

void buf_line(Buf *b, int ind, const char *fmt, ...)
{
    va_list ap;
    char s[2048];
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    buf_printf(b, "%*s%s\n", 4 * ind, "", s);
}

void cond_and(Buf *b, const char *term)
{
    if (b->len)
        buf_puts(b, " &&\n           ");
    buf_puts(b, term);
}
