/*
 * stvm-lab show: any trace JSON stvm wrote (stvm-lab run --trace, stvm-bench --trace)
 * read back and printed as a text timeline, and drawn as an HTML page (--html) or a PNG
 * (--png). run --html goes through the same JSON, so a page made at the run and one made
 * later from its file are the same page.
 */
#include "show.h"
#include "html.h"
#include "png_trace.h"
#include "timeline.h"

#include <stdio.h>
#include <string.h>

int lab_html_from_json(const char *json, const char *html, const char *title, const char *about)
{
    lab_trace t;
    char err[512];
    int rc = lab_trace_read(json, &t, err, sizeof err) == 0 &&
                     lab_html_write(&t, html, title, about, err, sizeof err) == 0
                 ? 0
                 : 1;
    if (rc)
        fprintf(stderr, "stvm-lab: %s\n", err);
    lab_trace_free(&t);
    return rc;
}

int lab_show(int argc, char **argv)
{
    const char *html = NULL, *png = NULL, *json = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--html") == 0 && i + 1 < argc) {
            html = argv[++i];
        } else if (strcmp(argv[i], "--png") == 0 && i + 1 < argc) {
            png = argv[++i];
        } else if (argv[i][0] == '-' || json) {
            fprintf(stderr, "stvm-lab: show: unknown option or extra argument %s\n", argv[i]);
            return 2;
        } else {
            json = argv[i];
        }
    }
    if (!json) {
        fprintf(stderr, "stvm-lab: show needs a trace JSON file (stvm-lab run NAME --trace "
                        "FILE writes one)\n");
        return 2;
    }
    lab_trace t;
    char err[512];
    if (lab_trace_read(json, &t, err, sizeof err) != 0) {
        fprintf(stderr, "stvm-lab: %s\n", err);
        return 1;
    }
    int rc = 0;
    if (lab_timeline_write(&t, stdout, 0) != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "stvm-lab: writing the timeline failed\n");
        rc = 1;
    }
    const char *title = strrchr(json, '/') ? strrchr(json, '/') + 1 : json;
    if (!rc && html && lab_html_write(&t, html, title, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "stvm-lab: %s\n", err);
        rc = 1;
    }
    if (!rc && png)
        rc = lab_png_trace(&t, png, title);
    lab_trace_free(&t);
    return rc;
}
