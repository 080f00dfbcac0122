/*
 * stvm-bench io on the core's views (suite io_output): a tiny run of the pingpong and
 * many cases (with the os-threads reference) in csv-wide, csv, json and gbench carries
 * io's parameters and metrics under their names, one record per cell, every
 * repetition's samples, the per-repetition ratios and the three targets; the table
 * view shows the two tables for people. Bad values are usage errors. Run from the
 * repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"

#define TINY "io --case pingpong,many --idle-mode poll --repeat 2 --rounds 50 " \
             "--max-seconds 1 --connections 4 --messages 2 --cpu 0 --quiet"

/* A Python check (no single quote in it) over d, the JSON view of TINY: 0 when true. */
/* The check of bench_run.h on TINY's output in one format. */
#define json_check(format, expr) bench_json_check(TINY " --format " format, expr)

Test(io_output, csv_wide_has_a_row_per_cell_with_io_columns, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format csv-wide", &t), 0);
    cr_expect(strstr(t, "case,idle_mode,timeout_ms,rounds,max_seconds,connections_asked,"
                        "messages,message_bytes,status,"
                        "us_per_round_trip,cpu_us_per_round_trip,round_trips_per_second,"
                        "rate_vs_os_threads,cpu_vs_os_threads,wakeups_per_round_trip,"
                        "os_slept_us_per_round_trip,") != NULL, "%s", t);
    cr_expect(strstr(t, ",messages_per_second,kib_per_connection,kib_per_end,"
                        "kib_per_server_end,kib_per_client_end,vm_bytes_per_connection,"
                        "rss_before_bytes,rss_after_bytes,client_rss_before_bytes,"
                        "client_rss_after_bytes,nofile_soft,nofile_hard,note\n") != NULL, "%s", t);
    cr_expect_eq(bench_count(t, "\nos-threads,-,-1,50,1,,,,ok,"), 1, "%s", t);
    cr_expect_eq(bench_count(t, "\npingpong,poll,-1,50,1,,,,ok,"), 1, "%s", t);
    cr_expect_eq(bench_count(t, "\nmany,poll,-1,,,4,2,64,"), 1, "%s", t);
    free(t);
}

Test(io_output, csv_long_has_every_repetition_of_every_cell, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format csv", &t), 0);
    cr_expect_eq(bench_count(t, "\nio,pingpong,poll,-1,50,1,,,,ok,us_per_round_trip,us,lower,"
                          "sample,"), 2, "%s", t);
    cr_expect_eq(bench_count(t, "\nio,pingpong,poll,-1,50,1,,,,ok,rate_vs_os_threads,x,higher,"
                          "sample,"), 2, "%s", t);
    cr_expect_eq(bench_count(t, ",kib_per_end,KiB,lower,sample,"), 2, "%s", t);
    free(t);
}

Test(io_output, json_carries_samples_ratios_and_targets, .timeout = 60)
{
    cr_expect_eq(json_check("json", "[r[\"case\"] for r in d[\"results\"]] == "
                                    "[\"os-threads\", \"pingpong\", \"many\"]"), 0);
    cr_expect_eq(json_check("json", "all(len(m[\"samples\"]) == 2 for r in d[\"results\"] "
                                    "for m in r[\"metrics\"] if m[\"name\"] in "
                                    "(\"us_per_round_trip\", \"cpu_us_per_round_trip\", "
                                    "\"voluntary_switches_per_round_trip\"))"), 0);
    cr_expect_eq(json_check("json", "[len(m[\"samples\"]) for r in d[\"results\"] for m in "
                                    "r[\"metrics\"] if m[\"name\"] == \"rate_vs_os_threads\"] "
                                    "== [2, 2, 0]"), 0, "os-threads and pingpong: a ratio per "
                                                        "repetition; many: none");
    cr_expect_eq(json_check("json", "d[\"results\"][0][\"metrics\"][3][\"samples\"] == "
                                    "[1, 1]"), 0, "the reference against itself");
    cr_expect_eq(json_check("json", "[t[\"metric\"] for t in d[\"targets\"]] == "
                                    "[\"rate_vs_os_threads\", \"connections\", \"kib_per_end\"]"
                                    " and d[\"targets\"][1][\"verdict\"] == \"not judged\""),
                 0, "connections is not judged when fewer than 10,000 are asked");
    cr_expect_eq(json_check("json", "d[\"parameters\"][\"connections\"] == 4 and "
                                    "[m[\"name\"] for m in d[\"results\"][2][\"metrics\"]]"
                                    "[-2:] == [\"nofile_soft\", \"nofile_hard\"]"), 0);
}

Test(io_output, gbench_times_are_the_round_trip_in_ns, .timeout = 60)
{
    cr_expect_eq(json_check("gbench", "len([b for b in d[\"benchmarks\"] if b[\"run_type\"] == "
                                      "\"iteration\"]) == 6 and all(b[\"time_unit\"] == \"ns\" "
                                      "for b in d[\"benchmarks\"])"), 0);
    cr_expect_eq(json_check("gbench", "any(b[\"name\"].startswith(\"io/many/idle_mode:poll/\") "
                                      "and \"kib_per_end\" in b for b in d[\"benchmarks\"])"),
                 0);
}

Test(io_output, table_shows_the_round_trips_and_many_tables, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY, &t), 0);
    cr_expect(strstr(t, "Round trips (many: one message echoed)\ncase") != NULL, "%s", t);
    cr_expect(strstr(t, "\nMany connections\nidle ") != NULL, "%s", t);
    cr_expect(strstr(t, "KiB/srv") != NULL && strstr(t, "rate/os") != NULL, "%s", t);
    free(t);
}

Test(io_output, bad_values_are_usage_errors_before_anything_runs)
{
    char *t;
    cr_expect_eq(bench_run_stdout("io --timeout-ms 0", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("io --case pingpong,ping", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("io --connections 21845", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("io --message-bytes 513", &t), 2);
    free(t);
}
