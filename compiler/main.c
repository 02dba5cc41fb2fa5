/* main.c - the mlbc command line. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc.h"

static const char usage[] =
    "usage: mlbc MODEL -o OUT.c [options]\n"
    "       mlbc [SELECTOR=]MODEL [SELECTOR=]MODEL... -o OUT.c [options]\n"
    "Compile an ONNX model (.onnx binary or .onnxtxt text) to dependency-free C.\n"
    "Several models (the same inputs and outputs) make a composite: NAME_run runs the one\n"
    "whose SELECTOR (default: its file name without extension) has the MD5 in the argument\n"
    "model_selector, as LLVM's ReleaseModeModelRunner sets it; any other value: status 4.\n\n"
    "  -o OUT.c             write OUT.c and OUT.h\n"
    "  --header PATH        where to write the header (default: OUT.c with .h)\n"
    "  -x onnx|text         force the input format (default: by file contents)\n"
    "  -n, --name NAME      prefix of generated symbols (default: the (first) model's file\n"
    "                       name)\n"
    "  --dim SYM=N          bind a symbolic dimension\n"
    "  --blas               call cblas_sgemm/sgemv for large products (link OpenBLAS)\n"
    "  --cxx-wrapper        add a C++ class for LLVM's ReleaseModeModelRunner\n"
    "  --print              print the model in ONNX textual syntax and exit\n"
    "  --info               print inputs, outputs, parameters, FLOPs and scratch bytes\n"
    "  --emit-onnx PATH     write the loaded model as binary ONNX\n"
    "  --weights-file PATH  write the weights to PATH (a binary file) instead of OUT.c; the\n"
    "                       code loads them at run time (NAME_weights_load, see OUT.h)\n"
    "  -v                   phase timings, and progress when writing takes long\n"
    "  -h, --help           this help\n"
    "  --version            print the version\n";

typedef struct Args {
    const char **models;                /* PATH or SELECTOR=PATH, as given */
    int nmodels, capmodels;
    const char *out, *header, *format, *emit_onnx;
    int print, info;
    Options opt;
} Args;

static const char *need_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        die_usage("option '%s' needs a value", argv[*i]);
    return argv[++*i];
}

static void parse_dim(const char *s)
{
    const char *eq = strchr(s, '=');
    char *end;
    if (!eq || eq == s)
        die_usage("--dim expects SYM=N, got '%s'", s);
    long long v = strtoll(eq + 1, &end, 10);
    if (*end || end == eq + 1 || v < 0)
        die_usage("--dim %s: N must be a non-negative integer", s);
    bind_dim(xstrndup(s, (size_t)(eq - s)), v);
}

static Args parse_args(int argc, char **argv)
{
    Args a = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(usage, stdout);
            exit(0);
        } else if (!strcmp(s, "--version")) {
            printf("mlbc %s\n", MLBC_VERSION);
            exit(0);
        } else if (!strcmp(s, "-o")) {
            a.out = need_value(argc, argv, &i);
        } else if (!strcmp(s, "--header")) {
            a.header = need_value(argc, argv, &i);
        } else if (!strcmp(s, "-x")) {
            a.format = need_value(argc, argv, &i);
            if (strcmp(a.format, "onnx") && strcmp(a.format, "text"))
                die_usage("-x expects 'onnx' or 'text', got '%s'", a.format);
        } else if (!strcmp(s, "-n") || !strcmp(s, "--name")) {
            a.opt.name = need_value(argc, argv, &i);
        } else if (!strcmp(s, "--dim")) {
            parse_dim(need_value(argc, argv, &i));
        } else if (!strncmp(s, "--dim=", 6)) {
            parse_dim(s + 6);
        } else if (!strcmp(s, "--blas")) {
            a.opt.blas = 1;
        } else if (!strcmp(s, "--cxx-wrapper")) {
            a.opt.cxx_wrapper = 1;
        } else if (!strcmp(s, "--print")) {
            a.print = 1;
        } else if (!strcmp(s, "--info")) {
            a.info = 1;
        } else if (!strcmp(s, "--weights-file")) {
            a.opt.weights_file = need_value(argc, argv, &i);
        } else if (!strcmp(s, "-v")) {
            a.opt.verbose = 1;
        } else if (!strcmp(s, "--emit-onnx")) {
            a.emit_onnx = need_value(argc, argv, &i);
        } else if (s[0] == '-' && s[1]) {
            die_usage("unknown option '%s'", s);
        } else {
            a.models = xgrow(a.models, a.nmodels, &a.capmodels, sizeof *a.models);
            a.models[a.nmodels++] = s;
        }
    }
    if (!a.nmodels)
        die_usage("no model given");
    if (a.nmodels > 1 && (a.print || a.info || a.emit_onnx))
        die_usage("--print, --info and --emit-onnx take one model, not %d", a.nmodels);
    if (!a.out && !a.print && !a.info && !a.emit_onnx)
        die_usage("no output given (use -o OUT.c, --print, --info or --emit-onnx)");
    return a;
}

