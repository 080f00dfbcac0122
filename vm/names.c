/* The table of object names (names.h): open addressing by address, a malloc'd copy of
 * each name, so that a pointer handed out (stvm_process_info.wait_name) stays put when
 * the table grows. */
#include "names.h"

#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "alloc.h"

#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1)

static size_t slot_hash(uintptr_t a, size_t cap)
{
    return (size_t)(((a >> 4) * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

/* The slot of obj, or (size_t)-1. */
static size_t find(const stvm_names *t, uintptr_t a)
{
    if (!t->used)
        return (size_t)-1;
    size_t j = slot_hash(a, t->cap);
    for (size_t n = 0; n < t->cap; n++, j = (j + 1) & (t->cap - 1)) {
        if (t->keys[j] == EMPTY)
            return (size_t)-1;
        if (t->keys[j] == a)
            return j;
    }
    return (size_t)-1;
}

static bool grow(stvm_names *t)
{
    size_t cap = t->cap ? t->cap : 16;
    if ((t->used + 1) * 2 > cap)
        cap *= 2;
    uintptr_t *keys = stvm__calloc(cap, sizeof *keys);
    char **values = stvm__calloc(cap, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return false;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (t->keys[i] == EMPTY || t->keys[i] == TOMB)
            continue;
        size_t j = slot_hash(t->keys[i], cap);
        while (keys[j] != EMPTY)
            j = (j + 1) & (cap - 1);
        keys[j] = t->keys[i];
        values[j] = t->values[i];
    }
    free(t->keys);
    free(t->values);
    t->keys = keys;
    t->values = values;
    t->cap = cap;
    t->tombs = 0;
    return true;
}

int stvm__name_check(const char *name)
{
    if (!name)
        return STVM_OK;
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++, n++) {
        if (*c < 0x20 || *c == 0x7F)
            return STVM_EINVAL;
        if (n == STVM_NAME_MAX)
            return STVM_ERANGE;
    }
    return STVM_OK;
}

int stvm__name_set(stvm_vm *vm, const void *obj, const char *name)
{
    int err = stvm__name_check(name);
    if (err)
        return err;
    stvm_names *t = &vm->names;
    uintptr_t a = (uintptr_t)obj;
    size_t j = find(t, a);
    if (!name || !*name) {
        if (j != (size_t)-1) {
            free(t->values[j]);
            t->values[j] = NULL;
            t->keys[j] = TOMB;
            t->used--;
            t->tombs++;
        }
        stvm__trace_object_named(vm, obj, NULL);
        return STVM_OK;
    }
    char *copy = stvm__strdup(name);
    if (!copy)
        return STVM_ENOMEM;
    if (j == (size_t)-1) {
        if ((t->used + t->tombs + 1) * 4 > t->cap * 3 && !grow(t)) {
            free(copy);
            return STVM_ENOMEM;
        }
        j = slot_hash(a, t->cap);
        while (t->keys[j] != EMPTY && t->keys[j] != TOMB)
            j = (j + 1) & (t->cap - 1);
        if (t->keys[j] == TOMB)
            t->tombs--;
        t->keys[j] = a;
        t->used++;
    } else {
        free(t->values[j]);
    }
    t->values[j] = copy;
    stvm__trace_object_named(vm, obj, copy);
    return STVM_OK;
}

const char *stvm__name_of(const stvm_vm *vm, const void *obj)
{
    size_t j = find(&vm->names, (uintptr_t)obj);
    return j == (size_t)-1 ? NULL : vm->names.values[j];
}

int stvm__name_copy(const stvm_vm *vm, const void *obj, char *buf, size_t size)
{
    const char *name = stvm__name_of(vm, obj);
    size_t len = name ? strlen(name) : 0;
    if (size) {
        size_t n = len < size ? len : size - 1;
        memcpy(buf, name ? name : "", n);
        buf[n] = 0;
    }
    return (int)len;
}

bool stvm__name_forget(stvm_vm *vm, const void *obj)
{
    stvm_names *t = &vm->names;
    size_t j = find(t, (uintptr_t)obj);
    if (j == (size_t)-1)
        return false;
    free(t->values[j]);
    t->values[j] = NULL;
    t->keys[j] = TOMB;
    t->used--;
    t->tombs++;
    return true;
}

void stvm__names_each(const stvm_vm *vm, void (*fn)(stvm_vm *vm, const void *obj,
                                                   const char *name, void *arg),
                      void *arg)
{
    const stvm_names *t = &vm->names;
    for (size_t i = 0; t->used && i < t->cap; i++)
        if (t->keys[i] != EMPTY && t->keys[i] != TOMB)
            fn((stvm_vm *)vm, (const void *)t->keys[i], t->values[i], arg);
}

void stvm__names_destroy(stvm_vm *vm)
{
    stvm_names *t = &vm->names;
    for (size_t i = 0; i < t->cap; i++)
        free(t->values[i]);
    free(t->keys);
    free(t->values);
    memset(t, 0, sizeof *t);
}
