/*
 * The FFI on libffi, after Pharo's UFFI and threaded FFI (TFFI): what its files share,
 * and the primitives the image side (image-stubs/ffi/) builds the threaded runner
 * and the callback queue on.
 *
 *  ffi_signature.c  the C types, signatures ("i64(i64,i64)") and their prepared cifs
 *  ffi_marshal.c    oops to C values and back, with the VM's integer representation
 *  ffi_function.c   looking functions up (dlopen, dlsym), their lifetime
 *  ffi_call.c       the same-thread callout (UFFI's, TFFI's same-thread runner)
 *  ffi_jobs.c       threaded callouts: jobs with their semaphores, the worker callout
 *                   and its result (TFFI's primitiveWorkerCallout and
 *                   primitiveWorkerExtractReturnValue), named workers
 *  ffi_callback.c   callbacks: the closure's front end, nested or queued, and the queue
 *  ffi_state.c      the VM's FFI state, its hooks, counters and failure code
 *
 * Failure codes are Pharo's (STVM_PRIM_ERR_*): a primitive answers PRIM_OK or one of
 * them having changed nothing.
 */
#ifndef STVM_PRIMITIVES_FFI_H
#define STVM_PRIMITIVES_FFI_H

#include <ffi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <time.h>

#include "../scheduler/sched.h"
#include "../scheduler/worker_jobs.h"

/* How long stvm_vm_free waits for callouts in flight before it detaches their threads. */
#define STVM_FFI_SHUTDOWN_MS 5000
/* A nested callback runs only with this much stack left under the calling frame: the
 * handler and the conversions need it (docs/ffi.md, "Stack"). */
#define STVM_FFI_CALLBACK_STACK 2048
#define STVM_FFI_MAX_STACK_NEED ((size_t)64 << 20)

/* ---- ffi_signature.c: types and signatures ------------------------------------------ */

typedef enum ffi_kind {
    K_VOID, K_I8, K_I16, K_I32, K_I64, K_U8, K_U16, K_U32, K_U64,
    K_PTR, K_SIZE, K_F32, K_F64, K_STR, K_COUNT
} ffi_kind;

/* A parsed signature and its prepared call interface (the cif points into it: a
 * signature does not move once prepared). */
typedef struct ffi_sig {
    ffi_cif cif;
    ffi_type *atypes[STVM_FFI_MAX_ARGS];
    uint8_t ret;                    /* ffi_kind */
    uint8_t args[STVM_FFI_MAX_ARGS];
    int nargs;
} ffi_sig;

/* Parse text and prepare sig->cif. EINVAL for anything but the grammar of stvm.h. */
int stvm__ffi_sig_parse(const char *text, ffi_sig *sig);
/* The libffi type of a kind. */
ffi_type *stvm__ffi_type(ffi_kind k);

/* ---- ffi_marshal.c: values --------------------------------------------------------- */

/* One C value, in the member its kind names; `arg`/`sarg` hold integers widened to a
 * register, as libffi reads and writes return values narrower than one. */
typedef union ffi_slot {
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
    void *p;
    ffi_arg arg;
    ffi_sarg sarg;
} ffi_slot;

/* A call's arguments and result as libffi takes them. */
typedef struct ffi_frame {
    ffi_slot slots[STVM_FFI_MAX_ARGS];
    void *av[STVM_FFI_MAX_ARGS];
    ffi_slot ret;
} ffi_frame;

/* oop to a C value of kind k in *s (widened: a return value). PRIM_OK, or
 * STVM_PRIM_ERR_BAD_ARGUMENT for a wrong kind of oop or a value that does not fit. */
int stvm__ffi_to_c(stvm_vm *vm, ffi_kind k, stvm_oop oop, ffi_slot *s, bool widened);
/* A C value of kind k at p (widened: a return value) to a new oop: a SmallInteger, a
 * box, a float, an ExternalAddress or nil. STVM_OK or ENOMEM. */
int stvm__ffi_to_oop(stvm_vm *vm, ffi_kind k, const void *p, bool widened, stvm_oop *out);
/* Every argument of a call into frame: PRIM_OK, BAD_NUM_ARGS or BAD_ARGUMENT. */
int stvm__ffi_marshal(stvm_vm *vm, const ffi_sig *sig, const stvm_oop *args, int nargs,
                      ffi_frame *frame);
/* Release what stvm__ffi_to_oop made (boxes, floats, addresses); no-op for others. */
void stvm__ffi_release(stvm_vm *vm, stvm_oop oop);

/* ---- ffi_function.c ---------------------------------------------------------------- */

#define STVM_FFI_FUNCTION_MAGIC 0x46464946u   /* "FIFF": a live function */

