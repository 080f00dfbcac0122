/*
 * The scheduler's internal interface, used by the primitives and the image side. One
 * section per file of this folder. The names follow Pharo's VM where one exists
 * (resume:preemptedYieldingIf:, wakeHighestPriority, transferTo:, synchronousSignal:).
 */
#ifndef STVM_SCHEDULER_SCHED_H
#define STVM_SCHEDULER_SCHED_H

#include "../vm/clock.h"
#include "../vm/trace.h"
#include "../vm/vm.h"

/* ---- runq.c: lists, run queues and switching ---------------------------------------
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

/* Bit p-1 of ready_bits says whether run queue p-1 has a process. */
static inline void stvm__ready_bit_set(stvm_vm *vm, int prio)
{
    vm->ready_bits[(prio - 1) >> 6] |= 1ull << ((prio - 1) & 63);
}
static inline void stvm__ready_bit_clear_if_empty(stvm_vm *vm, int prio)
{
    if (!vm->runq[prio - 1].first)
        vm->ready_bits[(prio - 1) >> 6] &= ~(1ull << ((prio - 1) & 63));
}

/* Put p on its run queue, at the back or (a preempted process under Pharo's old rule)
 * at the front. Inline, as the rest of the queue's moves below: a semaphore hand-off
 * does one put and one pop, and a call for each was a tenth of its instructions. */
static inline void stvm__runq_put(stvm_vm *vm, stvm_proc *p, bool at_back)
{
    stvm_list *l = &vm->runq[p->priority - 1];
    if (at_back || !l->first) {
        stvm__list_append(l, p);
    } else {
        p->next_link = l->first;
        l->first->prev_link = p;
        l->first = p;
        p->my_list = l;
    }
    stvm__ready_bit_set(vm, p->priority);
    stvm__trace(vm, STVM_TRACE_READY, p->id, 0, p->priority);
}
/* Highest priority with a runnable process, 0 if none. O(1). */
static inline int stvm__runq_highest(const stvm_vm *vm)
{
    if (vm->ready_bits[1])
        return 64 + 64 - __builtin_clzll(vm->ready_bits[1]);
    if (vm->ready_bits[0])
        return 64 - __builtin_clzll(vm->ready_bits[0]);
    return 0;
}
/* Take the first process of the highest non-empty run queue, or NULL. */
static inline stvm_proc *stvm__runq_pop_highest(stvm_vm *vm)
{
    int h = stvm__runq_highest(vm);
    if (!h)
        return NULL;
    stvm_proc *p = stvm__list_pop(&vm->runq[h - 1]);
    stvm_proc *next = vm->runq[h - 1].first;
    if (next) {
        /* Likely to run next, each on a page of its own that has gone cold while it
         * waited: start fetching the next one's stack top (its record was fetched when
         * it became the head) and the record of the one after it. */
        __builtin_prefetch(next->ctx_sp, 0);
        __builtin_prefetch((char *)next->ctx_sp + 64, 0);
        if (next->next_link)
            __builtin_prefetch(next->next_link, 1);
    }
    stvm__ready_bit_clear_if_empty(vm, h);
    return p;
}
/* Take p off whatever list it is on (run queue included); no-op if on none. */
void stvm__unlink(stvm_vm *vm, stvm_proc *p);
/* A process became ready outside stvm_run (run.c): make stvm_backend_fd readable, so
 * that a host loop watching it runs the VM. Cold: never reached inside a run. */
__attribute__((cold)) void stvm__host_ready(stvm_vm *vm);
/* Make p runnable at the back of its queue, never switching. */
static inline void stvm__make_ready(stvm_vm *vm, stvm_proc *p)
{
    stvm__runq_put(vm, p, true);
    if (__builtin_expect(!vm->active, 0))
        stvm__host_ready(vm);
}

/* Make next the active process (transferTo:). The caller decides where the old
 * active process went (run queue, waiting list, nowhere). A process terminated by
 * another while it was off the processor does not return from here: it exits. */
void stvm__transfer_to(stvm_vm *vm, stvm_proc *next);
/* stvm_run: the embedding thread hands the processor to the highest runnable process
 * and gets it back when stvm__transfer_to_host is called. */
void stvm__transfer_from_host(stvm_vm *vm);
/* Switch to the embedding thread (stvm_run returns). */
void stvm__transfer_to_host(stvm_vm *vm);
/* Handle due timers and external signals, then transfer to the highest runnable
 * process (wakeHighestPriority); the active process must already be off the CPU's
 * books (on a list, or suspended). */
