/* json.h - minimal JSON for the records of training logs and interactive streams
 * (internal). The writer produces exactly what LLVM's json::OStream writes in compact
 * mode; the reader is strict (RFC 8259), bounded, and keeps everything in one document. */
#ifndef MLBC_RT_JSON_H
#define MLBC_RT_JSON_H

#include "internal.h"

/* ---- writer: a growing buffer ---- */

typedef struct jbuf {
    char *data;
    size_t len, cap;
    int failed;         /* out of memory, or a spec whose type LLVM cannot name */
} jbuf;

void jb_raw(jbuf *b, const char *s, size_t n);
/* A JSON string as LLVM writes it: ill-formed UTF-8 becomes U+FFFD (one per maximal
 * subpart), '"' and '\\' are escaped, \t \n \r short, other controls \u00xx. */
void jb_str(jbuf *b, const char *s);
void jb_int(jbuf *b, int64_t v);
/* {"name":...,"type":...,"port":0,"shape":[...]}, as LLVM's TensorSpec writes it; bridge:
 * as the ML-Compiler-Bridge's does ("port":6020, a bool as "uint8_t") */
void jb_spec(jbuf *b, const mlbc_tensor_spec *s, int bridge);
/* {"features":[...]} plus "score" and "advice" when given; no newline. */
void jb_header(jbuf *b, const mlbc_tensor_spec *features, int n,
               const mlbc_tensor_spec *score, const mlbc_tensor_spec *advice, int bridge);
/* {"KEY":N} */
void jb_record(jbuf *b, const char *key, int64_t n);
void jb_free(jbuf *b);

/* ---- reader ---- */

/* JSON_INT: an integer that fits int64_t; JSON_NUMBER: any other number. */
enum { JSON_NULL, JSON_BOOL, JSON_INT, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

typedef struct json_value {
    int kind;
    int64_t i;          /* JSON_INT: an integer that fits; JSON_BOOL: 0 or 1 */
    double d;           /* JSON_INT, JSON_NUMBER: the value (strtod) */
    const char *s;      /* JSON_STRING: decoded, NUL-terminated (no NUL inside) */
    const char *key;    /* a member of an object: its key */
    int first, next;    /* array/object: first child; every value: next sibling; -1: none */
    int count;          /* array/object: number of children */
} json_value;

typedef struct json_doc {
    json_value *v;      /* v[0] is the root */
    int n, cap;
    char *strs;         /* decoded strings */
    size_t slen;
} json_doc;

#define JSON_MAX_DEPTH 32

/* Parses len bytes (one value, surrounded by optional whitespace). 0 on success; else -1,
 * err says what and *at is the offset in text. Call json_free either way. */
int json_parse(json_doc *doc, const char *text, size_t len, char *err, size_t errlen,
               size_t *at);
/* The member `key` of object o, NULL if absent (or o is not an object). */
const json_value *json_member(const json_doc *doc, const json_value *o, const char *key);
void json_free(json_doc *doc);

#endif
