/*
 * The benchmark tool's --trace (suite bench): every command of build/stvm-bench traces
 * the one cell its options select into Trace Event JSON that tests/trace_check.py
 * accepts, and refuses --trace when the options select more cells (or none with a VM);
 * stvm-lab show --html draws the file as one page. The runs are tiny (a few hundred
 * events). Run from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"

/* The exit status of `stvm-bench ARGS --trace FILE`, its output thrown away. */
static int run_bench(const char *args, const char *json)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --trace %s --format csv", args, json);
    tool_output r = bench_run_tool(cmd);
    tool_output_free(&r);
    return r.status;
}

/* Whether the file holds text (the files here are small: read whole). */
static bool file_has(const char *path, const char *text)
{
    char *buf = file_slurp(path);
    bool found = strstr(buf, text) != NULL;
    free(buf);
    return found;
}

/* Run the command traced: status 0, JSON that trace_check.py accepts, holding `want`. */
static void traced(const char *args, const char *want)
{
    char json[] = "/tmp/stvm-bench-trace-XXXXXX.json", cmd[512];
    close(mkstemps(json, 5));
    cr_assert_eq(run_bench(args, json), 0, "stvm-bench %s --trace failed", args);
    snprintf(cmd, sizeof cmd, "python3 tests/trace_check.py %s > /dev/null", json);
    cr_expect_eq(system(cmd), 0, "stvm-bench %s: %s fails tests/trace_check.py", args, json);
    cr_expect(file_has(json, want), "stvm-bench %s: no %s in %s", args, want, json);
    unlink(json);
}

/* Refused with a usage error (status 2), and no file left. */
static void refused(const char *args)
{
    char json[] = "/tmp/stvm-bench-trace-XXXXXX.json";
    close(mkstemps(json, 5));
    unlink(json);
    cr_expect_eq(run_bench(args, json), 2, "stvm-bench %s --trace was not refused", args);
    cr_expect_neq(access(json, F_OK), 0, "stvm-bench %s left %s", args, json);
    unlink(json);
}

/* ---- each command traces one cell ---------------------------------------------------- */

Test(bench, delay_traces_one_cell, .timeout = 60)
{
    traced("delay --repr us-smallint61 --concurrency 10 --clock sim --window-ms 50",
           "\"name\":\"DelayBenchmark worker#");
}

Test(bench, micro_traces_the_hand_off_and_keeps_the_newest_events, .timeout = 60)
{
    traced("micro --repeat 1 --iterations 2000 --pthread-iterations 1000 --processes 100 "
           "--trace-events 5000", "\"events\":5000,");
}

Test(bench, io_pingpong_traces_its_socket_waits, .timeout = 60)
{
    traced("io --case pingpong --idle-mode poll --repeat 1 --rounds 50", "waiting on fd ");
}

Test(bench, io_thread_pair_traces_the_vm_side, .timeout = 60)
{
    traced("io --case thread-pair --idle-mode poll --repeat 1 --rounds 50", "\"name\":\"ping#");
}

Test(bench, io_many_traces_the_server_vm, .timeout = 120)
{
    traced("io --case many --idle-mode poll --repeat 1 --connections 4 --messages 2",
           "\"name\":\"acceptor#");
}

Test(bench, ffi_traces_a_same_thread_and_a_threaded_callout, .timeout = 60)
{
    traced("ffi --case callout-61 --repeat 1 --calls 1000", "\"name\":\"callout fn1\"");
    traced("ffi --case threaded --repeat 1 --round-trips 100",
           "\"name\":\"callout fn1 (threaded)\"");
}

/* ---- more than one cell, or none with a VM ------------------------------------------- */

Test(bench, trace_of_more_than_one_cell_is_refused_by_every_command)
{
    refused("delay --repr us-smallint61,ms-smallint31 --concurrency 10");
    refused("delay --repr us-smallint61 --concurrency 10,20");
    refused("delay --repr us-smallint61 --concurrency 10 --repeat 2");
    refused("micro --repeat 2");
    refused("io --case pingpong,thread-pair --idle-mode poll --repeat 1");
    refused("io --case pingpong --idle-mode poll,spin --repeat 1");
    refused("ffi --case callout-61,threaded --repeat 1");
}

Test(bench, trace_of_cells_without_a_vm_is_refused)
{
    refused("io --case os-threads --repeat 1");
    refused("ffi --case direct,pthread-sem --repeat 1");
}

Test(bench, trace_events_out_of_range_are_refused)
{
    refused("delay --repr us-smallint61 --concurrency 10 --trace-events 0");
    refused("micro --repeat 1 --trace-events 16777217");
}

/* ---- the trace's page: stvm-lab show --html ------------------------------------------- */

/* stvm-bench writes the trace; the one page of it is the lab's (stvm-bench links no lab
 * object and has no --trace-html). */
Test(bench, trace_file_is_drawn_by_stvm_lab_show_html_and_trace_html_is_gone, .timeout = 60)
{
    char dir[256], args[1024], cmd[1024];
    temp_template(dir, sizeof dir, "stvm-bench-html", "");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "delay --repr us-smallint61 --concurrency 10 --clock sim "
             "--window-ms 50 --format csv --trace %s/t.json", dir);
    tool_output r = tool_run("stvm-bench", args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    tool_output_free(&r);
    snprintf(args, sizeof args, "show %s/t.json --html %s/t.html", dir, dir);
    r = tool_run("stvm-lab", args);
    cr_expect_eq(r.status, 0, "stvm-lab %s: %s", args, r.err);
    tool_output_free(&r);
    snprintf(cmd, sizeof cmd, "python3 tests/lab_html_check.py %s/t.html > /dev/null", dir);
    cr_expect_eq(system(cmd), 0, "the page fails tests/lab_html_check.py");
    r = tool_run("stvm-bench", "delay --clock sim --trace /tmp/never.json --trace-html "
                 "/tmp/never.html");
    cr_expect_eq(r.status, 2, "--trace-html is gone: a usage error");
    tool_output_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}
