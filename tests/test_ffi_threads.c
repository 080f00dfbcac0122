/*
 * The FFI across OS threads: threaded callouts on the pool and on named workers while
 * other processes run, callers terminated or suspended in the middle of one, callbacks
 * from foreign threads and from workers, and stvm_vm_free with calls and callbacks in
 * flight. This suite also runs under ThreadSanitizer (mk/tsan.mk).
 *
 * Blocking C calls here block on a pipe that a green process writes once it has seen
 * what the test is about, so nothing waits on the wall clock except the one test of
 * stvm_vm_free's five-second limit.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "helpers.h"

TestSuite(ffi_threads, .timeout = 60);

/* ---- the C side ------------------------------------------------------------------- */

static atomic_int started, returned;     /* block_on's progress */
static _Atomic pthread_t ran_on;         /* the thread the last call ran on */

static int64_t add(int64_t a, int64_t b)
{
    atomic_store(&ran_on, pthread_self());
    return a + b;
}

/* Read one byte from fd, then answer big: a result a 31-bit VM has to box. */
static int64_t block_on(int64_t fd, int64_t big)
{
    atomic_store(&ran_on, pthread_self());
    atomic_fetch_add(&started, 1);
    char c;
    ssize_t n;
    while ((n = read((int)fd, &c, 1)) < 0 && errno == EINTR) {
    }
    atomic_fetch_add(&returned, 1);
    return n == 1 ? big : -1;
}

/* ---- helpers ------------------------------------------------------------------------ */

typedef struct threaded {
    stvm_vm *vm;
    stvm_ffi_function *add_fn, *block_fn;
    stvm_ffi_worker *worker;
    int fds[2];                  /* block_on reads fds[0] */
    stvm_process *caller;
    int rc, failure;
    int free_rc;                 /* stvm_ffi_worker_free while a call runs on it */
    int64_t value;
    int ticks;
    pthread_t worker_thread[2];
    int bad_line;
} threaded;

static void setup(threaded *t, stvm_vm *vm)
{
    *t = (threaded){.vm = vm};
    cr_assert_eq(pipe(t->fds), 0);
    cr_assert_eq(stvm_ffi_function_at(vm, (void *)add, "i64(i64,i64)", &t->add_fn), STVM_OK);
    cr_assert_eq(stvm_ffi_function_at(vm, (void *)block_on, "i64(i64,i64)", &t->block_fn),
                 STVM_OK);
    atomic_store(&started, 0);
    atomic_store(&returned, 0);
}

static void teardown(threaded *t)
{
    close(t->fds[0]);
    close(t->fds[1]);
    SCENARIO_DONE(t);
}

static void release_block(threaded *t)
{
    ssize_t n = write(t->fds[1], "x", 1);
    (void)n;
}

/* A threaded call of fn(a, b) on w (NULL: the pool); the answer in t->value. */
static int call2(stvm_vm *vm, threaded *t, stvm_ffi_worker *w, stvm_ffi_function *fn,
                 int64_t a, int64_t b)
{
    stvm_oop args[2], r = STVM_NIL;
    stvm_int_from_i64(vm, a, &args[0]);
    stvm_int_from_i64(vm, b, &args[1]);
    int rc = stvm_ffi_call_on(vm, w, fn, args, 2, &r);
    if (rc == STVM_OK) {
        stvm_int_to_i64(vm, r, &t->value);
        stvm_oop_release(vm, r);
    }
    return rc;
}

static void call_block(stvm_vm *vm, void *arg)
{
    threaded *t = arg;
    t->rc = call2(vm, t, t->worker, t->block_fn, t->fds[0], INT64_MAX);
}

/* Runs while the caller's worker blocks: proves the VM kept scheduling, then lets the
 * worker go. */
static void tick_then_release(stvm_vm *vm, void *arg)
{
    threaded *t = arg;
    for (int i = 0; i < 20; i++) {
        GCHECK(t, stvm_delay_wait_us(vm, 50) == STVM_OK);
        t->ticks++;
    }
    GCHECK(t, atomic_load(&returned) == 0);
    release_block(t);
}

/* ---- threaded callouts ---------------------------------------------------------------- */

