/*
 * The aio layer's wait on a kernel without epoll_pwait2 (Linux before 5.11, valgrind
 * 3.19): made here by a seccomp filter that answers that system call ENOSYS
 * (tests/oldkernel/no_pwait2.h), installed in the test's own worker process. The VM
 * must turn to epoll_wait, with its timeout rounded up to whole milliseconds: a timed
 * wait still ends, never early and after one OS sleep (the library before this spun,
 * retrying the call), and a descriptor's readiness still ends an IO wait (before, it
 * was never seen). Real clock; every wait bounded (a watchdog thread stops the VM).
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "oldkernel/no_pwait2.h"
#include "../vm/aio.h"   /* the timeout's rounding, and the VM's decision */

TestSuite(aio, .timeout = 30);

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void without_pwait2(void)
{
    cr_assert_eq(no_pwait2_install(), 0, "seccomp filter refused: %s", strerror(errno));
}

/* Stops the VM after 5 s unless told it is done: a wait that never ends fails the test
 * with STVM_ESTOPPED instead of hanging it. */
typedef struct watchdog {
    stvm_vm *vm;
    atomic_bool done;
    pthread_t thread;
} watchdog;

static void *watch(void *arg)
{
    watchdog *w = arg;
    for (int i = 0; i < 500 && !atomic_load(&w->done); i++)
        usleep(10000);
    if (!atomic_load(&w->done))
        stvm_stop(w->vm);
    return NULL;
}

static void watchdog_start(watchdog *w, stvm_vm *vm)
{
    w->vm = vm;
    atomic_init(&w->done, false);
    cr_assert_eq(pthread_create(&w->thread, NULL, watch, w), 0);
}

static void watchdog_end(watchdog *w)
{
    atomic_store(&w->done, true);
    pthread_join(w->thread, NULL);
}

/* ---- the timeout given to epoll_wait ------------------------------------------------ */

Test(aio, timeout_in_milliseconds_rounds_up_never_down)
{
    cr_assert_eq(stvm__aio_timeout_ms(-1), -1, "no limit stays no limit");
    cr_assert_eq(stvm__aio_timeout_ms(0), 0, "a look stays a look");
    cr_assert_eq(stvm__aio_timeout_ms(1), 1);
    cr_assert_eq(stvm__aio_timeout_ms(300000), 1);
    cr_assert_eq(stvm__aio_timeout_ms(999999), 1);
    cr_assert_eq(stvm__aio_timeout_ms(1000000), 1);
    cr_assert_eq(stvm__aio_timeout_ms(1000001), 2);
    cr_assert_eq(stvm__aio_timeout_ms(2500000), 3);
    cr_assert_eq(stvm__aio_timeout_ms(3000000), 3);
    cr_assert_eq(stvm__aio_timeout_ms((int64_t)INT_MAX * 1000000 + 1), INT_MAX);
    cr_assert_eq(stvm__aio_timeout_ms(INT64_MAX), INT_MAX);
}

/* ---- timed waits ---------------------------------------------------------------------- */

typedef struct timed {
    stvm_vm *vm;
    int64_t asked_us[3];
    int64_t took_us[3];
    int rc[3];
    int bad_line;
} timed;

static void waits_timed(stvm_vm *vm, void *arg)
{
    timed *t = arg;
    stvm_semaphore *s = NULL;
    GCHECK(t, stvm_semaphore_new(vm, &s) == STVM_OK);
    for (int i = 0; i < 3; i++) {
        int64_t t0 = mono_us();
        t->rc[i] = stvm_semaphore_wait_timeout_us(vm, s, t->asked_us[i]);
        t->took_us[i] = mono_us() - t0;
    }
    stvm_semaphore_free(vm, s);
}

Test(aio, pwait2_enosys_falls_back_to_epoll_wait_never_early)
{
    without_pwait2();
    timed t = {.vm = vm_make(NULL), .asked_us = {3000, 2500, 300}};
    spawn(t.vm, 40, "timed", waits_timed, &t);
    watchdog w;
    watchdog_start(&w, t.vm);
    int err = stvm_run(t.vm);
    watchdog_end(&w);
    cr_assert_eq(err, STVM_OK, "stvm_run: %s", stvm_err_name(err));
    ASSERT_GREEN_OK(&t);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(t.rc[i], STVM_ETIMEDOUT, "wait %d: %s", i, stvm_err_name(t.rc[i]));
        cr_assert_geq(t.took_us[i], t.asked_us[i], "a %lld us wait ended after %lld us",
                      (long long)t.asked_us[i], (long long)t.took_us[i]);
    }
    /* One sleep per wait (two if the first woke at a millisecond boundary just short
     * of the VM clock's deadline); a retried ENOSYS, or a timeout rounded down that
     * ends as a 0 ms look, makes thousands. */
    stvm_stats s = stats_of(t.vm);
    cr_assert_leq(s.os_sleeps, 6, "%llu OS sleeps for three timed waits",
                  (unsigned long long)s.os_sleeps);
    cr_assert(t.vm->aio.no_pwait2, "the VM waits with epoll_wait from now on");
    vm_done(t.vm);
}

