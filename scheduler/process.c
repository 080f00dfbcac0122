/*
 * Processes: creation, the process primitives' rules (87 resume, 88 suspend,
 * priority), and the way out: cleanups (stvm_ensure), finishing, termination, and
 * the handle's lifetime (held by the caller, or living in the stack and going with it).
 *
 * A process is on at most one list (a run queue, or the waiting list of a semaphore,
 * mutex or joined process) and its myList says which; the active process is on none.
 */
#include "sched.h"

#include <stdlib.h>
#include <string.h>

#include "../vm/config.h"
#include "../vm/objmem.h"
#include "context.h"
#include "process_local.h"
#include "../vm/alloc.h"

/* ---- the VM's list of unfinished processes ------------------------------------------ */

static void link_all(stvm_vm *vm, stvm_proc *p)
{
    p->all_prev = NULL;
    p->all_next = vm->all;
    if (vm->all)
        vm->all->all_prev = p;
    vm->all = p;
    vm->live_total++;
    if (!(p->flags & STVM_PF_VM_OWN))
        vm->live_user++;
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
    vm->live_total--;
    if (!(p->flags & STVM_PF_VM_OWN))
        vm->live_user--;
}

/* ---- handles ------------------------------------------------------------------------ */

/* A held handle is an object of its own with the name after it; an unheld one lives in
 * the stack's top area, with its name there too when it fits. */
static stvm_process *handle_new(stvm_vm *vm, stvm_proc *p, const char *name, uint32_t flags)
{
    size_t len = strlen(name);
    stvm_process *h;
    if (flags & STVM_PF_HELD) {
        h = stvm__objmem_alloc(vm, STVM_CLASS_PROCESS, sizeof *h + len + 1);
        if (!h)
            return NULL;
        h->name = (char *)(h + 1);
    } else {
        h = (stvm_process *)((char *)p + STVM_PROC_HANDLE_OFFSET);
        memset(h, 0, sizeof *h);
        h->hdr = (stvm_object){STVM_CLASS_PROCESS, sizeof *h - sizeof(stvm_object)};
        flags |= STVM_PF_IN_STACK;
        if (len < STVM_PROC_NAME_INLINE) {
            h->name = (char *)p + STVM_PROC_NAME_OFFSET;
        } else if ((h->name = stvm__malloc(len + 1)) != NULL) {
            flags |= STVM_PF_NAME_MALLOC;
        } else {
            h->hdr.class_index = STVM_CLASS_FREE;
            return NULL;
        }
    }
    memcpy(h->name, name, len + 1);
    h->flags = flags;
    h->joiners.kind = STVM_LIST_JOIN;
    return h;
}

static void handle_free(stvm_vm *vm, stvm_process *h)
{
    stvm__locals_drop(vm, h);   /* its process-local values go with it */
    if (!(h->flags & STVM_PF_IN_STACK)) {
        stvm__objmem_free(vm, h);
        return;
    }
    if (h->flags & STVM_PF_NAME_MALLOC)
        free(h->name);
    h->hdr.class_index = STVM_CLASS_FREE;   /* its memory goes with the stack */
}

void stvm__handle_release_if_unused(stvm_vm *vm, stvm_process *h)
{
    if (!h->core && !(h->flags & STVM_PF_HELD) && stvm__list_idle(&h->joiners))
        handle_free(vm, h);
}

/* ---- creation ----------------------------------------------------------------------- */

static bool priority_ok(int priority)
{
    return priority >= STVM_PRIORITY_MIN && priority <= STVM_PRIORITY_MAX;
}

