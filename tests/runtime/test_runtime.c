/* test_runtime.c - tests of libmlbc_rt, linked with two models compiled by mlbc:
 * models/inliner.onnx (as inliner.c) and tests/runtime/selector.onnxtxt (as selector.c),
 * and with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (allocations are counted).
 * Driven by tests/test_runtime.py:
 *
 *   test_runtime checks SO         the built-in checks (SO: selector.so, the shared-object
 *                                  runner's model); "ok"/"FAIL" lines, then "N passed, M failed"
 *   test_runtime compare FILE N [ONNX]  N inliner samples (38 int64 each, graph order):
 *                                  prints the release runner's and the generated code's
 *                                  decision (and the ONNX runner's over ONNX)
 *   test_runtime race MODEL CACHE  compiles MODEL into CACHE and runs it (ONNX runner race)
 *   test_runtime read FILE         dumps a training log or stream; "error: ..." and status 1
 *   test_runtime write FILE        writes the log described by the script on stdin
 *   test_runtime abuse FILE N      reads every prefix of FILE and N random mutations of it
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inliner.h"
#include "internal.h"
#include "json.h"
#include "selector.h"

static int passed, failed;

/* Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc: counts the allocations made
 * by the runtime and the models (libc's own are not seen). */
static long allocations;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
    allocations++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    allocations++;
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    allocations++;
    return __real_realloc(p, n);
}

#define CHECK(cond) check((cond), #cond, __LINE__)

static int check(int ok, const char *what, int line)
{
    if (ok)
        passed++;
    else {
        failed++;
        printf("FAIL test_runtime.c:%d: %s\n", line, what);
    }
    return ok;
}

static int contains(const char *s, const char *part)
{
    return s && strstr(s, part) != NULL;
}

/* ---- specs -------------------------------------------------------------------------- */

static void test_specs(void)
{
    static const struct { int type; size_t size; const char *name; } t[] = {
        {MLBC_FLOAT, 4, "float"}, {MLBC_DOUBLE, 8, "double"}, {MLBC_INT8, 1, "int8_t"},
        {MLBC_UINT8, 1, "uint8_t"}, {MLBC_INT16, 2, "int16_t"}, {MLBC_UINT16, 2, "uint16_t"},
        {MLBC_INT32, 4, "int32_t"}, {MLBC_UINT32, 4, "uint32_t"}, {MLBC_INT64, 8, "int64_t"},
        {MLBC_UINT64, 8, "uint64_t"}};
    char long_name[300], err[256];
    int64_t shape[3] = {2, 3, 4}, huge[2] = {INT64_MAX / 2, 3}, neg[1] = {-1};
    int64_t deep[MLBC_SPEC_MAX_RANK + 1] = {1};
    mlbc_tensor_spec s;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        CHECK(mlbc_type_size(t[i].type) == t[i].size);
        CHECK(!strcmp(mlbc_type_llvm_name(t[i].type), t[i].name));
        CHECK(mlbc_type_from_llvm_name(t[i].name) == t[i].type);
    }
    CHECK(mlbc_type_size(MLBC_BOOL) == 1 && !mlbc_type_llvm_name(MLBC_BOOL));
    CHECK(!mlbc_type_size(0) && !mlbc_type_size(10) && !mlbc_type_llvm_name(99));
    CHECK(!mlbc_type_from_llvm_name("int") && !mlbc_type_from_llvm_name(NULL));
    s = mlbc_spec("x", MLBC_FLOAT, 3, shape);
    CHECK(mlbc_spec_count(&s) == 24 && mlbc_spec_bytes(&s) == 96 && !spec_check(&s, NULL, 0));
    s = mlbc_spec("scalar", MLBC_INT64, 0, NULL);
    CHECK(mlbc_spec_count(&s) == 1 && mlbc_spec_bytes(&s) == 8);
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    s = mlbc_spec(long_name, MLBC_INT8, 0, NULL);
    CHECK(strlen(s.name) == MLBC_SPEC_MAX_NAME - 1);
    s = mlbc_spec("big", MLBC_INT64, 2, huge);
    CHECK(mlbc_spec_count(&s) == -1 && mlbc_spec_bytes(&s) == 0);
    CHECK(spec_check(&s, err, sizeof err) && contains(err, "'big'"));
    s = mlbc_spec("neg", MLBC_INT64, 1, neg);
    CHECK(spec_check(&s, err, sizeof err) && contains(err, "'neg'"));
    s = mlbc_spec("deep", MLBC_INT64, MLBC_SPEC_MAX_RANK + 1, deep);
    CHECK(spec_check(&s, err, sizeof err) && contains(err, "rank"));
    s = mlbc_spec("odd", 10, 0, NULL);
    CHECK(spec_check(&s, err, sizeof err) && contains(err, "type"));
}

static void hex(char *out, const unsigned char *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_md5(void)
{
    static const char *const v[][2] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
        {"0123456789012345678901234567890123456789012345678901234",     /* 55 bytes */
         "6e7a4fc92eb1c3f6e652425bcc8d44b5"},
        {"01234567890123456789012345678901234567890123456789012345",    /* 56 bytes */
         "8af270b2847610e742b0791b53648c09"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        unsigned char d[16];
        char h[33];
        md5(v[i][0], strlen(v[i][0]), d);
        hex(h, d, 16);
        if (!CHECK(!strcmp(h, v[i][1])))
            printf("  md5(\"%s\") = %s\n", v[i][0], h);
    }
}

/* ---- release runner: the inliner ------------------------------------------------------ */

static int inliner_specs(mlbc_tensor_spec *specs)
{
    for (int i = 0; i < inliner_desc.num_args; i++) {
        const mlbc_tensor_desc *a = &inliner_desc.args[i];
        specs[i] = mlbc_spec(a->name, a->dtype, a->rank, a->shape);
    }
    return inliner_desc.num_args;
}

static const int64_t one[1] = {1};

static mlbc_tensor_spec decision_spec(void)
{
    return mlbc_spec("inlining_decision", MLBC_INT64, 1, one);
}

/* A deterministic feature vector: small values, some zero. */
static void fill_features(int64_t *v, int n, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (seed >> 16) % 7 == 0 ? 0 : (int64_t)((seed >> 8) % 200) - 20;
    }
}

static int64_t direct_decision(const int64_t *v)
{
    static inliner_ctx ctx;
    int64_t out = -1;
    inliner_init(&ctx);
    for (int i = 0; i < inliner_NUM_ARGS; i++)
        memcpy(inliner_arg_data(&ctx, i), &v[i], 8);
    if (inliner_run(&ctx))
        return -2;
    memcpy(&out, inliner_result_data(&ctx, 0), 8);
    return out;
}

