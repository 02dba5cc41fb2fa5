/* logread.c - fuzz target: the training-log reader (runtime/logread.c) over a log held in
 * memory, every record read until the end or the first error. */
#include <stdio.h>

#include "mlbc_runtime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;                       /* fmemopen refuses an empty buffer */
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f)
        return 0;
    char err[256];
    mlbc_log_reader *r = mlbc_log_open(f, err, sizeof err);
    if (r) {
        mlbc_log_record rec;
        while (mlbc_log_next(r, &rec) > 0)
            ;
        mlbc_log_close(r);
    }
    fclose(f);
    return 0;
}
