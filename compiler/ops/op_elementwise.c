/* op_elementwise.c - elementwise operators with numpy broadcasting: arithmetic, math
 * functions, activations, comparisons, logic, bit shifts, Cast, Where, Clip and the
 * variadic Max/Min/Sum/Mean.
 *
 * Each op is one row of a table: how its output type follows from its inputs and a C
 * expression over the operands, which are loaded into locals a, b, c, ... in the
 * computation type (float for the 16-bit float types). "@" in an expression stands for the
 * libm suffix of the computation type ("f" for float, "" for double).
 */
#include <math.h>
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "mlbc.h"

enum {
    SAME,       /* output type = input 0 type, all inputs the same type */
    FIRST,      /* output type = input 0 type, other inputs any numeric type */
    TO_BOOL,    /* comparison: inputs the same type, output bool */
    PRED,       /* predicate on one input: output bool */
    CAST,       /* output type from the "to" attribute */
    CAST_LIKE,  /* output type = input 1 type; input 1 is not an operand */
    WHERE,      /* bool condition, then two values of one type */
};

/* Compile-time folding of an element (elem_fold); F_COPY: the value itself (Cast). */
enum {
    F_NONE, F_COPY, F_ADD, F_SUB, F_MUL, F_DIV, F_NEG, F_ABS, F_SQRT, F_FLOOR, F_CEIL, F_MAX,
    F_MIN, F_EQ, F_LT, F_LE, F_GT, F_GE, F_NOT, F_AND, F_OR, F_WHERE,
};

typedef const char *(*ExprFn)(Node *n, DType t);

typedef struct Elem {
    const char *op;
    int kind;
    int min_in, max_in;
    const char *expr;   /* NULL: use fn */
    ExprFn fn;
    int numeric_only;   /* 0: bool allowed too */
    int fold;           /* F_*: how elem_fold computes it */
} Elem;

static const char *e_abs(Node *n, DType t)
{
    return dtype_is_floatish(t) ? "fabs@(a)"
           : dtype_is_signed(t)                                       ? "a < 0 ? -a : a"
                                                                      : "a";
}

static const char *e_relu(Node *n, DType t) { return "a > 0 ? a : 0"; }

/* a < 0 ? alpha a : a. For 0 <= alpha <= 1 that is max(a, alpha a), and for alpha > 1
 * min(a, alpha a), exactly (rounding is monotonic; a NaN gives a NaN): gcc -O2 vectorises
 * those (it does not if-convert the conditional multiply). */
static const char *e_leaky(Node *n, DType t)
{
    double alpha = attr_float(n, "alpha", 0.01);
    const char *k = float_lit(alpha, t);
    if (alpha >= 0 && alpha <= 1)
        return strf("a > %s * a ? a : %s * a", k, k);
    if (alpha > 1 && isfinite(alpha))
        return strf("a < %s * a ? a : %s * a", k, k);
    return strf("a < 0 ? %s * a : a", k);
}

static const char *e_elu(Node *n, DType t)
{
    return strf("a < 0 ? %s * (exp@(a) - 1) : a", float_lit(attr_float(n, "alpha", 1.0), t));
}

static const char *e_selu(Node *n, DType t)
{
    const char *al = float_lit(attr_float(n, "alpha", 1.67326319217681884765625), t);
    const char *ga = float_lit(attr_float(n, "gamma", 1.05070102214813232421875), t);
    return strf("a > 0 ? %s * a : %s * %s", ga, ga,
                madd(t, al, "exp@(a)", strf("-(%s)", al)));
}

static const char *e_celu(Node *n, DType t)
{
    const char *al = float_lit(attr_float(n, "alpha", 1.0), t);
    return strf("fmax@(0, a) + fmin@(0, %s * (exp@(a / %s) - 1))", al, al);
}

static const char *e_hardsigmoid(Node *n, DType t)
{
    return strf("fmax@(0, fmin@(1, %s))", madd(t, float_lit(attr_float(n, "alpha", 0.2), t), "a",
                                                float_lit(attr_float(n, "beta", 0.5), t)));
}

