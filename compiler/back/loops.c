/* loops.c - loop nests over an output shape, with per-operand strides.
 *
 * Elementwise kernels of any rank and broadcasting pattern reduce to this: adjacent axes
 * that every operand walks contiguously are merged first, so the common cases (same shape,
 * scalar operand, row bias) become one or two loops with a unit-stride inner loop that the
 * C compiler vectorises.
 */
#include <string.h>

#include "mlbc.h"

void bcast_strides(const Value *v, int rank, const int64_t *dim, int64_t *stride)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        int k = i - (rank - v->rank);
        int64_t d = k >= 0 ? v->dim[k] : 1;
        stride[i] = d == 1 && dim[i] != 1 ? 0 : s;
        s *= d;
    }
}

void dense_strides(int rank, const int64_t *dim, int64_t *stride)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        stride[i] = s;
        s *= dim[i];
    }
}

/* Merge axis i into axis i+1 where every operand allows it; drop size-1 axes. */
static int collapse(int rank, int64_t *dim, int nops, int64_t (*st)[MLBC_MAX_RANK])
{
    int r = 0;
    for (int i = 0; i < rank; i++) {
        if (dim[i] == 1)
            continue;
        int merge = r > 0;
        for (int k = 0; k < nops && merge; k++)
            merge = st[k][r - 1] == st[k][i] * dim[i];
        if (merge) {
            dim[r - 1] *= dim[i];
            for (int k = 0; k < nops; k++)
                st[k][r - 1] = st[k][i];
            continue;
        }
        dim[r] = dim[i];
        for (int k = 0; k < nops; k++)
            st[k][r] = st[k][i];
        r++;
    }
    return r;
}

static const char *index_expr(int rank, const int64_t *stride)
{
    Buf b = {0};
    for (int i = 0; i < rank; i++) {
        if (!stride[i])
            continue;
        if (b.len)
            buf_puts(&b, " + ");
        if (stride[i] == 1)
            buf_printf(&b, "i%d", i);
        else
            buf_printf(&b, "i%d * %s", i, lit(stride[i]));
    }
    return b.len ? b.p : "0";
}

Loops loop_nest(int rank, const int64_t *dim_in, int nops, int64_t (*stride_in)[MLBC_MAX_RANK])
{
    int64_t dim[MLBC_MAX_RANK], st[MLBC_MAX_OPERANDS][MLBC_MAX_RANK];
    memcpy(dim, dim_in, sizeof(int64_t) * rank);
    for (int k = 0; k < nops; k++)
        memcpy(st[k], stride_in[k], sizeof(int64_t) * rank);
    int r = collapse(rank, dim, nops, st);
    Loops l = {0};
    Buf open = {0}, close = {0};
    const char *ind = "    ";
    for (int i = 0; i < r; i++) {
        buf_printf(&open, "%sfor (long i%d = 0; i%d < %s; i%d++)\n", ind, i, i, lit(dim[i]), i);
        ind = strf("%s    ", ind);
    }
    buf_printf(&open, "%s{\n", r ? strf("%.*s", (int)strlen(ind) - 4, ind) : ind);
    buf_printf(&close, "%s}\n", r ? strf("%.*s", (int)strlen(ind) - 4, ind) : ind);
    l.open = open.p;
    l.close = close.p;
    l.indent = ind;
    for (int k = 0; k < nops; k++)
        l.idx[k] = index_expr(r, st[k]);
    return l;
}

/* ---- counted loops: a loop of one trip is its body ---- */

/* loop_head's text for a loop of one trip, in place of its header: ONE_TRIP, the header (kept
 * if the body must stay a loop), TRIP_SEP, the statement that gives the index its value. */
#define ONE_TRIP '\001'
#define TRIP_SEP '\002'

const char *loop_head(const char *decl, const char *v, int64_t n, int64_t step)
{
    const char *inc = step == 1 ? strf("%s++", v) : strf("%s += %s", v, lit(step));
    const char *head = strf("for (%s%s = 0; %s < %s; %s)", decl, v, v, lit(n), inc);
    if (n > step)
        return head;
    return strf("%c%s%c%s%s = 0;", ONE_TRIP, head, TRIP_SEP, *decl ? "const " : "", strf("%s%s", decl, v));
}

