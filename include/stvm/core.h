/*
 * stvm/core.h -- the core runtime: version, errors, handles, the configuration, the VM's
 * lifetime, processes, semaphores, mutexes, shared queues, monitors, process-local
 * variables, external signals, the run loop and host event loops, time and Delays, and
 * the VM's counters. Every other stvm header includes this one; <stvm.h> includes them
 * all. Declarations only; C standard headers only.
 *
 * Conventions used by every function of stvm's headers:
 *  - int results are STVM_OK (0) or a negative STVM_E* code; stvm_strerror() names it.
 *  - An operating system error a program acts on has a code of its own (EADDRINUSE,
 *    ECONNRESET, EMFILE, ...: the list below); STVM_ESYS is every other, and then errno
 *    holds the system's code when the call returns.
 *  - A call that fails changes nothing (no half-done state), unless its comment says so.
 *  - "Switches" means the call may run other green processes before it returns
 *    (it is a scheduling point). "Allocates" means it may take memory from the VM.
 *  - Unless a comment says "any thread", a function must be called on the thread that
 *    created the VM or, while stvm_run() is active, from a green process of that VM.
 */
#ifndef STVM_CORE_H
#define STVM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STVM_API __attribute__((visibility("default")))
#else
#define STVM_API
#endif

/* ---- Version ------------------------------------------------------------------- */
#define STVM_VERSION_MAJOR 0
#define STVM_VERSION_MINOR 3
#define STVM_VERSION_PATCH 0
#define STVM_VERSION_STRING "0.3.0"
/* The shared library's soname is libstvm.so.STVM_ABI_VERSION. It changes only when a
 * binary built against an earlier header of the same number could break: a function or
 * field removed, retyped or reordered, a code or constant given another meaning
 * (include/README.md, "When the soname changes"). Appending a field to a public struct
 * does not change it (see "Structs that grow" below). The version macros live here
 * only. */
#define STVM_ABI_VERSION 2
/* 0xMMmmpp: compare with stvm_version() to catch a header/library mismatch. */
#define STVM_VERSION_HEX \
    ((STVM_VERSION_MAJOR << 16) | (STVM_VERSION_MINOR << 8) | STVM_VERSION_PATCH)

/* The version of the linked library, as STVM_VERSION_HEX and as text. Never fail. */
STVM_API unsigned stvm_version(void);
STVM_API const char *stvm_version_string(void);

/* "asm-x86_64", "asm-aarch64" or "ucontext": the context-switch back end the library was
 * built with. */
STVM_API const char *stvm_context_backend(void);

/* ---- For benchmarks only -------------------------------------------------------
 * Not for embedders: a hook stvm-bench uses to show what the bare context switch costs
 * beside the scheduler's (stvm-bench micro). It is exported and keeps the ABI rules
 * like every other call, but a program that embeds the VM has no use for it. */

/* Measure the bare context switch of this back end: two stacks switching to each other
 * `iterations` times (no scheduler, no VM). Stores ns per switch. A second or so for
 * 10^8.
 * Errors:
 *   EINVAL    iterations 0 or above 2^63, or ns_per_switch NULL
 *   ENOMEM    the two stacks could not be mapped
 *   EBUSY     a VM runs on this thread (the measurement would take over its state) */
STVM_API int stvm_measure_raw_switch(uint64_t iterations, double *ns_per_switch);

/* ---- Errors -------------------------------------------------------------------- */
/* Every error is one row: name, code, text. The constants, stvm_strerror() and
 * stvm_err_name() are all made from this list, so a new error is one line here.
 * A code is ABI: its number keeps its meaning; a new error takes the next free negative
 * number. Each text is true of every call that answers the code; what a code means for
 * one call is in that call's "Errors:" list below. */
#define STVM_ERRNO_MAP(XX)                                                              \
    XX(OK, 0, "success")                                                                \
    XX(EINVAL, -1, "invalid argument")           /* NULL, wrong kind or out of range */ \
    XX(ENOMEM, -2, "out of memory")              /* heap or stack memory */            \
    XX(EDEADLOCK, -3, "deadlock: no process can ever run again")                        \
    XX(ESTATE, -4, "not allowed in the present state (of the object, or of a waiting "   \
                   "process suspended meanwhile)")                                      \
    XX(EPERM, -5, "caller does not own the mutex or monitor")                           \
    XX(ETIMEDOUT, -6, "timed out")                                                      \
    XX(ERANGE, -7, "value out of range")         /* a duration, an integer result */    \
    XX(ENOTPROC, -8, "not called from a green process of this VM")                      \
    XX(EBUSY, -9, "a VM is already running")     /* stvm_run: runs do not nest */       \
    XX(EFULL, -10, "full: the external semaphore table has no free slot")               \
    XX(ESYS, -11, "operating system call failed (errno says why)")                     \
    XX(EPRIM, -12, "primitive failed")           /* see stvm_primitive_call */        \
    XX(ECLOSED, -13, "closed on this side: the queue takes no more items, or the "      \
                     "connection was shut for writing")                                 \
    XX(ECONNREFUSED, -14, "connection refused")                                         \
    XX(ESTOPPED, -15, "stopped by stvm_stop")    /* stvm_run: run again to go on */   \
    XX(EPROTO, -16, "malformed message")         /* a peer broke its protocol */      \
    XX(EWAITING, -17, "another process already waits on it") /* one waiter per role */ \
    XX(EINUSE, -18, "still in use: a waiting process, its owner, a pending call or "    \
                    "another object holds it")                                          \
    XX(EINTR, -19, "the wait was interrupted (nothing was taken)")                      \
    XX(ESIZE, -20, "struct size unknown to this library (from a newer stvm.h, or not "  \
                   "a whole number of fields)")                                         \
    XX(EEOF, -21, "end of data: the peer shut its side and all it sent was read, or "   \
                  "the queue was closed and is empty")                                  \
    XX(ECONNRESET, -22, "connection reset by the peer")                                 \
    XX(EPIPE, -23, "broken pipe: the peer can no longer receive")                       \
    XX(EADDRINUSE, -24, "address already in use")                                       \
    XX(EADDRNOTAVAIL, -25, "address not available on this machine")                     \
    XX(ENETUNREACH, -26, "network unreachable")                                         \
    XX(EHOSTUNREACH, -27, "host unreachable")                                           \
    XX(EMFILE, -28, "too many open files (this process's or the system's limit)")      \
    XX(EACCES, -29, "permission denied")                                                \
    XX(ENOENT, -30, "no such file or directory")  /* a Unix socket's path */           \
    XX(ENOTFOUND, -31, "host name not found")                                           \
    XX(EAGAIN, -32, "not available now (a try that does not wait found nothing)")

typedef enum stvm_errno {
#define STVM__ERRNO_ENUM(name, code, text) STVM_##name = (code),
    STVM_ERRNO_MAP(STVM__ERRNO_ENUM)
#undef STVM__ERRNO_ENUM
} stvm_errno;

/* Static text for any code (unknown codes get a generic text). Never NULL. */
STVM_API const char *stvm_strerror(int err);
/* The symbolic name ("STVM_EINVAL"), or "STVM_E?" for an unknown code. */
STVM_API const char *stvm_err_name(int err);

/* ---- Handles ------------------------------------------------------------------- */
typedef struct stvm_vm stvm_vm;
typedef struct stvm_process stvm_process;
typedef struct stvm_semaphore stvm_semaphore;
typedef struct stvm_mutex stvm_mutex;

/* An object pointer: a tagged machine word. SmallIntegers are immediates; everything
 * else (LargePositiveInteger, Semaphore, Mutex, Process) points into object memory.
 * STVM_NIL is nil. */
typedef uintptr_t stvm_oop;
#define STVM_NIL ((stvm_oop)0)
/* The two Booleans, answered by comparison and critical-section primitives. Neither
 * can be mistaken for a SmallInteger (bit 0 clear) or an object (not 16-aligned). */
#define STVM_FALSE ((stvm_oop)2)
#define STVM_TRUE ((stvm_oop)6)

/* ---- Priorities (Pharo's named levels) ------------------------------------------ */
#define STVM_PRIORITY_MIN 1
#define STVM_PRIORITY_MAX 80
#define STVM_PRIORITY_IDLE 10              /* SystemRockBottomPriority: the idle process */
#define STVM_PRIORITY_SYSTEM_BACKGROUND 20
#define STVM_PRIORITY_USER_BACKGROUND 30
#define STVM_PRIORITY_USER_SCHEDULING 40   /* the UI process in Pharo */
#define STVM_PRIORITY_USER_INTERRUPT 50
#define STVM_PRIORITY_LOW_IO 60
#define STVM_PRIORITY_HIGH_IO 70
#define STVM_PRIORITY_TIMING 80            /* the Delay scheduling process */

/* ---- Structs that grow -----------------------------------------------------------
 * Six structs cross the boundary by pointer: stvm_config (filled by the caller, read by
 * the library) and stvm_process_info, stvm_stream_stats, stvm_trace_event, stvm_stats
 * and stvm_ffi_stats (written by the library into the caller's memory). A new field is
 * only ever appended to one of them, and every call that reads or writes one is told
 * the struct's size as the calling code's stvm.h declares it: the names callers use
 * (stvm_vm_get_stats, stvm_config_init, ...) are macros that add sizeof(struct) to a call
 * of the exported function of the same name with a trailing '_', the way zlib's
 * deflateInit passes sizeof(z_stream). So a program built with an older, smaller struct
 * keeps working with a newer library: the library reads or writes only that prefix
 * (a shorter config gets the defaults of the fields it lacks) and never touches a byte
 * past it. A size that is larger than the library's struct (a newer stvm.h), that
 * holds no field, or that cuts a field in two answers STVM_ESIZE and changes nothing.
 * A binding that cannot use the macros (an FFI) calls the '_' function with the size of
 * its own copy of the struct. A trace hook is handed the library's struct, never smaller
 * than the hook's. include/README.md has the whole rule. */

/* ---- Configuration ------------------------------------------------------------- */
#define STVM_DELAY_CLOCK_MS 0   /* Delays on primitives 135/136 (Pharo before 2015) */
#define STVM_DELAY_CLOCK_US 1   /* Delays on primitives 240/242 (Pharo 4 and later) */
#define STVM_CLOCK_REAL 0       /* monotonic time, anchored to UTC when the VM starts */
#define STVM_CLOCK_SIMULATED 1  /* virtual time: jumps to the next deadline when idle */

/* How a stack overflow is caught (docs/scheduler.md, "Stacks"). AUTO takes the first
 * that works: MADVISE guard regions (Linux 6.13 and later: no kernel map entry per
 * stack), MPROTECT guard regions while they fit half of the free vm.max_map_count
 * budget, then CANARY. A guard region faults on the first touch and the process is
 * named before the program aborts; a canary is checked whenever the process switches
 * away and at stvm_checkpoint, so the overflow is named later: by then it may have
 * written into the guard region, and into the stack below it if it went deeper than
 * the guard between two checks (an endless recursion that never switches is not
 * stopped by a canary). */
#define STVM_GUARD_AUTO 0
#define STVM_GUARD_MADVISE 1    /* if the kernel lacks it, as MPROTECT */
#define STVM_GUARD_MPROTECT 2   /* past the map budget, as CANARY */
#define STVM_GUARD_CANARY 3

/* What the idle process does when nothing can run (docs/io.md; the OpenSmalltalk
 * heartbeat's model, docs/upstream.md). */
#define STVM_IDLE_POLL 0    /* wait in epoll for the earliest of the relinquish time, the
                               next deadline, IO readiness and an external signal (the
                               VM since 2017) */
#define STVM_IDLE_LEGACY 1  /* waits under 1/60 s: poll IO without waiting, sleep the
                               whole time without looking at IO (an external signal still
                               ends it, as SIGIO did), poll again (the VM before 2017) */
#define STVM_IDLE_SPIN 2    /* never sleep in the OS: poll IO and return at once */
#define STVM_IDLE_OSVM764 3 /* the OpenSmalltalk VM after its PR #764 (2026), for
                               opensmalltalk-vm #785 (docs/upstream.md): a model of its
                               heartbeat (a cached clock that a thread advances every
                               2 ms, every osvm764_idle_beat_us while the VM is flagged
                               idle, each beat checking the timer against it) and of
                               #764's idle sleep (the requested time ignored: until the
                               deadline as the cached clock sees it, at most 500 ms, the
                               VM flagged idle meanwhile); osvm764_fixes picks #785's
                               fixes. On the real clock the heartbeat is a thread. For
                               experiments: a due timer waits for a beat, and the VM
                               spins meanwhile, as that VM does */
