/* stvm-lab --png: the trace as a picture drawn by gnuplot (processes down, time across). */
#ifndef STVM_LAB_PNG_H
#define STVM_LAB_PNG_H

#include <stvm.h>

/* Write the ring of vm as a PNG at path. 0, or 1 with a message on stderr (gnuplot
 * missing or failing). */
int lab_png(stvm_vm *vm, const char *path, const char *title);

#endif
