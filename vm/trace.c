/*
 * The trace ring (vm/trace.h) and the public calls that start, stop and read it. The
 * writers (text, Trace Event JSON) are image-side code on top of this.
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "integer.h"

static const char *const kind_names[STVM_TRACE_KINDS] = {
    "created",     "ready",         "resumed",        "suspended",     "terminated",
    "finished",    "switch",        "sem-wait",       "sem-signal",    "sem-excess",
    "mutex-enter", "mutex-wait",    "mutex-exit",     "mutex-handoff", "timer-armed",
    "timer-disarmed", "timer-fired", "delay-scheduled", "delay-expired", "delay-cancelled",
    "idle-sleep",  "io-ready",      "external",       "socket-wait",   "socket-done",
    "ffi-call",    "ffi-return",
};

const char *stvm_trace_kind_name(int kind)
{
    return kind >= 0 && kind < STVM_TRACE_KINDS ? kind_names[kind] : NULL;
}

/* The clock as an event carries it. The real clock is read once, for both fields. */
static void event_time(stvm_vm *vm, stvm_trace_event *ev)
{
    if (vm->clock.kind == STVM_CLOCK_SIMULATED) {
        ev->time_us = vm->clock.sim_now_us;
        ev->time_ns = 0;
        return;
    }
    int64_t ns = stvm__mono_ns() - vm->clock.mono_start_ns;
    ev->time_us = vm->clock.start_us + (uint64_t)(ns / 1000);
    ev->time_ns = (uint32_t)(ns % 1000);
}

void stvm__trace_emit(stvm_vm *vm, int kind, uint64_t process, uint64_t object,
                      int64_t detail, int64_t extra, int reason)
{
    struct stvm_trace *t = vm->trace;
    stvm_trace_event *ev = &t->events[t->head];
    ev->seq = t->seq++;
    event_time(vm, ev);
    ev->kind = (uint16_t)kind;
    ev->reason = (uint16_t)reason;
    ev->process = process;
    ev->object = object;
    ev->detail = detail;
    ev->extra = extra;
    if (++t->head == t->cap)
        t->head = 0;
    if (vm->trace_hook)
        vm->trace_hook(vm, ev, vm->trace_arg);
}

size_t stvm__trace_kept(const struct stvm_trace *t)
{
    return t->seq < t->cap ? (size_t)t->seq : t->cap;
}

const stvm_trace_event *stvm__trace_at(const struct stvm_trace *t, size_t index)
{
    size_t oldest = t->seq < t->cap ? 0 : t->head;
    size_t i = oldest + index;
    return &t->events[i >= t->cap ? i - t->cap : i];
}

/* ---- names -------------------------------------------------------------------------- */

void stvm__trace_name(stvm_vm *vm, uint64_t id, const char *name)
{
    struct stvm_trace *t = vm->trace_ring;
    if (t->nnames == t->cap_names) {
        size_t cap = t->cap_names ? 2 * t->cap_names : 16;
        stvm_trace_name *n = realloc(t->names, cap * sizeof *n);
        if (!n)
            return;
        t->names = n;
        t->cap_names = cap;
    }
    stvm_trace_name *n = &t->names[t->nnames++];
    n->id = id;
    snprintf(n->name, sizeof n->name, "%s", name ? name : "");
}

const char *stvm__trace_name_of(const stvm_vm *vm, uint64_t id)
{
    const struct stvm_trace *t = vm->trace_ring;
    for (size_t i = 0; t && i < t->nnames; i++)
        if (t->names[i].id == id)
            return t->names[i].name;
    return NULL;
}

void stvm__trace_created(stvm_vm *vm, uint64_t id, const char *name, int priority)
{
    stvm__trace_name(vm, id, name);
    stvm__trace_emit(vm, STVM_TRACE_CREATED, id, 0, priority, 0, 0);
}

void stvm__trace_delay(stvm_vm *vm, int kind, uint64_t process, const void *delay,
                       stvm_oop key)
{
    int64_t v = 0;
    stvm_int_to_i64(vm, key, &v);
    stvm__trace_emit(vm, kind, process, (uint64_t)(uintptr_t)delay, v, stvm__is_boxed(key), 0);
}

/* Processes that exist when recording starts are named at once (the idle process, the
 * timing process, anything spawned before). */
static void name_living(stvm_vm *vm)
{
    for (stvm_proc *p = vm->all; p; p = p->all_next)
        stvm__trace_name(vm, p->id, p->handle ? p->handle->name : NULL);
}

/* ---- the public calls --------------------------------------------------------------- */

static void ring_free(struct stvm_trace *t)
{
    if (!t)
        return;
    free(t->events);
    free(t->names);
    free(t);
}

int stvm_trace_start(stvm_vm *vm, size_t events)
{
    if (!vm || events == 0 || events > STVM_TRACE_MAX_EVENTS)
        return STVM_EINVAL;
    struct stvm_trace *t = calloc(1, sizeof *t);
    stvm_trace_event *ring = malloc(events * sizeof *ring);
    if (!t || !ring) {
        free(t);
        free(ring);
        return STVM_ENOMEM;
    }
    ring_free(vm->trace_ring);
    t->events = ring;
    t->cap = events;
    t->start_us = stvm__clock_now_us(vm);
    vm->trace_ring = t;
    name_living(vm);
    vm->trace = t;
    return STVM_OK;
}

int stvm_trace_stop(stvm_vm *vm)
{
    if (!vm)
        return STVM_EINVAL;
    if (!vm->trace)
        return STVM_ESTATE;
    vm->trace = NULL;
    return STVM_OK;
}

int64_t stvm_trace_dropped(const stvm_vm *vm)
{
    if (!vm)
        return STVM_EINVAL;
    const struct stvm_trace *t = vm->trace_ring;
    return t ? (int64_t)(t->seq - stvm__trace_kept(t)) : 0;
}

int64_t stvm_trace_count(const stvm_vm *vm)
{
    if (!vm)
        return STVM_EINVAL;
    return vm->trace_ring ? (int64_t)stvm__trace_kept(vm->trace_ring) : 0;
}

int stvm_trace_get(const stvm_vm *vm, size_t index, stvm_trace_event *out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    const struct stvm_trace *t = vm->trace_ring;
    if (!t || index >= stvm__trace_kept(t))
        return STVM_ERANGE;
    *out = *stvm__trace_at(t, index);
    return STVM_OK;
}

int stvm_trace_set_hook(stvm_vm *vm, stvm_trace_hook fn, void *arg)
{
    if (!vm)
        return STVM_EINVAL;
    vm->trace_hook = fn;
    vm->trace_arg = fn ? arg : NULL;
    return STVM_OK;
}

void stvm__trace_destroy(stvm_vm *vm)
{
    ring_free(vm->trace_ring);
    vm->trace_ring = vm->trace = NULL;
}
