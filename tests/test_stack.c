/*
 * Process stacks: a recursion that fits runs to the end; one that overflows a small
 * stack hits the guard region and is reported as a stack overflow (abort), naming the
 * process. AddressSanitizer takes over SIGSEGV, so the overflow tests are left out of
 * the sanitizer build.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(stack, .timeout = 30);

/* Each frame holds a volatile array, so neither the frames nor the recursion can be
 * optimised away; the sum after the call keeps it from being a tail call. */
static __attribute__((noinline)) unsigned recurse(unsigned depth, unsigned seed)
{
    volatile unsigned char buf[256];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(seed + i * 7u + depth);
    unsigned r = depth ? recurse(depth - 1, seed * 31u + 7u) : 0u;
    return r + buf[depth % sizeof buf] + buf[seed % sizeof buf];
}

typedef struct deep {
    unsigned depth, result;
    int finished;
} deep;

static void deep_body(stvm_vm *vm, void *arg)
{
    (void)vm;
    deep *d = arg;
    d->result = recurse(d->depth, 12345u);
    d->finished = 1;
}

Test(stack, a_deep_recursion_that_fits_in_a_256k_stack_runs_to_the_end)
{
    stvm_vm *vm = vm_make(NULL);
    deep d = {.depth = 300};   /* ~90 KiB of frames */
    cr_assert_eq(stvm_spawn_sized(vm, 40, "deep", deep_body, &d, 256 * 1024, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(d.finished, 1);
    cr_assert_eq(d.result, recurse(300, 12345u), "same answer as on the host stack");
    vm_done(vm);
}

Test(stack, a_moderate_recursion_fits_in_the_default_stack)
{
    stvm_vm *vm = vm_make(NULL);
    deep d = {.depth = 20};   /* a few KiB of 16 */
    cr_assert_eq(stvm_spawn(vm, 40, "moderate", deep_body, &d, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(d.finished, 1);
    cr_assert_eq(d.result, recurse(20, 12345u));
    vm_done(vm);
}

/* Stacks are reused from a cache: a process that used its stack deeply, then many
 * short ones, then a deep one again, all on recycled mappings. */
Test(stack, recycled_stacks_serve_deep_and_shallow_processes_alike)
{
    stvm_vm *vm = vm_make(NULL);
    static deep d[64];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 64; i++) {
            d[i] = (deep){.depth = (unsigned)(i % 2 ? 2 : 30)};
            cr_assert_eq(stvm_spawn(vm, 40, "recycled", deep_body, &d[i], NULL), STVM_OK);
        }
        cr_assert_eq(stvm_run(vm), STVM_OK);
        for (int i = 0; i < 64; i++) {
            cr_assert_eq(d[i].finished, 1);
            cr_assert_eq(d[i].result, recurse(d[i].depth, 12345u));
        }
    }
    vm_done(vm);
}

Test(stack, processes_run_on_unguarded_stacks_when_stack_guard_is_off)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.stack_guard = false;
    cfg.stack_size = 64 * 1024;
    stvm_vm *vm = vm_make(&cfg);
    static deep d[8];
    for (int i = 0; i < 8; i++) {
        d[i] = (deep){.depth = 100};   /* ~30 KiB of 64 */
        cr_assert_eq(stvm_spawn(vm, 40, "unguarded", deep_body, &d[i], NULL), STVM_OK);
    }
    cr_assert_eq(stvm_run(vm), STVM_OK);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(d[i].result, recurse(100, 12345u));
    vm_done(vm);
}

#if !defined(__SANITIZE_ADDRESS__)

static void run_overflowing_vm(void *arg)
{
    (void)arg;
    stvm_vm *vm = NULL;
    if (stvm_vm_create(NULL, &vm) != STVM_OK)
        _exit(3);
    static deep d = {.depth = 100000};   /* ~30 MiB of frames */
    if (stvm_spawn_sized(vm, 40, "deep", deep_body, &d, 16 * 1024, NULL) != STVM_OK)
        _exit(4);
    stvm_run(vm);
    _exit(5);   /* not reached: the overflow aborts */
}

Test(stack, recursing_past_a_16k_stack_aborts_as_a_stack_overflow, .signal = SIGABRT)
{
    run_overflowing_vm(NULL);
}

Test(stack, the_overflow_report_names_the_process)
{
    char buf[1024];
    int status = run_in_child(run_overflowing_vm, NULL, buf, sizeof buf);
    cr_assert(WIFSIGNALED(status), "the child exited with %d instead of a signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    cr_assert_eq(WTERMSIG(status), SIGABRT, "killed by signal %d", WTERMSIG(status));
    cr_assert_not_null(strstr(buf, "stack overflow in process 'deep'"), "stderr: %s", buf);
    cr_assert_not_null(strstr(buf, "stack size"), "stderr: %s", buf);
}

#endif
