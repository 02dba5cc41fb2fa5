/* log_scenarios.h - training-log scenarios shared by llvm_logger.cpp (LLVM's llvm::Logger)
 * and logwrite.c (mlbc's logger), plus the canonical dump that logdump.c (mlbc's reader) and
 * tests/test_clang.py (the Python reader) must reproduce. C99 and C++17.
 *
 * Dump format, one record per line:
 *     feature NAME TYPE [D0,D1,...]      (then score and advice lines, if any)
 *     context HEX                        (the name's bytes in hex; "-" for "")
 *     observation ID HEX0 HEX1 ...       (each feature tensor's raw bytes)
 *     outcome ID HEX                     (the reward tensor's raw bytes)
 */
#ifndef LOG_SCENARIOS_H
#define LOG_SCENARIOS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { T_FLOAT, T_DOUBLE, T_INT8, T_UINT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64,
       T_UINT64 };

static const char *const scen_type_name[] = { "float", "double", "int8_t", "uint8_t",
    "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t" };
static const int scen_type_size[] = { 4, 8, 1, 1, 2, 2, 4, 4, 8, 8 };

typedef struct scen_spec {
    const char *name;
    int type;                       /* T_* */
    int rank;                       /* 0: a scalar (shape []) */
    int64_t shape[3];
} scen_spec;

enum { S_CTX, S_OBS, S_OUT };

typedef struct scen_step {
    int kind;
    const char *ctx;                /* S_CTX */
} scen_step;

typedef struct scenario {
    const char *name;
    int nfeat;
    const scen_spec *feat;
    int has_reward;
    scen_spec reward;
    int has_advice;
    scen_spec advice;
    int nsteps;
    const scen_step *steps;
} scenario;

/* 1. every element type, several shapes, a scalar; contexts adjacent and repeated; outcomes
 *    after some observations only; payload bytes that are '\n'; special floats. */
static const scen_spec scen_types_feat[] = {
    { "f32", T_FLOAT, 2, { 2, 3 } },  { "f64", T_DOUBLE, 1, { 2 } },
    { "i8", T_INT8, 1, { 4 } },       { "u8", T_UINT8, 1, { 3 } },
    { "i16", T_INT16, 1, { 2 } },     { "u16", T_UINT16, 1, { 2 } },
    { "i32", T_INT32, 2, { 1, 2 } },  { "u32", T_UINT32, 1, { 1 } },
    { "i64", T_INT64, 1, { 1 } },     { "u64", T_UINT64, 1, { 2 } },
    { "scalar", T_INT64, 0, { 0 } },  { "cube", T_FLOAT, 3, { 2, 2, 2 } },
};
static const scen_step scen_types_steps[] = {
    { S_CTX, "f1" }, { S_OBS, 0 }, { S_OUT, 0 }, { S_OBS, 0 }, { S_OBS, 0 }, { S_OUT, 0 },
    { S_CTX, "f2" }, { S_CTX, "f3" }, { S_OBS, 0 }, { S_OUT, 0 },
    { S_CTX, "f1" }, { S_OBS, 0 }, { S_OBS, 0 }, { S_OUT, 0 },
    { S_CTX, "" }, { S_OBS, 0 }, { S_CTX, "f4" },
};

