/*
 * The harness around the HTTP experiments (nginx.c, wrk.c): a real nginx
 * started as the current user answers curl on each of its locations as soon as
 * nginx_start returns, wrk measures it through its done() script, and
 * nothing is left behind: not by nginx_stop, nor when the process that started nginx
 * ends by SIGINT, SIGTERM, SIGHUP, SIGPIPE, exit() or (but for its scratch folder)
 * SIGKILL; a signal ignored when nginx started (SIGHUP under nohup) stays ignored; nginx
 * runs on the CPUs it is given, not the caller's. These tests need Debian's nginx, wrk
 * and curl (the HTTP peer; make check installs them); without them they fail, naming
 * the package. They start real processes and wait for real sockets, unlike the VM
 * suites.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "nginx.h"
#include "wrk.h"

/* curl's own time limit for one command (all its requests). */
#define CURL_SECONDS 10

TestSuite(nginx_harness, .timeout = 60);

static void start(nginx_server *s, const nginx_options *o)
{
    int rc = nginx_start(s, o);
    cr_assert_eq(rc, 0, "%s", s->error);
    cr_assert_gt(s->pid, 0);
    cr_assert_gt(s->port, 0);
}

static bool gone(pid_t pid) { return kill(pid, 0) == -1 && errno == ESRCH; }

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* nginx_stop, then: no process, no process group, no scratch folder. */
static void stop_and_check(nginx_server *s)
{
    pid_t pid = s->pid;
    char dir[NGINX_PATH_SIZE];
    snprintf(dir, sizeof dir, "%s", s->dir);
    cr_assert(exists(dir), "the scratch folder %s should exist while nginx runs", dir);
    cr_assert_eq(nginx_stop(s), 0, "%s", s->error);
    cr_expect_eq(s->stopped_by, SIGQUIT, "nginx should end gracefully, ended by signal %d",
                 s->stopped_by);
    cr_assert(gone(pid), "nginx %d is still there after nginx_stop", (int)pid);
    cr_assert(gone(-pid), "nginx's process group %d is still there", (int)pid);
    cr_assert(!exists(dir), "the scratch folder %s is still there", dir);
    cr_assert_eq(nginx_stop(s), 0, "stopping twice does nothing");
}

/* ---- curl as the HTTP peer ---------------------------------------------------------- */

/* What one curl command saw: per transfer its status and new connections (0 when it
 * reused the previous one), every response's headers and (raw) body, one after the
 * other. */
typedef struct fetched {
    int transfers, status[4], connects;
    char head[4096];
    char body[8 * NGINX_DEFAULT_STATIC_SIZE + 256];
    size_t body_len;
} fetched;

static size_t slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    unlink(path);
    return n;
}

/* curl -s [--raw] on host (NULL: 127.0.0.1) path, `requests` times in one command
 * (curl keeps the connection when the server does). */
static void fetch(const nginx_server *s, const char *host, const char *path, int requests,
                  bool raw, fetched *f)
{
    char headf[] = "/tmp/stvm-curl-head-XXXXXX", bodyf[] = "/tmp/stvm-curl-body-XXXXXX";
    close(mkstemp(headf));
    close(mkstemp(bodyf));
    bool v6 = host && strchr(host, ':');
    char url[256], glob[32] = "", cmd[1024];
    snprintf(url, sizeof url, "http://%s%s%s:%d%s", v6 ? "[" : "", host ? host : "127.0.0.1",
             v6 ? "]" : "", s->port, path);
    if (requests > 1) /* curl's glob repeats the URL (-g, for [::1], turns it off) */
        snprintf(glob, sizeof glob, "?[1-%d]", requests);
    /* The bodies, one after the other, to stdout and bodyf; the figures to stderr. */
    snprintf(cmd, sizeof cmd, "curl -s %s --max-time %d %s -D %s -w '%%{stderr}%%{http_code} "
             "%%{num_connects}\\n' '%s%s' 2>&1 > %s", requests > 1 ? "" : "-g", CURL_SECONDS,
             raw ? "--raw" : "", headf, url, glob, bodyf);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "popen: %s", strerror(errno));
    memset(f, 0, sizeof *f);
    int status, connects;
    while (fscanf(p, "%d %d", &status, &connects) == 2) {
        if (f->transfers < 4)
            f->status[f->transfers] = status;
        f->transfers++;
        f->connects += connects;
    }
    int rc = pclose(p);
    slurp(headf, f->head, sizeof f->head);
    f->body_len = slurp(bodyf, f->body, sizeof f->body);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) != 127,
              "curl missing: install Debian's package 'curl' (sh scripts/install-deps.sh)");
    cr_assert_eq(WEXITSTATUS(rc), 0, "curl %s failed with status %d", url, WEXITSTATUS(rc));
    cr_assert_eq(f->transfers, requests, "curl %s: %d responses", url, f->transfers);
}

