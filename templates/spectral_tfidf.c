// TfIdfVectorizer: each of the ROWS rows of x (LEN items) is scanned for the pool's n-grams
// (SCANS, one spectral_tfidf_scan a length): n items at positions s, s + d, ..., s + (n - 1) d
// for every skip distance d = 1 .. MAXSKIP + 1 (d = 1 only for 1-grams). The pool's n-grams of
// each length are sorted and found by bisection; each occurrence adds 1 to its output column
// (the counts are exact in float below 2^24). FINAL then does the mode's last step: nothing
// (TF, TFIDF without weights), 1 where a column was seen (IDF, spectral_tfidf_seen), or the
// column's weights (spectral_tfidf_weight).
/* ${DOC} */
static void ${FN}(const ${IT} *restrict x, float *restrict y)
{
    long r;
    ${FOR_R} {
        const ${IT} *xr = x + r * ${LEN};
        float *yr = y + r * ${W};
        memset(yr, 0, ${W} * sizeof *yr);
${SCANS}${FINAL}    }
}