/* 2. the inliner's development-mode log: 38 int64 features, then default and decision. */
static const scen_spec scen_inliner_feat[] = {
    { "sroa_savings", T_INT64, 1, { 1 } }, { "sroa_losses", T_INT64, 1, { 1 } },
    { "load_elimination", T_INT64, 1, { 1 } }, { "call_penalty", T_INT64, 1, { 1 } },
    { "call_argument_setup", T_INT64, 1, { 1 } }, { "load_relative_intrinsic", T_INT64, 1, { 1 } },
    { "lowered_call_arg_setup", T_INT64, 1, { 1 } }, { "indirect_call_penalty", T_INT64, 1, { 1 } },
    { "jump_table_penalty", T_INT64, 1, { 1 } }, { "case_cluster_penalty", T_INT64, 1, { 1 } },
    { "switch_default_dest_penalty", T_INT64, 1, { 1 } }, { "switch_penalty", T_INT64, 1, { 1 } },
    { "unsimplified_common_instructions", T_INT64, 1, { 1 } }, { "num_loops", T_INT64, 1, { 1 } },
    { "dead_blocks", T_INT64, 1, { 1 } }, { "simplified_instructions", T_INT64, 1, { 1 } },
    { "constant_args", T_INT64, 1, { 1 } }, { "constant_offset_ptr_args", T_INT64, 1, { 1 } },
    { "callsite_cost", T_INT64, 1, { 1 } }, { "cold_cc_penalty", T_INT64, 1, { 1 } },
    { "last_call_to_static_bonus", T_INT64, 1, { 1 } }, { "is_multiple_blocks", T_INT64, 1, { 1 } },
    { "nested_inlines", T_INT64, 1, { 1 } }, { "nested_inline_cost_estimate", T_INT64, 1, { 1 } },
    { "threshold", T_INT64, 1, { 1 } }, { "callee_basic_block_count", T_INT64, 1, { 1 } },
    { "callsite_height", T_INT64, 1, { 1 } }, { "node_count", T_INT64, 1, { 1 } },
    { "nr_ctant_params", T_INT64, 1, { 1 } }, { "cost_estimate", T_INT64, 1, { 1 } },
    { "edge_count", T_INT64, 1, { 1 } }, { "caller_users", T_INT64, 1, { 1 } },
    { "caller_conditionally_executed_blocks", T_INT64, 1, { 1 } },
    { "caller_basic_block_count", T_INT64, 1, { 1 } },
    { "callee_conditionally_executed_blocks", T_INT64, 1, { 1 } },
    { "callee_users", T_INT64, 1, { 1 } }, { "is_callee_avail_external", T_INT64, 1, { 1 } },
    { "is_caller_avail_external", T_INT64, 1, { 1 } },
    { "inlining_default", T_INT64, 1, { 1 } }, { "inlining_decision", T_INT64, 1, { 1 } },
};
static const scen_step scen_inliner_steps[] = {
    { S_CTX, "" }, { S_OBS, 0 }, { S_OBS, 0 }, { S_OBS, 0 }, { S_OBS, 0 }, { S_OBS, 0 },
    { S_OBS, 0 }, { S_OBS, 0 }, { S_OBS, 0 }, { S_OBS, 0 }, { S_OBS, 0 }, { S_OBS, 0 },
    { S_OBS, 0 },
};

/* 3. an interactive stream as a compiler writes BASE.out (header with "advice", no rewards):
 *    regalloc-like per-register features, adjacent contexts, an empty function. */
static const scen_spec scen_stream_feat[] = {
    { "mask", T_INT64, 2, { 1, 33 } }, { "is_free", T_INT64, 2, { 1, 33 } },
    { "nr_urgent", T_FLOAT, 2, { 1, 33 } }, { "use_def_density", T_FLOAT, 2, { 1, 33 } },
    { "progress", T_FLOAT, 1, { 1 } },
};
static const scen_step scen_stream_steps[] = {
    { S_CTX, "main" }, { S_OBS, 0 }, { S_OBS, 0 }, { S_CTX, "empty" },
    { S_CTX, "helper" }, { S_OBS, 0 }, { S_CTX, "tail" },
};

/* 4. the eviction advisor's development log: an outcome of 0 before each further
 *    observation, the real reward after the last one; names that JSON must escape. */
static const scen_spec scen_evict_feat[] = {
    { "mask", T_INT64, 2, { 1, 33 } }, { "weighed_reads_by_max", T_FLOAT, 2, { 1, 33 } },
    { "progress", T_FLOAT, 1, { 1 } }, { "index_to_evict", T_INT64, 1, { 1 } },
};
static const scen_step scen_evict_steps[] = {
    { S_CTX, "_Z3fooPKc" }, { S_OBS, 0 }, { S_OUT, 0 }, { S_OBS, 0 }, { S_OUT, 0 }, { S_OBS, 0 },
    { S_OUT, 0 }, { S_CTX, "quote\"back\\slash" }, { S_OBS, 0 }, { S_OUT, 0 },
    { S_CTX, "tab\there \xc3\xbcnicode" }, { S_CTX, "bar.cold.1" }, { S_OBS, 0 }, { S_OUT, 0 },
};