static void call_add(stvm_vm *vm, void *arg)
{
    threaded *t = arg;
    t->rc = call2(vm, t, NULL, t->add_fn, 40, 2);
}

Test(ffi_threads, a_threaded_callout_answers_as_a_same_thread_one_from_another_thread)
{
    threaded t;
    setup(&t, vm_make(NULL));
    spawn(t.vm, 40, "caller", call_add, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc, STVM_OK);
    cr_assert_eq(t.value, 42);
    cr_assert(!pthread_equal(atomic_load(&ran_on), pthread_self()), "ran on a worker");
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(t.vm, &st), STVM_OK);
    cr_assert_eq(st.callouts_threaded, 1);
    cr_assert_eq(st.callouts, 0);
    teardown(&t);
}

Test(ffi_threads, other_processes_run_while_a_worker_blocks_and_the_result_comes_back_boxed)
{
    threaded t;
    setup(&t, vm_make_sim(31, STVM_DELAY_CLOCK_US));
    spawn(t.vm, 40, "caller", call_block, &t);
    spawn(t.vm, 30, "ticker", tick_then_release, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc, STVM_OK);
    cr_assert_eq(t.value, INT64_MAX);
    cr_assert_eq(t.ticks, 20, "the ticker ran while the call blocked");
    teardown(&t);
}

typedef struct many {
    threaded *t;
    int id;
    int wrong;
} many;

static void add_many(stvm_vm *vm, void *arg)
{
    many *m = arg;
    for (int i = 0; i < 10; i++) {
        int rc = call2(vm, m->t, NULL, m->t->add_fn, m->id, i);
        m->wrong += rc != STVM_OK || m->t->value != m->id + i;
    }
}

Test(ffi_threads, many_concurrent_threaded_calls_each_come_back_once_with_their_result)
{
    threaded t;
    setup(&t, vm_make(NULL));
    many m[24];
    for (int i = 0; i < 24; i++) {
        m[i] = (many){.t = &t, .id = 1000 * i};
        cr_assert_eq(stvm_spawn(t.vm, 40, "adder", add_many, &m[i], NULL), STVM_OK);
    }
    RUN_OK_GREEN(&t);
    for (int i = 0; i < 24; i++)
        cr_assert_eq(m[i].wrong, 0, "adder %d", i);
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(t.vm, &st), STVM_OK);
    cr_assert_eq(st.callouts_threaded, 240);
    teardown(&t);
}

static void on_worker_twice(stvm_vm *vm, void *arg)
{
    threaded *t = arg;
    for (int i = 0; i < 2; i++) {
        GCHECK(t, call2(vm, t, t->worker, t->add_fn, i, 1) == STVM_OK);
        t->worker_thread[i] = atomic_load(&ran_on);
    }
}

Test(ffi_threads, a_named_worker_runs_its_calls_on_a_thread_of_its_own)
{
    threaded t;
    setup(&t, vm_make(NULL));
    cr_assert_eq(stvm_ffi_worker_new(t.vm, "my worker", &t.worker), STVM_OK);
    spawn(t.vm, 40, "caller", on_worker_twice, &t);
    RUN_OK_GREEN(&t);
    cr_assert(pthread_equal(t.worker_thread[0], t.worker_thread[1]), "one thread");
    cr_assert(!pthread_equal(t.worker_thread[0], pthread_self()));
    char name[16] = "";
    cr_assert_eq(pthread_getname_np(t.worker_thread[0], name, sizeof name), 0);
    cr_assert_str_eq(name, "my worker");
    cr_assert_eq(stvm_ffi_worker_free(t.vm, t.worker), STVM_OK);
    cr_assert_eq(stvm_ffi_worker_free(t.vm, NULL), STVM_EINVAL);
    teardown(&t);
}

static void free_busy_worker(stvm_vm *vm, void *arg)
{
    threaded *t = arg;
    t->free_rc = stvm_ffi_worker_free(vm, t->worker);
    release_block(t);
}

