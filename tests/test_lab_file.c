/*
 * The lab's scenario files (suite lab_file; docs/scenario-format.md): the built-in
 * scenarios' expected answers hold under `stvm-lab check`; the example written from the
 * format's documentation alone prints and writes exactly its expected output; a stated
 * answer that does not hold is explained, status 1; every broken file of tests/lab/broken
 * is refused with FILE:LINE:COL and what was expected, status 2; a failing step stops the
 * run with its place; a deadlock is an outcome, not an error; the built-in folder can be
 * another (STVM_LAB_SCENARIOS). Runs build/stvm-lab from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

/* The lab's ARGS: exit status, stdout and stderr (helpers.h's tool_run). */
static int lab(const char *args, char *out, char *err, size_t size)
{
    tool_output r = tool_run("stvm-lab", args);
    snprintf(out, size, "%s", r.out);
    snprintf(err, size, "%s", r.err);
    tool_output_free(&r);
    return r.status;
}

/* A scenario file with text in $TMPDIR; its path into path. */
static void write_scenario(char *path, size_t size, const char *text)
{
    temp_template(path, size, "stvm-lab-file", ".scenario");
    int fd = mkstemps(path, 9);
    cr_assert_geq(fd, 0, "mkstemps");
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static bool same_file(const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    return system(cmd) == 0;
}

Test(lab_file, every_built_in_scenario_states_an_expected_answer_that_holds, .timeout = 120)
{
    static char out[65536], err[65536];
    cr_assert_eq(lab("list", out, err, sizeof out), 0, "%s", err);
    int scenarios = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[128], args[256], o[4096], e[4096];
        cr_assert_eq(sscanf(line, "%127s", name), 1);
        snprintf(args, sizeof args, "check %s", name);
        cr_expect_eq(lab(args, o, e, sizeof o), 0, "%s: %s%s", name, o, e);
        cr_expect_not_null(strstr(o, "the expected answer holds"), "%s: %s", name, o);
        scenarios++;
    }
    glob_t files;
    cr_assert_eq(glob("lab/scenarios/*.scenario", 0, NULL, &files), 0);
    cr_assert_eq((size_t)scenarios, files.gl_pathc, "stvm-lab list named %d scenarios, lab/scenarios "
                 "holds %zu", scenarios, files.gl_pathc);
    cr_assert_geq(scenarios, 24, "the twelve, the three that teach the concurrency kit, and the "
                  "nine that reproduce upstream reports (docs/upstream.md)");
    globfree(&files);
}

/* An example of lab/scenarios/examples: it prints and writes exactly its expected output
 * (tests/lab/NAME.txt and .json), and its expected answer holds with `assertions`. */
