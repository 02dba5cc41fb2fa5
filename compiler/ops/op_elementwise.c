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

typedef const char *(*ExprFn)(Node *n, DType t);

typedef struct Elem {
    const char *op;
    int kind;
    int min_in, max_in;
    const char *expr;   /* NULL: use fn */
    ExprFn fn;
    int numeric_only;   /* 0: bool allowed too */
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

static const Elem elems[] = {
    {"Abs", SAME, 1, 1, NULL, e_abs, 1},
    {"Neg", SAME, 1, 1, "-a", NULL, 1},
    {"Sqrt", SAME, 1, 1, "sqrt@(a)", NULL, 1},
    {"Exp", SAME, 1, 1, "exp@(a)", NULL, 1},
    {"Log", SAME, 1, 1, "log@(a)", NULL, 1},
    {"Reciprocal", SAME, 1, 1, "1 / a", NULL, 1},
    {"Erf", SAME, 1, 1, "erf@(a)", NULL, 1},
    {"Sin", SAME, 1, 1, "sin@(a)", NULL, 1},
    {"Cos", SAME, 1, 1, "cos@(a)", NULL, 1},
    {"Tan", SAME, 1, 1, "tan@(a)", NULL, 1},
    {"Asin", SAME, 1, 1, "asin@(a)", NULL, 1},
    {"Acos", SAME, 1, 1, "acos@(a)", NULL, 1},
    {"Atan", SAME, 1, 1, "atan@(a)", NULL, 1},
    {"Sinh", SAME, 1, 1, "sinh@(a)", NULL, 1},
    {"Cosh", SAME, 1, 1, "cosh@(a)", NULL, 1},
    {"Asinh", SAME, 1, 1, "asinh@(a)", NULL, 1},
    {"Acosh", SAME, 1, 1, "acosh@(a)", NULL, 1},
    {"Atanh", SAME, 1, 1, "atanh@(a)", NULL, 1},
    {"Ceil", SAME, 1, 1, "ceil@(a)", NULL, 1},
    {"Floor", SAME, 1, 1, "floor@(a)", NULL, 1},
    {"Round", SAME, 1, 1, "nearbyint@(a)", NULL, 1},
    {"Sign", SAME, 1, 1, "(a > 0) - (a < 0)", NULL, 1},
    {"Relu", SAME, 1, 1, NULL, e_relu, 1},
    {"Sigmoid", SAME, 1, 1, "1 / (1 + exp@(-a))", NULL, 1},
    {"Tanh", SAME, 1, 1, "tanh@(a)", NULL, 1},
    {"Softplus", SAME, 1, 1, "a > 30 ? a : log1p@(exp@(a))", NULL, 1},
    {"Softsign", SAME, 1, 1, "a / (1 + fabs@(a))", NULL, 1},
    {"LeakyRelu", SAME, 1, 1, NULL, e_leaky, 1},
    {"Elu", SAME, 1, 1, NULL, e_elu, 1},
    {"Selu", SAME, 1, 1, NULL, e_selu, 1},
    {"Celu", SAME, 1, 1, NULL, e_celu, 1},
    {"HardSigmoid", SAME, 1, 1, NULL, e_hardsigmoid, 1},
    {"HardSwish", SAME, 1, 1, "a * fmax@(0, fmin@(1, a / 6 + 0.5@))", NULL, 1},
    {"ThresholdedRelu", SAME, 1, 1, NULL, e_thresholded, 1},
    {"Shrink", SAME, 1, 1, NULL, e_shrink, 1},
    {"IsNaN", PRED, 1, 1, "a != a", NULL, 1},
    {"IsInf", PRED, 1, 1, NULL, e_isinf, 1},
    {"Not", SAME, 1, 1, "!a", NULL, 0},
    {"Add", SAME, 2, 2, "a + b", NULL, 1},
    {"Sub", SAME, 2, 2, "a - b", NULL, 1},
    {"Mul", SAME, 2, 2, "a * b", NULL, 1},
    {"Div", SAME, 2, 2, NULL, e_div, 1},
    {"Mod", SAME, 2, 2, NULL, e_mod, 1},
    {"Pow", FIRST, 2, 2, NULL, e_pow, 1},
    {"PRelu", SAME, 2, 2, "a < 0 ? b * a : a", NULL, 1},
    {"BitShift", SAME, 2, 2, NULL, e_bitshift, 1},
    {"Equal", TO_BOOL, 2, 2, "a == b", NULL, 0},
    {"Less", TO_BOOL, 2, 2, "a < b", NULL, 1},
    {"LessOrEqual", TO_BOOL, 2, 2, "a <= b", NULL, 1},
    {"Greater", TO_BOOL, 2, 2, "a > b", NULL, 1},
    {"GreaterOrEqual", TO_BOOL, 2, 2, "a >= b", NULL, 1},
    {"And", SAME, 2, 2, "a && b", NULL, 0},
    {"Or", SAME, 2, 2, "a || b", NULL, 0},
    {"Xor", SAME, 2, 2, "!a != !b", NULL, 0},
    {"Max", SAME, 1, 8, NULL, e_max, 1},
    {"Min", SAME, 1, 8, NULL, e_min, 1},
    {"Sum", SAME, 1, 8, NULL, e_sum, 1},
    {"Mean", SAME, 1, 8, NULL, e_mean, 1},
    {"Clip", SAME, 1, 3, NULL, e_clip, 1},
    {"Where", WHERE, 3, 3, "a ? b : c", NULL, 0},
    {"Cast", CAST, 1, 1, "a", NULL, 0},
    {"CastLike", CAST_LIKE, 2, 2, "a", NULL, 0},
};

static const Elem *find_elem(const Node *n)
{
    for (size_t i = 0; i < sizeof elems / sizeof elems[0]; i++)
        if (!strcmp(elems[i].op, n->op))
            return &elems[i];
    die("internal: '%s' is not elementwise", n->op);
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
        t = (DType)attr_int(n, "to", 0);
        if (t <= 0 || t >= DT_COUNT || !dtype_size(t))
            node_die(n, "cannot cast to element type %s", dtype_name(t));
        break;
    default: break;
    }
    set_output(n, 0, t, rank, dim);
}

