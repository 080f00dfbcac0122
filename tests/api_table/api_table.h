/*
 * The adversarial API table's shared parts (tests/test_api_table.c is the suite and
 * its README; tests/README.md lists the files): the public functions in header order,
 * what a row names (VMs, handles, oops, descriptors) and the row itself, the fixture a
 * row's call is made in, the snapshot that checks that a refused call changed nothing,
 * and the module: one file a part of the header (api_table/rows_*.c) holds, for each of
 * its functions, how to call it, what its generated rows need and the rows written out.
 */
#ifndef STVM_TESTS_API_TABLE_H
#define STVM_TESTS_API_TABLE_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include "helpers.h"

/* ---- the public functions ------------------------------------------------------- */

/* Every public function, in header order (stvm.h's sub-headers in the order it includes
 * them). every_public_function_has_rows checks this list, and its order, against the
 * headers themselves. */
#define API_FUNCTIONS(X)                                                                 \
    X(version) X(version_string) X(context_backend) X(measure_raw_switch) X(strerror)    \
    X(err_name) X(config_init) X(config_check) X(idle_mode_name) X(vm_create) X(vm_free) X(vm_config)         \
    X(spawn) X(spawn_sized) X(spawn_suspended) X(run) X(yield) X(vm_active_process)      \
    X(checkpoint) X(work_us) X(process_resume) X(process_suspend) X(process_terminate)   \
    X(process_interrupt) X(process_release) X(process_join) X(ensure) X(ensure_pop)      \
    X(process_set_priority) X(process_get_info) X(vm_processes) X(vm_blocked_report)     \
    X(vm_check_invariants) X(semaphore_new) X(semaphore_free) X(semaphore_signal)        \
    X(semaphore_wait) X(semaphore_critical) X(semaphore_try_wait) X(semaphore_excess)    \
    X(semaphore_set_name) X(semaphore_get_name)                                          \
    X(mutex_new) X(mutex_free) X(mutex_enter) X(mutex_enter_timeout_ms) X(mutex_exit)    \
    X(mutex_try_enter) X(mutex_owner) X(mutex_critical) X(mutex_set_name)               \
    X(mutex_get_name) X(queue_new) X(queue_free)                                         \
    X(queue_put) X(queue_put_timeout_ms) X(queue_take) X(queue_take_timeout_ms)          \
    X(queue_try_take) X(queue_peek) X(queue_size) X(queue_flush) X(queue_close)          \
    X(queue_open_external) X(queue_put_external) X(queue_close_external)                 \
    X(queue_set_name) X(queue_get_name) X(monitor_new) X(monitor_free)                   \
    X(monitor_enter) X(monitor_enter_timeout_ms) X(monitor_try_enter) X(monitor_exit)    \
    X(monitor_critical) X(monitor_owner) X(monitor_depth) X(monitor_wait)                \
    X(monitor_wait_timeout_ms) X(monitor_wait_on) X(monitor_wait_on_timeout_ms)          \
    X(monitor_wait_while) X(monitor_wait_until) X(monitor_wait_while_on)                 \
    X(monitor_wait_until_on) X(monitor_signal) X(monitor_signal_all)                     \
    X(monitor_signal_on) X(monitor_signal_all_on) X(monitor_signal_really_all)           \
    X(monitor_set_name) X(monitor_get_name)                                              \
    X(local_new) X(local_free) X(local_get) X(process_get_local) X(local_set)            \
    X(local_clear) X(local_during) X(external_register) X(external_unregister)           \
    X(external_signal) X(run_mode) X(backend_fd) X(backend_timeout_ms) X(stop)           \
    X(vm_now_us) X(vm_millisecond_clock) X(sim_at) X(sim_set_cost) X(sim_cost)           \
    X(delay_wait_ms) X(delay_wait_us)                                                    \
    X(call_within_ms) X(call_within_us) X(delay_new_ms) X(delay_new_us) X(delay_free)      \
    X(delay_wait) X(delay_schedule) X(delay_unschedule) X(delay_is_expired)              \
    X(delay_being_waited_on) X(delay_ms_to_go) X(delay_us_to_go) X(delay_semaphore)      \
    X(delay_timeout_semaphore_ms) X(delay_set_name) X(delay_get_name)                    \
    X(semaphore_wait_timeout_ms)                                                         \
    X(semaphore_wait_timeout_us) X(vm_get_stats) X(vm_reset_stats) X(fd_wait)            \
    X(tcp_listen) X(tcp_connect) X(unix_listen) X(unix_connect) X(socket_accept)         \
    X(socket_send) X(socket_recv) X(socket_shutdown) X(socket_close) X(socket_fd)        \
    X(socket_port) X(socket_peer_address) X(socket_local_address) X(socket_status)       \
    X(socket_read_semaphore) X(socket_set_name) X(socket_get_name)                       \
    X(stream_open) X(stream_set_read_timeout_ms)                                         \
    X(stream_set_write_timeout_ms) X(stream_read) X(stream_read_line) X(stream_write)    \
    X(stream_flush) X(stream_get_stats) X(stream_close)                                  \
    TRACE_FUNCTIONS(X) X(smallint_max) X(smallint_min) X(oop_is_smallint)                \
    X(oop_is_integer) X(int_from_i64) X(int_from_u64) X(int_to_i64) X(int_to_u64)        \
    X(int_add) X(int_sub) X(int_mul) X(int_compare) X(oop_release) X(bytes_new)          \
    X(bytes_data) X(semaphore_oop) X(mutex_oop) X(process_oop) X(oop_class_name)         \
    X(primitive_call) X(primitive_call_named) X(primitive_named_list)                    \
    X(primitive_name) X(primitive_numbers) X(primitive_error_name) X(ffi_function_new)   \
    X(ffi_function_at) X(ffi_function_free) X(ffi_function_set_stack) X(ffi_call)        \
    X(ffi_call_threaded) X(ffi_worker_new) X(ffi_worker_free) X(ffi_call_on)             \
    X(ffi_last_failure) X(float_new) X(float_value) X(ptr_oop) X(oop_ptr)                \
    X(ffi_callback_new) X(ffi_callback_free) X(ffi_get_stats)
