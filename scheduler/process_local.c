/*
 * Process-local variables: Pharo's ProcessLocalVariable (value, value:), DynamicVariable
 * (value:during:) and inheritable variables (installEnvIntoForked:), with C ownership
 * of the values in place of the garbage collector (the layout is in process_local.h).
 */
#include "process_local.h"

#include <stdlib.h>

#include "../vm/objmem.h"
#include "../vm/alloc.h"

/* ---- the two lists of a value ----------------------------------------------------------- */

static void node_link(stvm_local_value *e, stvm_local *v, stvm_process *h)
{
    e->var = v;
    e->owner = h;
    e->proc_prev = NULL;
    e->proc_next = h->locals;
    if (h->locals)
        h->locals->proc_prev = e;
    h->locals = e;
    e->var_prev = NULL;
    e->var_next = v->values;
    if (v->values)
        v->values->var_prev = e;
    v->values = e;
}

static void node_unlink(stvm_local_value *e)
{
    if (e->proc_prev)
        e->proc_prev->proc_next = e->proc_next;
    else
        e->owner->locals = e->proc_next;
    if (e->proc_next)
        e->proc_next->proc_prev = e->proc_prev;
    if (e->var_prev)
        e->var_prev->var_next = e->var_next;
    else
        e->var->values = e->var_next;
    if (e->var_next)
        e->var_next->var_prev = e->var_prev;
}

/* Take the node off both lists and free it, then drop its value: destroy_fn runs last,
 * when nothing of the VM's points at the value any more. */
static void node_drop(stvm_local_value *e)
{
    void *value = e->value;
    stvm_local_destroy_fn destroy = e->var->destroy;
    node_unlink(e);
    free(e);
    if (value && destroy)
        destroy(value);
}

static stvm_local_value *node_find(const stvm_process *h, const stvm_local *v)
{
    for (stvm_local_value *e = h->locals; e; e = e->proc_next)
        if (e->var == v)
            return e;
    return NULL;
}

/* What h answers for v: 1 and its own value, or 0 and the default. */
static int value_of(const stvm_process *h, const stvm_local *v, void **value)
{
    const stvm_local_value *e = node_find(h, v);
    if (e && e->value) {
        *value = e->value;
        return 1;
    }
    *value = v->default_value;
    return 0;
}

/* ---- the handle's side ---------------------------------------------------------------- */

void stvm__locals_drop(stvm_vm *vm, stvm_process *h)
{
    (void)vm;
    while (h->locals)
        node_drop(h->locals);
}

static void var_release(stvm_vm *vm, stvm_local *v)
{
    while (v->values)
        node_drop(v->values);
    if (v->prev)
        v->prev->next = v->next;
    else
        vm->locals = v->next;
    if (v->next)
        v->next->prev = v->prev;
    stvm__objmem_free(vm, v);
}

void stvm__locals_destroy(stvm_vm *vm)
{
    while (vm->locals)
        var_release(vm, vm->locals);
}

/* ---- inheritance at spawn --------------------------------------------------------------- */

static bool inherits(const stvm_local_value *e)
{
    return e->value && (e->var->flags & STVM_LOCAL_INHERITABLE);
}

int stvm__locals_inherit_prepare(stvm_vm *vm, const stvm_process *parent,
                                 stvm_local_value **out)
{
    (void)vm;
    stvm_local_value *nodes = NULL;
    for (const stvm_local_value *e = parent->locals; e; e = e->proc_next) {
        if (!inherits(e))
            continue;
        stvm_local_value *n = stvm__calloc(1, sizeof *n);
        if (!n) {
            stvm__locals_nodes_free(nodes);
            return STVM_ENOMEM;
        }
        n->proc_next = nodes;   /* a chain of blanks until finish links them */
        nodes = n;
    }
    *out = nodes;
    return STVM_OK;
}

void stvm__locals_nodes_free(stvm_local_value *nodes)
{
    for (stvm_local_value *n; (n = nodes) != NULL;) {
        nodes = n->proc_next;
        free(n);
    }
}

/* The parent's list is walked in the same order as prepare walked it, and nothing ran
 * in between (inherit_fn may not call stvm), so there is a node for each value. */
void stvm__locals_inherit_finish(stvm_vm *vm, const stvm_process *parent,
                                 stvm_local_value *nodes, stvm_process *child)
{
    (void)vm;
    for (const stvm_local_value *e = parent->locals; e && nodes; e = e->proc_next) {
        if (!inherits(e))
            continue;
        stvm_local_value *n = nodes;
        nodes = n->proc_next;
        stvm_local *v = e->var;
        void *value = v->inherit ? v->inherit(e->value, child) : e->value;
        if (!value) {   /* inherit_fn gave it none: it answers the default */
            free(n);
            continue;
        }
        *n = (stvm_local_value){.value = value};
        node_link(n, v, child);
    }
    stvm__locals_nodes_free(nodes);   /* none left over; kept for safety */
}

/* ---- public API ----------------------------------------------------------------------- */

