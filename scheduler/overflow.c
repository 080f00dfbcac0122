/*
 * Stack overflow reporting. A touch of a guard region faults: a SIGSEGV handler on an
 * alternate signal stack (a handler on the overflowed stack could not run) finds the
 * slot the address lies in and, if it is a guard region, names the running process and
 * aborts. A canary-checked stack is looked at when its process switches away and at
 * checkpoints. Which stacks get which is vm/stack.c's business.
 */
#include "context.h"
#include "sched.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../vm/sanitizers.h"
#include "../vm/stack.h"
#include "../vm/alloc.h"

/* The VM running on this OS thread (sched.h), for the SIGSEGV handler and the checks
 * of the calls that need a process: per thread, so two VMs on two threads each see
 * their own. */
_Thread_local stvm_vm *stvm__tls_vm __attribute__((tls_model("initial-exec")));
static _Thread_local void *tls_altstack;

static void put_str(const char *s)
{
    ssize_t n = write(2, s, strlen(s));
    (void)n;
}

static void put_num(size_t v)
{
    char buf[24], *e = buf + sizeof buf, *q = e;
    do
        *--q = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    ssize_t n = write(2, q, (size_t)(e - q));
    (void)n;
}

_Noreturn void stvm__overflow_report(const char *name, size_t stack_size, const char *how)
{
    put_str("stvm: stack overflow in process '");
    put_str(name);
    put_str("' (stack size ");
    put_num(stack_size);
    put_str(" bytes; ");
    put_str(how);
    put_str(")\n");
    signal(SIGABRT, SIG_DFL);
    abort();
}

void stvm__overflow_check(stvm_proc *p, const void *sp)
{
    if (!stvm__stack_canary_ok(p->stack_lo, sp))
        stvm__overflow_report(p->handle->name, p->stack_size,
                              "its canary, checked at a switch or checkpoint");
}

#ifndef STVM_ASAN   /* AddressSanitizer reports faults itself */
static struct sigaction old_segv;   /* written once under pthread_once */
static pthread_once_t segv_once = PTHREAD_ONCE_INIT;

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
    stvm_vm *vm = stvm__tls_vm;
    stvm_proc *p = vm ? vm->active : NULL;
    stvm_stack st;
    bool in_guard;
    if (p && stvm__stack_find(vm, (uintptr_t)si->si_addr, &st, &in_guard) && in_guard)
        stvm__overflow_report(p->handle->name, p->stack_size,
                              st.lo == p->stack_lo
                                  ? "its guard region faulted"
                                  : "it touched another stack's guard region: a frame larger "
                                    "than the guard, or a stray pointer");
    /* Not ours: hand the fault to whoever had it before (default: die with SIGSEGV). */
    if (old_segv.sa_flags & SA_SIGINFO && old_segv.sa_sigaction) {
        old_segv.sa_sigaction(sig, si, uc);
        return;
    }
    if (old_segv.sa_handler != SIG_IGN && old_segv.sa_handler != SIG_DFL &&
        old_segv.sa_handler) {
        old_segv.sa_handler(sig);
        return;
    }
    signal(SIGSEGV, SIG_DFL);   /* returning re-executes the access and dies */
}

static void install_segv(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
}

static void arm_thread(void)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
        size_t sz = 64 * 1024;
        stack_t ss = {.ss_sp = stvm__malloc(sz), .ss_size = sz, .ss_flags = 0};
        if (ss.ss_sp && sigaltstack(&ss, NULL) == 0)
            tls_altstack = ss.ss_sp;
        else
            free(ss.ss_sp);
    }
    pthread_once(&segv_once, install_segv);
}
#else
static void arm_thread(void) {}
#endif

void stvm__overflow_arm(stvm_vm *vm)
{
    stvm__tls_vm = vm;
    if (vm->cfg.stack_guard)
        arm_thread();
}

void stvm__overflow_disarm(stvm_vm *vm)
{
    (void)vm;
    stvm__tls_vm = NULL;
    if (tls_altstack) {
        stack_t ss = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
        sigaltstack(&ss, NULL);
        free(tls_altstack);
        tls_altstack = NULL;
    }
}
