/*
 * Object layouts the VM relies on, and the checks that tell them apart. Every
 * non-immediate oop points at an stvm_object header; the fields after it mirror
 * Pharo's slots (Link>>nextLink, Process>>priority, myList, name; Semaphore>>firstLink,
 * lastLink, excessSignals; Mutex owner) so that the scheduler can be read side by side
 * with the Smalltalk it models.
 */
#ifndef STVM_VM_OBJECTS_H
#define STVM_VM_OBJECTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stvm.h"

/* Class indices. 0 marks a freed cell, so a stale oop never passes a class test. */
enum {
    STVM_CLASS_FREE = 0,
    STVM_CLASS_LARGE_POSITIVE_INTEGER = 1,
    STVM_CLASS_LARGE_NEGATIVE_INTEGER = 2,
    STVM_CLASS_SEMAPHORE = 3,
    STVM_CLASS_MUTEX = 4,
    STVM_CLASS_PROCESS = 5,
    STVM_CLASS_BYTE_ARRAY = 6,
    STVM_CLASS_SOCKET_HANDLE = 7,    /* the SocketPlugin's record of one socket */
    STVM_CLASS_SOCKET = 8,           /* the image side's Socket (image-stubs/network/socket.h) */
    STVM_CLASS_SOCKET_STREAM = 9,    /* the image side's SocketStream */
    STVM_CLASS_FLOAT = 10,           /* BoxedFloat64: a double (vm/float.h) */
    STVM_CLASS_EXTERNAL_ADDRESS = 11,/* ExternalAddress: a C pointer (vm/address.h) */
    STVM_CLASS_MONITOR = 12,         /* Pharo's Monitor (scheduler/monitor.h) */
    STVM_CLASS_QUEUE = 13,           /* Pharo's SharedQueue (scheduler/shared_queue.h) */
    STVM_CLASS_DELAY = 14,           /* a Delay object (image-stubs/kernel/delay_object.c) */
    STVM_CLASS_LOCAL = 15,           /* a process-local variable (scheduler/process_local.h) */
    STVM_CLASS_COUNT = 16
};

/* Header of every object: class and the byte size of what follows the header. */
typedef struct stvm_object {
    uint32_t class_index;
    uint32_t byte_size;
} stvm_object;

/* A boxed integer: a header and the magnitude in little-endian digit bytes. stvm keeps
 * magnitudes up to 64 bits (Pharo's in-VM LargeInteger primitives 21-37 stop there). */
typedef struct stvm_large_int {
    stvm_object hdr;                 /* byte_size = number of digit bytes, 1..8 */
    uint8_t digits[8];
} stvm_large_int;

/* The other objects that fit a 16-byte cell of the integer slabs (vm/objmem.c), so that
 * making one is a pop from a free list, as a boxed integer is. */
typedef struct stvm_float {
    stvm_object hdr;                 /* byte_size = 8 */
    double value;
} stvm_float;

typedef struct stvm_external_address {
    stvm_object hdr;                 /* byte_size = 8 */
    void *address;                   /* never NULL (a NULL pointer is nil) */
} stvm_external_address;

_Static_assert(sizeof(stvm_float) == sizeof(stvm_large_int), "a float fills one cell");
_Static_assert(sizeof(stvm_external_address) == sizeof(stvm_large_int),
               "an address fills one cell");

/* A ByteArray: a header and byte_size bytes inline after it (Pharo's ByteArray). */
typedef struct stvm_byte_array {
    stvm_object hdr;                 /* byte_size = number of bytes */
    uint8_t bytes[];
} stvm_byte_array;

/* The SocketPlugin's socket record. In Pharo it is a ByteArray of the platform's
 * SQSocket size holding a pointer to private state; here it is an object of its own,
 * so a primitive can tell it from any other oop. Its fields are the Unix plugin's
 * privateSocketStruct. The record outlives its descriptor: primitiveSocketDestroy
 * closes the descriptor and marks the record destroyed, and the record itself goes
 * with stvm_oop_release (or stvm_vm_free). Only primitives/ reads or writes it. */