int stvm_local_new(stvm_vm *vm, unsigned flags, void *default_value,
                   stvm_local_destroy_fn destroy_fn, stvm_local_inherit_fn inherit_fn,
                   stvm_local **out)
{
    if (!vm || !out || (flags & ~(STVM_LOCAL_INHERITABLE | STVM_LOCAL_DYNAMIC)))
        return STVM_EINVAL;
    bool inheritable = flags & STVM_LOCAL_INHERITABLE;
    if ((inherit_fn && !inheritable) || (inheritable && destroy_fn && !inherit_fn))
        return STVM_EINVAL;
    stvm_local *v = stvm__objmem_alloc(vm, STVM_CLASS_LOCAL, sizeof *v);
    if (!v)
        return STVM_ENOMEM;
    v->vm = vm;
    v->flags = flags;
    v->default_value = default_value;
    v->destroy = destroy_fn;
    v->inherit = inherit_fn;
    v->next = vm->locals;
    if (v->next)
        v->next->prev = v;
    vm->locals = v;
    *out = v;
    return STVM_OK;
}

int stvm_local_free(stvm_vm *vm, stvm_local *v)
{
    if (!vm || !stvm__is_local(vm, v))
        return STVM_EINVAL;
    if (v->during)
        return STVM_EINUSE;   /* its binding's restore would write into freed memory */
    var_release(vm, v);
    return STVM_OK;
}

int stvm_local_get(stvm_vm *vm, const stvm_local *v, void **value)
{
    if (!vm || !value || !stvm__is_local(vm, v))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    return value_of(vm->active->handle, v, value);
}

int stvm_process_get_local(stvm_vm *vm, const stvm_process *p, const stvm_local *v,
                           void **value)
{
    if (!vm || !value || !stvm__is_proc(vm, p) || !stvm__is_local(vm, v))
        return STVM_EINVAL;
    return value_of(p, v, value);
}

/* Make value h's value of v (NULL: none), dropping the one it replaces. */
static int store(stvm_process *h, stvm_local *v, void *value)
{
    stvm_local_value *e = node_find(h, v);
    if (!e) {
        if (!value)
            return STVM_OK;
        if (!(e = stvm__calloc(1, sizeof *e)))
            return STVM_ENOMEM;
        e->value = value;
        node_link(e, v, h);
        return STVM_OK;
    }
    void *old = e->value;
    if (old == value)
        return STVM_OK;   /* dropping it would leave the process a freed value */
    if (!value && !e->pins) {
        node_drop(e);
        return STVM_OK;
    }
    e->value = value;
    if (old && v->destroy)
        v->destroy(old);
    return STVM_OK;
}

static int settable(stvm_vm *vm, const stvm_local *v)
{
    if (!vm || !stvm__is_local(vm, v) || (v->flags & STVM_LOCAL_DYNAMIC))
        return STVM_EINVAL;
    return stvm__in_process(vm) ? STVM_OK : STVM_ENOTPROC;
}

int stvm_local_set(stvm_vm *vm, stvm_local *v, void *value)
{
    int err = settable(vm, v);
    return err ? err : store(vm->active->handle, v, value);
}

int stvm_local_clear(stvm_vm *vm, stvm_local *v)
{
    int err = settable(vm, v);
    return err ? err : store(vm->active->handle, v, NULL);
}

/* A binding of stvm_local_during, on the binding process's stack. Its restore is a
 * cleanup of the library's own (on_stack: stvm_ensure_pop cannot take it), so that a
 * terminate inside fn restores too, and so does stvm_vm_free (with no active process:
 * it reaches the node through the frame, never through the active process). */
typedef struct binding {
    stvm_ensure_node cleanup;
    stvm_local_value *node;   /* pinned: it stays on the lists until the restore */
    void *saved;              /* the value before (NULL: none) */
} binding;

static void binding_restore(stvm_vm *vm, void *arg)
{
    binding *b = arg;
    stvm_local_value *e = b->node;
    stvm_local *v = e->var;
    void *bound = e->value;   /* the bound value, or what a set inside fn replaced it by */
    e->value = b->saved;
    e->pins--;
    v->during--;
    if (!e->value && !e->pins)
        node_drop(e);   /* no value before: nothing to drop now that it is NULL */
    if (bound && bound != b->saved && v->destroy)
        v->destroy(bound);
    (void)vm;
}

int stvm_local_during(stvm_vm *vm, stvm_local *v, void *value, stvm_fn fn, void *arg)
{
    if (!vm || !fn || !stvm__is_local(vm, v))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    stvm_proc *a = vm->active;
    stvm_process *h = a->handle;
    stvm_local_value *e = node_find(h, v);
    if (e ? e->value == value : !value) {
        fn(vm, arg);   /* already bound to it: nothing to bind, nothing to drop */
        return STVM_OK;
    }
    if (!e) {
        if (!(e = stvm__calloc(1, sizeof *e)))
            return STVM_ENOMEM;
        node_link(e, v, h);
    }
    binding b = {.cleanup = {.fn = binding_restore, .next = a->ensures, .on_stack = true},
                 .node = e,
                 .saved = e->value};
    b.cleanup.arg = &b;
    e->pins++;
    v->during++;
    e->value = value;
    a->ensures = &b.cleanup;
    fn(vm, arg);
    /* fn may have left cleanups of its own registered above the binding: they stay. */
    for (stvm_ensure_node **pp = &a->ensures; *pp; pp = &(*pp)->next)
        if (*pp == &b.cleanup) {
            *pp = b.cleanup.next;
            break;
        }
    binding_restore(vm, &b);
    return STVM_OK;
}
