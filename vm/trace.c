/*
 * The trace ring (vm/trace.h) and the public calls that start, stop and read it. The
 * writers (text, Trace Event JSON) are image-side code on top of this.
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "abi.h"
#include "clock.h"
#include "integer.h"
#include "names.h"
#include "objmem.h"
#include "sim_cost.h"
#include "alloc.h"

static const char *const kind_names[STVM_TRACE_KINDS] = {
    "created",     "ready",         "resumed",        "suspended",     "terminated",
    "finished",    "switch",        "sem-wait",       "sem-signal",    "sem-excess",
    "mutex-enter", "mutex-wait",    "mutex-exit",     "mutex-handoff", "timer-armed",
    "timer-disarmed", "timer-fired", "delay-scheduled", "delay-expired", "delay-cancelled",
    "idle-sleep",  "io-ready",      "external",       "outside",       "socket-wait",
    "socket-done", "ffi-call",      "ffi-return",     "interrupt",     "given-back",
    "queue-put",   "queue-take",    "monitor-wait",   "monitor-signal", "queue-close",
};

const char *stvm_trace_kind_name(int kind)
{
    return kind >= 0 && kind < STVM_TRACE_KINDS ? kind_names[kind] : NULL;
}

/* Where a kind keeps its `extra` in the ring: in a field it leaves unused. A kind not
 * listed has no extra (0). */
enum { EXTRA_NONE, EXTRA_IN_OBJECT, EXTRA_IN_REASON };
static const uint8_t extra_slot[STVM_TRACE_KINDS] = {
    [STVM_TRACE_DELAY_SCHEDULED] = EXTRA_IN_REASON,   /* boxed: 0 or 1 */
    [STVM_TRACE_DELAY_EXPIRED] = EXTRA_IN_REASON,
    [STVM_TRACE_DELAY_CANCELLED] = EXTRA_IN_REASON,
    [STVM_TRACE_IDLE_SLEEP] = EXTRA_IN_OBJECT,         /* the slept us; no object */
    [STVM_TRACE_SOCKET_WAIT] = EXTRA_IN_REASON,        /* STVM_TRACE_FOR_* */
    [STVM_TRACE_SOCKET_DONE] = EXTRA_IN_REASON,
    [STVM_TRACE_FFI_CALL] = EXTRA_IN_REASON,           /* arguments: at most 16 */
    [STVM_TRACE_FFI_RETURN] = EXTRA_IN_REASON,         /* STVM_TRACE_FFI_* */
    [STVM_TRACE_MONITOR_SIGNAL] = EXTRA_IN_REASON,     /* a queue id, or 0xFF */
};

#define PROCESS_BITS 48
#define PROCESS_MASK (((uint64_t)1 << PROCESS_BITS) - 1)

/* The time since recording started, in ns. The real clock is read once; its ns since
 * the VM's start minus the trace's start (a whole number of us, so the public fields
 * come back exactly) cannot be negative. */
static uint64_t event_rel_ns(stvm_vm *vm, const struct stvm_trace *t)
{
    if (vm->clock.kind == STVM_CLOCK_SIMULATED)
        return (vm->clock.sim_now_us - t->start_us) * 1000;
    return (uint64_t)(stvm__mono_ns() - vm->clock.mono_start_ns) -
           (t->start_us - vm->clock.start_us) * 1000;
}

static stvm_trace_event unpack(const struct stvm_trace *t, const stvm_trace_rec *r, uint64_t seq)
{
    int kind = (int)((r->packed >> PROCESS_BITS) & 0xFF);
    stvm_trace_event ev = {.seq = seq,
                           .time_us = t->start_us + r->rel_ns / 1000,
                           .time_ns = (uint32_t)(r->rel_ns % 1000),
                           .kind = (uint16_t)kind,
                           .reason = (uint16_t)(r->packed >> (PROCESS_BITS + 8)),
                           .process = r->packed & PROCESS_MASK,
                           .object = r->object,
                           .detail = r->detail};
    if (extra_slot[kind] == EXTRA_IN_OBJECT) {
        ev.extra = (int64_t)ev.object;
        ev.object = 0;
    } else if (extra_slot[kind] == EXTRA_IN_REASON) {
        ev.extra = ev.reason;
        ev.reason = 0;
    }
    return ev;
}

