/* model_main.c - times one generated model through its descriptor. Built like
 * tests/driver.c: -include MODEL.h -DMODEL_DESC=<name>_desc, linked with harness.c. Every
 * argument gets deterministic pseudo-random data of its element type; integers are small
 * (0..3) so that they stay valid as counts, flags or indices.
 *
 * With the arguments "--io DIR" (after harness.c's ITERS BATCHES, e.g. "1 0 --io DIR") it
 * also writes argument i to DIR/in<i>.bin, runs once and writes result i to DIR/out<i>.bin,
 * raw bytes: run.py feeds the same inputs to ONNX Runtime and compares the outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

extern const mlbc_model_desc MODEL_DESC;

static void fill(const mlbc_tensor_desc *t, void *p)
{
    for (int64_t i = 0; i < t->count; i++) {
        uint32_t r = bench_rand();
        float f = bench_randf();
        switch (t->dtype) {
        case 1: ((float *)p)[i] = f; break;
        case 11: ((double *)p)[i] = f; break;
        case 9: ((uint8_t *)p)[i] = r & 1; break;
        case 2: ((uint8_t *)p)[i] = r & 3; break;
        case 3: ((int8_t *)p)[i] = r & 3; break;
        case 5: ((int16_t *)p)[i] = r & 3; break;
        case 6: ((int32_t *)p)[i] = r & 3; break;
        case 7: ((int64_t *)p)[i] = r & 3; break;
        case 12: ((uint32_t *)p)[i] = r & 3; break;
        case 13: ((uint64_t *)p)[i] = r & 3; break;
        case 4: ((uint16_t *)p)[i] = r & 3; break;
        /* 16-bit floats as raw bits: magnitude in [1/4, 2), random sign */
        case 10: ((uint16_t *)p)[i] = (r & 0x8000) | (13 + r % 3) << 10 | (r >> 16 & 0x3ff); break;
        case 16: ((uint16_t *)p)[i] = (r & 0x8000) | (125 + r % 3) << 7 | (r >> 16 & 0x7f); break;
        }
    }
}

/* Writes BYTES bytes from P to DIR/KIND<I>.bin; 0 on success. */
static int dump(const char *dir, const char *kind, int i, const void *p, int64_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%d.bin", dir, kind, i);
    FILE *f = fopen(path, "wb");
    int ok = f && (bytes == 0 || fwrite(p, (size_t)bytes, 1, f) == 1);
    if (f && fclose(f))
        ok = 0;
    if (!ok)
        perror(path);
    return !ok;
}

void *bench_setup(int argc, char **argv)
{
    const mlbc_model_desc *d = &MODEL_DESC;
    void *ctx = malloc(d->ctx_size);
    if (!ctx)
        return NULL;
    d->init(ctx);
    for (int i = 0; i < d->num_args; i++)
        fill(&d->args[i], d->arg_data(ctx, i));
    if (argc == 2 && !strcmp(argv[0], "--io")) {
        for (int i = 0; i < d->num_args; i++)
            if (dump(argv[1], "in", i, d->arg_data(ctx, i), d->args[i].bytes))
                return NULL;
        if (d->run(ctx))
            return NULL;
        for (int i = 0; i < d->num_results; i++)
            if (dump(argv[1], "out", i, d->result_data(ctx, i), d->results[i].bytes))
                return NULL;
    } else if (argc) {
        return NULL;
    }
    return ctx;
}

int bench_step(void *ctx)
{
    return MODEL_DESC.run(ctx);
}
