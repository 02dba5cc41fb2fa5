/* mlbc-replay - evaluate every observation of a training log or captured interactive stream.
 *
 *   mlbc-replay --model policy.so [options] [LOG]
 *   mlbc-replay --channel BASE --advice NAME[:TYPE] [options] [LOG]
 *
 * Reads LOG (default: standard input) with the runtime's log reader: LLVM training logs
 * (features, optional outcomes) and streams captured from a compiler's BASE.out (header
 * with "advice", adjacent contexts). Each observation's features are bound by name to a
 * runner: the shared-object runner (--model), or the pipe runner (--channel), which asks a
 * host over BASE.in/BASE.out as a compiler would. Prints one line per observation:
 *
 *     CONTEXT OBSERVATION DECISION...      (CONTEXT as a JSON string, e.g. "" 0 1)
 *
 * or, with --log FILE, writes a training log: the features, then the decision as one more
 * feature named as the advice (outcomes of the input are kept). A log feature named as the
 * advice (a recorded decision, as mlbc-serve and LLVM write) is not given to the runner;
 * --check compares the new decisions with it.
 * Exit status: 0; 1 on an error or (with --check) a differing decision; 2 for bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc_runtime.h"

#define PROG "mlbc-replay"

static const char usage_text[] =
    "usage: " PROG " (--model POLICY.so | --channel BASE) [options] [LOG]\n"
    "\n"
    "Evaluates every observation of LOG (a training log or a stream captured from a\n"
    "compiler's BASE.out; default: standard input) and prints one line per observation:\n"
    "the context as a JSON string, the observation number, the decision.\n"
    "\n"
    "options:\n"
    "  --model PATH         evaluate with a policy compiled by mlbc, built with cc -shared -fPIC\n"
    "                       (or an ONNX model, .onnx/.onnxtxt, compiled into mlbc's cache)\n"
    "  --symbol NAME        its descriptor symbol (default: file name without extension + _desc)\n"
    "  --channel BASE       ask a host over BASE.in/BASE.out (the host creates the FIFOs)\n"
    "  --framing F          with --channel: llvm (default), bitstream or json (ML-Compiler-\n"
    "                       Bridge)\n"
    "  --timeout MS         with --channel: limit on every wait for the host (default 10000)\n"
    "  --advice NAME[:TYPE] the decision's name (and LLVM type, e.g. int64_t, float); default:\n"
    "                       the stream's advice, else the model's first output\n"
    "  --log FILE           write a training log (features + decision) instead of printing\n"
    "  --check              compare with the decision recorded in LOG; exit 1 if any differs\n"
    "  --feed-prefix P, --fetch-prefix P, --model-selector S   as LLVM's release runner\n"
    "  -h, --help           this text\n";

static void verror(const char *fmt, va_list ap)
{
    fprintf(stderr, PROG ": error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

static void error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(fmt, ap);
    va_end(ap);
}

static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try '" PROG " --help'.\n");
    exit(2);
}

/* ---- names with LLVM's feed_/fetch_ prefixes ------------------------------------------- */

static int prefixed_eq(const char *name, const char *prefix, const char *feature)
{
    size_t p = prefix ? strlen(prefix) : 0;
    if (p && strncmp(name, prefix, p) == 0 && strcmp(name + p, feature) == 0) return 1;
    return strcmp(name, feature) == 0;
}

static const char *strip_prefix(const char *name, const char *prefix)
{
    size_t p = prefix ? strlen(prefix) : 0;
    return p && strncmp(name, prefix, p) == 0 && name[p] ? name + p : name;
}

/* ---- printing -------------------------------------------------------------------------------- */

static void print_json_string(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(o, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", o);
        else if (*p == '\t') fputs("\\t", o);
        else if (*p == '\r') fputs("\\r", o);
        else if (*p < 0x20) fprintf(o, "\\u%04x", *p);
        else fputc(*p, o);
    }
    fputc('"', o);
}

