/* util.c - arena memory, strings, buffers, diagnostics, element types. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlbc.h"

const char *diag_file = "";

#ifdef MLBC_FUZZ
/* Fuzz builds only (fuzz/, make fuzz): one process compiles many inputs, so die() must not
 * exit and memory must not pile up. die() longjmps to fuzz_escape when it is set, and every
 * xalloc block is chained (a header of max_align_t keeps the alignment) so that
 * fuzz_release() frees all the blocks of the last input at once. */
jmp_buf *fuzz_escape;
int fuzz_quiet;
typedef union Block { union Block *next; max_align_t align; } Block;
static Block *blocks;

static void *fuzz_alloc(size_t n)
{
    Block *b = calloc(1, sizeof(Block) + n);
    if (!b)
        return NULL;
    b->next = blocks;
    blocks = b;
    return b + 1;
}

void fuzz_release(void)
{
    while (blocks) {
        Block *b = blocks;
        blocks = b->next;
        free(b);
    }
}

/* protobuf-c allocates from the chain too; its frees wait for fuzz_release. */
static void *pb_alloc(void *data, size_t n) { return fuzz_alloc(n ? n : 1); }
static void pb_free(void *data, void *p) {}
ProtobufCAllocator fuzz_proto_alloc = {pb_alloc, pb_free, NULL};
#define calloc(one, n) fuzz_alloc(n)
#endif

void *xalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}
#undef calloc

void *xgrow(void *p, int n, int *cap, size_t elem)
{
    if (n < *cap)
        return p;
    int c = *cap ? *cap : 16;
    while (c <= n)
        c *= 2;
    *cap = c;
    void *q = xalloc(elem * (size_t)c);
    if (n)
        memcpy(q, p, elem * (size_t)n);
    return q;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xalloc(n + 1);
    if (n)                              /* an empty protobuf bytes field has data NULL */
        memcpy(p, s, n);
    return p;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

/* Model strings and the generated C. mlbc's output is compiled into other programs, and the
 * runtime compiles models it is handed at run time, so a name is hostile input: no byte of it
 * may end up as C. Each context has one function, and every model string goes through it. */

/* A name as part of an identifier (weights' members): its first 32 bytes, other bytes '_'. */
const char *c_ident(const char *s)
{
    char buf[33];
    int n = 0;
    for (; *s && n < 32; s++)
        buf[n++] = isalnum((unsigned char)*s) ? *s : '_';    /* mlbc keeps the C locale */
    buf[n] = 0;
    return xstrdup(buf);
}

/* A name as text in a block comment, its first MLBC_COMMENT_NAME bytes then "...". A '*'
 * next to a '/' becomes '_' (no end of the comment; no "/" "*" inside it, which -Wcomment
 * reports), and so do the first '?' of "??" (a trigraph: "??/" at the end of a line joins
 * the next one), '\' (it joins lines too), control bytes (loops.c's markers, line ends) and
 * bytes from 0x7f on (U+2028 and U+2029 end lines for some readers). */
const char *c_comment(const char *s)
{
    size_t n = strlen(s);
    char *p = xstrndup(s, n > MLBC_COMMENT_NAME ? MLBC_COMMENT_NAME : n);
    for (char *q = p; *q; q++) {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20 || c >= 0x7f || c == '\\' || (c == '?' && q[1] == '?') ||
            (c == '*' && (q[1] == '/' || (q > p && q[-1] == '/'))))
            *q = '_';
    }
    return n > MLBC_COMMENT_NAME ? strf("%s...", p) : p;
}

/* A string literal holding S's exact bytes: printable ASCII as itself but for '"', '\\' and
 * '?' (trigraphs), any other byte as a 3-digit octal escape (a digit after it stays a
 * digit). A literal longer than MLBC_LITERAL_PIECE goes on in pieces, one a line, which the
 * C compiler joins. */
const char *c_string(const char *s)
{
    Buf b = {0};
    size_t piece = 1;
    buf_puts(&b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (b.len - piece >= MLBC_LITERAL_PIECE) {
            buf_puts(&b, "\"\n        \"");
            piece = b.len;
        }
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?')
            buf_put(&b, s, 1);
        else
            buf_printf(&b, "\\%03o", c);
    }
    buf_puts(&b, "\"");
    return b.p;
}

static char *vstrf(const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *p = xalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = vstrf(fmt, ap);
    va_end(ap);
    return p;
}

/* realloc; in fuzz builds a new chained block (the old one goes with the rest). */
void *xrealloc(void *p, size_t len, size_t n)
{
#ifdef MLBC_FUZZ
    void *q = fuzz_alloc(n);
    if (q && len)
        memcpy(q, p, len);
#else
    void *q = realloc(p, n);
#endif
    if (!q)
        die("out of memory (%zu bytes)", n);
    return q;
}

void buf_put(Buf *b, const void *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = xrealloc(b->p, b->len, cap);
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
}