Test(ffi_threads, a_named_worker_in_a_call_cannot_be_freed_einuse_tells_a_call_is_pending)
{
    threaded t;
    setup(&t, vm_make(NULL));
    cr_assert_eq(stvm_ffi_worker_new(t.vm, NULL, &t.worker), STVM_OK);
    spawn(t.vm, 40, "caller", call_block, &t);
    spawn(t.vm, 30, "freer", free_busy_worker, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc, STVM_OK);
    cr_assert_eq(t.free_rc, STVM_EINUSE, "got %s", stvm_err_name(t.free_rc));
    const char *text = stvm_strerror(t.free_rc);
    cr_assert(strstr(text, "call"), "%s", text);
    cr_assert(!strstr(text, "running"), "not a running VM: %s", text);
    cr_assert_eq(stvm_ffi_worker_free(t.vm, t.worker), STVM_OK, "idle now");
    teardown(&t);
}

static void bad_threaded_calls(stvm_vm *vm, void *arg)
{
    threaded *t = arg;
    stvm_oop one = 0, r = SENTINEL;
    stvm_int_from_i64(vm, 1, &one);
    GCHECK(t, stvm_ffi_call_threaded(vm, t->add_fn, &one, 1, &r) == STVM_EPRIM);
    GCHECK(t, stvm_ffi_last_failure(vm) == STVM_PRIM_ERR_BAD_NUM_ARGS);
    stvm_oop two[2] = {one, GARBAGE};
    GCHECK(t, stvm_ffi_call_threaded(vm, t->add_fn, two, 2, &r) == STVM_EPRIM);
    GCHECK(t, stvm_ffi_last_failure(vm) == STVM_PRIM_ERR_BAD_ARGUMENT);
    GCHECK(t, stvm_ffi_call_threaded(vm, NULL, two, 2, &r) == STVM_EINVAL);
    GCHECK(t, stvm_ffi_call_on(vm, (stvm_ffi_worker *)t, t->add_fn, two, 2, &r) == STVM_EINVAL);
    GCHECK(t, r == SENTINEL);
}

Test(ffi_threads, threaded_calls_need_a_process_and_check_before_anything_is_queued)
{
    threaded t;
    setup(&t, vm_make(NULL));
    stvm_oop args[2] = {3, 5}, r = SENTINEL;   /* SmallIntegers 1 and 2 */
    cr_assert_eq(stvm_ffi_call_threaded(t.vm, t.add_fn, args, 2, &r), STVM_ENOTPROC);
    cr_assert_eq(stvm_ffi_call_threaded(NULL, t.add_fn, args, 2, &r), STVM_EINVAL);
    spawn(t.vm, 40, "caller", bad_threaded_calls, &t);
    RUN_OK_GREEN(&t);
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(t.vm, &st), STVM_OK);
    cr_assert_eq(st.callouts_threaded, 0, "nothing reached a worker");
    cr_assert_eq(st.callouts_failed, 2);
    teardown(&t);
}

/* ---- callers terminated or suspended in the middle ------------------------------------ */

static void terminate_caller_then_release(stvm_vm *vm, void *arg)
{
    threaded *t = arg;
    GCHECK(t, stvm_process_terminate(vm, t->caller) == STVM_OK);
    release_block(t);
    /* A later call works, whether or not the abandoned job came back yet. */
    GCHECK(t, call2(vm, t, NULL, t->add_fn, 2, 3) == STVM_OK && t->value == 5);
}

Test(ffi_threads, a_caller_terminated_in_a_threaded_call_lets_it_finish_and_drops_the_result)
{
    threaded t;
    setup(&t, vm_make_sim(31, STVM_DELAY_CLOCK_US));
    t.caller = spawn(t.vm, 40, "caller", call_block, &t);
    spawn(t.vm, 30, "terminator", terminate_caller_then_release, &t);
    uint64_t boxed = stats_of(t.vm).boxed_allocated;
    RUN_OK_GREEN(&t);
    cr_assert_eq(state_of(t.vm, t.caller), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stvm_process_release(t.vm, t.caller), STVM_OK);
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(t.vm, &st), STVM_OK);
    cr_assert_eq(st.callouts_abandoned, 1);
    cr_assert_eq(st.callouts_threaded, 2);
    /* The caller's argument 2^63 - 1 was boxed; its result, which nobody was left to
     * take, never was. */
    cr_assert_eq(stats_of(t.vm).boxed_allocated - boxed, 1);
    teardown(&t);
    cr_assert_eq(atomic_load(&returned), 1, "the worker's call returned");
}

