// Det: determinant of each of B M x M matrices by LU decomposition with partial pivoting
// in double (the first largest |pivot| wins a tie, so it is deterministic); the product of
// the pivots, negated for each row swap.
/* ${DOC} */
static void ${FN}(const ${T} *restrict x, ${T} *restrict y)
{
    double a[${MM}];
    ${FOR_B} {
        double det = 1;
        for (long i = 0; i < ${MM}; i++)
            a[i] = ${LOAD};
        for (long c = 0; c < ${M}; c++) {
            long p = c;
            for (long r = c + 1; r < ${M}; r++)
                if (fabs(a[r * ${M} + c]) > fabs(a[p * ${M} + c]))
                    p = r;
            if (a[p * ${M} + c] == 0) {
                det = 0;
                break;
            }
            if (p != c) {
                for (long j = 0; j < ${M}; j++) {
                    const double t = a[c * ${M} + j];
                    a[c * ${M} + j] = a[p * ${M} + j];
                    a[p * ${M} + j] = t;
                }
                det = -det;
            }
            det *= a[c * ${M} + c];
            for (long r = c + 1; r < ${M}; r++) {
                const double f = a[r * ${M} + c] / a[c * ${M} + c];
                for (long j = c + 1; j < ${M}; j++)
                    a[r * ${M} + j] = mlbc_madd(-f, a[c * ${M} + j], a[r * ${M} + j]);
            }
        }
        y[b] = ${STORE};
    }
}