typedef struct stvm_socket_handle {
    stvm_object hdr;
    stvm_vm *vm;
    int fd;                          /* the descriptor, non-blocking; -1 once closed */
    int family;                      /* AF_INET or AF_INET6 */
    int state;                       /* Pharo's connection status (STVM_SOCKET_*) */
    int error;                       /* errno of the last failed operation, or 0 */
    int sema, read_sema, write_sema; /* external slots: connection, read, write */
    int accepted_fd;                 /* a listener's connection not yet accepted, or -1 */
    bool connecting;                 /* connect() in progress (WaitingForConnection) */
    bool listening;                  /* a listener (WaitingForConnection until accept) */
    bool destroyed;                  /* primitiveSocketDestroy ran: every primitive fails */
    bool send_full;                  /* a send found no room (EAGAIN, or sent less than
                                        asked) and none has since been seen: sendDone
                                        must look */
    bool starved;                    /* a listener whose accept found no descriptor (or
                                        no memory) for a waiting connection: not watched,
                                        not asked again before accept_retry_us or a
                                        descriptor the VM closes (prim_socket.c) */
    uint64_t accept_retry_us;        /* a starved listener's next look (the VM's clock) */
    struct stvm_socket_handle *prev_open, *next_open;   /* handles with a descriptor */
} stvm_socket_handle;

typedef struct stvm_proc stvm_proc;

/* What a list is, which is also why a process on it waits (and, for GIVEN_BACK events,
 * STVM_TRACE_GAVE_*: the numbers are the same). */
enum {
    STVM_LIST_RUNQ = 1,
    STVM_LIST_SEMAPHORE = 2,
    STVM_LIST_MUTEX = 3,
    STVM_LIST_JOIN = 4,              /* processes waiting for a process to finish */
    STVM_LIST_MONITOR = 5,           /* a monitor's entrants (its lock, a mutex) */
    STVM_LIST_MONITOR_QUEUE = 6,     /* a monitor's condition queue */
    STVM_LIST_MONITOR_WAKE = 7,      /* never holds a process: what a monitor's signal-all
                                        hands its waiters is counted here (wait.c) */
};

/* Pharo's LinkedList/ProcessList: firstLink, lastLink, threaded through nextLink.
 * A waiting list's object may not be freed while `pins` is not 0: it counts processes
 * committed to wait on it, on it or not (yet, or any more), such as a timed waiter
 * preempted by the timing process before it joined (scheduler/wait.c). */
typedef struct stvm_list {
    stvm_proc *first;
    stvm_proc *last;
    uint32_t kind : 8;
    /* Processes handed this list's object (a signal, the mutex) that have not yet run
     * to take it (scheduler/wait.c); a SharedQueue's first items are theirs. */
    uint32_t handed : 24;
    uint32_t pins;
} stvm_list;

struct stvm_semaphore {
    stvm_object hdr;
    stvm_list list;                  /* waiting processes, FIFO */
    int64_t excess_signals;          /* Pharo's excessSignals, >= 0 */
    stvm_vm *vm;
    int external_index;              /* 1-based slot in the external table, or 0 */
    uint8_t role;                    /* STVM_SEM_*: what it is to the object it is part of
                                        (for the process listing: a queue's wait shows
                                        the queue); in the padding, so free */
    /* A queue's item count (stvm_queue_open_external): the slot's requests only say
     * "look"; the signals are the items other threads put, counted here, so that a
     * stray stvm_external_signal can never announce an item that is not there. Its top
     * bit (STVM_BUDGET_CLOSED) says that a thread closed the queue
     * (stvm_queue_close_external), which the VM completes when it answers the slot. */
    _Atomic uint64_t *signal_budget;
};
#define STVM_BUDGET_CLOSED ((uint64_t)1 << 63)

/* stvm_semaphore.role. */
enum {
    STVM_SEM_OWN = 0,                /* a semaphore of its own (stvm_semaphore_new, ...) */
    STVM_SEM_QUEUE_ITEMS = 1,        /* a SharedQueue's avail: its readers wait here */
    STVM_SEM_QUEUE_ROOM = 2,         /* a bounded SharedQueue's room: its writers wait */
};

