/* composite.c - several models in one file, the one to run chosen by model_selector (LLVM's
 * composite AOT models): the interface they share, and the selector of a string.
 *
 * Every runner binds a model by the names, types and shapes of its descriptor, so the
 * members must agree on all of them; the context then has one buffer per argument and
 * result, which every member's code reads and writes as its own.
 */
#include <string.h>

#include "mlbc.h"

void selector_halves(const char *s, uint64_t h[2])
{
    unsigned char d[16];
    md5(s, strlen(s), d);
    h[0] = h[1] = 0;
    for (int i = 7; i >= 0; i--) {
        h[0] = h[0] << 8 | d[8 + i];
        h[1] = h[1] << 8 | d[i];
    }
}

/* The value of LIST named like WANT and not taken yet, or NULL. */
static Value *find_named(Value **list, int n, const char *name, char *taken)
{
    for (int i = 0; i < n; i++)
        if (!taken[i] && !strcmp(list[i]->name, name)) {
            taken[i] = 1;
            return list[i];
        }
    return NULL;
}

_Noreturn static void differ(const char *fmt, const char *kind, const char *name,
                             const char *path)
{
    die("the models of a composite must have the same inputs and outputs: %s '%s' %s '%s'",
        kind, name, fmt, path);
}

/* KIND (input/output) tensors of member M in the order of FIRST's; dies naming the tensor
 * that M lacks, has more of, or has of another type or shape. */
static Value **match(const Member *m, const Member *first, Value **mine, int nmine,
                     Value **want, int n, const char *kind)
{
    char *taken = xalloc((size_t)nmine + 1);
    Value **out = xalloc(sizeof *out * ((size_t)n + 1));
    diag_file = m->path;
    for (int i = 0; i < n; i++) {
        out[i] = find_named(mine, nmine, want[i]->name, taken);
        if (!out[i])
            differ("is missing; it is in", kind, want[i]->name, first->path);
        if (!same_type(out[i], want[i]))
            die("the models of a composite must have the same inputs and outputs: %s '%s' is "
                "%s%s here, %s%s in '%s'", kind, want[i]->name, dtype_name(out[i]->dt),
                shape_str(out[i]), dtype_name(want[i]->dt), shape_str(want[i]), first->path);
    }
    for (int i = 0; i < nmine; i++)
        if (!taken[i])
            differ("is not in", kind, mine[i]->name, first->path);
    return out;
}

/* Member M's graph with its inputs and outputs in the composite's order, and the indices of
 * NAME_arg_data / NAME_result_data its code refers to renumbered to match. */
static void renumber(const Member *m, const Member *first)
{
    Graph *g = m->m->g, *f = first->m->g;
    Value **in = match(m, first, g->inputs, g->ninputs, f->inputs, f->ninputs, "input");
    Value **out = match(m, first, g->outputs, g->noutputs, f->outputs, f->noutputs, "output");
    for (int i = 0; i < g->noutputs; i++)
        g->outputs[i]->result_index = -1;
    for (int i = 0; i < f->noutputs; i++)
        if (out[i]->result_index < 0)
            out[i]->result_index = i;       /* a value listed twice: its first place */
    for (int i = 0; i < f->ninputs; i++)
        in[i]->arg_index = i;
    g->inputs = in;
    g->outputs = out;
}

/* The argument LLVM's runner fills with the selector's MD5 halves. */
static Value *selector_value(int index)
{
    Value *v = xalloc(sizeof *v);
    *v = (Value){.name = "model_selector", .dt = DT_UINT64, .rank = 1, .dim = {2},
                 .decl_rank = -1, .arg_index = index, .result_index = -1, .offset = -1};
    return v;
}

static Value *find_input(const Graph *g, const char *name)
{
    for (int i = 0; i < g->ninputs; i++)
        if (!strcmp(g->inputs[i]->name, name))
            return g->inputs[i];
    return NULL;
}

Graph *composite_interface(Member *ms, int n, const char *name)
{
    const char *saved = diag_file;
    for (int i = 0; i < n; i++)
        renumber(&ms[i], &ms[0]);
    diag_file = saved;
    Graph *f = ms[0].m->g, *api = xalloc(sizeof *api);
    *api = *f;
    api->name = name;
    Value *sel = find_input(f, "model_selector");
    if (sel && !same_type(sel, selector_value(0))) {
        diag_file = ms[0].path;
        die("input 'model_selector' is %s%s: a composite's selector is uint64[2]",
            dtype_name(sel->dt), shape_str(sel));
    }
    if (!sel) {
        api->inputs = xalloc(sizeof *api->inputs * ((size_t)f->ninputs + 1));
        memcpy(api->inputs, f->inputs, sizeof *api->inputs * (size_t)f->ninputs);
        api->inputs[api->ninputs++] = selector_value(f->ninputs);
    }
    return api;
}