static const char *e_thresholded(Node *n, DType t)
{
    return strf("a > %s ? a : 0", float_lit(attr_float(n, "alpha", 1.0), t));
}

static const char *e_shrink(Node *n, DType t)
{
    const char *l = float_lit(attr_float(n, "lambd", 0.5), t);
    const char *b = float_lit(attr_float(n, "bias", 0.0), t);
    return strf("a < -%s ? a + %s : a > %s ? a - %s : 0", l, b, l, b);
}

static const char *e_isinf(Node *n, DType t)
{
    int neg = (int)attr_int(n, "detect_negative", 1), pos = (int)attr_int(n, "detect_positive", 1);
    return strf("isinf(a) && ((a > 0 && %d) || (a < 0 && %d))", pos, neg);
}

static const char *e_div(Node *n, DType t)
{
    return dtype_is_int(t) ? "b != 0 ? a / b : 0" : "a / b";
}

static const char *e_mod(Node *n, DType t)
{
    if (attr_int(n, "fmod", 0))
        return dtype_is_int(t) ? "b != 0 ? a % b : 0" : "fmod@(a, b)";
    if (!dtype_is_int(t))
        node_die(n, "fmod=0 is only defined for integer types");
    /* Python semantics: the result takes the divisor's sign. */
    return dtype_is_signed(t) ? "b == 0 ? 0 : (a % b != 0 && ((a % b < 0) != (b < 0))) ? a % b + b : a % b"
                              : "b != 0 ? a % b : 0";
}

static const char *e_pow(Node *n, DType t)
{
    return calc_type(t) == DT_FLOAT ? "powf((float)a, (float)b)"
                                                                : "pow((double)a, (double)b)";
}

static const char *e_bitshift(Node *n, DType t)
{
    const char *d = attr_str(n, "direction", "");
    if (!strcmp(d, "LEFT"))
        return "b < 8 * sizeof a ? a << b : 0";
    if (!strcmp(d, "RIGHT"))
        return "b < 8 * sizeof a ? a >> b : 0";
    node_die(n, "direction must be LEFT or RIGHT, not '%s'", d);
}

/* Combine the variadic operands a, b, c, ... pairwise, left to right. PAIR has two %s. */
static const char *fold_ops(Node *n, const char *pair)
{
    const char *acc = "a";
    int k = 0;
    for (int i = 1; i < n->nin; i++)
        if (n->in[i]) {
            char o[2] = {(char)('a' + ++k), 0};
            acc = strf(pair, acc, o);
        }
    return acc;
}

/* NaN propagates as in numpy: a NaN on either side wins. */
static const char *e_max(Node *n, DType t)
{
    return dtype_is_int(t) ? fold_ops(n, "max_(%s, %s)") : fold_ops(n, "fmax_nan(%s, %s)");
}

static const char *e_min(Node *n, DType t)
{
    return dtype_is_int(t) ? fold_ops(n, "min_(%s, %s)") : fold_ops(n, "fmin_nan(%s, %s)");
}

static const char *e_sum(Node *n, DType t) { return fold_ops(n, "%s + %s"); }

static const char *e_mean(Node *n, DType t)
{
    return strf("(%s) / %d", e_sum(n, t), n->nin);
}

/* Clip: bounds are optional inputs (opset >= 11) or attributes (before). */
static const char *e_clip(Node *n, DType t)
{
    if (n->opset < 11) {
        const char *lo = float_lit(attr_float(n, "min", -INFINITY), t);
        const char *hi = float_lit(attr_float(n, "max", INFINITY), t);
        return strf("a < %s ? %s : a > %s ? %s : a", lo, lo, hi, hi);
    }
    int has_lo = input(n, 1) != NULL, has_hi = input(n, 2) != NULL;
    const char *lo = "b", *hi = has_lo ? "c" : "b";
    const char *x = has_lo ? strf("(a < %s ? %s : a)", lo, lo) : "a";
    return has_hi ? strf("%s > %s ? %s : %s", x, hi, hi, x) : x;
}