static void suspend_release_resume(stvm_vm *vm, void *arg)
{
    threaded *t = arg;
    GCHECK(t, stvm_process_suspend(vm, t->caller) == STVM_OK);
    release_block(t);
    GCHECK(t, stvm_delay_wait_us(vm, 100) == STVM_OK);
    GCHECK(t, stvm_process_resume(vm, t->caller) == STVM_OK);
}

Test(ffi_threads, a_caller_suspended_in_a_threaded_call_and_resumed_gets_its_result)
{
    threaded t;
    setup(&t, vm_make(NULL));
    t.caller = spawn(t.vm, 40, "caller", call_block, &t);
    spawn(t.vm, 30, "suspender", suspend_release_resume, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc, STVM_OK);
    cr_assert_eq(t.value, INT64_MAX);
    teardown(&t);
}

/* ---- callbacks from other threads ------------------------------------------------------ */

typedef struct foreign {
    stvm_vm *vm;
    void *c_function;
    stvm_semaphore *answered;    /* signalled by the handler */
    stvm_semaphore *never;       /* a handler that must hang waits here */
    atomic_int in_handler;
    int priority_seen;
    const char *name_seen;
    bool hang;
    int64_t result;              /* what the foreign thread got */
    pthread_t thread;
    int bad_line;
} foreign;

static int doubling(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs, stvm_oop *result)
{
    foreign *f = arg;
    stvm_process_info info;
    if (stvm_process_get_info(vm, stvm_vm_active_process(vm), &info) == STVM_OK) {
        f->priority_seen = info.priority;
        f->name_seen = info.name;
    }
    atomic_store(&f->in_handler, 1);
    if (f->hang)
        stvm_semaphore_wait(vm, f->never);
    int64_t v = 0;
    stvm_int_to_i64(vm, args[0], &v);
    if (f->answered)
        stvm_semaphore_signal(vm, f->answered);
    return stvm_int_from_i64(vm, 2 * v, result);
}

static void *call_from_thread(void *arg)
{
    foreign *f = arg;
    int64_t (*c)(int64_t);
    memcpy(&c, &f->c_function, sizeof c);
    f->result = c(21);
    return NULL;
}

static void start_thread_then_wait(stvm_vm *vm, void *arg)
{
    foreign *f = arg;
    GCHECK(f, pthread_create(&f->thread, NULL, call_from_thread, f) == 0);
    GCHECK(f, stvm_semaphore_wait(vm, f->answered) == STVM_OK);
}

static void foreign_setup(foreign *f, stvm_vm *vm)
{
    *f = (foreign){.vm = vm, .result = -1};
    stvm_ffi_callback *cb;
    cr_assert_eq(stvm_ffi_callback_new(vm, "i64(i64)", doubling, f, &cb, &f->c_function),
                 STVM_OK);
    f->answered = sem_make(vm);
    f->never = sem_make(vm);
}

Test(ffi_threads, a_foreign_thread_calls_back_through_the_callback_process)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.ffi_callback_priority = 45;
    foreign f;
    foreign_setup(&f, vm_make(&cfg));
    spawn(f.vm, 40, "waiter", start_thread_then_wait, &f);
    RUN_OK_GREEN(&f);
    cr_assert_eq(pthread_join(f.thread, NULL), 0);
    cr_assert_eq(f.result, 42);
    cr_assert_eq(f.priority_seen, 45, "the configured priority");
    cr_assert_str_eq(f.name_seen, "FFI Callback Queue");
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(f.vm, &st), STVM_OK);
    cr_assert_eq(st.callbacks_queued, 1);
    cr_assert_eq(st.callbacks_nested, 0);
    SCENARIO_DONE(&f);
}