static void example_runs_as_expected(const char *name, int assertions)
{
    char file[256], json[512], args[2048], out[4096], err[4096], golden[256], holds[512];
    snprintf(file, sizeof file, "lab/scenarios/examples/%s.scenario", name);
    temp_template(json, sizeof json, "stvm-lab-file", ".json");
    close(mkstemps(json, 5));
    snprintf(args, sizeof args, "run %s --trace %s < /dev/null", file, json);
    tool_output r = tool_run("stvm-lab", args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(golden, sizeof golden, "tests/lab/%s.txt", name);
    char *want = file_slurp(golden);
    cr_expect_str_eq(r.out, want, "the text differs from %s", golden);
    free(want);
    tool_output_free(&r);
    snprintf(golden, sizeof golden, "tests/lab/%s.json", name);
    cr_expect(same_file(json, golden), "the JSON differs from %s", golden);
    unlink(json);
    snprintf(args, sizeof args, "check %s", file);
    cr_expect_eq(lab(args, out, err, sizeof out), 0, "%s%s", out, err);
    snprintf(holds, sizeof holds, "%s: the expected answer holds (%d assertions)\n", file, assertions);
    cr_expect_str_eq(out, holds);
}

/* lab/scenarios/examples/bounded_buffer.scenario was written from
 * docs/scenario-format.md alone (it is the document's complete example). */
Test(lab_file, the_example_written_from_the_format_alone_runs_as_expected, .timeout = 60)
{
    example_runs_as_expected("bounded_buffer", 4);
}

/* The steps of the concurrency kit no built-in scenario uses: condition queues (wait,
 * signal and signal-all on N), try-take, peek, flush, join. */
Test(lab_file, the_condition_queue_peek_flush_and_join_example_runs_as_expected, .timeout = 60)
{
    example_runs_as_expected("monitor_queues_and_join", 6);
}

/* A file and the built-in name of the same scenario print the same bytes. */
Test(lab_file, a_built_in_scenario_run_as_a_file_prints_its_expected_output, .timeout = 30)
{
    tool_output r = tool_run("stvm-lab", "run lab/scenarios/mutex_handoff.scenario < /dev/null");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = file_slurp("tests/lab/mutex_handoff.txt");
    cr_expect_str_eq(r.out, want);
    free(want);
    tool_output_free(&r);
}

Test(lab_file, an_expected_answer_that_does_not_hold_is_explained_with_status_1, .timeout = 30)
{
    char out[8192], err[4096];
    cr_assert_eq(lab("check tests/lab/check_fails.scenario", out, err, sizeof out), 1, "%s%s", out, err);
    static const char *const want[] = {
        "tests/lab/check_fails.scenario:32: expected: order high mutex-enter m, middle finished\n"
        "  but 'middle finished' (first at seq 75, 2.000 ms) comes before 'high mutex-enter m' "
        "(first at seq 79, 2.000 ms)\n",
        "tests/lab/check_fails.scenario:33: expected: at 1.000 ms high mutex-enter m\n"
        "  but 'high mutex-enter m' first happens at seq 79, 2.000 ms\n",
        "tests/lab/check_fails.scenario:34: expected: never high mutex-wait m low\n"
        "  but 'high mutex-wait m low' happens 1 time, first at seq 58, 1.000 ms\n",
        "tests/lab/check_fails.scenario:35: expected: count 3 main switch high preempted\n"
        "  but 'main switch high preempted' happens 1 time, first at seq 8, 0.000 ms\n",
        "the answer stated: high gets the mutex at 1 ms, before middle works\n",
        "tests/lab/check_fails.scenario: the expected answer does not hold (4 of 5 assertions failed)\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect_not_null(strstr(out, want[i]), "missing:\n%s\nin:\n%s", want[i], out);
    cr_expect_null(strstr(out, ":36:"), "outcome finished holds, and is not named: %s", out);
}

/* Each file of tests/lab/broken and the one message it must get, on stderr, status 2. */
Test(lab_file, each_broken_file_is_refused_with_its_line_column_and_what_was_expected)
{
    static const struct {
        const char *file, *message;
    } cases[] = {
        {"unknown_step", "4:5: expected a step: wait, signal, signal-all, enter, exit, put, take, "
                         "try-take, peek, flush, delay, work, checkpoint, yield, spawn, suspend, resume, "
                         "terminate, priority, interrupt, join, send, read, outside, repeat, ensure "
                         "or end, found 'wiat'"},
        {"undeclared_semaphore", "3:12: no semaphore or monitor named 'wake' is declared"},
        {"priority_out_of_range", "2:23: a priority is 1 to 80, not 90"},
        {"repeat_without_end", "4:5: this repeat has no 'end' (the 'end' at line 6, indented as its "
                               "process, closed it, and the file ended inside the process)"},
        {"wrong_kind", "5:10: 'm' is a mutex (declared at line 2), expected a semaphore or monitor"},
        {"missing_unit", "3:12: expected a unit (ms or us) at the end of the line"},
        {"bad_expect", "5:18: expected an event kind as the timeline names it (switch, sem-wait, "
                       "mutex-enter, finished, ...), found 'finishd'"},
        {"no_title", "1:1: no 'title:' (a one-line summary, which 'stvm-lab list' shows)"},
        {"cost_too_high", "2:13: a modelled cost is at most 1000 us"},
        {"cost_unknown_operation", "2:6: expected switch, signal, wait or delay, found 'jump'"},
        {"condition_queue_of_a_semaphore", "4:10: 's' is a semaphore (declared at line 2), expected a "
                                           "monitor (a condition queue is a monitor's)"},
        {"condition_queue_out_of_range", "4:15: a monitor's condition queue is 0 to 7, not 8"},
        {"pharo_monitor_wait", "5:10: 'm' is Pharo's Monitor (declared at line 2): its steps are "
                               "enter and exit, without a timeout (its critical:)"},
        {"osvm764_fix_without_its_mode", "2:1: an osvm764- setting needs 'idle-mode osvm764'"},
        {"suspend_primitive_unknown", "3:28: a suspend primitive is 88, 568 or 578, not 89"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[512], out[4096], err[4096], want[1024];
        snprintf(args, sizeof args, "run tests/lab/broken/%s.scenario", cases[i].file);
        snprintf(want, sizeof want, "stvm-lab: tests/lab/broken/%s.scenario:%s\n", cases[i].file,
                 cases[i].message);
        cr_expect_eq(lab(args, out, err, sizeof out), 2, "%s", cases[i].file);
        cr_expect_str_empty(out, "%s printed: %s", cases[i].file, out);
        cr_expect_str_eq(err, want, "%s", cases[i].file);
        /* check reads the file with the same parser */
        snprintf(args, sizeof args, "check tests/lab/broken/%s.scenario", cases[i].file);
        cr_expect_eq(lab(args, out, err, sizeof out), 2, "check %s", cases[i].file);
        cr_expect_str_eq(err, want, "check %s", cases[i].file);
    }
}

Test(lab_file, a_file_that_cannot_be_read_is_refused_with_status_2)
{
    char out[4096], err[4096];
    cr_expect_eq(lab("run no/such/file.scenario", out, err, sizeof out), 2);
    cr_expect_not_null(strstr(err, "no/such/file.scenario: cannot be read"), "%s", err);
}

/* A step whose call fails stops the run: the timeline so far, then its place. */
Test(lab_file, a_failing_step_stops_the_run_with_its_place_and_status_1, .timeout = 30)
{
    char path[512], args[1024], out[8192], err[4096], want[1024];
    write_scenario(path, sizeof path,
                   "title: an exit of a mutex nobody entered\n"
                   "mutex m\n"
                   "process main priority 40 start 0 ms\n"
                   "    exit m\n"
                   "end\n");
    snprintf(args, sizeof args, "run %s", path);
    cr_expect_eq(lab(args, out, err, sizeof out), 1);
    snprintf(want, sizeof want,
             "stvm-lab: %s:4:5: at 0.000 ms, main: exit: caller does not own the mutex or monitor\n", path);
    cr_expect_str_eq(err, want);
    cr_expect_not_null(strstr(out, "main#2               finished"), "the timeline is printed: %s", out);
    unlink(path);
}

static const char deadlock[] =
    "title: two mutexes taken in opposite orders\n"
    "mutex a\n"
    "mutex b\n"
    "process left priority 40 start 0 ms\n"
    "    enter a\n"
    "    yield\n"
    "    enter b\n"
    "end\n"
    "process right priority 40 start 0 ms\n"
    "    enter b\n"
    "    yield\n"
    "    enter a\n"
    "end\n"
    "expect\n"
    "    outcome deadlock\n"
    "    order left mutex-wait b right, right mutex-wait a left\n"
    "end\n";

Test(lab_file, a_deadlock_is_an_outcome_told_after_the_timeline_and_checkable, .timeout = 30)
{
    char path[512], args[1024], out[8192], err[4096];
    write_scenario(path, sizeof path, deadlock);
    snprintf(args, sizeof args, "run %s", path);
    cr_expect_eq(lab(args, out, err, sizeof out), 0, "%s", err);
    cr_expect_not_null(strstr(out, "\noutcome: deadlock: no process can ever run again\n"
                                   "  left (40) waits on mutex b\n"
                                   "  right (40) waits on mutex a\n"),
                       "%s", out);
    snprintf(args, sizeof args, "check %s", path);
    cr_expect_eq(lab(args, out, err, sizeof out), 0, "%s%s", out, err);
    unlink(path);
}

Test(lab_file, check_refuses_a_scenario_that_states_no_expected_answer)
{
    char path[512], args[1024], out[4096], err[4096], want[1024];
    write_scenario(path, sizeof path, "title: no answer\nprocess main priority 40 start 0 ms\nend\n");
    snprintf(args, sizeof args, "check %s", path);
    cr_expect_eq(lab(args, out, err, sizeof out), 2);
    snprintf(want, sizeof want, "stvm-lab: %s: no expect block: the scenario states no answer to check\n", path);
    cr_expect_str_eq(err, want);
    unlink(path);
}

Test(lab_file, check_takes_exactly_one_scenario)
{
    char out[4096], err[4096];
    cr_expect_eq(lab("check", out, err, sizeof out), 2);
    cr_expect_not_null(strstr(err, "check needs one scenario's name or file"), "%s", err);
    cr_expect_eq(lab("check priority_preemption mutex_handoff", out, err, sizeof out), 2);
}

/* STVM_LAB_SCENARIOS names another folder of built-in scenarios. */
Test(lab_file, the_built_in_folder_can_be_named_by_STVM_LAB_SCENARIOS)
{
    char dir[512], path[600], out[4096], err[4096];
    temp_template(dir, sizeof dir, "stvm-lab-dir", "");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/only_one.scenario", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("title: the one scenario here\nprocess main priority 40 start 0 ms\nend\n", f);
    fclose(f);
    setenv("STVM_LAB_SCENARIOS", dir, 1);
    cr_expect_eq(lab("list", out, err, sizeof out), 0, "%s", err);
    cr_expect_str_eq(out, "only_one  the one scenario here\n");
    cr_expect_eq(lab("run only_one", out, err, sizeof out), 0, "%s", err);
    cr_expect(strncmp(out, "scenario: only_one\n", 19) == 0, "%s", out);
    cr_expect_eq(lab("run priority_preemption", out, err, sizeof out), 2);
    unsetenv("STVM_LAB_SCENARIOS");
    unlink(path);
    rmdir(dir);
}
