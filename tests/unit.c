/* unit.c - unit tests of the compiler's core: element types, broadcasting, loop nests,
 * tensor import, constant access and the memory planner. Linked with the compiler's
 * objects (all but main.o). */
#include <string.h>

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

int main(void)
{
    test_dtypes();
    test_broadcast();
    test_loops();
    test_tensor_import();
    test_plan();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
