/* json.c - the JSON writer (LLVM's compact form) and a strict, bounded reader. */
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_MEMBERS 256     /* per object (duplicate keys are looked for) */
#define MAX_NUMBER 64       /* characters in one number */

/* Length of the well-formed UTF-8 sequence at s (n > 0 bytes left), or minus the length of
 * its maximal ill-formed subpart (Unicode ch. 3.9, what LLVM's lenient conversion skips). */
static int utf8_len(const unsigned char *s, size_t n)
{
    unsigned char lo = 0x80, hi = 0xBF;
    int need;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        need = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        need = 3;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        need = 4;
    else
        return -1;
    if (s[0] == 0xE0)
        lo = 0xA0;
    else if (s[0] == 0xED)
        hi = 0x9F;
    else if (s[0] == 0xF0)
        lo = 0x90;
    else if (s[0] == 0xF4)
        hi = 0x8F;
    for (int i = 1; i < need; i++, lo = 0x80, hi = 0xBF)
        if ((size_t)i >= n || s[i] < lo || s[i] > hi)
            return -i;
    return need;
}

/* ---- writer ---- */

void jb_raw(jbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;
        while (cap < b->len + n + 1)
            cap *= 2;
        if (!(p = realloc(b->data, cap))) {
            b->failed = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void jb_str(jbuf *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str);
    jb_raw(b, "\"", 1);
    while (n) {
        int k = utf8_len(s, n);
        char esc[8];
        if (k < 0) {
            jb_raw(b, "\xEF\xBF\xBD", 3);
            k = -k;
        } else if (*s == '"' || *s == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*s;
            jb_raw(b, esc, 2);
        } else if (*s >= 0x20) {
            jb_raw(b, (const char *)s, (size_t)k);
        } else if (*s == '\t' || *s == '\n' || *s == '\r') {
            jb_raw(b, *s == '\t' ? "\\t" : *s == '\n' ? "\\n" : "\\r", 2);
        } else {
            jb_raw(b, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", *s));
        }
        s += k;
        n -= (size_t)k;
    }
    jb_raw(b, "\"", 1);
}

void jb_int(jbuf *b, int64_t v)
{
    char num[24];
    jb_raw(b, num, (size_t)snprintf(num, sizeof num, "%lld", (long long)v));
}

#define JB_LIT(b, s) jb_raw((b), (s), sizeof(s) - 1)

void jb_spec(jbuf *b, const mlbc_tensor_spec *s, int bridge)
{
    /* the Bridge's C++ sends a bool as uint8_t and every spec with its default port, 6020 */
    const char *type = bridge && s->type == MLBC_BOOL ? "uint8_t" : mlbc_type_llvm_name(s->type);
    if (!type) {
        b->failed = 1;
        return;
    }
    JB_LIT(b, "{\"name\":");
    jb_str(b, s->name);
    JB_LIT(b, ",\"type\":");
    jb_str(b, type);
    JB_LIT(b, ",\"port\":");
    jb_int(b, bridge ? 6020 : 0);
    JB_LIT(b, ",\"shape\":[");
    for (int i = 0; i < s->rank; i++) {
        if (i)
            JB_LIT(b, ",");
        jb_int(b, s->shape[i]);
    }
    JB_LIT(b, "]}");
}

void jb_header(jbuf *b, const mlbc_tensor_spec *features, int n,
               const mlbc_tensor_spec *score, const mlbc_tensor_spec *advice, int bridge)
{
    JB_LIT(b, "{\"features\":[");
    for (int i = 0; i < n; i++) {
        if (i)
            JB_LIT(b, ",");
        jb_spec(b, &features[i], bridge);
    }
    JB_LIT(b, "]");
    if (score) {
        JB_LIT(b, ",\"score\":");
        jb_spec(b, score, bridge);
    }
    if (advice) {
        JB_LIT(b, ",\"advice\":");
        jb_spec(b, advice, bridge);
    }
    JB_LIT(b, "}");
}

void jb_record(jbuf *b, const char *key, int64_t n)
{
    JB_LIT(b, "{");
    jb_str(b, key);
    JB_LIT(b, ":");
    jb_int(b, n);
    JB_LIT(b, "}");
}

void jb_free(jbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* ---- reader ---- */

typedef struct parser {
    json_doc *doc;
    const unsigned char *text, *p, *end;
    char *err;
    size_t errlen;
    int depth;
} parser;

static int fail(parser *ps, const char *what)
{
    set_err(ps->err, ps->errlen, "%s", what);
    return -1;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n'
                               || *ps->p == '\r'))
        ps->p++;
}

static int literal(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
        return fail(ps, "invalid literal");
    ps->p += n;
    return 0;
}

static int hex4(parser *ps, unsigned *out)
{
    *out = 0;
    if (ps->end - ps->p < 4)
        return fail(ps, "truncated \\u escape");
    for (int i = 0; i < 4; i++, ps->p++) {
        int c = *ps->p, d = c >= '0' && c <= '9' ? c - '0'
                            : c >= 'a' && c <= 'f' ? c - 'a' + 10
                            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return fail(ps, "bad hex digit in \\u escape");
        *out = *out << 4 | (unsigned)d;
    }
    return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* \uXXXX (the backslash and 'u' consumed); lone surrogates become U+FFFD, as in LLVM. */
static int unicode_escape(parser *ps, unsigned *cp)
{
    unsigned lo;
    if (hex4(ps, cp))
        return -1;
    if (*cp >= 0xDC00 && *cp <= 0xDFFF) {
        *cp = 0xFFFD;
    } else if (*cp >= 0xD800 && *cp <= 0xDBFF) {
        if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u') {
            *cp = 0xFFFD;
            return 0;
        }
        ps->p += 2;
        if (hex4(ps, &lo))
            return -1;
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
        } else {
            ps->p -= 6;     /* not a pair: the second escape stands on its own */
            *cp = 0xFFFD;
        }
    }
    if (!*cp)
        return fail(ps, "NUL character in string");
    return 0;
}

