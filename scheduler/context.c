/*
 * Process contexts and the switch between them: a process's first frame, the switch
 * with its AddressSanitizer and ThreadSanitizer annotations, the embedding thread's
 * side of stvm_run, and the raw switch measurement. Stacks come from vm/stack.c;
 * overflows are reported by overflow.c.
 */
#include "context.h"
#include "sched.h"

#include "../vm/clock.h"
#include "../vm/debugger.h"
#include "../vm/stack.h"
#include "../vm/valgrind.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#ifdef STVM_CTX_UCONTEXT
#include <ucontext.h>
#endif

#include "../vm/sanitizers.h"
#include "../vm/alloc.h"
#ifdef STVM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef STVM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#if defined(STVM_ASAN) || defined(STVM_TSAN)
/* A sanitizer's word per process: ThreadSanitizer's fiber, or AddressSanitizer's fake
 * stack while the process is switched out. Kept in the last word of its record's slot,
 * which stvm_proc leaves free below the handle (vm/objects.h), so the other builds'
 * layout is untouched (the two sanitizers are never built together). */
_Static_assert(sizeof(stvm_proc) + sizeof(void *) <= STVM_PROC_HANDLE_OFFSET,
               "no room for the sanitizer's word after stvm_proc");
static void **fiber_word(stvm_proc *p)
{
    return (void **)((unsigned char *)p + STVM_PROC_HANDLE_OFFSET) - 1;
}
#endif

#ifdef STVM_TSAN
/* ThreadSanitizer sees each process as a fiber of its own (in its word), switched to
 * (with a happens-before edge, as the scheduler hands over) before every switch. The
 * fiber of the thread inside stvm_run (runs do not nest on a thread). */
static _Thread_local void *tsan_host_fiber;
#endif

#ifdef STVM_ASAN
/* AddressSanitizer with detect_stack_use_after_return=1 keeps the locals of a fiber's
 * frames on a fake stack of its own (mapped, about 700 KiB of address space per
 * process), which the switch annotations save and restore: a process switching out
 * leaves its fake stack in its word, and takes it back when it next runs. A process
 * that finishes passes NULL instead, and ASan destroys its fake stack (it never runs
 * again; its stack is given back only after the switch, stvm__after_switch). One that
 * never runs again because it was terminated while switched out, or freed with its VM,
 * cannot do that itself: its fake stack is made current here for a moment and
 * destroyed as a finishing fiber's is, by two annotated "switches" that never leave
 * this stack (without this, 1,000 processes freed so left 700 MB mapped). Not
 * instrumented, so that its own frame is on no fake stack while they are swapped. */
__attribute__((no_sanitize("address"))) static void asan_drop_fake_stack(void **saved)
{
    void *fake = *saved, *mine = NULL;
    const void *bottom = NULL;
    size_t size = 0;
    if (!fake)
        return;   /* never switched out with one: none, or not in this mode */
    *saved = NULL;
    __sanitizer_start_switch_fiber(&mine, NULL, 0);
    __sanitizer_finish_switch_fiber(fake, &bottom, &size);   /* this stack's bounds */
    __sanitizer_start_switch_fiber(NULL, bottom, size);      /* destroys fake */
    __sanitizer_finish_switch_fiber(mine, NULL, NULL);
}
#endif

