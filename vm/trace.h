/*
 * Tracing's core: the per-VM ring of events and the one emit function every event point
 * calls (the public side is stvm_trace_* in stvm.h; the writers, trace_text.c and
 * trace_json.c, sit beside it).
 * While nothing records and no modelled cost is set, an event point is one predictable
 * branch.
 */
#ifndef STVM_VM_TRACE_H
#define STVM_VM_TRACE_H

#include "vm.h"

/* A name remembered for a process id, so that the writers can name processes that
 * finished long ago. Truncated to fit. */
#define STVM_TRACE_NAME_MAX 32
typedef struct stvm_trace_name {
    uint64_t id;
    char name[STVM_TRACE_NAME_MAX];
} stvm_trace_name;

/* An event as the ring keeps it: 32 bytes, against the public struct's 56, because a
 * ring larger than the caches costs its memory traffic per event. The sequence number
 * is the record's place in the ring; the time is ns since recording started (584 years
 * fit); `packed` holds the process id (48 bits: ids past 2^48 are kept modulo it),
 * the kind and the reason; `extra` shares the slot of a field its kind leaves unused
 * (trace.c, extra_slot). */
typedef struct stvm_trace_rec {
    uint64_t rel_ns;
    uint64_t object;
    int64_t detail;
    uint64_t packed;
} stvm_trace_rec;

/* What the ring knows of an object from one event on, for the writers' labels: its name
 * (stvm_*_set_name: a name set or taken away), that it is an owner's internal semaphore
 * ("frames.items", never an anonymous "sem2"), or that it was freed (its address may
 * come back as another object). Recorded when recording starts, for every object named
 * or owned then, and while recording, as it happens; the writers apply the entries in
 * the order of the events. Nothing here is looked at on a scheduling path. */
enum { STVM_TRACE_OBJ_NAME, STVM_TRACE_OBJ_MEMBER, STVM_TRACE_OBJ_GONE };
/* The kinds of object the writers number ("sem1", "queue2": trace_write.h), also an
 * owner's kind in a MEMBER entry. */
enum {
    STVM_TRACE_LABEL_SEM, STVM_TRACE_LABEL_MUTEX, STVM_TRACE_LABEL_DELAY, STVM_TRACE_LABEL_FN,
    STVM_TRACE_LABEL_QUEUE, STVM_TRACE_LABEL_MONITOR, STVM_TRACE_LABEL_SOCKET,
    STVM_TRACE_LABEL_KINDS
};
typedef struct stvm_trace_object {
    uint64_t seq;                   /* applies from the event with this seq on */
    uint64_t object;                /* its address */
    uint64_t owner;                 /* MEMBER: its owner's address */
    const char *role;               /* MEMBER: its role in the owner ("items"), static */
    uint8_t what;                   /* STVM_TRACE_OBJ_* */
    uint8_t owner_kind;             /* MEMBER: the owner's label kind (trace_write.h) */
    char name[STVM_NAME_MAX + 1];   /* NAME: "" when the name was taken away */
} stvm_trace_object;

/* The ring: events[] holds the newest min(seq, cap) events, the oldest at head when
 * full. seq counts every event recorded since the start, so seq - kept were dropped. */
struct stvm_trace {
    stvm_trace_rec *events;
    size_t cap;
    size_t head;                    /* where the next event goes */
    uint64_t seq;                   /* events recorded so far */
    uint64_t start_us;              /* the VM clock when recording started */
    bool recording;
    bool yielding;                  /* the next switch is a yield (set by stvm__yield) */
    stvm_trace_name *names;         /* ids in order of creation */
    size_t nnames, cap_names;
    stvm_trace_object *objects;     /* in the order they happened */
    size_t nobjects, cap_objects;
    bool lost;                      /* a name or object entry found no memory: later
                                       ones are left out (the writers show the id);
                                       at stvm_trace_start, the start fails */
};

/* Every event point asks stvm__tracing(vm) and nothing else. Building the library with
 * -DSTVM_TRACE_POINTS=0 makes it a constant false, so that the compiler drops the event
 * points: the tree to measure "compiled in but off" against (make bench-trace-cost). That
 * build records nothing, and its stvm_trace_start answers STVM_ESTATE. */
