/* json.c - fuzz target: the runtime's strict JSON reader (runtime/json.c), which parses
 * training-log records and the pipe runner's JSON replies. */
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_doc doc = {0};
    char err[128];
    size_t at;
    if (json_parse(&doc, (const char *)data, size, err, sizeof err, &at) == 0)
        json_member(&doc, &doc.v[0], "features");   /* the lookup every reader makes */
    json_free(&doc);
    return 0;
}
