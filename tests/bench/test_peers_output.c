/*
 * stvm-bench peers without the peers (suite peers_output): make check never builds
 * bench/peers/ (make bench-peers does), so here the command runs with --peers-dir
 * pointing at an empty folder. It must still run stvm's side, a record per (system, N),
 * and say of each missing peer that it was not run and why, in a skipped record and a
 * note, with exit status 0; the same for the ping-pong. Tiny counts on the real clock (a
 * 20 ms window at N = 20, 1000 hand-offs).
 * Run from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_run.h"

/* An empty folder under $TMPDIR (or /tmp): no peer is there. */
static char empty_dir[512];
static void make_empty_dir(void)
{
    temp_template(empty_dir, sizeof empty_dir, "stvm-peers-test", "");
    cr_assert_not_null(mkdtemp(empty_dir));
}
static void remove_empty_dir(void)
{
    rmdir(empty_dir);
}

TestSuite(peers_output, .init = make_empty_dir, .fini = remove_empty_dir);

#define TINY "peers --concurrency 20 --window-ms 20 --repeat 1 --handoffs 1000 --quiet " \
             "--repr ms-smallint31,us-smallint61 --peers-dir "

Test(peers_output, help_names_the_options_and_the_peers)
{
    char *t;
    cr_assert_eq(bench_run_stdout("peers --help", &t), 0);
    cr_expect(strstr(t, "--concurrency") != NULL, "%s", t);
    cr_expect(strstr(t, "--peers-dir") != NULL, "%s", t);
    cr_expect(strstr(t, "go,libuv,erlang") != NULL, "%s", t);
    free(t);
}

Test(peers_output, without_peers_stvm_rows_are_measured_and_each_peer_is_a_note, .timeout = 60)
{
    char args[1024];
    snprintf(args, sizeof args, TINY "%s --format csv-wide", empty_dir);
    tool_output r = bench_run_tool(args);
    cr_assert_eq(r.status, 0, "%s\n%s", r.out, r.err);
    cr_expect(strstr(r.out, "\nms-smallint31,20,stvm,20,50,,,ok,") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\nus-smallint61,20,stvm,20,50,,,ok,") != NULL, "%s", r.out);
    const char *peers[] = {"go", "libuv", "erlang"};
    for (int i = 0; i < 3; i++) {
        char row[64], note[64];
        snprintf(row, sizeof row, "\n%s,20,%s,20,,,,skipped,", peers[i], peers[i]);
        cr_expect(strstr(r.out, row) != NULL, "%s: %s", row, r.out);
        snprintf(note, sizeof note, "stvm-bench peers: %s not run: not built", peers[i]);
        cr_expect(strstr(r.err, note) != NULL, "%s: %s", note, r.err);
    }
    /* The ping-pong: stvm's measured, Go's and Erlang's skipped, none for libuv. */
    cr_expect_eq(bench_count(r.out, "\npingpong,"), 3, "%s", r.out);
    cr_expect(strstr(r.out, ",stvm,,,semaphores,1000,ok,") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, ",erlang,,,messages,1000,skipped,") != NULL, "%s", r.out);
    free(r.out);
    free(r.err);
}

Test(peers_output, without_peers_the_table_shows_stvm_and_a_note_per_peer, .timeout = 60)
{
    char args[1024], *t;
    snprintf(args, sizeof args, TINY "%s", empty_dir);
    cr_assert_eq(bench_run_stdout(args, &t), 0);
    cr_expect(strstr(t, "stvm ms-smallint31") != NULL, "%s", t);
    cr_expect(strstr(t, "stvm us-smallint61") != NULL, "%s", t);
    /* Each peer three times (the table's footer, its record's note, the run's note), and
     * Go's and Erlang's ping-pong records once more. */
    cr_expect_eq(bench_count(t, "not built: no "), 3 * 3 + 2, "%s", t);
    cr_expect(strstr(t, "Semaphore ping-pong") != NULL, "%s", t);
    cr_expect(strstr(t, "Not run: go") != NULL, "%s", t);
    free(t);
}

Test(peers_output, bad_values_are_usage_errors)
{
    char *t;
    cr_expect_eq(bench_run_stdout("peers --peer java", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("peers --concurrency 0", &t), 2);
    free(t);
}