static void test_release_inliner(void)
{
    mlbc_tensor_spec specs[64], advice = decision_spec();
    char err[256] = "";
    int n = inliner_specs(specs), agree = 0;
    mlbc_runner *r = mlbc_runner_release(&inliner_desc, specs, n, &advice, NULL, err, sizeof err);
    void *first[64];
    if (!CHECK(r != NULL)) {
        printf("  %s\n", err);
        return;
    }
    CHECK(mlbc_runner_num_inputs(r) == 38 && mlbc_runner_input_index(r, "callee_users") == 35);
    CHECK(mlbc_runner_input_index(r, "nope") == -1 && !mlbc_runner_input(r, 38));
    CHECK(!mlbc_runner_input(r, -1) && !mlbc_runner_input_spec(r, 38));
    CHECK(!strcmp(mlbc_runner_advice_spec(r)->name, "inlining_decision"));
    for (int i = 0; i < n; i++) {
        first[i] = mlbc_runner_input(r, i);
        CHECK(mlbc_runner_input_bound(r, i) == 1);
    }
    CHECK(allocations > 0);      /* construction allocates, and the counting works */
    for (unsigned seed = 1; seed <= 200; seed++) {
        int64_t v[38];
        const int64_t *a;
        long before;
        fill_features(v, 38, seed);
        for (int i = 0; i < n; i++)
            memcpy(mlbc_runner_input(r, i), &v[i], 8);
        before = allocations;
        a = mlbc_runner_evaluate(r);
        agree += a && allocations == before && *a == direct_decision(v)
                 && !memcmp(mlbc_runner_input(r, 5), &v[5], 8);
    }
    CHECK(agree == 200);   /* no allocation in evaluate, and it leaves the inputs alone */
    for (int i = 0; i < n; i++)
        agree += mlbc_runner_input(r, i) == first[i];
    CHECK(agree == 238);   /* stable buffers */
    CHECK(!strcmp(mlbc_runner_error(r), "") && mlbc_runner_set_context(r, "f") == 0);
    mlbc_runner_free(r);
}

static void test_release_binding(void)
{
    mlbc_tensor_spec specs[64], advice = decision_spec();
    mlbc_release_options feed = {"feed_", "fetch_", NULL}, sel = {NULL, NULL, "size"};
    char err[256];
    int n = inliner_specs(specs);
    int64_t two[1] = {2}, zeros[38] = {0};
    const int64_t *a;
    mlbc_runner *r;

    /* A newer compiler's extra feature gets a zeroed runner-owned buffer. */
    specs[n] = mlbc_spec("future_feature", MLBC_FLOAT, 1, two);
    r = mlbc_runner_release(&inliner_desc, specs, n + 1, &advice, NULL, err, sizeof err);
    if (CHECK(r != NULL)) {
        float *f = mlbc_runner_input(r, n);
        CHECK(f && f[0] == 0 && f[1] == 0 && !mlbc_runner_input_bound(r, n));
        CHECK(mlbc_runner_input_index(r, "future_feature") == n);
        f[0] = 1e30f;
        a = mlbc_runner_evaluate(r);
        CHECK(a && *a == direct_decision(zeros));
    }
    mlbc_runner_free(r);

    /* An older compiler's subset: the model's other inputs keep their initial zeros. */
    r = mlbc_runner_release(&inliner_desc, specs + 20, 5, &advice, NULL, err, sizeof err);
    if (CHECK(r != NULL)) {
        int64_t v[38] = {0};
        v[24] = 45;
        *(int64_t *)mlbc_runner_input(r, 4) = 45;     /* specs[24] = threshold */
        a = mlbc_runner_evaluate(r);
        CHECK(a && *a == direct_decision(v));
    }
    mlbc_runner_free(r);

    /* feed_/fetch_ prefixes: the inliner's inputs have plain names, which bind next. */
    r = mlbc_runner_release(&inliner_desc, specs, n, &advice, &feed, err, sizeof err);
    CHECK(r && mlbc_runner_input_bound(r, 0) && mlbc_runner_input_bound(r, 37));
    mlbc_runner_free(r);

    /* Type and element-count mismatches name the feature. */
    specs[3].type = MLBC_INT32;
    r = mlbc_runner_release(&inliner_desc, specs, n, &advice, NULL, err, sizeof err);
    CHECK(!r && contains(err, "'call_penalty'") && contains(err, "int32_t"));
    specs[3].type = MLBC_INT64;
    specs[7].shape[0] = 2;
    r = mlbc_runner_release(&inliner_desc, specs, n, &advice, NULL, err, sizeof err);
    CHECK(!r && contains(err, "'indirect_call_penalty'") && contains(err, "elements"));
    specs[7].shape[0] = 1;

    /* The advice: name, type and size checked against the model's result. */
    advice = mlbc_spec("inlining_advice", MLBC_INT64, 1, one);
    r = mlbc_runner_release(&inliner_desc, specs, n, &advice, &feed, err, sizeof err);
    CHECK(!r && contains(err, "fetch_inlining_advice") && contains(err, "'inlining_advice'"));
    advice = mlbc_spec("inlining_decision", MLBC_FLOAT, 1, one);
    r = mlbc_runner_release(&inliner_desc, specs, n, &advice, NULL, err, sizeof err);
    CHECK(!r && contains(err, "advice 'inlining_decision'") && contains(err, "float"));
    advice = mlbc_spec("inlining_decision", MLBC_INT64, 1, two);
    r = mlbc_runner_release(&inliner_desc, specs, n, &advice, NULL, err, sizeof err);
    CHECK(!r && contains(err, "advice"));
    advice = decision_spec();

    /* A selector for a model without one: LLVM's message. */
    r = mlbc_runner_release(&inliner_desc, specs, n, &advice, &sel, err, sizeof err);
    CHECK(!r && !strcmp(err, "A model selector was specified but the underlying model does "
                             "not expose a model_selector input"));

    /* Bad arguments are errors, not crashes. */
    r = mlbc_runner_release(&inliner_desc, specs, n, NULL, NULL, err, sizeof err);
    CHECK(!r && contains(err, "advice"));
    r = mlbc_runner_release(NULL, specs, n, &advice, NULL, err, sizeof err);
    CHECK(!r && contains(err, "descriptor"));
    r = mlbc_runner_release(&inliner_desc, NULL, 3, &advice, NULL, NULL, 0);
    CHECK(!r);
    CHECK(!mlbc_runner_evaluate(NULL) && mlbc_runner_set_context(NULL, "x") == -1);
    mlbc_runner_free(NULL);
}

/* ---- release runner: the selector model (feed_/fetch_, model_selector, run-time check) -- */

typedef mlbc_runner *(*make_runner)(const char *symbol, const mlbc_tensor_spec *f, int n,
                                    const mlbc_tensor_spec *advice,
                                    const mlbc_release_options *o, char *err, size_t errlen);

static const char *so_path;

static mlbc_runner *make_release(const char *symbol, const mlbc_tensor_spec *f, int n,
                                 const mlbc_tensor_spec *advice, const mlbc_release_options *o,
                                 char *err, size_t errlen)
{
    return mlbc_runner_release(&selector_desc, f, n, advice, o, err, errlen);
}

static mlbc_runner *make_so(const char *symbol, const mlbc_tensor_spec *f, int n,
                            const mlbc_tensor_spec *advice, const mlbc_release_options *o,
                            char *err, size_t errlen)
{
    return mlbc_runner_shared_object(so_path, symbol, f, n, advice, o, err, errlen);
}

static void selector_specs(mlbc_tensor_spec *f)
{
    const int64_t two[1] = {2};
    f[0] = mlbc_spec("a", MLBC_FLOAT, 1, two);
    f[1] = mlbc_spec("b", MLBC_INT64, 0, NULL);
}

