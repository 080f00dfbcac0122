/*
 * stvm-bench: what the tool needs from the operating system (clocks, pinning, /proc, a
 * watchdog). Nothing here touches a VM.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t bench_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

int64_t bench_cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }


int bench_pin_cpu(int cpu)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return -EINVAL;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    /* pid 0 is the calling thread on Linux. */
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -errno;
}

uint64_t bench_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size, resident;
    bool read = f && fscanf(f, "%llu %llu", &size, &resident) == 2;
    if (f)
        fclose(f);
    return read ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

void bench_load_averages(double load[3])
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f || fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
        load[0] = load[1] = load[2] = NAN;
    if (f)
        fclose(f);
}

int bench_ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void bench_cpuinfo(const char *key, char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512], *v;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key)) != 0 || !(v = strchr(line, ':')))
            continue;
        v += 1 + strspn(v + 1, " \t");
        v[strcspn(v, "\n")] = 0;
        snprintf(buf, size, "%s", v);
        break;
    }
    if (f)
        fclose(f);
}

void bench_kernel(char *buf, size_t size)
{
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(buf, size, "%s %s", u.sysname, u.release);
    else
        snprintf(buf, size, "unknown");
}

void bench_date_utc(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void watchdog_fired(int sig)
{
    static const char msg[] =
        "\nstvm-bench: a run did not finish in time (watchdog); the VM hangs or the "
        "machine is overloaded\n";
    ssize_t n = write(2, msg, sizeof msg - 1);
    (void)n;
    (void)sig;
    _exit(BENCH_EXIT_FAIL);
}

void bench_watchdog(unsigned seconds)
{
    if (seconds) {
        struct sigaction sa = {.sa_handler = watchdog_fired};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
    }
    alarm(seconds);
}
