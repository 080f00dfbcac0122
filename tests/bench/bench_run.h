/*
 * Running build/stvm-bench from the *_output suites: one way to run the tool with some
 * arguments and keep what it wrote, so each suite checks views, not plumbing.
 */
#ifndef STVM_TESTS_BENCH_RUN_H
#define STVM_TESTS_BENCH_RUN_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

typedef struct bench_run {
    int status;             /* the exit status, -1 when it did not exit */
    char *out, *err;        /* stdout and stderr, whole (allocated; bench_run_free) */
} bench_run;

/* The whole file at path, allocated; fails the test if it cannot be read. */
static inline char *bench_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s not written", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)size + 1);
    cr_assert_not_null(buf);
    buf[fread(buf, 1, (size_t)size, f)] = 0;
    fclose(f);
    return buf;
}

/* `stvm-bench ARGS` (ARGS as a shell reads them) with stdout and stderr kept. */
static inline bench_run bench_run_tool(const char *args)
{
    char tool[1024], cmd[8192];
    char out[] = "/tmp/stvm-bench-out-XXXXXX", err[] = "/tmp/stvm-bench-err-XXXXXX";
    tool_path("stvm-bench", tool, sizeof tool);
    close(mkstemp(out));
    close(mkstemp(err));
    snprintf(cmd, sizeof cmd, "%s %s > %s 2> %s", tool, args, out, err);
    int rc = system(cmd);
    bench_run r = {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, bench_slurp(out), bench_slurp(err)};
    unlink(out);
    unlink(err);
    return r;
}

static inline void bench_run_free(bench_run *r)
{
    free(r->out);
    free(r->err);
}

/* `stvm-bench ARGS` with stdout into *text (the caller frees) and stderr dropped;
 * answers the exit status. */
static inline int bench_run_stdout(const char *args, char **text)
{
    bench_run r = bench_run_tool(args);
    free(r.err);
    *text = r.out;
    return r.status;
}

/* Whether the JSON `stvm-bench ARGS` prints on stdout makes the Python expression expr
 * (over d, the document) true: 0 when it does, 1 when not, else the failure's status. */
static inline int bench_json_check(const char *args, const char *expr)
{
    char tool[1024], cmd[8192];
    tool_path("stvm-bench", tool, sizeof tool);
    snprintf(cmd, sizeof cmd, "%s %s 2> /dev/null | /usr/bin/python3 -c "
             "'import json,sys; d=json.load(sys.stdin); sys.exit(0 if (%s) else 1)'",
             tool, args, expr);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* How many times what occurs in text. */
static inline int bench_count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

#endif