#ifndef STVM_TRACE_POINTS
#define STVM_TRACE_POINTS 1
#endif

/* True while an event point has work: a ring records, or the simulated clock charges a
 * modelled cost at some events (sim_cost.c). One flag for both keeps an event point one
 * predictable branch either way. */
static inline bool stvm__tracing(const stvm_vm *vm)
{
    return STVM_TRACE_POINTS && __builtin_expect(vm->events_on, 0);
}

/* vm->events_on anew, after the ring or the costs changed, and with it vm->switch_watch
 * (also asked once by stvm_vm_create, for cfg.cpu_time). */
void stvm__events_update(stvm_vm *vm);

/* One event happened (stvm__tracing is true): recorded if a ring records (calling the
 * hook), then its modelled cost charged if it has one, which moves the simulated clock
 * and may run outside events. Never allocates itself. Cold, so that the event points'
 * calls are laid out away from the paths they sit on. A kind that carries `extra` needs
 * its slot in trace.c's extra_slot table (else it is lost). */
__attribute__((cold)) void stvm__trace_emit(stvm_vm *vm, int kind, uint64_t process,
                                            uint64_t object, int64_t detail, int64_t extra,
                                            int reason);

/* The id of the process the VM runs now (0: the embedding thread). */
static inline uint64_t stvm__trace_active(const stvm_vm *vm)
{
    return vm->active ? vm->active->id : 0;
}

static inline void stvm__trace_full(stvm_vm *vm, int kind, uint64_t process,
                                    uint64_t object, int64_t detail, int64_t extra, int reason)
{
    if (stvm__tracing(vm))
        stvm__trace_emit(vm, kind, process, object, detail, extra, reason);
}

static inline void stvm__trace(stvm_vm *vm, int kind, uint64_t process, uint64_t object,
                               int64_t detail)
{
    stvm__trace_full(vm, kind, process, object, detail, 0, 0);
}

/* A process was created: remember its name, then record CREATED. Cold, as emit. */
__attribute__((cold)) void stvm__trace_created(stvm_vm *vm, uint64_t id, const char *name,
                                              int priority);
/* A Delay event: its resumption time `key` (an integer oop in the scheduler's unit) is
 * recorded as a number, and whether it is boxed. */
__attribute__((cold)) void stvm__trace_delay(stvm_vm *vm, int kind, uint64_t process,
                                            const void *delay, stvm_oop key);

/* Remember id's name (a process was created while recording). Allocates; a name that
 * cannot be kept is left out (the writers then say "process <id>"). */
void stvm__trace_name(stvm_vm *vm, uint64_t id, const char *name);
/* The name remembered for id, or NULL. */
const char *stvm__trace_name_of(const stvm_vm *vm, uint64_t id);
/* While a ring records (cold; nothing otherwise): obj was given name (NULL or "": its
 * name was taken away); member, an internal semaphore of owner (an object of label kind
 * owner_kind, STVM_TRACE_LABEL_*), plays role ("items", "read", ...); obj
 * (named, or an owner) was freed. An entry that cannot be kept (no memory) is left out:
 * the writers then print the stable label. */
void stvm__trace_object_named(stvm_vm *vm, const void *obj, const char *name);
void stvm__trace_member(stvm_vm *vm, const void *member, const void *owner, int owner_kind,
                        const char *role);
void stvm__trace_object_gone(stvm_vm *vm, const void *obj);
/* The kept ring (recording or stopped), or NULL. */
static inline const struct stvm_trace *stvm__trace_ring(const stvm_vm *vm)
{
    return vm->trace_ring;
}
/* The index-th kept event, oldest first (index < kept), as the public struct. */
stvm_trace_event stvm__trace_at(const struct stvm_trace *t, size_t index);
size_t stvm__trace_kept(const struct stvm_trace *t);
/* stvm_vm_free. */
void stvm__trace_destroy(stvm_vm *vm);

#endif
