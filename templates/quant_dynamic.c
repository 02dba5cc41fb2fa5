// DynamicQuantizeLinear: uint8 quantization of x[N] with a scale and zero point from its
// range extended to include 0, as the ONNX reference: scale = (max - min) / 255,
// zero point = saturate(round(0 - min / scale)), y = saturate(round(x / scale) + zero point),
// rounding half to even. An all-zero x gives scale 0, zero point 0 and y = 0.
/* ${DOC} */
static void ${FN}(const float *restrict x, uint8_t *restrict y, float *restrict y_scale,
                  uint8_t *restrict y_zero_point)
{
    float lo = 0, hi = 0, s, z;
    long i;
    for (i = 0; i < ${N}; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    s = (hi - lo) / 255.0f;
    z = s != 0 ? nearbyintf(0 - lo / s) : 0;
    z = !(z >= 0) ? 0 : z > 255 ? 255 : z;
    y_scale[0] = s;
    y_zero_point[0] = (uint8_t)z;
    for (i = 0; i < ${N}; i++) {
        float v = s != 0 ? nearbyintf(x[i] / s) + z : z;
        y[i] = (uint8_t)(!(v >= 0) ? 0 : v > 255 ? 255 : v);
    }
}
