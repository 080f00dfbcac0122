/*
 * The aio layer: one epoll instance per VM and one-shot readiness handlers per
 * descriptor, as the Cog VM's aioHandle has them. A handler is armed for the read or
 * the write readiness of a descriptor with an external semaphore index; when a wait or
 * poll sees the readiness, the handler requests a signal of that index (the exact-count
 * path of vm/external_requests.h) and is disarmed until armed again. Not the idle process's
 * policy (scheduler/run.c) and not sockets (primitives/, image-stubs/).
 */
#ifndef STVM_VM_AIO_H
#define STVM_VM_AIO_H

#include "vm.h"

/* Set up (after the external table, whose wake descriptor joins the epoll set) and tear
 * down. init: ESYS, ENOMEM. */
int stvm__aio_init(stvm_vm *vm);
void stvm__aio_destroy(stvm_vm *vm);

/* Arm the one-shot handler of one event (STVM_IO_READ or STVM_IO_WRITE) of fd to
 * request a signal of external slot index (1-based), and forget an earlier firing of
 * that event. Re-arming an armed handler only changes its index (no system call).
 * Errors: EINVAL (fd < 0, or not a descriptor epoll can watch: closed, a regular file),
 * ENOMEM, ESYS. One system call, except as stvm__aio_rearm says. */
int stvm__aio_arm(stvm_vm *vm, int fd, int event, int index);
/* Can epoll watch fd (as stvm__aio_arm would find)? STVM_OK, EINVAL (fd < 0, closed,
 * a regular file, /dev/null and the like), ESYS. Arms nothing; one or two system
 * calls. For a caller that only looks (poll answers such descriptors as ready). */
int stvm__aio_watchable(stvm_vm *vm, int fd);
/* stvm__aio_arm for a caller that has just seen the event not ready (a read, write,
 * accept or poll that would block) with no aio wait since. On a descriptor the VM owns
 * that was armed for this event before, this is no system call: its edge-triggered
 * registration reports the next readiness. Otherwise as stvm__aio_arm. */
int stvm__aio_rearm(stvm_vm *vm, int fd, int event, int index);
/* fd was just made by the VM (a socket, an accepted connection), which will call
 * stvm__aio_forget before it closes it: its handlers may be re-armed without a system
 * call (stvm__aio_rearm). Best effort: out of memory, it is armed as any other. */
void stvm__aio_own(stvm_vm *vm, int fd);
/* Disarm the handlers of events (either or both) of fd; no-op for unarmed ones. */
void stvm__aio_disarm(stvm_vm *vm, int fd, int events);
/* Events of fd whose handlers are armed (0 if none). */
int stvm__aio_armed(const stvm_vm *vm, int fd);
/* The events of fd whose handlers fired and were not yet taken or re-armed; *hangup
 * (may be NULL) tells whether a firing saw an error or a hang-up. Clears nothing. */
int stvm__aio_fired(const stvm_vm *vm, int fd, bool *hangup);
/* The fired events among events (as stvm__aio_fired), now forgotten. */
int stvm__aio_take_fired(stvm_vm *vm, int fd, int events);
/* fd is about to be closed: disarm it and take it out of the epoll set. */
void stvm__aio_forget(stvm_vm *vm, int fd);

/* Handlers armed in all (work that can wake a process; busy polling looks only then). */
static inline bool stvm__aio_any_armed(const stvm_vm *vm)
{
    return vm->aio.narmed > 0;
}

/* What ended an aio wait (bits). */
enum { STVM_AIO_IO = 1, STVM_AIO_EXTERNAL = 2 };

/* Wait up to timeout_ns (0: only look; -1: until something happens) for readiness or a
 * wake-up of the external table (stvm_external_signal, stvm_stop), firing the handlers
 * of what is ready. Answers STVM_AIO_* bits, 0 when the time ran out. Counts
 * fds_ready and io_signals_unwaited. One epoll_pwait2, or where the kernel answered
 * it ENOSYS once, one epoll_wait with the timeout rounded up to whole milliseconds. */
int stvm__aio_wait(stvm_vm *vm, int64_t timeout_ns);
/* The timeout in milliseconds that epoll_wait gets where epoll_pwait2 is missing (aio.c
 * says when): rounded up, never shorter than timeout_ns; -1 stays -1 (no limit), 0 stays 0
 * (only look), and anything past INT_MAX ms is INT_MAX. */
int stvm__aio_timeout_ms(int64_t timeout_ns);

#endif
