/*
 * The VM struct. One per VM and no mutable globals anywhere: everything a VM needs is
 * reached from here, so two VMs on two OS threads never share state.
 * Layers above (scheduler, primitives, image stubs) keep their state here too; the
 * image side hangs its Delay scheduler off `delay` through hooks, so that this layer
 * need not know its types.
 */
#ifndef STVM_VM_VM_H
#define STVM_VM_VM_H

#include <stdatomic.h>

#include "objects.h"

#define STVM_NUM_PRIORITIES 80
#define STVM_MS_CLOCK_MASK 0x1FFFFFFFu
#define STVM_US_FROM_1901_TO_1970 2177452800000000ull

typedef struct stvm_clock {
    int kind;                       /* STVM_CLOCK_REAL or STVM_CLOCK_SIMULATED */
    uint64_t start_us;              /* UTC us since 1901 when the VM started */
    int64_t mono_start_ns;          /* CLOCK_MONOTONIC at start (real clock) */
    uint64_t sim_now_us;            /* current simulated time */
    uint32_t ms_start;              /* the millisecond clock's value at start */
} stvm_clock;

/* Something the outside world does at a simulated time (stvm_sim_at): the model of a
 * peer on its own CPU, which the VM cannot see coming. */
typedef struct stvm_sim_event {
    uint64_t at_us;
    void (*fn)(stvm_vm *vm, void *arg);
    void *arg;
} stvm_sim_event;

/* How long waking from a simulated OS sleep takes (stvm__sim_set_wake_cost). */
typedef uint64_t (*stvm_sim_wake_fn)(stvm_vm *vm, void *arg, uint64_t requested_us,
                                     uint64_t slept_us, int end);

typedef struct stvm_sim_world {
    stvm_sim_event *events;         /* by time, equal times in the order made */
    size_t n, cap;
    stvm_sim_wake_fn wake_fn;       /* NULL: every wake-up costs cfg.wake_inject_us */
    void *wake_arg;
} stvm_sim_world;

/* The external semaphore table: Cog's lock-free requests/responses counters, so that
 * N requests from any threads become exactly N signals.
 *
 * Slots live in chunks of STVM_EXT_CHUNK_SLOTS, made when a slot of the chunk is first
 * registered (a table of 65,536 slots costs 2 KiB until it is used). Which slots have
 * requests not yet answered is a two-level bitmap, so that the drain costs O(pending)
 * whatever the table's size: bit s%64 of a chunk's pending[s/64] marks slot s of the
 * chunk, and bit w%64 of summary[w/64] marks pending word w of the table (word w of
 * chunk w/STVM_EXT_CHUNK_WORDS). Requesters set a slot's bit, then its word's summary
 * bit, then `pending`, with atomic OR from any thread; the VM thread clears `pending`
 * and then takes words with atomic exchange, so a request that races with a drain is
 * seen by the next one. The counters, not the bits, say how many signals are due. */
#define STVM_EXT_CHUNK_SLOTS 256
#define STVM_EXT_CHUNK_WORDS (STVM_EXT_CHUNK_SLOTS / 64)

typedef struct stvm_ext_chunk {
    _Atomic uint64_t pending[STVM_EXT_CHUNK_WORDS];  /* set by any thread */
    _Atomic uint32_t requests[STVM_EXT_CHUNK_SLOTS]; /* bumped by any thread */
    uint32_t responses[STVM_EXT_CHUNK_SLOTS];        /* VM thread only */
    stvm_semaphore *sems[STVM_EXT_CHUNK_SLOTS];      /* VM thread only; NULL = free slot */
} stvm_ext_chunk;

typedef struct stvm_external_table {
    int size;                       /* slots, 1-based indices 1..size */
    int high;                       /* slots above this were never used: not scanned */
    int first_free;                 /* every slot below this is in use */
    int nchunks;                    /* chunks[] entries: size / STVM_EXT_CHUNK_SLOTS, up */
    int nsummary;                   /* summary words covering the chunks made so far */
    stvm_ext_chunk *_Atomic *chunks;/* made by the VM thread, read by any (acquire) */
    _Atomic uint64_t *summary;      /* one bit per pending word; set by any thread */
    atomic_int pending;             /* some request not yet answered */
    atomic_int sleeping;            /* the VM thread is (about to be) asleep in ppoll */
    int wake_fd;                    /* eventfd that wakes the sleeping VM */
} stvm_external_table;

/* Object memory: boxed integers come from slabs of fixed cells (cheap to allocate,
 * as Spur's eden is); other objects are registered in an address set so that an oop
 * handed to a primitive can be validated without trusting it. */
typedef struct stvm_slab {
    struct stvm_slab *next;
    stvm_large_int *cells;
    size_t count;
} stvm_slab;

