/* mlbc_runtime.h - the public API of libmlbc_rt: one model-runner interface for compiler
 * policies, in the spirit of LLVM's MLModelRunner and TensorSpec, plus training logs.
 *
 * A compiler describes its features as tensor specs, builds a runner, gets one stable
 * buffer per feature, fills the buffers, calls evaluate and reads the advice:
 *
 *     mlbc_runner *r = mlbc_runner_release(&policy_desc, specs, n, &advice, NULL, err, sizeof err);
 *     *(int64_t *)mlbc_runner_input(r, 0) = callee_size;      // ... every feature
 *     const int64_t *a = mlbc_runner_evaluate(r);
 *     bool inline_it = a ? *a != 0 : default_decision;        // NULL: use the fallback
 *
 * Implementations behind the interface: the release runner (a model compiled by mlbc and
 * linked in), the shared-object runner (the same, loaded with dlopen), the ONNX runner (the
 * shared-object runner over a .onnx path, compiled at run time into a cache), and the pipe
 * runner (development mode: a separate training process over two named pipes,
 * byte-compatible with LLVM 19's InteractiveModelRunner, or the ML-Compiler-Bridge framings).
 * The environment loop drives several runners as agents, by index or by label.
 *
 * Contracts common to all runners:
 *  - mlbc_runner_input(r, i) returns the same buffer for the runner's lifetime; evaluate
 *    never resets inputs (they can be logged after evaluate).
 *  - A feature the model does not know still gets a buffer (owned by the runner), so an
 *    older model keeps working with a newer compiler.
 *  - evaluate returns the advice buffer, or NULL on any error; mlbc_runner_error says why.
 *    The caller then falls back to its default decision. A pipe runner that failed once
 *    stays failed (every later evaluate returns NULL at once): a dead or desynchronised
 *    host is never asked again.
 *  - No allocation and no I/O in evaluate for the release and shared-object runners.
 *  - Errors never abort, raise SIGPIPE, or block longer than the configured timeout.
 */
#ifndef MLBC_RUNTIME_H
#define MLBC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mlbc_model_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tensor specs ------------------------------------------------------------------- */

/* Element types: ONNX TensorProto codes, as in mlbc_model_desc. */
enum {
    MLBC_FLOAT = 1, MLBC_UINT8 = 2, MLBC_INT8 = 3, MLBC_UINT16 = 4, MLBC_INT16 = 5,
    MLBC_INT32 = 6, MLBC_INT64 = 7, MLBC_BOOL = 9, MLBC_DOUBLE = 11, MLBC_UINT32 = 12,
    MLBC_UINT64 = 13
};

#define MLBC_SPEC_MAX_RANK 8
#define MLBC_SPEC_MAX_NAME 128

typedef struct mlbc_tensor_spec {
    char name[MLBC_SPEC_MAX_NAME];
    int type;                           /* MLBC_FLOAT, MLBC_INT64, ... */
    int rank;
    int64_t shape[MLBC_SPEC_MAX_RANK];
} mlbc_tensor_spec;

/* A spec by value; a rank-0 spec has one element. Names longer than the limit are cut. */
mlbc_tensor_spec mlbc_spec(const char *name, int type, int rank, const int64_t *shape);
int64_t mlbc_spec_count(const mlbc_tensor_spec *s);
size_t mlbc_spec_bytes(const mlbc_tensor_spec *s);
size_t mlbc_type_size(int type);                 /* 0 if unknown */
const char *mlbc_type_llvm_name(int type);       /* "float", "int64_t", ...; NULL if none */
int mlbc_type_from_llvm_name(const char *name);  /* 0 if unknown */

/* ---- runners -------------------------------------------------------------------------- */

typedef struct mlbc_runner mlbc_runner;

/* As LLVM's EmbeddedModelRunnerOptions: feature f binds to model input feed_prefix + f
 * (then to plain f), the advice to fetch_prefix + advice name (then plain). With a
 * model_selector, a model input "model_selector" (uint64[2]) receives the selector's MD5
 * (high half, low half); NULL fields mean "" / none. */
