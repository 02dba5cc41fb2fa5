/* compile.c - the pipeline of compiler/main.c for the fuzz targets: the same passes in the
 * same order, the output kept in memory, then written to /dev/null as OUT.c with embedded
 * weights and as a weights file (the weights' packing runs; renaming files does not). */
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "mlbc.h"


/* Kept out of the setjmp frame: the locals of guarded() that change after setjmp would be
 * indeterminate after the longjmp; these live in static storage instead. */
static Output out;
static char *src;

/* PROTO through the passes and the emitter as main.c runs them; with a SELECTOR, as the one
 * model of a composite (`mlbc SELECTOR=MODEL`). SEE, if any, reads the text. */
static void compile(Onnx__ModelProto *proto, const char *selector, FuzzSee see)
{
    Member m = {.path = "fuzz", .selector = selector};
    m.m = import_model(proto);
    Graph *g = m.m->g;
    bind_ops(g);
    infer_graph(g);
    remove_dead(g);
    if (fuse_graph(g))
        remove_dead(g);
    m.scratch = plan_memory(g);
    Options opt = {.name = "fuzz"};
    Graph *api = selector ? composite_interface(&m, 1, opt.name) : g;
    emit_models(&m, 1, api, &opt, &out, "fuzz.h");
    if (see)
        see(out.h.p, out.c_head.p, out.c_tail.p);
    static FILE *null;                  /* opened once: a longjmp out of a writer leaks none */
    if (!null && !(null = fopen("/dev/null", "wb")))
        abort();
    write_c(null, &out, &opt);
    write_weights_file(null, &out, &opt);
}

static const uint8_t *in_data;
static size_t in_size;
static int in_text;

static void from_bytes(void)
{
    src = malloc(in_size + 1);          /* the text lexer wants a copy it may keep */
    memcpy(src, in_data, in_size);
    src[in_size] = 0;
    if (in_text)
        text_lex_reset();
    compile(in_text ? parse_text(src, in_size) : load_binary(src, in_size), NULL, NULL);
}

static FuzzMake in_make;
static FuzzSee in_see;

static void from_maker(void)
{
    const char *selector = NULL;
    void *proto = in_make(&selector);
    if (proto)
        compile(proto, selector, in_see);
}

/* BODY with die() caught; everything it allocated is freed after. */
static int guarded(void (*body)(void))
{
    static jmp_buf escape;
    int rejected = 0;
    fuzz_quiet = getenv("MLBC_FUZZ_VERBOSE") == NULL;   /* set it to see why a model died */
    diag_file = "fuzz";
    fuzz_escape = &escape;
    if (setjmp(escape))
        rejected = 1;
    else
        body();
    fuzz_escape = NULL;
    memset(&out, 0, sizeof out);        /* its buffers are chained blocks (util.c) */
    free(src);
    src = NULL;
    fuzz_release();
    return rejected;
}

int fuzz_compile(const uint8_t *data, size_t size, int text)
{
    in_data = data, in_size = size, in_text = text;
    return guarded(from_bytes);
}

int fuzz_compile_made(FuzzMake make, FuzzSee see)
{
    in_make = make, in_see = see;
    return guarded(from_maker);
}
