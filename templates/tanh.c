// tanh for float, at most 1 ulp from the correctly rounded result (checked against double
// tanh on every 7th float bit pattern) and about 3x faster than glibc's tanhf, which goes
// through expm1f; recurrent cells spend most of their time here.
//   |x| < 2^-12      tanh x = x to within half an ulp (the x^3/3 term is below it); keeps -0
//   |x| < 0.625      x + x^3 p(x^2): p of degree 4 fitted to (tanh x - x) / x^3 by weighted
//                    least squares in double (relative error 4.5e-9 before float rounding)
//   |x| <= 9         1 - 2 / (e^2|x| + 1), with the sign of x: the result is >= 0.55, so the
//                    subtraction loses nothing
//   beyond (or inf)  +-1: tanh 9 is within 3e-8 of 1
static float mlbc_tanhf(float x)
{
    float a = fabsf(x), z;
    if (a < 0x1p-12f)
        return x;
    if (a < 0.625f) {
        z = x * x;
        return x + x * z * (-0.33333283442584494f + z * (0.1333147595493466f +
               z * (-0.05374217129060633f + z * (0.02064627168214233f +
               z * -0.00571231415503255f))));
    }
    if (a > 9.0f)
        return copysignf(1.0f, x);
    return copysignf(1.0f - 2.0f / (expf(2.0f * a) + 1.0f), x);
}
