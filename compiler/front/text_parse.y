/* text_parse.y - the ONNX textual syntax -> Onnx__ModelProto.
 *
 * Accepts what onnx 1.12's onnx.parser.parse_model accepts and fills the same proto fields
 * (so --emit-onnx of a text model equals parse_model's result), plus later forms: quoted
 * names ("x.1"), node labels ([label] Y = Relu(X)), opaque(...) types, composite value
 * types, type-proto attributes, inf/nan, external-data initializers. The few places where
 * onnx 1.12 silently builds a broken proto are errors or fixed here; the comments at the
 * helpers say which.
 *
 * Shape of a model (comments start with '#'):
 *   <ir_version: 8, opset_import: ["" : 17]>
 *   name (float[N,4] X, float[4] w = {1, 2, 3, 4}) => (float[N] Y) <float[N] T, int64 k = {2}>
 *   { T = MatMul (X, w)   Y = domain.Op <axis = 1> (T, , k) }
 *   <domain: "d", opset_import: ["" : 17]> Fn <attr> (a) => (b) { b = Neg (a) }
 * Type grammar as in onnx 1.12: "float" is a scalar (rank 0), "float[]" has unknown rank.
 */
%code requires {
#include "mlbc.h"

typedef struct Pos { int line, col; } Pos;
typedef struct Str { char *p; size_t len; } Str;     /* may hold NUL bytes */
typedef struct Vec { void **p; size_t n, cap; } Vec;

/* A literal in a tensor's value list, converted once the element type is known. */
typedef struct Lit { int tok; char *text; Str str; Pos pos; } Lit;
typedef struct Lits { Lit *p; size_t n, cap; } Lits;

/* "key: value" of a model or function header, or a "k" : v entry of a list. */
typedef struct Kv { char *key; Str skey; Pos pos, vpos; int tok; char *num; Str str; Vec *list; } Kv;

/* Value infos and initializers of an input list or of the "<...>" list after the outputs. */
typedef struct Decls { Vec *vis, *inits; } Decls;
typedef struct Decl { Onnx__ValueInfoProto *vi; Onnx__TensorProto *init; } Decl;
typedef struct InitValue { Lits *lits; Vec *external; } InitValue;
typedef struct Tail { char *name; Lits *lits; } Tail;

/* An attribute value before the attribute's declared type is applied. kind is an
 * AttributeType for single values, or AV_REF / AV_LIST. */
typedef struct AVal {
    int kind;
    Pos pos;
    char *num;
    Str str;
    void *msg;      /* tensor, graph, type proto or sparse tensor */
    char *ref;
    Vec *list;      /* of AVal */
} AVal;
}

%code provides {
void text_lex_begin(const char *src, size_t len);
}

%code {
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int yylex(void);
void yyerror(const char *msg);
const char *text_attr_type_name(int type);   /* text_print.c: one spelling for both sides */

#define P(l) ((Pos){(l).first_line, (l).first_column})
#define NEW(T, INIT) ((T *)new_msg(sizeof(T), &(T)INIT))
/* Hand a Vec to a repeated field of a protobuf-c message. */
#define SET_REPEATED(msg, field, vec) ((msg)->n_##field = (vec)->n, (msg)->field = (void *)(vec)->p)

enum { AV_REF = 100, AV_LIST };

static Onnx__ModelProto *result;

static void *new_msg(size_t size, const void *init);
static Vec *vec_new(void);
static Vec *vec_push(Vec *v, void *x);
static Lits *lits_push(Lits *l, int tok, char *text, Str str, Pos pos);
static char *str_name(Str s, Pos p);
static Kv *kv_new(char *key, Pos pos, int tok, Pos vpos);
static Kv *pair_new(Str key, Pos pos, int tok, Pos vpos);
static Decls *decls_new(void);
static Decls *decls_add(Decls *d, Decl x, int is_input);
static Onnx__TensorProto *make_init(Onnx__ValueInfoProto *vi, InitValue *v, Pos p);
static Onnx__ValueInfoProto *value_info(char *name, Onnx__TypeProto *type);
static Onnx__TypeProto *tensor_type(char *elem, Pos p, Onnx__TensorShapeProto *shape);
static Onnx__TensorShapeProto *scalar_shape(void);
static Onnx__TensorShapeProto *shape_add(Onnx__TensorShapeProto *s, Onnx__TensorShapeProto__Dimension *d);
static Onnx__TensorShapeProto__Dimension *dim(int value_case, char *param, char *value, Pos p);
static Onnx__TypeProto *seq_type(Onnx__TypeProto *elem);
static Onnx__TypeProto *map_type(char *key, Pos p, Onnx__TypeProto *value);
static Onnx__TypeProto *optional_type(Onnx__TypeProto *elem);
static Onnx__TypeProto *sparse_type(Onnx__TypeProto *tensor);
static Onnx__TypeProto *opaque_type(const char *domain, const char *name);
static Onnx__GraphProto *make_graph(Decls *in, Vec *out, Decls *vis, Vec *nodes);
static Onnx__NodeProto *make_node(char *label, Vec *outs, Vec *op, Vec *attrs, Vec *ins);
static void count_node(int line, int col);
static Onnx__AttributeProto *make_attr(char *name, char *type, Pos tpos, AVal *v);
static AVal *aval(int kind, Pos pos);
static AVal *aval_ident(char *id, Pos p);
static Onnx__TensorProto *make_const(char *elem, Pos p, Onnx__TensorShapeProto *s, Tail *t);
static Onnx__SparseTensorProto *make_sparse(Onnx__TensorProto *values,
                                            Onnx__TensorProto *indices, Onnx__TensorShapeProto *dims, Pos p);
static Onnx__FunctionProto *make_function(char *name, Vec *attrs, Vec *ins, Vec *outs);
static void function_header(Onnx__FunctionProto *f, Vec *kvs);
static Onnx__ModelProto *make_model(Vec *kvs, Onnx__GraphProto *g, Vec *functions);
}

%define api.value.type union
%define parse.error custom
%define parse.lac full
%locations
%expect 0

