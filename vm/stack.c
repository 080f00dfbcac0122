/*
 * Stack memory. Each stack size has its own arenas: one mapping of many slots, a slot
 * being a guard region and the stack above it. A mapping per stack, as before, cost
 * two kernel map entries with its guard page, and a stock kernel's 65,530 entries
 * stopped a VM near 32,000 processes; an arena is one entry however many stacks it
 * holds, and only touched pages are resident (a blocked process: its top page).
 *
 * The guard region of a slot is made when the slot is first handed out, and stays; all
 * slots of an arena have the same kind (a slot that would differ starts a new arena):
 *  - MADVISE: MADV_GUARD_INSTALL (Linux 6.13): the region faults on any touch and
 *    costs no map entry, so every stack gets one;
 *  - MPROTECT: PROT_NONE, which splits the arena (two map entries per guard): only
 *    while the guards fit half of the map budget that was free when first asked;
 *  - CANARY: the region stays ordinary memory that no correct process touches; the
 *    scheduler checks the stack's lowest bytes and the stack pointer instead.
 * Free slots are reused newest first; past WARM_MAX their pages go back to the kernel.
 * Under valgrind each stack is registered with it while a process has it (valgrind.h).
 */
#include "stack.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "grow.h"
#include "valgrind.h"
#include "alloc.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102   /* <linux/mman.h> of Linux 6.13 */
#endif

#define ARENA_BYTES ((size_t)64 << 20)   /* address space per arena (at least one slot) */
#define WARM_MAX 1024                    /* free stacks kept resident per size */
#define CANARY_BYTES 64

void stvm__stackmem_init(stvm_vm *vm)
{
    memset(&vm->stacks, 0, sizeof vm->stacks);
    vm->stacks.guard_size = vm->cfg.stack_guard ? vm->cfg.stack_guard_size : 0;
    vm->stacks.method = vm->cfg.stack_guard_method;
    vm->stacks.mprotect_budget = -1;
    vm->stacks.on_valgrind = stvm__on_valgrind();
}

void stvm__stackmem_destroy(stvm_vm *vm)
{
    stvm_stackmem *m = &vm->stacks;
    for (size_t i = 0; i < m->narenas; i++) {
        stvm_stack_arena *a = m->arenas[i];
        for (uint32_t k = 0; a->valgrind_ids && k < a->used; k++)
            stvm__valgrind_stack_deregister(a->valgrind_ids[k]);   /* still in use */
        munmap(a->base, a->map_bytes);   /* whole arenas: nothing to split */
        free(a->valgrind_ids);
        free(a);
    }
    for (stvm_stack_class *c = m->classes, *next; c; c = next) {
        next = c->next;
        free(c->warm);
        free(c->cold);
        free(c);
    }
    free(m->arenas);
    memset(m, 0, sizeof *m);
}

/* ---- the map budget for PROT_NONE guards ----------------------------------------- */

static long read_long(const char *path)
{
    char buf[32] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static long count_maps(void)
{
    char buf[8192];
    long lines = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    close(fd);
    return lines;
}

/* Guards mprotect may make: each costs two entries, and half of what was free is
 * left to the program and other VMs. 0 when the limit cannot be read. */
static long mprotect_budget(void)
{
    long max = read_long("/proc/sys/vm/max_map_count"), used = count_maps();
    if (max < 0 || used < 0 || used >= max)
        return 0;
    return (max - used) / 4;
}

/* ---- guards ----------------------------------------------------------------------- */

/* Does an installed MADV_GUARD_INSTALL region really fault? A kernel that does not know
 * the advice refuses it (EINVAL), but an emulator may accept it and do nothing:
 * qemu-user (7.2, the aarch64 check's) answers 0 to any advice it does not pass on, and a
 * stack "guarded" so would overflow into its neighbour unseen. So the first install of
 * each stack memory is tested (its answer kept in madvise_ok, with no state outside the
 * VM): a write(2) from the region into a pipe must fail with EFAULT, as the kernel's copy
 * from a guard region does. Four system calls, once per VM. */
static bool guard_really_faults(const unsigned char *region)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0)
        return true;   /* cannot tell: trust the kernel's answer, as before */
    ssize_t n = write(fd[1], region, 1);
    bool faults = n < 0 && errno == EFAULT;
    close(fd[0]);
    close(fd[1]);
    return faults;
}

