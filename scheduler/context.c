/*
 * Process stacks and the switch between them.
 *
 * Each stack is its own mapping with a PROT_NONE guard page below it, so an overflow
 * faults instead of silently corrupting the neighbour; a SIGSEGV handler running on an
 * alternate signal stack recognises a fault in the running process's guard page and
 * reports the process by name and stack size. Only touched pages become resident, so
 * a blocked process with a shallow stack costs one page plus its record.
 */
#include "context.h"

#include "../vm/clock.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef STVM_CTX_UCONTEXT
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define STVM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STVM_ASAN 1
#endif
#endif
#ifdef STVM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#define STACK_CACHE_MAX 4096

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t guard_size(const stvm_vm *vm)
{
    return vm->cfg.stack_guard ? page_size() : 0;
}

/* Map (or take from the cache) a stack with room for `stack_size` bytes including the
 * running-state record at its top, and answer that zeroed record. */
static int map_stack(stvm_vm *vm, size_t stack_size, stvm_proc **out)
{
    size_t map_size = stack_size + guard_size(vm);
    stvm_stack_cache *c = &vm->stacks;
    unsigned char *m;
    if (stack_size == vm->cfg.stack_size && c->count) {
        m = c->bases[--c->count];
    } else {
        m = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (m == MAP_FAILED)
            return STVM_ENOMEM;
        if (guard_size(vm) && mprotect(m, guard_size(vm), PROT_NONE) != 0) {
            munmap(m, map_size);
            return STVM_ENOMEM;
        }
    }
#ifdef STVM_ASAN
    /* A reused stack still carries the poisoned redzones of frames that never
     * returned (a finished or terminated process abandons them). */
    __asan_unpoison_memory_region(m + guard_size(vm), stack_size);
#endif
    stvm_proc *p = (stvm_proc *)(m + map_size - STVM_PROC_AREA);
    memset(p, 0, sizeof *p);
    p->map_base = m;
    p->map_size = map_size;
    p->stack_size = stack_size - STVM_PROC_AREA;
    *out = p;
    return STVM_OK;
}

/* Give the mapping back; p lives inside it and is gone afterwards. */
static void unmap_stack(stvm_vm *vm, stvm_proc *p)
{
    unsigned char *base = p->map_base;
    size_t map_size = p->map_size;
    stvm_stack_cache *c = &vm->stacks;
    if (map_size == vm->cfg.stack_size + guard_size(vm) && c->count < STACK_CACHE_MAX) {
        if (c->count == c->cap) {
            size_t ncap = c->cap ? c->cap * 2 : 64;
            unsigned char **nb = realloc(c->bases, ncap * sizeof *nb);
            if (nb) {
                c->bases = nb;
                c->cap = ncap;
            }
        }
        if (c->count < c->cap) {
            c->bases[c->count++] = base;
            return;
        }
    }
    munmap(base, map_size);
}

void stvm__stack_cache_destroy(stvm_vm *vm)
{
    size_t map_size = vm->cfg.stack_size + guard_size(vm);
    for (size_t i = 0; i < vm->stacks.count; i++)
        munmap(vm->stacks.bases[i], map_size);
    free(vm->stacks.bases);
    memset(&vm->stacks, 0, sizeof vm->stacks);
}

static inline unsigned char *stack_lo(const stvm_vm *vm, const stvm_proc *p)
{
    return p->map_base + guard_size(vm);
}

#ifdef STVM_CTX_UCONTEXT
/* makecontext passes ints only: the entry and its argument travel as 32-bit halves. */
static void uc_trampoline(unsigned eh, unsigned el, unsigned ah, unsigned al)
{
    void (*entry)(void *) = (void (*)(void *))(((uintptr_t)eh << 32) | (uintptr_t)el);
    entry((void *)(((uintptr_t)ah << 32) | (uintptr_t)al));
}
#else
void stvm__trampoline_asm(void);
#endif