%token END 0 "end of input"
%token <char *> IDENT "name"
%token <Str> STRING "string"
%token <char *> INT "integer"
%token <char *> FLOAT "number"
%token ARROW "'=>'"
%token KW_SEQ "'seq'"
%token KW_MAP "'map'"
%token KW_OPTIONAL "'optional'"
%token KW_SPARSE "'sparse_tensor'"
%token KW_OPAQUE "'opaque'"

%type <Vec *> header kvs pairs functions outputs vi_list nodes node_seq ids op attrs
%type <Vec *> attr_list list_items fattrs fparams
%type <Kv *> kv pair
%type <Onnx__GraphProto *> graph graph_body
%type <Decls *> inputs input_list value_infos decl_list
%type <Decl> decl
%type <InitValue> init_value
%type <Lits *> lits lits_opt
%type <Onnx__ValueInfoProto *> vinfo
%type <Onnx__TypeProto *> type tensor_type composite_type
%type <Onnx__TensorShapeProto *> dims
%type <Onnx__TensorShapeProto__Dimension *> dim
%type <char *> name id_opt label kw op_part graph_name fname dotted dotted_ids
%type <Onnx__NodeProto *> node
%type <Onnx__AttributeProto *> attr
%type <AVal *> avalue attr_value
%type <Onnx__TensorProto *> tensor_const
%type <Tail> tensor_tail
%type <Onnx__FunctionProto *> function fsig

%%

model:
    header graph functions              { result = make_model($1, $2, $3); }
    ;

/* ---- headers: <key: value, ...> ---- */

header:
    %empty                              { $$ = vec_new(); }
  | '<' kvs '>'                         { $$ = $2; }
    ;
kvs:
    kv                                  { $$ = vec_push(vec_new(), $1); }
  | kvs ',' kv                          { $$ = vec_push($1, $3); }
    ;
kv:
    IDENT ':' INT                       { $$ = kv_new($1, P(@1), INT, P(@3)); $$->num = $3; }
  | IDENT ':' STRING                    { $$ = kv_new($1, P(@1), STRING, P(@3)); $$->str = $3; }
  | IDENT ':' '[' ']'                   { $$ = kv_new($1, P(@1), '[', P(@3)); $$->list = vec_new(); }
  | IDENT ':' '[' pairs ']'             { $$ = kv_new($1, P(@1), '[', P(@3)); $$->list = $4; }
    ;
pairs:
    pair                                { $$ = vec_push(vec_new(), $1); }
  | pairs ',' pair                      { $$ = vec_push($1, $3); }
    ;
pair:
    STRING ':' INT                      { $$ = pair_new($1, P(@1), INT, P(@3)); $$->num = $3; }
  | STRING ':' STRING                   { $$ = pair_new($1, P(@1), STRING, P(@3)); $$->str = $3; }
    ;

/* ---- graphs ---- */

graph:
    graph_body                          { $$ = $1; }
  | graph_name graph_body               { $$ = $2; $$->name = $1; }
    ;
graph_name:
    name
  | kw
    ;
graph_body:
    inputs ARROW outputs value_infos nodes
                                        { $$ = make_graph($1, $3, $4, $5); }
    ;
inputs:
    %empty                              { $$ = decls_new(); }
  | '(' ')'                             { $$ = decls_new(); }
  | '(' input_list ')'                  { $$ = $2; }
    ;
input_list:
    decl                                { $$ = decls_add(decls_new(), $1, 1); }
  | input_list ',' decl                 { $$ = decls_add($1, $3, 1); }
    ;
outputs:
    '(' ')'                             { $$ = vec_new(); }
  | '(' vi_list ')'                     { $$ = $2; }
    ;
vi_list:
    vinfo                               { $$ = vec_push(vec_new(), $1); }
  | vi_list ',' vinfo                   { $$ = vec_push($1, $3); }
    ;
value_infos:
    %empty                              { $$ = decls_new(); }
  | '<' '>'                             { $$ = decls_new(); }
  | '<' decl_list '>'                   { $$ = $2; }
    ;
decl_list:
    decl                                { $$ = decls_add(decls_new(), $1, 0); }
  | decl_list ',' decl                  { $$ = decls_add($1, $3, 0); }
    ;
decl:
    vinfo                               { $$ = (Decl){$1, NULL}; }
  | vinfo '=' init_value                { $$ = (Decl){$1, make_init($1, &$3, P(@1))}; }
    ;
init_value:
    '{' lits_opt '}'                    { $$ = (InitValue){$2, NULL}; }
  | '[' pairs ']'                       { $$ = (InitValue){NULL, $2}; }
    ;
lits_opt:
    %empty                              { $$ = xalloc(sizeof(Lits)); }
  | lits
    ;
lits:
    INT                                 { $$ = lits_push(NULL, INT, $1, (Str){0}, P(@1)); }
  | FLOAT                               { $$ = lits_push(NULL, FLOAT, $1, (Str){0}, P(@1)); }
  | IDENT                               { $$ = lits_push(NULL, IDENT, $1, (Str){0}, P(@1)); }
  | STRING                              { $$ = lits_push(NULL, STRING, NULL, $1, P(@1)); }
  | lits ',' INT                        { $$ = lits_push($1, INT, $3, (Str){0}, P(@3)); }
  | lits ',' FLOAT                      { $$ = lits_push($1, FLOAT, $3, (Str){0}, P(@3)); }
  | lits ',' IDENT                      { $$ = lits_push($1, IDENT, $3, (Str){0}, P(@3)); }
  | lits ',' STRING                     { $$ = lits_push($1, STRING, NULL, $3, P(@3)); }
    ;

/* ---- types ---- */

vinfo:
    type name                           { $$ = value_info($2, $1); }
  | name                                { $$ = value_info($1, NULL); }
    ;
type:
    tensor_type
  | composite_type
    ;
tensor_type:
    IDENT                               { $$ = tensor_type($1, P(@1), scalar_shape()); }
  | IDENT '[' ']'                       { $$ = tensor_type($1, P(@1), NULL); }
  | IDENT '[' dims ']'                  { $$ = tensor_type($1, P(@1), $3); }
    ;
