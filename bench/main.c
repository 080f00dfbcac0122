/*
 * stvm-bench: command-line dispatch and the helpers every command's command line uses
 * (flags, numbers, usage errors, progress on a terminal).
 *
 *   stvm-bench micro [--cpu N] [--repeat K] [--iterations N] [--pthread-iterations N]
 *                    [--processes N] [--format F]
 *   stvm-bench delay [--repr LIST] [--concurrency LIST] [--clock real|sim] [--repeat K]
 *                    [--window-ms W] [--cpu N] [--format F] [--plot FILE] [--report FILE]
 *   stvm-bench io [--case LIST] [--idle-mode LIST] [--repeat K] [--rounds N]
 *                 [--max-seconds S] [--connections N] [--messages M] [--message-bytes B]
 *                 [--timeout-ms T] [--cpu N] [--format F]
 *   stvm-bench ffi [--repeat K] [--calls N] [--round-trips N] [--blocking-calls N]
 *                  [--block-ms M] [--workers W] [--cpu N] [--format F]
 */
#include "bench.h"
#include "random.h"

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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: stvm-bench COMMAND [OPTIONS]\n"
            "\n"
            "Commands:\n"
            "  micro   semaphore hand-off, raw context switch, memory per blocked process\n"
            "          and a pthread semaphore reference, for the context-switch back end\n"
            "          this binary is linked with\n"
            "  delay   Pharo's DelayBenchmark: delays per second against concurrency for\n"
            "          each Delay timestamp representation\n"
            "  io      loopback TCP ping-pong (green processes, a green process and an OS\n"
            "          thread, two OS threads) per idle mode, and many connections to an\n"
            "          echo server in the VM: round trips, CPU, wake-ups, memory\n"
            "  ffi     C calls through libffi: same-thread callouts against a bare ffi_call,\n"
            "          threaded callouts and callbacks, and a ticker's ticks while blocking\n"
            "          calls run on the VM's thread or on a worker\n"
            "  zn      the ZnClient experiment: a ZnClient-shaped client in the VM against\n"
            "          a real nginx with logging off, on, and on with a subscriber, per\n"
            "          idle mode, beside wrk -t1 -c1\n"
            "  version print the tool and library versions and the back end\n"
            "\n"
            "'stvm-bench COMMAND --help' lists a command's options.\n");
}

int main(int argc, char **argv)
{
    if (stvm_version() != STVM_VERSION_HEX) {
        fprintf(stderr, "stvm-bench: built against stvm %s but linked with %s\n",
                STVM_VERSION_STRING, stvm_version_string());
        return BENCH_EXIT_FAIL;
    }
    /* The DelayBenchmark's durations must be Pharo's; checked before anything runs. */
    int table[DELAY_TABLE_SIZE];
    delay_table_generate(table);
    if (!delay_table_verify(table))
        abort();

    if (argc < 2) {
        usage(stderr);
        return BENCH_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "micro") == 0)
        return micro_main(argc - 1, argv + 1);
    if (strcmp(cmd, "delay") == 0)
        return delay_main(argc - 1, argv + 1);
    if (strcmp(cmd, "io") == 0)
        return io_main(argc - 1, argv + 1);
    if (strcmp(cmd, "ffi") == 0)
        return ffi_main(argc - 1, argv + 1);
    if (strcmp(cmd, "zn") == 0)
        return zn_main(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("stvm-bench %s (library %s, back end %s)\n", STVM_VERSION_STRING,
               stvm_version_string(), stvm_context_backend());
        return BENCH_EXIT_OK;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return BENCH_EXIT_OK;
    }
    fprintf(stderr, "stvm-bench: unknown command '%s'\n", cmd);
    usage(stderr);
    return BENCH_EXIT_USAGE;
}
