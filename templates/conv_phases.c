// The zero-padded input of one image and group of a Conv strided along W, copied as its
// phases (compiler/ops/op_conv.c, gemm_plan): padded row y = PH + ih and column x = PW + iw
// of channel c go to row y / SH and column x / SW of phase (y % SH, x % SW), each phase XH x
// XW, the channel's SH x SW phases in a row: xp[c][y % SH][x % SW][y / SH][x / SW]. The
// buffer is zeroed (ZERO; or by the caller, once), then every input row is dealt out to its
// SW phases (DEAL: one loop of constant trip count over the columns all phases have, its
// loads interleaved, which gcc -O2 vectorises, then the last columns some have). Phases no
// tap reads are not written (SKIP: their rows; DEAL: their columns).
/* ${DOC} */
static void ${FN}(const float *restrict x, float *restrict xp)
{
    long c, ih, j;
${ZERO}    ${FOR_C}
        for (ih = 0; ih < ${IH}; ih++) {
${SKIP}            const float *restrict xr = x + (c * ${IH} + ih) * ${IW};
            float *restrict yr = xp + ((c * ${SH} + (${PH} + ih) % ${SH}) * ${SW} * ${XH} +
                                       (${PH} + ih) / ${SH}) * ${XW};
${DEAL}        }
}