#define STVM_IDLE_MODES 4   /* how many: a mode is 0 .. STVM_IDLE_MODES - 1 */

/* #785's two fixes to STVM_IDLE_OSVM764, for stvm_config.osvm764_fixes. */
#define STVM_OSVM764_FIX_CLOCK 1       /* A: the idle sleep updates the cached clock after
                                          it sleeps */
#define STVM_OSVM764_FIX_IDLE_FLAG 2   /* B: the VM is not flagged idle while a Delay is
                                          pending (the heartbeat keeps its 2 ms beat) */

/* Idle quanta for stvm_config.idle_relinquish_us. */
#define STVM_RELINQUISH_UNTIL_DUE 0      /* sleep until something is due (the default) */
#define STVM_RELINQUISH_PHARO5_US 1000   /* Pharo 4 and 5: the idle process wakes 1,000/s */
#define STVM_RELINQUISH_PHARO_US 50000   /* current Pharo (IdleTime): 20 wake-ups/s */

typedef struct stvm_config {
    int smallint_bits;          /* 31 (V3/Spur32) or 61 (Spur64); default 61 */
    bool preemption_yields;     /* preempted process to the back (true) or front of its
                                   queue; default true, as in Pharo */
    size_t stack_size;          /* bytes per process stack, 0 = default (16 KiB); rounded
                                   up to pages; 8 KiB .. 64 MiB. The top 512 bytes hold
                                   the process's record, handle and name */
    bool stack_guard;           /* detect stack overflow (see STVM_GUARD_*); default
                                   true. false: stacks lie side by side, unchecked */
    int delay_clock;            /* STVM_DELAY_CLOCK_MS or _US; default _US */
    int clock;                  /* STVM_CLOCK_REAL or _SIMULATED; default _REAL */
    uint64_t sim_start_us;      /* simulated clock: UTC microseconds since 1901 at start;
                                   0 = the real UTC time when the VM is created;
                                   at most 2^62 (the VM clock's end) */
    uint32_t ms_clock_start;    /* initial millisecond-clock value, 0 .. 0x1FFFFFFF;
                                   both clocks; default 0 */
    uint32_t idle_relinquish_us;/* the idle process's quantum: how long one OS wait
                                   may last when nothing can run (what Pharo's idle
                                   process passes to primitive 230); 0 =
                                   STVM_RELINQUISH_UNTIL_DUE, the default: until the
                                   next deadline, ready descriptor or external signal,
                                   so an idle VM does not wake; Pharo's quanta are
                                   STVM_RELINQUISH_PHARO5_US and STVM_RELINQUISH_PHARO_US
                                   (a wake-up per quantum while idle); 0 .. 10,000,000 */
    int external_table_size;    /* slots for stvm_external_register; default 65536
                                   (three per socket), 1 .. 65536; memory is taken in
                                   chunks of 256 slots (4 KiB) as slots are used */
    size_t stack_guard_size;    /* bytes of guard region below each stack, 0 = default
                                   (64 KiB); rounded up to pages; 4 KiB .. 64 MiB.
                                   Address space only. With a MADVISE or MPROTECT guard,
                                   frames up to this size are caught whatever their
                                   layout; under CANARY the region is ordinary memory */
    int stack_guard_method;     /* STVM_GUARD_*; default STVM_GUARD_AUTO */
    int idle_mode;              /* STVM_IDLE_*; default STVM_IDLE_POLL */
    uint32_t busy_poll_ms;      /* while processes run, look for ready descriptors at
                                   scheduling points at most this often (Cog's
                                   ioProcessEvents); 0 = at every one; default 20;
                                   0 .. 1000 */
    uint32_t wake_inject_us;    /* extra latency after every OS sleep that ends, to model
                                   a platform with slow wake-ups (a spin on the real
                                   clock; on the simulated one the clock moves on by it
                                   after each of the idle process's jumps); default 0;
                                   0 .. 1,000,000 */
    uint32_t timer_slack_us;    /* how late the VM may wake for a deadline, so that
                                   neighbouring deadlines share one wake-up (the thread's
                                   timer slack); 0 = exact; default 50; 0 .. 1000 */
    int ffi_workers;            /* OS threads of the FFI worker pool that
                                   stvm_ffi_call_threaded hands calls to (and
                                   stvm_tcp_connect its host name lookups), started on
                                   its first call; default 2; 1 .. 64 */
    int ffi_callback_priority;  /* priority of the process that runs FFI callbacks
                                   arriving from other threads (Pharo's callback queue
                                   process runs at highIOPriority); default 70; 1 .. 80 */
    uint32_t ffi_spin_us;       /* how long an FFI worker out of calls, and a process
                                   waiting for a worker or a foreign callback with nothing
                                   else to run, look for the next event before sleeping
                                   in the OS (on a machine where the VM's thread may use
                                   one CPU only, never); 0 = never; default 50;
                                   0 .. 10000 */
    uint32_t osvm764_fixes;     /* STVM_OSVM764_FIX_* or'd, with STVM_IDLE_OSVM764 only;
                                   default 0 (#764 as merged); 0 .. 3 */
    uint32_t osvm764_idle_beat_us; /* STVM_IDLE_OSVM764: the heartbeat's period while
                                   the VM is flagged idle; 0 = 50,000 (#764's IDLE_BEAT_MS);
                                   0 or 2,000 .. 1,000,000 */
    bool cpu_time;              /* charge each process the time it holds the VM's thread
                                   (stvm_process_info.cpu_ns): the clock is read at every
                                   switch, which costs a hand-off a few ns (docs/
                                   debugging.md, "A slow process"); default false: a
                                   switch then pays nothing for it */
    uint8_t unused_1[7];        /* fills the struct to its alignment (include/README.md,
                                   "Structs that grow"); never given a meaning */
} stvm_config;

/* Fill cfg with the defaults above (cfg_size bytes of it: the macro passes the caller's
 * sizeof). Never allocates.
 * Errors:
 *   EINVAL    cfg NULL
 *   ESIZE     cfg_size not a size of stvm_config this library knows: nothing written */
STVM_API int stvm_config_init_(stvm_config *cfg, size_t cfg_size);
#define stvm_config_init(cfg) stvm_config_init_((cfg), sizeof(stvm_config))

/* Check a configuration as stvm_vm_create will: STVM_OK, or EINVAL with the first bad
 * field, its value and its allowed range written into why (NUL-terminated, truncated
 * to size; why may be NULL when size is 0). A NULL cfg is EINVAL; a cfg_size this
 * library does not know is ESIZE (why says so). Fields past cfg_size are checked at
 * their defaults. Never allocates. */
STVM_API int stvm_config_check_(const stvm_config *cfg, char *why, size_t size,
                                size_t cfg_size);
#define stvm_config_check(cfg, why, size) \
    stvm_config_check_((cfg), (why), (size), sizeof(stvm_config))

/* The idle mode's name, the one word every tool and document uses for it: "poll",
 * "legacy", "spin" and "osvm764" for STVM_IDLE_POLL .. STVM_IDLE_OSVM764; NULL for a
 * number that is no mode. A tool reading a name looks it up among the names of 0 ..
 * STVM_IDLE_MODES - 1. Never allocates, never switches; callable from any thread. */
STVM_API const char *stvm_idle_mode_name(int mode);

/* ---- VM lifetime --------------------------------------------------------------- */

/* Create a VM (with its idle process) and store it in *out. cfg NULL = defaults; a
 * cfg of an older, smaller stvm_config (cfg_size) gets the defaults of the fields it
 * lacks. Allocates. On error *out is left unchanged. (Before 0.3.0: stvm_vm_new(out,
 * cfg), the output first; stvm/deprecated.h keeps that name for one release.)
 * Errors:
 *   EINVAL    out NULL; a config field out of range (stvm_config_check names it)
 *   ESIZE     cfg given and cfg_size not a size of stvm_config this library knows
 *   ENOMEM    no memory for the VM, its tables or the idle process's stack
 *   ESYS      an operating system call failed (epoll, the wake-up descriptor, the
 *             clock) */
STVM_API int stvm_vm_create_(const stvm_config *cfg, stvm_vm **out, size_t cfg_size);
#define stvm_vm_create(cfg, out) stvm_vm_create_((cfg), (out), sizeof(stvm_config))

/* Release the VM and everything it allocated: processes (their stacks), semaphores,
 * mutexes, boxed integers, process-local variables (each value left handed to its
 * destroy_fn, after the processes' cleanups ran). Handles into the VM become invalid.
 * NULL is ignored.
 * Must not be called from inside stvm_run. */
STVM_API void stvm_vm_free(stvm_vm *vm);

/* Copy the configuration the VM runs with (defaults filled in) into the first out_size
 * bytes of *out.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ESIZE     out_size not a size of stvm_config this library knows */
STVM_API int stvm_vm_config_(const stvm_vm *vm, stvm_config *out, size_t out_size);
#define stvm_vm_config(vm, out) stvm_vm_config_((vm), (out), sizeof(stvm_config))

/* ---- Processes ----------------------------------------------------------------- */
typedef void (*stvm_fn)(stvm_vm *vm, void *arg);

/* Create a process running fn(vm, arg) at priority 1..80 on its own stack and make it
 * runnable, like Pharo's forkAt:. Called from a process, a new process of strictly
 * higher priority runs before stvm_spawn returns (switches); one of equal or lower
 * priority waits its turn at the back of its run queue. Called from the embedding
 * thread (outside stvm_run) it only queues the process. name is copied (NULL = "").
 *
 * Lifetime: a finished process gives its stack back at once. With out NULL nobody
 * holds its handle: the handle (what stvm_vm_active_process answers inside it) is valid
 * while the process lives and goes with it. With out given, the caller holds the
 * handle: it stays valid after the process finished (state TERMINATED) until the
 * caller gives it back with stvm_process_release or stvm_process_join. A process's
 * process-local values live with its handle and go with it. Called from a user process,
 * the new process inherits that process's inheritable values (see "Process-local
 * variables") before it runs. Allocates.
 * Errors:
 *   EINVAL    vm or fn NULL; priority outside 1..80
 *   ENOMEM    no memory for the stack, the handle or the inherited values (no
 *             inherit_fn was called) */
STVM_API int stvm_spawn(stvm_vm *vm, int priority, const char *name, stvm_fn fn,
                        void *arg, stvm_process **out);

/* As stvm_spawn with a stack of stack_size bytes (0 = the VM's default). */
STVM_API int stvm_spawn_sized(stvm_vm *vm, int priority, const char *name, stvm_fn fn,
                              void *arg, size_t stack_size, stvm_process **out);

/* As stvm_spawn, but the process is created suspended (Pharo's newProcess): it runs
 * only after stvm_process_resume. */
STVM_API int stvm_spawn_suspended(stvm_vm *vm, int priority, const char *name,
                                  stvm_fn fn, void *arg, size_t stack_size,
                                  stvm_process **out);

/* Run the VM's processes on the calling thread until every process other than the
 * VM's own (idle, timing) has finished: then STVM_OK. If nothing can ever run again
 * (no runnable process, no pending delay or timed wait, no waiter on a registered
 * external semaphore) it returns STVM_EDEADLOCK, and the VM may be given more work and
 * run again.
 * Errors:
 *   EDEADLOCK nothing can ever run again: print stvm_vm_blocked_report, which names
 *             each blocked process, what it waits on and who holds that, to a cycle or
 *             to a wait nothing can end (docs/debugging.md, "A deadlock")
 *   EBUSY     this VM is already running (on any thread), or any VM's stvm_run is
 *             active on the calling thread: runs do not nest; run another VM on
 *             another thread */
STVM_API int stvm_run(stvm_vm *vm);

/* Let the other runnable processes of the caller's priority run first (primitive 167).
 * Like every scheduling point it first handles due timers and external signals, so a
 * strictly higher process they woke runs first; with nothing else runnable it returns
 * at once. Switches.
 * Errors:
 *   ENOTPROC  not called from a green process of vm on its thread */
STVM_API int stvm_yield(stvm_vm *vm);

/* The running green process, or NULL on the embedding thread outside stvm_run. */
STVM_API stvm_process *stvm_vm_active_process(stvm_vm *vm);