Test(ffi_threads, a_foreign_callback_while_the_vm_is_not_running_answers_zero_at_once)
{
    foreign f;
    foreign_setup(&f, vm_make(NULL));
    cr_assert_eq(pthread_create(&f.thread, NULL, call_from_thread, &f), 0);
    cr_assert_eq(pthread_join(f.thread, NULL), 0);
    cr_assert_eq(f.result, 0);
    cr_assert_eq(atomic_load(&f.in_handler), 0);
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(f.vm, &st), STVM_OK);
    cr_assert_eq(st.callbacks_refused, 1);
    SCENARIO_DONE(&f);
}

/* A worker's qsort calls its comparator on the worker's thread: through the queue. */
static int compare_ints(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs,
                        stvm_oop *result)
{
    void *a = NULL, *b = NULL;
    stvm_oop_ptr(vm, args[0], &a);
    stvm_oop_ptr(vm, args[1], &b);
    int x = *(const int *)a, y = *(const int *)b;
    return stvm_int_from_i64(vm, (x > y) - (x < y), result);
}

typedef struct worker_sort {
    stvm_vm *vm;
    stvm_ffi_function *qsort_fn;
    void *compar;
    int numbers[100];
    int rc;
    int bad_line;
} worker_sort;

static void sort_on_worker(stvm_vm *vm, void *arg)
{
    worker_sort *w = arg;
    stvm_oop args[4];
    stvm_ptr_oop(vm, w->numbers, &args[0]);
    stvm_int_from_i64(vm, 100, &args[1]);
    stvm_int_from_i64(vm, sizeof(int), &args[2]);
    stvm_ptr_oop(vm, w->compar, &args[3]);
    w->rc = stvm_ffi_call_threaded(vm, w->qsort_fn, args, 4, NULL);
    stvm_oop_release(vm, args[0]);
    stvm_oop_release(vm, args[3]);
}

Test(ffi_threads, a_worker_s_callout_calls_back_through_the_callback_process)
{
    worker_sort w = {.vm = vm_make(NULL)};
    stvm_ffi_callback *cb;
    cr_assert_eq(stvm_ffi_function_new(w.vm, NULL, "qsort", "void(ptr,size,size,ptr)",
                                       &w.qsort_fn), STVM_OK);
    cr_assert_eq(stvm_ffi_callback_new(w.vm, "i32(ptr,ptr)", compare_ints, NULL, &cb,
                                       &w.compar), STVM_OK);
    uint32_t seed = 11;
    for (int i = 0; i < 100; i++)
        w.numbers[i] = (int)(lcg(&seed) % 10000);
    spawn(w.vm, 40, "sorter", sort_on_worker, &w);
    RUN_OK_GREEN(&w);
    cr_assert_eq(w.rc, STVM_OK);
    for (int i = 1; i < 100; i++)
        cr_assert_leq(w.numbers[i - 1], w.numbers[i]);
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(w.vm, &st), STVM_OK);
    cr_assert_gt(st.callbacks_queued, 99);
    cr_assert_eq(st.callbacks_nested, 0);
    SCENARIO_DONE(&w);
}

/* ---- stvm_vm_free with calls and callbacks in flight --------------------------------- */

/* Run the VM without waiting in the OS until *flag, which another thread sets, reaches
 * at_least (bounded: 10 s). Not ONCE: its one OS wait lasts until something is due, and
 * the call that sets the flag never completes by itself. */
static void run_until(stvm_vm *vm, atomic_int *flag, int at_least)
{
    int64_t t0 = (int64_t)time(NULL);
    while (atomic_load(flag) < at_least) {
        int rc = stvm_run_mode(vm, STVM_RUN_NOWAIT);
        cr_assert(rc == 0 || rc == 1, "run_mode: %s", stvm_err_name(rc));
        cr_assert_lt((int64_t)time(NULL) - t0, 10, "gave up waiting");
        sched_yield();
    }
}

/* Writes the pipe a moment after the main thread said it is about to free the VM, so
 * that a vm_free that did not wait would return before the call did. */
typedef struct late_release {
    threaded *t;
    atomic_int freeing;
} late_release;

