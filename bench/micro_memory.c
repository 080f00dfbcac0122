/*
 * stvm-bench micro: resident memory per blocked process. A coordinator spawns n workers
 * (nobody holds their handles) that all block on one semaphore, reads RSS and the VM's
 * bytes_live before and after, then signals the semaphore n times so the run ends
 * cleanly. One shared semaphore, so that the figure is the process's own cost. Sized
 * for a scale test: a million processes with the default configuration.
 */
#include "micro.h"

typedef struct blocked_run {
    stvm_semaphore *sem;     /* every worker waits on it */
    micro_memory *m;
} blocked_run;

static void blocked_worker(stvm_vm *vm, void *arg)
{
    stvm_semaphore_wait(vm, arg);
}

/* Each worker (priority 40) runs at once and blocks before its spawn returns to the
 * coordinator (30), so after the loop every spawned worker is blocked. */
static void blocked_coordinator(stvm_vm *vm, void *arg)
{
    blocked_run *b = arg;
    micro_memory *m = b->m;
    stvm_stats st;
    stvm_vm_get_stats(vm, &st);
    m->live_before = st.bytes_live;
    m->rss_before = bench_rss_bytes();
    while (m->spawned < m->asked && !(m->spawn_err = stvm_spawn(vm,
               STVM_PRIORITY_USER_SCHEDULING, NULL, blocked_worker, b->sem, NULL)))
        m->spawned++;
    m->rss_after = bench_rss_bytes();
    stvm_vm_get_stats(vm, &st);
    m->live_after = st.bytes_live;
    for (long i = 0; i < m->spawned; i++) {
        int err = stvm_semaphore_signal(vm, b->sem);
        if (err && !m->run_err)
            m->run_err = err;
    }
}

int micro_memory_run(long n, micro_memory *m)
{
    *m = (micro_memory){.asked = n};
    blocked_run b = {.m = m};
    stvm_vm *vm = NULL;
    int err = stvm_vm_create(NULL, &vm);
    if (!err && !(err = stvm_semaphore_new(vm, &b.sem)) &&
        !(err = stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "memory coordinator",
                           blocked_coordinator, &b, NULL)))
        err = stvm_run(vm);
    if (err && !m->run_err)
        m->run_err = err;
    stvm_vm_free(vm);
    return m->spawn_err ? m->spawn_err : m->run_err;
}