int stvm__spawn(stvm_vm *vm, int priority, const char *name, stvm_fn fn, void *arg,
                size_t stack_size, bool start, uint32_t flags, stvm_process **out)
{
    if (!vm || !fn || !priority_ok(priority))
        return STVM_EINVAL;
    if (stack_size == 0)
        stack_size = vm->cfg.stack_size;
    if (stack_size < STVM_MIN_STACK_SIZE || stack_size > STVM_MAX_STACK_SIZE)
        return STVM_EINVAL;
    /* Pharo's installEnvIntoForked:: a process spawned by a user process inherits its
     * inheritable values; the VM's own processes start with none. The nodes are made
     * first, so that a spawn that fails changes nothing and calls no inherit_fn. */
    stvm_process *parent = stvm__in_process(vm) && !(flags & STVM_PF_VM_OWN)
                               ? vm->active->handle : NULL;
    stvm_local_value *inherited = NULL;
    if (parent && parent->locals) {
        int err = stvm__locals_inherit_prepare(vm, parent, &inherited);
        if (err)
            return err;
    }
    stvm_proc *p;
    int err = stvm__ctx_prepare(vm, stvm__page_round(stack_size), &p);
    if (err) {
        stvm__locals_nodes_free(inherited);
        return err;
    }
    stvm_process *h = handle_new(vm, p, name ? name : "", flags | (out ? STVM_PF_HELD : 0));
    if (!h) {
        stvm__locals_nodes_free(inherited);
        stvm__ctx_release(vm, p);
        return STVM_ENOMEM;
    }
    h->core = p;
    h->vm = vm;
    h->id = ++vm->next_pid;
    h->priority = priority;
    p->handle = h;
    p->vm = vm;
    p->priority = priority;
    p->fn = fn;
    p->arg = arg;
    p->flags |= (uint16_t)(flags & 0xFF);
    p->id = h->id;
    if (parent)
        stvm__locals_inherit_finish(vm, parent, inherited, h);
    link_all(vm, p);
    if (stvm__tracing(vm))
        stvm__trace_created(vm, p->id, h->name, priority);
    if (out)
        *out = h;
    if (start)
        stvm__resume(vm, p);
    return STVM_OK;
}

void stvm__process_entry(void *arg)
{
    stvm_proc *p = arg;
    stvm_vm *vm = p->vm;
    stvm__ctx_entered(vm);
    stvm__after_switch(vm);
    if (p->flags & STVM_PF_INTERRUPT)   /* interrupted before it first ran */
        stvm__interrupts_run(vm, p);
    p->fn(vm, p->arg);
    stvm__process_exit(vm);
}

/* ---- the way out -------------------------------------------------------------------- */

static void run_ensures(stvm_vm *vm, stvm_proc *p)
{
    for (stvm_ensure_node *n; (n = p->ensures) != NULL;) {
        p->ensures = n->next;   /* popped first: a cleanup that exits goes on with the rest */
        stvm_fn fn = n->fn;
        void *arg = n->arg;
        if (!n->on_stack)
            free(n);
        fn(vm, arg);
    }
}

/* p will never come back to the wait it committed to: what it was handed goes back,
 * the commitment is dropped, and when it was a join, the joined handle may have been
 * waiting only for p to go. */
static void abandon_commitment(stvm_vm *vm, stvm_proc *p)
{
    stvm__wait_give_back(vm, p);
    stvm_list *l = p->pinned;
    stvm__wait_uncommit(p);
    if (l && l->kind == STVM_LIST_JOIN)
        stvm__handle_release_if_unused(vm, STVM_CONTAINER(l, stvm_process, joiners));
}

/* Everything that ends a process except giving up its stack (and with it p). */
static void finish(stvm_vm *vm, stvm_proc *p)
{
    stvm__trace(vm, STVM_TRACE_FINISHED, p->id, 0, 0);
    stvm__unlink(vm, p);
    abandon_commitment(vm, p);
    stvm__interrupts_drop(p);
    stvm__wait_guards_undo(vm, p);
    stvm__mutex_release_all(vm, p);
    unlink_all(vm, p);
    p->flags |= STVM_PF_TERMINATED;
    stvm_process *h = p->handle;   /* its priority: the last one set, not a cleanup's boost */
    h->cpu_ns = stvm__cpu_of(vm, p);   /* the record goes with the stack: the handle keeps it */
    h->flags |= STVM_PF_TERMINATED;
    h->core = NULL;
    for (stvm_proc *j; (j = stvm__list_pop(&h->joiners)) != NULL;)
        stvm__make_ready(vm, j);
    stvm__handle_release_if_unused(vm, h);
}

