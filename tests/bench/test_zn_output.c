/*
 * stvm-bench zn on the new core (suite zn_output): tiny runs in csv, json and gbench
 * carry zn's cases, parameters and metrics; --url measures a server that is already
 * running (here one the harness started: no nginx of zn's own) and refuses any host
 * off loopback before sending anything. Real nginx and wrk, as zn always uses; run
 * from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bench/nginx.h"
#include "bench_run.h"

#define TINY "--logging off,subscriber --idle-mode poll --repeat 1 --requests 20 --warmup 2"

TestSuite(zn_output, .timeout = 120);

/* `stvm-bench zn ARGS` with its stdout in out (stderr to the log); answers its exit
 * status. */
static int zn(const char *args, char *out, size_t size)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "zn %s --quiet", args);
    tool_output r = bench_run_tool(cmd);
    snprintf(out, size, "%s", r.out);
    fputs(r.err, stderr);
    tool_output_free(&r);
    return r.status;
}

static void expect_all(const char *out, const char *const *words, const char *what)
{
    for (; *words; words++)
        cr_expect(strstr(out, *words), "%s: no %s in\n%.3000s", what, *words, out);
}

static char out[1 << 20];

Test(zn_output, csv_has_every_case_parameter_and_metric)
{
    cr_assert_eq(zn(TINY " --wrk-seconds 1 --format csv", out, sizeof out), 0, "%s", out);
    static const char *const words[] = {
        "\nzn,off,", "\nzn,subscriber,", "\nzn,wrk,", "idle_mode", "subscriber_cost_us",
        "requests_per_second", "vs_wrk", "us_per_request", "cpu_us_per_request",
        "blocked_first_reads_per_request", "timed_waits_per_request", "mean_wait_us",
        "wrk_p50_us", ",sample,1,", NULL};
    expect_all(out, words, "csv");
}

Test(zn_output, json_and_gbench_views)
{
    cr_assert_eq(zn(TINY " --no-wrk --format json", out, sizeof out), 0, "%s", out);
    static const char *const json[] = {"stvm-bench/1", "\"subscriber\"", "\"idle_mode\"",
                                       "\"blocked_first_reads_per_request\"", "\"samples\"",
                                       NULL};
    expect_all(out, json, "json");
    cr_assert_eq(zn(TINY " --no-wrk --format gbench", out, sizeof out), 0, "%s", out);
    static const char *const gbench[] = {"\"benchmarks\"", "\"real_time\"", "\"cpu_time\"",
                                         "\"time_unit\"", NULL};
    expect_all(out, gbench, "gbench");
}

Test(zn_output, url_measures_a_server_already_running)
{
    nginx_server s;
    cr_assert_eq(nginx_start(&s, NULL), 0, "%s", s.error);
    char args[512];
    snprintf(args, sizeof args, "%s --wrk-seconds 1 --format csv --url http://127.0.0.1:%d%s",
             TINY, s.port, NGINX_PATH_STATIC);
    int rc = zn(args, out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    char url[128];
    nginx_url(&s, NGINX_PATH_STATIC, url, sizeof url);
    cr_expect(strstr(out, url), "the records name the URL %s:\n%.2000s", url, out);
    cr_expect(strstr(out, "\nzn,wrk,"), "wrk runs on the same URL");
    if (s.ipv6) {
        snprintf(args, sizeof args, "%s --no-wrk --format csv --url http://[::1]:%d%s", TINY,
                 s.port, NGINX_PATH_STATIC);
        cr_expect_eq(zn(args, out, sizeof out), 0, "over [::1]: %s", out);
    }
    /* Every response must be a 200: the 404 location fails the cells. */
    snprintf(args, sizeof args, "%s --no-wrk --format csv --url http://localhost:%d%s", TINY,
             s.port, NGINX_PATH_404);
    cr_expect_eq(zn(args, out, sizeof out), 1, "a 404 is not measured: %s", out);
    cr_assert_eq(nginx_stop(&s), 0, "%s", s.error);
}

Test(zn_output, url_off_loopback_or_malformed_is_a_usage_error)
{
    static const char *const bad[] = {
        "http://10.0.0.1/", "http://192.168.1.1:80/x", "http://example.com/",
        "http://127.0.0.2/", "https://127.0.0.1/", "http://[::2]:80/", "http://127.0.0.1:0/",
        "http://127.0.0.1:65536/", "http://127.0.0.1:x/", "http://127.0.0.1/a b", NULL};
    for (const char *const *u = bad; *u; u++) {
        char args[256];
        snprintf(args, sizeof args, "--no-wrk --repeat 1 --url '%s' 2>/dev/null", *u);
        cr_expect_eq(zn(args, out, sizeof out), 2, "--url %s should be refused", *u);
    }
}
