/*
 * Processes and the priority scheduler.
 *
 * Invariants (checked by stvm_check_invariants after every test):
 *  - a process is on at most one list (a run queue, a semaphore's or a mutex's waiting
 *    list) and its myList says which; the active process is on none;
 *  - run queue p-1 holds only processes of priority p, and bit p-1 of ready_bits is
 *    set exactly when it is non-empty, so the highest runnable priority is two word
 *    tests and a count-leading-zeros away;
 *  - the active process has the highest priority of all runnable ones, except while a
 *    process below the idle priority borrows the processor from the idle process;
 *  - a semaphore with waiters has no excess signals; a mutex with waiters has an owner.
 * Only a strictly higher priority preempts; there is no time slicing.
 */
#include "sched.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../vm/external.h"
#include "../vm/objmem.h"
#include "context.h"

/* ---- lists and run queues ---------------------------------------------------------- */

void stvm__list_remove(stvm_list *l, stvm_proc *p)
{
    if (l->first == p) {
        stvm__list_pop(l);
        return;
    }
    stvm_proc *prev = p->prev_link, *next = p->next_link;   /* p is not the head */
    prev->next_link = next;
    if (next)
        next->prev_link = prev;
    else
        l->last = prev;
    p->next_link = NULL;
    p->my_list = NULL;
}

static inline void set_ready_bit(stvm_vm *vm, int prio)
{
    vm->ready_bits[(prio - 1) >> 6] |= 1ull << ((prio - 1) & 63);
}

static inline void clear_ready_bit_if_empty(stvm_vm *vm, int prio)
{
    if (!vm->runq[prio - 1].first)
        vm->ready_bits[(prio - 1) >> 6] &= ~(1ull << ((prio - 1) & 63));
}

void stvm__runq_put(stvm_vm *vm, stvm_proc *p, bool at_back)
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
    set_ready_bit(vm, p->priority);
}

static stvm_proc *runq_pop_highest(stvm_vm *vm)
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
    clear_ready_bit_if_empty(vm, h);
    return p;
}

void stvm__unlink(stvm_vm *vm, stvm_proc *p)
{
    stvm_list *l = p->my_list;
    if (!l)
        return;
    stvm__list_remove(l, p);
    if (l->kind == STVM_LIST_RUNQ)
        clear_ready_bit_if_empty(vm, (int)(l - vm->runq) + 1);
}

/* ---- switching --------------------------------------------------------------------- */

/* Runs first on every context that gets the CPU back: a process that finished on the
 * way out cannot free the stack it was running on, so its successor does. */
static inline void after_switch(stvm_vm *vm)
{
    stvm_proc *z = vm->zombie;
    if (z) {
        vm->zombie = NULL;
        stvm__ctx_release(vm, z);
    }
}

void stvm__transfer_to(stvm_vm *vm, stvm_proc *next)
{
    stvm_proc *from = vm->active;
    next->my_list = NULL;
    vm->active = next;
    if (from == next)
        return;
    vm->stats.context_switches++;
    stvm__ctx_switch(vm, from, next);
    after_switch(vm);
}

static void transfer_to_host(stvm_vm *vm)
{
    stvm_proc *from = vm->active;
    vm->active = NULL;
    vm->stats.context_switches++;
    stvm__ctx_switch(vm, from, NULL);
    after_switch(vm);
}

static void fire_timer(stvm_vm *vm)
{
    stvm_semaphore *s = vm->timer_sem;
    /* One-shot: cleared before the signal, so the woken code may re-arm it. */
    vm->next_wakeup_us = 0;
    vm->timer_sem = NULL;
    vm->stats.timer_fires++;
    if (s)
        stvm__sem_signal_noswitch(vm, s);
}

static void drain_external(stvm_vm *vm)
{
    stvm_external_table *t = &vm->ext;
    atomic_store(&t->pending, 0);
    for (int i = 0; i < t->high; i++) {
        uint32_t r = atomic_load(&t->requests[i]);
        while (t->responses[i] != r) {
            t->responses[i]++;
            if (t->sems[i]) {
                vm->stats.external_signals++;
                stvm__sem_signal_noswitch(vm, t->sems[i]);
            }
        }
    }
}

/* How many process switches may pass on a clock value read earlier. Under load a
 * switch takes well under a microsecond while a real clock read costs tens of
 * nanoseconds, so reading at every switch would be a tenth of a hand-off; the few
 * switches in between add far less lateness than the idle process's relinquish
 * granularity. Checkpoints, yields and the idle process always read the clock. */