static uint8_t install_guard(stvm_stackmem *m, unsigned char *slot)
{
    if (!m->guard_size)
        return 0;
    if (m->method != STVM_GUARD_CANARY && m->method != STVM_GUARD_MPROTECT &&
        m->madvise_ok >= 0) {
        if (madvise(slot, m->guard_size, MADV_GUARD_INSTALL) == 0) {
            if (m->madvise_ok || guard_really_faults(slot)) {
                m->madvise_ok = 1;
                return STVM_GUARD_MADVISE;
            }
            m->madvise_ok = -1;   /* accepted but not made (an emulator): as below */
        } else if (errno == EINVAL) {
            m->madvise_ok = -1;   /* the kernel does not know it: never ask again */
        }
    }
    if (m->method != STVM_GUARD_CANARY) {
        if (m->mprotect_budget < 0)
            m->mprotect_budget = mprotect_budget();
        if (m->mprotect_budget > 0 && mprotect(slot, m->guard_size, PROT_NONE) == 0) {
            m->mprotect_budget--;
            return STVM_GUARD_MPROTECT;
        }
        m->mprotect_budget = 0;
    }
    return STVM_GUARD_CANARY;
}

/* ---- arenas ------------------------------------------------------------------------ */

static stvm_stack_arena *arena_new(stvm_stackmem *m, size_t slot_size)
{
    if (m->narenas == m->cap_arenas) {
        size_t ncap = m->cap_arenas ? m->cap_arenas * 2 : 16;
        stvm_stack_arena **na = stvm__realloc(m->arenas, ncap * sizeof *na);
        if (!na)
            return NULL;
        m->arenas = na;
        m->cap_arenas = ncap;
    }
    size_t n = ARENA_BYTES / slot_size ? ARENA_BYTES / slot_size : 1;
    stvm_stack_arena *a = stvm__calloc(1, sizeof *a);
    unsigned *ids = m->on_valgrind ? stvm__calloc(n, sizeof *ids) : NULL;
    void *base = a && (ids || !m->on_valgrind)
                     ? stvm__mmap(NULL, n * slot_size, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0)
                     : MAP_FAILED;
    if (base == MAP_FAILED) {
        free(ids);
        free(a);
        return NULL;
    }
    *a = (stvm_stack_arena){.base = base, .map_bytes = n * slot_size, .slot_size = slot_size,
                            .nslots = (uint32_t)n, .valgrind_ids = ids};
    size_t i = m->narenas++;   /* keep the array sorted by base */
    while (i > 0 && m->arenas[i - 1]->base > a->base) {
        m->arenas[i] = m->arenas[i - 1];
        i--;
    }
    m->arenas[i] = a;
    return a;
}

static const stvm_stack_arena *arena_of(const stvm_stackmem *m, uintptr_t addr)
{
    size_t lo = 0, hi = m->narenas;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const stvm_stack_arena *a = m->arenas[mid];
        uintptr_t base = (uintptr_t)a->base;
        if (addr < base)
            hi = mid;
        else if (addr >= base + a->slot_size * a->nslots)
            lo = mid + 1;
        else
            return a;
    }
    return NULL;
}

static stvm_stack_class *class_of(stvm_stackmem *m, size_t size)
{
    for (stvm_stack_class *c = m->classes; c; c = c->next)
        if (c->stack_size == size)
            return c;
    stvm_stack_class *c = stvm__calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->stack_size = size;
    c->slot_size = size + m->guard_size;
    c->next = m->classes;
    m->classes = c;
    return c;
}

/* ---- handing out and taking back ---------------------------------------------------- */

/* valgrind's id of a slot's stack, kept with the slot from hand-out to give-back. */
static unsigned *valgrind_id(const stvm_stack_arena *a, const unsigned char *slot)
{
    return &a->valgrind_ids[(size_t)(slot - a->base) / a->slot_size];
}

