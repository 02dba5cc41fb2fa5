/* emit.c - the C back end: header, weights, kernel instances and the run function.
 *
 * Operators write kernels by instantiating templates (templates/, built into the binary)
 * and append calls to NAME_run. Everything emitted is deterministic: names come from graph
 * positions, never from addresses or hash order.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlbc.h"

typedef struct Instance {
    const char *text;   /* instantiated with ${FN} left in place: the dedup key */
    const char *name;
} Instance;

/* The statements of one function of the context: NAME_run, or NAME_init for the nodes that
 * plan.c marked `once`. */
typedef struct Code {
    Buf body;
    char *temp_used;    /* per value id: its scratch pointer appears in the code */
    int uses_scratch;   /* the code reads or writes the scratch arena */
    int uses_weights;   /* the code reads struct NAME_weights (W) */
} Code;

/* One model of the file and the code of its functions: NAME_run and NAME_once, or in a
 * composite NAME_run_I and NAME_once_I, which NAME_run and NAME_once call. */
typedef struct Part {
    Graph *g;
    Code run, init;
    const char *selector; /* composite: the string whose MD5 selects it; else NULL */
    const char *wprefix;  /* of its weights' names, "" or "mI_": value ids repeat across graphs */
    int64_t base;         /* where its temporaries start in ctx->scratch */
} Part;

struct Emit {
    const Options *opt;
    Graph *api;         /* the context's arguments and results */
    Part *parts, *part; /* every model; the one being written */
    int nparts;
    int composite;      /* NAME_run dispatches on model_selector */
    WeightTable *weights; /* the arrays the code reads, as members of struct NAME_weights */
    Buf kernels;        /* static functions, shared by all parts */
    Code *code;         /* where statements go: &part->run or &part->init */
    Instance *inst;
    int ninst, capinst;
    const char **helpers;
    int nhelpers, caphelpers;
    char *weight_done;  /* per value id: array already emitted */
    uint64_t fingerprint; /* of the code: what a weights file must match */
    int nchecks;
    int blas_calls;     /* products given to CBLAS (--blas) */
};

int use_blas(Emit *e) { return e->opt->blas; }
void count_blas_call(Emit *e) { e->blas_calls++; }

static const char *tensor_comment(const Value *v)
{
    return strf("%s: %s%s", c_comment(v->name), dtype_name(v->dt), shape_str(v));
}

/* ---- constants ---- */

static void emit_scalar(Buf *b, const Value *v, int64_t i)
{
    if (v->dt == DT_FLOAT || v->dt == DT_DOUBLE) {
        buf_float_lit(b, value_get_f(v, i), v->dt);
    } else if (v->dt == DT_FLOAT16 || v->dt == DT_BFLOAT16) {
        buf_printf(b, "0x%04x", ((const uint16_t *)v->data)[i]);  /* raw bits */
    } else if (v->dt == DT_UINT64) {
        buf_printf(b, "%lluULL", (unsigned long long)((const uint64_t *)v->data)[i]);
    } else if (v->dt == DT_INT32 && value_get_i(v, i) == INT32_MIN) {
        buf_puts(b, "(-2147483647 - 1)");
    } else if (v->dt == DT_UINT32) {
        buf_printf(b, "%lluu", (unsigned long long)value_get_i(v, i));
    } else {
        buf_puts(b, lit(value_get_i(v, i)));
    }
}

const char *cval(const Value *v, int64_t i)
{
    Buf b = {0};
    emit_scalar(&b, v, i);
    return b.p;
}

static const char *weight_name(Emit *e, const Value *v)
{
    return strf("%sw%d_%s", e->part->wprefix, v->id, c_ident(v->name));
}

/* A constant's own bytes become a member of struct NAME_weights, read through W (NAME_run). */
static void emit_weight(Emit *e, const Value *v)
{
    if (e->weight_done[v->id])
        return;
    e->weight_done[v->id] = 1;
    weights_add(e->weights, (WeightArray){.name = weight_name(e, v), .dt = v->dt,
                                          .doc = tensor_comment(v),
                                          .count = numel(v), .data = v->data});
}

/* ---- buffers ---- */

static const char *temp_name(const Value *v) { return strf("t%d", v->id); }

/* Member NAME of the weights, as the function being written reads it. */
static const char *weight_ref(Emit *e, const char *name)
{
    e->code->uses_weights = 1;
    return strf("W->%s", name);
}

const char *ref(Emit *e, const Value *v)
{
    if (v->alias)
        return ref(e, v->alias);
    if (v->data) {
        emit_weight(e, v);
        return weight_ref(e, weight_name(e, v));
    }
    if (v->arg_index >= 0)
        return strf("ctx->arg%d", v->arg_index);
    if (v->result_index >= 0)
        return strf("ctx->res%d", v->result_index);
    if (v->offset < 0)
        die("internal: '%s' has no buffer", v->name);
    e->code->temp_used[v->id] = 1;
    e->code->uses_scratch = 1;
    return temp_name(v);
}

int value_in_code(const Emit *e, const Value *v) { return v->data && !e->opt->weights_file; }

const char *workspace_ref(Emit *e, const Node *n)
{
    if (!n->ws_bytes)
        die("internal: node '%s' (%s) has no workspace", n->name, n->op);
    e->code->uses_scratch = 1;
    return strf("(float *)(scratch + %lld)", (long long)n->ws_offset);
}

/* ---- templates ---- */

/* Template files may start lines with "//": notes for template authors, not emitted. */
static const char *template_body(const char *name)
{
    const char *t = template_text(name);
    if (!t)
        die("internal: no template '%s'", name);
    Buf b = {0};
    while (*t) {
        const char *nl = strchr(t, '\n');
        size_t len = nl ? (size_t)(nl - t + 1) : strlen(t);
        const char *p = t;
        while (*p == ' ')
            p++;
        if (!(p[0] == '/' && p[1] == '/'))
            buf_put(&b, t, len);
        t += len;
    }
    return b.p ? b.p : "";
}