static int indent_of(const char *s) { return (int)strspn(s, " "); }
static int is_blank(const char *s) { return !s[strspn(s, " ")]; }

/* The lines of TEXT, without their '\n'. */
static char **split_lines(const char *text, int *n)
{
    char **L = NULL;
    int cap = 0;
    *n = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        L = xgrow(L, *n, &cap, sizeof *L);
        L[(*n)++] = strf("%.*s", (int)len, p);
        p += len + (p[len] == '\n');
    }
    return L;
}

/* The end of the body of the loop opened on line m: the first line after it not indented more
 * (the closing brace if braced). */
static int body_end(char **L, int n, int m, int braced)
{
    int ind = indent_of(L[m]), k = m + 1;
    while (k < n && (is_blank(L[k]) || indent_of(L[k]) > ind))
        k++;
    if (braced && (k == n || L[k][ind] != '}'))
        die("internal: unbalanced loop in generated code: %s", L[m]);
    return k;
}

static int any_word(char **L, int from, int to, const char *w)
{
    for (int k = from; k < to; k++)
        if (has_word(L[k], w))
            return 1;
    return 0;
}

/* The last character of the line before M that is not blank (';' at the start). */
static char last_before(char **L, int m)
{
    while (--m >= 0 && is_blank(L[m]))
        ;
    return m >= 0 ? L[m][strlen(L[m]) - 1] : ';';
}

/* Line M, a one-trip loop's marked header, written out with its body into OUT; returns the
 * first line after what was written. The body replaces the loop where the loop is a statement
 * of a block and, if braced, the last one (so that the body's declarations cannot clash with
 * or hide later ones); elsewhere it is a block. */
static int unloop_at(Buf *out, char **L, int n, int m)
{
    int ind = indent_of(L[m]);
    const char *head = L[m] + ind + 1, *sep = strchr(head, TRIP_SEP), *init = sep + 1;
    const char *eq = strstr(init, " = 0;"), *tail = eq + 5, *v = eq;
    while (v > init && is_ident_char(v[-1]))
        v--;
    int braced = !strcmp(tail, " {"), end = body_end(L, n, m, braced);
    if (L[m][ind] != ONE_TRIP || (*tail && !braced))
        die("internal: one-trip loop not alone on its line: %s", L[m]);
    if (any_word(L, m + 1, end, "continue") || any_word(L, m + 1, end, "break")) {
        buf_printf(out, "%*s%.*s%s\n", ind, "", (int)(sep - head), head, tail);
        return m + 1;
    }
    int after = braced ? body_end(L, n, end, 0) : end;
    int block = !strchr(";{}", last_before(L, m)) || (braced && after < n && indent_of(L[after]) >= ind);
    if (block)
        buf_printf(out, "%*s{\n", ind, "");
    if (any_word(L, m + 1, end, strf("%.*s", (int)(eq - v), v)))
        buf_printf(out, "%*s%.*s\n", ind + 4 * block, "", (int)(tail - init), init);
    for (int k = m + 1; k < end; k++)
        buf_printf(out, "%s\n", block || is_blank(L[k]) ? L[k] : L[k] + 4);
    if (block && !braced)
        buf_printf(out, "%*s}\n", ind, "");
    return braced && !block ? end + 1 : end;
}

const char *unloop(const char *text)
{
    while (strchr(text, ONE_TRIP)) {
        int n;
        char **L = split_lines(text, &n);
        Buf out = {0};
        int m = 0;
        while (!strchr(L[m], ONE_TRIP))
            buf_printf(&out, "%s\n", L[m++]);
        for (m = unloop_at(&out, L, n, m); m < n; m++)
            buf_printf(&out, "%s\n", L[m]);
        if (text[strlen(text) - 1] != '\n')
            out.p[--out.len] = 0;
        text = out.p;
    }
    return text;
}
