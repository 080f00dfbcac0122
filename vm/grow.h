/*
 * Growing an array by doubling, written once: the stack free lists, the Delay heap and
 * the announcer's subscriptions all need room for one more element.
 */
#ifndef STVM_VM_GROW_H
#define STVM_VM_GROW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "alloc.h"

/* Makes *items (capacity *cap elements of elem bytes) hold at least need elements,
 * doubling from first. On failure (no memory, or a size beyond size_t) answers false
 * and changes nothing; elements past the old capacity are uninitialised. */
static inline bool stvm__grow(void **items, size_t *cap, size_t need, size_t elem,
                              size_t first)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap : first;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return false;
        ncap *= 2;
    }
    if (ncap > SIZE_MAX / elem)
        return false;
    void *n = stvm__realloc(*items, ncap * elem);
    if (!n)
        return false;
    *items = n;
    *cap = ncap;
    return true;
}

#endif