static bool head_says(const fetched *f, const char *line)
{
    return strcasestr(f->head, line) != NULL;
}

static void expect_static_body(const nginx_server *s, const char *body, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(body[i], nginx_static_byte(s, i), "byte %zu of the static file", i);
}

Test(nginx_harness, static_file)
{
    nginx_server s;
    start(&s, NULL);
    fetched f;
    fetch(&s, NULL, NGINX_PATH_STATIC, 1, false, &f);
    cr_assert_eq(f.status[0], 200, "%s", f.head);
    cr_assert_eq(s.static_size, NGINX_DEFAULT_STATIC_SIZE);
    cr_assert(head_says(&f, "Content-Length: 300\r\n"), "%s", f.head);
    cr_assert(!head_says(&f, "chunked") && !head_says(&f, "Connection: close"), "%s", f.head);
    cr_assert_eq(f.body_len, s.static_size);
    expect_static_body(&s, f.body, s.static_size);
    stop_and_check(&s);
}

Test(nginx_harness, static_file_of_a_given_size)
{
    nginx_options o;
    nginx_options_init(&o);
    o.static_size = 100000;
    nginx_server s;
    start(&s, &o);
    fetched f;
    fetch(&s, NULL, NGINX_PATH_STATIC, 1, false, &f);
    cr_assert_eq(f.status[0], 200);
    cr_assert(head_says(&f, "Content-Length: 100000\r\n"), "%s", f.head);
    stop_and_check(&s);
}

/* nginx closes a keep-alive connection after keepalive_requests (1000 by default). */
Test(nginx_harness, keep_alive_is_unlimited)
{
    nginx_server s;
    start(&s, NULL);
    fetched f;
    fetch(&s, NULL, NGINX_PATH_STATIC, 1500, false, &f);
    cr_assert_eq(f.connects, 1, "1500 requests took %d connections", f.connects);
    cr_assert_eq(f.status[3], 200);
    stop_and_check(&s);
}

Test(nginx_harness, connection_close)
{
    nginx_server s;
    start(&s, NULL);
    fetched f;
    fetch(&s, NULL, NGINX_PATH_CLOSE, 2, false, &f);
    cr_assert_eq(f.status[0], 200, "%s", f.head);
    cr_assert_eq(f.status[1], 200, "%s", f.head);
    cr_assert_eq(f.body_len, 2 * s.static_size);
    cr_assert(head_says(&f, "Connection: close"), "no Connection: close in\n%s", f.head);
    cr_assert_eq(f.connects, 2, "nginx did not close after the first response");
    stop_and_check(&s);
}

Test(nginx_harness, status_404)
{
    nginx_server s;
    start(&s, NULL);
    fetched f;
    fetch(&s, NULL, NGINX_PATH_404, 2, false, &f);
    cr_assert_eq(f.status[0], 404, "%s", f.head);
    cr_assert(head_says(&f, "Content-Length: "), "%s", f.head);
    cr_assert_gt(f.body_len, 0);
    cr_assert_eq(f.connects, 1, "a 404 keeps the connection");
    fetch(&s, NULL, "/elsewhere", 1, false, &f);
    cr_assert_eq(f.status[0], 404, "%s", f.head);
    stop_and_check(&s);
}

/* --raw: curl leaves the chunked encoding in the body, so the chunks can be counted. */
Test(nginx_harness, chunked)
{
    nginx_server s;
    start(&s, NULL);
    fetched f;
    fetch(&s, NULL, NGINX_PATH_CHUNKED, 3, true, &f);
    cr_assert_eq(f.status[2], 200, "%s", f.head);
    cr_assert(head_says(&f, "Transfer-Encoding: chunked"), "not chunked:\n%s", f.head);
    cr_assert(!head_says(&f, "Content-Length"), "%s", f.head);
    cr_assert_eq(f.connects, 1, "a chunked response keeps the connection");
    char body[sizeof f.body];
    size_t n = 0;
    int chunks = 0;
    for (const char *p = f.body;;) {
        char *end;
        long size = strtol(p, &end, 16);
        cr_assert(end != p && end[0] == '\r' && end[1] == '\n', "a chunk size at %s", p);
        p = end + 2;
        if (size == 0)
            break;
        cr_assert_leq(n + (size_t)size, sizeof body);
        memcpy(body + n, p, (size_t)size);
        n += (size_t)size;
        p += size + 2;
        chunks++;
    }
    cr_assert_eq(chunks, 5);
    cr_assert_eq(n, s.chunked_size);
    size_t k = s.static_size;
    cr_assert_eq(body[0], '[');
    expect_static_body(&s, body + 1, k);
    cr_assert_eq(body[1 + k], '|');
    expect_static_body(&s, body + 2 + k, k);
    cr_assert_eq(memcmp(body + 2 + 2 * k, "]\n", 2), 0);
    stop_and_check(&s);
}

