// The header's part for --weights-file (emit.c). ${N}: the symbol prefix; the sizes in bytes.

/* Weights from a file (mlbc --weights-file): this code carries no weights; a context computes
 * with those of a weights file that mlbc wrote for a model of this architecture, so a
 * retrained model is deployed by replacing the file, without rebuilding the program.
 *
 *   static ${N}_weights_file storage;   (or map the file: ${N}_weights_open(image, len, &status))
 *   int status;
 *   const ${N}_weights *w = ${N}_weights_load(path, &storage, &status);
 *   if (!w)
 *       fprintf(stderr, "%s: %s\n", path, ${N}_weights_error(status));
 *   ${N}_init(&ctx);
 *   ${N}_set_weights(&ctx, w);           (any number of contexts share w; it must outlive them)
 *
 * The file is a 64-byte header (magic "MLBC-WTS", format version, byte order, fingerprint of
 * the code it fits, payload size, number of arrays, checksums of the header and the payload),
 * then the payload, struct ${N}_weights. A file of another model, a truncated, overlong or
 * corrupted file, storage that is missing or not 8-byte aligned: the calls return NULL and a
 * non-zero status, never weights; ${N}_run returns 3 while a context has none. No call
 * allocates memory: the caller owns the storage or the mapping. */
#define ${N}_WEIGHTS_BYTES ${BYTES}
#define ${N}_WEIGHTS_FILE_BYTES ${FILE_BYTES}
typedef struct ${N}_weights ${N}_weights;
typedef struct ${N}_weights_file {   /* storage for a file read by ${N}_weights_load */
    unsigned char header[64];
    ${N}_weights weights;
} ${N}_weights_file;
/* Reads the file at path into storage and checks it: its weights, or NULL and *status != 0. */
const ${N}_weights *${N}_weights_load(const char *path, ${N}_weights_file *storage,
                                      int *status);
/* Checks the len bytes of a weights file at image (8-byte aligned, e.g. mmap'ed): the weights
 * inside it, or NULL and *status != 0. */
const ${N}_weights *${N}_weights_open(const void *image, size_t len, int *status);
const char *${N}_weights_error(int status);   /* what a status means */
/* ctx computes with w (from ${N}_weights_load or ${N}_weights_open), after ${N}_init. */
void ${N}_set_weights(${N}_ctx *ctx, const ${N}_weights *w);