void stvm__switch_to_next(stvm_vm *vm);
/* resume: p preemptedYieldingIf: preemptionYields, when p is of a strictly higher
 * priority than the active process: p runs at once. True. */
bool stvm__resume_preempting(stvm_vm *vm, stvm_proc *p);
/* resume: p preemptedYieldingIf: preemptionYields. True if p now runs (the caller
 * was preempted and has been switched back in since). Inline for the common case of a
 * signal that wakes a process no higher than the signaller's (it is queued). */
static inline bool stvm__resume(stvm_vm *vm, stvm_proc *p)
{
    stvm_proc *a = vm->active;
    if (__builtin_expect(!a, 0)) {   /* the embedding thread, outside stvm_run */
        stvm__runq_put(vm, p, true);
        stvm__host_ready(vm);
        return false;
    }
    if (p->priority <= a->priority) {
        stvm__runq_put(vm, p, true);
        return false;
    }
    return stvm__resume_preempting(vm, p);
}
/* If a strictly higher priority process is runnable, preempt the active one. */
bool stvm__preempt_if_needed(stvm_vm *vm);
/* Process external requests, due timers and (at most every busy_poll_ms) ready
 * descriptors: the processes they wake are queued, no switch happens here. True when
 * stvm_stop asked the VM to give the processor back. */
bool stvm__poll_events(stvm_vm *vm);
/* The same for the idle process, without the busy poll: it looks at descriptors itself
 * whenever it waits, which it does next unless a process became runnable. */
bool stvm__poll_events_idle(stvm_vm *vm);
/* stvm_stop was seen at a scheduling point: the active process goes to the front of its
 * run queue (kept as it was) and stvm_run returns STVM_ESTOPPED. */
void stvm__stop_here(stvm_vm *vm);
/* Primitive 167: the caller goes to the back of its queue if anyone else can run. */
int stvm__yield(stvm_vm *vm);
/* stvm_work_us (cpu_work.c), also telling the work counted in *spent_us (may be NULL; >= us
 * on the real clock, us on the simulated one). Errors: EINVAL, ENOTPROC, ERANGE (above
 * STVM_MAX_WORK_US). Switches. */
int stvm__work_us(stvm_vm *vm, uint64_t us, uint64_t *spent_us);

/* The VM whose stvm_run is active on the calling thread, or NULL (set by overflow.c,
 * whose SIGSEGV reporter needs it too). Initial-exec, so that reading it is one load
 * relative to the thread pointer, in the shared library too: every call that needs a
 * process reads it. */
extern _Thread_local stvm_vm *stvm__tls_vm __attribute__((tls_model("initial-exec")));

/* The VM whose stvm_run is active on the calling thread, or NULL. One at a time: a
 * nested stvm_run would take over this thread's overflow reporter and leave the outer
 * VM without it. */
static inline stvm_vm *stvm__thread_vm(void)
{
    return stvm__tls_vm;
}

/* Is the caller a green process of vm? A process of vm is running and vm runs on the
 * calling thread (another thread would see vm->active set by a run elsewhere). Every
 * call that needs a process checks this and answers STVM_ENOTPROC otherwise. */
static inline bool stvm__in_process(const stvm_vm *vm)
{
    return vm->active && stvm__thread_vm() == vm;
}

/* ---- wait.c: the one way to block ---------------------------------------------------
 * Every wait (semaphore, mutex, join, Delay, timed wait) is the active
 * process put at the end of a waiting list, switched away, and told on return how the
 * wait ended: STVM_OK (signalled: whoever ended it took it off the list and, when it
 * handed the waiter something, said so with stvm__wait_handed), STVM_ETIMEDOUT (its
 * timed wait ran out), STVM_ESTATE (cut short: suspended off the list), STVM_EINTR
 * (an interrupt, or a terminate of a process already running its cleanups, ended it;
 * nothing was taken) or STVM_ECLOSED (the queue it waited on was closed). A process whose waits are cancelled (STVM_PF_CANCELLED) does not
 * wait: EINTR at once. A process terminated while waiting never returns from here. */
int stvm__wait_cancelled(stvm_vm *vm);
/* The wait itself, for stvm__wait and for the one wait that blocks even when the
 * process's waits are cancelled: a monitor taken again after a condition wait
 * (monitor.c), which its caller must hold when it returns. */
