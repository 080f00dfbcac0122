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

/* `stvm-bench ARGS` with stdout and stderr kept (helpers.h's tool_run). */
static inline tool_output bench_run_tool(const char *args)
{
    return tool_run("stvm-bench", args);
}

/* `stvm-bench ARGS` with stdout into *text (the caller frees) and stderr dropped;
 * answers the exit status. */
static inline int bench_run_stdout(const char *args, char **text)
{
    tool_output r = bench_run_tool(args);
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