typedef struct mlbc_release_options {
    const char *feed_prefix;
    const char *fetch_prefix;
    const char *model_selector;
} mlbc_release_options;

mlbc_runner *mlbc_runner_release(const mlbc_model_desc *model,
                                 const mlbc_tensor_spec *features, int nfeatures,
                                 const mlbc_tensor_spec *advice,
                                 const mlbc_release_options *opt, char *err, size_t errlen);

/* A model compiled by mlbc and built with `cc -shared -fPIC`. symbol: the descriptor's
 * name ("NAME_desc"); NULL derives it from the file name ("policy.so" -> "policy_desc"). */
mlbc_runner *mlbc_runner_shared_object(const char *path, const char *symbol,
                                       const mlbc_tensor_spec *features, int nfeatures,
                                       const mlbc_tensor_spec *advice,
                                       const mlbc_release_options *opt, char *err,
                                       size_t errlen);

/* The descriptor alone, from such a shared object (symbol as above): returns the handle to
 * give mlbc_model_close, or NULL with a message in err. */
void *mlbc_model_open(const char *path, const char *symbol, const mlbc_model_desc **desc,
                      char *err, size_t errlen);
void mlbc_model_close(void *handle);

/* ---- models given as .onnx at run time (MLGO's "model under training", the Bridge's ONNX
 * runner) ------------------------------------------------------------------------------ */

/* How an ONNX model becomes a shared object. Every field may be NULL (all-NULL: defaults).
 *
 *  - mlbc: the compiler. NULL: $MLBC, else `mlbc` next to the running program
 *    (/proc/self/exe's folder: build/mlbc-serve finds build/mlbc, an installed tool its
 *    neighbour), else `mlbc` on PATH.
 *  - cc: the C compiler, split at blanks ("ccache gcc"). NULL: $CC, else `cc`. It is run as
 *    `CC -O2 -fPIC -shared -o X.so NAME.c CC_ARGS... -lm`.
 *  - cache_dir: NULL: $MLBC_CACHE_DIR, else $XDG_CACHE_HOME/mlbc, else $HOME/.cache/mlbc;
 *    created (with missing parents) mode 0700. It must be the effective user's, not
 *    writable by group or others, and not a symbolic link (its parents may be links).
 *  - name: mlbc -n NAME, a C identifier; NULL: from the model's file name as mlbc does
 *    ("dir/policy.onnx" -> "policy"), so the descriptor is NAME_desc either way.
 *  - mlbc_args, cc_args: NULL-terminated extra arguments ({"--dim", "N=1", NULL};
 *    {"-lopenblas", NULL} with "--blas").
 *
 * The cache entry is CACHE_DIR/NAME.KEY.so, KEY the MD5 of the model's bytes, of
 * `mlbc --version`'s output and of every option above that changes the result (name, both
 * argument lists, the C compiler's words); so a new mlbc or other options never reuse an
 * old entry, and nothing is ever stale by date. Each compile works in a fresh temporary
 * folder inside the cache folder and publishes the shared object with one rename(): a
 * process that finds the entry loads it without running any compiler; processes starting
 * at once on an empty cache each compile and rename (same bytes; the last rename wins, and
 * whoever loaded the other file keeps it), so none ever sees a partial file and no lock is
 * needed. A failed compile leaves nothing in the cache and its error holds mlbc's (or the C
 * compiler's) message. Entries are published mode 0600. Since KEY is predictable, whoever
 * can write the cache chooses the code loaded: the folder and each entry are opened without
 * following links and checked on the descriptor (this user's, not writable by group or
 * others), the compilers work and the entry is loaded through the checked folder's
 * descriptor (/proc/self/fd/N/...), and anything else is refused with an error naming the
 * path, what was found and what to do; a refused entry is not replaced. The compilers are
 * run with posix_spawn (no shell, no quoting), with standard input from /dev/null and their
 * output captured into the error. Not usable from a process whose SIGCHLD is ignored (the
 * exit status is lost). */