/* A preemption checkpoint for long-running C code in a process: handles due timers and
 * external signals and lets a strictly higher priority process that became runnable
 * preempt the caller. Cheap when nothing is due (a flag and a clock compare).
 * Returns 1 if another process ran, 0 if not, STVM_EINTR when the caller's waits are
 * cancelled (a timed run's time ran out, or it was terminated while exiting: the C code
 * should return), or ENOTPROC. Switches. */
STVM_API int stvm_checkpoint(stvm_vm *vm);

/* The most one stvm_work_us call computes (1 s); longer work is several calls. */
#define STVM_MAX_WORK_US 1000000u

/* Compute for us microseconds in the active process: the model of CPU work (a logging
 * subscriber's, a parser's). On the real clock a spin with checkpoints between slices;
 * on the simulated clock the clock itself moves, stopping at each timer deadline and
 * outside-world event (stvm_sim_at) on the way, so that what is due happens, and may
 * preempt, at its own instant. Time others ran meanwhile does not count as the caller's
 * work. Switches (at the checkpoints); never allocates.
 * Errors:
 *   EINVAL    vm NULL
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ERANGE    us > STVM_MAX_WORK_US
 *   EINTR     the caller's waits are cancelled (see stvm_checkpoint): the work stopped */
STVM_API int stvm_work_us(stvm_vm *vm, uint64_t us);

/* Primitive 87: make a suspended process runnable; preempts the caller if strictly
 * higher. Switches.
 * Errors:
 *   EINVAL    vm or p NULL; p not a process of this VM
 *   ESTATE    p is running, already on a run queue or waiting list, or finished */
STVM_API int stvm_process_resume(stvm_vm *vm, stvm_process *p);

/* Primitive 88: take a process off whatever list it is on (run queue, semaphore,
 * mutex) and leave it suspended; suspending the active process switches away.
 * A process taken off a semaphore does not consume a signal; resumed later, its
 * stvm_semaphore_wait returns STVM_ESTATE. A process that suspends itself inside a
 * cleanup and is terminated meanwhile is brought back by the terminate, not by a
 * resume, and this answers EINTR. Switches.
 * Errors:
 *   EINVAL    vm or p NULL; p not a process of this VM
 *   ESTATE    p already suspended or finished; p one of the VM's own processes
 *   EINTR     p is the caller, and it was terminated in a cleanup (before the call: it
 *             is not suspended, for it waits no more; or while suspended: the terminate
 *             ended the suspension), see stvm_process_terminate */
STVM_API int stvm_process_suspend(stvm_vm *vm, stvm_process *p);

/* End a process. Its C code is not resumed (no unwinding of C frames), but its
 * cleanups (stvm_ensure) run, newest first, in the process itself, like Pharo's
 * ensure: blocks; then mutexes it still owns pass to their next waiter, its joiners
 * wake and its stack is released. Terminating the active process does not return.
 * Terminating another: it is taken off its list and any delay or timed wait it had is
 * unscheduled. Without cleanups it finishes before this call returns. With cleanups it
 * runs them at once, at least at the caller's priority (the caller waits at the front
 * of its run queue); called from the embedding thread outside stvm_run, they run at
 * the next stvm_run.
 * A process terminated again while its cleanups run, or terminated while it runs one by
 * hand in stvm_ensure_pop (Pharo 10's rule) completes the cleanup it is in, then runs
 * the rest, but waits no more: the wait it is in, and
 * every later one, answers STVM_EINTR at once (as do stvm_checkpoint, stvm_work_us and
 * a stvm_process_suspend of itself, and a suspension of itself it is in ends with
 * EINTR). From the terminate on the process reads terminating (stvm_process_info), a
 * cleanup in progress included, as Pharo's isTerminating is set before the unwinding.
 * Called by such a process on itself, this returns STVM_OK and the cleanup goes on.
 * Whether the cleanups have ended when this returns depends on them: one that waits, or
 * wakes a process of higher priority than the caller, lets this return first (the
 * process then shows terminating). A process handed a signal or a mutex that it had
 * not yet run to take gives it back (to the next waiter). Terminating a process that
 * has finished (held handle) changes nothing and answers STVM_OK, as Pharo's terminate
 * of a terminated process does. Switches.
 * Errors:
 *   EINVAL    vm or p NULL; p not a process of this VM
 *   ESTATE    p one of the VM's own processes */
STVM_API int stvm_process_terminate(stvm_vm *vm, stvm_process *p);

/* Interrupt a process (Pharo's Process>>signalException:): fn(vm, arg) runs in p, in
 * p's own context, at p's next scheduling point, before p goes on. If p waits (on a
 * semaphore, mutex, Delay, descriptor, socket, host name lookup, join or threaded
 * callout) its wait ends now: p is made runnable (preempting the caller if strictly
 * higher), runs fn, and the call it waited in answers STVM_EINTR having taken nothing
 * (a signal or item it had been handed goes back; a threaded callout's C call goes on
 * in its thread and its result is dropped). A ready process runs fn when it next runs;
 * a suspended one when it is resumed (one suspended inside a wait still answers
 * STVM_ESTATE there). On the caller itself fn runs at once. fn may be NULL (only the
 * wait ends); fn may wait; several interrupts run oldest first. From a green process
 * or the embedding thread outside stvm_run. Allocates; switches.
 * Errors:
 *   EINVAL    vm or p NULL; p not a process of this VM
 *   ESTATE    p already finished; p one of the VM's own processes
 *   ENOTPROC  called from another thread while the VM runs
 *   ENOMEM    no memory for the interrupt's record (nothing changed) */
STVM_API int stvm_process_interrupt(stvm_vm *vm, stvm_process *p, stvm_fn fn, void *arg);

/* Give back a handle the caller holds (from stvm_spawn's out): at once if the process
 * has finished, else when it finishes; its process-local values go with it (destroy_fn).
 * The handle must not be used afterwards. Never switches.
 * Errors:
 *   EINVAL    vm or p NULL; p not a process of this VM
 *   ESTATE    nobody holds this handle: spawned without out, already released, or a
 *             VM's own process */
STVM_API int stvm_process_release(stvm_vm *vm, stvm_process *p);

/* Wait until the process has finished, then give its handle back as
 * stvm_process_release does. timeout_ms: -1 forever, 0 = only check, else at most that
 * long (through the Delay scheduler, as every timed wait). Several processes may join
 * the same process; the handle goes when the last of them returns. Switches.
 * Errors:
 *   EINVAL    vm or p NULL; p not a process of this VM; p the caller itself;
 *             timeout_ms below -1
 *   ESTATE    the handle is not held (see stvm_process_release); or the caller was
 *             suspended while it waited, and resumed
 *   ETIMEDOUT p still runs after timeout_ms (0: at once); the handle stays held
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ERANGE    timeout_ms too long (see stvm_delay_wait_ms)
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_process_join(stvm_vm *vm, stvm_process *p, int64_t timeout_ms);

/* Register a cleanup for the running process: fn(vm, arg) runs when the process
 * finishes, returns from its function or is terminated, newest first, in the process
 * itself (so it may wait). Cleanups of processes still unfinished at stvm_vm_free run
 * there, on the calling thread with no active process (they must not wait). One
 * registered inside a library call's fn (stvm_monitor_critical's, say) and not popped
 * there stays registered when that call returns. Allocates.
 * Errors:
 *   EINVAL    vm or fn NULL
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ENOMEM    no memory for the cleanup's record */
STVM_API int stvm_ensure(stvm_vm *vm, stvm_fn fn, void *arg);

/* Remove the newest cleanup of the running process, running it first when run is true
 * (the end of Pharo's ensure: block on the normal path). A process terminated while fn
 * runs completes fn (whose waits then answer STVM_EINTR at once), runs its other
 * cleanups and finishes: this call does not return then. Switches if fn does.
 * Errors:
 *   EINVAL    vm NULL
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    the running process has no cleanup of its own registered since it
 *             entered the library call it runs in (stvm_semaphore_critical's fn, say) */
STVM_API int stvm_ensure_pop(stvm_vm *vm, bool run);

/* Change a process's priority (1..80) as Pharo's Process>>priority: does: a ready
 * process moves to the back of its new queue and preempts the caller if now strictly
 * higher; the active process lowered below a runnable one yields to it. Switches.
 * Errors:
 *   EINVAL    vm or p NULL; p not a process of this VM; priority outside 1..80
 *   ESTATE    p finished; p one of the VM's own processes */
STVM_API int stvm_process_set_priority(stvm_vm *vm, stvm_process *p, int priority);

typedef enum stvm_process_state {
    STVM_PROCESS_ACTIVE,      /* running now */
    STVM_PROCESS_READY,       /* on a run queue */
    STVM_PROCESS_WAITING,     /* on a semaphore's or mutex's waiting list */
    STVM_PROCESS_SUSPENDED,   /* on no list */
    STVM_PROCESS_TERMINATED   /* finished */
} stvm_process_state;

/* What a waiting process waits on (stvm_process_info.wait_kind), with the handle its
 * program holds for it (wait_handle). A wait bounded by a time limit is the same kind as
 * the wait it bounds. */
typedef enum stvm_wait_kind {
    STVM_WAIT_ON_NOTHING,          /* not waiting: running, ready, suspended, finished */
    STVM_WAIT_ON_SEMAPHORE,        /* stvm_semaphore_wait, ...: the stvm_semaphore */
    STVM_WAIT_ON_MUTEX,            /* stvm_mutex_enter: the stvm_mutex */
    STVM_WAIT_ON_MONITOR,          /* to enter, or to take back after a condition wait:
                                      the stvm_monitor */
    STVM_WAIT_ON_MONITOR_CONDITION,/* on one of its condition queues: the stvm_monitor */
    STVM_WAIT_ON_QUEUE_ITEM,       /* a take from an empty queue: the stvm_queue */
    STVM_WAIT_ON_QUEUE_ROOM,       /* a put into a full bounded queue: the stvm_queue */
    STVM_WAIT_ON_DELAY,            /* stvm_delay_wait: the stvm_delay; stvm_delay_wait_ms
                                      and _us: NULL (their Delay is the library's) */
    STVM_WAIT_ON_SOCKET_READ,      /* a receive or a stream read: the stvm_socket */
    STVM_WAIT_ON_SOCKET_WRITE,     /* a send or a stream write (flush): the stvm_socket */
    STVM_WAIT_ON_SOCKET_ACCEPT,    /* stvm_socket_accept: the listening stvm_socket */
    STVM_WAIT_ON_SOCKET_CONNECT,   /* stvm_tcp_connect: NULL (the socket is not yet the
                                      program's) */
    STVM_WAIT_ON_FD,               /* stvm_fd_wait: NULL; wait_fd is the descriptor */
    STVM_WAIT_ON_JOIN,             /* stvm_process_join: the joined stvm_process */
    STVM_WAIT_ON_CALLOUT,          /* stvm_ffi_call_threaded or _on: the stvm_ffi_function */
    STVM_WAIT_ON_KINDS
} stvm_wait_kind;

typedef struct stvm_process_info {
    const char *name;              /* valid while the handle is */
    int priority;
    stvm_process_state state;
    const char *waiting_on;        /* "semaphore", "mutex", "delay", "timed wait",
                                      "queue", "monitor" (to enter it), "monitor
                                      condition", "process" (a join) or NULL */
    const void *waiting_object;    /* the semaphore, mutex, queue's semaphore, monitor or
                                      joined process, or NULL */
    uint64_t id;                   /* 1, 2, ... in creation order; idle is 1 */
    bool vm_own;                   /* the idle or timing process */
    bool terminating;              /* Pharo's isTerminating: terminated (from the
                                      terminate on, in a cleanup run by hand too),
                                      running its cleanups on its way out (also those
                                      stvm_vm_free runs), or finished (either way) */
    bool held;                     /* a caller holds the handle (stvm_process_release) */
    const char *stack_guard;       /* "madvise", "mprotect", "canary" or "none"; NULL
                                      once finished */
    /* Appended after 0.2.0: what it waits on, for a listing (stvm_vm_processes). While it
     * does not wait: STVM_WAIT_ON_NOTHING, wait_fd -1, NULL, NULL and 0. */
    int wait_kind;                 /* stvm_wait_kind */
    int wait_fd;                   /* STVM_WAIT_ON_FD: the descriptor; else -1 */
    const void *wait_handle;       /* the object as the program holds it (the queue, not
                                      its internal semaphore; see stvm_wait_kind) */
    const char *wait_name;         /* that object's name (stvm_*_set_name), or NULL;
                                      valid until it is named again or freed */
    uint64_t wait_since_us;        /* the VM clock (stvm_vm_now_us) when it began this
                                      wait, as the scheduler last read it: exact on the
                                      simulated clock; on the real one read at least every
                                      8 switches while a deadline or descriptor is
                                      pending, and at every OS wait, otherwise the last
                                      reading before (never later than the truth) */
    /* Appended after 0.2.0: who used the CPU. */
    uint64_t cpu_ns;               /* the time it has held the VM's thread, in ns, while
                                      the VM accounts it (stvm_config.cpu_time; else 0):
                                      from each switch to it to the next switch away,
                                      counted up to now for the process that asks about
                                      itself. The VM's clock: on the real one
                                      CLOCK_MONOTONIC through the TSC, to about 100 ns,
                                      and including what the system gave other threads
                                      meanwhile and the system calls the process made; on
                                      the simulated one, its microseconds of stvm_work_us
                                      and modelled costs. The idle process is not charged
                                      its OS sleeps or the simulated clock's jumps */
} stvm_process_info;

