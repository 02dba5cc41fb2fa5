/* compile.h - the whole mlbc pipeline on one fuzz input, in memory (docs/FUZZING.md). */
#ifndef MLBC_FUZZ_COMPILE_H
#define MLBC_FUZZ_COMPILE_H
#include <stddef.h>
#include <stdint.h>

/* Compiles DATA as a binary (text = 0) or text (text = 1) model: load, import, inference
 * and folding, lowering, dead code, fusion, planning, emission into memory. A rejected
 * model (die) returns 1, a compiled one 0; everything allocated is freed either way. */
int fuzz_compile(const uint8_t *data, size_t size, int text);

/* The same for the Onnx__ModelProto that MAKE returns (NULL: nothing to compile), made
 * with the compiler's allocators; MAKE may set a composite's selector. SEE reads the
 * generated text (OUT.h, OUT.c before and after its weights) before it is freed. */
typedef void *(*FuzzMake)(const char **selector);
typedef void (*FuzzSee)(const char *h, const char *c_head, const char *c_tail);
int fuzz_compile_made(FuzzMake make, FuzzSee see);
#endif