composite_type:
    KW_SEQ '(' type ')'                 { $$ = seq_type($3); }
  | KW_MAP '(' IDENT ',' type ')'       { $$ = map_type($3, P(@3), $5); }
  | KW_OPTIONAL '(' type ')'            { $$ = optional_type($3); }
  | KW_SPARSE '(' tensor_type ')'       { $$ = sparse_type($3); }
  | KW_OPAQUE '(' ')'                   { $$ = opaque_type(NULL, NULL); }
  | KW_OPAQUE '(' dotted ')'            { $$ = opaque_type(NULL, $3); }
  | KW_OPAQUE '(' dotted ',' dotted ')' { $$ = opaque_type($3, $5); }
    ;
dotted:
    STRING                              { $$ = str_name($1, P(@1)); }
  | dotted_ids
    ;
dotted_ids:
    IDENT
  | dotted_ids '.' IDENT                { $$ = strf("%s.%s", $1, $3); }
    ;
dims:
    dim                                 { $$ = shape_add(NULL, $1); }
  | dims ',' dim                        { $$ = shape_add($1, $3); }
    ;
dim:
    INT                                 { $$ = dim(ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE, NULL, $1, P(@1)); }
  | name                                { $$ = dim(ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM, $1, NULL, P(@1)); }
  | '?'                                 { $$ = dim(ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET, NULL, NULL, P(@1)); }
    ;

/* ---- nodes ---- */

nodes:
    '{' node_seq '}'                    { $$ = $2; }
    ;
node_seq:
    %empty                              { $$ = vec_new(); }
  | node_seq node                       { $$ = vec_push($1, $2); count_node(@2.first_line, @2.first_column); }
    ;
node:
    label ids '=' op attrs '(' ids ')'  { $$ = make_node($1, $2, $4, $5, $7); }
  | label ids '=' op '(' ids ')'        { $$ = make_node($1, $2, $4, NULL, $6); }
  | label ids '=' op '(' ids ')' attrs  { $$ = make_node($1, $2, $4, $8, $6); }
    ;
label:
    %empty                              { $$ = NULL; }
  | '[' ']'                             { $$ = xstrdup(""); }
  | '[' name ']'                        { $$ = $2; }
    ;
/* Names with empty entries: "a, , b". NULL marks an empty entry (see make_node). */
ids:
    id_opt                              { $$ = vec_push(vec_new(), $1); }
  | ids ',' id_opt                      { $$ = vec_push($1, $3); }
    ;
id_opt:
    %empty                              { $$ = NULL; }
  | name
    ;
op:
    op_part                             { $$ = vec_push(vec_new(), $1); }
  | op '.' op_part                      { $$ = vec_push($1, $3); }
    ;
op_part:
    name
  | kw
    ;

/* ---- attributes ---- */

attrs:
    '<' attr_list '>'                   { $$ = $2; }
    ;
attr_list:
    attr                                { $$ = vec_push(vec_new(), $1); }
  | attr_list ',' attr                  { $$ = vec_push($1, $3); }
    ;
attr:
    name '=' avalue                     { $$ = make_attr($1, NULL, P(@1), $3); }
  | name ':' IDENT '=' avalue           { $$ = make_attr($1, $3, P(@3), $5); }
    ;
avalue:
    attr_value
  | '[' ']'                             { $$ = aval(AV_LIST, P(@1)); $$->list = vec_new(); }
  | '[' list_items ']'                  { $$ = aval(AV_LIST, P(@1)); $$->list = $2; }
    ;
list_items:
    attr_value                          { $$ = vec_push(vec_new(), $1); }
  | list_items ',' attr_value           { $$ = vec_push($1, $3); }
    ;
attr_value:
    INT                                 { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, P(@1)); $$->num = $1; }
  | FLOAT                               { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, P(@1)); $$->num = $1; }
  | STRING                              { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, P(@1)); $$->str = $1; }
  | '@' name                            { $$ = aval(AV_REF, P(@1)); $$->ref = $2; }
  | IDENT                               { $$ = aval_ident($1, P(@1)); }
  | IDENT '[' ']'                       { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO, P(@1));
                                          $$->msg = tensor_type($1, P(@1), NULL); }
  | IDENT '[' dims ']'                  { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO, P(@1));
                                          $$->msg = tensor_type($1, P(@1), $3); }
  | composite_type                      { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO, P(@1)); $$->msg = $1; }
  | tensor_const                        { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR, P(@1)); $$->msg = $1; }
  | IDENT graph_body                    { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH, P(@1));
                                          $2->name = $1; $$->msg = $2; }
  | STRING graph_body                   { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH, P(@1));
                                          $2->name = str_name($1, P(@1)); $$->msg = $2; }
  | '(' tensor_const ',' tensor_const ',' '[' ']' ')'
                                        { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR, P(@1));
                                          $$->msg = make_sparse($2, $4, NULL, P(@1)); }
  | '(' tensor_const ',' tensor_const ',' '[' dims ']' ')'
                                        { $$ = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR, P(@1));
                                          $$->msg = make_sparse($2, $4, $7, P(@7)); }
    ;
/* A tensor constant: type, optional name, optional '=', values. */
tensor_const:
    IDENT tensor_tail                   { $$ = make_const($1, P(@1), scalar_shape(), &$2); }
  | IDENT '[' dims ']' tensor_tail      { $$ = make_const($1, P(@1), $3, &$5); }
    ;
tensor_tail:
    '{' lits_opt '}'                    { $$ = (Tail){NULL, $2}; }
  | '=' '{' lits_opt '}'                { $$ = (Tail){NULL, $3}; }
  | name '{' lits_opt '}'               { $$ = (Tail){$1, $3}; }
  | name '=' '{' lits_opt '}'           { $$ = (Tail){$1, $4}; }
    ;

/* ---- functions ---- */

functions:
    %empty                              { $$ = vec_new(); }
  | functions function                  { $$ = vec_push($1, $2); }
    ;
function:
    header fsig nodes                   { $$ = $2; function_header($$, $1); SET_REPEATED($$, node, $3); }
    ;
fsig:
    fname fattrs fparams ARROW fparams  { $$ = make_function($1, $2, $3, $5); }
  | fparams ARROW fparams               { $$ = make_function(xstrdup(""), NULL, $1, $3); }
    ;
