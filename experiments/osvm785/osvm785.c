/*
 * opensmalltalk-vm #785's table: how late a Delay waited from an otherwise idle VM
 * ends, under the idle policy of the OpenSmalltalk VM's PR #764 (STVM_IDLE_OSVM764,
 * with a model of its heartbeat), with each of #785's two fixes, with both, and under
 * stvm's own default, for a 1 ms Delay and a 16 ms one (a UI loop's), on the simulated
 * clock (the same bytes on every run) and on the real one. README.md says how to read
 * it. Uses <stvm.h> only.
 *
 *   osvm785 [--clock sim|real|both] [--count N] [--real-count N] [--no-context]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include <stvm.h>

#define SIM_START 3913056000000000ull   /* 2025-01-01 UTC, in us since 1901 */
#define MAX_COUNT 1000

typedef struct policy {
    const char *name;
    int idle_mode;
    uint32_t fixes, idle_beat_us;
} policy;

static const policy policies[] = {
    {"#764 as merged", STVM_IDLE_OSVM764, 0, 0},
    {"#764 + fix A (clock after the sleep)", STVM_IDLE_OSVM764, STVM_OSVM764_FIX_CLOCK, 0},
    {"#764 + fix B (no idle flag with a Delay)", STVM_IDLE_OSVM764, STVM_OSVM764_FIX_IDLE_FLAG, 0},
    {"#764 + fixes A and B", STVM_IDLE_OSVM764, STVM_OSVM764_FIX_CLOCK | STVM_OSVM764_FIX_IDLE_FLAG, 0},
    {"stvm's default (poll, sleep to the deadline)", STVM_IDLE_POLL, 0, 0},
    {"#764 with a 500 ms idle heartbeat", STVM_IDLE_OSVM764, 0, 500000},
};
#define NPOLICIES ((int)(sizeof policies / sizeof policies[0]))

/* One run: `count` Delays of `ms` waited back to back by the only process. */
typedef struct run {
    int ms, count;
    int64_t late_us[MAX_COUNT];
    int err;
} run;

