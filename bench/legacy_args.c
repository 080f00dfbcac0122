/*
 * stvm-bench: the old command-line helpers (flags, numbers, usage errors, progress on a
 * terminal) that the commands not yet on the option table (options.h) still use; this
 * file goes when the last of them is ported.
 */
#include "bench.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool bench_flag(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t len = strlen(name);
    if (strncmp(a, name, len) != 0)
        return false;
    if (a[len] == '=') {
        *value = a + len + 1;
        (*i)++;
        return true;
    }
    if (a[len] != 0)
        return false;
    if (*i + 1 >= argc) {
        fprintf(stderr, "stvm-bench: option %s needs a value\n", name);
        exit(BENCH_EXIT_USAGE);
    }
    *value = argv[*i + 1];
    *i += 2;
    return true;
}

bool bench_parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static const char *const format_names[] = {"table", "csv", "json", "markdown"};

long bench_parse_names(const char *s, const char *const *names, int n)
{
    long bits = 0;
    char buf[256];
    if (!s || !*s || strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < n && strcmp(w, names[k]))
            k++;
        if (k == n)
            return -1;
        bits |= 1L << k;
    }
    return bits ? bits : -1;
}

int bench_parse_numbers(const char *s, long long lo, long long hi, long long *out, int max)
{
    char buf[256];
    int n = 0;
    if (!s || !*s || strlen(s) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *rest = buf, *t; (t = strsep(&rest, ",")) != NULL;) {
        if (n == max || !bench_parse_ll(t, lo, hi, &out[n]))
            return -1;
        n++;
    }
    return n;
}

bool bench_parse_format(const char *s, bench_format *out)
{
    for (int i = 0; i < 4; i++) {
        if (s && strcmp(s, format_names[i]) == 0) {
            *out = (bench_format)i;
            return true;
        }
    }
    return false;
}

int bench_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("stvm-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fprintf(stderr, "Try 'stvm-bench %s--help'.\n", command ? command : "");
    return BENCH_EXIT_USAGE;
}

int bench_common_option(int argc, char **argv, int *i, const char *command, int *cpu,
                        bench_format *format)
{
    const char *v = NULL;
    long long n;
    if (bench_flag(argc, argv, i, "--cpu", &v)) {
        if (!bench_parse_ll(v, -1, CPU_SETSIZE - 1, &n))
            return bench_usage_error(command, "--cpu wants a CPU number or -1, not '%s'",
                                     v ? v : "");
        *cpu = (int)n;
        return BENCH_NEXT;
    }
    if (bench_flag(argc, argv, i, "--format", &v)) {
        if (!bench_parse_format(v, format))
            return bench_usage_error(command, "--format wants table, csv, json or markdown, "
                                              "not '%s'", v ? v : "");
        return BENCH_NEXT;
    }
    return BENCH_NOT_MINE;
}

int bench_count_option(int argc, char **argv, int *i, const char *command, const char *flag,
                       long long lo, long long hi, const char *range, long long *out)
{
    const char *v = NULL;
    if (!bench_flag(argc, argv, i, flag, &v))
        return BENCH_NOT_MINE;
    if (bench_parse_ll(v, lo, hi, out))
        return BENCH_NEXT;
    if (range)
        return bench_usage_error(command, "%s wants %s, not '%s'", flag, range, v ? v : "");
    return bench_usage_error(command, "%s wants %lld..%lld, not '%s'", flag, lo, hi,
                             v ? v : "");
}

int bench_pin_option(int cpu)
{
    int err = cpu >= 0 ? bench_pin_cpu(cpu) : 0;
    if (err) {
        fprintf(stderr, "stvm-bench: cannot pin to CPU %d: %s\n", cpu, strerror(-err));
        return BENCH_EXIT_USAGE;
    }
    return BENCH_EXIT_OK;
}

bool bench_progress_on(void)
{
    return isatty(2);
}

void bench_progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}