static void describe(const stvm_stackmem *m, unsigned char *slot, const stvm_stack_arena *a,
                     size_t size, stvm_stack *out)
{
    *out = (stvm_stack){.lo = slot + m->guard_size, .size = size, .guard = a->guard};
}

/* A slot never used before, its guard made. */
static unsigned char *fresh_slot(stvm_stackmem *m, stvm_stack_class *c, stvm_stack_arena **out)
{
    for (;;) {
        stvm_stack_arena *a = c->current;
        if (!a || a->used == a->nslots) {
            if (!(a = arena_new(m, c->slot_size)))
                return NULL;
            c->current = a;
        }
        unsigned char *slot = a->base + (size_t)a->used * a->slot_size;
        uint8_t kind = install_guard(m, slot);
        if (a->used == 0 || kind == a->guard) {
            a->guard = kind;
            a->used++;
            *out = a;
            return slot;
        }
        a->nslots = a->used;   /* its other slots stay unused: the next arena has this kind */
    }
}

static bool push(unsigned char ***list, size_t *n, size_t *cap, unsigned char *slot)
{
    void *items = *list;
    if (!stvm__grow(&items, cap, *n + 1, sizeof **list, 64))
        return false;
    *list = items;
    (*list)[(*n)++] = slot;
    return true;
}

int stvm__stack_alloc(stvm_vm *vm, size_t size, stvm_stack *out)
{
    stvm_stackmem *m = &vm->stacks;
    stvm_stack_class *c = class_of(m, size);
    if (!c)
        return STVM_ENOMEM;
    unsigned char *slot = c->nwarm ? c->warm[--c->nwarm] : c->ncold ? c->cold[--c->ncold] : NULL;
    const stvm_stack_arena *a = slot ? arena_of(m, (uintptr_t)slot) : NULL;
    if (!slot) {
        stvm_stack_arena *fresh;
        if (!(slot = fresh_slot(m, c, &fresh)))
            return STVM_ENOMEM;
        a = fresh;
    }
    describe(m, slot, a, size, out);
    if (m->on_valgrind)
        *valgrind_id(a, slot) = stvm__valgrind_stack_register(out->lo, out->size);
    return STVM_OK;
}

void stvm__stack_free(stvm_vm *vm, const stvm_stack *s)
{
    stvm_stackmem *m = &vm->stacks;
    stvm_stack_class *c = class_of(m, s->size);   /* exists: s came from it */
    unsigned char *slot = s->lo - m->guard_size;
    if (m->on_valgrind) {
        unsigned *id = valgrind_id(arena_of(m, (uintptr_t)slot), slot);
        stvm__valgrind_stack_deregister(*id);
        *id = 0;
    }
    if (c->nwarm < WARM_MAX && push(&c->warm, &c->nwarm, &c->cap_warm, slot))
        return;
    /* The pages go back; the slot, its guard and its address space stay ours. If even
     * the list cannot grow, the slot stays out of use until the arena goes. */
    madvise(s->lo, s->size, MADV_DONTNEED);
    push(&c->cold, &c->ncold, &c->cap_cold, slot);
}

bool stvm__stack_find(const stvm_vm *vm, uintptr_t addr, stvm_stack *out, bool *in_guard)
{
    const stvm_stackmem *m = &vm->stacks;
    const stvm_stack_arena *a = arena_of(m, addr);
    if (!a)
        return false;
    size_t idx = (addr - (uintptr_t)a->base) / a->slot_size;
    if (idx >= a->used)
        return false;
    describe(m, a->base + idx * a->slot_size, a, a->slot_size - m->guard_size, out);
    *in_guard = addr < (uintptr_t)out->lo;
    return true;
}

/* Plain loads: the bytes may lie where AddressSanitizer once poisoned a frame. */
__attribute__((no_sanitize("address"))) bool stvm__stack_canary_ok(const unsigned char *lo,
                                                                   const void *sp)
{
    if ((const unsigned char *)sp < lo + CANARY_BYTES)
        return false;
    const volatile uint64_t *w = (const volatile uint64_t *)lo;
    uint64_t any = 0;
    for (int i = 0; i < CANARY_BYTES / 8; i++)
        any |= w[i];
    return any == 0;
}