static const char *lookup_kv(const char **kv, const char *key, size_t keylen)
{
    for (; kv[0]; kv += 2)
        if (strlen(kv[0]) == keylen && !strncmp(kv[0], key, keylen))
            return kv[1];
    return NULL;
}

/* Replace ${KEY} from kv; ${FN} is kept for the caller. */
static const char *substitute(const char *tmpl, const char *text, const char **kv)
{
    Buf b = {0};
    for (const char *p = text; *p;) {
        if (p[0] == '$' && p[1] == '{') {
            const char *end = strchr(p, '}');
            if (!end)
                die("internal: template '%s': unterminated ${", tmpl);
            size_t keylen = (size_t)(end - p - 2);
            const char *val = lookup_kv(kv, p + 2, keylen);
            if (val) {
                buf_puts(&b, val);
                p = end + 1;
                continue;
            }
            if (!(keylen == 2 && !strncmp(p + 2, "FN", 2)))
                die("internal: template '%s' needs ${%.*s}", tmpl, (int)keylen, p + 2);
        }
        buf_put(&b, p, 1);
        p++;
    }
    return b.p ? b.p : "";
}

static const char *replace_fn(const char *text, const char *name)
{
    Buf b = {0};
    for (const char *p = text; *p;) {
        if (!strncmp(p, "${FN}", 5)) {
            buf_puts(&b, name);
            p += 5;
        } else {
            buf_put(&b, p++, 1);
        }
    }
    return b.p;
}

static const char *op_prefix(const Node *n)
{
    char buf[40];
    int k = 0;
    for (const char *s = n->op; *s && k < 39; s++)
        buf[k++] = (char)tolower((unsigned char)*s);
    buf[k] = 0;
    return xstrdup(buf);
}

/* The helpers (templates emitted once, before the kernels) that generated code may call, by
 * the names they define: whatever emits code need not know which it uses. */
static const struct {
    const char *call, *tmpl;
} helper_calls[] = {
    /* the paths' macros first: every template below that tests them follows isa */
    {"MLBC_X86", "isa"}, {"MLBC_NEON", "isa"},
    {"_mm", "intrinsics"}, {"__m128", "intrinsics"}, {"__m256", "intrinsics"},
    {"__m512", "intrinsics"}, {"float32x4_t", "intrinsics"},
    {"mlbc_h2f(", "half"}, {"mlbc_f2h(", "half"}, {"mlbc_bf2f(", "half"}, {"mlbc_f2bf(", "half"},
    {"max_(", "minmax"}, {"min_(", "minmax"}, {"fmax_nan(", "minmax"}, {"fmin_nan(", "minmax"},
    {"mlbc_tanhf(", "tanh"}, {"mlbc_pool_taps(", "pool_taps"},
    {"mlbc_dot_d(", "rnn_dot_d"}, {"mlbc_dot_h(", "rnn_dot_h"},
    {"mlbc_maddf(", "maddf"}, {"mlbc_accf(", "accf"}, {"mlbc_madd(", "madd"},
    {"mlbc_isa(", "isa"}, {"mlbc_gemm_f32(", "gemm_f32"}, {"mlbc_dots_f32(", "dots_f32"},
    {"mlbc_gemv_f32(", "gemv_f32"}, {"mlbc_gemm_f32_small(", "gemm_f32"},
    {"mlbc_gemm_f32_base(", "gemm_shared_f32"},
    /* the float products' entry points call mlbc_isa() and mlbc_gemm_f32_c(): isa, listed
     * first, is included before the tiles, which use its macros */
    {"mlbc_gemm_f32_taps(", "gemm_taps_f32"}, {"mlbc_gemm_f32_pix(", "gemm_pix_f32"},
    {"mlbc_gemm_f32_taps_pool(", "gemm_taps_pool_f32"},
    {"mlbc_gemm_f32_c(", "gemm_tile_f32"},
    /* the array loop first, for the same reason */
    {"MLBC_VMAP(", "vmath_map"}, {"mlbc_vexp_f32(", "vmath_exp"},
    {"mlbc_vsigmoid_f32(", "vmath_sigmoid"}, {"mlbc_vsilu_f32(", "vmath_sigmoid"},
    {"mlbc_vsigmoid_c(", "vmath_sigmoid"}, {"mlbc_vsilu_c(", "vmath_sigmoid"},
    {"mlbc_vtanh_f32(", "vmath_tanh"},
    {"mlbc_verf_f32(", "vmath_erf"}, {"mlbc_verf_c(", "vmath_erf"}, {"mlbc_expk_", "vmath_expk"}, {"mlbc_expneg_", "vmath_expneg"},
    /* the LSTM's state pass calls tanh per element; the LSTM calls its array loop too */
    {"mlbc_lstm_state_f32(", "rnn_lstm_state"}, {"mlbc_vtanh_c(", "vmath_tanh"},
    {"mlbc_layernorm_f32(", "norm_layer_f32"}, {"mlbc_vdivs_f32(", "vmath_divs"},
    {"mlbc_copy(", "copy"}, {"MLBC_F8_ADD(", "lanes8"}, {"mlbc_transpose_f32(", "transpose_f32"},
    {"mlbc_tile8_avx2(", "tile_transpose"}, {"mlbc_tile16_avx512(", "tile_transpose"},
    {"mlbc_sum_seq_f32(", "sum_seq_f32"},
};

static void helper(Emit *e, const char *tmpl);

/* TEXT without its comments: a model's name quoted in one is no call nor use of anything. */
static const char *uncommented(const char *text)
{
    Buf b = {0};
    const char *open;
    while ((open = strstr(text, "/*")) != NULL) {
        buf_put(&b, text, (size_t)(open - text));
        const char *end = strstr(open + 2, "*/");
        text = end ? end + 2 : "";
    }
    buf_puts(&b, text);
    return b.p ? b.p : "";
}

