/* compile.h - the whole mlbc pipeline on one fuzz input, in memory (docs/FUZZING.md). */
#ifndef MLBC_FUZZ_COMPILE_H
#define MLBC_FUZZ_COMPILE_H
#include <stddef.h>
#include <stdint.h>

/* Compiles DATA as a binary (text = 0) or text (text = 1) model: load, import, inference
 * and folding, lowering, dead code, fusion, planning, emission into memory. A rejected
 * model (die) returns 1, a compiled one 0; everything allocated is freed either way. */
int fuzz_compile(const uint8_t *data, size_t size, int text);
#endif