/* One row per op: name, typing, inputs (min, max), the C expression (or the function that
 * makes it for the node), numbers only (no bool), and how it folds at compile time (F_NONE:
 * it runs; folding is offered for the ops that appear in shape arithmetic). */
#define ELEMENTWISE_OPS(X) \
    X(Abs, SAME, 1, 1, NULL, e_abs, 1, F_ABS)                                         \
    X(Neg, SAME, 1, 1, "-a", NULL, 1, F_NEG)                                          \
    X(Sqrt, SAME, 1, 1, "sqrt@(a)", NULL, 1, F_SQRT)                                  \
    X(Exp, SAME, 1, 1, "exp@(a)", NULL, 1, F_NONE)                                    \
    X(Log, SAME, 1, 1, "log@(a)", NULL, 1, F_NONE)                                    \
    X(Reciprocal, SAME, 1, 1, "1 / a", NULL, 1, F_NONE)                               \
    X(Erf, SAME, 1, 1, "erf@(a)", NULL, 1, F_NONE)                                    \
    X(Sin, SAME, 1, 1, "sin@(a)", NULL, 1, F_NONE)                                    \
    X(Cos, SAME, 1, 1, "cos@(a)", NULL, 1, F_NONE)                                    \
    X(Tan, SAME, 1, 1, "tan@(a)", NULL, 1, F_NONE)                                    \
    X(Asin, SAME, 1, 1, "asin@(a)", NULL, 1, F_NONE)                                  \
    X(Acos, SAME, 1, 1, "acos@(a)", NULL, 1, F_NONE)                                  \
    X(Atan, SAME, 1, 1, "atan@(a)", NULL, 1, F_NONE)                                  \
    X(Sinh, SAME, 1, 1, "sinh@(a)", NULL, 1, F_NONE)                                  \
    X(Cosh, SAME, 1, 1, "cosh@(a)", NULL, 1, F_NONE)                                  \
    X(Asinh, SAME, 1, 1, "asinh@(a)", NULL, 1, F_NONE)                                \
    X(Acosh, SAME, 1, 1, "acosh@(a)", NULL, 1, F_NONE)                                \
    X(Atanh, SAME, 1, 1, "atanh@(a)", NULL, 1, F_NONE)                                \
    X(Ceil, SAME, 1, 1, "ceil@(a)", NULL, 1, F_CEIL)                                  \
    X(Floor, SAME, 1, 1, "floor@(a)", NULL, 1, F_FLOOR)                               \
    X(Round, SAME, 1, 1, "nearbyint@(a)", NULL, 1, F_NONE)                            \
    X(Sign, SAME, 1, 1, "(a > 0) - (a < 0)", NULL, 1, F_NONE)                         \
    X(Relu, SAME, 1, 1, NULL, e_relu, 1, F_NONE)                                      \
    X(Sigmoid, SAME, 1, 1, "1 / (1 + exp@(-a))", NULL, 1, F_NONE)                     \
    X(Tanh, SAME, 1, 1, "tanh@(a)", NULL, 1, F_NONE)                                  \
    X(Softplus, SAME, 1, 1, "a > 30 ? a : log1p@(exp@(a))", NULL, 1, F_NONE)          \
    X(Softsign, SAME, 1, 1, "a / (1 + fabs@(a))", NULL, 1, F_NONE)                    \
    X(LeakyRelu, SAME, 1, 1, NULL, e_leaky, 1, F_NONE)                                \
    X(Elu, SAME, 1, 1, NULL, e_elu, 1, F_NONE)                                        \
    X(Selu, SAME, 1, 1, NULL, e_selu, 1, F_NONE)                                      \
    X(Celu, SAME, 1, 1, NULL, e_celu, 1, F_NONE)                                      \
    X(HardSigmoid, SAME, 1, 1, NULL, e_hardsigmoid, 1, F_NONE)                        \
    X(HardSwish, SAME, 1, 1, "a * fmax@(0, fmin@(1, a / 6 + 0.5@))", NULL, 1, F_NONE) \
    X(ThresholdedRelu, SAME, 1, 1, NULL, e_thresholded, 1, F_NONE)                    \
    X(Shrink, SAME, 1, 1, NULL, e_shrink, 1, F_NONE)                                  \
    X(IsNaN, PRED, 1, 1, "a != a", NULL, 1, F_NONE)                                   \
    X(IsInf, PRED, 1, 1, NULL, e_isinf, 1, F_NONE)                                    \
    X(Not, SAME, 1, 1, "!a", NULL, 0, F_NOT)                                          \
    X(Add, SAME, 2, 2, "a + b", NULL, 1, F_ADD)                                       \
    X(Sub, SAME, 2, 2, "a - b", NULL, 1, F_SUB)                                       \
    X(Mul, SAME, 2, 2, "a * b", NULL, 1, F_MUL)                                       \
    X(Div, SAME, 2, 2, NULL, e_div, 1, F_DIV)                                         \
    X(Mod, SAME, 2, 2, NULL, e_mod, 1, F_NONE)                                        \
    X(Pow, FIRST, 2, 2, NULL, e_pow, 1, F_NONE)                                       \
    X(PRelu, SAME, 2, 2, "a < 0 ? b * a : a", NULL, 1, F_NONE)                        \
    X(BitShift, SAME, 2, 2, NULL, e_bitshift, 1, F_NONE)                              \
    X(Equal, TO_BOOL, 2, 2, "a == b", NULL, 0, F_EQ)                                  \
    X(Less, TO_BOOL, 2, 2, "a < b", NULL, 1, F_LT)                                    \
    X(LessOrEqual, TO_BOOL, 2, 2, "a <= b", NULL, 1, F_LE)                            \
    X(Greater, TO_BOOL, 2, 2, "a > b", NULL, 1, F_GT)                                 \
    X(GreaterOrEqual, TO_BOOL, 2, 2, "a >= b", NULL, 1, F_GE)                         \
    X(And, SAME, 2, 2, "a && b", NULL, 0, F_AND)                                      \
    X(Or, SAME, 2, 2, "a || b", NULL, 0, F_OR)                                        \
    X(Xor, SAME, 2, 2, "!a != !b", NULL, 0, F_NONE)                                   \
    X(Max, SAME, 1, 8, NULL, e_max, 1, F_MAX)                                         \
    X(Min, SAME, 1, 8, NULL, e_min, 1, F_MIN)                                         \
    X(Sum, SAME, 1, 8, NULL, e_sum, 1, F_NONE)                                        \
    X(Mean, SAME, 1, 8, NULL, e_mean, 1, F_NONE)                                      \
    X(Clip, SAME, 1, 3, NULL, e_clip, 1, F_NONE)                                      \
    X(Where, WHERE, 3, 3, "a ? b : c", NULL, 0, F_WHERE)                              \
    X(Cast, CAST, 1, 1, "a", NULL, 0, F_COPY)                                         \
    X(CastLike, CAST_LIKE, 2, 2, "a", NULL, 0, F_COPY)                               