static void waiter(stvm_vm *vm, void *arg)
{
    run *r = arg;
    for (int i = 0; i < r->count && !r->err; i++) {
        uint64_t t0 = stvm_vm_now_us(vm);
        r->err = stvm_delay_wait_ms(vm, r->ms);
        r->late_us[i] = (int64_t)(stvm_vm_now_us(vm) - t0) - (int64_t)r->ms * 1000;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct cell {
    int64_t min, median, max;
    double sleeps_per_delay;
    int err;
} cell;

static cell measure(const policy *p, int clock, int ms, int count)
{
    cell c = {0};
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = clock;
    cfg.sim_start_us = clock == STVM_CLOCK_SIMULATED ? SIM_START : 0;
    cfg.idle_mode = p->idle_mode;
    cfg.osvm764_fixes = p->fixes;
    cfg.osvm764_idle_beat_us = p->idle_beat_us;
    stvm_vm *vm = NULL;
    run *r = calloc(1, sizeof *r);
    if (!r || (c.err = stvm_vm_create(&cfg, &vm)) != STVM_OK) {
        c.err = r ? c.err : STVM_ENOMEM;
        free(r);
        return c;
    }
    r->ms = ms;
    r->count = count;
    c.err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "waiter", waiter, r, NULL);
    if (!c.err)
        c.err = stvm_run(vm);
    if (!c.err)
        c.err = r->err;
    stvm_stats st;
    stvm_vm_get_stats(vm, &st);
    stvm_vm_free(vm);
    if (!c.err) {
        qsort(r->late_us, (size_t)count, sizeof r->late_us[0], cmp_i64);
        c.min = r->late_us[0];
        c.median = count % 2 ? r->late_us[count / 2]
                             : (r->late_us[count / 2 - 1] + r->late_us[count / 2]) / 2;
        c.max = r->late_us[count - 1];
        c.sleeps_per_delay = (double)st.os_sleeps / count;
    }
    free(r);
    return c;
}

/* A line without the blanks an empty last column leaves. */
static void put_line(char *line)
{
    size_t n = strlen(line);
    while (n && line[n - 1] == ' ')
        line[--n] = 0;
    puts(line);
}

static void ms3(char *buf, size_t n, int64_t us)
{
    snprintf(buf, n, "%lld.%03lld", (long long)(us / 1000), (long long)(us % 1000));
}

static int table(int clock, int count)
{
    printf("\n%s clock, %d Delays of each length, lateness in ms (the time past the Delay's "
           "length)\n\n", clock == STVM_CLOCK_SIMULATED ? "simulated" : "real", count);
    /* OS sleeps per Delay on the real clock only: the simulated clock's jumps are not */
    bool sleeps = clock == STVM_CLOCK_REAL;
    char line[256];
    snprintf(line, sizeof line, "%-46s %9s %9s %9s %7s   %9s %9s %9s %7s", "", "1 ms:", "", "",
             "", "16 ms:", "", "", "");
    put_line(line);
    snprintf(line, sizeof line, "%-46s %9s %9s %9s %7s   %9s %9s %9s %7s", "idle policy", "min",
             "median", "max", sleeps ? "sleeps" : "", "min", "median", "max", sleeps ? "sleeps" : "");
    put_line(line);
    int failed = 0;
    for (int i = 0; i < NPOLICIES; i++) {
        size_t at = (size_t)snprintf(line, sizeof line, "%-46s", policies[i].name);
        const int lengths[2] = {1, 16};
        for (int k = 0; k < 2; k++) {
            cell c = measure(&policies[i], clock, lengths[k], count);
            if (c.err) {
                at += (size_t)snprintf(line + at, sizeof line - at, " %s", stvm_err_name(c.err));
                failed = 1;
                continue;
            }
            char a[32], b[32], m[32];
            ms3(a, sizeof a, c.min);
            ms3(b, sizeof b, c.median);
            ms3(m, sizeof m, c.max);
            char sl[16] = "";
            if (sleeps)
                snprintf(sl, sizeof sl, "%.1f", c.sleeps_per_delay);
            at += (size_t)snprintf(line + at, sizeof line - at, " %9s %9s %9s %7s%s", a, b, m, sl,
                                   k ? "" : "  ");
        }
        put_line(line);
        fflush(stdout);
    }
    return failed;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: osvm785 [--clock sim|real|both] [--count N] [--real-count N] "
               "[--no-context]\n"
               "  --clock       which clock (default both: the simulated one first)\n"
               "  --count       Delays of each length per cell on the simulated clock "
               "(default 50; 1 .. %d)\n"
               "  --real-count  the same on the real clock (default 20)\n"
               "  --no-context  leave out the line naming the machine and the time\n",
            MAX_COUNT);
}

int main(int argc, char **argv)
{
    bool sim = true, real = true, context = true;
    int count = 50, real_count = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--clock") && v) {
            sim = !strcmp(v, "sim") || !strcmp(v, "both");
            real = !strcmp(v, "real") || !strcmp(v, "both");
            if (!sim && !real) {
                usage(stderr);
                return 2;
            }
            i++;
        } else if ((!strcmp(a, "--count") || !strcmp(a, "--real-count")) && v) {
            int n = atoi(v);
            if (n < 1 || n > MAX_COUNT) {
                usage(stderr);
                return 2;
            }
            *(!strcmp(a, "--count") ? &count : &real_count) = n;
            i++;
        } else if (!strcmp(a, "--no-context")) {
            context = false;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    printf("opensmalltalk-vm #785: a Delay waited from an otherwise idle VM, under PR #764's "
           "idle policy and heartbeat (modelled), its two fixes, and stvm's default\n");
    if (context) {
        struct utsname u;
        time_t now = time(NULL);
        char when[32];
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        uname(&u);
        printf("stvm %s (%s), %s, %s %s\n", stvm_version_string(), stvm_context_backend(), when,
               u.sysname, u.release);
    }
    int failed = 0;
    if (sim)
        failed |= table(STVM_CLOCK_SIMULATED, count);
    if (real)
        failed |= table(STVM_CLOCK_REAL, real_count);
    return failed;
}