/* CODE has an identifier that starts with NAME: not the tail of a weight's member, named
 * after a model's value ("w3_mlbc_expneg_"). */
static int mentions(const char *code, const char *name)
{
    for (const char *p = code; (p = strstr(p, name)) != NULL; p++)
        if (p == code || !is_ident_char(p[-1]))
            return 1;
    return 0;
}

static void helpers_for(Emit *e, const char *code)
{
    code = uncommented(code);
    for (size_t i = 0; i < sizeof helper_calls / sizeof helper_calls[0]; i++)
        if (mentions(code, helper_calls[i].call))
            helper(e, helper_calls[i].tmpl);
}

/* TEXT for a comment whose text starts at column COL: broken at spaces into lines
 * of at most MLBC_COMMENT_WIDTH columns, each continued by LEAD " * ". A word longer than a
 * line stays whole. */
static const char *wrap_comment(const char *text, int col, const char *lead)
{
    Buf b = {0};
    int at = col;
    while (*text) {
        size_t word = strcspn(text, " ");
        if (at > col && at + 1 + (int)word > MLBC_COMMENT_WIDTH) {
            buf_printf(&b, "\n%s * ", lead);
            at = (int)strlen(lead) + 3;
        } else if (at > col) {
            buf_puts(&b, " ");
            at++;
        }
        buf_put(&b, text, word);
        at += (int)word;
        text += word;
        text += strspn(text, " ");
    }
    return b.p ? b.p : "";
}

/* The text of template TMPL with kv's values, its ${FN} kept. */
static const char *kernel_text(const char *tmpl, const char **kv)
{
    /* Every template's comment has ${DOC} alone on its first line, from column 3. */
    for (int i = 0; kv[i]; i += 2)
        if (!strcmp(kv[i], "DOC"))
            kv[i + 1] = wrap_comment(kv[i + 1], 3, "");
    return unloop(substitute(tmpl, template_body(tmpl), kv));
}

/* The kernel TEXT under the name it already has, or under a new one, emitted. */
static const char *instance(Emit *e, Node *n, const char *text)
{
    for (int i = 0; i < e->ninst; i++)
        if (!strcmp(e->inst[i].text, text))
            return e->inst[i].name;
    e->inst = xgrow(e->inst, e->ninst, &e->capinst, sizeof *e->inst);
    const char *name = strf("%s_%d", op_prefix(n), e->ninst);
    e->inst[e->ninst++] = (Instance){text, name};
    helpers_for(e, text);
    buf_puts(&e->kernels, replace_fn(text, name));
    buf_puts(&e->kernels, "\n");
    return name;
}

const char *kernelv(Emit *e, Node *n, const char *tmpl, const char **kv)
{
    return instance(e, n, kernel_text(tmpl, kv));
}

/* The names of the parameters PARAMS ("const float *restrict x, float *restrict y"), as
 * arguments ("x, y"): each one's last identifier. */
static const char *param_names(const char *params)
{
    Buf b = {0};
    for (const char *p = params; *p;) {
        size_t len = strcspn(p, ",");
        const char *end = p + len, *id = end;
        while (id > p && !is_ident_char(id[-1]))
            id--;
        const char *start = id;
        while (start > p && is_ident_char(start[-1]))
            start--;
        buf_printf(&b, "%s%.*s", b.len ? ", " : "", (int)(id - start), start);
        p = *end ? end + 1 : end;
    }
    return b.p ? b.p : "";
}

#define MAX_KV 128

/* The NULL-terminated key, value pairs of AP into kv (MAX_KV entries). */
static void gather_kv(const char *tmpl, va_list ap, const char **kv)
{
    int k = 0;
    while ((kv[k] = va_arg(ap, const char *)) != NULL) {
        kv[k + 1] = va_arg(ap, const char *);
        k += 2;
        if (k + 2 >= MAX_KV)
            die("internal: too many substitutions for template '%s'", tmpl);
    }
}

const char *kernel(Emit *e, Node *n, const char *tmpl, ...)
{
    const char *kv[MAX_KV];
    va_list ap;
    va_start(ap, tmpl);
    gather_kv(tmpl, ap, kv);
    va_end(ap);
    return kernelv(e, n, tmpl, kv);
}

/* templates/isa_paths.c for ${FN}_any(PARAMS), returning RET, the dispatcher's linkage LINK
 * ("static " or ""). */
static const char *isa_paths(const char *params, const char *args, const char *ret,
                             const char *link)
{
    return substitute("isa_paths", template_body("isa_paths"),
                      (const char *[]){"PARAMS", params, "ARGS", args, "RET", ret, "RETURN",
                                       *ret == 'i' ? "return " : "", "LINK", link, NULL});
}

/* As kernel(), for a template whose "static void ${FN}(...)" (or "static int") is plain C
 * loops over WORK elements that the C compiler vectorises: from MLBC_PATHS_MIN elements on,
 * the loops become ${FN}_any and templates/isa_paths.c compiles them for each x86 path and
 * picks one per call. */
const char *kernel_paths(Emit *e, Node *n, int64_t work, const char *tmpl, ...)
{
    const char *kv[MAX_KV];
    va_list ap;
    va_start(ap, tmpl);
    gather_kv(tmpl, ap, kv);
    va_end(ap);
    const char *text = kernel_text(tmpl, kv), *ret = "void";
    const char *head = "static void ${FN}(", *at = strstr(text, head);
    if (!at) {
        ret = "int";
        head = "static int ${FN}(";
        at = strstr(text, head);
    }
    if (work < MLBC_PATHS_MIN || !at)
        return instance(e, n, text);
    /* the parameters on one line (the emitter wraps long lines again) */
    const char *params = at + strlen(head), *close = strchr(params, ')');
    Buf one = {0};
    for (const char *q = params; q < close; q++) {
        if (!isspace((unsigned char)*q))
            buf_put(&one, q, 1);
        else if (one.len && one.p[one.len - 1] != ' ')
            buf_puts(&one, " ");
    }
    const char *p = one.p;
    Buf b = {0};
    buf_printf(&b, "%.*sMLBC_LOOPS %s ${FN}_any(%s%s", (int)(at - text), text, ret, p, close);
    buf_puts(&b, isa_paths(p, param_names(p), ret, "static "));
    return instance(e, n, b.p);
}

