/*
 * stvm-bench: Pharo 4/5's Random (David N. Smith's Float adaptation of the Park-Miller
 * minimal standard generator, a = 16807, m = 2^31 - 1) and DelayBenchmark's table of
 * 1000 durations drawn from it with seed 42.
 *
 * The arithmetic is the image's, in doubles, step for step: after the first draw the
 * seed is a Float, and nextInt: scales `next` (a Float in [0, 1)) and truncates.
 */
#include "random.h"

#include <math.h>
#include <stdio.h>

/* Random's state: every field a Float, as in the image. */
typedef struct pharo_random {
    double seed, a, m, q, r;
} pharo_random;

/* Random>>initialize, then seed: */
static void pharo_random_init(pharo_random *g, long seed)
{
    g->a = 16807.0;                    /* 16r000041A7 asFloat */
    g->m = 2147483647.0;               /* 16r7FFFFFFF asFloat */
    g->q = trunc(g->m / g->a);         /* (m quo: a) asFloat = 127773 */
    g->r = fmod(g->m, g->a);           /* (m \\ a) asFloat = 2836 */
    g->seed = (double)seed;
}

/* Random>>next: ^ (seed := self nextValue) / m, nextValue inlined. */
static double pharo_random_next(pharo_random *g)
{
    /* hi := (seed quo: q) asFloat. lo := seed - (hi * q). aLoRHi := (a * lo) - (r * hi).
     * answer := aLoRHi > 0.0 ifTrue: [aLoRHi] ifFalse: [aLoRHi + m] */
    double hi = trunc(g->seed / g->q);
    double lo = g->seed - hi * g->q;
    double alorhi = g->a * lo - g->r * hi;
    g->seed = alorhi > 0.0 ? alorhi : alorhi + g->m;
    return g->seed / g->m;
}

void delay_table_generate(int table[DELAY_TABLE_SIZE])
{
    pharo_random g;
    pharo_random_init(&g, DELAY_SEED);
    for (int i = 0; i < DELAY_TABLE_SIZE; i++)
        table[i] = (int)trunc(pharo_random_next(&g) * DELAY_MAX_MS) + 1;   /* nextInt: */
}

bool delay_table_verify(const int table[DELAY_TABLE_SIZE])
{
    static const int first[] = {1, 27, 37, 14, 19, 10, 49};
    long sum = 0;
    for (int i = 0; i < DELAY_TABLE_SIZE; i++) {
        bool bad = table[i] < 1 || table[i] > DELAY_MAX_MS || (i < 7 && table[i] != first[i]);
        if (bad) {
            fprintf(stderr, "stvm-bench: Park-Miller self-check failed: draw %d is %d\n",
                    i + 1, table[i]);
            return false;
        }
        sum += table[i];
    }
    if (sum != 24686)
        fprintf(stderr, "stvm-bench: Park-Miller self-check failed: mean %.3f ms, expected "
                        "24.686\n", sum / 1000.0);
    return sum == 24686;
}
