/*
 * Shared helpers for the Criterion suites. Every test that makes a VM ends with
 * vm_done(vm), which checks the scheduler's invariants and frees the VM, so that a
 * broken list, bitmap or count fails the test that caused it.
 *
 * Everything here is static inline (or a macro), so a suite that does not use a helper
 * pays nothing and -Wall does not complain; a helper used by one suite only stays in
 * that suite's file.
 */
#ifndef STVM_TESTS_HELPERS_H
#define STVM_TESTS_HELPERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <stvm.h>

/* ---- constants ------------------------------------------------------------------- */

/* Simulated clocks start here unless a test says otherwise, so that microsecond
 * timestamps are realistic (boxed on 31-bit VMs): 2025-01-01 00:00 UTC in us since 1901. */
#define SIM_START 3913056000000000ull
/* The millisecond clock (primitive 135) wraps at this mask. */
#define MS_MASK 0x1FFFFFFFu
/* Out-parameters are preset to SENTINEL to prove a call wrote (or did not write) them;
 * GARBAGE is an oop no VM hands out. */
#define SENTINEL ((stvm_oop)0xDEADBEE0u)
#define GARBAGE ((stvm_oop)0x12345670u)

/* ---- making VMs ------------------------------------------------------------------ */

static inline stvm_vm *vm_make(const stvm_config *cfg)
{
    stvm_vm *vm = NULL;
    int err = stvm_vm_create(cfg, &vm);
    cr_assert_eq(err, STVM_OK, "stvm_vm_create: %s", stvm_strerror(err));
    return vm;
}

/* A VM on the simulated clock (deterministic time; no wall-clock sleeps), starting at
 * sim_start_us with the millisecond clock at ms_clock_start. 0 and 0 are the config's
 * defaults, so every simulated-clock maker below is this one with some values fixed. */
static inline stvm_vm *vm_make_sim_at(int smallint_bits, int delay_clock, uint64_t sim_start_us,
                                      uint32_t ms_clock_start)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.smallint_bits = smallint_bits;
    cfg.delay_clock = delay_clock;
    cfg.sim_start_us = sim_start_us;
    cfg.ms_clock_start = ms_clock_start;
    return vm_make(&cfg);
}

static inline stvm_vm *vm_make_sim(int smallint_bits, int delay_clock)
{
    return vm_make_sim_at(smallint_bits, delay_clock, 0, 0);
}

/* The clock and primitive suites vary the start times but keep the default
 * (microsecond) Delay scheduler. */
static inline stvm_vm *sim_vm(int smallint_bits, uint64_t sim_start_us, uint32_t ms_clock_start)
{
    return vm_make_sim_at(smallint_bits, STVM_DELAY_CLOCK_US, sim_start_us, ms_clock_start);
}

/* The four integer/clock representations the Delay suites run every scenario in:
 * which Delay scheduler (ms: 135/136, us: 240/242) and how wide SmallIntegers are
 * (us-largeint31 is the one whose timestamps are boxes). */
typedef struct rep {
    const char *name;
    int bits;
    int dclock;
} rep;

static const rep REPS[] = {
    {"ms-smallint31", 31, STVM_DELAY_CLOCK_MS},
    {"us-largeint31", 31, STVM_DELAY_CLOCK_US},
    {"us-smallint61", 61, STVM_DELAY_CLOCK_US},
    {"ms-smallint61", 61, STVM_DELAY_CLOCK_MS},
};
#define NREPS ((int)(sizeof REPS / sizeof REPS[0]))
/* By name, for the suites that pick one representation per test. */
#define MS31 (REPS[0])
#define US31 (REPS[1])
#define US61 (REPS[2])
#define MS61 (REPS[3])

static inline bool is_ms(const rep *r) { return r->dclock == STVM_DELAY_CLOCK_MS; }

static inline stvm_vm *rep_vm_at(const rep *r, uint64_t sim_start_us, uint32_t ms_clock_start)
{
    return vm_make_sim_at(r->bits, r->dclock, sim_start_us, ms_clock_start);
}

static inline stvm_vm *rep_vm(const rep *r) { return rep_vm_at(r, SIM_START, 0); }

