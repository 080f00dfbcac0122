/*
 * How stack overflow is caught, per detection method: guard regions made by
 * MADV_GUARD_INSTALL or by mprotect fault on the first touch; a canary stack is checked
 * when its process switches away. Each overflow is reported by process name before
 * the program aborts. AddressSanitizer reports faults itself, so the overflow tests
 * are left out of the sanitizer build.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(stack_guard, .timeout = 60);

typedef struct dive {
    stvm_vm *vm;
    unsigned depth;            /* frames of about 1 KiB */
    bool yield_at_bottom;      /* switch away while overflowed */
    bool yield_after;          /* switch away after coming back up */
    unsigned sum;
} dive;

static __attribute__((noinline)) unsigned descend(dive *d, unsigned depth)
{
    volatile unsigned char frame[1000];
    for (unsigned i = 0; i < sizeof frame; i++)
        frame[i] = (unsigned char)(i + depth);
    if (depth == 0 && d->yield_at_bottom)
        stvm_yield(d->vm);
    unsigned r = depth ? descend(d, depth - 1) : 0;
    return r + frame[depth % sizeof frame];
}

static void diver(stvm_vm *vm, void *arg)
{
    dive *d = arg;
    d->sum = descend(d, d->depth);
    if (d->yield_after)
        stvm_yield(vm);
}

static stvm_vm *vm_guarded(int method)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.stack_guard_method = method;
    return vm_make(&cfg);
}

static const char *guard_of(stvm_vm *vm)
{
    static dive idle_dive;
    stvm_process *p = NULL;
    cr_assert_eq(stvm_spawn_suspended(vm, 40, "probe", diver, &idle_dive, 0, &p), STVM_OK);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(vm, p, &info), STVM_OK);
    cr_assert_not_null(info.stack_guard);
    cr_assert_eq(stvm_process_terminate(vm, p), STVM_OK);
    cr_assert_eq(stvm_process_release(vm, p), STVM_OK);
    return info.stack_guard;
}

Test(stack_guard, each_method_protects_stacks_as_configured)
{
    stvm_vm *vm = vm_guarded(STVM_GUARD_AUTO);
    const char *automatic = guard_of(vm);
    cr_assert(!strcmp(automatic, "madvise") || !strcmp(automatic, "mprotect"),
              "AUTO gave %s", automatic);
    vm_done(vm);
    vm = vm_guarded(STVM_GUARD_MADVISE);
    cr_assert_str_eq(guard_of(vm), automatic, "MADVISE falls back as AUTO does");
    vm_done(vm);
    vm = vm_guarded(STVM_GUARD_MPROTECT);
    cr_assert_str_eq(guard_of(vm), "mprotect");
    vm_done(vm);
    vm = vm_guarded(STVM_GUARD_CANARY);
    cr_assert_str_eq(guard_of(vm), "canary");
    vm_done(vm);
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.stack_guard = false;
    vm = vm_make(&cfg);
    cr_assert_str_eq(guard_of(vm), "none");
    vm_done(vm);
}

Test(stack_guard, a_dive_that_fits_runs_on_every_method)
{
    int methods[] = {STVM_GUARD_AUTO, STVM_GUARD_MPROTECT, STVM_GUARD_CANARY};
    for (int i = 0; i < 3; i++) {
        stvm_vm *vm = vm_guarded(methods[i]);
        dive d = {.vm = vm, .depth = 8, .yield_at_bottom = true, .yield_after = true};
        cr_assert_eq(stvm_spawn(vm, 40, "fits", diver, &d, NULL), STVM_OK);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_neq(d.sum, 0);
        vm_done(vm);
    }
}

#if !defined(__SANITIZE_ADDRESS__)

typedef struct child_dive {
    int method;
    dive d;
} child_dive;

/* One diver in a VM of its own, in the child process. */
static void dive_in_child(void *arg)
{
    child_dive *c = arg;
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.stack_guard_method = c->method;
    stvm_vm *vm = NULL;
    if (stvm_vm_create(&cfg, &vm) != STVM_OK)
        _exit(3);
    c->d.vm = vm;
    if (stvm_spawn(vm, 40, "diver", diver, &c->d, NULL) != STVM_OK)
        _exit(4);
    stvm_run(vm);
    _exit(5);   /* not reached: the overflow aborts */
}

static void expect_reported(int method, dive d, const char *how)
{
    char err[1024];
    child_dive c = {.method = method, .d = d};
    int status = run_in_child(dive_in_child, &c, err, sizeof err);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "the child ended with status %#x; stderr: %s", status, err);
    cr_assert_not_null(strstr(err, "stack overflow in process 'diver'"), "stderr: %s", err);
    cr_assert_not_null(strstr(err, how), "stderr: %s", err);
}

Test(stack_guard, an_endless_recursion_faults_in_the_guard_region_and_is_named)
{
    stvm_vm *vm = vm_guarded(STVM_GUARD_AUTO);
    bool madvise = !strcmp(guard_of(vm), "madvise");
    vm_done(vm);
    dive d = {.depth = 1u << 20};   /* a gigabyte of frames */
    if (madvise)
        expect_reported(STVM_GUARD_MADVISE, d, "guard region faulted");
    expect_reported(STVM_GUARD_MPROTECT, d, "guard region faulted");
}

Test(stack_guard, a_canary_stack_overflowed_at_a_switch_is_named)
{
    /* 24 frames of about 1 KiB on a 16 KiB stack: 8 KiB into the 64 KiB guard region,
     * which is ordinary memory here; the yield at the bottom is where it is caught. */
    expect_reported(STVM_GUARD_CANARY, (dive){.depth = 24, .yield_at_bottom = true},
                    "canary");
}

Test(stack_guard, a_canary_stack_overflowed_and_unwound_is_named_at_its_next_switch)
{
    expect_reported(STVM_GUARD_CANARY, (dive){.depth = 24, .yield_after = true}, "canary");
}

#endif
