/*
 * VM lifetime and the library around it: configuration defaults and validation, error
 * texts, version, the context back end, object accounting, and independence of two
 * VMs running at once on two OS threads.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(vm, .timeout = 30);

Test(vm, config_init_fills_pharo_defaults)
{
    stvm_config cfg;
    memset(&cfg, 0xA5, sizeof cfg);
    stvm_config_init(&cfg);
    cr_assert_eq(cfg.smallint_bits, 61);
    cr_assert_eq(cfg.preemption_yields, true);
    cr_assert_eq(cfg.delay_clock, STVM_DELAY_CLOCK_US);
    cr_assert_eq(cfg.clock, STVM_CLOCK_REAL);
    cr_assert_eq(cfg.idle_relinquish_us, STVM_RELINQUISH_UNTIL_DUE, "an idle VM sleeps until something is due");
    cr_assert_eq(cfg.external_table_size, 65536);
    cr_assert_eq(cfg.stack_guard, true);
    cr_assert(cfg.stack_size == 0 || cfg.stack_size == 16 * 1024, "stack_size %zu",
              cfg.stack_size);
    cr_assert_eq(cfg.sim_start_us, 0);
    cr_assert_eq(cfg.ms_clock_start, 0);
    stvm_config_init(NULL);   /* ignored, must not crash */
}

Test(vm, vm_new_with_null_config_runs_with_the_defaults)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_config got, want;
    stvm_config_init(&want);
    cr_assert_eq(stvm_vm_config(vm, &got), STVM_OK);
    cr_assert_eq(got.smallint_bits, want.smallint_bits);
    cr_assert_eq(got.preemption_yields, want.preemption_yields);
    cr_assert_eq(got.delay_clock, want.delay_clock);
    cr_assert_eq(got.clock, want.clock);
    cr_assert_eq(got.idle_relinquish_us, want.idle_relinquish_us);
    cr_assert_eq(got.external_table_size, want.external_table_size);
    cr_assert_eq(got.stack_size, 16 * 1024, "default stack filled in");
    cr_assert_eq(stvm_vm_config(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_vm_config(NULL, &got), STVM_EINVAL);
    vm_done(vm);
}

Test(vm, vm_config_reports_stack_size_rounded_up_to_pages)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.stack_size = 8192 + 1;
    stvm_vm *vm = vm_make(&cfg);
    stvm_config got;
    cr_assert_eq(stvm_vm_config(vm, &got), STVM_OK);
    cr_assert_eq(got.stack_size, (8192 + 1 + page - 1) / page * page);
    vm_done(vm);
}

Test(vm, vm_config_answers_every_field_it_was_created_with)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = 31;
    cfg.preemption_yields = false;
    cfg.stack_size = 32768;
    cfg.stack_guard = false;
    cfg.delay_clock = STVM_DELAY_CLOCK_MS;
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.sim_start_us = 3900000000000000ull;
    cfg.ms_clock_start = 5;
    cfg.idle_relinquish_us = 77;
    cfg.external_table_size = 3;
    stvm_vm *vm = vm_make(&cfg);
    stvm_config got;
    memset(&got, 0xA5, sizeof got);
    cr_assert_eq(stvm_vm_config(vm, &got), STVM_OK);
    cr_assert_eq(got.smallint_bits, 31);
    cr_assert_eq(got.preemption_yields, false);
    cr_assert_eq(got.stack_size, 32768);
    cr_assert_eq(got.stack_guard, false);
    cr_assert_eq(got.delay_clock, STVM_DELAY_CLOCK_MS);
    cr_assert_eq(got.clock, STVM_CLOCK_SIMULATED);
    cr_assert_eq(got.sim_start_us, 3900000000000000ull);
    cr_assert_eq(got.ms_clock_start, 5);
    cr_assert_eq(got.idle_relinquish_us, 77);
    cr_assert_eq(got.external_table_size, 3);
    cr_assert_eq(stvm_smallint_max(vm), ((int64_t)1 << 30) - 1);
    vm_done(vm);
}

