/* logdump.c - reads training logs / captured interactive streams with mlbc's reader
 * (mlbc_log_open/next) and prints the canonical dump of log_scenarios.h.
 *   logdump FILE      (exit 1 with the reader's error on a bad log) */
#include <stdio.h>

#include "mlbc_runtime.h"

static void print_spec(const char *kind, const mlbc_tensor_spec *s)
{
    printf("%s %s %s [", kind, s->name, mlbc_type_llvm_name(s->type));
    for (int i = 0; i < s->rank; i++) printf("%s%lld", i ? "," : "", (long long)s->shape[i]);
    printf("]\n");
}

static void print_hex(const void *p, size_t n)
{
    putchar(' ');
    if (!n) putchar('-');
    for (size_t i = 0; i < n; i++) printf("%02x", ((const unsigned char *)p)[i]);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: logdump FILE\n");
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
        fprintf(stderr, "logdump: %s: %s\n", argv[1], err);
        return 1;
    }
    int n = mlbc_log_num_features(r);
    for (int i = 0; i < n; i++) print_spec("feature", mlbc_log_feature(r, i));
    const mlbc_tensor_spec *score = mlbc_log_score(r), *advice = mlbc_log_advice(r);
    if (score) print_spec("score", score);
    if (advice) print_spec("advice", advice);
    mlbc_log_record rec;
    int k;
    while ((k = mlbc_log_next(r, &rec)) == 1) {
        if (rec.kind == MLBC_RECORD_CONTEXT) {
            printf("context");
            size_t len = 0;
            while (rec.context[len]) len++;
            print_hex(rec.context, len);
        } else if (rec.kind == MLBC_RECORD_OBSERVATION) {
            printf("observation %lld", (long long)rec.id);
            for (int i = 0; i < n; i++)
                print_hex(rec.tensors[i], mlbc_spec_bytes(mlbc_log_feature(r, i)));
        } else if (rec.kind == MLBC_RECORD_OUTCOME) {
            printf("outcome %lld", (long long)rec.id);
            print_hex(rec.tensors[0], mlbc_spec_bytes(score));
        } else {
            printf("unknown-record %d", rec.kind);
        }
        putchar('\n');
    }
    int rc = 0;
    if (k < 0) {
        fprintf(stderr, "logdump: %s: %s\n", argv[1], mlbc_log_error(r));
        rc = 1;
    }
    mlbc_log_close(r);
    fclose(f);
    return rc;
}