/* Tracing (its rows are trace_rows, after the others). */
#define TRACE_FUNCTIONS(X)                                                               \
    X(trace_start) X(trace_stop) X(trace_dropped) X(trace_count) X(trace_get)            \
    X(trace_set_hook) X(trace_process_name) X(trace_kind_name) X(trace_write_text)         \
    X(trace_write_json)

enum fn_id {
#define FN_ENUM(n) F_##n,
    API_FUNCTIONS(FN_ENUM)
#undef FN_ENUM
    N_FN
};

/* "stvm_version", ...: each function's name, by its F_ id. */
extern const char *const api_fn_names[N_FN];

/* ---- what a row can name ---------------------------------------------------------- */

/* The fixture's VMs. V_MAIN (0, the default) holds objects in every state; V_OTHER
 * supplies foreign handles; the others are there for their configuration. */
enum vm_id {
    V_NULL = -1,
    V_MAIN = 0,   /* 61-bit, us Delays, simulated clock, external table of 2 (full) */
    V_OTHER,      /* foreign handles and boxes; its timer armed by primitive 242 */
    V_31,         /* 31-bit SmallIntegers */
    V_MS,         /* the millisecond Delay scheduler (135/136) */
    V_END,        /* simulated clock 500 us before the VM clock's end (2^62 us) */
    V_NET,        /* sockets and streams in every state (V_OTHER has the foreign ones) */
    N_VM
};
extern const char *const api_vm_names[N_VM];   /* "main", "other", ... */

#define CLOCK_END ((uint64_t)1 << 62)