#define ELEM_ROW(name, kind, lo, hi, expr, fn, num, fold) {#name, kind, lo, hi, expr, fn, num, fold},
static const Elem elems[] = {ELEMENTWISE_OPS(ELEM_ROW)};

extern const OpDef ops_elementwise[];

/* ops_elementwise (below) has a row for each of elems, in the same order: the node's row
 * there gives its Elem without a search by name. */
static const Elem *find_elem(const Node *n)
{
    uintptr_t at = (uintptr_t)n->def, base = (uintptr_t)ops_elementwise;
    if (at < base || at >= base + sizeof elems / sizeof elems[0] * sizeof(OpDef))
        die("internal: '%s' is not elementwise", n->op);
    return &elems[(at - base) / sizeof(OpDef)];
}

/* Inputs that are operands of the expression (CastLike's second input only gives a type). */
static int noperands(const Node *n, const Elem *el) { return el->kind == CAST_LIKE ? 1 : n->nin; }

static void check_operand_type(Node *n, const Elem *el, const Value *v)
{
    if (!dtype_size(v->dt) || v->dt == DT_STRING)
        node_die(n, "element type %s is not supported", dtype_name(v->dt));
    if (el->numeric_only && v->dt == DT_BOOL)
        node_die(n, "input '%s' is bool; this op needs numbers", v->name);
    int needs_float = el->expr && strchr(el->expr, '@');
    if (needs_float && !dtype_is_floatish(v->dt))
        node_die(n, "input '%s' has element type %s; this op needs a float type", v->name,
                 dtype_name(v->dt));
}

