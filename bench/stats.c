/*
 * stvm-bench: a log-linear histogram for wake-up lateness, which records millions of
 * samples in a fixed 15 KiB (median, min and max live with the record, record.c).
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- histogram ------------------------------------------------------------------------
 * Values 0..63 have a bucket each. A value v >= 64 with highest set bit e (6..63) falls
 * into the group of e, split into 32 equal sub-buckets by the 5 bits below bit e. */

static size_t hist_index(uint64_t v)
{
    if (v < 64)
        return (size_t)v;
    int e = 63 - __builtin_clzll(v);
    size_t sub = (size_t)((v >> (e - 5)) & (BENCH_HIST_SUB - 1));
    return 64 + (size_t)(e - 6) * BENCH_HIST_SUB + sub;
}

/* The largest value that lands in bucket i. */
static uint64_t hist_upper(size_t i)
{
    if (i < 64)
        return i;
    int e = (int)((i - 64) / BENCH_HIST_SUB) + 6;
    uint64_t width = 1ull << (e - 5);
    return (1ull << e) + ((i - 64) % BENCH_HIST_SUB + 1) * width - 1;
}

void bench_hist_record(bench_hist *h, uint64_t v)
{
    h->buckets[hist_index(v)]++;
    h->count++;
    if (v > h->max)
        h->max = v;
}

uint64_t bench_hist_quantile(const bench_hist *h, double q)
{
    if (!h->count)
        return 0;
    if (q >= 1)
        return h->max;
    /* q > 0 with count >= 1 gives a rank >= 1; q <= 0 asks for the smallest. */
    uint64_t rank = q > 0 ? (uint64_t)ceil(q * (double)h->count) : 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < BENCH_HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            uint64_t u = hist_upper(i);
            return u < h->max ? u : h->max;
        }
    }
    return h->max;
}
