/* unit.c - unit tests of the compiler's core: element types, broadcasting, loop nests,
 * tensor import, constant access, the memory planner and the lowering of control flow.
 * Linked with the compiler's objects (all but main.o). */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlbc.h"

static int passed, failed;

#define CHECK(cond) expect((cond), #cond, __LINE__)

static void expect(int ok, const char *what, int line)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL unit.c:%d: %s\n", line, what);
    }
}

static void test_dtypes(void)
{
    CHECK(dtype_size(DT_FLOAT) == 4 && dtype_size(DT_BOOL) == 1 && dtype_size(DT_STRING) == 0);
    CHECK(!strcmp(dtype_ctype(DT_INT64), "int64_t") && !strcmp(dtype_ctype(DT_FLOAT16), "uint16_t"));
    for (int t = 1; t < DT_COUNT; t++)
        CHECK(dtype_from_name(dtype_name((DType)t)) == (DType)t);
    CHECK(dtype_is_int(DT_UINT8) && !dtype_is_int(DT_BOOL) && dtype_is_float(DT_DOUBLE));
    CHECK(!strcmp(lit(INT64_MIN), "(-9223372036854775807LL - 1)") && !strcmp(lit(5000000000LL), "5000000000LL"));
}

static Node *fake_node(void)
{
    Node *n = xalloc(sizeof *n);
    n->op = "Test";
    n->name = "t";
    return n;
}

static void test_broadcast(void)
{
    int64_t a[] = {2, 1, 4}, b[] = {3, 1}, out[MLBC_MAX_RANK];
    int r = broadcast(fake_node(), 3, a, 2, b, out);
    CHECK(r == 3 && out[0] == 2 && out[1] == 3 && out[2] == 4);
    /* The result may overwrite an operand, as elementwise ops accumulate in place. */
    int64_t acc[MLBC_MAX_RANK] = {1};
    r = broadcast(fake_node(), 1, acc, 4, (int64_t[]){3, 3, 3, 1}, acc);
    CHECK(r == 4 && acc[0] == 3 && acc[1] == 3 && acc[2] == 3 && acc[3] == 1);
    r = broadcast(fake_node(), 0, a, 1, (int64_t[]){7}, out);
    CHECK(r == 1 && out[0] == 7);
}

static Value *val(int rank, const int64_t *dim, DType dt)
{
    Value *v = xalloc(sizeof *v);
    v->name = "v";
    v->dt = dt;
    v->rank = rank;
    memcpy(v->dim, dim, sizeof(int64_t) * rank);
    v->arg_index = v->result_index = -1;
    v->offset = -1;
    return v;
}

static void test_loops(void)
{
    int64_t dim[] = {2, 3, 4}, st[3][MLBC_MAX_RANK];
    Value *same = val(3, dim, DT_FLOAT), *row = val(1, (int64_t[]){4}, DT_FLOAT);
    dense_strides(3, dim, st[0]);
    bcast_strides(same, 3, dim, st[1]);
    Loops l = loop_nest(3, dim, 2, st);
    CHECK(strstr(l.open, "i0 < 24") && !strstr(l.open, "i1") && !strcmp(l.idx[1], "i0"));
    bcast_strides(row, 3, dim, st[1]);
    l = loop_nest(3, dim, 2, st);
    CHECK(strstr(l.open, "i0 < 6") && strstr(l.open, "i1 < 4") && !strcmp(l.idx[1], "i1"));
    CHECK(!strcmp(l.idx[0], "i0 * 4 + i1"));
    Value *scalar = val(0, dim, DT_FLOAT);
    bcast_strides(scalar, 3, dim, st[1]);
    l = loop_nest(3, dim, 2, st);
    CHECK(!strcmp(l.idx[1], "0"));
    /* A counted loop of one trip is its body, after its index is set to its start if the body
     * reads it; one whose body continues it stays a loop. */
    CHECK(!strcmp(loop_range("long ", "k", 1, 3, 1), "for (long k = 1; k < 3; k++)"));
    const char *t = unloop(strf("    x = 0;\n    %s {\n        y[k] = k;\n    }\n",
                                loop_range("", "k", 3, 4, 1)));
    CHECK(!strcmp(t, "    x = 0;\n    k = 3;\n    y[k] = k;\n"));
    t = unloop(strf("    %s\n        y[0] = 1;\n", loop_head("long ", "k", 8, 8)));
    CHECK(!strcmp(t, "    y[0] = 1;\n"));
    t = unloop(strf("    %s {\n        if (y[k])\n            continue;\n    }\n",
                    loop_head("", "k", 4, 4)));
    CHECK(!strcmp(t, "    for (k = 0; k < 4; k += 4) {\n        if (y[k])\n            continue;\n    }\n"));
}

