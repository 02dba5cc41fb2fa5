/* pipe_logtool - the C side of the log cross-checks in tests/test_pipe.py.
 *
 *   pipe_logtool write FILE   writes a fixed training log with the C logger (mlbc_logger_*):
 *       features a int64[1], b float[2,3], d uint8[4]; score reward float[1];
 *       contexts "f0", "empty", "f1" (the middle one has no observation: adjacent contexts),
 *       observations k = 0..4 with a = 100 + k, b[j] = k + 0.25 j, d = {10, 10, k, 255};
 *       outcome 0.5 * k after every observation except k = 3 (an observation without one).
 *       Contexts: k 0..1 in "f0", then "empty", then k 2..4 in "f1".
 *   pipe_logtool read FILE    reads any log with the C reader (mlbc_log_*) and prints
 *       "header N score|- advice|-", "context NAME", "observation ID v v ...", "outcome ID v".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc_runtime.h"

static int write_log(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    int64_t one[1] = {1}, b_shape[2] = {2, 3}, d_shape[1] = {4};
    mlbc_tensor_spec feats[3] = {mlbc_spec("a", MLBC_INT64, 1, one),
                                 mlbc_spec("b", MLBC_FLOAT, 2, b_shape),
                                 mlbc_spec("d", MLBC_UINT8, 1, d_shape)};
    mlbc_tensor_spec reward = mlbc_spec("reward", MLBC_FLOAT, 1, one);
    mlbc_logger *lg = mlbc_logger_open(f, feats, 3, &reward, NULL);
    if (!lg) {
        fclose(f);
        return 1;
    }
    int bad = mlbc_logger_context(lg, "f0");
    for (int k = 0; k < 5; k++) {
        if (k == 2)
            bad |= mlbc_logger_context(lg, "empty") | mlbc_logger_context(lg, "f1");
        int64_t a = 100 + k;
        float b[6];
        uint8_t d[4] = {10, 10, (uint8_t)k, 255};
        for (int j = 0; j < 6; j++)
            b[j] = (float)k + 0.25f * (float)j;
        const void *t[3] = {&a, b, d};
        bad |= mlbc_logger_observation(lg, t);
        if (k != 3) {
            float r = 0.5f * (float)k;
            bad |= mlbc_logger_outcome(lg, &r);
        }
    }
    bad |= mlbc_logger_close(lg);
    return fclose(f) || bad ? 1 : 0;
}

static void print_tensor(const mlbc_tensor_spec *s, const void *data)
{
    int64_t n = mlbc_spec_count(s);
    for (int64_t i = 0; i < n; i++) {
        switch (s->type) {
        case MLBC_FLOAT: printf(" %.9g", ((const float *)data)[i]); break;
        case MLBC_DOUBLE: printf(" %.17g", ((const double *)data)[i]); break;
        case MLBC_INT64: printf(" %lld", (long long)((const int64_t *)data)[i]); break;
        case MLBC_INT32: printf(" %d", ((const int32_t *)data)[i]); break;
        case MLBC_UINT8: printf(" %u", ((const uint8_t *)data)[i]); break;
        default: printf(" ?"); break;
        }
    }
}

static int read_log(const char *path)
{
    char err[256] = "";
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    mlbc_log_reader *r = mlbc_log_open(f, err, sizeof err);
    if (!r) {
        printf("error %s\n", err);
        fclose(f);
        return 2;
    }
    const mlbc_tensor_spec *score = mlbc_log_score(r), *advice = mlbc_log_advice(r);
    printf("header %d %s %s\n", mlbc_log_num_features(r), score ? score->name : "-",
           advice ? advice->name : "-");
    mlbc_log_record rec;
    int rc;
    while ((rc = mlbc_log_next(r, &rec)) > 0) {
        if (rec.kind == MLBC_RECORD_CONTEXT) {
            printf("context %s\n", rec.context);
        } else if (rec.kind == MLBC_RECORD_OBSERVATION) {
            printf("observation %lld", (long long)rec.id);
            for (int i = 0; i < mlbc_log_num_features(r); i++)
                print_tensor(mlbc_log_feature(r, i), rec.tensors[i]);
            printf("\n");
        } else {
            printf("outcome %lld", (long long)rec.id);
            print_tensor(score, rec.tensors[0]);
            printf("\n");
        }
    }
    if (rc < 0)
        printf("error %s\n", mlbc_log_error(r));
    mlbc_log_close(r);
    fclose(f);
    return rc < 0 ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "write"))
        return write_log(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "read"))
        return read_log(argv[2]);
    fprintf(stderr, "usage: pipe_logtool write|read FILE\n");
    return 64;
}
