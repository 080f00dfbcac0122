/*
 * The aio layer (see aio.h). Handlers are one-shot as in Cog: a firing disarms the
 * handler until it is armed again. How the kernel is told depends on who owns the
 * descriptor:
 *  - the embedder's (stvm_fd_wait): in the epoll set with EPOLLONESHOT and the events
 *    of its armed handlers, so the kernel reports it once and then ignores it until it
 *    is armed again (one epoll_ctl, which also looks at the readiness it already has);
 *  - the VM's own (sockets, stvm__aio_own): edge-triggered, for every event it was ever
 *    armed for, and left so. Its handlers are armed again only after a read, write or
 *    accept found the descriptor not ready (stvm__aio_rearm), so any readiness after
 *    that is a new edge that the next wait reports: re-arming costs no system call,
 *    which on a socket ping-pong is one epoll_ctl per message. The price: an edge
 *    while no handler is armed (data for a reader that gave up waiting) ends an aio
 *    wait once for nothing, where one-shot would have stayed silent.
 * The external table's eventfd is in the set too, level-triggered, so one epoll wait
 * ends on readiness, a deadline (its timeout) and a signal from another thread alike.
 *
 * The table of descriptors is an array indexed by descriptor (Redis, libuv): O(1) to
 * find, as large as the highest descriptor armed.
 */
#include "aio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "external_requests.h"
#include "trace.h"
#include "alloc.h"

#define WAKE_TAG UINT64_MAX   /* epoll data of the external table's eventfd */
#define EVENTS_PER_WAIT 64

int stvm__aio_init(stvm_vm *vm)
{
    stvm_aio *a = &vm->aio;
    a->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (a->epfd < 0)
        return STVM_ESYS;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = WAKE_TAG};
    if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, vm->ext.wake_fd, &ev) != 0) {
        close(a->epfd);
        a->epfd = -1;
        return STVM_ESYS;
    }
    return STVM_OK;
}

void stvm__aio_destroy(stvm_vm *vm)
{
    stvm_aio *a = &vm->aio;
    if (a->epfd >= 0)
        close(a->epfd);
    free(a->fds);
    memset(a, 0, sizeof *a);
    a->epfd = -1;
}

/* Grown by doubling, counted in size_t: an int capacity doubled past 2^30 overflows
 * and never exceeds the descriptor. A descriptor is below INT_MAX (the kernel's own
 * limit on descriptor numbers is lower), so the capacity stops there. */
static stvm_aio_fd *entry(stvm_aio *a, int fd)
{
    if (fd >= a->cap) {
        if (fd >= INT_MAX)
            return NULL;
        size_t ncap = a->cap ? (size_t)a->cap : 64;
        while (ncap <= (size_t)fd)
            ncap *= 2;
        if (ncap > (size_t)INT_MAX)
            ncap = (size_t)INT_MAX;
        if (ncap > SIZE_MAX / sizeof(stvm_aio_fd))
            return NULL;
        stvm_aio_fd *n = stvm__realloc(a->fds, ncap * sizeof *n);
        if (!n)
            return NULL;
        memset(n + a->cap, 0, (ncap - (size_t)a->cap) * sizeof *n);
        a->fds = n;
        a->cap = (int)ncap;
    }
    return &a->fds[fd];
}

static uint32_t epoll_events(const stvm_aio_fd *e)
{
    uint8_t events = e->owned ? e->interest : e->armed;
    return (e->owned ? EPOLLET : EPOLLONESHOT) |
           ((events & STVM_IO_READ) ? EPOLLIN | EPOLLRDHUP : 0) |
           ((events & STVM_IO_WRITE) ? EPOLLOUT : 0);
}

/* What epoll_ctl's refusal of a descriptor means: EINVAL when epoll cannot watch it
 * (EBADF: closed; EPERM: a regular file, a directory, /dev/null; EINVAL and ELOOP: the
 * epoll descriptor itself, or one watching it), ESYS for the rest (ENOMEM, ENOSPC).
 * The one place that decides which descriptors stvm_fd_wait takes. */
static int refusal(int err)
{
    return err == EBADF || err == EPERM || err == EINVAL || err == ELOOP ? STVM_EINVAL
                                                                         : STVM_ESYS;
}

/* Tell epoll what e now waits for. A descriptor closed and reopened under the same
 * number left the set without our knowing: then it is added again. */
