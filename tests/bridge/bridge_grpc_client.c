/* bridge_grpc_client - the ML-Compiler-Bridge's own gRPC test (its MLBridgeTest's grpc
 * configuration), written against mlbc's runner: one mlbc_runner_grpc_bridge per datatype,
 * as the Bridge's test makes one gRPCModelRunner per datatype.
 *
 *   bridge_grpc_client HOST BASE_PORT DESC_DIR [LABEL...]
 *   bridge_grpc_client HOST BASE_PORT DESC_DIR --case NAME      (a misfit: see cases[])
 *
 * Datatype i (1 int, 2 long, 3 float, 4 double, 6 bool, 7 vec_int, 8 vec_long, 9 vec_float,
 * 10 vec_double; char, 5, is not exercised by the Bridge's test either) calls HOST:BASE_PORT+i
 * with DESC_DIR/MLBridgeTest_LABEL.desc (a FileDescriptorSet of that service), sends the
 * Bridge test's request in the feature request_LABEL and checks the reply (the field action)
 * against what its Python server answers, within 1e-5. Prints "LABEL reply V..." each; on a
 * wrong reply "LABEL wrong ..." (exit 1), on a failed call "LABEL error MSG" (exit 3), on a
 * runner that cannot be made "LABEL open-error MSG" (exit 2). LABELs: only those.
 * $BRIDGE_TOKEN: the token sent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc_grpc.h"

typedef struct datatype {
    int number;
    const char *label;
    int type;                       /* the request's and the reply's element type */
    int count, replies;
    double value[3], reply[4];
} datatype;

static const datatype types[] = {
    {1, "int", MLBC_INT32, 1, 1, {11}, {12}},
    {2, "long", MLBC_INT64, 1, 1, {1234567890}, {1234567891}},
    {3, "float", MLBC_FLOAT, 1, 1, {3.14}, {4.14}},
    {4, "double", MLBC_DOUBLE, 1, 1, {0.123456789123456789}, {1.123456789123456789}},
    {6, "bool", MLBC_BOOL, 1, 1, {1}, {0}},
    {7, "vec_int", MLBC_INT32, 3, 3, {11, 22, 33}, {12, 23, 34}},
    {8, "vec_long", MLBC_INT64, 3, 3, {123456780, 222, 333}, {123456780, 123456781, 123456782}},
    {9, "vec_float", MLBC_FLOAT, 3, 4, {11.1, 22.2, 33.3}, {1.11, 2.22, -3.33, 0}},
    {10, "vec_double", MLBC_DOUBLE, 3, 2, {-1.1111111111, -2.2222222222, -3.3333333333},
     {1.12345678912345670, -1.12345678912345671}},
};

/* Misfits, each against one datatype's service: what to change in its runner. */
typedef struct misfit {
    const char *name, *label;
    const char *desc, *method, *feature;    /* NULL: as usual */
    int type, advice_type, replies;         /* 0: as usual */
    double value;                           /* non-zero: the request's value */
} misfit;

static const misfit cases[] = {
    {"no-set", "int", "/nonexistent.desc", NULL, NULL, 0, 0, 0, 0},
    {"not-a-set", "int", "/etc/hostname", NULL, NULL, 0, 0, 0, 0},
    {"no-method", "int", NULL, "MLBridgeTestService/getNothing", NULL, 0, 0, 0, 0},
    {"no-field", "int", NULL, NULL, "request_x", 0, 0, 0, 0},
    {"float-feature-int-field", "int", NULL, NULL, NULL, MLBC_FLOAT, 0, 0, 0},
    {"real-field-int-advice", "float", NULL, NULL, NULL, 0, MLBC_INT32, 0, 0},
    {"out-of-range", "int", NULL, NULL, NULL, MLBC_INT64, MLBC_INT32, 0, 1e12},
    {"count", "vec_float", NULL, NULL, NULL, 0, 0, 3, 0},
    {"reply-out-of-range", "long", NULL, NULL, NULL, 0, MLBC_INT8, 0, 0},
};