typedef struct stvm_objmem {
    stvm_slab *slabs;
    stvm_large_int *free_cells;     /* free list threaded through the digit bytes */
    size_t nfree;                   /* cells on it */
    size_t reserved;                /* of those, kept for reserve_for (objmem.h) */
    const struct stvm_proc *reserve_for;
    uintptr_t *set;                 /* open addressing; 0 empty, 1 tombstone */
    size_t set_cap, set_used, set_tombs;
    uintptr_t recent[32];           /* registered objects validated lately, by a hash of
                                       the address; freeing an object clears its entry */
} stvm_objmem;

/* Stack memory (stack.c): arenas of equal slots, one size class per stack size. */
typedef struct stvm_stack_arena {
    unsigned char *base;            /* nslots slots of slot_size bytes */
    size_t map_bytes;               /* the whole mapping (nslots may shrink) */
    size_t slot_size;
    uint32_t nslots;                /* slots it hands out */
    uint32_t used;                  /* slots handed out at least once (from the bottom) */
    uint8_t guard;                  /* STVM_GUARD_* of every used slot, 0 = none */
    unsigned *valgrind_ids;         /* per slot, its valgrind stack id + 1 (0: none);
                                       NULL outside valgrind (vm/valgrind.h) */
} stvm_stack_arena;

typedef struct stvm_stack_class {
    size_t stack_size;              /* usable bytes, record area included */
    size_t slot_size;               /* guard + stack */
    stvm_stack_arena *current;      /* where never-used slots come from */
    unsigned char **warm;           /* free slots whose pages may still be resident */
    unsigned char **cold;           /* free slots given back to the kernel */
    size_t nwarm, ncold, cap_warm, cap_cold;
    struct stvm_stack_class *next;
} stvm_stack_class;

typedef struct stvm_stackmem {
    stvm_stack_class *classes;
    stvm_stack_arena **arenas;      /* sorted by base, for finding a slot by address */
    size_t narenas, cap_arenas;
    size_t guard_size;              /* bytes below each stack (0: no guard) */
    int method;                     /* STVM_GUARD_* asked for */
    int madvise_ok;                 /* guard install: 1 works, -1 the kernel lacks it */
    long mprotect_budget;           /* guards mprotect may still make, -1 = not known */
    bool on_valgrind;               /* stacks are registered with valgrind */
} stvm_stackmem;

/* The one-shot timer (scheduler/timer.c is the only reader of these fields). */
typedef struct stvm_timer {
    uint64_t deadline_us;           /* absolute VM clock; 0 = disarmed */
    stvm_semaphore *sem;            /* signalled at the deadline */
    bool keeps_alive;               /* the deadline is work stvm_run waits for */
} stvm_timer;

/* The aio layer (aio.c): per descriptor, its one-shot handlers. A descriptor the VM
 * owns (stvm__aio_own) is in the epoll set edge-triggered for every event it was ever
 * armed for (interest); any other one-shot for the events armed (aio.c says why). */
typedef struct stvm_aio_fd {
    int index[2];                   /* external slot to signal on read / write readiness */
    uint8_t armed;                  /* STVM_IO_* handlers armed */
    uint8_t fired;                  /* STVM_IO_* handlers fired, not yet taken */
    uint8_t interest;               /* owned: STVM_IO_* events in its epoll registration */
    bool hangup;                    /* a firing saw an error or hang-up, not yet taken */
    bool in_set;                    /* in the epoll set (disabled while nothing is armed) */
    bool owned;                     /* the VM made it and forgets it before closing it */
} stvm_aio_fd;

typedef struct stvm_aio {
    int epfd;                       /* -1 until set up */
    stvm_aio_fd *fds;               /* indexed by descriptor */
    int cap;
    int narmed;                     /* handlers armed, all descriptors together */
    bool no_pwait2;                 /* epoll_pwait2 answered ENOSYS: epoll_wait from now on */
    uint64_t next_busy_poll_us;     /* busy polling looks again at this VM time */
} stvm_aio;

/* The image side's pool of 4 KiB buffers (image-stubs/network/buffer_pool.c): ByteArrays no
 * SocketStream or socket call holds right now, kept for the next that needs one. They
 * are objects of the object memory, freed with it. */
#define STVM_BUFFER_POOL_MAX 64

typedef struct stvm_buffer_pool {
    stvm_byte_array *free[STVM_BUFFER_POOL_MAX];
    int nfree;
} stvm_buffer_pool;

/* Hooks the image side installs when its Delay scheduler starts. */
typedef struct stvm_delay_hooks {
    void *state;
    void (*destroy)(stvm_vm *vm);
} stvm_delay_hooks;

/* Hooks the SocketPlugin installs on first use (primitives/socket_plugin.c): its
 * module state, and what stvm_vm_free calls to close the descriptors still open. */
typedef struct stvm_socket_hooks {
    void *state;
    void (*destroy)(stvm_vm *vm);
} stvm_socket_hooks;

