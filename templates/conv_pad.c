// The zero-padded copy of one image and group of a Conv's input (spatial dimensions padded
// to three): xp[c][PD + id][PH + ih][PW + iw] = x[c][id][ih][iw], 0 elsewhere; xp is
// XD x XH x XW per channel.
/* ${DOC} */
static void ${FN}(const float *restrict x, float *restrict xp)
{
    long c, d, h, w;
    ${FOR_C}
        ${FOR_D}
            for (h = 0; h < ${XH}; h++) {
                const long id = d - ${PD}, ih = h - ${PH};
                float *restrict row = xp + ((c * ${XD} + d) * ${XH} + h) * ${XW};
                if (id < 0 || id >= ${ID} || ih < 0 || ih >= ${IH}) {
                    ${FOR_WX}
                        row[w] = 0;
                    continue;
                }
                ${FOR_WP}
                    row[w] = 0;
                ${FOR_WI}
                    row[${PW} + w] = x[((c * ${ID} + id) * ${IH} + ih) * ${IW} + w];
                for (w = ${PW} + ${IW}; w < ${XW}; w++)
                    row[w] = 0;
            }
}
