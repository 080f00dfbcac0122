/*
 * stvm-bench: DelayBenchmark's table of durations, drawn from Pharo 4/5's Random
 * (Park-Miller minimal standard). A leaf: it needs nothing else of the tool.
 */
#ifndef STVM_BENCH_RANDOM_H
#define STVM_BENCH_RANDOM_H

#include <stdbool.h>

#define DELAY_TABLE_SIZE 1000
#define DELAY_SEED 42
#define DELAY_MAX_MS 50

/* DelayBenchmark's table: 1000 draws of nextInt: 50 from Random seed: 42. */
void delay_table_generate(int table[DELAY_TABLE_SIZE]);
/* Check the table against the known first draws and mean (24.686 ms); false and a
 * message on stderr if it differs. */
bool delay_table_verify(const int table[DELAY_TABLE_SIZE]);

#endif