#define SCEN_N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const scenario scenarios[] = {
    { "types", SCEN_N(scen_types_feat), scen_types_feat, 1, { "reward", T_FLOAT, 1, { 1 } },
      0, { 0, 0, 0, { 0 } }, SCEN_N(scen_types_steps), scen_types_steps },
    { "inliner", SCEN_N(scen_inliner_feat), scen_inliner_feat, 0,
      { "delta_size", T_INT64, 1, { 1 } }, 0, { 0, 0, 0, { 0 } }, SCEN_N(scen_inliner_steps),
      scen_inliner_steps },
    { "stream", SCEN_N(scen_stream_feat), scen_stream_feat, 0, { "reward", T_FLOAT, 1, { 1 } },
      1, { "index_to_evict", T_INT64, 1, { 1 } }, SCEN_N(scen_stream_steps), scen_stream_steps },
    { "evict", SCEN_N(scen_evict_feat), scen_evict_feat, 1, { "reward", T_FLOAT, 1, { 1 } },
      0, { 0, 0, 0, { 0 } }, SCEN_N(scen_evict_steps), scen_evict_steps },
};
#define NUM_SCENARIOS SCEN_N(scenarios)

static int64_t scen_count(const scen_spec *s)
{
    int64_t c = 1;
    for (int i = 0; i < s->rank; i++) c *= s->shape[i];
    return c;
}

static size_t scen_bytes(const scen_spec *s)
{
    return (size_t)scen_count(s) * (size_t)scen_type_size[s->type];
}

/* Deterministic contents of tensor `which` (feature index, or -1 for the reward) in the
 * `serial`-th observation of a scenario. Includes bytes 0x0a, extremes, inf, -0.0, NaN. */
static void scen_fill(const scen_spec *s, int which, int serial, void *buf)
{
    static const float fs[] = { 0.0f, 1.5f, -2.25f, 1e-40f, 3.4e38f, -0.0f, 0.1f, 1e30f };
    static const double ds[] = { 0.0, -1.0 / 3.0, 1e-310, 2.5e300, 10.0, -7.125 };
    int64_t n = scen_count(s);
    for (int64_t e = 0; e < n; e++) {
        int64_t v = (int64_t)serial * 37 + which * 11 + e * 5;
        unsigned char *p = (unsigned char *)buf + e * scen_type_size[s->type];
        switch (s->type) {
        case T_FLOAT: {
            float f = fs[v % 8];
            if (v % 13 == 3) f = INFINITY;
            if (v % 17 == 5) f = -INFINITY;
            if (v % 19 == 7) f = NAN;
            if (v % 8 == 6) f = (float)v / 7.0f;
            memcpy(p, &f, 4);
            break;
        }
        case T_DOUBLE: {
            double d = ds[v % 6] * (double)(serial + 1);
            memcpy(p, &d, 8);
            break;
        }
        case T_INT8: {
            int8_t x = (int8_t)(v % 3 == 0 ? 10 : (v * 29) % 256 - 128);
            memcpy(p, &x, 1);
            break;
        }
        case T_UINT8: { uint8_t x = (uint8_t)(v % 4 == 1 ? 10 : v * 53); memcpy(p, &x, 1); break; }
        case T_INT16: { int16_t x = (int16_t)(v * 4099 - 30000); memcpy(p, &x, 2); break; }
        case T_UINT16: { uint16_t x = (uint16_t)(v * 2570 + 10); memcpy(p, &x, 2); break; }
        case T_INT32: {
            int32_t x = (int32_t)(v % 5 == 0 ? INT32_MIN : v * -1000003 + 10);
            memcpy(p, &x, 4);
            break;
        }
        case T_UINT32: { uint32_t x = (uint32_t)(v * 2654435761u); memcpy(p, &x, 4); break; }
        case T_INT64: {
            int64_t x = v % 7 == 0 ? INT64_MIN : v % 7 == 1 ? INT64_MAX : v % 7 == 2 ? 10
                      : (v - 50) * 1099511627776LL + which;
            memcpy(p, &x, 8);
            break;
        }
        case T_UINT64: {
            uint64_t x = (uint64_t)v * 0x9E3779B97F4A7C15ull;
            memcpy(p, &x, 8);
            break;
        }
        }
    }
}