#define SWITCHES_PER_CLOCK_READ 8

/* External requests and the timer deadline. A stale clock value can only make the
 * timer fire later, never early. */
static inline void check_events(stvm_vm *vm, bool fresh_clock)
{
    if (atomic_load_explicit(&vm->ext.pending, memory_order_relaxed))
        drain_external(vm);
    if (vm->next_wakeup_us) {
        if (fresh_clock || vm->clock.kind == STVM_CLOCK_SIMULATED ||
            --vm->clock_countdown <= 0) {
            vm->clock_countdown = SWITCHES_PER_CLOCK_READ;
            vm->clock_seen_us = stvm__clock_now_us(vm);
        }
        if (vm->clock_seen_us >= vm->next_wakeup_us)
            fire_timer(vm);
    }
}

void stvm__poll_events(stvm_vm *vm)
{
    check_events(vm, true);
}

void stvm__switch_to_next(stvm_vm *vm)
{
    check_events(vm, false);
    stvm__transfer_to(vm, runq_pop_highest(vm));   /* never NULL: idle is runnable */
}

bool stvm__resume(stvm_vm *vm, stvm_proc *p)
{
    stvm_proc *a = vm->active;
    if (!a || p->priority <= a->priority) {
        stvm__runq_put(vm, p, true);
        return false;
    }
    stvm__runq_put(vm, a, vm->cfg.preemption_yields);
    stvm__transfer_to(vm, p);
    return true;
}

bool stvm__preempt_if_needed(stvm_vm *vm)
{
    stvm_proc *a = vm->active;
    if (!a || stvm__runq_highest(vm) <= a->priority)
        return false;
    stvm__runq_put(vm, a, vm->cfg.preemption_yields);
    stvm__transfer_to(vm, runq_pop_highest(vm));
    return true;
}

/* ---- the timer ------------------------------------------------------------------- */

void stvm__timer_arm(stvm_vm *vm, stvm_semaphore *sem, uint64_t deadline_us)
{
    bool armed = sem && deadline_us;
    vm->timer_sem = armed ? sem : NULL;
    vm->next_wakeup_us = armed ? deadline_us : 0;
}

/* ---- processes ------------------------------------------------------------------- */

static void link_all(stvm_vm *vm, stvm_proc *p)
{
    p->all_prev = NULL;
    p->all_next = vm->all;
    if (vm->all)
        vm->all->all_prev = p;
    vm->all = p;
}

static void unlink_all(stvm_vm *vm, stvm_proc *p)
{
    if (p->all_prev)
        p->all_prev->all_next = p->all_next;
    else
        vm->all = p->all_next;
    if (p->all_next)
        p->all_next->all_prev = p->all_prev;
    p->all_prev = p->all_next = NULL;
}

/* Everything that ends a process except giving up its stack (and with it p). */
static void finish_process(stvm_vm *vm, stvm_proc *p)
{
    stvm__unlink(vm, p);
    p->flags |= STVM_PF_TERMINATED;
    unlink_all(vm, p);
    vm->live_total--;
    if (!(p->flags & STVM_PF_VM_OWN))
        vm->live_user--;
    if (p->delay && vm->delay.process_terminated)
        vm->delay.process_terminated(vm, p);
    stvm__mutex_release_all(vm, p);
    stvm_process *h = p->handle;
    h->priority = p->priority;
    h->flags |= STVM_PF_TERMINATED;
    h->core = NULL;
}

static void terminate_active(stvm_vm *vm)
{
    stvm_proc *p = vm->active;
    finish_process(vm, p);
    vm->zombie = p;
    stvm__switch_to_next(vm);
    /* not reached: nothing switches back to a finished process */
    abort();
}

void stvm__process_entry(void *arg)
{
    stvm_proc *p = arg;
    stvm_vm *vm = p->vm;
    stvm__ctx_entered(vm);
    after_switch(vm);
    p->fn(vm, p->arg);
    terminate_active(vm);
}

static bool priority_ok(int priority)
{
    return priority >= STVM_PRIORITY_MIN && priority <= STVM_PRIORITY_MAX;
}