static void test_tensor_import(void)
{
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[] = {2, 2};
    int32_t i32[] = {1, -2, 3, 127};
    t.n_dims = 2;
    t.dims = dims;
    t.has_data_type = 1;
    t.data_type = DT_INT8;
    t.n_int32_data = 4;
    t.int32_data = i32;
    Value v = {.name = "w"};
    tensor_to_value(&t, &v);
    CHECK(v.rank == 2 && numel(&v) == 4 && value_get_i(&v, 1) == -2 && value_get_i(&v, 3) == 127);
    float f[] = {0.5f, -1.5f, 2, 3};
    Onnx__TensorProto r = ONNX__TENSOR_PROTO__INIT;
    r.n_dims = 2;
    r.dims = dims;
    r.has_data_type = 1;
    r.data_type = DT_FLOAT;
    r.has_raw_data = 1;
    r.raw_data.len = sizeof f;
    r.raw_data.data = (uint8_t *)f;
    Value w = {.name = "w"};
    tensor_to_value(&r, &w);
    CHECK(value_get_f(&w, 1) == -1.5 && value_get_i(&w, 0) == 0);
}

/* A chain x -> n0 -> a -> n1 -> b -> n2 -> c -> n3 -> y: a and c may share, b may not
 * share with a or c. */
static void test_plan(void)
{
    Graph g = {0};
    Value *vals[5];
    Node *nodes[4];
    int64_t dim[] = {16};
    for (int i = 0; i < 5; i++)
        vals[i] = val(1, dim, DT_FLOAT);
    vals[0]->arg_index = 0;
    vals[4]->result_index = 0;
    for (int i = 0; i < 4; i++) {
        Node *n = nodes[i] = fake_node();
        n->index = i;
        n->nin = n->nout = 1;
        n->in = &vals[i];
        n->out = &vals[i + 1];
        vals[i + 1]->producer = n;
        vals[i]->nuse = 1;
    }
    vals[4]->nuse = 1;
    g.nodes = nodes;
    g.nnodes = 4;
    g.values = vals;
    g.nvalues = 5;
    int64_t total = plan_memory(&g);
    CHECK(vals[0]->offset == -1 && vals[4]->offset == -1);
    CHECK(vals[1]->offset != vals[2]->offset && vals[2]->offset != vals[3]->offset);
    CHECK(vals[1]->offset == vals[3]->offset);
    CHECK(total == 2 * 64);
}

/* ---- control flow: lowered during inference (lower.c) ---- */

static Graph *lowered(const char *src)
{
    Graph *g = import_model(parse_text(src, strlen(src)))->g;
    bind_ops(g);            /* the passes main.c runs before planning */
    infer_graph(g);
    remove_dead(g);
    if (fuse_graph(g))
        remove_dead(g);
    return g;
}

static Value *value_named(const Graph *g, const char *name)
{
    for (int i = 0; i < g->nvalues; i++)
        if (!strcmp(g->values[i]->name, name))
            return g->values[i];
    return NULL;
}

/* Reshape-like outputs share their input's buffer, which then lives until their last use;
 * a graph result keeps its own buffer. */
static void test_plan_views(void)
{
    Graph *g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[2,4] x) => (float[8] r, float[8] z) {\n"
        "  a = Neg (x)\n"
        "  shape = Constant <value = int64[1] {8}> ()\n"
        "  b = Reshape (a, shape)\n"
        "  c = Identity (b)\n"
        "  d = Abs (x)\n"
        "  z = Add (c, c)\n"
        "  r = Reshape (d, shape)\n"
        "}\n");
    plan_memory(g);
    Value *a = value_named(g, "a"), *b = value_named(g, "b"), *c = value_named(g, "c");
    Value *d = value_named(g, "d"), *r = value_named(g, "r");
    CHECK(b->alias == a && c->alias == a && b->offset < 0 && c->offset < 0);
    CHECK(a->last == c->last && a->last > b->producer->index);
    CHECK(!r->alias && r->result_index == 0 && d->offset >= 0 && d->offset != a->offset);
}