fname:
    name
  | kw
    ;
fattrs:
    %empty                              { $$ = NULL; }
  | '<' ids '>'                         { $$ = $2; }
    ;
fparams:
    %empty                              { $$ = NULL; }
  | '(' ids ')'                         { $$ = $2; }
    ;

/* ---- names ---- */

name:
    IDENT
  | STRING                              { $$ = str_name($1, P(@1)); }
    ;
/* A type keyword standing where a name may stand right before '(' (op, graph, function). */
kw:
    KW_SEQ                              { $$ = xstrdup("seq"); }
  | KW_MAP                              { $$ = xstrdup("map"); }
  | KW_OPTIONAL                         { $$ = xstrdup("optional"); }
  | KW_SPARSE                           { $$ = xstrdup("sparse_tensor"); }
  | KW_OPAQUE                           { $$ = xstrdup("opaque"); }
    ;

%%

/* ---- errors ---- */

static _Noreturn void die_pos(Pos p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void die_pos(Pos p, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *msg = xalloc((size_t)n + 1);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    die_at(p.line, p.col, "%s", msg);
}

/* A name for messages: quoted, cut after 40 bytes (names can be arbitrarily long), and with
 * bytes outside printable ASCII as \xNN, so that messages stay plain text. */
static const char *shown(const char *s)
{
    Buf b = {0};
    buf_puts(&b, "'");
    size_t i;
    for (i = 0; s[i] && i < 40; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= ' ' && c < 127)
            buf_put(&b, &s[i], 1);
        else
            buf_printf(&b, "\\x%02x", c);
    }
    buf_puts(&b, s[i] ? "...'" : "'");
    return b.p;
}

/* What the parser stopped at, for "found ..." (yylval still holds the lookahead). */
static const char *found(yysymbol_kind_t tok)
{
    switch (tok) {
    case YYSYMBOL_IDENT: return strf("name %s", shown(yylval.IDENT));
    case YYSYMBOL_INT: return strf("integer %s", shown(yylval.INT));
    case YYSYMBOL_FLOAT: return strf("number %s", shown(yylval.FLOAT));
    default: return yysymbol_name(tok);
    }
}

static int yyreport_syntax_error(const yypcontext_t *ctx)
{
    yysymbol_kind_t expected[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
    Buf b = {0};
    buf_puts(&b, "expected ");
    for (int i = 0; i < n; i++)
        buf_printf(&b, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                   yysymbol_name(expected[i]));
    if (n <= 0)
        buf_puts(&b, "something else");
    const YYLTYPE *l = yypcontext_location(ctx);
    die_at(l->first_line, l->first_column, "%s, found %s", b.p, found(yypcontext_token(ctx)));
}

/* Only reached for parser stack exhaustion (nesting thousands of levels deep). */
void yyerror(const char *msg)
{
    die_at(yylloc.first_line, yylloc.first_column, "%s (the model is nested too deeply)", msg);
}

/* ---- containers ---- */

static void *new_msg(size_t size, const void *init)
{
    void *p = xalloc(size);
    memcpy(p, init, size);
    return p;
}

static void *grow(void *p, size_t *cap, size_t elem)
{
    size_t old = *cap;
    *cap = old ? 2 * old : 8;
    return xrealloc(p, old * elem, *cap * elem);
}

static Vec *vec_new(void) { return xalloc(sizeof(Vec)); }

static Vec *vec_push(Vec *v, void *x)
{
    if (v->n == v->cap)
        v->p = grow(v->p, &v->cap, sizeof *v->p);
    v->p[v->n++] = x;
    return v;
}

static Lits *lits_push(Lits *l, int tok, char *text, Str str, Pos pos)
{
    if (!l)
        l = xalloc(sizeof *l);
    if (l->n == l->cap)
        l->p = grow(l->p, &l->cap, sizeof *l->p);
    l->p[l->n++] = (Lit){tok, text, str, pos};
    return l;
}

/* A quoted name or header string as a C string: protobuf-c strings end at NUL. */
static char *str_name(Str s, Pos p)
{
    if (memchr(s.p, 0, s.len))
        die_pos(p, "expected a name without NUL bytes");
    return xstrndup(s.p, s.len);
}

static ProtobufCBinaryData bytes(Str s) { return (ProtobufCBinaryData){s.len, (uint8_t *)s.p}; }

/* ---- literals ---- */

static int64_t to_i64(const char *text, Pos p)
{
    errno = 0;
    long long v = strtoll(text, NULL, 10);
    if (errno == ERANGE)
        die_pos(p, "expected a 64-bit integer, found %s", shown(text));
    return v;
}

/* As std::stoull in onnx 1.12: a leading '-' negates modulo 2^64. */
static uint64_t to_u64(const char *text, Pos p)
{
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno == ERANGE)
        die_pos(p, "expected a 64-bit unsigned integer, found %s", shown(text));
    return v;
}

/* inf, infinity and nan in any case (later onnx releases): an identifier to the lexer. */
static int is_special_float(const char *s)
{
    return !strcasecmp(s, "inf") || !strcasecmp(s, "infinity") || !strcasecmp(s, "nan");
}

/* Overflow to infinity is an error as in onnx 1.12; subnormals are accepted (onnx 1.12's
 * std::stof rejects them, but a model printed by mlbc may hold them). */
static double to_real(const Lit *l, int is_double)
{
    if (l->tok == STRING || (l->tok == IDENT && !is_special_float(l->text)))
        die_pos(l->pos, "expected a number, found %s",
                l->tok == STRING ? "a string" : strf("name %s", shown(l->text)));
    errno = 0;
    double v = is_double ? strtod(l->text, NULL) : strtof(l->text, NULL);
    if (errno == ERANGE && isinf(v))
        die_pos(l->pos, "expected a %s, found %s (out of range)", is_double ? "double" : "float",
                shown(l->text));
    return v;
}

static void need_int(const Lit *l)
{
    if (l->tok != INT)
        die_pos(l->pos, "expected an integer, found %s",
                l->tok == STRING ? "a string" : shown(l->text));
}

static int64_t lit_int(const Lit *l)
{
    need_int(l);
    return to_i64(l->text, l->pos);
}