int stvm__spawn(stvm_vm *vm, int priority, const char *name, stvm_fn fn, void *arg,
                size_t stack_size, bool start, uint32_t flags, stvm_process **out)
{
    if (!vm || !fn || !priority_ok(priority))
        return STVM_EINVAL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (stack_size == 0)
        stack_size = vm->cfg.stack_size;
    if (stack_size < 8192 || stack_size > ((size_t)64 << 20))
        return STVM_EINVAL;
    stack_size = (stack_size + page - 1) & ~(page - 1);
    stvm_process *h = stvm__objmem_alloc(vm, STVM_CLASS_PROCESS, sizeof *h);
    if (!h)
        return STVM_ENOMEM;
    h->name = strdup(name ? name : "");
    stvm_proc *p = NULL;
    int err = h->name ? stvm__ctx_prepare(vm, stack_size, &p) : STVM_ENOMEM;
    if (err) {
        free(h->name);
        stvm__objmem_free(vm, h);
        return err;
    }
    h->core = p;
    h->vm = vm;
    h->id = ++vm->next_pid;
    h->priority = priority;
    h->flags = flags;
    p->handle = h;
    p->vm = vm;
    p->priority = priority;
    p->fn = fn;
    p->arg = arg;
    p->flags = flags;
    link_all(vm, p);
    vm->live_total++;
    if (!(flags & STVM_PF_VM_OWN))
        vm->live_user++;
    if (out)
        *out = h;
    if (start)
        stvm__resume(vm, p);
    return STVM_OK;
}

int stvm__process_resume(stvm_vm *vm, stvm_proc *p)
{
    if (p->flags & STVM_PF_TERMINATED || p == vm->active || p->my_list)
        return STVM_ESTATE;
    stvm__resume(vm, p);
    return STVM_OK;
}

int stvm__process_suspend(stvm_vm *vm, stvm_proc *p)
{
    if (p->flags & STVM_PF_TERMINATED)
        return STVM_ESTATE;
    if (p == vm->active) {
        stvm__switch_to_next(vm);   /* on no list: only a resume brings it back */
        return STVM_OK;
    }
    stvm_list *l = p->my_list;
    if (!l)
        return STVM_ESTATE;
    if (l->kind != STVM_LIST_RUNQ)
        p->flags |= STVM_PF_WAIT_ABORTED;
    stvm__unlink(vm, p);
    return STVM_OK;
}

int stvm__yield(stvm_vm *vm)
{
    stvm_proc *a = vm->active;
    stvm__poll_events(vm);
    /* Nothing of equal priority waiting and nothing higher woken: no-op. Otherwise the
     * caller goes to the back of its queue, whoever runs next (a process below the
     * idle priority thereby lets its peers have the borrowed processor first). */
    if (!vm->runq[a->priority - 1].first && stvm__runq_highest(vm) <= a->priority)
        return STVM_OK;
    stvm__runq_put(vm, a, true);
    stvm__transfer_to(vm, runq_pop_highest(vm));
    return STVM_OK;
}

/* ---- idle, deadlock and stvm_run -------------------------------------------------- */

static bool timer_is_work(stvm_vm *vm)
{
    if (!vm->next_wakeup_us)
        return false;
    /* The Delay scheduler re-arms every second even with nothing to do: that alone is
     * not something to wait for. */
    if (vm->delay.timing_sem && vm->timer_sem == vm->delay.timing_sem &&
        vm->delay.pending && vm->delay.pending(vm) == 0)
        return false;
    return true;
}

static bool external_can_wake(stvm_vm *vm)
{
    if (atomic_load(&vm->ext.pending))
        return true;
    for (int i = 0; i < vm->ext.high; i++)
        if (vm->ext.sems[i] && vm->ext.sems[i]->list.first)
            return true;
    return false;
}

void stvm__relinquish(stvm_vm *vm, uint64_t us)
{
    bool is_idle = vm->active == vm->idle;
    uint64_t now = stvm__clock_now_us(vm);
    if (vm->clock.kind == STVM_CLOCK_SIMULATED) {
        if (!is_idle)
            return;   /* simulated time moves only when every process is blocked */
        if (timer_is_work(vm)) {
            if (vm->next_wakeup_us > now)
                vm->clock.sim_now_us = vm->next_wakeup_us;
            return;
        }
        us = UINT64_MAX;   /* only an external signal can help: wait for it */
    } else if (vm->next_wakeup_us) {
        uint64_t left = vm->next_wakeup_us > now ? vm->next_wakeup_us - now : 0;
        if (left < us)
            us = left;
    }
    if (us == 0)
        return;
    atomic_store(&vm->ext.sleeping, 1);
    if (!atomic_load(&vm->ext.pending)) {
        struct pollfd pfd = {.fd = vm->ext.wake_fd, .events = POLLIN};
        struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
        vm->stats.idle_sleeps++;
        ppoll(&pfd, 1, us == UINT64_MAX ? NULL : &ts, NULL);
    }
    atomic_store(&vm->ext.sleeping, 0);
    uint64_t drained;
    ssize_t n = read(vm->ext.wake_fd, &drained, sizeof drained);
    (void)n;
}