static void print_values(FILE *o, int type, const void *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        fputc(' ', o);
        switch (type) {
        case MLBC_FLOAT: fprintf(o, "%.9g", (double)((const float *)p)[i]); break;
        case MLBC_DOUBLE: fprintf(o, "%.17g", ((const double *)p)[i]); break;
        case MLBC_INT8: fprintf(o, "%d", ((const int8_t *)p)[i]); break;
        case MLBC_UINT8: case MLBC_BOOL: fprintf(o, "%u", ((const uint8_t *)p)[i]); break;
        case MLBC_INT16: fprintf(o, "%d", ((const int16_t *)p)[i]); break;
        case MLBC_UINT16: fprintf(o, "%u", ((const uint16_t *)p)[i]); break;
        case MLBC_INT32: fprintf(o, "%d", ((const int32_t *)p)[i]); break;
        case MLBC_UINT32: fprintf(o, "%u", ((const uint32_t *)p)[i]); break;
        case MLBC_INT64: fprintf(o, "%lld", (long long)((const int64_t *)p)[i]); break;
        case MLBC_UINT64:
            fprintf(o, "%llu", (unsigned long long)((const uint64_t *)p)[i]);
            break;
        default: fputs("?", o);
        }
    }
}

/* ---- options --------------------------------------------------------------------------------- */

typedef struct options {
    const char *model, *symbol, *channel, *log_path, *input, *advice;
    int check, framing, timeout_ms;
    mlbc_release_options ropt;
} options;

static const char *need(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) usage_error("option %s needs a value", argv[*i]);
    return argv[++*i];
}

static int parse_timeout(const char *v)
{
    char *end;
    long t = strtol(v, &end, 10);
    if (*end || end == v || t < 0 || t > 86400000)
        usage_error("--timeout: '%s' is not a number of milliseconds", v);
    return (int)t;
}

static int parse_framing(const char *v)
{
    if (!strcmp(v, "llvm")) return MLBC_FRAMING_LLVM;
    if (!strcmp(v, "bitstream")) return MLBC_FRAMING_BRIDGE_BITSTREAM;
    if (!strcmp(v, "json")) return MLBC_FRAMING_BRIDGE_JSON;
    usage_error("--framing: '%s' is not llvm, bitstream or json", v);
    return 0;
}

/* Exits on bad usage (2) and after --help (0). */
static void parse_options(options *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--model")) o->model = need(argc, argv, &i);
        else if (!strcmp(a, "--symbol")) o->symbol = need(argc, argv, &i);
        else if (!strcmp(a, "--channel")) o->channel = need(argc, argv, &i);
        else if (!strcmp(a, "--log")) o->log_path = need(argc, argv, &i);
        else if (!strcmp(a, "--advice")) o->advice = need(argc, argv, &i);
        else if (!strcmp(a, "--check")) o->check = 1;
        else if (!strcmp(a, "--feed-prefix")) o->ropt.feed_prefix = need(argc, argv, &i);
        else if (!strcmp(a, "--fetch-prefix")) o->ropt.fetch_prefix = need(argc, argv, &i);
        else if (!strcmp(a, "--model-selector")) o->ropt.model_selector = need(argc, argv, &i);
        else if (!strcmp(a, "--timeout")) o->timeout_ms = parse_timeout(need(argc, argv, &i));
        else if (!strcmp(a, "--framing")) o->framing = parse_framing(need(argc, argv, &i));
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (a[0] == '-' && a[1]) usage_error("unknown option '%s'", a);
        else if (o->input) usage_error("more than one input ('%s', '%s')", o->input, a);
        else o->input = a;
    }
    if (!o->model == !o->channel) usage_error("give one of --model and --channel");
}

/* ---- the replay ------------------------------------------------------------------------------ */

typedef struct replay {
    options opt;
    const char *in_name;
    FILE *in;
    void *dl;                       /* the policy's shared object (--model) */
    const mlbc_model_desc *desc;
    mlbc_log_reader *rd;
    char err[512];

    int nlog;                       /* the log's features */
    mlbc_tensor_spec *logf;
    int n;                          /* the runner's features (+ the decision, for --log) */
    mlbc_tensor_spec *feat;
    int *from_log;                  /* feat[i] is logf[from_log[i]] */
    const void **tensors;           /* one observation for the training log */
    int recorded;                   /* the recorded decision in logf, or -1 */
    mlbc_tensor_spec advice;
    size_t advice_bytes;

    mlbc_log_record rec;            /* the current record; k: what mlbc_log_next said */
    int k;
    char first_ctx[1024];
    int skip_first_context;
    mlbc_runner *r;

    FILE *log_file;                 /* --log */
    mlbc_logger *lg;
    const mlbc_tensor_spec *score;

    long nobs, ndiff;
    int failed;
} replay;