static inline int stvm__wait_blocking(stvm_vm *vm, stvm_list *l)
{
    stvm_proc *a = vm->active;
    a->wait_end = STVM_WAIT_SIGNALLED;
    a->wait_since_us = vm->point_clock_us;   /* the listing's "since": no clock read */
    stvm__list_append(l, a);
    stvm__switch_to_next(vm);
    if (a->handed_from) {   /* it has run: what it was handed is its own */
        a->handed_from->pins--;
        a->handed_from->handed--;
        a->handed_from = NULL;
    }
    return a->wait_end == STVM_WAIT_SIGNALLED   ? STVM_OK
           : a->wait_end == STVM_WAIT_TIMED_OUT ? STVM_ETIMEDOUT
           : a->wait_end == STVM_WAIT_ABORTED   ? STVM_ESTATE
           : a->wait_end == STVM_WAIT_CLOSED    ? STVM_ECLOSED
                                                : STVM_EINTR;
}
static inline int stvm__wait(stvm_vm *vm, stvm_list *l)
{
    if (__builtin_expect(vm->active->flags & (STVM_PF_CANCELLED | STVM_PF_EINTR_NEXT), 0))
        return stvm__wait_cancelled(vm);
    return stvm__wait_blocking(vm, l);
}
/* The giver's half of a hand-off: p, just taken off l, was handed what it waited on l
 * for (the signal, the mutex, an item, room). Until p runs again it holds it only on
 * paper; a terminate or interrupt before then gives it back (stvm__wait_give_back).
 * Meanwhile l counts as pinned: its object cannot be freed under the hand-off. */
static inline void stvm__wait_handed(stvm_proc *p, stvm_list *l)
{
    p->handed_from = l;
    l->handed++;
    l->pins++;   /* the object may not be freed before p has taken it (or given it back) */
}
/* p is terminated or interrupted after a hand-off it has not yet run to see: give what
 * it was handed back to the object, as if p had never waited (the rule Pharo's
 * Semaphore>>critical: and Mutex keep for a waiter terminated before it runs). The
 * object's next waiter may get it (made ready, never switching). No-op when p holds
 * nothing on paper. */
void stvm__wait_give_back(stvm_vm *vm, stvm_proc *p);
/* End p's wait with `how` (STVM_WAIT_*): take it off its list; TIMED_OUT and CLOSED
 * also make it ready (never switching), ABORTED leaves it suspended. */
void stvm__wait_end(stvm_vm *vm, stvm_proc *p, int how);
/* The active process commits to wait on l before it joins it (a timed wait hands its
 * Delay to the timing process first) and to touch l's object after it left it: l's
 * object may not be freed until stvm__wait_uncommit. At most one commitment at a time. */
void stvm__wait_commit(stvm_vm *vm, stvm_list *l);
void stvm__wait_uncommit(stvm_proc *p);
/* The end of a library region whose way out is cleanup node n (stvm_monitor_critical's,
 * say): take n off p's cleanups wherever it is. fn may have left cleanups of its own
 * registered above it; they stay the process's (stvm_ensure: they run when it finishes),
 * where resetting the list to n->next would drop them unrun (and leak their records). */
static inline void stvm__ensure_unlink(stvm_proc *p, const stvm_ensure_node *n)
{
    for (stvm_ensure_node **pp = &p->ensures; *pp; pp = &(*pp)->next) {
        if (*pp == n) {
            *pp = n->next;
            return;
        }
    }
}
/* Pin l for good: its object is waited on by a process that lives as long as the VM
 * (the timing process's semaphore). */
static inline void stvm__list_pin(stvm_list *l)
{
    l->pins++;
}
/* Register g (undo set) for the active process's wait; pop it when the wait is over
 * (it must be the newest). A process terminated meanwhile has its guards undone,
 * newest first, by stvm__wait_guards_undo. */
void stvm__wait_guard_push(stvm_vm *vm, stvm_wait_guard *g);
void stvm__wait_guard_pop(stvm_vm *vm, stvm_wait_guard *g);
void stvm__wait_guards_undo(stvm_vm *vm, stvm_proc *p);
/* May l's object be freed? (No process waits on it or is committed to.) */
static inline bool stvm__list_idle(const stvm_list *l)
{
    return !l->first && !l->pins;
}

/* ---- semaphore.c ---- */
void stvm__sem_init(stvm_vm *vm, stvm_semaphore *s);
/* signal with preemption (primitive 85). */
void stvm__sem_signal(stvm_vm *vm, stvm_semaphore *s);
/* signal without switching: the woken process is queued (used inside event checks and
 * by the timing process, which nothing preempts). */
