/*
 * Where scheduled Delays wait for their time: a 4-ary heap of entries keyed by
 * (resumption time, scheduling number), and the set of numbers of cancelled entries
 * that lets a Delay be cancelled without the heap ever writing into it (delay.h says
 * why).
 */
#include <stdlib.h>
#include <string.h>

#include "delay.h"
#include "../../vm/alloc.h"

/* ---- the dead set ---------------------------------------------------------------- */

/* Numbers of cancelled entries still in the heap: open addressing with linear probing
 * (0 marks a free slot: numbers start at 1), at most half full. It is looked at only
 * while it is not empty, so the usual Delay's life never touches it. (A table indexed
 * by a ticket per scheduled Delay did the same job before; writing its slot at every
 * scheduling and expiry cost two cache misses per delay at N = 100,000.) */

static size_t dead_slot(uint64_t seq, size_t cap)
{
    return (size_t)(seq * 0x9E3779B97F4A7C15u >> 7) & (cap - 1);   /* Fibonacci hashing */
}

static bool dead_has(const delay_sched *ds, uint64_t seq)
{
    for (size_t i = dead_slot(seq, ds->dead_cap);; i = (i + 1) & (ds->dead_cap - 1)) {
        if (ds->dead_seqs[i] == seq)
            return true;
        if (ds->dead_seqs[i] == 0)
            return false;
    }
}

static void dead_put(uint64_t *set, size_t cap, uint64_t seq)
{
    size_t i = dead_slot(seq, cap);
    while (set[i])
        i = (i + 1) & (cap - 1);
    set[i] = seq;
}

/* Room for one more number (false: no memory, nothing changed). */
static bool dead_reserve(delay_sched *ds)
{
    if (ds->dead + 1 <= ds->dead_cap / 2)
        return true;
    size_t ncap = ds->dead_cap ? ds->dead_cap * 2 : 128;
    uint64_t *n = stvm__calloc(ncap, sizeof *n);
    if (!n)
        return false;
    for (size_t i = 0; i < ds->dead_cap; i++)
        if (ds->dead_seqs[i])
            dead_put(n, ncap, ds->dead_seqs[i]);
    free(ds->dead_seqs);
    ds->dead_seqs = n;
    ds->dead_cap = ncap;
    return true;
}

/* Take seq out of the set: the entries after it in its run move back, so that no
 * probe sequence is broken (no tombstones). */
static void dead_remove(delay_sched *ds, uint64_t seq)
{
    size_t mask = ds->dead_cap - 1, i = dead_slot(seq, ds->dead_cap);
    while (ds->dead_seqs[i] != seq)
        i = (i + 1) & mask;
    for (size_t j = (i + 1) & mask; ds->dead_seqs[j]; j = (j + 1) & mask) {
        size_t home = dead_slot(ds->dead_seqs[j], ds->dead_cap);
        /* j's entry may fill the hole at i unless its home lies cyclically in (i, j]. */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            ds->dead_seqs[i] = ds->dead_seqs[j];
            i = j;
        }
    }
    ds->dead_seqs[i] = 0;
}

/* ---- the heap ------------------------------------------------------------------ */

/* A 4-ary heap: half the depth of a binary one. With 75,000 sleepers it cost 10-20%
 * less CPU per delay than arity 2 or 8 in the DelayBenchmark (same instruction count as
 * binary). Push climbs O(1) levels on average for random keys; pop walks the full
 * depth, O(log4 n), reading every child on the way: the deep levels are cache misses.
 *
 * The children of node i are 4i+1 .. 4i+4, 96 bytes at byte 96i + 24 from the array's
 * start. The array starts 8 bytes past a multiple of 32, so every group of children
 * starts on a 0 or 32 offset within a cache line and fills exactly two lines (at 16
 * bytes past one, as malloc placed the old 32-byte entries, four children spanned three
 * lines). */
#define ARITY 4
#define HEAP_OFFSET 8
_Static_assert(sizeof(heap_entry) == 24, "four children in two cache lines");

static bool heap_reserve(delay_sched *ds, size_t need)
{
    if (need <= ds->cap)
        return true;
    size_t ncap = ds->cap ? ds->cap * 2 : 256;
    if (ncap > (SIZE_MAX - 64) / sizeof(heap_entry))
        return false;
    size_t bytes = (ncap * sizeof(heap_entry) + HEAP_OFFSET + 63) & ~(size_t)63;
    unsigned char *mem = stvm__aligned_alloc(64, bytes);
    if (!mem)
        return false;
    heap_entry *h = (heap_entry *)(mem + HEAP_OFFSET);
    if (ds->count)
        memcpy(h, ds->heap, ds->count * sizeof *h);
    free(ds->heap_mem);
    ds->heap_mem = mem;
    ds->heap = h;
    ds->cap = ncap;
    return true;
}