/* Cast's target: a TensorProto type number, or before opset 6 the type's name ("FLOAT"). */
static DType cast_to(Node *n)
{
    Onnx__AttributeProto *a = attr(n, "to");
    DType t = (DType)attr_int(n, "to", 0);
    if (a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) {
        char *name = (char *)attr_str(n, "to", "");
        for (char *c = name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        t = dtype_from_name(name);
        if (!t)
            node_die(n, "cannot cast to element type '%s'", attr_str(n, "to", ""));
    }
    if (t <= 0 || t >= DT_COUNT || !dtype_size(t))
        node_die(n, "cannot cast to element type %s", dtype_name(t));
    return t;
}

static void elem_infer(Node *n)
{
    const Elem *el = find_elem(n);
    if (n->nin < el->min_in || n->nin > el->max_in)
        node_die(n, "takes %d to %d inputs, got %d", el->min_in, el->max_in, n->nin);
    if (!n->in[0])
        node_die(n, "input 0 is required");
    int64_t dim[MLBC_MAX_RANK];
    int rank = 0;
    DType t = n->in[0]->dt;
    for (int i = 0; i < noperands(n, el); i++) {
        Value *v = n->in[i];
        if (!v)
            continue;
        check_operand_type(n, el, v);
        if (el->kind == SAME || el->kind == TO_BOOL)
            need_same_type(n, n->in[0], v);
        if (el->kind == WHERE && i == 0 && v->dt != DT_BOOL)
            node_die(n, "the condition must be bool, not %s", dtype_name(v->dt));
        if (el->kind == WHERE && i == 2)
            need_same_type(n, n->in[1], v);
        rank = broadcast(n, rank, dim, v->rank, v->dim, dim);
    }
    switch (el->kind) {
    case TO_BOOL: case PRED: t = DT_BOOL; break;
    case WHERE: t = n->in[1]->dt; break;
    case CAST_LIKE: t = n->in[1]->dt; break;
    case CAST:
        t = cast_to(n);
        break;
    default: break;
    }
    set_output(n, 0, t, rank, dim);
}

/* ---- emission ---- */

/* X a float array of Y's shape (Y float). */
static int dense_float(const Value *x, const Value *y)
{
    if (!x || x->dt != DT_FLOAT || y->dt != DT_FLOAT || x->rank != y->rank)
        return 0;
    for (int d = 0; d < x->rank; d++)
        if (x->dim[d] != y->dim[d])
            return 0;
    return 1;
}

/* Float Exp, Sigmoid, Tanh and Erf over a dense array of the output's shape: the vectorised
 * kernels of templates/vmath_*.c (the same bits on every CPU path and with every compiler);
 * NULL for any other op or operand, which the expression loop then computes. */
static const char *vector_fn(const Node *n)
{
    static const char *const fns[][2] = {
        {"Exp", "mlbc_vexp_f32"}, {"Sigmoid", "mlbc_vsigmoid_f32"},
        {"Tanh", "mlbc_vtanh_f32"}, {"Erf", "mlbc_verf_f32"},
    };
    if (n->nin != 1 || !dense_float(n->in[0], n->out[0]))
        return NULL;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(n->op, fns[i][0]))
            return fns[i][1];
    return NULL;
}

/* Pow by a constant 2 or 3 of a float type: products, not a libm call per element (which no
 * path vectorises). x*x rounds the exact square once; the cube is formed in double from the
 * exact square, then rounded to float; in double, a * a * a. NULL for other Pows, or under
 * --weights-file, where the exponent is read at run time. */
static const char *pow_by_products(Emit *e, Node *n, DType et)
{
    const Value *b = n->in[1];
    if (strcmp(n->op, "Pow") || !dtype_is_float(et) || numel(b) != 1 || !value_in_code(e, b))
        return NULL;
    double k = value_get_f(b, 0);
    if (k == 2)
        return "a * a";
    if (k == 3)
        return et == DT_FLOAT ? "(double)a * a * a" : "a * a * a";
    return NULL;
}

