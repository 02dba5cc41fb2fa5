/* import.c - ONNX protobuf (from either front end) to the graph IR.
 *
 * Checks here are the structural ones: names defined once, inputs defined before use
 * (a cycle shows up as an input that no schedule can define), supported domains, tensor
 * payloads that match their declared sizes.
 */
#include <string.h>

#include "mlbc.h"

/* protobuf-c leaves an absent optional string NULL. While mlbc works on a model, every
 * absent name is the empty string ABSENT instead, so that no stage meets a NULL name (an
 * empty one is an error where a name is needed); written out, it is absent again. */
static char ABSENT[1];

typedef struct Swap {
    char *from, *to;
} Swap;

static void swap(const Swap *w, char **s)
{
    if (*s == w->from)
        *s = w->to;
}

static void swap_graph(const Swap *w, Onnx__GraphProto *g);

static void swap_values(const Swap *w, Onnx__ValueInfoProto **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        swap(w, &v[i]->name);
}

static void swap_tensor(const Swap *w, Onnx__TensorProto *t)
{
    if (t)
        swap(w, &t->name);
}

static void swap_node(const Swap *w, Onnx__NodeProto *np)
{
    swap(w, &np->name);
    swap(w, &np->op_type);
    swap(w, &np->domain);
    for (size_t i = 0; i < np->n_input; i++)
        swap(w, &np->input[i]);
    for (size_t i = 0; i < np->n_output; i++)
        swap(w, &np->output[i]);
    for (size_t i = 0; i < np->n_attribute; i++) {
        Onnx__AttributeProto *a = np->attribute[i];
        swap(w, &a->name);
        swap_tensor(w, a->t);
        for (size_t k = 0; k < a->n_tensors; k++)
            swap_tensor(w, a->tensors[k]);
        if (a->g)
            swap_graph(w, a->g);
        for (size_t k = 0; k < a->n_graphs; k++)
            swap_graph(w, a->graphs[k]);
    }
}

static void swap_graph(const Swap *w, Onnx__GraphProto *g)
{
    swap(w, &g->name);
    swap_values(w, g->input, g->n_input);
    swap_values(w, g->output, g->n_output);
    swap_values(w, g->value_info, g->n_value_info);
    for (size_t i = 0; i < g->n_initializer; i++)
        swap_tensor(w, g->initializer[i]);
    for (size_t i = 0; i < g->n_node; i++)
        swap_node(w, g->node[i]);
}

static void swap_model(const Swap *w, Onnx__ModelProto *m)
{
    for (size_t i = 0; i < m->n_opset_import; i++)
        swap(w, &m->opset_import[i]->domain);
    swap_graph(w, m->graph);
}

void names_absent_again(Onnx__ModelProto *m)
{
    swap_model(&(Swap){ABSENT, NULL}, m);
}

Onnx__ModelProto *load_binary(const char *data, size_t len)
{
    check_wire(data, len);
    Onnx__ModelProto *m = onnx__model_proto__unpack(MLBC_PROTO_ALLOC, len, (const uint8_t *)data);
    if (!m)
        die("not a valid ONNX model: malformed or truncated protobuf");
    if (!m->graph)
        die("ONNX model has no graph");
    swap_model(&(Swap){NULL, ABSENT}, m);
    return m;
}

/* ---- symbolic dimension bindings (--dim) ---- */

typedef struct Binding {
    const char *sym;
    int64_t value;
    int used;
} Binding;

static Binding bindings[64];
static int nbindings;

void bind_dim(const char *sym, int64_t value)
{
    if (nbindings == (int)(sizeof bindings / sizeof bindings[0]))
        die_usage("too many --dim options");
    bindings[nbindings++] = (Binding){sym, value, 0};
}

static int lookup_binding(const char *sym, int64_t *value)
{
    for (int i = 0; i < nbindings; i++)
        if (!strcmp(bindings[i].sym, sym)) {
            bindings[i].used = 1;
            *value = bindings[i].value;
            return 1;
        }
    return 0;
}

typedef struct Scope {
    Env *env;                           /* the main graph's names */
    Graph *g;
} Scope;

static Value *lookup(Scope *s, const char *name) { return env_find(s->env, name); }

Value *new_value(Graph *g, const char *name)
{
    g->values = xgrow(g->values, g->nvalues, &g->capvalues, sizeof(Value *));
    Value *v = xalloc(sizeof *v);
    v->graph = g;
    v->name = name;
    v->rank = -1;
    v->decl_rank = -1;
    v->arg_index = v->result_index = -1;
    v->offset = -1;
    g->values[g->nvalues++] = v;
    return v;
}