static int sync_epoll(stvm_aio *a, int fd, stvm_aio_fd *e)
{
    struct epoll_event ev = {.events = epoll_events(e), .data.u64 = (uint64_t)fd};
    int op = e->in_set ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    int r = epoll_ctl(a->epfd, op, fd, &ev);
    if (r != 0 && errno == (op == EPOLL_CTL_MOD ? ENOENT : EEXIST))
        r = epoll_ctl(a->epfd, op == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
    if (r != 0)
        return refusal(errno);
    e->in_set = true;
    return STVM_OK;
}

int stvm__aio_watchable(stvm_vm *vm, int fd)
{
    if (fd < 0)
        return STVM_EINVAL;
    /* Asked of epoll itself, as arming asks it: added and taken out again, or already
     * in the set (EEXIST). */
    struct epoll_event ev = {.events = 0};
    if (epoll_ctl(vm->aio.epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return errno == EEXIST ? STVM_OK : refusal(errno);
    epoll_ctl(vm->aio.epfd, EPOLL_CTL_DEL, fd, NULL);
    return STVM_OK;
}

static int slot(int event)
{
    return event == STVM_IO_WRITE;
}

/* quiet: the caller has just seen the event not ready (stvm__aio_rearm). */
static int arm(stvm_vm *vm, int fd, int event, int index, bool quiet)
{
    stvm_aio *a = &vm->aio;
    if (fd < 0 || (event != STVM_IO_READ && event != STVM_IO_WRITE))
        return STVM_EINVAL;
    /* A number above the table that names no descriptor does not grow it. */
    if (fd >= a->cap && fcntl(fd, F_GETFD) < 0)
        return STVM_EINVAL;
    stvm_aio_fd *e = entry(a, fd);
    if (!e)
        return STVM_ENOMEM;
    uint8_t was = e->armed, had = e->interest;
    e->armed |= (uint8_t)event;
    /* Armed already: the kernel will report it (the one-shot has not fired). */
    bool told = (was & event) || (quiet && e->owned && e->in_set && (had & event));
    if (!told) {
        if (e->owned)
            e->interest |= (uint8_t)event;
        int err = sync_epoll(a, fd, e);
        if (err) {
            e->armed = was;
            e->interest = had;
            return err;
        }
    }
    e->index[slot(event)] = index;
    e->fired &= (uint8_t)~event;
    if (!e->fired)
        e->hangup = false;
    a->narmed += !(was & event);
    return STVM_OK;
}

int stvm__aio_arm(stvm_vm *vm, int fd, int event, int index)
{
    return arm(vm, fd, event, index, false);
}

int stvm__aio_rearm(stvm_vm *vm, int fd, int event, int index)
{
    return arm(vm, fd, event, index, true);
}

void stvm__aio_own(stvm_vm *vm, int fd)
{
    stvm_aio_fd *e = fd >= 0 ? entry(&vm->aio, fd) : NULL;
    if (!e)
        return;
    /* A number the kernel handed out again: whatever was known of it is gone. */
    vm->aio.narmed -= __builtin_popcount(e->armed);
    *e = (stvm_aio_fd){.owned = true};
}

void stvm__aio_disarm(stvm_vm *vm, int fd, int events)
{
    stvm_aio *a = &vm->aio;
    if (fd < 0 || fd >= a->cap)
        return;
    stvm_aio_fd *e = &a->fds[fd];
    uint8_t off = e->armed & (uint8_t)events;
    if (!off)
        return;
    e->armed &= (uint8_t)~off;
    a->narmed -= __builtin_popcount(off);
    /* With nothing left armed the entry may stay in the set as it is: EPOLLONESHOT
     * reports it at most once more, an owned descriptor once per edge, and a report for
     * an unarmed handler is ignored. */
    if (e->armed && !e->owned)
        sync_epoll(a, fd, e);
}

int stvm__aio_armed(const stvm_vm *vm, int fd)
{
    return fd >= 0 && fd < vm->aio.cap ? vm->aio.fds[fd].armed : 0;
}

int stvm__aio_fired(const stvm_vm *vm, int fd, bool *hangup)
{
    const stvm_aio_fd *e = fd >= 0 && fd < vm->aio.cap ? &vm->aio.fds[fd] : NULL;
    if (hangup)
        *hangup = e && e->hangup;
    return e ? e->fired : 0;
}

int stvm__aio_take_fired(stvm_vm *vm, int fd, int events)
{
    if (fd < 0 || fd >= vm->aio.cap)
        return 0;
    stvm_aio_fd *e = &vm->aio.fds[fd];
    int fired = e->fired & events;
    e->fired &= (uint8_t)~events;
    if (!e->fired)
        e->hangup = false;
    return fired;
}

void stvm__aio_forget(stvm_vm *vm, int fd)
{
    stvm_aio *a = &vm->aio;
    if (fd < 0 || fd >= a->cap)
        return;
    stvm__aio_disarm(vm, fd, STVM_IO_READ | STVM_IO_WRITE);
    if (a->fds[fd].in_set)
        epoll_ctl(a->epfd, EPOLL_CTL_DEL, fd, NULL);
    a->fds[fd] = (stvm_aio_fd){0};
}

/* Fire what is armed and ready on fd (an error or hang-up makes both ready: the reader
 * and the writer each learn of it from their next call). */
static void fire(stvm_vm *vm, int fd, uint32_t got)
{
    stvm_aio *a = &vm->aio;
    if (fd < 0 || fd >= a->cap)
        return;
    stvm_aio_fd *e = &a->fds[fd];
    uint8_t ready = 0;
    if (got & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))
        ready |= STVM_IO_READ;
    if (got & (EPOLLOUT | EPOLLERR | EPOLLHUP))
        ready |= STVM_IO_WRITE;
    uint8_t firing = e->armed & ready;
    for (int ev = STVM_IO_READ; ev <= STVM_IO_WRITE; ev <<= 1) {
        if (!(firing & ev))
            continue;
        int index = e->index[slot(ev)];
        const stvm_semaphore *s = stvm__external_sem(vm, index);
        vm->stats.fds_ready++;
        stvm__trace(vm, STVM_TRACE_IO_READY, stvm__trace_active(vm), (uint64_t)fd, ev);
        if (!s || !s->list.first)
            vm->stats.io_signals_unwaited++;
        if (s)
            stvm__external_request(vm, index);
    }
    e->armed &= (uint8_t)~firing;
    e->fired |= firing;
    if (firing && (got & (EPOLLRDHUP | EPOLLERR | EPOLLHUP)))
        e->hangup = true;
    a->narmed -= __builtin_popcount(firing);
    if (e->armed && !e->owned)   /* EPOLLONESHOT disabled the rest too */
        sync_epoll(a, fd, e);
}

/* ---- the wait ------------------------------------------------------------------------
 * epoll_pwait2 (Linux 5.11) takes its timeout in nanoseconds, so a deadline 300 us away
 * is slept for 300 us. Linux before 5.11 (Debian 11, Ubuntu 20.04, RHEL 8) answers
 * ENOSYS, and so does valgrind 3.19 (Debian 12's), which does not know the call: a loop
 * that only retried it would spin, its descriptors never looked at. So the first ENOSYS
 * turns this VM to epoll_wait for good (no_pwait2), its timeout rounded up to the next
 * millisecond: a wait may end up to 1 ms late, never before its deadline. glibc has had
 * the wrapper since 2.35; an older one (or another libc) gets the system call itself.
 * build/without-pwait2 (tests/oldkernel/) runs a program as on such a kernel: make
 * check-old-kernel runs the IO suites so (docs/debugging.md, "Older kernels"). */
#ifndef STVM_EPOLL_PWAIT2_WRAPPER
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define STVM_EPOLL_PWAIT2_WRAPPER 1
#else
#define STVM_EPOLL_PWAIT2_WRAPPER 0
#endif
#endif
#if !STVM_EPOLL_PWAIT2_WRAPPER && !defined(SYS_epoll_pwait2) && \
    (defined(__x86_64__) || defined(__aarch64__))
#define SYS_epoll_pwait2 441   /* <asm/unistd.h> of Linux 5.11, on both machines */
#endif

static int pwait2(int epfd, struct epoll_event *evs, int n, int64_t timeout_ns)
{
#if STVM_EPOLL_PWAIT2_WRAPPER
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000),
                          .tv_nsec = (long)(timeout_ns % 1000000000)};
    return epoll_pwait2(epfd, evs, n, timeout_ns < 0 ? NULL : &ts, NULL);
#elif defined(SYS_epoll_pwait2)
    /* The kernel's struct __kernel_timespec: two 64-bit fields on every machine. */
    struct { int64_t tv_sec, tv_nsec; } ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
    return (int)syscall(SYS_epoll_pwait2, epfd, evs, n, timeout_ns < 0 ? NULL : &ts, NULL,
                        (size_t)0);
#else
    (void)epfd, (void)evs, (void)n, (void)timeout_ns;
    errno = ENOSYS;
    return -1;
#endif
}