typedef struct mlbc_onnx_options {
    const char *mlbc;
    const char *cc;
    const char *cache_dir;
    const char *name;
    const char *const *mlbc_args;
    const char *const *cc_args;
} mlbc_onnx_options;

/* Compiles an ONNX model (.onnx or .onnxtxt, by contents) into the cache, or finds it
 * there (and checked, as said above). Writes the shared object's path into so_path (the
 * runners load it through the checked folder instead; a caller loading so_path itself
 * trusts the path). Returns 0 when the cache already
 * held it, 1 when it was compiled now, -1 with a message in err (missing model, model
 * refused by mlbc, compiler not found, cache folder not writable, path too long). */
int mlbc_onnx_compile(const char *model, const mlbc_onnx_options *opt, char *so_path,
                      size_t so_len, char *err, size_t errlen);

/* The shared-object runner over mlbc_onnx_compile(path, onnx) (onnx may be NULL). The
 * .so path functions above (mlbc_runner_shared_object, mlbc_model_open, and so mlbc-serve,
 * mlbc-replay and the compiler plugins) take a path ending in .onnx or .onnxtxt too: it is
 * compiled with the defaults, and the descriptor symbol derived from the model's name. */
mlbc_runner *mlbc_runner_onnx(const char *path, const mlbc_onnx_options *onnx,
                              const mlbc_tensor_spec *features, int nfeatures,
                              const mlbc_tensor_spec *advice, const mlbc_release_options *opt,
                              char *err, size_t errlen);

/* Whether a model fits a compiler's features and advice, names bound as the release runner
 * binds them (opt: prefixes, selector; may be NULL), and more strictly: every model input
 * must be one of the features (the runner would leave it zero). 0, or -1 with a message
 * naming the first mismatch. advice may be NULL (not checked). */
int mlbc_model_check(const mlbc_model_desc *model, const mlbc_tensor_spec *features, int n,
                     const mlbc_tensor_spec *advice, const mlbc_release_options *opt,
                     char *err, size_t errlen);

enum {
    MLBC_FRAMING_LLVM = 0,          /* InteractiveModelRunner: JSON lines + raw tensors */
    MLBC_FRAMING_BRIDGE_BITSTREAM,  /* ML-Compiler-Bridge: 8-byte length + JSON header + raw */
    MLBC_FRAMING_BRIDGE_JSON,       /* ML-Compiler-Bridge: 8-byte length + JSON document */
    MLBC_FRAMING_BRIDGE_PROTOBUF    /* ML-Compiler-Bridge: 8-byte length + protobuf message
                                       (runtime/mlbc.proto: Observation out, Advice in) */
};

/* Or'ed into mlbc_pipe_options.framing: BASE.in and BASE.out may also be regular files
 * (advice prepared in advance, observations captured), if they are this user's, mode 0600,
 * with one link (BASE.out is truncated). Without it, only FIFOs. A flag rather than a new
 * field, so that a program built against an older header can never set it by accident. */
#define MLBC_PIPE_REGULAR_FILES 0x100

typedef struct mlbc_pipe_options {
    int framing;                    /* MLBC_FRAMING_*, maybe | MLBC_PIPE_REGULAR_FILES */
    int timeout_ms;                 /* every read and write; 0 means 10000 */
    const char *context;            /* first context record (LLVM's inliner sends ""); NULL: "" */
} mlbc_pipe_options;

/* The compiler side of development mode: writes BASE.out, reads advice from BASE.in. Opens
 * BASE.in for reading first, then BASE.out for writing, as LLVM does (the host must create
 * both FIFOs and open them in the opposite order); opening also honours the timeout. Each is
 * opened without following a symbolic link and checked on its descriptor, before a byte
 * crosses it or a file is truncated: a FIFO as mlbc_fifo_private demands; anything else is
 * refused (but see MLBC_PIPE_REGULAR_FILES). */
mlbc_runner *mlbc_runner_pipe(const char *channel_base, const mlbc_tensor_spec *features,
                              int nfeatures, const mlbc_tensor_spec *advice,
                              const mlbc_pipe_options *opt, char *err, size_t errlen);