static void put(void *d, int type, int i, double v)
{
    switch (type) {
    case MLBC_INT32: ((int32_t *)d)[i] = (int32_t)v; break;
    case MLBC_INT64: ((int64_t *)d)[i] = (int64_t)v; break;
    case MLBC_FLOAT: ((float *)d)[i] = (float)v; break;
    case MLBC_DOUBLE: ((double *)d)[i] = v; break;
    default: ((unsigned char *)d)[i] = (unsigned char)v; break;        /* bool */
    }
}

static double get(const void *a, int type, int i)
{
    switch (type) {
    case MLBC_INT32: return ((const int32_t *)a)[i];
    case MLBC_INT64: return (double)((const int64_t *)a)[i];
    case MLBC_FLOAT: return ((const float *)a)[i];
    case MLBC_DOUBLE: return ((const double *)a)[i];
    default: return ((const unsigned char *)a)[i];
    }
}

static const misfit *misfit_of(int argc, char **argv)
{
    for (size_t i = 0; argc > 5 && !strcmp(argv[4], "--case") &&
                       i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(cases[i].name, argv[5]))
            return &cases[i];
    return NULL;
}

static int wanted(int argc, char **argv, const char *label, const misfit *m)
{
    if (m)
        return !strcmp(m->label, label);
    if (argc <= 4)
        return 1;
    for (int i = 4; i < argc; i++)
        if (!strcmp(argv[i], label))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bridge_grpc_client HOST BASE_PORT DESC_DIR [LABEL...]\n");
        return 2;
    }
    const misfit *m = misfit_of(argc, argv);
    if (argc > 4 && !strcmp(argv[4], "--case") && !m) {
        fprintf(stderr, "bridge_grpc_client: no such case\n");
        return 2;
    }
    int rc = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0] && !rc; t++) {
        const datatype *g = &types[t];
        if (!wanted(argc, argv, g->label, m))
            continue;
        char address[300], desc[1024], name[64];
        snprintf(address, sizeof address, "%s:%d", argv[1], atoi(argv[2]) + g->number);
        snprintf(desc, sizeof desc, "%s/MLBridgeTest_%s.desc", argv[3], g->label);
        snprintf(name, sizeof name, "request_%s", g->label);
        int type = m && m->type ? m->type : g->type;
        int atype = m && m->advice_type ? m->advice_type : g->type;
        int replies = m && m->replies ? m->replies : g->replies;
        int64_t shape = g->count, rshape = replies;
        mlbc_tensor_spec f = mlbc_spec(m && m->feature ? m->feature : name, type, g->count > 1,
                                       &shape);
        mlbc_tensor_spec advice = mlbc_spec("action", atype, replies > 1, &rshape);
        mlbc_grpc_options o = {0};
        o.timeout_ms = 5000;
        o.token = getenv("BRIDGE_TOKEN");           /* the servers' shared secret, if any */
        char err[512];
        mlbc_runner *r = mlbc_runner_grpc_bridge(address, m && m->desc ? m->desc : desc,
                                                 m ? m->method : NULL, &f, 1, &advice, &o, err,
                                                 sizeof err);
        if (!r) {
            printf("%s open-error %s\n", g->label, err);
            return 2;
        }
        for (int i = 0; i < g->count; i++)
            put(mlbc_runner_input(r, 0), type, i, m && m->value ? m->value : g->value[i]);
        const void *a = mlbc_runner_evaluate(r);
        if (!a) {
            printf("%s error %s\n", g->label, mlbc_runner_error(r));
            rc = 3;
        } else {
            printf("%s reply", g->label);
            for (int i = 0; i < replies; i++)
                printf(" %.17g", get(a, atype, i));
            printf("\n");
            for (int i = 0; i < replies; i++)
                if (fabs(get(a, atype, i) - g->reply[i]) > 1e-5) {
                    printf("%s wrong: value %d is %.17g, not %.17g\n", g->label, i,
                           get(a, atype, i), g->reply[i]);
                    rc = 1;
                }
        }
        mlbc_runner_free(r);
    }
    return rc;
}