/* What the sanitizers keep for a process that will never run again. */
static void fiber_release(stvm_proc *p)
{
#ifdef STVM_TSAN
    __tsan_destroy_fiber(*fiber_word(p));
#endif
#ifdef STVM_ASAN
    asan_drop_fake_stack(fiber_word(p));
#endif
    (void)p;
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

/* Lay out p's first frame, below p, so that switching to it calls entry(arg). ENOMEM. */
static int first_frame(stvm_proc *p, void (*entry)(void *), void *arg)
{
#ifdef STVM_CTX_UCONTEXT
    /* The context itself lives on the stack, just below p: nothing to allocate or free
     * per process (a malloc'ed one a process kept about 1 KiB of heap after it ended). */
    ucontext_t *uc = (ucontext_t *)(((uintptr_t)p - sizeof(ucontext_t)) & ~(uintptr_t)63);
    memset(uc, 0, sizeof *uc);
    if (getcontext(uc) != 0)
        return STVM_ENOMEM;
    uc->uc_stack.ss_sp = p->stack_lo;
    uc->uc_stack.ss_size = (size_t)((unsigned char *)uc - p->stack_lo);
    uc->uc_link = NULL;
    uintptr_t e = (uintptr_t)entry, a = (uintptr_t)arg;
    makecontext(uc, (void (*)(void))uc_trampoline, 4, (unsigned)(e >> 32), (unsigned)e,
                (unsigned)(a >> 32), (unsigned)a);
    p->uctx = uc;
#else
#if defined(__x86_64__)
    /* Popped by stvm__switch_asm: [mxcsr|fpucw,] r15, r14, r13, r12 = entry, rbx = arg,
     * rbp = 0, then the return address = the trampoline; rsp ends 16-byte aligned. */
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
#elif defined(__aarch64__)
    /* Loaded by stvm__switch_asm (switch_aarch64.S has the block's layout): [fpcr, pad,]
     * x19 = arg, x20 = entry, x21-x28 = 0, x29 = 0 (the end of the frame chain),
     * x30 = the trampoline, d8-d15 = 0; 160 bytes, so sp ends 16-byte aligned just
     * below p, as the AAPCS64 requires at every access through sp. */
    uint64_t *sp = (uint64_t *)((uintptr_t)p & ~(uintptr_t)15) - 20;
    memset(sp, 0, 20 * sizeof *sp);
    sp[0] = (uint64_t)(uintptr_t)arg;
    sp[1] = (uint64_t)(uintptr_t)entry;
    sp[11] = (uint64_t)(uintptr_t)stvm__trampoline_asm;
#ifdef STVM_SWITCH_SAVE_FPU
    sp -= 2;
    sp[0] = 0;   /* FPCR: Linux's default (round to nearest, no traps) */
    sp[1] = 0;
#endif
#else
#error "no assembly context switch for this machine: build with -DSTVM_CTX_UCONTEXT"
#endif
    p->ctx_sp = sp;
#endif
    return STVM_OK;
}

int stvm__ctx_prepare(stvm_vm *vm, size_t stack_size, stvm_proc **out)
{
    stvm_stack st;
    int err = stvm__stack_alloc(vm, stack_size, &st);
    if (err)
        return err;
#ifdef STVM_ASAN
    /* A reused stack still carries the poisoned redzones of frames that never
     * returned (a finished or terminated process abandons them). */
    __asan_unpoison_memory_region(st.lo, st.size);
#endif
    stvm_proc *p = (stvm_proc *)(st.lo + st.size - STVM_PROC_AREA);
    memset(p, 0, sizeof *p);
    p->stack_lo = st.lo;
    p->stack_size = st.size - STVM_PROC_AREA;
    p->guard = st.guard;
    if (st.guard == STVM_GUARD_CANARY)
        p->flags |= STVM_PF_CANARY;
    if ((err = first_frame(p, stvm__process_entry, p))) {
        stvm__stack_free(vm, &st);
        return err;
    }
#ifdef STVM_TSAN
    *fiber_word(p) = __tsan_create_fiber(0);
#endif
#ifdef STVM_ASAN
    *fiber_word(p) = NULL;   /* no fake stack until it first switches out */
#endif
    *out = p;
    return STVM_OK;
}

void stvm__ctx_release(stvm_vm *vm, stvm_proc *p)
{
    stvm_stack st = {.lo = p->stack_lo, .size = p->stack_size + STVM_PROC_AREA};
    fiber_release(p);
    stvm__stack_free(vm, &st);
}

#if defined(STVM_CTX_UCONTEXT) || defined(STVM_ASAN) || defined(STVM_TSAN)
#ifndef STVM_CTX_UCONTEXT
void stvm__switch_asm(void **save_sp, void *new_sp);
#endif

void stvm__ctx_switch(stvm_vm *vm, stvm_proc *from, stvm_proc *to)
{
#ifdef STVM_ASAN
    /* The embedding thread's fake stack is the thread's own: kept in a local. */
    void *host_fake = NULL;
    void **fake = from ? fiber_word(from) : &host_fake;
    bool dying = from && (from->flags & STVM_PF_TERMINATED);
    const void *bottom = to ? (const void *)to->stack_lo : vm->host_stack_bottom;
    size_t size = to ? to->stack_size : vm->host_stack_size;
    __sanitizer_start_switch_fiber(dying ? NULL : fake, bottom, size);
#endif
#ifdef STVM_TSAN
    __tsan_switch_to_fiber(to ? *fiber_word(to) : tsan_host_fiber, 0);
#endif
#ifdef STVM_CTX_UCONTEXT
    swapcontext(from ? from->uctx : vm->host_uctx, to ? to->uctx : vm->host_uctx);
#else
    stvm__switch_asm(from ? &from->ctx_sp : &vm->host_sp, to ? to->ctx_sp : vm->host_sp);
#endif
#ifdef STVM_ASAN
    __sanitizer_finish_switch_fiber(*fake, NULL, NULL);
    *fake = NULL;   /* in use again: nothing for stvm__ctx_release to drop */
#endif
}
#endif

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
    vm->host_uctx = stvm__calloc(1, sizeof(ucontext_t));
    if (!vm->host_uctx)
        return STVM_ENOMEM;
#else
    (void)vm;
#endif
    return STVM_OK;
}

