/*
 * The scenario lab (suite lab): every scenario `build/stvm-lab list` names is run, and
 * its text and Trace Event JSON must equal tests/lab/NAME.txt and NAME.json byte for
 * byte (a changed scheduler rule shows as a diff; `make lab-golden` rewrites them), and
 * the JSON must pass tests/trace_check.py; `list`'s format, `--predict` without a
 * terminal, `--png`'s panels and bad options. Run from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static bool same_file(const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    return system(cmd) == 0;
}

/* "build/stvm-lab ARGS" (ARGS formatted), as a command line. */
static void lab_command(char *cmd, size_t size, const char *fmt, va_list ap)
{
    char lab[1024], args[1024];
    tool_path("stvm-lab", lab, sizeof lab);
    vsnprintf(args, sizeof args, fmt, ap);
    snprintf(cmd, size, "%s %s", lab, args);
}

/* Its output, to read. */
__attribute__((format(printf, 1, 2))) static FILE *lab_open(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    lab_command(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "%s", cmd);
    return f;
}

/* Its exit status (system's). */
__attribute__((format(printf, 1, 2))) static int lab_run(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    lab_command(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

Test(lab, every_scenario_prints_and_writes_exactly_its_expected_output, .timeout = 120)
{
    char cmd[2048], name[128];
    FILE *list = lab_open("list");
    int scenarios = 0;
    while (fscanf(list, "%127s%*[^\n]", name) == 1) {
        char txt[] = "/tmp/stvm-lab-XXXXXX", json[] = "/tmp/stvm-lab-XXXXXX.json", want[512];
        close(mkstemp(txt));
        close(mkstemps(json, 5));
        cr_assert_eq(lab_run("run %s --trace %s < /dev/null > %s", name, json, txt), 0,
                     "%s failed", name);
        snprintf(want, sizeof want, "tests/lab/%s.txt", name);
        cr_expect(same_file(txt, want), "%s's text differs from %s (diff them)", name, want);
        snprintf(want, sizeof want, "tests/lab/%s.json", name);
        cr_expect(same_file(json, want), "%s's JSON differs from %s", name, want);
        snprintf(cmd, sizeof cmd, "python3 tests/trace_check.py %s > /dev/null", json);
        cr_expect_eq(system(cmd), 0, "%s's JSON fails tests/trace_check.py", name);
        unlink(txt);
        unlink(json);
        scenarios++;
    }
    pclose(list);
    cr_assert_geq(scenarios, 12, "stvm-lab list named %d scenarios", scenarios);
}

Test(lab, an_unknown_scenario_is_refused)
{
    cr_assert_neq(lab_run("run no_such_scenario > /dev/null 2>&1"), 0);
}

Test(lab, list_names_one_scenario_per_line_then_two_spaces_and_its_summary)
{
    char line[512];
    FILE *list = lab_open("list");
    int lines = 0;
    while (fgets(line, sizeof line, list)) {
        size_t name = strspn(line, "abcdefghijklmnopqrstuvwxyz0123456789_");
        cr_expect_gt(name, 0u, "line %d starts with no name: %s", lines + 1, line);
        cr_expect(line[name] == '\n' || (line[name] == ' ' && line[name + 1] == ' ' &&
                                          line[name + 2] != ' '),
                  "line %d: the name is not followed by two spaces and text: %s", lines + 1,
                  line);
        lines++;
    }
    pclose(list);
    cr_assert_geq(lines, 12);
}

/* --predict with stdin not a terminal: the set-up and question come first, nothing waits
 * for Enter, and the run follows. */
Test(lab, predict_without_a_terminal_asks_nothing_and_runs, .timeout = 30)
{
    char line[512];
    FILE *out = lab_open("run priority_preemption --predict < /dev/null");
    int setup = 0, question = 0, rule = 0, finished = 0;
    while (fgets(line, sizeof line, out)) {
        setup += strncmp(line, "set-up:", 7) == 0;
        question += strncmp(line, "question:", 9) == 0 && setup;
        rule += strncmp(line, "rule:", 5) == 0 && question;
        finished += strstr(line, " finished") != NULL && rule;
        cr_expect_null(strstr(line, "press Enter"), "it asked: %s", line);
    }
    cr_assert_eq(pclose(out), 0);
    cr_assert_eq(setup, 1);
    cr_assert_eq(question, 1, "the question follows the set-up");
    cr_assert_eq(rule, 1, "the rule follows the question");
    cr_assert_geq(finished, 4, "the timeline follows: main, higher, equal and lower finish");
}

/* A PNG's height from its IHDR chunk (bytes 20..23), 0 if the file is not a PNG. */
static unsigned png_height(const char *path)
{
    unsigned char h[24] = {0};
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, sizeof h, f) : 0;
    if (f)
        fclose(f);
    if (n != sizeof h || memcmp(h, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(h + 12, "IHDR", 4))
        return 0;
    return (unsigned)h[20] << 24 | (unsigned)h[21] << 16 | (unsigned)h[22] << 8 | h[23];
}

static unsigned png_of(const char *scenario)
{
    char png[] = "/tmp/stvm-lab-XXXXXX.png";
    close(mkstemps(png, 4));
    cr_assert_eq(lab_run("run %s --png %s < /dev/null > /dev/null", scenario, png), 0,
                 "%s --png failed", scenario);
    unsigned height = png_height(png);
    unlink(png);
    return height;
}

/* One panel (160 pixels and 28 per process row) when no simulated time passed, a second
 * across time when it did. */
Test(lab, png_draws_a_time_panel_only_for_a_run_that_took_simulated_time, .timeout = 60)
{
    cr_expect_eq(png_of("priority_preemption"), 160u + 28u * 5u,
                 "five processes, everything at time 0: one panel");
    cr_expect_eq(png_of("zn_first_read_legacy"), 2u * (160u + 28u * 3u),
                 "three processes over 1.06 ms: two panels");
}

Test(lab, an_unknown_option_is_refused)
{
    cr_assert_neq(lab_run("run priority_preemption --no-such-option > /dev/null 2>&1"), 0);
}

/* The lab's ARGS run with stdout and stderr read back (helpers.h's tool_run): the exit
 * status (-1 when it did not exit), and each stream's text (cut at size). */
static int lab_streams(const char *args, char *out, char *err, size_t size)
{
    tool_output r = tool_run("stvm-lab", args);
    snprintf(out, size, "%s", r.out);
    snprintf(err, size, "%s", r.err);
    tool_output_free(&r);
    return r.status;
}

Test(lab, help_in_each_spelling_goes_to_stdout_with_status_0_and_names_every_option)
{
    static const char *const spellings[] = {"--help", "-h", "help"};
    char out[4096], err[4096], first[4096] = "";
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(lab_streams(spellings[i], out, err, sizeof out), 0, "%s", spellings[i]);
        cr_expect_str_empty(err, "%s wrote to stderr: %s", spellings[i], err);
        cr_expect(strncmp(out, "usage: stvm-lab list\n", 21) == 0, "%s: %s", spellings[i], out);
        for (const char *const *o = (const char *const[]){"--trace", "--png", "--predict",
                                                            "--version", NULL};
             *o; o++)
            cr_expect_not_null(strstr(out, *o), "%s does not name %s", spellings[i], *o);
        if (i == 0)
            strcpy(first, out);
        else
            cr_expect_str_eq(out, first, "%s differs from --help", spellings[i]);
    }
}

Test(lab, version_in_each_spelling_names_the_tool_the_library_and_the_back_end)
{
    char out[4096], err[4096], want[256];
    /* build/stvm-lab is linked with the assembly back end, whichever this binary has. */
    snprintf(want, sizeof want, "stvm-lab %s (library %s, back end asm-x86_64)\n",
             STVM_VERSION_STRING, stvm_version_string());
    for (const char *const *v = (const char *const[]){"--version", "version", NULL}; *v; v++) {
        cr_assert_eq(lab_streams(*v, out, err, sizeof out), 0, "%s", *v);
        cr_expect_str_empty(err, "%s wrote to stderr: %s", *v, err);
        cr_expect_str_eq(out, want, "%s", *v);
    }
}

Test(lab, a_usage_error_is_told_on_stderr_with_the_usage_and_status_2)
{
    static const char *const bad[] = {"", "no-such-command", "list extra", "run", "--helpx"};
    char out[4096], err[4096];
    for (int i = 0; i < 5; i++) {
        cr_expect_eq(lab_streams(bad[i], out, err, sizeof out), 2, "'%s'", bad[i]);
        cr_expect_str_empty(out, "'%s' wrote to stdout: %s", bad[i], out);
        cr_expect_not_null(strstr(err, "usage: stvm-lab list\n"), "'%s': %s", bad[i], err);
    }
    cr_expect_eq(lab_streams("list extra", out, err, sizeof out), 2);
    cr_expect_not_null(strstr(err, "list takes no arguments"), "%s", err);
    cr_expect_eq(lab_streams("bogus", out, err, sizeof out), 2);
    cr_expect_not_null(strstr(err, "unknown command 'bogus'"), "%s", err);
}