/* The model's descriptor: to name what is missing, and as the default advice. */
static int open_model(replay *rp)
{
    if (!rp->opt.model) return 0;
    rp->dl = mlbc_model_open(rp->opt.model, rp->opt.symbol, &rp->desc, rp->err, sizeof rp->err);
    if (!rp->dl) {
        error("%s", rp->err);
        return -1;
    }
    return 0;
}

static int open_input(replay *rp)
{
    const char *input = rp->opt.input;
    rp->in = stdin;
    rp->in_name = input && strcmp(input, "-") ? input : "<stdin>";
    if (input && strcmp(input, "-")) {
        rp->in = fopen(input, "rb");
        if (!rp->in) {
            error("cannot open %s: %s", input, strerror(errno));
            return -1;
        }
    }
    rp->rd = mlbc_log_open(rp->in, rp->err, sizeof rp->err);
    if (!rp->rd) {
        error("%s: %s", rp->in_name, rp->err);
        return -1;
    }
    int nlog = rp->nlog = mlbc_log_num_features(rp->rd);
    rp->logf = calloc((size_t)nlog + 1, sizeof *rp->logf);
    rp->feat = calloc((size_t)nlog + 2, sizeof *rp->feat);
    rp->from_log = calloc((size_t)nlog + 1, sizeof *rp->from_log);
    rp->tensors = calloc((size_t)nlog + 2, sizeof *rp->tensors);
    if (!rp->logf || !rp->feat || !rp->from_log || !rp->tensors) {
        error("out of memory");
        return -1;
    }
    for (int i = 0; i < nlog; i++) rp->logf[i] = *mlbc_log_feature(rp->rd, i);
    return 0;
}

/* --advice NAME[:TYPE]. Without a type, the spec of what is so named in the stream's
 * advice, the log's features or the model's outputs (the later wins), else int64_t. */
static mlbc_tensor_spec named_advice(const replay *rp)
{
    int64_t one = 1;
    char name[MLBC_SPEC_MAX_NAME];
    snprintf(name, sizeof name, "%s", rp->opt.advice);
    char *colon = strchr(name, ':');
    int type = 0;
    if (colon) {
        *colon = 0;
        type = mlbc_type_from_llvm_name(colon + 1);
        if (!type) usage_error("--advice: unknown type '%s' (int64_t, float, ...)", colon + 1);
    }
    mlbc_tensor_spec advice = mlbc_spec(name, type ? type : MLBC_INT64, 1, &one);
    if (type) return advice;
    const mlbc_tensor_spec *la = mlbc_log_advice(rp->rd);
    if (la && !strcmp(la->name, name)) advice = *la;
    for (int i = 0; i < rp->nlog; i++)
        if (!strcmp(rp->logf[i].name, name)) advice = rp->logf[i];
    const mlbc_model_desc *d = rp->desc;
    for (int j = 0; d && j < d->num_results; j++)
        if (prefixed_eq(d->results[j].name, rp->opt.ropt.fetch_prefix, name))
            advice = mlbc_spec(name, d->results[j].dtype, d->results[j].rank, d->results[j].shape);
    return advice;
}

/* The advice: --advice, else the stream's, else the model's (first) output. */
static int choose_advice(replay *rp)
{
    if (rp->opt.advice) {
        rp->advice = named_advice(rp);
    } else if (mlbc_log_advice(rp->rd)) {
        rp->advice = *mlbc_log_advice(rp->rd);
    } else if (rp->desc && rp->desc->num_results > 0) {
        const mlbc_tensor_desc *r = &rp->desc->results[0];
        rp->advice = mlbc_spec(strip_prefix(r->name, rp->opt.ropt.fetch_prefix), r->dtype,
                               r->rank, r->shape);
    } else {
        error("%s has no advice spec; name the decision with --advice NAME[:TYPE]", rp->in_name);
        return -1;
    }
    rp->advice_bytes = mlbc_spec_bytes(&rp->advice);
    return 0;
}