static Value *define(Scope *s, const char *name, const char *what)
{
    if (!*name)
        die("%s with an empty name", what);
    Value *v = new_value(s->g, name);
    if (!env_bind(s->env, name, v))
        die("tensor '%s' is defined more than once (again as %s)", name, what);
    return v;
}

/* ---- tensors ---- */

static void check_size(const char *name, int rank, const int64_t *dim, DType dt)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dim[i] < 0)
            die("tensor '%s' has a negative dimension %lld", name, (long long)dim[i]);
        if (dim[i] && n > MLBC_MAX_TENSOR_BYTES / dim[i])
            die("tensor '%s' is too large (more than %lld bytes); refusing to compile it",
                name, (long long)MLBC_MAX_TENSOR_BYTES);
        n *= dim[i];
    }
    if (n * (int64_t)(dtype_size(dt) ? dtype_size(dt) : 1) > MLBC_MAX_TENSOR_BYTES)
        die("tensor '%s' is too large (%lld elements of %s); refusing to compile it", name,
            (long long)n, dtype_name(dt));
}

/* Copies the n typed-field elements of src (element size es) into v->data, converting from
 * the field's storage type as ONNX prescribes (e.g. int8 and float16 live in int32_data). */
static void unpack_typed(const Onnx__TensorProto *t, Value *v, int64_t n)
{
    size_t have;
    switch (v->dt) {
    case DT_FLOAT: have = t->n_float_data; break;
    case DT_DOUBLE: have = t->n_double_data; break;
    case DT_INT64: have = t->n_int64_data; break;
    case DT_UINT32: case DT_UINT64: have = t->n_uint64_data; break;
    default: have = t->n_int32_data; break;
    }
    if ((int64_t)have != n)
        die("tensor '%s' holds %zu values but its shape %s needs %lld", v->name, have,
            shape_str(v), (long long)n);
    for (int64_t i = 0; i < n; i++) {
        switch (v->dt) {
        case DT_FLOAT: ((float *)v->data)[i] = t->float_data[i]; break;
        case DT_DOUBLE: ((double *)v->data)[i] = t->double_data[i]; break;
        case DT_INT64: ((int64_t *)v->data)[i] = t->int64_data[i]; break;
        case DT_UINT32: ((uint32_t *)v->data)[i] = (uint32_t)t->uint64_data[i]; break;
        case DT_UINT64: ((uint64_t *)v->data)[i] = t->uint64_data[i]; break;
        case DT_FLOAT16: case DT_BFLOAT16: case DT_UINT16:
            ((uint16_t *)v->data)[i] = (uint16_t)t->int32_data[i];
            break;
        default: value_set_i(v, i, t->int32_data[i]); break;
        }
    }
}

void tensor_to_value(const Onnx__TensorProto *t, Value *v)
{
    if (t->n_dims > MLBC_MAX_RANK)
        die("tensor '%s' has rank %zu; at most %d is supported", v->name, t->n_dims,
            MLBC_MAX_RANK);
    v->dt = (DType)t->data_type;
    if (t->data_type <= 0 || t->data_type >= DT_COUNT)
        die("tensor '%s' has unknown element type %d", v->name, (int)t->data_type);
    if (!dtype_size(v->dt))
        die("tensor '%s': element type %s is not supported", v->name, dtype_name(v->dt));
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        die("tensor '%s' keeps its data in an external file; external data is not supported "
            "(save the model with all tensors inside)", v->name);
    if (t->segment)
        die("tensor '%s' is segmented; segmented tensors are not supported", v->name);
    v->rank = (int)t->n_dims;
    for (int i = 0; i < v->rank; i++)
        v->dim[i] = t->dims[i];
    check_size(v->name, v->rank, v->dim, v->dt);
    int64_t n = numel(v);
    if (t->has_raw_data && (int64_t)t->raw_data.len != n * (int64_t)dtype_size(v->dt))
        die("tensor '%s' has %zu bytes of raw data but its shape %s of %s needs %lld",
            v->name, t->raw_data.len, shape_str(v), dtype_name(v->dt),
            (long long)(n * (int64_t)dtype_size(v->dt)));
    /* Raw data is used where it lies (little-endian hosts only): one copy of the weights.
     * Nothing writes a model's tensors; bools are made 0 or 1 in a copy. */
    if (t->has_raw_data && t->raw_data.len && v->dt != DT_BOOL &&
        (uintptr_t)t->raw_data.data % 8 == 0) {
        v->data = t->raw_data.data;
        return;
    }
    alloc_data(v);
    if (t->has_raw_data) {
        if (t->raw_data.len)
            memcpy(v->data, t->raw_data.data, t->raw_data.len);
    } else {
        unpack_typed(t, v, n);
    }
    if (v->dt == DT_BOOL)
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)v->data)[i] = ((uint8_t *)v->data)[i] != 0;
}