_Noreturn void stvm__process_exit(stvm_vm *vm)
{
    stvm_proc *p = vm->active;
    p->flags = (uint16_t)((p->flags & ~STVM_PF_TERMINATE) | STVM_PF_EXITING | STVM_PF_TERMINATING);
    /* Exiting now: a cleanup of the exit that runs another by hand must not start the
     * exit again when that one ends (it would abandon the rest of its own cleanup). */
    p->exit_after_cleanup = false;
    abandon_commitment(vm, p);
    run_ensures(vm, p);
    finish(vm, p);
    vm->zombie = p;
    stvm__switch_to_next(vm);
    abort();   /* not reached: nothing switches back to a finished process */
}

/* p, terminated and not running, runs its cleanups now, at least at the caller's
 * priority, while the caller waits at the front of its queue; from the embedding thread
 * it is only made ready (it runs at the next stvm_run). If what p gave back woke a
 * process higher still, that one runs first and p waits at the front of its queue. */
static void run_terminated_now(stvm_vm *vm, stvm_proc *p)
{
    stvm_proc *a = vm->active;
    if (!a) {
        if (!p->my_list)
            stvm__make_ready(vm, p);
        return;
    }
    stvm__unlink(vm, p);
    if (p->priority < a->priority)
        p->priority = a->priority;
    stvm__runq_put(vm, a, false);
    if (stvm__runq_highest(vm) > p->priority) {
        stvm__runq_put(vm, p, false);
        stvm__switch_to_next(vm);
    } else {
        stvm__transfer_to(vm, p);
    }
}

/* Terminate p, which is not running and has cleanups: it runs them itself. */
static void terminate_with_cleanups(stvm_vm *vm, stvm_proc *p)
{
    stvm__unlink(vm, p);
    abandon_commitment(vm, p);
    stvm__wait_guards_undo(vm, p);
    p->flags |= STVM_PF_TERMINATE | STVM_PF_TERMINATING;
    run_terminated_now(vm, p);
}

/* Terminate p, which already runs a cleanup (on its way out, or by hand through
 * stvm_ensure_pop: Pharo 10's rule, an unwind block in progress is completed): the
 * cleanup it is in runs to its end and the rest follow, but none of them waits any more
 * (each wait answers EINTR at once, the one p is in included, and so does a suspension
 * of itself). p is terminating from here on, as Pharo marks a process before it
 * unwinds: the by-hand path reaches here without the exit, which marks the others. */
static void terminate_exiting(stvm_vm *vm, stvm_proc *p)
{
    p->flags |= STVM_PF_TERMINATING;
    stvm__cancel_for_good(p);
    if (p == vm->active)
        return;
    stvm__wait_interrupt(vm, p);   /* off its waiting list, or its hand-off given back */
    if (!p->my_list && p->wait_end == STVM_WAIT_ABORTED)
        p->wait_end = STVM_WAIT_INTERRUPTED;   /* suspended in a wait: that wait ends too */
    run_terminated_now(vm, p);
}

void stvm__processes_destroy(stvm_vm *vm)
{
    for (stvm_proc *p; (p = vm->all) != NULL;) {
        unlink_all(vm, p);
        stvm__interrupts_drop(p);
        p->flags |= STVM_PF_TERMINATING;   /* as its cleanups see it */
        run_ensures(vm, p);
        stvm_process *h = p->handle;
        h->core = NULL;
        if (h->flags & STVM_PF_IN_STACK)
            handle_free(vm, h);
        stvm__ctx_release(vm, p);
    }
    if (vm->zombie)
        stvm__ctx_release(vm, vm->zombie);
    vm->zombie = NULL;
}