static void scen_print_spec(FILE *o, const char *kind, const scen_spec *s)
{
    fprintf(o, "%s %s %s [", kind, s->name, scen_type_name[s->type]);
    for (int i = 0; i < s->rank; i++) fprintf(o, "%s%lld", i ? "," : "", (long long)s->shape[i]);
    fprintf(o, "]\n");
}

static void scen_print_hex(FILE *o, const void *p, size_t n)
{
    fputc(' ', o);
    if (!n) fputc('-', o);
    for (size_t i = 0; i < n; i++) fprintf(o, "%02x", ((const unsigned char *)p)[i]);
}

/* Plays a scenario through callbacks (the two writers) and/or writes its expected dump. */
typedef struct scen_writer {
    void *self;
    void (*context)(void *self, const char *name);
    void (*observation)(void *self, const void *const *tensors);
    void (*outcome)(void *self, const void *reward);
} scen_writer;

static void scen_play(const scenario *sc, const scen_writer *w, FILE *expect)
{
    static unsigned char bufs[64][512];
    const void *tensors[64];
    const char *names[32];
    int64_t next_id[32];
    int nctx = 0, cur = -1, serial = 0;
    if (expect) {
        for (int i = 0; i < sc->nfeat; i++) scen_print_spec(expect, "feature", &sc->feat[i]);
        if (sc->has_reward) scen_print_spec(expect, "score", &sc->reward);
        if (sc->has_advice) scen_print_spec(expect, "advice", &sc->advice);
    }
    for (int k = 0; k < sc->nsteps; k++) {
        const scen_step *st = &sc->steps[k];
        if (st->kind == S_CTX) {
            cur = -1;
            for (int c = 0; c < nctx; c++)
                if (!strcmp(names[c], st->ctx)) cur = c;
            if (cur < 0) {
                cur = nctx++;
                names[cur] = st->ctx;
                next_id[cur] = 0;
            }
            if (w) w->context(w->self, st->ctx);
            if (expect) {
                fprintf(expect, "context");
                scen_print_hex(expect, st->ctx, strlen(st->ctx));
                fputc('\n', expect);
            }
        } else if (st->kind == S_OBS) {
            for (int i = 0; i < sc->nfeat; i++) {
                scen_fill(&sc->feat[i], i, serial, bufs[i]);
                tensors[i] = bufs[i];
            }
            if (w) w->observation(w->self, tensors);
            if (expect) {
                fprintf(expect, "observation %lld", (long long)next_id[cur]);
                for (int i = 0; i < sc->nfeat; i++)
                    scen_print_hex(expect, bufs[i], scen_bytes(&sc->feat[i]));
                fputc('\n', expect);
            }
            next_id[cur]++;
            serial++;
        } else {
            unsigned char r[64];
            /* Rewards: 0 before a further observation, as LLVM's eviction logs. */
            int last = k + 1 >= sc->nsteps || sc->steps[k + 1].kind != S_OBS;
            scen_fill(&sc->reward, -1, serial + (last ? 1000 : 0), r);
            if (!last) memset(r, 0, scen_bytes(&sc->reward));
            if (w) w->outcome(w->self, r);
            if (expect) {
                fprintf(expect, "outcome %lld", (long long)next_id[cur] - 1);
                scen_print_hex(expect, r, scen_bytes(&sc->reward));
                fputc('\n', expect);
            }
        }
    }
}

#endif