static void elem_emit(Emit *e, Node *n)
{
    const Elem *el = find_elem(n);
    Value *y = n->out[0];
    const char *vfn = vector_fn(n);
    if (vfn) {
        if (numel(y))
            stmt(e, "%s(%s, %s, %s);", vfn, lit(numel(y)), ref(e, n->in[0]), ref(e, y));
        return;
    }
    /* a float array divided by one float: mlbc_vdivs_f32 (templates/vmath_divs.c) */
    if (!strcmp(n->op, "Div") && dense_float(n->in[0], y) && n->in[1]->dt == DT_FLOAT &&
        numel(n->in[1]) == 1 && numel(y) >= MLBC_VDIVS_MIN) {
        stmt(e, "mlbc_vdivs_f32(%s, %s, (%s)[0], %s);", lit(numel(y)), ref(e, n->in[0]),
             ref(e, n->in[1]), ref(e, y));
        return;
    }
    DType et = calc_type(el->kind == WHERE ? n->in[1]->dt : n->in[0]->dt);
    const char *pow = pow_by_products(e, n, et);
    int nops = pow ? 1 : noperands(n, el);
    /* Operand 0 of the loop nest is the output; operands present in order follow. */
    int64_t st[MLBC_MAX_OPERANDS][MLBC_MAX_RANK];
    Value *ops[MLBC_MAX_OPERANDS];
    int k = 0;
    dense_strides(y->rank, y->dim, st[0]);
    for (int i = 0; i < nops; i++)
        if (n->in[i]) {
            ops[k] = n->in[i];
            bcast_strides(n->in[i], y->rank, y->dim, st[++k]);
        }
    Loops l = loop_nest_split(y->rank, y->dim, k + 1, st, 1);

    /* The expression's type (et): the first value operand's (Where: input 1). */
    const char *expr = pow ? pow : libm_suffix(el->expr ? el->expr : el->fn(n, n->in[0]->dt), et);
    Buf params = {0}, loads = {0};
    for (int i = 0; i < k; i++) {
        DType t = ops[i]->dt;
        buf_printf(&params, "const %s *restrict x%d, ", dtype_ctype(t), i);
        buf_printf(&loads, "%sconst %s %c = %s;\n", l.indent, dtype_ctype(calc_type(t)),
                   'a' + i, load_elem(t, strf("x%d[%s]", i, l.idx[i + 1])));
    }
    buf_printf(&params, "%s *restrict y", dtype_ctype(y->dt));
    const char *body = strf("%s%sy[%s] = %s;\n", loads.p, l.indent, l.idx[0],
                            store_elem(y->dt, expr));
    const char *fn = kernel_paths(e, n, numel(y), "elementwise",
        "DOC", strf("%s: %s -> %s%s", n->op, expr, dtype_name(y->dt), shape_str(y)),
        "PARAMS", params.p, "OPEN", l.open, "CLOSE", l.close, "BODY", body,
        "REST", l.rest ? strf("%s%s", l.rest, body) : "", NULL);
    Buf call = {0};
    for (int i = 0; i < k; i++)
        buf_printf(&call, "%s, ", ref(e, ops[i]));
    stmt(e, "%s(%s%s);", fn, call.p ? call.p : "", ref(e, y));
}

/* ---- folding (compile-time evaluation of shape arithmetic) ---- */

/* An element of an op folded at compile time, from its operands' elements: integers with
 * two's-complement wrap-around, floats in double; Max and Min over all of them, a NaN winning
 * as at run time (fmax_nan). */
