// A part of spectral_tfidf (fragment()): IDF without weights, a row's counts become 1 where
// not 0.
        {
            long c;
            for (c = 0; c < ${W}; c++)
                yr[c] = yr[c] > 0 ? 1.0f : 0.0f;
        }
