/* scope.c - ONNX names and their scopes, shared by import.c and lower.c: name tables
 * (Env) chained to the enclosing graph's, as a subgraph sees the names of the graphs around
 * it, and the names a node's subgraphs take from outside (which the node therefore depends
 * on when import.c orders the graph).
 */
#include <string.h>

#include "mlbc.h"

/* ---- name tables: open addressing, chained to the enclosing scope ---- */

struct Env {
    Env *up;                            /* the enclosing scope, searched next */
    const char **name;                  /* cap slots, a power of two; NULL if free */
    Value **val;
    size_t cap, count;
};

static size_t hash(const char *s)
{
    size_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static size_t env_slot(const Env *e, const char *name)
{
    size_t i = hash(name) & (e->cap - 1);
    while (e->name[i] && strcmp(e->name[i], name))
        i = (i + 1) & (e->cap - 1);
    return i;
}

Env *env_new(Env *up)
{
    Env *e = xalloc(sizeof *e);
    e->up = up;
    return e;
}

static void env_grow(Env *e)
{
    Env old = *e;
    e->cap = old.cap ? 2 * old.cap : 16;
    e->name = xalloc(sizeof(char *) * e->cap);
    e->val = xalloc(sizeof(Value *) * e->cap);
    for (size_t i = 0; i < old.cap; i++)
        if (old.name[i]) {
            size_t k = env_slot(e, old.name[i]);
            e->name[k] = old.name[i];
            e->val[k] = old.val[i];
        }
}

int env_bind(Env *e, const char *name, Value *v)
{
    if (2 * (e->count + 1) > e->cap)
        env_grow(e);
    size_t k = env_slot(e, name);
    if (e->name[k])
        return 0;
    e->name[k] = name;
    e->val[k] = v;
    e->count++;
    return 1;
}

Value *env_find(const Env *e, const char *name)
{
    for (; e; e = e->up)
        if (e->count) {
            size_t k = env_slot(e, name);
            if (e->name[k])
                return e->val[k];
        }
    return NULL;
}

/* ---- the names a node's subgraphs take from outside ---- */

typedef struct Names {
    const char **s;
    int n, cap;
} Names;

static int names_has(const Names *ns, const char *name)
{
    for (int i = 0; i < ns->n; i++)
        if (!strcmp(ns->s[i], name))
            return 1;
    return 0;
}

static void names_add(Names *ns, const char *name)
{
    if (!name || !*name || names_has(ns, name))
        return;
    ns->s = xgrow(ns->s, ns->n, &ns->cap, sizeof(char *));
    ns->s[ns->n++] = name;
}

static void node_outer(const Onnx__NodeProto *np, Names *out);

/* Adds to OUT the names G uses but does not define. */
static void graph_outer(const Onnx__GraphProto *g, Names *out)
{
    Names def = {0}, used = {0};
    for (size_t i = 0; i < g->n_input; i++)
        names_add(&def, g->input[i]->name);
    for (size_t i = 0; i < g->n_initializer; i++)
        names_add(&def, g->initializer[i]->name);
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            names_add(&def, g->node[i]->output[k]);
    for (size_t i = 0; i < g->n_node; i++) {
        for (size_t k = 0; k < g->node[i]->n_input; k++)
            names_add(&used, g->node[i]->input[k]);
        node_outer(g->node[i], &used);
    }
    for (size_t i = 0; i < g->n_output; i++)
        names_add(&used, g->output[i]->name);
    for (int i = 0; i < used.n; i++)
        if (!names_has(&def, used.s[i]))
            names_add(out, used.s[i]);
}

static void node_outer(const Onnx__NodeProto *np, Names *out)
{
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (a->g)
            graph_outer(a->g, out);
        for (size_t k = 0; k < a->n_graphs; k++)
            graph_outer(a->graphs[k], out);
    }
}

int outer_names(const Onnx__NodeProto *np, const char ***names)
{
    Names ns = {0};
    node_outer(np, &ns);
    *names = ns.s;
    return ns.n;
}
