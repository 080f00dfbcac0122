/*
 * stvm-bench ffi on the core's views (suite ffi_output): a few cases with tiny counts
 * in csv, json and gbench carry each case's record, its metrics and its ratio to the
 * reference; the targets are judged or "not measured" when their case did not run; an
 * unknown case is a usage error. Run from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"

#define TINY "ffi --case ffi_call,callout-61,pthread-sem,threaded --repeat 2 --calls 1000 " \
             "--round-trips 100 --quiet"

Test(ffi_output, csv_wide_has_a_row_per_case_with_its_ratio, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format csv-wide", &t), 0);
    cr_expect(strstr(t, "case,runner,bits,versus,status,ns_per_call,count,ratio,"
                        "us_per_round_trip,p99_us,note") != NULL, "%s", t);
    cr_expect(strstr(t, "\nffi_call,libffi,0,,ok,") != NULL, "%s", t);
    cr_expect(strstr(t, "\ncallout-61,same-thread,61,ffi_call,ok,") != NULL, "%s", t);
    cr_expect(strstr(t, "\nthreaded,worker,61,pthread-sem,ok,") != NULL, "%s", t);
    free(t);
}

Test(ffi_output, csv_long_keeps_each_repetition, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format csv", &t), 0);
    cr_expect(strstr(t, "ffi,callout-61,same-thread,61,ffi_call,ok,ratio,x,lower,sample,2,") !=
              NULL, "%s", t);
    cr_expect(strstr(t, "ffi,threaded,worker,61,pthread-sem,ok,p99_us,us,lower,median,,") !=
              NULL, "%s", t);
    free(t);
}

Test(ffi_output, json_judges_the_targets_that_ran, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format json", &t), 0);
    cr_expect(strstr(t, "\"us_per_round_trip\"") != NULL, "%s", t);
    cr_expect(strstr(t, "same-thread callout at most 2x a bare ffi_call, 61-bit VM") != NULL);
    cr_expect(strstr(t, "not measured") != NULL, "callout-31 and the ticker did not run: %s",
              t);
    free(t);
}

Test(ffi_output, gbench_has_a_time_for_each_case, .timeout = 60)
{
    char *t;
    cr_assert_eq(bench_run_stdout(TINY " --format gbench", &t), 0);
    cr_expect(strstr(t, "\"time_unit\": \"ns\"") != NULL, "%s", t);
    cr_expect(strstr(t, "\"time_unit\": \"us\"") == NULL, "every time in ns: %s", t);
    cr_expect(strstr(t, "\"name\": \"ffi/callout-61/") != NULL, "%s", t);
    free(t);
}

Test(ffi_output, an_unknown_case_is_a_usage_error)
{
    char *t;
    cr_expect_eq(bench_run_stdout("ffi --case callout-62", &t), 2);
    free(t);
    cr_expect_eq(bench_run_stdout("ffi --calls 999", &t), 2);
    free(t);
}
