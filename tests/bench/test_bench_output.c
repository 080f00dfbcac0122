/*
 * stvm-bench's output (suite bench_output): build/stvm-bench micro with tiny counts in
 * every format, several exports in one run, --help's defaults, the errors of a bad word
 * and an unwritable path (refused before anything runs), and the progress lines. The
 * formats are checked by what reads them: the header and row counts of the CSVs,
 * Python's json module for the JSON views. Run from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"

#define TINY "--repeat 2 --iterations 2000 --pthread-iterations 200 --processes 50"
#define MICRO_RECORDS 8     /* handoff .. raw-switch, pthread-sem, memory */
#define MICRO_RECORDS_TEXT "8"   /* the same, inside a Python expression */

/* Lines of text that start with prefix ("" for every line). */
static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *line = text; *line;) {
        n += strncmp(line, prefix, strlen(prefix)) == 0;
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : line + strlen(line);
    }
    return n;
}

/* The first line that does not start with '#'. */
static const char *first_data_line(const char *text)
{
    while (*text == '#')
        text = strchr(text, '\n') + 1;
    return text;
}

/* A Python check on the JSON in path: exit status 0 when `expr` (over d; no single
 * quote in it) is true. */
static int python_json(const char *path, const char *expr)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c 'import json,sys; d=json.load(open(\"%s\")); "
             "sys.exit(0 if (%s) else 1)'", path, expr);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Run micro in one format with its stdout saved to a file, for Python. */
static void json_run(const char *format, char *path, const char *expr)
{
    char args[512];
    close(mkstemps(path, 5));
    snprintf(args, sizeof args, "micro " TINY " --quiet --format %s --export-%s %s", format,
             format, path);
    tool_output r = bench_run_tool(args);
    cr_assert_eq(r.status, 0, "micro --format %s: status %d: %s", format, r.status, r.err);
    cr_expect_eq(python_json(path, expr), 0, "%s view fails: %s", format, expr);
    unlink(path);
    tool_output_free(&r);
}

Test(bench_output, csv_long_has_a_row_per_sample_under_its_header, .timeout = 60)
{
    tool_output r = bench_run_tool("micro " TINY " --quiet --format csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strncmp(r.out, "# stvm_version: ", 16) == 0, "no context comment first");
    const char *header = "command,case,backend,iterations,status,metric,unit,better,"
                         "statistic,repetition,value\n";
    cr_expect(strncmp(first_data_line(r.out), header, strlen(header)) == 0,
              "the header is not the first line after the comments");
    cr_expect_eq(count_lines(r.out, "micro,handoff,asm-x86_64,2000,ok,time_ns,ns,lower,sample,"),
                 2, "not one row per repetition of the hand-off");
    cr_expect_eq(count_lines(r.out, "micro,memory,"), 6 * 4, "memory: 6 metrics, 4 rows each");
    tool_output_free(&r);
}

Test(bench_output, csv_wide_has_one_row_per_record, .timeout = 60)
{
    tool_output r = bench_run_tool("micro " TINY " --quiet --format csv-wide");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *data = first_data_line(r.out);
    cr_expect(strncmp(data, "case,backend,iterations,status,time_ns,", 39) == 0);
    cr_expect_eq(count_lines(data, ""), 1 + MICRO_RECORDS);
    tool_output_free(&r);
}

Test(bench_output, json_parses_with_schema_context_parameters_results_targets, .timeout = 60)
{
    char path[] = "/tmp/stvm-bench-json-XXXXXX.json";
    json_run("json", path, "d[\"schema\"] == \"stvm-bench/1\" and \"date\" in d[\"context\"] and "
             "d[\"parameters\"][\"repeat\"] == 2 and len(d[\"results\"]) == " MICRO_RECORDS_TEXT " and "
             "len(d[\"results\"][0][\"metrics\"][0][\"samples\"]) == 2 and len(d[\"targets\"]) == 4");
}

Test(bench_output, gbench_has_benchmarks_with_real_time, .timeout = 60)
{
    char path[] = "/tmp/stvm-bench-gbench-XXXXXX.json";
    json_run("gbench", path, "\"num_cpus\" in d[\"context\"] and len(d[\"benchmarks\"]) > 0 and "
             "all(\"real_time\" in b and \"cpu_time\" in b for b in d[\"benchmarks\"]) and "
             "any(b[\"name\"] == \"micro/handoff/backend:asm-x86_64/iterations:2000\" and "
             "b[\"run_type\"] == \"iteration\" for b in d[\"benchmarks\"]) and "
             "any(b.get(\"aggregate_name\") == \"median\" for b in d[\"benchmarks\"])");
}

Test(bench_output, markdown_has_a_table_rule, .timeout = 60)
{
    tool_output r = bench_run_tool("micro " TINY " --quiet --format markdown");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\n|---") != NULL, "no |--- line in:\n%s", r.out);
    tool_output_free(&r);
}

Test(bench_output, several_exports_are_written_in_one_run, .timeout = 60)
{
    const char *formats[] = {"json", "csv", "csv-wide", "markdown", "gbench"};
    char paths[5][64], args[2048];
    int len = snprintf(args, sizeof args, "micro " TINY " --quiet");
    for (int i = 0; i < 5; i++) {
        snprintf(paths[i], sizeof paths[i], "/tmp/stvm-bench-export-XXXXXX");
        close(mkstemp(paths[i]));
        len += snprintf(args + len, sizeof args - (size_t)len, " --export-%s %s", formats[i],
                        paths[i]);
    }
    tool_output r = bench_run_tool(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "time_ns") != NULL, "no table on stdout");
    for (int i = 0; i < 5; i++) {
        char *text = file_slurp(paths[i]);
        cr_expect(strstr(text, "handoff") != NULL, "--export-%s wrote no record", formats[i]);
        cr_expect(strstr(r.err, paths[i]) != NULL, "no line on stderr for %s", paths[i]);
        free(text);
        unlink(paths[i]);
    }
    tool_output_free(&r);
}