static void test_selector(make_runner make, const char *symbol)
{
    static const char *const required = "A model selector was not specified but the "
        "underlying model requires selecting one because it exposes a model_selector input";
    mlbc_tensor_spec f[2], decision = mlbc_spec("decision", MLBC_INT64, 1, one);
    const int64_t two[1] = {2};
    mlbc_tensor_spec echo = mlbc_spec("selector", MLBC_UINT64, 1, two);
    mlbc_tensor_spec step = mlbc_spec("step", MLBC_INT32, 1, one);
    mlbc_release_options opt = {"feed_", "fetch_", "size"}, none = {"feed_", "fetch_", NULL};
    char err[256] = "";
    const uint64_t *sel;
    const int64_t *a;
    const int32_t *s;
    float *in_a;
    int64_t *in_b;
    long before;
    mlbc_runner *r;
    selector_specs(f);

    r = make(symbol, f, 2, &echo, &opt, err, sizeof err);
    if (!CHECK(r != NULL))
        printf("  %s\n", err);
    sel = mlbc_runner_evaluate(r);   /* MD5("size"): LLVM's {high, low} */
    CHECK(sel && sel[0] == 0x241a5c3959280a66ull && sel[1] == 0x9bd7295bb760bdf7ull);
    mlbc_runner_free(r);

    r = make(symbol, f, 2, &echo, &none, err, sizeof err);
    CHECK(!r && !strcmp(err, required));
    none.model_selector = "";
    r = make(symbol, f, 2, &echo, &none, err, sizeof err);
    CHECK(!r && !strcmp(err, required));

    /* An input the compiler never fills keeps the value init gave it. */
    r = make(symbol, f, 2, &step, &opt, err, sizeof err);
    s = mlbc_runner_evaluate(r);
    CHECK(s && *s == 0);
    mlbc_runner_free(r);

    r = make(symbol, f, 2, &decision, &opt, err, sizeof err);
    if (!CHECK(r != NULL))
        return;
    in_a = mlbc_runner_input(r, 0);
    in_b = mlbc_runner_input(r, 1);
    in_a[0] = 0.25f;
    in_a[1] = 0.75f;
    *in_b = 1;
    before = allocations;
    a = mlbc_runner_evaluate(r);
    CHECK(a && *a == 1 && allocations == before);
    *in_b = 0;
    a = mlbc_runner_evaluate(r);
    CHECK(a && *a == 0);
    /* run() fails (index out of range): NULL and an error; not sticky. */
    *in_b = 5;
    CHECK(!mlbc_runner_evaluate(r) && contains(mlbc_runner_error(r), "selector")
          && contains(mlbc_runner_error(r), "run-time check"));
    *in_b = -1;  /* Gather counts from the end */
    a = mlbc_runner_evaluate(r);
    CHECK(a && *a == 1 && !strcmp(mlbc_runner_error(r), ""));
    mlbc_runner_free(r);
}

static void test_shared_object(void)
{
    mlbc_tensor_spec f[2], decision = mlbc_spec("decision", MLBC_INT64, 1, one);
    mlbc_release_options opt = {"feed_", "fetch_", "size"};
    char err[256];
    mlbc_runner *r;
    selector_specs(f);
    test_selector(make_so, NULL);                 /* symbol from the file name */
    test_selector(make_so, "selector_desc");
    /* A plain file name is a file in the current directory (test_runtime.py runs the
     * checks there), not a library to search for. */
    r = mlbc_runner_shared_object(strrchr(so_path, '/') ? strrchr(so_path, '/') + 1 : so_path,
                                  NULL, f, 2, &decision, &opt, err, sizeof err);
    if (!CHECK(r != NULL))
        printf("  %s\n", err);
    mlbc_runner_free(r);
    r = mlbc_runner_shared_object(so_path, "other_desc", f, 2, &decision, &opt, err, sizeof err);
    CHECK(!r && contains(err, "other_desc") && contains(err, so_path));
    r = mlbc_runner_shared_object("no/such/policy.so", NULL, f, 2, &decision, &opt, err,
                                  sizeof err);
    CHECK(!r && contains(err, "no/such/policy.so") && contains(err, "No such file"));
    r = mlbc_runner_shared_object(NULL, NULL, f, 2, &decision, &opt, err, sizeof err);
    CHECK(!r && contains(err, "shared object"));
}

/* ---- the ONNX runner: models compiled at run time into a cache ------------------------- */

/* The checks run in test_runtime.py's work folder, which holds copies of selector.onnxtxt and
 * inliner.onnx and an empty folder onnx-cache; MLBC points at build/mlbc and MLBC_CACHE_DIR
 * at a cache shared by the runs (for the defaults). */
#define ONNX_CACHE "onnx-cache"

static mlbc_runner *make_onnx(const char *symbol, const mlbc_tensor_spec *f, int n,
                              const mlbc_tensor_spec *advice, const mlbc_release_options *o,
                              char *err, size_t errlen)
{
    mlbc_onnx_options oo = {NULL, NULL, ONNX_CACHE, NULL, NULL, NULL};
    return mlbc_runner_onnx("selector.onnxtxt", &oo, f, n, advice, o, err, errlen);
}

/* An .onnxtxt path where a .so is expected: compiled with the defaults. */
static mlbc_runner *make_onnx_as_so(const char *symbol, const mlbc_tensor_spec *f, int n,
                                    const mlbc_tensor_spec *advice,
                                    const mlbc_release_options *o, char *err, size_t errlen)
{
    return mlbc_runner_shared_object("selector.onnxtxt", symbol, f, n, advice, o, err, errlen);
}

/* Shared objects and leftover temporary folders in a cache folder. */
static int cache_entries(const char *dir, int *temps)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    *temps = 0;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        n += len > 3 && !strcmp(e->d_name + len - 3, ".so");
        *temps += !strncmp(e->d_name, "tmp.", 4);
    }
    if (d)
        closedir(d);
    return n;
}

static void test_onnx_cache(void)
{
    mlbc_onnx_options oo = {NULL, NULL, ONNX_CACHE, NULL, NULL, NULL};
    char so[MLBC_PATH_MAX], again[MLBC_PATH_MAX], err[1024] = "";
    struct stat before, after;
    int temps;
    CHECK(cache_entries(ONNX_CACHE, &temps) == 0);
    if (!CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, so, sizeof so, err, sizeof err) == 1))
        printf("  %s\n", err);
    CHECK(contains(so, ONNX_CACHE "/selector.") && stat(so, &before) == 0);
    /* The second time is a cache hit: same file, not rewritten. */
    CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, again, sizeof again, err, sizeof err) == 0);
    CHECK(!strcmp(so, again) && stat(again, &after) == 0 && after.st_ino == before.st_ino
          && after.st_mtime == before.st_mtime);
    /* Another name is another entry (the options are part of the key). */
    oo.name = "sel2";
    CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, again, sizeof again, err, sizeof err) == 1
          && contains(again, "/sel2."));
    CHECK(cache_entries(ONNX_CACHE, &temps) == 2 && temps == 0);
    oo.name = "not-a-name";
    CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, so, sizeof so, err, sizeof err) == -1
          && contains(err, "'not-a-name' is not a C identifier"));
}

