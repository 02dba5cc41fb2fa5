/* text.c - fuzz target: a text (.onnxtxt) model through the whole compile (compile.c). */
#include "compile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_compile(data, size, 1);
    return 0;
}