/* A Conv's padded input and output tile are a block of the arena that lives during the Conv
 * only: apart from its output, shared with a value of later nodes. */
static void test_plan_workspace(void)
{
    Graph *g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[1,16,32,32] x, float[32,16,3,3] w) => (float[1,32,32,32] r) {\n"
        "  y = Conv <pads = [1, 1, 1, 1]> (x, w)\n"
        "  z = Neg (y)\n"
        "  r = Neg (z)\n"
        "}\n");
    plan_memory(g);
    Value *y = value_named(g, "y"), *z = value_named(g, "z");
    Node *conv = y->producer;
    int64_t ys = numel(y) * 4;
    /* at least the zero-padded input: 34 rows of 33 a channel (rows share their padding) */
    CHECK(conv->ws_bytes >= 16 * 34 * 33 * 4);
    CHECK(conv->ws_offset + conv->ws_bytes <= y->offset || y->offset + ys <= conv->ws_offset);
    CHECK(z->offset == conv->ws_offset);        /* z is made after the Conv has run */
}

/* The error lowering SRC dies with (in a child process: die() exits), or "" if none. */
static const char *lowering_error(const char *src)
{
    int fd[2];
    if (pipe(fd))
        return "pipe failed";
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        lowered(src);
        _exit(0);
    }
    close(fd[1]);
    static char msg[1024];
    ssize_t len = 0, got;
    while ((got = read(fd[0], msg + len, sizeof msg - 1 - len)) > 0)
        len += got;
    close(fd[0]);
    msg[len] = 0;
    int status;
    waitpid(pid, &status, 0);
    return msg;
}

static int fails_with(const char *src, const char *msg)
{
    return strstr(lowering_error(src), msg) != NULL;
}

static int live_ops(const Graph *g, const char *op)
{
    int k = 0;
    for (int i = 0; i < g->nnodes; i++)
        k += !g->nodes[i]->dead && !strcmp(g->nodes[i]->op, op);
    return k;
}

static int floats_are(const Value *v, int n, const float *want)
{
    if (!v->data || numel(v) != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (value_get_f(v, i) != want[i])
            return 0;
    return 1;
}

/* Folding the variadic Max and Min: one operand is itself, three are all compared (bug: the
 * fold compared the first two, a missing one as 0, so Max(c) of negatives folded to 0). */
static void test_fold_variadic(void)
{
    Graph *g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 13]>\n"
        "g (float[2] x) => (float[2] y, float[2] z, float[2] u) {\n"
        "  c = Constant <value = float[2] {-1, -2}> ()\n"
        "  d = Constant <value = float[2] {-5, 3}> ()\n"
        "  e = Constant <value = float[2] {7, -9}> ()\n"
        "  m1 = Max (c)\n"
        "  m3 = Max (c, d, e)\n"
        "  n3 = Min (c, d, e)\n"
        "  y = Add (x, m1)\n"
        "  z = Add (x, m3)\n"
        "  u = Add (x, n3)\n"
        "}\n");
    CHECK(floats_are(value_named(g, "m1"), 2, (const float[]){-1, -2}));
    CHECK(floats_are(value_named(g, "m3"), 2, (const float[]){7, 3}));
    CHECK(floats_are(value_named(g, "n3"), 2, (const float[]){-5, -9}));
}

/* Range with a run-time limit takes its length from a declared value downstream, reached
 * through elementwise nodes with scalar operands; through anything else it cannot. */
static void test_range_from_downstream(void)
{
    Graph *g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float lim) => (float[5] y) {\n"
        "  zero = Constant <value = float {0}> ()\n"
        "  one = Constant <value = float {1}> ()\n"
        "  two = Constant <value = float {2}> ()\n"
        "  r = Range (zero, lim, one)\n"
        "  s = Mul (r, two)\n"
        "  y = Cos (s)\n"
        "}\n");
    Value *r = value_named(g, "r");
    CHECK(r->rank == 1 && r->dim[0] == 5);
    CHECK(fails_with(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float lim) => (float[1] y) {\n"
        "  zero = Constant <value = float {0}> ()\n"
        "  one = Constant <value = float {1}> ()\n"
        "  r = Range (zero, lim, one)\n"
        "  y = ReduceSum (r)\n"
        "}\n", "depends on the data of input 'lim'"));
}