/* Every failure is an error message, and leaves the cache as it was. */
static void test_onnx_errors(void)
{
    mlbc_onnx_options oo = {NULL, NULL, ONNX_CACHE, "fresh", NULL, NULL};
    mlbc_tensor_spec f[2], decision = mlbc_spec("decision", MLBC_INT64, 1, one);
    char so[MLBC_PATH_MAX], err[1024];
    int n0, temps;
    FILE *bad = fopen("refused.onnxtxt", "w");
    selector_specs(f);
    n0 = cache_entries(ONNX_CACHE, &temps);
    if (bad) {
        fputs("<ir_version: 8, opset_import: [\"\" : 17]>\nrefused (float[2] x) => (float[2] y)\n"
              "{\n  y = NoSuchOp (x)\n}\n", bad);
        fclose(bad);
    }
    CHECK(mlbc_onnx_compile("no/such.onnx", &oo, so, sizeof so, err, sizeof err) == -1
          && contains(err, "'no/such.onnx'") && contains(err, "No such file"));
    CHECK(mlbc_onnx_compile("refused.onnxtxt", &oo, so, sizeof so, err, sizeof err) == -1
          && contains(err, "mlbc: error: refused.onnxtxt") && contains(err, "NoSuchOp"));
    oo.cc = "no-such-cc -O1";
    CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, so, sizeof so, err, sizeof err) == -1
          && contains(err, "cannot run 'no-such-cc'") && contains(err, "set CC"));
    oo.cc = "cc -no-such-flag";
    CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, so, sizeof so, err, sizeof err) == -1
          && contains(err, "compiling the generated C failed") && contains(err, "no-such-flag"));
    oo.cc = NULL;
    oo.mlbc = "/no/such/mlbc";
    CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, so, sizeof so, err, sizeof err) == -1
          && contains(err, "cannot run '/no/such/mlbc'") && contains(err, "set MLBC"));
    oo.mlbc = "true";
    CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, so, sizeof so, err, sizeof err) == -1
          && contains(err, "is it mlbc?"));
    oo.mlbc = NULL;
    CHECK(cache_entries(ONNX_CACHE, &temps) == n0 && temps == 0);
    /* A cache folder that cannot be made (a file in the way), or written (not for root). */
    oo.cache_dir = "selector.onnxtxt/cache";
    CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, so, sizeof so, err, sizeof err) == -1
          && contains(err, "cannot create the cache folder 'selector.onnxtxt/cache'"));
    if (geteuid() != 0 && (mkdir("onnx-ro", 0500) == 0 || errno == EEXIST)) {
        oo.cache_dir = "onnx-ro";
        CHECK(mlbc_onnx_compile("selector.onnxtxt", &oo, so, sizeof so, err, sizeof err) == -1
              && contains(err, "cannot write in the cache folder 'onnx-ro'"));
    }
    /* ... and through the runner's usual error */
    CHECK(!mlbc_runner_onnx("no/such.onnx", NULL, f, 2, &decision, NULL, err, sizeof err)
          && contains(err, "no/such.onnx"));
    CHECK(!mlbc_runner_shared_object("refused.onnxtxt", NULL, f, 2, &decision, NULL, err,
                                     sizeof err) && contains(err, "NoSuchOp"));
}

static void test_onnx_runner(void)
{
    test_onnx_cache();
    test_selector(make_onnx, NULL);         /* the same outputs as the linked-in model */
    test_selector(make_onnx_as_so, NULL);
    test_onnx_errors();
}

/* ---- a model on its own: mlbc_model_open, mlbc_model_check ---------------------------- */

static void test_model_check(void)
{
    mlbc_tensor_spec f[3], decision = mlbc_spec("decision", MLBC_INT64, 1, one);
    mlbc_release_options opt = {"feed_", "fetch_", "size"};
    const mlbc_model_desc *d = NULL;
    char err[256] = "";
    void *h;
    selector_specs(f);
    f[2] = mlbc_spec("step_type", MLBC_INT32, 1, one);

    h = mlbc_model_open(so_path, NULL, &d, err, sizeof err);
    CHECK(h && d && !strcmp(d->name, "selector") && d->num_args == 4);
    CHECK(mlbc_model_check(d, f, 3, &decision, &opt, err, sizeof err) == 0);
    mlbc_model_close(h);
    CHECK(!mlbc_model_open(so_path, "nope_desc", &d, err, sizeof err)
          && contains(err, "nope_desc"));

    /* the release runner leaves an unfed input zero; the check names it */
    CHECK(mlbc_model_check(&selector_desc, f, 2, &decision, &opt, err, sizeof err) == -1
          && contains(err, "'step_type' (int32_t[1]) is not among the 2 features"));
    /* without a selector, model_selector is an input like any other */
    opt.model_selector = NULL;
    CHECK(mlbc_model_check(&selector_desc, f, 3, &decision, &opt, err, sizeof err) == -1
          && contains(err, "'feed_model_selector'"));
    opt.model_selector = "size";
    f[1] = mlbc_spec("b", MLBC_FLOAT, 1, one);
    CHECK(mlbc_model_check(&selector_desc, f, 3, &decision, &opt, err, sizeof err) == -1
          && contains(err, "'feed_b' is int64_t[1] but the feature 'b' is float[1]"));
    selector_specs(f);
    decision.type = MLBC_INT32;
    CHECK(mlbc_model_check(&selector_desc, f, 3, &decision, &opt, err, sizeof err) == -1
          && contains(err, "'fetch_decision' is int64_t[1] but the advice is int32_t[1]"));
    decision = mlbc_spec("verdict", MLBC_INT64, 1, one);
    CHECK(mlbc_model_check(&selector_desc, f, 3, &decision, &opt, err, sizeof err) == -1
          && contains(err, "no output 'verdict'"));
    CHECK(mlbc_model_check(&selector_desc, f, 3, NULL, &opt, err, sizeof err) == 0);
}

/* ---- environment loop ----------------------------------------------------------------- */

typedef struct toy_env {
    int steps, limit, turn, defaults, inlined, resets;
    int64_t b;          /* the selector model's index input */
} toy_env;

static int toy_reset(void *e)
{
    toy_env *t = e;
    t->steps = t->turn = t->defaults = t->inlined = 0;
    t->resets++;
    return 0;
}

static int toy_agent(void *e)
{
    return ((toy_env *)e)->turn;
}

static int toy_observe(void *e, int agent, mlbc_runner *r)
{
    toy_env *t = e;
    if (agent == 0) {
        for (int i = 0; i < mlbc_runner_num_inputs(r); i++)
            *(int64_t *)mlbc_runner_input(r, i) = t->steps;
    } else {
        float *a = mlbc_runner_input(r, 0);
        a[0] = 0.0f;
        a[1] = 1.0f;
        *(int64_t *)mlbc_runner_input(r, 1) = t->b;
    }
    return 0;
}

static int toy_step(void *e, int agent, const void *advice)
{
    toy_env *t = e;
    if (!advice)
        t->defaults++;
    else
        t->inlined += *(const int64_t *)advice != 0;
    t->turn = 1 - agent;
    t->steps++;
    return 0;
}

static int toy_done(void *e)
{
    toy_env *t = e;
    return t->steps >= t->limit;
}