/* Handles (of the kind the function expects unless the name says otherwise). */
enum handle_id {
    H_DEFAULT = 0,   /* the row VM's plain one: a semaphore nobody waits on, a free mutex,
                        a suspended process */
    H_NULL,
    H_SEM, H_MUTEX, H_PROC,            /* the row VM's plain ones, whatever is expected */
    H_FOREIGN,                         /* another VM's plain one of the expected kind */
    H_BOX,                             /* a boxed integer of V_MAIN */
    H_G_ZERO, H_G_ONES, H_G_TEXT,      /* readable memory of the wrong layout */
    H_G_FORGED,                        /* the expected class index, another VM everywhere */
    /* V_MAIN's objects in states */
    H_SEM_EXCESS,                      /* one excess signal */
    H_PARK,                            /* processes wait on it */
    H_EXT,                             /* registered in the external table */
    H_ARMED,                           /* V_OTHER: the timer's semaphore */
    H_BUSY,                            /* owned by P_OWNER, P_MWAITER waits on it */
    H_BUSY2,                           /* owned by P_OWNER, no waiter */
    H_READY, H_WAITING, H_DONE, H_UNHELD, H_OWNER, H_MWAITER, H_IDLE, H_TIMING,
    H_SELF,                            /* the green process making the call */
    /* sockets and streams (V_NET's unless foreign; the plain socket is a connected one
       nobody waits on and without a stream, the plain stream one nobody waits in) */
    H_SOCKET, H_STREAM,                /* the row VM's plain ones (V_NET's if it has none) */
    H_BYTES,                           /* a ByteArray (oop) */
    H_RECORD,                          /* a SocketHandle, the SocketPlugin's record (oop) */
    H_LISTENER,                        /* a listener, no connection pending */
    H_BUSY_LISTENER,                   /* a listener a process accepts on (waits) */
    H_FOREIGN_LISTENER,                /* V_OTHER's listener */
    H_STREAMED,                        /* a connected socket with a stream open on it */
    H_READ_WAITED,                     /* a connected socket a process waits to read from,
                                          through its stream */
    H_WAITED_STREAM,                   /* that stream */
    H_DELAY_SEM,                       /* the row VM's plain Delay's semaphore */
    H_QUEUE_FULL,                      /* V_MAIN: a bounded queue of 1, holding an item */
    H_QUEUE_OPEN,                      /* V_OTHER: a queue open for other threads */
    H_QUEUE_CLOSED,                    /* V_MAIN: an empty closed queue */
    H_QUEUE_OPEN_CLOSED,               /* V_OTHER: a queue open for other threads, closed */
    H_LOCAL_DYN,                       /* V_MAIN: a dynamic process-local variable */
    H_MONITOR,                         /* the row VM's plain monitor, whatever is expected */
    H_MONITOR_OWNED,                   /* V_MAIN: a monitor P_OWNER owns (depth 2) */
    H_MONITOR_WAITED,                  /* V_MAIN: a free monitor a process waits on (its
                                          default condition queue) */
    N_HANDLE
};
enum kind { K_NONE, K_SEM, K_MUTEX, K_PROC, K_SOCKET, K_STREAM, K_DELAY, K_QUEUE, K_LOCAL,
            K_MONITOR, N_KIND };

/* An oop a row passes: nil (the default), a raw word, a tagged SmallInteger of any
 * value (beyond a VM's width too), or an object of the fixture. */
typedef struct ospec {
    int k;
    uint64_t v;
} ospec;
enum { O_NIL, O_RAW, O_SI, O_OBJ };
#define RAW(w) {O_RAW, (uint64_t)(w)}
#define SI(v) {O_SI, (uint64_t)(int64_t)(v)}
#define OB(x) {O_OBJ, (x)}
/* A tagged SmallInteger word, as O_SI makes it. */
#define SI_OOP(v) ((stvm_oop)(((uint64_t)(int64_t)(v) << 1) | 1))
enum object_id {
    OB_SEM, OB_MUTEX, OB_BUSY, OB_SUSP, OB_READY, OB_WAITING, OB_DONE, OB_UNHELD, OB_IDLE,
    OB_TIMING, OB_SELF, OB_SEM_EXCESS,
    OB_FOREIGN_SEM, OB_FOREIGN_MUTEX, OB_FOREIGN_PROC, OB_OTHER_SEM, /* V_OTHER's own sem */
    OB_BOX_MAX,        /* V_MAIN: 2^64 - 1 */
    OB_BOX_NEG,        /* V_MAIN: -2^63 */
    OB_BOX_2_63,       /* V_MAIN: 2^63 */
    OB_RELEASED,       /* V_MAIN: a box given back with stvm_oop_release */
    OB_FOREIGN_BOX,    /* V_OTHER: 2^64 - 1 */
    OB_PAST_END,       /* V_OTHER: 2^62 + 1, a deadline past the VM clock's end */
    OB_BOX31,          /* V_31: 2^32 (boxed there) */
    OB_G_ZERO, OB_G_FORGED_SEM, OB_G_FORGED_PROC,
    OB_BYTES,          /* V_NET: a ByteArray of 16 bytes */
    OB_FOREIGN_BYTES,  /* V_OTHER: a ByteArray */
    OB_RELEASED_BYTES, /* V_NET: a ByteArray given back with stvm_oop_release */
    OB_RECORD,         /* V_NET: a SocketHandle made by primitiveSocketCreate3Semaphores */
    OB_DEAD_RECORD,    /* V_NET: one destroyed by primitiveSocketDestroy (not released) */
    OB_FOREIGN_RECORD, /* V_OTHER: a SocketHandle */
    OB_SOCKET,         /* V_NET: the plain socket as an oop (the header's "Socket") */
    OB_G_FORGED_RECORD,/* a forged SocketHandle header */
};

/* stvm_config_check / stvm_vm_create: one field broken per row. */
enum cfg_fault {
    CFG_OK, CFG_BITS_0, CFG_BITS_32, CFG_BITS_64, CFG_STACK_4K, CFG_STACK_BIG, CFG_STACK_MAX,
    CFG_GUARD_1, CFG_GUARD_BIG, CFG_METHOD_NEG, CFG_METHOD_4, CFG_DCLOCK_2, CFG_DCLOCK_NEG,
    CFG_CLOCK_2, CFG_SIM_PAST_END, CFG_SIM_MAX, CFG_MS_START,
    CFG_RELINQUISH_BIG, CFG_EXT_0, CFG_EXT_NEG, CFG_EXT_BIG, N_CFG
};