static void exit_run(stvm_vm *vm, int result)
{
    vm->run_result = result;
    stvm__runq_put(vm, vm->idle, false);
    transfer_to_host(vm);
}

static void idle_main(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (;;) {
        stvm__poll_events(vm);
        int h = stvm__runq_highest(vm);
        if (h >= STVM_PRIORITY_IDLE) {
            stvm__runq_put(vm, vm->idle, true);
            stvm__transfer_to(vm, runq_pop_highest(vm));
            continue;
        }
        if (h) {
            /* Only processes below the idle priority can run: they borrow the
             * processor (Pharo would starve them; docs/differences-from-pharo.md).
             * Idle waits on its run queue and takes it back at the next scheduling
             * point, where it preempts them. */
            stvm_proc *next = stvm__list_pop(&vm->runq[h - 1]);
            clear_ready_bit_if_empty(vm, h);
            stvm__runq_put(vm, vm->idle, true);
            stvm__transfer_to(vm, next);
            continue;
        }
        if (vm->live_user == 0) {
            exit_run(vm, STVM_OK);
            continue;
        }
        if (!timer_is_work(vm) && !external_can_wake(vm)) {
            exit_run(vm, STVM_EDEADLOCK);
            continue;
        }
        stvm__relinquish(vm, vm->cfg.idle_relinquish_us);
    }
}

int stvm_run(stvm_vm *vm)
{
    if (!vm)
        return STVM_EINVAL;
    if (vm->running || vm->active)
        return STVM_EBUSY;
    vm->running = true;
    stvm__ctx_host_enter(vm);
    stvm__poll_events(vm);
    stvm__transfer_to(vm, runq_pop_highest(vm));
    stvm__ctx_host_leave(vm);
    vm->running = false;
    return vm->run_result;
}

/* ---- VM lifetime ------------------------------------------------------------------ */

void stvm_config_init(stvm_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->smallint_bits = 61;
    cfg->preemption_yields = true;
    cfg->stack_size = 16 * 1024;
    cfg->stack_guard = true;
    cfg->delay_clock = STVM_DELAY_CLOCK_US;
    cfg->clock = STVM_CLOCK_REAL;
    cfg->idle_relinquish_us = 1000;
    cfg->external_table_size = 256;
}

static int check_config(stvm_config *c)
{
    if (c->stack_size == 0)
        c->stack_size = 16 * 1024;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    c->stack_size = (c->stack_size + page - 1) & ~(page - 1);
    if ((c->smallint_bits != 31 && c->smallint_bits != 61) || c->stack_size < 8192 ||
        c->stack_size > ((size_t)64 << 20) ||
        (c->delay_clock != STVM_DELAY_CLOCK_MS && c->delay_clock != STVM_DELAY_CLOCK_US) ||
        (c->clock != STVM_CLOCK_REAL && c->clock != STVM_CLOCK_SIMULATED) ||
        c->idle_relinquish_us < 1 || c->idle_relinquish_us > 10000000 ||
        c->external_table_size < 1 || c->external_table_size > 65536 ||
        c->ms_clock_start > STVM_MS_CLOCK_MASK ||
        (c->sim_start_us && c->sim_start_us > (1ull << 62)))
        return STVM_EINVAL;
    return STVM_OK;
}