static void test_env(void)
{
    static const mlbc_env_ops ops = {toy_reset, toy_agent, toy_observe, toy_step, toy_done};
    mlbc_tensor_spec specs[64], f[2], advice = decision_spec();
    mlbc_tensor_spec decision = mlbc_spec("decision", MLBC_INT64, 1, one);
    mlbc_release_options opt = {"feed_", "fetch_", "size"};
    char err[256];
    toy_env env = {0, 10, 0, 0, 0, 0, 1};
    mlbc_runner *agents[2];
    int n = inliner_specs(specs);
    selector_specs(f);
    agents[0] = mlbc_runner_release(&inliner_desc, specs, n, &advice, NULL, err, sizeof err);
    agents[1] = mlbc_runner_release(&selector_desc, f, 2, &decision, &opt, err, sizeof err);
    if (!CHECK(agents[0] && agents[1]))
        return;
    CHECK(mlbc_env_run(&ops, &env, agents, 2, 100) == 10 && env.defaults == 0);
    CHECK(env.inlined >= 5);            /* the selector agent always says 1 */
    CHECK(mlbc_env_run(&ops, &env, agents, 2, 4) == 4 && env.resets == 2);
    env.b = 7;                          /* the selector model fails: default decisions */
    CHECK(mlbc_env_run(&ops, &env, agents, 2, 100) == 10 && env.defaults == 5);
    CHECK(mlbc_env_run(&ops, &env, agents, 1, 100) == -1);    /* agent 1 does not exist */
    CHECK(mlbc_env_run(NULL, &env, agents, 2, 100) == -1);
    mlbc_runner_free(agents[0]);
    mlbc_runner_free(agents[1]);
}

/* The same toy environment, its agents named by label and bound to models by path: the
 * inliner compiled from inliner.onnx, the selector from its shared object. */
static int label_index(const char *label)
{
    return strcmp(label, "inliner") == 0 ? 0 : 1;
}

static const char *toy_label(void *e)
{
    toy_env *t = e;
    return t->turn == 0 ? "inliner" : t->b == 99 ? "nobody" : "selector";
}

static int toy_observe_label(void *e, const char *label, mlbc_runner *r)
{
    return toy_observe(e, label_index(label), r);
}

static int toy_step_label(void *e, const char *label, const void *advice)
{
    return toy_step(e, label_index(label), advice);
}

static void test_env_labels(void)
{
    static const mlbc_env_label_ops ops = {toy_reset, toy_label, toy_observe_label,
                                           toy_step_label, toy_done};
    mlbc_tensor_spec specs[64], f[2], advice = decision_spec();
    mlbc_tensor_spec decision = mlbc_spec("decision", MLBC_INT64, 1, one);
    mlbc_release_options opt = {"feed_", "fetch_", "size"};
    mlbc_agent_spec agents[2] = {{"inliner", "inliner.onnx", specs, 0, &advice, NULL},
                                 {"selector", so_path, f, 2, &decision, &opt}};
    toy_env env = {0, 10, 0, 0, 0, 0, 1};
    char err[1024] = "";
    mlbc_agents *a;
    agents[0].nfeatures = inliner_specs(specs);
    selector_specs(f);
    a = mlbc_agents_open(agents, 2, NULL, err, sizeof err);
    if (!CHECK(a != NULL)) {
        printf("  %s\n", err);
        return;
    }
    CHECK(mlbc_agents_count(a) == 2 && mlbc_agents_index(a, "selector") == 1
          && !strcmp(mlbc_agents_label(a, 0), "inliner") && !mlbc_agents_label(a, 2));
    CHECK(mlbc_agents_runner(a, "inliner") && !mlbc_agents_runner(a, "regalloc"));
    CHECK(mlbc_env_run_labels(&ops, &env, a, 100) == 10 && env.defaults == 0);
    CHECK(env.inlined >= 5);
    env.b = 7;                          /* the selector model fails: default decisions */
    CHECK(mlbc_env_run_labels(&ops, &env, a, 100) == 10 && env.defaults == 5);
    env.b = 99;                         /* an unknown label ends the episode */
    CHECK(mlbc_env_run_labels(&ops, &env, a, 100) == -1);
    CHECK(mlbc_env_run_labels(NULL, &env, a, 100) == -1);
    mlbc_agents_free(a);
    agents[1].label = "inliner";
    CHECK(!mlbc_agents_open(agents, 2, NULL, err, sizeof err)
          && contains(err, "two agents are labelled 'inliner'"));
    agents[1].label = "selector";
    agents[1].model = "no/such.onnx";
    CHECK(!mlbc_agents_open(agents, 2, NULL, err, sizeof err)
          && contains(err, "agent 'selector': ") && contains(err, "no/such.onnx"));
}

/* ---- JSON ------------------------------------------------------------------------------- */

static void test_json_writer(void)
{
    static const char *const cases[][2] = {
        {"plain", "\"plain\""},
        {"q\"b\\s/", "\"q\\\"b\\\\s/\""},
        {"\t\n\r\b\f\x01\x1f\x7f", "\"\\t\\n\\r\\u0008\\u000c\\u0001\\u001f\x7f\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
         "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"\xff", "\"\xef\xbf\xbd\""},                      /* ill-formed: U+FFFD */
        {"a\xe2\x82z", "\"a\xef\xbf\xbdz\""},               /* truncated sequence: one */
        {"\xe0\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},  /* overlong: three */
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},  /* surrogate: three */
        {"\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xf0\x9f\x98", "\"\xef\xbf\xbd\""},
    };
    int64_t shape[2] = {1, 33};
    mlbc_tensor_spec f[2] = {mlbc_spec("mask", MLBC_INT64, 2, shape),
                             mlbc_spec("progress", MLBC_FLOAT, 0, NULL)};
    mlbc_tensor_spec reward = mlbc_spec("reward", MLBC_FLOAT, 1, one), bad;
    jbuf b = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        b.len = 0;
        jb_str(&b, cases[i][0]);
        if (!CHECK(!b.failed && !strcmp(b.data, cases[i][1])))
            printf("  case %zu: %s\n", i, b.data);
    }
    b.len = 0;
    jb_header(&b, f, 2, &reward, NULL, 0);
    CHECK(!strcmp(b.data, "{\"features\":[{\"name\":\"mask\",\"type\":\"int64_t\",\"port\":0,"
                          "\"shape\":[1,33]},{\"name\":\"progress\",\"type\":\"float\",\"port\":0,"
                          "\"shape\":[]}],\"score\":{\"name\":\"reward\",\"type\":\"float\","
                          "\"port\":0,\"shape\":[1]}}"));
    b.len = 0;
    jb_header(&b, NULL, 0, NULL, &reward, 0);
    CHECK(!strcmp(b.data, "{\"features\":[],\"advice\":{\"name\":\"reward\",\"type\":\"float\","
                          "\"port\":0,\"shape\":[1]}}"));
    b.len = 0;
    jb_record(&b, "observation", 12);
    CHECK(!strcmp(b.data, "{\"observation\":12}"));
    bad = mlbc_spec("flag", MLBC_BOOL, 0, NULL);
    b.len = 0;
    jb_spec(&b, &bad, 1);           /* the Bridge's C++: a bool as uint8_t, its port */
    CHECK(!b.failed && !strcmp(b.data, "{\"name\":\"flag\",\"type\":\"uint8_t\","
                                        "\"port\":6020,\"shape\":[]}"));
    jb_spec(&b, &bad, 0);           /* LLVM's TensorSpec has no bool */
    CHECK(b.failed);
    jb_free(&b);
}