/* Descriptors for stvm_fd_wait. */
enum fd_id {
    FD_PIPE = 0,          /* the read end of a pipe nobody writes to */
    FD_NEG, FD_INT_MIN, FD_INT_MAX,
    FD_CLOSED,            /* a number no descriptor has */
    FD_FILE,              /* a regular file */
    FD_DEVNULL,           /* /dev/null (epoll refuses it too) */
    FD_LISTENER,          /* V_NET's listener nobody accepts on */
    FD_BUSY_LISTENER,     /* V_NET's listener a process accepts on */
    FD_READ_WAITED,       /* V_NET's socket a process waits to read from */
};

/* A port the fixture's listener has (n = PORT_LISTENING). */
#define PORT_LISTENING ((int64_t)1 << 40)
/* s or s2 = NULL_STR: pass NULL (s = NULL: the default, "127.0.0.1" or "SocketPlugin"). */
extern const char api_null_str[];
#define NULL_STR api_null_str

/* The arguments of one call. Zero is the harmless choice for every field: the main VM,
 * the plain handle, nil oops, out-parameters given. */
typedef struct args {
    int vm;          /* enum vm_id */
    int h;           /* enum handle_id */
    int64_t n;       /* a number: priority, duration, index, nargs, code, iterations, port,
                        events, run mode */
    int64_t m;       /* the primitive's number; a backlog */
    int64_t t;       /* a timeout in ms (sockets, streams, descriptors) */
    uint64_t z;      /* a size, an unsigned value, a buffer size, a length */
    int fd;          /* enum fd_id */
    const char *s;   /* a host; a module */
    const char *s2;  /* a named primitive */
    ospec o[8];      /* oops: operands; a primitive's receiver and its arguments */
    bool null_out;   /* NULL for the out-parameter */
    bool null_ptr;   /* NULL for the other pointer: fn, args, buf, cfg, why, size */
    bool null_fail;  /* stvm_primitive_call: NULL fail_code */
    int cfg;         /* enum cfg_fault */
    size_t ssize;    /* a struct's size given to the '_' function of a call that takes one
                        (include/README.md, "Structs that grow"); 0: the macro, which
                        gives the header's sizeof */
} args;

/* The size a row gives a call that takes a struct: its own, or the header's sizeof. */
#define SSIZE(type) (a->ssize ? a->ssize : sizeof(type))

/* Answers of functions that do not answer an error code. */
enum {
    R_VOID = 1000,   /* a void function returned */
    R_NULL, R_NONNULL, R_TRUE, R_FALSE, R_ZERO, R_NONZERO,
    R_COUNT,         /* a count or length (>= 0) */
    R_ANY,           /* any answer (no documented one): only "changes nothing" is checked */
    R_NOT_MINE = 2000, /* a module's call: the function is another module's */
};

enum ctx { C_HOST, C_GREEN, C_THREAD, C_ELSEWHERE, C_BARE, N_CTX };
extern const char *const api_ctx_names[N_CTX];   /* "from the host thread", ... */

typedef struct row {
    int fn;
    const char *what;     /* what is wrong with the call */
    int ctx;
    args a;
    int want;             /* STVM_* or R_* */
    int want_fail;        /* with STVM_EPRIM: Pharo's failure code */
    const char *defect;   /* a known defect (see known_defects): skipped by default */
    const char *text;     /* the text the call must write (stvm_config_check's why) */
} row;


/* ---- the fixture -------------------------------------------------------------------- */

union out_slot {
    stvm_oop oop;
    int i;
    int64_t i64;
    uint64_t u64;
    double d;
    stvm_vm *vm;
    stvm_semaphore *sem;
    stvm_mutex *m;
    stvm_process *p;
    stvm_config cfg;
    stvm_stats stats;
    stvm_process_info info;
    int nums[64];
    stvm_socket *sock;
    stvm_stream *st;
    stvm_stream_stats sst;
    stvm_delay *dl;
    stvm_queue *qu;
    stvm_local *lv;
    stvm_monitor *mon;
    void *item;
    struct { uint8_t *data; size_t size; } bd;
    const char *named[2][32];   /* stvm_primitive_named_list: modules, names */
    char buf[512];              /* what a receive or read may write */
    stvm_trace_event tev;
};
#define OUT_PATTERN 0xA5

typedef struct result result;   /* a row's (test_api_table.c) */