/* ---- declared types ---- */

static void declare(Value *v, const Onnx__ValueInfoProto *vi, int bind)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!tp)
        return;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        die("'%s' is a sequence, map, optional or sparse value; only tensors are supported",
            vi->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    v->decl_dt = tt->has_elem_type ? (DType)tt->elem_type : DT_UNDEF;
    if (v->decl_dt == DT_STRING)
        die("'%s' is a string tensor; strings are not supported", vi->name);
    if (v->decl_dt < 0 || v->decl_dt >= DT_COUNT || (v->decl_dt && !dtype_size(v->decl_dt)))
        die("'%s' has unsupported element type %d", vi->name, (int)v->decl_dt);
    if (!tt->shape)
        return;
    if (tt->shape->n_dim > MLBC_MAX_RANK)
        die("'%s' has rank %zu; at most %d is supported", vi->name, tt->shape->n_dim,
            MLBC_MAX_RANK);
    v->decl_rank = (int)tt->shape->n_dim;
    for (int i = 0; i < v->decl_rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        v->decl_dim[i] = -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            v->decl_dim[i] = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            v->decl_sym[i] = d->dim_param;
            int64_t b;
            if (lookup_binding(d->dim_param, &b))
                v->decl_dim[i] = b;
        }
        if (bind && v->decl_dim[i] < 0) {
            if (v->decl_sym[i])
                die("input '%s' has symbolic dimension '%s' (axis %d); bind it with "
                    "--dim %s=SIZE", vi->name, v->decl_sym[i], i, v->decl_sym[i]);
            die("input '%s' has an unknown dimension (axis %d); mlbc needs static shapes",
                vi->name, i);
        }
    }
    if (bind) {
        if (!v->decl_dt)
            die("input '%s' has no element type", vi->name);
        v->dt = v->decl_dt;
        v->rank = v->decl_rank;
        memcpy(v->dim, v->decl_dim, sizeof v->dim);
        check_size(v->name, v->rank, v->dim, v->dt);
    }
}

/* ---- graph ---- */

static int find_opset(const Onnx__ModelProto *m, const char *domain)
{
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *d = m->opset_import[i]->domain ? m->opset_import[i]->domain : "";
        if (!strcmp(d, "ai.onnx"))
            d = "";
        if (!strcmp(d, domain))
            return (int)m->opset_import[i]->version;
    }
    return -1;
}

Node *new_node(const Onnx__NodeProto *np, const char *name, int opset)
{
    Node *n = xalloc(sizeof *n);
    n->op = np->op_type ? np->op_type : "";
    n->domain = np->domain ? np->domain : "";
    if (!strcmp(n->domain, "ai.onnx"))
        n->domain = "";
    n->name = name;
    n->opset = opset;
    if (*n->domain)
        die("node '%s': op '%s' is in domain '%s', which mlbc does not support (only the "
            "default ONNX domain)", n->name, n->op, n->domain);
    n->nin = (int)np->n_input;
    n->nout = (int)np->n_output;
    n->in = xalloc(sizeof(Value *) * (n->nin + 1));
    n->out = xalloc(sizeof(Value *) * (n->nout + 1));
    n->attr = np->attribute;
    n->nattr = (int)np->n_attribute;
    return n;
}

static Node *import_node(const Onnx__ModelProto *m, const Onnx__NodeProto *np, int index)
{
    const char *domain = np->domain && strcmp(np->domain, "ai.onnx") ? np->domain : "";
    Node *n = new_node(np, np->name && *np->name ? np->name : strf("#%d", index),
                       find_opset(m, domain));
    if (n->opset < 0)
        die("node '%s' (%s): the model imports no opset for the default domain", n->name,
            n->op);
    n->index = index;
    return n;
}

/* What a node waits for before it can be scheduled: its inputs and the outer names its
 * subgraphs use. */
typedef struct Needs {
    const char **name;
    int n, ninputs;                     /* inputs first */
} Needs;

static Needs needs_of(const Onnx__NodeProto *np)
{
    const char **outer;
    int nouter = outer_names(np, &outer);
    Needs d = {xalloc(sizeof(char *) * (np->n_input + nouter + 1)), 0, 0};
    for (size_t k = 0; k < np->n_input; k++)
        if (*np->input[k])
            d.name[d.n++] = np->input[k];
    d.ninputs = d.n;
    for (int k = 0; k < nouter; k++)
        d.name[d.n++] = outer[k];
    return d;
}

/* Kahn-style scheduling: a node is ready once all it needs is defined. Whatever
 * cannot be scheduled either uses an undefined name or sits on a cycle. */
