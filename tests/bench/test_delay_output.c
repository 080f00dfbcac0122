/*
 * stvm-bench delay on the core's views (suite delay_output): a tiny sweep on the
 * simulated clock (no waiting) in csv, json and gbench carries the command's
 * parameters and metrics under their names, one record per (representation, N), and
 * the table view shows the seed's lines and the summary. Bad values are usage errors.
 * Run from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"

#define TINY "delay --clock sim --repr ms-smallint31,us-largeint31 --concurrency 10,20 " \
             "--window-ms 20 --repeat 2 --quiet"

Test(delay_output, csv_wide_has_a_row_per_representation_and_n_with_every_figure, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format csv-wide", &t), 0);
    cr_expect(strstr(t, "case,concurrency,delay_clock,smallint_bits,timer_slack_us,window_ms,"
                        "status,delays_per_second,us_per_delay,cpu_us_per_delay,"
                        "boxed_per_delay,large_ops_per_delay,late_p50_us,late_p99_us,"
                        "late_max_us") != NULL, "%s", t);
    cr_expect_eq(bench_count(t, "\nms-smallint31,"), 2, "%s", t);
    cr_expect_eq(bench_count(t, "\nus-largeint31,"), 2, "%s", t);
    cr_expect(strstr(t, "\nus-largeint31,20,us,31,50,20,ok,") != NULL, "%s", t);
    cr_expect(strstr(t, "# clock: sim") != NULL, "%s", t);
    free(t);
}

Test(delay_output, csv_long_has_both_repetitions_of_each_figure, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format csv", &t), 0);
    cr_expect(strstr(t, "delay,ms-smallint31,10,ms,31,50,20,ok,delays_per_second,1/s,higher,"
                        "sample,1,") != NULL, "%s", t);
    cr_expect(strstr(t, "delay,ms-smallint31,10,ms,31,50,20,ok,delays_per_second,1/s,higher,"
                        "sample,2,") != NULL, "%s", t);
    cr_expect(strstr(t, "large_ops_per_delay,,lower,median,,") != NULL, "%s", t);
    free(t);
}

Test(delay_output, json_carries_the_metrics_and_the_tables, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format json", &t), 0);
    cr_expect(strstr(t, "\"schema\":") != NULL, "%s", t);
    cr_expect(strstr(t, "\"us_per_delay\"") != NULL, "%s", t);
    cr_expect(strstr(t, "\"late_p99_us\"") != NULL, "%s", t);
    cr_expect(strstr(t, "#ConcurrentDelays: 20 . Count: ") != NULL, "%s", t);
    free(t);
}

Test(delay_output, gbench_has_a_time_per_delay_for_each_record, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format gbench", &t), 0);
    cr_expect(strstr(t, "\"benchmarks\"") != NULL, "%s", t);
    /* In ns whatever the metric's unit (compare.py prints whole units): a delay's time
     * is 1e9 / delays_per_second, exactly, on the simulated clock. */
    cr_expect_eq(bench_json_check(TINY " --format gbench",
                                  "all(b[\"time_unit\"] == \"ns\" and abs(b[\"real_time\"] * "
                                  "b[\"delays_per_second\"] - 1e9) < 1e-3 for b in "
                                  "d[\"benchmarks\"] if b[\"run_type\"] == \"iteration\")"), 0);
    cr_expect(bench_count(t, "\"aggregate_name\": \"median\"") == 4, "%s", t);
    free(t);
}

Test(delay_output, table_shows_the_seed_lines_and_the_summary, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY, &t), 0);
    cr_expect(strstr(t, "DelayBenchmark us-largeint31...") != NULL, "%s", t);
    cr_expect_eq(bench_count(t, "#ConcurrentDelays: 10 . Count: "), 2, "%s", t);
    cr_expect(strstr(t, "relative performance") != NULL, "%s", t);
    cr_expect(strstr(t, "LargeInteger ops per delay") != NULL, "%s", t);
    free(t);
}

Test(delay_output, table_and_markdown_show_the_command_tables_before_the_records,
     .timeout = 60)
{
    static const char *const views[][2] = {{"table", "\ncase "}, {"markdown", "\n| case "}};
    for (int i = 0; i < 2; i++) {
        char *t, args[256];
        snprintf(args, sizeof args, TINY " --format %s", views[i][0]);
        cr_assert_eq(bench_run_stdout(args, &t), 0);
        const char *summary = strstr(t, "Summary (peak over N"), *records = strstr(t, views[i][1]);
        cr_assert(summary && records, "%s: no summary or record table:\n%s", views[i][0], t);
        cr_expect(summary < records, "%s: the records come before the summary:\n%s",
                  views[i][0], t);
        free(t);
    }
}

Test(delay_output, bad_values_are_usage_errors)
{
    char *t;
    cr_expect_eq(bench_run_stdout("delay --repr us-smallint62", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("delay --repr us-smallint61,us-smallint61", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("delay --concurrency 0", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("delay --clock fast", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("delay --timer-slack-us 0,1,2,3,4,5,6,7,8", &t), 2);
    free(t);
}