struct stvm_ffi_function {
    uint32_t magic;
    stvm_vm *vm;
    void (*sym)(void);
    void *lib;                      /* the dlopen handle, closed with the last reference */
    ffi_sig sig;
    size_t stack_need;              /* stvm_ffi_function_set_stack */
    atomic_int refs;                /* the VM's while not freed, one per call in flight */
    int running;                    /* same-thread calls in progress (callbacks nest
                                       them); the VM's reference waits for the last */
    struct stvm_ffi_function *prev, *next;   /* the VM's functions */
};

static inline bool stvm__ffi_is_function(const stvm_vm *vm, const stvm_ffi_function *fn)
{
    return fn && fn->magic == STVM_FFI_FUNCTION_MAGIC && fn->vm == vm;
}
/* A call in flight keeps fn; the last reference closes its library and frees it (any
 * thread: a detached worker may hold the last one). */
void stvm__ffi_function_ref(stvm_ffi_function *fn);
void stvm__ffi_function_unref(stvm_ffi_function *fn);
/* stvm_vm_free: the VM lets go of every function. */
void stvm__ffi_functions_destroy(stvm_vm *vm);

/* ---- ffi_call.c: calling ------------------------------------------------------------ */

/* Call fn with the marshalled frame on this thread (the worker's, or the VM's). */
static inline void stvm__ffi_invoke(stvm_ffi_function *fn, ffi_frame *f)
{
    ffi_call(&fn->sig.cif, fn->sym, &f->ret, f->av);
}

/* Record FFI_CALL or FFI_RETURN of fn for the active process (vm->trace is recording).
 * Cold and out of line: everything an event needs is worked out here, so that an
 * untraced callout pays one test of vm->trace per event point and nothing more. */
__attribute__((cold)) void stvm__ffi_trace_emit(stvm_vm *vm, int kind,
                                                const stvm_ffi_function *fn, int64_t detail,
                                                int64_t extra);
static inline void stvm__ffi_trace(stvm_vm *vm, int kind, const stvm_ffi_function *fn,
                                   int64_t detail, int64_t extra)
{
    if (stvm__tracing(vm))
        stvm__ffi_trace_emit(vm, kind, fn, detail, extra);
}

/* ---- ffi_jobs.c: threaded callouts -------------------------------------------------- */

/* One threaded call: a task for a worker group, its frame, and the semaphore its
 * caller waits on (registered in the external table once, kept while the job is
 * reused). */
typedef struct ffi_job {
    stvm_job base;                  /* first: its task and semaphore (worker_jobs.h) */
    stvm_ffi_function *fn;          /* referenced while queued or running */
    uint8_t ret;                    /* the result's ffi_kind (fn goes before it is read) */
    ffi_frame frame;
    struct ffi_job *prev, *next;    /* every job of the VM */
} ffi_job;

#define STVM_FFI_WORKER_MAGIC 0x4B524F57u     /* "WORK" */

struct stvm_ffi_worker {
    uint32_t magic;
    stvm_vm *vm;
    stvm_workers *group;
    struct stvm_ffi_worker *prev, *next;
};

/* A job with a registered semaphore, reused when one is free (abandoned jobs whose
 * call has come back are taken back first). EFULL (no external slot), ENOMEM. */
int stvm__ffi_job_take(stvm_vm *vm, ffi_job **out);
/* primitiveWorkerCallout: marshal the arguments into job and queue it on w (NULL = the
 * VM's pool, started on first use). STVM_OK; EPRIM with the failure code recorded
 * (nothing queued); ESYS (no thread could start); ENOMEM. */
int stvm__ffi_worker_callout(stvm_vm *vm, stvm_ffi_worker *w, stvm_ffi_function *fn,
                             const stvm_oop *args, int nargs, ffi_job *job);
/* Has the worker returned? (after the job's semaphore was signalled, always) */
static inline bool stvm__ffi_job_done(ffi_job *job)
{
    return stvm__job_done(&job->base);
}
/* primitiveWorkerExtractReturnValue: the result as an oop (result NULL: dropped), and
 * the job back to the free list. STVM_OK or ENOMEM. */
int stvm__ffi_worker_result(stvm_vm *vm, ffi_job *job, stvm_oop *result);
/* The caller of job was terminated: the call finishes on its worker and the job comes
 * back when its signal has been taken. */
void stvm__ffi_job_abandon(stvm_vm *vm, ffi_job *job);
/* Is w a named worker of vm? */
bool stvm__ffi_worker_valid(stvm_vm *vm, stvm_ffi_worker *w);
/* The VM's pool, started on first use, for other work that must leave the VM's thread:
 * the SocketPlugin's name lookups (socket_lookup.c) share its threads. ENOMEM. */
int stvm__ffi_pool(stvm_vm *vm, stvm_workers **out);
/* Give a job that was never queued back. */
void stvm__ffi_job_put(stvm_vm *vm, ffi_job *job);
/* stvm_vm_free: stop the pool and the named workers (waiting up to deadline for calls
 * in flight), then free every job no detached thread still runs. */
void stvm__ffi_jobs_destroy(stvm_vm *vm, const struct timespec *deadline);