/* Describe a process into the first out_size bytes of *out.
 * Errors:
 *   EINVAL    vm, p or out NULL; p not a process of this VM
 *   ESIZE     out_size not a size of stvm_process_info this library knows */
STVM_API int stvm_process_get_info_(stvm_vm *vm, const stvm_process *p,
                                    stvm_process_info *out, size_t out_size);
#define stvm_process_get_info(vm, p, out) \
    stvm_process_get_info_((vm), (p), (out), sizeof(stvm_process_info))

/* Every process that has not finished: up to cap handles into out, oldest (lowest id)
 * first, and how many there are in *count (which may be more than cap: call again with
 * room for them; cap 0 and out NULL only count). The VM's own processes are listed too
 * (the idle process, the Delay scheduler's timing process, the FFI's callback
 * process): stvm_process_get_info marks them vm_own (a stvm_run_within watchdog is a
 * user process of its caller's, named "watchdog"), and its
 * wait_kind, wait_handle, wait_name and wait_since_us say what each one waits on. A
 * handle is valid as long as stvm_spawn's rule says: one nobody holds goes when its
 * process finishes, so use them before the caller's next scheduling point (from the
 * embedding thread: before the next stvm_run). From a green process or the embedding
 * thread outside stvm_run. Never allocates or switches.
 * Errors:
 *   EINVAL    vm or count NULL; out NULL with cap above 0
 *   ENOTPROC  called from another thread while the VM runs */
STVM_API int stvm_vm_processes(stvm_vm *vm, stvm_process **out, size_t cap, size_t *count);

/* Write one line per unfinished user process that is not runnable, oldest first, into
 * buf, NUL-terminated and truncated to size: "'name' (priority P) waits on KIND 'NAME'
 * 0x...", KIND the wait's kind (semaphore, mutex, monitor, monitor condition, queue item,
 * queue room, delay, socket read, socket write, socket accept, socket connect, fd N,
 * join, callout: see stvm_wait_kind), 'NAME' the object's name when it has one (for a
 * join, the joined process's) and 0x... the handle the program holds for it (a queue's,
 * not its internal semaphore's); or "'name' (priority P) is suspended". The line then
 * follows who must act first: a mutex's or monitor's owner (", owned by 'meteo'") and a
 * joined process, and what each of them waits on (", which waits on ..."), until
 * a process already named (": a deadlock cycle ('meteo' -> 'busmgr' -> 'meteo')", the
 * cycle's members in order), one that can run (", which can run", ", which is
 * running"), one that is suspended, or a wait nobody owns; when nothing can run (as
 * after STVM_EDEADLOCK) such a wait says why it cannot end (", which no process or
 * registered thread can signal", ", into which no process or registered thread can
 * put", ", from which no process can take"), and a semaphore registered in the external
 * table names its slot. A chain is followed for at most 16 processes (then ", ...").
 * Returns the length the full report needs (like snprintf), or EINVAL. buf may be NULL
 * when size is 0. Never allocates or switches. */
STVM_API int stvm_vm_blocked_report(stvm_vm *vm, char *buf, size_t size);

/* Check the scheduler's invariants (each process on at most one list, back-pointers,
 * FIFO links, priority bitmap, semaphore excess/waiters, mutex and monitor owners, no
 * process waiting on a closed queue that could never answer it). Returns STVM_OK or
 * ESTATE, with a description of the first violation in buf if given (an object named as
 * its program holds it: its name, a queue for a queue's semaphore). */
STVM_API int stvm_vm_check_invariants(stvm_vm *vm, char *buf, size_t size);

/* ---- Names ---------------------------------------------------------------------
 * Semaphores, mutexes, shared queues, monitors, Delays and sockets take a name, which
 * the blocked report, the process listing (stvm_process_info.wait_name) and the trace's
 * writers print instead of an address or a number ("frames" rather than "queue1"; a
 * queue's internal semaphores as "frames.items" and "frames.room"). The VM copies the
 * name: at most STVM_NAME_MAX bytes, no control character (the report and the text
 * timeline are line-based); NULL or "" takes the name away. Names are looked at only
 * when something prints them: no wait, signal or hand-off reads one. An object's name
 * goes with the object. Each kind has a setter and a getter:
 *
 *   int stvm_KIND_set_name(stvm_vm *vm, stvm_KIND *x, const char *name)
 *     Allocates (the copy); never switches.
 *     Errors:
 *       EINVAL    vm NULL; x NULL or not a KIND of this VM; a control character in name
 *       ERANGE    name longer than STVM_NAME_MAX bytes: the old name stays
 *       ENOMEM    no memory for the copy: the old name stays
 *       ENOTPROC  called from another thread while the VM runs
 *   int stvm_KIND_get_name(stvm_vm *vm, const stvm_KIND *x, char *buf, size_t size)
 *     Writes x's name into buf, NUL-terminated and truncated to size (buf may be NULL
 *     when size is 0), and answers its length (like snprintf): 0 for none. Never
 *     allocates or switches.
 *     Errors:
 *       EINVAL    vm NULL; x NULL or not a KIND of this VM; buf NULL with size above 0
 *       ENOTPROC  called from another thread while the VM runs */
#define STVM_NAME_MAX 63

/* ---- Semaphores (Pharo's Semaphore) --------------------------------------------- */

/* A new semaphore with no waiters and no excess signals. Allocates.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ENOMEM    no memory for the semaphore */
STVM_API int stvm_semaphore_new(stvm_vm *vm, stvm_semaphore **out);

/* Release a semaphore nobody waits on. Never switches.
 * Errors:
 *   EINVAL    vm or sem NULL; sem not a semaphore of this VM
 *   EINUSE    a process waits on it or is committed to wait on it (inside a timed wait
 *             on it, even before it joined the list), or is inside
 *             stvm_semaphore_critical on it (which signals it on the way out); it is
 *             registered as an external semaphore, is the semaphore of an armed timer
 *             deadline, is the Delay scheduler's own, or is a Delay object's
 *             (stvm_delay_semaphore) while that Delay exists: nothing changes */
STVM_API int stvm_semaphore_free(stvm_vm *vm, stvm_semaphore *sem);

/* Primitive 85: resume the first waiter (FIFO), preempting the caller if it is strictly
 * higher; with no waiter count one excess signal. Switches.
 * Errors:
 *   EINVAL    vm or sem NULL; sem not a semaphore of this VM */
STVM_API int stvm_semaphore_signal(stvm_vm *vm, stvm_semaphore *sem);

/* Primitive 86: consume an excess signal, or wait at the end of the waiting list.
 * Switches.
 * Errors:
 *   EINVAL    vm or sem NULL; sem not a semaphore of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    the caller was suspended off the list while it waited, and resumed (see
 *             stvm_process_suspend): no signal was consumed
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_semaphore_wait(stvm_vm *vm, stvm_semaphore *sem);

/* Pharo's Semaphore>>critical:: wait, run fn(vm, arg), signal. A process terminated
 * while it waits to enter takes nothing: a signal it was handed and had not yet run to
 * see goes to the next waiter (Pharo's testAfterCriticalWait); one terminated inside fn
 * signals on its way out, before its own older cleanups run (testInCriticalWait).
 * Switches.
 * Errors:
 *   EINVAL    vm, sem or fn NULL; sem not a semaphore of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    the caller was suspended while it waited to enter, and resumed (fn not run)
 *   EINTR     the caller was interrupted while it waited to enter (fn not run) */
STVM_API int stvm_semaphore_critical(stvm_vm *vm, stvm_semaphore *sem, stvm_fn fn, void *arg);

/* Consume an excess signal if there is one (STVM_OK), else answer STVM_EAGAIN at once
 * without waiting (no time limit passed: stvm_semaphore_wait_timeout_ms with 0 answers
 * ETIMEDOUT). Never switches.
 * Errors:
 *   EINVAL    vm or sem NULL; sem not a semaphore of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EAGAIN    no excess signal: nothing taken */
STVM_API int stvm_semaphore_try_wait(stvm_vm *vm, stvm_semaphore *sem);

/* Excess signals (>= 0), or EINVAL. */
STVM_API int64_t stvm_semaphore_excess(stvm_vm *vm, const stvm_semaphore *sem);

/* Name sem, and read its name ("Names" above). */
STVM_API int stvm_semaphore_set_name(stvm_vm *vm, stvm_semaphore *sem, const char *name);
STVM_API int stvm_semaphore_get_name(stvm_vm *vm, const stvm_semaphore *sem, char *buf,
                                     size_t size);

/* ---- Mutexes (owner, re-entrant, FIFO hand-off) --------------------------------- */

/* A new free mutex. Allocates.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ENOMEM    no memory for the mutex */
STVM_API int stvm_mutex_new(stvm_vm *vm, stvm_mutex **out);
/* Free a mutex nobody owns or waits on. Never switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a mutex of this VM
 *   EINUSE    it is owned, has waiters, or a process is committed to wait on it in a
 *             timed enter: nothing changes */
STVM_API int stvm_mutex_free(stvm_vm *vm, stvm_mutex *m);

/* Take the mutex; re-entrant: the owner may enter again and must exit as many times.
 * Waiters queue FIFO and get the mutex handed to them directly by exit (no barging).
 * Switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a mutex of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    the caller was suspended off the waiting list and resumed: it does not
 *             own the mutex
 *   ERANGE    the owner re-entered it 2^32-1 times
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_mutex_enter(stvm_vm *vm, stvm_mutex *m);

/* stvm_mutex_enter waiting at most ms (through the Delay scheduler): STVM_OK when the
 * mutex is the caller's, STVM_ETIMEDOUT when the time ran out first (the caller does
 * not own it). 0 only tries. Switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a mutex of this VM; ms negative
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ETIMEDOUT the mutex was not the caller's within ms (0: at once)
 *   ESTATE    the caller was suspended off the waiting list and resumed: it does not
 *             own the mutex
 *   ERANGE    ms too long (see stvm_delay_wait_ms); the owner re-entered it 2^32-1 times
 *   ENOMEM    no memory to start the Delay scheduler (the VM's first timed wait)
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_mutex_enter_timeout_ms(stvm_vm *vm, stvm_mutex *m, int64_t ms);

/* Leave once; on the last exit hand the mutex to the first waiter, which preempts the
 * caller if strictly higher. Switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a mutex of this VM
 *   EPERM     the caller does not own the mutex */
STVM_API int stvm_mutex_exit(stvm_vm *vm, stvm_mutex *m);

/* Take the mutex if it is free, or enter again if the caller owns it (STVM_OK), as
 * primitive 187's test does; STVM_EAGAIN when another process owns it. Never waits,
 * never switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a mutex of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EAGAIN    another process owns it: nothing taken
 *   ERANGE    re-entry beyond 2^32-1 times */
STVM_API int stvm_mutex_try_enter(stvm_vm *vm, stvm_mutex *m);

/* The owner, or NULL. */
STVM_API stvm_process *stvm_mutex_owner(stvm_vm *vm, const stvm_mutex *m);