/* Does the kernel answer epoll_pwait2 (asked directly, not through the library)? */
static bool kernel_has_pwait2(void)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    cr_assert_geq(ep, 0);
    struct epoll_event ev;
    struct timespec zero = {0, 0};
    long r = syscall(SYS_epoll_pwait2, ep, &ev, 1, &zero, NULL, (size_t)0);
    bool has = !(r < 0 && errno == ENOSYS);
    close(ep);
    return has;
}

Test(aio, each_vm_asks_for_epoll_pwait2_until_the_kernel_refuses_it)
{
    /* This machine's kernel first (make check-old-kernel runs this suite without it). */
    bool has = kernel_has_pwait2();
    stvm_vm *vm = vm_make(NULL);
    timed t = {.vm = vm, .asked_us = {1000, 1000, 1000}};
    spawn(vm, 40, "timed", waits_timed, &t);
    run_ok(vm);
    cr_assert_eq(vm->aio.no_pwait2, !has, "epoll_pwait2 %s, the VM %s it",
                 has ? "answers" : "does not", vm->aio.no_pwait2 ? "gave up" : "kept");
    vm_done(vm);

    without_pwait2();
    vm = vm_make(NULL);
    t = (timed){.vm = vm, .asked_us = {1000, 1000, 1000}};
    cr_assert_not(vm->aio.no_pwait2, "a new VM tries epoll_pwait2 first");
    spawn(vm, 40, "timed", waits_timed, &t);
    run_ok(vm);
    ASSERT_GREEN_OK(&t);
    cr_assert(vm->aio.no_pwait2);
    vm_done(vm);
}

/* ---- IO waits ---------------------------------------------------------------------- */

typedef struct piped {
    stvm_vm *vm;
    int fds[2];
    int rc;
    char got;
    int64_t written_us;         /* when the writer thread wrote (monotonic) */
    int64_t woke_us;            /* when the reader's wait ended */
    pthread_t writer;
    int bad_line;
} piped;

static void *writes_after_3ms(void *arg)
{
    piped *p = arg;
    usleep(3000);
    p->written_us = mono_us();
    if (write(p->fds[1], "x", 1) != 1)
        p->written_us = -1;
    return NULL;
}

static void reads_one(stvm_vm *vm, void *arg)
{
    piped *p = arg;
    p->rc = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, -1);
    p->woke_us = mono_us();
    GCHECK(p, read(p->fds[0], &p->got, 1) == 1);
}

Test(aio, pwait2_enosys_an_io_wait_ends_when_its_descriptor_is_ready)
{
    without_pwait2();
    piped p = {.vm = vm_make(NULL)};
    cr_assert_eq(pipe(p.fds), 0);
    spawn(p.vm, 40, "reader", reads_one, &p);
    cr_assert_eq(pthread_create(&p.writer, NULL, writes_after_3ms, &p), 0);
    watchdog w;
    watchdog_start(&w, p.vm);
    int err = stvm_run(p.vm);
    watchdog_end(&w);
    pthread_join(p.writer, NULL);
    cr_assert_eq(err, STVM_OK, "stvm_run: %s (the ready pipe was never seen)",
                 stvm_err_name(err));
    ASSERT_GREEN_OK(&p);
    cr_assert_eq(p.rc, STVM_IO_READ);
    cr_assert_eq(p.got, 'x');
    cr_assert_geq(p.written_us, 0);
    cr_assert_geq(p.woke_us, p.written_us, "the wait ended before the write");
    stvm_stats s = stats_of(p.vm);
    cr_assert_eq(s.fds_ready, 1);
    cr_assert_leq(s.os_sleeps, 3, "%llu OS sleeps for one IO wait",
                  (unsigned long long)s.os_sleeps);
    close(p.fds[0]);
    close(p.fds[1]);
    vm_done(p.vm);
}