static void schedule(Scope *s, Graph *g, const Onnx__ModelProto *m)
{
    const Onnx__GraphProto *gp = m->graph;
    int n = (int)gp->n_node;
    Node **nodes = xalloc(sizeof(Node *) * (n + 1));
    Needs *needs = xalloc(sizeof(Needs) * (n + 1));
    char *done = xalloc(n + 1);
    for (int i = 0; i < n; i++) {
        nodes[i] = import_node(m, gp->node[i], i);
        needs[i] = needs_of(gp->node[i]);
    }
    g->nodes = xalloc(sizeof(Node *) * (n + 1));
    for (int progress = 1; progress && g->nnodes < n;) {
        progress = 0;
        for (int i = 0; i < n; i++) {
            const Onnx__NodeProto *np = gp->node[i];
            if (done[i])
                continue;
            int ready = 1;
            for (int k = 0; k < needs[i].n && ready; k++)
                ready = lookup(s, needs[i].name[k]) != NULL;
            if (!ready)
                continue;
            Node *nd = nodes[i];
            for (size_t k = 0; k < np->n_input; k++)
                nd->in[k] = *np->input[k] ? lookup(s, np->input[k]) : NULL;
            nd->env = s->env;  /* outer names of its subgraphs, if any (all defined) */
            for (size_t k = 0; k < np->n_output; k++)
                if (*np->output[k]) {
                    nd->out[k] = define(s, np->output[k], strf("an output of node '%s'",
                                                               nd->name));
                    nd->out[k]->producer = nd;
                }
            nd->index = g->nnodes;
            g->nodes[g->nnodes++] = nd;
            done[i] = 1;
            progress = 1;
        }
    }
    if (g->nnodes == n)
        return;
    /* Name the first blocked node and what it waits for. */
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        for (int k = 0; k < needs[i].n; k++) {
            const char *name = needs[i].name[k];
            if (lookup(s, name))
                continue;
            int produced = 0;
            for (int j = 0; j < n && !produced; j++)
                for (size_t o = 0; o < gp->node[j]->n_output; o++)
                    produced |= !strcmp(gp->node[j]->output[o], name);
            const char *how = k < needs[i].ninputs ? "" : " in a subgraph";
            if (produced)
                die("graph has a cycle: node '%s' (%s) depends on its own output through "
                    "'%s'%s", nodes[i]->name, nodes[i]->op, name, how);
            die("node '%s' (%s) uses tensor '%s'%s, which is not defined", nodes[i]->name,
                nodes[i]->op, name, how);
        }
    }
    die("graph cannot be scheduled");
}

static void check_bindings(void)
{
    for (int i = 0; i < nbindings; i++)
        if (!bindings[i].used)
            warn("--dim %s: the model has no such symbolic dimension", bindings[i].sym);
}

Model *import_model(Onnx__ModelProto *m)
{
    const Onnx__GraphProto *gp = m->graph;
    Model *model = xalloc(sizeof *model);
    Graph *g = xalloc(sizeof *g);
    model->proto = m;
    model->g = g;
    model->opset = find_opset(m, "");
    g->name = gp->name ? gp->name : "";

    g->inputs = xalloc(sizeof(Value *) * (gp->n_input + 1));
    g->outputs = xalloc(sizeof(Value *) * (gp->n_output + 1));
    Scope s = {env_new(NULL), g};

    if (gp->n_sparse_initializer)
        die("sparse initializers are not supported");
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *t = gp->initializer[i];
        Value *v = define(&s, t->name ? t->name : "", "an initializer");
        tensor_to_value(t, v);
        v->is_weight = 1;
    }
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        Value *v = lookup(&s, vi->name);
        if (v && v->is_weight) {
            declare(v, vi, 0);  /* an input with a default value is a weight */
            continue;
        }
        v = define(&s, vi->name, "a graph input");
        declare(v, vi, 1);
        v->arg_index = g->ninputs;
        g->inputs[g->ninputs++] = v;
    }
    schedule(&s, g, m);
    for (size_t i = 0; i < gp->n_value_info; i++) {
        Value *v = lookup(&s, gp->value_info[i]->name);
        if (v && !v->is_weight && v->arg_index < 0)
            declare(v, gp->value_info[i], 0);
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        Value *v = lookup(&s, gp->output[i]->name);
        if (!v)
            die("graph output '%s' is not produced by any node", gp->output[i]->name);
        declare(v, gp->output[i], 0);
        if (v->result_index < 0)
            v->result_index = (int)i;
        g->outputs[g->noutputs++] = v;
    }
    if (!g->noutputs)
        die("graph has no outputs");
    check_bindings();
    return model;
}