/* Run fn(vm, arg) holding the mutex (enter, fn, exit).
 * Errors:
 *   EINVAL    vm, m or fn NULL; m not a mutex of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    as stvm_mutex_enter: the caller was suspended off the waiting list and
 *             resumed; fn was not run
 *   ERANGE    the owner re-entered it 2^32-1 times; fn was not run
 *   EPERM     fn ran, and left the mutex itself: the closing exit found it not the
 *             caller's
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_mutex_critical(stvm_vm *vm, stvm_mutex *m, stvm_fn fn, void *arg);

/* Name m, and read its name ("Names" above). */
STVM_API int stvm_mutex_set_name(stvm_vm *vm, stvm_mutex *m, const char *name);
STVM_API int stvm_mutex_get_name(stvm_vm *vm, const stvm_mutex *m, char *buf, size_t size);

/* ---- Shared queues (Pharo's SharedQueue) -------------------------------------------
 * A FIFO of void * items between processes, built as Pharo's SharedQueue is, on a
 * semaphore counting the items: waiting readers are served in arrival order, and an
 * item handed to a woken reader is its own (no later reader takes it first; a reader
 * terminated or interrupted before it runs gives it back). A bounded queue (capacity >
 * 0) makes writers wait while it is full, served in arrival order too. Other OS threads
 * may put items once the queue is opened for them (stvm_queue_open_external). The queue
 * never looks inside an item: the caller owns what the pointers point at.
 * Called from a process, every queue call keeps Pharo's preemption rule: a process of
 * higher priority that the call makes runnable (a writer given the room a take or a
 * flush frees, a reader woken by items other threads put, which a call counts when it
 * looks) runs before the call returns. So even the calls that never wait may switch.
 *
 * Closing (stvm_queue_close, or stvm_queue_close_external from another thread) is how a
 * producer says that nothing more will come, instead of a poison-pill item: every put
 * after it answers STVM_ECLOSED and takes nothing (the item stays the caller's), writers
 * waiting for room (processes, and threads in stvm_queue_put_external) are released with
 * STVM_ECLOSED, readers take what is left, and once nothing is left every take (timed,
 * try and peek too) answers STVM_EEOF, as a stream does at its end, and so do the
 * readers still waiting then. A closed queue keeps no process waiting, so it no longer
 * keeps stvm_run waiting for other threads: a program whose producers all closed ends
 * (STVM_OK) or reports what else is stuck (STVM_EDEADLOCK), never hangs. Several
 * producers close once between them: count them (the last one to finish closes), or
 * let a process close after joining them or after its own count of their items; a
 * second close answers STVM_ECLOSED and changes nothing. */
typedef struct stvm_queue stvm_queue;
/* What stvm_queue_flush and stvm_queue_free hand each item they remove to. */
typedef void (*stvm_item_fn)(void *item, void *arg);

/* A new empty queue; capacity 0 = unbounded. Allocates.
 * Errors:
 *   EINVAL    vm or out NULL; capacity above INT64_MAX
 *   ENOMEM    no memory for the queue */
STVM_API int stvm_queue_new(stvm_vm *vm, size_t capacity, stvm_queue **out);
/* Free q, open or closed, handing each item still in it to fn(item, arg) first (fn may
 * be NULL). Call it only once no other thread will put to q or close it any more.
 * stvm_vm_free frees the queues left, dropping their items without a call. Never
 * switches.
 * Errors:
 *   EINVAL    vm NULL; q not a queue of this VM
 *   ENOTPROC  called from another thread while the VM runs
 *   EINUSE    a process waits on q (or was woken and has not run yet), is inside a
 *             call on q that switched away (the rule above), or a thread waits in
 *             stvm_queue_put_external: nothing changes */
STVM_API int stvm_queue_free(stvm_vm *vm, stvm_queue *q, stvm_item_fn fn, void *arg);
/* Pharo's nextPut:. In a full bounded queue the caller waits for room (FIFO among
 * writers). From the embedding thread outside stvm_run it never waits. Switches (a
 * waiting reader of higher priority runs at once).
 * Errors:
 *   EINVAL    vm NULL; q not a queue of this VM
 *   ENOTPROC  called from another thread while the VM runs
 *   EAGAIN    from the embedding thread (which cannot wait), and the bounded queue is
 *             full: nothing put
 *   ECLOSED   q is closed, or was closed while the caller waited for room: nothing put
 *   ENOMEM    no memory to grow the queue (nothing put)
 *   ESTATE    the caller was suspended while it waited for room, and resumed
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited for room: nothing put */
STVM_API int stvm_queue_put(stvm_vm *vm, stvm_queue *q, void *item);
/* As stvm_queue_put, waiting at most ms for room (0: only try). item is an input, so it
 * comes before the time limit; stvm_queue_take_timeout_ms's item is an output, so it
 * comes after (include/README.md, "Naming").
 * Errors: as stvm_queue_put, and
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ETIMEDOUT no room within ms (0: at once): nothing put
 *   EINVAL    ms negative
 *   ERANGE    ms longer than the Delay scheduler allows (see stvm_delay_wait_ms) */
STVM_API int stvm_queue_put_timeout_ms(stvm_vm *vm, stvm_queue *q, void *item, int64_t ms);
/* Pharo's next: take the first item into *item, waiting while the queue is empty (FIFO
 * among readers). Switches.
 * Errors:
 *   EINVAL    vm or item NULL; q not a queue of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EEOF      q is closed and nothing is left, now or when the close came while the
 *             caller waited: *item untouched
 *   ESTATE    the caller was suspended while it waited, and resumed: nothing taken
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_queue_take(stvm_vm *vm, stvm_queue *q, void **item);
/* As stvm_queue_take, waiting at most ms (Pharo's next with a timeout).
 * Errors: as stvm_queue_take, and
 *   ETIMEDOUT nothing came within ms (0: at once): *item untouched
 *   EINVAL    ms negative
 *   ERANGE    ms longer than the Delay scheduler allows (see stvm_delay_wait_ms)
 *   ENOMEM    no memory to start the Delay scheduler (the VM's first timed wait) */
STVM_API int stvm_queue_take_timeout_ms(stvm_vm *vm, stvm_queue *q, int64_t ms, void **item);
/* Pharo's nextOrNil: the first item if one is there now, never waiting. Switches only
 * by the rule above.
 * Errors:
 *   EINVAL    vm or item NULL; q not a queue of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EAGAIN    the queue is empty (or all it holds is promised to woken readers)
 *   EEOF      q is closed and nothing is left: nothing will ever come */
STVM_API int stvm_queue_try_take(stvm_vm *vm, stvm_queue *q, void **item);
/* Pharo's peek: the item the next take would get, left in the queue. From a process or
 * the embedding thread outside stvm_run. Switches only by the rule above, before it
 * looks (so the answer is still true when it returns).
 * Errors:
 *   EINVAL    vm or item NULL; q not a queue of this VM
 *   ENOTPROC  called from another thread while the VM runs
 *   EAGAIN    nothing a take could get now
 *   EEOF      q is closed and nothing is left */
STVM_API int stvm_queue_peek(stvm_vm *vm, stvm_queue *q, void **item);
/* Pharo's size (isEmpty is size 0): the items a take could get now, not counting those
 * promised to woken readers. Items other threads put are counted once the VM has seen
 * their signal (a call from a process looks). Switches only by the rule above, before it
 * counts. EINVAL, or ENOTPROC from another thread while the VM runs. */
STVM_API int64_t stvm_queue_size(stvm_vm *vm, stvm_queue *q);
/* Pharo's flush and removeAll: remove every item a take could get, handing each to
 * fn(item, arg) (fn may be NULL), oldest first; answers how many. Items promised to
 * woken readers stay theirs. Room freed wakes writers, and by the rule above a woken
 * writer of higher priority runs, but only once every item has been handed to fn. A
 * closed queue flushed is at its end. Switches.
 * Errors:
 *   EINVAL    vm NULL; q not a queue of this VM
 *   ENOTPROC  called from another thread while the VM runs
 *   ENOMEM    fn given and no memory to list the items: nothing removed */
STVM_API int64_t stvm_queue_flush(stvm_vm *vm, stvm_queue *q, stvm_item_fn fn, void *arg);
/* Close q (the rules above): from now on puts answer STVM_ECLOSED; writers waiting for
 * room (processes and threads) are released with STVM_ECLOSED; items other threads put
 * before the close stay to be taken; once nothing is left, the readers waiting and every
 * later take answer STVM_EEOF. From a process or the embedding thread outside stvm_run;
 * another thread closes with stvm_queue_close_external. Switches (a released process of
 * higher priority runs at once); never allocates.
 * Errors:
 *   EINVAL    vm NULL; q not a queue of this VM
 *   ENOTPROC  called from another thread while the VM runs
 *   ECLOSED   q is already closed: nothing changes */
STVM_API int stvm_queue_close(stvm_vm *vm, stvm_queue *q);
/* Let other OS threads put to q (stvm_queue_put_external). q's item count becomes an
 * external semaphore (one slot of the table): a process waiting on an empty queue then
 * keeps stvm_run waiting for the threads, as a wait on a registered external semaphore
 * does, instead of answering STVM_EDEADLOCK, until the queue is closed. Items a thread
 * puts come after those already in the queue; each thread's items keep their order.
 * From a process or the embedding thread outside stvm_run. Allocates.
 * Errors:
 *   EINVAL    vm NULL; q not a queue of this VM
 *   ENOTPROC  called from another thread while the VM runs
 *   ESTATE    q is already open for other threads
 *   ECLOSED   q is closed: nothing more can be put
 *   EFULL     the external semaphore table is full
 *   ENOMEM    no memory for the table's slot
 *   ESYS      the lock or condition variable could not be made */
STVM_API int stvm_queue_open_external(stvm_vm *vm, stvm_queue *q);
/* Any OS thread (not a signal handler): put item into q, waking a reader through the
 * external signal path (and a VM asleep in the OS). In a full bounded queue the thread
 * waits for room for at most timeout_ms (-1 forever; 0 only tries), on a condition
 * variable, not in the VM: backpressure for a thread pool. Allocates.
 * Errors:
 *   EINVAL    q NULL, not a queue, or not open for other threads; timeout_ms below -1
 *   ECLOSED   q is closed, or was closed while the thread waited for room: nothing put
 *             (the item stays the caller's)
 *   ETIMEDOUT no room came within timeout_ms (0: at once)
 *   ENOMEM    no memory for the item's place */
STVM_API int stvm_queue_put_external(stvm_queue *q, void *item, int64_t timeout_ms);
/* Any OS thread (not a signal handler), as stvm_queue_put_external: close q (see
 * stvm_queue_close). Puts are refused from this moment and threads waiting for room are
 * released at once; the VM releases its waiting processes when it next looks at its
 * external signals (this call wakes it, as a put does). With several producer threads,
 * only the last one to finish closes (count them, e.g. with an atomic counter), or
 * none does and a process closes once they are done. Never allocates.
 * Errors:
 *   EINVAL    q NULL, not a queue, or not open for other threads
 *   ECLOSED   q is already closed: nothing changes */
STVM_API int stvm_queue_close_external(stvm_queue *q);
/* Name q, and read its name ("Names" above); its internal semaphores go by it too
 * ("frames.items", "frames.room"). */
STVM_API int stvm_queue_set_name(stvm_vm *vm, stvm_queue *q, const char *name);
STVM_API int stvm_queue_get_name(stvm_vm *vm, const stvm_queue *q, char *buf, size_t size);

/* ---- Monitors (Pharo's Monitor) ----------------------------------------------------
 * A re-entrant lock with condition queues, built as Pharo's Monitor is: one owner at a
 * time, who may enter again (a depth counts the entries) and, inside, wait for an event
 * and signal others. Entrants queue in arrival order and the last exit hands the monitor
 * to the first of them (no later arrival takes it first). A wait releases the monitor
 * completely whatever its depth, waits on a condition queue, then takes the monitor
 * again, waiting behind the entrants, with the depth it had, before it returns: on every
 * way out (signalled, timed out, interrupted, cut short by a suspend), so that the code
 * after a wait always runs inside the monitor. A woken waiter is made runnable (it runs
 * at once if strictly higher than the signaller, and queues to re-enter), as Pharo's
 * signal of the waiter's semaphore does; as in Pharo, a signal with nobody waiting is
 * lost, and a woken waiter re-checks its condition (stvm_monitor_wait_while).
 *
 * Condition queues have ids 0 .. STVM_MONITOR_QUEUES-1, a fixed table in the monitor
 * (Pharo names them with Symbols: give each name a number): 0 is the default queue
 * (Pharo's wait and signal), the others Pharo's named ones (waitFor:, signal:).
 *
 * Termination leaves the monitor consistent at every point: a waiter terminated on a
 * condition queue, or while it waits to take the monitor again, is taken off and takes
 * nothing (its cleanups run outside the monitor); one handed the monitor, or a signal,
 * that is terminated or interrupted before it runs gives it back (the monitor to the next
 * entrant, a signal to the next waiter of its queue); one terminated inside
 * stvm_monitor_critical leaves that level on its way out, and an owner that finishes
 * owning it hands the monitor to the next entrant, as it does a mutex. */
