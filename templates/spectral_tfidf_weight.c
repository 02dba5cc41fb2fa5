// A part of spectral_tfidf (fragment()): a row's counts weighted (TFIDF) or, where not 0,
// replaced by their column's weight (IDF); VALUE says which.
        {
            static const float weight[${W}] = {${WEIGHTS}};
            long c;
            for (c = 0; c < ${W}; c++)
                yr[c] = ${VALUE};
        }