/* Lay out p's first frame so that switching to it calls entry(arg). ENOMEM. */
static int first_frame(stvm_vm *vm, stvm_proc *p, void (*entry)(void *), void *arg)
{
#ifdef STVM_CTX_UCONTEXT
    ucontext_t *uc = calloc(1, sizeof *uc);
    if (!uc || getcontext(uc) != 0) {
        free(uc);
        return STVM_ENOMEM;
    }
    uc->uc_stack.ss_sp = stack_lo(vm, p);
    uc->uc_stack.ss_size = p->stack_size;
    uc->uc_link = NULL;
    uintptr_t e = (uintptr_t)entry, a = (uintptr_t)arg;
    makecontext(uc, (void (*)(void))uc_trampoline, 4, (unsigned)(e >> 32), (unsigned)e,
                (unsigned)(a >> 32), (unsigned)a);
    p->uctx = uc;
#else
    /* Popped by stvm__switch_asm: [mxcsr|fpucw,] r15, r14, r13, r12 = entry, rbx = arg,
     * rbp = 0, then the return address = the trampoline; rsp ends 16-byte aligned. */
    (void)vm;
    uint64_t *sp = (uint64_t *)((uintptr_t)p & ~(uintptr_t)15);   /* just below p */
    *--sp = (uint64_t)(uintptr_t)stvm__trampoline_asm;
    *--sp = 0;
    *--sp = (uint64_t)(uintptr_t)arg;
    *--sp = (uint64_t)(uintptr_t)entry;
    *--sp = 0;
    *--sp = 0;
    *--sp = 0;
#ifdef STVM_SWITCH_SAVE_FPU
    *--sp = 0x037Full << 32 | 0x1F80;   /* x87 control word, MXCSR: the defaults */
#endif
    p->ctx_sp = sp;
#endif
    return STVM_OK;
}

int stvm__ctx_prepare(stvm_vm *vm, size_t stack_size, stvm_proc **out)
{
    stvm_proc *p;
    int err = map_stack(vm, stack_size, &p);
    if (err)
        return err;
    if ((err = first_frame(vm, p, stvm__process_entry, p))) {
        unmap_stack(vm, p);
        return err;
    }
    *out = p;
    return STVM_OK;
}

void stvm__ctx_release(stvm_vm *vm, stvm_proc *p)
{
    free(p->uctx);
    unmap_stack(vm, p);
}

#ifndef STVM_CTX_UCONTEXT
void stvm__switch_asm(void **save_sp, void *new_sp);
#endif

void stvm__ctx_switch(stvm_vm *vm, stvm_proc *from, stvm_proc *to)
{
#ifdef STVM_ASAN
    void *fake = NULL;
    bool dying = from && (from->flags & STVM_PF_TERMINATED);
    const void *bottom = to ? (const void *)stack_lo(vm, to) : vm->host_stack_bottom;
    size_t size = to ? to->stack_size : vm->host_stack_size;
    __sanitizer_start_switch_fiber(dying ? NULL : &fake, bottom, size);
#endif
#ifdef STVM_CTX_UCONTEXT
    swapcontext(from ? from->uctx : vm->host_uctx, to ? to->uctx : vm->host_uctx);
#else
    stvm__switch_asm(from ? &from->ctx_sp : &vm->host_sp, to ? to->ctx_sp : vm->host_sp);
#endif
#ifdef STVM_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

void stvm__ctx_entered(stvm_vm *vm)
{
    (void)vm;
#ifdef STVM_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
}

int stvm__ctx_vm_init(stvm_vm *vm)
{
#ifdef STVM_CTX_UCONTEXT
    vm->host_uctx = calloc(1, sizeof(ucontext_t));
    if (!vm->host_uctx)
        return STVM_ENOMEM;
#else
    (void)vm;
#endif
    return STVM_OK;
}

const char *stvm_context_backend(void)
{
#ifdef STVM_CTX_UCONTEXT
    return "ucontext";
#else
    return "asm-x86_64";
#endif
}

/* ---- stack overflow reporting ---------------------------------------------------- */

/* The VM running on this OS thread, for the SIGSEGV handler: per thread, so two VMs on
 * two threads each see their own. */
static _Thread_local stvm_vm *tls_vm;
static _Thread_local void *tls_altstack;

#ifndef STVM_ASAN   /* AddressSanitizer reports faults itself */
static struct sigaction old_segv;   /* written once under pthread_once */
static pthread_once_t segv_once = PTHREAD_ONCE_INIT;

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

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
    stvm_vm *vm = tls_vm;
    stvm_proc *p = vm ? vm->active : NULL;
    uintptr_t a = (uintptr_t)si->si_addr;
    if (p && p->map_base && a >= (uintptr_t)p->map_base &&
        a < (uintptr_t)p->map_base + guard_size(vm) + 256) {
        put_str("stvm: stack overflow in process '");
        put_str(p->handle->name);
        put_str("' (stack size ");
        put_num(p->stack_size);
        put_str(" bytes)\n");
        signal(SIGABRT, SIG_DFL);
        abort();
    }
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
#endif

int stvm__ctx_host_enter(stvm_vm *vm)
{
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *addr;
        size_t size;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            vm->host_stack_bottom = addr;
            vm->host_stack_size = size;
        }
        pthread_attr_destroy(&attr);
    }
    tls_vm = vm;
    /* The idle process's sleep ends at the next deadline; Linux would otherwise let it
     * run late by the thread's timer slack (50 us by default). */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack > 1 && prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0)
        vm->host_timer_slack = slack;