/* Into the ring, and to the hook. */
static void record(stvm_vm *vm, struct stvm_trace *t, int kind, uint64_t process,
                   uint64_t object, int64_t detail, int64_t extra, int reason)
{
    if (extra_slot[kind] == EXTRA_IN_OBJECT)
        object = (uint64_t)extra;
    else if (extra_slot[kind] == EXTRA_IN_REASON)
        reason = (int)extra;
    stvm_trace_rec *r = &t->events[t->head];
    r->rel_ns = event_rel_ns(vm, t);
    r->object = object;
    r->detail = detail;
    r->packed = (process & PROCESS_MASK) | (uint64_t)kind << PROCESS_BITS |
                (uint64_t)(reason & 0xFF) << (PROCESS_BITS + 8);
    uint64_t seq = t->seq++;
    if (++t->head == t->cap)
        t->head = 0;
    if (vm->trace_hook) {
        stvm_trace_event ev = unpack(t, r, seq);
        vm->trace_hook(vm, &ev, vm->trace_arg);
    }
}

void stvm__trace_emit(stvm_vm *vm, int kind, uint64_t process, uint64_t object,
                      int64_t detail, int64_t extra, int reason)
{
    if (vm->trace)
        record(vm, vm->trace, kind, process, object, detail, extra, reason);
    stvm__sim_charge(vm, kind, process, object);
}

void stvm__events_update(stvm_vm *vm)
{
    vm->events_on = vm->trace != NULL || stvm__sim_costs_set(vm);
    vm->switch_watch = (STVM_TRACE_POINTS && vm->events_on) || vm->cfg.cpu_time;
}

size_t stvm__trace_kept(const struct stvm_trace *t)
{
    return t->seq < t->cap ? (size_t)t->seq : t->cap;
}

stvm_trace_event stvm__trace_at(const struct stvm_trace *t, size_t index)
{
    size_t oldest = t->seq < t->cap ? 0 : t->head;
    size_t i = oldest + index;
    uint64_t first_seq = t->seq - stvm__trace_kept(t);
    return unpack(t, &t->events[i >= t->cap ? i - t->cap : i], first_seq + index);
}

/* ---- names -------------------------------------------------------------------------- */