/* Runner features: the log's, less a recorded decision (a feature named as the advice). */
static int choose_features(replay *rp)
{
    const char *name = rp->advice.name;
    for (int i = 0; i < rp->nlog; i++) {
        if (!strcmp(rp->logf[i].name, name) && rp->recorded < 0) {
            rp->recorded = i;
            continue;
        }
        rp->from_log[rp->n] = i;
        rp->feat[rp->n++] = rp->logf[i];
    }
    if (rp->opt.check && rp->recorded < 0) {
        error("--check: %s records no decision (no feature named '%s')", rp->in_name, name);
        return -1;
    }
    if (rp->opt.check && mlbc_spec_bytes(&rp->logf[rp->recorded]) != rp->advice_bytes) {
        error("--check: the recorded '%s' and the advice differ in type or shape", name);
        return -1;
    }
    return 0;
}

/* Reads the first record: the pipe runner sends the first context when it opens. */
static void read_first_record(replay *rp)
{
    rp->k = mlbc_log_next(rp->rd, &rp->rec);
    if (rp->k == 1 && rp->rec.kind == MLBC_RECORD_CONTEXT) {
        snprintf(rp->first_ctx, sizeof rp->first_ctx, "%s",
                 rp->rec.context ? rp->rec.context : "");
        rp->skip_first_context = 1;
    }
}

static int start_runner(replay *rp)
{
    const options *o = &rp->opt;
    read_first_record(rp);
    if (rp->desc) {
        if (mlbc_model_check(rp->desc, rp->feat, rp->n, &rp->advice, &o->ropt, rp->err,
                             sizeof rp->err) < 0) {
            error("%s does not fit the log: %s", o->model, rp->err);
            return -1;
        }
        rp->r = mlbc_runner_release(rp->desc, rp->feat, rp->n, &rp->advice, &o->ropt, rp->err,
                                    sizeof rp->err);
    } else {
        mlbc_pipe_options popt = { o->framing, o->timeout_ms, rp->first_ctx };
        rp->r = mlbc_runner_pipe(o->channel, rp->feat, rp->n, &rp->advice, &popt, rp->err,
                                 sizeof rp->err);
    }
    if (!rp->r) {
        error("%s: %s", o->model ? o->model : o->channel, rp->err);
        return -1;
    }
    return 0;
}

/* --log: the runner's features, then the decision; the input's outcomes are kept. */
static int start_training_log(replay *rp)
{
    rp->score = mlbc_log_score(rp->rd);
    if (!rp->opt.log_path) return 0;
    rp->feat[rp->n] = rp->advice;
    rp->log_file = fopen(rp->opt.log_path, "wb");
    if (!rp->log_file) {
        error("cannot write %s: %s", rp->opt.log_path, strerror(errno));
        return -1;
    }
    rp->lg = mlbc_logger_open(rp->log_file, rp->feat, rp->n + 1, rp->score, NULL);
    if (!rp->lg) {
        error("cannot start the training log %s", rp->opt.log_path);
        return -1;
    }
    return 0;
}

/* ---- one record ------------------------------------------------------------------------------ */

static int log_write_failed(const replay *rp)
{
    error("writing %s failed", rp->opt.log_path);
    return -1;
}

static int replay_context(replay *rp, const char *ctx)
{
    if (rp->skip_first_context) {
        rp->skip_first_context = 0;
    } else if (mlbc_runner_set_context(rp->r, ctx) != 0) {
        error("context \"%s\": %s", ctx, mlbc_runner_error(rp->r));
        return -1;
    }
    if (rp->lg && mlbc_logger_context(rp->lg, ctx) != 0) return log_write_failed(rp);
    return 0;
}

/* --check: reports the first 10 decisions that differ from the recorded one. */
static void check_decision(replay *rp, const char *ctx, const void *a)
{
    const void *rec = rp->rec.tensors[rp->recorded];
    if (memcmp(a, rec, rp->advice_bytes) == 0) return;
    if (rp->ndiff++ >= 10) return;  /* counted, not shown */
    int64_t count = mlbc_spec_count(&rp->advice);
    fprintf(stderr, PROG ": context \"%s\", observation %lld: decision", ctx,
            (long long)rp->rec.id);
    print_values(stderr, rp->advice.type, a, count);
    fprintf(stderr, ", recorded");
    print_values(stderr, rp->advice.type, rec, count);
    fputc('\n', stderr);
}

/* Writes the observation and decision a to the training log, or prints the decision. */
static int put_decision(replay *rp, const char *ctx, const void *a)
{
    if (rp->lg) {
        for (int i = 0; i < rp->n; i++) rp->tensors[i] = mlbc_runner_input(rp->r, i);
        rp->tensors[rp->n] = a;
        if (mlbc_logger_observation(rp->lg, rp->tensors) != 0) return log_write_failed(rp);
        return 0;
    }
    print_json_string(stdout, ctx);
    printf(" %lld", (long long)rp->rec.id);
    print_values(stdout, rp->advice.type, a, mlbc_spec_count(&rp->advice));
    putchar('\n');
    return 0;
}