struct stvm_mutex {
    stvm_object hdr;
    stvm_list list;                  /* waiting processes, FIFO */
    stvm_proc *owner;                /* Pharo's owner; NULL when free */
    stvm_vm *vm;
    uint32_t depth;                  /* re-entry count of the C API (prim 186 keeps 1) */
    stvm_mutex *next_owned;          /* the owner's list of mutexes it holds */
};

/* Process flags. The running state keeps those below 1 << 8 (finished, VM's own,
 * terminate, exiting, canary), STVM_PF_TERMINATING and STVM_PF_BACKED_UP; the handle
 * keeps finished, VM's own and the others from 1 << 8 up. */
enum {
    STVM_PF_TERMINATED = 1u << 0,    /* finished */
    STVM_PF_VM_OWN = 1u << 1,        /* idle or timing process */
    STVM_PF_TERMINATE = 1u << 2,     /* terminated by another: exits when it next runs */
    STVM_PF_EXITING = 1u << 3,       /* running its cleanups on the way out */
    STVM_PF_CANARY = 1u << 4,        /* its stack is checked by canary, not a guard */
    STVM_PF_INTERRUPT = 1u << 5,     /* interrupts wait to run in it (stvm_process_interrupt) */
    STVM_PF_CANCELLED = 1u << 6,     /* every wait answers EINTR at once (terminated while
                                        exiting; a timed run's time ran out) */
    STVM_PF_EINTR_NEXT = 1u << 7,    /* interrupted while committed to a wait it had not yet
                                        begun: that wait answers EINTR at once */
    STVM_PF_HELD = 1u << 8,          /* handle: a caller holds it (stvm_spawn's out) */
    STVM_PF_IN_STACK = 1u << 9,      /* handle: lives in the stack's top, goes with it */
    STVM_PF_NAME_MALLOC = 1u << 10,  /* handle: name too long for its inline buffer */
    STVM_PF_TERMINATING = 1u << 11,  /* running state: Pharo's isTerminating, set on every
                                        way into termination before a cleanup runs (the
                                        exit, a terminate with cleanups, a terminate in a
                                        cleanup run by hand, stvm_vm_free) */
    STVM_PF_BACKED_UP = 1u << 12,    /* running state: suspended out of a semaphore wait or
                                        mutex enter by primitive 568 or 578, it waits there
                                        again when resumed (the list is its commitment) */
};

/* How a wait ended (stvm_proc.wait_end). */
enum {
    STVM_WAIT_SIGNALLED = 0,
    STVM_WAIT_TIMED_OUT = 1,
    STVM_WAIT_ABORTED = 2,        /* suspended off the list: ESTATE when resumed */
    STVM_WAIT_INTERRUPTED = 3,    /* an interrupt or a terminate ended it: EINTR */
    STVM_WAIT_CLOSED = 4,         /* the queue it waited on was closed: ECLOSED (a
                                     reader's call answers EEOF) */
};

/* Why a process on a semaphore's list waits, where the list alone does not say
 * (stvm_proc.wait_label; what stvm_process_info.waiting_on says). One byte, in the
 * record's first cache line: a Delay's waiter writes it twice per Delay. */
enum {
    STVM_WL_NONE = 0,
    STVM_WL_DELAY = 1,               /* a Delay's semaphore (stvm_delay_wait_ms, a Delay
                                        object's wait) */
    STVM_WL_QUEUE = 2,               /* a SharedQueue's semaphore (its role says which) */
    STVM_WL_TIMED = 3,               /* a wait bounded by a Delay (DelayWaitTimeout) */
};

/* A process is two records.
 *
 * The handle (struct stvm_process) is what stvm_spawn answers and what a Process oop
 * points at. A handle the caller holds is an object of its own that outlives the
 * process until released; a handle nobody holds lives in the top of the process's
 * stack mapping and goes with it, so a blocked process costs one page in all.
 *
 * The running state (stvm_proc) holds Pharo's slots (nextLink, myList, priority) and
 * the C context. It lives in the top bytes of the process's own stack mapping, so
 * that waking a process touches one page for its record, its stack top and the
 * Delay it waited on: with tens of thousands of sleepers woken in random order, that
 * page (a TLB miss and a few cache misses) is most of what a wake-up costs. It goes
 * away with the stack when the process finishes. */
