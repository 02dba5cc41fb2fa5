// A part of spectral_tfidf (fragment()): the scan of a row for the pool's n-grams of one
// length: the distinct ones, sorted by items, and the output column each counts in.
        {   /* ${GL}-grams: ${M} in the pool */
            static const int64_t gram[${M}][${GL}] = {${GRAMS}};
            static const long col[${M}] = {${COLS}};
            long d, s;
            for (d = 1; d <= ${DMAX}; d++)
                for (s = 0; s + ${LAST} * d < ${LEN}; s++) {
                    long lo = 0, hi = ${M};
                    while (lo < hi) {
                        const long mid = lo + (hi - lo) / 2;
                        int c = 0;
                        long k;
                        for (k = 0; k < ${GL} && !c; k++) {
                            const int64_t v = (int64_t)xr[s + k * d];
                            c = gram[mid][k] < v ? -1 : gram[mid][k] > v;
                        }
                        if (!c) {
                            yr[col[mid]] += 1;
                            break;
                        }
                        if (c < 0)
                            lo = mid + 1;
                        else
                            hi = mid;
                    }
                }
        }