typedef void (*cfg_mutator)(stvm_config *);
static void bad_bits_32(stvm_config *c) { c->smallint_bits = 32; }
static void bad_bits_0(stvm_config *c) { c->smallint_bits = 0; }
static void bad_stack_100(stvm_config *c) { c->stack_size = 100; }
static void bad_stack_huge(stvm_config *c) { c->stack_size = ((size_t)64 << 20) + 1; }
static void bad_relinquish_big(stvm_config *c) { c->idle_relinquish_us = 10000001; }
static void bad_table_0(stvm_config *c) { c->external_table_size = 0; }
static void bad_table_big(stvm_config *c) { c->external_table_size = 65537; }
static void bad_table_neg(stvm_config *c) { c->external_table_size = -1; }
static void bad_delay_clock(stvm_config *c) { c->delay_clock = 2; }
static void bad_clock(stvm_config *c) { c->clock = 7; }
static void bad_ms_start(stvm_config *c) { c->ms_clock_start = 0x20000000u; }

Test(vm, vm_new_rejects_bad_configs_and_leaves_out_unchanged)
{
    static const struct {
        const char *what;
        cfg_mutator f;
    } bad[] = {
        {"smallint_bits 32", bad_bits_32},
        {"smallint_bits 0", bad_bits_0},
        {"stack_size 100", bad_stack_100},
        {"stack_size 64 MiB + 1", bad_stack_huge},
        {"idle_relinquish_us 10000001", bad_relinquish_big},
        {"external_table_size 0", bad_table_0},
        {"external_table_size 65537", bad_table_big},
        {"external_table_size -1", bad_table_neg},
        {"delay_clock 2", bad_delay_clock},
        {"clock 7", bad_clock},
        {"ms_clock_start 0x20000000", bad_ms_start},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stvm_config cfg;
        stvm_config_init(&cfg);
        bad[i].f(&cfg);
        stvm_vm *sentinel = (stvm_vm *)(uintptr_t)0x5EED0;
        stvm_vm *out = sentinel;
        int err = stvm_vm_create(&cfg, &out);
        cr_assert_eq(err, STVM_EINVAL, "%s: got %s", bad[i].what, stvm_err_name(err));
        cr_assert_eq(out, sentinel, "%s: *out was written", bad[i].what);
    }
}

Test(vm, vm_new_accepts_the_edges_of_every_range)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = 31;
    cfg.stack_size = 8192;
    cfg.idle_relinquish_us = 0;
    cfg.external_table_size = 1;
    cfg.delay_clock = STVM_DELAY_CLOCK_MS;
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.ms_clock_start = 0x1FFFFFFF;
    vm_done(vm_make(&cfg));
    stvm_config_init(&cfg);
    cfg.stack_size = (size_t)64 << 20;
    cfg.idle_relinquish_us = 10000000;
    cfg.external_table_size = 65536;
    vm_done(vm_make(&cfg));
}

Test(vm, vm_new_with_null_out_is_einval)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cr_assert_eq(stvm_vm_create(&cfg, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_vm_create(NULL, NULL), STVM_EINVAL);
}

Test(vm, vm_free_of_null_is_ignored)
{
    stvm_vm_free(NULL);
}