static void test_if_lowering(void)
{
    /* A constant condition keeps the taken branch only, which uses an outer name. */
    Graph *g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[2] x) => (float[2] y) {\n"
        "  c = Constant <value = bool {0}> ()\n"
        "  y = If (c) <then_branch = t () => (float[2] a) { a = Neg (x) },\n"
        "              else_branch = e () => (float[2] b) { b = Abs (x) }>\n"
        "}\n");
    CHECK(live_ops(g, "Abs") == 1 && live_ops(g, "Neg") == 0 && live_ops(g, "Where") == 0);
    CHECK(g->outputs[0]->producer && !strcmp(g->outputs[0]->producer->op, "Identity"));
    /* A run-time one runs both and selects. */
    g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (bool c, float[2] x) => (float[2] y) {\n"
        "  y = If (c) <then_branch = t () => (float[2] a) { a = Neg (x) },\n"
        "              else_branch = e () => (float[2] b) { b = Abs (x) }>\n"
        "}\n");
    CHECK(live_ops(g, "Abs") == 1 && live_ops(g, "Neg") == 1 && live_ops(g, "Where") == 1);
    CHECK(fails_with(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (bool c, float[2] x) => (float[2] y) {\n"
        "  y = If (c) <then_branch = t () => (float[2] a) { a = Neg (x) },\n"
        "              else_branch = e () => (float[1] b) { b = ReduceSum (x) }>\n"
        "}\n", "output 0 is float[2] from then_branch but float[1] from else_branch"));
}

static void test_scan_lowering(void)
{
    /* Reverse input and output directions; constant inputs fold the whole scan. */
    Graph *g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[2] unused) => (float[2] sum, float[3,2] partial) {\n"
        "  init = Constant <value = float[2] {0, 0}> ()\n"
        "  xs = Constant <value = float[3,2] {1, 2, 3, 4, 5, 6}> ()\n"
        "  sum, partial = Scan (init, xs) <num_scan_inputs = 1, scan_input_directions = [1],\n"
        "      scan_output_directions = [1],\n"
        "      body = b (float[2] acc, float[2] x) => (float[2] out, float[2] y) {\n"
        "        out = Add (acc, x)\n"
        "        y = Identity (out)\n"
        "      }>\n"
        "}\n");
    CHECK(floats_are(g->outputs[0], 2, (float[]){9, 12}));
    CHECK(floats_are(g->outputs[1], 6, (float[]){9, 12, 8, 10, 5, 6}));
    /* Scan output axis 1: each iteration's value becomes a column. */
    g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[2] unused) => (float[2] sum, float[2,3] cols) {\n"
        "  init = Constant <value = float[2] {0, 0}> ()\n"
        "  xs = Constant <value = float[3,2] {1, 2, 3, 4, 5, 6}> ()\n"
        "  sum, cols = Scan (init, xs) <num_scan_inputs = 1, scan_output_axes = [1],\n"
        "      body = b (float[2] acc, float[2] x) => (float[2] out, float[2] y) {\n"
        "        out = Add (acc, x)\n"
        "        y = Identity (out)\n"
        "      }>\n"
        "}\n");
    CHECK(floats_are(g->outputs[1], 6, (float[]){1, 4, 9, 2, 6, 12}));
}

static Node *live_op(const Graph *g, const char *op)
{
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead && !strcmp(g->nodes[i]->op, op))
            return g->nodes[i];
    return NULL;
}

