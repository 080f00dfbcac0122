/*
 * Every allocation the library makes goes through here: the heap's (malloc, calloc,
 * realloc, aligned_alloc, strdup), the stack arenas' mmap, and the FFI's libffi
 * closures (stvm__fault before ffi_closure_alloc). In the release build each is the C
 * library's own call, inlined: nothing is added.
 *
 * Built with -DSTVM_FAULTS (the sanitizer build, the Makefile's asan variant), each
 * first asks stvm__fault, SQLite's fault injector: a test arms it to fail the Nth
 * allocation from then on (stvm__fault_arm), runs a workload, and learns whether and
 * where it failed (stvm__fault_failed). An injected failure looks like the real one:
 * NULL (MAP_FAILED for mmap) with errno ENOMEM. tests/test_alloc_failure.c runs every
 * workload with N = 1, 2, 3, ... until one completes without a failure.
 *
 * The hook's state is process-wide, the one mutable global of the library, and only in
 * that build: allocations happen before a VM exists (stvm_vm_create's own) and on other
 * OS threads (the FFI's workers, stvm_queue_put_external), and the test must count them
 * all. It is atomic for those threads.
 */
#ifndef STVM_VM_ALLOC_H
#define STVM_VM_ALLOC_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef STVM_FAULTS
/* Count one allocation; true when it is the one to fail (errno is then ENOMEM). */
bool stvm__fault(void);
/* Fail the nth allocation counted from now (1: the next one), once (persist false) or
 * that one and every one after it (persist true); n = 0 disarms. Resets the counts. */
void stvm__fault_arm(unsigned long n, bool persist);
/* Allocations counted since the last arm, and how many of them were failed. */
unsigned long stvm__fault_seen(void);
unsigned long stvm__fault_failed(void);
#else
static inline bool stvm__fault(void)
{
    return false;
}
#endif

static inline void *stvm__malloc(size_t size)
{
    return stvm__fault() ? NULL : malloc(size);
}

static inline void *stvm__calloc(size_t n, size_t size)
{
    return stvm__fault() ? NULL : calloc(n, size);
}

static inline void *stvm__realloc(void *p, size_t size)
{
    return stvm__fault() ? NULL : realloc(p, size);
}

static inline void *stvm__aligned_alloc(size_t align, size_t size)
{
    return stvm__fault() ? NULL : aligned_alloc(align, size);
}

static inline char *stvm__strdup(const char *s)
{
    return stvm__fault() ? NULL : strdup(s);
}

static inline void *stvm__mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return stvm__fault() ? MAP_FAILED : mmap(addr, len, prot, flags, fd, off);
}

#endif