const char *fragment(const char *tmpl, ...)
{
    const char *kv[MAX_KV];
    va_list ap;
    va_start(ap, tmpl);
    gather_kv(tmpl, ap, kv);
    va_end(ap);
    return substitute(tmpl, template_body(tmpl), kv);
}

const char *weight_array(Emit *e, Node *n, const char *key, WeightArray a)
{
    /* never a kernel's text; keys name values by id, which repeat across a composite's parts */
    const char *text = strf("weights %s%s", e->part->wprefix, key);
    for (int i = 0; i < e->ninst; i++)
        if (!strcmp(e->inst[i].text, text))
            return weight_ref(e, e->inst[i].name);
    e->inst = xgrow(e->inst, e->ninst, &e->capinst, sizeof *e->inst);
    a.name = strf("%s_%d", op_prefix(n), e->ninst);
    e->inst[e->ninst++] = (Instance){text, a.name};
    weights_add(e->weights, a);
    return weight_ref(e, a.name);
}

/* Includes a helper template (shared inline math, conversions) once, before the kernels,
 * after the helpers it calls itself. */
static void helper(Emit *e, const char *tmpl)
{
    for (int i = 0; i < e->nhelpers; i++)
        if (!strcmp(e->helpers[i], tmpl))
            return;
    e->helpers = xgrow(e->helpers, e->nhelpers, &e->caphelpers, sizeof *e->helpers);
    e->helpers[e->nhelpers++] = tmpl;
    const char *none[] = {NULL};
    const char *text = substitute(tmpl, template_body(tmpl), none);
    helpers_for(e, text);
    buf_puts(&e->kernels, text);
    buf_puts(&e->kernels, "\n");
}

void stmt(Emit *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        die("out of memory");
    va_end(ap);
    helpers_for(e, s);
    buf_printf(&e->code->body, "    %s\n", s);
    free(s);
}

void check(Emit *e, const char *cond, const char *why)
{
    if (e->code == &e->part->init)
        die("internal: a run-time check in a node computed by init");
    e->nchecks++;
    stmt(e, "if (!(%s))", cond);
    stmt(e, "    return 2; /* %s */", why);
}

/* ---- the files ---- */

