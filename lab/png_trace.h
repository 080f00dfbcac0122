/* show --png: a trace read back from its JSON drawn by gnuplot, as run --png draws a run. */
#ifndef STVM_LAB_PNG_TRACE_H
#define STVM_LAB_PNG_TRACE_H

#include "trace_read.h"

/* 0, or 1 with a message on stderr (no running span, gnuplot missing or failing). */
int lab_png_trace(const lab_trace *t, const char *path, const char *title);

#endif