static int parse_string(parser *ps, const char **out)
{
    char *o = ps->doc->strs + ps->doc->slen;
    *out = o;
    ps->p++;    /* the opening quote */
    for (;;) {
        int k;
        if (ps->p >= ps->end)
            return fail(ps, "unterminated string");
        if (*ps->p == '"')
            break;
        if (*ps->p < 0x20)
            return fail(ps, "control character in string");
        if (*ps->p == '\\') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *e;
            unsigned cp;
            if (++ps->p >= ps->end)
                return fail(ps, "unterminated string");
            if (*ps->p == 'u') {
                ps->p++;
                if (unicode_escape(ps, &cp))
                    return -1;
                o = put_utf8(o, cp);
                continue;
            }
            if (!(e = memchr(from, *ps->p, sizeof from - 1)))
                return fail(ps, "invalid escape in string");
            *o++ = to[e - from];
            ps->p++;
            continue;
        }
        if ((k = utf8_len(ps->p, (size_t)(ps->end - ps->p))) < 0)
            return fail(ps, "invalid UTF-8 in string");
        memcpy(o, ps->p, (size_t)k);
        o += k;
        ps->p += k;
    }
    ps->p++;
    *o++ = 0;
    ps->doc->slen = (size_t)(o - ps->doc->strs);
    return 0;
}