typedef struct stvm_monitor stvm_monitor;

#define STVM_MONITOR_QUEUES 8
/* A condition for stvm_monitor_wait_while and _until, called with the monitor held. */
typedef bool (*stvm_monitor_pred)(stvm_vm *vm, void *arg);

/* A new free monitor with empty queues. Owned by the caller until stvm_monitor_free
 * (stvm_vm_free frees the rest). Allocates; never switches.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ENOMEM    no memory for the monitor */
STVM_API int stvm_monitor_new(stvm_vm *vm, stvm_monitor **out);
/* Release a monitor nobody owns or waits on. Never switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a monitor of this VM
 *   EINUSE    a process owns it (the caller included), waits on it (to enter, or on a
 *             condition queue), was handed it or a signal of it and has not run yet, is
 *             inside a wait or stvm_monitor_critical on it: nothing changes */
STVM_API int stvm_monitor_free(stvm_vm *vm, stvm_monitor *m);

/* Pharo's enter: take the monitor, waiting behind the entrants (FIFO), or enter again if
 * the caller owns it (depth + 1). Switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a monitor of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    the caller was suspended while it waited, and resumed: it does not own it
 *   ERANGE    the owner entered it 2^32-1 times
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_monitor_enter(stvm_vm *vm, stvm_monitor *m);
/* stvm_monitor_enter waiting at most ms (through the Delay scheduler); 0 only tries.
 * Switches.
 * Errors: as stvm_monitor_enter, and
 *   EINVAL    ms negative
 *   ETIMEDOUT the monitor was not the caller's within ms (0: at once)
 *   ERANGE    ms too long (see stvm_delay_wait_ms)
 *   ENOMEM    no memory to start the Delay scheduler (the VM's first timed wait) */
STVM_API int stvm_monitor_enter_timeout_ms(stvm_vm *vm, stvm_monitor *m, int64_t ms);
/* Take the monitor if it is free, or enter again if the caller owns it (STVM_OK);
 * STVM_EAGAIN when another process owns it. Never waits, never switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a monitor of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EAGAIN    another process owns it: nothing taken
 *   ERANGE    the owner entered it 2^32-1 times */
STVM_API int stvm_monitor_try_enter(stvm_vm *vm, stvm_monitor *m);
/* Pharo's exit: leave once; the last exit hands the monitor to the first entrant, which
 * preempts the caller if strictly higher. Switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a monitor of this VM
 *   EPERM     the caller does not own it (nothing changes; the embedding thread owns
 *             nothing) */
STVM_API int stvm_monitor_exit(stvm_vm *vm, stvm_monitor *m);
/* Pharo's critical:: enter, run fn(vm, arg), exit. A process terminated inside fn leaves
 * this level on its way out, before its own older cleanups run; one terminated while it
 * waits inside fn (stvm_monitor_wait) owns nothing then, and leaves nothing. The monitor
 * cannot be freed meanwhile. Switches.
 * Errors:
 *   EINVAL    vm, m or fn NULL; m not a monitor of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    as stvm_monitor_enter (fn not run)
 *   ERANGE    the owner entered it 2^32-1 times (fn not run)
 *   EINTR     interrupted or its waits cancelled while it waited to enter (fn not run)
 *   EPERM     fn ran and left the monitor itself: the closing exit found it not the
 *             caller's */
STVM_API int stvm_monitor_critical(stvm_vm *vm, stvm_monitor *m, stvm_fn fn, void *arg);
/* The owner, or NULL (free, or not a monitor of this VM). */
STVM_API stvm_process *stvm_monitor_owner(stvm_vm *vm, const stvm_monitor *m);
/* The owner's depth (its entries not yet left), 0 when free; or EINVAL. */
STVM_API int64_t stvm_monitor_depth(stvm_vm *vm, const stvm_monitor *m);

/* Pharo's wait: release the monitor completely, wait on the default queue until a
 * signal, take the monitor again with the depth it had, return. The monitor is
 * retaken on every way out below, even when the caller's waits are cancelled (the
 * retake is the one wait that still blocks then: the code after a wait runs inside the
 * monitor); an interrupt that comes while it retakes the monitor runs its function, and
 * the retake goes on. Switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a monitor of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EPERM     the caller does not own the monitor (nothing changes)
 *   ESTATE    the caller was suspended while it waited, and resumed: no signal taken
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: no signal taken (one it had been handed goes to the next waiter) */
STVM_API int stvm_monitor_wait(stvm_vm *vm, stvm_monitor *m);
/* Pharo's waitMaxMilliseconds:: as stvm_monitor_wait, waiting at most ms for a signal
 * (0: answers ETIMEDOUT at once, keeping the monitor). Switches.
 * Errors: as stvm_monitor_wait, and
 *   EINVAL    ms negative
 *   ETIMEDOUT no signal within ms: the monitor is the caller's again
 *   ERANGE    ms too long (see stvm_delay_wait_ms)
 *   ENOMEM    no memory to start the Delay scheduler (the VM's first timed wait) */
STVM_API int stvm_monitor_wait_timeout_ms(stvm_vm *vm, stvm_monitor *m, int64_t ms);
/* Pharo's waitFor:: as stvm_monitor_wait on condition queue `queue`; only a signal of
 * that queue (or Pharo's fall-back, below) wakes it. EINVAL also for a queue outside
 * 0 .. STVM_MONITOR_QUEUES-1. */
STVM_API int stvm_monitor_wait_on(stvm_vm *vm, stvm_monitor *m, int queue);
/* Pharo's waitFor:maxMilliseconds:: stvm_monitor_wait_timeout_ms on queue `queue`. */
STVM_API int stvm_monitor_wait_on_timeout_ms(stvm_vm *vm, stvm_monitor *m, int queue,
                                             int64_t ms);
/* Pharo's waitWhile: (and waitUntil:): while pred(vm, arg) is true (false), wait on the
 * default queue; pred is called with the monitor held, first before any wait. STVM_OK
 * once the condition lets it go on, with the monitor held. A wait that answers an error
 * ends the loop with that error (the monitor held again). Switches.
 * Errors:
 *   EINVAL    vm, m or pred NULL; m not a monitor of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EPERM     the caller does not own the monitor (pred not called)
 *   ESTATE, EINTR  as stvm_monitor_wait */
STVM_API int stvm_monitor_wait_while(stvm_vm *vm, stvm_monitor *m, stvm_monitor_pred pred,
                                     void *arg);
STVM_API int stvm_monitor_wait_until(stvm_vm *vm, stvm_monitor *m, stvm_monitor_pred pred,
                                     void *arg);
/* Pharo's waitWhile:for: and waitUntil:for:: the same on queue `queue` (EINVAL for a
 * queue outside 0 .. STVM_MONITOR_QUEUES-1). */
STVM_API int stvm_monitor_wait_while_on(stvm_vm *vm, stvm_monitor *m, int queue,
                                        stvm_monitor_pred pred, void *arg);
STVM_API int stvm_monitor_wait_until_on(stvm_vm *vm, stvm_monitor *m, int queue,
                                        stvm_monitor_pred pred, void *arg);

/* Pharo's signal: wake the first waiter of the default queue (FIFO). Answers how many it
 * woke (0 or 1). The woken process runs at once if strictly higher than the caller, and
 * then waits to take the monitor, which the caller keeps. Switches.
 * Errors:
 *   EINVAL    vm or m NULL; m not a monitor of this VM
 *   EPERM     the caller does not own the monitor (nothing changes) */
STVM_API int stvm_monitor_signal(stvm_vm *vm, stvm_monitor *m);
/* Pharo's signalAll: wake every waiter of the default queue, oldest first; answers how
 * many. Errors as stvm_monitor_signal. */
STVM_API int stvm_monitor_signal_all(stvm_vm *vm, stvm_monitor *m);
/* Pharo's signal:: wake the first waiter of `queue`, or, when nobody waits there, the
 * first of the default queue (Pharo's rule); answers 0 or 1. Errors as
 * stvm_monitor_signal, and EINVAL for a queue outside 0 .. STVM_MONITOR_QUEUES-1. */
STVM_API int stvm_monitor_signal_on(stvm_vm *vm, stvm_monitor *m, int queue);
/* Pharo's signalAll:: wake every waiter of the default queue, then every waiter of
 * `queue` (Pharo's rule); answers how many. Errors as stvm_monitor_signal_on. */
STVM_API int stvm_monitor_signal_all_on(stvm_vm *vm, stvm_monitor *m, int queue);
/* Pharo's signalReallyAll: wake every waiter of every queue, queue 0 first; answers how
 * many. Errors as stvm_monitor_signal. */
STVM_API int stvm_monitor_signal_really_all(stvm_vm *vm, stvm_monitor *m);
/* Name m, and read its name ("Names" above). */
STVM_API int stvm_monitor_set_name(stvm_vm *vm, stvm_monitor *m, const char *name);
STVM_API int stvm_monitor_get_name(stvm_vm *vm, const stvm_monitor *m, char *buf,
                                   size_t size);
/* ---- Process-local variables (Pharo's ProcessLocalVariable, DynamicVariable) --------
 * A variable with a value of its own in each process, as Pharo's process-specific
 * variables keep theirs in a process's env: a process that never set it answers the
 * variable's default. Values are void * and NULL is Pharo's nil: storing NULL is
 * clearing, so a process's own value is never NULL.
 *  - STVM_LOCAL_INHERITABLE (Pharo's isInheritable): a process spawned by a process that
 *    has its own value gets one of its own too, inherit_fn's answer (Pharo's
 *    installValue:intoForked:from:) or, without inherit_fn, the same pointer. Processes
 *    spawned from the embedding thread, and the VM's own, inherit nothing.
 *  - STVM_LOCAL_DYNAMIC (Pharo's DynamicVariable): only stvm_local_during binds it, for
 *    the extent of a function; stvm_local_set and stvm_local_clear refuse it.
 * Ownership: the variable owns every value stored in it (set, bound by during, or
 * inherited) and hands each to destroy_fn exactly once when it is dropped: replaced by
 * another set, cleared, unbound at the end of a during, given up with the process (when
 * its handle goes: at its end if nobody holds it, else at stvm_process_release or the
 * join that gives it back, so the values of a finished process can still be read
 * through a held handle, as Pharo's env outlives a terminated process), at
 * stvm_local_free, and at stvm_vm_free. The default is the caller's and never dropped.
 * destroy_fn and inherit_fn run inside the VM's bookkeeping: they must not call stvm. */
typedef struct stvm_local stvm_local;
#define STVM_LOCAL_INHERITABLE 1u
#define STVM_LOCAL_DYNAMIC 2u
/* Drop a value (free it, or count a reference down). */
typedef void (*stvm_local_destroy_fn)(void *value);
/* The value a spawned process child gets from its parent's value; NULL gives it none
 * (it answers the default). child is the new process's handle, not yet run. */
typedef void *(*stvm_local_inherit_fn)(void *value, stvm_process *child);

/* A new variable with flags (STVM_LOCAL_*, or 0 for Pharo's ProcessLocalVariable) and
 * default_value (Pharo's default). destroy_fn and inherit_fn may be NULL. Allocates;
 * the caller owns *out until stvm_local_free (stvm_vm_free frees the rest). Any process
 * of the VM or the embedding thread.
 * Errors:
 *   EINVAL    vm or out NULL; an unknown flag; inherit_fn without
 *             STVM_LOCAL_INHERITABLE; an inheritable variable with destroy_fn but no
 *             inherit_fn (parent and child would hold one pointer, dropped twice)
 *   ENOMEM    no memory for the variable */
STVM_API int stvm_local_new(stvm_vm *vm, unsigned flags, void *default_value,
                            stvm_local_destroy_fn destroy_fn, stvm_local_inherit_fn inherit_fn,
                            stvm_local **out);