/* 0 if descriptor fd (opened from path, best with O_NOFOLLOW) is a private FIFO: one that
 * belongs to this user and that no other user may open (mode 0600). Else (also when it is
 * not a FIFO) -1, err saying why. The pipe runner and the hosts (mlbc-serve, mlbc_gym) check
 * each FIFO on its descriptor after opening it, so a FIFO or file planted in a shared folder
 * (e.g. /tmp) by someone else is refused, not read from or written to. */
int mlbc_fifo_private(int fd, const char *path, char *err, size_t errlen);

void *mlbc_runner_input(mlbc_runner *r, int i);            /* NULL if i is out of range */
int mlbc_runner_input_index(const mlbc_runner *r, const char *feature); /* -1 if absent */
int mlbc_runner_num_inputs(const mlbc_runner *r);
const mlbc_tensor_spec *mlbc_runner_input_spec(const mlbc_runner *r, int i);
const mlbc_tensor_spec *mlbc_runner_advice_spec(const mlbc_runner *r);
/* 1 if feature i is read by the model (release runners); pipe runners send every feature. */
int mlbc_runner_input_bound(const mlbc_runner *r, int i);
/* Starts a new context (e.g. the function being compiled); the pipe runner sends a context
 * record, the others ignore it. 0 on success. */
int mlbc_runner_set_context(mlbc_runner *r, const char *name);
const void *mlbc_runner_evaluate(mlbc_runner *r);          /* NULL on error */
/* The ML-Compiler-Bridge's evaluation (its runners' populateFeatures, then evaluate<T> or
 * evaluate<T *>(out, size)), for a pipe runner in the Bridge's bitstream or JSON framing:
 * the Bridge changes the features and the reply's type and length from message to message.
 * Sends the n features given here (specs and data, for this call only; the runner's own are
 * not sent) and reads advice of element type advice_type whose count the host's reply
 * decides (bitstream: its bytes over the type's size, or 4-byte ints for integer types of
 * other sizes, as the Bridge's Python packs them; JSON: its values), 1 to max_count of them:
 * the count is written to *count (may be NULL). Returns the advice, valid until the next
 * evaluation, or NULL: a bad call (error set, the runner usable), or the runner failed. */
const void *mlbc_runner_evaluate_bridge(mlbc_runner *r, const mlbc_tensor_spec *features,
                                        const void *const *data, int n, int advice_type,
                                        int64_t max_count, int64_t *count);
const char *mlbc_runner_error(const mlbc_runner *r);       /* "" if none */
void mlbc_runner_free(mlbc_runner *r);

/* ---- training logs (LLVM's TrainingLogger format) ------------------------------------- */

typedef struct mlbc_logger mlbc_logger;

/* Header: {"features":[...]} plus "score" when reward is given and "advice" when advice is
 * given (the interactive stream's header). The logger writes to `out` (not closed). */
mlbc_logger *mlbc_logger_open(FILE *out, const mlbc_tensor_spec *features, int nfeatures,
                              const mlbc_tensor_spec *reward, const mlbc_tensor_spec *advice);
int mlbc_logger_context(mlbc_logger *lg, const char *name);
/* One observation: tensors[i] points to feature i's data. Numbers count per context. */
int mlbc_logger_observation(mlbc_logger *lg, const void *const *tensors);
/* The reward of the latest observation of the current context. */
int mlbc_logger_outcome(mlbc_logger *lg, const void *reward);
int mlbc_logger_close(mlbc_logger *lg);    /* flushes; 0 if every write succeeded */

typedef struct mlbc_log_reader mlbc_log_reader;

enum { MLBC_RECORD_CONTEXT = 1, MLBC_RECORD_OBSERVATION, MLBC_RECORD_OUTCOME };

typedef struct mlbc_log_record {
    int kind;                       /* MLBC_RECORD_* */
    const char *context;            /* current context name */
    int64_t id;                     /* observation number (observation, outcome) */
    const void *const *tensors;     /* observation: feature i's data; outcome: [0] = reward */
} mlbc_log_record;

