/* names.c - fuzz target: a fixed model whose strings come from the input (issue 30).
 *
 * Every string a model supplies is hostile: the generated C is compiled into other programs.
 * The model below has a Resize with run-time sizes, a MatMul + Add (packed weights), a
 * Gather of constant indices, a Bucketize chain and a temporary; its strings "s00" .. "s33"
 * (graph, value, initializer and node names, producer, domain, metadata, an attribute) are
 * replaced by the input's pieces 0 .. 33, split at its NUL bytes, every doc_string by piece
 * 36; piece 37, if printable, makes it a composite's one model with that selector (34 and 35
 * are unused). The whole compile runs,
 * then the C text is lexed and must be inert, else abort():
 *   - outside comments and literals, only C tokens and blanks; "\" only ends macro lines;
 *   - comments: no nested opener, no trigraph, no line splice, no byte outside ASCII;
 *   - string literals: one line, printable ASCII, no trigraph, valid escapes; the graph's
 *     input and output names are among them, byte for byte;
 *   - the code tokens (comments and literals aside, the weights' members' names cut to their
 *     prefixes, MD5 constants as one, the pragmas around a literal over 4095 bytes) are the
 *     same as those of the model with its own names: no byte of a name became code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "mlbc.h"

static const char MODEL[] =
    "<ir_version: 8, opset_import: [\"\" : 18], producer_name: \"s00\", producer_version: "
    "\"s01\", domain: \"s02\", metadata_props: [\"s03\" : \"s04\"]>\n"
    "s05 (float[1,2,2,2] s06, int64[4] s07, float[2,3] s08, int64[2] s09, float[4,1] s10)\n"
    "    => (float[1,2,4,4] s11, float[2,2] s12, float[2,3] s13, float[4,1] s14)\n"
    "<float[3,2] s15 = {1, 2, 3, 4, 5, 6}, float[2] s16 = {0.5, -1}, int64[2] s17 = {1, 0},\n"
    " float[5] s18 = {3, -1, 0.5, 7, 2}, int64[1] s19 = {-1}>\n"
    "{\n"
    "  [s20] s11 = Resize <mode = \"nearest\"> (s06, , , s07)\n"
    "  [s21] s22 = MatMul (s08, s15)\n"
    "  [s23] s12 = Add (s22, s16)\n"
    "  [s24] s25 = Relu <s26 = \"s27\"> (s08)\n"
    "  [s28] s13 = Gather <axis = 0> (s25, s17)\n"
    "  [s29] s30 = LessOrEqual (s18, s10)\n"
    "  [s31] s32 = Cast <to = 1> (s30)\n"
    "  [s33] s14 = ReduceSum <keepdims = 1> (s32, s19)\n"
    "}\n";

enum { NSITES = 38, SELECTOR = 37, DOC = 36 };
/* The sites that name values: distinct and non-empty, or the model would mean another. */
static const int values[] = {6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 22, 25, 30, 32};
static const int inout[] = {6, 7, 8, 9, 10, 11, 12, 13, 14};

static const char *piece[NSITES];       /* the input's strings, NULL past its end */

static const char *site(int i)
{
    static char own[NSITES][4];
    if (piece[i])
        return piece[i];
    snprintf(own[i], sizeof own[i], "s%02d", i);
    return own[i];
}

/* "sNN" -> NN, else -1 */
static int placeholder(const char *s, size_t n)
{
    if (n != 3 || s[0] != 's' || s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9')
        return -1;
    int i = (s[1] - '0') * 10 + s[2] - '0';
    return i < NSITES ? i : -1;
}

static void fill(ProtobufCMessage *m);

/* One string or bytes field FIELD of a message at AT: a placeholder's site, or the doc. */
static void fill_one(const ProtobufCFieldDescriptor *f, void *at)
{
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (*(ProtobufCMessage **)at)
            fill(*(ProtobufCMessage **)at);
    } else if (f->type == PROTOBUF_C_TYPE_STRING) {
        char **s = at;
        int i = !strcmp(f->name, "doc_string") ? DOC : *s ? placeholder(*s, strlen(*s)) : -1;
        if (i >= 0)
            *s = xstrdup(site(i));
    } else if (f->type == PROTOBUF_C_TYPE_BYTES) {
        ProtobufCBinaryData *b = at;
        int i = placeholder((const char *)b->data, b->len);
        if (i >= 0)
            *b = (ProtobufCBinaryData){strlen(site(i)), (uint8_t *)xstrdup(site(i))};
    }
}