static int parses(const char *text)
{
    json_doc d;
    size_t at;
    char err[128];
    int rc = json_parse(&d, text, strlen(text), err, sizeof err, &at);
    json_free(&d);
    return rc == 0;
}

static void test_json_reader(void)
{
    static const char *const good[] = {
        "{}", "[]", " { \"a\" : [1, -2, 3.5e2, true, false, null, \"x\"] } ", "\"\\ud83d\\ude00\"",
        "-0", "0.5", "1E+2", "\"\\u00Ff\\uABcd\"", "9223372036854775807",
        "-9223372036854775808", "18446744073709551616",
        "{\"a\":{\"b\":{\"c\":[[[]]]}}}", "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"caf\xc3\xa9\"",
    };
    static const char *const bad[] = {
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-",
        "1e", "+1", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u1\x10" "AB\"",
        "\"\\u00G0\"", "\"\\u0000\"", "\"a\nb\"",
        "\"\xff\"", "\"\xc3\"", "{\"a\":1,\"a\":2}", "[1] [2]", "1 2", "[1}", "{\"a\":1]", "'a'",
        "NaN", "Infinity", "[1,,2]", "\"\xed\xa0\x80\"",
    };
    static const char doc[] = "{\"n\":-9223372036854775808,\"s\":\"\\u00e9\\ud800x\","
                              "\"f\":2.5,\"u\":18446744073709551615}";
    char deep[100];
    json_doc d;
    size_t at;
    char err[128];
    const json_value *v;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!CHECK(parses(good[i])))
            printf("  rejected: %s\n", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!CHECK(!parses(bad[i])))
            printf("  accepted: %s\n", bad[i]);
    memset(deep, '[', JSON_MAX_DEPTH);
    memset(deep + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
    deep[2 * JSON_MAX_DEPTH] = 0;
    CHECK(parses(deep));
    memset(deep, '[', JSON_MAX_DEPTH + 1);
    memset(deep + JSON_MAX_DEPTH + 1, ']', JSON_MAX_DEPTH + 1);
    deep[2 * JSON_MAX_DEPTH + 2] = 0;
    CHECK(!parses(deep));

    CHECK(json_parse(&d, doc, strlen(doc), err, sizeof err, &at) == 0);
    v = json_member(&d, &d.v[0], "n");
    CHECK(v && v->kind == JSON_INT && v->i == INT64_MIN);
    v = json_member(&d, &d.v[0], "s");
    CHECK(v && v->kind == JSON_STRING && !strcmp(v->s, "\xc3\xa9\xef\xbf\xbdx"));
    v = json_member(&d, &d.v[0], "f");
    CHECK(v && v->kind == JSON_NUMBER && v->d == 2.5);
    v = json_member(&d, &d.v[0], "u");
    CHECK(v && v->kind == JSON_NUMBER && v->d == 18446744073709551615.0);
    CHECK(!json_member(&d, &d.v[0], "missing") && !json_member(&d, v, "n"));
    json_free(&d);
    CHECK(json_parse(&d, "{\"a\":[1,2,}", 11, err, sizeof err, &at) == -1 && at == 10);
    json_free(&d);
}

/* ---- training logs ------------------------------------------------------------------- */

static char *slurp(FILE *f, size_t *len)
{
    char *buf;
    long n;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = 0;
    return buf;
}

static void test_logger_round_trip(void)
{
    int64_t shape[2] = {2, 3};
    mlbc_tensor_spec f[3] = {mlbc_spec("sroa_savings", MLBC_INT64, 1, one),
                             mlbc_spec("weights", MLBC_FLOAT, 2, shape),
                             mlbc_spec("flag", MLBC_UINT8, 0, NULL)};
    mlbc_tensor_spec reward = mlbc_spec("reward", MLBC_FLOAT, 1, one);
    static const char *const contexts[] = {"", "mid0", "mid1", "a\"b\n", "mid0"};
    static const int nobs[] = {2, 1, 3, 1, 2};          /* mid0 again: continues at 1 */
    static const int64_t want_ids[] = {0, 1, 0, 0, 1, 2, 0, 1, 2};
    FILE *tmp = tmpfile();
    mlbc_logger *lg = mlbc_logger_open(tmp, f, 3, &reward, NULL);
    mlbc_log_reader *rd;
    mlbc_log_record rec;
    char err[256];
    int obs = 0, bad = 0, ctx = 0, outcomes = 0;
    if (!CHECK(lg != NULL))
        return;
    CHECK(mlbc_logger_outcome(lg, &(float){1}) == -1);     /* no observation yet */
    for (int c = 0; c < 5; c++) {
        CHECK(mlbc_logger_context(lg, contexts[c]) == 0);
        for (int k = 0; k < nobs[c]; k++, obs++) {
            int64_t s = obs * 1000 + 10;        /* bytes include 0x0a */
            float w[6] = {(float)obs, 0.5f, -1, 2, 3, 4};
            uint8_t flag = (uint8_t)obs;
            float rw = (float)obs / 2;
            const void *t[3] = {&s, w, &flag};
            CHECK(mlbc_logger_observation(lg, t) == 0);
            if (obs % 2 == 0)
                CHECK(mlbc_logger_outcome(lg, &rw) == 0);
        }
    }
    CHECK(mlbc_logger_observation(lg, (const void *const[3]){NULL, NULL, NULL}) == -1);
    CHECK(mlbc_logger_close(lg) == 0);
    rewind(tmp);
    rd = mlbc_log_open(tmp, err, sizeof err);
    if (!CHECK(rd != NULL)) {
        printf("  %s\n", err);
        fclose(tmp);
        return;
    }
    CHECK(mlbc_log_num_features(rd) == 3 && mlbc_log_score(rd) && !mlbc_log_advice(rd));
    CHECK(mlbc_log_feature(rd, 1)->rank == 2 && mlbc_log_feature(rd, 1)->shape[1] == 3
          && mlbc_log_feature(rd, 2)->rank == 0 && mlbc_log_feature(rd, 2)->type == MLBC_UINT8);
    obs = 0;
    while (mlbc_log_next(rd, &rec) == 1) {
        if (rec.kind == MLBC_RECORD_CONTEXT) {
            bad += strcmp(rec.context, contexts[ctx++]) != 0;
        } else if (rec.kind == MLBC_RECORD_OBSERVATION) {
            int64_t s;
            const float *w = rec.tensors[1];
            memcpy(&s, rec.tensors[0], 8);
            bad += rec.id != want_ids[obs] || s != obs * 1000 + 10 || w[0] != (float)obs
                   || w[5] != 4 || *(const uint8_t *)rec.tensors[2] != obs
                   || strcmp(rec.context, contexts[ctx - 1]);
            obs++;
        } else {
            bad += rec.id != want_ids[obs - 1]
                   || *(const float *)rec.tensors[0] != (float)(obs - 1) / 2;
            outcomes++;
        }
    }
    CHECK(!bad && ctx == 5 && obs == 9 && outcomes == 5);
    CHECK(mlbc_log_next(rd, &rec) == 0 && !strcmp(mlbc_log_error(rd), ""));
    mlbc_log_close(rd);
    fclose(tmp);
}

