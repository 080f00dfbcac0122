/*
 * The clock and timer primitives as C calls, for the image side (the Delay scheduler
 * calls them on every timing-loop pass, so they skip the table's argument checks that
 * a caller with trusted arguments does not need). Same semantics as the table rows.
 */
#ifndef STVM_PRIMITIVES_PRIMS_H
#define STVM_PRIMITIVES_PRIMS_H

#include "../vm/vm.h"

/* 135: the millisecond clock as a SmallInteger. Counts a clock read. */
stvm_oop stvm__prim_ms_clock(stvm_vm *vm);
/* 240: UTC microseconds since 1901, immediate or boxed per the VM's SmallInteger
 * width (allocates on 31-bit VMs). Counts a clock read. ENOMEM. */
int stvm__prim_us_clock(stvm_vm *vm, stvm_oop *out);
/* 136: arm the timer for a millisecond-clock tick (sem NULL disarms). Returns 0 or a
 * primitive failure code (tick not a non-negative SmallInteger). */
int stvm__prim_signal_at_ms(stvm_vm *vm, stvm_semaphore *sem, stvm_oop tick);
/* 242: arm the timer for an absolute UTC microsecond time (sem NULL disarms). usecs
 * must be an integer of this VM; 0 or a failure code (negative, beyond 64 bits). */
int stvm__prim_signal_at_us(stvm_vm *vm, stvm_semaphore *sem, stvm_oop usecs);

#endif