Test(vm, every_error_code_has_a_distinct_name_and_text)
{
    /* Written out rather than taken from STVM_ERRNO_MAP, so that a code changed or
     * dropped there shows here. */
    static const struct {
        int code;
        const char *name;
    } codes[] = {
        {STVM_OK, "STVM_OK"},           {STVM_EINVAL, "STVM_EINVAL"},
        {STVM_ENOMEM, "STVM_ENOMEM"},   {STVM_EDEADLOCK, "STVM_EDEADLOCK"},
        {STVM_ESTATE, "STVM_ESTATE"},   {STVM_EPERM, "STVM_EPERM"},
        {STVM_ETIMEDOUT, "STVM_ETIMEDOUT"}, {STVM_ERANGE, "STVM_ERANGE"},
        {STVM_ENOTPROC, "STVM_ENOTPROC"}, {STVM_EBUSY, "STVM_EBUSY"},
        {STVM_EFULL, "STVM_EFULL"},     {STVM_ESYS, "STVM_ESYS"},
        {STVM_EPRIM, "STVM_EPRIM"},     {STVM_ECLOSED, "STVM_ECLOSED"},
        {STVM_ECONNREFUSED, "STVM_ECONNREFUSED"}, {STVM_ESTOPPED, "STVM_ESTOPPED"},
        {STVM_EPROTO, "STVM_EPROTO"},   {STVM_EWAITING, "STVM_EWAITING"},
        {STVM_EINUSE, "STVM_EINUSE"},   {STVM_EINTR, "STVM_EINTR"},
        {STVM_ESIZE, "STVM_ESIZE"},     {STVM_EEOF, "STVM_EEOF"},
        {STVM_ECONNRESET, "STVM_ECONNRESET"}, {STVM_EPIPE, "STVM_EPIPE"},
        {STVM_EADDRINUSE, "STVM_EADDRINUSE"}, {STVM_EADDRNOTAVAIL, "STVM_EADDRNOTAVAIL"},
        {STVM_ENETUNREACH, "STVM_ENETUNREACH"}, {STVM_EHOSTUNREACH, "STVM_EHOSTUNREACH"},
        {STVM_EMFILE, "STVM_EMFILE"},   {STVM_EACCES, "STVM_EACCES"},
        {STVM_ENOENT, "STVM_ENOENT"},   {STVM_ENOTFOUND, "STVM_ENOTFOUND"},
        {STVM_EAGAIN, "STVM_EAGAIN"},
    };
    enum { N = sizeof codes / sizeof codes[0] };
    cr_assert_eq(N, 33);
    const char *generic = stvm_strerror(-N);
    cr_assert_not_null(generic);
    cr_assert_gt(strlen(generic), 0);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(codes[i].code, -i, "codes are 0, -1, ... -%d in this order", N - 1);
        const char *t = stvm_strerror(codes[i].code), *n = stvm_err_name(codes[i].code);
        cr_assert_not_null(t);
        cr_assert_not_null(n);
        cr_assert_gt(strlen(t), 0);
        cr_assert_str_eq(n, codes[i].name);
        cr_assert_str_neq(t, generic, "%s has only the generic text", n);
        for (int j = 0; j < i; j++) {
            cr_assert_str_neq(t, stvm_strerror(codes[j].code), "same text for %d and %d",
                              codes[i].code, codes[j].code);
            cr_assert_str_neq(n, stvm_err_name(codes[j].code));
        }
    }
    /* unknown codes: one generic text and "STVM_E?" */
    const int unknown[] = {1, -N, 12345, -100000, INT32_MIN};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        cr_assert_str_eq(stvm_strerror(unknown[i]), generic);
        cr_assert_str_eq(stvm_err_name(unknown[i]), "STVM_E?");
    }
}

Test(vm, every_code_of_the_errno_map_has_a_distinct_name_and_text)
{
    /* Taken from STVM_ERRNO_MAP itself: a row added there without a name or text of
     * its own shows here, and each row's text is the one stvm_strerror answers. */
    static const struct {
        int code;
        const char *name, *text;
    } map[] = {
#define ROW(name, code, text) {code, "STVM_" #name, text},
        STVM_ERRNO_MAP(ROW)
#undef ROW
    };
    enum { N = sizeof map / sizeof map[0] };
    for (int i = 0; i < N; i++) {
        cr_assert_str_eq(stvm_strerror(map[i].code), map[i].text, "%s", map[i].name);
        cr_assert_str_eq(stvm_err_name(map[i].code), map[i].name);
        cr_assert_str_neq(map[i].text, stvm_strerror(1), "%s has the unknown text", map[i].name);
        for (int j = 0; j < i; j++) {
            cr_assert_neq(map[i].code, map[j].code, "%s and %s", map[i].name, map[j].name);
            cr_assert_str_neq(map[i].text, map[j].text, "%s and %s", map[i].name, map[j].name);
            cr_assert_str_neq(map[i].name, map[j].name);
        }
    }
}

Test(vm, the_codes_split_from_ebusy_have_their_own_texts)
{
    /* EBUSY is a running VM's (stvm_run, stvm_run_mode, stvm_measure_raw_switch); a
     * second waiter and a close or free under a waiter or a call have codes of their
     * own, at the next free numbers. */
    cr_assert_eq(STVM_EBUSY, -9);
    cr_assert_eq(STVM_EWAITING, -17);
    cr_assert_eq(STVM_EINUSE, -18);
    cr_assert_str_eq(stvm_strerror(STVM_EBUSY), "a VM is already running");
    cr_assert_str_eq(stvm_strerror(STVM_EWAITING), "another process already waits on it");
    cr_assert_str_eq(stvm_strerror(STVM_EINUSE),
                     "still in use: a waiting process, its owner, a pending call or another "
                     "object holds it");
    cr_assert_str_eq(stvm_err_name(STVM_EWAITING), "STVM_EWAITING");
    cr_assert_str_eq(stvm_err_name(STVM_EINUSE), "STVM_EINUSE");
    cr_assert_str_eq(stvm_strerror(STVM_ENOTPROC), "not called from a green process of this VM");
}