static uint64_t lit_uint(const Lit *l)
{
    need_int(l);
    return to_u64(l->text, l->pos);
}

static ProtobufCBinaryData lit_bytes(const Lit *l)
{
    if (l->tok != STRING)
        die_pos(l->pos, "expected a string, found %s", shown(l->text));
    return bytes(l->str);
}

/* ---- headers ---- */

static Kv *kv_new(char *key, Pos pos, int tok, Pos vpos)
{
    Kv *k = xalloc(sizeof *k);
    k->key = key;
    k->pos = pos;
    k->tok = tok;
    k->vpos = vpos;
    return k;
}

static Kv *pair_new(Str key, Pos pos, int tok, Pos vpos)
{
    Kv *k = kv_new(NULL, pos, tok, vpos);
    k->skey = key;
    return k;
}

static const char *kv_kind(int tok)
{
    return tok == INT ? "an integer" : tok == STRING ? "a string" : "a list";
}

static void kv_need(const Kv *k, int tok)
{
    if (k->tok != tok)
        die_pos(k->vpos, "expected %s as the value of %s, found %s", kv_kind(tok), k->key,
                kv_kind(k->tok));
}

static char *kv_string(const Kv *k)
{
    kv_need(k, STRING);
    return str_name(k->str, k->pos);
}

/* ["domain" : version, ...] appended to an opset list, as onnx 1.12 appends. */
static void add_opsets(Vec *opsets, const Kv *k)
{
    kv_need(k, '[');
    for (size_t i = 0; i < k->list->n; i++) {
        Kv *e = k->list->p[i];
        if (e->tok != INT)
            die_pos(e->vpos, "expected an integer as the opset version, found a string");
        Onnx__OperatorSetIdProto *o = NEW(Onnx__OperatorSetIdProto, ONNX__OPERATOR_SET_ID_PROTO__INIT);
        o->domain = str_name(e->skey, e->pos);
        o->has_version = 1;
        o->version = to_i64(e->num, e->pos);
        vec_push(opsets, o);
    }
}

/* ["key" : "value", ...]: metadata_props of a model, external_data of a tensor. */
static void add_string_pairs(Vec *out, const Vec *pairs)
{
    for (size_t i = 0; i < pairs->n; i++) {
        Kv *e = pairs->p[i];
        if (e->tok != STRING)
            die_pos(e->vpos, "expected a string as the value, found an integer");
        Onnx__StringStringEntryProto *s =
            NEW(Onnx__StringStringEntryProto, ONNX__STRING_STRING_ENTRY_PROTO__INIT);
        s->key = str_name(e->skey, e->pos);
        s->value = str_name(e->str, e->pos);
        vec_push(out, s);
    }
}

static Onnx__ModelProto *make_model(Vec *kvs, Onnx__GraphProto *g, Vec *functions)
{
    Onnx__ModelProto *m = NEW(Onnx__ModelProto, ONNX__MODEL_PROTO__INIT);
    Vec *opsets = vec_new(), *props = vec_new();
    for (size_t i = 0; i < kvs->n; i++) {
        Kv *k = kvs->p[i];
        if (!strcmp(k->key, "ir_version")) {
            kv_need(k, INT);
            m->has_ir_version = 1;
            m->ir_version = to_i64(k->num, k->pos);
        } else if (!strcmp(k->key, "model_version")) {
            kv_need(k, INT);
            m->has_model_version = 1;
            m->model_version = to_i64(k->num, k->pos);
        } else if (!strcmp(k->key, "opset_import")) {
            add_opsets(opsets, k);
        } else if (!strcmp(k->key, "metadata_props")) {
            kv_need(k, '[');
            add_string_pairs(props, k->list);
        } else if (!strcmp(k->key, "producer_name")) {
            m->producer_name = kv_string(k);
        } else if (!strcmp(k->key, "producer_version")) {
            m->producer_version = kv_string(k);
        } else if (!strcmp(k->key, "domain")) {
            m->domain = kv_string(k);
        } else if (!strcmp(k->key, "doc_string")) {
            m->doc_string = kv_string(k);
        } else {
            die_pos(k->pos, "expected ir_version, opset_import, producer_name, producer_version, "
                    "domain, model_version, doc_string or metadata_props, found %s", shown(k->key));
        }
    }
    SET_REPEATED(m, opset_import, opsets);
    SET_REPEATED(m, metadata_props, props);
    m->graph = g;
    SET_REPEATED(m, functions, functions);
    return m;
}

static void function_header(Onnx__FunctionProto *f, Vec *kvs)
{
    Vec *opsets = vec_new();
    for (size_t i = 0; i < kvs->n; i++) {
        Kv *k = kvs->p[i];
        if (!strcmp(k->key, "opset_import"))
            add_opsets(opsets, k);
        else if (!strcmp(k->key, "domain"))
            f->domain = kv_string(k);
        else if (!strcmp(k->key, "doc_string"))
            f->doc_string = kv_string(k);
        else
            die_pos(k->pos, "expected domain, opset_import or doc_string, found %s", shown(k->key));
    }
    SET_REPEATED(f, opset_import, opsets);
}

/* ---- types ---- */

static Onnx__TypeProto *type_new(Onnx__TypeProto__ValueCase c)
{
    Onnx__TypeProto *t = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
    t->value_case = c;
    return t;
}

static int elem_type(const char *name, Pos p)
{
    DType dt = dtype_from_name(name);
    if (dt == DT_UNDEF)
        die_pos(p, "expected a type (float, int64, ...), found %s", shown(name));
    return dt;
}

/* SHAPE NULL: unknown rank ("float[]"); a shape without dims: scalar ("float"). */
static Onnx__TypeProto *tensor_type(char *elem, Pos p, Onnx__TensorShapeProto *shape)
{
    Onnx__TypeProto *t = type_new(ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE);
    t->tensor_type = NEW(Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);
    t->tensor_type->has_elem_type = 1;
    t->tensor_type->elem_type = elem_type(elem, p);
    t->tensor_type->shape = shape;
    return t;
}

