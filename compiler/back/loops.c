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

int64_t whole_vectors(int64_t n) { return n > 16 && n % 16 ? n - n % 16 : n; }

Loops loop_nest(int rank, const int64_t *dim_in, int nops, int64_t (*stride_in)[MLBC_MAX_RANK])
{
    return loop_nest_split(rank, dim_in, nops, stride_in, 0);
}

Loops loop_nest_split(int rank, const int64_t *dim_in, int nops,
                      int64_t (*stride_in)[MLBC_MAX_RANK], int split)
{
    int64_t dim[MLBC_MAX_RANK], st[MLBC_MAX_OPERANDS][MLBC_MAX_RANK];
    memcpy(dim, dim_in, sizeof(int64_t) * rank);
    for (int k = 0; k < nops; k++)
        memcpy(st[k], stride_in[k], sizeof(int64_t) * rank);
    int r = collapse(rank, dim, nops, st);
    Loops l = {0};
    Buf open = {0}, close = {0};
    const char *ind = "    ";
    int64_t first = r && split ? whole_vectors(dim[r - 1]) : 0;
    int two = first && first < dim[r - 1]; /* the innermost loop is two: a block around them */
    const char *outer = "";
    for (int i = 0; i < r; i++) {
        int64_t n = i == r - 1 && two ? first : dim[i];
        if (i == r - 1 && two && i) {
            outer = strf("%.*s", (int)strlen(ind) - 4, ind);
            buf_printf(&open, "%s{\n", outer);
        }
        buf_printf(&open, "%sfor (long i%d = 0; i%d < %s; i%d++)\n", ind, i, i, lit(n), i);
        ind = strf("%s    ", ind);
    }
    const char *brace = r ? strf("%.*s", (int)strlen(ind) - 4, ind) : ind;
    buf_printf(&open, "%s{\n", brace);
    buf_printf(&close, "%s}\n", brace);
    if (two && r > 1)
        buf_printf(&close, "%s}\n", outer);
    if (two)
        l.rest = strf("%s}\n%sfor (long i%d = %s; i%d < %s; i%d++)\n%s{\n", brace, brace, r - 1,
                      lit(first), r - 1, lit(dim[r - 1]), r - 1, brace);
    l.open = open.p;
    l.close = close.p;
    l.indent = ind;
    for (int k = 0; k < nops; k++)
        l.idx[k] = index_expr(r, st[k]);
    return l;
}

/* ---- counted loops: a loop of one trip is its body ---- */

/* loop_range's text for a loop of one trip, in place of its header: ONE_TRIP, the header (kept
 * if the body must stay a loop), TRIP_SEP, the statement that gives the index its value. */
#define ONE_TRIP '\001'
#define TRIP_SEP '\002'

const char *loop_range(const char *decl, const char *v, int64_t from, int64_t to, int64_t step)
{
    const char *inc = step == 1 ? strf("%s++", v) : strf("%s += %s", v, lit(step));
    const char *head = strf("for (%s%s = %s; %s < %s; %s)", decl, v, lit(from), v, lit(to), inc);
    if (to <= from || to - from > step)
        return head;
    return strf("%c%s%c%s%s%s = %s;", ONE_TRIP, head, TRIP_SEP, *decl ? "const " : "", decl, v,
                lit(from));
}

const char *loop_head(const char *decl, const char *v, int64_t n, int64_t step)
{
    return loop_range(decl, v, 0, n, step);
}

static int indent_of(const char *s) { return (int)strspn(s, " "); }
static int is_blank(const char *s) { return !s[strspn(s, " ")]; }

typedef struct Lines {
    char **l;
    int n, cap;
} Lines;

static void put_line(Lines *o, char *s)
{
    o->l = xgrow(o->l, o->n, &o->cap, sizeof *o->l);
    o->l[o->n++] = s;
}

/* The lines of TEXT, without their '\n'. */
static Lines split_lines(const char *text)
{
    Lines o = {0};
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        put_line(&o, strf("%.*s", (int)len, p));
        p += len + (p[len] == '\n');
    }
    return o;
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

/* Does line K, in the body of the loop opened on line M, lie in a loop (or switch) nested in
 * that body? Read upwards through the lines that enclose it. */
static int nested(char **L, int m, int k)
{
    static const char *const opens[] = {"for (", "while (", "do {", "switch ("};
    for (int ind = indent_of(L[k]); --k > m;) {
        if (is_blank(L[k]) || indent_of(L[k]) >= ind)
            continue;
        ind = indent_of(L[k]);
        for (size_t i = 0; i < sizeof opens / sizeof *opens; i++)
            if (!strncmp(L[k] + ind, opens[i], strlen(opens[i])))
                return 1;
    }
    return 0;
}

/* Does the body (lines FROM to TO) of the loop opened on line FROM - 1 break or continue it? */
static int jumps_out(char **L, int from, int to)
{
    for (int k = from; k < to; k++)
        if ((has_word(L[k], "continue") || has_word(L[k], "break")) && !nested(L, from - 1, k))
            return 1;
    return 0;
}

/* How a one-trip loop's body takes the place of the loop, by the line before it. */
enum { DROP, ATTACH, BLOCK };