static inline void vm_check(stvm_vm *vm)
{
    char why[256];
    int err = stvm_vm_check_invariants(vm, why, sizeof why);
    cr_assert_eq(err, STVM_OK, "invariant broken: %s", why);
}

static inline void vm_done(stvm_vm *vm)
{
    vm_check(vm);
    stvm_vm_free(vm);
}

/* ---- objects and processes, asserting success ----------------------------------- */

static inline stvm_stats stats_of(stvm_vm *vm)
{
    stvm_stats s;
    cr_assert_eq(stvm_vm_get_stats(vm, &s), STVM_OK);
    return s;
}

/* Unchecked: callable from a green process, where Criterion's asserts must not run. */
static inline uint64_t switches(stvm_vm *vm)
{
    stvm_stats s;
    stvm_vm_get_stats(vm, &s);
    return s.context_switches;
}

static inline stvm_semaphore *sem_make(stvm_vm *vm)
{
    stvm_semaphore *s = NULL;
    cr_assert_eq(stvm_semaphore_new(vm, &s), STVM_OK);
    return s;
}

static inline stvm_process *spawn(stvm_vm *vm, int prio, const char *name, stvm_fn fn, void *arg)
{
    stvm_process *p = NULL;
    int err = stvm_spawn(vm, prio, name, fn, arg, &p);
    cr_assert_eq(err, STVM_OK, "spawn %s: %s", name, stvm_err_name(err));
    cr_assert_not_null(p);
    return p;
}

/* A process's state, or -1 if the VM does not know it. Unchecked, like switches(). */
static inline stvm_process_state gstate(stvm_vm *vm, stvm_process *p)
{
    stvm_process_info info;
    if (stvm_process_get_info(vm, p, &info) != STVM_OK)
        return (stvm_process_state)-1;
    return info.state;
}

/* Integers of the VM; the SENTINEL check proves the out-parameter was written. */
static inline stvm_oop mk_i(stvm_vm *vm, int64_t v)
{
    stvm_oop o = SENTINEL;
    int err = stvm_int_from_i64(vm, v, &o);
    cr_assert_eq(err, STVM_OK, "stvm_int_from_i64(%lld): %s", (long long)v, stvm_err_name(err));
    cr_assert_neq(o, SENTINEL);
    return o;
}

static inline stvm_oop mk_u(stvm_vm *vm, uint64_t v)
{
    stvm_oop o = SENTINEL;
    int err = stvm_int_from_u64(vm, v, &o);
    cr_assert_eq(err, STVM_OK, "stvm_int_from_u64(%llu): %s", (unsigned long long)v,
                 stvm_err_name(err));
    cr_assert_neq(o, SENTINEL);
    return o;
}

static inline int64_t val_i(stvm_vm *vm, stvm_oop o)
{
    int64_t v = 0;
    int err = stvm_int_to_i64(vm, o, &v);
    cr_assert_eq(err, STVM_OK, "stvm_int_to_i64: %s", stvm_err_name(err));
    return v;
}

static inline uint64_t val_u(stvm_vm *vm, stvm_oop o)
{
    uint64_t v = 0;
    int err = stvm_int_to_u64(vm, o, &v);
    cr_assert_eq(err, STVM_OK, "stvm_int_to_u64: %s", stvm_err_name(err));
    return v;
}

/* A small deterministic generator for pseudo-random durations: the same seed gives the
 * same run on every machine and back end. */
static inline uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* An ordered log of small integers, for asserting who ran when. */
typedef struct trace_log {
    int n;
    int ev[512];
} trace_log;

static inline void trace_add(trace_log *t, int v)
{
    if (t->n < (int)(sizeof t->ev / sizeof t->ev[0]))
        t->ev[t->n++] = v;
}