struct stvm_process {
    stvm_object hdr;
    stvm_proc *core;                 /* NULL once finished */
    stvm_vm *vm;
    char *name;                      /* Pharo's name; inline after the handle */
    uint64_t id;
    int priority;                    /* the last priority, kept after finishing */
    uint32_t flags;                  /* STVM_PF_* */
    stvm_list joiners;               /* processes in stvm_process_join */
    /* Its values of process-local variables (scheduler/process_local.h): they live with
     * the handle, so a held handle of a finished process still answers them. */
    struct stvm_local_value *locals;
    uint64_t cpu_ns;                 /* its CPU time once finished (scheduler/cpu_time.c) */
};

/* Something a process registered for the wait it is in (its Delay, a descriptor's
 * read handler) that must be undone if the process never comes back to undo it itself
 * (it was terminated). It lives in the waiting C frame, on the process's own stack;
 * the code that waits pushes it before and pops it after (scheduler/wait.c). */
typedef struct stvm_wait_guard {
    void (*undo)(stvm_vm *vm, struct stvm_wait_guard *g);
    struct stvm_wait_guard *next;
} stvm_wait_guard;

/* A cleanup registered with stvm_ensure (malloc'd), or by the library itself for a
 * region of its own code (on the process's stack: on_stack, never freed). */
typedef struct stvm_ensure_node {
    stvm_fn fn;
    void *arg;
    struct stvm_ensure_node *next;
    bool on_stack;
} stvm_ensure_node;

/* An interrupt waiting to run in a process (stvm_process_interrupt: malloc'd), or one
 * the library posts from a record its caller made beforehand (not freed: its poster's,
 * which withdraws it if it is still queued when the record goes). */
typedef struct stvm_interrupt {
    stvm_fn fn;                      /* may be NULL: only the wait is ended */
    void *arg;
    struct stvm_interrupt *next;
    bool posters;                    /* the poster's record, never freed here */
} stvm_interrupt;