#ifdef STVM_CTX_UCONTEXT
#define BACKEND_NAME "ucontext"
#elif defined(__aarch64__)
#define BACKEND_NAME "asm-aarch64"
#else
#define BACKEND_NAME "asm-x86_64"
#endif

const char *stvm_context_backend(void)
{
    return BACKEND_NAME;
}

/* What a debugger needs to know of this build's switch to unwind a switched-out process
 * (vm/debugger.h): on x86-64 the pushes below the return address (rbp, rbx, r12-r15,
 * and the MXCSR/x87 word with STVM_SWITCH_SAVE_FPU); on aarch64 the words of the saved
 * block (switch_aarch64.S, with FPCR's 16-byte slot below it). Kept whatever the
 * optimiser sees: only a debugger reads it. */
#ifdef STVM_SWITCH_SAVE_FPU
#define FPU_WORDS_X86 1
#define FPU_WORDS_A64 2
#else
#define FPU_WORDS_X86 0
#define FPU_WORDS_A64 0
#endif
__attribute__((used)) const stvm_debug_info stvm__debug_info = {
    .version = STVM_DEBUG_VERSION,
#if defined(STVM_CTX_UCONTEXT)
    .switch_words = 0,
#elif defined(__x86_64__)
    .switch_words = 6 + FPU_WORDS_X86,
#else
    .switch_words = 20 + FPU_WORDS_A64,
#endif
    .backend = BACKEND_NAME,
};

void stvm__ctx_vm_destroy(stvm_vm *vm)
{
    free(vm->host_uctx);
    vm->host_uctx = NULL;
}

/* ---- the embedding thread's side of stvm_run ---------------------------------------- */

/* Only AddressSanitizer needs the embedding thread's stack (its fiber annotations), and
 * finding it is costly: on the main thread glibc reads /proc/self/maps, tens of
 * microseconds per stvm_run. */
static void learn_host_stack(stvm_vm *vm)
{
#ifdef STVM_ASAN
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
#else
    (void)vm;
#endif
}

void stvm__ctx_host_enter(stvm_vm *vm)
{
    learn_host_stack(vm);
    /* How late the idle process's sleep may end after the next deadline is the
     * thread's timer slack: the configured one while the VM runs (0 = 1 ns, exact). */
    unsigned long want = vm->cfg.timer_slack_us ? vm->cfg.timer_slack_us * 1000UL : 1UL;
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack > 0 && (unsigned long)slack != want && prctl(PR_SET_TIMERSLACK, want, 0, 0, 0) == 0)
        vm->host_timer_slack = slack;
    stvm__overflow_arm(vm);