static void test_logger_stream(void)
{
    mlbc_tensor_spec f[1] = {mlbc_spec("li_size", MLBC_INT64, 1, one)};
    mlbc_tensor_spec advice = mlbc_spec("priority", MLBC_FLOAT, 1, one);
    mlbc_tensor_spec flag = mlbc_spec("flag", MLBC_BOOL, 0, NULL);
    static const char want[] =
        "{\"features\":[{\"name\":\"li_size\",\"type\":\"int64_t\",\"port\":0,\"shape\":[1]}],"
        "\"advice\":{\"name\":\"priority\",\"type\":\"float\",\"port\":0,\"shape\":[1]}}\n"
        "{\"context\":\"mid0\"}\n{\"context\":\"mid1\"}\n{\"observation\":0}\n"
        "\x3e\x03\0\0\0\0\0\0\n";
    int64_t v = 830;
    const void *t[1] = {&v};
    FILE *tmp = tmpfile();
    mlbc_logger *lg = mlbc_logger_open(tmp, f, 1, NULL, &advice);
    char *got, err[256];
    size_t len;
    mlbc_log_reader *rd;
    mlbc_log_record rec;
    CHECK(lg && mlbc_logger_context(lg, "mid0") == 0 && mlbc_logger_context(lg, "mid1") == 0);
    CHECK(mlbc_logger_observation(lg, t) == 0 && mlbc_logger_outcome(lg, &v) == -1);
    CHECK(mlbc_logger_close(lg) == 0);
    got = slurp(tmp, &len);
    CHECK(len == sizeof want - 1 && !memcmp(got, want, len));
    free(got);
    rewind(tmp);
    rd = mlbc_log_open(tmp, err, sizeof err);
    CHECK(rd && mlbc_log_advice(rd) && !mlbc_log_score(rd)
          && !strcmp(mlbc_log_advice(rd)->name, "priority"));
    CHECK(mlbc_log_next(rd, &rec) == 1 && rec.kind == MLBC_RECORD_CONTEXT
          && !strcmp(rec.context, "mid0"));
    CHECK(mlbc_log_next(rd, &rec) == 1 && rec.kind == MLBC_RECORD_CONTEXT
          && !strcmp(rec.context, "mid1"));
    CHECK(mlbc_log_next(rd, &rec) == 1 && rec.kind == MLBC_RECORD_OBSERVATION && rec.id == 0
          && *(const int64_t *)rec.tensors[0] == 830);
    CHECK(mlbc_log_next(rd, &rec) == 0);
    mlbc_log_close(rd);
    fclose(tmp);
    /* Types LLVM cannot name cannot be logged. */
    CHECK(!mlbc_logger_open(stdout, &flag, 1, NULL, NULL));
    CHECK(!mlbc_logger_open(NULL, f, 1, NULL, NULL) && mlbc_logger_close(NULL) == -1);
    CHECK(!mlbc_log_open(NULL, err, sizeof err));
}

static int run_checks(const char *so)
{
    so_path = so;
    test_specs();
    test_md5();
    test_release_inliner();
    test_release_binding();
    test_selector(make_release, NULL);
    test_shared_object();
    test_onnx_runner();
    test_model_check();
    test_env();
    test_env_labels();
    test_json_writer();
    test_json_reader();
    test_logger_round_trip();
    test_logger_stream();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}

/* ---- modes driven by test_runtime.py ---------------------------------------------------- */

/* The inliner's decisions on N samples: the release runner's, the generated code's and, with
 * an ONNX path, the ONNX runner's over that model. */
static int compare(const char *path, int n, const char *onnx)
{
    mlbc_tensor_spec specs[64], advice = decision_spec();
    char err[1024] = "";
    int nf = inliner_specs(specs);
    mlbc_runner *r = mlbc_runner_release(&inliner_desc, specs, nf, &advice, NULL, err, sizeof err);
    mlbc_runner *o = onnx ? mlbc_runner_onnx(onnx, NULL, specs, nf, &advice, NULL, err,
                                             sizeof err) : NULL;
    FILE *in = fopen(path, "rb");
    if (!r || !in || (onnx && !o)) {
        fprintf(stderr, "error: %s\n", r && !err[0] ? "cannot open input" : err);
        return 1;
    }
    for (int k = 0; k < n; k++) {
        int64_t v[38];
        const int64_t *a, *b = NULL;
        if (fread(v, 8, 38, in) != 38)
            return 1;
        for (int i = 0; i < nf; i++) {
            memcpy(mlbc_runner_input(r, i), &v[i], 8);
            if (o)
                memcpy(mlbc_runner_input(o, i), &v[i], 8);
        }
        a = mlbc_runner_evaluate(r);
        if (o)
            b = mlbc_runner_evaluate(o);
        printf("%lld %lld", a ? (long long)*a : -1LL, (long long)direct_decision(v));
        printf(o ? " %lld\n" : "\n", b ? (long long)*b : -1LL);
    }
    fclose(in);
    mlbc_runner_free(r);
    mlbc_runner_free(o);
    return 0;
}

/* One of several processes started at once on an empty cache: compiles (or finds) MODEL in
 * CACHE, then runs it once. Prints "compiled" or "cached" and the decision. */
static int race(const char *model, const char *cache)
{
    mlbc_onnx_options oo = {NULL, NULL, cache, NULL, NULL, NULL};
    mlbc_tensor_spec f[2], decision = mlbc_spec("decision", MLBC_INT64, 1, one);
    mlbc_release_options opt = {"feed_", "fetch_", "size"};
    char so[MLBC_PATH_MAX], err[1024];
    const int64_t *a;
    mlbc_runner *r;
    int rc = mlbc_onnx_compile(model, &oo, so, sizeof so, err, sizeof err);
    selector_specs(f);
    if (rc < 0 || !(r = mlbc_runner_onnx(model, &oo, f, 2, &decision, &opt, err, sizeof err))) {
        fprintf(stderr, "error: %s\n", err);
        return 1;
    }
    ((float *)mlbc_runner_input(r, 0))[1] = 1.0f;
    *(int64_t *)mlbc_runner_input(r, 1) = 1;
    a = mlbc_runner_evaluate(r);
    printf("%s %lld\n", rc ? "compiled" : "cached", a ? (long long)*a : -1LL);
    mlbc_runner_free(r);
    return a ? 0 : 1;
}

static void print_bytes(const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", ((const unsigned char *)p)[i]);
}

static void print_spec(const char *what, const mlbc_tensor_spec *s)
{
    printf("%s ", what);
    print_bytes(s->name, strlen(s->name));
    printf(" %s", mlbc_type_llvm_name(s->type));
    for (int i = 0; i < s->rank; i++)
        printf(" %lld", (long long)s->shape[i]);
    printf("\n");
}