static void test_loop_lowering(void)
{
    /* The trip count is an argument: the declared scan output gives 4 iterations, and a
     * run-time check (a node kept without outputs) compares. The iteration number is a
     * constant in each copy; the nested If on it is decided at compile time. */
    Graph *g = lowered(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (int64 m, float[1] x) => (float[1] last, float[4,1] all) {\n"
        "  last, all = Loop (m, , x) <body = b (int64 i, bool c, float[1] v) =>\n"
        "      (bool c2, float[1] w, float[1] s) {\n"
        "    c2 = Identity (c)\n"
        "    two = Constant <value = int64 {2}> ()\n"
        "    small = Less (i, two)\n"
        "    w = If (small) <then_branch = t () => (float[1] a) { a = Add (v, x) },\n"
        "                    else_branch = e () => (float[1] d) { d = Mul (v, x) }>\n"
        "    s = Identity (w)\n"
        "  }>\n"
        "}\n");
    Node *check = live_op(g, "Check");
    CHECK(check && check->keep && check->nout == 0 && check->in[0] == g->inputs[0]);
    CHECK(live_ops(g, "Add") == 2 && live_ops(g, "Mul") == 2 && live_ops(g, "Where") == 0);
    CHECK(g->outputs[1]->rank == 2 && g->outputs[1]->dim[0] == 4);
    CHECK(fails_with(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[1] x) => (float[1] y) {\n"
        "  n = Constant <value = int64 {3}> ()\n"
        "  y = Loop (n, , x) <body = b (int64 i, bool c, float[1] v) => (bool c2, float[1] w) {\n"
        "    w = Neg (v)\n"
        "    zero = Constant <value = float {0}> ()\n"
        "    c2 = Less (w, zero)\n"
        "  }>\n"
        "}\n", "data-dependent early exit"));
    CHECK(fails_with(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[1] x) => (float[1] y) {\n"
        "  n = Constant <value = int64 {1000000}> ()\n"
        "  y = Loop (n, , x) <body = b (int64 i, bool c, float[1] v) => (bool c2, float[1] w) {\n"
        "    c2 = Identity (c)\n"
        "    w = Neg (v)\n"
        "  }>\n"
        "}\n", "MLBC_MAX_UNROLLED_NODES"));
    /* A body without nodes (it only passes its state on) made no nodes per copy: the
     * unrolling went on until memory ran out. Copies count too. */
    CHECK(fails_with(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[2] x) => (float[2] y) {\n"
        "  m = Constant <value = int64 {1000000000000}> ()\n"
        "  y = Loop (m, , x) <body = b (int64 i, bool c, float[2] v) => (bool c, float[2] v) {}>\n"
        "}\n", "MLBC_MAX_UNROLLED_NODES"));
    CHECK(fails_with(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
        "g (float[2] x) => (float[2] y) {\n"
        "  y = Loop (, , x) <body = b (int64 i, bool c, float[2] v) => (bool c, float[2] v) {}>\n"
        "}\n", "the trip count is not known at compile time"));
}

/* The weights' layout (weights.c): an array of 64 bytes or more starts a cache line, a
 * smaller one the next multiple of its size; the struct is a whole number of lines, with
 * explicit padding so every C ABI lays it out the same. */
static void test_weights_layout(void)
{
    WeightTable t = {0};
    weights_add(&t, (WeightArray){.name = "a", .doc = "", .dt = DT_FLOAT, .count = 1});
    weights_add(&t, (WeightArray){.name = "b", .doc = "", .dt = DT_FLOAT, .count = 3});
    weights_add(&t, (WeightArray){.name = "c", .doc = "", .dt = DT_INT64, .count = 0});
    weights_add(&t, (WeightArray){.name = "d", .doc = "", .dt = DT_FLOAT, .count = 17});
    weights_add(&t, (WeightArray){.name = "e", .doc = "", .dt = DT_UINT8, .count = 1});
    CHECK(t.a[0].offset == 0 && t.a[1].offset == 16 && t.a[2].offset == 32);
    CHECK(t.a[3].offset == 64 && t.a[4].offset == 132 && t.bytes == 192);
    Buf b = {0};
    weights_struct(&b, &t, "m");
    CHECK(strstr(b.p, "    float a[1];") && strstr(b.p, "unsigned char pad1[12];"));
    CHECK(strstr(b.p, "int64_t c[1];") && strstr(b.p, "unsigned char pad3[24];"));
    CHECK(strstr(b.p, "unsigned char pad5[59];") && strstr(b.p, "== 192u ? 1 : -1"));
}

int main(void)
{
    test_dtypes();
    test_broadcast();
    test_loops();
    test_tensor_import();
    test_plan();
    test_plan_views();
    test_plan_workspace();
    test_fold_variadic();
    test_range_from_downstream();
    test_if_lowering();
    test_scan_lowering();
    test_loop_lowering();
    test_weights_layout();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