void stvm__trace_name(stvm_vm *vm, uint64_t id, const char *name)
{
    struct stvm_trace *t = vm->trace_ring;
    if (t->nnames == t->cap_names) {
        size_t cap = t->cap_names ? 2 * t->cap_names : 16;
        stvm_trace_name *n = stvm__realloc(t->names, cap * sizeof *n);
        if (!n) {
            t->lost = true;
            return;
        }
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

/* ---- what the ring knows of objects ------------------------------------------------- */

static stvm_trace_object *object_entry(stvm_vm *vm, const void *obj, int what)
{
    struct stvm_trace *t = vm->trace;
    if (!t || !obj)
        return NULL;
    if (t->nobjects == t->cap_objects) {
        size_t cap = t->cap_objects ? 2 * t->cap_objects : 16;
        stvm_trace_object *n = stvm__realloc(t->objects, cap * sizeof *n);
        if (!n) {
            t->lost = true;
            return NULL;
        }
        t->objects = n;
        t->cap_objects = cap;
    }
    stvm_trace_object *e = &t->objects[t->nobjects++];
    *e = (stvm_trace_object){.seq = t->seq, .object = (uint64_t)(uintptr_t)obj,
                             .what = (uint8_t)what};
    return e;
}

void stvm__trace_object_named(stvm_vm *vm, const void *obj, const char *name)
{
    stvm_trace_object *e = object_entry(vm, obj, STVM_TRACE_OBJ_NAME);
    if (e)
        snprintf(e->name, sizeof e->name, "%s", name ? name : "");
}

void stvm__trace_member(stvm_vm *vm, const void *member, const void *owner, int owner_kind,
                        const char *role)
{
    stvm_trace_object *e = object_entry(vm, member, STVM_TRACE_OBJ_MEMBER);
    if (e) {
        e->owner = (uint64_t)(uintptr_t)owner;
        e->owner_kind = (uint8_t)owner_kind;
        e->role = role;
    }
}

void stvm__trace_object_gone(stvm_vm *vm, const void *obj)
{
    object_entry(vm, obj, STVM_TRACE_OBJ_GONE);
}

static void name_one(stvm_vm *vm, const void *obj, const char *name, void *arg)
{
    (void)arg;
    stvm__trace_object_named(vm, obj, name);
}

static void members_of(stvm_vm *vm, void *obj, void *arg)
{
    (void)arg;
    uint32_t c = ((const stvm_object *)obj)->class_index;
    if (c < STVM_CLASS_COUNT && vm->trace_members[c])
        vm->trace_members[c](vm, obj);
}

/* Objects that exist when recording starts: the owners' internal semaphores, then the
 * names (a name set on an internal semaphore itself wins over its owner's). */
static void objects_living(stvm_vm *vm)
{
    stvm__objmem_each(vm, members_of, NULL);
    stvm__names_each(vm, name_one, NULL);
}

void stvm__trace_created(stvm_vm *vm, uint64_t id, const char *name, int priority)
{
    if (vm->trace)
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

/* Processes already on a run queue get a READY event first, highest priority first and
 * in queue order, so that a trace begun mid-run shows them ready and the writers' run
 * queue count starts right. */
static void ready_snapshot(stvm_vm *vm)
{
    for (int prio = STVM_NUM_PRIORITIES; prio >= 1; prio--)
        for (stvm_proc *p = vm->runq[prio - 1].first; p; p = p->next_link)
            stvm__trace_emit(vm, STVM_TRACE_READY, p->id, 0, p->priority, 0, 0);
}

/* ---- the public calls --------------------------------------------------------------- */

/* A ring of 2 MiB or more asks for transparent huge pages: a ring larger than the
 * caches is written once, front to back, and with 4 KiB pages every 128th event paid a
 * page fault and TLB misses (28 ns per event against 13 with huge pages, measured in
 * `stvm-bench delay --trace` with 2^24 events). Smaller rings stay in ordinary memory,
 * where a huge page would make a few KiB of ring cost 2 MiB of RAM. */
#define HUGE_PAGE ((size_t)2 << 20)

static stvm_trace_rec *ring_alloc(size_t events)
{
    size_t bytes = events * sizeof(stvm_trace_rec);
    if (bytes < HUGE_PAGE)
        return stvm__malloc(bytes);
    bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    stvm_trace_rec *ring = stvm__aligned_alloc(HUGE_PAGE, bytes);
    if (ring)
        madvise(ring, bytes, MADV_HUGEPAGE);   /* advice: refused, the ring still works */
    return ring;
}

static void ring_free(struct stvm_trace *t)
{
    if (!t)
        return;
    free(t->events);
    free(t->names);
    free(t->objects);
    free(t);
}

int stvm_trace_start(stvm_vm *vm, size_t events)
{
    if (!vm || events == 0 || events > STVM_TRACE_MAX_EVENTS)
        return STVM_EINVAL;
    if (!STVM_TRACE_POINTS)
        return STVM_ESTATE;   /* a measurement build: nothing would ever be recorded */
    struct stvm_trace *t = stvm__calloc(1, sizeof *t);
    stvm_trace_rec *ring = ring_alloc(events);
    if (!t || !ring) {
        free(t);
        free(ring);
        return STVM_ENOMEM;
    }
    t->events = ring;
    t->cap = events;
    t->start_us = stvm__clock_now_us(vm);
    /* What exists now is named in the new ring before the old one goes: a start that
     * cannot name it all fails and leaves the old ring as it was. */
    struct stvm_trace *old_ring = vm->trace_ring, *old = vm->trace;
    vm->trace_ring = t;
    name_living(vm);
    vm->trace = t;
    objects_living(vm);
    if (t->lost) {
        vm->trace_ring = old_ring;
        vm->trace = old;
        ring_free(t);
        return STVM_ENOMEM;
    }
    ring_free(old_ring);
    stvm__events_update(vm);
    ready_snapshot(vm);
    return STVM_OK;
}

int stvm_trace_stop(stvm_vm *vm)
{
    if (!vm)
        return STVM_EINVAL;
    if (!vm->trace)
        return STVM_ESTATE;
    vm->trace = NULL;
    stvm__events_update(vm);
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

int stvm_trace_get_(const stvm_vm *vm, size_t index, stvm_trace_event *out, size_t out_size)
{
    if (!vm || !out)
        return STVM_EINVAL;
    int err = stvm__struct_size_check(STVM__STRUCT_TRACE_EVENT, out_size);
    if (err)
        return err;
    const struct stvm_trace *t = vm->trace_ring;
    if (!t || index >= stvm__trace_kept(t))
        return STVM_ERANGE;
    stvm_trace_event ev = stvm__trace_at(t, index);
    memcpy(out, &ev, out_size);
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
    stvm__events_update(vm);
}