/* ---- the process primitives' rules -------------------------------------------------- */

/* A process backed up by 568 or 578 and resumed waits again where it waited: it takes
 * an excess signal or a free mutex as a wait would (then it runs by the preemption
 * rule, holding what it took on paper until it does), or joins the waiting list. */
static void wait_again(stvm_vm *vm, stvm_proc *p)
{
    stvm_list *l = p->pinned;
    p->flags = (uint16_t)(p->flags & ~STVM_PF_BACKED_UP);
    stvm__wait_uncommit(p);
    p->wait_end = STVM_WAIT_SIGNALLED;
    bool got = l->kind == STVM_LIST_SEMAPHORE
                   ? stvm__sem_wait_for(vm, STVM_CONTAINER(l, stvm_semaphore, list), p)
                   : stvm__mutex_enter_for(vm, STVM_CONTAINER(l, stvm_mutex, list), p);
    if (got)
        stvm__resume(vm, p);
}

int stvm__process_resume(stvm_vm *vm, stvm_proc *p)
{
    if (p->flags & STVM_PF_TERMINATED || p == vm->active || p->my_list)
        return STVM_ESTATE;
    stvm__trace(vm, STVM_TRACE_RESUMED, p->id, 0, 0);
    if (p->flags & STVM_PF_BACKED_UP)
        wait_again(vm, p);
    else
        stvm__resume(vm, p);
    return STVM_OK;
}

bool stvm__process_backs_up(const stvm_proc *p)
{
    const stvm_list *l = p->my_list;
    /* Plain waits only: a Delay's, a timed wait's, a queue's or a monitor's has its
     * own bookkeeping around the list (a label, a guard, a commitment), which a wait
     * made again on the process's behalf would skip. */
    return l && (l->kind == STVM_LIST_SEMAPHORE || l->kind == STVM_LIST_MUTEX) &&
           !p->wait_label && !p->guards && !p->pinned;
}

int stvm__process_suspend_backing_up(stvm_vm *vm, stvm_proc *p)
{
    if (p->flags & STVM_PF_TERMINATED || p == vm->active || !stvm__process_backs_up(p))
        return stvm__process_suspend(vm, p);
    stvm_list *l = p->my_list;
    stvm__trace(vm, STVM_TRACE_SUSPENDED, p->id, 0, 0);
    stvm__unlink(vm, p);
    /* Committed to l: its object may not be freed before p waits there again. */
    p->pinned = l;
    l->pins++;
    p->flags |= STVM_PF_BACKED_UP;
    return STVM_OK;
}

int stvm__process_suspend(stvm_vm *vm, stvm_proc *p)
{
    if (p->flags & STVM_PF_TERMINATED)
        return STVM_ESTATE;
    /* A process terminated in a cleanup waits no more: suspending itself is a wait for
     * a resume, so it answers EINTR at once, as its waits do. */
    if (p == vm->active && stvm__cancelled_for_good(p))
        return STVM_EINTR;
    if (p == vm->active || p->my_list)
        stvm__trace(vm, STVM_TRACE_SUSPENDED, p->id, 0, 0);
    if (p == vm->active) {
        stvm__switch_to_next(vm);   /* on no list: a resume or a terminate brings it back */
        return stvm__cancelled_for_good(p) ? STVM_EINTR : STVM_OK;
    }
    stvm_list *l = p->my_list;
    if (!l)
        return STVM_ESTATE;
    if (l->kind == STVM_LIST_RUNQ)
        stvm__unlink(vm, p);
    else
        stvm__wait_end(vm, p, STVM_WAIT_ABORTED);
    return STVM_OK;
}

/* ---- public API --------------------------------------------------------------------- */

/* The running state of a handle handed in by a caller: EINVAL for something that is
 * not a process of this VM, ESTATE once it has finished or, when user_only, for the
 * VM's own processes (idle, timing), which callers may not suspend, end or reprioritise. */
