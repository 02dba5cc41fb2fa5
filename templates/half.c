// IEEE binary16 and bfloat16 conversions, used where a model computes in 16-bit floats.
// Rounding is to nearest even, as numpy's and ONNX Runtime's casts do.
// A model usually needs only some of the four; the attribute keeps gcc and clang quiet
// about the others.
#if defined(__GNUC__)
#define MLBC_MAYBE_UNUSED __attribute__((unused))
#else
#define MLBC_MAYBE_UNUSED
#endif
static MLBC_MAYBE_UNUSED float mlbc_h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 31, man = h & 1023, u;
    float f;
    if (exp == 0) {                         /* zero or subnormal */
        f = (float)man / 16777216.0f;
        return sign ? -f : f;
    }
    u = exp == 31 ? sign | 0x7f800000u | (man << 13) : sign | ((exp + 112) << 23) | (man << 13);
    memcpy(&f, &u, 4);
    return f;
}

static MLBC_MAYBE_UNUSED uint16_t mlbc_f2h(float f)
{
    uint32_t u, sign, exp, man;
    memcpy(&u, &f, 4);
    sign = (u >> 16) & 0x8000;
    exp = (u >> 23) & 255;
    man = u & 0x7fffff;
    if (exp == 255)                         /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp > 142)                          /* overflow */
        return (uint16_t)(sign | 0x7c00);
    if (exp < 113) {                        /* subnormal or zero */
        uint32_t shift = 126 - exp, m = man | 0x800000, r;
        if (shift > 24)
            return (uint16_t)sign;
        r = m >> shift;
        if ((m & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
            ((m & ((1u << shift) - 1)) == (1u << (shift - 1)) && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    u = ((exp - 112) << 10) | (man >> 13);
    if ((man & 0x1fff) > 0x1000 || ((man & 0x1fff) == 0x1000 && (u & 1)))
        u++;
    return (uint16_t)(sign | u);
}

static MLBC_MAYBE_UNUSED float mlbc_bf2f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static MLBC_MAYBE_UNUSED uint16_t mlbc_f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