/* Default symbol prefix: the file's base name as a C identifier. */
static const char *default_name(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t len = strcspn(base, ".");
    char *s = xstrndup(base, len ? len : strlen(base));
    for (char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p))
            *p = '_';
    if (!*s || isdigit((unsigned char)*s))
        s = strf("m_%s", s);
    return s;
}

static int is_identifier(const char *s)
{
    if (!*s || isdigit((unsigned char)*s))
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* Binary protobuf never starts with printable text the way a text model does; a text model
 * starts with '<', a name, or a comment. */
static int looks_binary(const char *data, size_t len)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)data[i]))
        i++;
    return !(i < len && (data[i] == '<' || data[i] == '#' || isalpha((unsigned char)data[i]) ||
                         data[i] == '_'));
}

static Onnx__ModelProto *load(const Args *a, const char *path)
{
    char *data;
    size_t len;
    if (read_file(path, &data, &len)) {
        if (errno == EFBIG)
            die("the model is larger than %lld bytes (MLBC_MAX_INPUT_BYTES)",
                (long long)MLBC_MAX_INPUT_BYTES);
        die("cannot read the model: %s", strerror(errno));
    }
    int text = a->format ? !strcmp(a->format, "text") : !looks_binary(data, len);
    if (text)
        return parse_text(data, len);
    Onnx__ModelProto *m = load_binary(data, len);
    free(data);                         /* the model holds its own copy of the bytes */
    return m;
}

static void write_or_die(const char *path, const char *data, size_t len)
{
    if (write_file_atomic(path, data, len))
        die("cannot write '%s': %s", path, strerror(errno));
}

/* The last use of the model: absent names are made absent again (load_binary). */
static void emit_onnx(const char *path, Onnx__ModelProto *m)
{
    names_absent_again(m);
    size_t len = onnx__model_proto__get_packed_size(m);
    uint8_t *p = xalloc(len + 1);
    onnx__model_proto__pack(m, p);
    write_or_die(path, (const char *)p, len);
}

static double op_flops(Node *n)
{
    if (n->def->flops)
        return n->def->flops(n);
    double f = 0;
    for (int i = 0; i < n->nout; i++)
        if (n->out[i])
            f += (double)numel(n->out[i]);
    return f;
}

static void print_tensor(const char *kind, const Value *v)
{
    printf("  %-7s %-32s %s%s\n", kind, v->name, dtype_name(v->dt), shape_str(v));
}

static void info(Model *m, int64_t scratch)
{
    Graph *g = m->g;
    int64_t params = 0, weight_bytes = 0;
    double flops = 0;
    for (int i = 0; i < g->nvalues; i++) {
        Value *v = g->values[i];
        if (v->is_weight && v->nuse > 0) {
            params += numel(v);
            weight_bytes += numel(v) * (int64_t)dtype_size(v->dt);
        }
    }
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead)
            flops += op_flops(g->nodes[i]);
    printf("model '%s' (opset %d)\n", g->name, m->opset);
    for (int i = 0; i < g->ninputs; i++)
        print_tensor("input", g->inputs[i]);
    for (int i = 0; i < g->noutputs; i++)
        print_tensor("output", g->outputs[i]);
    printf("  parameters      %lld (%lld bytes)\n", (long long)params, (long long)weight_bytes);
    printf("  flops per run   %.0f\n", flops);
    printf("  scratch bytes   %lld\n", (long long)scratch);
}

/* The argument "SELECTOR=PATH" (an '=' before any '/'), else PATH: the model's file. */
static const char *model_path(const char *arg)
{
    const char *eq = strchr(arg, '=');
    return eq && eq < arg + strcspn(arg, "/") ? eq + 1 : arg;
}

/* A composite member's selector: given before '=', else the file's base name without its
 * extension. */
static const char *selector_of(const char *arg)
{
    const char *path = model_path(arg);
    if (path != arg)
        return xstrndup(arg, (size_t)(path - 1 - arg));
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot > base ? xstrndup(base, (size_t)(dot - base)) : base;
}