Test(vm, estates_text_fits_a_wait_cut_short_by_a_suspend_as_well_as_an_object_in_the_wrong_state)
{
    /* Every wait answers ESTATE when its process was suspended and resumed meanwhile;
     * other calls answer it for an object that does not allow the call now. */
    const char *t = stvm_strerror(STVM_ESTATE);
    cr_assert(strstr(t, "state") && strstr(t, "object"), "%s", t);
    cr_assert(strstr(t, "suspended"), "%s", t);
}

Test(vm, library_version_matches_the_header)
{
    cr_assert_eq(stvm_version(), STVM_VERSION_HEX);
    cr_assert_eq(stvm_version(), 0x000300u);
    cr_assert_eq(STVM_ABI_VERSION, 2, "the soname is libstvm.so.2");
    cr_assert_str_eq(stvm_version_string(), STVM_VERSION_STRING);
}

Test(vm, context_backend_is_the_one_this_binary_was_built_with)
{
    const char *b = stvm_context_backend();
    cr_assert_not_null(b);
#ifdef STVM_CTX_UCONTEXT
    cr_assert_str_eq(b, "ucontext");
#elif defined(__aarch64__)
    cr_assert_str_eq(b, "asm-aarch64");
#else
    cr_assert_str_eq(b, "asm-x86_64");
#endif
}

Test(vm, raw_switch_measurement_validates_and_measures)
{
    double ns = -1.0;
    cr_assert_eq(stvm_measure_raw_switch(0, &ns), STVM_EINVAL);
    cr_assert_eq(stvm_measure_raw_switch(10, NULL), STVM_EINVAL);
    cr_assert_eq(ns, -1.0);
    cr_assert_eq(stvm_measure_raw_switch(10000, &ns), STVM_OK);
    cr_assert_gt(ns, 0.0);
}

Test(vm, new_vm_has_only_its_idle_process_and_runs_to_ok_at_once)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_stats s = stats_of(vm);
    cr_assert_eq(s.processes_live, 1, "the idle process");
    cr_assert_null(stvm_vm_active_process(vm));
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK, "and again");
    cr_assert_null(stvm_vm_active_process(vm));
    s = stats_of(vm);
    cr_assert_eq(s.processes_live, 1);
    char buf[16] = "x";
    cr_assert_eq(stvm_vm_blocked_report(vm, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "");
    vm_done(vm);
}

Test(vm, objects_live_and_bytes_live_return_to_start_after_freeing)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_stats before = stats_of(vm);
    enum { N = 300 };
    static stvm_semaphore *sems[N];
    static stvm_mutex *mtx[N];
    for (int i = 0; i < N; i++) {
        cr_assert_eq(stvm_semaphore_new(vm, &sems[i]), STVM_OK);
        cr_assert_eq(stvm_mutex_new(vm, &mtx[i]), STVM_OK);
    }
    stvm_stats mid = stats_of(vm);
    cr_assert_eq(mid.objects_live, before.objects_live + 2 * N);
    cr_assert_eq(mid.objects_allocated, before.objects_allocated + 2 * N);
    cr_assert_gt(mid.bytes_live, before.bytes_live);
    cr_assert_eq(mid.bytes_allocated - before.bytes_allocated, mid.bytes_live - before.bytes_live);
    cr_assert_str_eq(stvm_oop_class_name(vm, stvm_semaphore_oop(sems[0])), "Semaphore");
    cr_assert_str_eq(stvm_oop_class_name(vm, stvm_mutex_oop(mtx[0])), "Mutex");
    for (int i = 0; i < N; i++) {
        cr_assert_eq(stvm_semaphore_free(vm, sems[i]), STVM_OK);
        cr_assert_eq(stvm_mutex_free(vm, mtx[i]), STVM_OK);
    }
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.objects_live, before.objects_live);
    cr_assert_eq(after.bytes_live, before.bytes_live);
    cr_assert_eq(after.objects_allocated, mid.objects_allocated, "cumulative");
    vm_done(vm);
}

