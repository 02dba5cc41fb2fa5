/* compile.c - the pipeline of compiler/main.c for the fuzz targets: the same passes in the
 * same order, the output kept in memory, then written to /dev/null as OUT.c with embedded
 * weights and as a weights file (the weights' packing runs; renaming files does not). */
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "mlbc.h"


/* Kept out of the setjmp frame: the locals of fuzz_compile that change after setjmp would be
 * indeterminate after the longjmp; these live in static storage instead. */
static Output out;
static char *src;

static void pipeline(const uint8_t *data, size_t size, int text)
{
    src = malloc(size + 1);             /* the text lexer wants a copy it may keep */
    memcpy(src, data, size);
    src[size] = 0;
    Onnx__ModelProto *proto;
    if (text) {
        text_lex_reset();
        proto = parse_text(src, size);
    } else {
        proto = load_binary(src, size);
    }
    Member m = {.path = "fuzz"};
    m.m = import_model(proto);
    Graph *g = m.m->g;
    bind_ops(g);
    infer_graph(g);
    remove_dead(g);
    if (fuse_graph(g))
        remove_dead(g);
    m.scratch = plan_memory(g);
    Options opt = {.name = "fuzz"};
    emit_models(&m, 1, g, &opt, &out, "fuzz.h");
    static FILE *null;                  /* opened once: a longjmp out of a writer leaks none */
    if (!null && !(null = fopen("/dev/null", "wb")))
        abort();
    write_c(null, &out, &opt);
    write_weights_file(null, &out, &opt);
}

int fuzz_compile(const uint8_t *data, size_t size, int text)
{
    static jmp_buf escape;
    int rejected = 0;
    fuzz_quiet = getenv("MLBC_FUZZ_VERBOSE") == NULL;   /* set it to see why a model died */
    diag_file = "fuzz";
    fuzz_escape = &escape;
    if (setjmp(escape))
        rejected = 1;
    else
        pipeline(data, size, text);
    fuzz_escape = NULL;
    memset(&out, 0, sizeof out);        /* its buffers are chained blocks (util.c) */
    free(src);
    src = NULL;
    fuzz_release();
    return rejected;
}