Test(nginx_harness, ipv6_loopback)
{
    nginx_server s;
    start(&s, NULL);
    if (!s.ipv6) {
        stop_and_check(&s);
        cr_skip_test("no IPv6 loopback on this machine");
    }
    fetched f;
    fetch(&s, "::1", NGINX_PATH_STATIC, 1, false, &f);
    cr_assert_eq(f.status[0], 200);
    expect_static_body(&s, f.body, s.static_size);
    stop_and_check(&s);
}

/* Ready means the port accepts: the first request after nginx_start is answered. */
Test(nginx_harness, ready_when_started)
{
    nginx_options o;
    nginx_options_init(&o);
    o.master_process = true;
    for (int i = 0; i < 3; i++) {
        nginx_server s;
        start(&s, i == 1 ? &o : NULL);
        fetched f;
        fetch(&s, NULL, NGINX_PATH_STATIC, 1, false, &f);
        cr_assert_eq(f.status[0], 200);
        stop_and_check(&s);
    }
}

Test(nginx_harness, master_and_one_worker)
{
    nginx_options o;
    nginx_options_init(&o);
    o.master_process = true;
    nginx_server s;
    start(&s, &o);
    fetched f;
    fetch(&s, NULL, NGINX_PATH_STATIC, 10, false, &f);
    cr_assert_eq(f.status[3], 200, "%s", f.head);
    cr_assert_eq(f.connects, 1);
    stop_and_check(&s);
}

/* nginx's Cpus_allowed_list from /proc ("0", "0-1", ...). */
static void cpus_of(pid_t pid, char *buf, size_t size)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    buf[0] = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Cpus_allowed_list: %63s", buf) == 1)
            break;
    fclose(f);
    cr_assert(buf[0], "no Cpus_allowed_list in %s", path);
}

/* The caller pinned to CPU 0: nginx runs where o.cpu says, not where it inherits. */
Test(nginx_harness, nginx_runs_on_its_cpu_not_the_callers)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        cr_skip_test("one CPU");
    cpu_set_t zero;
    CPU_ZERO(&zero);
    CPU_SET(0, &zero);
    cr_assert_eq(sched_setaffinity(0, sizeof zero, &zero), 0);
    nginx_options o;
    nginx_options_init(&o);
    o.cpu = 1;
    nginx_server s;
    start(&s, &o);
    char cpus[64];
    cpus_of(s.pid, cpus, sizeof cpus);
    cr_assert_str_eq(cpus, "1");
    stop_and_check(&s);
    o.cpu = -1;
    start(&s, &o);
    cpus_of(s.pid, cpus, sizeof cpus);
    cr_assert_str_neq(cpus, "0", "every CPU, not the caller's one");
    stop_and_check(&s);
}