static Onnx__TensorShapeProto *scalar_shape(void)
{
    return NEW(Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
}

static Onnx__TensorShapeProto *shape_add(Onnx__TensorShapeProto *s,
                                         Onnx__TensorShapeProto__Dimension *d)
{
    if (!s)
        s = scalar_shape();
    /* Reuse Vec's growth policy: dims are a repeated field like any other. */
    Vec v = {(void **)s->dim, s->n_dim, s->n_dim};
    vec_push(&v, d);
    SET_REPEATED(s, dim, &v);
    return s;
}

static Onnx__TensorShapeProto__Dimension *dim(int value_case, char *param, char *value, Pos p)
{
    Onnx__TensorShapeProto__Dimension *d =
        NEW(Onnx__TensorShapeProto__Dimension, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
    d->value_case = value_case;
    if (param)
        d->dim_param = param;
    else if (value)
        d->dim_value = to_i64(value, p);
    return d;
}

static Onnx__TypeProto *seq_type(Onnx__TypeProto *elem)
{
    Onnx__TypeProto *t = type_new(ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE);
    t->sequence_type = NEW(Onnx__TypeProto__Sequence, ONNX__TYPE_PROTO__SEQUENCE__INIT);
    t->sequence_type->elem_type = elem;
    return t;
}

static Onnx__TypeProto *map_type(char *key, Pos p, Onnx__TypeProto *value)
{
    Onnx__TypeProto *t = type_new(ONNX__TYPE_PROTO__VALUE_MAP_TYPE);
    t->map_type = NEW(Onnx__TypeProto__Map, ONNX__TYPE_PROTO__MAP__INIT);
    t->map_type->has_key_type = 1;
    t->map_type->key_type = elem_type(key, p);
    t->map_type->value_type = value;
    return t;
}

static Onnx__TypeProto *optional_type(Onnx__TypeProto *elem)
{
    Onnx__TypeProto *t = type_new(ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE);
    t->optional_type = NEW(Onnx__TypeProto__Optional, ONNX__TYPE_PROTO__OPTIONAL__INIT);
    t->optional_type->elem_type = elem;
    return t;
}

static Onnx__TypeProto *sparse_type(Onnx__TypeProto *tensor)
{
    Onnx__TypeProto *t = type_new(ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE);
    t->sparse_tensor_type = NEW(Onnx__TypeProto__SparseTensor, ONNX__TYPE_PROTO__SPARSE_TENSOR__INIT);
    t->sparse_tensor_type->has_elem_type = 1;
    t->sparse_tensor_type->elem_type = tensor->tensor_type->elem_type;
    t->sparse_tensor_type->shape = tensor->tensor_type->shape;
    return t;
}

static void put_varint(Buf *b, uint64_t v)
{
    do {
        uint8_t byte = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
        buf_put(b, &byte, 1);
        v >>= 7;
    } while (v);
}

static void put_string_field(Buf *b, int field, const char *s)
{
    if (!s)
        return;
    put_varint(b, (uint64_t)field << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
    put_varint(b, strlen(s));
    buf_puts(b, s);
}

/* onnx-ml's TypeProto.opaque_type (field 7: domain = 1, name = 2) is missing from the
 * onnx.proto mlbc is built with, so it travels as an unknown field; protobuf-c packs those
 * back out, and text_print.c reads them. An unknown field's data is what follows its tag:
 * here the length, then the message. */
static Onnx__TypeProto *opaque_type(const char *domain, const char *name)
{
    Buf msg = {0}, field = {0};
    buf_put(&msg, "", 0);
    put_string_field(&msg, 1, domain);
    put_string_field(&msg, 2, name);
    put_varint(&field, msg.len);
    buf_put(&field, msg.p, msg.len);
    Onnx__TypeProto *t = type_new(ONNX__TYPE_PROTO__VALUE__NOT_SET);
    ProtobufCMessageUnknownField *f = xalloc(sizeof *f);
    f->tag = 7;
    f->wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
    f->len = field.len;
    f->data = (uint8_t *)field.p;
    t->base.n_unknown_fields = 1;
    t->base.unknown_fields = f;
    return t;
}

static Onnx__ValueInfoProto *value_info(char *name, Onnx__TypeProto *type)
{
    Onnx__ValueInfoProto *v = NEW(Onnx__ValueInfoProto, ONNX__VALUE_INFO_PROTO__INIT);
    v->name = name;
    v->type = type;
    return v;
}

/* ---- tensors ---- */

/* Data type and dims of a tensor value from its declared type: must be a tensor of known
 * rank and numeric dims. */
static Onnx__TensorProto *tensor_of_type(const Onnx__TypeProto *type, const char *what, Pos p)
{
    if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        die_pos(p, "expected a tensor type for the value of %s", what);
    const Onnx__TypeProto__Tensor *tt = type->tensor_type;
    if (!tt->shape)
        die_pos(p, "expected a known shape for the value of %s, found [] (unknown rank)", what);
    Onnx__TensorProto *t = NEW(Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
    t->has_data_type = 1;
    t->data_type = tt->elem_type;
    t->n_dims = tt->shape->n_dim;
    t->dims = xalloc(t->n_dims * sizeof *t->dims);
    for (size_t i = 0; i < t->n_dims; i++) {
        if (tt->shape->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            die_pos(p, "expected numeric dimensions for the value of %s", what);
        t->dims[i] = tt->shape->dim[i]->dim_value;
    }
    return t;
}

/* Values go to the typed field onnx 1.12 uses: int32_data for the narrow integers and bool
 * (wrapped to 32 bits, as onnx 1.12 does), uint64_data for uint32/uint64, and so on.
 * float16/bfloat16 take raw bit patterns in int32_data and complex64/128 take (re, im)
 * pairs, as later onnx releases do; onnx 1.12 rejects values for those types. */
static void fill_tensor(Onnx__TensorProto *t, const Lits *l)
{
    size_t n = l->n;
    switch (t->data_type) {
    case DT_INT8: case DT_INT16: case DT_INT32: case DT_UINT8: case DT_UINT16: case DT_BOOL:
    case DT_FLOAT16: case DT_BFLOAT16:
        t->n_int32_data = n;
        t->int32_data = xalloc(n * sizeof *t->int32_data);
        for (size_t i = 0; i < n; i++)
            t->int32_data[i] = (int32_t)(uint32_t)lit_int(&l->p[i]);
        break;
    case DT_INT64:
        t->n_int64_data = n;
        t->int64_data = xalloc(n * sizeof *t->int64_data);
        for (size_t i = 0; i < n; i++)
            t->int64_data[i] = lit_int(&l->p[i]);
        break;
    case DT_UINT32: case DT_UINT64:
        t->n_uint64_data = n;
        t->uint64_data = xalloc(n * sizeof *t->uint64_data);
        for (size_t i = 0; i < n; i++)
            t->uint64_data[i] = lit_uint(&l->p[i]);
        break;
    case DT_FLOAT: case DT_COMPLEX64:
        t->n_float_data = n;
        t->float_data = xalloc(n * sizeof *t->float_data);
        for (size_t i = 0; i < n; i++)
            t->float_data[i] = (float)to_real(&l->p[i], 0);
        break;
    case DT_DOUBLE: case DT_COMPLEX128:
        t->n_double_data = n;
        t->double_data = xalloc(n * sizeof *t->double_data);
        for (size_t i = 0; i < n; i++)
            t->double_data[i] = to_real(&l->p[i], 1);
        break;
    case DT_STRING:
        t->n_string_data = n;
        t->string_data = xalloc(n * sizeof *t->string_data);
        for (size_t i = 0; i < n; i++)
            t->string_data[i] = lit_bytes(&l->p[i]);
        break;
    }
}

/* "= {values}" of a graph input or of an entry of the "<...>" list: a tensor named after the
 * value; "= [ "location": "file", ... ]" (later onnx releases) describes external data. */
static Onnx__TensorProto *make_init(Onnx__ValueInfoProto *vi, InitValue *v, Pos p)
{
    Onnx__TensorProto *t = tensor_of_type(vi->type, shown(vi->name), p);
    t->name = vi->name;
    if (v->external) {
        Vec *entries = vec_new();
        add_string_pairs(entries, v->external);
        SET_REPEATED(t, external_data, entries);
        t->has_data_location = 1;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    } else {
        fill_tensor(t, v->lits);
    }
    return t;
}

/* A tensor constant of an attribute. onnx 1.12 always sets its name, "" when none given. */
static Onnx__TensorProto *make_const(char *elem, Pos p, Onnx__TensorShapeProto *s, Tail *tail)
{
    Onnx__TensorProto *t = tensor_of_type(tensor_type(elem, p, s), "a tensor constant", p);
    t->name = tail->name ? tail->name : xstrdup("");
    fill_tensor(t, tail->lits);
    return t;
}

/* "(values, indices, [dims])": the printer's form of a sparse tensor (an mlbc extension). */
static Onnx__SparseTensorProto *make_sparse(Onnx__TensorProto *values,
                                            Onnx__TensorProto *indices, Onnx__TensorShapeProto *dims, Pos p)
{
    Onnx__SparseTensorProto *s = NEW(Onnx__SparseTensorProto, ONNX__SPARSE_TENSOR_PROTO__INIT);
    s->values = values;
    s->indices = indices;
    s->n_dims = dims ? dims->n_dim : 0;
    s->dims = xalloc(s->n_dims * sizeof *s->dims);
    for (size_t i = 0; i < s->n_dims; i++) {
        if (dims->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            die_pos(p, "expected numeric dimensions for a sparse tensor");
        s->dims[i] = dims->dim[i]->dim_value;
    }
    return s;
}

/* ---- graphs and nodes ---- */

static Decls *decls_new(void)
{
    Decls *d = xalloc(sizeof *d);
    d->vis = vec_new();
    d->inits = vec_new();
    return d;
}

/* A graph input is always an input, with or without a value; an entry of the "<...>" list
 * is either an initializer or a value_info. */
static Decls *decls_add(Decls *d, Decl x, int is_input)
{
    if (is_input || !x.init)
        vec_push(d->vis, x.vi);
    if (x.init)
        vec_push(d->inits, x.init);
    return d;
}

static Onnx__GraphProto *make_graph(Decls *in, Vec *out, Decls *vis, Vec *nodes)
{
    Onnx__GraphProto *g = NEW(Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);
    g->name = xstrdup("");
    for (size_t i = 0; i < vis->inits->n; i++)
        vec_push(in->inits, vis->inits->p[i]);
    SET_REPEATED(g, input, in->vis);
    SET_REPEATED(g, initializer, in->inits);
    SET_REPEATED(g, output, out);
    SET_REPEATED(g, value_info, vis->vis);
    SET_REPEATED(g, node, nodes);
    return g;
}

/* Empty entries become "". A list that is one empty entry is no entry at all: "()" has no
 * inputs, while "(,x)" (later onnx) and "(x,)" (onnx 1.12) have two. */
static Vec *ids_finish(Vec *v)
{
    if (!v)
        return vec_new();
    if (v->n == 1 && !v->p[0])
        v->n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (!v->p[i])
            v->p[i] = xstrdup("");
    return v;
}

/* The nodes of this parse, subgraphs and functions included, are at most MLBC_MAX_NODES. */
static long nodes_parsed;

static void count_node(int line, int col)
{
    if (++nodes_parsed > MLBC_MAX_NODES)
        die_at(line, col, "the model has more than %d nodes (MLBC_MAX_NODES)", MLBC_MAX_NODES);
}

/* The op "a.b.Op" is op_type "Op" in domain "a.b"; onnx 1.12 sets domain "" when none. */
static Onnx__NodeProto *make_node(char *label, Vec *outs, Vec *op, Vec *attrs, Vec *ins)
{
    Onnx__NodeProto *n = NEW(Onnx__NodeProto, ONNX__NODE_PROTO__INIT);
    n->name = label;
    SET_REPEATED(n, output, ids_finish(outs));
    SET_REPEATED(n, input, ids_finish(ins));
    n->op_type = op->p[op->n - 1];
    Buf domain = {0};
    buf_put(&domain, "", 0);
    for (size_t i = 0; i + 1 < op->n; i++)
        buf_printf(&domain, "%s%s", i ? "." : "", (char *)op->p[i]);
    n->domain = domain.p;
    SET_REPEATED(n, attribute, attrs ? attrs : vec_new());
    return n;
}

static Onnx__FunctionProto *make_function(char *name, Vec *attrs, Vec *ins, Vec *outs)
{
    Onnx__FunctionProto *f = NEW(Onnx__FunctionProto, ONNX__FUNCTION_PROTO__INIT);
    f->name = name;
    SET_REPEATED(f, attribute, ids_finish(attrs));
    SET_REPEATED(f, input, ids_finish(ins));
    SET_REPEATED(f, output, ids_finish(outs));
    return f;
}

/* ---- attributes ---- */

/* Attribute types run from FLOAT (1) to TYPE_PROTOS (14). */
#define MAX_ATTR_TYPE ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS

static int attr_type(const char *name, Pos p)
{
    for (int t = 1; t <= MAX_ATTR_TYPE; t++)
        if (text_attr_type_name(t) && !strcmp(text_attr_type_name(t), name))
            return t;
    die_pos(p, "expected an attribute type (int, float, string, tensor, graph, ints, ...), "
            "found %s", shown(name));
}

/* The list type holding elements of single type T (FLOAT -> FLOATS, ...). */
static int list_of(int t)
{
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS;
    default: return 0;
    }
}

static int is_list_type(int t)
{
    for (int single = 1; single <= MAX_ATTR_TYPE; single++)
        if (list_of(single) == t)
            return 1;
    return 0;
}

static AVal *aval(int kind, Pos pos)
{
    AVal *v = xalloc(sizeof *v);
    v->kind = kind;
    v->pos = pos;
    return v;
}

/* A bare name as a value: inf/nan (later onnx), or a scalar type ("tp = float"). */
static AVal *aval_ident(char *id, Pos p)
{
    if (is_special_float(id)) {
        AVal *v = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, p);
        v->num = id;
        return v;
    }
    if (dtype_from_name(id) == DT_UNDEF)
        die_pos(p, "expected an attribute value, found name %s", shown(id));
    AVal *v = aval(ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO, p);
    v->msg = tensor_type(id, p, scalar_shape());
    return v;
}

static float aval_float(const AVal *v)
{
    Lit l = {v->kind == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? INT : FLOAT, v->num, {0}, v->pos};
    return (float)to_real(&l, 0);
}

/* One value. The value decides the type, as in onnx 1.12, except that an integer given to
 * an attribute declared float is a float (onnx 1.12 would store an int; later onnx casts). */
static void set_single(Onnx__AttributeProto *a, const AVal *v)
{
    int declared = a->has_type ? (int)a->type : 0;
    int kind = v->kind;
    if (kind == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT && declared == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
        kind = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    a->has_type = 1;
    a->type = kind;
    switch (kind) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        a->has_i = 1;
        a->i = to_i64(v->num, v->pos);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        a->has_f = 1;
        a->f = aval_float(v);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        a->has_s = 1;
        a->s = bytes(v->str);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: a->t = v->msg; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: a->g = v->msg; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: a->tp = v->msg; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: a->sparse_tensor = v->msg; break;
    }
}

/* The element type of a list: all elements of one kind, except that integers among floats
 * (or in a list declared floats) are floats. onnx 1.12 would split such a list over ints
 * and floats, and drop tensors and graphs from lists; both are fixed here. */
static int list_elem_kind(Onnx__AttributeProto *a, const Vec *items)
{
    const int F = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, I = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    int kind = a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS ? F : 0;
    for (size_t i = 0; i < items->n; i++) {
        const AVal *v = items->p[i];
        if (v->kind == AV_REF)
            die_pos(v->pos, "expected a value in the list, found a reference");
        if (!kind || (kind == I && v->kind == F))
            kind = v->kind;
        else if (kind != v->kind && !(kind == F && v->kind == I))
            die_pos(v->pos, "expected only %s values in this list, found a value of type %s",
                    text_attr_type_name(kind), text_attr_type_name(v->kind));
    }
    return kind;
}

#define FILL(a, field, items, expr)                                     \
    do {                                                                \
        (a)->n_##field = (items)->n;                                    \
        (a)->field = xalloc((items)->n * sizeof *(a)->field);           \
        for (size_t i_ = 0; i_ < (items)->n; i_++) {                    \
            const AVal *v = (items)->p[i_];                             \
            (a)->field[i_] = (expr);                                    \
        }                                                               \
    } while (0)

static void set_list(Onnx__AttributeProto *a, const AVal *list)
{
    const Vec *items = list->list;
    if (!items->n) {
        /* onnx 1.12 rejects "[]"; later releases accept it with a declared list type. */
        if (!a->has_type || !is_list_type(a->type))
            die_pos(list->pos, "expected a declared list type for an empty list (e.g. 'name: ints = []')");
        return;
    }
    int kind = list_elem_kind(a, items);
    a->has_type = 1;
    a->type = list_of(kind);
    switch (kind) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: FILL(a, ints, items, to_i64(v->num, v->pos)); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: FILL(a, floats, items, aval_float(v)); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: FILL(a, strings, items, bytes(v->str)); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: FILL(a, tensors, items, v->msg); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: FILL(a, graphs, items, v->msg); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: FILL(a, type_protos, items, v->msg); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: FILL(a, sparse_tensors, items, v->msg); break;
    }
}

/* "name = value" or "name: type = value". A reference "@x" keeps the declared type, if any,
 * and sets nothing else (as onnx 1.12). */
static Onnx__AttributeProto *make_attr(char *name, char *type, Pos tpos, AVal *v)
{
    Onnx__AttributeProto *a = NEW(Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
    a->name = name;
    if (type) {
        a->has_type = 1;
        a->type = attr_type(type, tpos);
    }
    if (v->kind == AV_REF)
        a->ref_attr_name = v->ref;
    else if (v->kind == AV_LIST)
        set_list(a, v);
    else
        set_single(a, v);
    return a;
}

/* ---- entry point ---- */

Onnx__ModelProto *parse_text(const char *src, size_t len)
{
    text_lex_begin(src, len);
    nodes_parsed = 0;
    yyparse();
    return result;
}