static int parse_number(parser *ps, json_value *v)
{
    const unsigned char *start = ps->p;
    char buf[MAX_NUMBER + 1];
    int integral = 1, overflow = 0;
    uint64_t mag = 0;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
        return fail(ps, "invalid number");
    if (*ps->p == '0' && ps->p + 1 < ps->end && ps->p[1] >= '0' && ps->p[1] <= '9')
        return fail(ps, "leading zero in number");
    for (; ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9'; ps->p++) {
        overflow |= mag > (UINT64_MAX - 9) / 10;
        mag = mag * 10 + (uint64_t)(*ps->p - '0');
    }
    if (ps->p < ps->end && *ps->p == '.') {
        integral = 0;
        if (++ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return fail(ps, "invalid number");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        integral = 0;
        if (++ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return fail(ps, "invalid number");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p - start > MAX_NUMBER) {
        ps->p = start;
        return fail(ps, "number too long");
    }
    memcpy(buf, start, (size_t)(ps->p - start));
    buf[ps->p - start] = 0;
    v->d = strtod(buf, NULL);
    v->kind = JSON_NUMBER;
    if (integral && !overflow && mag <= (uint64_t)INT64_MAX + (*start == '-')) {
        v->kind = JSON_INT;
        v->i = *start == '-' ? (int64_t)(0 - mag) : (int64_t)mag;
    }
    return 0;
}

static int new_value(parser *ps, int kind)
{
    json_doc *d = ps->doc;
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 16;
        json_value *v = realloc(d->v, (size_t)cap * sizeof *v);
        if (!v)
            return fail(ps, "out of memory");
        d->v = v;
        d->cap = cap;
    }
    memset(&d->v[d->n], 0, sizeof d->v[d->n]);
    d->v[d->n].kind = kind;
    d->v[d->n].first = d->v[d->n].next = -1;
    return d->n++;
}

static int parse_value(parser *ps);

/* Array or object: children are linked through next; object members carry their key. */
static int parse_container(parser *ps, int self, char close)
{
    int last = -1, object = close == '}';
    if (++ps->depth > JSON_MAX_DEPTH)
        return fail(ps, "nesting too deep");
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        const char *key = NULL;
        int child;
        skip_ws(ps);
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"')
                return fail(ps, "expected a string key");
            if (parse_string(ps, &key))
                return -1;
            if (json_member(ps->doc, &ps->doc->v[self], key))
                return fail(ps, "duplicate key");
            if (ps->doc->v[self].count == MAX_MEMBERS)
                return fail(ps, "too many members in an object");
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return fail(ps, "expected ':'");
            ps->p++;
        }
        if ((child = parse_value(ps)) < 0)
            return -1;
        ps->doc->v[child].key = key;
        if (last < 0)
            ps->doc->v[self].first = child;
        else
            ps->doc->v[last].next = child;
        last = child;
        ps->doc->v[self].count++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            ps->depth--;
            return 0;
        }
        return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

/* Index of the new value, -1 on error. */
static int parse_value(parser *ps)
{
    int self, rc;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "unexpected end of JSON");
    switch (*ps->p) {
    case '{':
    case '[':
        if ((self = new_value(ps, *ps->p == '{' ? JSON_OBJECT : JSON_ARRAY)) < 0)
            return -1;
        rc = parse_container(ps, self, *ps->p == '{' ? '}' : ']');
        break;
    case '"':
        if ((self = new_value(ps, JSON_STRING)) < 0)
            return -1;
        rc = parse_string(ps, &ps->doc->v[self].s);
        break;
    case 't':
    case 'f':
        if ((self = new_value(ps, JSON_BOOL)) < 0)
            return -1;
        ps->doc->v[self].i = *ps->p == 't';
        rc = literal(ps, *ps->p == 't' ? "true" : "false");
        break;
    case 'n':
        if ((self = new_value(ps, JSON_NULL)) < 0)
            return -1;
        rc = literal(ps, "null");
        break;
    default:
        if (*ps->p != '-' && (*ps->p < '0' || *ps->p > '9'))
            return fail(ps, "unexpected character");
        if ((self = new_value(ps, JSON_INT)) < 0)
            return -1;
        rc = parse_number(ps, &ps->doc->v[self]);
        break;
    }
    return rc ? -1 : self;
}

int json_parse(json_doc *doc, const char *text, size_t len, char *err, size_t errlen,
               size_t *at)
{
    if (!text)                          /* an empty line of a reader that holds none yet */
        text = "";
    parser ps = {doc, (const unsigned char *)text, (const unsigned char *)text,
                 (const unsigned char *)text + len, err, errlen, 0};
    int rc = -1;
    memset(doc, 0, sizeof *doc);
    /* Decoded strings are never longer than their quoted source. */
    if (!(doc->strs = malloc(len + 1)))
        fail(&ps, "out of memory");
    else if (parse_value(&ps) >= 0) {
        skip_ws(&ps);
        rc = ps.p == ps.end ? 0 : fail(&ps, "trailing characters after JSON");
    }
    *at = (size_t)(ps.p - ps.text);
    return rc;
}

const json_value *json_member(const json_doc *doc, const json_value *o, const char *key)
{
    if (!o || o->kind != JSON_OBJECT)
        return NULL;
    for (int c = o->first; c >= 0; c = doc->v[c].next)
        if (!strcmp(doc->v[c].key, key))
            return &doc->v[c];
    return NULL;
}

void json_free(json_doc *doc)
{
    free(doc->v);
    free(doc->strs);
    memset(doc, 0, sizeof *doc);
}
