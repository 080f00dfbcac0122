/*
 * stvm-bench: running Debian's wrk and reading its figures (see wrk.h).
 */
#include "wrk.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

#define DEBIAN_WRK "/usr/bin/wrk"
#define GRACE_SECONDS 10

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void wrk_options_init(wrk_options *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 1;
    o->connections = 1;
    o->seconds = 5;
}

/* ---- reading wrk's text ------------------------------------------------------------- */

/* wrk prints times as 12.34us, 1.20ms, 2.00s, 1.00m, 1.00h. Microseconds, or -1. */
static double time_us(double v, const char *unit)
{
    static const struct { const char *unit; double us; } units[] = {
        {"us", 1}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6}, {"h", 3600e6}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (!strcmp(unit, units[i].unit))
            return v * units[i].us;
    return -1;
}

/* And sizes as 512.00B, 9.61MB (binary multiples). Bytes, or -1. */
static double bytes(double v, const char *unit)
{
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
    double m = 1;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++, m *= 1024)
        if (!strcmp(unit, units[i]))
            return v * m;
    return -1;
}

static void parse_line(const char *line, wrk_result *r, int *found)
{
    double a, b, c;
    char ua[8], ub[8], uc[8];
    unsigned long long n, n2, n3, n4;
    int pct;
    const char *p;
    if ((p = strstr(line, "Requests/sec:")) && sscanf(p + 13, "%lf", &a) == 1) {
        r->requests_per_sec = a;
        *found |= 1;
    } else if ((p = strstr(line, "Transfer/sec:")) && sscanf(p + 13, "%lf%7s", &a, ua) == 2) {
        r->transfer_per_sec = bytes(a, ua);
    } else if (sscanf(line, " Latency %lf%7[a-z] %lf%7[a-z] %lf%7[a-z]", &a, ua, &b, ub, &c,
                      uc) == 6) {
        r->latency_avg_us = time_us(a, ua);
        r->latency_stdev_us = time_us(b, ub);
        r->latency_max_us = time_us(c, uc);
    } else if (sscanf(line, " %d%% %lf%7[a-z]", &pct, &a, ua) == 3) {
        double us = time_us(a, ua);
        double *slot = pct == 50 ? &r->latency_p50_us : pct == 75 ? &r->latency_p75_us
                     : pct == 90 ? &r->latency_p90_us : pct == 99 ? &r->latency_p99_us : NULL;
        if (slot && us >= 0) {
            *slot = us;
            *found |= pct == 50 ? 2 : pct == 75 ? 4 : pct == 90 ? 8 : 16;
        }
    } else if (sscanf(line, " %llu requests in %lf%7[a-z], %lf%7[A-Z] read", &n, &a, ua, &b,
                      ub) == 5) {
        r->requests = n;
        r->seconds = time_us(a, ua) / 1e6;
        r->bytes_read = bytes(b, ub);
    } else if (sscanf(line, " Socket errors: connect %llu, read %llu, write %llu, timeout %llu",
                      &n, &n2, &n3, &n4) == 4) {
        r->errors_connect = n;
        r->errors_read = n2;
        r->errors_write = n3;
        r->errors_timeout = n4;
    } else if (sscanf(line, " Non-2xx or 3xx responses: %llu", &n) == 1) {
        r->non_2xx = n;
    }
}

int wrk_parse(const char *text, wrk_result *r)
{
    char keep[sizeof r->output];
    memcpy(keep, r->output, sizeof keep);
    memset(r, 0, sizeof *r);
    memcpy(r->output, keep, sizeof keep);
    int found = 0;
    char line[512];
    while (*text) {
        size_t n = strcspn(text, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), text);
        parse_line(line, r, &found);
        text += n + (text[n] == '\n');
    }
    return found == 31 ? 0 : -1;
}