Test(nginx_harness, wrk_baseline)
{
    nginx_server s;
    start(&s, NULL);
    char url[128], err[1024];
    nginx_url(&s, NGINX_PATH_STATIC, url, sizeof url);
    wrk_options o;
    wrk_options_init(&o);
    o.seconds = 1;
    wrk_result w;
    int rc = wrk_run(&o, url, &w, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_gt(w.requests_per_sec, 0, "%s", w.output);
    cr_assert_gt(w.requests, 0, "%s", w.output);
    cr_assert_eq(w.errors_status, 0, "%s", w.output);
    cr_assert_gt(w.bytes, w.requests * NGINX_DEFAULT_STATIC_SIZE, "%s", w.output);
    cr_assert_gt(w.latency_p50_us, 0, "%s", w.output);
    cr_assert_geq(w.latency_p99_us, w.latency_p50_us, "%s", w.output);
    cr_log_info("wrk -t1 -c1 -d1s on %s: %.0f requests/s, p50 %.0f us, p99 %.0f us", url,
                w.requests_per_sec, w.latency_p50_us, w.latency_p99_us);
    stop_and_check(&s);
}

/* Only the lines after the marker count: wrk's own text (which has a "requests" too)
 * is not read, and a figure missing or not a number fails the parse. */
Test(nginx_harness, wrk_parse)
{
    static const char text[] =
        "Running 1s test @ http://127.0.0.1:8080/static\n"
        "  18893 requests in 1.01s, 9.71MB read\n"
        "requests 5\n"
        "\n" WRK_MARKER "\n"
        "requests 18893\nduration_us 1010000\nbytes 10181427\nerrors_connect 0\n"
        "errors_read 1\nerrors_write 2\nerrors_status 5\nerrors_timeout 3\n"
        "latency_mean_us 254.33\nlatency_stdev_us 850\nlatency_max_us 12530\n"
        "latency_p50_us 31\nlatency_p75_us 74\nlatency_p90_us 551\nlatency_p99_us 3950\n";
    wrk_result w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(wrk_parse(text, &w), 0);
    cr_assert_float_eq(w.requests, 18893, 1e-9);
    cr_assert_float_eq(w.requests_per_sec, 18893 / 1.01, 1e-6);
    cr_assert_float_eq(w.duration_us, 1010000, 1e-9);
    cr_assert_float_eq(w.bytes, 10181427, 1e-9);
    cr_assert_float_eq(w.latency_mean_us, 254.33, 1e-9);
    cr_assert_float_eq(w.latency_stdev_us, 850, 1e-9);
    cr_assert_float_eq(w.latency_max_us, 12530, 1e-9);
    cr_assert_float_eq(w.latency_p50_us, 31, 1e-9);
    cr_assert_float_eq(w.latency_p75_us, 74, 1e-9);
    cr_assert_float_eq(w.latency_p90_us, 551, 1e-9);
    cr_assert_float_eq(w.latency_p99_us, 3950, 1e-9);
    cr_assert_float_eq(w.errors_connect, 0, 1e-9);
    cr_assert_float_eq(w.errors_read, 1, 1e-9);
    cr_assert_float_eq(w.errors_write, 2, 1e-9);
    cr_assert_float_eq(w.errors_status, 5, 1e-9);
    cr_assert_float_eq(w.errors_timeout, 3, 1e-9);
    memset(&w, 0, sizeof w);
    cr_assert_neq(wrk_parse("  18893 requests in 1.01s, 9.71MB read\nRequests/sec: 1\n", &w), 0,
                  "wrk's human text alone is not parsed");
    char broken[sizeof text];
    snprintf(broken, sizeof broken, "%s", text);
    memcpy(strstr(broken, "latency_p99_us 3950"), "latency_p99_us xxxx", 19);
    cr_assert_neq(wrk_parse(broken, &w), 0, "a figure that is not a number");
    *strstr(broken, "latency_p99_us") = 0;
    cr_assert_neq(wrk_parse(broken, &w), 0, "a missing figure");
}

Test(nginx_harness, missing_programs_name_their_package)
{
    nginx_options o;
    nginx_options_init(&o);
    o.binary = "/nonexistent/nginx";
    nginx_server s;
    cr_assert_eq(nginx_start(&s, &o), -1);
    cr_assert(strstr(s.error, "package '" NGINX_PACKAGE "'"), "%s", s.error);
    cr_assert_eq(s.pid, 0);
    cr_assert_eq(nginx_stop(&s), 0);
    wrk_options w;
    wrk_options_init(&w);
    w.binary = "/nonexistent/wrk";
    wrk_result r;
    char err[512];
    cr_assert_eq(wrk_run(&w, "http://127.0.0.1:1/", &r, err, sizeof err), -1);
    cr_assert(strstr(err, "package '" WRK_PACKAGE "'"), "%s", err);
}

/* ---- the exit paths of a process that started nginx -------------------------------- */

typedef struct started {
    pid_t child;  /* the process that started nginx */
    pid_t nginx;
    char dir[NGINX_PATH_SIZE];
    char error[1024];
} started;

typedef enum then {
    THEN_BLOCK,
    THEN_EXIT,
    THEN_BLOCK_NOHUP, /* as THEN_BLOCK, started with SIGHUP ignored (under nohup), and
                         hung up once nginx runs, before it reports */
} then;

/* Fork a child that starts nginx, reports it, then blocks or calls exit(0). */
static void start_in_child(started *st, then what)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        close(p[0]);
        /* A shell starts a background job (make check &) with SIGINT ignored, and the
         * harness rightly leaves an ignored signal ignored (nohup): the child plays a
         * tool started in the foreground. */
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
        for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
            struct sigaction old;
            if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
                signal(sigs[k], SIG_DFL);
        }
        if (what == THEN_BLOCK_NOHUP)
            signal(SIGHUP, SIG_IGN);
        nginx_server s;
        started out;
        memset(&out, 0, sizeof out);
        if (nginx_start(&s, NULL) == 0) {
            if (what == THEN_BLOCK_NOHUP)
                raise(SIGHUP); /* synchronous: a handler would have run before it returns */
            out.nginx = s.pid;
            snprintf(out.dir, sizeof out.dir, "%s", s.dir);
        } else {
            snprintf(out.error, sizeof out.error, "%.1000s", s.error);
        }
        ssize_t n = write(p[1], &out, sizeof out);
        close(p[1]);
        if (n != (ssize_t)sizeof out || out.nginx == 0)
            _exit(1);
        if (what == THEN_EXIT)
            exit(0); /* the atexit handler stops nginx */
        alarm(30);
        for (;;)
            pause();
    }
    close(p[1]);
    memset(st, 0, sizeof *st);
    size_t got = 0;
    while (got < sizeof *st) {
        ssize_t n = read(p[0], (char *)st + got, sizeof *st - got);
        if (n <= 0 && errno != EINTR)
            break;
        if (n > 0)
            got += (size_t)n;
    }
    close(p[0]);
    st->child = child;
    cr_assert_eq(got, sizeof *st, "the child reported nothing");
    cr_assert_gt(st->nginx, 0, "%s", st->error);
}

