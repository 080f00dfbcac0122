/*
 * The scheduler's internal interface, used by the primitives and the image side.
 * The names follow Pharo's VM where one exists (resume:preemptedYieldingIf:,
 * wakeHighestPriority, transferTo:, synchronousSignal:).
 */
#ifndef STVM_SCHEDULER_SCHED_H
#define STVM_SCHEDULER_SCHED_H

#include "../vm/clock.h"
#include "../vm/vm.h"

/* ---- lists (FIFO through nextLink) ----
 * Pharo's lists are singly linked, so removing a process from the middle of one (a
 * suspend or terminate) scans it; with 100,000 processes on a run queue that made a
 * teardown quadratic. A prevLink, kept valid for every process but the head (whose
 * predecessor is never needed), makes that O(1) without costing the pop a write to the
 * next process's record. */
static inline void stvm__list_append(stvm_list *l, stvm_proc *p)
{
    p->next_link = NULL;
    p->prev_link = l->last;
    if (l->last)
        l->last->next_link = p;
    else
        l->first = p;
    l->last = p;
    p->my_list = l;
}

static inline stvm_proc *stvm__list_pop(stvm_list *l)
{
    stvm_proc *p = l->first;
    if (p) {
        l->first = p->next_link;
        if (!l->first)
            l->last = NULL;
        p->next_link = NULL;
        p->my_list = NULL;
    }
    return p;
}

/* Remove p, which must be on l, from l in O(1). */
void stvm__list_remove(stvm_list *l, stvm_proc *p);

/* ---- run queues ---- */
void stvm__runq_put(stvm_vm *vm, stvm_proc *p, bool at_back);
/* Highest priority with a runnable process, 0 if none. O(1). */
static inline int stvm__runq_highest(const stvm_vm *vm)
{
    if (vm->ready_bits[1])
        return 64 + 64 - __builtin_clzll(vm->ready_bits[1]);
    if (vm->ready_bits[0])
        return 64 - __builtin_clzll(vm->ready_bits[0]);
    return 0;
}
/* Take p off whatever list it is on (run queue included); no-op if on none. */
void stvm__unlink(stvm_vm *vm, stvm_proc *p);

/* ---- switching ---- */
/* Make next the active process (transferTo:). The caller decides where the old
 * active process went (run queue, waiting list, nowhere). */
void stvm__transfer_to(stvm_vm *vm, stvm_proc *next);
/* Handle due timers and external signals, then transfer to the highest runnable
 * process (wakeHighestPriority); the active process must already be off the CPU's
 * books (on a list, or suspended). */
void stvm__switch_to_next(stvm_vm *vm);
/* resume: p preemptedYieldingIf: preemptionYields. True if p now runs (the caller
 * was preempted and has been switched back in since). */
bool stvm__resume(stvm_vm *vm, stvm_proc *p);
/* Make p runnable at the back of its queue, never switching. */
static inline void stvm__make_ready(stvm_vm *vm, stvm_proc *p)
{
    stvm__runq_put(vm, p, true);
}
/* If a strictly higher priority process is runnable, preempt the active one. */
bool stvm__preempt_if_needed(stvm_vm *vm);
/* Process due timers and external requests: the processes they wake are queued, no
 * switch happens here. */
void stvm__poll_events(stvm_vm *vm);

/* ---- semaphores ---- */
void stvm__sem_init(stvm_vm *vm, stvm_semaphore *s);
/* signal with preemption (primitive 85). */
void stvm__sem_signal(stvm_vm *vm, stvm_semaphore *s);
/* signal without switching: the woken process is queued (used inside event checks and
 * by the timing process, which nothing preempts). */
void stvm__sem_signal_noswitch(stvm_vm *vm, stvm_semaphore *s);
/* wait (primitive 86) by the active process. STVM_OK, or ESTATE if it was suspended
 * off the list meanwhile. */
int stvm__sem_wait(stvm_vm *vm, stvm_semaphore *s);

/* ---- mutexes ---- */
/* Primitives 186 (enter: 1 = already owner), 185 (exit), 187 (test-and-set). */
int stvm__mutex_enter_prim(stvm_vm *vm, stvm_mutex *m);
void stvm__mutex_exit_prim(stvm_vm *vm, stvm_mutex *m);
/* Release every mutex p owns, handing each to its first waiter without switching. */
void stvm__mutex_release_all(stvm_vm *vm, stvm_proc *p);

/* ---- processes ---- */
int stvm__spawn(stvm_vm *vm, int priority, const char *name, stvm_fn fn, void *arg,
                size_t stack_size, bool start, uint32_t flags, stvm_process **out);
int stvm__process_resume(stvm_vm *vm, stvm_proc *p);    /* prim 87 rules */
int stvm__process_suspend(stvm_vm *vm, stvm_proc *p);   /* prim 88 rules */
int stvm__yield(stvm_vm *vm);                              /* prim 167 */
/* Sleep for at most us (primitive 230): until then, the next deadline, or an external
 * signal. On the simulated clock, the idle process jumps time to the deadline. */
void stvm__relinquish(stvm_vm *vm, uint64_t us);

/* ---- the one-shot timer (primitives 136/242) ---- */
/* Arm (sem non-NULL, deadline in VM-clock us) or disarm (sem NULL, or deadline 0,
 * which Pharo's VM also reads as "no timer"). */
void stvm__timer_arm(stvm_vm *vm, stvm_semaphore *sem, uint64_t deadline_us);

/* ---- validation of untrusted handles ---- */
static inline bool stvm__is_sem(const stvm_vm *vm, const stvm_semaphore *s)
{
    return s && s->hdr.class_index == STVM_CLASS_SEMAPHORE && s->vm == vm;
}
static inline bool stvm__is_mutex(const stvm_vm *vm, const stvm_mutex *m)
{
    return m && m->hdr.class_index == STVM_CLASS_MUTEX && m->vm == vm;
}
/* A process handle of this VM (finished or not). */
static inline bool stvm__is_proc(const stvm_vm *vm, const stvm_process *h)
{
    return h && h->hdr.class_index == STVM_CLASS_PROCESS && h->vm == vm;
}

#endif
