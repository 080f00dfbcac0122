/*
 * Host names (see resolve.h), after libuv's uv_getaddrinfo on its thread pool and Go's
 * resolver: the lookup runs on a worker of the VM's pool and the caller waits for it as
 * a threaded FFI call's caller waits (image-stubs/ffi/ffi_threaded.c), bounded by the
 * connect's deadline through the Delay scheduler.
 */
#include "resolve.h"

#include <string.h>

#include "../../primitives/socket_lookup.h"
#include "../../scheduler/sched.h"
#include "socket.h"

static bool label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
}

bool stvm__host_is_name(const char *host)
{
    size_t n = strlen(host);
    if (n > 0 && host[n - 1] == '.')
        n--;   /* a fully qualified name's final dot */
    if (n == 0 || n > 253)
        return false;
    bool all_digits = true;
    for (size_t start = 0; start <= n;) {
        size_t end = start;
        all_digits = true;
        while (end < n && host[end] != '.') {
            if (!label_char(host[end]))
                return false;
            all_digits &= host[end] >= '0' && host[end] <= '9';
            end++;
        }
        size_t len = end - start;
        if (len == 0 || len > 63 || host[start] == '-' || host[end - 1] == '-')
            return false;
        start = end + 1;
    }
    return !all_digits;
}

/* A caller terminated while it waits gives its lookup up. */
typedef struct lookup_wait {
    stvm_wait_guard guard;
    socket_lookup *job;
} lookup_wait;

static void give_up(stvm_vm *vm, stvm_wait_guard *g)
{
    stvm__lookup_abandon(vm, STVM_CONTAINER(g, lookup_wait, guard)->job);
}

int stvm__resolve(stvm_vm *vm, const char *host, int64_t deadline, struct addrinfo **res)
{
    lookup_wait w = {.guard.undo = give_up};
    int err = stvm__lookup_start(vm, host, &w.job);
    if (err)
        return err;
    stvm__wait_guard_push(vm, &w.guard);
    for (;;) {
        int64_t left = stvm__socket_remaining(vm, deadline);
        if (left == 0) {
            err = STVM_ETIMEDOUT;
            break;
        }
        err = left < 0 ? stvm__sem_wait(vm, w.job->base.sem)
                       : stvm_semaphore_wait_timeout_ms(vm, w.job->base.sem, left);
        if (err == STVM_OK && stvm__lookup_done(w.job))
            break;
        if (err != STVM_OK && err != STVM_ETIMEDOUT)
            break;   /* EINTR, ESTATE, ENOMEM (the first timed wait's Delay scheduler) */
    }
    stvm__wait_guard_pop(vm, &w.guard);
    if (err) {
        stvm__lookup_abandon(vm, w.job);
        return err;
    }
    return stvm__lookup_answer(vm, w.job, res);
}
