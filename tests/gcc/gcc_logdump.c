/* gcc_logdump.c - prints a training log of the GCC plugin with mlbc's C reader
 * (mlbc_log_open/next), in the same text form as tests/test_gcc.py prints it from the Python
 * reader (mlbc_gym.LogReader):
 *
 *     feature NAME TYPE [SHAPE]          one line per feature of the header
 *     context NAME
 *     observation ID V0 V1 ...           int64_t features as decimal numbers
 *
 *   gcc_logdump FILE      (exit 1 with the reader's error on a bad log) */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mlbc_runtime.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gcc_logdump FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    char err[512] = "";
    mlbc_log_reader *r = mlbc_log_open(f, err, sizeof err);
    if (!r) {
        fprintf(stderr, "gcc_logdump: %s: %s\n", argv[1], err);
        fclose(f);
        return 1;
    }
    int n = mlbc_log_num_features(r);
    for (int i = 0; i < n; i++) {
        const mlbc_tensor_spec *s = mlbc_log_feature(r, i);
        printf("feature %s %s [", s->name, mlbc_type_llvm_name(s->type));
        for (int d = 0; d < s->rank; d++)
            printf("%s%lld", d ? "," : "", (long long)s->shape[d]);
        printf("]\n");
    }
    if (mlbc_log_score(r))
        printf("score %s\n", mlbc_log_score(r)->name);
    mlbc_log_record rec;
    int k;
    while ((k = mlbc_log_next(r, &rec)) == 1) {
        if (rec.kind == MLBC_RECORD_CONTEXT) {
            printf("context %s\n", rec.context);
        } else if (rec.kind == MLBC_RECORD_OBSERVATION) {
            printf("observation %lld", (long long)rec.id);
            for (int i = 0; i < n; i++) {
                const mlbc_tensor_spec *s = mlbc_log_feature(r, i);
                if (s->type != MLBC_INT64 || mlbc_spec_count(s) != 1) {
                    printf(" ?");
                    continue;
                }
                int64_t v;
                memcpy(&v, rec.tensors[i], sizeof v);
                printf(" %" PRId64, v);
            }
            putchar('\n');
        } else {
            printf("record %d\n", rec.kind);
        }
    }
    int rc = 0;
    if (k < 0) {
        fprintf(stderr, "gcc_logdump: %s: %s\n", argv[1], mlbc_log_error(r));
        rc = 1;
    }
    mlbc_log_close(r);
    fclose(f);
    return rc;
}
