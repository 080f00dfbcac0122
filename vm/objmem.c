/*
 * Object memory. stvm has no garbage collector: the code that makes an object releases
 * it. What the memory does keep is an exact account (allocations, bytes, live objects)
 * and the ability to release everything at stvm_vm_free, so no test leaks.
 */
#include "objmem.h"

#include "names.h"
#include "stack.h"
#include "trace.h"
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

#define SLAB_CELLS 4096
#define SET_EMPTY ((uintptr_t)0)
#define SET_TOMB ((uintptr_t)1)

static size_t set_hash(uintptr_t a, size_t cap)
{
    /* Objects are 64-byte aligned; mix the high bits down (Fibonacci hash). */
    return (size_t)(((a >> 6) * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

/* A socket's primitives validate its handle, its buffer and its semaphores again and
 * again: a hit here saves the search. */
static size_t recent_slot(uintptr_t a)
{
    return ((a >> 6) ^ (a >> 11)) & 31;
}

static bool set_grow(stvm_objmem *m)
{
    size_t ncap = m->set_cap ? m->set_cap * 2 : 256;
    if (m->set_used * 2 < m->set_cap)   /* mostly tombstones: rehash at the same size */
        ncap = m->set_cap;
    uintptr_t *n = stvm__calloc(ncap, sizeof *n);
    if (!n)
        return false;
    for (size_t i = 0; i < m->set_cap; i++) {
        uintptr_t a = m->set[i];
        if (a == SET_EMPTY || a == SET_TOMB)
            continue;
        size_t j = set_hash(a, ncap);
        while (n[j] != SET_EMPTY)
            j = (j + 1) & (ncap - 1);
        n[j] = a;
    }
    free(m->set);
    m->set = n;
    m->set_cap = ncap;
    m->set_tombs = 0;
    return true;
}

static bool set_insert(stvm_objmem *m, uintptr_t a)
{
    if ((m->set_used + m->set_tombs + 1) * 4 > m->set_cap * 3 && !set_grow(m))
        return false;
    size_t j = set_hash(a, m->set_cap);
    while (m->set[j] != SET_EMPTY && m->set[j] != SET_TOMB)
        j = (j + 1) & (m->set_cap - 1);
    if (m->set[j] == SET_TOMB)
        m->set_tombs--;
    m->set[j] = a;
    m->set_used++;
    return true;
}

static size_t set_find(const stvm_objmem *m, uintptr_t a)
{
    if (!m->set_cap)
        return (size_t)-1;
    size_t j = set_hash(a, m->set_cap);
    for (size_t n = 0; n < m->set_cap; n++) {
        if (m->set[j] == SET_EMPTY)
            return (size_t)-1;
        if (m->set[j] == a)
            return j;
        j = (j + 1) & (m->set_cap - 1);
    }
    return (size_t)-1;
}

int stvm__objmem_init(stvm_vm *vm)
{
    memset(&vm->mem, 0, sizeof vm->mem);
    return set_grow(&vm->mem) ? STVM_OK : STVM_ENOMEM;
}

void stvm__objmem_destroy(stvm_vm *vm)
{
    stvm_objmem *m = &vm->mem;
    for (size_t i = 0; i < m->set_cap; i++) {
        uintptr_t a = m->set[i];
        if (a != SET_EMPTY && a != SET_TOMB)
            free((void *)a);
    }
    free(m->set);
    for (stvm_slab *s = m->slabs, *next; s; s = next) {
        next = s->next;
        free(s->cells);
        free(s);
    }
    memset(m, 0, sizeof *m);
}

static void count_alloc(stvm_vm *vm, size_t bytes)
{
    vm->stats.objects_allocated++;
    vm->stats.bytes_allocated += bytes;
    vm->stats.objects_live++;
    vm->stats.bytes_live += bytes;
}

static void count_free(stvm_vm *vm, size_t bytes)
{
    vm->stats.objects_live--;
    vm->stats.bytes_live -= bytes;
}

void *stvm__objmem_alloc(stvm_vm *vm, uint32_t class_index, size_t size)
{
    /* 64-byte aligned: a process's scheduling fields then share one cache line. */
    stvm_object *o = stvm__aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (!o)
        return NULL;
    memset(o, 0, size);
    if (!set_insert(&vm->mem, (uintptr_t)o)) {
        free(o);
        return NULL;
    }
    o->class_index = class_index;
    o->byte_size = (uint32_t)(size - sizeof(stvm_object));
    count_alloc(vm, size);
    return o;
}

void stvm__objmem_free(stvm_vm *vm, void *obj)
{
    if (!obj)
        return;
    stvm_objmem *m = &vm->mem;
    size_t j = set_find(m, (uintptr_t)obj);
    if (j == (size_t)-1)
        return;
    m->set[j] = SET_TOMB;
    m->set_used--;
    if (m->recent[recent_slot((uintptr_t)obj)] == (uintptr_t)obj)
        m->recent[recent_slot((uintptr_t)obj)] = 0;
    m->set_tombs++;
    stvm_object *o = obj;
    if (vm->names.used || vm->trace) {   /* one test while nothing is named or traced */
        bool named = stvm__name_forget(vm, obj);
        if (vm->trace && (named || (o->class_index < STVM_CLASS_COUNT &&
                                    vm->trace_members[o->class_index])))
            stvm__trace_object_gone(vm, obj);
    }
    count_free(vm, o->byte_size + sizeof(stvm_object));
    o->class_index = STVM_CLASS_FREE;
    free(obj);
}

void stvm__objmem_each(stvm_vm *vm, void (*fn)(stvm_vm *vm, void *obj, void *arg), void *arg)
{
    stvm_objmem *m = &vm->mem;
    for (size_t i = 0; i < m->set_cap; i++)
        if (m->set[i] != SET_EMPTY && m->set[i] != SET_TOMB)
            fn(vm, (void *)m->set[i], arg);
}

static bool add_slab(stvm_objmem *m)
{
    stvm_slab *s = stvm__malloc(sizeof *s);
    stvm_large_int *cells = s ? stvm__aligned_alloc(16, SLAB_CELLS * sizeof *cells) : NULL;
    if (!cells) {
        free(s);
        return false;
    }
    s->cells = cells;
    s->count = SLAB_CELLS;
    s->next = m->slabs;
    m->slabs = s;
    /* Thread the new cells onto the free list, lowest address first. */
    for (size_t i = SLAB_CELLS; i-- > 0;) {
        cells[i].hdr.class_index = STVM_CLASS_FREE;
        memcpy(cells[i].digits, &m->free_cells, sizeof m->free_cells);
        m->free_cells = &cells[i];
    }
    m->nfree += SLAB_CELLS;
    return true;
}

void *stvm__objmem_alloc_cell(stvm_vm *vm, uint32_t class_index)
{
    stvm_objmem *m = &vm->mem;
    bool owner = m->reserve_for && vm->active == m->reserve_for;
    if (owner ? !m->nfree : m->nfree <= m->reserved) {
        if (!add_slab(m))
            return NULL;
    }
    stvm_large_int *cell = m->free_cells;
    memcpy(&m->free_cells, cell->digits, sizeof m->free_cells);
    m->nfree--;
    cell->hdr.class_index = class_index;
    count_alloc(vm, sizeof *cell);
    return cell;
}

void stvm__objmem_reserve_for(stvm_vm *vm, const struct stvm_proc *owner)
{
    vm->mem.reserve_for = owner;
}

/* The slabs a reserve of n more cells needs (stvm__objmem_reserve_cells' slow path). */
int stvm__objmem_reserve_slabs(stvm_vm *vm, size_t n)
{
    stvm_objmem *m = &vm->mem;
    while (m->nfree < m->reserved + n)
        if (!add_slab(m))
            return STVM_ENOMEM;
    return STVM_OK;
}

stvm_large_int *stvm__objmem_alloc_large(stvm_vm *vm)
{
    /* The class (positive or negative) is the caller's to set with the digits. */
    stvm_large_int *li = stvm__objmem_alloc_cell(vm, STVM_CLASS_LARGE_POSITIVE_INTEGER);
    if (li)
        vm->stats.boxed_allocated++;
    return li;
}

void stvm__objmem_free_cell(stvm_vm *vm, void *cell)
{
    stvm_objmem *m = &vm->mem;
    stvm_large_int *c = cell;
    c->hdr.class_index = STVM_CLASS_FREE;
    memcpy(c->digits, &m->free_cells, sizeof m->free_cells);
    m->free_cells = c;
    m->nfree++;
    count_free(vm, sizeof *c);
}

bool stvm__objmem_is_object(stvm_vm *vm, stvm_oop oop)
{
    if (oop == STVM_NIL || (oop & 15))
        return false;
    uintptr_t *recent = &vm->mem.recent[recent_slot(oop)];
    if (*recent == oop)
        return true;
    for (stvm_slab *s = vm->mem.slabs; s; s = s->next) {
        uintptr_t lo = (uintptr_t)s->cells, hi = lo + s->count * sizeof(stvm_large_int);
        if (oop >= lo && oop < hi)
            return (oop - lo) % sizeof(stvm_large_int) == 0 &&
                   ((stvm_large_int *)oop)->hdr.class_index != STVM_CLASS_FREE;
    }
    if (set_find(&vm->mem, oop) != (size_t)-1) {
        *recent = oop;
        return true;
    }
    /* The handle of a process nobody holds lives at a fixed place in its stack. */
    stvm_stack st;
    bool in_guard;
    return stvm__stack_find(vm, oop, &st, &in_guard) && !in_guard &&
           oop == (uintptr_t)(st.lo + st.size - STVM_PROC_AREA + STVM_PROC_HANDLE_OFFSET) &&
           ((const stvm_object *)oop)->class_index == STVM_CLASS_PROCESS;
}