Test(vm, semaphore_and_mutex_constructors_reject_null)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *s = (stvm_semaphore *)(uintptr_t)0x5EED0;
    stvm_mutex *m = (stvm_mutex *)(uintptr_t)0x5EED0;
    cr_assert_eq(stvm_semaphore_new(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_new(NULL, &s), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_new(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_new(NULL, &m), STVM_EINVAL);
    cr_assert_eq((uintptr_t)s, 0x5EED0);
    cr_assert_eq((uintptr_t)m, 0x5EED0);
    vm_done(vm);
}

Test(vm, reset_stats_zeroes_counters_but_keeps_live_counts)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_signal(vm, sem), STVM_OK);
    stvm_stats s = stats_of(vm);
    cr_assert_eq(s.semaphore_signals, 1);
    uint64_t live = s.objects_live, bytes = s.bytes_live;
    stvm_vm_reset_stats(vm);
    stvm_vm_reset_stats(NULL);
    s = stats_of(vm);
    cr_assert_eq(s.semaphore_signals, 0);
    cr_assert_eq(s.objects_allocated, 0);
    cr_assert_eq(s.objects_live, live);
    cr_assert_eq(s.bytes_live, bytes);
    cr_assert_eq(s.processes_live, 1);
    cr_assert_eq(stvm_vm_get_stats(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_vm_get_stats(NULL, &s), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    vm_done(vm);
}

Test(vm, simulated_clock_starts_at_the_configured_time)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.sim_start_us = 3900000000123456ull;
    cfg.ms_clock_start = 12345;
    stvm_vm *vm = vm_make(&cfg);
    cr_assert_eq(stvm_vm_now_us(vm), 3900000000123456ull);
    cr_assert_eq(stvm_vm_now_us(vm), 3900000000123456ull, "simulated time does not drift");
    cr_assert_eq(stvm_vm_millisecond_clock(vm), 12345);
    cr_assert_eq(stvm_vm_now_us(NULL), 0);
    vm_done(vm);
}

Test(vm, real_clock_is_utc_microseconds_since_1901)
{
    stvm_vm *vm = vm_make(NULL);
    uint64_t now = stvm_vm_now_us(vm);
    /* 2020-01-01 is 3786825600 s after 1901-01-01; 2200 is far away */
    cr_assert_gt(now, 3786825600ull * 1000000u);
    cr_assert_lt(now, 9400000000ull * 1000000u);
    cr_assert_leq(stvm_vm_millisecond_clock(vm), 0x1FFFFFFFu);
    cr_assert_geq(stvm_vm_now_us(vm), now, "monotonic");
    vm_done(vm);
}

static void blocks_holding(stvm_vm *vm, void *arg)
{
    void **objs = arg;
    stvm_mutex_enter(vm, objs[1]);
    stvm_semaphore_wait(vm, objs[0]);
}

static void waits_for_mutex(stvm_vm *vm, void *arg)
{
    void **objs = arg;
    stvm_mutex_enter(vm, objs[1]);
}

static void never_runs(stvm_vm *vm, void *arg)
{
    (void)vm;
    *(int *)arg = 1;
}

/* Under AddressSanitizer's leak check this proves stvm_vm_free releases the stacks,
 * records and objects of processes in every state. */