static void node_comment(Emit *e, const Node *n)
{
    Buf b = {0};
    buf_printf(&b, "/* %s '%s': ", n->op, c_comment(n->name));
    for (int i = 0; i < n->nin; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", n->in[i] ? c_comment(n->in[i]->name) : "");
    buf_puts(&b, " -> ");
    for (int i = 0; i < n->nout; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", n->out[i] ? c_comment(n->out[i]->name) : "");
    buf_puts(&b, " */");
    stmt(e, "%s", wrap_comment(b.p, 4, "    "));
}

/* Some part has nodes computed once (then NAME_once exists). */
static int any_once(const Emit *e)
{
    for (int i = 0; i < e->nparts; i++)
        if (e->parts[i].init.body.p)
            return 1;
    return 0;
}

/* The API and the loader of --weights-file, for this model's sizes and fingerprint. */
static const char *weights_template(Emit *e, const char *N, const char *tmpl)
{
    const char *kv[] = {"N", N, "BYTES", strf("%lldu", (long long)e->weights->bytes),
                        "FILE_BYTES", strf("%lldu", (long long)e->weights->bytes + 64),
                        "COUNT", strf("%du", e->weights->n),
                        "FINGERPRINT", strf("0x%016llxULL", (unsigned long long)e->fingerprint),
                        "ONCE", any_once(e) ? strf("    %s_once(ctx);\n", N) : "", NULL};
    return substitute(tmpl, template_body(tmpl), kv);
}

/* The index of the argument model_selector. */
static int selector_arg(const Emit *e)
{
    for (int i = 0; i < e->api->ninputs; i++)
        if (!strcmp(e->api->inputs[i]->name, "model_selector"))
            return i;
    die("internal: a composite without model_selector");
}

/* A composite's header comment: which string selects which model, and the status of none. */
static const char *composite_doc(const Emit *e, const char *N)
{
    if (!e->composite)
        return "";
    Buf b = {0};
    buf_printf(&b, " * A composite of %d models: %s_run runs the one whose selector's MD5 is in "
               "argument %d,\n * 'model_selector' (uint64[2]: {MD5 bytes 8..15, bytes 0..7}, "
               "each little-endian, as\n * LLVM's ReleaseModeModelRunner sets it for "
               "EmbeddedModelRunnerOptions::setModelSelector):\n", e->nparts, N,
               selector_arg(e));
    for (int i = 0; i < e->nparts; i++) {
        uint64_t h[2];
        selector_halves(e->parts[i].selector, h);
        buf_printf(&b, " *   {0x%016llx, 0x%016llx} %s (model '%s')\n", (unsigned long long)h[0],
                   (unsigned long long)h[1], c_comment(e->parts[i].selector),
                   c_comment(e->parts[i].g->name));
    }
    buf_printf(&b, " * and returns %s_UNKNOWN_SELECTOR (%d) for any other value (LLVM's {0, 0}: no "
               "selector).\n", N, MLBC_UNKNOWN_SELECTOR);
    return b.p;
}

static void emit_header(Emit *e, const char *N, Buf *h, int64_t scratch, const char *guard)
{
    Graph *g = e->api;
    buf_printf(h, "/* %s.h - generated by mlbc %s. Do not edit.\n *\n"
               " * Model '%s': %d argument(s), %d result(s). Usage:\n"
               " *   static %s_ctx ctx;  %s_init(&ctx);\n"
               " *   fill %s_arg_data(&ctx, i); %s_run(&ctx); read %s_result_data(&ctx, i).\n"
               "%s"
               " * Same bits everywhere: the results do not depend on the compiler, its flags\n"
               " * or the CPU (see %s.c)%s.\n"
               "%s"
               " */\n", N, MLBC_VERSION, c_comment(g->name), g->ninputs, g->noutputs,
               N, N, N, N, N, composite_doc(e, N), N,
               e->blas_calls ? ", except for the products given to CBLAS (--blas), whose "
                               "results depend on the BLAS library and the CPU it runs on" : "",
               e->opt->blas && !e->blas_calls
                   ? " * --blas: no product here is one CBLAS takes (mlbc's kernels do them all),\n"
                     " * so the code is the same as without it and needs no BLAS library.\n"
                   : "");
    buf_printf(h, "#ifndef %s\n#define %s\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
               "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", guard, guard);
    buf_puts(h, template_body("mlbc_model_desc"));
    buf_printf(h, "\n#define %s_NUM_ARGS %d\n#define %s_NUM_RESULTS %d\n\n", N, g->ninputs, N,
               g->noutputs);
    if (e->composite)
        buf_printf(h, "#define %s_NUM_MODELS %d\n#define %s_UNKNOWN_SELECTOR %d /* %s_run: "
                   "model_selector names no model */\n\n", N, e->nparts, N,
                   MLBC_UNKNOWN_SELECTOR, N);
    if (e->opt->weights_file)
        weights_struct(h, e->weights, N);
    buf_printf(h, "/* The context owns every buffer; allocate it anywhere (static, stack, heap). */\n"
               "struct %s_ctx {\n", N);
    if (e->opt->weights_file)
        buf_printf(h, "    const struct %s_weights *weights; /* %s_set_weights() */\n", N, N);
    for (int i = 0; i < g->ninputs; i++) {
        Value *v = g->inputs[i];
        buf_printf(h, "    %s arg%d[%lld]; /* %s */\n", dtype_ctype(v->dt), i,
                   (long long)(numel(v) ? numel(v) : 1), tensor_comment(v));
    }
    for (int i = 0; i < g->noutputs; i++) {
        Value *v = g->outputs[i];
        buf_printf(h, "    %s res%d[%lld]; /* %s */\n", dtype_ctype(v->dt), i,
                   (long long)(numel(v) ? numel(v) : 1), tensor_comment(v));
    }
    buf_printf(h, "    uint64_t scratch[%lld]; /* intermediate tensors and kernels' workspace, "
                  "%lld bytes */\n};\n",
               (long long)(scratch / 8 + 1), (long long)scratch);
    buf_printf(h, "typedef struct %s_ctx %s_ctx;\n\n", N, N);
    buf_printf(h,
               "void %s_init(%s_ctx *ctx);\n"
               "int %s_run(%s_ctx *ctx); /* 0 on success; non-zero if a run-time check fails%s */\n"
               "void *%s_arg_data(%s_ctx *ctx, int i);\n"
               "void *%s_result_data(%s_ctx *ctx, int i);\n"
               "int %s_lookup_arg_index(const char *onnx_name);\n"
               "int %s_lookup_result_index(const char *onnx_name);\n"
               "extern const mlbc_model_desc %s_desc;\n\n",
               N, N, N, N, e->composite ? strf(" or (%s_UNKNOWN_SELECTOR) model_selector names no "
                                          "model", N) : "",
               N, N, N, N, N, N, N);
    buf_printf(h, "/* Convenience: copies the arguments in, runs, copies the results out (graph "
               "order). */\nint %s_eval(%s_ctx *ctx", N, N);
    for (int i = 0; i < g->ninputs; i++)
        buf_printf(h, ", const %s *arg%d", dtype_ctype(g->inputs[i]->dt), i);
    for (int i = 0; i < g->noutputs; i++)
        buf_printf(h, ", %s *res%d", dtype_ctype(g->outputs[i]->dt), i);
    buf_puts(h, ");\n");
    if (e->opt->weights_file)
        buf_printf(h, "\n%s", weights_template(e, N, "weights_api"));
    buf_puts(h, "\n#ifdef __cplusplus\n}\n#endif\n");
}

static void emit_desc_tables(Emit *e, const char *N, Buf *c, const char *what, Value **vs,
                             int n)
{
    for (int i = 0; i < n; i++) {
        Value *v = vs[i];
        buf_printf(c, "static const int64_t %s_shape%d[] = {", what, i);
        for (int k = 0; k < v->rank; k++)
            buf_printf(c, "%s%s", k ? ", " : "", lit(v->dim[k]));
        buf_puts(c, v->rank ? "};\n" : "0};\n");
    }
    /* C99 promises string literals of 4095 bytes; gcc and clang take longer names */
    int long_names = 0;
    for (int i = 0; i < n; i++)
        long_names |= strlen(vs[i]->name) > 4095;
    if (long_names)
        buf_puts(c, "#pragma GCC diagnostic push\n"
                    "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n");
    buf_printf(c, "static const mlbc_tensor_desc %s_descs[] = {\n", what);
    for (int i = 0; i < n; i++) {
        Value *v = vs[i];
        buf_printf(c, "    {%s, %d, %d, %s_shape%d, %lld, %lld},\n", c_string(v->name), v->dt,
                   v->rank, what, i, (long long)numel(v),
                   (long long)(numel(v) * (int64_t)dtype_size(v->dt)));
    }
    if (!n)
        buf_puts(c, "    {\"\", 0, 0, 0, 0, 0},\n");
    buf_puts(c, long_names ? "};\n#pragma GCC diagnostic pop\n\n" : "};\n\n");
}

/* The scratch pointer and the temporaries that CODE uses. */
static void declare_temps(Emit *e, const Code *code, Buf *c)
{
    Graph *g = e->part->g;
    if (code->uses_scratch)
        buf_printf(c, "    unsigned char *const scratch = (unsigned char *)ctx->scratch%s;\n",
                   e->part->base ? strf(" + %lld", (long long)e->part->base) : "");
    for (int i = 0; i < g->nvalues; i++) {
        Value *v = g->values[i];
        if (v->offset < 0 || !code->temp_used[v->id])
            continue;
        buf_printf(c, "    %s *const %s = (%s *)(scratch + %lld); /* %s */\n", dtype_ctype(v->dt),
                   temp_name(v), dtype_ctype(v->dt), (long long)v->offset,
                   tensor_comment(v));
    }
}

/* The body of NAME_run (or NAME_init) with MLBC_FENCE() after each call at its top level (templates/
 * prologue.c): inlined kernels then pass their results through memory, so clang cannot
 * fuse a product one kernel stores with an addition in the next. */
static void put_fenced(Buf *c, const char *body)
{
    while (*body) {
        const char *nl = strchr(body, '\n');
        size_t len = nl ? (size_t)(nl - body) : strlen(body);
        buf_put(c, body, len);
        if (len > 6 && !strncmp(body, "    ", 4) && (isalpha((unsigned char)body[4]) ||
            body[4] == '_') && strncmp(body + 4, "if ", 3) && strncmp(body + 4, "return", 6) &&
            !strncmp(body + len - 2, ");", 2))
            buf_puts(c, " MLBC_FENCE();");
        buf_puts(c, "\n");
        body += len + (nl != NULL);
    }
}

static void emit_api(Emit *e, const char *N, Buf *c)
{
    Graph *g = e->api;
    emit_desc_tables(e, N, c, "arg", g->inputs, g->ninputs);
    emit_desc_tables(e, N, c, "res", g->outputs, g->noutputs);
    buf_printf(c, "void %s_init(%s_ctx *ctx)\n{\n    memset(ctx, 0, sizeof *ctx);\n", N, N);
    if (any_once(e) && !e->opt->weights_file)
        buf_printf(c, "    %s_once(ctx);\n", N);
    buf_puts(c, "}\n\n");
    buf_printf(c, "void *%s_arg_data(%s_ctx *ctx, int i)\n{\n", N, N);
    if (!g->ninputs)
        buf_puts(c, "    (void)ctx;\n");
    buf_puts(c, "    switch (i) {\n");
    for (int i = 0; i < g->ninputs; i++)
        buf_printf(c, "    case %d: return ctx->arg%d;\n", i, i);
    buf_puts(c, "    default: return NULL;\n    }\n}\n\n");
    buf_printf(c, "void *%s_result_data(%s_ctx *ctx, int i)\n{\n    switch (i) {\n", N, N);
    for (int i = 0; i < g->noutputs; i++)
        buf_printf(c, "    case %d: return ctx->res%d;\n", i, i);
    buf_puts(c, "    default: return NULL;\n    }\n}\n\n");
    buf_printf(c, "int %s_lookup_arg_index(const char *onnx_name)\n{\n"
               "    return mlbc_lookup(arg_descs, %d, onnx_name);\n}\n\n", N, g->ninputs);
    buf_printf(c, "int %s_lookup_result_index(const char *onnx_name)\n{\n"
               "    return mlbc_lookup(res_descs, %d, onnx_name);\n}\n\n", N, g->noutputs);
    buf_printf(c, "static void init_any(void *ctx) { %s_init((%s_ctx *)ctx); }\n", N, N);
    buf_printf(c, "static int run_any(void *ctx) { return %s_run((%s_ctx *)ctx); }\n", N, N);
    buf_printf(c, "static void *arg_any(void *ctx, int i) { return %s_arg_data((%s_ctx *)ctx, i); }\n", N, N);
    buf_printf(c, "static void *res_any(void *ctx, int i) { return %s_result_data((%s_ctx *)ctx, i); }\n\n", N, N);
    buf_printf(c, "const mlbc_model_desc %s_desc = {\n    \"%s\", sizeof(%s_ctx),\n"
               "    %d, arg_descs, %d, res_descs,\n"
               "    init_any, run_any, arg_any, res_any,\n"
               "    %s_lookup_arg_index, %s_lookup_result_index\n};\n\n",
               N, N, N, g->ninputs, g->noutputs, N, N);
    buf_printf(c, "int %s_eval(%s_ctx *ctx", N, N);
    for (int i = 0; i < g->ninputs; i++)
        buf_printf(c, ", const %s *arg%d", dtype_ctype(g->inputs[i]->dt), i);
    for (int i = 0; i < g->noutputs; i++)
        buf_printf(c, ", %s *res%d", dtype_ctype(g->outputs[i]->dt), i);
    buf_puts(c, ")\n{\n    int status;\n");
    for (int i = 0; i < g->ninputs; i++)
        buf_printf(c, "    memcpy(ctx->arg%d, arg%d, %lld);\n", i, i,
                   (long long)(numel(g->inputs[i]) * (int64_t)dtype_size(g->inputs[i]->dt)));
    buf_printf(c, "    status = %s_run(ctx);\n", N);
    for (int i = 0; i < g->noutputs; i++)
        buf_printf(c, "    memcpy(res%d, ctx->res%d, %lld);\n", i, i,
                   (long long)(numel(g->outputs[i]) * (int64_t)dtype_size(g->outputs[i]->dt)));
    buf_puts(c, "    return status;\n}\n");
}

/* Results not written by a node (constants, arguments, a value listed twice) are copied. */
static void copy_results(Emit *e)
{
    Graph *g = e->part->g;
    for (int i = 0; i < g->noutputs; i++) {
        Value *v = g->outputs[i];
        int64_t bytes = numel(v) * (int64_t)dtype_size(v->dt);
        int written = v->producer && !v->producer->dead && !v->data && v->result_index == i;
        if (written || !bytes)
            continue;
        const char *src = v->result_index != i && !v->data && v->arg_index < 0 &&
                                  v->producer && !v->producer->dead
                              ? strf("ctx->res%d", v->result_index)
                              : ref(e, v);
        stmt(e, "memcpy(ctx->res%d, %s, %lld); /* %s */", i, src, (long long)bytes,
             c_comment(v->name));
    }
}


/* Where a function finds the weights (W): the embedded literal, or the caller's file (set by
 * NAME_set_weights). Without a file's weights NAME_run fails rather than read nothing, and
 * NAME_once has nothing to compute. */
static void declare_weights(Emit *e, const char *N, Buf *c, const Code *code)
{
    int file = e->opt->weights_file != NULL;
    if (code->uses_weights)
        buf_printf(c, "    const struct %s_weights *const W = %s;\n", N,
                   file ? "ctx->weights" : "&mlbc_weights.w");
    if (!file || !e->weights->n)
        return;
    const char *w = code->uses_weights ? "W" : "ctx->weights";
    if (code == &e->part->run)
        buf_printf(c, "    if (!%s)\n        return 3; /* no weights: %s_set_weights() */\n", w, N);
    else
        buf_printf(c, "    if (!%s)\n        return;\n", w);
}

/* The name of the part's function WHAT ("run", "once"): NAME_WHAT, or in a composite
 * NAME_WHAT_I, called by NAME_WHAT. */
static const char *part_fn(const Emit *e, const char *N, const char *what)
{
    if (!e->composite)
        return strf("%s_%s", N, what);
    return strf("%s_%s_%d", N, what, (int)(e->part - e->parts));
}

/* The nodes plan.c marked once (values of constants only, too large to embed), computed when
 * the weights are known: by NAME_init, or by NAME_set_weights with a weights file. */
static void emit_once(Emit *e, const char *N, Buf *c)
{
    Code *init = &e->part->init;
    if (!init->body.p)
        return;
    buf_printf(c, "/* Values computed from constants only but too large to embed: computed once, "
                  "when\n * the weights are known; no other value shares their bytes. */\n"
                  "static void %s(%s_ctx *ctx)\n{\n", part_fn(e, N, "once"), N);
    declare_weights(e, N, c, init);
    declare_temps(e, init, c);
    buf_puts(c, "\n");
    put_fenced(c, init->body.p);
    buf_puts(c, "}\n\n");
}

/* NAME_run (a composite's part: static). Its statements are NAME_run_any, compiled for each
 * x86 path (templates/isa_paths.c) like a kernel's loops: the small loops inlined into it
 * (an Add of 32 floats) run as wide as at -march=native, and the vector kernels they feed
 * load whole vectors that were stored whole, not pieced from narrower stores (a store
 * forward that fails: a GRU cell at gcc -O2 1.3x slower for it). */
static void emit_run(Emit *e, const char *N, Buf *c)
{
    Code *run = &e->part->run;
    const char *fn = part_fn(e, N, "run"), *link = e->composite ? "static " : "";
    const char *params = strf("%s_ctx *ctx", N);
    if (run->body.p)
        buf_printf(c, "/* The run's statements: %s below takes them on the CPU's best path. */\n"
                      "MLBC_LOOPS int %s_any(%s)\n{\n", fn, fn, params);
    else
        buf_printf(c, "%sint %s(%s)\n{\n", link, fn, params);
    if ((!run->body.p || !strstr(uncommented(run->body.p), "ctx->")) &&
        !(e->opt->weights_file && e->weights->n))
        buf_puts(c, "    (void)ctx; /* everything was computed at compile time */\n");
    declare_weights(e, N, c, run);
    declare_temps(e, run, c);
    buf_puts(c, "\n");
    if (run->body.p)
        put_fenced(c, run->body.p);
    buf_puts(c, "    return 0;\n}\n\n");
    if (run->body.p)
        buf_printf(c, "%s\n", replace_fn(isa_paths(params, "ctx", "int", link), fn));
}

/* A composite's NAME_once: every part's values computed once (each part's arena is its own
 * when it has such values, so they survive the other parts' runs). */
static void emit_once_all(Emit *e, const char *N, Buf *c)
{
    if (!e->composite || !any_once(e))
        return;
    buf_printf(c, "static void %s_once(%s_ctx *ctx)\n{\n", N, N);
    for (e->part = e->parts; e->part < e->parts + e->nparts; e->part++)
        if (e->part->init.body.p)
            buf_printf(c, "    %s(ctx);\n", part_fn(e, N, "once"));
    buf_puts(c, "}\n\n");
}

/* A composite's NAME_run: the part whose selector's MD5 halves are in model_selector. */
static void emit_dispatch(Emit *e, const char *N, Buf *c)
{
    buf_printf(c, "/* The model that model_selector names: {MD5 bytes 8..15, bytes 0..7} of its "
                  "selector,\n * each little-endian (LLVM's MD5Result::high(), low()). */\n"
                  "int %s_run(%s_ctx *ctx)\n{\n    const uint64_t *const s = ctx->arg%d;\n\n",
               N, N, selector_arg(e));
    for (e->part = e->parts; e->part < e->parts + e->nparts; e->part++) {
        uint64_t h[2];
        selector_halves(e->part->selector, h);
        buf_printf(c, "    if (s[0] == 0x%016llxULL && s[1] == 0x%016llxULL) /* %s */\n"
                      "        return %s(ctx);\n", (unsigned long long)h[0],
                   (unsigned long long)h[1], c_comment(e->part->selector),
                   part_fn(e, N, "run"));
    }
    buf_printf(c, "    return %d; /* %s_UNKNOWN_SELECTOR */\n}\n\n", MLBC_UNKNOWN_SELECTOR, N);
}

static void emit_c_head(Emit *e, const char *N, Output *out, const char *h_name)
{
    Buf *c = &out->c_head;
    buf_printf(c, "/* %s.c - generated by mlbc %s from model '%s'. Do not edit. */\n", N,
               MLBC_VERSION, c_comment(e->api->name));
    buf_printf(c, "#include <math.h>\n%s#include <string.h>\n\n#include \"%s\"\n\n",
               e->opt->weights_file ? "#include <stdio.h>\n" : "", h_name);
    if (e->blas_calls)
        buf_puts(c, "#include <cblas.h>\n\n");
    buf_puts(c, template_body("prologue"));
    buf_puts(c, template_body("lookup"));
    buf_puts(c, "\n/* ---- weights ---- */\n\n");
    if (!e->opt->weights_file && e->weights->n)
        weights_struct(c, e->weights, N);
}

static void emit_c_tail(Emit *e, const char *N, Output *out)
{
    Buf *c = &out->c_tail;
    buf_puts(c, "/* ---- kernels ---- */\n\n");
    if (e->kernels.p)
        buf_puts(c, e->kernels.p);
    for (e->part = e->parts; e->part < e->parts + e->nparts; e->part++)
        emit_once(e, N, c);
    emit_once_all(e, N, c);
    if (e->opt->weights_file)
        buf_puts(c, weights_template(e, N, "weights_load"));
    for (e->part = e->parts; e->part < e->parts + e->nparts; e->part++)
        emit_run(e, N, c);
    if (e->composite)
        emit_dispatch(e, N, c);
    emit_api(e, N, c);
}

/* What a weights file must match: everything the code computes with (kernels, the run
 * functions, the weights' layout, which selector runs which part), not the weights' values
 * nor the symbol prefix. */
static uint64_t fingerprint(Emit *e)
{
    Buf layout = {0};
    weights_struct(&layout, e->weights, "NAME");
    uint64_t h = fnv1a(0xcbf29ce484222325ULL, layout.p);
    h = fnv1a(h, e->kernels.p);
    for (int i = 0; i < e->nparts; i++) {
        h = fnv1a(h, e->parts[i].init.body.p);
        h = fnv1a(h, e->parts[i].run.body.p);
        h = fnv1a(h, e->parts[i].selector);
    }
    return h;
}

/* The statements of the part's functions (the kernels they call go to e->kernels). */
static void emit_part(Emit *e)
{
    Graph *g = e->part->g;
    e->weight_done = xalloc((size_t)g->nvalues + 1);
    e->part->run.temp_used = xalloc((size_t)g->nvalues + 1);
    e->part->init.temp_used = xalloc((size_t)g->nvalues + 1);
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (n->dead)
            continue;
        e->code = n->once ? &e->part->init : &e->part->run;
        node_comment(e, n);
        n->def->emit(e, n);
    }
    e->code = &e->part->run;
    copy_results(e);
}

/* The parts' arenas in ctx->scratch, and its size: a part with values computed once keeps
 * them across runs, so it has bytes of its own; the other parts share theirs. */
static int64_t layout_scratch(Emit *e, const Member *ms)
{
    if (!e->composite)
        return ms[0].scratch;
    int64_t own = 0, shared = 0;
    for (int i = 0; i < e->nparts; i++)
        if (e->parts[i].init.body.p) {
            e->parts[i].base = own;
            own += (ms[i].scratch + MLBC_ALIGN - 1) / MLBC_ALIGN * MLBC_ALIGN;
        } else if (ms[i].scratch > shared) {
            shared = ms[i].scratch;
        }
    for (int i = 0; i < e->nparts; i++)
        if (!e->parts[i].init.body.p)
            e->parts[i].base = own;
    if (own + shared > MLBC_MAX_TOTAL_BYTES)
        die("the composite's scratch arena would be %lld bytes, more than %lld",
            (long long)(own + shared), (long long)MLBC_MAX_TOTAL_BYTES);
    return own + shared;
}

void emit_models(const Member *ms, int n, Graph *api, const Options *o, Output *out,
                 const char *h_name)
{
    Emit e = {.opt = o, .api = api, .nparts = n, .weights = &out->w,
              .composite = n > 1 || ms[0].selector};
    e.parts = xalloc(sizeof *e.parts * (size_t)n);
    const char *N = o->name;
    for (int i = 0; i < n; i++) {
        e.parts[i] = (Part){.g = ms[i].m->g, .selector = ms[i].selector,
                            .wprefix = e.composite ? strf("m%d_", i) : ""};
        e.part = &e.parts[i];
        diag_file = ms[i].path;         /* an operator's emitter may refuse a node */
        emit_part(&e);
        if (e.part->run.body.p)
            helper(&e, "isa");          /* the paths of the run's statements (emit_run) */
    }
    int64_t scratch = layout_scratch(&e, ms);
    if (o->weights_file && !out->w.bytes)
        out->w.bytes = 64;              /* a file has a payload, struct NAME_weights a member */
    out->fingerprint = e.fingerprint = fingerprint(&e);

    char *guard = strf("%s_H", N);
    for (char *p = guard; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    emit_header(&e, N, &out->h, scratch, guard);
    if (o->cxx_wrapper) {
        const char *kv[] = {"NAME", N, NULL};
        buf_printf(&out->h, "\n%s", substitute("cxx_wrapper", template_body("cxx_wrapper"), kv));
    }
    buf_printf(&out->h, "#endif /* %s */\n", guard);
    emit_c_head(&e, N, out, h_name);
    emit_c_tail(&e, N, out);
    wrap_code_lines(&out->h);
    wrap_code_lines(&out->c_head);
    wrap_code_lines(&out->c_tail);
}

void emit_check(Emit *e, Node *n, const Value *s, const char *cond, const char *why)
{
    const char *fn = kernel(e, n, "shape_check", "DOC", why, "T", dtype_ctype(s->dt), "COND",
                            cond, NULL);
    check(e, strf("%s(%s)", fn, ref(e, s)), why);
}

const char *elem_lit(DType t, const void *p)
{
    Value v = {.dt = t, .data = (void *)p, .rank = 0};
    return cval(&v, 0);
}
