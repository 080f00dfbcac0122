/*
 * Shared helpers for the Criterion suites. Every test that makes a VM ends with
 * vm_done(vm), which checks the scheduler's invariants and frees the VM, so that a
 * broken list, bitmap or count fails the test that caused it.
 */
#ifndef STVM_TESTS_HELPERS_H
#define STVM_TESTS_HELPERS_H

#include <criterion/criterion.h>
#include <stvm.h>

static inline stvm_vm *vm_make(const stvm_config *cfg)
{
    stvm_vm *vm = NULL;
    int err = stvm_vm_new(&vm, cfg);
    cr_assert_eq(err, STVM_OK, "stvm_vm_new: %s", stvm_strerror(err));
    return vm;
}

/* A VM on the simulated clock (deterministic time; no wall-clock sleeps). */
static inline stvm_vm *vm_make_sim(int smallint_bits, int delay_clock)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.smallint_bits = smallint_bits;
    cfg.delay_clock = delay_clock;
    return vm_make(&cfg);
}

static inline void vm_check(stvm_vm *vm)
{
    char why[256];
    int err = stvm_check_invariants(vm, why, sizeof why);
    cr_assert_eq(err, STVM_OK, "invariant broken: %s", why);
}

static inline void vm_done(stvm_vm *vm)
{
    vm_check(vm);
    stvm_vm_free(vm);
}

/* An ordered log of small integers, for asserting who ran when. */
typedef struct trace_log {
    int n;
    int ev[512];
} trace_log;

static inline void trace_add(trace_log *t, int v)
{
    if (t->n < (int)(sizeof t->ev / sizeof t->ev[0]))
        t->ev[t->n++] = v;
}

static inline void trace_expect(const trace_log *t, const int *want, int n)
{
    cr_assert_eq(t->n, n, "trace has %d events, expected %d", t->n, n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(t->ev[i], want[i], "event %d is %d, expected %d", i, t->ev[i], want[i]);
}

#endif