static void heap_up(stvm_vm *vm, delay_sched *ds, size_t i)
{
    heap_entry e = ds->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / ARITY;
        if (!stvm__delay_before(vm, &e, &ds->heap[parent]))
            break;
        ds->heap[i] = ds->heap[parent];
        i = parent;
    }
    ds->heap[i] = e;
}

static void heap_down(stvm_vm *vm, delay_sched *ds, size_t i)
{
    heap_entry e = ds->heap[i];
    for (;;) {
        size_t first = ARITY * i + 1, best = i;
        const heap_entry *bestp = &e;
        for (size_t c = first; c < first + ARITY && c < ds->count; c++) {
            if (stvm__delay_before(vm, &ds->heap[c], bestp)) {
                best = c;
                bestp = &ds->heap[c];
            }
        }
        if (best == i)
            break;
        ds->heap[i] = ds->heap[best];
        i = best;
    }
    ds->heap[i] = e;
}

bool stvm__delay_heap_room(delay_sched *ds, size_t need)
{
    return heap_reserve(ds, need);
}

bool stvm__delay_heap_push(stvm_vm *vm, delay_sched *ds, heap_entry e)
{
    if (!heap_reserve(ds, ds->count + 1))
        return false;
    ds->heap[ds->count++] = e;
    heap_up(vm, ds, ds->count - 1);
    return true;
}

/* Remove the top. The hole left at the root travels down along the smallest children
 * to a leaf, then the last entry moves into it and climbs: the last entry is usually
 * among the largest, so this saves the comparison against it at every level. */
static heap_entry heap_pop_raw(stvm_vm *vm, delay_sched *ds)
{
    heap_entry top = ds->heap[0];
    size_t n = --ds->count, hole = 0;
    if (n == 0)
        return top;
    heap_entry *h = ds->heap;
    for (;;) {
        size_t first = ARITY * hole + 1, best;
        if (first + ARITY <= n) {
            /* All four children (every level but the last): a tournament, whose two
             * first rounds do not wait for each other and need no bounds checks. */
            size_t a = first + stvm__delay_before(vm, &h[first + 1], &h[first]);
            size_t b = first + 2 + stvm__delay_before(vm, &h[first + 3], &h[first + 2]);
            best = stvm__delay_before(vm, &h[b], &h[a]) ? b : a;
        } else if (first < n) {
            best = first;
            for (size_t c = first + 1; c < n; c++)
                if (stvm__delay_before(vm, &h[c], &h[best]))
                    best = c;
        } else {
            break;
        }
        h[hole] = h[best];
        hole = best;
    }
    ds->heap[hole] = ds->heap[n];
    heap_up(vm, ds, hole);
    return top;
}

void stvm__delay_discard(stvm_vm *vm, heap_entry e)
{
    stvm__int_release(vm, e.key);
}

bool stvm__delay_heap_pop(stvm_vm *vm, delay_sched *ds, heap_entry *out)
{
    while (ds->count) {
        heap_entry e = heap_pop_raw(vm, ds);
        /* With nothing cancelled (the common case) the dead set stays untouched. */
        if (ds->dead == 0 || !dead_has(ds, e.seq)) {
            *out = e;
            return true;
        }
        dead_remove(ds, e.seq);
        ds->dead--;
        stvm__delay_discard(vm, e);
    }
    return false;
}

/* Rebuild the heap without its cancelled entries: those of the dead set, and extra
 * (0: none), one whose number the set had no room for. */
static void heap_compact(stvm_vm *vm, delay_sched *ds, uint64_t extra)
{
    size_t j = 0;
    for (size_t i = 0; i < ds->count; i++) {
        heap_entry e = ds->heap[i];
        if (e.seq == extra || (ds->dead && dead_has(ds, e.seq)))
            stvm__delay_discard(vm, e);
        else
            ds->heap[j++] = e;
    }
    ds->count = j;
    ds->dead = 0;
    if (ds->dead_cap)
        memset(ds->dead_seqs, 0, ds->dead_cap * sizeof *ds->dead_seqs);
    for (size_t i = j / ARITY + 1; i-- > 0;)
        if (i < j)
            heap_down(vm, ds, i);
}

void stvm__delay_cancel_in_heap(stvm_vm *vm, delay_sched *ds, const delay *d)
{
    if (!dead_reserve(ds)) {
        heap_compact(vm, ds, d->seq);   /* no memory for the set: drop it now instead */
        return;
    }
    dead_put(ds->dead_seqs, ds->dead_cap, d->seq);
    if (++ds->dead > ds->count / 2 + 64)
        heap_compact(vm, ds, 0);
}

void stvm__delay_heap_destroy(delay_sched *ds)
{
    free(ds->heap_mem);
    free(ds->dead_seqs);
}