/* Free v, dropping every process's value of it (destroy_fn for each, in no particular
 * order). The handle must not be used afterwards. Never switches.
 * Errors:
 *   EINVAL    vm NULL; v not a variable of this VM (freed, another VM's, NULL)
 *   EINUSE    a process is inside stvm_local_during on v: nothing changes */
STVM_API int stvm_local_free(stvm_vm *vm, stvm_local *v);
/* The active process's value of v into *value: 1 when the process has its own value, 0
 * when *value is the default. Never switches or allocates.
 * Errors:
 *   EINVAL    vm or value NULL; v not a variable of this VM
 *   ENOTPROC  not called from a green process of vm on its thread */
STVM_API int stvm_local_get(stvm_vm *vm, const stvm_local *v, void **value);
/* The same for process p (Pharo's evaluate:onBehalfOf: around value), from a process or
 * the embedding thread. A finished process whose handle is held answers the values it
 * had when it finished. Never switches or allocates. (Before 0.3.0:
 * stvm_local_get_of, with the same arguments.)
 * Errors:
 *   EINVAL    vm, p or value NULL; p not a process of this VM; v not a variable of it */
STVM_API int stvm_process_get_local(stvm_vm *vm, const stvm_process *p, const stvm_local *v,
                                    void **value);
/* Pharo's value:: make value the active process's own value of v (NULL: as
 * stvm_local_clear). The value it replaces is dropped (destroy_fn), unless it is the
 * same pointer, which changes nothing. Allocates (the process's first value of v);
 * never switches.
 * Errors:
 *   EINVAL    vm NULL; v not a variable of this VM; v is dynamic (STVM_LOCAL_DYNAMIC)
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ENOMEM    no memory for the process's value: nothing changed (value not dropped) */
STVM_API int stvm_local_set(stvm_vm *vm, stvm_local *v, void *value);
/* Drop the active process's own value of v (destroy_fn), so that it answers the
 * default again; no own value is no error. Never switches.
 * Errors:
 *   EINVAL    vm NULL; v not a variable of this VM; v is dynamic
 *   ENOTPROC  not called from a green process of vm on its thread */
STVM_API int stvm_local_clear(stvm_vm *vm, stvm_local *v);
/* Pharo's value:during:: bind v to value in the active process, run fn(vm, arg), then
 * drop the bound value (destroy_fn; unless it is the one put aside) and give the process
 * back the value (or the absence of one) it had before. The restore is a cleanup
 * (stvm_ensure), so it happens also when the process is terminated inside fn, before
 * its older cleanups run. Nested bindings restore in turn. Binding the value the process
 * already has runs fn with nothing to bind or drop. Any variable may be bound this way
 * (Pharo's CurrentExecutionEnvironment activate:for: binds a ProcessLocalVariable);
 * inside fn a set of a non-dynamic variable replaces the bound value, and the end drops
 * whatever value is there. fn's result goes through arg. Allocates (the binding);
 * switches if fn does.
 * Errors:
 *   EINVAL    vm or fn NULL; v not a variable of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ENOMEM    no memory for the binding: fn not run, value not dropped */
STVM_API int stvm_local_during(stvm_vm *vm, stvm_local *v, void *value, stvm_fn fn,
                               void *arg);

/* ---- External signals ---------------------------------------------------------- */

/* Register sem in the external table and store its index (1-based, as Pharo's
 * ExternalSemaphoreTable) in *index_out: the lowest free slot.
 * Errors:
 *   EINVAL    vm, sem or index_out NULL; sem not a semaphore of this VM
 *   EFULL     every slot of the table (config external_table_size) is used
 *   ESTATE    sem is already registered
 *   ENOMEM    the table takes memory for 256 slots at a time, the first time one of
 *             them is used, and there was none */
STVM_API int stvm_external_register(stvm_vm *vm, stvm_semaphore *sem, int *index_out);
/* Free the slot; signals still pending for it are dropped.
 * Errors:
 *   EINVAL    vm NULL; index out of range or not in use
 *   EINUSE    the slot is a queue's (stvm_queue_open_external): stvm_queue_free frees it */
STVM_API int stvm_external_unregister(stvm_vm *vm, int index);

/* Any thread, and async-signal-safe: signal the semaphore registered at index exactly
 * once, at the VM's next scheduling point; wakes an idle VM at once. N calls become N
 * signals, never merged. An unused slot is not an error: the request is dropped when the
 * VM sees it. Nor is a queue's slot (stvm_queue_open_external), whose signals are the
 * items put with stvm_queue_put_external and nothing else: the request only makes the
 * VM look.
 * Errors:
 *   EINVAL    vm NULL; index outside 1..the table's size (config external_table_size) */
STVM_API int stvm_external_signal(stvm_vm *vm, int index);

/* ---- Living inside another event loop ------------------------------------------ */

#define STVM_RUN_DEFAULT 0  /* as stvm_run */
#define STVM_RUN_ONCE 1     /* run until nothing can run without waiting, wait in the OS
                               at most once (for the idle quantum; by default until
                               something is due), run what that woke, return */
#define STVM_RUN_NOWAIT 2   /* run what can run now, never wait in the OS: the mode for
                               a host event loop's callbacks */

/* Run in a mode (libuv's uv_run). DEFAULT answers as stvm_run. ONCE and NOWAIT answer
 * 1 when processes remain that may run later (waiting on time, descriptors or external
 * signals), 0 when every user process has finished, or STVM_EDEADLOCK / STVM_ESTOPPED
 * as stvm_run. In every mode a descriptor that became ready, a deadline that passed or
 * an external signal that came before the call is seen by the call: what it wakes runs
 * in it. NOWAIT, and ONCE after its wait, look at the descriptors once more before
 * they return, which also takes what made stvm_backend_fd readable. ONCE may block
 * (its wait lasts until something is due when idle_relinquish_us is 0): a host loop
 * that must not block calls NOWAIT. Switches.
 * Errors:
 *   EINVAL    vm NULL; mode not one of STVM_RUN_*
 *   EBUSY     as stvm_run: this VM is already running, or a VM runs on this thread */
STVM_API int stvm_run_mode(stvm_vm *vm, int mode);

/* A descriptor that becomes readable when the VM has something to do: a process is
 * ready to run (from the first stvm_spawn of a fresh VM on, whatever made it ready
 * between runs: a spawn, a resume, a signal or put from the embedding thread, work a
 * stopped run left), a descriptor it waits on is ready, or an external signal or
 * stvm_stop arrived (the epoll descriptor of the VM, libuv's uv_backend_fd). So a host
 * loop that watches only this descriptor runs the VM without a first run of its own.
 * After a NOWAIT or ONCE run it is readable only for what came after that run looked
 * (so a host loop that watches it does not spin); a signal or stop that came during the
 * run, after its last look, leaves it readable.
 * Watch it for reading; never read it, close it or register it elsewhere as
 * edge-triggered. Valid until stvm_vm_free.
 * Errors:
 *   EINVAL    vm NULL */
STVM_API int stvm_backend_fd(stvm_vm *vm);

/* How long a host loop may wait before calling stvm_run_mode again: 0 when a process
 * can run now (or the clock is simulated and a deadline is pending), the milliseconds to
 * the next deadline (rounded up), or -1 with none. EINVAL is -1 too, on purpose: a NULL
 * VM has no deadline either, and a host loop that hands the answer to poll or epoll_wait
 * (libuv's uv_backend_timeout) waits on its descriptors alone.
 * Errors:
 *   EINVAL    vm NULL (the same -1 as "no deadline") */
STVM_API int stvm_backend_timeout_ms(stvm_vm *vm);

/* Any thread, and async-signal-safe: make a running stvm_run return STVM_ESTOPPED at its
 * next scheduling point, or at once from an OS wait (it writes the VM's eventfd), every
 * process kept as it was, so that a later run goes on. A stop asked outside stvm_run
 * ends the next run at its first scheduling point, and makes stvm_backend_fd readable
 * so that a host loop runs it. NULL is ignored. Never allocates or switches. */
STVM_API void stvm_stop(stvm_vm *vm);

/* ---- Time and delays ----------------------------------------------------------- */

/* The VM clock: UTC microseconds since 1901-01-01 (real or simulated). 0 if vm NULL. */
STVM_API uint64_t stvm_vm_now_us(stvm_vm *vm);
/* Primitive 135's value: ms since VM start plus ms_clock_start, masked 0x1FFFFFFF. */
STVM_API uint32_t stvm_vm_millisecond_clock(stvm_vm *vm);

/* The simulated clock's outside world: something a peer on its own CPU does at a
 * simulated time, unseen by the VM until it happens (a server answering 40 us after a
 * request came: it writes the answer then). fn(vm, arg) runs on the VM's thread when
 * the clock reaches at_us: during the idle process's jump or a stvm_work_us; events at
 * one time run in the order they were made. fn may write to descriptors and call
 * stvm_external_signal, stvm_sim_at and stvm_vm_now_us; nothing else of the VM's (it runs
 * inside the scheduler). Unlike a timer it does not end a wait by itself: only what it
 * does (a descriptor made ready, an external signal) can, and only when the VM looks,
 * so that the legacy idle mode's blind sleep sleeps through it as the old VM did. Events
 * still pending at stvm_vm_free are dropped uncalled. Allocates; never switches.
 * Errors:
 *   EINVAL    vm or fn NULL
 *   ESTATE    the VM's clock is not the simulated one
 *   ERANGE    at_us before the clock's now, or at or past STVM's clock limit (2^62)
 *   ENOMEM    no memory for the event */
typedef void (*stvm_sim_fn)(stvm_vm *vm, void *arg);
STVM_API int stvm_sim_at(stvm_vm *vm, uint64_t at_us, stvm_sim_fn fn, void *arg);

/* The simulated clock's modelled cost of the scheduler's own work. On the simulated
 * clock only stvm_work_us, the idle process's jumps and outside events take time, so a
 * lesson's switches, signals and waits all fall at one instant; with a cost set, each
 * such operation moves the clock on by it as it happens, and the events fall at
 * distinct times in the order they happen. The operations (op):
 *   STVM_SIM_COST_SWITCH  a switch from one process to another (not the embedding
 *                         thread's entry into stvm_run or its return)
 *   STVM_SIM_COST_SIGNAL  a semaphore's or monitor's signal, whether or not it wakes
 *                         a waiter (a SharedQueue's put and take signal semaphores)
 *   STVM_SIM_COST_WAIT    a wait on a semaphore, mutex or monitor that blocks, or that
 *                         takes a semaphore's excess signal
 *   STVM_SIM_COST_DELAY   the Delay scheduler taking a Delay in
 * Each is charged right after the operation's trace event (which keeps the time it
 * happened), with or without a trace recording. A deadline passed during a charge is
 * seen at the next scheduling point, late by at most the charge, as on a real machine;
 * an outside event (stvm_sim_at) due during it runs at its own time. us 0 (the default)
 * charges nothing; a VM with every cost 0 runs exactly as before. Never allocates;
 * never switches.
 * Errors:
 *   EINVAL    vm NULL, or op not a STVM_SIM_COST_*
 *   ERANGE    us above STVM_SIM_COST_MAX_US
 *   ESTATE    the VM's clock is not the simulated one, or the library was built without
 *             its event points (-DSTVM_TRACE_POINTS=0), where nothing could be charged */
enum {
    STVM_SIM_COST_SWITCH, STVM_SIM_COST_SIGNAL, STVM_SIM_COST_WAIT, STVM_SIM_COST_DELAY,
    STVM_SIM_COST_OPS
};
#define STVM_SIM_COST_MAX_US 1000
STVM_API int stvm_sim_set_cost(stvm_vm *vm, int op, uint32_t us);
/* The cost set for op (0: none), or EINVAL (vm NULL, op not a STVM_SIM_COST_*). */
STVM_API int64_t stvm_sim_cost(const stvm_vm *vm, int op);

