// Constant weights re-laid out at compile time for the kernel that reads them (for a matrix
// product: B in column panels of 8, w[p][k][l] = B[k][8p + l], zero beyond the last column).
/* ${DOC} */
static const ${T} ${FN}[${LEN}] = {${DATA}
};