#ifdef STVM_TSAN
    tsan_host_fiber = __tsan_get_current_fiber();
#endif
}

void stvm__ctx_host_leave(stvm_vm *vm)
{
#ifdef STVM_TSAN
    tsan_host_fiber = NULL;
#endif
    stvm__overflow_disarm(vm);
    if (vm->host_timer_slack) {
        prctl(PR_SET_TIMERSLACK, (unsigned long)vm->host_timer_slack, 0, 0, 0);
        vm->host_timer_slack = 0;
    }
}

/* ---- raw switch measurement ------------------------------------------------------- */

typedef struct raw_pair {
    stvm_vm vm;                 /* only the fields the switch uses */
    stvm_proc *a;
    uint64_t left;              /* switches still to make */
    unsigned valgrind_id;       /* its stack's, under valgrind (vm/valgrind.h) */
} raw_pair;

#define RAW_STACK ((size_t)64 * 1024)

/* Both sides run this same loop, each on its own stack, so that every switch returns to
 * the call site it was made from, as every switch of the scheduler does (it has one).
 * Two loops, one per side, made every return land where the other side's call had told
 * the processor's return predictor to expect: a misprediction per switch that the
 * scheduler never pays, about a third of the figure. */
static __attribute__((noinline)) void raw_loop(raw_pair *r, stvm_proc *self, stvm_proc *other)
{
    while (r->left) {
        r->left--;
        stvm__ctx_switch(&r->vm, self, other);
    }
}

static void raw_entry(void *arg)
{
    raw_pair *r = arg;
    stvm__ctx_entered(&r->vm);
    raw_loop(r, r->a, NULL);
    for (;;)   /* the last switch was the host's: hand it back, never to return */
        stvm__ctx_switch(&r->vm, r->a, NULL);
}

/* A stack of its own, outside any VM's arenas, with the record at its top. */
static int raw_prepare(raw_pair *r)
{
    unsigned char *m = stvm__mmap(NULL, RAW_STACK, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return STVM_ENOMEM;
    r->a = (stvm_proc *)(m + RAW_STACK - STVM_PROC_AREA);
    r->a->stack_lo = m;
    r->a->stack_size = RAW_STACK - STVM_PROC_AREA;
    int err = stvm__ctx_vm_init(&r->vm);
    if (!err && (err = first_frame(r->a, raw_entry, r)))
        stvm__ctx_vm_destroy(&r->vm);
    if (err)
        munmap(m, RAW_STACK);
    else
        r->valgrind_id = stvm__valgrind_stack_register(m, RAW_STACK);
#ifdef STVM_TSAN
    if (!err)
        *fiber_word(r->a) = __tsan_create_fiber(0);
#endif
    return err;
}

int stvm_measure_raw_switch(uint64_t iterations, double *ns_per_switch)
{
    if (!iterations || iterations > UINT64_MAX / 2 || !ns_per_switch)
        return STVM_EINVAL;
    if (stvm__thread_vm())
        return STVM_EBUSY;   /* it would take over the running VM's thread state */
    raw_pair *r = stvm__calloc(1, sizeof *r);
    if (!r)
        return STVM_ENOMEM;
    int err = raw_prepare(r);
    if (err) {
        free(r);
        return err;
    }
    stvm__ctx_host_enter(&r->vm);
    r->left = 2 * iterations;
    int64_t t0 = stvm__mono_ns();
    raw_loop(r, NULL, r->a);
    int64_t t1 = stvm__mono_ns();
    *ns_per_switch = (double)(t1 - t0) / (double)(2 * iterations);
    stvm__ctx_host_leave(&r->vm);
    fiber_release(r->a);   /* it never finishes: left switched out in raw_entry */
    stvm__valgrind_stack_deregister(r->valgrind_id);
    munmap(r->a->stack_lo, RAW_STACK);
    stvm__ctx_vm_destroy(&r->vm);
    free(r);
    return STVM_OK;
}