void stvm__sem_signal_noswitch(stvm_vm *vm, stvm_semaphore *s);
/* wait (primitive 86) by the active process: STVM_OK, or as stvm__wait. */
int stvm__sem_wait(stvm_vm *vm, stvm_semaphore *s);
/* Take an excess signal if there is one (true, counting a wait). */
bool stvm__sem_try(stvm_vm *vm, stvm_semaphore *s);
/* The wait of p, not running (a process backed up by primitive 568 or 578, resumed):
 * true when it took an excess signal (handed to it: the caller makes it runnable), false
 * when it joined the waiting list. Never switches. */
bool stvm__sem_wait_for(stvm_vm *vm, stvm_semaphore *s, stvm_proc *p);
/* A signal handed to a waiter that never took it goes to the next waiter or becomes an
 * excess signal again (no switch). */
void stvm__sem_give_back(stvm_vm *vm, stvm_semaphore *s);

/* ---- mutex.c ---- */
/* Primitives 186 (enter: 1 = already owner), 185 (exit), 187 (test-and-set). */
int stvm__mutex_enter_prim(stvm_vm *vm, stvm_mutex *m);
void stvm__mutex_exit_prim(stvm_vm *vm, stvm_mutex *m);
/* stvm_mutex_enter by the active process: take, re-enter (ERANGE past 2^32-1) or
 * wait (as stvm__wait). */
int stvm__mutex_enter(stvm_vm *vm, stvm_mutex *m);
/* Take m if it is free (1), re-enter it if the caller owns it (1, counting depth;
 * ERANGE past 2^32-1), or 0 when another process owns it. */
int stvm__mutex_try(stvm_vm *vm, stvm_mutex *m);
/* The enter of p, not running (backed up, resumed): true when m was free and is now
 * p's (handed: the caller makes p runnable), false when p joined the waiters. */
bool stvm__mutex_enter_for(stvm_vm *vm, stvm_mutex *m, stvm_proc *p);
/* Release every mutex p owns, handing each to its first waiter without switching. */
void stvm__mutex_release_all(stvm_vm *vm, stvm_proc *p);
/* p was handed m but is interrupted before it runs: m goes to its next waiter (no
 * switch). */
void stvm__mutex_give_back(stvm_vm *vm, stvm_mutex *m, stvm_proc *p);

/* ---- monitor.c ---- */
/* p was handed what it waited for on l, a monitor's list (STVM_LIST_MONITOR*), and is
 * terminated or interrupted before it ran: the monitor goes to its next entrant, a
 * queue's signal to the queue's next waiter (no switch). */
void stvm__monitor_give_back(stvm_vm *vm, stvm_list *l, stvm_proc *p);

/* ---- interrupt.c ---- */
/* End p's wait because it is interrupted (or terminated while it runs its cleanups):
 * what it was handed goes back and its wait answers EINTR; one committed to a wait it
 * has not begun finds that wait answering EINTR at once. True when p was taken off a
 * waiting list and must be made runnable by the caller. */
bool stvm__wait_interrupt(stvm_vm *vm, stvm_proc *p);
/* Run p's pending interrupts in p (the active process), oldest first. */
void stvm__interrupts_run(stvm_vm *vm, stvm_proc *p);
/* Forget p's pending interrupts (it finishes). */
void stvm__interrupts_drop(stvm_proc *p);
/* stvm_process_interrupt with a record the caller made beforehand (n->posters set, fn
 * and arg filled in), so that it cannot fail for want of memory (the watchdog of
 * stvm_call_within_ms has nobody to tell); p must be a live process other than the
 * caller. stvm__interrupt_withdraw takes n off p's queue if it is still there. */
void stvm__interrupt_post(stvm_vm *vm, stvm_proc *p, stvm_interrupt *n);
void stvm__interrupt_withdraw(stvm_proc *p, stvm_interrupt *n);
/* Cancel p's waits (each answers EINTR at once) until as many uncancels. */
void stvm__cancel(stvm_proc *p);
void stvm__uncancel(stvm_proc *p);
/* Cancel p's waits for the rest of its life (terminated while it runs its cleanups). */
void stvm__cancel_for_good(stvm_proc *p);
/* Were p's waits cancelled for good? (A suspension of itself answers EINTR then.) */
bool stvm__cancelled_for_good(const stvm_proc *p);

/* ---- process.c, process_info.c ---- */
/* The running state of a handle handed in by a caller: EINVAL for something that is
 * not a process of this VM, ESTATE once it has finished or, when user_only, for the
 * VM's own processes (idle, timing). */