int stvm_vm_new(stvm_vm **out, const stvm_config *cfg)
{
    if (!out)
        return STVM_EINVAL;
    stvm_config c;
    if (cfg)
        c = *cfg;
    else
        stvm_config_init(&c);
    int err = check_config(&c);
    if (err)
        return err;
    stvm_vm *vm = calloc(1, sizeof *vm);
    if (!vm)
        return STVM_ENOMEM;
    vm->cfg = c;
    vm->ext.wake_fd = -1;
    int64_t bits = c.smallint_bits;
    vm->si_max = ((int64_t)1 << (bits - 1)) - 1;
    vm->si_min = -((int64_t)1 << (bits - 1));
    for (int i = 0; i < STVM_NUM_PRIORITIES; i++)
        vm->runq[i].kind = STVM_LIST_RUNQ;
    if ((err = stvm__objmem_init(vm)) || (err = stvm__clock_init(vm)) ||
        (err = stvm__external_init(vm)))
        goto fail;
    if ((err = stvm__ctx_vm_init(vm)))
        goto fail;
    stvm_process *idle;
    err = stvm__spawn(vm, STVM_PRIORITY_IDLE, "Idle Process", idle_main, NULL, 0, true,
                      STVM_PF_VM_OWN, &idle);
    if (err)
        goto fail;
    vm->idle = idle->core;
    *out = vm;
    return STVM_OK;
fail:
    stvm_vm_free(vm);
    return err;
}

void stvm_vm_free(stvm_vm *vm)
{
    if (!vm || vm->running)
        return;
    if (vm->delay.destroy)
        vm->delay.destroy(vm);
    /* Every process handle, finished ones too, is an object: give back the stacks of
     * unfinished ones and the names before object memory goes. */
    for (size_t i = 0; i < vm->mem.set_cap; i++) {
        uintptr_t a = vm->mem.set[i];
        if (a > 1 && ((stvm_object *)a)->class_index == STVM_CLASS_PROCESS) {
            stvm_process *h = (stvm_process *)a;
            if (h->core)
                stvm__ctx_release(vm, h->core);
            h->core = NULL;
            free(h->name);
            h->name = NULL;
        }
    }
    if (vm->zombie)
        stvm__ctx_release(vm, vm->zombie);
    stvm__stack_cache_destroy(vm);
    stvm__external_destroy(vm);
    stvm__objmem_destroy(vm);
    free(vm->host_uctx);
    free(vm);
}

int stvm_vm_config(const stvm_vm *vm, stvm_config *out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    *out = vm->cfg;
    return STVM_OK;
}

/* ---- public process API ------------------------------------------------------------ */

int stvm_spawn(stvm_vm *vm, int priority, const char *name, stvm_fn fn, void *arg,
               stvm_process **out)
{
    return stvm__spawn(vm, priority, name, fn, arg, 0, true, 0, out);
}

int stvm_spawn_sized(stvm_vm *vm, int priority, const char *name, stvm_fn fn, void *arg,
                     size_t stack_size, stvm_process **out)
{
    return stvm__spawn(vm, priority, name, fn, arg, stack_size, true, 0, out);
}

int stvm_spawn_suspended(stvm_vm *vm, int priority, const char *name, stvm_fn fn,
                         void *arg, size_t stack_size, stvm_process **out)
{
    return stvm__spawn(vm, priority, name, fn, arg, stack_size, false, 0, out);
}

stvm_process *stvm_active_process(stvm_vm *vm)
{
    return vm && vm->active ? vm->active->handle : NULL;
}

int stvm_yield(stvm_vm *vm)
{
    if (!vm || !vm->active)
        return vm ? STVM_ENOTPROC : STVM_EINVAL;
    return stvm__yield(vm);
}

int stvm_checkpoint(stvm_vm *vm)
{
    if (!vm || !vm->active)
        return vm ? STVM_ENOTPROC : STVM_EINVAL;
    stvm__poll_events(vm);
    return stvm__preempt_if_needed(vm) ? 1 : 0;
}

/* The running state of a handle handed in by a caller: EINVAL for something that is
 * not a process of this VM, ESTATE once it has finished or, when user_only, for the
 * VM's own processes (idle, timing), which callers may not suspend, end or reprioritise. */
static int core_of(stvm_vm *vm, const stvm_process *h, bool user_only, stvm_proc **out)
{
    if (!vm || !stvm__is_proc(vm, h))
        return STVM_EINVAL;
    if (!h->core || (user_only && (h->flags & STVM_PF_VM_OWN)))
        return STVM_ESTATE;
    *out = h->core;
    return STVM_OK;
}

int stvm_process_resume(stvm_vm *vm, stvm_process *h)
{
    stvm_proc *p;
    int err = core_of(vm, h, false, &p);
    return err ? err : stvm__process_resume(vm, p);
}

