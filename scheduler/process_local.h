/*
 * Process-local variables (process_local.c): Pharo's ProcessLocalVariable,
 * DynamicVariable and the inheritable kind.
 *
 * Pharo keeps a process's values in an array on the Process (its env), indexed by the
 * variable's key. Here each value is a node on two lists: the process handle's (what a
 * get walks: a process has few variables) and the variable's (what stvm_local_free
 * walks, so that freeing a variable never looks at processes that have no value of
 * it). The values live with the handle, not the running state, so that a held handle of
 * a finished process still answers them, as a terminated Process keeps its env; they
 * are dropped when the handle goes.
 */
#ifndef STVM_SCHEDULER_PROCESS_LOCAL_H
#define STVM_SCHEDULER_PROCESS_LOCAL_H

#include "sched.h"

/* One process's value of one variable. value NULL (no value) only while a
 * stvm_local_during pins the node to restore into it. */
typedef struct stvm_local_value {
    struct stvm_local *var;
    stvm_process *owner;
    void *value;
    struct stvm_local_value *proc_prev, *proc_next;   /* owner->locals */
    struct stvm_local_value *var_prev, *var_next;     /* var->values */
    uint32_t pins;                                    /* durings that restore into it */
} stvm_local_value;

struct stvm_local {
    stvm_object hdr;
    stvm_vm *vm;
    struct stvm_local *prev, *next;   /* vm->locals */
    unsigned flags;                   /* STVM_LOCAL_* */
    void *default_value;
    stvm_local_destroy_fn destroy;
    stvm_local_inherit_fn inherit;
    stvm_local_value *values;
    uint32_t during;                  /* processes inside stvm_local_during on it */
};

static inline bool stvm__is_local(const stvm_vm *vm, const stvm_local *v)
{
    return v && v->hdr.class_index == STVM_CLASS_LOCAL && v->vm == vm;
}

/* A spawn from a process: the nodes the child's inherited values will take, made
 * before anything of the child is visible so that a failure changes nothing. *out is
 * NULL when parent has no inheritable value. STVM_OK or ENOMEM. */
int stvm__locals_inherit_prepare(stvm_vm *vm, const stvm_process *parent,
                                 stvm_local_value **out);
/* Fill the prepared nodes for child (inherit_fn runs here) and hang them on it. */
void stvm__locals_inherit_finish(stvm_vm *vm, const stvm_process *parent,
                                 stvm_local_value *nodes, stvm_process *child);
/* Prepared nodes of a spawn that failed later. */
void stvm__locals_nodes_free(stvm_local_value *nodes);
/* The handle h goes: drop each of its values (destroy_fn). */
void stvm__locals_drop(stvm_vm *vm, stvm_process *h);
/* stvm_vm_free, after the processes' cleanups ran: every variable and value left. */
void stvm__locals_destroy(stvm_vm *vm);

#endif
