/* The fault injector of alloc.h, in the build made with -DSTVM_FAULTS only. */
#include "alloc.h"

#ifdef STVM_FAULTS
#include <stdatomic.h>
#include <stdio.h>

#include "sanitizers.h"
#ifdef STVM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* Test-only, process-wide (alloc.h says why). fail_at: the count at which to fail (0:
 * never); persist: fail from there on. */
static atomic_ulong seen, failed, fail_at;
static atomic_bool persist_after;

bool stvm__fault(void)
{
    unsigned long at = atomic_load_explicit(&fail_at, memory_order_relaxed);
    if (!at)
        return false;
    unsigned long n = atomic_fetch_add_explicit(&seen, 1, memory_order_relaxed) + 1;
    if (n < at || (n > at && !atomic_load_explicit(&persist_after, memory_order_relaxed)))
        return false;
    atomic_fetch_add_explicit(&failed, 1, memory_order_relaxed);
#ifdef STVM_ASAN
    /* Where the failure was made, for whoever reads a test's log: an allocation the
     * suite found mishandled is found again with STVM_FAULT_BACKTRACE=1. */
    if (getenv("STVM_FAULT_BACKTRACE")) {
        fprintf(stderr, "stvm: allocation %lu failed here:\n", n);
        __sanitizer_print_stack_trace();
    }
#endif
    errno = ENOMEM;
    return true;
}

void stvm__fault_arm(unsigned long n, bool persist)
{
    atomic_store(&fail_at, 0);
    atomic_store(&seen, 0);
    atomic_store(&failed, 0);
    atomic_store(&persist_after, persist);
    atomic_store(&fail_at, n);
}

unsigned long stvm__fault_seen(void)
{
    return atomic_load(&seen);
}

unsigned long stvm__fault_failed(void)
{
    return atomic_load(&failed);
}
#else
/* ISO C wants something in a translation unit. */
typedef int stvm__alloc_unused;
#endif