void buf_puts(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

void buf_printf(Buf *b, const char *fmt, ...)
{
    /* Measured, then formatted into a temporary: plain C99, so this file also serves the
     * tests as a portable compile workload (clang-19 without _GNU_SOURCE). */
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n < 0 ? NULL : malloc((size_t)n + 1);   /* not xalloc'd: freed right away */
    if (!p) {
        va_end(again);
        die("out of memory");
    }
    vsnprintf(p, (size_t)n + 1, fmt, again);
    va_end(again);
    buf_put(b, p, (size_t)n);
    free(p);
}

static void vdiag(const char *kind, int line, int col, const char *fmt, va_list ap)
{
#ifdef MLBC_FUZZ
    if (fuzz_quiet)
        return;
#endif
    fprintf(stderr, "mlbc: %s: ", kind);
    if (diag_file && *diag_file) {
        fprintf(stderr, "%s", diag_file);
        if (line > 0)
            fprintf(stderr, ":%d:%d", line, col);
        fprintf(stderr, ": ");
    }
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

/* A fuzz build's die: back to the target (which releases the memory), never exit. */
#ifdef MLBC_FUZZ
#define fuzz_exit() (fuzz_escape ? longjmp(*fuzz_escape, 1) : (void)0)
#else
#define fuzz_exit() ((void)0)
#endif

_Noreturn void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag("error", 0, 0, fmt, ap);
    va_end(ap);
    fuzz_exit();
    exit(1);
}

_Noreturn void die_at(int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag("error", line, col, fmt, ap);
    va_end(ap);
    fuzz_exit();
    exit(1);
}

_Noreturn void die_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mlbc: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(try 'mlbc -h')\n");
    va_end(ap);
    fuzz_exit();
    exit(2);
}

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag("warning", 0, 0, fmt, ap);
    va_end(ap);
}

int read_file(const char *path, char **data, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f)
        return -1;
    Buf b = {0};
    char chunk[65536];
    size_t n;
    /* a file too large is refused before it is read (a pipe, as the limit is passed) */
    if (f != stdin && fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size > (long)MLBC_MAX_INPUT_BYTES || fseek(f, 0, SEEK_SET)) {
            fclose(f);
            errno = EFBIG;
            return -1;
        }
    }
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buf_put(&b, chunk, n);
        if (b.len > (size_t)MLBC_MAX_INPUT_BYTES) {
            errno = EFBIG;
            break;
        }
    }
    int bad = ferror(f) || b.len > (size_t)MLBC_MAX_INPUT_BYTES;
    if (f != stdin)
        fclose(f);
    if (bad) {
        free(b.p);
        return -1;
    }
    if (!b.p)
        buf_put(&b, "", 0);
    *data = b.p;
    *len = b.len;
    return 0;
}

int write_file_atomic(const char *path, const char *data, size_t len)
{
    char *tmp = strf("%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---- element types ---- */

static const struct {
    const char *name, *ctype;
    size_t size;
} dtypes[DT_COUNT] = {
    [DT_UNDEF] = {"undefined", "void", 0},
    [DT_FLOAT] = {"float", "float", 4},
    [DT_UINT8] = {"uint8", "uint8_t", 1},
    [DT_INT8] = {"int8", "int8_t", 1},
    [DT_UINT16] = {"uint16", "uint16_t", 2},
    [DT_INT16] = {"int16", "int16_t", 2},
    [DT_INT32] = {"int32", "int32_t", 4},
    [DT_INT64] = {"int64", "int64_t", 8},
    [DT_STRING] = {"string", "char *", 0},
    [DT_BOOL] = {"bool", "uint8_t", 1},
    [DT_FLOAT16] = {"float16", "uint16_t", 2},
    [DT_DOUBLE] = {"double", "double", 8},
    [DT_UINT32] = {"uint32", "uint32_t", 4},
    [DT_UINT64] = {"uint64", "uint64_t", 8},
    [DT_COMPLEX64] = {"complex64", "void", 0},
    [DT_COMPLEX128] = {"complex128", "void", 0},
    [DT_BFLOAT16] = {"bfloat16", "uint16_t", 2},
};

static int dtype_ok(DType t) { return t >= 0 && t < DT_COUNT; }
const char *dtype_name(DType t) { return dtype_ok(t) ? dtypes[t].name : "unknown"; }
const char *dtype_ctype(DType t) { return dtype_ok(t) ? dtypes[t].ctype : "void"; }
size_t dtype_size(DType t) { return dtype_ok(t) ? dtypes[t].size : 0; }
int dtype_is_float(DType t) { return t == DT_FLOAT || t == DT_DOUBLE; }

int dtype_is_int(DType t)
{
    switch (t) {
    case DT_UINT8: case DT_INT8: case DT_UINT16: case DT_INT16: case DT_INT32:
    case DT_INT64: case DT_UINT32: case DT_UINT64:
        return 1;
    default:
        return 0;
    }
}

int dtype_is_signed(DType t)
{
    return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 || t == DT_INT64 || dtype_is_float(t);
}

DType dtype_from_name(const char *s)
{
    for (int t = 1; t < DT_COUNT; t++)
        if (!strcmp(dtypes[t].name, s))
            return (DType)t;
    return DT_UNDEF;
}
