// Reading and checking a weights file (--weights-file); the format is mlbc's
// compiler/back/weights.c, which writes it: keep the two in step. ${ONCE}: the call of
// NAME_once (emit.c's emit_once: values computed once from the weights), or nothing.

/* ---- the weights file ---- */

static const char *const mlbc_weights_errors[] = {
    "no error",
    "cannot open the file",
    "cannot read the file",
    "not an mlbc weights file",
    "truncated: shorter than its header says",
    "longer than its header says",
    "the header is corrupted (its checksum does not match)",
    "written by an unsupported version of the weights file format",
    "written on a machine of another byte order",
    "the weights are for another model (rebuild the program, or use this model's weights file)",
    "the header's sizes do not match this model",
    "the weights are corrupted (their checksum does not match)",
    "no storage, or storage not 8-byte aligned",
};

/* The checksum over 8-byte words: each step a bijection, so any one changed word shows. */
static uint64_t mlbc_weights_sum(const unsigned char *p, size_t words)
{
    uint64_t h = 0xcbf29ce484222325ULL, w;
    size_t i;
    for (i = 0; i < words; i++) {
        memcpy(&w, p + 8 * i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 32;
    }
    return h;
}

static uint64_t mlbc_u64(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

static uint32_t mlbc_u32(const unsigned char *p)
{
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
}

/* 0, or the status saying what is wrong with the len bytes at p, header first: a file of
 * another model says so rather than that its size is wrong. */
static int mlbc_weights_status(const unsigned char *p, size_t len)
{
    if (!p || (uintptr_t)p % 8)
        return 12;
    if (len < 8 || memcmp(p, "MLBC-WTS", 8))
        return len < 8 && !memcmp(p, "MLBC-WTS", len) ? 4 : 3;
    if (len < 64)
        return 4;
    if (mlbc_weights_sum(p, 7) != mlbc_u64(p + 56))
        return 6;
    if (mlbc_u32(p + 8) != 1)
        return 7;
    if (mlbc_u32(p + 12) != 0x01020304u)
        return 8;
    if (mlbc_u64(p + 16) != ${FINGERPRINT})
        return 9;
    if (mlbc_u64(p + 24) != ${BYTES} || mlbc_u64(p + 40) != ${COUNT})
        return 10;
    if (len != ${FILE_BYTES})
        return len < ${FILE_BYTES} ? 4 : 5;
    if (mlbc_weights_sum(p + 64, ${BYTES} / 8) != mlbc_u64(p + 32))
        return 11;
    return 0;
}

const ${N}_weights *${N}_weights_open(const void *image, size_t len, int *status)
{
    int s = mlbc_weights_status((const unsigned char *)image, len);
    if (status)
        *status = s;
    return s ? NULL : (const ${N}_weights *)((const unsigned char *)image + 64);
}

/* Unbuffered reads into the caller's storage; one byte more shows a file that is too long. */
const ${N}_weights *${N}_weights_load(const char *path, ${N}_weights_file *storage,
                                      int *status)
{
    unsigned char extra;
    size_t len;
    int bad;
    FILE *f;
    if (!storage)
        return ${N}_weights_open(NULL, 0, status);
    f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        if (status)
            *status = 1;
        return NULL;
    }
    setvbuf(f, NULL, _IONBF, 0);
    len = fread(storage, 1, sizeof *storage, f);
    if (len == sizeof *storage)
        len += fread(&extra, 1, 1, f);
    bad = ferror(f);
    fclose(f);
    if (bad) {
        if (status)
            *status = 2;
        return NULL;
    }
    return ${N}_weights_open(storage, len, status);
}

const char *${N}_weights_error(int status)
{
    if (status < 0 || status >= (int)(sizeof mlbc_weights_errors / sizeof *mlbc_weights_errors))
        return "unknown status";
    return mlbc_weights_errors[status];
}

void ${N}_set_weights(${N}_ctx *ctx, const ${N}_weights *w)
{
    ctx->weights = w;
${ONCE}}