int stvm__process_core(stvm_vm *vm, const stvm_process *h, bool user_only, stvm_proc **out);
int stvm__spawn(stvm_vm *vm, int priority, const char *name, stvm_fn fn, void *arg,
                size_t stack_size, bool start, uint32_t flags, stvm_process **out);
int stvm__process_resume(stvm_vm *vm, stvm_proc *p);    /* prim 87 rules */
int stvm__process_suspend(stvm_vm *vm, stvm_proc *p);   /* prim 88 rules */
/* Primitives 568 and 578 (OpenSmalltalk's suspend that backs up): as 88, but a process
 * in a plain semaphore wait or mutex enter is backed up: resumed, it waits again. */
int stvm__process_suspend_backing_up(stvm_vm *vm, stvm_proc *p);
/* Is p in a wait that 568 and 578 back up? */
bool stvm__process_backs_up(const stvm_proc *p);
/* The active process runs its cleanups and finishes. */
_Noreturn void stvm__process_exit(stvm_vm *vm);
/* Give back a finished process's handle when nobody holds or joins it any more. */
void stvm__handle_release_if_unused(stvm_vm *vm, stvm_process *h);
/* stvm_vm_free: run the cleanups of unfinished processes, release their stacks and
 * the handles that live in them. */
void stvm__processes_destroy(stvm_vm *vm);
/* What a process waits on, for info and the blocked report. */
const char *stvm__waiting_on(const stvm_proc *p, const void **object);
/* The object whose waiting list l is, as its program knows it, into buf: "semaphore
 * 'name' 0x...", "the item semaphore of queue 'frames' 0x..." (a queue's handle), "a
 * condition queue of monitor 'm' 0x...". For messages only (the invariant checker):
 * it reads the object's name. Answers buf. */
const char *stvm__list_object_text(const stvm_vm *vm, const stvm_list *l, char *buf,
                                   size_t size);

/* ---- run.c: the idle process and stvm_run ---- */
/* The idle process's body (priority 10). */
void stvm__idle_main(stvm_vm *vm, void *arg);
/* Can nothing ever run again: no process runs, none but the idle process is runnable,
 * and nothing can wake one (the condition in which stvm_run answers STVM_EDEADLOCK)? */
bool stvm__nothing_can_run(stvm_vm *vm);

/* ---- cpu_time.c: who used the CPU (stvm_config.cpu_time) ---- */
/* Charge `from`, which leaves the processor now (NULL: the embedding thread, charged to
 * nobody), the time since the last stamp, and stamp now. Called at every switch while
 * cfg.cpu_time is set (runq.c, behind vm->switch_watch). */
__attribute__((cold)) void stvm__cpu_switch(stvm_vm *vm, stvm_proc *from);
/* Around an OS sleep or a jump of the simulated clock (relinquish.c): the active (idle)
 * process is charged up to it, and the time it takes is charged to nobody. */
void stvm__cpu_pause(stvm_vm *vm);
void stvm__cpu_resume(stvm_vm *vm);
/* p's time so far (its own, up to now when it is the active process); 0 when the VM
 * does not account. */
uint64_t stvm__cpu_of(stvm_vm *vm, const stvm_proc *p);

/* ---- relinquish.c ---- */
/* Wait in the OS for at most us (primitive 230): until then, the next deadline, a
 * ready descriptor or an external signal, as the idle mode says. On the simulated
 * clock, the idle process jumps time to the deadline. */
void stvm__relinquish(stvm_vm *vm, uint64_t us);

/* ---- external_drain.c: the external semaphore table, its slots and its drain ---- */
int stvm__external_init(stvm_vm *vm);     /* ENOMEM, ESYS */
void stvm__external_destroy(stvm_vm *vm);
/* Turn every pending request into a signal (no switch); notice stvm_stop. */
void stvm__external_drain(stvm_vm *vm);
/* A queue's slot (s->signal_budget set): signal s once per item its budget counts, and
 * take the budget whole. True when the budget also said that a thread closed the queue.
 * No switch. */
bool stvm__external_budget_answer(stvm_vm *vm, stvm_semaphore *s);
/* Write the wake descriptor if the VM thread sleeps (or is outside stvm_run), after
 * the caller set pending. Async-signal-safe. */
void stvm__external_wake_if_sleeping(stvm_vm *vm);
/* Could a request ever wake a process? (one is pending, or someone waits on a
 * registered semaphore) */
bool stvm__external_can_wake(stvm_vm *vm);
/* Would stvm_external_register find a free slot? (Asked before allocating what a
 * failure would have to give back: a failed call changes no counter.) */
bool stvm__external_has_room(stvm_vm *vm);

#endif