/* Reads training logs and captured interactive streams (adjacent contexts, observations
 * without outcomes). Errors carry the byte offset. */
mlbc_log_reader *mlbc_log_open(FILE *in, char *err, size_t errlen);
int mlbc_log_num_features(const mlbc_log_reader *r);
const mlbc_tensor_spec *mlbc_log_feature(const mlbc_log_reader *r, int i);
const mlbc_tensor_spec *mlbc_log_score(const mlbc_log_reader *r);   /* NULL if none */
const mlbc_tensor_spec *mlbc_log_advice(const mlbc_log_reader *r);  /* NULL if none */
int mlbc_log_next(mlbc_log_reader *r, mlbc_log_record *rec);  /* 1 record, 0 end, -1 error */
const char *mlbc_log_error(const mlbc_log_reader *r);
void mlbc_log_close(mlbc_log_reader *r);

/* ---- environment / agent loop (multi-step, multi-agent RL inference in process) -------- */

/* The environment is the compiler-side problem; each agent is a runner. The loop: reset,
 * then until done: observe (fill the current agent's inputs), evaluate, step with the
 * advice (NULL if the runner failed: the environment applies its default), next agent. */
typedef struct mlbc_env_ops {
    int (*reset)(void *env);                                     /* 0 ok */
    int (*current_agent)(void *env);                             /* index into agents */
    int (*observe)(void *env, int agent, mlbc_runner *r);        /* 0 ok */
    int (*step)(void *env, int agent, const void *advice);       /* 0 ok */
    int (*done)(void *env);                                      /* non-zero: episode over */
} mlbc_env_ops;

/* Runs one episode of at most max_steps steps; returns the number of steps, -1 on error. */
int mlbc_env_run(const mlbc_env_ops *ops, void *env, mlbc_runner *const *agents,
                 int nagents, int max_steps);

/* Agents bound by label to models by path (the ML-Compiler-Bridge's multi-agent runner):
 * {"inliner", "inliner.onnx", ...}, {"regalloc", "evict.so", ...}. A model path is a shared
 * object or an ONNX model (compiled through the cache with onnx, which may be NULL). */
typedef struct mlbc_agent_spec {
    const char *label;                      /* unique, non-empty */
    const char *model;                      /* .so, .onnx or .onnxtxt */
    const mlbc_tensor_spec *features;
    int nfeatures;
    const mlbc_tensor_spec *advice;
    const mlbc_release_options *opt;        /* may be NULL */
} mlbc_agent_spec;

typedef struct mlbc_agents mlbc_agents;

/* One runner per agent; NULL with a message naming the agent's label if any fails. */
mlbc_agents *mlbc_agents_open(const mlbc_agent_spec *agents, int n,
                              const mlbc_onnx_options *onnx, char *err, size_t errlen);
int mlbc_agents_count(const mlbc_agents *a);
int mlbc_agents_index(const mlbc_agents *a, const char *label);    /* -1 if absent */
const char *mlbc_agents_label(const mlbc_agents *a, int i);        /* NULL if out of range */
mlbc_runner *mlbc_agents_runner(const mlbc_agents *a, const char *label);   /* NULL if absent */
void mlbc_agents_free(mlbc_agents *a);

/* The loop of mlbc_env_run with agents named by label: current_agent returns a label (an
 * unknown one ends the episode with -1), observe and step receive it. */
typedef struct mlbc_env_label_ops {
    int (*reset)(void *env);
    const char *(*current_agent)(void *env);
    int (*observe)(void *env, const char *label, mlbc_runner *r);
    int (*step)(void *env, const char *label, const void *advice);
    int (*done)(void *env);
} mlbc_env_label_ops;

int mlbc_env_run_labels(const mlbc_env_label_ops *ops, void *env, const mlbc_agents *agents,
                        int max_steps);

#ifdef __cplusplus
}
#endif
#endif
