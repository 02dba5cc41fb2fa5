// tanh for float, at most 1 ulp from the correctly rounded result (checked against double
// tanh on every 7th float bit pattern, and by tests/test_cli.py on 2^20 inputs), several
// times faster than glibc's tanhf (which goes through expm1f): recurrent cells spend much of
// their time here.
//   |x| < 2^-12      tanh x = x to within half an ulp (the x^3/3 term is below it); keeps -0
//   |x| < 0.625      x + x^3 p(x^2): p of degree 4 fitted to (tanh x - x) / x^3 by weighted
//                    least squares in double (relative error 4.5e-9 before float rounding),
//                    as a sum in double of exact products of float coefficients and powers
//                    of z = x^2 rounded to float; then x + (x z) p in mlbc_maddf (template
//                    maddf): every product that is added is exact, so contraction-proof
//   beyond           1 - 2 / (e^2|x| + 1), with the sign of x: the result is >= 0.55, so the
//                    subtraction loses nothing; |x| is clamped at 9.25, where it rounds to 1
//   NaN              NaN
// All three are computed and one is selected by bit masks, not branches: inputs of both
// signs and sizes are the rule in a recurrent cell, and mispredicted branches cost more
// than the unused half.
static float mlbc_tanhf(float x)
{
    uint32_t xb, sign, a, tiny, small, nan, r;
    float z = x * x, z2 = z * z, z3 = z2 * z, z4 = z2 * z2, p, y, big;
    memcpy(&xb, &x, sizeof xb);
    sign = xb & 0x80000000u;
    a = xb ^ sign;                      /* the bits of |x|: they order like the values */
    tiny = -(uint32_t)(a < 0x39800000u);                /* 2^-12 */
    small = -(uint32_t)(a < 0x3f200000u) & ~tiny;       /* 0.625 */
    nan = -(uint32_t)(a > 0x7f800000u);
    p = (float)(-0.33333283442584494 + (double)0.1333147595493466f * z +
                (double)-0.05374217129060633f * z2 + (double)0.02064627168214233f * z3 +
                (double)-0.00571231415503255f * z4);
    y = mlbc_maddf(x * z, p, x);
    a = a < 0x41140000u ? a : 0x41140000u;              /* 9.25 */
    memcpy(&big, &a, sizeof big);
    big = 1.0f - 2.0f / (expf(2.0f * big) + 1.0f);
    memcpy(&r, &y, sizeof r);
    r &= small;
    r |= xb & tiny;
    memcpy(&xb, &big, sizeof xb);
    r |= (xb | sign | (nan & 0x7fc00000u)) & ~(tiny | small);
    memcpy(&y, &r, sizeof y);
    return y;
}