/* Dumps a log: specs, then one line per record (names and data in hex). */
static int read_log(const char *path)
{
    FILE *in = fopen(path, "rb");
    char err[256];
    mlbc_log_reader *r = in ? mlbc_log_open(in, err, sizeof err) : NULL;
    mlbc_log_record rec;
    int rc;
    if (!r) {
        fprintf(stderr, "error: %s\n", in ? err : "cannot open");
        return 1;
    }
    for (int i = 0; i < mlbc_log_num_features(r); i++)
        print_spec("feature", mlbc_log_feature(r, i));
    if (mlbc_log_score(r))
        print_spec("score", mlbc_log_score(r));
    if (mlbc_log_advice(r))
        print_spec("advice", mlbc_log_advice(r));
    while ((rc = mlbc_log_next(r, &rec)) == 1) {
        if (rec.kind == MLBC_RECORD_CONTEXT) {
            printf("context ");
            print_bytes(rec.context, strlen(rec.context));
        } else if (rec.kind == MLBC_RECORD_OBSERVATION) {
            printf("observation %lld ", (long long)rec.id);
            for (int i = 0; i < mlbc_log_num_features(r); i++)
                print_bytes(rec.tensors[i], mlbc_spec_bytes(mlbc_log_feature(r, i)));
        } else {
            printf("outcome %lld ", (long long)rec.id);
            print_bytes(rec.tensors[0], mlbc_spec_bytes(mlbc_log_score(r)));
        }
        printf("\n");
    }
    if (rc < 0)
        fprintf(stderr, "error: %s\n", mlbc_log_error(r));
    mlbc_log_close(r);
    fclose(in);
    return rc < 0;
}

/* The script (stdin), shared with llvm_logger.cpp and test_runtime.py, one command a line:
 *   feature|score|advice NAMEHEX TYPE DIM...    specs (before the first other command)
 *   context NAMEHEX                             (NAMEHEX "-": the empty name)
 *   observation SEED     byte k of the observation's payload is (SEED + k) & 255
 *   outcome SEED         byte k of the score tensor is (SEED + k) & 255 */
static void unhex(const char *h, char *out)
{
    size_t n = strcmp(h, "-") ? strlen(h) / 2 : 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (char)v;
    }
    out[n] = 0;
}

static void fill(unsigned char *p, size_t n, int seed)
{
    for (size_t j = 0; j < n; j++)
        p[j] = (unsigned char)((size_t)seed + j);
}

static int write_log(const char *path)
{
    mlbc_tensor_spec f[16], score, advice;
    int nf = 0, has_score = 0, has_advice = 0, rc = 0;
    char line[1024], cmd[32], arg[600], name[300];
    FILE *out = fopen(path, "wb");
    mlbc_logger *lg = NULL;
    static unsigned char data[1 << 16];
    if (!out)
        return 1;
    while (fgets(line, sizeof line, stdin)) {
        int seed, used;
        if (sscanf(line, "%31s %599s%n", cmd, arg, &used) < 2)
            continue;
        if (!strcmp(cmd, "feature") || !strcmp(cmd, "score") || !strcmp(cmd, "advice")) {
            char type[32];
            int64_t shape[MLBC_SPEC_MAX_RANK];
            int rank = 0, k;
            const char *p = line + used;
            mlbc_tensor_spec *s = !strcmp(cmd, "score") ? &score : !strcmp(cmd, "advice")
                                                                   ? &advice : &f[nf++];
            if (nf > 16)
                return 1;
            has_score |= s == &score;
            has_advice |= s == &advice;
            sscanf(p, "%31s%n", type, &k);
            for (p += k; sscanf(p, "%lld%n", (long long *)&shape[rank], &k) == 1; p += k)
                rank++;
            unhex(arg, name);
            *s = mlbc_spec(name, mlbc_type_from_llvm_name(type), rank, shape);
            continue;
        }
        if (!lg && !(lg = mlbc_logger_open(out, f, nf, has_score ? &score : NULL,
                                           has_advice ? &advice : NULL)))
            return 1;
        seed = atoi(arg);
        if (!strcmp(cmd, "context")) {
            unhex(arg, name);
            rc |= mlbc_logger_context(lg, name);
        } else if (!strcmp(cmd, "observation")) {
            const void *t[16];
            size_t at = 0;
            for (int i = 0; i < nf; i++) {
                t[i] = data + at;
                fill(data + at, mlbc_spec_bytes(&f[i]), seed + (int)at);
                at += mlbc_spec_bytes(&f[i]);
            }
            rc |= mlbc_logger_observation(lg, t);
        } else if (!strcmp(cmd, "outcome")) {
            fill(data, mlbc_spec_bytes(&score), seed);
            rc |= mlbc_logger_outcome(lg, data);
        }
    }
    if (!lg)
        lg = mlbc_logger_open(out, f, nf, has_score ? &score : NULL, has_advice ? &advice : NULL);
    rc |= mlbc_logger_close(lg);
    fclose(out);
    return rc != 0;
}

/* Every prefix of a log and n random mutations: the reader must end cleanly or with an
 * error that has a byte offset; a prefix that ends inside a record must be an error. */
static int abuse(const char *path, int n)
{
    FILE *in = fopen(path, "rb");
    size_t len;
    char *orig, *buf;
    unsigned seed = 12345;
    int bad = 0, errors = 0;
    if (!in)
        return 1;
    orig = slurp(in, &len);
    fclose(in);
    buf = malloc(len + 1);
    for (size_t cut = 0; cut <= len + (size_t)n; cut++) {
        size_t size = cut <= len ? cut : len;
        FILE *f;
        mlbc_log_reader *r;
        mlbc_log_record rec;
        char err[256];
        int rc = 1;
        memcpy(buf, orig, len);
        if (cut > len)      /* mutations: 1..4 random bytes, sometimes a shorter file */
            for (int k = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 4; k >= 0; k--) {
                seed = seed * 1103515245u + 12345u;
                buf[(seed >> 8) % len] = (char)(seed >> 20);
                if (k == 3)
                    size = (seed >> 4) % len;
            }
        f = fmemopen(buf, size ? size : 1, "rb");
        if (!size)
            fgetc(f);       /* fmemopen needs a size: start at the end instead */
        r = mlbc_log_open(f, err, sizeof err);
        if (!r) {
            bad += strncmp(err, "byte ", 5) != 0;
            errors++;
        } else {
            while ((rc = mlbc_log_next(r, &rec)) == 1)
                ;
            if (rc < 0) {
                bad += strncmp(mlbc_log_error(r), "byte ", 5) != 0;
                errors++;
            }
            /* A clean end only where a record ends: the next byte begins a JSON line. */
            if (rc == 0 && cut < len && orig[cut] != '{')
                bad++;
            mlbc_log_close(r);
        }
        fclose(f);
    }
    printf("%d errors, %d bad\n", errors, bad);
    free(buf);
    free(orig);
    return bad != 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "checks"))
        return run_checks(argv[2]);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "compare"))
        return compare(argv[2], atoi(argv[3]), argc == 5 ? argv[4] : NULL);
    if (argc == 4 && !strcmp(argv[1], "race"))
        return race(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "read"))
        return read_log(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "write"))
        return write_log(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "abuse"))
        return abuse(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: test_runtime checks SO | compare FILE N [ONNX] | race MODEL CACHE"
                    " | read FILE | write FILE | abuse FILE N\n");
    return 2;
}