/* The "(... default: X)" at the end of an option's help in --help's text. */
static void expect_default(const char *help, const char *option, const char *def)
{
    const char *at = strstr(help, option);
    cr_assert_not_null(at, "--help does not list %s", option);
    const char *next = strstr(at + 1, "\n  --");
    const char *d = strstr(at, def);
    cr_expect(d && (!next || d < next), "--help shows no '%s' for %s", def, option);
}

Test(bench_output, help_shows_the_real_default_of_each_option)
{
    tool_output r = bench_run_tool("micro --help");
    cr_assert_eq(r.status, 0);
    expect_default(r.out, "  --repeat K", "default: 5)");
    expect_default(r.out, "  --iterations N", "default: 2000000)");
    expect_default(r.out, "  --pthread-iterations N", "default: 200000)");
    expect_default(r.out, "  --processes N", "default: 100000)");
    expect_default(r.out, "  --cpu N", "default: -1)");
    expect_default(r.out, "  --format WORD", "default:\n");
    expect_default(r.out, "  --trace-events N", "default: 4194304)");
    cr_expect_eq(r.err[0], 0, "--help wrote on stderr: %s", r.err);
    tool_output_free(&r);
}

Test(bench_output, a_bad_word_is_refused_with_the_allowed_words)
{
    tool_output r = bench_run_tool("micro --format x");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--format wants one of table, markdown, csv, csv-wide, json, "
                            "gbench, not 'x'") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "Try 'stvm-bench micro --help'.") != NULL, "%s", r.err);
    cr_expect_eq(r.out[0], 0);
    tool_output_free(&r);
}

/* The default counts would run for seconds: a refusal prints no progress and no table. */
Test(bench_output, an_unwritable_export_is_refused_before_anything_runs, .timeout = 10)
{
    tool_output r = bench_run_tool("micro --export-json /nonexistent-stvm-folder/a.json");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "'/nonexistent-stvm-folder/a.json': its folder does not exist")
              != NULL, "%s", r.err);
    cr_expect_eq(count_lines(r.err, "stvm-bench micro: ["), 0, "it ran: %s", r.err);
    cr_expect_eq(r.out[0], 0);
    tool_output_free(&r);
    r = bench_run_tool("micro --export-csv /tmp");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "it is a folder") != NULL, "%s", r.err);
    tool_output_free(&r);
}

Test(bench_output, quiet_prints_nothing_on_stderr_and_progress_is_a_line_per_cell, .timeout = 60)
{
    tool_output r = bench_run_tool("micro " TINY " --quiet");
    cr_expect_eq(r.status, 0);
    cr_expect_eq(r.err[0], 0, "--quiet wrote: %s", r.err);
    tool_output_free(&r);
    r = bench_run_tool("micro " TINY);
    cr_expect_eq(r.status, 0);
    /* memory, then each repetition of the VM cases and of the pthread reference */
    cr_expect_eq(count_lines(r.err, "stvm-bench micro: ["), 1 + 2 + 2, "%s", r.err);
    cr_expect_eq(count_lines(r.err, ""), 5, "other lines on stderr: %s", r.err);
    cr_expect(strchr(r.err, '\r') == NULL, "a carriage return in the progress");
    tool_output_free(&r);
}

Test(bench_output, no_context_leaves_out_what_differs_between_runs_and_machines, .timeout = 60)
{
    /* delay on the simulated clock: with --no-context it also leaves out the figures
     * that are the simulation's own real time (its CPU, its wall window). */
    const char *args = "delay --clock sim --repr us-smallint61,ms-smallint31 --concurrency "
                       "10,20 --window-ms 20 --quiet --no-context --format json";
    cr_expect_eq(bench_json_check(args, "d[\"context\"][\"date\"] == \"-\" and "
                                        "d[\"context\"][\"host_cpu\"] == \"-\" and "
                                        "d[\"context\"][\"kernel\"] == \"-\" and "
                                        "d[\"context\"][\"stvm_backend\"] == \"-\" and "
                                        "d[\"context\"][\"load_avg\"] == [0, 0, 0] and "
                                        "d[\"context\"][\"clock\"] == \"sim\""),
                 0);
    char *a, *b;
    cr_assert_eq(bench_run_stdout(args, &a), 0);
    cr_assert_eq(bench_run_stdout(args, &b), 0);
    cr_expect_str_eq(a, b, "a simulated run with --no-context is the same bytes twice");
    free(a);
    free(b);
}
