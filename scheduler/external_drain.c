/*
 * The external semaphore table's scheduler side: its slots (set-up, registering and
 * unregistering semaphores, the public calls) and the drain that a scheduling point
 * runs to turn requests into signals (the requests are recorded by
 * vm/external_requests.h). Any thread bumps requests[i]; the VM thread answers each request
 * with one signal and bumps responses[i]. The counters never share a lock with the
 * requester, so stvm_external_signal is safe in a signal handler, and N requests are
 * N signals however they interleave (the design of Cog's sqExternalSemaphores.c).
 * The table lives in vm.h; here are its set-up, the public calls and the drain that a
 * scheduling point runs.
 */
#include "sched.h"
#include "shared_queue.h"

#include "../vm/external_requests.h"
#include "../vm/alloc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

int stvm__external_init(stvm_vm *vm)
{
    stvm_external_table *t = &vm->ext;
    t->size = vm->cfg.external_table_size;
    t->nchunks = (t->size + STVM_EXT_CHUNK_SLOTS - 1) / STVM_EXT_CHUNK_SLOTS;
    int words = t->nchunks * STVM_EXT_CHUNK_WORDS;
    t->chunks = stvm__calloc((size_t)t->nchunks, sizeof *t->chunks);
    t->summary = stvm__calloc((size_t)(words + 63) / 64, sizeof *t->summary);
    atomic_init(&t->pending, 0);
    t->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!t->chunks || !t->summary || t->wake_fd < 0) {
        int err = t->wake_fd < 0 ? STVM_ESYS : STVM_ENOMEM;
        stvm__external_destroy(vm);
        return err;
    }
    for (int k = 0; k < t->nchunks; k++)
        atomic_init(&t->chunks[k], NULL);
    for (int w = 0; w < (words + 63) / 64; w++)
        atomic_init(&t->summary[w], 0);
    return STVM_OK;
}

void stvm__external_destroy(stvm_vm *vm)
{
    stvm_external_table *t = &vm->ext;
    for (int k = 0; t->chunks && k < t->nchunks; k++)
        free(atomic_load(&t->chunks[k]));
    free((void *)t->chunks);
    free((void *)t->summary);
    if (t->wake_fd >= 0)
        close(t->wake_fd);
    t->chunks = NULL;
    t->summary = NULL;
    t->nchunks = t->nsummary = 0;
    t->wake_fd = -1;
}

/* The chunk of slot i, made if it is not yet (NULL: out of memory). Its counters start
 * at zero and nobody can have requested one of its slots: requests for slots of a chunk
 * not yet made are dropped (vm/external_requests.h). */
static stvm_ext_chunk *chunk_made(stvm_external_table *t, int i)
{
    int k = i / STVM_EXT_CHUNK_SLOTS;
    stvm_ext_chunk *c = atomic_load_explicit(&t->chunks[k], memory_order_relaxed);
    if (c)
        return c;
    c = stvm__calloc(1, sizeof *c);
    if (!c)
        return NULL;
    for (int j = 0; j < STVM_EXT_CHUNK_SLOTS; j++)
        atomic_init(&c->requests[j], 0);
    for (int w = 0; w < STVM_EXT_CHUNK_WORDS; w++)
        atomic_init(&c->pending[w], 0);
    atomic_store_explicit(&t->chunks[k], c, memory_order_release);
    int summary = ((k + 1) * STVM_EXT_CHUNK_WORDS + 63) / 64;
    if (summary > t->nsummary)
        t->nsummary = summary;
    return c;
}

void stvm__external_wake_if_sleeping(stvm_vm *vm)
{
    /* Dekker pair with the VM's sleep: it sets sleeping then re-reads pending; we set
     * pending (already done by the caller) then read sleeping. */
    if (!atomic_load(&vm->ext.sleeping))
        return;
    uint64_t one = 1;
    int saved = errno;             /* a signal handler must leave errno as it found it */
    ssize_t n = write(vm->ext.wake_fd, &one, sizeof one);
    (void)n;                       /* EAGAIN: the counter is already non-zero, fine */
    errno = saved;
}

/* n external signals of s (no switch). */
static void signal_times(stvm_vm *vm, stvm_semaphore *s, uint64_t n)
{
    for (; n; n--) {
        vm->stats.external_signals++;
        stvm__trace(vm, STVM_TRACE_EXTERNAL, stvm__trace_active(vm), (uintptr_t)s, 0);
        stvm__sem_signal_noswitch(vm, s);
    }
}

bool stvm__external_budget_answer(stvm_vm *vm, stvm_semaphore *s)
{
    uint64_t b = atomic_exchange(s->signal_budget, 0);
    signal_times(vm, s, b & ~STVM_BUDGET_CLOSED);
    return (b & STVM_BUDGET_CLOSED) != 0;
}

/* Answer every request of slot j of chunk c: one signal per request, or for a queue's
 * slot one per item its budget counts (taken whole: a later request finds it empty),
 * and the VM's half of a close a thread made. */
