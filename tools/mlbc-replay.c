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

/* ---- main ------------------------------------------------------------------------------------ */

static const char *need(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) usage_error("option %s needs a value", argv[*i]);
    return argv[++*i];
}

int main(int argc, char **argv)
{
    const char *model = NULL, *symbol = NULL, *channel = NULL, *log_path = NULL;
    const char *input = NULL, *advice_opt = NULL;
    int check = 0, framing = MLBC_FRAMING_LLVM, timeout_ms = 0;
    mlbc_release_options ropt = { NULL, NULL, NULL };

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--model")) model = need(argc, argv, &i);
        else if (!strcmp(a, "--symbol")) symbol = need(argc, argv, &i);
        else if (!strcmp(a, "--channel")) channel = need(argc, argv, &i);
        else if (!strcmp(a, "--log")) log_path = need(argc, argv, &i);
        else if (!strcmp(a, "--advice")) advice_opt = need(argc, argv, &i);
        else if (!strcmp(a, "--check")) check = 1;
        else if (!strcmp(a, "--feed-prefix")) ropt.feed_prefix = need(argc, argv, &i);
        else if (!strcmp(a, "--fetch-prefix")) ropt.fetch_prefix = need(argc, argv, &i);
        else if (!strcmp(a, "--model-selector")) ropt.model_selector = need(argc, argv, &i);
        else if (!strcmp(a, "--timeout")) {
            const char *v = need(argc, argv, &i);
            char *end;
            long t = strtol(v, &end, 10);
            if (*end || end == v || t < 0 || t > 86400000)
                usage_error("--timeout: '%s' is not a number of milliseconds", v);
            timeout_ms = (int)t;
        } else if (!strcmp(a, "--framing")) {
            const char *v = need(argc, argv, &i);
            if (!strcmp(v, "llvm")) framing = MLBC_FRAMING_LLVM;
            else if (!strcmp(v, "bitstream")) framing = MLBC_FRAMING_BRIDGE_BITSTREAM;
            else if (!strcmp(v, "json")) framing = MLBC_FRAMING_BRIDGE_JSON;
            else usage_error("--framing: '%s' is not llvm, bitstream or json", v);
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (a[0] == '-' && a[1]) usage_error("unknown option '%s'", a);
        else if (input) usage_error("more than one input ('%s', '%s')", input, a);
        else input = a;
    }
    if (!model == !channel) usage_error("give one of --model and --channel");
    signal(SIGPIPE, SIG_IGN);

    /* The model's descriptor: to name what is missing, and as the default advice. */
    void *dl = NULL;
    const mlbc_model_desc *desc = NULL;
    char err[512] = "";
    if (model && !(dl = mlbc_model_open(model, symbol, &desc, err, sizeof err))) {
        error("%s", err);
        return 1;
    }

    FILE *in = stdin;
    const char *in_name = input && strcmp(input, "-") ? input : "<stdin>";
    if (input && strcmp(input, "-")) {
        in = fopen(input, "rb");
        if (!in) {
            error("cannot open %s: %s", input, strerror(errno));
            return 1;
        }
    }
    mlbc_log_reader *rd = mlbc_log_open(in, err, sizeof err);
    if (!rd) {
        error("%s: %s", in_name, err);
        return 1;
    }
    int nlog = mlbc_log_num_features(rd);
    mlbc_tensor_spec *logf = calloc((size_t)nlog + 1, sizeof *logf);
    mlbc_tensor_spec *feat = calloc((size_t)nlog + 2, sizeof *feat);
    int *from_log = calloc((size_t)nlog + 1, sizeof *from_log);
    const void **tensors = calloc((size_t)nlog + 2, sizeof *tensors);
    if (!logf || !feat || !from_log || !tensors) {
        error("out of memory");
        return 1;
    }
    for (int i = 0; i < nlog; i++) logf[i] = *mlbc_log_feature(rd, i);

    /* The advice: --advice, else the stream's, else the model's (first) output. */
    mlbc_tensor_spec advice;
    memset(&advice, 0, sizeof advice);
    int have_advice = 0;
    int64_t one = 1;
    if (advice_opt) {
        char name[MLBC_SPEC_MAX_NAME];
        snprintf(name, sizeof name, "%s", advice_opt);
        char *colon = strchr(name, ':');
        int type = 0;
        if (colon) {
            *colon = 0;
            type = mlbc_type_from_llvm_name(colon + 1);
            if (!type) usage_error("--advice: unknown type '%s' (int64_t, float, ...)", colon + 1);
        }
        advice = mlbc_spec(name, type ? type : MLBC_INT64, 1, &one);
        if (!type) {
            const mlbc_tensor_spec *la = mlbc_log_advice(rd);
            if (la && !strcmp(la->name, name)) advice = *la;
            for (int i = 0; i < nlog; i++)
                if (!strcmp(logf[i].name, name)) advice = logf[i];
            if (desc)
                for (int j = 0; j < desc->num_results; j++)
                    if (prefixed_eq(desc->results[j].name, ropt.fetch_prefix, name))
                        advice = mlbc_spec(name, desc->results[j].dtype, desc->results[j].rank,
                                           desc->results[j].shape);
        }
        have_advice = 1;
    } else if (mlbc_log_advice(rd)) {
        advice = *mlbc_log_advice(rd);
        have_advice = 1;
    } else if (desc && desc->num_results > 0) {
        const mlbc_tensor_desc *r = &desc->results[0];
        advice = mlbc_spec(strip_prefix(r->name, ropt.fetch_prefix), r->dtype, r->rank, r->shape);
        have_advice = 1;
    }
    if (!have_advice) {
        error("%s has no advice spec; name the decision with --advice NAME[:TYPE]", in_name);
        return 1;
    }

    /* Runner features: the log's, less a recorded decision (a feature named as the advice). */
    int recorded = -1, n = 0;
    for (int i = 0; i < nlog; i++) {
        if (!strcmp(logf[i].name, advice.name) && recorded < 0) {
            recorded = i;
            continue;
        }
        from_log[n] = i;
        feat[n++] = logf[i];
    }
    if (check && recorded < 0) {
        error("--check: %s records no decision (no feature named '%s')", in_name, advice.name);
        return 1;
    }
    if (check && mlbc_spec_bytes(&logf[recorded]) != mlbc_spec_bytes(&advice)) {
        error("--check: the recorded '%s' and the advice differ in type or shape", advice.name);
        return 1;
    }

    /* The first record: the pipe runner sends the first context when it opens. */
    mlbc_log_record rec;
    int k = mlbc_log_next(rd, &rec);
    char first_ctx[1024] = "";
    int skip_first_context = 0;
    if (k == 1 && rec.kind == MLBC_RECORD_CONTEXT) {
        snprintf(first_ctx, sizeof first_ctx, "%s", rec.context ? rec.context : "");
        skip_first_context = 1;
    }

    mlbc_runner *r = NULL;
    if (desc) {
        if (mlbc_model_check(desc, feat, n, &advice, &ropt, err, sizeof err) < 0) {
            error("%s does not fit the log: %s", model, err);
            return 1;
        }
        r = mlbc_runner_release(desc, feat, n, &advice, &ropt, err, sizeof err);
    } else {
        mlbc_pipe_options popt = { framing, timeout_ms, first_ctx };
        r = mlbc_runner_pipe(channel, feat, n, &advice, &popt, err, sizeof err);
    }
    if (!r) {
        error("%s: %s", model ? model : channel, err);
        return 1;
    }

    FILE *log_file = NULL;
    mlbc_logger *lg = NULL;
    const mlbc_tensor_spec *score = mlbc_log_score(rd);
    if (log_path) {
        feat[n] = advice;
        log_file = fopen(log_path, "wb");
        if (!log_file) {
            error("cannot write %s: %s", log_path, strerror(errno));
            return 1;
        }
        lg = mlbc_logger_open(log_file, feat, n + 1, score, NULL);
        if (!lg) {
            error("cannot start the training log %s", log_path);
            return 1;
        }
    }

    int failed = 0;
    long nobs = 0, ndiff = 0;
    size_t advice_bytes = mlbc_spec_bytes(&advice);
    for (; k == 1; k = mlbc_log_next(rd, &rec)) {
        const char *ctx = rec.context ? rec.context : "";
        if (rec.kind == MLBC_RECORD_CONTEXT) {
            if (skip_first_context) {
                skip_first_context = 0;
            } else if (mlbc_runner_set_context(r, ctx) != 0) {
                error("context \"%s\": %s", ctx, mlbc_runner_error(r));
                failed = 1;
                break;
            }
            if (lg && mlbc_logger_context(lg, ctx) != 0) {
                error("writing %s failed", log_path);
                failed = 1;
                break;
            }
            continue;
        }
        skip_first_context = 0;
        if (rec.kind == MLBC_RECORD_OUTCOME) {
            if (lg && score && mlbc_logger_outcome(lg, rec.tensors[0]) != 0) {
                error("writing %s failed", log_path);
                failed = 1;
                break;
            }
            continue;
        }
        if (rec.kind != MLBC_RECORD_OBSERVATION) continue;
        for (int i = 0; i < n; i++) {
            void *buf = mlbc_runner_input(r, i);
            if (buf) memcpy(buf, rec.tensors[from_log[i]], mlbc_spec_bytes(&feat[i]));
        }
        const void *a = mlbc_runner_evaluate(r);
        if (!a) {
            error("context \"%s\", observation %lld: %s", ctx, (long long)rec.id,
                  mlbc_runner_error(r));
            failed = 1;
            break;
        }
        nobs++;
        if (check && memcmp(a, rec.tensors[recorded], advice_bytes) != 0) {
            if (ndiff++ < 10) {
                fprintf(stderr, PROG ": context \"%s\", observation %lld: decision", ctx,
                        (long long)rec.id);
                print_values(stderr, advice.type, a, mlbc_spec_count(&advice));
                fprintf(stderr, ", recorded");
                print_values(stderr, advice.type, rec.tensors[recorded],
                             mlbc_spec_count(&advice));
                fputc('\n', stderr);
            }
        }
        if (lg) {
            for (int i = 0; i < n; i++) tensors[i] = mlbc_runner_input(r, i);
            tensors[n] = a;
            if (mlbc_logger_observation(lg, tensors) != 0) {
                error("writing %s failed", log_path);
                failed = 1;
                break;
            }
        } else {
            print_json_string(stdout, ctx);
            printf(" %lld", (long long)rec.id);
            print_values(stdout, advice.type, a, mlbc_spec_count(&advice));
            putchar('\n');
        }
    }
    if (k < 0 && !failed) {
        error("%s: %s", in_name, mlbc_log_error(rd));
        failed = 1;
    }
    if (lg && mlbc_logger_close(lg) != 0) {
        error("writing %s failed", log_path);
        failed = 1;
    }
    if (log_file && fclose(log_file) != 0) {
        error("writing %s failed: %s", log_path, strerror(errno));
        failed = 1;
    }
    if (fflush(stdout) != 0) {
        error("writing the output failed: %s", strerror(errno));
        failed = 1;
    }
    if (check) {
        if (ndiff)
            fprintf(stderr, PROG ": %ld of %ld decision(s) differ from the recorded '%s'\n",
                    ndiff, nobs, advice.name);
        else if (!failed)
            fprintf(stderr, PROG ": all %ld decision(s) equal the recorded '%s'\n", nobs,
                    advice.name);
    }
    mlbc_runner_free(r);
    mlbc_log_close(rd);
    if (in != stdin) fclose(in);
    mlbc_model_close(dl);
    free(logf);
    free(feat);
    free(from_log);
    free(tensors);
    return failed || ndiff ? 1 : 0;
}
