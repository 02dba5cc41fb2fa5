/* driver.c - runs any generated model through its descriptor: reads argument i from
 * DIR/in<i>.bin, runs, writes result i to DIR/out<i>.bin. Built with -include MODEL.h and
 * -DMODEL_DESC=<name>_desc. Exit status: 0 ok, 3 run() failed, 4 I/O error. */
#include <stdio.h>
#include <stdlib.h>

extern const mlbc_model_desc MODEL_DESC;

static int transfer(const char *dir, const char *kind, int i, void *p, long bytes, int out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%d.bin", dir, kind, i);
    FILE *f = fopen(path, out ? "wb" : "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    long n = bytes ? (long)(out ? fwrite(p, 1, bytes, f) : fread(p, 1, bytes, f)) : 0;
    fclose(f);
    if (n != bytes) {
        fprintf(stderr, "%s: expected %ld bytes, got %ld\n", path, bytes, n);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const mlbc_model_desc *d = &MODEL_DESC;
    if (argc != 2) {
        fprintf(stderr, "usage: driver DIR\n");
        return 4;
    }
    void *ctx = malloc(d->ctx_size);
    if (!ctx)
        return 4;
    d->init(ctx);
    for (int i = 0; i < d->num_args; i++)
        if (transfer(argv[1], "in", i, d->arg_data(ctx, i), (long)d->args[i].bytes, 0))
            return 4;
    int status = d->run(ctx);
    if (status) {
        fprintf(stderr, "run returned %d\n", status);
        return 3;
    }
    for (int i = 0; i < d->num_results; i++)
        if (transfer(argv[1], "out", i, d->result_data(ctx, i), (long)d->results[i].bytes, 1))
            return 4;
    free(ctx);
    return 0;
}
