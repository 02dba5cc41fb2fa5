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
