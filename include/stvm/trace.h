/*
 * stvm/trace.h -- tracing: the event kinds, the ring of events, the hook, and the text
 * and Trace Event JSON writers (docs/scheduler.md, "Tracing"). Includes stvm/core.h;
 * <stvm.h> includes it.
 */
#ifndef STVM_TRACE_H
#define STVM_TRACE_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Tracing (docs/scheduler.md, "Tracing") ------------------------------------
 * What the scheduler did, in order, with the VM clock's time: a ring of the newest
 * events per VM, off by default (while off every event point costs one predictable
 * branch). A live hook sees every event recorded, kept in the ring or not. The ring
 * stays after stvm_trace_stop for the writers, until the next start or stvm_vm_free.
 *
 * Fields of an event by kind ('process' is the process the event is about, 0 for the
 * embedding thread; for timer, IO, external and sleep events the process the VM ran;
 * 'object' a semaphore's, mutex's or Delay's address, or a descriptor; ids are
 * stvm_process_info's ids):
 *   CREATED       detail = priority
 *   READY         made runnable (put on its run queue); detail = priority
 *   RESUMED, SUSPENDED, TERMINATED (primitives 87, 88, stvm_process_terminate)
 *   FINISHED      its way out ended; it never runs again
 *   SWITCH        process -> object (a process id, 0 = the embedding thread);
 *                 reason = STVM_TRACE_WHY_*
 *   SEM_WAIT      detail = 1 it blocks, 0 it took an excess signal
 *   SEM_SIGNAL    detail = the process it woke; SEM_EXCESS: nobody waited,
 *                 detail = excess signals after it
 *   MUTEX_ENTER   detail = depth; MUTEX_WAIT detail = owner; MUTEX_EXIT detail = the
 *                 next owner (0 none); MUTEX_HANDOFF process = new owner, detail = old
 *   TIMER_ARMED, TIMER_DISARMED, TIMER_FIRED  object = semaphore, detail = deadline (us)
 *   DELAY_SCHEDULED, DELAY_EXPIRED, DELAY_CANCELLED  process = its waiter (0: a Delay
 *                 object scheduled by stvm_delay_schedule or stvm_delay_timeout_semaphore_ms,
 *                 which no process waits on), object = the Delay (the stvm_delay for a
 *                 Delay object), detail = resumption time in the scheduler's unit (ms or us),
 *                 extra = 1 when that timestamp is a boxed LargePositiveInteger
 *   IDLE_SLEEP    a wait in the OS (or the simulated clock's jump), reported when it
 *                 ended: detail = requested us (-1: no limit), extra = actual us,
 *                 reason = STVM_TRACE_END_* (what ended it)
 *   IO_READY      object = descriptor, detail = STVM_IO_* events ready
 *   EXTERNAL      object = the semaphore; an external request became its signal
 *   OUTSIDE       the simulated clock reached an outside-world event (stvm_sim_at) and
 *                 runs it now
 *   SOCKET_WAIT   a socket wait blocks (recorded once per wait, when it first blocks):
 *                 object = descriptor, detail = its timeout in ms (what is left of the
 *                 call's; -1: none), extra = STVM_TRACE_FOR_* (what it waits for)
 *   SOCKET_DONE   that wait ended: object = descriptor, detail = how (STVM_OK ready,
 *                 STVM_ETIMEDOUT, STVM_ECLOSED or another error), extra = STVM_TRACE_FOR_*
 *   FFI_CALL      a callout begins: object = the stvm_ffi_function's address, detail =
 *                 STVM_TRACE_FFI_* (the runner), extra = its argument count
 *   FFI_RETURN    it ended: object as FFI_CALL, detail = STVM_OK or the error the call
 *                 answers (its result could not be made), extra = STVM_TRACE_FFI_*
 *   INTERRUPT     process = the interrupted one; detail = STVM_TRACE_INTR_* (queued for
 *                 it, run at once in the caller itself, or a cancelled wait answering
 *                 EINTR at once)
 *   GIVEN_BACK    process = a process terminated or interrupted after a hand-off it had
 *                 not run to take; detail = STVM_TRACE_GAVE_* (what went back: a
 *                 semaphore's signal (a SharedQueue's item or room is one), a mutex, a
 *                 monitor or a monitor's signal)
 *   QUEUE_PUT     object = the stvm_queue; detail = items in it after the put
 *                 (process 0: the embedding thread, or another OS thread's item seen)
 *   QUEUE_TAKE    object = the stvm_queue; detail = items left after the take
 *   MONITOR_WAIT  a process blocks on a monitor: object = the stvm_monitor; detail = the
 *                 condition queue it waits on (it released the monitor), or
 *                 STVM_TRACE_MONITOR_ENTRY: it waits to enter, or to take the monitor
 *                 again after a condition wait
 *   MONITOR_SIGNAL object = the stvm_monitor; detail = the process woken (0: nobody
 *                 waited); extra = the queue it was woken from, or
 *                 STVM_TRACE_MONITOR_ENTRY: the monitor itself was handed to it (a last
 *                 exit, a give-back, or an owner that finished). Entering and leaving
 *                 without waiting are not recorded
 *   QUEUE_CLOSE   the VM's half of a queue's close (stvm_queue_close, or the VM seeing
 *                 a thread's stvm_queue_close_external): object = the stvm_queue;
 *                 detail = items left in it (process 0: the embedding thread, or a
 *                 thread's close seen); the waiters it releases follow as READY */
typedef enum stvm_trace_kind {
    STVM_TRACE_CREATED, STVM_TRACE_READY, STVM_TRACE_RESUMED, STVM_TRACE_SUSPENDED,
    STVM_TRACE_TERMINATED, STVM_TRACE_FINISHED, STVM_TRACE_SWITCH, STVM_TRACE_SEM_WAIT,
    STVM_TRACE_SEM_SIGNAL, STVM_TRACE_SEM_EXCESS, STVM_TRACE_MUTEX_ENTER,
    STVM_TRACE_MUTEX_WAIT, STVM_TRACE_MUTEX_EXIT, STVM_TRACE_MUTEX_HANDOFF,
    STVM_TRACE_TIMER_ARMED, STVM_TRACE_TIMER_DISARMED, STVM_TRACE_TIMER_FIRED,
    STVM_TRACE_DELAY_SCHEDULED, STVM_TRACE_DELAY_EXPIRED, STVM_TRACE_DELAY_CANCELLED,
    STVM_TRACE_IDLE_SLEEP, STVM_TRACE_IO_READY, STVM_TRACE_EXTERNAL, STVM_TRACE_OUTSIDE,
    STVM_TRACE_SOCKET_WAIT, STVM_TRACE_SOCKET_DONE, STVM_TRACE_FFI_CALL,
    STVM_TRACE_FFI_RETURN, STVM_TRACE_INTERRUPT, STVM_TRACE_GIVEN_BACK,
    STVM_TRACE_QUEUE_PUT, STVM_TRACE_QUEUE_TAKE, STVM_TRACE_MONITOR_WAIT,
    STVM_TRACE_MONITOR_SIGNAL, STVM_TRACE_QUEUE_CLOSE,
    STVM_TRACE_KINDS
} stvm_trace_kind;

/* INTERRUPT's detail. */
enum {
    STVM_TRACE_INTR_QUEUED,     /* it runs at the process's next scheduling point */
    STVM_TRACE_INTR_SELF,       /* the caller interrupted itself: it ran at once */
    STVM_TRACE_INTR_CANCELLED   /* a wait of a cancelled process answered EINTR at once */
};

/* GIVEN_BACK's detail: the kind of object the hand-off came from. */
enum {
    STVM_TRACE_GAVE_SIGNAL = 2,   /* a semaphore's signal */
    STVM_TRACE_GAVE_MUTEX = 3,    /* a mutex's ownership */
    STVM_TRACE_GAVE_MONITOR = 5,  /* a monitor's ownership (to its next entrant) */
    STVM_TRACE_GAVE_MONITOR_SIGNAL = 6, /* a monitor's signal (to the next waiter of its
                                           queue) */
    STVM_TRACE_GAVE_MONITOR_WAKE = 7    /* a wake of a monitor's signal-all (nothing to
                                           pass on: every waiter was woken) */
};
/* MONITOR_WAIT's detail and MONITOR_SIGNAL's extra for the monitor's entry (past every
 * queue id; the ring keeps 8 bits of an extra). */
#define STVM_TRACE_MONITOR_ENTRY 0xFF

/* Why the processor went from one process to another (SWITCH's reason). */
enum {
    STVM_TRACE_WHY_PREEMPTED,   /* a higher priority became runnable */
    STVM_TRACE_WHY_WAITED,      /* it waits on a semaphore, mutex or join */
    STVM_TRACE_WHY_YIELDED,     /* primitive 167 */
    STVM_TRACE_WHY_FINISHED,    /* it finished */
    STVM_TRACE_WHY_IDLE,        /* the idle process hands the processor on */
    STVM_TRACE_WHY_SUSPENDED,   /* it suspended itself (primitive 88) */
    STVM_TRACE_WHY_HOST         /* the embedding thread enters stvm_run */
};
/* What ended an IDLE_SLEEP. */
enum {
    STVM_TRACE_END_TIMER,       /* the next deadline (on the simulated clock: its jump) */
    STVM_TRACE_END_IO,          /* a ready descriptor */
    STVM_TRACE_END_EXTERNAL,    /* an external signal or stvm_stop */
    STVM_TRACE_END_TIMEOUT,     /* the relinquish time ran out */
    STVM_TRACE_END_OUTSIDE      /* the simulated clock reached an outside event (stvm_sim_at) */
};
/* What a socket wait waits for (SOCKET_WAIT's detail, SOCKET_DONE's extra). */
enum {
    STVM_TRACE_FOR_DATA,        /* waitForDataFor: (a read) */
    STVM_TRACE_FOR_SEND,        /* waitForSendDoneFor: (a write) */
    STVM_TRACE_FOR_CONNECTION   /* waitForConnectionFor: / waitForAcceptFor: */
};
/* Which runner a callout ran on (FFI_CALL's detail, FFI_RETURN's extra). */
enum {
    STVM_TRACE_FFI_SAME_THREAD, /* stvm_ffi_call: the caller's thread and stack */
    STVM_TRACE_FFI_THREADED,    /* stvm_ffi_call_threaded: the pool's worker */
    STVM_TRACE_FFI_WORKER       /* stvm_ffi_call_on with a worker of its own */
};

typedef struct stvm_trace_event {
    uint64_t seq;       /* 0 for the first event after stvm_trace_start, then +1 */
    uint64_t time_us;   /* the VM clock: UTC us since 1901, simulated or real */
    uint32_t time_ns;   /* ns within that us (real clock; 0 on the simulated one) */
    uint16_t kind;      /* stvm_trace_kind */
    uint16_t reason;    /* SWITCH: STVM_TRACE_WHY_*; IDLE_SLEEP: STVM_TRACE_END_* */
    uint64_t process;   /* process id, 0 = the embedding thread or none (the ring keeps
                           ids modulo 2^48: 9 years at a million processes a second) */
    uint64_t object;    /* see the table above */
    int64_t detail;
    int64_t extra;
} stvm_trace_event;

/* Called for every event recorded, on the VM's thread, inside the scheduler: it must
 * not call stvm functions other than stvm_vm_now_us and stvm_trace_kind_name, nor block.
 * ev is valid during the call only. It is the library's stvm_trace_event: a hook built
 * with an older stvm.h reads the prefix it knows. */
typedef void (*stvm_trace_hook)(stvm_vm *vm, const stvm_trace_event *ev, void *arg);

/* The most events a ring may keep (2^24: 512 MiB, 32 bytes each). */
#define STVM_TRACE_MAX_EVENTS ((size_t)1 << 24)

/* Start recording into a new ring of `events` events (1 .. STVM_TRACE_MAX_EVENTS),
 * dropping the previous ring and its names; sequence numbers and the dropped count
 * start at 0. The first events are READY for every process already on a run queue (the
 * idle process at least), so that a trace begun mid-run knows who was ready. Allocates;
 * never switches.
 * Errors:
 *   EINVAL    vm NULL; events outside 1 .. STVM_TRACE_MAX_EVENTS
 *   ENOMEM    no memory for the ring, or for the names of the processes and objects
 *             that exist: the previous ring, recording or not, is kept as it was
 * (A name given later that finds no memory is left out of the ring: the writers then
 * show the process's id, or the object's stable number.)
 *   ESTATE    a library built with its event points compiled out (-DSTVM_TRACE_POINTS=0,
 *             to measure what they cost: make bench-trace-cost) */
STVM_API int stvm_trace_start(stvm_vm *vm, size_t events);
/* Stop recording; the ring stays for the writers. Never allocates.
 * Errors:
 *   EINVAL    vm NULL
 *   ESTATE    not recording */
STVM_API int stvm_trace_stop(stvm_vm *vm);
/* Events recorded but no longer in the ring (overwritten by newer ones): >= 0, or
 * EINVAL for a NULL vm. 0 when no ring exists. */
STVM_API int64_t stvm_trace_dropped(const stvm_vm *vm);
/* Events in the ring: >= 0, or EINVAL for a NULL vm. */
STVM_API int64_t stvm_trace_count(const stvm_vm *vm);
/* Copy the index-th event in the ring (0 = the oldest kept) into the first out_size
 * bytes of *out.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ESIZE     out_size not a size of stvm_trace_event this library knows
 *   ERANGE    index >= stvm_trace_count (every index when there is no ring) */
STVM_API int stvm_trace_get_(const stvm_vm *vm, size_t index, stvm_trace_event *out,
                             size_t out_size);
#define stvm_trace_get(vm, index, out) \
    stvm_trace_get_((vm), (index), (out), sizeof(stvm_trace_event))
/* Install fn (NULL: none) with arg; it sees events while recording. Replaces the
 * previous hook. Never allocates.
 * Errors:
 *   EINVAL    vm NULL */
STVM_API int stvm_trace_set_hook(stvm_vm *vm, stvm_trace_hook fn, void *arg);
/* Write "name#id" for process id into buf (NUL-terminated, truncated to size): the name
 * it had when it was created or when recording started ("#id" if none is known, "host"
 * for 0). Never allocates.
 * Errors:
 *   EINVAL    vm or buf NULL; size 0
 *   ESTATE    no ring: no trace was started on this VM */
STVM_API int stvm_trace_process_name(const stvm_vm *vm, uint64_t id, char *buf, size_t size);
/* The kind's name ("switch", "sem-signal"), or NULL for a kind that does not exist. */
STVM_API const char *stvm_trace_kind_name(int kind);
/* Write the ring as a text timeline to out: a first line with the counts (dropped
 * included), then one aligned line per event, at most 100 columns, times relative to
 * the trace's start in ms with us. An object is labelled by the name it had at that
 * event (stvm_semaphore_set_name and its kin), a queue's, a socket's or a Delay
 * object's internal semaphore by its owner and role ("frames.items", "queue1.room",
 * "conn.read"), any other by its kind and the order the trace first mentions it
 * ("sem1", "mutex2"). Allocates (temporarily).
 * Errors:
 *   EINVAL    vm or out NULL
 *   ESTATE    no ring: no trace was started on this VM
 *   ESYS      a write to out failed (the lines before it are written)
 *   ENOMEM    no memory for the table that numbers the objects (the lines before it
 *             are written) */
STVM_API int stvm_trace_write_text(stvm_vm *vm, FILE *out);
/* Write the ring as Trace Event JSON (Perfetto, chrome://tracing) to the file at path:
 * one track per process named by a thread_name metadata event, slices for running,
 * ready, waiting, sleeping (on a Delay) and the OS sleep, every slice closed; instant
 * events for signals, timer fires, expiries, descriptors and external signals, named
 * by the event's kind and its object's label as in the text timeline (quotes and
 * backslashes of a name escaped); a "run queue" counter; args.seq on every entry made
 * from an event; otherData.dropped.
 * Allocates (temporarily).
 * Errors:
 *   EINVAL    vm or path NULL
 *   ESTATE    no ring: no trace was started on this VM
 *   ESYS      the file cannot be written: nothing is left at path
 *   ENOMEM    no memory for the tracks or labels: nothing is left at path */
STVM_API int stvm_trace_write_json(stvm_vm *vm, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* STVM_TRACE_H */
