// Max/Min helpers: integer forms, and float forms where a NaN operand wins (numpy's rule).
#define max_(a, b) ((a) > (b) ? (a) : (b))
#define min_(a, b) ((a) < (b) ? (a) : (b))
#define fmax_nan(a, b) ((a) != (a) || (a) > (b) ? (a) : (b))
#define fmin_nan(a, b) ((a) != (a) || (a) < (b) ? (a) : (b))