/* Hooks the FFI installs on first use (primitives/ffi_state.c): its state, what
 * stvm_vm_free calls to stop its worker threads and free its functions and callbacks,
 * and what stvm_run calls as it begins and ends (callbacks from other threads are run
 * only while it runs). last_failure is what stvm_ffi_last_failure answers. */
typedef struct stvm_ffi_hooks {
    void *state;
    void (*destroy)(stvm_vm *vm);
    void (*run_edge)(stvm_vm *vm, bool running);
    int last_failure;
} stvm_ffi_hooks;
struct stvm_trace;

/* Object names (vm/names.h): address -> malloc'd name, open addressing. */
typedef struct stvm_names {
    uintptr_t *keys;                /* 0 empty, 1 tombstone */
    char **values;
    size_t cap, used, tombs;
} stvm_names;

struct stvm_vm {
    stvm_config cfg;
    int64_t si_min, si_max;
    bool events_on;                 /* an event point has work: a ring records or a
                                       modelled cost is set (stvm__tracing) */
    bool switch_watch;              /* a switch has work beyond the switch: events_on,
                                       or cfg.cpu_time (scheduler/cpu_time.c): the one
                                       test a hand-off makes for both */
    bool sim_charging;              /* a modelled cost is being charged (sim_cost.c) */
    uint16_t sim_cost_us[STVM_SIM_COST_OPS];   /* stvm_sim_set_cost; all 0: none */
    struct stvm_trace *trace;       /* the ring while it records, else NULL (vm/trace.h) */
    struct stvm_trace *trace_ring;  /* the ring, recording or kept for the writers */
    stvm_trace_hook trace_hook;     /* stvm_trace_set_hook */
    void *trace_arg;

    /* scheduler */
    stvm_proc *active;           /* NULL: the embedding thread (outside stvm_run) */
    stvm_list runq[STVM_NUM_PRIORITIES];
    uint64_t ready_bits[2];         /* bit p-1 set <=> runq[p-1] non-empty */
    stvm_proc *idle;
    stvm_proc *all;                 /* unfinished processes */
    uint64_t next_pid;
    uint32_t live_user;             /* unfinished processes that are not the VM's own */
    uint32_t live_total;
    stvm_proc *zombie;              /* finished; its stack is released after the switch */
    void *host_sp;                  /* the embedding thread's context inside stvm_run */
    void *host_uctx;
    const void *host_stack_bottom;  /* for AddressSanitizer's fiber annotations */
    size_t host_stack_size;
    int host_timer_slack;           /* the thread's timer slack to restore, or 0 */
    bool running;
    int run_result;
    stvm_stackmem stacks;
    stvm_timer timer;               /* primitives 136 and 242 */
    uint64_t point_clock_us;        /* the clock as a scheduling point last read it */
    uint64_t cpu_stamp_ns;          /* cfg.cpu_time: when the active process (or the
                                       embedding thread) was last charged up to */
    int point_countdown;            /* switches left before the next clock read */
    int run_mode;                   /* STVM_RUN_* of the stvm_run_mode in progress */
    bool run_slept;                 /* STVM_RUN_ONCE: it has waited in the OS */
    bool stopping;                  /* stvm_stop was seen: switch to the host */
    atomic_int stop_requested;      /* stvm_stop, from any thread */
    stvm_aio aio;

    stvm_clock clock;
    stvm_sim_world outside;         /* the simulated clock's outside world */
    stvm_external_table ext;
    stvm_objmem mem;
    stvm_stats stats;
    stvm_delay_hooks delay;
    stvm_socket_hooks sockets;
    stvm_ffi_hooks ffi;
    stvm_buffer_pool buffers;
    /* SharedQueues not yet freed (scheduler/shared_queue.c), so that stvm_vm_free can
     * release what they own beside their object. */
    struct stvm_queue *queues;
    /* Process-local variables not yet freed (scheduler/process_local.c). */
    struct stvm_local *locals;
    /* Names given with stvm_*_set_name (vm/names.h). */
    stvm_names names;
    /* Per object class: record in the trace which internal semaphores an object of that
     * class owns (stvm__trace_member), set by the layer that makes such objects when it
     * makes the first: a queue's, a socket's, a Delay object's. */
    void (*trace_members[STVM_CLASS_COUNT])(stvm_vm *vm, const void *obj);
    /* Between runs: the backend descriptor was made readable for a process that became
     * ready outside stvm_run, and no run has begun since (scheduler/run.c). */
    bool host_told;
    /* The OpenSmalltalk heartbeat's model (vm/heartbeat.h): only with the idle mode
     * STVM_IDLE_OSVM764, NULL otherwise. */
    struct stvm_heartbeat *heartbeat;
    /* The list of live VMs debuggers read (vm/debugger.h); nothing else touches it. */
    bool debug_listed;
    struct stvm_vm *debug_prev, *debug_next;
};

#endif
