/*
 * What the two trace writers share (trace_text.c, trace_json.c): short stable labels
 * for what an event names. Addresses differ from run to run, so semaphores, mutexes and
 * Delays are numbered in the order the trace first mentions them ("sem1", "delay3"):
 * the same run gives the same text on every machine.
 */
#ifndef STVM_IMAGE_STUBS_TRACE_WRITE_H
#define STVM_IMAGE_STUBS_TRACE_WRITE_H

#include "trace.h"

/* The longest label: a name, or an owner's name, a dot and a role. */
#define STVM_TRACE_LABEL_MAX (2 * STVM_NAME_MAX + 16)

/* What the writer knows of an address at the event it writes (the ring's object entries
 * applied so far): the entry of its name, and of its being an owner's member. */
typedef struct trace_known {
    uint64_t addr;              /* 0 = empty */
    size_t name, member;        /* indices into the ring's objects, or SIZE_MAX */
} trace_known;

/* Object labels: the name an object had at each event (the ring's object entries), or
 * else a number by address, per kind of object (open addressing). */
typedef struct trace_labels {
    uint64_t *keys;             /* address, 0 = empty */
    uint32_t *numbers;
    size_t cap, used;
    /* Next number per kind (STVM_TRACE_LABEL_*). Kinds go into the low bits of 8-aligned
     * addresses, so there may be up to 8. */
    uint32_t next[STVM_TRACE_LABEL_KINDS];
    const struct stvm_trace *ring;
    size_t applied;             /* the ring's object entries applied so far */
    trace_known *known;         /* open addressing, no tombstones (rebuilt on removal) */
    size_t known_cap, known_used;
} trace_labels;

/* What both writers check first: EINVAL (vm or where NULL), ESTATE (no ring); else the
 * ring in *out. */
int stvm__trace_writer_ring(const stvm_vm *vm, const void *where,
                            const struct stvm_trace **out);
/* The kind of object an event names (STVM_TRACE_LABEL_*: "sem1", "mutex2", "delay3",
 * "fn1", "queue1", "monitor1"), or -1: not an object. */
int stvm__trace_object_kind(int event_kind);
/* Labels for the events of ring t, which must be asked for in the order of the events. */
void stvm__trace_labels_init(trace_labels *l, const struct stvm_trace *t);
/* Write ev's object label into buf: its name at that event ("frames"), an internal
 * semaphore's owner and role ("frames.items", "queue1.items"), or its number ("sem1").
 * Allocates (the maps); ENOMEM. */
int stvm__trace_object_label(trace_labels *l, const stvm_trace_event *ev, char *buf, size_t size);
void stvm__trace_labels_free(trace_labels *l);
/* "name#id" of a process id (0: "host"), truncated to size. */
void stvm__trace_process_label(const stvm_vm *vm, uint64_t id, char *buf, size_t size);
/* A time relative to the trace's start as "ms.uuu" (a time before it as "-"). */
void stvm__trace_ms(const stvm_vm *vm, uint64_t time_us, char *buf, size_t size);
/* The text of a SWITCH reason or an IDLE_SLEEP end. */
const char *stvm__trace_why(int why);
const char *stvm__trace_end(int end);
/* What a socket wait waits for (STVM_TRACE_FOR_*): "data", "send done", "connection". */
const char *stvm__trace_socket_for(int what);
/* A callout's runner (STVM_TRACE_FFI_*): "same-thread", "threaded", "worker". */
const char *stvm__trace_runner(int runner);
/* What a GIVEN_BACK event gave back (STVM_TRACE_GAVE_*): "a signal", "a mutex", ... */
const char *stvm__trace_gave(int64_t what);

#endif
