/* spec.c - tensor specs: element types, their sizes and LLVM names, counts, validation. */
#include <string.h>

#include "internal.h"

static const struct {
    int type;
    size_t size;
    const char *llvm;   /* TensorSpec's type name; NULL: LLVM has none */
} types[] = {
    {MLBC_FLOAT, 4, "float"},     {MLBC_DOUBLE, 8, "double"},
    {MLBC_INT8, 1, "int8_t"},     {MLBC_UINT8, 1, "uint8_t"},
    {MLBC_INT16, 2, "int16_t"},   {MLBC_UINT16, 2, "uint16_t"},
    {MLBC_INT32, 4, "int32_t"},   {MLBC_UINT32, 4, "uint32_t"},
    {MLBC_INT64, 8, "int64_t"},   {MLBC_UINT64, 8, "uint64_t"},
    {MLBC_BOOL, 1, NULL},
};

#define NTYPES (sizeof types / sizeof types[0])

size_t mlbc_type_size(int type)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (types[i].type == type)
            return types[i].size;
    return 0;
}

const char *mlbc_type_llvm_name(int type)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (types[i].type == type)
            return types[i].llvm;
    return NULL;
}

int mlbc_type_from_llvm_name(const char *name)
{
    for (size_t i = 0; name && i < NTYPES; i++)
        if (types[i].llvm && !strcmp(types[i].llvm, name))
            return types[i].type;
    return 0;
}

mlbc_tensor_spec mlbc_spec(const char *name, int type, int rank, const int64_t *shape)
{
    mlbc_tensor_spec s;
    memset(&s, 0, sizeof s);
    if (name) {
        size_t n = strlen(name);
        memcpy(s.name, name, n < MLBC_SPEC_MAX_NAME ? n : MLBC_SPEC_MAX_NAME - 1);
    }
    s.type = type;
    s.rank = rank;  /* out of range: kept, so that spec_check reports it */
    for (int i = 0; shape && i < rank && i < MLBC_SPEC_MAX_RANK; i++)
        s.shape[i] = shape[i];
    return s;
}

int64_t mlbc_spec_count(const mlbc_tensor_spec *s)
{
    int64_t n = 1;
    if (!s || s->rank < 0 || s->rank > MLBC_SPEC_MAX_RANK)
        return -1;
    for (int i = 0; i < s->rank; i++) {
        int64_t d = s->shape[i];
        if (d < 0 || (d && n > INT64_MAX / d))
            return -1;
        n *= d;
    }
    return n;
}

size_t mlbc_spec_bytes(const mlbc_tensor_spec *s)
{
    int64_t n = mlbc_spec_count(s);
    size_t size = s ? mlbc_type_size(s->type) : 0;
    if (n < 0 || (n && (uint64_t)n > SIZE_MAX / (size ? size : 1)))
        return 0;
    return (size_t)n * size;
}

int spec_check(const mlbc_tensor_spec *s, char *err, size_t errlen)
{
    int64_t n;
    if (!memchr(s->name, 0, sizeof s->name)) {
        set_err(err, errlen, "a tensor spec's name is not terminated");
        return -1;
    }
    if (!mlbc_type_size(s->type)) {
        set_err(err, errlen, "tensor '%s': unknown element type %d", s->name, s->type);
        return -1;
    }
    if (s->rank < 0 || s->rank > MLBC_SPEC_MAX_RANK) {
        set_err(err, errlen, "tensor '%s': rank %d is not in 0..%d", s->name, s->rank,
                MLBC_SPEC_MAX_RANK);
        return -1;
    }
    for (int i = 0; i < s->rank; i++)
        if (s->shape[i] < 0) {
            set_err(err, errlen, "tensor '%s': dimension %d is negative", s->name, i);
            return -1;
        }
    n = mlbc_spec_count(s);
    if (n < 0 || (uint64_t)n > MLBC_RT_MAX_TENSOR_BYTES / mlbc_type_size(s->type)) {
        set_err(err, errlen, "tensor '%s': shape too large (limit %zu bytes)", s->name,
                (size_t)MLBC_RT_MAX_TENSOR_BYTES);
        return -1;
    }
    return 0;
}