/* ---- ffi_callback.c: callbacks ------------------------------------------------------ */

#define STVM_FFI_CALLBACK_MAGIC 0x4B434243u   /* "CBCK": a live callback */

struct stvm_ffi_callback {
    uint32_t magic;                 /* 0 once freed */
    stvm_vm *vm;
    ffi_sig sig;
    stvm_ffi_handler handler;
    void *arg;
    ffi_closure *closure;
    void *code;                     /* the C function */
    atomic_int dead;                /* freed: its C function answers 0 */
    struct stvm_ffi_callback *next; /* every callback of the VM, freed ones too */
};

/* A callback from another thread, on that thread's stack while it waits. */
typedef struct ffi_invocation {
    stvm_ffi_callback *cb;
    void *ret;                      /* libffi's return slot and argument pointers */
    void **args;
    sem_t done;                     /* posted when ret holds the answer */
    int64_t queued_at;              /* when it was queued (stvm__spin_now) */
    struct ffi_invocation *next;
} ffi_invocation;

/* The closure of a new callback (its handler, arg and signature set). ESYS, EINVAL. */
int stvm__ffi_closure_make(stvm_ffi_callback *cb);
/* The queue's semaphore slot (the callback process waits on it); until it is set,
 * callbacks from other threads are refused. */
void stvm__ffi_callback_queue_open(stvm_vm *vm, int index);
/* The callback process: the next queued invocation (NULL if none: the queue was
 * flushed), and running it (the handler, or 0 for a freed callback) and answering its
 * thread. */
ffi_invocation *stvm__ffi_callback_take(stvm_vm *vm);
void stvm__ffi_callback_serve(stvm_vm *vm, ffi_invocation *inv);
/* Answer 0 to every queued invocation and the one being run (end of a run, or the VM
 * being freed); the queue refuses new ones until reopened by a run. */
void stvm__ffi_callbacks_flush(stvm_vm *vm, bool closing);
/* stvm_vm_free: free every callback's closure and record. */
void stvm__ffi_callbacks_destroy(stvm_vm *vm);

/* ---- ffi_state.c: the VM's FFI state ----------------------------------------------- */

typedef struct ffi_state {
    stvm_ffi_stats stats;           /* VM thread only, but for the next one */
    atomic_ullong refused;          /* callbacks answered 0: any thread */
    /* functions, threaded calls and workers (ffi_function.c, ffi_jobs.c) */
    stvm_ffi_function *functions;
    stvm_workers *pool;             /* started on the first threaded call */
    stvm_ffi_worker *workers;       /* named workers */
    ffi_job *jobs;                  /* every job */
    stvm_job_pool spare_jobs;       /* free ones, and those whose caller was terminated */
    /* callbacks (ffi_callback.c) */
    stvm_ffi_callback *callbacks;
    pthread_mutex_t queue_lock;     /* the fields below, up to host_* */
    ffi_invocation *queue_head, *queue_tail;
    ffi_invocation *serving;        /* being run by the callback process */
    bool accepting;                 /* callbacks from other threads are taken */
    int queue_index;                /* external slot of the queue's semaphore, 0: none */
    /* a same-thread callout of the embedding thread outside stvm_run, whose
     * callbacks come back on that thread and run nested */
    atomic_int host_depth;
    _Atomic pthread_t host_thread;
    /* the image side's callback process (image-stubs/ffi/ffi_callbacks.c) */
    stvm_process *callback_process;
    /* How long a worker out of calls, a process that waits for a thread with nothing
     * else to run, and a foreign thread waiting for its callback's answer look for the
     * event before sleeping in the OS (config ffi_spin_us, adapted: spin.h). 0 where the
     * VM's thread may use one CPU only: a spinner would keep the CPU from the thread it
     * waits for. */
    int64_t spin_ns;
    stvm_spin vm_spin, answer_spin;
} ffi_state;

/* The VM's FFI state, made (and its hooks installed) on first use. ENOMEM. */
int stvm__ffi_state(stvm_vm *vm, ffi_state **out);
static inline ffi_state *stvm__ffi_state_of(stvm_vm *vm)
{
    return vm->ffi.state;
}
/* STVM_FFI_SHUTDOWN_MS from now, on the clock pthread_timedjoin_np reads. */
void stvm__ffi_shutdown_deadline(struct timespec *out);
/* A green process about to wait for a thread (a worker's completion, a callback from
 * another thread) while nothing but the idle process could run: look for an external
 * event for up to the spin's window (never past the next deadline) before the VM
 * sleeps. Answers what to hand stvm__ffi_spin_woke once the wait is over. */
int64_t stvm__ffi_spin(stvm_vm *vm);
void stvm__ffi_spin_woke(stvm_vm *vm, int64_t since);
/* Record a failure code for stvm_ffi_last_failure and answer STVM_EPRIM. */
int stvm__ffi_fail(stvm_vm *vm, int code);

#endif