/* Wait ms (or us) on a Delay handed to the VM's Delay scheduler (started on first
 * use). 0 returns at the next timing pass. The millisecond scheduler counts whole
 * ticks (it may end up to 1 ms early by the microsecond clock, as Pharo's did); the
 * microsecond scheduler never ends early. Allocates (boxed timestamps); switches.
 * Errors:
 *   EINVAL    vm NULL; ms or us negative
 *   ERANGE    longer than the scheduler allows: 0x0FFFFFFF ms for the millisecond
 *             scheduler, 2^52 us for the microsecond one
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_delay_wait_ms(stvm_vm *vm, int64_t ms);
STVM_API int stvm_delay_wait_us(stvm_vm *vm, int64_t us);

/* Pharo's BlockClosure>>valueWithin:onTimeout:: call fn(vm, arg) in the caller with a
 * time limit, ms (or us). A watchdog process (priority 79, Pharo's timingPriority - 1)
 * waits on the run's Delay, which the caller schedules; when it expires first it
 * interrupts the caller (stvm_process_interrupt), and from then until fn returns every
 * wait of the caller answers STVM_EINTR at once, as do stvm_checkpoint and
 * stvm_work_us: C cannot be unwound, so fn should return when its calls answer EINTR.
 * Nested runs each keep their own limit. A duration of 0 answers STVM_ETIMEDOUT without
 * calling fn (Pharo's rule).
 * The watchdog ends with the run, also when the caller is terminated inside fn (a
 * cleanup of the library's own, as Pharo's ensure:). Allocates (the watchdog's stack);
 * switches. (Before 0.3.0: stvm_run_within_ms(vm, ms, fn, arg), the time limit before
 * the inputs; stvm/deprecated.h keeps that form.)
 * Errors:
 *   EINVAL    vm or fn NULL; ms or us negative
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ERANGE    longer than the Delay scheduler allows (see stvm_delay_wait_ms)
 *   ETIMEDOUT the time ran out before fn returned (fn ran; its waits were cut short)
 *   ENOMEM    no memory for the watchdog or its Delay (fn not called) */
STVM_API int stvm_call_within_ms(stvm_vm *vm, stvm_fn fn, void *arg, int64_t ms);
STVM_API int stvm_call_within_us(stvm_vm *vm, stvm_fn fn, void *arg, int64_t us);

/* ---- Delay objects (Pharo's Delay) --------------------------------------------
 * A Delay made once and used many times, scheduled and unscheduled by any process,
 * through the same Delay scheduler as stvm_delay_wait_ms (its timing process and
 * heap; docs/delay-scheduling.md, "Delay objects"). Its semaphore (Pharo's
 * delaySemaphore) is signalled once each time it expires; a Delay made by
 * stvm_delay_timeout_semaphore_ms signals the caller's semaphore instead. Pharo's rules:
 *  - scheduling a Delay that is scheduled (beingWaitedOn) is refused (STVM_ESTATE),
 *    whoever scheduled it; so of several processes calling stvm_delay_wait on one
 *    Delay at once only the first waits, the others answer STVM_ESTATE;
 *  - unscheduling takes it out without signalling: a process waiting on its
 *    semaphore stays waiting (until a signal, or the Delay is scheduled again and
 *    expires); unscheduling a Delay that is not scheduled does nothing;
 *  - once expired or unscheduled it may be scheduled again, for the same duration.
 * Scheduling, unscheduling and waiting need a green process of the VM (ENOTPROC
 * otherwise); making, freeing and asking may be done from the embedding thread too. */
typedef struct stvm_delay stvm_delay;

/* A new Delay of ms (or us), not scheduled, with a semaphore of its own (Pharo's
 * forMilliseconds:). Owned by the caller until stvm_delay_free (stvm_vm_free frees the
 * rest). Any length that is not negative is made, as Pharo makes it; one longer than
 * the scheduler allows (see stvm_delay_wait_ms) is refused when it is scheduled.
 * Allocates; never switches.
 * Errors:
 *   EINVAL    vm or out NULL; ms or us negative
 *   ENOMEM    no memory for the Delay or its semaphore */
STVM_API int stvm_delay_new_ms(stvm_vm *vm, int64_t ms, stvm_delay **out);
STVM_API int stvm_delay_new_us(stvm_vm *vm, int64_t us, stvm_delay **out);

/* Release a Delay and its own semaphore (a timeout's semaphore stays the caller's).
 * Never switches.
 * Errors:
 *   EINVAL    vm or d NULL; d not a Delay of this VM
 *   EINUSE    it is scheduled; a process is inside stvm_delay_wait or
 *             stvm_delay_schedule on it; its own semaphore is waited on (or a timed wait
 *             is committed to it), registered as an external semaphore or armed as a
 *             timer's */
STVM_API int stvm_delay_free(stvm_vm *vm, stvm_delay *d);

/* Pharo's Delay>>wait: schedule d, then wait on its semaphore. STVM_OK when the wait
 * took a signal (its expiry, or any signal of the semaphore: an excess signal left by
 * an earlier expiry nobody took ends it at once, and d then stays scheduled, as in
 * Pharo). On every other way out (EINTR, ESTATE after a suspension, a terminate) d is
 * unscheduled if the scheduling this call made is still pending. Allocates (boxed
 * timestamps); switches.
 * Errors:
 *   EINVAL    vm or d NULL; d not a Delay of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    d is already scheduled (Pharo: 'This Delay has already been scheduled');
 *             or the caller was suspended while it waited, and resumed
 *   ERANGE    d is longer than the scheduler allows, or would end past the VM clock's
 *             end
 *   EINTR     the wait was interrupted, or the caller's waits are cancelled (nothing
 *             was taken)
 *   ENOMEM    no memory to start the Delay scheduler (the VM's first Delay) */
STVM_API int stvm_delay_wait(stvm_vm *vm, stvm_delay *d);

/* Pharo's Delay>>schedule: hand d to the timing process (which preempts the caller)
 * without waiting; its semaphore is signalled when it expires. The trace names no
 * waiter (process 0). Allocates (boxed timestamps); switches.
 * Errors:
 *   EINVAL    vm or d NULL; d not a Delay of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ESTATE    d is already scheduled
 *   ERANGE    d is longer than the scheduler allows, or would end past the VM clock's
 *             end
 *   ENOMEM    no memory to start the Delay scheduler */
STVM_API int stvm_delay_schedule(stvm_vm *vm, stvm_delay *d);

/* Pharo's Delay>>unschedule: take d out of the scheduler if it is scheduled (nothing
 * otherwise); nothing is signalled. Never switches.
 * Errors:
 *   EINVAL    vm or d NULL; d not a Delay of this VM
 *   ENOTPROC  not called from a green process of vm on its thread */
STVM_API int stvm_delay_unschedule(stvm_vm *vm, stvm_delay *d);

/* Pharo's isExpired: 1 when d's semaphore holds an excess signal (it expired and
 * nobody took the signal yet), else 0; STVM_EINVAL for a bad vm or d. */
STVM_API int stvm_delay_is_expired(stvm_vm *vm, const stvm_delay *d);
/* Pharo's beingWaitedOn: 1 from the moment d is scheduled until it expires or is
 * unscheduled, else 0; STVM_EINVAL for a bad vm or d. */
STVM_API int stvm_delay_being_waited_on(stvm_vm *vm, const stvm_delay *d);

/* Pharo's millisecondsToGo: the time until a scheduled d expires, never negative (ms
 * rounded up; us exact on the microsecond scheduler, to the tick on the millisecond
 * one); its whole duration while handed over but not yet taken; 0 when d is not
 * scheduled. A linear search among the scheduled Delays. Never switches.
 * Errors:
 *   EINVAL    vm, d or out NULL; d not a Delay of this VM */
STVM_API int stvm_delay_ms_to_go(stvm_vm *vm, const stvm_delay *d, int64_t *out);
STVM_API int stvm_delay_us_to_go(stvm_vm *vm, const stvm_delay *d, int64_t *out);

/* Pharo's delaySemaphore: the semaphore d signals when it expires (its own, or the
 * one given to stvm_delay_timeout_semaphore_ms), for the semaphore calls. It cannot be freed
 * with stvm_semaphore_free while d exists. NULL for NULL or a handle of another kind. */
STVM_API stvm_semaphore *stvm_delay_semaphore(stvm_delay *d);

/* Pharo's Delay class>>timeoutSemaphore:afterMSecs:: a new Delay of ms that signals
 * sem (no process waits for it), scheduled at once; *out is the Delay, to unschedule
 * it and, expired or unscheduled, to free it. sem cannot be freed while the Delay
 * exists. Allocates; switches (the timing process preempts the caller).
 * Errors:
 *   EINVAL    vm, sem or out NULL; sem not a semaphore of this VM; ms negative
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ERANGE    ms longer than the scheduler allows, or ending past the VM clock's end
 *   ENOMEM    no memory for the Delay or to start the Delay scheduler */
STVM_API int stvm_delay_timeout_semaphore_ms(stvm_vm *vm, stvm_semaphore *sem, int64_t ms,
                                             stvm_delay **out);

/* Name d, and read its name ("Names" above); its own semaphore goes by it too
 * ("tick.semaphore"; a timeout's semaphore keeps its own). */
STVM_API int stvm_delay_set_name(stvm_vm *vm, stvm_delay *d, const char *name);
STVM_API int stvm_delay_get_name(stvm_vm *vm, const stvm_delay *d, char *buf, size_t size);

/* Pharo's waitTimeoutMSecs:: wait on sem for at most ms. STVM_OK when signalled,
 * STVM_ETIMEDOUT when the time ran out (no signal consumed). The delay is unscheduled
 * on every exit path.
 * Errors:
 *   EINVAL    vm or sem NULL; sem not a semaphore of this VM; ms negative
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ETIMEDOUT no signal within ms (0: at once, unless an excess signal is there)
 *   ESTATE    the caller was suspended off the list while it waited, and resumed (see
 *             stvm_process_suspend): no signal was consumed
 *   ERANGE    ms longer than the Delay scheduler allows (see stvm_delay_wait_ms)
 *   ENOMEM    no memory to start the Delay scheduler (the VM's first timed wait)
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_semaphore_wait_timeout_ms(stvm_vm *vm, stvm_semaphore *sem, int64_t ms);
/* The same in microseconds (the microsecond Delay scheduler never ends it early). */
STVM_API int stvm_semaphore_wait_timeout_us(stvm_vm *vm, stvm_semaphore *sem, int64_t us);

/* ---- Counters ------------------------------------------------------------------ */
typedef struct stvm_stats {
    uint64_t context_switches;
    uint64_t semaphore_signals;
    uint64_t semaphore_waits;
    uint64_t delays_scheduled;      /* schedule requests taken by the timing process */
    uint64_t delays_expired;        /* delays signalled on time */
    uint64_t delays_unscheduled;    /* removed before expiry (timed wait, terminate) */
    uint64_t timing_loop_passes;
    uint64_t clock_reads;           /* primitives 135 and 240 */
    uint64_t timer_fires;           /* the one-shot timer deadline was reached */
    uint64_t boxed_allocated;       /* LargePositive/NegativeIntegers made */
    uint64_t large_int_ops;         /* integer operations with a boxed operand/result */
    uint64_t external_signals;      /* external requests turned into signals */
    uint64_t idle_sleeps;           /* times the idle process slept in the kernel */
    uint64_t objects_allocated;     /* all objects ever allocated */
    uint64_t bytes_allocated;
    uint64_t objects_live;
    uint64_t bytes_live;
    uint64_t processes_live;        /* unfinished processes, the VM's own included */
    uint64_t os_sleeps;             /* waits in the OS that could block (idle, prim 230) */
    uint64_t os_slept_us;           /* time actually spent in them (wake injection apart) */
    uint64_t wakeups_timer;         /* OS sleeps ended by: the next deadline, */
    uint64_t wakeups_io;            /*   a ready descriptor, */
    uint64_t wakeups_external;      /*   an external signal (or stvm_stop), */
    uint64_t wakeups_relinquish;    /*   the relinquish time running out */
    uint64_t io_polls_busy;         /* looks for ready descriptors while processes ran */
    uint64_t fds_ready;             /* one-shot handlers fired (a descriptor was ready) */
    uint64_t io_signals_unwaited;   /* of those, signals that found no waiter */
    uint64_t timed_waits;           /* waits bounded by a Delay (DelayWaitTimeout) */
    uint64_t socket_reads_blocked;  /* socket reads that found no data and waited */
} stvm_stats;

/* Copy the counters into the first out_size bytes of *out.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ESIZE     out_size not a size of stvm_stats this library knows */
STVM_API int stvm_vm_get_stats_(stvm_vm *vm, stvm_stats *out, size_t out_size);
#define stvm_vm_get_stats(vm, out) stvm_vm_get_stats_((vm), (out), sizeof(stvm_stats))
/* Zero the cumulative counters (not the live ones). */
STVM_API void stvm_vm_reset_stats(stvm_vm *vm);

#ifdef __cplusplus
}
#endif
#endif /* STVM_CORE_H */