static void *release_late(void *arg)
{
    late_release *l = arg;
    while (!atomic_load(&l->freeing))
        sched_yield();
    struct timespec pause = {.tv_nsec = 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    release_block(l->t);
    return NULL;
}

Test(ffi_threads, vm_free_waits_for_a_threaded_call_in_flight)
{
    threaded t;
    setup(&t, vm_make(NULL));
    spawn(t.vm, 40, "caller", call_block, &t);
    run_until(t.vm, &started, 1);
    late_release l = {.t = &t};
    pthread_t writer;
    cr_assert_eq(pthread_create(&writer, NULL, release_late, &l), 0);
    atomic_store(&l.freeing, 1);
    stvm_vm_free(t.vm);
    cr_assert_eq(atomic_load(&returned), 1, "vm_free returned only after the call did");
    cr_assert_eq(pthread_join(writer, NULL), 0);
    close(t.fds[0]);
    close(t.fds[1]);
}

#if !defined(__SANITIZE_THREAD__)

/* In a child: a call that never returns by itself; vm_free gives up after 5 s, names
 * the worker and detaches it; the call is then let go, and its job and function are
 * freed by the worker without the VM. */
static void detach_in_child(void *arg)
{
    (void)arg;
    threaded t = {0};
    stvm_vm *vm = NULL;
    if (pipe(t.fds) || stvm_vm_create(NULL, &vm) ||
        stvm_ffi_function_at(vm, (void *)block_on, "i64(i64,i64)", &t.block_fn) ||
        stvm_spawn(vm, 40, "caller", call_block, &t, NULL))
        _exit(3);
    for (int64_t t0 = time(NULL); atomic_load(&started) == 0;)
        if (stvm_run_mode(vm, STVM_RUN_NOWAIT) < 0 || time(NULL) - t0 > 10)
            _exit(4);
    stvm_vm_free(vm);
    release_block(&t);
    for (int64_t t0 = time(NULL); atomic_load(&returned) == 0;)
        if (time(NULL) - t0 > 10)
            _exit(6);
    /* The worker thread ends after it freed what it held. */
    for (int64_t t0 = time(NULL);;) {
        FILE *f = fopen("/proc/self/status", "r");
        char line[128];
        int threads = 0;
        while (f && fgets(line, sizeof line, f))
            sscanf(line, "Threads: %d", &threads);
        if (f)
            fclose(f);
        if (threads == 1)
            break;
        if (time(NULL) - t0 > 10)
            _exit(7);
        sched_yield();
    }
#if defined(__SANITIZE_ADDRESS__)
    if (__lsan_do_recoverable_leak_check())
        _exit(8);
#endif
    _exit(0);
}

Test(ffi_threads, vm_free_detaches_a_worker_still_in_a_call_after_five_seconds)
{
    char err[2048];
    int status = run_in_child(detach_in_child, NULL, err, sizeof err);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the child ended with status %#x; stderr: %s", status, err);
    cr_assert_not_null(strstr(err, "FFI worker 'stvm-ffi' is still in a call"), "%s", err);
}

#endif

/* Starts the foreign thread from inside the run, then waits for good; with the
 * handler hanging as well, the run ends as a deadlock. */
static void start_thread_and_wait_forever(stvm_vm *vm, void *arg)
{
    foreign *f = arg;
    GCHECK(f, pthread_create(&f->thread, NULL, call_from_thread, f) == 0);
    stvm_semaphore_wait(vm, f->never);
}

Test(ffi_threads, vm_free_answers_zero_to_a_foreign_thread_whose_callback_is_running)
{
    foreign f;
    foreign_setup(&f, vm_make(NULL));
    f.hang = true;
    f.answered = NULL;
    cr_assert_eq(stvm_spawn(f.vm, 40, "starter", start_thread_and_wait_forever, &f, NULL),
                 STVM_OK);
    cr_assert_eq(stvm_run(f.vm), STVM_EDEADLOCK);
    cr_assert_eq(atomic_load(&f.in_handler), 1, "the handler runs, and waits");
    ASSERT_GREEN_OK(&f);
    stvm_vm_free(f.vm);
    cr_assert_eq(pthread_join(f.thread, NULL), 0);
    cr_assert_eq(f.result, 0, "answered 0, never the handler's answer");
}
