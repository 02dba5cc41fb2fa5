// Bucketize: the count of boundaries below x, found by binary search in the sorted
// boundaries. It replaces ReduceSum(Cast(Compare(boundaries, x))) over the boundary axis,
// the per-feature quantile preprocessing of MLGO policies, with an exact equivalent.
/* y[i] = number of the ${N} boundaries q with q ${CMP} x[i] (was: ${WAS}) */
static void ${FN}(const ${TX} *restrict x, ${TY} *restrict y)
{
    static const ${TX} q[${N}] = {${Q}};
    ${FOR_I} {
        long lo = 0, hi = ${N};
        while (lo < hi) {
            long mid = (lo + hi) / 2;
            if (q[mid] ${CMP} x[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        y[i] = (${TY})lo;
    }
}
