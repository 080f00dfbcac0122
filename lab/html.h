/* --html: a trace read back from its JSON as one self-contained HTML page (a lane per
 * process, a mark per instant, zoom, the run queue at a moment, the text timeline). */
#ifndef STVM_LAB_HTML_H
#define STVM_LAB_HTML_H

#include "trace_read.h"

/* The most spans and marks a page carries: past it the page shows the first ones (in
 * the file's order) and says where it stopped, so that a bench trace of millions of
 * events still opens in a second. The text timeline inside it stops at LAB_HTML_MAX_LINES. */
#define LAB_HTML_MAX_ITEMS 20000
#define LAB_HTML_MAX_LINES 5000

/* Write t as a page at path. title names it; about (NULL: none) is shown under the title,
 * one paragraph per line ("set-up: ...\nquestion: ..."). 0, or -1 with a message in err
 * (nothing is left at path). */
int lab_html_write(const lab_trace *t, const char *path, const char *title, const char *about,
                   char *err, size_t errsize);

/* The page's template, lab/html_page.html (the Makefile makes it a C string). */
extern const char lab_html_page[];

#endif