/* ---- emission ---- */

/* Float Exp, Sigmoid, Tanh and Erf over a dense array of the output's shape: the vectorised
 * kernels of templates/vmath_*.c (the same bits on every CPU path and with every compiler);
 * NULL for any other op or operand, which the expression loop then computes. */
static const char *vector_fn(const Node *n)
{
    static const char *const fns[][2] = {
        {"Exp", "mlbc_vexp_f32"}, {"Sigmoid", "mlbc_vsigmoid_f32"},
        {"Tanh", "mlbc_vtanh_f32"}, {"Erf", "mlbc_verf_f32"},
    };
    const Value *x = n->in[0], *y = n->out[0];
    if (n->nin != 1 || !x || x->dt != DT_FLOAT || y->dt != DT_FLOAT || x->rank != y->rank ||
        numel(x) != numel(y))
        return NULL;
    for (int d = 0; d < x->rank; d++)
        if (x->dim[d] != y->dim[d])
            return NULL;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(n->op, fns[i][0]))
            return fns[i][1];
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
    int nops = noperands(n, el);
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
    Loops l = loop_nest(y->rank, y->dim, k + 1, st);

    /* The expression's type: the first value operand's (Where: input 1). */
    DType et = calc_type(el->kind == WHERE ? n->in[1]->dt : n->in[0]->dt);
    const char *expr = libm_suffix(el->expr ? el->expr : el->fn(n, n->in[0]->dt), et);
    Buf params = {0}, loads = {0};
    for (int i = 0; i < k; i++) {
        DType t = ops[i]->dt;
        buf_printf(&params, "const %s *restrict x%d, ", dtype_ctype(t), i);
        buf_printf(&loads, "%sconst %s %c = %s;\n", l.indent, dtype_ctype(calc_type(t)),
                   'a' + i, load_elem(t, strf("x%d[%s]", i, l.idx[i + 1])));
    }
    buf_printf(&params, "%s *restrict y", dtype_ctype(y->dt));
    const char *fn = kernel(e, n, "elementwise",
        "DOC", strf("%s: %s -> %s%s", n->op, expr, dtype_name(y->dt), shape_str(y)),
        "PARAMS", params.p, "OPEN", l.open, "CLOSE", l.close, "LOADS", loads.p,
        "INDENT", l.indent, "IY", l.idx[0], "STORE", store_elem(y->dt, expr), NULL);
    Buf call = {0};
    for (int i = 0; i < k; i++)
        buf_printf(&call, "%s, ", ref(e, ops[i]));
    stmt(e, "%s(%s%s);", fn, call.p ? call.p : "", ref(e, y));
}