/* Every string of M and of the messages in it, through its protobuf-c descriptor. */
static void fill(ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        char *at = (char *)m + f->offset, *q = (char *)m + f->quantifier_offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(size_t *)q, size = f->type == PROTOBUF_C_TYPE_MESSAGE ? sizeof(void *)
                                            : f->type == PROTOBUF_C_TYPE_STRING ? sizeof(char *)
                                            : sizeof(ProtobufCBinaryData);
            if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING ||
                f->type == PROTOBUF_C_TYPE_BYTES)
                for (size_t k = 0; k < n; k++)
                    fill_one(f, *(char **)at + k * size);
        } else if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) || *(uint32_t *)q == f->id) {
            fill_one(f, at);
        }
    }
}

static int printable(const char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e)
            return 0;
    return 1;
}

/* The composite's selector: piece 37 if main.c would take it (printable), else NULL. */
static const char *selector_piece(void)
{
    return piece[SELECTOR] && *piece[SELECTOR] && printable(piece[SELECTOR]) ? piece[SELECTOR]
                                                                              : NULL;
}

static void *make(const char **selector)
{
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        const char *v = site(values[i]);
        if (!*v || !strcmp(v, "model_selector"))    /* absent; a composite's argument */
            return NULL;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(v, site(values[k])))
                return NULL;
    }
    *selector = selector_piece();
    text_lex_reset();
    Onnx__ModelProto *m = parse_text(xstrdup(MODEL), sizeof MODEL - 1);
    fill(&m->base);
    return m;
}

/* ---- the check of the generated text ---- */

static void violation(const char *what, const char *text, const char *at)
{
    const char *from = at - text > 80 ? at - 80 : text;
    fprintf(stderr, "names: %s at offset %ld: ...%.*s<HERE>%.80s\n", what, (long)(at - text),
            (int)(at - from), from, at);
    abort();
}

static Buf tokens;                      /* the code tokens of the texts, one a line */
static Buf literal;                     /* the string literal being read, decoded */
static const char **literals;
static int nliterals, capliterals;
static int after_literal;               /* the last token was a literal: the next one joins */

static int trigraph(const char *p) { return p[0] == '?' && p[1] == '?'; }

/* The comment from P (just past its opener) to its end; returns the byte after it. */
static const char *comment(const char *text, const char *p)
{
    const char *end = strstr(p, "*/");
    if (!end)
        violation("a comment without its end", text, p);
    for (; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c < 0x20 && c != '\n') || c >= 0x7f)
            violation("a control or non-ASCII byte in a comment", text, p);
        if ((p[0] == '/' && p[1] == '*') || trigraph(p) || (p[0] == '\\' && p[1] == '\n'))
            violation("a comment opener, trigraph or line splice in a comment", text, p);
    }
    return end + 2;
}

/* The string literal from P (just past its quote), decoded into `literal`. */
static const char *string(const char *text, const char *p)
{
    if (!after_literal) {
        literal.len = 0;
        buf_puts(&tokens, "\"\n");
        literals = xgrow(literals, nliterals, &capliterals, sizeof *literals);
        nliterals++;
    }
    for (; *p != '"'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c >= 0x7f || trigraph(p))
            violation("a raw control, non-ASCII byte or trigraph in a literal", text, p);
        if (c != '\\') {
            buf_put(&literal, p, 1);
        } else if (p[1] >= '0' && p[1] <= '7') {
            int v = 0, k = 0;
            for (; k < 3 && p[1] >= '0' && p[1] <= '7'; k++, p++)
                v = v * 8 + p[1] - '0';
            char b = (char)v;
            buf_put(&literal, &b, 1);
        } else if (strchr("\"\\?'", p[1]) && p[1]) {
            buf_put(&literal, ++p, 1);
        } else if (strchr("nt", p[1]) && p[1]) {
            buf_put(&literal, *++p == 'n' ? "\n" : "\t", 1);
        } else {
            violation("an escape that is not octal, quote, backslash or n/t", text, p);
        }
    }
    literals[nliterals - 1] = xstrndup(literal.p ? literal.p : "", literal.len);
    after_literal = 1;
    return p + 1;
}

static int ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* S past its digits and a '_' after them, or NULL. */
static const char *numbered(const char *s)
{
    size_t n = strspn(s, "0123456789");
    return n && s[n] == '_' ? s + n + 1 : NULL;
}

/* An identifier or number token. A weight's member keeps only its prefix (w12_ or m0_w12_),
 * the rest being the model's name, and an MD5 half (0x, 16 digits, ULL) is one token. */