static inline void trace_expect(const trace_log *t, const int *want, int n)
{
    cr_assert_eq(t->n, n, "trace has %d events, expected %d", t->n, n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(t->ev[i], want[i], "event %d is %d, expected %d", i, t->ev[i], want[i]);
}

/* ---- scenarios of green-process tests ------------------------------------------- */

/* Green processes never call Criterion's asserts (they may run on small stacks): they
 * record what they see in the test's scenario, a struct that the test (or a group of
 * tests in one file) declares with a named field for each thing it records, and GCHECK
 * notes in the scenario's `bad_line` the first line whose condition failed; the host
 * asserts after stvm_run returns. The macros below work on any scenario that has a
 * `stvm_vm *vm` and an `int bad_line` field. */
#define GCHECK(s, cond) GCHECK_AT(&(s)->bad_line, cond)

/* GCHECK for the shared process bodies below, which get a pointer to their scenario's
 * bad_line (the line noted is then one of this file). */
#define GCHECK_AT(bad_line_ptr, cond)      \
    do {                                   \
        if (!(cond) && !*(bad_line_ptr))   \
            *(bad_line_ptr) = __LINE__;    \
    } while (0)

#define ASSERT_GREEN_OK(s)                                                              \
    cr_assert_eq((s)->bad_line, 0, "a check inside a green process failed at line %d", \
                 (s)->bad_line)

static inline void run_ok(stvm_vm *vm)
{
    int err = stvm_run(vm);
    cr_assert_eq(err, STVM_OK, "stvm_run: %s", stvm_err_name(err));
}

/* run_ok, then fail at once if a green process noted a failed check (for tests that
 * inspect the scenario straight after running it). */
#define RUN_OK_GREEN(s)     \
    do {                    \
        run_ok((s)->vm);    \
        ASSERT_GREEN_OK(s); \
    } while (0)

/* The end of a scenario test: no green check failed, then vm_done. */
#define SCENARIO_DONE(s)    \
    do {                    \
        ASSERT_GREEN_OK(s); \
        vm_done((s)->vm);   \
    } while (0)

/* The scenario of a test that looks only at the order its processes ran in. */
typedef struct run_order {
    stvm_vm *vm;
    trace_log log;
    int bad_line;
} run_order;

/* Write vm's trace ring as JSON and run tests/trace_check.py on it (the trace and
 * interrupt suites). */
static inline void check_json_of(stvm_vm *vm)
{
    char path[] = "/tmp/stvm-trace-XXXXXX.json", cmd[512];
    close(mkstemps(path, 5));
    cr_assert_eq(stvm_trace_write_json(vm, path), STVM_OK);
    snprintf(cmd, sizeof cmd, "python3 tests/trace_check.py %s > /dev/null", path);
    cr_assert_eq(system(cmd), 0, "%s fails tests/trace_check.py", path);
    unlink(path);
}

/* ---- process bodies several suites share ------------------------------------------ */

/* A process's state, asserting the VM knows it (host side; gstate is the unchecked one). */
static inline stvm_process_state state_of(stvm_vm *vm, stvm_process *p)
{
    stvm_process_info info;
    int err = stvm_process_get_info(vm, p, &info);
    cr_assert_eq(err, STVM_OK);
    return info.state;
}

/* What log_tag gets: several processes log to one trace and differ by tag. */
typedef struct tagged {
    trace_log *log;
    int tag;
} tagged;

/* A process that only logs its tag. */
static inline void log_tag(stvm_vm *vm, void *arg)
{
    (void)vm;
    tagged *a = arg;
    trace_add(a->log, a->tag);
}

/* A process that waits on a semaphore, keeps what the wait answered, then logs its tag;
 * given a bad_line, it also notes a failed wait there (as GCHECK does). */
typedef struct logged_wait {
    stvm_semaphore *sem;
    trace_log *log;
    int tag;
    int *bad_line;   /* optional */
    int rc;          /* what the wait answered */
} logged_wait;

static inline void wait_and_log(stvm_vm *vm, void *arg)
{
    logged_wait *a = arg;
    a->rc = stvm_semaphore_wait(vm, a->sem);
    if (a->bad_line)
        GCHECK_AT(a->bad_line, a->rc == STVM_OK);
    trace_add(a->log, a->tag);
}

/* A process that holds a mutex until a semaphore is signalled, then releases it; a
 * failed check goes to its scenario's bad_line. */
typedef struct holder {
    stvm_mutex *m;
    stvm_semaphore *release;
    int *bad_line;
} holder;

static inline void hold_until_signalled(stvm_vm *vm, void *arg)
{
    holder *h = arg;
    GCHECK_AT(h->bad_line, stvm_mutex_enter(vm, h->m) == STVM_OK);
    GCHECK_AT(h->bad_line, stvm_semaphore_wait(vm, h->release) == STVM_OK);
    GCHECK_AT(h->bad_line, stvm_mutex_exit(vm, h->m) == STVM_OK);
}

/* ---- a child process for what must die ------------------------------------------ */

/* Run body(arg) in a forked child with its stderr captured into err (NUL-terminated);
 * the body must end the child (exit, abort, a signal). Answers the child's wait status. */
static inline int run_in_child(void (*body)(void *arg), void *arg, char *err, size_t size)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        body(arg);
        _exit(5);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t n;
    while (len + 1 < size && (n = read(fds[0], err + len, size - 1 - len)) > 0)
        len += (size_t)n;
    err[len] = 0;
    close(fds[0]);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* ---- the public headers ------------------------------------------------------------ */

/* include/<name> ("stvm.h", "stvm/core.h", ...), found from the repository, next to the
 * test binary (build/<variant>/stvm-tests) or under $STVM_INCLUDE; NULL if none. */
static inline FILE *open_public_header(const char *name)
{
    char path[4096];
    const char *env = getenv("STVM_INCLUDE");
    if (env) {
        snprintf(path, sizeof path, "%s/%s", env, name);
        return fopen(path, "r");
    }
    static const char *const rel[] = {"include", "../include", "../../include"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", rel[i], name);
        FILE *fp = fopen(path, "r");
        if (fp)
            return fp;
    }
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 256);
    if (n <= 0)
        return NULL;
    path[n] = 0;
    char *slash = strrchr(path, '/');
    if (!slash)
        return NULL;
    snprintf(slash, sizeof path - (size_t)(slash - path), "/../../include/%s", name);
    return fopen(path, "r");
}

