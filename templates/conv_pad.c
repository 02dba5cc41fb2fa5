// The zero-padded copy of one image and group of a Conv's input (spatial dimensions padded
// to three): xp[c][PD + id][PH + ih][PW + iw] = x[c][id][ih][iw], 0 elsewhere; xp is
// XD x XH x XW per channel.
/* ${DOC} */
static void ${FN}(const float *restrict x, float *restrict xp)
{
    long c, d, h, w;
    for (c = 0; c < ${CG}; c++)
        for (d = 0; d < ${XD}; d++)
            for (h = 0; h < ${XH}; h++) {
                const long id = d - ${PD}, ih = h - ${PH};
                float *restrict row = xp + ((c * ${XD} + d) * ${XH} + h) * ${XW};
                if (id < 0 || id >= ${ID} || ih < 0 || ih >= ${IH}) {
                    for (w = 0; w < ${XW}; w++)
                        row[w] = 0;
                    continue;
                }
                for (w = 0; w < ${PW}; w++)
                    row[w] = 0;
                for (w = 0; w < ${IW}; w++)
                    row[${PW} + w] = x[((c * ${ID} + id) * ${IH} + ih) * ${IW} + w];
                for (w = ${PW} + ${IW}; w < ${XW}; w++)
                    row[w] = 0;
            }
}