int stvm__process_core(stvm_vm *vm, const stvm_process *h, bool user_only, stvm_proc **out)
{
    if (!vm || !stvm__is_proc(vm, h))
        return STVM_EINVAL;
    if (!h->core || (user_only && (h->flags & STVM_PF_VM_OWN)))
        return STVM_ESTATE;
    *out = h->core;
    return STVM_OK;
}

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

stvm_process *stvm_vm_active_process(stvm_vm *vm)
{
    return vm && vm->active ? vm->active->handle : NULL;
}

int stvm_process_resume(stvm_vm *vm, stvm_process *h)
{
    stvm_proc *p;
    int err = stvm__process_core(vm, h, false, &p);
    return err ? err : stvm__process_resume(vm, p);
}

int stvm_process_suspend(stvm_vm *vm, stvm_process *h)
{
    stvm_proc *p;
    int err = stvm__process_core(vm, h, true, &p);
    return err ? err : stvm__process_suspend(vm, p);
}

int stvm_process_terminate(stvm_vm *vm, stvm_process *h)
{
    /* Pharo's terminate of a terminated process is a no-op that answers the process. */
    if (vm && stvm__is_proc(vm, h) && !h->core && !(h->flags & STVM_PF_VM_OWN))
        return STVM_OK;
    stvm_proc *p;
    int err = stvm__process_core(vm, h, true, &p);
    if (err)
        return err;
    stvm__trace(vm, STVM_TRACE_TERMINATED, p->id, 0, 0);
    if (p->flags & STVM_PF_EXITING) {
        terminate_exiting(vm, p);
        return STVM_OK;
    }
    if (p->by_hand) {   /* the cleanup in progress completes first, waiting no more */
        p->exit_after_cleanup = true;   /* terminate_exiting marks it terminating */
        terminate_exiting(vm, p);
        return STVM_OK;
    }
    if (p == vm->active)
        stvm__process_exit(vm);
    if (p->ensures) {
        terminate_with_cleanups(vm, p);
        return STVM_OK;
    }
    finish(vm, p);
    stvm__ctx_release(vm, p);
    /* Mutexes it held and its joiners may have gone to higher-priority processes. */
    stvm__preempt_if_needed(vm);
    return STVM_OK;
}

int stvm_process_set_priority(stvm_vm *vm, stvm_process *h, int priority)
{
    stvm_proc *p;
    int err = stvm__process_core(vm, h, true, &p);
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

int stvm_process_release(stvm_vm *vm, stvm_process *h)
{
    if (!vm || !stvm__is_proc(vm, h))
        return STVM_EINVAL;
    if (!(h->flags & STVM_PF_HELD) || (h->flags & STVM_PF_VM_OWN))
        return STVM_ESTATE;
    h->flags &= ~(uint32_t)STVM_PF_HELD;
    stvm__handle_release_if_unused(vm, h);
    return STVM_OK;
}

int stvm_ensure(stvm_vm *vm, stvm_fn fn, void *arg)
{
    if (!vm || !fn)
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    stvm_ensure_node *n = stvm__malloc(sizeof *n);
    if (!n)
        return STVM_ENOMEM;
    *n = (stvm_ensure_node){.fn = fn, .arg = arg, .next = vm->active->ensures};
    vm->active->ensures = n;
    return STVM_OK;
}

int stvm_ensure_pop(stvm_vm *vm, bool run)
{
    if (!vm)
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    stvm_proc *a = vm->active;
    stvm_ensure_node *n = a->ensures;
    if (!n || n->on_stack)   /* none of the caller's own inside a region of the library's */
        return STVM_ESTATE;
    a->ensures = n->next;
    stvm_fn fn = n->fn;
    void *arg = n->arg;
    if (!n->on_stack)
        free(n);
    if (run) {
        a->by_hand++;
        fn(vm, arg);
        if (--a->by_hand == 0 && a->exit_after_cleanup)
            stvm__process_exit(vm);   /* terminated meanwhile: does not return */
    }
    return STVM_OK;
}
