/* stvm-lab --png: the trace as a picture drawn by gnuplot (processes down, time across). */
#ifndef STVM_LAB_PNG_H
#define STVM_LAB_PNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <stvm.h>

/* Write the ring of vm as a PNG at path. 0, or 1 with a message on stderr (gnuplot
 * missing or failing). */
int lab_png(stvm_vm *vm, const char *path, const char *title);

/* A new temporary file of the lab's, in $TMPDIR (an absolute path) or /tmp, its name
 * ending in suffix in path[size]: the open descriptor, or -1 with a message on stderr. */
int lab_temp_file(char *path, size_t size, const char *suffix);

/* The data file of both pictures: a new temporary file, its name in path (at least
 * LAB_PNG_DATA_PATH bytes), open for writing; NULL with a message on stderr. */
#define LAB_PNG_DATA_PATH 512
FILE *lab_png_data(char *path);

/* The name of row `row` (1-based) into name[size], for lab_png_draw. */
typedef void lab_png_row_name(void *ctx, size_t row, char *name, size_t size);

/* Both pictures' drawing (run --png from a VM's ring, show --png from a JSON file):
 * gnuplot draws the intervals of data_path, one per line "row first_seq end_seq
 * first_ms end_ms", as path: rows 1..nrows named by row_name, a panel across the event
 * sequence and, when timed, one across ms from the start titled `title: who runs,
 * time_title`. The title and names may come from a file: quotes, backslashes and
 * control characters are replaced. data_path is removed. 0, or 1 with a message on
 * stderr (gnuplot missing or failing). */
int lab_png_draw(const char *path, const char *title, const char *data_path, size_t nrows,
                 bool timed, const char *time_title, lab_png_row_name *row_name, void *ctx);

#endif
