/* mlbc.h - core types shared by every stage of the compiler.
 *
 * Pipeline (main.c runs it, one line per pass; folders of compiler/ in brackets):
 *   [front] import.c (onnx.pb-c) / text_parse.y  ->  Onnx__ModelProto  (binary, text)
 *   [front] import.c        ->  Graph: the IR both front ends share ([ir] graph.c, util.c)
 *   [passes] infer.c        ->  ops bound, types and shapes inferred, constants folded
 *                               (lower.c: If, Loop, Scan unrolled as the sweep meets them)
 *   [passes] dead.c         ->  unused nodes dropped, live uses counted
 *   [passes] fuse.c         ->  exact pattern fusions
 *   [passes] plan.c         ->  scratch memory plan
 *   [back] emit.c           ->  C source + header (cexpr.c: C text, loops.c: loop nests)
 * Operators live in [ops] op_*.c, one file per family: shape rule, folding and emitter
 * together; ops.c is the registry.
 */
#ifndef MLBC_H
#define MLBC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "onnx.pb-c.h"
#include "config.h"

/* ---- util.c: memory, strings, diagnostics ---------------------------------------------- */

/* Everything lives until exit: the compiler is a short-lived process. */
void *xalloc(size_t n);                 /* zeroed; dies on exhaustion */
/* p (n elements of elem bytes) with room for one more: doubles *cap when full */
void *xgrow(void *p, int n, int *cap, size_t elem);
char *xstrdup(const char *s);
/* realloc of P (LEN bytes used) to N bytes, not xalloc'd memory: a buffer that grows in place */
void *xrealloc(void *p, size_t len, size_t n);
char *xstrndup(const char *s, size_t n);
char *strf(const char *fmt, ...);       /* formatted, arena-allocated */
/* Every string a model supplies (names, attributes, selectors) is hostile: the output is
 * compiled into other programs. It reaches the C text only through one of these, one per
 * context, whatever its bytes (util.c): */
const char *c_ident(const char *s);     /* part of an identifier: [A-Za-z0-9_], 32 at most */
const char *c_comment(const char *s);   /* inert text inside a comment, shortened */
const char *c_string(const char *s);    /* a string literal of S's exact bytes, quotes included */

