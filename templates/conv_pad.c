// The zero-padded copy of one image and group of a Conv's input (spatial dimensions padded
// to three): xp[c][PD + id][PH + ih][PW + iw] = x[c][id][ih][iw], 0 elsewhere; xp is
// XD x XH x XW per channel. Where the taps are read in place, XW leaves max(PW, PE) zeros
// between rows, not PW + PE: a row's right padding is the next row's left (compiler/ops/
// op_conv.c, gemm_plan). Each input row r = (c * ID + id) * IH + ih is copied into place
// (ROW declares the indices of row r, DST is its place in xp); the rest is zeroed once a
// call, before the first group's copy, and never written after (a memset a group: 9% of a
// grouped conv1d's time).
/* ${DOC} */
static void ${FN}(const float *restrict x, float *restrict xp)
{
    ${FOR_R} {
${ROW}        mlbc_copy(xp + ${DST}, x + r * ${IW}, sizeof(float) * ${IW});
    }
}
