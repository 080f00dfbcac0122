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

#include "helpers.h"

#define TINY "delay --clock sim --repr ms-smallint31,us-largeint31 --concurrency 10,20 " \
             "--window-ms 20 --repeat 2 --quiet"

/* `stvm-bench ARGS` with stdout in a fresh file (its name into out, read whole into
 * *text, the caller frees); answers the exit status. */
static int run_bench(const char *args, char **text)
{
    char bench[1024], cmd[4096], out[] = "/tmp/stvm-bench-delay-XXXXXX";
    tool_path("stvm-bench", bench, sizeof bench);
    close(mkstemp(out));
    snprintf(cmd, sizeof cmd, "%s %s > %s 2> /dev/null", bench, args, out);
    int rc = system(cmd);
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    *text = malloc((size_t)size + 1);
    cr_assert_not_null(*text);
    (*text)[fread(*text, 1, (size_t)size, f)] = 0;
    fclose(f);
    unlink(out);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

Test(delay_output, csv_wide_has_a_row_per_representation_and_n_with_every_figure, .timeout = 60)
{
    char *t;
    cr_assert_eq(run_bench(TINY " --format csv-wide", &t), 0);
    cr_expect(strstr(t, "case,concurrency,delay_clock,smallint_bits,timer_slack_us,window_ms,"
                        "status,delays_per_second,us_per_delay,cpu_us_per_delay,"
                        "boxed_per_delay,large_ops_per_delay,late_p50_us,late_p99_us,"
                        "late_max_us") != NULL, "%s", t);
    cr_expect_eq(count(t, "\nms-smallint31,"), 2, "%s", t);
    cr_expect_eq(count(t, "\nus-largeint31,"), 2, "%s", t);
    cr_expect(strstr(t, "\nus-largeint31,20,us,31,50,20,ok,") != NULL, "%s", t);
    cr_expect(strstr(t, "# clock: sim") != NULL, "%s", t);
    free(t);
}

Test(delay_output, csv_long_has_both_repetitions_of_each_figure, .timeout = 60)
{
    char *t;
    cr_assert_eq(run_bench(TINY " --format csv", &t), 0);
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
    cr_assert_eq(run_bench(TINY " --format json", &t), 0);
    cr_expect(strstr(t, "\"schema\":") != NULL, "%s", t);
    cr_expect(strstr(t, "\"us_per_delay\"") != NULL, "%s", t);
    cr_expect(strstr(t, "\"late_p99_us\"") != NULL, "%s", t);
    cr_expect(strstr(t, "#ConcurrentDelays: 20 . Count: ") != NULL, "%s", t);
    free(t);
}

Test(delay_output, gbench_has_a_time_per_delay_for_each_record, .timeout = 60)
{
    char *t;
    cr_assert_eq(run_bench(TINY " --format gbench", &t), 0);
    cr_expect(strstr(t, "\"benchmarks\"") != NULL, "%s", t);
    cr_expect(strstr(t, "\"time_unit\": \"us\"") != NULL, "%s", t);
    cr_expect(count(t, "\"aggregate_name\": \"median\"") == 4, "%s", t);
    free(t);
}

Test(delay_output, table_shows_the_seed_lines_and_the_summary, .timeout = 60)
{
    char *t;
    cr_assert_eq(run_bench(TINY, &t), 0);
    cr_expect(strstr(t, "DelayBenchmark us-largeint31...") != NULL, "%s", t);
    cr_expect_eq(count(t, "#ConcurrentDelays: 10 . Count: "), 2, "%s", t);
    cr_expect(strstr(t, "relative performance") != NULL, "%s", t);
    cr_expect(strstr(t, "LargeInteger ops per delay") != NULL, "%s", t);
    free(t);
}

Test(delay_output, bad_values_are_usage_errors)
{
    char *t;
    cr_expect_eq(run_bench("delay --repr us-smallint62", &t), 2);
    free(t);
    cr_expect_eq(run_bench("delay --repr us-smallint61,us-smallint61", &t), 2);
    free(t);
    cr_expect_eq(run_bench("delay --concurrency 0", &t), 2);
    free(t);
    cr_expect_eq(run_bench("delay --clock fast", &t), 2);
    free(t);
    cr_expect_eq(run_bench("delay --timer-slack-us 0,1,2,3,4,5,6,7,8", &t), 2);
    free(t);
}