typedef struct Buf {                    /* growable byte buffer */
    char *p;
    size_t len, cap;
} Buf;
void buf_put(Buf *b, const void *data, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_printf(Buf *b, const char *fmt, ...);

/* Diagnostics: "mlbc: error: FILE[:LINE:COL]: msg", then exit(1). Output files are only
 * written at the very end, so dying never leaves one behind. */
extern const char *diag_file;           /* model file name for messages */
_Noreturn void die(const char *fmt, ...);
_Noreturn void die_at(int line, int col, const char *fmt, ...);
_Noreturn void die_usage(const char *fmt, ...);
void warn(const char *fmt, ...);

#ifdef MLBC_FUZZ                        /* fuzz builds only: util.c says why */
#include <setjmp.h>
extern jmp_buf *fuzz_escape;            /* die() longjmps here when set */
extern int fuzz_quiet;                  /* no diagnostics on stderr */
extern ProtobufCAllocator fuzz_proto_alloc;
void fuzz_release(void);                /* frees every block allocated since the last call */
#define MLBC_PROTO_ALLOC (&fuzz_proto_alloc)
#else
#define MLBC_PROTO_ALLOC NULL           /* protobuf-c's malloc; the model lives until exit */
#endif

int read_file(const char *path, char **data, size_t *len);  /* 0 on success */
/* Writes to PATH.tmp then renames: a reader never sees a half-written file. */
int write_file_atomic(const char *path, const char *data, size_t len);

/* ---- element types (values are ONNX TensorProto.DataType) ------------------------------- */

typedef enum DType {
    DT_UNDEF = 0, DT_FLOAT = 1, DT_UINT8 = 2, DT_INT8 = 3, DT_UINT16 = 4, DT_INT16 = 5,
    DT_INT32 = 6, DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9, DT_FLOAT16 = 10, DT_DOUBLE = 11,
    DT_UINT32 = 12, DT_UINT64 = 13, DT_COMPLEX64 = 14, DT_COMPLEX128 = 15, DT_BFLOAT16 = 16,
    DT_COUNT
} DType;

const char *dtype_name(DType t);        /* ONNX text name: "float", "int64", ... */
const char *dtype_ctype(DType t);       /* C type: "float", "int64_t", "uint16_t", ... */
size_t dtype_size(DType t);             /* 0 for unsupported types */
int dtype_is_float(DType t);            /* float, double (not the 16-bit raw types) */
int dtype_is_int(DType t);              /* signed or unsigned integer, not bool */
int dtype_is_signed(DType t);
DType dtype_from_name(const char *s);   /* DT_UNDEF if unknown */

/* ---- graph IR ----------------------------------------------------------------------- */

typedef struct Node Node;
typedef struct Value Value;
typedef struct Graph Graph;
typedef struct Env Env;

/* A tensor flowing through the graph. */
struct Value {
    const char *name;                   /* ONNX name */
    Graph *graph;                       /* the graph it belongs to */
    DType dt;                           /* DT_UNDEF until inferred */
    int rank;                           /* -1 until inferred */
    int64_t dim[MLBC_MAX_RANK];
    void *data;                         /* contents if constant (initializer or folded) */
    Node *producer;                     /* NULL for graph inputs and initializers */
    int nuse;                           /* live consumers (after dead-node removal) */

    /* Declared type from value_info/inputs/outputs; trusted where a shape is decided
     * by data at run time, then checked by the generated code. */
    DType decl_dt;
    int decl_rank;                      /* -1 if not declared */
    int64_t decl_dim[MLBC_MAX_RANK];    /* -1 for unknown or symbolic */
    const char *decl_sym[MLBC_MAX_RANK];

    int arg_index;                      /* graph input number, -1 otherwise */
    int result_index;                   /* first graph output number, -1 otherwise */
    int is_weight;                      /* initializer: emitted as static const */

    /* plan.c */
    int first, last;                    /* node indices of definition and last use */
    int64_t offset;                     /* byte offset in the scratch arena, -1 if none */
    Value *alias;                       /* the value whose buffer this one shares (the
                                           output of a reshape-like node), or NULL */
    int id;                             /* dense number for generated names */
};

struct Node {
    const char *op;                     /* op_type */
    const char *domain;                 /* "" for the default domain */
    const char *name;                   /* may be "" */
    int opset;                          /* version of the node's domain in the model */
    int nin, nout;
    Value **in;                         /* NULL for omitted optional inputs */
    Value **out;                        /* NULL for omitted optional outputs */
    Onnx__AttributeProto **attr;
    int nattr;
    const struct OpDef *def;
    int dead;                           /* folded away or unused */
    int keep;                           /* live without outputs: a run-time check */
    int index;                          /* position in schedule */
    void *aux;                          /* op-private data from infer to emit */
    Env *env;                           /* If, Loop, Scan: the names their subgraphs see
                                           outside themselves (lower.c) */
    int64_t ws_bytes;                   /* set by infer: scratch the kernel uses while it
                                           runs (a padded copy, columns), 0 if none */
    int64_t ws_offset;                  /* plan.c: where that workspace is in the arena */
    int once;                           /* plan.c: computed by NAME_init, from constants only
                                           (an output too large to fold into the binary) */
};

struct Graph {
    const char *name;
    Node **nodes;                       /* topologically sorted by import */
    int nnodes;
    Value **values;                     /* every value, inputs first */
    int nvalues, capvalues;
    Value **inputs;                     /* runtime arguments (initialized inputs excluded) */
    int ninputs;
    Value **outputs;
    int noutputs;
    int lowered;                        /* nodes and copies made by lowering control flow so
                                           far (lower.c's unrolling limit is for the graph) */
};

typedef struct Model {
    Onnx__ModelProto *proto;            /* what was loaded, for --print/--emit-onnx */
    Graph *g;
    int opset;                          /* default-domain opset */
} Model;

/* ---- front ends --------------------------------------------------------------------- */

Onnx__ModelProto *load_binary(const char *data, size_t len);
/* wire.c: dies if the bytes, once unpacked, would pass MLBC_MAX_NODES, MLBC_MAX_NESTING or
 * MLBC_MAX_PROTO_PARTS; leaves malformed bytes to protobuf-c */
void check_wire(const char *data, size_t len);
/* load_binary reads absent names as ""; before writing the model out, make them absent. */
void names_absent_again(Onnx__ModelProto *m);
Onnx__ModelProto *parse_text(const char *src, size_t len);   /* text_parse.y */
void text_lex_reset(void);              /* text_lex.l: free and reset the scanner */
void print_text(Buf *out, const Onnx__ModelProto *m);        /* text_print.c */

/* import.c */
Model *import_model(Onnx__ModelProto *m);
void bind_dim(const char *sym, int64_t value);               /* --dim SYM=N */
void tensor_to_value(const Onnx__TensorProto *t, Value *v);  /* data, type and shape */
Value *new_value(Graph *g, const char *name);                /* appended to g->values */
/* A node of NP's op and attributes, named NAME; inputs and outputs still unset (NULL). */
Node *new_node(const Onnx__NodeProto *np, const char *name, int opset);

/* ---- passes ------------------------------------------------------------------------- */

/* In the order main.c runs them: */
void bind_ops(Graph *g);                /* infer.c: each node's OpDef; dies on unknown ops */
void infer_graph(Graph *g);             /* infer.c: types, shapes, folding (lower.c: If,
                                           Loop and Scan unrolled as the sweep meets them) */
void remove_dead(Graph *g);             /* dead.c: unused nodes dropped, live uses counted */
int fuse_graph(Graph *g);               /* fuse.c: pattern fusions; returns how many */
int64_t plan_memory(Graph *g);          /* plan.c: scratch offsets; returns scratch bytes */

/* The plain nodes that replace a control-flow node, inferred and folded as they are made,
 * in schedule order; infer_graph puts them after the node they replace. */
typedef struct Splice {
    Graph *g;
    Node **nodes;
    int nnodes, cap;
    int copies;                         /* subgraph copies made (lower.c's unrolling limit) */
} Splice;
/* Infer N and fold it if it can be (a control-flow node is lowered instead), then append it
 * to S. N's def is bound from its op unless already set. */
void splice_node(Splice *s, Node *n);

/* Name tables (scope.c), one per graph or copy of a subgraph: a name not bound in a table
 * is looked up in the enclosing one, `up` (ONNX scoping of subgraphs). */
Env *env_new(Env *up);
int env_bind(Env *e, const char *name, Value *v);   /* 0 if NAME is already bound in e */
Value *env_find(const Env *e, const char *name);    /* NULL if bound nowhere */
/* scope.c: the names NP's subgraphs (nested ones too) use without defining them; returns
 * the count. */
int outer_names(const Onnx__NodeProto *np, const char ***names);
/* lower.c: an If, Loop or Scan, or a binary op with legacy broadcasting (opset < 7), is
 * marked dead and replaced by plain nodes spliced into S; returns 0 for any other node. */
int lower_node(Splice *s, Node *n);
int op_has(const Node *n, int flag);   /* graph.c: n's op has OP_* FLAG */
/* graph.c: output I of N if present and read (by a live node or the caller), else NULL; an
 * unread output may be left uncomputed */
Value *read_output(const Node *n, int i);
/* graph.c: a static shape of RANK for V from downstream (see there); 1 if found */
int declared_downstream(const Value *v, int rank, int64_t *dim);

/* ---- operators ---------------------------------------------------------------------- */

typedef struct Emit Emit;

typedef struct OpDef {
    const char *name;
    void (*infer)(Node *n);             /* set output types and shapes; die on bad input */
    int (*fold)(Node *n);               /* optional: compute outputs' data from constant
                                           inputs (allocated); 0 if it cannot */
    void (*emit)(Emit *e, Node *n);     /* write the kernel and the call */
    double (*flops)(Node *n);           /* optional: default = output elements */
    int flags;                          /* OP_* properties the passes ask about */
} OpDef;

enum {
    OP_VIEW = 1,                        /* output = the input's bytes, reshaped (plan.c
                                           shares the buffer) */
    OP_ELEMENTWISE = 2,                 /* per element, broadcasting (infer.c's
                                           declared_downstream follows these) */
    OP_OPTIONAL_OUT0 = 4,               /* output 0 may be left out (an empty name): in ONNX
                                           only LSTM, GRU and RNN's Y; Check has none */
};

const OpDef *find_op(const char *name); /* ops.c: an ONNX op_type's definition, or NULL */
/* ops.c: an operator the passes make (op_internal.c): "Check", "Bucketize", "Silu",
 * "NormChain", "Gelu" */
const OpDef *find_internal_op(const char *name);
/* What a Conv's kernel applies to each tile of its product (its aux, set by fuse.c): the
 * node's output is then that of the last fused node. */
typedef struct ConvEpilogue {
    int bn;                             /* a BatchNormalization (inference) first: its scale,
                                           bias, mean and var are the Conv's inputs 3-6 */
    double bn_eps;                      /* and its epsilon */
    const char *act;                    /* "Relu", "Silu", "Sigmoid", "Tanh", or NULL */
    int64_t pool_k[2], pool_s[2];       /* a 2-D MaxPool after it (kernel, strides), or 0s */
    const char *mean;                   /* or the mean of each output plane after it: the op
                                           that took it ("GlobalAveragePool", "ReduceMean"),
                                           whose order of additions it keeps; or NULL */
} ConvEpilogue;

/* op_conv.c: a float Conv computed by matrix products, whose kernel can apply an activation
 * to each tile of its output (fuse.c), or a BatchNormalization (products of other than one
 * channel per group); and, in whole output rows, a MaxPool after it (not after a
 * BatchNormalization) */
int conv_takes_activation(Node *n);
int conv_takes_batchnorm(Node *n);
int conv_takes_maxpool(Node *conv, Node *pool, ConvEpilogue *ep);
/* op_conv.c: a float 2-D Conv whose products have pixels as rows, then the mean of each output
 * plane (NEXT: a GlobalAveragePool, or a ReduceMean over the plane: reduce_mean_axes) in
 * lanes of 8 pixels, whose planes are then never stored */
int conv_takes_mean(Node *conv, Node *next, ConvEpilogue *ep);
/* op_reduce.c: the axes a float ReduceMean reduces, as a mask, known at compile time (0: not
 * such a node) */
unsigned long reduce_mean_axes(Node *n);
/* op_reduce.c: whether float ReduceSum/ReduceMean R, reading a Transpose by PERM of X, takes X
 * instead: the same sums in the same order (fuse.c) */
int reduce_takes_transpose(Node *r, Value *x, const int *perm);
/* op_reduce.c: the lanes of a sum over runs of K contiguous elements in accumulators of
 * ACC_BYTES (templates/reduce.c's "rows"), which NormChain's sums follow */
int reduce_lanes(int64_t K, int acc_bytes);
/* op_norm.c: NormChain's kernel (templates/norm_chain.c) */
void norm_chain_emit(Emit *e, Node *n);
int64_t conv_workspace(Node *n);        /* Node.ws_bytes of a Conv, after a fusion too */
/* The fold of a global pool's 8 lanes s[0..7] (op_pool.c; a Conv's fused mean keeps it) */
#define GLOBAL_POOL_SUM "((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))"
/* The same of a reduction's rows (lane_fold's halves: lane j takes lane j + 4, then j + 2) */
#define REDUCE_LANES_SUM "((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))"
/* op_pool.c: a float 2-D MaxPool without pads, dilations, partial windows or read indices:
 * its kernel K and strides S */
int maxpool_plain_2d(Node *pool, int64_t *k, int64_t *s);
/* op_pool.c: the vectorised MaxPool (max 1) or sum (max 0) row kernel (templates/pool_rows.c)
 * for OL outputs of a window of K taps at stride S, NR rows RS floats apart; node n names it */
const char *pool_rows_kernel(Emit *e, Node *n, int max, int64_t ol, int64_t k, int64_t s,
                             int64_t d, int64_t rs);

/* The aux data of the internal operators, made by the passes. */
typedef struct Guard {                  /* Check (lower.c): in[0][0] CMP K must hold */
    const char *cmp;                    /* the C comparison of the scalar with k */
    int64_t k;
    const char *why;                    /* run()'s message when it does not */
} Guard;
typedef struct Bucketize {              /* Bucketize (fuse.c) */
    Value q;                            /* the boundaries, sorted */
    int upper;                          /* count q <= x (else q < x) */
    const char *was;                    /* the replaced chain, for the kernel's comment */
} Bucketize;

typedef struct NormChain {              /* NormChain (fuse.c): LayerNorm as nodes */
    double eps;                         /* the Add's constant */
    int eps_first;                      /* it is the Add's input 0 */
    int scale, bias;                    /* a Mul by a scale, an Add of a bias follow */
    int scale_first, bias_first;        /* the scale (bias) is input 0 of its Mul (Add) */
    const char *was;                    /* the replaced chain, for the kernel's comment */
} NormChain;

typedef struct Gelu {                   /* Gelu (fuse.c): nn.GELU as torch exports it */
    int div;                            /* t = x / c (a Div), else x * c (a Mul) */
    double c, one, half;                /* its constants: y = ((erf(t) + one) * x) * half */
    const char *was;                    /* the replaced chain, for the kernel's comment */
} Gelu;

/* ---- IR queries for shape rules and passes (graph.c) ---------------------------------- */

_Noreturn void node_die(Node *n, const char *fmt, ...);
int64_t numel(const Value *v);
int same_type(const Value *a, const Value *b);  /* the same element type and shape */
int64_t numel_dims(int rank, const int64_t *dim);
int64_t dims_prod(const int64_t *dim, int from, int to); /* dim[from] * ... * dim[to - 1] */
void set_output(Node *n, int i, DType dt, int rank, const int64_t *dim);
void copy_shape(Node *n, int i, const Value *like, DType dt);  /* dt DT_UNDEF: like's */
const char *shape_str(const Value *v);                          /* "[2,3]" */
int norm_axis(Node *n, int64_t axis, int rank);                 /* handles negative axes */
/* Input 0 viewed as [outer, size, inner] around the optional "axis" attribute (flattened
 * without one: returns -1); WHY ends the message if input 0 is a scalar. Returns the axis. */
int axis_view(Node *n, const char *why, int64_t *outer, int64_t *size, int64_t *inner);
void need_type(Node *n, const Value *v, const DType *allowed);  /* allowed ends with DT_UNDEF */
void need_same_type(Node *n, const Value *a, const Value *b);
void need_const(Node *n, int i);          /* input i must be a constant (names the input) */
void need_floatish(Node *n, const Value *v);              /* float, double or a 16-bit float */
void need_scalar(Node *n, const Value *v, const char *what); /* one element; WHAT names it */
Value *input(Node *n, int i);             /* NULL if absent */
/* Broadcast a and b (numpy rules) into out; returns the rank. */
int broadcast(Node *n, int ra, const int64_t *da, int rb, const int64_t *db, int64_t *out);

/* Attributes. */
Onnx__AttributeProto *attr(Node *n, const char *name);
int64_t attr_int(Node *n, const char *name, int64_t dflt);
double attr_float(Node *n, const char *name, double dflt);
const char *attr_str(Node *n, const char *name, const char *dflt);
int attr_ints(Node *n, const char *name, int64_t *out, int max);  /* -1 if absent */
void transpose_perm(Node *n, int r, int *perm); /* op_layout.c: a Transpose's, checked */
int attr_floats(Node *n, const char *name, float *out, int max);  /* -1 if absent */

/* Read a constant integer tensor (int32 or int64) into out; returns count. */
int const_ints(Node *n, const Value *v, int64_t *out, int max);
/* Read element i of any numeric constant as double / int64. */
double value_get_f(const Value *v, int64_t i);
int value_all_finite(const Value *v);    /* no NaN nor infinity among its elements */
int64_t value_get_i(const Value *v, int64_t i);
void value_set_f(Value *v, int64_t i, double x);
void value_set_i(Value *v, int64_t i, int64_t x);
void alloc_data(Value *v);              /* zeroed data for an inferred value */
/* Output i's shape is decided by data at run time: take the declared static shape of the
 * output (value_info or graph output) if there is one; returns 0 if there is none. The
 * emitter must then check at run time that the data agree (see check()). */
int use_declared(Node *n, int i, DType dt);

/* Element types (float16/bfloat16 elements are raw uint16_t, computed in float). */
int dtype_is_half(DType t);             /* float16 or bfloat16 */
int dtype_is_floatish(DType t);         /* float, double, float16 or bfloat16 */
DType calc_type(DType t);               /* computation type: float for the 16-bit floats, else t */
int64_t nbytes(const Value *v);         /* size of v's data */

/* Shape-like inputs (op_shape.c, op_layout.c): a shape, axes, repeats, pads... */
double no_flops(Node *n);               /* flops rule of an op that only moves data */
Value *need_input(Node *n, int i, const char *what);   /* present, of a fixed-size type */
Value *need_ints(Node *n, int i, const char *what);    /* present, 1-D, int32 or int64 */
int64_t ints_count(const Value *v);     /* values in a 1-D (or scalar) input */
/* Output OUT's shape comes from input IN's data, which is not constant: use_declared or die. */
void declared_or_die(Node *n, int out, DType dt, int in);
const char *dims_doc(const Value *v);   /* "float[2,3]" for kernel comments */

/* ---- C expressions for generated code (cexpr.c) -------------------------------------------
 * float16/bfloat16 elements are raw uint16_t; they are computed in float (template half). */

const char *load_elem(DType t, const char *x);         /* element x of type t in calc_type(t) */
const char *load_as(DType t, DType ct, const char *x); /* element x of type t as type ct (cast) */
const char *store_elem(DType t, const char *x);        /* expression x converted to type t (cast) */
const char *store_as(DType t, DType ct, const char *x); /* x of type ct to type t, as is if same */
const char *libm_sfx(DType calc);       /* libm suffix of a computation type: "f" or "" (double) */
/* "a * b + c" computed in CALC so that contraction cannot change it (templates/madd.c): for
 * float and double a call of mlbc_maddf / mlbc_madd, for integers the plain expression. */
const char *madd(DType calc, const char *a, const char *b, const char *c);
/* "a * b + c" as an explicit fused multiply-add for float and double (fmaf/fma: one rounding
 * on every path, what the matrix kernels compute), the plain expression for integers. For
 * loop-carried accumulations outside the hot kernels: mlbc_maddf's result fed back into
 * its own sum lets gcc -O3's SLP vectoriser drop the float rounding in between. */
const char *fused(DType calc, const char *a, const char *b, const char *c);
const char *libm_suffix(const char *expr, DType calc); /* each '@' in expr -> libm_sfx(calc) */
const char *lit(int64_t x);              /* integer literal (LL suffix where needed) */
const char *float_lit(double x, DType calc); /* exact float/double literal; INFINITY, NAN */
void buf_float_lit(Buf *b, double x, DType calc); /* the same, appended to b */
/* Element idx of an array of accumulator type ct (a packed weight) set to f for float and
 * double, else to i converted as C converts it. */
void set_acc(void *dst, int64_t idx, DType ct, double f, int64_t i);
int pow2ceil(int64_t x);                /* smallest power of two >= x (1 for x <= 1) */
/* Floats from one 16-column panel of a packed mlbc_gemm_f32 operand to the next, for K rows:
 * 16 K, plus one cache line when that is a multiple of 1 KiB, so that the panels a tile reads
 * side by side do not all fall into the same L1 sets (4 KiB aliasing); from K = 64 on, plus
 * as many as keep the panels at least 512 bytes away from a multiple of 4 KiB apart. */
int64_t gemm_panel_stride(int64_t K);
/* B[k][n]'s place in mlbc_gemv_f32's layout of a K x N operand (templates/gemv_f32.c): column
 * blocks of 64, each [K][its columns rounded up to 16]; gemv_size() floats in all. */
int64_t gemv_index(int64_t K, int64_t N, int64_t k, int64_t n);
int64_t gemv_size(int64_t K, int64_t N);
void buf_line(Buf *b, int ind, const char *fmt, ...);  /* a code line indented by 4 * ind */

void cond_and(Buf *b, const char *term); /* append a condition to b, joined with && */
int is_ident_char(char c);              /* a letter, digit or '_' */
int has_word(const char *s, const char *w); /* s contains identifier w, not part of a longer one */

/* ---- emitter (emit.c) ----------------------------------------------------------------- */

/* C expression for the buffer of v, typed as a pointer to its element type. */
const char *ref(Emit *e, const Value *v);
/* v is a constant whose values the code may rely on: compiled into OUT.c. With
 * --weights-file its values are read at run time from a file that only has to fit the code,
 * so a check on them (an index's range) stays in the code. */
int value_in_code(const Emit *e, const Value *v);
/* C expression for node n's workspace (Node.ws_bytes), a float pointer into the arena. */
const char *workspace_ref(Emit *e, const Node *n);
/* Instantiate template TMPL (a file of templates/) with ${KEY} substitutions given as
 * NULL-terminated key, value pairs; ${FN} is the function's name. Identical instances share
 * one function. Returns the function name. */
const char *kernel(Emit *e, Node *n, const char *tmpl, ...);
const char *kernelv(Emit *e, Node *n, const char *tmpl, const char **kv);
const char *kernel_paths(Emit *e, Node *n, int64_t work, const char *tmpl, ...);
/* Template TMPL with substitutions as kernel() takes them, as text rather than a function: a
 * part of a kernel that an emitter repeats or chooses, given to kernel() as a key's value. */
const char *fragment(const char *tmpl, ...);
/* Append a statement to the body of NAME_run, e.g. a kernel call. */
void stmt(Emit *e, const char *fmt, ...);
/* A run-time check: if COND (C expression) is false, run returns the given status. */
void check(Emit *e, const char *cond, const char *why);
/* Element i of a constant as a C literal of its type (floats round-trip exactly). */
const char *cval(const Value *v, int64_t i);
int use_blas(Emit *e);                  /* --blas given */
void count_blas_call(Emit *e);          /* a product was given to CBLAS */
/* wrap.c: code lines of TEXT longer than MLBC_COMMENT_WIDTH broken between arguments */
void wrap_code_lines(Buf *text);
/* A run-time check of non-constant input S through template shape_check; COND reads s[i]. */
void emit_check(Emit *e, Node *n, const Value *s, const char *cond, const char *why);
const char *elem_lit(DType t, const void *p); /* one element (ONNX layout) as a C literal */


/* loops.c: loop nests over an output shape. Operand k walks its buffer with stride[k][axis]
 * (0 where it is broadcast); open/close bracket the body, idx[k] is operand k's index. */
#define MLBC_MAX_OPERANDS 8
typedef struct Loops {
    const char *open, *close, *indent;
    const char *idx[MLBC_MAX_OPERANDS];
    const char *rest;                   /* loop_nest_split: NULL, or the text that ends the
                                           innermost loop and opens one over its last trips,
                                           for the body again */
} Loops;
void bcast_strides(const Value *v, int rank, const int64_t *dim, int64_t *stride);
void dense_strides(int rank, const int64_t *dim, int64_t *stride);
Loops loop_nest(int rank, const int64_t *dim, int nops, int64_t (*stride)[MLBC_MAX_RANK]);
/* The same with SPLIT: an innermost loop of more than 16 trips, not a multiple of 16, is two
 * (rest): gcc -O2 vectorises only a loop that leaves no trips over, so one over 100 floats ran
 * 4 a step (SSE) where AVX-512 takes 16. */
Loops loop_nest_split(int rank, const int64_t *dim, int nops, int64_t (*stride)[MLBC_MAX_RANK],
                      int split);
/* The first trips of such a loop over N: a multiple of 16 if that leaves some over, else N */
int64_t whole_vectors(int64_t n);
/* Every counted loop of generated code (emitters' text and templates' ${KEY}s) opens with
 * loop_head: the header "for (DECL V = 0; V < N; V += STEP)" (DECL "long " declares V in it,
 * "" uses a V declared before; STEP 1 gives V++), which the caller follows with " {" or with
 * the body's one statement on the next lines, indented 4 more; loop_range, the same from FROM
 * to TO. A loop of one trip (0 < N <= STEP) is no loop: kernel() writes its body once, after
 * "V = 0;" ("const long V = 0;"; FROM for loop_range) if the body reads V, as a block where one
 * is needed; a body that may break or continue keeps its loop. */
const char *loop_head(const char *decl, const char *v, int64_t n, int64_t step);
const char *loop_range(const char *decl, const char *v, int64_t from, int64_t to, int64_t step);
/* TEXT with the one-trip loops loop_head and loop_range marked written as their bodies
 * (kernel() calls it). */
const char *unloop(const char *text);
/* Lines folding L lane accumulators ACC[0..L) into ACC[0] by halves (lane j takes lane j + w,
 * w = L/2, ..., 1; COMB has two %s: accumulator, term), over an int j declared before. */
void lane_fold(Buf *b, int ind, int L, const char *acc, const char *comb);
/* The loop adding N floats (a multiple of 8) from AT + k into "mlbc_f8 lanes" (lanes8.c). */
void sum_lanes8(Buf *b, int ind, const char *at, int64_t n);

typedef struct Options {
    const char *name;                   /* symbol prefix */
    int blas;
    int cxx_wrapper;
    const char *weights_file;           /* --weights-file PATH, or NULL: weights embedded */
    int verbose;                        /* -v */
} Options;

/* ---- weights (weights.c) ------------------------------------------------------------------
 * Every constant array the generated code reads is one member of struct NAME_weights (at a
 * 64-byte offset if it has 64 bytes or more). The bytes are written after the code, streamed:
 * as one string literal in OUT.c, or as the payload of the weights file (--weights-file). An
 * array holds the model's own data, or a function that packs it (a re-laid-out matrix) when
 * it is written, so mlbc never holds a second copy of the weights. */
typedef void (*PackFn)(const void *arg, void *dst);  /* writes an array's elements to dst */
typedef struct WeightArray {
    const char *name, *doc;             /* member name; comment (tensor, layout) */
    DType dt;                           /* element type */
    int64_t count, offset;              /* elements; bytes from the start of the struct */
    const void *data;                   /* the bytes, or NULL: pack(arg, dst) makes them */
    PackFn pack;
    const void *arg;
} WeightArray;
typedef struct WeightTable {
    WeightArray *a;
    int n, cap;
    int64_t end;                        /* where the last array ends */
    int64_t bytes;                      /* the struct's size, a multiple of 64 */
} WeightTable;
void weights_add(WeightTable *t, WeightArray a);       /* lays a out after the others */
/* struct NAME_weights and a check of its size, for the .c (embedded) or the .h (file). */
void weights_struct(Buf *b, const WeightTable *t, const char *N);
/* The generated code: OUT.h; OUT.c before and after the weights' bytes (which go between the
 * two, or to the weights file); the fingerprint of the code (what a weights file must match). */
typedef struct Output {
    Buf h, c_head, c_tail;
    WeightTable w;
    uint64_t fingerprint;
} Output;
uint64_t fnv1a(uint64_t h, const char *s);              /* the fingerprint's hash, over s */
/* Writes OUT.h, OUT.c and with o->weights_file the weights file, each to a temporary name
 * renamed at the end; on error none is left behind and mlbc dies. */
void write_output(const Output *out, const Options *o, const char *c_path, const char *h_path);
/* Its two writers that pack the weights (the fuzz targets write them to /dev/null): OUT.c
 * with the weights embedded unless o->weights_file, and the weights file. */
void write_c(FILE *f, const Output *out, const Options *o);
void write_weights_file(FILE *f, const Output *out, const Options *o);
double now_seconds(void);               /* a monotonic clock, for -v */
void progress(const Options *o, const char *what, double done, double total);

/* One model of the output file: a planned graph and, in a composite (several models in one
 * file, the one to run chosen by the argument model_selector as in LLVM's composite AOT
 * models), the string that selects it. */
typedef struct Member {
    Model *m;
    int64_t scratch;                    /* plan_memory's bytes */
    const char *path;                   /* the model file, for messages */
    const char *selector;               /* NULL for a single model */
} Member;
#define MLBC_UNKNOWN_SELECTOR 4         /* a composite's NAME_run: model_selector names none */

/* composite.c: the composite's arguments and results (every member's, which must agree by
 * name, element type and shape; model_selector added unless they have it): each member's
 * inputs and outputs are put in the first one's order and renumbered to match. */
Graph *composite_interface(Member *ms, int n, const char *name);
/* LLVM's model_selector for string S: {MD5 bytes 8..15, bytes 0..7}, each little-endian
 * (MD5Result::high(), low()), as ReleaseModeModelRunner and runtime/release.c set it. */
void selector_halves(const char *s, uint64_t h[2]);
void md5(const void *data, size_t len, unsigned char digest[16]);   /* runtime/md5.c */

/* emit.c: the C file and header of N planned models: one model (N = 1, no selector), or a
 * composite whose arguments and results are API's (composite_interface). */
void emit_models(const Member *ms, int n, Graph *api, const Options *o, Output *out,
                 const char *h_name);
/* A constant array the code reads (a re-laid-out weight): added to the weights unless an
 * array of the same key is already there; returns the C expression of its elements. The
 * array's name is the node's next instance name, as a kernel's would be. */
const char *weight_array(Emit *e, Node *n, const char *key, WeightArray a);

/* templates.c (generated): the template files built into the binary. */
const char *template_text(const char *name);

#endif
