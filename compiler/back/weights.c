/* weights.c - the weights' layout and bytes: struct NAME_weights, the string literal that
 * embeds them in OUT.c, the weights file, and writing the outputs.
 *
 * Scale is the point (issue 10): a model of 100M parameters must not cost mlbc several
 * copies of its weights, nor a C compiler minutes. So the bytes are streamed to the file
 * after the code is emitted, never held as C text, and embedded as a string literal: a
 * compiler reads one literal of N bytes as one constant, where N numeric initializers are N
 * syntax-tree nodes (11.5M floats: 4 s and 0.9 GB for gcc -O2, against 57 s and 3.2 GB as
 * hex words). The bytes are the weights' own bit patterns, so NaN payloads and -0.0 survive
 * and the embedded and the file build read the same bits.
 *
 * The weights file (--weights-file) is a 64-byte header, then the same bytes as the
 * embedded literal (all integers in the host's byte order, which the header records):
 *   [0, 8)   magic "MLBC-WTS"          [32, 40) checksum of the payload (weights_sum)
 *   [8, 12)  format version (1)        [40, 48) number of arrays
 *   [12, 16) 0x01020304 (byte order)   [48, 56) reserved, 0
 *   [16, 24) fingerprint of the code   [56, 64) checksum of bytes [0, 56)
 *   [24, 32) payload bytes
 * templates/weights_load.c reads it back; keep the two in step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mlbc.h"

#define WEIGHTS_ALIGN 64                /* a large array's offset; the payload's granule */
#define WEIGHTS_HEADER 64
#define WEIGHTS_VERSION 1
#define WEIGHTS_CHUNK (4 << 20)         /* bytes between two progress reports */

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

static int64_t array_bytes(const WeightArray *a)
{
    return (a->count ? a->count : 1) * (int64_t)dtype_size(a->dt);
}

/* Arrays of 64 bytes or more start a cache line; smaller ones (scalars, a bias of three) the
 * next multiple of their size, so they share lines. The total is a multiple of 64. */
static int64_t array_align(const WeightArray *a)
{
    int64_t b = array_bytes(a);
    return b >= WEIGHTS_ALIGN ? WEIGHTS_ALIGN : pow2ceil(b);
}

void weights_add(WeightTable *t, WeightArray a)
{
    a.offset = round_up(t->end, array_align(&a));
    t->end = a.offset + array_bytes(&a);
    t->bytes = round_up(t->end, WEIGHTS_ALIGN);
    t->a = xgrow(t->a, t->n, &t->cap, sizeof *t->a);
    t->a[t->n++] = a;
}

/* Explicit padding members: the layout is then the same under every C ABI (no member needs
 * more than 8-byte alignment), and the size check below proves it at compile time. */
void weights_struct(Buf *b, const WeightTable *t, const char *N)
{
    buf_printf(b, "/* The weights as the code reads them, %lld bytes: arrays of 64 bytes or more "
                  "start a cache line. */\nstruct %s_weights {\n", (long long)t->bytes, N);
    int64_t at = 0;
    for (int i = 0; i < t->n; i++) {
        const WeightArray *a = &t->a[i];
        if (a->offset > at)
            buf_printf(b, "    unsigned char pad%d[%lld];\n", i, (long long)(a->offset - at));
        buf_printf(b, "    %s %s[%lld]; /* %s */\n", dtype_ctype(a->dt), a->name,
                   (long long)(a->count ? a->count : 1), a->doc);
        at = a->offset + array_bytes(a);
    }
    if (t->bytes > at)
        buf_printf(b, "    unsigned char pad%d[%lld];\n", t->n, (long long)(t->bytes - at));
    buf_printf(b, "};\ntypedef char %s_weights_layout[sizeof(struct %s_weights) == %lldu ? 1 : "
                  "-1];\n\n", N, N, (long long)t->bytes);
}

uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* The checksum of the header and the payload, over 8-byte words in the host's order: each
 * step is a bijection of h, so a change in any one word always changes the sum. The
 * generated loader (templates/weights_load.c) computes the same. */
static uint64_t weights_sum(uint64_t h, const unsigned char *p, size_t words)
{
    for (size_t i = 0; i < words; i++) {
        uint64_t w;
        memcpy(&w, p + 8 * i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 32;
    }
    return h;
}

#define SUM_SEED 0xcbf29ce484222325ULL

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* With -v, once the run has taken a second: "what: 45% (20.1 of 46.0 MB)", rewritten in
 * place at most every 0.2 s, ended by a newline at 100%. */
void progress(const Options *o, const char *what, double done, double total)
{
    static double start = -1, last;
    double t = now_seconds();
    if (start < 0)
        start = t;
    if (!o->verbose || t - start < 1 || (done < total && t - last < 0.2))
        return;
    last = t;
    fprintf(stderr, "\rmlbc: %s: %3.0f%% (%.1f of %.1f MB)%s", what,
            total > 0 ? 100 * done / total : 100, done / 1e6, total / 1e6,
            done >= total ? "\n" : "");
}

/* ---- streaming the bytes ---- */

/* Where the payload goes: 64-byte lines, as C string literals or as bytes (and summed). */
typedef struct Sink {
    FILE *f;
    int text;
    unsigned char line[WEIGHTS_ALIGN];
    size_t fill;
    uint64_t sum;
    char *out;                          /* encoded text waiting for fwrite */
    size_t outlen;
} Sink;

#define SINK_OUT (1 << 20)

static void sink_flush(Sink *s)
{
    if (s->outlen)
        fwrite(s->out, 1, s->outlen, s->f);
    s->outlen = 0;
}

/* One line of a string literal: printable characters as themselves, the others as octal
 * escapes, short ones unless a digit follows; '?' escaped too (no trigraph can form). */
static void encode_line(Sink *s, const unsigned char *p)
{
    static char plain[256];
    static int ready;
    if (!ready) {
        for (int c = 0x20; c < 0x7f; c++)
            plain[c] = !strchr("\"\\?", c);
        ready = 1;
    }
    if (s->outlen + 4 * WEIGHTS_ALIGN + 4 > SINK_OUT)
        sink_flush(s);
    char *o = s->out + s->outlen;
    *o++ = '"';
    for (int i = 0; i < WEIGHTS_ALIGN; i++) {
        unsigned c = p[i];
        if (plain[c]) {
            *o++ = (char)c;
            continue;
        }
        int digit_next = i + 1 < WEIGHTS_ALIGN && p[i + 1] >= '0' && p[i + 1] <= '7';
        *o++ = '\\';
        if (digit_next || c >= 64)
            *o++ = (char)('0' + (c >> 6));
        if (digit_next || c >= 8)
            *o++ = (char)('0' + ((c >> 3) & 7));
        *o++ = (char)('0' + (c & 7));
    }
    *o++ = '"';
    *o++ = '\n';
    s->outlen = (size_t)(o - s->out);
}

static void sink_line(Sink *s, const unsigned char *p)
{
    if (s->text) {
        encode_line(s, p);
        return;
    }
    s->sum = weights_sum(s->sum, p, WEIGHTS_ALIGN / 8);
    if (s->outlen + WEIGHTS_ALIGN > SINK_OUT)
        sink_flush(s);
    memcpy(s->out + s->outlen, p, WEIGHTS_ALIGN);
    s->outlen += WEIGHTS_ALIGN;
}

static void sink_put(Sink *s, const unsigned char *p, size_t n)
{
    while (n) {
        if (!s->fill && n >= WEIGHTS_ALIGN) {
            sink_line(s, p);
            p += WEIGHTS_ALIGN;
            n -= WEIGHTS_ALIGN;
            continue;
        }
        size_t k = WEIGHTS_ALIGN - s->fill < n ? WEIGHTS_ALIGN - s->fill : n;
        memcpy(s->line + s->fill, p, k);
        s->fill += k;
        p += k;
        n -= k;
        if (s->fill == WEIGHTS_ALIGN) {
            sink_line(s, s->line);
            s->fill = 0;
        }
    }
}

static void sink_zeros(Sink *s, int64_t n)
{
    static const unsigned char zeros[WEIGHTS_ALIGN];
    for (; n > 0; n -= WEIGHTS_ALIGN)
        sink_put(s, zeros, (size_t)(n < WEIGHTS_ALIGN ? n : WEIGHTS_ALIGN));
}

/* The payload, array by array: a packed array is made in one buffer reused for the next. */
static void stream_weights(const WeightTable *t, Sink *s, const Options *o)
{
    unsigned char *tmp = NULL;
    size_t tmpcap = 0;
    int64_t at = 0;
    for (int i = 0; i < t->n; i++) {
        const WeightArray *a = &t->a[i];
        size_t bytes = (size_t)a->count * dtype_size(a->dt);
        const unsigned char *p = a->data;
        if (!p && bytes) {
            if (bytes > tmpcap) {
                free(tmp);
                tmp = malloc(tmpcap = bytes);
                if (!tmp)
                    die("out of memory packing '%s' (%zu bytes)", a->name, bytes);
            }
            memset(tmp, 0, bytes);
            a->pack(a->arg, tmp);
            p = tmp;
        }
        sink_zeros(s, a->offset - at);
        for (size_t off = 0; off < bytes; off += WEIGHTS_CHUNK) {
            sink_put(s, p + off, bytes - off < WEIGHTS_CHUNK ? bytes - off : WEIGHTS_CHUNK);
            progress(o, "writing weights", (double)(a->offset + (int64_t)off),
                     (double)t->bytes);
        }
        at = a->offset + (int64_t)bytes;
    }
    sink_zeros(s, t->bytes - at);
    progress(o, "writing weights", (double)t->bytes, (double)t->bytes);
    free(tmp);
}

/* ---- the files ---- */

static void put_u32(unsigned char *p, uint32_t x) { memcpy(p, &x, 4); }
static void put_u64(unsigned char *p, uint64_t x) { memcpy(p, &x, 8); }

static void file_header(unsigned char *h, const Output *out, uint64_t sum)
{
    memset(h, 0, WEIGHTS_HEADER);
    memcpy(h, "MLBC-WTS", 8);
    put_u32(h + 8, WEIGHTS_VERSION);
    put_u32(h + 12, 0x01020304u);
    put_u64(h + 16, out->fingerprint);
    put_u64(h + 24, (uint64_t)out->w.bytes);
    put_u64(h + 32, sum);
    put_u64(h + 40, (uint64_t)out->w.n);
    put_u64(h + 56, weights_sum(SUM_SEED, h, 7));
}

static Sink sink_open(FILE *f, int text)
{
    Sink s = {.f = f, .text = text, .sum = SUM_SEED, .out = malloc(SINK_OUT)};
    if (!s.out)
        die("out of memory");
    return s;
}

/* Header (its sum is known only at the end, so it is written last), then the payload. */
void write_weights_file(FILE *f, const Output *out, const Options *o)
{
    unsigned char h[WEIGHTS_HEADER];
    file_header(h, out, 0);
    fwrite(h, 1, sizeof h, f);
    Sink s = sink_open(f, 0);
    stream_weights(&out->w, &s, o);
    sink_flush(&s);
    file_header(h, out, s.sum);
    if (fseek(f, 0, SEEK_SET) == 0)
        fwrite(h, 1, sizeof h, f);
    free(s.out);
}

/* OUT.c: the code before the weights, the weights as one string literal read through a
 * union (C99's way to view bytes as the struct), the rest of the code. */
void write_c(FILE *f, const Output *out, const Options *o)
{
    fwrite(out->c_head.p, 1, out->c_head.len, f);
    if (!o->weights_file && out->w.n) {
        fprintf(f, "/* The weights start a cache line, so that their arrays of 64 bytes or more "
                   "do: gcc aligns\n * a large object so by itself, clang does not (a vector "
                   "load split across two lines\n * made clang's builds up to 1.8x slower). */\n"
                   "#if defined(__GNUC__) || defined(__clang__)\n"
                   "#define MLBC_LINE_ALIGNED __attribute__((aligned(64)))\n#else\n"
                   "#define MLBC_LINE_ALIGNED\n#endif\n"
                   "/* The C standard asks compilers to take string literals of 4095 bytes; gcc "
                   "and clang take any. */\n#pragma GCC diagnostic push\n"
                   "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n"
                   "static const union {\n    unsigned char bytes[%lld];\n"
                   "    struct %s_weights w;\n} mlbc_weights MLBC_LINE_ALIGNED = {\n",
                (long long)out->w.bytes, o->name);
        Sink s = sink_open(f, 1);
        stream_weights(&out->w, &s, o);
        sink_flush(&s);
        free(s.out);
        fputs("};\n#pragma GCC diagnostic pop\n\n", f);
    }
    fwrite(out->c_tail.p, 1, out->c_tail.len, f);
}

/* The temporaries being written: removed at exit unless renamed, so that dying anywhere
 * (a pack running out of memory, a full disk) leaves no output behind. */
static const char *pending[3];
static int npending;

static void remove_pending(void)
{
    for (int i = 0; i < npending; i++)
        if (pending[i])
            unlink(pending[i]);
}

/* A new file beside PATH, named *TMP. The output folder may be shared (/tmp): mkstemp
 * creates a file of an unpredictable name that did not exist, so nothing another user
 * planted (a link to one of our files) is followed or truncated. It gets the mode an
 * ordinary create would give the output (0666 less the umask), not mkstemp's 0600. */
static FILE *create_temp(const char *path, const char **tmp)
{
    char *name = strf("%s.XXXXXX", path);
    int fd = mkstemp(name);
    if (fd < 0)
        return NULL;
    *tmp = pending[npending++] = name;
    mode_t mask = umask(0);
    umask(mask);
    FILE *f = fchmod(fd, 0666 & ~mask) ? NULL : fdopen(fd, "wb");
    if (!f)
        close(fd);
    return f;
}

/* Writes one output to a temporary name with fn; returns that name. */
static const char *write_one(const char *path,
                             void (*fn)(FILE *, const Output *, const Options *),
                             const Output *out, const Options *o)
{
    if (!npending)
        atexit(remove_pending);
    const char *tmp;
    FILE *f = create_temp(path, &tmp);
    if (!f)
        die("cannot write '%s': %s", path, strerror(errno));
    fn(f, out, o);
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) && !err)
        err = errno ? errno : EIO;
    if (err)
        die("cannot write '%s': %s", path, strerror(err));
    return tmp;
}

static void write_h(FILE *f, const Output *out, const Options *o)
{
    (void)o;
    fwrite(out->h.p, 1, out->h.len, f);
}

void write_output(const Output *out, const Options *o, const char *c_path, const char *h_path)
{
    const char *paths[3], *tmps[3];
    int n = 0;
    if (o->weights_file) {
        paths[n] = o->weights_file;
        tmps[n++] = write_one(o->weights_file, write_weights_file, out, o);
    }
    paths[n] = h_path;
    tmps[n++] = write_one(h_path, write_h, out, o);
    paths[n] = c_path;
    tmps[n++] = write_one(c_path, write_c, out, o);
    for (int i = 0; i < n; i++) {
        if (rename(tmps[i], paths[i])) {
            int e = errno;
            for (int k = 0; k < i; k++)
                unlink(paths[k]);
            die("cannot write '%s': %s", paths[i], strerror(e));
        }
        pending[i] = NULL;
    }
}