Test(vm, freeing_a_vm_with_unfinished_processes_releases_everything)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem;
    stvm_mutex *m;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    void *objs[2] = {sem, m};
    int ran_s = 0, ran_b = 0, ran_r = 0;
    cr_assert_eq(stvm_spawn(vm, 50, "holder", blocks_holding, objs, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "mutex waiter", waits_for_mutex, objs, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_suspended(vm, 30, "suspended", never_runs, &ran_s, 0, NULL),
                 STVM_OK);
    cr_assert_eq(stvm_spawn_sized(vm, 30, "big", never_runs, &ran_b, (size_t)1 << 20, NULL),
                 STVM_OK);
    stvm_oop box;
    cr_assert_eq(stvm_int_from_u64(vm, UINT64_MAX, &box), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    cr_assert_eq(ran_b, 1);
    cr_assert_eq(ran_s, 0);
    cr_assert_eq(stvm_spawn(vm, 30, "ready", never_runs, &ran_r, NULL), STVM_OK);
    cr_assert_eq(stats_of(vm).processes_live, 5, "idle, holder, waiter, suspended, ready");
    cr_assert_eq(ran_r, 0);
    vm_done(vm);
}

/* ---- two VMs on two OS threads -------------------------------------------------- */

enum { PINGPONG_ROUNDS = 200000 };

typedef struct pingpong {
    int bits;
    stvm_vm *vm;
    stvm_semaphore *ping, *pong;
    long count_a, count_b;
    int errors;
    int setup_err, run_result, invariants;
    int64_t excess_ping, excess_pong;
    char why[256];
    stvm_stats stats;
} pingpong;

static void ping_side(stvm_vm *vm, void *arg)
{
    pingpong *pp = arg;
    for (int i = 0; i < PINGPONG_ROUNDS; i++) {
        if (stvm_semaphore_signal(vm, pp->ping) != STVM_OK)
            pp->errors++;
        if (stvm_semaphore_wait(vm, pp->pong) != STVM_OK)
            pp->errors++;
        pp->count_a++;
    }
}

static void pong_side(stvm_vm *vm, void *arg)
{
    pingpong *pp = arg;
    for (int i = 0; i < PINGPONG_ROUNDS; i++) {
        if (stvm_semaphore_wait(vm, pp->ping) != STVM_OK)
            pp->errors++;
        pp->count_b++;
        if (stvm_semaphore_signal(vm, pp->pong) != STVM_OK)
            pp->errors++;
    }
}

/* Everything on the thread that owns the VM: create, run, inspect, free. Criterion's
 * asserts stay on the test's thread. */
static void *pingpong_thread(void *arg)
{
    pingpong *pp = arg;
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = pp->bits;
    if ((pp->setup_err = stvm_vm_create(&cfg, &pp->vm)) != STVM_OK)
        return NULL;
    if ((pp->setup_err = stvm_semaphore_new(pp->vm, &pp->ping)) ||
        (pp->setup_err = stvm_semaphore_new(pp->vm, &pp->pong)) ||
        (pp->setup_err = stvm_spawn(pp->vm, 40, "ping", ping_side, pp, NULL)) ||
        (pp->setup_err = stvm_spawn(pp->vm, 40, "pong", pong_side, pp, NULL))) {
        stvm_vm_free(pp->vm);
        return NULL;
    }
    pp->run_result = stvm_run(pp->vm);
    stvm_vm_get_stats(pp->vm, &pp->stats);
    pp->excess_ping = stvm_semaphore_excess(pp->vm, pp->ping);
    pp->excess_pong = stvm_semaphore_excess(pp->vm, pp->pong);
    pp->invariants = stvm_vm_check_invariants(pp->vm, pp->why, sizeof pp->why);
    stvm_vm_free(pp->vm);
    return NULL;
}

Test(vm, two_vms_on_two_threads_run_at_once_with_exact_counts)
{
    pingpong pp[2];
    memset(pp, 0, sizeof pp);
    pp[0].bits = 61;
    pp[1].bits = 31;
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, pingpong_thread, &pp[i]), 0);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(pp[i].setup_err, STVM_OK, "VM %d set-up: %s", i,
                     stvm_err_name(pp[i].setup_err));
        cr_assert_eq(pp[i].run_result, STVM_OK, "VM %d: %s", i, stvm_err_name(pp[i].run_result));
        cr_assert_eq(pp[i].invariants, STVM_OK, "VM %d: %s", i, pp[i].why);
        cr_assert_eq(pp[i].errors, 0);
        cr_assert_eq(pp[i].count_a, PINGPONG_ROUNDS);
        cr_assert_eq(pp[i].count_b, PINGPONG_ROUNDS);
        cr_assert_eq(pp[i].stats.semaphore_signals, 2u * PINGPONG_ROUNDS);
        cr_assert_eq(pp[i].stats.semaphore_waits, 2u * PINGPONG_ROUNDS);
        cr_assert_geq(pp[i].stats.context_switches, 2u * PINGPONG_ROUNDS);
        cr_assert_eq(pp[i].excess_ping, 0);
        cr_assert_eq(pp[i].excess_pong, 0);
    }
}