/* The models to compile; with more than one, or a selector given, each one's selector. */
static Member *members(const Args *a)
{
    Member *ms = xalloc(sizeof *ms * (size_t)a->nmodels);
    int composite = a->nmodels > 1 || model_path(a->models[0]) != a->models[0];
    for (int i = 0; i < a->nmodels; i++) {
        ms[i].path = model_path(a->models[i]);
        if (!composite)
            continue;
        ms[i].selector = selector_of(a->models[i]);
        if (!*ms[i].selector || !*ms[i].path)
            die_usage("'%s': expected SELECTOR=MODEL, both non-empty", a->models[i]);
        for (const char *p = ms[i].selector; *p; p++)
            if (!isprint((unsigned char)*p))    /* it is quoted in comments of the output */
                die_usage("selector '%s' has a character that is not printable", ms[i].selector);
        for (int k = 0; k < i; k++)
            if (!strcmp(ms[k].selector, ms[i].selector))
                die_usage("two models have the selector '%s' ('%s' and '%s')", ms[i].selector,
                          ms[k].path, ms[i].path);
    }
    return ms;
}

/* -v: how long the phase that ends now took. */
static void phase(const Options *o, const char *what)
{
    static double last = -1;
    double t = now_seconds();
    if (last >= 0 && o->verbose)
        fprintf(stderr, "mlbc: %-8s %7.3f s\n", what, t - last);
    last = t;
}

/* The pipeline after the front end, one line per pass: M's graph, planned. */
static void compile(const Options *o, Member *ms, Onnx__ModelProto *proto)
{
    Model *m = import_model(proto);     /* import.c: protobuf -> graph IR */
    Graph *g = m->g;
    phase(o, "import");
    bind_ops(g);                        /* infer.c: each node's operator, or an error */
    infer_graph(g);                     /* infer.c, lower.c: shapes, folding, control flow */
    phase(o, "infer");
    remove_dead(g);                     /* dead.c: drop what nothing needs */
    if (fuse_graph(g))                  /* fuse.c: exact pattern fusions */
        remove_dead(g);
    ms->scratch = plan_memory(g);       /* plan.c: one scratch arena for intermediates */
    ms->m = m;
    phase(o, "passes");
}

static const char *header_path(const Args *a)
{
    if (a->header)
        return a->header;
    size_t len = strlen(a->out);
    if (len > 2 && !strcmp(a->out + len - 2, ".c"))
        return strf("%.*s.h", (int)(len - 2), a->out);
    return strf("%s.h", a->out);
}

int main(int argc, char **argv)
{
    Args a = parse_args(argc, argv);
    phase(&a.opt, "start");
    Member *ms = members(&a);
    diag_file = ms[0].path;
    if (!a.opt.name)
        a.opt.name = default_name(ms[0].path);
    if (!is_identifier(a.opt.name))
        die_usage("--name '%s' is not a C identifier", a.opt.name);

    Onnx__ModelProto *proto = load(&a, ms[0].path);
    phase(&a.opt, "load");
    if (a.print) {
        Buf b = {0};
        print_text(&b, proto);
        fwrite(b.p ? b.p : "", 1, b.len, stdout);
        return 0;
    }
    if (a.emit_onnx && !a.out && !a.info) {
        emit_onnx(a.emit_onnx, proto);
        return 0;
    }
    compile(&a.opt, &ms[0], proto);
    if (a.info)
        info(ms[0].m, ms[0].scratch);
    if (!a.out) {
        if (a.emit_onnx)
            emit_onnx(a.emit_onnx, proto);
        return 0;
    }
    for (int i = 1; i < a.nmodels; i++) {   /* the other models of a composite */
        diag_file = ms[i].path;
        compile(&a.opt, &ms[i], load(&a, ms[i].path));
    }
    Graph *api = ms[0].selector ? composite_interface(ms, a.nmodels, a.opt.name) : ms[0].m->g;
    const char *hpath = header_path(&a);
    const char *hname = strrchr(hpath, '/') ? strrchr(hpath, '/') + 1 : hpath;
    Output out = {0};
    emit_models(ms, a.nmodels, api, &a.opt, &out, hname);  /* emit.c: the code, the weights */
    phase(&a.opt, "emit");
    if (a.emit_onnx)
        emit_onnx(a.emit_onnx, proto);
    write_output(&out, &a.opt, a.out, hpath);        /* weights.c: the files, streamed */
    phase(&a.opt, "write");
    return 0;
}
