/*
 * The numbered primitive table: the dispatch array made from STVM_PRIMITIVES
 * (prim_table.h), indexed by primitive number, and the public calls over it; the named
 * table made from STVM_NAMED_PRIMITIVES, searched by module and name. The
 * argument count and the caller are checked here, once, before any primitive body
 * runs; the bodies are in prim_integer.c, prim_process.c and prim_time.c.
 */
#include "../scheduler/sched.h"
#include "prim_table.h"

#include <string.h>

typedef struct prim_row {
    const char *name;
    stvm__primitive_fn *fn;   /* NULL: no primitive has this number */
    int nargs;
    int caller;               /* ANY_CALLER or PROCESS_ONLY */
} prim_row;

/* A number listed twice is a compile error (-Woverride-init, part of -Wextra). */
#define ROW(number, nargs, caller, name, fn) \
    [number] = {name, stvm__primitive_##fn, nargs, caller},
static const prim_row table[] = {STVM_PRIMITIVES(ROW)};
#undef ROW

enum { NSLOTS = sizeof table / sizeof table[0] };

static const prim_row *find(int number)
{
    return number >= 0 && number < NSLOTS && table[number].fn ? &table[number] : NULL;
}

/* The checks every row asks for, before the body runs. A PROCESS_ONLY primitive
 * called by the embedding thread outside stvm_run (no active process) would block,
 * switch or sleep the host thread: it is inappropriate there. */
static int check_call(const stvm_vm *vm, const prim_row *row, int nargs)
{
    if (nargs != row->nargs)
        return STVM_PRIM_ERR_BAD_NUM_ARGS;
    if (row->caller == PROCESS_ONLY && !stvm__in_process(vm))
        return STVM_PRIM_ERR_INAPPROPRIATE;
    return PRIM_OK;
}

/* Run row's body after the common checks; the answer of both public calls. */
static int call_row(stvm_vm *vm, const prim_row *row, stvm_oop receiver, const stvm_oop *args,
                    int nargs, stvm_oop *result, int *fail_code)
{
    stvm_oop res = STVM_NIL;
    int code = check_call(vm, row, nargs);
    if (!code)
        code = row->fn(vm, receiver, args, &res);
    if (code) {
        if (fail_code)
            *fail_code = code;
        return STVM_EPRIM;
    }
    if (result)
        *result = res;
    return STVM_OK;
}

int stvm_primitive_call(stvm_vm *vm, int number, stvm_oop receiver, const stvm_oop *args,
                        int nargs, stvm_oop *result, int *fail_code)
{
    const prim_row *row = find(number);
    if (!vm || !row || nargs < 0 || (nargs > 0 && !args))
        return STVM_EINVAL;
    return call_row(vm, row, receiver, args, nargs, result, fail_code);
}

/* ---- named primitives ---- */

typedef struct named_row {
    const char *module;
    prim_row row;
} named_row;

#define NAMED_ROW(module, name, nargs, caller, fn) \
    {module, {name, stvm__primitive_##fn, nargs, caller}},
static const named_row named[] = {STVM_NAMED_PRIMITIVES(NAMED_ROW)};
#undef NAMED_ROW

enum { NNAMED = sizeof named / sizeof named[0] };

static const prim_row *find_named(const char *module, const char *name)
{
    for (int i = 0; i < NNAMED; i++)
        if (strcmp(named[i].row.name, name) == 0 && strcmp(named[i].module, module) == 0)
            return &named[i].row;
    return NULL;
}

int stvm_primitive_call_named(stvm_vm *vm, const char *module, const char *name,
                              stvm_oop receiver, const stvm_oop *args, int nargs,
                              stvm_oop *result, int *fail_code)
{
    const prim_row *row = module && name ? find_named(module, name) : NULL;
    if (!vm || !row || nargs < 0 || (nargs > 0 && !args))
        return STVM_EINVAL;
    return call_row(vm, row, receiver, args, nargs, result, fail_code);
}

int stvm_primitive_named_list(const char **modules, const char **names, int cap)
{
    for (int i = 0; i < NNAMED && i < cap; i++) {
        if (modules)
            modules[i] = named[i].module;
        if (names)
            names[i] = named[i].row.name;
    }
    return NNAMED;
}

const char *stvm_primitive_name(int number)
{
    const prim_row *row = find(number);
    return row ? row->name : NULL;
}

int stvm_primitive_numbers(int *out, int cap)
{
    int n = 0;
    for (int number = 0; number < NSLOTS; number++) {
        if (!table[number].fn)
            continue;
        if (out && n < cap)
            out[n] = number;
        n++;
    }
    return n;
}

const char *stvm_primitive_error_name(int code)
{
    static const char *const names[] = {
        "success", "generic failure", "bad receiver", "bad argument", "bad index",
        "bad number of arguments", "inappropriate operation", "unsupported operation",
        "no modification", "insufficient object memory", "insufficient C memory",
        "not found", "bad method", "internal error in named primitive machinery",
        "object may move", "resource limit exceeded",
    };
    if (code >= 0 && code < (int)(sizeof names / sizeof names[0]))
        return names[code];
    return "unknown failure code";
}