int stvm_process_suspend(stvm_vm *vm, stvm_process *h)
{
    stvm_proc *p;
    int err = core_of(vm, h, true, &p);
    return err ? err : stvm__process_suspend(vm, p);
}

int stvm_process_terminate(stvm_vm *vm, stvm_process *h)
{
    stvm_proc *p;
    int err = core_of(vm, h, true, &p);
    if (err)
        return err;
    if (p == vm->active)
        terminate_active(vm);
    finish_process(vm, p);
    stvm__ctx_release(vm, p);
    /* Mutexes it held may have gone to higher-priority waiters. */
    stvm__preempt_if_needed(vm);
    return STVM_OK;
}

int stvm_process_set_priority(stvm_vm *vm, stvm_process *h, int priority)
{
    stvm_proc *p;
    int err = core_of(vm, h, true, &p);
    if (err)
        return err;
    if (!priority_ok(priority))
        return STVM_EINVAL;
    stvm_list *l = p->my_list;
    h->priority = priority;
    if (l && l->kind == STVM_LIST_RUNQ) {
        stvm__unlink(vm, p);
        p->priority = priority;
        stvm__resume(vm, p);
    } else {
        p->priority = priority;
        if (p == vm->active)
            stvm__preempt_if_needed(vm);
    }
    return STVM_OK;
}

int stvm_process_info_get(stvm_vm *vm, const stvm_process *h, stvm_process_info *out)
{
    if (!vm || !stvm__is_proc(vm, h) || !out)
        return STVM_EINVAL;
    memset(out, 0, sizeof *out);
    out->name = h->name;
    out->id = h->id;
    out->vm_own = (h->flags & STVM_PF_VM_OWN) != 0;
    stvm_proc *p = h->core;
    out->priority = p ? p->priority : h->priority;
    if (!p)
        out->state = STVM_PROCESS_TERMINATED;
    else if (p == vm->active)
        out->state = STVM_PROCESS_ACTIVE;
    else if (!p->my_list)
        out->state = STVM_PROCESS_SUSPENDED;
    else if (p->my_list->kind == STVM_LIST_RUNQ)
        out->state = STVM_PROCESS_READY;
    else
        out->state = STVM_PROCESS_WAITING;
    if (out->state == STVM_PROCESS_WAITING) {
        if (p->my_list->kind == STVM_LIST_SEMAPHORE) {
            out->waiting_on = p->wait_label ? p->wait_label : "semaphore";
            out->waiting_object = (const char *)p->my_list - offsetof(stvm_semaphore, list);
        } else {
            out->waiting_on = "mutex";
            out->waiting_object = (const char *)p->my_list - offsetof(stvm_mutex, list);
        }
    }
    return STVM_OK;
}

int stvm_blocked_report(stvm_vm *vm, char *buf, size_t size)
{
    if (!vm || (!buf && size))
        return STVM_EINVAL;
    size_t len = 0;
    if (size)
        buf[0] = 0;
    for (stvm_proc *p = vm->all; p; p = p->all_next) {
        stvm_process_info info;
        stvm_process_info_get(vm, p->handle, &info);
        if (info.vm_own || info.state == STVM_PROCESS_READY ||
            info.state == STVM_PROCESS_ACTIVE)
            continue;
        char line[256];
        int n;
        if (info.state == STVM_PROCESS_WAITING)
            n = snprintf(line, sizeof line, "'%s' (priority %d) waits on %s %p\n", info.name,
                         info.priority, info.waiting_on, info.waiting_object);
        else
            n = snprintf(line, sizeof line, "'%s' (priority %d) is suspended\n", info.name,
                         info.priority);
        if (n < 0)
            continue;
        if (len + 1 < size)
            snprintf(buf + len, size - len, "%s", line);
        len += (size_t)n;
    }
    return len > (size_t)INT32_MAX ? INT32_MAX : (int)len;
}

int stvm_get_stats(stvm_vm *vm, stvm_stats *out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    *out = vm->stats;
    out->processes_live = vm->live_total;   /* derived, never stored */
    return STVM_OK;
}

void stvm_reset_stats(stvm_vm *vm)
{
    if (!vm)
        return;
    stvm_stats keep = vm->stats;
    memset(&vm->stats, 0, sizeof vm->stats);
    vm->stats.objects_live = keep.objects_live;
    vm->stats.bytes_live = keep.bytes_live;
}

