/* The text timeline of a trace read back from its JSON (stvm-lab show, and the HTML
 * page's plain-text part), in the columns of stvm_trace_write_text. */
#ifndef STVM_LAB_TIMELINE_H
#define STVM_LAB_TIMELINE_H

#include "trace_read.h"

/* One line per thing the JSON records, in the file's order: a process entering a state
 * (the state's name as the event), a process leaving the trace ("ends"), an OS sleep
 * ("os-sleep") and each instant (its kind as the event, its object and detail after).
 * max_lines 0: all; otherwise at most that many, then a line saying how many were left
 * out. 0, or -1 when a write fails or memory runs out. */
int lab_timeline_write(const lab_trace *t, FILE *out, size_t max_lines);

#endif