/* ---- folding (compile-time evaluation of shape arithmetic) ---- */

static int64_t fold_int(const char *op, int64_t a, int64_t b, int64_t c)
{
    if (!strcmp(op, "Add")) return (int64_t)((uint64_t)a + (uint64_t)b);
    if (!strcmp(op, "Sub")) return (int64_t)((uint64_t)a - (uint64_t)b);
    if (!strcmp(op, "Mul")) return (int64_t)((uint64_t)a * (uint64_t)b);
    if (!strcmp(op, "Div")) return b && !(a == INT64_MIN && b == -1) ? a / b : 0;
    if (!strcmp(op, "Neg")) return a == INT64_MIN ? a : -a;
    if (!strcmp(op, "Abs")) return a < 0 && a != INT64_MIN ? -a : a;
    if (!strcmp(op, "Max")) return a > b ? a : b;
    if (!strcmp(op, "Min")) return a < b ? a : b;
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "Less")) return a < b;
    if (!strcmp(op, "LessOrEqual")) return a <= b;
    if (!strcmp(op, "Greater")) return a > b;
    if (!strcmp(op, "GreaterOrEqual")) return a >= b;
    if (!strcmp(op, "Not")) return !a;
    if (!strcmp(op, "And")) return a && b;
    if (!strcmp(op, "Or")) return a || b;
    if (!strcmp(op, "Where")) return a ? b : c;
    return a; /* Cast, CastLike */
}

static double fold_float(const char *op, double a, double b, double c)
{
    if (!strcmp(op, "Add")) return a + b;
    if (!strcmp(op, "Sub")) return a - b;
    if (!strcmp(op, "Mul")) return a * b;
    if (!strcmp(op, "Div")) return a / b;
    if (!strcmp(op, "Neg")) return -a;
    if (!strcmp(op, "Abs")) return fabs(a);
    if (!strcmp(op, "Sqrt")) return sqrt(a);
    if (!strcmp(op, "Floor")) return floor(a);
    if (!strcmp(op, "Ceil")) return ceil(a);
    if (!strcmp(op, "Max")) return a > b ? a : b;
    if (!strcmp(op, "Min")) return a < b ? a : b;
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "Less")) return a < b;
    if (!strcmp(op, "LessOrEqual")) return a <= b;
    if (!strcmp(op, "Greater")) return a > b;
    if (!strcmp(op, "GreaterOrEqual")) return a >= b;
    if (!strcmp(op, "Where")) return a ? b : c;
    return a; /* Cast, CastLike */
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
            value_set_i(y, i, fold_int(n->op, a[0], a[1], a[2]));
        } else {
            double a[3] = {0};
            for (int k = 0; k < nops; k++)
                a[k] = value_get_f(n->in[k], ia[k]);
            value_set_f(y, i, fold_float(n->op, a[0], a[1], a[2]));
        }
    }
    return 1;
}

/* Folding is offered for the ops that appear in shape arithmetic; anything else runs. */
#define F(name) {name, elem_infer, elem_fold, elem_emit, NULL, OP_ELEMENTWISE}
#define R(name) {name, elem_infer, NULL, elem_emit, NULL, OP_ELEMENTWISE}

const OpDef ops_elementwise[] = {
    F("Abs"), F("Neg"), F("Sqrt"), R("Exp"), R("Log"), R("Reciprocal"), R("Erf"), R("Sin"),
    R("Cos"), R("Tan"), R("Asin"), R("Acos"), R("Atan"), R("Sinh"), R("Cosh"), R("Asinh"),
    R("Acosh"), R("Atanh"), F("Ceil"), F("Floor"), R("Round"), R("Sign"), R("Relu"),
    R("Sigmoid"), R("Tanh"), R("Softplus"), R("Softsign"), R("LeakyRelu"), R("Elu"),
    R("Selu"), R("Celu"), R("HardSigmoid"), R("HardSwish"), R("ThresholdedRelu"),
    R("Shrink"), R("IsNaN"), R("IsInf"), R("Mod"), R("Pow"), R("PRelu"), R("BitShift"),
    R("Xor"), R("Sum"), R("Mean"), R("Clip"),
    F("Add"), F("Sub"), F("Mul"), F("Div"), F("Not"), F("Equal"), F("Less"),
    F("LessOrEqual"), F("Greater"), F("GreaterOrEqual"), F("And"), F("Or"), F("Max"),
    F("Min"), F("Where"), F("Cast"), F("CastLike"),
    {0},
};