#define N_WATCH_SEM 16
#define N_WATCH_MUTEX 8
#define N_WATCH_MONITOR 4
#define N_WATCH_PROC 16
#define N_WATCH_SOCK 12
#define N_WATCH_STREAM 4
#define N_WATCH_RECORD 4

/* A VM's sockets and streams (V_NET: all of them; V_OTHER: lst, cli, srv, st). */
typedef struct netset {
    stvm_socket *lst;        /* a listener on 127.0.0.1, nobody accepts on it */
    stvm_socket *busy_lst;   /* a listener a process waits to accept on */
    stvm_socket *cli, *srv;  /* a connected pair (srv accepted from lst); srv has st */
    stvm_socket *cli2, *srv2;/* another; a process waits to read from srv2 through st2 */
    stvm_stream *st, *st2;
    int port;                /* lst's */
} netset;

/* The FFI's objects (rows_ffi.c makes them): an i64(i64,i64) function of rows_ffi.c
 * in V_MAIN, V_OTHER and V_31, a named worker in V_MAIN and V_OTHER, a
 * callback in V_OTHER only (its queue process would keep a VM that runs from ever
 * answering EDEADLOCK), a float and an address in V_MAIN and V_OTHER. */
typedef struct ffi_fx {
    stvm_ffi_function *fn[N_VM];
    stvm_ffi_worker *worker[N_VM];
    stvm_ffi_callback *cb;
    stvm_oop flt[N_VM], addr[N_VM];
} ffi_fx;

typedef struct fx {
    stvm_vm *vm[N_VM];
    stvm_semaphore *sem[N_VM];
    stvm_delay *delay[N_VM];      /* every VM: a Delay of 1 ms, not scheduled */
    stvm_queue *queue[N_VM];      /* every VM: an empty unbounded queue */
    stvm_queue *queue_full, *queue_open, *queue_closed, *queue_open_closed;
    stvm_local *local[N_VM];      /* every VM: a process-local variable nobody set */
    stvm_local *local_dyn;        /* V_MAIN: a dynamic one */
    stvm_monitor *monitor[N_VM];  /* every VM: a free monitor nobody waits on */
    stvm_monitor *monitor_owned, *monitor_waited;
    stvm_mutex *mtx[N_VM];
    stvm_process *susp[N_VM];     /* V_MAIN, V_OTHER, V_NET: a suspended process, held */
    stvm_socket *sock[N_VM];      /* V_NET and V_OTHER: the plain socket (cli) */
    stvm_stream *stream[N_VM];    /* V_NET and V_OTHER: the plain stream (st) */
    stvm_oop bytes[N_VM];         /* V_NET and V_OTHER: a ByteArray */
    netset net[N_VM];             /* V_NET and V_OTHER */
    stvm_process *acceptor, *reader;   /* V_NET: waiting in accept, in a stream read */
    stvm_oop released_bytes, rec, dead_rec, foreign_rec;
    int pipe[2], file_fd, devnull_fd, closed_fd;
    stvm_semaphore *net_park;     /* V_NET: registered as external, for the parker */
    int net_park_index;
    int nnamed;
    stvm_semaphore *sem_excess, *park, *ext, *ext2, *armed;
    stvm_mutex *busy, *busy2;
    stvm_process *ready, *waiting, *done, *unheld, *owner, *mwaiter, *idle, *timing, *self;
    int ext_index;
    ffi_fx ffi;
    stvm_oop box_max, box_neg, box_2_63, released, foreign_box, past_end, box31;
    int nprims;

    /* what snapshots look at */
    struct { int vm; stvm_semaphore *s; } wsem[N_WATCH_SEM];
    struct { int vm; stvm_mutex *m; } wmutex[N_WATCH_MUTEX];
    struct { int vm; stvm_monitor *m; } wmonitor[N_WATCH_MONITOR];
    struct { int vm; stvm_process *p; } wproc[N_WATCH_PROC];
    struct { int vm; stvm_socket *s; bool probe; } wsock[N_WATCH_SOCK];
    struct { int vm; stvm_stream *st; } wstream[N_WATCH_STREAM];
    struct { int vm; stvm_oop rec; } wrec[N_WATCH_RECORD];
    int nwsem, nwmutex, nwmonitor, nwproc, nwsock, nwstream, nwrec;

    /* what a call may write */
    union out_slot out;
    char text[256];
    int fail_code;

    /* the rows being run */
    const row *rows;
    int nrows;
    bool defects;                 /* run the known-defect rows (and only those) */
    result *res;

    /* the elsewhere phase */
    int parked_vm;                /* whose rows: V_MAIN (and NULL-vm rows) or V_NET */
    pid_t host_tid;
    atomic_int parked;
    int bad_line;
} fx;