static int placement(const Lines *o, int braced, int may_unbrace)
{
    const char *p = o->n ? o->l[o->n - 1] : "{";
    char c = is_blank(p) ? 0 : p[strlen(p) - 1];
    if (strchr(p, ONE_TRIP) && c == ';')
        c = ')';                        /* a one-trip loop's header, unbraced */
    if (c == ')' || !strcmp(p + indent_of(p), "else"))
        return ATTACH;                  /* the loop is the statement of a for, if, else */
    return c && strchr(";{}", c) && (!braced || may_unbrace) ? DROP : BLOCK;
}

/* Line M of L, a one-trip loop's marked header, written out with its body after the lines
 * before it in O; returns the first line after what was written. The body replaces the loop
 * where the loop is a statement of a block and, if braced, the last one (so that the body's
 * declarations cannot clash with or hide later ones) and declaring no restrict pointer (whose
 * promise holds in its block: moved to a function's outermost block, a pointer into a
 * restrict parameter is undefined behaviour, which gcc -O3 miscompiles); braces make the body of a for, if or
 * else that was the loop a block; elsewhere the body is a block. */
static int unloop_at(Lines *o, const Lines *L, int m)
{
    int ind = indent_of(L->l[m]), n = L->n;
    const char *head = L->l[m] + ind + 1, *sep = strchr(head, TRIP_SEP), *init = sep + 1;
    const char *eq = strstr(init, " = "), *tail = strchr(eq, ';') + 1, *v = eq;
    while (v > init && is_ident_char(v[-1]))
        v--;
    int braced = !strcmp(tail, " {"), end = body_end(L->l, n, m, braced);
    if (L->l[m][ind] != ONE_TRIP || (*tail && !braced))
        die("internal: one-trip loop not alone on its line: %s", L->l[m]);
    if (jumps_out(L->l, m + 1, end)) {
        put_line(o, strf("%*s%.*s%s", ind, "", (int)(sep - head), head, tail));
        return m + 1;
    }
    int after = braced ? body_end(L->l, n, end, 0) : end;
    int how = placement(o, braced, (after == n || indent_of(L->l[after]) < ind) &&
                                       !any_word(L->l, m + 1, end, "restrict"));
    if (how == ATTACH)
        o->l[o->n - 1] = strf("%s {", o->l[o->n - 1]);
    if (how == BLOCK)
        put_line(o, strf("%*s{", ind, ""));
    if (any_word(L->l, m + 1, end, strf("%.*s", (int)(eq - v), v)))
        put_line(o, strf("%*s%.*s", ind + 4 * (how == BLOCK), "", (int)(tail - init), init));
    for (int k = m + 1; k < end; k++)
        put_line(o, how == BLOCK || is_blank(L->l[k]) ? L->l[k] : L->l[k] + 4);
    if (how != DROP && !braced)
        put_line(o, strf("%*s}", how == ATTACH ? ind - 4 : ind, ""));
    if (braced && how != DROP)
        put_line(o, how == ATTACH ? L->l[end] + 4 : L->l[end]);
    return end + braced;
}

/* The one-trip loops are taken last first, so that the loops nested in one are settled before
 * it: whether it is broken or continued, and its lines. */
const char *unloop(const char *text)
{
    if (!strchr(text, ONE_TRIP))
        return text;
    Lines L = split_lines(text);
    for (int m = L.n - 1; m >= 0; m--) {
        if (!strchr(L.l[m], ONE_TRIP))
            continue;
        Lines o = {0};
        for (int k = 0; k < m; k++)
            put_line(&o, L.l[k]);
        for (int k = unloop_at(&o, &L, m); k < L.n; k++)
            put_line(&o, L.l[k]);
        L = o;
    }
    Buf out = {0};
    for (int k = 0; k < L.n; k++)
        buf_printf(&out, "%s\n", L.l[k]);
    if (text[strlen(text) - 1] != '\n')
        out.p[--out.len] = 0;
    return out.p;
}

/* The loop adding the N floats (a multiple of 8) at AT + k, AT an expression of the loop's k,
 * into "mlbc_f8 lanes" (templates/lanes8.c, declared = {0} before it): lane j takes the
 * elements of index j mod 8, in order, as a loop over an array of 8 would, but vectorised
 * alike by every compiler. The caller copies the lanes out into a float[8] to fold them. */
void sum_lanes8(Buf *b, int ind, const char *at, int64_t n)
{
    buf_line(b, ind, "for (k = 0; k < %s; k += 8)", lit(n));
    buf_line(b, ind + 1, "MLBC_F8_ADD(lanes, %s + k);", at);
}

/* A loop per step, each of a constant trip count: a loop over w as well left the lanes in
 * memory, each step's stores forwarded to its loads (a gcc -O2 ReduceMean over rows of 64
 * floats, 2.7x slower). */
void lane_fold(Buf *b, int ind, int L, const char *acc, const char *comb)
{
    const char *aj = strf("%s[j]", acc);
    for (int w = L / 2; w > 1; w /= 2) {
        buf_line(b, ind, "%s", loop_head("", "j", w, 1));
        buf_line(b, ind + 1, "%s = %s;", aj, strf(comb, aj, strf("%s[j + %d]", acc, w)));
    }
    if (L > 1)
        buf_line(b, ind, "%s[0] = %s;", acc, strf(comb, strf("%s[0]", acc), strf("%s[1]", acc)));
}