static void answer(stvm_vm *vm, stvm_ext_chunk *c, int j)
{
    uint32_t r = atomic_load(&c->requests[j]);
    uint64_t n = (uint32_t)(r - c->responses[j]);
    c->responses[j] = r;
    stvm_semaphore *s = c->sems[j];
    if (!s)
        return;
    if (!s->signal_budget)
        signal_times(vm, s, n);
    else if (stvm__external_budget_answer(vm, s))
        stvm__queue_end(vm, STVM_CONTAINER(s, stvm_queue, avail), 0);   /* a thread's */
}

/* The slots marked in pending word w of the table. */
static void drain_word(stvm_vm *vm, int w)
{
    stvm_ext_chunk *c = atomic_load_explicit(&vm->ext.chunks[w / STVM_EXT_CHUNK_WORDS],
                                             memory_order_relaxed);
    int first = (w % STVM_EXT_CHUNK_WORDS) * 64;
    uint64_t bits = atomic_exchange(&c->pending[w % STVM_EXT_CHUNK_WORDS], 0);
    for (; bits; bits &= bits - 1)
        answer(vm, c, first + __builtin_ctzll(bits));
}

/* O(slots with requests) plus one load per 4,096 slots of the chunks made. */
void stvm__external_drain(stvm_vm *vm)
{
    stvm_external_table *t = &vm->ext;
    atomic_store(&t->pending, 0);
    if (atomic_exchange(&vm->stop_requested, 0))
        vm->stopping = true;
    for (int s = 0; s < t->nsummary; s++) {
        /* seq_cst, not relaxed: with the store of pending above, the VM's half of a
         * store-then-load pair against a requester's "summary |= bit, then pending = 1"
         * (vm/external_requests.h). A relaxed load may be satisfied before the store
         * of 0 is visible (aarch64: an ldr may pass an earlier stlr; x86-64 happens to
         * order them, as its seq_cst store is an xchg): it would miss the bit, the
         * store of 0 would then overwrite the requester's 1, and the request would wait
         * for the next one, through an OS sleep. docs/reliability.md, "Memory order". */
        if (!atomic_load(&t->summary[s]))
            continue;
        uint64_t words = atomic_exchange(&t->summary[s], 0);
        for (; words; words &= words - 1)
            drain_word(vm, s * 64 + __builtin_ctzll(words));
    }
}

/* The last test of "can anything wake a process" (run.c): the scan over the slots in
 * use runs only when no deadline and no descriptor can. */
bool stvm__external_can_wake(stvm_vm *vm)
{
    if (atomic_load(&vm->ext.pending))
        return true;
    for (int i = 0; i < vm->ext.high; i++) {
        const stvm_semaphore *s = stvm__external_sem(vm, i + 1);
        if (s && s->list.first)
            return true;
    }
    return false;
}

int stvm_external_register(stvm_vm *vm, stvm_semaphore *sem, int *index_out)
{
    if (!vm || !index_out || !stvm__is_sem(vm, sem))
        return STVM_EINVAL;
    if (sem->external_index)
        return STVM_ESTATE;
    stvm_external_table *t = &vm->ext;
    /* The lowest free slot, searched from where the last search stopped: sockets and
     * descriptor waits register and unregister all the time. */
    for (int i = t->first_free; i < t->size; i++) {
        stvm_ext_chunk *c = chunk_made(t, i);
        if (!c)
            return STVM_ENOMEM;
        int j = i % STVM_EXT_CHUNK_SLOTS;
        if (c->sems[j])
            continue;
        t->first_free = i + 1;
        /* Requests made for a previous owner of the slot are forgotten. */
        c->responses[j] = atomic_load(&c->requests[j]);
        c->sems[j] = sem;
        if (i + 1 > t->high)
            t->high = i + 1;
        sem->external_index = i + 1;
        *index_out = i + 1;
        return STVM_OK;
    }
    return STVM_EFULL;
}

bool stvm__external_has_room(stvm_vm *vm)
{
    stvm_external_table *t = &vm->ext;
    for (int i = t->first_free; i < t->size; i++) {
        stvm_ext_chunk *c =
            atomic_load_explicit(&t->chunks[i / STVM_EXT_CHUNK_SLOTS], memory_order_relaxed);
        if (!c || !c->sems[i % STVM_EXT_CHUNK_SLOTS])
            return true;   /* a chunk not made yet has every slot free */
    }
    return false;
}

int stvm_external_unregister(stvm_vm *vm, int index)
{
    stvm_semaphore *s = vm ? stvm__external_sem(vm, index) : NULL;
    if (!s)
        return STVM_EINVAL;
    if (s->signal_budget)
        return STVM_EINUSE;   /* a queue's: stvm_queue_free releases it */
    s->external_index = 0;
    stvm__external_chunk(vm, index - 1)->sems[(index - 1) % STVM_EXT_CHUNK_SLOTS] = NULL;
    if (index - 1 < vm->ext.first_free)
        vm->ext.first_free = index - 1;
    return STVM_OK;
}

int stvm_external_signal(stvm_vm *vm, int index)
{
    if (!vm || index < 1 || index > vm->ext.size)
        return STVM_EINVAL;
    stvm__external_request(vm, index);
    stvm__external_wake_if_sleeping(vm);
    return STVM_OK;
}