struct stvm_proc {
    /* touched by every switch, signal and wait: the first cache line */
    stvm_proc *next_link;            /* Pharo's Link>>nextLink */
    stvm_proc *prev_link;            /* ours: valid unless it heads its list */
    stvm_list *my_list;              /* Pharo's myList: the list it is on, or NULL */
    int priority;                    /* Pharo's priority, 1..80 */
    uint16_t flags;                  /* STVM_PF_* below 1 << 8 */
    uint8_t wait_end;                /* STVM_WAIT_*: how the last wait ended */
    /* STVM_WL_*, while in a wait the list does not explain: written twice per Delay (as
     * it waits, and as it returns). Here, in the first line with the rest a Delay's
     * waiter touches: in the colder lines, with 100,000 sleepers, it was a cache miss
     * per Delay. */
    uint8_t wait_label;
    void *ctx_sp;                    /* saved stack pointer (assembly back end) */
    stvm_wait_guard *guards;         /* what its current wait registered, newest first */
    /* Set by whoever ends a wait by handing the waiter what it waited for (a signal or a
     * mutex), cleared by the waiter when it runs again: until
     * then, a terminate or an interrupt gives it back (scheduler/wait.c). In the first
     * line because every hand-off writes it and every woken waiter reads it. */
    stvm_list *handed_from;
    /* The VM clock when it last began to wait (stvm__wait_blocking stores the value the
     * scheduling points last read, vm->point_clock_us: no clock read of its own), for
     * the process listing. In this line, which the wait writes anyway. */
    uint64_t wait_since_us;
    /* colder */
    stvm_vm *vm;
    stvm_process *handle;
    stvm_fn fn;
    void *arg;
    void *uctx;                      /* ucontext_t (portable back end) */
    unsigned char *stack_lo;         /* lowest usable byte of the stack */
    size_t stack_size;               /* usable stack below the top area */
    stvm_list *pinned;               /* the list it is committed to wait on, or NULL */
    stvm_ensure_node *ensures;       /* cleanups, newest first */
    stvm_proc *all_prev, *all_next;  /* every unfinished process of the VM */
    uint8_t guard;                   /* STVM_GUARD_* that protects its stack, 0 = none */
    stvm_mutex *owned;               /* mutexes this process owns */
    struct stvm_interrupt *interrupts;   /* to run in it, oldest first */
    uint32_t cancel_depth;           /* timed runs (stvm_call_within_ms) whose time ran out */
    bool in_interrupt;               /* running an interrupt: the next ones wait their turn */
    /* Terminated while a cleanup it runs by hand (stvm_ensure_pop) was in progress: it
     * exits once that cleanup returns (Pharo 10 completes an unwind block in progress). */
    bool exit_after_cleanup;
    uint16_t by_hand;                /* cleanups stvm_ensure_pop is running now, nested */
    uint64_t id;                     /* its handle's id, readable after the handle is gone
                                        (a trace names a finished process by it) */
    /* What a wait whose semaphore is only a means waits on, for the process listing:
     * set and cleared by the waits that take a system call or more anyway (a socket,
     * a descriptor, a Delay object, a threaded callout); 0 (STVM_WAIT_ON_NOTHING) for
     * every other wait, which the list it is on describes. */
    uint8_t wait_on_kind;            /* STVM_WAIT_ON_* */
    int32_t wait_fd;                 /* STVM_WAIT_ON_FD: the descriptor */
    const void *wait_on;             /* the socket, Delay or FFI function */
    uint64_t cpu_ns;                 /* time it held the VM's thread, while the VM
                                        accounts it (scheduler/cpu_time.c) */
};

/* The top of every stack mapping: the running state, the handle (when nobody holds
 * it) and its name, each on a 64-byte boundary; the first frame starts below. */
#define STVM_PROC_AREA 512
#define STVM_PROC_HANDLE_OFFSET 256
#define STVM_PROC_NAME_OFFSET 384
#define STVM_PROC_NAME_INLINE (STVM_PROC_AREA - STVM_PROC_NAME_OFFSET)

_Static_assert(sizeof(struct stvm_proc) <= STVM_PROC_HANDLE_OFFSET, "stvm_proc outgrew its area");
_Static_assert(offsetof(struct stvm_proc, vm) == 64, "the hot fields fill one cache line");
_Static_assert(STVM_PROC_HANDLE_OFFSET + sizeof(struct stvm_process) <= STVM_PROC_NAME_OFFSET,
               "stvm_process outgrew its area");

/* ---- telling untrusted handles apart (they must point at readable memory) ---- */

static inline bool stvm__is_sem(const stvm_vm *vm, const stvm_semaphore *s)
{
    return s && s->hdr.class_index == STVM_CLASS_SEMAPHORE && s->vm == vm;
}
static inline bool stvm__is_mutex(const stvm_vm *vm, const stvm_mutex *m)
{
    return m && m->hdr.class_index == STVM_CLASS_MUTEX && m->vm == vm;
}
/* A process handle of this VM (finished or not). */
static inline bool stvm__is_proc(const stvm_vm *vm, const stvm_process *h)
{
    return h && h->hdr.class_index == STVM_CLASS_PROCESS && h->vm == vm;
}

/* What every Delay object (stvm_delay, image-stubs/kernel/delay.h) starts with, so that a
 * handle can be checked here without the image side's layout. */
typedef struct stvm_delay_head {
    stvm_object hdr;
    stvm_vm *vm;
} stvm_delay_head;

static inline bool stvm__is_delay(const stvm_vm *vm, const stvm_delay *d)
{
    const stvm_delay_head *h = (const stvm_delay_head *)d;
    return h && h->hdr.class_index == STVM_CLASS_DELAY && h->vm == vm;
}

/* The object whose waiting list l is. */
#define STVM_CONTAINER(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#endif
