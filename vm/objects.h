/*
 * Object layouts the VM relies on. Every non-immediate oop points at an stvm_object
 * header; the fields after it mirror Pharo's slots (Link>>nextLink, Process>>priority,
 * myList, name; Semaphore>>firstLink, lastLink, excessSignals; Mutex owner) so that
 * the scheduler can be read side by side with the Smalltalk it models.
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

typedef struct stvm_proc stvm_proc;

/* Which kind of list a process's myList points at. */
enum { STVM_LIST_RUNQ = 1, STVM_LIST_SEMAPHORE = 2, STVM_LIST_MUTEX = 3 };

/* Pharo's LinkedList/ProcessList: firstLink, lastLink, threaded through nextLink. */
typedef struct stvm_list {
    stvm_proc *first;
    stvm_proc *last;
    uint8_t kind;
} stvm_list;

struct stvm_semaphore {
    stvm_object hdr;
    stvm_list list;                  /* waiting processes, FIFO */
    int64_t excess_signals;          /* Pharo's excessSignals, >= 0 */
    stvm_vm *vm;
    int external_index;              /* 1-based slot in the external table, or 0 */
};

struct stvm_mutex {
    stvm_object hdr;
    stvm_list list;                  /* waiting processes, FIFO */
    stvm_proc *owner;                /* Pharo's owner; NULL when free */
    stvm_vm *vm;
    uint32_t depth;                  /* re-entry count of the C API (prim 186 keeps 1) */
    stvm_mutex *next_owned;          /* the owner's list of mutexes it holds */
};

/* Process flags. */
enum {
    STVM_PF_TERMINATED = 1u << 0,
    STVM_PF_VM_OWN = 1u << 1,        /* idle or timing process */
    STVM_PF_WAIT_ABORTED = 1u << 3,  /* taken off a semaphore by suspend */
};

/* A process is two records.
 *
 * The handle (struct stvm_process) is what stvm_spawn answers and what a Process oop
 * points at: small, in object memory, valid until stvm_vm_free, finished or not.
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
    char *name;                      /* Pharo's name */
    uint64_t id;
    int priority;                    /* the last priority, kept after finishing */
    uint32_t flags;                  /* STVM_PF_VM_OWN, STVM_PF_TERMINATED */
};

/* Bytes at the top of every stack mapping taken by the running state. */
#define STVM_PROC_AREA 256

struct stvm_proc {
    /* touched by every switch, signal and wait: the first cache line */
    stvm_proc *next_link;            /* Pharo's Link>>nextLink */
    stvm_proc *prev_link;            /* ours: valid unless it heads its list */
    stvm_list *my_list;              /* Pharo's myList: the list it is on, or NULL */
    int priority;                    /* Pharo's priority, 1..80 */
    uint32_t flags;
    void *ctx_sp;                    /* saved stack pointer (assembly back end) */
    stvm_vm *vm;
    void *delay;                     /* the Delay it waits on (image side), or NULL */
    stvm_mutex *owned;               /* mutexes this process owns */
    /* colder */
    stvm_process *handle;
    stvm_fn fn;
    void *arg;
    void *uctx;                      /* ucontext_t (portable back end) */
    unsigned char *map_base;         /* the stack mapping, guard page included */
    size_t map_size;
    size_t stack_size;               /* usable stack below this record */
    const char *wait_label;          /* "delay" / "timed wait" while in one */
    stvm_proc *all_prev, *all_next;  /* every unfinished process of the VM */
};

_Static_assert(sizeof(struct stvm_proc) <= STVM_PROC_AREA, "stvm_proc outgrew its area");

#endif
