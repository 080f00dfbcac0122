/* Object memory: allocation, release and validation of objects (see vm.h). */
#ifndef STVM_VM_OBJMEM_H
#define STVM_VM_OBJMEM_H

#include "vm.h"

/* Set up / tear down. destroy releases every object still allocated. */
int stvm__objmem_init(stvm_vm *vm);
void stvm__objmem_destroy(stvm_vm *vm);

/* A zeroed object of `size` bytes (header included) with the given class, registered
 * for stvm__objmem_is_object. NULL when out of memory. */
void *stvm__objmem_alloc(stvm_vm *vm, uint32_t class_index, size_t size);
/* Unregister and free an object made by stvm__objmem_alloc. Its name goes with it
 * (vm/names.h), and a trace that records learns that it is gone if it was named or an
 * owner of internal semaphores (vm->trace_members). */
void stvm__objmem_free(stvm_vm *vm, void *obj);

/* Call fn for every object made by stvm__objmem_alloc that is not yet freed (not the
 * cells), in no particular order; fn must not allocate or free objects. */
void stvm__objmem_each(stvm_vm *vm, void (*fn)(stvm_vm *vm, void *obj, void *arg), void *arg);

/* Undoing a failed call completely: a call that allocates and then fails frees what it
 * made and, with these, takes it out of stats.objects_allocated / bytes_allocated too,
 * so that it changes nothing (a refused call must not show in the counters). Valid
 * only when every object allocated since the mark has been freed. */
typedef struct stvm_alloc_mark {
    uint64_t objects, bytes;
} stvm_alloc_mark;

static inline stvm_alloc_mark stvm__alloc_mark(const stvm_vm *vm)
{
    return (stvm_alloc_mark){vm->stats.objects_allocated, vm->stats.bytes_allocated};
}

static inline void stvm__alloc_forget(stvm_vm *vm, stvm_alloc_mark m)
{
    vm->stats.objects_allocated = m.objects;
    vm->stats.bytes_allocated = m.bytes;
}

/* A 16-byte cell of class class_index (header set, the 8 bytes after it
 * uninitialised): boxed integers, floats and external addresses. NULL when out of
 * memory. */
void *stvm__objmem_alloc_cell(stvm_vm *vm, uint32_t class_index);
void stvm__objmem_free_cell(stvm_vm *vm, void *cell);
/* A reserve of cells for one process that has no caller to answer ENOMEM to (the Delay
 * scheduler's timing process, whose boxed timestamps a 31-bit VM makes on every pass):
 * reserved cells stay free for owner alone. Any other allocation that would take one
 * makes a new slab first, and fails if it cannot. reserve: n more cells kept (a new
 * slab made if need be): STVM_OK or STVM_ENOMEM (nothing changed); unreserve gives n
 * back. The owner may take every free cell; the count is its user's to keep right
 * (image-stubs/kernel/delay_scheduler.c says how). */
void stvm__objmem_reserve_for(stvm_vm *vm, const struct stvm_proc *owner);
int stvm__objmem_reserve_slabs(stvm_vm *vm, size_t n);
/* Inline: every Delay handed to the timing process reserves its cells. */
static inline int stvm__objmem_reserve_cells(stvm_vm *vm, size_t n)
{
    stvm_objmem *m = &vm->mem;
    if (m->nfree < m->reserved + n && stvm__objmem_reserve_slabs(vm, n))
        return STVM_ENOMEM;
    m->reserved += n;
    return STVM_OK;
}
static inline void stvm__objmem_unreserve_cells(stvm_vm *vm, size_t n)
{
    stvm_objmem *m = &vm->mem;
    m->reserved = m->reserved > n ? m->reserved - n : 0;
}
/* A boxed-integer cell (uninitialised digits; counted in boxed_allocated), NULL when
 * out of memory. */
stvm_large_int *stvm__objmem_alloc_large(stvm_vm *vm);
static inline void stvm__objmem_free_large(stvm_vm *vm, stvm_large_int *li)
{
    stvm__objmem_free_cell(vm, li);
}

/* Is oop a live object of this VM (registered object or allocated cell)?
 * Safe for any value: it never dereferences an address it does not own. */
bool stvm__objmem_is_object(stvm_vm *vm, stvm_oop oop);

#endif