/* waitpid with a time limit; the child is killed if it does not end in time. */
static int wait_for(pid_t pid, int ms)
{
    int status = 0;
    for (int waited = 0; waited < ms; waited += 5) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    cr_assert_fail("process %d did not end within %d ms", (int)pid, ms);
    return status;
}

static void signal_leaves_nothing(int sig)
{
    started st;
    start_in_child(&st, THEN_BLOCK);
    cr_assert(!gone(st.nginx) && exists(st.dir), "nginx should run before the signal");
    cr_assert_eq(kill(st.child, sig), 0);
    int status = wait_for(st.child, 10000);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig,
              "the child should end by signal %d again (status 0x%x)", sig, status);
    /* Gone, not a zombie: the child's handler reaped nginx before it ended. */
    cr_assert(gone(st.nginx), "nginx %d outlived the child's signal %d", (int)st.nginx, sig);
    cr_assert(gone(-st.nginx), "nginx's process group outlived the child");
    cr_assert(!exists(st.dir), "the scratch folder %s outlived the child", st.dir);
}

Test(nginx_harness, sigterm_leaves_nothing) { signal_leaves_nothing(SIGTERM); }
Test(nginx_harness, sigint_leaves_nothing) { signal_leaves_nothing(SIGINT); }
Test(nginx_harness, sighup_leaves_nothing) { signal_leaves_nothing(SIGHUP); }
Test(nginx_harness, sigpipe_leaves_nothing) { signal_leaves_nothing(SIGPIPE); }

/* Under nohup the harness leaves SIGHUP ignored: the child's hang-up (start_in_child)
 * stopped neither nginx nor the child, and SIGTERM still leaves nothing. */
Test(nginx_harness, ignored_sighup_stays_ignored)
{
    started st;
    start_in_child(&st, THEN_BLOCK_NOHUP);
    cr_assert(!gone(st.nginx) && exists(st.dir), "a hang-up under nohup stopped nginx");
    cr_assert_eq(kill(st.child, SIGTERM), 0);
    int status = wait_for(st.child, 10000);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status 0x%x", status);
    cr_assert(gone(st.nginx), "nginx %d outlived the child", (int)st.nginx);
    cr_assert(!exists(st.dir), "the scratch folder %s outlived the child", st.dir);
}

Test(nginx_harness, exit_leaves_nothing)
{
    started st;
    start_in_child(&st, THEN_EXIT);
    int status = wait_for(st.child, 10000);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x", status);
    cr_assert(gone(st.nginx), "nginx %d outlived the child's exit", (int)st.nginx);
    cr_assert(!exists(st.dir), "the scratch folder %s outlived the child", st.dir);
}

/* SIGKILL runs no handler: the death signal ends nginx, which is then reparented to this
 * process (a subreaper) and reaped here. Only the scratch folder stays behind. */
Test(nginx_harness, sigkill_leaves_no_nginx)
{
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    started st;
    start_in_child(&st, THEN_BLOCK);
    cr_assert_eq(kill(st.child, SIGKILL), 0);
    wait_for(st.child, 10000);
    int status = wait_for(st.nginx, 10000);
    cr_assert(gone(st.nginx));
    cr_log_info("nginx after its starter was killed: %s %d",
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    cr_assert(exists(st.dir), "expected the scratch folder to stay behind after SIGKILL");
    char cmd[NGINX_PATH_SIZE + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", st.dir);
    cr_assert_eq(system(cmd), 0);
}