static int64_t fold_int(int fold, const int64_t *a, int n)
{
    int64_t r = a[0];
    switch (fold) {
    case F_ADD: return (int64_t)((uint64_t)a[0] + (uint64_t)a[1]);
    case F_SUB: return (int64_t)((uint64_t)a[0] - (uint64_t)a[1]);
    case F_MUL: return (int64_t)((uint64_t)a[0] * (uint64_t)a[1]);
    case F_DIV: return a[1] && !(a[0] == INT64_MIN && a[1] == -1) ? a[0] / a[1] : 0;
    case F_NEG: return a[0] == INT64_MIN ? a[0] : -a[0];
    case F_ABS: return a[0] < 0 && a[0] != INT64_MIN ? -a[0] : a[0];
    case F_MAX: for (int k = 1; k < n; k++) r = a[k] > r ? a[k] : r; return r;
    case F_MIN: for (int k = 1; k < n; k++) r = a[k] < r ? a[k] : r; return r;
    case F_EQ: return a[0] == a[1];
    case F_LT: return a[0] < a[1];
    case F_LE: return a[0] <= a[1];
    case F_GT: return a[0] > a[1];
    case F_GE: return a[0] >= a[1];
    case F_NOT: return !a[0];
    case F_AND: return a[0] && a[1];
    case F_OR: return a[0] || a[1];
    case F_WHERE: return a[0] ? a[1] : a[2];
    default: return a[0];
    }
}

static double fold_float(int fold, const double *a, int n)
{
    double r = a[0];
    switch (fold) {
    case F_ADD: return a[0] + a[1];
    case F_SUB: return a[0] - a[1];
    case F_MUL: return a[0] * a[1];
    case F_DIV: return a[0] / a[1];
    case F_NEG: return -a[0];
    case F_ABS: return fabs(a[0]);
    case F_SQRT: return sqrt(a[0]);
    case F_FLOOR: return floor(a[0]);
    case F_CEIL: return ceil(a[0]);
    case F_MAX: for (int k = 1; k < n; k++) r = r != r || r > a[k] ? r : a[k]; return r;
    case F_MIN: for (int k = 1; k < n; k++) r = r != r || r < a[k] ? r : a[k]; return r;
    case F_EQ: return a[0] == a[1];
    case F_LT: return a[0] < a[1];
    case F_LE: return a[0] <= a[1];
    case F_GT: return a[0] > a[1];
    case F_GE: return a[0] >= a[1];
    case F_WHERE: return a[0] ? a[1] : a[2];
    default: return a[0];
    }
}

/* Index into v for output element i, following broadcasting. */
static int64_t bcast_index(const Value *v, const Value *y, int64_t i)
{
    int64_t st[MLBC_MAX_RANK], idx = 0;
    bcast_strides(v, y->rank, y->dim, st);
    for (int d = y->rank - 1; d >= 0; d--) {
        idx += (i % y->dim[d]) * st[d];
        i /= y->dim[d];
    }
    return idx;
}

static int elem_fold(Node *n)
{
    const Elem *el = find_elem(n);
    Value *y = n->out[0];
    int nops = noperands(n, el);
    int ints = 1;
    for (int i = 0; i < nops; i++) {
        if (!n->in[i] || dtype_is_half(n->in[i]->dt))
            return 0;
        ints &= !dtype_is_float(n->in[i]->dt);
    }
    if (nops > 3 || dtype_is_half(y->dt))
        return 0;
    for (int64_t i = 0; i < numel(y); i++) {
        int64_t ia[3] = {0};
        for (int k = 0; k < nops; k++)
            ia[k] = bcast_index(n->in[k], y, i);
        if (ints) {
            int64_t a[3] = {0};
            for (int k = 0; k < nops; k++)
                a[k] = value_get_i(n->in[k], ia[k]);
            value_set_i(y, i, fold_int(el->fold, a, nops));
        } else {
            double a[3] = {0};
            for (int k = 0; k < nops; k++)
                a[k] = value_get_f(n->in[k], ia[k]);
            value_set_f(y, i, fold_float(el->fold, a, nops));
        }
    }
    return 1;
}

#define OPDEF_ROW(name, kind, lo, hi, expr, fn, num, fold) \
    {#name, elem_infer, fold ? elem_fold : NULL, elem_emit, NULL, OP_ELEMENTWISE},
const OpDef ops_elementwise[] = {ELEMENTWISE_OPS(OPDEF_ROW) {0}};
