/* stvm-lab show TRACE.json [--html FILE] [--png FILE], and the page of a run's JSON. */
#ifndef STVM_LAB_SHOW_H
#define STVM_LAB_SHOW_H

/* The show command (argv: its arguments after "show"): 0, 1 (a bad file, a failed
 * write) or 2 (a usage error), with the message on stderr. */
int lab_show(int argc, char **argv);
/* Read the trace JSON at json and write its page at html. 0, or 1 with a message. */
int lab_html_from_json(const char *json, const char *html, const char *title, const char *about);

#endif