/* ---- the tools --------------------------------------------------------------------- */

/* build/<tool> (stvm-lab, stvm-bench), next to the test binary's folder
 * (build/<variant>/stvm-tests), into buf; fails the test if it is not built. */
static inline void tool_path(const char *tool, char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 32);
    cr_assert_gt(n, 0);
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    snprintf(slash, size - (size_t)(slash - buf), "/../%s", tool);
    cr_assert_eq(access(buf, X_OK), 0, "%s not built (make builds it)", buf);
}

/* The whole file at path, allocated; fails the test if it cannot be read. */
/* A mkstemp/mkdtemp template for name in $TMPDIR (or /tmp), with suffix after the
 * XXXXXX (mkstemps' suffix length is strlen(suffix)). */
static inline void temp_template(char *buf, size_t size, const char *name, const char *suffix)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, size, "%s/%s-XXXXXX%s", dir && *dir == '/' ? dir : "/tmp", name, suffix);
}

static inline char *file_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s not written", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)size + 1);
    cr_assert_not_null(buf);
    buf[fread(buf, 1, (size_t)size, f)] = 0;
    fclose(f);
    return buf;
}

/* A built tool's run: its exit status (-1 when it did not exit) and what it wrote. */
typedef struct tool_output {
    int status;
    char *out, *err;        /* stdout and stderr, whole (allocated; tool_output_free) */
} tool_output;

/* `build/TOOL ARGS` (ARGS as a shell reads them) with stdout and stderr kept. */
static inline tool_output tool_run(const char *tool, const char *args)
{
    char path[1024], cmd[8192];
    char out[] = "/tmp/stvm-tool-out-XXXXXX", err[] = "/tmp/stvm-tool-err-XXXXXX";
    tool_path(tool, path, sizeof path);
    int fo = mkstemp(out), fe = mkstemp(err);
    cr_assert(fo >= 0 && fe >= 0, "mkstemp");
    close(fo);
    close(fe);
    snprintf(cmd, sizeof cmd, "%s %s > %s 2> %s", path, args, out, err);
    int rc = system(cmd);
    tool_output r = {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, file_slurp(out), file_slurp(err)};
    unlink(out);
    unlink(err);
    return r;
}

static inline void tool_output_free(tool_output *r)
{
    free(r->out);
    free(r->err);
}

#endif