/* ---- running it --------------------------------------------------------------------- */

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static bool find_wrk(char *out, size_t size, const char *given)
{
    if (given) {
        snprintf(out, size, "%s", given);
        return executable(out);
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && (size_t)snprintf(out, size, "%.*s/wrk", (int)n, path) < size &&
            executable(out))
            return true;
        path += n + (path[n] == ':');
    }
    snprintf(out, size, "%s", DEBIAN_WRK);
    return executable(out);
}

/* Start wrk with its output into a pipe (*out: the reading end). 0, or -1 and err. */
static int start(const wrk_options *o, char *binary, const char *url, pid_t *pid, int *out,
                 char *err, size_t errsize)
{
    char t[16], c[16], d[16];
    snprintf(t, sizeof t, "-t%d", o->threads);
    snprintf(c, sizeof c, "-c%d", o->connections);
    snprintf(d, sizeof d, "-d%ds", o->seconds);
    char *argv[] = {binary, t, c, d, "--latency", (char *)url, NULL};
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        snprintf(err, errsize, "wrk: pipe: %s", strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    *pid = fork();
    if (*pid == 0)
        bench_child_exec(parent, pipefd[1], argv);
    int fork_errno = errno;
    close(pipefd[1]);
    if (*pid < 0) {
        close(pipefd[0]);
        snprintf(err, errsize, "wrk: fork: %s", strerror(fork_errno));
        return -1;
    }
    *out = pipefd[0];
    return 0;
}

/* Read wrk's output into r->output (the rest is read and dropped) until it ends or the
 * deadline passes. Answers whether the deadline passed first. */
static bool read_output(int fd, int64_t deadline, wrk_result *r)
{
    size_t used = 0;
    bool late = false;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            late = true;
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
            break;
        char scratch[512];
        bool room = used < sizeof r->output - 1;
        ssize_t n = read(fd, room ? r->output + used : scratch,
                         room ? sizeof r->output - 1 - used : sizeof scratch);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            break;
        if (n > 0 && room)
            used += (size_t)n;
    }
    r->output[used] = 0;
    return late;
}

/* How the run ended, once wrk is reaped: 0, or -1 and err. */
static int judge(const wrk_options *o, bool late, int status, wrk_result *r, char *err,
                 size_t errsize)
{
    if (late) {
        snprintf(err, errsize, "wrk: still running %d s after its %d s run; killed",
                 GRACE_SECONDS, o->seconds);
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errsize, "wrk: %s %d%s: %.*s", WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                 WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (could not run it)" : "",
                 (int)(errsize > 128 ? errsize - 128 : 0), r->output);
        return -1;
    }
    if (wrk_parse(r->output, r) != 0) {
        snprintf(err, errsize, "wrk: no Requests/sec or latency percentiles in: %.*s",
                 (int)(errsize > 96 ? errsize - 96 : 0), r->output);
        return -1;
    }
    return 0;
}

int wrk_run(const wrk_options *o, const char *url, wrk_result *r, char *err, size_t errsize)
{
    wrk_options defaults;
    if (!o) {
        wrk_options_init(&defaults);
        o = &defaults;
    }
    memset(r, 0, sizeof *r);
    char binary[512];
    if (!find_wrk(binary, sizeof binary, o->binary)) {
        snprintf(err, errsize,
                 "wrk: %s%s not found or not executable: install Debian's package "
                 "'" WRK_PACKAGE "' (as root: sh scripts/install-deps.sh)",
                 binary, o->binary ? "" : " (nor wrk in PATH)");
        return -1;
    }
    if (o->threads < 1 || o->connections < o->threads || o->seconds < 1) {
        snprintf(err, errsize, "wrk: need 1 <= threads <= connections and seconds >= 1");
        return -1;
    }
    pid_t pid;
    int out;
    if (start(o, binary, url, &pid, &out, err, errsize) != 0)
        return -1;
    bool late = read_output(out, now_ms() + (int64_t)(o->seconds + GRACE_SECONDS) * 1000, r);
    close(out);
    if (late)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return judge(o, late, status, r, err, errsize);
}
