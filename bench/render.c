/*
 * stvm-bench: picking a renderer, and writing stdout and every --export-* in one run
 * (hyperfine's several exporters at once).
 */
#include "render.h"

#include <errno.h>
#include <string.h>

void bench_render(FILE *f, bench_fmt fmt, const bench_results *r,
                  const bench_invocation *inv)
{
    /* A renderer and its variant: markdown of the table, csv-wide of the csv. */
    static const struct {
        void (*fn)(FILE *, const bench_results *, const bench_invocation *, bool);
        bool variant;
    } views[BENCH_NFORMATS] = {
        [BENCH_FMT_TABLE] = {bench_render_table, false},
        [BENCH_FMT_MARKDOWN] = {bench_render_table, true},
        [BENCH_FMT_CSV] = {bench_render_csv, false},
        [BENCH_FMT_CSV_WIDE] = {bench_render_csv, true},
        [BENCH_FMT_JSON] = {bench_render_json, false},
        [BENCH_FMT_GBENCH] = {bench_render_gbench, false},
    };
    if ((unsigned)fmt < BENCH_NFORMATS)
        views[fmt].fn(f, r, inv, views[fmt].variant);
}

int bench_output(const bench_results *r, const bench_invocation *inv)
{
    bench_render(stdout, inv->common.format, r, inv);
    int rc = fflush(stdout) == 0 ? BENCH_EXIT_OK : BENCH_EXIT_FAIL;
    for (int k = 0; k < BENCH_NFORMATS; k++) {
        const char *path = inv->common.exports[k];
        FILE *f = path ? fopen(path, "w") : NULL;
        if (path && f)
            bench_render(f, (bench_fmt)k, r, inv);
        if (path && (!f || fclose(f) != 0)) {
            fprintf(stderr, "stvm-bench %s: cannot write %s: %s\n", inv->command->name, path,
                    strerror(errno));
            rc = BENCH_EXIT_FAIL;
        } else if (path) {
            fprintf(stderr, "stvm-bench %s: %s written to %s\n", inv->command->name,
                    bench_format_names[k], path);
        }
    }
    return rc;
}