/* Readable memory of the wrong layout (fixture.c). */
extern unsigned char api_g_zero[512], api_g_ones[512], api_g_text[512];

static inline stvm_vm *vm_of(fx *f, int v) { return v == V_NULL ? NULL : f->vm[v]; }

/* The VM whose objects a row's handles come from. */
static inline int home_of(const row *r) { return r->a.vm == V_NULL ? V_MAIN : r->a.vm; }

/* fixture.c: the fixture made and freed, a VM's plain handle of a kind, the handle, oop
 * and descriptor a row names. */
void api_fx_setup(fx *f);
void api_fx_teardown(fx *f);
void *api_plain(fx *f, int v, int kind);
void *api_handle_of(fx *f, const args *a, int kind);
stvm_oop api_oop_of(fx *f, ospec s);
int api_fd_of(fx *f, int id);

/* rows_ffi.c: the FFI's objects of the fixture. */
void api_ffi_make(fx *f);

/* ---- making one call ---------------------------------------------------------------- */

/* A row's arguments as the call takes them (test_api_table.c resolves them once). */
typedef struct call_in {
    stvm_vm *vm;
    stvm_semaphore *sem;
    stvm_mutex *m;
    stvm_process *p;
    stvm_socket *sk;
    stvm_stream *st;
    stvm_delay *dl;
    stvm_queue *qu;
    stvm_local *lv;
    stvm_process *lp;         /* stvm_process_get_local's process: the plain one, or a.m's */
    stvm_monitor *mon;
    int qid;                  /* a monitor's condition queue */
    stvm_monitor_pred pred;   /* NULL with null_ptr */
    stvm_fn fnp;              /* NULL with null_ptr */
    union out_slot *o;        /* the out-parameter; NULL with null_out */
    stvm_oop o0, argv[7];     /* a.o's oops */
    void *buf;                /* what a transfer reads or writes */
    const char *host;         /* a.s, or "127.0.0.1" */
    /* The name calls: the name (a->s; NULL_STR: NULL), and the getter's buffer
     * (null_ptr: NULL) of nsize bytes (a.z; 0: the whole of f->text). */
    const char *name;
    char *nbuf;
    size_t nsize;
    const char *path;         /* a Unix path: nothing is there unless a row names one */
    int port;                 /* a.n; PORT_LISTENING: the fixture's listener's */
} call_in;