static int replay_observation(replay *rp, const char *ctx)
{
    for (int i = 0; i < rp->n; i++) {
        void *buf = mlbc_runner_input(rp->r, i);
        if (buf)
            memcpy(buf, rp->rec.tensors[rp->from_log[i]], mlbc_spec_bytes(&rp->feat[i]));
    }
    const void *a = mlbc_runner_evaluate(rp->r);
    if (!a) {
        error("context \"%s\", observation %lld: %s", ctx, (long long)rp->rec.id,
              mlbc_runner_error(rp->r));
        return -1;
    }
    rp->nobs++;
    if (rp->opt.check) check_decision(rp, ctx, a);
    return put_decision(rp, ctx, a);
}

/* Returns -1 after an error. */
static int replay_record(replay *rp)
{
    const mlbc_log_record *rec = &rp->rec;
    const char *ctx = rec->context ? rec->context : "";
    if (rec->kind == MLBC_RECORD_CONTEXT) return replay_context(rp, ctx);
    rp->skip_first_context = 0;
    if (rec->kind == MLBC_RECORD_OUTCOME) {
        if (rp->lg && rp->score && mlbc_logger_outcome(rp->lg, rec->tensors[0]) != 0)
            return log_write_failed(rp);
        return 0;
    }
    if (rec->kind != MLBC_RECORD_OBSERVATION) return 0;
    return replay_observation(rp, ctx);
}

/* ---- the whole log --------------------------------------------------------------------------- */

static void replay_records(replay *rp)
{
    for (; rp->k == 1; rp->k = mlbc_log_next(rp->rd, &rp->rec)) {
        if (replay_record(rp) < 0) {
            rp->failed = 1;
            return;
        }
    }
    if (rp->k < 0) {
        error("%s: %s", rp->in_name, mlbc_log_error(rp->rd));
        rp->failed = 1;
    }
}

/* Closes the training log, flushes the output and sums up --check. */
static void finish(replay *rp)
{
    if (rp->lg && mlbc_logger_close(rp->lg) != 0) {
        log_write_failed(rp);
        rp->failed = 1;
    }
    rp->lg = NULL;
    if (rp->log_file && fclose(rp->log_file) != 0) {
        error("writing %s failed: %s", rp->opt.log_path, strerror(errno));
        rp->failed = 1;
    }
    rp->log_file = NULL;
    if (fflush(stdout) != 0) {
        error("writing the output failed: %s", strerror(errno));
        rp->failed = 1;
    }
    if (!rp->opt.check) return;
    if (rp->ndiff)
        fprintf(stderr, PROG ": %ld of %ld decision(s) differ from the recorded '%s'\n",
                rp->ndiff, rp->nobs, rp->advice.name);
    else if (!rp->failed)
        fprintf(stderr, PROG ": all %ld decision(s) equal the recorded '%s'\n", rp->nobs,
                rp->advice.name);
}

/* Frees what is left (after a failed start, also the training log's file, as exit would). */
static void release(replay *rp)
{
    if (rp->log_file) fclose(rp->log_file);
    mlbc_runner_free(rp->r);
    if (rp->rd) mlbc_log_close(rp->rd);
    if (rp->in && rp->in != stdin) fclose(rp->in);
    mlbc_model_close(rp->dl);
    free(rp->logf);
    free(rp->feat);
    free(rp->from_log);
    free(rp->tensors);
}

int main(int argc, char **argv)
{
    replay rp = { .opt = { .framing = MLBC_FRAMING_LLVM }, .recorded = -1 };
    parse_options(&rp.opt, argc, argv);
    signal(SIGPIPE, SIG_IGN);
    if (open_model(&rp) < 0 || open_input(&rp) < 0 || choose_advice(&rp) < 0 ||
        choose_features(&rp) < 0 || start_runner(&rp) < 0 || start_training_log(&rp) < 0) {
        release(&rp);
        return 1;
    }
    replay_records(&rp);
    finish(&rp);
    release(&rp);
    return rp.failed || rp.ndiff ? 1 : 0;
}
