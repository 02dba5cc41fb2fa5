/* model.c - fuzz target: a binary ONNX model through the whole compile (compile.c). */
#include "compile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_compile(data, size, 0);
    return 0;
}