static inline void nothing_fn(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

static inline bool pred_false(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
    return false;
}

static inline int yes(bool b) { return b ? R_TRUE : R_FALSE; }
static inline void local_destroy(void *value) { (void)value; }
static inline void *local_inherit(void *value, stvm_process *child) { return value; }
static inline int null_or_not(const void *p) { return p ? R_NONNULL : R_NULL; }
static inline int count_or(int rc) { return rc < 0 ? rc : R_COUNT; }
static inline int text_ok(const char *s) { return yes(s && s[0]); }


/* ---- snapshots: what a failed call must leave as it was (snapshot.c) -------------- */

typedef struct snap {
    stvm_stats stats[N_VM];
    int invariants[N_VM];
    int64_t excess[N_WATCH_SEM];
    stvm_process *owner[N_WATCH_MUTEX];
    struct { stvm_process *owner; int64_t depth; } monitor[N_WATCH_MONITOR];
    struct {
        int rc, state, priority;
        bool held;
        const void *on;
        int lrc[2];          /* stvm_process_get_local: its VM's plain variable, V_MAIN's dynamic */
        void *lval[2];
    } proc[N_WATCH_PROC];
    /* the green process making the call: its values of each VM's plain variable and of
     * V_MAIN's dynamic one (EINVAL for the VMs it is not a process of) */
    struct { int rc; void *v; } self_local[N_VM + 1];
    int64_t resolver[N_VM][2];   /* the SocketPlugin's resolver: status, error */
    /* a socket's status, port, descriptor, read semaphore's excess, and what
     * stvm_fd_wait(fd, READ, 0) answers (EWAITING while a handler is armed for reading;
     * ENOTPROC outside a green process of the socket's VM) */
    struct { int status, port, fd, probe; int64_t excess; } sock[N_WATCH_SOCK];
    struct { int rc; stvm_stream_stats st; } stream[N_WATCH_STREAM];
    int64_t rec[N_WATCH_RECORD][2];   /* a SocketHandle's status and error */
    struct { int rc; uint8_t *data; size_t size; } bytes[N_VM];
    int64_t sim_cost[N_VM][STVM_SIM_COST_OPS];   /* stvm_sim_cost */
    /* the watched semaphores', mutexes', monitors' and sockets' names (get_name's answer
     * and text: a refused set_name leaves them as they were) */
    struct { int rc; char text[STVM_NAME_MAX + 1]; } name[N_WATCH_SEM + N_WATCH_MUTEX +
                                                          N_WATCH_MONITOR + N_WATCH_SOCK];
} snap;

/* Unchecked (callable from a green process): only VM calls that change nothing. */
void api_snap_take(fx *f, snap *s);
/* The first difference between two snapshots, written into buf ("" if none). */
void api_snap_diff(const fx *f, const snap *a, const snap *b, char *buf, size_t size);
/* The out-parameters still hold OUT_PATTERN. */
bool api_out_clean(const fx *f);


/* ---- the rows ------------------------------------------------------------------------ */

/* One line per function: what the generated rows need to know. */
typedef struct fn_desc {
    int null_vm;      /* what a NULL vm answers; 0: the function takes no vm */
    int kind;         /* K_*: the kind of its handle argument */
    int bad_handle;   /* what a wrong handle answers */
    int null_out;     /* what a NULL out-parameter answers; 0: none, or NULL allowed */
    int not_proc;     /* what a call outside a green process of the VM answers; 0: fine */
    int ctx;          /* where its generated rows run (C_GREEN: it needs a process) */
    args ok;          /* otherwise valid arguments */
    const int *wrong; /* the wrong handles to try (0-terminated); NULL: wrong_handles */
    const char *elsewhere_defect;   /* a known defect of its C_ELSEWHERE row */
} fn_desc;


/* A module's line for one of its functions: the function belongs to the module (its call
 * makes it), and desc says what its generated rows need. */
typedef struct fn_line {
    int fn;
    fn_desc desc;
} fn_line;
#define DESC(fn, ...) {F_##fn, {__VA_ARGS__}}
#define NO_DESC(fn) {F_##fn, {0}}   /* nothing generated: its rows are written out */


#define MS_MAX_DELAY 0x0FFFFFFFll                     /* the millisecond scheduler's longest */
#define US_MAX_DELAY ((int64_t)1 << 52)               /* the microsecond scheduler's longest */
#define MS_MAX_FROM_US (US_MAX_DELAY / 1000)          /* ... in milliseconds */
#define MIN31 (-((int64_t)1 << 30))
#define MAX31 (((int64_t)1 << 30) - 1)
#define MIN61 (-((int64_t)1 << 60))
#define MAX61 (((int64_t)1 << 60) - 1)
#define WIDE ((int64_t)1 << 40)                       /* a tagged word no 31-bit VM has */

#define ROW(fn, what, ctx, want, ...) {F_##fn, what, ctx, {__VA_ARGS__}, want, 0, NULL, NULL}
#define DEFECT(d, fn, what, ctx, want, ...) {F_##fn, what, ctx, {__VA_ARGS__}, want, 0, d, NULL}
#define PRIM(what, ctx, num, nargs, fail, ...) \
    {F_primitive_call, what, ctx, {.m = num, .n = nargs, __VA_ARGS__}, STVM_EPRIM, fail, NULL, NULL}
#define PRIM_DEFECT(d, what, ctx, num, nargs, fail, ...) \
    {F_primitive_call, what, ctx, {.m = num, .n = nargs, __VA_ARGS__}, STVM_EPRIM, fail, d, NULL}

#define BAD_RCV STVM_PRIM_ERR_BAD_RECEIVER
#define BAD_ARG STVM_PRIM_ERR_BAD_ARGUMENT
#define BAD_NARGS STVM_PRIM_ERR_BAD_NUM_ARGS
#define GENERIC STVM_PRIM_ERR_GENERIC
#define INAPPR STVM_PRIM_ERR_INAPPROPRIATE
#define E_INVAL STVM_EINVAL
#define E_STATE STVM_ESTATE
#define E_RANGE STVM_ERANGE


/* The name calls of one kind (the wrong handles and a NULL vm are generated): names the
 * setter refuses, leaving the name as it was (the snapshot has every watched object's
 * name), the getter's buffer, and the VM running on another thread. */
#define NAME_TOO_LONG "0123456789012345678901234567890123456789012345678901234567890123"
_Static_assert(sizeof NAME_TOO_LONG == STVM_NAME_MAX + 2, "one byte too long");
#define NAME_ROWS(kind, ...)                                                                    \
    ROW(kind##_set_name, "a name of STVM_NAME_MAX + 1 bytes", C_HOST, E_RANGE,                  \
        .s = NAME_TOO_LONG, __VA_ARGS__),                                                       \
    ROW(kind##_set_name, "a name of STVM_NAME_MAX + 1 bytes", C_GREEN, E_RANGE,                 \
        .s = NAME_TOO_LONG, __VA_ARGS__),                                                       \
    ROW(kind##_set_name, "a name with a newline", C_HOST, E_INVAL, .s = "two\nlines",           \
        __VA_ARGS__),                                                                           \
    ROW(kind##_set_name, "a name with a tab", C_GREEN, E_INVAL, .s = "a\tb", __VA_ARGS__),      \
    ROW(kind##_set_name, "a name with DEL", C_HOST, E_INVAL, .s = "a\x7f", __VA_ARGS__),        \
    ROW(kind##_set_name, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC,             \
        __VA_ARGS__),                                                                           \
    ROW(kind##_set_name, "while the VM runs, from its thread outside stvm_run", C_BARE,         \
        STVM_ENOTPROC, __VA_ARGS__),                                                            \
    ROW(kind##_get_name, "NULL buf with a size", C_HOST, E_INVAL, .null_ptr = true, .z = 8,      \
        __VA_ARGS__),                                                                           \
    ROW(kind##_get_name, "NULL buf, size 0: the length", C_HOST, R_COUNT, .null_ptr = true,      \
        __VA_ARGS__),                                                                           \
    ROW(kind##_get_name, "a 1-byte buffer: the length", C_GREEN, R_COUNT, .z = 1, __VA_ARGS__),  \
    ROW(kind##_get_name, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC,             \
        __VA_ARGS__)


/* Durations a call taking one must refuse: out of range, past the ms scheduler's
 * longest, ending past the clock's end. */
#define BAD_DURATIONS_MS(fn, ...)                                                               \
    ROW(fn, "-1 ms", C_GREEN, E_INVAL, .n = -1, __VA_ARGS__),                                   \
    ROW(fn, "INT64_MIN ms", C_GREEN, E_INVAL, .n = INT64_MIN, __VA_ARGS__),                     \
    ROW(fn, "2^52/1000 + 1 ms", C_GREEN, E_RANGE, .n = MS_MAX_FROM_US + 1, __VA_ARGS__),        \
    ROW(fn, "INT64_MAX ms", C_GREEN, E_RANGE, .n = INT64_MAX, __VA_ARGS__),                     \
    ROW(fn, "0x10000000 ms on the ms scheduler", C_GREEN, E_RANGE, .vm = V_MS,                  \
        .n = MS_MAX_DELAY + 1, __VA_ARGS__),                                                    \
    ROW(fn, "1 ms, ending past the clock's end", C_GREEN, E_RANGE, .vm = V_END, .n = 1,         \
        __VA_ARGS__)
#define BAD_DURATIONS_US(fn, ...)                                                               \
    ROW(fn, "-1 us", C_GREEN, E_INVAL, .n = -1, __VA_ARGS__),                                   \
    ROW(fn, "INT64_MIN us", C_GREEN, E_INVAL, .n = INT64_MIN, __VA_ARGS__),                     \
    ROW(fn, "2^52 + 1 us", C_GREEN, E_RANGE, .n = US_MAX_DELAY + 1, __VA_ARGS__),               \
    ROW(fn, "INT64_MAX us", C_GREEN, E_RANGE, .n = INT64_MAX, __VA_ARGS__),                     \
    ROW(fn, "(0x0FFFFFFF ms + 1) in us on the ms scheduler", C_GREEN, E_RANGE, .vm = V_MS,      \
        .n = (MS_MAX_DELAY + 1) * 1000, __VA_ARGS__),                                           \
    ROW(fn, "1000 us, ending past the clock's end", C_GREEN, E_RANGE, .vm = V_END, .n = 1000,   \
        __VA_ARGS__)


/* ---- the modules --------------------------------------------------------------------- */

/* The table of rows being built (test_api_table.c). */
typedef struct table {
    row *rows;
    int n, cap;
    int generated;
} table;
void api_table_add(table *t, row r);

/* One part of the header: its functions' lines, its rows written out, the call of each
 * of its functions, and rows it generates beyond the lines' (NULL: none). */
typedef struct api_module {
    const char *name;
    const fn_line *lines;
    int nlines;
    const row *rows;
    int nrows;
    int (*call)(fx *f, int fn, const args *a, const call_in *c);
    void (*generate)(table *t);
} api_module;
#define API_MODULE(name, generate) \
    {#name, lines, (int)(sizeof lines / sizeof lines[0]), rows, (int)(sizeof rows / sizeof rows[0]), call, generate}

extern const api_module api_rows_vm, api_rows_sync, api_rows_queue, api_rows_local, api_rows_time,
    api_rows_prim, api_rows_ffi, api_rows_trace, api_rows_net;

#endif