uint64_t stvm_now_us(stvm_vm *vm)
{
    return vm ? stvm__clock_now_us(vm) : 0;
}

uint32_t stvm_millisecond_clock(stvm_vm *vm)
{
    return vm ? stvm__clock_ms_at(vm, stvm__clock_now_us(vm)) : 0;
}

/* ---- invariants -------------------------------------------------------------------- */

#define FAIL(...)                                                \
    do {                                                         \
        if (buf && size)                                         \
            snprintf(buf, size, __VA_ARGS__);                    \
        return STVM_ESTATE;                                      \
    } while (0)

static int check_list(stvm_list *l, char *buf, size_t size, size_t limit)
{
    size_t n = 0;
    stvm_proc *prev = NULL;
    for (stvm_proc *p = l->first; p; prev = p, p = p->next_link) {
        if (p->my_list != l)
            FAIL("process '%s' is on a list its myList does not name", p->handle->name);
        if (prev && p->prev_link != prev)
            FAIL("process '%s' has a wrong prevLink", p->handle->name);
        if (p->flags & STVM_PF_TERMINATED)
            FAIL("finished process '%s' is still on a list", p->handle->name);
        if (++n > limit)
            FAIL("a list is cyclic or holds a process twice");
    }
    if (l->last != prev)
        FAIL("a list's lastLink is not its last process");
    return STVM_OK;
}

int stvm_check_invariants(stvm_vm *vm, char *buf, size_t size)
{
    if (!vm)
        return STVM_EINVAL;
    size_t limit = vm->live_total + 1;
    for (int i = 0; i < STVM_NUM_PRIORITIES; i++) {
        stvm_list *l = &vm->runq[i];
        bool bit = (vm->ready_bits[i >> 6] >> (i & 63)) & 1;
        if (bit != (l->first != NULL))
            FAIL("priority bitmap disagrees with run queue %d", i + 1);
        if (check_list(l, buf, size, limit))
            return STVM_ESTATE;
        for (stvm_proc *p = l->first; p; p = p->next_link)
            if (p->priority != i + 1)
                FAIL("process '%s' of priority %d is on run queue %d", p->handle->name, p->priority,
                     i + 1);
    }
    uint32_t total = 0, user = 0;
    for (stvm_proc *p = vm->all; p; p = p->all_next) {
        total++;
        if (!(p->flags & STVM_PF_VM_OWN))
            user++;
        if (p == vm->active && p->my_list)
            FAIL("the active process '%s' is on a list", p->handle->name);
        if (p->my_list) {
            if (check_list(p->my_list, buf, size, limit))
                return STVM_ESTATE;
            size_t seen = 0;
            for (stvm_proc *q = p->my_list->first; q; q = q->next_link)
                seen += q == p;
            if (seen != 1)
                FAIL("process '%s' is not exactly once on its list", p->handle->name);
        }
        if (p->my_list && p->my_list->kind == STVM_LIST_SEMAPHORE) {
            stvm_semaphore *s = (stvm_semaphore *)((char *)p->my_list -
                                                   offsetof(stvm_semaphore, list));
            if (s->excess_signals > 0)
                FAIL("a semaphore has both waiters and excess signals");
        }
        if (p->my_list && p->my_list->kind == STVM_LIST_MUTEX) {
            stvm_mutex *m = (stvm_mutex *)((char *)p->my_list - offsetof(stvm_mutex, list));
            if (!m->owner || (m->owner->flags & STVM_PF_TERMINATED))
                FAIL("a mutex has waiters but no live owner");
        }
        for (stvm_mutex *m = p->owned; m; m = m->next_owned)
            if (m->owner != p)
                FAIL("process '%s' lists a mutex it does not own", p->handle->name);
    }
    if (total != vm->live_total || user != vm->live_user)
        FAIL("process counts disagree (%u/%u listed, %u/%u counted)", total, user,
             vm->live_total, vm->live_user);
    if (vm->idle && (vm->idle->flags & STVM_PF_TERMINATED))
        FAIL("the idle process has finished");
    stvm_proc *a = vm->active;
    if (a && a->priority >= STVM_PRIORITY_IDLE && stvm__runq_highest(vm) > a->priority)
        FAIL("'%s' runs at priority %d while priority %d is runnable", a->handle->name,
             a->priority, stvm__runq_highest(vm));
    if (buf && size)
        buf[0] = 0;
    return STVM_OK;
}