#ifndef STVM_ASAN
    if (vm->cfg.stack_guard) {
        stack_t cur;
        if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
            size_t sz = 64 * 1024;
            stack_t ss = {.ss_sp = malloc(sz), .ss_size = sz, .ss_flags = 0};
            if (ss.ss_sp && sigaltstack(&ss, NULL) == 0)
                tls_altstack = ss.ss_sp;
            else
                free(ss.ss_sp);
        }
        pthread_once(&segv_once, install_segv);
    }
#endif
    return STVM_OK;
}

void stvm__ctx_host_leave(stvm_vm *vm)
{
    tls_vm = NULL;
    if (vm->host_timer_slack) {
        prctl(PR_SET_TIMERSLACK, (unsigned long)vm->host_timer_slack, 0, 0, 0);
        vm->host_timer_slack = 0;
    }
    if (tls_altstack) {
        stack_t ss = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
        sigaltstack(&ss, NULL);
        free(tls_altstack);
        tls_altstack = NULL;
    }
}

/* ---- raw switch measurement ------------------------------------------------------- */

typedef struct raw_pair {
    stvm_vm vm;                 /* only the fields the switch uses */
    stvm_proc *a;
    uint64_t left;
} raw_pair;

static void raw_entry(void *arg)
{
    raw_pair *r = arg;
    stvm__ctx_entered(&r->vm);
    for (;;) {
        r->left--;
        stvm__ctx_switch(&r->vm, r->a, NULL);
    }
}

int stvm_measure_raw_switch(uint64_t iterations, double *ns_per_switch)
{
    if (!iterations || !ns_per_switch)
        return STVM_EINVAL;
    raw_pair *r = calloc(1, sizeof *r);
    if (!r)
        return STVM_ENOMEM;
    r->vm.cfg.stack_guard = true;
    r->vm.cfg.stack_size = 0;   /* never matches: the stack is not cached */
    int err = stvm__ctx_vm_init(&r->vm);
    if (!err && !(err = map_stack(&r->vm, 64 * 1024, &r->a)) &&
        (err = first_frame(&r->vm, r->a, raw_entry, r)))
        unmap_stack(&r->vm, r->a);
    if (err) {
        free(r->vm.host_uctx);
        free(r);
        return err;
    }
    stvm__ctx_host_enter(&r->vm);
    r->left = iterations;
    int64_t t0 = stvm__mono_ns();
    while (r->left)
        stvm__ctx_switch(&r->vm, NULL, r->a);
    int64_t t1 = stvm__mono_ns();
    *ns_per_switch = (double)(t1 - t0) / (double)(2 * iterations);
    stvm__ctx_host_leave(&r->vm);
    stvm__ctx_release(&r->vm, r->a);
    free(r->vm.host_uctx);
    free(r);
    return STVM_OK;
}