static const char *word(const char *p)
{
    const char *end = p;
    int number = *p >= '0' && *p <= '9';
    while (ident(*end) || (number && (*end == '.' || ((*end == '+' || *end == '-') &&
                                                      strchr("eEpP", end[-1])))))
        end++;
    const char *w = p[0] == 'm' && numbered(p + 1) ? numbered(p + 1) : p;
    const char *keep = w[0] == 'w' && numbered(w + 1) ? numbered(w + 1) : end;
    if (end - p == 21 && p[0] == '0' && p[1] == 'x')
        buf_puts(&tokens, "MD5");
    else
        buf_put(&tokens, p, (size_t)(keep - p));
    buf_puts(&tokens, "\n");
    return end;
}

static void lex(const char *text)
{
    if (!text)
        return;
    int directive = 0, line_start = 1;
    for (const char *p = text; *p;) {
        unsigned char c = (unsigned char)*p;
        if (c == '\n') {
            directive = 0, line_start = 1, p++;
            continue;
        }
        if (c == ' ') {
            p++;
            continue;
        }
        if (c == '#' && line_start && !strncmp(p, "#pragma GCC diagnostic ", 23)) {
            p += strcspn(p, "\n");         /* only around literals of names over 4095 bytes */
            continue;
        }
        if (c == '#' && line_start)
            directive = 1;
        line_start = 0;
        if (p[0] == '/' && p[1] == '*') {
            p = comment(text, p + 2);
            continue;
        }
        if (p[0] == '/' && p[1] == '/')
            violation("a line comment", text, p);
        if (c == '"') {
            p = string(text, p + 1);
            continue;
        }
        after_literal = 0;
        if (p[0] == '\\' && p[1] == '\n' && directive) {
            p += 2;
            continue;
        }
        if (ident(*p)) {
            p = word(p);
        } else if (c == '\'' && p[1] != '\\' && p[1] >= 0x20 && p[1] < 0x7f && p[2] == '\'') {
            buf_put(&tokens, p, 3);
            buf_puts(&tokens, "\n");
            p += 3;
        } else if (c == '\'' && p[1] == '\\' && strchr("0nt\\'", p[2]) && p[3] == '\'') {
            buf_put(&tokens, p, 4);
            buf_puts(&tokens, "\n");
            p += 4;
        } else if (strchr("{}[]()<>=!+-*/%&|^~?:;,.#", c) && c && !trigraph(p)) {
            buf_put(&tokens, p++, 1);
            buf_puts(&tokens, "\n");
        } else {
            violation("a byte that is no C token", text, p);
        }
    }
}

static char *reference[2];              /* the code tokens with the model's own names */
static int composite;

static void see(const char *h, const char *c_head, const char *c_tail)
{
    tokens = literal = (Buf){0};       /* chained memory, freed after each input */
    nliterals = capliterals = after_literal = 0;
    literals = NULL;
    lex(h);
    lex(c_head);
    lex(c_tail);
    for (size_t i = 0; i < sizeof inout / sizeof *inout; i++) {
        int found = 0;
        for (int k = 0; k < nliterals && !found; k++)
            found = !strcmp(literals[k], site(inout[i]));
        if (!found)
            violation("an input or output name missing from the literals", site(inout[i]),
                      site(inout[i]));
    }
    if (!reference[composite]) {
        reference[composite] = strdup(tokens.p);
    } else if (strcmp(reference[composite], tokens.p)) {
        const char *a = reference[composite], *b = tokens.p;
        while (*a == *b)
            a++, b++;
        violation("code that differs from the model's with its own names", tokens.p, b);
    }
}

/* The model with its own names, then INPUT's (a composite's, with their own names first if
 * this is the first composite). */
static void run(void)
{
    const char *selector = selector_piece();
    composite = selector != NULL;
    if (!reference[composite]) {
        const char *mine[NSITES];
        memcpy(mine, piece, sizeof mine);
        memset(piece, 0, sizeof piece);
        piece[SELECTOR] = selector;
        if (fuzz_compile_made(make, see))
            abort();                    /* the model itself must compile */
        memcpy(piece, mine, sizeof mine);
    }
    fuzz_compile_made(make, see);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    memcpy(copy, data, size);
    copy[size] = 0;
    memset(piece, 0, sizeof piece);
    const char *p = copy;
    for (int i = 0; i < NSITES && p <= copy + size; i++) {
        piece[i] = p;
        p += strlen(p) + 1;
    }
    run();
    free(copy);
    return 0;
}