int stvm__aio_timeout_ms(int64_t timeout_ns)
{
    if (timeout_ns <= 0)
        return timeout_ns < 0 ? -1 : 0;
    int64_t ms = timeout_ns / 1000000 + (timeout_ns % 1000000 != 0);
    /* Past 24 days the wait ends early, and the idle loop, which finds its deadline
     * not reached, sleeps again. */
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static int wait_once(stvm_aio *a, struct epoll_event *evs, int n, int64_t timeout_ns)
{
    if (!a->no_pwait2) {
        int r = pwait2(a->epfd, evs, n, timeout_ns);
        if (r >= 0 || errno != ENOSYS)
            return r;
        a->no_pwait2 = true;
    }
    return epoll_wait(a->epfd, evs, n, stvm__aio_timeout_ms(timeout_ns));
}

int stvm__aio_wait(stvm_vm *vm, int64_t timeout_ns)
{
    struct epoll_event evs[EVENTS_PER_WAIT];
    int n;
    do
        n = wait_once(&vm->aio, evs, EVENTS_PER_WAIT, timeout_ns);
    while (n < 0 && errno == EINTR && timeout_ns != 0);
    int what = 0;
    for (int i = 0; i < n; i++) {
        if (evs[i].data.u64 == WAKE_TAG) {
            uint64_t drained;
            ssize_t r = read(vm->ext.wake_fd, &drained, sizeof drained);
            (void)r;
            what |= STVM_AIO_EXTERNAL;
        } else {
            fire(vm, (int)evs[i].data.u64, evs[i].events);
            what |= STVM_AIO_IO;
        }
    }
    return what;
}
