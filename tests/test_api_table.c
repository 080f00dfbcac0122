/*
 * The adversarial API table (suite api_table): every public function of stvm.h called
 * the ways a careless or hostile caller would call it, each call checked against the
 * header's contract:
 *
 *  - it answers its documented error (Pharo's failure code for stvm_primitive_call);
 *  - it changes nothing: a snapshot of every VM of the fixture (all stats counters,
 *    the invariant check, the SocketPlugin's resolver status and error, its ByteArray),
 *    of every semaphore's excess, mutex's owner and process's state, of every socket's
 *    status, port, descriptor, read semaphore and armed read handler (what
 *    stvm_fd_wait(fd, READ, 0) answers), of every stream's counters and SocketHandle
 *    record's status, of the watched processes' and the calling process's values of
 *    the process-local variables, and of the out-parameters (preset to a pattern; receive buffers
 *    too) is the same before and after the call.
 *
 * A row is one call: the function, what is wrong with it, the context it is made from
 * and the answer it must give. Most rows are generated from one line per function
 * (fn_desc: NULL vm, NULL out-parameter, every wrong handle, the wrong context); the
 * rest are written out (out-of-range values, processes, sockets and objects in states
 * that refuse the call, the VM's own processes, descriptors, hosts, primitives numbered
 * and named). Contexts:
 *
 *   host      the test thread, no stvm_run active;
 *   green     a green process of the row's VM (inside stvm_run);
 *   thread    a green process of another VM on another thread, the row's VM idle;
 *   elsewhere the row's VM runs on the test thread (parked in its idle process) and
 *             the call comes from a green process of another VM on another thread
 *             (every call that needs a process is made here too);
 *   bare      the same, from that other thread outside any stvm_run.
 *
 * Sockets and streams live in the VM V_NET (with foreign ones in V_OTHER), made by a
 * green process of it: a listener nobody accepts on, one a process waits to accept
 * on, a connected pair with a stream on the server side and data waiting for it, a
 * second pair whose stream a process waits to read in. Those two processes wait for
 * ever, so V_NET is run with stvm_run_mode (NOWAIT for its green rows, ONCE while it is
 * parked for the elsewhere rows). A closed socket cannot be kept (stvm_socket_close
 * frees the handle), so there is none.
 *
 * A row whose call the library gets wrong is kept, marked with the known defect it
 * shows (KNOWN DEFECTS, before the rows, lists them, the fixed ones too); such rows are
 * skipped unless STVM_KNOWN_DEFECTS=1 is in the environment, where the test
 * known_defects runs exactly them.
 *
 * The VM's own processes (idle, timing) have no public handle: the fixture catches
 * them with stvm_vm_active_process from a high-rate timer signal on the VM's thread while
 * a process sleeps on short Delays (catch_vm_own).
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <stdatomic.h>

#include "helpers.h"

/* ---- the public functions ------------------------------------------------------- */

/* Every public function, in header order (stvm.h's sub-headers in the order it includes
 * them). every_public_function_has_rows checks this list, and its order, against the
 * headers themselves. */
#define API_FUNCTIONS(X)                                                                 \
    X(version) X(version_string) X(context_backend) X(measure_raw_switch) X(strerror)    \
    X(err_name) X(config_init) X(config_check) X(vm_create) X(vm_free) X(vm_config)         \
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

static const char *const fn_names[N_FN] = {
#define FN_NAME(n) "stvm_" #n,
    API_FUNCTIONS(FN_NAME)
#undef FN_NAME
};

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
static const char *const vm_names[N_VM] = {"main", "other", "31-bit", "ms-delays", "clock-end",
                                           "net"};

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
/* Their classes (vm/objects.h), for forged headers. */
static const uint32_t kind_class[N_KIND] = {0, 3, 4, 5, 8, 9, 14, 13, 15, 12};

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

typedef struct cfg_fault_desc {
    const char *field;   /* what stvm_config_check must name */
    void (*apply)(stvm_config *c);
} cfg_fault_desc;

static void bits_0(stvm_config *c) { c->smallint_bits = 0; }
static void bits_32(stvm_config *c) { c->smallint_bits = 32; }
static void bits_64(stvm_config *c) { c->smallint_bits = 64; }
static void stack_4k(stvm_config *c) { c->stack_size = 4096; }
static void stack_big(stvm_config *c) { c->stack_size = ((size_t)64 << 20) + 1; }
static void stack_max(stvm_config *c) { c->stack_size = SIZE_MAX; }
static void guard_1(stvm_config *c) { c->stack_guard_size = 1; }
static void guard_big(stvm_config *c) { c->stack_guard_size = ((size_t)64 << 20) + 1; }
static void method_neg(stvm_config *c) { c->stack_guard_method = -1; }
static void method_4(stvm_config *c) { c->stack_guard_method = 4; }
static void dclock_2(stvm_config *c) { c->delay_clock = 2; }
static void dclock_neg(stvm_config *c) { c->delay_clock = -1; }
static void clock_2(stvm_config *c) { c->clock = 2; }
static void sim_past_end(stvm_config *c) { c->sim_start_us = CLOCK_END + 1; }
static void sim_max(stvm_config *c) { c->sim_start_us = UINT64_MAX; }
static void ms_start(stvm_config *c) { c->ms_clock_start = MS_MASK + 1; }
static void relinquish_big(stvm_config *c) { c->idle_relinquish_us = 10000001; }
static void ext_0(stvm_config *c) { c->external_table_size = 0; }
static void ext_neg(stvm_config *c) { c->external_table_size = -1; }
static void ext_big(stvm_config *c) { c->external_table_size = 65537; }

static const cfg_fault_desc cfg_faults[N_CFG] = {
    [CFG_OK] = {NULL, NULL},
    [CFG_BITS_0] = {"smallint_bits", bits_0},
    [CFG_BITS_32] = {"smallint_bits", bits_32},
    [CFG_BITS_64] = {"smallint_bits", bits_64},
    [CFG_STACK_4K] = {"stack_size", stack_4k},
    [CFG_STACK_BIG] = {"stack_size", stack_big},
    [CFG_STACK_MAX] = {"stack_size", stack_max},
    [CFG_GUARD_1] = {"stack_guard_size", guard_1},
    [CFG_GUARD_BIG] = {"stack_guard_size", guard_big},
    [CFG_METHOD_NEG] = {"stack_guard_method", method_neg},
    [CFG_METHOD_4] = {"stack_guard_method", method_4},
    [CFG_DCLOCK_2] = {"delay_clock", dclock_2},
    [CFG_DCLOCK_NEG] = {"delay_clock", dclock_neg},
    [CFG_CLOCK_2] = {"clock", clock_2},
    [CFG_SIM_PAST_END] = {"sim_start_us", sim_past_end},
    [CFG_SIM_MAX] = {"sim_start_us", sim_max},
    [CFG_MS_START] = {"ms_clock_start", ms_start},
    [CFG_RELINQUISH_BIG] = {"idle_relinquish_us", relinquish_big},
    [CFG_EXT_0] = {"external_table_size", ext_0},
    [CFG_EXT_NEG] = {"external_table_size", ext_neg},
    [CFG_EXT_BIG] = {"external_table_size", ext_big},
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
static const char NULL_STR[] = "(NULL)";

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
};

enum ctx { C_HOST, C_GREEN, C_THREAD, C_ELSEWHERE, C_BARE, N_CTX };
static const char *const ctx_names[N_CTX] = {
    "from the host thread", "from a green process", "from another VM's process on another thread",
    "while the VM runs on another thread, from a process of another VM",
    "while the VM runs on another thread, from that thread outside stvm_run"};

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

typedef struct result {
    bool ran;
    int rc;
    int fail;
    bool out_clean;
    bool text_ok;
    char diff[160];   /* what the call changed, empty if nothing */
} result;

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

/* The FFI's objects (the FFI section below makes them): an i64(i64,i64) function of
 * this file in V_MAIN, V_OTHER and V_31, a named worker in V_MAIN and V_OTHER, a
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

/* Readable memory of the wrong layout. */
static _Alignas(64) unsigned char g_zero[512];
static _Alignas(64) unsigned char g_ones[512];
static _Alignas(64) unsigned char g_text[512];
/* By kind (of kind_class), forged with V_OTHER's pointer [0] or V_MAIN's [1]; a
 * SocketHandle (class 7) forged with V_OTHER's pointer. */
static _Alignas(64) unsigned char g_forged[2][N_KIND][512];
static _Alignas(64) unsigned char g_forged_record[512];

/* A header of class `cls` followed by `other` in every word: passes a class test,
 * fails the owner-VM test. */
static void forge(unsigned char *buf, uint32_t cls, const void *other)
{
    uintptr_t w = (uintptr_t)other;
    for (size_t i = 8; i + sizeof w <= 512; i += sizeof w)
        memcpy(buf + i, &w, sizeof w);
    uint32_t hdr[2] = {cls, 64};
    memcpy(buf, hdr, sizeof hdr);
}

static stvm_vm *vm_of(fx *f, int v) { return v == V_NULL ? NULL : f->vm[v]; }

/* The VM whose objects a row's handles come from. */
static int home_of(const row *r) { return r->a.vm == V_NULL ? V_MAIN : r->a.vm; }

/* The VM whose green process makes a green row's call: V_OTHER never runs (its armed
 * timer would fire), so its rows and the NULL-vm rows are made from V_MAIN's. */
static int runner_of(const row *r)
{
    return r->a.vm == V_NULL || r->a.vm == V_OTHER ? V_MAIN : r->a.vm;
}

/* A VM's plain handle of a kind. */
static void *plain(fx *f, int v, int kind)
{
    return kind == K_SEM      ? (void *)f->sem[v]
           : kind == K_MUTEX  ? (void *)f->mtx[v]
           : kind == K_SOCKET ? (void *)f->sock[v]
           : kind == K_STREAM ? (void *)f->stream[v]
           : kind == K_DELAY  ? (void *)f->delay[v]
           : kind == K_QUEUE  ? (void *)f->queue[v]
           : kind == K_LOCAL  ? (void *)f->local[v]
           : kind == K_MONITOR ? (void *)f->monitor[v]
                              : (void *)f->susp[v];
}

/* The row VM's plain one of a kind, V_NET's if it has none. */
static void *plain_or_net(fx *f, int v, int kind)
{
    void *h = plain(f, v, kind);
    return h ? h : plain(f, V_NET, kind);
}

static void *handle_of(fx *f, const args *a, int kind)
{
    int v = home_of(&(row){.a = *a});
    int foreign = v == V_OTHER ? V_MAIN : V_OTHER;
    switch (a->h) {
    case H_DEFAULT: return plain(f, v, kind);
    case H_NULL: return NULL;
    case H_SEM: return plain(f, v, K_SEM);
    case H_MUTEX: return plain(f, v, K_MUTEX);
    case H_PROC: return plain(f, v, K_PROC);
    case H_FOREIGN: return plain(f, foreign, kind);
    case H_BOX: return (void *)f->box_max;
    case H_G_ZERO: return g_zero;
    case H_G_ONES: return g_ones;
    case H_G_TEXT: return g_text;
    case H_G_FORGED: return g_forged[v == V_OTHER][kind];
    case H_SEM_EXCESS: return f->sem_excess;
    case H_PARK: return f->park;
    case H_EXT: return f->ext;
    case H_ARMED: return f->armed;
    case H_BUSY: return f->busy;
    case H_BUSY2: return f->busy2;
    case H_READY: return f->ready;
    case H_WAITING: return f->waiting;
    case H_DONE: return f->done;
    case H_UNHELD: return f->unheld;
    case H_OWNER: return f->owner;
    case H_MWAITER: return f->mwaiter;
    case H_IDLE: return f->idle;
    case H_TIMING: return f->timing;
    case H_SELF: return f->self;
    case H_SOCKET: return plain_or_net(f, v, K_SOCKET);
    case H_STREAM: return plain_or_net(f, v, K_STREAM);
    case H_BYTES: return (void *)(f->bytes[v] ? f->bytes[v] : f->bytes[V_NET]);
    case H_RECORD: return (void *)f->rec;
    case H_LISTENER: return f->net[V_NET].lst;
    case H_BUSY_LISTENER: return f->net[V_NET].busy_lst;
    case H_FOREIGN_LISTENER: return f->net[V_OTHER].lst;
    case H_STREAMED: return f->net[V_NET].srv;
    case H_READ_WAITED: return f->net[V_NET].srv2;
    case H_WAITED_STREAM: return f->net[V_NET].st2;
    case H_DELAY_SEM: return stvm_delay_semaphore(f->delay[v]);
    case H_QUEUE_FULL: return f->queue_full;
    case H_QUEUE_OPEN: return f->queue_open;
    case H_QUEUE_CLOSED: return f->queue_closed;
    case H_QUEUE_OPEN_CLOSED: return f->queue_open_closed;
    case H_LOCAL_DYN: return f->local_dyn;
    case H_MONITOR: return plain(f, v, K_MONITOR);
    case H_MONITOR_OWNED: return f->monitor_owned;
    case H_MONITOR_WAITED: return f->monitor_waited;
    }
    return NULL;
}

static int fd_of(fx *f, int id)
{
    switch (id) {
    case FD_PIPE: return f->pipe[0];
    case FD_NEG: return -1;
    case FD_INT_MIN: return INT_MIN;
    case FD_INT_MAX: return INT_MAX;
    case FD_CLOSED: return f->closed_fd;
    case FD_FILE: return f->file_fd;
    case FD_DEVNULL: return f->devnull_fd;
    case FD_LISTENER: return stvm_socket_fd(f->net[V_NET].lst);
    case FD_BUSY_LISTENER: return stvm_socket_fd(f->net[V_NET].busy_lst);
    case FD_READ_WAITED: return stvm_socket_fd(f->net[V_NET].srv2);
    }
    return -1;
}

static stvm_oop object_of(fx *f, uint64_t id)
{
    switch (id) {
    case OB_SEM: return stvm_semaphore_oop(f->sem[V_MAIN]);
    case OB_MUTEX: return stvm_mutex_oop(f->mtx[V_MAIN]);
    case OB_BUSY: return stvm_mutex_oop(f->busy);
    case OB_SUSP: return stvm_process_oop(f->susp[V_MAIN]);
    case OB_READY: return stvm_process_oop(f->ready);
    case OB_WAITING: return stvm_process_oop(f->waiting);
    case OB_DONE: return stvm_process_oop(f->done);
    case OB_UNHELD: return stvm_process_oop(f->unheld);
    case OB_IDLE: return stvm_process_oop(f->idle);
    case OB_TIMING: return stvm_process_oop(f->timing);
    case OB_SELF: return stvm_process_oop(f->self);
    case OB_SEM_EXCESS: return stvm_semaphore_oop(f->sem_excess);
    case OB_FOREIGN_SEM: return stvm_semaphore_oop(f->sem[V_OTHER]);
    case OB_FOREIGN_MUTEX: return stvm_mutex_oop(f->mtx[V_OTHER]);
    case OB_FOREIGN_PROC: return stvm_process_oop(f->susp[V_OTHER]);
    case OB_OTHER_SEM: return stvm_semaphore_oop(f->sem[V_OTHER]);
    case OB_BOX_MAX: return f->box_max;
    case OB_BOX_NEG: return f->box_neg;
    case OB_BOX_2_63: return f->box_2_63;
    case OB_RELEASED: return f->released;
    case OB_FOREIGN_BOX: return f->foreign_box;
    case OB_PAST_END: return f->past_end;
    case OB_BOX31: return f->box31;
    case OB_G_ZERO: return (stvm_oop)g_zero;
    case OB_G_FORGED_SEM: return (stvm_oop)g_forged[0][K_SEM];
    case OB_G_FORGED_PROC: return (stvm_oop)g_forged[0][K_PROC];
    case OB_BYTES: return f->bytes[V_NET];
    case OB_FOREIGN_BYTES: return f->bytes[V_OTHER];
    case OB_RELEASED_BYTES: return f->released_bytes;
    case OB_RECORD: return f->rec;
    case OB_DEAD_RECORD: return f->dead_rec;
    case OB_FOREIGN_RECORD: return f->foreign_rec;
    case OB_SOCKET: return (stvm_oop)f->sock[V_NET];
    case OB_G_FORGED_RECORD: return (stvm_oop)g_forged_record;
    }
    return STVM_NIL;
}

static stvm_oop oop_of(fx *f, ospec s)
{
    switch (s.k) {
    case O_RAW: return (stvm_oop)s.v;
    case O_SI: return (stvm_oop)((s.v << 1) | 1);   /* tagged, whatever the VM's width */
    case O_OBJ: return object_of(f, s.v);
    }
    return STVM_NIL;
}

/* ---- making one call ---------------------------------------------------------------- */

static void nothing_fn(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

static int yes(bool b) { return b ? R_TRUE : R_FALSE; }
static void local_destroy(void *value) { (void)value; }
static void *local_inherit(void *value, stvm_process *child) { return value; }
static int null_or_not(const void *p) { return p ? R_NONNULL : R_NULL; }
static int count_or(int rc) { return rc < 0 ? rc : R_COUNT; }
static int text_ok(const char *s) { return yes(s && s[0]); }

static int call_ffi(fx *f, int fn, const args *a);

static bool pred_false(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
    return false;
}

/* Make the call a row describes and answer its result as an STVM_* or R_* code. */
static int call(fx *f, int fn, const args *a)
{
    stvm_vm *vm = vm_of(f, a->vm);
    stvm_semaphore *sem = handle_of(f, a, K_SEM);
    stvm_mutex *m = handle_of(f, a, K_MUTEX);
    stvm_process *p = handle_of(f, a, K_PROC);
    stvm_socket *sk = handle_of(f, a, K_SOCKET);
    stvm_stream *st = handle_of(f, a, K_STREAM);
    stvm_delay *dl = handle_of(f, a, K_DELAY);
    stvm_queue *qu = handle_of(f, a, K_QUEUE);
    stvm_local *lv = handle_of(f, a, K_LOCAL);
    /* stvm_process_get_local's process: the plain one, or the handle m names. */
    stvm_process *lp = a->m ? handle_of(f, &(args){.vm = a->vm, .h = (int)a->m}, K_PROC)
                            : plain(f, home_of(&(row){.a = *a}), K_PROC);
    stvm_monitor *mon = handle_of(f, a, K_MONITOR);
    int qid = (int)a->m;   /* a monitor's condition queue */
    stvm_monitor_pred pred = a->null_ptr ? NULL : pred_false;
    stvm_fn fnp = a->null_ptr ? NULL : nothing_fn;
    union out_slot *o = a->null_out ? NULL : &f->out;
    stvm_oop o0 = oop_of(f, a->o[0]), argv[7];
    for (int i = 0; i < 7; i++)
        argv[i] = oop_of(f, a->o[i + 1]);
    void *buf = a->null_ptr ? NULL : f->out.buf;   /* what a transfer reads or writes */
    const char *host = a->s == NULL_STR ? NULL : a->s ? a->s : "127.0.0.1";
    /* The name calls: the name (a->s; NULL_STR: NULL), and the getter's buffer (null_ptr:
     * NULL) of z bytes (0: the whole of f->text). */
    const char *name = a->s == NULL_STR ? NULL : a->s ? a->s : "row";
    char *nbuf = a->null_ptr ? NULL : f->text;
    size_t nsize = a->z ? (size_t)a->z : a->null_ptr ? 0 : sizeof f->text;
    /* A Unix path: nothing is there unless a row names one. */
    const char *path = a->s == NULL_STR ? NULL : a->s ? a->s : "/nonexistent/stvm-api-table";
    int port = a->n == PORT_LISTENING ? f->net[V_NET].port : (int)a->n;
    int64_t r;
    stvm_config cfg;
    stvm_config_init(&cfg);
    if (cfg_faults[a->cfg].apply)
        cfg_faults[a->cfg].apply(&cfg);

    switch (fn) {
    case F_version: return yes(stvm_version() == STVM_VERSION_HEX);
    case F_version_string: return yes(strcmp(stvm_version_string(), STVM_VERSION_STRING) == 0);
    case F_context_backend: {
        const char *b = stvm_context_backend();
        return yes(b && (!strcmp(b, "asm-x86_64") || !strcmp(b, "asm-aarch64") ||
                          !strcmp(b, "ucontext")));
    }
    case F_measure_raw_switch: return stvm_measure_raw_switch((uint64_t)a->n, o ? &o->d : NULL);
    case F_strerror: return text_ok(stvm_strerror((int)a->n));
    case F_err_name: return yes(strcmp(stvm_err_name((int)a->n), "STVM_E?") == 0);
    case F_config_init:
        return a->ssize ? stvm_config_init_(o ? &o->cfg : NULL, a->ssize) : stvm_config_init(NULL);
    case F_config_check:
        return stvm_config_check_(a->null_ptr ? NULL : &cfg, a->null_out ? NULL : f->text,
                                  a->z ? a->z : sizeof f->text, SSIZE(stvm_config));
    case F_vm_create: {
        int rc = stvm_vm_create_(a->null_ptr ? NULL : &cfg, o ? &o->vm : NULL, SSIZE(stvm_config));
        if (rc == STVM_OK && o)
            stvm_vm_free(o->vm);   /* an unexpected success must not leak */
        return rc;
    }
    case F_vm_free: stvm_vm_free(vm); return R_VOID;
    case F_vm_config: return stvm_vm_config_(vm, o ? &o->cfg : NULL, SSIZE(stvm_config));
    case F_spawn: return stvm_spawn(vm, (int)a->n, "row", fnp, NULL, o ? &o->p : NULL);
    case F_spawn_sized:
        return stvm_spawn_sized(vm, (int)a->n, "row", fnp, NULL, (size_t)a->z, o ? &o->p : NULL);
    case F_spawn_suspended:
        return stvm_spawn_suspended(vm, (int)a->n, "row", fnp, NULL, (size_t)a->z,
                                    o ? &o->p : NULL);
    case F_run: return stvm_run(vm);
    case F_yield: return stvm_yield(vm);
    case F_vm_active_process: return null_or_not(stvm_vm_active_process(vm));
    case F_checkpoint: return stvm_checkpoint(vm);
    case F_work_us: return stvm_work_us(vm, (uint64_t)a->z);
    case F_sim_at:
        return stvm_sim_at(vm, stvm_vm_now_us(vm) + (uint64_t)a->z, a->null_fail ? NULL : nothing_fn,
                           NULL);
    case F_sim_set_cost: return stvm_sim_set_cost(vm, (int)a->n, (uint32_t)a->z);
    case F_sim_cost: return stvm_sim_cost(vm, (int)a->n);
    case F_process_resume: return stvm_process_resume(vm, p);
    case F_process_suspend: return stvm_process_suspend(vm, p);
    case F_process_terminate: return stvm_process_terminate(vm, p);
    case F_process_interrupt: return stvm_process_interrupt(vm, p, fnp, NULL);
    case F_process_release: return stvm_process_release(vm, p);
    case F_process_join: return stvm_process_join(vm, p, a->n);
    case F_ensure: return stvm_ensure(vm, fnp, NULL);
    case F_ensure_pop: return stvm_ensure_pop(vm, a->n != 0);
    case F_process_set_priority: return stvm_process_set_priority(vm, p, (int)a->n);
    case F_process_get_info:
        return stvm_process_get_info_(vm, p, o ? &o->info : NULL, SSIZE(stvm_process_info));
    case F_vm_processes: {
        /* z: the room in the list (at most 64); null_out: no count (a success writes
         * only these locals, so that a failure that writes is still seen) */
        stvm_process *list[64];
        size_t n = 0;
        int rc = stvm_vm_processes(vm, a->null_ptr ? NULL : list, a->z > 64 ? 64 : (size_t)a->z,
                                   a->null_out ? NULL : &n);
        return rc < 0 ? rc : R_COUNT;
    }
    case F_vm_blocked_report: {
        int rc = stvm_vm_blocked_report(vm, a->null_ptr ? NULL : f->text, (size_t)a->z);
        return rc < 0 ? rc : R_COUNT;
    }
    case F_vm_check_invariants:
        return stvm_vm_check_invariants(vm, a->null_ptr ? NULL : f->text, (size_t)a->z);
    case F_semaphore_new: return stvm_semaphore_new(vm, o ? &o->sem : NULL);
    case F_semaphore_free: return stvm_semaphore_free(vm, sem);
    case F_semaphore_signal: return stvm_semaphore_signal(vm, sem);
    case F_semaphore_wait: return stvm_semaphore_wait(vm, sem);
    case F_semaphore_critical: return stvm_semaphore_critical(vm, sem, fnp, NULL);
    case F_semaphore_try_wait: return stvm_semaphore_try_wait(vm, sem);
    case F_semaphore_excess: {
        int64_t x = stvm_semaphore_excess(vm, sem);
        return x < 0 ? (int)x : R_COUNT;
    }
    case F_semaphore_set_name: return stvm_semaphore_set_name(vm, sem, name);
    case F_semaphore_get_name: return count_or(stvm_semaphore_get_name(vm, sem, nbuf, nsize));
    case F_mutex_set_name: return stvm_mutex_set_name(vm, m, name);
    case F_mutex_get_name: return count_or(stvm_mutex_get_name(vm, m, nbuf, nsize));
    case F_queue_set_name: return stvm_queue_set_name(vm, qu, name);
    case F_queue_get_name: return count_or(stvm_queue_get_name(vm, qu, nbuf, nsize));
    case F_monitor_set_name: return stvm_monitor_set_name(vm, mon, name);
    case F_monitor_get_name: return count_or(stvm_monitor_get_name(vm, mon, nbuf, nsize));
    case F_delay_set_name: return stvm_delay_set_name(vm, dl, name);
    case F_delay_get_name: return count_or(stvm_delay_get_name(vm, dl, nbuf, nsize));
    case F_socket_set_name: return stvm_socket_set_name(vm, sk, name);
    case F_socket_get_name: return count_or(stvm_socket_get_name(vm, sk, nbuf, nsize));
    case F_mutex_new: return stvm_mutex_new(vm, o ? &o->m : NULL);
    case F_mutex_free: return stvm_mutex_free(vm, m);
    case F_mutex_enter: return stvm_mutex_enter(vm, m);
    case F_mutex_enter_timeout_ms: return stvm_mutex_enter_timeout_ms(vm, m, a->n);
    case F_mutex_exit: return stvm_mutex_exit(vm, m);
    case F_mutex_try_enter: return stvm_mutex_try_enter(vm, m);
    case F_mutex_owner: return null_or_not(stvm_mutex_owner(vm, m));
    case F_mutex_critical: return stvm_mutex_critical(vm, m, fnp, NULL);
    case F_external_register: return stvm_external_register(vm, sem, o ? &o->i : NULL);
    case F_external_unregister: return stvm_external_unregister(vm, (int)a->n);
    case F_external_signal: return stvm_external_signal(vm, (int)a->n);
    case F_vm_now_us: return stvm_vm_now_us(vm) ? R_NONZERO : R_ZERO;
    case F_vm_millisecond_clock: return stvm_vm_millisecond_clock(vm) ? R_NONZERO : R_ZERO;
    case F_delay_wait_ms: return stvm_delay_wait_ms(vm, a->n);
    case F_delay_wait_us: return stvm_delay_wait_us(vm, a->n);
    case F_call_within_ms: return stvm_call_within_ms(vm, fnp, NULL, a->n);
    case F_call_within_us: return stvm_call_within_us(vm, fnp, NULL, a->n);
    case F_semaphore_wait_timeout_ms: return stvm_semaphore_wait_timeout_ms(vm, sem, a->n);
    case F_semaphore_wait_timeout_us: return stvm_semaphore_wait_timeout_us(vm, sem, a->n);
    case F_queue_new: return stvm_queue_new(vm, (size_t)a->n, o ? &o->qu : NULL);
    case F_queue_free: return stvm_queue_free(vm, qu, NULL, NULL);
    case F_queue_put: return stvm_queue_put(vm, qu, f);
    case F_queue_put_timeout_ms: return stvm_queue_put_timeout_ms(vm, qu, f, a->n);
    case F_queue_take: return stvm_queue_take(vm, qu, o ? &o->item : NULL);
    case F_queue_take_timeout_ms:
        return stvm_queue_take_timeout_ms(vm, qu, a->n, o ? &o->item : NULL);
    case F_queue_try_take: return stvm_queue_try_take(vm, qu, o ? &o->item : NULL);
    case F_queue_peek: return stvm_queue_peek(vm, qu, o ? &o->item : NULL);
    case F_queue_size: return (int)stvm_queue_size(vm, qu);
    case F_queue_flush: return (int)stvm_queue_flush(vm, qu, NULL, NULL);
    case F_queue_close: return stvm_queue_close(vm, qu);
    case F_queue_open_external: return stvm_queue_open_external(vm, qu);
    case F_queue_put_external: return stvm_queue_put_external(qu, f, a->n);
    case F_queue_close_external: return stvm_queue_close_external(qu);
    case F_local_new: {
        /* z: bit 0 gives destroy_fn, bit 1 inherit_fn */
        int rc = stvm_local_new(vm, (unsigned)a->n, NULL, (a->z & 1) ? local_destroy : NULL,
                                (a->z & 2) ? local_inherit : NULL, o ? &o->lv : NULL);
        if (rc == STVM_OK && o)
            stvm_local_free(vm, o->lv);   /* an unexpected success must not leak */
        return rc;
    }
    case F_local_free: return stvm_local_free(vm, lv);
    case F_local_get: return stvm_local_get(vm, lv, o ? &o->item : NULL);
    case F_process_get_local: return stvm_process_get_local(vm, lp, lv, o ? &o->item : NULL);
    case F_local_set: return stvm_local_set(vm, lv, f);
    case F_local_clear: return stvm_local_clear(vm, lv);
    case F_local_during: return stvm_local_during(vm, lv, f, fnp, NULL);
    case F_monitor_new: return stvm_monitor_new(vm, o ? &o->mon : NULL);
    case F_monitor_free: return stvm_monitor_free(vm, mon);
    case F_monitor_enter: return stvm_monitor_enter(vm, mon);
    case F_monitor_enter_timeout_ms: return stvm_monitor_enter_timeout_ms(vm, mon, a->n);
    case F_monitor_try_enter: return stvm_monitor_try_enter(vm, mon);
    case F_monitor_exit: return stvm_monitor_exit(vm, mon);
    case F_monitor_critical: return stvm_monitor_critical(vm, mon, fnp, NULL);
    case F_monitor_owner: return null_or_not(stvm_monitor_owner(vm, mon));
    case F_monitor_depth: {
        int64_t d = stvm_monitor_depth(vm, mon);
        return d < 0 ? (int)d : d == 0 ? R_ZERO : R_NONZERO;
    }
    case F_monitor_wait: return stvm_monitor_wait(vm, mon);
    case F_monitor_wait_timeout_ms: return stvm_monitor_wait_timeout_ms(vm, mon, a->n);
    case F_monitor_wait_on: return stvm_monitor_wait_on(vm, mon, qid);
    case F_monitor_wait_on_timeout_ms:
        return stvm_monitor_wait_on_timeout_ms(vm, mon, qid, a->n);
    case F_monitor_wait_while: return stvm_monitor_wait_while(vm, mon, pred, NULL);
    case F_monitor_wait_until: return stvm_monitor_wait_until(vm, mon, pred, NULL);
    case F_monitor_wait_while_on: return stvm_monitor_wait_while_on(vm, mon, qid, pred, NULL);
    case F_monitor_wait_until_on: return stvm_monitor_wait_until_on(vm, mon, qid, pred, NULL);
    case F_monitor_signal: return stvm_monitor_signal(vm, mon);
    case F_monitor_signal_all: return stvm_monitor_signal_all(vm, mon);
    case F_monitor_signal_on: return stvm_monitor_signal_on(vm, mon, qid);
    case F_monitor_signal_all_on: return stvm_monitor_signal_all_on(vm, mon, qid);
    case F_monitor_signal_really_all: return stvm_monitor_signal_really_all(vm, mon);
    case F_delay_new_ms: return stvm_delay_new_ms(vm, a->n, o ? &o->dl : NULL);
    case F_delay_new_us: return stvm_delay_new_us(vm, a->n, o ? &o->dl : NULL);
    case F_delay_free: return stvm_delay_free(vm, dl);
    case F_delay_wait: return stvm_delay_wait(vm, dl);
    case F_delay_schedule: return stvm_delay_schedule(vm, dl);
    case F_delay_unschedule: return stvm_delay_unschedule(vm, dl);
    case F_delay_is_expired: return stvm_delay_is_expired(vm, dl);
    case F_delay_being_waited_on: return stvm_delay_being_waited_on(vm, dl);
    case F_delay_ms_to_go: return stvm_delay_ms_to_go(vm, dl, o ? &o->i64 : NULL);
    case F_delay_us_to_go: return stvm_delay_us_to_go(vm, dl, o ? &o->i64 : NULL);
    case F_delay_semaphore: return null_or_not(stvm_delay_semaphore(dl));
    case F_delay_timeout_semaphore_ms:
        return stvm_delay_timeout_semaphore_ms(vm, sem, a->n, o ? &o->dl : NULL);
    case F_vm_get_stats: return stvm_vm_get_stats_(vm, o ? &o->stats : NULL, SSIZE(stvm_stats));
    case F_vm_reset_stats: stvm_vm_reset_stats(vm); return R_VOID;
    case F_smallint_max: (void)stvm_smallint_max(vm); return R_ANY;
    case F_smallint_min: (void)stvm_smallint_min(vm); return R_ANY;
    case F_oop_is_smallint: return yes(stvm_oop_is_smallint(o0));
    case F_oop_is_integer: return yes(stvm_oop_is_integer(vm, o0));
    case F_int_from_i64: return stvm_int_from_i64(vm, a->n, o ? &o->oop : NULL);
    case F_int_from_u64: return stvm_int_from_u64(vm, a->z, o ? &o->oop : NULL);
    case F_int_to_i64: return stvm_int_to_i64(vm, o0, o ? &o->i64 : NULL);
    case F_int_to_u64: return stvm_int_to_u64(vm, o0, o ? &o->u64 : NULL);
    case F_int_add: return stvm_int_add(vm, o0, argv[0], o ? &o->oop : NULL);
    case F_int_sub: return stvm_int_sub(vm, o0, argv[0], o ? &o->oop : NULL);
    case F_int_mul: return stvm_int_mul(vm, o0, argv[0], o ? &o->oop : NULL);
    case F_int_compare: return stvm_int_compare(vm, o0, argv[0], o ? &o->i : NULL);
    case F_oop_release: return stvm_oop_release(vm, o0);
    case F_semaphore_oop: (void)stvm_semaphore_oop(sem); return R_ANY;
    case F_mutex_oop: (void)stvm_mutex_oop(m); return R_ANY;
    case F_process_oop: (void)stvm_process_oop(p); return R_ANY;
    case F_oop_class_name: return null_or_not(stvm_oop_class_name(vm, o0));
    case F_primitive_call:
        return stvm_primitive_call(vm, (int)a->m, o0, a->null_ptr ? NULL : argv, (int)a->n,
                                   o ? &o->oop : NULL, a->null_fail ? NULL : &f->fail_code);
    case F_primitive_call_named:
        return stvm_primitive_call_named(
            vm, a->s == NULL_STR ? NULL : a->s ? a->s : "SocketPlugin",
            a->s2 == NULL_STR ? NULL : a->s2 ? a->s2 : "primitiveResolverStatus", o0,
            a->null_ptr ? NULL : argv, (int)a->n, o ? &o->oop : NULL,
            a->null_fail ? NULL : &f->fail_code);
    case F_primitive_named_list:
        return yes(stvm_primitive_named_list(a->null_ptr ? NULL : f->out.named[0],
                                             o ? o->named[1] : NULL, (int)a->n) == f->nnamed);

    /* descriptors, sockets, streams */
    case F_fd_wait: return stvm_fd_wait(vm, fd_of(f, a->fd), (int)a->n, a->t);
    case F_tcp_listen: return stvm_tcp_listen(vm, host, port, (int)a->m, o ? &o->sock : NULL);
    case F_tcp_connect: return stvm_tcp_connect(vm, host, port, a->t, o ? &o->sock : NULL);
    case F_unix_listen:
        return stvm_unix_listen(vm, path, (int)a->m, o ? &o->sock : NULL);
    case F_unix_connect: return stvm_unix_connect(vm, path, a->t, o ? &o->sock : NULL);
    case F_socket_accept: return stvm_socket_accept(vm, sk, a->t, o ? &o->sock : NULL);
    case F_socket_send:
        r = stvm_socket_send(vm, sk, buf, (size_t)a->z, a->t);
        return r < 0 ? (int)r : R_COUNT;
    case F_socket_recv:
        r = stvm_socket_recv(vm, sk, buf, (size_t)a->z, a->t);
        return r < 0 ? (int)r : R_COUNT;
    case F_socket_shutdown: return stvm_socket_shutdown(vm, sk, (int)a->n);
    case F_socket_close: return stvm_socket_close(vm, sk);
    case F_socket_fd: r = stvm_socket_fd(sk); return r < 0 ? (int)r : R_COUNT;
    case F_socket_port: r = stvm_socket_port(sk); return r < 0 ? (int)r : R_COUNT;
    case F_socket_peer_address:
        return stvm_socket_peer_address(vm, sk, buf, (size_t)a->z, o ? &o->i : NULL);
    case F_socket_local_address:
        return stvm_socket_local_address(vm, sk, buf, (size_t)a->z, o ? &o->i : NULL);
    case F_socket_status: r = stvm_socket_status(vm, sk); return r < 0 ? (int)r : R_COUNT;
    case F_socket_read_semaphore: return null_or_not(stvm_socket_read_semaphore(sk));
    case F_stream_open: return stvm_stream_open(vm, sk, a->t, o ? &o->st : NULL);
    case F_stream_set_read_timeout_ms: return stvm_stream_set_read_timeout_ms(vm, st, a->t);
    case F_stream_set_write_timeout_ms: return stvm_stream_set_write_timeout_ms(vm, st, a->t);
    case F_stream_read:
        r = stvm_stream_read(vm, st, buf, (size_t)a->z);
        return r < 0 ? (int)r : R_COUNT;
    case F_stream_read_line:
        r = stvm_stream_read_line(vm, st, buf, (size_t)a->z);
        return r < 0 ? (int)r : R_COUNT;
    case F_stream_write: return stvm_stream_write(vm, st, buf, (size_t)a->z);
    case F_stream_flush: return stvm_stream_flush(vm, st);
    case F_stream_get_stats:
        return stvm_stream_get_stats_(st, o ? &o->sst : NULL, SSIZE(stvm_stream_stats));
    case F_stream_close: return stvm_stream_close(vm, st);

    /* running inside another event loop */
    case F_run_mode: return stvm_run_mode(vm, (int)a->n);
    case F_backend_fd: r = stvm_backend_fd(vm); return r < 0 ? (int)r : R_COUNT;
    case F_backend_timeout_ms: r = stvm_backend_timeout_ms(vm); return r >= 0 ? R_COUNT : (int)r;
    case F_stop: stvm_stop(vm); return R_VOID;

    /* ByteArrays */
    case F_bytes_new: return stvm_bytes_new(vm, (size_t)a->z, o ? &o->oop : NULL);
    case F_bytes_data:
        return stvm_bytes_data(vm, o0, o ? &o->bd.data : NULL,
                               a->null_ptr ? NULL : &f->out.bd.size);
    case F_primitive_name: return null_or_not(stvm_primitive_name((int)a->n));
    case F_primitive_numbers:
        return yes(stvm_primitive_numbers(o ? o->nums : NULL, (int)a->n) == f->nprims);
    case F_primitive_error_name: return text_ok(stvm_primitive_error_name((int)a->n));
    /* tracing */
    case F_trace_start: return stvm_trace_start(vm, (size_t)a->z);
    case F_trace_stop: return stvm_trace_stop(vm);
    case F_trace_dropped: r = stvm_trace_dropped(vm); return r < 0 ? (int)r : R_COUNT;
    case F_trace_count: r = stvm_trace_count(vm); return r < 0 ? (int)r : R_COUNT;
    case F_trace_get:
        return stvm_trace_get_(vm, (size_t)a->z, o ? &o->tev : NULL, SSIZE(stvm_trace_event));
    case F_trace_set_hook: return stvm_trace_set_hook(vm, NULL, NULL);
    case F_trace_process_name:
        return stvm_trace_process_name(vm, (uint64_t)a->n, a->null_ptr ? NULL : f->text,
                                       a->null_ptr ? 0 : a->z ? a->z : sizeof f->text);
    case F_trace_kind_name: return null_or_not(stvm_trace_kind_name((int)a->n));
    case F_trace_write_text: return stvm_trace_write_text(vm, a->null_ptr ? NULL : stdout);
    case F_trace_write_json:
        return stvm_trace_write_json(vm, a->null_ptr ? NULL : "/tmp/stvm-api-table-trace.json");
    }
    return call_ffi(f, fn, a);
}

/* ---- snapshots: what a failed call must leave as it was ------------------------------ */

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

/* A named SocketPlugin primitive's SmallInteger answer, or -1000 - its failure code. */
static int64_t plugin_int(stvm_vm *vm, const char *name, stvm_oop arg, int nargs)
{
    stvm_oop r = STVM_NIL;
    int fail = 0;
    int64_t v = 0;
    if (stvm_primitive_call_named(vm, "SocketPlugin", name, STVM_NIL, &arg, nargs, &r, &fail) !=
        STVM_OK)
        return -1000 - fail;
    return stvm_int_to_i64(vm, r, &v) == STVM_OK ? v : -999;
}

/* Unchecked (callable from a green process): only VM calls that change nothing. */
static void snap_take(fx *f, snap *s)
{
    memset(s, 0, sizeof *s);
    for (int v = 0; v < N_VM; v++) {
        stvm_vm_get_stats(f->vm[v], &s->stats[v]);
        s->invariants[v] = stvm_vm_check_invariants(f->vm[v], NULL, 0);
        for (int op = 0; op < STVM_SIM_COST_OPS; op++)
            s->sim_cost[v][op] = stvm_sim_cost(f->vm[v], op);
    }
    for (int i = 0; i < f->nwsem; i++)
        s->excess[i] = stvm_semaphore_excess(f->vm[f->wsem[i].vm], f->wsem[i].s);
    for (int i = 0; i < f->nwmutex; i++)
        s->owner[i] = stvm_mutex_owner(f->vm[f->wmutex[i].vm], f->wmutex[i].m);
    for (int i = 0; i < f->nwmonitor; i++) {
        s->monitor[i].owner = stvm_monitor_owner(f->vm[f->wmonitor[i].vm], f->wmonitor[i].m);
        s->monitor[i].depth = stvm_monitor_depth(f->vm[f->wmonitor[i].vm], f->wmonitor[i].m);
    }
    for (int i = 0; i < f->nwproc; i++) {
        stvm_process_info info;
        memset(&info, 0, sizeof info);
        s->proc[i].rc = stvm_process_get_info(f->vm[f->wproc[i].vm], f->wproc[i].p, &info);
        s->proc[i].state = info.state;
        s->proc[i].priority = info.priority;
        s->proc[i].held = info.held;
        s->proc[i].on = info.waiting_object;
        stvm_vm *pv = f->vm[f->wproc[i].vm];
        s->proc[i].lrc[0] = stvm_process_get_local(pv, f->wproc[i].p, f->local[f->wproc[i].vm],
                                              &s->proc[i].lval[0]);
        s->proc[i].lrc[1] = stvm_process_get_local(pv, f->wproc[i].p, f->local_dyn,
                                              &s->proc[i].lval[1]);
    }
    for (int v = 0; v <= N_VM; v++) {
        stvm_vm *sv = f->vm[v < N_VM ? v : V_MAIN];
        stvm_local *lv = v < N_VM ? f->local[v] : f->local_dyn;
        s->self_local[v].rc = stvm_process_get_local(sv, f->self, lv, &s->self_local[v].v);
    }
    for (int v = 0; v < N_VM; v++) {
        s->resolver[v][0] = plugin_int(f->vm[v], "primitiveResolverStatus", STVM_NIL, 0);
        s->resolver[v][1] = plugin_int(f->vm[v], "primitiveResolverError", STVM_NIL, 0);
        s->bytes[v].rc = f->bytes[v] ? stvm_bytes_data(f->vm[v], f->bytes[v], &s->bytes[v].data,
                                                       &s->bytes[v].size)
                                     : 0;
    }
    for (int i = 0; i < f->nwsock; i++) {
        stvm_vm *vm = f->vm[f->wsock[i].vm];
        stvm_socket *sk = f->wsock[i].s;
        s->sock[i].fd = stvm_socket_fd(sk);
        if (f->wsock[i].probe)   /* first: stvm_socket_status may arm a listener */
            s->sock[i].probe = stvm_fd_wait(vm, s->sock[i].fd, STVM_IO_READ, 0);
        s->sock[i].status = stvm_socket_status(vm, sk);
        s->sock[i].port = stvm_socket_port(sk);
        s->sock[i].excess = stvm_semaphore_excess(vm, stvm_socket_read_semaphore(sk));
    }
    int nn = 0;
    for (int i = 0; i < f->nwsem; i++, nn++)
        s->name[nn].rc = stvm_semaphore_get_name(f->vm[f->wsem[i].vm], f->wsem[i].s,
                                                 s->name[nn].text, sizeof s->name[nn].text);
    for (int i = 0; i < f->nwmutex; i++, nn++)
        s->name[nn].rc = stvm_mutex_get_name(f->vm[f->wmutex[i].vm], f->wmutex[i].m,
                                             s->name[nn].text, sizeof s->name[nn].text);
    for (int i = 0; i < f->nwmonitor; i++, nn++)
        s->name[nn].rc = stvm_monitor_get_name(f->vm[f->wmonitor[i].vm], f->wmonitor[i].m,
                                               s->name[nn].text, sizeof s->name[nn].text);
    for (int i = 0; i < f->nwsock; i++, nn++)
        s->name[nn].rc = stvm_socket_get_name(f->vm[f->wsock[i].vm], f->wsock[i].s,
                                              s->name[nn].text, sizeof s->name[nn].text);
    for (int i = 0; i < f->nwstream; i++)
        s->stream[i].rc = stvm_stream_get_stats(f->wstream[i].st, &s->stream[i].st);
    for (int i = 0; i < f->nwrec; i++) {
        stvm_vm *vm = f->vm[f->wrec[i].vm];
        s->rec[i][0] = plugin_int(vm, "primitiveSocketConnectionStatus", f->wrec[i].rec, 1);
        s->rec[i][1] = plugin_int(vm, "primitiveSocketError", f->wrec[i].rec, 1);
    }
}

static const char *const stat_names[] = {
    "context_switches", "semaphore_signals", "semaphore_waits", "delays_scheduled",
    "delays_expired", "delays_unscheduled", "timing_loop_passes", "clock_reads",
    "timer_fires", "boxed_allocated", "large_int_ops", "external_signals", "idle_sleeps",
    "objects_allocated", "bytes_allocated", "objects_live", "bytes_live", "processes_live",
    "os_sleeps", "os_slept_us", "wakeups_timer", "wakeups_io", "wakeups_external",
    "wakeups_relinquish", "io_polls_busy", "fds_ready", "io_signals_unwaited", "timed_waits",
    "socket_reads_blocked",
};
_Static_assert(sizeof(stvm_stats) == sizeof stat_names / sizeof stat_names[0] * sizeof(uint64_t),
               "a counter was added to stvm_stats: name it here");

/* The first difference between two snapshots, written into buf ("" if none). */
static void snap_diff(const fx *f, const snap *a, const snap *b, char *buf, size_t size)
{
    buf[0] = 0;
    for (int v = 0; v < N_VM; v++) {
        const uint64_t *x = (const uint64_t *)&a->stats[v], *y = (const uint64_t *)&b->stats[v];
        for (size_t i = 0; i < sizeof(stvm_stats) / sizeof(uint64_t); i++)
            if (x[i] != y[i]) {
                snprintf(buf, size, "VM %s: %s %llu -> %llu", vm_names[v], stat_names[i],
                         (unsigned long long)x[i], (unsigned long long)y[i]);
                return;
            }
        if (a->invariants[v] != b->invariants[v]) {
            snprintf(buf, size, "VM %s: invariants %s -> %s", vm_names[v],
                     stvm_err_name(a->invariants[v]), stvm_err_name(b->invariants[v]));
            return;
        }
        for (int op = 0; op < STVM_SIM_COST_OPS; op++)
            if (a->sim_cost[v][op] != b->sim_cost[v][op]) {
                snprintf(buf, size, "VM %s: modelled cost %d: %lld -> %lld us", vm_names[v], op,
                         (long long)a->sim_cost[v][op], (long long)b->sim_cost[v][op]);
                return;
            }
    }
    for (size_t i = 0; i < sizeof a->name / sizeof a->name[0]; i++)
        if (memcmp(&a->name[i], &b->name[i], sizeof a->name[i]) != 0) {
            snprintf(buf, size, "watched object %zu: name \"%s\" -> \"%s\"", i, a->name[i].text,
                     b->name[i].text);
            return;
        }
    for (int i = 0; i < f->nwsem; i++)
        if (a->excess[i] != b->excess[i]) {
            snprintf(buf, size, "watched semaphore %d: excess %lld -> %lld", i,
                     (long long)a->excess[i], (long long)b->excess[i]);
            return;
        }
    for (int i = 0; i < f->nwmutex; i++)
        if (a->owner[i] != b->owner[i]) {
            snprintf(buf, size, "watched mutex %d: owner %p -> %p", i, (void *)a->owner[i],
                     (void *)b->owner[i]);
            return;
        }
    for (int i = 0; i < f->nwmonitor; i++)
        if (a->monitor[i].owner != b->monitor[i].owner ||
            a->monitor[i].depth != b->monitor[i].depth) {
            snprintf(buf, size, "watched monitor %d: owner %p -> %p, depth %lld -> %lld", i,
                     (void *)a->monitor[i].owner, (void *)b->monitor[i].owner,
                     (long long)a->monitor[i].depth, (long long)b->monitor[i].depth);
            return;
        }
    for (int i = 0; i < f->nwproc; i++)
        if (memcmp(&a->proc[i], &b->proc[i], sizeof a->proc[i]) != 0) {
            snprintf(buf, size, "watched process %d: state %d -> %d, priority %d -> %d", i,
                     a->proc[i].state, b->proc[i].state, a->proc[i].priority, b->proc[i].priority);
            return;
        }
    for (int v = 0; v <= N_VM; v++)
        if (memcmp(&a->self_local[v], &b->self_local[v], sizeof a->self_local[v]) != 0) {
            snprintf(buf, size, "the calling process's value of %s changed",
                     v < N_VM ? "a plain process-local variable" : "the dynamic variable");
            return;
        }
    for (int v = 0; v < N_VM; v++) {
        if (a->resolver[v][0] != b->resolver[v][0] || a->resolver[v][1] != b->resolver[v][1]) {
            snprintf(buf, size, "VM %s: resolver status %lld -> %lld, error %lld -> %lld",
                     vm_names[v], (long long)a->resolver[v][0], (long long)b->resolver[v][0],
                     (long long)a->resolver[v][1], (long long)b->resolver[v][1]);
            return;
        }
        if (memcmp(&a->bytes[v], &b->bytes[v], sizeof a->bytes[v]) != 0) {
            snprintf(buf, size, "VM %s: its ByteArray changed", vm_names[v]);
            return;
        }
    }
    for (int i = 0; i < f->nwsock; i++) {
        const char *what = NULL;
        long long x = 0, y = 0;
        if (a->sock[i].status != b->sock[i].status)
            what = "status", x = a->sock[i].status, y = b->sock[i].status;
        else if (a->sock[i].port != b->sock[i].port)
            what = "port", x = a->sock[i].port, y = b->sock[i].port;
        else if (a->sock[i].fd != b->sock[i].fd)
            what = "descriptor", x = a->sock[i].fd, y = b->sock[i].fd;
        else if (a->sock[i].excess != b->sock[i].excess)
            what = "read semaphore's excess", x = a->sock[i].excess, y = b->sock[i].excess;
        if (what) {
            snprintf(buf, size, "watched socket %d: %s %lld -> %lld", i, what, x, y);
            return;
        }
        if (a->sock[i].probe != b->sock[i].probe) {
            snprintf(buf, size, "watched socket %d: stvm_fd_wait(fd, READ, 0) %s -> %s", i,
                     stvm_err_name(a->sock[i].probe), stvm_err_name(b->sock[i].probe));
            return;
        }
    }
    for (int i = 0; i < f->nwstream; i++)
        if (memcmp(&a->stream[i], &b->stream[i], sizeof a->stream[i]) != 0) {
            snprintf(buf, size, "watched stream %d: counters (fills %llu -> %llu, bytes in %llu "
                     "-> %llu, out %llu -> %llu)", i, (unsigned long long)a->stream[i].st.fills,
                     (unsigned long long)b->stream[i].st.fills,
                     (unsigned long long)a->stream[i].st.bytes_in,
                     (unsigned long long)b->stream[i].st.bytes_in,
                     (unsigned long long)a->stream[i].st.bytes_out,
                     (unsigned long long)b->stream[i].st.bytes_out);
            return;
        }
    for (int i = 0; i < f->nwrec; i++)
        if (a->rec[i][0] != b->rec[i][0] || a->rec[i][1] != b->rec[i][1]) {
            snprintf(buf, size, "watched SocketHandle %d: status %lld -> %lld, error %lld -> %lld",
                     i, (long long)a->rec[i][0], (long long)b->rec[i][0], (long long)a->rec[i][1],
                     (long long)b->rec[i][1]);
            return;
        }
}

static bool out_clean(const fx *f)
{
    const unsigned char *b = (const unsigned char *)&f->out;
    for (size_t i = 0; i < sizeof f->out; i++)
        if (b[i] != OUT_PATTERN)
            return false;
    return true;
}

/* Run row i (any context): snapshot, call, snapshot, record. No Criterion here. */
static void exec_row(fx *f, int i)
{
    const row *r = &f->rows[i];
    result *res = &f->res[i];
    memset(&f->out, OUT_PATTERN, sizeof f->out);
    memset(f->text, 0, sizeof f->text);
    f->fail_code = -12345;
    snap before, after;
    snap_take(f, &before);
    res->rc = call(f, r->fn, &r->a);
    snap_take(f, &after);
    res->ran = true;
    res->fail = f->fail_code;
    res->out_clean = out_clean(f);
    res->text_ok = !r->text || strstr(f->text, r->text) != NULL;
    snap_diff(f, &before, &after, res->diff, sizeof res->diff);
}

static bool selected(const fx *f, const row *r, int ctx)
{
    return r->ctx == ctx && (r->defect != NULL) == f->defects;
}

/* ---- the rows ------------------------------------------------------------------------ */

/* KNOWN DEFECTS. A row marked with one of these shows a library bug: it is skipped
 * unless STVM_KNOWN_DEFECTS=1 (then the test known_defects runs exactly the marked
 * rows). Unmark a row when its defect is fixed.
 *
 * Fixed, their rows now run by default (the numbers stay taken):
 *  D1: primitive 242 armed the timer for deadlines past the clock's end (2^62 us).
 *  D2: the SmallInteger primitives (1-9), 136 and 230 took tagged words beyond the VM's
 *      SmallInteger range.
 *  D3: stvm_oop_class_name named such a word "SmallInteger".
 *  D4: the calls that need a green process of the VM checked only that some process of
 *      it ran: from another thread while the VM ran elsewhere they acted as its running
 *      process. They answer ENOTPROC now (a thread check), so every such call, the
 *      blocking ones too, is made in that context (gen_wrong_context).
 *  D7: the stream calls that may wait (stvm_stream_read, _read_line, _write, _flush)
 *      checked only that some process of the VM ran, not the thread: from another
 *      thread while the VM ran elsewhere they acted for its running process. They
 *      answer ENOTPROC now, as every other call that needs a process (the fixture
 *      keeps data waiting for the stream the rows read from, so that the defect would
 *      show without a read that waits).
 *  D8: stvm_tcp_listen and stvm_tcp_connect with a host that is not an address ("",
 *      "example.com", "999.1.1.1", "127.0.0.1 ") ran the image's resolver on it
 *      (its status and error, and the allocation counters, changed) before refusing.
 *      The host is parsed first now, and the resolver is never asked (Pharo's
 *      addressFromString: for a numeric address).
 *  D9: calls that failed only after allocating left it in objects_allocated /
 *      bytes_allocated: stvm_tcp_listen on a taken port, stvm_tcp_listen and
 *      stvm_tcp_connect on a VM whose external table is full (EFULL), stvm_fd_wait
 *      with a timeout other than 0 on a closed descriptor, a regular file or /dev/null,
 *      and stvm_fd_wait on a full external table (EFULL, now documented).
 *  D10: stvm_fd_wait with timeout 0 answered a regular file or /dev/null as ready
 *      (poll's answer); now EINVAL as with any other timeout (epoll decides both).
 *  D11: a listener had its read handler armed while nobody accepted on it: stvm_fd_wait
 *      on its descriptor answered EBUSY, and stvm_run never answered STVM_EDEADLOCK
 *      while a listener was open (test_socket.c has that half).
 *  D12: stvm_socket_recv with timeout 0 on a socket another process waits to read from
 *      disarmed that process's read handler. It answers EWAITING now (EBUSY then), as
 *      the other calls that would use a role another process waits in (test_socket.c
 *      shows the waiter is still woken).
 *  D13: stvm_stream_read_line wrote "" into buf when it failed.
 *  D14: stvm_fd_wait with a descriptor above 2^30 and a timeout other than 0 never
 *      returned (an int capacity doubled until it overflowed): not a row, the test
 *      fd_wait_beyond_2_30_answers_einval runs it in a child process with an alarm.
 * (D5 and D6 were test_boundaries.c's.)
 *
 * Open: none.
 */
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

/* Functions without a vm cannot tell another VM's handle (or a forged one) from their
 * own: they are given only handles of another kind. */
static const int novm_socket_wrong[] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_STREAM, H_BOX, H_BYTES,
                                        H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, 0};
static const int novm_stream_wrong[] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_BOX, H_BYTES,
                                        H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, 0};
static const int novm_delay_wrong[] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_BOX,
                                       H_BYTES, H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, 0};

static const int novm_queue_wrong[] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_BOX,
                                       H_BYTES, H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, 0};

#define E_INVAL STVM_EINVAL
static const fn_desc FN[N_FN] = {
    [F_measure_raw_switch] = {.null_out = E_INVAL, .ok = {.n = 1000}},
    [F_vm_create] = {.null_out = E_INVAL},
    [F_vm_free] = {.null_vm = R_VOID},
    [F_vm_config] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_spawn] = {.null_vm = E_INVAL, .ok = {.n = 40}},
    [F_spawn_sized] = {.null_vm = E_INVAL, .ok = {.n = 40}},
    [F_spawn_suspended] = {.null_vm = E_INVAL, .ok = {.n = 40}},
    [F_run] = {.null_vm = E_INVAL},
    [F_yield] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_vm_active_process] = {.null_vm = R_NULL, .not_proc = R_NULL},
    [F_checkpoint] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_work_us] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_sim_at] = {.null_vm = E_INVAL},
    [F_sim_set_cost] = {.null_vm = E_INVAL},
    [F_sim_cost] = {.null_vm = E_INVAL},
    [F_process_resume] = {.null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL},
    [F_process_suspend] = {.null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL},
    [F_process_terminate] = {.null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL},
    [F_process_interrupt] = {.null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL},
    [F_process_release] = {.null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL},
    [F_process_join] = {.null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 0}},
    [F_ensure] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_ensure_pop] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_process_set_priority] = {.null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL,
                                .ok = {.n = 40}},
    [F_process_get_info] = {.null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL,
                            .null_out = E_INVAL},
    [F_vm_processes] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_vm_blocked_report] = {.null_vm = E_INVAL, .ok = {.z = 0, .null_ptr = true}},
    [F_vm_check_invariants] = {.null_vm = E_INVAL},
    [F_semaphore_new] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_semaphore_free] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL},
    [F_semaphore_signal] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL},
    [F_semaphore_wait] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                          .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_semaphore_try_wait] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                              .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_semaphore_critical] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                              .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_semaphore_excess] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL},
    [F_semaphore_set_name] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL},
    [F_semaphore_get_name] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL},
    [F_mutex_set_name] = {.null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL},
    [F_mutex_get_name] = {.null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL},
    [F_queue_set_name] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL},
    [F_queue_get_name] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL},
    [F_monitor_set_name] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL},
    [F_monitor_get_name] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL},
    [F_delay_set_name] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL},
    [F_delay_get_name] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL},
    [F_socket_set_name] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                           .ok = {.vm = V_NET}},
    [F_socket_get_name] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                           .ok = {.vm = V_NET}},
    [F_mutex_new] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_mutex_free] = {.null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL},
    [F_mutex_enter] = {.null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_mutex_enter_timeout_ms] = {.null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                                  .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}},
    /* Leaving a mutex the caller does not own is EPERM, whoever the caller is. */
    [F_mutex_exit] = {.null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                      .not_proc = STVM_EPERM, .ctx = C_GREEN},
    [F_mutex_try_enter] = {.null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                           .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_mutex_owner] = {.null_vm = R_NULL, .kind = K_MUTEX, .bad_handle = R_NULL},
    [F_mutex_critical] = {.null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                          .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_queue_new] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.n = 0}},
    [F_queue_free] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL},
    [F_queue_put] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL},
    [F_queue_put_timeout_ms] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                                .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}},
    [F_queue_take] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                      .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_queue_take_timeout_ms] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                                 .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                                 .ok = {.n = 1}},
    [F_queue_try_take] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                          .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_queue_peek] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                      .null_out = E_INVAL},
    [F_queue_size] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL},
    [F_queue_flush] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL},
    [F_queue_close] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                       .ok = {.h = H_QUEUE_CLOSED}},
    [F_queue_open_external] = {.null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                               .ok = {.vm = V_OTHER}},
    [F_queue_put_external] = {.kind = K_QUEUE, .bad_handle = E_INVAL, .wrong = novm_queue_wrong,
                              .ok = {.h = H_QUEUE_OPEN, .n = 0}},
    [F_queue_close_external] = {.kind = K_QUEUE, .bad_handle = E_INVAL, .wrong = novm_queue_wrong,
                                .ok = {.vm = V_OTHER, .h = H_QUEUE_OPEN_CLOSED}},
    [F_monitor_new] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_monitor_free] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL},
    [F_monitor_enter] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                         .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_monitor_enter_timeout_ms] = {.null_vm = E_INVAL, .kind = K_MONITOR,
                                    .bad_handle = E_INVAL, .not_proc = STVM_ENOTPROC,
                                    .ctx = C_GREEN, .ok = {.n = 1}},
    [F_monitor_try_enter] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                             .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    /* Only the owner leaves or signals: from anywhere else EPERM, as a mutex's exit. */
    [F_monitor_exit] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                        .not_proc = STVM_EPERM, .ctx = C_GREEN},
    [F_monitor_critical] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                            .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_monitor_owner] = {.null_vm = R_NULL, .kind = K_MONITOR, .bad_handle = R_NULL},
    [F_monitor_depth] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL},
    [F_monitor_wait] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_monitor_wait_timeout_ms] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                                   .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}},
    [F_monitor_wait_on] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                           .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.m = 1}},
    [F_monitor_wait_on_timeout_ms] = {.null_vm = E_INVAL, .kind = K_MONITOR,
                                      .bad_handle = E_INVAL, .not_proc = STVM_ENOTPROC,
                                      .ctx = C_GREEN, .ok = {.m = 1, .n = 1}},
    [F_monitor_wait_while] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                              .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_monitor_wait_until] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                              .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_monitor_wait_while_on] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                                 .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.m = 1}},
    [F_monitor_wait_until_on] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                                 .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.m = 1}},
    [F_monitor_signal] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                          .not_proc = STVM_EPERM, .ctx = C_GREEN},
    [F_monitor_signal_all] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                              .not_proc = STVM_EPERM, .ctx = C_GREEN},
    [F_monitor_signal_on] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                             .not_proc = STVM_EPERM, .ctx = C_GREEN, .ok = {.m = 1}},
    [F_monitor_signal_all_on] = {.null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                                 .not_proc = STVM_EPERM, .ctx = C_GREEN, .ok = {.m = 1}},
    [F_monitor_signal_really_all] = {.null_vm = E_INVAL, .kind = K_MONITOR,
                                     .bad_handle = E_INVAL, .not_proc = STVM_EPERM,
                                     .ctx = C_GREEN},
    [F_external_register] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                             .null_out = E_INVAL, .ok = {.vm = V_OTHER}},
    [F_external_unregister] = {.null_vm = E_INVAL, .ok = {.n = 1}},
    [F_external_signal] = {.null_vm = E_INVAL, .ok = {.n = 1}},
    [F_vm_now_us] = {.null_vm = R_ZERO},
    [F_vm_millisecond_clock] = {.null_vm = R_ZERO},
    [F_delay_wait_ms] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.n = 1}},
    [F_delay_wait_us] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.n = 1}},
    [F_call_within_ms] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.n = 1}},
    [F_call_within_us] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.n = 1}},
    [F_semaphore_wait_timeout_ms] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                                     .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}},
    [F_semaphore_wait_timeout_us] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                                     .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}},
    [F_delay_new_ms] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.n = 1}},
    [F_delay_new_us] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.n = 1}},
    [F_delay_free] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL},
    [F_delay_wait] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                      .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_delay_schedule] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                          .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_delay_unschedule] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                            .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_delay_is_expired] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL},
    [F_delay_being_waited_on] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL},
    [F_delay_ms_to_go] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                          .null_out = E_INVAL},
    [F_delay_us_to_go] = {.null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                          .null_out = E_INVAL},
    [F_delay_semaphore] = {.kind = K_DELAY, .bad_handle = R_NULL, .wrong = novm_delay_wrong},
    [F_delay_timeout_semaphore_ms] = {.null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                                .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                                .ok = {.n = 1}},
    [F_vm_get_stats] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_vm_reset_stats] = {.null_vm = R_VOID},
    [F_smallint_max] = {.null_vm = R_ANY},
    [F_smallint_min] = {.null_vm = R_ANY},
    [F_oop_is_integer] = {.null_vm = R_FALSE, .ok = {.o = {SI(1)}}},
    [F_int_from_i64] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_int_from_u64] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_int_to_i64] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1)}}},
    [F_int_to_u64] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1)}}},
    [F_int_add] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1), SI(2)}}},
    [F_int_sub] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1), SI(2)}}},
    [F_int_mul] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1), SI(2)}}},
    [F_int_compare] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1), SI(2)}}},
    [F_oop_release] = {.null_vm = E_INVAL, .ok = {.o = {OB(OB_BOX_MAX)}}},
    [F_oop_class_name] = {.null_vm = R_NULL, .ok = {.o = {SI(1)}}},
    [F_primitive_call] = {.null_vm = E_INVAL, .ok = {.m = 1, .n = 1, .o = {SI(1), SI(2)}}},

    /* descriptors, sockets, streams: the plain ones are V_NET's */
    [F_fd_wait] = {.null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                   .ok = {.vm = V_NET, .fd = FD_PIPE, .n = STVM_IO_READ, .t = 1}},
    [F_tcp_listen] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.vm = V_NET, .m = 4}},
    [F_tcp_connect] = {.null_vm = E_INVAL, .null_out = E_INVAL, .not_proc = STVM_ENOTPROC,
                       .ctx = C_GREEN, .ok = {.vm = V_NET, .n = PORT_LISTENING, .t = 1}},
    [F_unix_listen] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.vm = V_NET, .m = 4}},
    [F_unix_connect] = {.null_vm = E_INVAL, .null_out = E_INVAL, .not_proc = STVM_ENOTPROC,
                        .ctx = C_GREEN, .ok = {.vm = V_NET, .t = 1}},
    [F_socket_accept] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                         .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.vm = V_NET, .h = H_LISTENER, .t = 1}},
    [F_socket_send] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                       .ok = {.vm = V_NET, .z = 1, .t = 1}},
    [F_socket_recv] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                       .ok = {.vm = V_NET, .z = 1, .t = 1}},
    [F_socket_shutdown] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                           .ok = {.vm = V_NET, .n = 0}},
    [F_socket_close] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                        .ok = {.vm = V_NET}},
    [F_socket_fd] = {.kind = K_SOCKET, .bad_handle = E_INVAL, .ok = {.vm = V_NET},
                     .wrong = novm_socket_wrong},
    [F_socket_port] = {.kind = K_SOCKET, .bad_handle = E_INVAL, .ok = {.vm = V_NET},
                       .wrong = novm_socket_wrong},
    [F_socket_peer_address] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                               .ok = {.vm = V_NET, .z = 64}},
    [F_socket_local_address] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                                .ok = {.vm = V_NET, .z = 64}},
    [F_socket_status] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                         .ok = {.vm = V_NET}},
    [F_socket_read_semaphore] = {.kind = K_SOCKET, .bad_handle = R_NULL, .ok = {.vm = V_NET},
                                 .wrong = novm_socket_wrong},
    [F_stream_open] = {.null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                       .null_out = E_INVAL, .ok = {.vm = V_NET, .t = -1}},
    [F_stream_set_read_timeout_ms] = {.null_vm = E_INVAL, .kind = K_STREAM,
                                      .bad_handle = E_INVAL, .ok = {.vm = V_NET, .t = 5}},
    [F_stream_set_write_timeout_ms] = {.null_vm = E_INVAL, .kind = K_STREAM,
                                       .bad_handle = E_INVAL, .ok = {.vm = V_NET, .t = 5}},
    [F_stream_read] = {.null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.vm = V_NET, .z = 1}},
    [F_stream_read_line] = {.null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                            .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                            .ok = {.vm = V_NET, .z = 64}},
    [F_stream_write] = {.null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.vm = V_NET, .z = 1}},
    [F_stream_flush] = {.null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.vm = V_NET}},
    [F_stream_get_stats] = {.kind = K_STREAM, .bad_handle = E_INVAL, .null_out = E_INVAL,
                            .ok = {.vm = V_NET}, .wrong = novm_stream_wrong},
    [F_stream_close] = {.null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                        .ok = {.vm = V_NET}},

    /* running inside another event loop (a valid call would run or stop the VM: only
     * the NULL vm is generated) */
    [F_run_mode] = {.null_vm = E_INVAL},
    [F_backend_fd] = {.null_vm = E_INVAL},
    [F_backend_timeout_ms] = {.null_vm = E_INVAL},
    [F_stop] = {.null_vm = R_VOID},

    /* ByteArrays and named primitives */
    [F_local_new] = {.null_vm = E_INVAL, .null_out = E_INVAL},
    [F_local_free] = {.null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL},
    [F_local_get] = {.null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                     .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_process_get_local] = {.null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                        .null_out = E_INVAL},
    [F_local_set] = {.null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                     .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_local_clear] = {.null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_local_during] = {.null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN},
    [F_bytes_new] = {.null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.vm = V_NET, .z = 16}},
    [F_bytes_data] = {.null_vm = E_INVAL, .null_out = E_INVAL,
                      .ok = {.vm = V_NET, .o = {OB(OB_BYTES)}}},
    [F_primitive_call_named] = {.null_vm = E_INVAL,
                                .ok = {.vm = V_NET, .s2 = "primitiveResolverStatus"}},
};

/* Wrong handles for an argument of each kind: NULL, the other kinds, a foreign one, a
 * boxed integer and readable memory of the wrong layout. */
static const int wrong_handles[N_KIND][16] = {
    [K_SEM] = {H_NULL, H_MONITOR, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_FOREIGN, H_BOX, H_BYTES, H_G_ZERO,
               H_G_ONES, H_G_TEXT, H_G_FORGED},
    [K_MUTEX] = {H_NULL, H_MONITOR, H_SEM, H_PROC, H_SOCKET, H_STREAM, H_FOREIGN, H_BOX, H_BYTES, H_G_ZERO,
                 H_G_ONES, H_G_TEXT, H_G_FORGED},
    [K_PROC] = {H_NULL, H_MONITOR, H_SEM, H_MUTEX, H_SOCKET, H_STREAM, H_FOREIGN, H_BOX, H_BYTES, H_G_ZERO,
                H_G_ONES, H_G_TEXT, H_G_FORGED},
    [K_SOCKET] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_STREAM, H_FOREIGN, H_BOX, H_BYTES, H_RECORD,
                  H_G_ZERO, H_G_ONES, H_G_TEXT, H_G_FORGED},
    [K_STREAM] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_FOREIGN, H_BOX, H_BYTES, H_RECORD,
                  H_G_ZERO, H_G_ONES, H_G_TEXT, H_G_FORGED},
    [K_DELAY] = {H_NULL, H_MONITOR, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_FOREIGN, H_BOX, H_BYTES,
                 H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, H_G_FORGED},
    [K_QUEUE] = {H_NULL, H_MONITOR, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_FOREIGN, H_BOX, H_BYTES,
                 H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, H_G_FORGED},
    [K_LOCAL] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_FOREIGN, H_BOX, H_BYTES,
                 H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, H_G_FORGED},
    /* A mutex above all: a monitor's entry is one, and must not pass for it. */
    [K_MONITOR] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_FOREIGN, H_BOX, H_BYTES,
                   H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, H_G_FORGED},
};
static const char *const handle_names[N_HANDLE] = {
    [H_NULL] = "NULL handle", [H_SEM] = "a semaphore", [H_MUTEX] = "a mutex",
    [H_PROC] = "a process", [H_FOREIGN] = "another VM's handle", [H_BOX] = "a boxed integer",
    [H_G_ZERO] = "zeroed memory", [H_G_ONES] = "0xFF memory", [H_G_TEXT] = "text",
    [H_G_FORGED] = "a forged header of the right class (another VM's pointer in every word)",
    [H_SOCKET] = "a socket", [H_STREAM] = "a stream", [H_BYTES] = "a ByteArray (oop)",
    [H_RECORD] = "a SocketHandle record (the plugin's, oop)", [H_MONITOR] = "a monitor",
};

/* Words that are not integers of V_MAIN. */
static const struct { const char *what; ospec o; } non_integers[] = {
    {"an unmapped word", RAW(GARBAGE)},
    {"a pointer to zeroed memory", OB(OB_G_ZERO)},
    {"a semaphore", OB(OB_SEM)},
    {"a process", OB(OB_SUSP)},
    {"another VM's box", OB(OB_FOREIGN_BOX)},
    {"a released box", OB(OB_RELEASED)},
    {"nil", RAW(STVM_NIL)},
    {"true", RAW(STVM_TRUE)},
    {"false", RAW(STVM_FALSE)},
    {"an even word", RAW(8)},
    {"the highest aligned word", RAW(UINTPTR_MAX & ~(uintptr_t)15)},
};
#define N_NON_INTEGERS ((int)(sizeof non_integers / sizeof non_integers[0]))

/* Receivers each process/critical-section primitive must refuse (BAD_RECEIVER), by
 * what the primitive wants (a semaphore, a process, a mutex). */
static const struct { const char *what; ospec o; int not_for; } bad_receivers[] = {
    {"an unmapped word", RAW(GARBAGE), K_NONE},
    {"a pointer to zeroed memory", OB(OB_G_ZERO), K_NONE},
    {"a forged Semaphore header", OB(OB_G_FORGED_SEM), K_NONE},
    {"a forged Process header", OB(OB_G_FORGED_PROC), K_NONE},
    {"a SmallInteger", SI(3), K_NONE},
    {"nil", RAW(STVM_NIL), K_NONE},
    {"true", RAW(STVM_TRUE), K_NONE},
    {"a boxed integer", OB(OB_BOX_MAX), K_NONE},
    {"a released box", OB(OB_RELEASED), K_NONE},
    {"a semaphore", OB(OB_SEM), K_SEM},
    {"a mutex", OB(OB_MUTEX), K_MUTEX},
    {"a process", OB(OB_SUSP), K_PROC},
    {"another VM's semaphore", OB(OB_FOREIGN_SEM), K_NONE},
    {"another VM's mutex", OB(OB_FOREIGN_MUTEX), K_NONE},
    {"another VM's process", OB(OB_FOREIGN_PROC), K_NONE},
};
static const struct { int number, wants, ctx; } receiver_prims[] = {
    {85, K_SEM, C_HOST}, {86, K_SEM, C_GREEN}, {87, K_PROC, C_HOST}, {88, K_PROC, C_HOST},
    {185, K_MUTEX, C_GREEN}, {186, K_MUTEX, C_GREEN}, {187, K_MUTEX, C_GREEN},
};

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

/* Condition queue ids outside 0 .. STVM_MONITOR_QUEUES-1 (in .m). */
#define MONITOR_BAD_QUEUES(fn, ...)                                                             \
    ROW(fn, "queue -1", C_GREEN, E_INVAL, .m = -1, __VA_ARGS__),                                \
    ROW(fn, "queue STVM_MONITOR_QUEUES", C_GREEN, E_INVAL, .m = STVM_MONITOR_QUEUES,            \
        __VA_ARGS__),                                                                           \
    ROW(fn, "queue INT_MIN", C_GREEN, E_INVAL, .m = INT_MIN, __VA_ARGS__),                      \
    ROW(fn, "queue INT_MAX", C_GREEN, E_INVAL, .m = INT_MAX, __VA_ARGS__)

/* The first code past the error list (no error has it): one more than the rows of
 * STVM_ERRNO_MAP, which are numbered 0, -1, -2, ... */
enum {
#define COUNT_ERRNO_ROW(name, code, text) ERRNO_ROW_##name,
    STVM_ERRNO_MAP(COUNT_ERRNO_ROW)
#undef COUNT_ERRNO_ROW
    ERRNO_ROWS
};
#define FIRST_UNUSED_CODE (-(int)ERRNO_ROWS)

static const row explicit_rows[] = {
    /* ---- functions that never fail: odd inputs still answer sensibly ---- */
    ROW(version, "answers STVM_VERSION_HEX", C_HOST, R_TRUE),
    ROW(version_string, "answers STVM_VERSION_STRING", C_HOST, R_TRUE),
    ROW(context_backend, "names its back end", C_HOST, R_TRUE),
    ROW(strerror, "code 1 has a text", C_HOST, R_TRUE, .n = 1),
    ROW(strerror, "the first unused code has a text", C_HOST, R_TRUE, .n = FIRST_UNUSED_CODE),
    ROW(strerror, "INT_MIN has a text", C_HOST, R_TRUE, .n = INT_MIN),
    ROW(strerror, "INT_MAX has a text", C_HOST, R_TRUE, .n = INT_MAX),
    ROW(err_name, "code 1 is STVM_E?", C_HOST, R_TRUE, .n = 1),
    ROW(err_name, "the first unused code is STVM_E?", C_HOST, R_TRUE, .n = FIRST_UNUSED_CODE),
    ROW(err_name, "INT_MIN is STVM_E?", C_HOST, R_TRUE, .n = INT_MIN),
    ROW(err_name, "INT_MAX is STVM_E?", C_HOST, R_TRUE, .n = INT_MAX),
    ROW(config_init, "NULL cfg", C_HOST, STVM_EINVAL),
    ROW(primitive_name, "number 0", C_HOST, R_NULL, .n = 0),
    ROW(primitive_name, "number -1", C_HOST, R_NULL, .n = -1),
    ROW(primitive_name, "number 243", C_HOST, R_NULL, .n = 243),
    ROW(primitive_name, "INT_MIN", C_HOST, R_NULL, .n = INT_MIN),
    ROW(primitive_name, "INT_MAX", C_HOST, R_NULL, .n = INT_MAX),
    ROW(primitive_numbers, "NULL out, cap 5: the total, nothing written", C_HOST, R_TRUE, .n = 5,
        .null_out = true),
    ROW(primitive_numbers, "cap 0: the total, nothing written", C_HOST, R_TRUE, .n = 0),
    ROW(primitive_numbers, "cap -1: the total, nothing written", C_HOST, R_TRUE, .n = -1),
    ROW(primitive_numbers, "cap INT_MIN: the total, nothing written", C_HOST, R_TRUE, .n = INT_MIN),
    ROW(primitive_error_name, "code -1 has a text", C_HOST, R_TRUE, .n = -1),
    ROW(primitive_error_name, "code 8 has a text", C_HOST, R_TRUE, .n = 8),
    ROW(primitive_error_name, "code 10 has a text", C_HOST, R_TRUE, .n = 10),
    ROW(primitive_error_name, "INT_MIN has a text", C_HOST, R_TRUE, .n = INT_MIN),
    ROW(primitive_error_name, "INT_MAX has a text", C_HOST, R_TRUE, .n = INT_MAX),
    ROW(semaphore_oop, "NULL", C_HOST, R_ANY, .h = H_NULL),
    ROW(mutex_oop, "NULL", C_HOST, R_ANY, .h = H_NULL),
    ROW(process_oop, "NULL", C_HOST, R_ANY, .h = H_NULL),
    ROW(oop_is_smallint, "nil", C_HOST, R_FALSE, .o = {RAW(STVM_NIL)}),
    ROW(oop_is_smallint, "true", C_HOST, R_FALSE, .o = {RAW(STVM_TRUE)}),
    ROW(oop_is_smallint, "false", C_HOST, R_FALSE, .o = {RAW(STVM_FALSE)}),
    ROW(oop_is_smallint, "an unmapped even word", C_HOST, R_FALSE, .o = {RAW(GARBAGE)}),
    ROW(oop_is_smallint, "a box", C_HOST, R_FALSE, .o = {OB(OB_BOX_MAX)}),

    /* ---- measure_raw_switch ---- */
    ROW(measure_raw_switch, "0 iterations", C_HOST, E_INVAL, .n = 0),
    ROW(measure_raw_switch, "inside stvm_run", C_GREEN, STVM_EBUSY, .n = 1000),

    /* ---- config_check and vm_create (the broken fields are generated) ---- */
    ROW(config_check, "NULL cfg", C_HOST, E_INVAL, .null_ptr = true),
    /* A struct size the library cannot know (include/README.md, "Structs that grow"):
     * from a newer header, holding no field, or cutting one. */
    ROW(config_init, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_config) + 8),
    ROW(config_init, "struct size cutting a field", C_HOST, STVM_ESIZE, .ssize = 2),
    ROW(config_check, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_config) + 8),
    ROW(vm_create, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_config) + 8),
    ROW(vm_create, "struct size holding no field", C_HOST, STVM_ESIZE, .ssize = 1),
    ROW(vm_config, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_config) + 4),
    ROW(vm_config, "struct size cutting stack_size", C_HOST, STVM_ESIZE,
        .ssize = offsetof(stvm_config, stack_size) + 4),
    ROW(process_get_info, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_process_info) + 8),
    ROW(process_get_info, "struct size cutting name", C_GREEN, STVM_ESIZE, .ssize = 4),
    ROW(vm_get_stats, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_stats) + 8),
    ROW(vm_get_stats, "struct size cutting a counter", C_GREEN, STVM_ESIZE, .ssize = 12),
    ROW(stream_get_stats, "struct size from a newer header", C_HOST, STVM_ESIZE, .vm = V_NET,
        .ssize = sizeof(stvm_stream_stats) + 8),
    ROW(config_check, "NULL why with a size", C_HOST, E_INVAL, .null_out = true, .z = 16),

    /* ---- lifetime and runs in the wrong place ---- */
    ROW(vm_free, "its own VM from inside stvm_run: ignored", C_GREEN, R_VOID),
    ROW(vm_free, "a VM running on another thread: ignored", C_BARE, R_VOID),
    ROW(run, "its own VM from inside stvm_run", C_GREEN, STVM_EBUSY),
    ROW(run, "another VM from inside stvm_run (runs do not nest)", C_GREEN, STVM_EBUSY,
        .vm = V_OTHER),
    ROW(run, "a VM already running on another thread", C_BARE, STVM_EBUSY),
    ROW(run, "a VM already running on another thread, from a process", C_ELSEWHERE, STVM_EBUSY),

    /* ---- spawning: priorities, functions, stack sizes ---- */
#define BAD_PRIORITIES(fn, ctx)                                                                 \
    ROW(fn, "priority 0", ctx, E_INVAL, .n = 0),                                                \
    ROW(fn, "priority 81", ctx, E_INVAL, .n = 81),                                              \
    ROW(fn, "priority -1", ctx, E_INVAL, .n = -1),                                              \
    ROW(fn, "priority INT_MAX", ctx, E_INVAL, .n = INT_MAX),                                    \
    ROW(fn, "priority INT_MIN", ctx, E_INVAL, .n = INT_MIN),                                    \
    ROW(fn, "NULL function", ctx, E_INVAL, .n = 40, .null_ptr = true)
#define BAD_STACKS(fn, ctx)                                                                     \
    ROW(fn, "stack 1 byte", ctx, E_INVAL, .n = 40, .z = 1),                                     \
    ROW(fn, "stack 4 KiB", ctx, E_INVAL, .n = 40, .z = 4096),                                   \
    ROW(fn, "stack 8 KiB - 1", ctx, E_INVAL, .n = 40, .z = 8191),                               \
    ROW(fn, "stack 64 MiB + 1", ctx, E_INVAL, .n = 40, .z = ((uint64_t)64 << 20) + 1),          \
    ROW(fn, "stack SIZE_MAX", ctx, E_INVAL, .n = 40, .z = SIZE_MAX)
    BAD_PRIORITIES(spawn, C_HOST), BAD_PRIORITIES(spawn, C_GREEN),
    BAD_PRIORITIES(spawn_sized, C_HOST), BAD_PRIORITIES(spawn_sized, C_GREEN),
    BAD_PRIORITIES(spawn_suspended, C_HOST), BAD_PRIORITIES(spawn_suspended, C_GREEN),
    BAD_STACKS(spawn_sized, C_HOST), BAD_STACKS(spawn_sized, C_GREEN),
    BAD_STACKS(spawn_suspended, C_HOST), BAD_STACKS(spawn_suspended, C_GREEN),

    /* ---- processes in states that refuse the call ---- */
    ROW(process_resume, "a ready process", C_HOST, E_STATE, .h = H_READY),
    ROW(process_resume, "a ready process", C_GREEN, E_STATE, .h = H_READY),
    ROW(process_resume, "a process waiting on a semaphore", C_HOST, E_STATE, .h = H_WAITING),
    ROW(process_resume, "a process waiting on a mutex", C_HOST, E_STATE, .h = H_MWAITER),
    ROW(process_resume, "a finished process", C_HOST, E_STATE, .h = H_DONE),
    ROW(process_resume, "the running process itself", C_GREEN, E_STATE, .h = H_SELF),
    ROW(process_resume, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_resume, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_resume, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_resume, "the timing process", C_GREEN, E_STATE, .h = H_TIMING),
    ROW(process_suspend, "a suspended process", C_HOST, E_STATE, .h = H_PROC),
    ROW(process_suspend, "a suspended process", C_GREEN, E_STATE, .h = H_PROC),
    ROW(process_suspend, "a finished process", C_HOST, E_STATE, .h = H_DONE),
    ROW(process_suspend, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_suspend, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_suspend, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_suspend, "the timing process", C_GREEN, E_STATE, .h = H_TIMING),
    ROW(process_terminate, "a finished process (a no-op, as in Pharo)", C_HOST, STVM_OK,
        .h = H_DONE),
    ROW(process_terminate, "a finished process (a no-op, as in Pharo)", C_GREEN, STVM_OK,
        .h = H_DONE),
    ROW(process_terminate, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_terminate, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_terminate, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_terminate, "the timing process", C_GREEN, E_STATE, .h = H_TIMING),
    ROW(process_interrupt, "a finished process", C_HOST, E_STATE, .h = H_DONE),
    ROW(process_interrupt, "a finished process", C_GREEN, E_STATE, .h = H_DONE),
    ROW(process_interrupt, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_interrupt, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_interrupt, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_interrupt, "the timing process", C_GREEN, E_STATE, .h = H_TIMING),
    ROW(process_release, "a handle nobody holds", C_HOST, E_STATE, .h = H_UNHELD),
    ROW(process_release, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_release, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_release, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_join, "the caller itself", C_GREEN, E_INVAL, .h = H_SELF, .n = -1),
    ROW(process_join, "a handle nobody holds", C_GREEN, E_STATE, .h = H_UNHELD, .n = -1),
    ROW(process_join, "the idle process", C_GREEN, E_STATE, .h = H_IDLE, .n = -1),
    ROW(process_join, "the timing process", C_GREEN, E_STATE, .h = H_TIMING, .n = -1),
    ROW(process_join, "timeout -2", C_GREEN, E_INVAL, .h = H_WAITING, .n = -2),
    ROW(process_join, "timeout INT64_MIN", C_GREEN, E_INVAL, .h = H_WAITING, .n = INT64_MIN),
    ROW(process_join, "timeout 2^52/1000 + 1 ms", C_GREEN, E_RANGE, .h = H_WAITING,
        .n = MS_MAX_FROM_US + 1),
    ROW(process_join, "timeout INT64_MAX", C_GREEN, E_RANGE, .h = H_WAITING, .n = INT64_MAX),
    ROW(process_join, "timeout 0 on a running process: only checks", C_GREEN, STVM_ETIMEDOUT,
        .h = H_WAITING, .n = 0),
    ROW(process_set_priority, "priority 0", C_HOST, E_INVAL, .n = 0),
    ROW(process_set_priority, "priority 81", C_HOST, E_INVAL, .n = 81),
    ROW(process_set_priority, "priority -1", C_HOST, E_INVAL, .n = -1),
    ROW(process_set_priority, "priority INT_MAX", C_HOST, E_INVAL, .n = INT_MAX),
    ROW(process_set_priority, "priority INT_MIN", C_HOST, E_INVAL, .n = INT_MIN),
    ROW(process_set_priority, "priority 81 for itself", C_GREEN, E_INVAL, .h = H_SELF, .n = 81),
    ROW(process_set_priority, "priority 0 for a waiting process", C_GREEN, E_INVAL,
        .h = H_WAITING, .n = 0),
    ROW(process_set_priority, "a finished process", C_HOST, E_STATE, .h = H_DONE, .n = 40),
    ROW(process_set_priority, "the idle process", C_HOST, E_STATE, .h = H_IDLE, .n = 40),
    ROW(process_set_priority, "the idle process", C_GREEN, E_STATE, .h = H_IDLE, .n = 40),
    ROW(process_set_priority, "the timing process", C_HOST, E_STATE, .h = H_TIMING, .n = 40),
    ROW(process_set_priority, "the timing process", C_GREEN, E_STATE, .h = H_TIMING, .n = 40),
    ROW(ensure, "NULL function", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(ensure_pop, "no cleanup registered", C_GREEN, E_STATE),
    ROW(ensure_pop, "no cleanup registered, run", C_GREEN, E_STATE, .n = 1),

    /* ---- reports ---- */
    ROW(vm_blocked_report, "NULL buf with a size", C_HOST, E_INVAL, .null_ptr = true, .z = 16),
    ROW(vm_blocked_report, "NULL buf, size 0: the length", C_HOST, R_COUNT, .null_ptr = true, .z = 0),
    ROW(vm_blocked_report, "a 1-byte buffer: the length", C_HOST, R_COUNT, .z = 1),
    ROW(vm_check_invariants, "NULL buf with a size", C_HOST, STVM_OK, .null_ptr = true, .z = 16),

    /* ---- semaphores in states that refuse the call ---- */
    ROW(semaphore_free, "processes wait on it", C_HOST, STVM_EINUSE, .h = H_PARK),
    ROW(semaphore_free, "processes wait on it", C_GREEN, STVM_EINUSE, .h = H_PARK),
    ROW(semaphore_free, "registered as external", C_HOST, STVM_EINUSE, .h = H_EXT),
    ROW(semaphore_free, "the timer's semaphore (primitive 242)", C_HOST, STVM_EINUSE,
        .vm = V_OTHER, .h = H_ARMED),
    ROW(semaphore_try_wait, "no excess signal: EAGAIN (a try, no time limit)", C_GREEN,
        STVM_EAGAIN),
    ROW(semaphore_wait, "an excess signal, from the host thread: kept", C_HOST, STVM_ENOTPROC,
        .h = H_SEM_EXCESS),
    ROW(semaphore_try_wait, "an excess signal, from the host thread: kept", C_HOST, STVM_ENOTPROC,
        .h = H_SEM_EXCESS),
    ROW(semaphore_try_wait, "an excess signal, from another VM's thread: kept", C_THREAD,
        STVM_ENOTPROC, .h = H_SEM_EXCESS),

    /* ---- mutexes in states that refuse the call ---- */
    ROW(mutex_free, "owned, with a waiter", C_HOST, STVM_EINUSE, .h = H_BUSY),
    ROW(mutex_free, "owned, no waiter", C_HOST, STVM_EINUSE, .h = H_BUSY2),
    ROW(mutex_free, "owned by another process", C_GREEN, STVM_EINUSE, .h = H_BUSY2),
    ROW(mutex_exit, "a free mutex", C_GREEN, STVM_EPERM),
    ROW(mutex_exit, "owned by another process", C_GREEN, STVM_EPERM, .h = H_BUSY),
    ROW(mutex_exit, "owned by a process, from the host thread", C_HOST, STVM_EPERM, .h = H_BUSY),
    ROW(mutex_try_enter, "owned by another process: EAGAIN", C_GREEN, STVM_EAGAIN, .h = H_BUSY),
    ROW(mutex_enter_timeout_ms, "owned by another, 0 ms: ETIMEDOUT", C_GREEN, STVM_ETIMEDOUT,
        .h = H_BUSY, .n = 0),
    ROW(mutex_critical, "NULL function", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(semaphore_critical, "NULL function", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(semaphore_critical, "NULL function, with an excess signal: kept", C_GREEN, E_INVAL,
        .h = H_SEM_EXCESS, .null_ptr = true),
    ROW(mutex_critical, "NULL function, owned by another", C_GREEN, E_INVAL, .h = H_BUSY,
        .null_ptr = true),

    /* ---- external semaphores: slots and indexes ---- */
    ROW(external_register, "already registered", C_HOST, E_STATE, .h = H_EXT),
    ROW(external_register, "the table is full", C_HOST, STVM_EFULL),
    ROW(external_unregister, "index 0", C_HOST, E_INVAL, .n = 0),
    ROW(external_unregister, "index -1", C_HOST, E_INVAL, .n = -1),
    ROW(external_unregister, "index size + 1", C_HOST, E_INVAL, .n = 3),
    ROW(external_unregister, "index INT_MAX", C_HOST, E_INVAL, .n = INT_MAX),
    ROW(external_unregister, "index INT_MIN", C_HOST, E_INVAL, .n = INT_MIN),
    ROW(external_unregister, "an unused slot", C_HOST, E_INVAL, .vm = V_OTHER, .n = 100),
    ROW(external_unregister, "an unused slot, the last one", C_HOST, E_INVAL, .vm = V_OTHER,
        .n = 256),
    ROW(external_signal, "index 0", C_HOST, E_INVAL, .n = 0),
    ROW(external_signal, "index -1", C_HOST, E_INVAL, .n = -1),
    ROW(external_signal, "index size + 1", C_HOST, E_INVAL, .n = 3),
    ROW(external_signal, "index INT_MAX", C_HOST, E_INVAL, .n = INT_MAX),
    ROW(external_signal, "index INT_MIN", C_HOST, E_INVAL, .n = INT_MIN),
    ROW(external_signal, "index 0 from another thread", C_BARE, E_INVAL, .n = 0),
    ROW(external_signal, "index size + 1 from another thread", C_BARE, E_INVAL, .n = 3),
    ROW(external_signal, "index 0, from another VM's process", C_THREAD, E_INVAL, .n = 0),

    /* ---- durations ---- */
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
    ROW(work_us, "STVM_MAX_WORK_US + 1 us", C_GREEN, STVM_ERANGE, .z = STVM_MAX_WORK_US + 1),
    ROW(work_us, "SIZE_MAX us", C_GREEN, STVM_ERANGE, .z = SIZE_MAX),
    ROW(sim_at, "NULL fn", C_HOST, E_INVAL, .null_fail = true),
    ROW(sim_at, "1 us before now", C_HOST, E_RANGE, .z = SIZE_MAX),
    ROW(sim_at, "1 us before now, from a process", C_GREEN, E_RANGE, .z = SIZE_MAX),
    ROW(sim_at, "past the clock's end (2^62 us)", C_HOST, E_RANGE, .vm = V_END, .z = 1000),
    ROW(sim_set_cost, "op -1", C_HOST, E_INVAL, .n = -1, .z = 1),
    ROW(sim_set_cost, "op STVM_SIM_COST_OPS", C_GREEN, E_INVAL, .n = STVM_SIM_COST_OPS, .z = 1),
    ROW(sim_set_cost, "STVM_SIM_COST_MAX_US + 1 us", C_HOST, E_RANGE, .z = STVM_SIM_COST_MAX_US + 1),
    ROW(sim_set_cost, "UINT32_MAX us, from a process", C_GREEN, E_RANGE, .n = STVM_SIM_COST_DELAY,
        .z = UINT32_MAX),
    ROW(sim_cost, "op -1", C_HOST, E_INVAL, .n = -1),
    ROW(sim_cost, "op STVM_SIM_COST_OPS", C_HOST, E_INVAL, .n = STVM_SIM_COST_OPS),
    BAD_DURATIONS_MS(delay_wait_ms, .h = H_DEFAULT),
    BAD_DURATIONS_US(delay_wait_us, .h = H_DEFAULT),
    BAD_DURATIONS_MS(call_within_ms, .h = H_DEFAULT),
    BAD_DURATIONS_US(call_within_us, .h = H_DEFAULT),
    ROW(call_within_ms, "NULL function", C_GREEN, E_INVAL, .null_ptr = true, .n = 1),
    ROW(call_within_us, "NULL function", C_GREEN, E_INVAL, .null_ptr = true, .n = 1),
    ROW(call_within_ms, "0 ms: the timeout at once, fn not called", C_GREEN, STVM_ETIMEDOUT,
        .n = 0),
    BAD_DURATIONS_MS(semaphore_wait_timeout_ms, .h = H_DEFAULT),
    BAD_DURATIONS_US(semaphore_wait_timeout_us, .h = H_DEFAULT),
    BAD_DURATIONS_MS(mutex_enter_timeout_ms, .h = H_DEFAULT),
    BAD_DURATIONS_MS(delay_timeout_semaphore_ms, .h = H_DEFAULT),
    ROW(delay_new_ms, "-1 ms", C_HOST, E_INVAL, .n = -1),
    ROW(delay_new_ms, "INT64_MIN ms", C_HOST, E_INVAL, .n = INT64_MIN),
    ROW(delay_new_us, "-1 us", C_HOST, E_INVAL, .n = -1),
    ROW(delay_schedule, "1 ms, ending past the clock's end", C_GREEN, E_RANGE, .vm = V_END),
    ROW(delay_wait, "1 ms, ending past the clock's end", C_GREEN, E_RANGE, .vm = V_END),
    ROW(delay_unschedule, "a Delay nobody scheduled: nothing to do", C_GREEN, STVM_OK),
    ROW(delay_is_expired, "a Delay nobody scheduled", C_HOST, 0),
    ROW(delay_being_waited_on, "a Delay nobody scheduled", C_HOST, 0),
    ROW(delay_semaphore, "a Delay: its semaphore", C_HOST, R_NONNULL),
    ROW(semaphore_free, "a Delay's semaphore", C_HOST, STVM_EINUSE, .h = H_DELAY_SEM),

    /* ---- shared queues (the wrong handles and contexts are generated) ---- */
    ROW(queue_new, "capacity 2^64 - 1", C_HOST, E_INVAL, .n = -1),
    ROW(queue_put, "a full bounded queue, from the host (it cannot wait: a try)", C_HOST,
        STVM_EAGAIN, .h = H_QUEUE_FULL),
    ROW(queue_put_timeout_ms, "a full bounded queue, 0 ms", C_GREEN, STVM_ETIMEDOUT,
        .h = H_QUEUE_FULL, .n = 0),
    ROW(queue_try_take, "an empty queue", C_GREEN, STVM_EAGAIN),
    ROW(queue_take_timeout_ms, "an empty queue, 0 ms", C_GREEN, STVM_ETIMEDOUT, .n = 0),
    ROW(queue_peek, "an empty queue", C_HOST, STVM_EAGAIN),
    ROW(queue_put, "a closed queue, from the host", C_HOST, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_put, "a closed queue", C_GREEN, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_put_timeout_ms, "a closed queue", C_GREEN, STVM_ECLOSED, .h = H_QUEUE_CLOSED,
        .n = 1),
    ROW(queue_take, "a closed empty queue: the end", C_GREEN, STVM_EEOF, .h = H_QUEUE_CLOSED),
    ROW(queue_take_timeout_ms, "a closed empty queue", C_GREEN, STVM_EEOF, .h = H_QUEUE_CLOSED,
        .n = 1),
    ROW(queue_take_timeout_ms, "a closed empty queue, 0 ms", C_GREEN, STVM_EEOF,
        .h = H_QUEUE_CLOSED, .n = 0),
    ROW(queue_try_take, "a closed empty queue", C_GREEN, STVM_EEOF, .h = H_QUEUE_CLOSED),
    ROW(queue_peek, "a closed empty queue", C_HOST, STVM_EEOF, .h = H_QUEUE_CLOSED),
    ROW(queue_close, "a closed queue: closing twice", C_HOST, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_close, "a closed queue: closing twice", C_GREEN, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_close, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_open_external, "a closed queue", C_HOST, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_put_external, "a closed queue", C_HOST, STVM_ECLOSED, .vm = V_OTHER,
        .h = H_QUEUE_OPEN_CLOSED, .n = 0),
    ROW(queue_put_external, "a closed queue, waiting for ever", C_HOST, STVM_ECLOSED,
        .vm = V_OTHER, .h = H_QUEUE_OPEN_CLOSED, .n = -1),
    ROW(queue_close_external, "a queue not open for other threads", C_HOST, E_INVAL),
    ROW(queue_close_external, "a closed queue: closing twice", C_HOST, STVM_ECLOSED,
        .vm = V_OTHER, .h = H_QUEUE_OPEN_CLOSED),
    ROW(queue_put, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_peek, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC, .h = H_QUEUE_FULL),
    ROW(queue_size, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_flush, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC,
        .h = H_QUEUE_FULL),
    ROW(queue_free, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_open_external, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_open_external, "already open", C_HOST, E_STATE, .vm = V_OTHER, .h = H_QUEUE_OPEN),
    ROW(queue_open_external, "the external table is full", C_HOST, STVM_EFULL),
    ROW(queue_put_external, "a queue not open for other threads", C_HOST, E_INVAL),
    ROW(queue_put_external, "timeout -2", C_HOST, E_INVAL, .h = H_QUEUE_OPEN, .n = -2),
    ROW(queue_put_external, "timeout INT64_MIN", C_HOST, E_INVAL, .h = H_QUEUE_OPEN,
        .n = INT64_MIN),
    BAD_DURATIONS_MS(queue_put_timeout_ms, .h = H_DEFAULT),
    /* ---- names (stvm/core.h, "Names") ---- */
    NAME_ROWS(semaphore, .h = H_DEFAULT),
    NAME_ROWS(mutex, .h = H_DEFAULT),
    NAME_ROWS(queue, .h = H_DEFAULT),
    NAME_ROWS(monitor, .h = H_DEFAULT),
    NAME_ROWS(delay, .h = H_DEFAULT),
    NAME_ROWS(socket, .vm = V_NET),
    ROW(semaphore_set_name, "a process's handle", C_HOST, E_INVAL, .h = H_PROC),
    ROW(queue_set_name, "a semaphore's handle", C_HOST, E_INVAL, .h = H_SEM),
    ROW(semaphore_get_name, "a Delay's semaphore: its own name, none", C_HOST, R_COUNT,
        .h = H_DELAY_SEM),
    /* ---- the process listing ---- */
    ROW(vm_processes, "NULL out with room for 4", C_HOST, E_INVAL, .null_ptr = true, .z = 4),
    ROW(vm_processes, "NULL out, room 0: the count", C_GREEN, R_COUNT, .null_ptr = true),
    ROW(vm_processes, "room for 1 of many: the count", C_HOST, R_COUNT, .z = 1),
    ROW(vm_processes, "room for 64", C_GREEN, R_COUNT, .z = 64),
    ROW(vm_processes, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC, .z = 4),
    ROW(vm_processes, "while the VM runs, from its thread outside stvm_run", C_BARE,
        STVM_ENOTPROC, .z = 4),
    /* ---- process-local variables (the wrong handles and contexts are generated) ---- */
    ROW(local_new, "an unknown flag", C_HOST, E_INVAL, .n = 4),
    ROW(local_new, "every bit set in flags", C_HOST, E_INVAL, .n = -1),
    ROW(local_new, "inherit_fn without STVM_LOCAL_INHERITABLE", C_HOST, E_INVAL, .z = 2),
    ROW(local_new, "inheritable, destroy_fn without inherit_fn", C_HOST, E_INVAL,
        .n = STVM_LOCAL_INHERITABLE, .z = 1),
    ROW(process_get_local, "a NULL process", C_HOST, E_INVAL, .m = H_NULL),
    ROW(process_get_local, "another VM's process", C_HOST, E_INVAL, .m = H_FOREIGN),
    ROW(process_get_local, "a semaphore as the process", C_HOST, E_INVAL, .m = H_SEM),
    ROW(process_get_local, "forged memory as the process", C_HOST, E_INVAL, .m = H_G_FORGED),
    ROW(local_set, "a dynamic variable", C_GREEN, E_INVAL, .h = H_LOCAL_DYN),
    ROW(local_clear, "a dynamic variable", C_GREEN, E_INVAL, .h = H_LOCAL_DYN),
    ROW(local_during, "fn NULL", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(local_set, "a dynamic variable, from the host", C_HOST, E_INVAL, .h = H_LOCAL_DYN),
    BAD_DURATIONS_MS(queue_take_timeout_ms, .h = H_DEFAULT),

    /* ---- monitors (the wrong handles and contexts are generated) ---- */
    ROW(monitor_exit, "a monitor the caller does not own (free)", C_GREEN, STVM_EPERM),
    ROW(monitor_exit, "a monitor another process owns", C_GREEN, STVM_EPERM,
        .h = H_MONITOR_OWNED),
    ROW(monitor_try_enter, "a monitor another process owns", C_GREEN, STVM_EAGAIN,
        .h = H_MONITOR_OWNED),
    ROW(monitor_enter_timeout_ms, "a monitor another process owns, 0 ms", C_GREEN,
        STVM_ETIMEDOUT, .h = H_MONITOR_OWNED, .n = 0),
    ROW(monitor_free, "owned by a process", C_HOST, STVM_EINUSE, .h = H_MONITOR_OWNED),
    ROW(monitor_free, "a process waits on its condition queue", C_HOST, STVM_EINUSE,
        .h = H_MONITOR_WAITED),
    ROW(monitor_critical, "fn NULL", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(monitor_wait, "the caller does not own it", C_GREEN, STVM_EPERM),
    ROW(monitor_wait, "another process owns it", C_GREEN, STVM_EPERM, .h = H_MONITOR_OWNED),
    ROW(monitor_wait_timeout_ms, "the caller does not own it", C_GREEN, STVM_EPERM, .n = 1),
    ROW(monitor_wait_timeout_ms, "the caller does not own it, 0 ms", C_GREEN, STVM_EPERM,
        .n = 0),
    ROW(monitor_wait_while, "the caller does not own it", C_GREEN, STVM_EPERM),
    ROW(monitor_wait_until, "the caller does not own it", C_GREEN, STVM_EPERM),
    ROW(monitor_wait_while, "pred NULL", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(monitor_wait_until, "pred NULL", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(monitor_wait_while_on, "pred NULL", C_GREEN, E_INVAL, .null_ptr = true, .m = 1),
    ROW(monitor_wait_until_on, "pred NULL", C_GREEN, E_INVAL, .null_ptr = true, .m = 1),
    ROW(monitor_wait_while_on, "the caller does not own it", C_GREEN, STVM_EPERM, .m = 1),
    ROW(monitor_wait_until_on, "the caller does not own it", C_GREEN, STVM_EPERM, .m = 1),
    ROW(monitor_signal, "the caller does not own it", C_GREEN, STVM_EPERM),
    ROW(monitor_signal, "another process owns it (a waiter there)", C_GREEN, STVM_EPERM,
        .h = H_MONITOR_OWNED),
    ROW(monitor_signal_all, "the caller does not own it (a waiter there)", C_GREEN, STVM_EPERM,
        .h = H_MONITOR_WAITED),
    ROW(monitor_signal_really_all, "the caller does not own it (a waiter there)", C_GREEN,
        STVM_EPERM, .h = H_MONITOR_WAITED),
    ROW(monitor_signal_on, "the caller does not own it (a waiter there)", C_GREEN, STVM_EPERM,
        .h = H_MONITOR_WAITED, .m = 0),
    ROW(monitor_signal_all_on, "the caller does not own it", C_GREEN, STVM_EPERM, .m = 2),
    MONITOR_BAD_QUEUES(monitor_wait_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_wait_on_timeout_ms, .n = 1),
    MONITOR_BAD_QUEUES(monitor_wait_while_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_wait_until_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_signal_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_signal_all_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_signal_on, .h = H_MONITOR_WAITED),
    BAD_DURATIONS_MS(monitor_enter_timeout_ms, .h = H_DEFAULT),
    BAD_DURATIONS_MS(monitor_wait_timeout_ms, .h = H_DEFAULT),
    BAD_DURATIONS_MS(monitor_wait_on_timeout_ms, .h = H_DEFAULT, .m = 3),

    ROW(semaphore_wait_timeout_ms, "-1 ms with an excess signal: kept", C_GREEN, E_INVAL,
        .h = H_SEM_EXCESS, .n = -1),
    ROW(semaphore_wait_timeout_us, "2^52 + 1 us with an excess signal: kept", C_GREEN, E_RANGE,
        .h = H_SEM_EXCESS, .n = US_MAX_DELAY + 1),
    ROW(mutex_enter_timeout_ms, "-1 ms on a free mutex: not taken", C_GREEN, E_INVAL, .n = -1),
    ROW(mutex_enter_timeout_ms, "INT64_MAX ms on a free mutex: not taken", C_GREEN, E_RANGE,
        .n = INT64_MAX),

    /* ---- integers: ranges ---- */
    ROW(int_to_i64, "2^64 - 1", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX)}),
    ROW(int_to_i64, "2^63", C_HOST, E_RANGE, .o = {OB(OB_BOX_2_63)}),
    ROW(int_to_u64, "-1", C_HOST, E_RANGE, .o = {SI(-1)}),
    ROW(int_to_u64, "-2^63", C_HOST, E_RANGE, .o = {OB(OB_BOX_NEG)}),
    ROW(int_to_u64, "SmallInteger min", C_HOST, E_RANGE, .o = {SI(MIN61)}),
    ROW(int_add, "(2^64 - 1) + 1", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX), SI(1)}),
    ROW(int_add, "1 + (2^64 - 1)", C_HOST, E_RANGE, .o = {SI(1), OB(OB_BOX_MAX)}),
    ROW(int_add, "(2^64 - 1) + (2^64 - 1)", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX), OB(OB_BOX_MAX)}),
    ROW(int_sub, "-1 - (2^64 - 1)", C_HOST, E_RANGE, .o = {SI(-1), OB(OB_BOX_MAX)}),
    ROW(int_sub, "(2^64 - 1) - -1", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX), SI(-1)}),
    ROW(int_mul, "2^32 * 2^32", C_HOST, E_RANGE, .o = {SI((int64_t)1 << 32), SI((int64_t)1 << 32)}),
    ROW(int_mul, "(2^64 - 1) * 2", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX), SI(2)}),
    ROW(int_mul, "-2^63 * -2^63", C_HOST, E_RANGE, .o = {OB(OB_BOX_NEG), OB(OB_BOX_NEG)}),
    ROW(int_mul, "2^32 * 2^32 on a 31-bit VM (both boxed)", C_HOST, E_RANGE, .vm = V_31,
        .o = {OB(OB_BOX31), OB(OB_BOX31)}),
    ROW(int_to_i64, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(WIDE)}),
    ROW(int_to_u64, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(WIDE)}),
    ROW(int_add, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(WIDE),
        SI(1)}),
    ROW(int_sub, "a tagged -2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(1),
        SI(-WIDE)}),
    ROW(int_mul, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(WIDE),
        SI(0)}),
    ROW(int_compare, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(0),
        SI(WIDE)}),
    ROW(oop_is_integer, "a tagged 2^40 on a 31-bit VM", C_HOST, R_FALSE, .vm = V_31, .o = {SI(WIDE)}),
    ROW(oop_is_integer, "a tagged 2^30 on a 31-bit VM", C_HOST, R_FALSE, .vm = V_31,
        .o = {SI(MAX31 + 1)}),
    ROW(oop_is_integer, "a tagged -2^30 - 1 on a 31-bit VM", C_HOST, R_FALSE, .vm = V_31,
        .o = {SI(MIN31 - 1)}),
    ROW(oop_is_integer, "a tagged 2^60 (beyond 61 bits)", C_HOST, R_FALSE, .o = {SI(MAX61 + 1)}),
    ROW(int_to_i64, "a tagged 2^60 (beyond 61 bits)", C_HOST, E_INVAL, .o = {SI(MAX61 + 1)}),
    ROW(oop_release, "a SmallInteger: ignored", C_HOST, STVM_OK, .o = {SI(5)}),
    ROW(oop_release, "nil: ignored", C_HOST, STVM_OK, .o = {RAW(STVM_NIL)}),
    ROW(oop_class_name, "an unmapped word", C_HOST, R_NULL, .o = {RAW(GARBAGE)}),
    ROW(oop_class_name, "zeroed memory", C_HOST, R_NULL, .o = {OB(OB_G_ZERO)}),
    ROW(oop_class_name, "a forged Semaphore header", C_HOST, R_NULL, .o = {OB(OB_G_FORGED_SEM)}),
    ROW(oop_class_name, "another VM's semaphore", C_HOST, R_NULL, .o = {OB(OB_FOREIGN_SEM)}),
    ROW(oop_class_name, "another VM's box", C_HOST, R_NULL, .o = {OB(OB_FOREIGN_BOX)}),
    ROW(oop_class_name, "a released box", C_HOST, R_NULL, .o = {OB(OB_RELEASED)}),
    ROW(oop_class_name, "an odd-aligned word", C_HOST, R_NULL, .o = {RAW(GARBAGE + 4)}),
    ROW(oop_class_name, "a tagged 2^40 on a 31-bit VM", C_HOST, R_NULL, .vm = V_31,
        .o = {SI(WIDE)}),
    ROW(oop_class_name, "a tagged 2^60 (beyond 61 bits)", C_HOST, R_NULL, .o = {SI(MAX61 + 1)}),

    /* ---- primitives: the call itself ---- */
    ROW(primitive_call, "unknown number 0", C_HOST, E_INVAL, .m = 0),
    ROW(primitive_call, "unknown number -1", C_HOST, E_INVAL, .m = -1),
    ROW(primitive_call, "unknown number 10", C_HOST, E_INVAL, .m = 10, .n = 1, .o = {SI(1), SI(1)}),
    ROW(primitive_call, "unknown number 84", C_HOST, E_INVAL, .m = 84),
    ROW(primitive_call, "unknown number 243", C_HOST, E_INVAL, .m = 243, .n = 2),
    ROW(primitive_call, "unknown number INT_MAX", C_HOST, E_INVAL, .m = INT_MAX),
    ROW(primitive_call, "unknown number INT_MIN", C_HOST, E_INVAL, .m = INT_MIN),
    ROW(primitive_call, "nargs -1", C_HOST, E_INVAL, .m = 85, .n = -1, .o = {OB(OB_SEM)}),
    ROW(primitive_call, "nargs INT_MIN", C_HOST, E_INVAL, .m = 85, .n = INT_MIN, .o = {OB(OB_SEM)}),
    ROW(primitive_call, "NULL args with nargs 1", C_HOST, E_INVAL, .m = 1, .n = 1, .o = {SI(1)},
        .null_ptr = true),
    ROW(primitive_call, "NULL args with nargs 2", C_HOST, E_INVAL, .m = 242, .n = 2,
        .null_ptr = true),
    PRIM("85 with 1 argument", C_HOST, 85, 1, BAD_NARGS, .o = {OB(OB_SEM)}),
    PRIM("85 with INT_MAX arguments", C_HOST, 85, INT_MAX, BAD_NARGS, .o = {OB(OB_SEM)}),
    PRIM("1 with 0 arguments", C_HOST, 1, 0, BAD_NARGS, .o = {SI(1)}),
    PRIM("1 with 2 arguments", C_HOST, 1, 2, BAD_NARGS, .o = {SI(1), SI(1), SI(1)}),
    PRIM("135 with 1 argument", C_HOST, 135, 1, BAD_NARGS),
    PRIM("240 with 2 arguments", C_HOST, 240, 2, BAD_NARGS),
    PRIM("242 with 1 argument", C_HOST, 242, 1, BAD_NARGS, .o = {RAW(STVM_NIL), OB(OB_SEM)}),
    PRIM("136 with 0 arguments", C_HOST, 136, 0, BAD_NARGS),
    PRIM("230 with 2 arguments", C_HOST, 230, 2, BAD_NARGS, .o = {RAW(STVM_NIL), SI(1), SI(1)}),
    PRIM("85 with a mutex, NULL fail_code", C_HOST, 85, 0, BAD_RCV, .o = {OB(OB_MUTEX)},
        .null_fail = true),

    /* ---- primitives 1-9 and 21-29: SmallInteger and 64-bit edges ---- */
    PRIM("1: SmallInteger max + 1", C_HOST, 1, 1, GENERIC, .o = {SI(MAX61), SI(1)}),
    PRIM("2: SmallInteger min - 1", C_HOST, 2, 1, GENERIC, .o = {SI(MIN61), SI(1)}),
    PRIM("9: 2^30 * 2^30", C_HOST, 9, 1, GENERIC, .o = {SI((int64_t)1 << 30),
        SI((int64_t)1 << 30)}),
    PRIM("9: min * -1", C_HOST, 9, 1, GENERIC, .o = {SI(MIN61), SI(-1)}),
    PRIM("1 on a 31-bit VM: max + 1", C_HOST, 1, 1, GENERIC, .vm = V_31, .o = {SI(MAX31), SI(1)}),
    PRIM("2 on a 31-bit VM: min - 1", C_HOST, 2, 1, GENERIC, .vm = V_31, .o = {SI(MIN31), SI(1)}),
    PRIM("9 on a 31-bit VM: 2^15 * 2^15", C_HOST, 9, 1, GENERIC, .vm = V_31, .o = {SI(1 << 15),
        SI(1 << 15)}),
    PRIM("1: a box receiver", C_HOST, 1, 1, BAD_RCV, .o = {OB(OB_BOX_MAX), SI(1)}),
    PRIM("1: a box argument", C_HOST, 1, 1, BAD_ARG, .o = {SI(1), OB(OB_BOX_MAX)}),
    PRIM("3: nil receiver", C_HOST, 3, 1, BAD_RCV, .o = {RAW(STVM_NIL), SI(1)}),
    PRIM("4: nil argument", C_HOST, 4, 1, BAD_ARG, .o = {SI(1), RAW(STVM_NIL)}),
    PRIM("7: a semaphore argument", C_HOST, 7, 1, BAD_ARG, .o = {SI(1), OB(OB_SEM)}),
    PRIM("8: an unmapped receiver", C_HOST, 8, 1, BAD_RCV, .o = {RAW(GARBAGE), SI(1)}),
    PRIM("1 on a 31-bit VM: a tagged 2^40 receiver (result fits)", C_HOST, 1, 1,
        BAD_RCV, .vm = V_31, .o = {SI(WIDE), SI(-WIDE)}),
    PRIM("3 on a 31-bit VM: a tagged 2^40 receiver", C_HOST, 3, 1, BAD_RCV,
        .vm = V_31, .o = {SI(WIDE), SI(0)}),
    PRIM("7 on a 31-bit VM: a tagged 2^40 argument", C_HOST, 7, 1, BAD_ARG,
        .vm = V_31, .o = {SI(0), SI(WIDE)}),
    PRIM("3 on a 61-bit VM: a tagged 2^60 receiver (beyond 61 bits)", C_HOST, 3,
        1, BAD_RCV, .o = {SI(MAX61 + 1), SI(0)}),
    PRIM("21: (2^64 - 1) + 1", C_HOST, 21, 1, GENERIC, .o = {OB(OB_BOX_MAX), SI(1)}),
    PRIM("22: -1 - (2^64 - 1)", C_HOST, 22, 1, GENERIC, .o = {SI(-1), OB(OB_BOX_MAX)}),
    PRIM("29: 2^32 * 2^32", C_HOST, 29, 1, GENERIC, .o = {SI((int64_t)1 << 32),
        SI((int64_t)1 << 32)}),
    PRIM("21: a semaphore receiver", C_HOST, 21, 1, BAD_RCV, .o = {OB(OB_SEM), SI(1)}),
    PRIM("22: another VM's box argument", C_HOST, 22, 1, BAD_ARG, .o = {SI(1), OB(OB_FOREIGN_BOX)}),
    PRIM("23: a released box receiver", C_HOST, 23, 1, BAD_RCV, .o = {OB(OB_RELEASED), SI(1)}),
    PRIM("24: an unmapped argument", C_HOST, 24, 1, BAD_ARG, .o = {SI(1), RAW(GARBAGE)}),
    PRIM("25 on a 31-bit VM: a tagged 2^40 receiver", C_HOST, 25, 1, BAD_RCV, .vm = V_31,
        .o = {SI(WIDE), SI(1)}),
    PRIM("29 on a 31-bit VM: a tagged 2^40 argument", C_HOST, 29, 1, BAD_ARG, .vm = V_31,
        .o = {SI(1), SI(WIDE)}),
    PRIM("27: true receiver", C_HOST, 27, 1, BAD_RCV, .o = {RAW(STVM_TRUE), SI(1)}),

    /* ---- process primitives in refusing states (bad receivers are generated) ---- */
    PRIM("86 from the host thread", C_HOST, 86, 0, INAPPR, .o = {OB(OB_SEM_EXCESS)}),
    PRIM("86 from another VM's thread", C_THREAD, 86, 0, INAPPR, .o = {OB(OB_SEM_EXCESS)}),
    PRIM("87: a ready process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_READY)}),
    PRIM("87: a waiting process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_WAITING)}),
    PRIM("87: a waiting process nobody holds", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_UNHELD)}),
    PRIM("87: a finished process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_DONE)}),
    PRIM("87: the idle process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_IDLE)}),
    PRIM("87: the timing process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_TIMING)}),
    PRIM("87: the running process", C_GREEN, 87, 0, BAD_RCV, .o = {OB(OB_SELF)}),
    PRIM("88: a suspended process", C_HOST, 88, 0, BAD_RCV, .o = {OB(OB_SUSP)}),
    PRIM("88: a finished process", C_HOST, 88, 0, BAD_RCV, .o = {OB(OB_DONE)}),
    PRIM("88: the idle process", C_HOST, 88, 0, BAD_RCV, .o = {OB(OB_IDLE)}),
    PRIM("88: the idle process", C_GREEN, 88, 0, BAD_RCV, .o = {OB(OB_IDLE)}),
    PRIM("88: the timing process", C_HOST, 88, 0, BAD_RCV, .o = {OB(OB_TIMING)}),
    PRIM("88: the timing process", C_GREEN, 88, 0, BAD_RCV, .o = {OB(OB_TIMING)}),
    PRIM("167 from the host thread", C_HOST, 167, 0, INAPPR),
    PRIM("167 from another VM's thread", C_THREAD, 167, 0, INAPPR),
    PRIM("185 from the host thread", C_HOST, 185, 0, INAPPR, .o = {OB(OB_BUSY)}),
    PRIM("185: owned by another process", C_GREEN, 185, 0, INAPPR, .o = {OB(OB_BUSY)}),
    PRIM("185: a free mutex", C_GREEN, 185, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("186 from the host thread", C_HOST, 186, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("186 from another VM's thread", C_THREAD, 186, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("187 from the host thread", C_HOST, 187, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("86 while the VM runs elsewhere", C_ELSEWHERE, 86, 0, INAPPR, .o = {OB(OB_SEM_EXCESS)}),
    PRIM("167 while the VM runs elsewhere", C_ELSEWHERE, 167, 0, INAPPR),
    PRIM("185 while the VM runs elsewhere", C_ELSEWHERE, 185, 0, INAPPR, .o = {OB(OB_BUSY)}),
    PRIM("186 while the VM runs elsewhere", C_ELSEWHERE, 186, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("187 while the VM runs elsewhere", C_ELSEWHERE, 187, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("230 while the VM runs elsewhere", C_ELSEWHERE, 230, 1, INAPPR,
         .o = {RAW(STVM_NIL), SI(1)}),

    /* ---- clocks and the timer ---- */
    PRIM("136: a mutex as the semaphore", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER,
        .o = {RAW(STVM_NIL), OB(OB_FOREIGN_MUTEX), SI(5)}),
    PRIM("136: another VM's semaphore", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER,
        .o = {RAW(STVM_NIL), OB(OB_SEM), SI(5)}),
    PRIM("136: a negative tick", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), SI(-1)}),
    PRIM("136: a boxed tick", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), OB(OB_FOREIGN_BOX)}),
    PRIM("136: a nil tick", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), RAW(STVM_NIL)}),
    PRIM("136 on a 31-bit VM: a tagged 2^40 tick", C_HOST, 136, 2, BAD_ARG,
        .vm = V_31, .o = {RAW(STVM_NIL), RAW(STVM_NIL), SI(WIDE)}),
    /* 230 needs a process: from the host it fails before looking at its argument. */
    PRIM("230 from the host: 1 us", C_HOST, 230, 1, STVM_PRIM_ERR_INAPPROPRIATE, .vm = V_31,
        .o = {RAW(STVM_NIL), SI(1)}),
    PRIM("230: -1 us", C_GREEN, 230, 1, BAD_ARG, .vm = V_31, .o = {RAW(STVM_NIL), SI(-1)}),
    PRIM("230: nil", C_GREEN, 230, 1, BAD_ARG, .vm = V_31, .o = {RAW(STVM_NIL), RAW(STVM_NIL)}),
    PRIM("230: a box", C_GREEN, 230, 1, BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_BOX_MAX)}),
    PRIM("230 on a 31-bit VM: a tagged 2^40 us", C_GREEN, 230, 1, BAD_ARG,
        .vm = V_31, .o = {RAW(STVM_NIL), SI(WIDE)}),
    PRIM("242: a mutex as the semaphore", C_HOST, 242, 2, BAD_ARG, .vm = V_OTHER,
        .o = {RAW(STVM_NIL), OB(OB_FOREIGN_MUTEX), SI(5)}),
    PRIM("242: a forged semaphore", C_HOST, 242, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_G_FORGED_SEM), SI(5)}),
    PRIM("242: a negative deadline", C_HOST, 242, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), SI(-1)}),
    PRIM("242: a -2^63 deadline", C_HOST, 242, 2, BAD_ARG, .o = {RAW(STVM_NIL), RAW(STVM_NIL),
        OB(OB_BOX_NEG)}),
    PRIM("242: an unmapped deadline", C_HOST, 242, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), RAW(GARBAGE)}),
    PRIM("242: another VM's box as deadline", C_HOST, 242, 2, BAD_ARG, .o = {RAW(STVM_NIL),
        RAW(STVM_NIL), OB(OB_FOREIGN_BOX)}),
    PRIM("242 on a 31-bit VM: a tagged 2^40 deadline", C_HOST, 242, 2, BAD_ARG, .vm = V_31,
        .o = {RAW(STVM_NIL), RAW(STVM_NIL), SI(WIDE)}),
    PRIM("242: a deadline of 2^62 + 1 us", C_HOST, 242, 2, BAD_ARG,
        .vm = V_OTHER, .o = {RAW(STVM_NIL), OB(OB_OTHER_SEM), OB(OB_PAST_END)}),
    PRIM("242: a deadline of 2^64 - 1 us", C_HOST, 242, 2, BAD_ARG,
        .vm = V_OTHER, .o = {RAW(STVM_NIL), OB(OB_OTHER_SEM), OB(OB_FOREIGN_BOX)}),

    /* ---- another VM's process on another thread, while this VM runs (the calls that
     * need a process are generated in this context too) ---- */
    ROW(semaphore_try_wait, "an excess signal", C_ELSEWHERE, STVM_ENOTPROC, .h = H_SEM_EXCESS),
    ROW(semaphore_wait, "an excess signal", C_ELSEWHERE, STVM_ENOTPROC, .h = H_SEM_EXCESS),
    ROW(mutex_try_enter, "a mutex owned by another", C_ELSEWHERE, STVM_ENOTPROC, .h = H_BUSY),
    ROW(mutex_enter, "a mutex owned by another", C_ELSEWHERE, STVM_ENOTPROC, .h = H_BUSY),
    ROW(ensure_pop, "no cleanup, run", C_ELSEWHERE, STVM_ENOTPROC, .n = 1),
    ROW(vm_active_process, "the VM's running process (its idle one), changing nothing", C_ELSEWHERE,
        R_NONNULL),
    ROW(mutex_exit, "a free mutex", C_ELSEWHERE, STVM_EPERM),

    /* ---- descriptors: stvm_fd_wait (V_NET; the wrong contexts are generated) ---- */
#define FDW(what, want, ...) ROW(fd_wait, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
    FDW("fd -1", E_INVAL, .fd = FD_NEG, .n = STVM_IO_READ, .t = -1),
    FDW("fd INT_MIN", E_INVAL, .fd = FD_INT_MIN, .n = STVM_IO_READ, .t = -1),
    FDW("fd INT_MAX, 0 ms", E_INVAL, .fd = FD_INT_MAX, .n = STVM_IO_READ, .t = 0),
    FDW("a closed descriptor, 0 ms", E_INVAL, .fd = FD_CLOSED, .n = STVM_IO_READ, .t = 0),
    ROW(fd_wait, "a closed descriptor, forever", C_GREEN, E_INVAL,
        .vm = V_NET, .fd = FD_CLOSED, .n = STVM_IO_READ, .t = -1),
    ROW(fd_wait, "a closed descriptor, 5 ms", C_GREEN, E_INVAL, .vm = V_NET,
        .fd = FD_CLOSED, .n = STVM_IO_WRITE, .t = 5),
    ROW(fd_wait, "a regular file, 0 ms", C_GREEN, E_INVAL, .vm = V_NET,
        .fd = FD_FILE, .n = STVM_IO_READ, .t = 0),
    ROW(fd_wait, "a regular file, forever", C_GREEN, E_INVAL, .vm = V_NET,
        .fd = FD_FILE, .n = STVM_IO_READ, .t = -1),
    ROW(fd_wait, "/dev/null, 0 ms", C_GREEN, E_INVAL, .vm = V_NET,
        .fd = FD_DEVNULL, .n = STVM_IO_WRITE, .t = 0),
    ROW(fd_wait, "/dev/null, forever", C_GREEN, E_INVAL, .vm = V_NET,
        .fd = FD_DEVNULL, .n = STVM_IO_WRITE, .t = -1),
    FDW("events 0", E_INVAL, .n = 0, .t = -1),
    FDW("events 4", E_INVAL, .n = 4, .t = -1),
    FDW("events 7", E_INVAL, .n = 7, .t = -1),
    FDW("events -1", E_INVAL, .n = -1, .t = -1),
    FDW("events INT_MIN", E_INVAL, .n = INT_MIN, .t = -1),
    FDW("timeout -2", E_INVAL, .n = STVM_IO_READ, .t = -2),
    FDW("timeout INT64_MIN", E_INVAL, .n = STVM_IO_READ, .t = INT64_MIN),
    FDW("timeout 2^52/1000 + 1 ms", E_RANGE, .n = STVM_IO_READ, .t = MS_MAX_FROM_US + 1),
    FDW("timeout INT64_MAX", E_RANGE, .n = STVM_IO_READ, .t = INT64_MAX),
    FDW("0 ms, nothing to read: only looks", STVM_ETIMEDOUT, .n = STVM_IO_READ, .t = 0),
    FDW("a socket a process waits to read from (through a stream)", STVM_EWAITING,
        .fd = FD_READ_WAITED, .n = STVM_IO_READ, .t = -1),
    FDW("a socket a process waits to read from, 0 ms", STVM_EWAITING, .fd = FD_READ_WAITED,
        .n = STVM_IO_READ, .t = 0),
    FDW("a socket a process waits to read from, read and write", STVM_EWAITING,
        .fd = FD_READ_WAITED, .n = STVM_IO_READ | STVM_IO_WRITE, .t = 5),
    FDW("a listener a process accepts on", STVM_EWAITING, .fd = FD_BUSY_LISTENER, .n = STVM_IO_READ,
        .t = -1),
    ROW(fd_wait, "a listener nobody accepts on, 0 ms: nothing pending",
        C_GREEN, STVM_ETIMEDOUT, .vm = V_NET, .fd = FD_LISTENER, .n = STVM_IO_READ, .t = 0),
    ROW(fd_wait, "fd -1, from the host thread (the arguments first)", C_HOST, E_INVAL, .vm = V_NET,
        .fd = FD_NEG, .n = STVM_IO_READ, .t = -1),
    ROW(fd_wait, "a VM whose external table is full",
        C_GREEN, STVM_EFULL, .n = STVM_IO_READ, .t = -1),

    /* ---- sockets: listening (any thread; the host's rows) ---- */
#define LISTEN(what, want, ...) ROW(tcp_listen, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
    LISTEN("NULL host", E_INVAL, .s = NULL_STR, .m = 4),
    LISTEN("port -1", E_INVAL, .n = -1, .m = 4),
    LISTEN("port 65536", E_INVAL, .n = 65536, .m = 4),
    LISTEN("port INT_MAX", E_INVAL, .n = INT_MAX, .m = 4),
    LISTEN("port INT_MIN", E_INVAL, .n = INT_MIN, .m = 4),
    LISTEN("backlog 0", E_INVAL, .m = 0),
    LISTEN("backlog -1", E_INVAL, .m = -1),
    LISTEN("backlog 65536", E_INVAL, .m = 65536),
    LISTEN("backlog INT_MIN", E_INVAL, .m = INT_MIN),
    ROW(tcp_listen, "host \"\"", C_HOST, E_INVAL, .vm = V_NET, .s = "",
        .m = 4),
    ROW(tcp_listen, "host \"example.com\" (no name service)", C_HOST, E_INVAL,
        .vm = V_NET, .s = "example.com", .m = 4),
    ROW(tcp_listen, "host \"999.1.1.1\"", C_HOST, E_INVAL, .vm = V_NET,
        .s = "999.1.1.1", .m = 4),
    ROW(tcp_listen, "host \"127.0.0.1 \"", C_HOST, E_INVAL, .vm = V_NET,
        .s = "127.0.0.1 ", .m = 4),
    LISTEN("host of 80 characters", E_INVAL,
           .s = "a123456789b123456789c123456789d123456789e123456789f123456789g123456789h123456789",
           .m = 4),
    ROW(tcp_listen, "the port of a listener: taken", C_HOST, STVM_EADDRINUSE,
        .vm = V_NET, .n = PORT_LISTENING, .m = 4),
    ROW(tcp_listen, "host \"192.0.2.1\": not this machine's", C_HOST, STVM_EADDRNOTAVAIL,
        .vm = V_NET, .s = "192.0.2.1", .m = 4),
    ROW(tcp_listen, "a VM whose external table is full", C_HOST, STVM_EFULL,
        .m = 4),
    ROW(tcp_listen, "port 65536, from a green process", C_GREEN, E_INVAL, .vm = V_NET, .n = 65536,
        .m = 4),
    ROW(tcp_listen, "host \"example.com\", from a green process", C_GREEN,
        E_INVAL, .vm = V_NET, .s = "example.com", .m = 4),

    /* ---- sockets: accepting and connecting (green; the wrong contexts are generated) ---- */
#define ACCEPT(what, want, ...) ROW(socket_accept, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
    ACCEPT("a connected socket, not a listener", E_INVAL, .h = H_SOCKET, .t = 1),
    ACCEPT("a socket with a stream, not a listener", E_INVAL, .h = H_STREAMED, .t = 1),
    ACCEPT("another VM's listener", E_INVAL, .h = H_FOREIGN_LISTENER, .t = 1),
    ACCEPT("timeout -2", E_INVAL, .h = H_LISTENER, .t = -2),
    ACCEPT("timeout INT64_MIN", E_INVAL, .h = H_LISTENER, .t = INT64_MIN),
    ACCEPT("timeout 2^52/1000 + 1 ms", E_RANGE, .h = H_LISTENER, .t = MS_MAX_FROM_US + 1),
    ACCEPT("timeout INT64_MAX", E_RANGE, .h = H_LISTENER, .t = INT64_MAX),
    ACCEPT("a listener a process accepts on", STVM_EWAITING, .h = H_BUSY_LISTENER, .t = -1),
    ACCEPT("a listener a process accepts on, 0 ms", STVM_EWAITING, .h = H_BUSY_LISTENER, .t = 0),
    ACCEPT("0 ms, nothing pending: only tries", STVM_ETIMEDOUT, .h = H_LISTENER, .t = 0),
    ROW(socket_accept, "NULL out, from the host thread (the arguments first)", C_HOST, E_INVAL,
        .vm = V_NET, .h = H_LISTENER, .t = 1, .null_out = true),
#define CONNECT(what, want, ...) ROW(tcp_connect, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
    CONNECT("NULL host", E_INVAL, .s = NULL_STR, .n = PORT_LISTENING, .t = 1),
    CONNECT("port 0", E_INVAL, .n = 0, .t = 1),
    CONNECT("port -1", E_INVAL, .n = -1, .t = 1),
    CONNECT("port 65536", E_INVAL, .n = 65536, .t = 1),
    CONNECT("port INT_MIN", E_INVAL, .n = INT_MIN, .t = 1),
    CONNECT("timeout -2", E_INVAL, .n = PORT_LISTENING, .t = -2),
    CONNECT("timeout INT64_MIN", E_INVAL, .n = PORT_LISTENING, .t = INT64_MIN),
    CONNECT("timeout 2^52/1000 + 1 ms", E_RANGE, .n = PORT_LISTENING, .t = MS_MAX_FROM_US + 1),
    CONNECT("timeout INT64_MAX", E_RANGE, .n = PORT_LISTENING, .t = INT64_MAX),
    ROW(tcp_connect, "host \"\"", C_GREEN, E_INVAL, .vm = V_NET, .s = "",
        .n = PORT_LISTENING, .t = 1),
    /* Host names are looked up (test_socket.c): these are not names. */
    ROW(tcp_connect, "host \"exa mple.com\" (a space)", C_GREEN, E_INVAL, .vm = V_NET,
        .s = "exa mple.com", .n = PORT_LISTENING, .t = 1),
    ROW(tcp_connect, "host \"-x.example\" (a label starting with '-')", C_GREEN, E_INVAL,
        .vm = V_NET, .s = "-x.example", .n = PORT_LISTENING, .t = 1),
    ROW(tcp_connect, "host \"a..b\" (an empty label)", C_GREEN, E_INVAL, .vm = V_NET,
        .s = "a..b", .n = PORT_LISTENING, .t = 1),
    ROW(tcp_connect, "host \".\"", C_GREEN, E_INVAL, .vm = V_NET, .s = ".",
        .n = PORT_LISTENING, .t = 1),
    ROW(tcp_connect, "a host of 64-character labels, 259 in all", C_GREEN, E_INVAL, .vm = V_NET,
        .s = "a123456789b123456789c123456789d123456789e123456789f123456789g123."
             "a123456789b123456789c123456789d123456789e123456789f123456789g123."
             "a123456789b123456789c123456789d123456789e123456789f123456789g123."
             "a123456789b123456789c123456789d123456789e123456789f123456789g123.com",
        .n = PORT_LISTENING, .t = 1),
    ROW(tcp_connect, "host \"999.1.1.1\"", C_GREEN, E_INVAL, .vm = V_NET,
        .s = "999.1.1.1", .n = PORT_LISTENING, .t = 1),
    ROW(tcp_connect, "port 0, from the host thread (the arguments first)", C_HOST, E_INVAL,
        .vm = V_NET, .n = 0, .t = 1),
    ROW(tcp_connect, "host \"example.com\", from the host thread (the caller first)", C_HOST,
        STVM_ENOTPROC, .vm = V_NET, .s = "example.com", .n = PORT_LISTENING, .t = 1),
    ROW(tcp_connect, "a VM whose external table is full", C_GREEN,
        STVM_EFULL, .n = PORT_LISTENING, .t = 1),

    /* ---- Unix domain sockets ---- */
#define ULISTEN(what, want, ...) ROW(unix_listen, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
#define UCONNECT(what, want, ...) ROW(unix_connect, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
#define PATH_108 "/tmp/a123456789b123456789c123456789d123456789e123456789f123456789" \
                 "g123456789h123456789i123456789j123456789k12"
    ULISTEN("NULL path", E_INVAL, .s = NULL_STR, .m = 4),
    ULISTEN("path \"\"", E_INVAL, .s = "", .m = 4),
    ULISTEN("a path of 108 bytes: too long for sun_path", E_INVAL, .s = PATH_108, .m = 4),
    ULISTEN("backlog 0", E_INVAL, .m = 0),
    ULISTEN("backlog 65536", E_INVAL, .m = 65536),
    ULISTEN("backlog INT_MIN", E_INVAL, .m = INT_MIN),
    ULISTEN("a path that exists (/tmp)", STVM_EADDRINUSE, .s = "/tmp", .m = 4),
    ULISTEN("a path in a directory that does not exist", STVM_ENOENT, .m = 4),
    ULISTEN("a path through a file (/etc/passwd/x): ENOTDIR", STVM_ESYS, .s = "/etc/passwd/x",
            .m = 4),
    ROW(unix_listen, "a VM whose external table is full", C_HOST, STVM_EFULL, .m = 4),
    ROW(unix_listen, "path \"\", from a green process", C_GREEN, E_INVAL, .vm = V_NET, .s = "",
        .m = 4),
    UCONNECT("NULL path", E_INVAL, .s = NULL_STR, .t = 1),
    UCONNECT("path \"\"", E_INVAL, .s = "", .t = 1),
    UCONNECT("a path of 108 bytes", E_INVAL, .s = PATH_108, .t = 1),
    UCONNECT("timeout -2", E_INVAL, .t = -2),
    UCONNECT("timeout INT64_MAX", E_RANGE, .t = INT64_MAX),
    UCONNECT("nothing at the path", STVM_ENOENT, .t = 1),
    UCONNECT("a directory, not a socket (/tmp)", STVM_ECONNREFUSED, .s = "/tmp", .t = 1),
    ROW(unix_connect, "path \"\", from the host thread (the caller first)", C_HOST, STVM_ENOTPROC,
        .vm = V_NET, .s = "", .t = 1),
    ROW(unix_connect, "a VM whose external table is full", C_GREEN, STVM_EFULL, .t = 1),

    /* ---- sockets: sending, receiving, closing ---- */
#define SEND(what, want, ...) ROW(socket_send, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
#define RECV(what, want, ...) ROW(socket_recv, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
    SEND("NULL buf, length 1", E_INVAL, .null_ptr = true, .z = 1, .t = 1),
    SEND("length SIZE_MAX", E_INVAL, .z = SIZE_MAX, .t = 1),
    SEND("length INT64_MAX + 1", E_INVAL, .z = (uint64_t)INT64_MAX + 1, .t = 1),
    SEND("a listener", E_INVAL, .h = H_LISTENER, .z = 1, .t = 1),
    SEND("timeout -2", E_INVAL, .z = 1, .t = -2),
    SEND("timeout INT64_MIN", E_INVAL, .z = 1, .t = INT64_MIN),
    SEND("timeout INT64_MAX", E_RANGE, .z = 1, .t = INT64_MAX),
    ROW(socket_send, "NULL buf, length 1, from the host thread", C_HOST, E_INVAL, .vm = V_NET,
        .null_ptr = true, .z = 1, .t = 1),
    RECV("length 0", E_INVAL, .z = 0, .t = 1),
    RECV("NULL buf", E_INVAL, .null_ptr = true, .z = 1, .t = 1),
    RECV("length SIZE_MAX", E_INVAL, .z = SIZE_MAX, .t = 1),
    RECV("a listener", E_INVAL, .h = H_LISTENER, .z = 1, .t = 1),
    RECV("timeout -2", E_INVAL, .z = 1, .t = -2),
    RECV("timeout INT64_MIN", E_INVAL, .z = 1, .t = INT64_MIN),
    RECV("timeout INT64_MAX", E_RANGE, .z = 1, .t = INT64_MAX),
    RECV("0 ms, nothing there: only tries", STVM_ETIMEDOUT, .z = 1, .t = 0),
    RECV("a socket a process waits to read from (through its stream)", STVM_EWAITING,
         .h = H_READ_WAITED, .z = 1, .t = -1),
    RECV("a socket a process waits to read from, 5 ms", STVM_EWAITING, .h = H_READ_WAITED, .z = 1,
         .t = 5),
    ROW(socket_recv, "length 0, from the host thread", C_HOST, E_INVAL, .vm = V_NET, .z = 0,
        .t = 1),
#define SHUTDOWN(what, want, ...) ROW(socket_shutdown, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
    SHUTDOWN("how -1", E_INVAL, .n = -1),
    SHUTDOWN("how 3", E_INVAL, .n = 3),
    SHUTDOWN("how INT_MAX", E_INVAL, .n = INT_MAX),
    SHUTDOWN("how INT_MIN", E_INVAL, .n = INT_MIN),
    SHUTDOWN("a listener", E_INVAL, .h = H_LISTENER, .n = 1),
    SHUTDOWN("another VM's listener", E_INVAL, .h = H_FOREIGN_LISTENER, .n = 1),
    SHUTDOWN("SHUT_RD of a socket a process waits to read from", STVM_EINUSE,
             .h = H_READ_WAITED, .n = 0),
    SHUTDOWN("SHUT_RDWR of a socket a process waits to read from", STVM_EINUSE,
             .h = H_READ_WAITED, .n = 2),
    ROW(socket_shutdown, "how 3, from a green process", C_GREEN, E_INVAL, .vm = V_NET, .n = 3),
    ROW(socket_shutdown, "SHUT_RD of a socket a process waits to read from", C_GREEN,
        STVM_EINUSE, .vm = V_NET, .h = H_READ_WAITED, .n = 0),
#define ADDRESS(fn, what, want, ...) ROW(fn, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
    ADDRESS(socket_peer_address, "NULL buf", E_INVAL, .null_ptr = true, .z = 64),
    ADDRESS(socket_peer_address, "size 0", E_INVAL, .z = 0),
    ADDRESS(socket_peer_address, "size 1: \"127.0.0.1\" does not fit", STVM_ERANGE, .z = 1),
    ADDRESS(socket_peer_address, "size 9: \"127.0.0.1\" fits, its NUL does not", STVM_ERANGE,
            .z = 9),
    ADDRESS(socket_peer_address, "a listener: no peer", E_INVAL, .h = H_LISTENER, .z = 64),
    ADDRESS(socket_peer_address, "another VM's listener", E_INVAL, .h = H_FOREIGN_LISTENER,
            .z = 64),
    ADDRESS(socket_local_address, "NULL buf", E_INVAL, .null_ptr = true, .z = 64),
    ADDRESS(socket_local_address, "size 0", E_INVAL, .z = 0),
    ADDRESS(socket_local_address, "size 9: \"127.0.0.1\" fits, its NUL does not", STVM_ERANGE,
            .z = 9),
    ADDRESS(socket_local_address, "a listener, size 1", STVM_ERANGE, .h = H_LISTENER, .z = 1),
    ADDRESS(socket_local_address, "another VM's listener", E_INVAL, .h = H_FOREIGN_LISTENER,
            .z = 64),
    ROW(socket_peer_address, "size 1, from a green process", C_GREEN, STVM_ERANGE, .vm = V_NET,
        .z = 1),
    ROW(socket_close, "a listener a process accepts on", C_HOST, STVM_EINUSE, .vm = V_NET,
        .h = H_BUSY_LISTENER),
    ROW(socket_close, "a socket a process waits to read from", C_HOST, STVM_EINUSE, .vm = V_NET,
        .h = H_READ_WAITED),
    ROW(socket_close, "a listener a process accepts on", C_GREEN, STVM_EINUSE, .vm = V_NET,
        .h = H_BUSY_LISTENER),
    ROW(socket_close, "a socket a process waits to read from", C_GREEN, STVM_EINUSE, .vm = V_NET,
        .h = H_READ_WAITED),
    ROW(socket_close, "another VM's listener", C_HOST, E_INVAL, .vm = V_NET,
        .h = H_FOREIGN_LISTENER),
    ROW(socket_status, "another VM's listener", C_HOST, E_INVAL, .vm = V_NET,
        .h = H_FOREIGN_LISTENER),
    ROW(socket_status, "a connected socket: looking changes nothing", C_HOST, R_COUNT, .vm = V_NET),
    ROW(socket_fd, "a listener: its descriptor", C_HOST, R_COUNT, .vm = V_NET, .h = H_LISTENER),
    ROW(socket_port, "a listener: its port", C_HOST, R_COUNT, .vm = V_NET, .h = H_LISTENER),
    ROW(socket_read_semaphore, "a socket: its semaphore", C_HOST, R_NONNULL, .vm = V_NET),

    /* ---- streams ---- */
    ROW(stream_open, "a socket with a stream", C_HOST, E_STATE, .vm = V_NET, .h = H_STREAMED,
        .t = -1),
    ROW(stream_open, "a socket with a stream a process waits in", C_HOST, E_STATE, .vm = V_NET,
        .h = H_READ_WAITED, .t = -1),
    ROW(stream_open, "a socket with a stream", C_GREEN, E_STATE, .vm = V_NET, .h = H_STREAMED,
        .t = -1),
    ROW(stream_open, "a listener", C_HOST, E_INVAL, .vm = V_NET, .h = H_LISTENER, .t = -1),
    ROW(stream_open, "another VM's listener", C_HOST, E_INVAL, .vm = V_NET,
        .h = H_FOREIGN_LISTENER, .t = -1),
    ROW(stream_open, "timeout -2", C_HOST, E_INVAL, .vm = V_NET, .t = -2),
    ROW(stream_open, "timeout INT64_MIN", C_HOST, E_INVAL, .vm = V_NET, .t = INT64_MIN),
    ROW(stream_set_read_timeout_ms, "timeout -2", C_HOST, E_INVAL, .vm = V_NET, .t = -2),
    ROW(stream_set_read_timeout_ms, "timeout INT64_MIN", C_HOST, E_INVAL, .vm = V_NET,
        .t = INT64_MIN),
    ROW(stream_set_read_timeout_ms, "timeout -2, from a green process", C_GREEN, E_INVAL,
        .vm = V_NET, .t = -2),
    ROW(stream_set_write_timeout_ms, "timeout -2", C_HOST, E_INVAL, .vm = V_NET, .t = -2),
    ROW(stream_set_write_timeout_ms, "timeout INT64_MIN", C_HOST, E_INVAL, .vm = V_NET,
        .t = INT64_MIN),
    ROW(stream_set_write_timeout_ms, "timeout -2, from a green process", C_GREEN, E_INVAL,
        .vm = V_NET, .t = -2),
#define SREAD(fn, what, want, ...) ROW(fn, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
    SREAD(stream_read, "NULL buf", E_INVAL, .null_ptr = true, .z = 1),
    SREAD(stream_read, "length 0", E_INVAL, .z = 0),
    SREAD(stream_read, "length SIZE_MAX", E_INVAL, .z = SIZE_MAX),
    SREAD(stream_read, "a stream a process waits in", STVM_EWAITING, .h = H_WAITED_STREAM, .z = 1),
    SREAD(stream_read_line, "NULL buf", E_INVAL, .null_ptr = true, .z = 64),
    SREAD(stream_read_line, "cap 0", E_INVAL, .z = 0),
    SREAD(stream_read_line, "cap SIZE_MAX", E_INVAL, .z = SIZE_MAX),
    ROW(stream_read_line, "a stream a process waits in", C_GREEN,
        STVM_EWAITING, .vm = V_NET, .h = H_WAITED_STREAM, .z = 64),
    SREAD(stream_write, "NULL buf, length 1", E_INVAL, .null_ptr = true, .z = 1),
    SREAD(stream_write, "length SIZE_MAX", E_INVAL, .z = SIZE_MAX),
    ROW(stream_close, "a stream a process waits in", C_HOST, STVM_EINUSE, .vm = V_NET,
        .h = H_WAITED_STREAM),
    ROW(stream_close, "a stream a process waits in", C_GREEN, STVM_EINUSE, .vm = V_NET,
        .h = H_WAITED_STREAM),

    /* ---- living inside another event loop ---- */
    ROW(run_mode, "mode -1", C_HOST, E_INVAL, .n = -1),
    ROW(run_mode, "mode 3", C_HOST, E_INVAL, .n = 3),
    ROW(run_mode, "mode INT_MAX", C_HOST, E_INVAL, .n = INT_MAX),
    ROW(run_mode, "mode INT_MIN", C_HOST, E_INVAL, .n = INT_MIN),
    ROW(run_mode, "NULL vm, mode 3", C_HOST, E_INVAL, .vm = V_NULL, .n = 3),
    ROW(run_mode, "its own VM from inside stvm_run, once", C_GREEN, STVM_EBUSY, .n = STVM_RUN_ONCE),
    ROW(run_mode, "its own VM from inside stvm_run, nowait", C_GREEN, STVM_EBUSY,
        .n = STVM_RUN_NOWAIT),
    ROW(run_mode, "another VM from inside stvm_run (runs do not nest)", C_GREEN, STVM_EBUSY,
        .vm = V_OTHER, .n = STVM_RUN_NOWAIT),
    ROW(run_mode, "mode 3 from inside stvm_run", C_GREEN, E_INVAL, .n = 3),
    ROW(run_mode, "a VM already running on another thread", C_BARE, STVM_EBUSY,
        .n = STVM_RUN_NOWAIT),
    ROW(run_mode, "a VM already running on another thread", C_BARE, STVM_EBUSY, .vm = V_NET,
        .n = STVM_RUN_ONCE),
    ROW(run_mode, "a VM already running on another thread, from a process", C_ELSEWHERE,
        STVM_EBUSY, .vm = V_NET, .n = STVM_RUN_NOWAIT),
    ROW(backend_fd, "NULL vm", C_GREEN, E_INVAL, .vm = V_NULL),
    ROW(backend_fd, "a VM: its descriptor, changing nothing", C_HOST, R_COUNT),
    ROW(backend_fd, "a VM running on another thread: its descriptor", C_BARE, R_COUNT, .vm = V_NET),
    ROW(backend_timeout_ms, "NULL vm", C_GREEN, E_INVAL, .vm = V_NULL),
    ROW(backend_timeout_ms, "a VM with a ready process: 0, changing nothing", C_HOST, R_COUNT),
    ROW(stop, "NULL vm, from a process", C_GREEN, R_VOID, .vm = V_NULL),
    ROW(stop, "NULL vm, from another thread", C_BARE, R_VOID, .vm = V_NULL),

    /* ---- ByteArrays ---- */
    ROW(bytes_new, "1 GiB + 1 bytes", C_HOST, E_RANGE, .vm = V_NET, .z = ((uint64_t)1 << 30) + 1),
    ROW(bytes_new, "SIZE_MAX bytes", C_HOST, E_RANGE, .vm = V_NET, .z = SIZE_MAX),
    ROW(bytes_new, "SIZE_MAX bytes", C_GREEN, E_RANGE, .vm = V_NET, .z = SIZE_MAX),
    ROW(bytes_new, "NULL out, SIZE_MAX bytes", C_HOST, E_INVAL, .vm = V_NET, .z = SIZE_MAX,
        .null_out = true),
#define BDATA(what, ...) ROW(bytes_data, what, C_HOST, E_INVAL, .vm = V_NET, __VA_ARGS__)
    BDATA("NULL size", .o = {OB(OB_BYTES)}, .null_ptr = true),
    BDATA("another VM's ByteArray", .o = {OB(OB_FOREIGN_BYTES)}),
    BDATA("a released ByteArray", .o = {OB(OB_RELEASED_BYTES)}),
    BDATA("a semaphore", .o = {OB(OB_SEM)}),
    BDATA("a boxed integer", .o = {OB(OB_BOX_MAX)}),
    BDATA("a SmallInteger", .o = {SI(3)}),
    BDATA("nil", .o = {RAW(STVM_NIL)}),
    BDATA("an unmapped word", .o = {RAW(GARBAGE)}),
    BDATA("zeroed memory", .o = {OB(OB_G_ZERO)}),
    BDATA("a SocketHandle record", .o = {OB(OB_RECORD)}),
    BDATA("a socket", .o = {OB(OB_SOCKET)}),
    ROW(bytes_data, "a ByteArray, from a green process of another VM", C_GREEN, E_INVAL,
        .vm = V_MAIN, .o = {OB(OB_BYTES)}),
    ROW(oop_class_name, "another VM's ByteArray", C_HOST, R_NULL, .vm = V_NET,
        .o = {OB(OB_FOREIGN_BYTES)}),
    ROW(oop_class_name, "a released ByteArray", C_HOST, R_NULL, .vm = V_NET,
        .o = {OB(OB_RELEASED_BYTES)}),
    ROW(oop_class_name, "a forged SocketHandle", C_HOST, R_NULL, .vm = V_NET,
        .o = {OB(OB_G_FORGED_RECORD)}),
    ROW(oop_release, "a SocketHandle not destroyed", C_HOST, STVM_EINUSE, .vm = V_NET,
        .o = {OB(OB_RECORD)}),
    ROW(oop_release, "another VM's SocketHandle", C_HOST, E_INVAL, .vm = V_NET,
        .o = {OB(OB_FOREIGN_RECORD)}),
    ROW(oop_release, "a socket (stvm_socket_close frees it)", C_HOST, E_INVAL, .vm = V_NET,
        .o = {OB(OB_SOCKET)}),
    ROW(oop_release, "another VM's ByteArray", C_HOST, E_INVAL, .vm = V_NET,
        .o = {OB(OB_FOREIGN_BYTES)}),
    ROW(oop_release, "a released ByteArray", C_HOST, E_INVAL, .vm = V_NET,
        .o = {OB(OB_RELEASED_BYTES)}),

    /* ---- named primitives: the call itself ---- */
#define NAMED(what, want, ...) \
    ROW(primitive_call_named, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
    NAMED("NULL module", E_INVAL, .s = NULL_STR, .s2 = "primitiveResolverStatus"),
    NAMED("NULL name", E_INVAL, .s2 = NULL_STR),
    NAMED("module \"\"", E_INVAL, .s = "", .s2 = "primitiveResolverStatus"),
    NAMED("unknown module", E_INVAL, .s = "FilePlugin", .s2 = "primitiveResolverStatus"),
    NAMED("module in lower case", E_INVAL, .s = "socketplugin", .s2 = "primitiveResolverStatus"),
    NAMED("unknown name", E_INVAL, .s2 = "primitiveSocketFoo"),
    NAMED("a numbered primitive's name", E_INVAL, .s2 = "primitiveSignal"),
    NAMED("nargs -1", E_INVAL, .s2 = "primitiveResolverStatus", .n = -1),
    NAMED("nargs INT_MIN", E_INVAL, .s2 = "primitiveResolverStatus", .n = INT_MIN),
    NAMED("NULL args with nargs 1", E_INVAL, .s2 = "primitiveSocketError", .n = 1,
          .null_ptr = true),
    ROW(primitive_call_named, "NULL vm, NULL name", C_HOST, E_INVAL, .vm = V_NULL, .s2 = NULL_STR),
#define NPRIM(what, ctx, name, nargs, fail, ...)                                               \
    {F_primitive_call_named, what, ctx, {.vm = V_NET, .s2 = name, .n = nargs, __VA_ARGS__},     \
     STVM_EPRIM, fail, NULL, NULL}
    NPRIM("ResolverStatus with 1 argument", C_HOST, "primitiveResolverStatus", 1, BAD_NARGS),
    NPRIM("ConnectionStatus with 0 arguments", C_HOST, "primitiveSocketConnectionStatus", 0,
          BAD_NARGS),
    NPRIM("Create3Semaphores with 6 arguments", C_HOST, "primitiveSocketCreate3Semaphores", 6,
          BAD_NARGS, .o = {RAW(STVM_NIL), SI(0), SI(0), SI(8000), SI(8000), SI(0), SI(0)}),
    NPRIM("ConnectionStatus with INT_MAX arguments", C_HOST, "primitiveSocketConnectionStatus",
          INT_MAX, BAD_NARGS, .o = {RAW(STVM_NIL), OB(OB_RECORD)}),
    /* ---- named primitives: socket records and arguments ---- */
    NPRIM("ConnectionStatus: a semaphore", C_HOST, "primitiveSocketConnectionStatus", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), OB(OB_SEM)}),
    NPRIM("ConnectionStatus: nil", C_HOST, "primitiveSocketConnectionStatus", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), RAW(STVM_NIL)}),
    NPRIM("ConnectionStatus: a SmallInteger", C_HOST, "primitiveSocketConnectionStatus", 1,
          BAD_ARG, .o = {RAW(STVM_NIL), SI(7)}),
    NPRIM("ConnectionStatus: an unmapped word", C_HOST, "primitiveSocketConnectionStatus", 1,
          BAD_ARG, .o = {RAW(STVM_NIL), RAW(GARBAGE)}),
    NPRIM("ConnectionStatus: another VM's record", C_HOST, "primitiveSocketConnectionStatus", 1,
          BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_FOREIGN_RECORD)}),
    NPRIM("ConnectionStatus: a forged record", C_HOST, "primitiveSocketConnectionStatus", 1,
          BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_G_FORGED_RECORD)}),
    NPRIM("ConnectionStatus: a socket (not its record)", C_HOST,
          "primitiveSocketConnectionStatus", 1, BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_SOCKET)}),
    NPRIM("ConnectionStatus: a ByteArray", C_HOST, "primitiveSocketConnectionStatus", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), OB(OB_BYTES)}),
    NPRIM("ConnectionStatus: a destroyed record", C_HOST, "primitiveSocketConnectionStatus", 1,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_DEAD_RECORD)}),
    NPRIM("LocalPort: a destroyed record", C_HOST, "primitiveSocketLocalPort", 1, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_DEAD_RECORD)}),
    NPRIM("Error: a boxed integer", C_HOST, "primitiveSocketError", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), OB(OB_BOX_MAX)}),
    NPRIM("Destroy: another VM's record", C_HOST, "primitiveSocketDestroy", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), OB(OB_FOREIGN_RECORD)}),
    NPRIM("CloseConnection: a destroyed record", C_HOST, "primitiveSocketCloseConnection", 1,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_DEAD_RECORD)}),
    NPRIM("Create3Semaphores: UDP", C_HOST, "primitiveSocketCreate3Semaphores", 7,
          STVM_PRIM_ERR_UNSUPPORTED,
          .o = {RAW(STVM_NIL), SI(0), SI(1), SI(8000), SI(8000), SI(0), SI(0), SI(0)}),
    NPRIM("Create3Semaphores: type 2", C_HOST, "primitiveSocketCreate3Semaphores", 7, GENERIC,
          .o = {RAW(STVM_NIL), SI(0), SI(2), SI(8000), SI(8000), SI(0), SI(0), SI(0)}),
    NPRIM("Create3Semaphores: nil netType", C_HOST, "primitiveSocketCreate3Semaphores", 7, GENERIC,
          .o = {RAW(STVM_NIL), RAW(STVM_NIL), SI(0), SI(8000), SI(8000), SI(0), SI(0), SI(0)}),
    NPRIM("Create3Semaphores: semaphore index 257 (table of 256)", C_HOST,
          "primitiveSocketCreate3Semaphores", 7, BAD_ARG,
          .o = {RAW(STVM_NIL), SI(0), SI(0), SI(8000), SI(8000), SI(257), SI(0), SI(0)}),
    NPRIM("Create3Semaphores: semaphore index -1", C_HOST, "primitiveSocketCreate3Semaphores", 7,
          BAD_ARG, .o = {RAW(STVM_NIL), SI(0), SI(0), SI(8000), SI(8000), SI(0), SI(0), SI(-1)}),
    NPRIM("Create3Semaphores: a tagged 2^60 index (beyond 61 bits)", C_HOST,
          "primitiveSocketCreate3Semaphores", 7, BAD_ARG,
          .o = {RAW(STVM_NIL), SI(0), SI(0), SI(8000), SI(8000), SI(MAX61 + 1), SI(0), SI(0)}),
    NPRIM("ConnectToPort: a semaphore as the address", C_HOST, "primitiveSocketConnectToPort", 3,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_SEM), SI(80)}),
    NPRIM("ConnectToPort: a 16-byte address... of 16 zero bytes, port 65536", C_HOST,
          "primitiveSocketConnectToPort", 3, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), SI(65536)}),
    NPRIM("ConnectToPort: a nil port", C_HOST, "primitiveSocketConnectToPort", 3, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), RAW(STVM_NIL)}),
    NPRIM("ConnectToPort: a destroyed record", C_HOST, "primitiveSocketConnectToPort", 3, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_DEAD_RECORD), OB(OB_BYTES), SI(80)}),
    NPRIM("ListenOnPortBacklog: backlog 0", C_HOST, "primitiveSocketListenOnPortBacklog", 3,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(0), SI(0)}),
    NPRIM("ListenOnPortBacklog: backlog 65536", C_HOST, "primitiveSocketListenOnPortBacklog", 3,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(0), SI(65536)}),
    NPRIM("ListenOnPortBacklog: port -1", C_HOST, "primitiveSocketListenOnPortBacklog", 3, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(-1), SI(4)}),
    NPRIM("ListenOnPortBacklog: port 65536", C_HOST, "primitiveSocketListenOnPortBacklog", 3,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(65536), SI(4)}),
    NPRIM("ListenOnPortBacklogInterface: a semaphore as the interface", C_HOST,
          "primitiveSocketListenOnPortBacklogInterface", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(0), SI(4), OB(OB_SEM)}),
    NPRIM("Accept3Semaphores: a record that does not listen", C_HOST,
          "primitiveSocketAccept3Semaphores", 6, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(8000), SI(8000), SI(0), SI(0), SI(0)}),
    NPRIM("SendDataBufCount: a semaphore as the buffer", C_HOST,
          "primitiveSocketSendDataBufCount", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_SEM), SI(1), SI(1)}),
    NPRIM("SendDataBufCount: start index 0", C_HOST, "primitiveSocketSendDataBufCount", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), SI(0), SI(1)}),
    NPRIM("SendDataBufCount: count past the end", C_HOST, "primitiveSocketSendDataBufCount", 4,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), SI(1), SI(17)}),
    NPRIM("ReceiveDataBufCount: count -1", C_HOST, "primitiveSocketReceiveDataBufCount", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), SI(1), SI(-1)}),
    NPRIM("ReceiveDataBufCount: another VM's ByteArray", C_HOST,
          "primitiveSocketReceiveDataBufCount", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_FOREIGN_BYTES), SI(1), SI(1)}),
    NPRIM("ResolverStartNameLookup: a SmallInteger", C_HOST, "primitiveResolverStartNameLookup",
          1, GENERIC, .o = {RAW(STVM_NIL), SI(5)}),
    NPRIM("ResolverStartNameLookup: a released ByteArray", C_HOST,
          "primitiveResolverStartNameLookup", 1, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RELEASED_BYTES)}),
    NPRIM("InitializeNetwork: index 257 (table of 256)", C_HOST, "primitiveInitializeNetwork", 1,
          GENERIC, .o = {RAW(STVM_NIL), SI(257)}),
    NPRIM("InitializeNetwork: index -1", C_HOST, "primitiveInitializeNetwork", 1, GENERIC,
          .o = {RAW(STVM_NIL), SI(-1)}),
    NPRIM("ConnectionStatus: a semaphore, from a green process", C_GREEN,
          "primitiveSocketConnectionStatus", 1, BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_SEM)}),
    NPRIM("ConnectionStatus: a semaphore, NULL fail_code", C_HOST,
          "primitiveSocketConnectionStatus", 1, BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_SEM)},
          .null_fail = true),
    ROW(primitive_named_list, "NULL modules and names, cap 5: the total", C_HOST, R_TRUE, .n = 5,
        .null_out = true, .null_ptr = true),
    ROW(primitive_named_list, "cap 0: the total, nothing written", C_HOST, R_TRUE, .n = 0),
    ROW(primitive_named_list, "cap -1: the total, nothing written", C_HOST, R_TRUE, .n = -1),
    ROW(primitive_named_list, "cap INT_MIN: the total, nothing written", C_HOST, R_TRUE,
        .n = INT_MIN),
    ROW(primitive_named_list, "NULL names, cap 0", C_HOST, R_TRUE, .n = 0, .null_out = true),

    /* Last: were D12 back, this row would leave the reader's handler disarmed, and the
     * rows after it would see that instead of their own doing. */
    ROW(socket_recv, "a socket a process waits to read from, 0 ms: EWAITING",
        C_GREEN, STVM_EWAITING, .vm = V_NET, .h = H_READ_WAITED, .z = 1, .t = 0),
};
#define N_EXPLICIT ((int)(sizeof explicit_rows / sizeof explicit_rows[0]))

/* ---- the FFI's functions ------------------------------------------------------------ */

/* Their rows are written out here, apart from the rest. A row's handle (a.h) is, for a
 * function, worker or callback: H_DEFAULT the row VM's own, H_NULL, H_FOREIGN another
 * VM's (V_OTHER's, or V_MAIN's for V_OTHER), H_SEM a semaphore, H_G_ZERO, H_G_ONES,
 * H_G_TEXT readable memory; stvm_ffi_call_on's worker is chosen the same way by a.t
 * (0 = the row VM's named worker, else a handle id; H_NULL = the pool). a.z picks the
 * signature (ffi_sigs), a.n is nargs and a.o the arguments, where the objects below
 * name the FFI's own oops. Besides the snapshot, every FFI row checks that the C
 * function was not called when the call failed, that no FFI counter but callouts_failed
 * moved (and that only with EPRIM), that stvm_ffi_last_failure moved only with EPRIM,
 * and, after stvm_ffi_function_free, that the fixture's functions are still live. */

static atomic_int ffi_add_calls;

static int64_t ffi_add(int64_t a, int64_t b)
{
    atomic_fetch_add(&ffi_add_calls, 1);
    return a + b;
}

static int ffi_echo(stvm_vm *vm, void *arg, const stvm_oop *in, int nargs, stvm_oop *out)
{
    *out = in[0];
    return STVM_OK;
}

/* The fixture's functions need this much stack (so that a probe can tell they live). */
#define FFI_FX_STACK ((size_t)6000)
/* The VMs whose FFI counters every FFI row watches. */
static const int ffi_vms[] = {V_MAIN, V_OTHER, V_31, V_NET};
#define N_FFI_VMS ((int)(sizeof ffi_vms / sizeof ffi_vms[0]))

enum ffi_object_id {
    OBF_FLOAT = 1000,    /* V_MAIN: 1.5 */
    OBF_ADDR,            /* V_MAIN: an ExternalAddress */
    OBF_FOREIGN_FLOAT,   /* V_OTHER: 1.5 */
    OBF_FOREIGN_ADDR,    /* V_OTHER: an ExternalAddress */
};

/* Signatures by a.z: 0 is the fixture's, the others are refused. */
static const char *const ffi_sigs[] = {
    "i64(i64,i64)", "", "i64", "i64(", "i64(i64", "i64(i64,)", "i64(,i64)", "int(i64)",
    "i64(void)", "i64(i64 i64)", "i64(i64)x", "I64(i64)", "i64(i65)", "(i64)", "i64((i64))",
    "i64(i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64)",
};
#define N_FFI_SIGS ((int)(sizeof ffi_sigs / sizeof ffi_sigs[0]))

static void ffi_make_in(fx *f, int v)
{
    stvm_vm *vm = f->vm[v];
    cr_assert_eq(stvm_ffi_function_at(vm, (void *)ffi_add, ffi_sigs[0], &f->ffi.fn[v]), STVM_OK);
    cr_assert_eq(stvm_ffi_function_set_stack(vm, f->ffi.fn[v], FFI_FX_STACK), STVM_OK);
    cr_assert_eq(stvm_ffi_worker_new(vm, "fixture", &f->ffi.worker[v]), STVM_OK);
    cr_assert_eq(stvm_float_new(vm, 1.5, &f->ffi.flt[v]), STVM_OK);
    cr_assert_eq(stvm_ptr_oop(vm, g_text, &f->ffi.addr[v]), STVM_OK);
}

static void ffi_make(fx *f)
{
    for (int i = 0; i < N_FFI_VMS; i++)
        ffi_make_in(f, ffi_vms[i]);
    void *c;
    cr_assert_eq(stvm_ffi_callback_new(f->vm[V_OTHER], "i64(i64)", ffi_echo, NULL, &f->ffi.cb,
                                       &c), STVM_OK);
}

static stvm_oop ffi_oop_of(fx *f, ospec o)
{
    if (o.k != O_OBJ || o.v < OBF_FLOAT)
        return oop_of(f, o);
    switch (o.v) {
    case OBF_FLOAT: return f->ffi.flt[V_MAIN];
    case OBF_ADDR: return f->ffi.addr[V_MAIN];
    case OBF_FOREIGN_FLOAT: return f->ffi.flt[V_OTHER];
    case OBF_FOREIGN_ADDR: return f->ffi.addr[V_OTHER];
    }
    return STVM_NIL;
}

/* The FFI handle `which` names for the row's VM (f->ffi's arrays, or the callback). */
static void *ffi_handle(fx *f, const args *a, int which, void *const *own)
{
    int v = home_of(&(row){.a = *a});
    int foreign = v == V_OTHER ? V_MAIN : V_OTHER;
    switch (which) {
    case H_DEFAULT: return own[v];
    case H_FOREIGN: return own[foreign];
    case H_SEM: return f->sem[v] ? (void *)f->sem[v] : (void *)f->sem[V_MAIN];
    case H_G_ZERO: return g_zero;
    case H_G_ONES: return g_ones;
    case H_G_TEXT: return g_text;
    }
    return NULL;
}

typedef struct ffi_watch {
    stvm_ffi_stats st[N_FFI_VMS];
    int last[N_FFI_VMS];
    int calls;
} ffi_watch;

static void ffi_watch_take(fx *f, ffi_watch *w)
{
    memset(w, 0, sizeof *w);
    for (int i = 0; i < N_FFI_VMS; i++) {
        stvm_ffi_get_stats(f->vm[ffi_vms[i]], &w->st[i]);
        w->last[i] = stvm_ffi_last_failure(f->vm[ffi_vms[i]]);
    }
    w->calls = atomic_load(&ffi_add_calls);
}

/* Answers of FFI rows that saw more than the call's answer. */
enum {
    R_FFI_CALLED = R_ANY + 100,   /* failed, yet the C function ran */
    R_FFI_COUNTED,                /* an FFI counter other than callouts_failed moved */
    R_FFI_LAST,                   /* stvm_ffi_last_failure moved without EPRIM */
    R_FFI_LOST,                   /* a fixture function is no longer live */
};

static int ffi_judge(const ffi_watch *a, const ffi_watch *b, int rc)
{
    if (rc != STVM_OK && a->calls != b->calls)
        return R_FFI_CALLED;
    for (int i = 0; i < N_FFI_VMS; i++) {
        stvm_ffi_stats x = a->st[i], y = b->st[i];
        if (rc == STVM_EPRIM)
            y.callouts_failed = x.callouts_failed;
        if (memcmp(&x, &y, sizeof x) != 0)
            return R_FFI_COUNTED;
        if (rc != STVM_EPRIM && a->last[i] != b->last[i])
            return R_FFI_LAST;
    }
    return rc;
}

static bool ffi_fixture_live(fx *f)
{
    for (int i = 0; i < N_FFI_VMS; i++) {
        int v = ffi_vms[i];
        if (stvm_ffi_function_set_stack(f->vm[v], f->ffi.fn[v], FFI_FX_STACK) != STVM_OK)
            return false;
    }
    return true;
}

/* An out-parameter of a type out_slot has no member for: made in a local preset to
 * the pattern, then copied into f->out, so that a write on failure shows. */
#define FFI_OUT(T, name) \
    T name;              \
    memset(&name, OUT_PATTERN, sizeof name)
#define FFI_OUT_DONE(o, name)                \
    do {                                     \
        if (o)                               \
            memcpy((o)->buf, &name, sizeof name); \
    } while (0)

/* The callouts: stvm_ffi_call, _call_threaded and _call_on. */
static int call_ffi_callout(fx *f, int fn, const args *a, union out_slot *o)
{
    stvm_vm *vm = vm_of(f, a->vm);
    stvm_ffi_function *ffn = ffi_handle(f, a, a->h, (void *const *)f->ffi.fn);
    stvm_oop argv[8];
    for (int i = 0; i < 8; i++)
        argv[i] = ffi_oop_of(f, a->o[i]);
    const stvm_oop *av = a->null_ptr ? NULL : argv;
    stvm_oop *res = o ? &o->oop : NULL;
    int rc;
    if (fn == F_ffi_call) {
        rc = stvm_ffi_call(vm, ffn, av, (int)a->n, res);
    } else if (fn == F_ffi_call_threaded) {
        rc = stvm_ffi_call_threaded(vm, ffn, av, (int)a->n, res);
    } else {
        stvm_ffi_worker *w = ffi_handle(f, a, (int)a->t, (void *const *)f->ffi.worker);
        rc = stvm_ffi_call_on(vm, w, ffn, av, (int)a->n, res);
    }
    if (rc == STVM_EPRIM)
        f->fail_code = stvm_ffi_last_failure(vm);
    return rc;
}

/* The others; an unexpected success gives back what it made. */
static int call_ffi_other(fx *f, int fn, const args *a, union out_slot *o)
{
    stvm_vm *vm = vm_of(f, a->vm);
    stvm_oop o0 = ffi_oop_of(f, a->o[0]);
    const char *sig = a->null_ptr || a->z >= (uint64_t)N_FFI_SIGS ? NULL : ffi_sigs[a->z];
    const char *name = a->s == NULL_STR ? NULL : a->s;
    const char *sym = a->s2 == NULL_STR ? NULL : a->s2 ? a->s2 : "labs";
    void *addr = a->n == 1 ? NULL : (void *)ffi_add;
    FFI_OUT(void *, handle);
    FFI_OUT(void *, cfn);
    FFI_OUT(double, d);
    FFI_OUT(stvm_ffi_stats, fst);
    int rc = R_ANY;
    switch (fn) {
    case F_ffi_function_new:
        rc = stvm_ffi_function_new(vm, name, sym, sig, o ? (stvm_ffi_function **)&handle : NULL);
        if (rc == STVM_OK)
            stvm_ffi_function_free(vm, handle);
        break;
    case F_ffi_function_at:
        rc = stvm_ffi_function_at(vm, addr, sig, o ? (stvm_ffi_function **)&handle : NULL);
        if (rc == STVM_OK)
            stvm_ffi_function_free(vm, handle);
        break;
    case F_ffi_function_free:
        stvm_ffi_function_free(vm, ffi_handle(f, a, a->h, (void *const *)f->ffi.fn));
        return ffi_fixture_live(f) ? R_VOID : R_FFI_LOST;
    case F_ffi_function_set_stack:
        return stvm_ffi_function_set_stack(vm, ffi_handle(f, a, a->h, (void *const *)f->ffi.fn),
                                           (size_t)a->z);
    case F_ffi_worker_new:
        rc = stvm_ffi_worker_new(vm, name, o ? (stvm_ffi_worker **)&handle : NULL);
        if (rc == STVM_OK)
            stvm_ffi_worker_free(vm, handle);
        break;
    case F_ffi_worker_free:
        return stvm_ffi_worker_free(vm, ffi_handle(f, a, a->h, (void *const *)f->ffi.worker));
    case F_ffi_last_failure: rc = stvm_ffi_last_failure(vm); return rc < 0 ? rc : R_COUNT;
    case F_float_new: return stvm_float_new(vm, 2.5, o ? &o->oop : NULL);
    case F_float_value: rc = stvm_float_value(vm, o0, o ? &d : NULL); FFI_OUT_DONE(o, d); break;
    case F_ptr_oop: return stvm_ptr_oop(vm, g_text, o ? &o->oop : NULL);
    case F_oop_ptr: rc = stvm_oop_ptr(vm, o0, o ? &handle : NULL); break;
    case F_ffi_callback_new:
        rc = stvm_ffi_callback_new(vm, sig, a->null_fail ? NULL : ffi_echo, NULL,
                                   o ? (stvm_ffi_callback **)&handle : NULL,
                                   a->m ? NULL : &cfn);
        if (rc == STVM_OK)
            stvm_ffi_callback_free(vm, handle);
        break;
    case F_ffi_callback_free: {
        void *own[N_VM] = {[V_MAIN] = f->ffi.cb, [V_OTHER] = f->ffi.cb};
        stvm_ffi_callback_free(vm, ffi_handle(f, a, a->h, own));
        return R_VOID;
    }
    case F_ffi_get_stats:
        rc = stvm_ffi_get_stats_(vm, o ? &fst : NULL, SSIZE(stvm_ffi_stats));
        FFI_OUT_DONE(o, fst);
        return rc;
    }
    if (fn != F_float_value)
        FFI_OUT_DONE(o, handle);
    return rc;
}

static int call_ffi(fx *f, int fn, const args *a)
{
    union out_slot *o = a->null_out ? NULL : &f->out;
    ffi_watch before, after;
    ffi_watch_take(f, &before);
    int rc = fn == F_ffi_call || fn == F_ffi_call_threaded || fn == F_ffi_call_on
                 ? call_ffi_callout(f, fn, a, o)
                 : call_ffi_other(f, fn, a, o);
    ffi_watch_take(f, &after);
    return ffi_judge(&before, &after, rc);
}

#define FFI(fn, what, ctx, want, ...) ROW(fn, what, ctx, want, __VA_ARGS__)
#define FCALL(fn, what, ctx, fail, ...) \
    {F_##fn, what, ctx, {__VA_ARGS__}, STVM_EPRIM, fail, NULL, NULL}
#define TWO {SI(1), SI(2)}
#define BAD_SIG(fn, sig, ...) \
    FFI(fn, "a signature outside the grammar", C_HOST, E_INVAL, .z = sig, __VA_ARGS__)
#define BAD_SIGS(fn, ...)                                                                     \
    BAD_SIG(fn, 1, __VA_ARGS__), BAD_SIG(fn, 2, __VA_ARGS__), BAD_SIG(fn, 3, __VA_ARGS__),    \
    BAD_SIG(fn, 4, __VA_ARGS__), BAD_SIG(fn, 5, __VA_ARGS__), BAD_SIG(fn, 6, __VA_ARGS__),    \
    BAD_SIG(fn, 7, __VA_ARGS__), BAD_SIG(fn, 8, __VA_ARGS__), BAD_SIG(fn, 9, __VA_ARGS__),    \
    BAD_SIG(fn, 10, __VA_ARGS__), BAD_SIG(fn, 11, __VA_ARGS__), BAD_SIG(fn, 12, __VA_ARGS__), \
    BAD_SIG(fn, 13, __VA_ARGS__), BAD_SIG(fn, 14, __VA_ARGS__), BAD_SIG(fn, 15, __VA_ARGS__)
/* Wrong handles for a function, worker or callback argument. */
#define FFI_WRONG(fn, ctx, want, ...)                                                        \
    FFI(fn, "NULL handle", ctx, want, .h = H_NULL, __VA_ARGS__),                             \
    FFI(fn, "another VM's handle", ctx, want, .h = H_FOREIGN, __VA_ARGS__),                  \
    FFI(fn, "a semaphore", ctx, want, .h = H_SEM, __VA_ARGS__),                              \
    FFI(fn, "zeroed memory", ctx, want, .h = H_G_ZERO, __VA_ARGS__),                         \
    FFI(fn, "0xFF memory", ctx, want, .h = H_G_ONES, __VA_ARGS__),                           \
    FFI(fn, "text", ctx, want, .h = H_G_TEXT, __VA_ARGS__)
/* Arguments an i64 refuses, on a 61-bit VM. */
#define FFI_BAD_VALUES(fn, ctx, ...)                                                              \
    FCALL(fn, "2^64 - 1 for i64", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_BOX_MAX)}, __VA_ARGS__),       \
    FCALL(fn, "2^63 for i64", ctx, BAD_ARG, .n = 2, .o = {OB(OB_BOX_2_63), SI(1)}, __VA_ARGS__),          \
    FCALL(fn, "a float for i64", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OBF_FLOAT)}, __VA_ARGS__),         \
    FCALL(fn, "an address for i64", ctx, BAD_ARG, .n = 2, .o = {OB(OBF_ADDR), SI(1)}, __VA_ARGS__),       \
    FCALL(fn, "nil for i64", ctx, BAD_ARG, .n = 2, .o = {SI(1), RAW(STVM_NIL)}, __VA_ARGS__),             \
    FCALL(fn, "another VM's box", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_FOREIGN_BOX)}, __VA_ARGS__),   \
    FCALL(fn, "a released box", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_RELEASED)}, __VA_ARGS__),        \
    FCALL(fn, "a semaphore", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_SEM)}, __VA_ARGS__),                \
    FCALL(fn, "an unmapped word", ctx, BAD_ARG, .n = 2, .o = {SI(1), RAW(GARBAGE)}, __VA_ARGS__),         \
    FCALL(fn, "zeroed memory", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_G_ZERO)}, __VA_ARGS__),           \
    FCALL(fn, "one argument of two", ctx, BAD_NARGS, .n = 1, .o = TWO, __VA_ARGS__),                        \
    FCALL(fn, "three arguments of two", ctx, BAD_NARGS, .n = 3, .o = {SI(1), SI(2), SI(3)},       \
          __VA_ARGS__),                                                                          \
    FCALL(fn, "no argument of two, args NULL", ctx, BAD_NARGS, .n = 0, .null_ptr = true,          \
          __VA_ARGS__),                                                                          \
    FFI(fn, "nargs -1", ctx, E_INVAL, .n = -1, .o = TWO, __VA_ARGS__),                            \
    FFI(fn, "args NULL with nargs 2", ctx, E_INVAL, .n = 2, .null_ptr = true, __VA_ARGS__)
/* Words that are no float, or no address, of V_MAIN. */
#define FFI_NOT_OF(fn, want_ok, ...)                                                        \
    FFI(fn, "a SmallInteger", C_HOST, E_INVAL, .o = {SI(1)}),                                \
    FFI(fn, "a boxed integer", C_HOST, E_INVAL, .o = {OB(OB_BOX_MAX)}),                      \
    FFI(fn, "a released box", C_HOST, E_INVAL, .o = {OB(OB_RELEASED)}),                      \
    FFI(fn, "a semaphore", C_HOST, E_INVAL, .o = {OB(OB_SEM)}),                              \
    FFI(fn, "an unmapped word", C_HOST, E_INVAL, .o = {RAW(GARBAGE)}),                       \
    FFI(fn, "zeroed memory", C_HOST, E_INVAL, .o = {OB(OB_G_ZERO)}),                         \
    FFI(fn, "true", C_HOST, E_INVAL, .o = {RAW(STVM_TRUE)}),                                 \
    FFI(fn, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL, .o = {OB(want_ok)}),                   \
    FFI(fn, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true, .o = {OB(want_ok)}),    \
    __VA_ARGS__

static const row ffi_rows[] = {
    /* looking functions up */
    FFI(ffi_function_new, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_function_new, "NULL symbol", C_HOST, E_INVAL, .s2 = NULL_STR),
    FFI(ffi_function_new, "NULL signature", C_HOST, E_INVAL, .null_ptr = true),
    FFI(ffi_function_new, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI(ffi_function_new, "a library that does not load", C_HOST, E_INVAL,
        .s = "libstvm-no-such-library.so.0"),
    FFI(ffi_function_new, "a library given as a path that is a directory", C_HOST, E_INVAL,
        .s = "/"),
    FFI(ffi_function_new, "a symbol the program does not have", C_HOST, E_INVAL,
        .s2 = "stvm_no_such_symbol_anywhere"),
    FFI(ffi_function_new, "an empty symbol", C_HOST, E_INVAL, .s2 = ""),
    FFI(ffi_function_new, "a symbol libm does not have", C_HOST, E_INVAL, .s = "libm.so.6",
        .s2 = "stvm_no_such_symbol_anywhere"),
    FFI(ffi_function_new, "a missing symbol, from a green process", C_GREEN, E_INVAL,
        .s2 = "stvm_no_such_symbol_anywhere"),
    FFI(ffi_function_new, "a bad signature for a symbol that exists, 31-bit VM", C_HOST, E_INVAL,
        .vm = V_31, .z = 2),
    BAD_SIGS(ffi_function_new, .vm = V_MAIN),
    FFI(ffi_function_at, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_function_at, "NULL address", C_HOST, E_INVAL, .n = 1),
    FFI(ffi_function_at, "NULL signature", C_HOST, E_INVAL, .null_ptr = true),
    FFI(ffi_function_at, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    BAD_SIGS(ffi_function_at, .vm = V_MAIN),
    FFI(ffi_function_free, "NULL vm", C_HOST, R_VOID, .vm = V_NULL),
    FFI_WRONG(ffi_function_free, C_HOST, R_VOID),
    FFI_WRONG(ffi_function_free, C_GREEN, R_VOID),
    FFI(ffi_function_set_stack, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL, .z = FFI_FX_STACK),
    FFI(ffi_function_set_stack, "64 MiB + 1", C_HOST, E_INVAL, .z = ((size_t)64 << 20) + 1),
    FFI(ffi_function_set_stack, "SIZE_MAX", C_HOST, E_INVAL, .z = SIZE_MAX),
    FFI_WRONG(ffi_function_set_stack, C_HOST, E_INVAL, .z = FFI_FX_STACK),

    /* same-thread callouts: checked before anything is called */
    FFI(ffi_call, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL, .n = 2, .o = TWO),
    FFI_WRONG(ffi_call, C_HOST, E_INVAL, .n = 2, .o = TWO),
    FFI_WRONG(ffi_call, C_GREEN, E_INVAL, .n = 2, .o = TWO),
    FFI_BAD_VALUES(ffi_call, C_HOST),
    FFI_BAD_VALUES(ffi_call, C_GREEN),
    FFI_BAD_VALUES(ffi_call, C_THREAD),
    FCALL(ffi_call, "2^30 on a 31-bit VM (a tagged word it does not have)", C_HOST, BAD_ARG,
          .vm = V_31, .n = 2, .o = {SI(1), SI(MAX31 + 1)}),
    FCALL(ffi_call, "2^40 tagged on a 31-bit VM", C_GREEN, BAD_ARG, .vm = V_31, .n = 2,
          .o = {SI(WIDE), SI(1)}),
    FCALL(ffi_call, "another VM's float", C_HOST, BAD_ARG, .n = 2, .o = {OB(OBF_FOREIGN_FLOAT), SI(1)}),
    FFI(ffi_call, "while the VM runs on another thread, from a process of another VM",
        C_ELSEWHERE, STVM_ENOTPROC, .n = 2, .o = TWO),
    FFI(ffi_call, "while the VM runs on another thread, from that thread", C_BARE,
        STVM_ENOTPROC, .n = 2, .o = TWO),

    /* threaded callouts */
    FFI(ffi_call_threaded, "NULL vm", C_GREEN, E_INVAL, .vm = V_NULL, .n = 2, .o = TWO),
    FFI_WRONG(ffi_call_threaded, C_GREEN, E_INVAL, .vm = V_NET, .n = 2, .o = TWO),
    FFI_BAD_VALUES(ffi_call_threaded, C_GREEN, .vm = V_NET),
    FFI(ffi_call_threaded, "a VM whose external table is full", C_GREEN, STVM_EFULL, .n = 2,
        .o = TWO),
    FFI(ffi_call_threaded, "outside a green process of the VM", C_HOST, STVM_ENOTPROC, .n = 2,
        .o = TWO),
    FFI(ffi_call_threaded, "outside a green process of the VM", C_THREAD, STVM_ENOTPROC,
        .n = 2, .o = TWO),
    FFI(ffi_call_threaded, "outside a green process of the VM", C_ELSEWHERE, STVM_ENOTPROC,
        .n = 2, .o = TWO),
    FFI(ffi_call_threaded, "outside a green process of the VM", C_BARE, STVM_ENOTPROC, .n = 2,
        .o = TWO),
    FFI(ffi_call_on, "NULL vm", C_GREEN, E_INVAL, .vm = V_NULL, .n = 2, .o = TWO),
    FFI(ffi_call_on, "another VM's worker", C_GREEN, E_INVAL, .vm = V_NET, .t = H_FOREIGN,
        .n = 2, .o = TWO),
    FFI(ffi_call_on, "a semaphore as the worker", C_GREEN, E_INVAL, .vm = V_NET, .t = H_SEM,
        .n = 2, .o = TWO),
    FFI(ffi_call_on, "zeroed memory as the worker", C_GREEN, E_INVAL, .vm = V_NET,
        .t = H_G_ZERO, .n = 2, .o = TWO),
    FFI(ffi_call_on, "0xFF memory as the worker", C_GREEN, E_INVAL, .vm = V_NET, .t = H_G_ONES,
        .n = 2, .o = TWO),
    FFI_WRONG(ffi_call_on, C_GREEN, E_INVAL, .vm = V_NET, .n = 2, .o = TWO),
    FFI_BAD_VALUES(ffi_call_on, C_GREEN, .vm = V_NET),
    FFI(ffi_call_on, "outside a green process of the VM", C_HOST, STVM_ENOTPROC, .n = 2,
        .o = TWO),
    FFI(ffi_call_on, "outside a green process of the VM", C_ELSEWHERE, STVM_ENOTPROC, .n = 2,
        .o = TWO),

    /* workers, failures, counters */
    FFI(ffi_worker_new, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_worker_new, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI(ffi_worker_free, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI_WRONG(ffi_worker_free, C_HOST, E_INVAL),
    FFI_WRONG(ffi_worker_free, C_GREEN, E_INVAL),
    FFI(ffi_last_failure, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_last_failure, "answers a code, changing nothing", C_HOST, R_COUNT),
    FFI(ffi_last_failure, "answers a code, changing nothing", C_ELSEWHERE, R_COUNT),
    FFI(ffi_get_stats, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_get_stats, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI(ffi_get_stats, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_ffi_stats) + 8),

    /* floats and addresses */
    FFI(float_new, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(float_new, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI(ptr_oop, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ptr_oop, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI_NOT_OF(float_value, OBF_FLOAT,
               FFI(float_value, "an address", C_HOST, E_INVAL, .o = {OB(OBF_ADDR)}),
               FFI(float_value, "another VM's float", C_HOST, E_INVAL,
                   .o = {OB(OBF_FOREIGN_FLOAT)}),
               FFI(float_value, "nil", C_HOST, E_INVAL, .o = {RAW(STVM_NIL)})),
    FFI_NOT_OF(oop_ptr, OBF_ADDR,
               FFI(oop_ptr, "a float", C_HOST, E_INVAL, .o = {OB(OBF_FLOAT)}),
               FFI(oop_ptr, "another VM's address", C_HOST, E_INVAL,
                   .o = {OB(OBF_FOREIGN_ADDR)}),
               FFI(oop_ptr, "a ByteArray of another VM", C_HOST, E_INVAL,
                   .o = {OB(OB_FOREIGN_BYTES)})),

    /* callbacks */
    FFI(ffi_callback_new, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_callback_new, "NULL signature", C_HOST, E_INVAL, .vm = V_OTHER, .null_ptr = true),
    FFI(ffi_callback_new, "NULL handler", C_HOST, E_INVAL, .vm = V_OTHER, .null_fail = true),
    FFI(ffi_callback_new, "NULL out-parameter", C_HOST, E_INVAL, .vm = V_OTHER,
        .null_out = true),
    FFI(ffi_callback_new, "NULL c_function", C_HOST, E_INVAL, .vm = V_OTHER, .m = 1),
    BAD_SIGS(ffi_callback_new, .vm = V_OTHER),
    FFI(ffi_callback_new, "the first on a VM whose external table is full", C_HOST, STVM_EFULL),
    FFI(ffi_callback_free, "NULL vm", C_HOST, R_VOID, .vm = V_NULL, .h = H_FOREIGN),
    FFI_WRONG(ffi_callback_free, C_HOST, R_VOID, .vm = V_MAIN),
};
#define N_FFI_ROWS ((int)(sizeof ffi_rows / sizeof ffi_rows[0]))
/* Tracing. No VM of the fixture records, so every call that needs a ring answers
 * ESTATE (or an empty count), and a refused start must not make one. */
#define TRACE_ROWS(ctx)                                                                      \
    ROW(trace_start, "NULL vm", ctx, E_INVAL, .vm = V_NULL, .z = 8),                         \
    ROW(trace_start, "0 events", ctx, E_INVAL, .z = 0),                                      \
    ROW(trace_start, "2^24 + 1 events", ctx, E_INVAL, .z = STVM_TRACE_MAX_EVENTS + 1),       \
    ROW(trace_start, "SIZE_MAX events", ctx, E_INVAL, .z = SIZE_MAX),                        \
    ROW(trace_stop, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                                  \
    ROW(trace_stop, "not recording", ctx, E_STATE),                                          \
    ROW(trace_dropped, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                               \
    ROW(trace_dropped, "no ring: 0", ctx, R_COUNT),                                          \
    ROW(trace_count, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                                 \
    ROW(trace_count, "no ring: 0", ctx, R_COUNT),                                            \
    ROW(trace_get, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                                   \
    ROW(trace_get, "NULL out", ctx, E_INVAL, .null_out = true),                              \
    ROW(trace_get, "no ring: index 0", ctx, STVM_ERANGE, .z = 0),                            \
    ROW(trace_get, "struct size from a newer header", ctx, STVM_ESIZE,                        \
        .ssize = sizeof(stvm_trace_event) + 8),                                               \
    ROW(trace_get, "no ring: index SIZE_MAX", ctx, STVM_ERANGE, .z = SIZE_MAX),              \
    ROW(trace_set_hook, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                              \
    ROW(trace_process_name, "NULL vm", ctx, E_INVAL, .vm = V_NULL, .n = 1),                  \
    ROW(trace_process_name, "NULL buf", ctx, E_INVAL, .n = 1, .null_ptr = true),             \
    ROW(trace_process_name, "no ring", ctx, E_STATE, .n = 1),                                \
    ROW(trace_kind_name, "kind -1", ctx, R_NULL, .n = -1),                                   \
    ROW(trace_kind_name, "kind STVM_TRACE_KINDS", ctx, R_NULL, .n = STVM_TRACE_KINDS),       \
    ROW(trace_kind_name, "kind INT_MIN", ctx, R_NULL, .n = INT_MIN),                         \
    ROW(trace_write_text, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                            \
    ROW(trace_write_text, "NULL FILE", ctx, E_INVAL, .null_ptr = true),                      \
    ROW(trace_write_text, "no ring", ctx, E_STATE),                                          \
    ROW(trace_write_json, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                            \
    ROW(trace_write_json, "NULL path", ctx, E_INVAL, .null_ptr = true),                      \
    ROW(trace_write_json, "no ring", ctx, E_STATE)
static const row trace_rows[] = {TRACE_ROWS(C_HOST), TRACE_ROWS(C_GREEN), TRACE_ROWS(C_THREAD)};
#define N_TRACE_ROWS ((int)(sizeof trace_rows / sizeof trace_rows[0]))

/* ---- generating the matrix --------------------------------------------------------- */

typedef struct table {
    row *rows;
    int n, cap;
    int generated;
} table;

static void add(table *t, row r)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 512;
        t->rows = realloc(t->rows, (size_t)t->cap * sizeof *t->rows);
        cr_assert_not_null(t->rows);
    }
    t->rows[t->n++] = r;
}

/* Calls with a NULL vm. */
static void gen_null_vm(table *t, int fn)
{
    if (!FN[fn].null_vm)
        return;
    row r = {
        .fn = fn, .what = "NULL vm", .ctx = FN[fn].ctx, .a = FN[fn].ok, .want = FN[fn].null_vm};
    r.a.vm = V_NULL;
    add(t, r);
}

/* Calls with a NULL out-parameter. */
static void gen_null_out(table *t, int fn)
{
    if (!FN[fn].null_out)
        return;
    row r = {.fn = fn, .what = "NULL out-parameter", .ctx = FN[fn].ctx, .a = FN[fn].ok,
             .want = FN[fn].null_out};
    r.a.null_out = true;
    add(t, r);
}

/* Every wrong handle for the function's handle argument. */
static void gen_wrong_handles(table *t, int fn)
{
    int kind = FN[fn].kind;
    if (kind == K_NONE)
        return;
    const int *wrong = FN[fn].wrong ? FN[fn].wrong : wrong_handles[kind];
    for (int i = 0; wrong[i]; i++) {
        row r = {.fn = fn, .what = handle_names[wrong[i]], .ctx = FN[fn].ctx, .a = FN[fn].ok,
                 .want = FN[fn].bad_handle};
        r.a.h = wrong[i];
        add(t, r);
    }
}

/* A function that needs a green process of its VM, called from the host thread, from
 * another VM's process on another thread, and from there while the VM runs. */
static void gen_wrong_context(table *t, int fn)
{
    if (!FN[fn].not_proc)
        return;
    static const int ctxs[] = {C_HOST, C_THREAD, C_ELSEWHERE};
    for (size_t i = 0; i < sizeof ctxs / sizeof ctxs[0]; i++) {
        if (ctxs[i] == C_ELSEWHERE && FN[fn].not_proc >= R_VOID)
            continue;   /* not an error: stvm_vm_active_process names the VM's running one */
        row r = {.fn = fn, .what = "outside a green process of the VM", .ctx = ctxs[i],
                 .a = FN[fn].ok, .want = FN[fn].not_proc,
                 .defect = ctxs[i] == C_ELSEWHERE ? FN[fn].elsewhere_defect : NULL};
        add(t, r);
    }
}

/* Each broken configuration field, to stvm_config_check and to stvm_vm_create. */
static void gen_configs(table *t)
{
    for (int c = CFG_OK + 1; c < N_CFG; c++) {
        add(t, (row){.fn = F_config_check, .what = cfg_faults[c].field, .ctx = C_HOST,
                     .a = {.cfg = c}, .want = E_INVAL, .text = cfg_faults[c].field});
        add(t, (row){.fn = F_vm_create, .what = cfg_faults[c].field, .ctx = C_HOST, .a = {.cfg = c},
                     .want = E_INVAL});
    }
}

/* Each non-integer as each operand of each integer function. */
static void gen_non_integers(table *t)
{
    for (int i = 0; i < N_NON_INTEGERS; i++) {
        const char *w = non_integers[i].what;
        ospec o = non_integers[i].o;
        add(t, (row){.fn = F_int_to_i64, .what = w, .a = {.o = {o}}, .want = E_INVAL});
        add(t, (row){.fn = F_int_to_u64, .what = w, .a = {.o = {o}}, .want = E_INVAL});
        add(t, (row){.fn = F_oop_is_integer, .what = w, .a = {.o = {o}}, .want = R_FALSE});
        static const int binary[] = {F_int_add, F_int_sub, F_int_mul, F_int_compare};
        for (int b = 0; b < 4; b++) {
            add(t, (row){.fn = binary[b], .what = w, .a = {.o = {o, SI(1)}}, .want = E_INVAL});
            add(t, (row){.fn = binary[b], .what = w, .a = {.o = {SI(1), o}}, .want = E_INVAL});
        }
        if (o.k != O_RAW || o.v != STVM_NIL)   /* nil is ignored, as documented */
            add(t, (row){.fn = F_oop_release, .what = w, .a = {.o = {o}}, .want = E_INVAL});
        add(t, (row){.fn = F_primitive_call, .what = w, .a = {.m = 21, .n = 1, .o = {o, SI(1)}},
                     .want = STVM_EPRIM, .want_fail = BAD_RCV});
    }
}

/* Each bad receiver for each primitive that takes a semaphore, process or mutex. */
static void gen_bad_receivers(table *t)
{
    for (size_t p = 0; p < sizeof receiver_prims / sizeof receiver_prims[0]; p++)
        for (size_t i = 0; i < sizeof bad_receivers / sizeof bad_receivers[0]; i++) {
            if (bad_receivers[i].not_for == receiver_prims[p].wants)
                continue;   /* the right kind: not a bad receiver */
            add(t, (row){.fn = F_primitive_call, .what = bad_receivers[i].what,
                         .ctx = receiver_prims[p].ctx,
                         .a = {.m = receiver_prims[p].number, .o = {bad_receivers[i].o}},
                         .want = STVM_EPRIM, .want_fail = BAD_RCV});
        }
}

static table table_build(void)
{
    table t = {0};
    for (int fn = 0; fn < N_FN; fn++) {
        gen_null_vm(&t, fn);
        gen_null_out(&t, fn);
        gen_wrong_handles(&t, fn);
        gen_wrong_context(&t, fn);
    }
    gen_configs(&t);
    gen_non_integers(&t);
    gen_bad_receivers(&t);
    t.generated = t.n;
    for (int i = 0; i < N_EXPLICIT; i++)
        add(&t, explicit_rows[i]);
    for (int i = 0; i < N_FFI_ROWS; i++)
        add(&t, ffi_rows[i]);
    for (int i = 0; i < N_TRACE_ROWS; i++)
        add(&t, trace_rows[i]);
    return t;
}

/* ---- setting up the fixture ----------------------------------------------------------- */

static void park_fn(stvm_vm *vm, void *arg)
{
    fx *f = arg;
    stvm_semaphore_wait(vm, f->park);
}

static void unheld_fn(stvm_vm *vm, void *arg)
{
    fx *f = arg;
    f->unheld = stvm_vm_active_process(vm);
    stvm_semaphore_wait(vm, f->park);
}

static void owner_fn(stvm_vm *vm, void *arg)
{
    fx *f = arg;
    GCHECK(f, stvm_mutex_enter(vm, f->busy) == STVM_OK);
    GCHECK(f, stvm_mutex_enter(vm, f->busy2) == STVM_OK);
    GCHECK(f, stvm_monitor_enter(vm, f->monitor_owned) == STVM_OK);
    GCHECK(f, stvm_monitor_enter(vm, f->monitor_owned) == STVM_OK);
    stvm_semaphore_wait(vm, f->park);
}

static void mwaiter_fn(stvm_vm *vm, void *arg)
{
    fx *f = arg;
    stvm_mutex_enter(vm, f->busy);
}

/* Enters monitor_waited and waits on its default condition for ever (it is free then). */
static void monitor_waiter_fn(stvm_vm *vm, void *arg)
{
    fx *f = arg;
    GCHECK(f, stvm_monitor_enter(vm, f->monitor_waited) == STVM_OK);
    stvm_monitor_wait(vm, f->monitor_waited);
}

/* ---- catching the VM's own processes ---- */

static struct {
    stvm_vm *vm;
    stvm_process *me;
    stvm_process *volatile seen[2];
} catcher;

/* On the VM's thread, at any instruction: who runs now? */
static void on_sample(int sig)
{
    (void)sig;
    if (!catcher.vm)
        return;
    stvm_process *p = stvm_vm_active_process(catcher.vm);
    if (!p || p == catcher.me || p == catcher.seen[0] || p == catcher.seen[1])
        return;
    if (!catcher.seen[0])
        catcher.seen[0] = p;
    else if (!catcher.seen[1])
        catcher.seen[1] = p;
}

static void catcher_fn(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (long i = 0; i < 2000000 && !(catcher.seen[0] && catcher.seen[1]); i++)
        stvm_delay_wait_us(vm, 1);
}

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* The idle and timing processes have no public handle: sample stvm_vm_active_process
 * every 20 us (a timer signal to this thread) while a process sleeps on 1 us Delays,
 * so that the idle process (jumping the clock) and the timing process (expiring the
 * Delays) each run often, until both have been seen. */
static void catch_vm_own(fx *f)
{
    stvm_vm *vm = f->vm[V_MAIN];
    memset(&catcher, 0, sizeof catcher);
    catcher.vm = vm;
    struct sigaction sa = {.sa_handler = on_sample, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGPROF, &sa, NULL), 0);
    struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF};
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    cr_assert_eq(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
    struct itimerspec its = {.it_interval = {0, 20000}, .it_value = {0, 20000}};
    cr_assert_eq(timer_settime(timer, 0, &its, NULL), 0);
    stvm_process *c = NULL;
    cr_assert_eq(stvm_spawn(vm, 40, "catcher", catcher_fn, NULL, &c), STVM_OK);
    catcher.me = c;   /* before it first runs: never mistaken for a VM process */
    int rc = stvm_run(vm);
    timer_delete(timer);
    catcher.vm = NULL;   /* a signal still pending finds nothing to look at */
    signal(SIGPROF, SIG_IGN);
    cr_assert_eq(rc, STVM_OK, "stvm_run: %s", stvm_err_name(rc));
    for (int i = 0; i < 2; i++) {
        stvm_process_info info;
        cr_assert_not_null(catcher.seen[i], "the VM's own processes were not both caught");
        cr_assert_eq(stvm_process_get_info(vm, catcher.seen[i], &info), STVM_OK);
        cr_assert(info.vm_own, "caught '%s', not a VM process", info.name);
        if (info.id == 1)
            f->idle = catcher.seen[i];
        else
            f->timing = catcher.seen[i];
    }
    cr_assert(f->idle && f->timing, "idle and timing processes caught");
    cr_assert_eq(stvm_process_release(vm, c), STVM_OK);
}

static void watch_sem(fx *f, int v, stvm_semaphore *s)
{
    cr_assert_lt(f->nwsem, N_WATCH_SEM);
    f->wsem[f->nwsem].vm = v;
    f->wsem[f->nwsem++].s = s;
}

static void watch_mutex(fx *f, int v, stvm_mutex *m)
{
    cr_assert_lt(f->nwmutex, N_WATCH_MUTEX);
    f->wmutex[f->nwmutex].vm = v;
    f->wmutex[f->nwmutex++].m = m;
}

static void watch_monitor(fx *f, int v, stvm_monitor *m)
{
    cr_assert_lt(f->nwmonitor, N_WATCH_MONITOR);
    f->wmonitor[f->nwmonitor].vm = v;
    f->wmonitor[f->nwmonitor++].m = m;
}

static void watch_proc(fx *f, int v, stvm_process *p)
{
    cr_assert_lt(f->nwproc, N_WATCH_PROC);
    f->wproc[f->nwproc].vm = v;
    f->wproc[f->nwproc++].p = p;
}

static void watch_socket(fx *f, int v, stvm_socket *s, bool probe)
{
    cr_assert_lt(f->nwsock, N_WATCH_SOCK);
    cr_assert_not_null(s);
    f->wsock[f->nwsock].vm = v;
    f->wsock[f->nwsock].probe = probe;
    f->wsock[f->nwsock++].s = s;
}

static void watch_stream(fx *f, int v, stvm_stream *st)
{
    cr_assert_lt(f->nwstream, N_WATCH_STREAM);
    cr_assert_not_null(st);
    f->wstream[f->nwstream].vm = v;
    f->wstream[f->nwstream++].st = st;
}

static void watch_record(fx *f, int v, stvm_oop rec)
{
    cr_assert_lt(f->nwrec, N_WATCH_RECORD);
    f->wrec[f->nwrec].vm = v;
    f->wrec[f->nwrec++].rec = rec;
}

/* ---- sockets and streams ---- */

typedef struct net_setup {
    fx *f;
    int v;
    bool full;   /* V_NET: the second listener and pair, data waiting on srv */
} net_setup;

/* A green process of the VM makes its sockets and streams (see netset). */
static void net_setup_fn(stvm_vm *vm, void *arg)
{
    net_setup *ns = arg;
    fx *f = ns->f;
    netset *n = &f->net[ns->v];
    char b;
    GCHECK(f, stvm_tcp_listen(vm, "127.0.0.1", 0, 4, &n->lst) == STVM_OK);
    n->port = stvm_socket_port(n->lst);
    GCHECK(f, n->port > 0);
    GCHECK(f, stvm_tcp_connect(vm, "127.0.0.1", n->port, -1, &n->cli) == STVM_OK);
    GCHECK(f, stvm_socket_accept(vm, n->lst, -1, &n->srv) == STVM_OK);
    GCHECK(f, stvm_stream_open(vm, n->srv, -1, &n->st) == STVM_OK);
    /* The public calls make their ByteArray on first use: made here, not by a row. */
    GCHECK(f, stvm_socket_recv(vm, n->cli, &b, 1, 0) == STVM_ETIMEDOUT);
    if (!ns->full)
        return;
    GCHECK(f, stvm_tcp_listen(vm, "127.0.0.1", 0, 4, &n->busy_lst) == STVM_OK);
    GCHECK(f, stvm_tcp_connect(vm, "127.0.0.1", n->port, -1, &n->cli2) == STVM_OK);
    GCHECK(f, stvm_socket_accept(vm, n->lst, -1, &n->srv2) == STVM_OK);
    GCHECK(f, stvm_stream_open(vm, n->srv2, -1, &n->st2) == STVM_OK);
    GCHECK(f, stvm_socket_recv(vm, n->srv2, &b, 1, 0) == STVM_ETIMEDOUT);
    /* Data waiting for srv's stream: a read of it never waits (the rows that read it
     * from the wrong thread must not switch the VM there, see KNOWN DEFECTS). */
    GCHECK(f, stvm_socket_send(vm, n->cli, "data\n", 5, -1) == 5);
}

static void net_make(fx *f, int v, bool full)
{
    net_setup ns = {f, v, full};
    cr_assert_eq(stvm_spawn(f->vm[v], 40, "net setup", net_setup_fn, &ns, NULL), STVM_OK);
    int rc = stvm_run(f->vm[v]);
    cr_assert_eq(rc, STVM_OK, "net setup: %s", stvm_err_name(rc));
    ASSERT_GREEN_OK(f);
    f->sock[v] = f->net[v].cli;
    f->stream[v] = f->net[v].st;
    cr_assert_eq(stvm_bytes_new(f->vm[v], 16, &f->bytes[v]), STVM_OK);
}

/* primitiveSocketCreate3Semaphores: an unconnected TCP socket record, no semaphores. */
static stvm_oop make_record(stvm_vm *vm)
{
    stvm_oop argv[7] = {SI_OOP(0), SI_OOP(0), SI_OOP(8000), SI_OOP(8000), SI_OOP(0), SI_OOP(0),
                        SI_OOP(0)};
    stvm_oop rec = STVM_NIL;
    cr_assert_eq(stvm_primitive_call_named(vm, "SocketPlugin", "primitiveSocketCreate3Semaphores",
                                           STVM_NIL, argv, 7, &rec, NULL),
                 STVM_OK);
    return rec;
}

static void acceptor_fn(stvm_vm *vm, void *arg)
{
    fx *f = arg;
    stvm_socket *s = NULL;
    stvm_socket_accept(vm, f->net[V_NET].busy_lst, -1, &s);   /* nobody connects */
    GCHECK(f, false);
}

static void reader_fn(stvm_vm *vm, void *arg)
{
    fx *f = arg;
    char b[16];
    stvm_stream_read(vm, f->net[V_NET].st2, b, sizeof b);   /* nobody sends */
    GCHECK(f, false);
}

static stvm_process *held(fx *f, int prio, const char *name, stvm_fn fn)
{
    stvm_process *p = NULL;
    cr_assert_eq(stvm_spawn(f->vm[V_MAIN], prio, name, fn, f, &p), STVM_OK);
    return p;
}

static stvm_vm *sim_vm_with(int bits, int dclock, uint64_t start, int ext_slots)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.smallint_bits = bits;
    cfg.delay_clock = dclock;
    cfg.sim_start_us = start;
    cfg.external_table_size = ext_slots;
    return vm_make(&cfg);
}

static void fx_setup(fx *f)
{
    memset(f, 0, sizeof *f);
    atomic_init(&f->parked, 0);
    memset(g_ones, 0xFF, sizeof g_ones);
    snprintf((char *)g_text, sizeof g_text, "%s", "readable text, not a handle of any kind");
    f->vm[V_MAIN] = sim_vm_with(61, STVM_DELAY_CLOCK_US, SIM_START, 2);
    f->vm[V_OTHER] = sim_vm_with(61, STVM_DELAY_CLOCK_US, SIM_START, 256);
    f->vm[V_31] = sim_vm_with(31, STVM_DELAY_CLOCK_US, SIM_START, 256);
    f->vm[V_MS] = sim_vm_with(61, STVM_DELAY_CLOCK_MS, SIM_START, 256);
    f->vm[V_END] = sim_vm_with(61, STVM_DELAY_CLOCK_US, CLOCK_END - 500, 256);
    f->vm[V_NET] = sim_vm_with(61, STVM_DELAY_CLOCK_US, SIM_START, 256);
    for (int k = K_SEM; k < N_KIND; k++) {
        forge(g_forged[0][k], kind_class[k], f->vm[V_OTHER]);
        forge(g_forged[1][k], kind_class[k], f->vm[V_MAIN]);
    }
    forge(g_forged_record, 7, f->vm[V_OTHER]);   /* STVM_CLASS_SOCKET_HANDLE */
    for (int v = 0; v < N_VM; v++) {
        f->sem[v] = sem_make(f->vm[v]);
        cr_assert_eq(stvm_delay_new_ms(f->vm[v], 1, &f->delay[v]), STVM_OK);
        cr_assert_eq(stvm_queue_new(f->vm[v], 0, &f->queue[v]), STVM_OK);
        cr_assert_eq(stvm_local_new(f->vm[v], 0, NULL, NULL, NULL, &f->local[v]), STVM_OK);
        cr_assert_eq(stvm_mutex_new(f->vm[v], &f->mtx[v]), STVM_OK);
        cr_assert_eq(stvm_monitor_new(f->vm[v], &f->monitor[v]), STVM_OK);
        watch_sem(f, v, f->sem[v]);
        watch_mutex(f, v, f->mtx[v]);
    }
    f->nprims = stvm_primitive_numbers(NULL, 0);
    f->nnamed = stvm_primitive_named_list(NULL, NULL, 0);

    /* V_MAIN: the VM's own processes first, then objects in every state. */
    stvm_vm *vm = f->vm[V_MAIN];
    catch_vm_own(f);
    f->sem_excess = sem_make(vm);
    cr_assert_eq(stvm_semaphore_signal(vm, f->sem_excess), STVM_OK);
    cr_assert_eq(stvm_queue_new(vm, 1, &f->queue_full), STVM_OK);
    cr_assert_eq(stvm_queue_put(vm, f->queue_full, f), STVM_OK);
    cr_assert_eq(stvm_queue_new(f->vm[V_OTHER], 0, &f->queue_open), STVM_OK);
    cr_assert_eq(stvm_queue_open_external(f->vm[V_OTHER], f->queue_open), STVM_OK);
    cr_assert_eq(stvm_queue_new(vm, 0, &f->queue_closed), STVM_OK);
    cr_assert_eq(stvm_queue_close(vm, f->queue_closed), STVM_OK);
    cr_assert_eq(stvm_queue_new(f->vm[V_OTHER], 0, &f->queue_open_closed), STVM_OK);
    cr_assert_eq(stvm_queue_open_external(f->vm[V_OTHER], f->queue_open_closed), STVM_OK);
    cr_assert_eq(stvm_queue_close(f->vm[V_OTHER], f->queue_open_closed), STVM_OK);
    cr_assert_eq(stvm_local_new(vm, STVM_LOCAL_DYNAMIC, NULL, NULL, NULL, &f->local_dyn),
                 STVM_OK);
    f->park = sem_make(vm);
    f->ext = sem_make(vm);
    stvm_semaphore *ext2 = sem_make(vm);
    cr_assert_eq(stvm_external_register(vm, f->ext, &f->ext_index), STVM_OK);
    int index2;
    cr_assert_eq(stvm_external_register(vm, ext2, &index2), STVM_OK);   /* now full */
    cr_assert_eq(stvm_mutex_new(vm, &f->busy), STVM_OK);
    cr_assert_eq(stvm_mutex_new(vm, &f->busy2), STVM_OK);
    cr_assert_eq(stvm_monitor_new(vm, &f->monitor_owned), STVM_OK);
    cr_assert_eq(stvm_monitor_new(vm, &f->monitor_waited), STVM_OK);
    watch_monitor(f, V_MAIN, f->monitor[V_MAIN]);
    watch_monitor(f, V_MAIN, f->monitor_owned);
    watch_monitor(f, V_MAIN, f->monitor_waited);
    watch_monitor(f, V_OTHER, f->monitor[V_OTHER]);
    cr_assert_eq(stvm_spawn_suspended(vm, 40, "suspended", nothing_fn, NULL, 0, &f->susp[V_MAIN]),
                 STVM_OK);
    f->done = held(f, 40, "done", nothing_fn);
    f->waiting = held(f, 40, "waiting", park_fn);
    f->owner = held(f, 40, "owner", owner_fn);
    f->mwaiter = held(f, 40, "mutex waiter", mwaiter_fn);
    cr_assert_eq(stvm_spawn(vm, 40, "unheld", unheld_fn, f, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "monitor waiter", monitor_waiter_fn, f, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    ASSERT_GREEN_OK(f);
    f->ready = held(f, 30, "ready", park_fn);   /* ready until a green phase runs it */
    ffi_make(f);   /* before the released box, whose address nothing may take */
    f->box_max = mk_u(vm, UINT64_MAX);
    f->box_neg = mk_i(vm, INT64_MIN);
    f->box_2_63 = mk_u(vm, (uint64_t)1 << 63);
    f->released = mk_u(vm, ((uint64_t)1 << 63) + 1);
    cr_assert_eq(stvm_oop_release(vm, f->released), STVM_OK);
    watch_sem(f, V_MAIN, f->sem_excess);
    watch_sem(f, V_MAIN, f->park);
    watch_sem(f, V_MAIN, f->ext);
    watch_mutex(f, V_MAIN, f->busy);
    watch_mutex(f, V_MAIN, f->busy2);
    stvm_process *procs[] = {f->susp[V_MAIN], f->done, f->waiting, f->owner, f->mwaiter,
                             f->unheld, f->ready, f->idle, f->timing};
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
        watch_proc(f, V_MAIN, procs[i]);

    /* V_OTHER: foreign handles, boxes, sockets, and its timer armed (it never runs after
     * the sockets are made). */
    stvm_vm *other = f->vm[V_OTHER];
    net_make(f, V_OTHER, false);
    f->foreign_rec = make_record(other);
    watch_socket(f, V_OTHER, f->net[V_OTHER].lst, false);
    watch_socket(f, V_OTHER, f->net[V_OTHER].cli, false);
    watch_socket(f, V_OTHER, f->net[V_OTHER].srv, false);
    watch_stream(f, V_OTHER, f->net[V_OTHER].st);
    watch_record(f, V_OTHER, f->foreign_rec);
    cr_assert_eq(stvm_spawn_suspended(other, 40, "foreign", nothing_fn, NULL, 0, &f->susp[V_OTHER]),
                 STVM_OK);
    watch_proc(f, V_OTHER, f->susp[V_OTHER]);
    f->foreign_box = mk_u(other, UINT64_MAX);
    f->past_end = mk_u(other, CLOCK_END + 1);
    f->armed = sem_make(other);
    stvm_oop argv[2] = {stvm_semaphore_oop(f->armed), mk_u(other, SIM_START + 1000000000000ull)};
    cr_assert_eq(stvm_primitive_call(other, 242, STVM_NIL, argv, 2, NULL, NULL), STVM_OK);
    watch_sem(f, V_OTHER, f->armed);

    f->box31 = mk_u(f->vm[V_31], (uint64_t)1 << 32);

    /* V_NET: sockets and streams in every state, a process waiting to accept on one
     * listener, one waiting to read through a stream, SocketHandle records. */
    stvm_vm *net = f->vm[V_NET];
    net_make(f, V_NET, true);
    netset *n = &f->net[V_NET];
    cr_assert_eq(stvm_spawn_suspended(net, 40, "suspended", nothing_fn, NULL, 0, &f->susp[V_NET]),
                 STVM_OK);
    cr_assert_eq(stvm_spawn(net, 40, "acceptor", acceptor_fn, f, &f->acceptor), STVM_OK);
    cr_assert_eq(stvm_spawn(net, 40, "reader", reader_fn, f, &f->reader), STVM_OK);
    for (int i = 0; i < 100 && (state_of(net, f->acceptor) != STVM_PROCESS_WAITING ||
                                state_of(net, f->reader) != STVM_PROCESS_WAITING);
         i++)
        cr_assert_eq(stvm_run_mode(net, STVM_RUN_NOWAIT), 1);
    cr_assert_eq(state_of(net, f->acceptor), STVM_PROCESS_WAITING, "the acceptor waits");
    cr_assert_eq(state_of(net, f->reader), STVM_PROCESS_WAITING, "the reader waits");
    ASSERT_GREEN_OK(f);
    f->rec = make_record(net);
    f->dead_rec = make_record(net);
    stvm_oop arg = f->dead_rec, r;
    cr_assert_eq(stvm_primitive_call_named(net, "SocketPlugin", "primitiveSocketDestroy", STVM_NIL,
                                           &arg, 1, &r, NULL),
                 STVM_OK);
    f->net_park = sem_make(net);
    cr_assert_eq(stvm_external_register(net, f->net_park, &f->net_park_index), STVM_OK);
    watch_socket(f, V_NET, n->lst, false);   /* listen arms a handler: see KNOWN DEFECTS */
    watch_socket(f, V_NET, n->busy_lst, true);
    watch_socket(f, V_NET, n->cli, true);
    watch_socket(f, V_NET, n->srv, true);
    watch_socket(f, V_NET, n->cli2, true);
    watch_socket(f, V_NET, n->srv2, true);
    watch_stream(f, V_NET, n->st);
    watch_stream(f, V_NET, n->st2);
    watch_record(f, V_NET, f->rec);
    watch_record(f, V_NET, f->dead_rec);
    watch_proc(f, V_NET, f->susp[V_NET]);
    watch_proc(f, V_NET, f->acceptor);
    watch_proc(f, V_NET, f->reader);
    watch_sem(f, V_NET, f->net_park);

    /* Descriptors for stvm_fd_wait. */
    cr_assert_eq(pipe2(f->pipe, O_CLOEXEC), 0);
    f->file_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    cr_assert_geq(f->file_fd, 0);
    f->devnull_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    cr_assert_geq(f->devnull_fd, 0);
    for (f->closed_fd = 512; fcntl(f->closed_fd, F_GETFD) != -1; f->closed_fd++)
        ;   /* far above what the rows open: never reused by them */

    /* Last, so that nothing made later takes its address: a released ByteArray. */
    cr_assert_eq(stvm_bytes_new(net, 3000, &f->released_bytes), STVM_OK);
    cr_assert_eq(stvm_oop_release(net, f->released_bytes), STVM_OK);
}

static void fx_teardown(fx *f)
{
    for (int v = 0; v < N_VM; v++)
        vm_done(f->vm[v]);
    close(f->pipe[0]);
    close(f->pipe[1]);
    close(f->file_fd);
    close(f->devnull_fd);
    free(f->res);
}

/* ---- running the rows in each context ------------------------------------------------- */

typedef struct green_phase {
    fx *f;
    int vm;      /* whose rows */
    int ctx;
    bool done;
} green_phase;

/* The VM that runs on the test thread while a C_ELSEWHERE or C_BARE row is made:
 * V_NET for its rows, V_MAIN for the others. */
static int elsewhere_vm(const row *r) { return r->a.vm == V_NET ? V_NET : V_MAIN; }

static bool in_phase(const fx *f, const row *r, int ctx, int vm)
{
    if (!selected(f, r, ctx))
        return false;
    if (ctx == C_GREEN)
        return runner_of(r) == vm;
    if (ctx == C_ELSEWHERE || ctx == C_BARE)
        return elsewhere_vm(r) == f->parked_vm;
    return true;
}

static void green_runner(stvm_vm *vm, void *arg)
{
    green_phase *g = arg;
    fx *f = g->f;
    f->self = stvm_vm_active_process(vm);
    for (int i = 0; i < f->nrows; i++)
        if (in_phase(f, &f->rows[i], g->ctx, g->vm))
            exec_row(f, i);
    f->self = NULL;
    g->done = true;
}

#define RUNNER_STACK ((size_t)256 * 1024)

static void run_host_rows(fx *f)
{
    for (int i = 0; i < f->nrows; i++)
        if (selected(f, &f->rows[i], C_HOST))
            exec_row(f, i);
}

/* A runner at priority 79 (above every process of the fixture, below the timing
 * process) of each VM in turn. */
static void run_green_rows(fx *f)
{
    for (int v = 0; v < N_VM; v++) {
        if (v == V_OTHER)
            continue;   /* never runs: its armed timer would fire */
        green_phase g = {f, v, C_GREEN, false};
        cr_assert_eq(stvm_spawn_sized(f->vm[v], 79, "row runner", green_runner, &g, RUNNER_STACK,
                                      NULL),
                     STVM_OK);
        if (v == V_NET) {
            /* Its acceptor and reader wait for ever: run what can run, never wait. */
            for (int i = 0; i < 100 && !g.done; i++)
                cr_assert_eq(stvm_run_mode(f->vm[v], STVM_RUN_NOWAIT), 1);
            cr_assert(g.done, "the row runner of VM net finished");
            continue;
        }
        int rc = stvm_run(f->vm[v]);
        cr_assert(rc == STVM_OK || rc == STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(rc));
    }
}

/* Another VM, made and run on a thread of its own, whose process makes the calls. */
static void run_rows_in_a_vm_here(fx *f, int ctx)
{
    stvm_vm *x = NULL;
    if (stvm_vm_create(NULL, &x) != STVM_OK) {
        f->bad_line = __LINE__;
        return;
    }
    green_phase g = {f, V_MAIN, ctx, false};
    if (stvm_spawn_sized(x, 79, "foreign runner", green_runner, &g, RUNNER_STACK, NULL) !=
            STVM_OK ||
        stvm_run(x) != STVM_OK)
        f->bad_line = __LINE__;
    stvm_vm_free(x);
}

static void *thread_phase(void *arg)
{
    run_rows_in_a_vm_here(arg, C_THREAD);
    return NULL;
}

static void run_thread_rows(fx *f)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, thread_phase, f), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    ASSERT_GREEN_OK(f);
}

/* The system call a thread of this process is blocked in; -1 while it runs, -2 if the
 * kernel does not say. */
static long blocked_syscall(pid_t tid)
{
    char path[64], buf[64] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -2;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -2;
    return buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
}

/* Until the VM's thread sleeps in its idle process's OS wait (epoll in the default
 * idle mode, ppoll in the legacy one): the VM runs and its running process (idle)
 * stands still. */
static void wait_until_parked(fx *f)
{
    while (!atomic_load(&f->parked))
        usleep(200);
    for (;;) {
        long sc = blocked_syscall(f->host_tid);
        if (sc == SYS_ppoll || sc == SYS_epoll_pwait2 || sc == SYS_epoll_pwait)
            return;
#ifdef SYS_epoll_wait   /* x86-64; aarch64's libc makes epoll_wait an epoll_pwait */
        if (sc == SYS_epoll_wait)
            return;
#endif
        if (sc == -2) {   /* no /proc/.../syscall here: give it ample time instead */
            usleep(100000);
            return;
        }
        usleep(200);
    }
}

static void *elsewhere_phase(void *arg)
{
    fx *f = arg;
    wait_until_parked(f);
    for (int i = 0; i < f->nrows; i++)
        if (in_phase(f, &f->rows[i], C_BARE, -1))
            exec_row(f, i);
    run_rows_in_a_vm_here(f, C_ELSEWHERE);
    int v = f->parked_vm;   /* let it finish */
    if (stvm_external_signal(f->vm[v], v == V_NET ? f->net_park_index : f->ext_index) != STVM_OK)
        f->bad_line = __LINE__;
    return NULL;
}

static void parker_fn(stvm_vm *vm, void *arg)
{
    fx *f = arg;
    atomic_store(&f->parked, 1);
    GCHECK(f, stvm_semaphore_wait(vm, f->parked_vm == V_NET ? f->net_park : f->ext) == STVM_OK);
}

/* A VM (V_MAIN, then V_NET) runs on this thread, parked on a semaphore registered as
 * external, while another thread makes the calls; that thread then signals it to
 * finish. */
static void run_elsewhere_rows(fx *f)
{
    f->host_tid = (pid_t)syscall(SYS_gettid);
    for (int v = V_MAIN; v <= V_NET; v += V_NET - V_MAIN) {
        f->parked_vm = v;
        atomic_store(&f->parked, 0);
        stvm_process *parker = NULL;
        cr_assert_eq(stvm_spawn(f->vm[v], 40, "parker", parker_fn, f, &parker), STVM_OK);
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, elsewhere_phase, f), 0);
        int rc;
        if (v == V_NET) {
            /* Its acceptor and reader wait for ever: one OS wait per run, until the
             * parker is signalled. */
            do
                rc = stvm_run_mode(f->vm[v], STVM_RUN_ONCE);
            while (rc == 1 && state_of(f->vm[v], parker) != STVM_PROCESS_TERMINATED);
        } else {
            rc = stvm_run(f->vm[v]);
        }
        cr_assert_eq(pthread_join(th, NULL), 0);
        cr_assert_eq(rc, v == V_NET ? 1 : STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(rc));
        cr_assert_eq(stvm_process_release(f->vm[v], parker), STVM_OK);
        ASSERT_GREEN_OK(f);
    }
}

/* ---- judging ---------------------------------------------------------------------- */

static const char *answer_name(int rc, char *buf, size_t size)
{
    static const char *const r[] = {"returned (void)", "NULL", "non-NULL", "true", "false", "0",
                                    "non-zero", "a count", "anything"};
    if (rc >= R_VOID && rc <= R_ANY)
        return r[rc - R_VOID];
    if (rc <= 0)
        return stvm_err_name(rc);
    snprintf(buf, size, "%d", rc);
    return buf;
}

/* Every row that ran: its answer, failure code, out-parameters, text and snapshot. */
static int judge(fx *f, int ctx_filter)
{
    int bad = 0, ran = 0;
    for (int i = 0; i < f->nrows; i++) {
        const row *r = &f->rows[i];
        const result *res = &f->res[i];
        if ((r->defect != NULL) != f->defects || (ctx_filter >= 0 && r->ctx != ctx_filter))
            continue;
        char wb[32], gb[32], why[256] = "";
        if (!res->ran)
            snprintf(why, sizeof why, "did not run");
        else if (r->want != R_ANY && res->rc != r->want)
            snprintf(why, sizeof why, "answered %s, expected %s",
                     answer_name(res->rc, gb, sizeof gb), answer_name(r->want, wb, sizeof wb));
        else if (r->want == STVM_EPRIM && !r->a.null_fail && res->fail != r->want_fail)
            snprintf(why, sizeof why, "failure code %d (%s), expected %d (%s)", res->fail,
                     stvm_primitive_error_name(res->fail), r->want_fail,
                     stvm_primitive_error_name(r->want_fail));
        else if (res->diff[0])
            snprintf(why, sizeof why, "changed something: %s", res->diff);
        else if (!res->out_clean)
            snprintf(why, sizeof why, "wrote its out-parameter");
        else if (!res->text_ok)
            snprintf(why, sizeof why, "its text does not name '%s'", r->text);
        ran++;
        if (why[0]) {
            bad++;
            char pn[48] = "";
            if (r->fn == F_primitive_call)
                snprintf(pn, sizeof pn, " (primitive %lld)", (long long)r->a.m);
            cr_log_error("%s%s: %s, %s [vm %s]: %s%s%s%s%s", fn_names[r->fn], pn, r->what,
                         ctx_names[r->ctx], r->a.vm == V_NULL ? "NULL" : vm_names[r->a.vm], why,
                         res->diff[0] && !strstr(why, res->diff) ? "; changed " : "",
                         res->diff[0] && !strstr(why, res->diff) ? res->diff : "",
                         r->defect ? " -- known defect " : "", r->defect ? r->defect : "");
        }
    }
    cr_log_info("%d rows judged, %d wrong", ran, bad);
    return bad;
}

/* Build the table, set up the fixture and run the rows of one context. */
static void run_table(int ctx, bool defects)
{
    static fx f;   /* large: not on the test's stack */
    table t = table_build();
    fx_setup(&f);
    f.rows = t.rows;
    f.nrows = t.n;
    f.defects = defects;
    f.res = calloc((size_t)t.n, sizeof *f.res);
    cr_assert_not_null(f.res);
    if (ctx == C_HOST || ctx < 0)
        run_host_rows(&f);
    if (ctx == C_GREEN || ctx < 0)
        run_green_rows(&f);
    if (ctx == C_THREAD || ctx < 0)
        run_thread_rows(&f);
    if (ctx == C_ELSEWHERE || ctx == C_BARE || ctx < 0)
        run_elsewhere_rows(&f);
    int bad = ctx == C_ELSEWHERE ? judge(&f, C_ELSEWHERE) + judge(&f, C_BARE) : judge(&f, ctx);
    fx_teardown(&f);
    free(t.rows);
    cr_assert_eq(bad, 0, "%d calls did not answer as documented or changed something (see the log)",
                 bad);
}

/* ---- the tests ---------------------------------------------------------------------- */

/* Append the functions of one header's text: the lines starting with STVM_API, the
 * identifier before the first '(' (without the trailing '_' of a function that takes a
 * struct's size: callers use the macro of the plain name). */
static int functions_of(const char *text, char names[][48], int n, int cap)
{
    for (const char *s = text; (s = strstr(s, "STVM_API ")) != NULL; s++) {
        if (s != text && s[-1] != '\n')
            continue;   /* the #define of STVM_API itself */
        const char *paren = strchr(s, '(');
        cr_assert_not_null(paren);
        const char *end = paren;
        while (end > s && end[-1] == ' ')
            end--;
        const char *start = end;
        while (start > s && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
                             (start[-1] >= '0' && start[-1] <= '9')))
            start--;
        if (end > start && end[-1] == '_')
            end--;
        cr_assert_lt(n, cap);
        snprintf(names[n++], 48, "%.*s", (int)(end - start), start);
    }
    return n;
}

/* The names of the public functions, in header order: stvm.h's own, then those of each
 * header it includes ("stvm/....h"), in the order it includes them. */
static int header_functions(char names[][48], int cap)
{
    static char text[1 << 18], sub[1 << 18];
    FILE *fp = open_public_header("stvm.h");
    cr_assert_not_null(fp, "include/stvm.h not found (run from the repository or set STVM_INCLUDE)");
    size_t len = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    cr_assert_lt(len, sizeof text - 1, "stvm.h is larger than the buffer");
    text[len] = 0;
    int n = functions_of(text, names, 0, cap), headers = 0;
    for (const char *s = text; (s = strstr(s, "#include \"stvm/")) != NULL; s++) {
        char name[64];
        cr_assert_eq(sscanf(s, "#include \"%63[^\"]\"", name), 1);
        FILE *h = open_public_header(name);
        cr_assert_not_null(h, "include/%s (included by stvm.h) not found", name);
        size_t k = fread(sub, 1, sizeof sub - 1, h);
        fclose(h);
        cr_assert_lt(k, sizeof sub - 1, "%s is larger than the buffer", name);
        sub[k] = 0;
        n = functions_of(sub, names, n, cap);
        headers++;
    }
    cr_assert_geq(headers, 5, "stvm.h includes its five sub-headers and deprecated.h");
    return n;
}

Test(api_table, every_public_function_has_rows)
{
    static char names[256][48];
    int n = header_functions(names, 256);
    cr_assert_eq(n, N_FN, "the public headers declare %d functions, the table knows %d: update API_FUNCTIONS",
                 n, N_FN);
    for (int i = 0; i < n; i++)
        cr_assert_str_eq(names[i], fn_names[i],
                         "function %d in header order is %s, API_FUNCTIONS has %s there", i,
                         names[i], fn_names[i]);
    table t = table_build();
    for (int i = 0; i < n; i++) {
        int fn = -1;
        for (int k = 0; k < N_FN; k++)
            if (strcmp(fn_names[k], names[i]) == 0)
                fn = k;
        cr_assert_geq(fn, 0, "%s is declared in a public header but not in the table", names[i]);
        int rows = 0;
        for (int r = 0; r < t.n; r++)
            rows += t.rows[r].fn == fn;
        cr_assert_gt(rows, 0, "%s has no row", names[i]);
    }
    int defects = 0;
    for (int r = 0; r < t.n; r++)
        defects += t.rows[r].defect != NULL;
    cr_log_info("%d functions, %d rows (%d generated, %d written out, %d known defects)", N_FN, t.n,
                t.generated, t.n - t.generated, defects);
    free(t.rows);
}

Test(api_table, calls_from_the_host_thread, .timeout = 60)
{
    run_table(C_HOST, false);
}

Test(api_table, calls_from_a_green_process, .timeout = 60)
{
    run_table(C_GREEN, false);
}

Test(api_table, calls_from_another_vms_process_on_another_thread, .timeout = 60)
{
    run_table(C_THREAD, false);
}

Test(api_table, calls_from_another_thread_while_the_vm_runs, .timeout = 60)
{
    run_table(C_ELSEWHERE, false);
}

/* The rows marked with a known defect (see KNOWN DEFECTS above), in every context. They
 * fail until the library is fixed, so they run only when STVM_KNOWN_DEFECTS=1. */
Test(api_table, known_defects, .timeout = 60)
{
    if (!getenv("STVM_KNOWN_DEFECTS"))
        cr_skip_test("known defects (see test_api_table.c); set STVM_KNOWN_DEFECTS=1 to run");
    run_table(-1, true);
}

/* D14 (see KNOWN DEFECTS): not a row, where the defect stands it never returns. In a
 * child process, with an alarm: stvm_fd_wait on a descriptor number above 2^30 with a
 * timeout must answer (EINVAL: no such descriptor), as it does for 1,000,000. */
static void fd_wait_far_fn(stvm_vm *vm, void *arg)
{
    int *rc = arg;
    *rc = stvm_fd_wait(vm, (1 << 30) + 1, STVM_IO_READ, 5);
}

static void fd_wait_far(void *arg)
{
    (void)arg;
    alarm(10);
    stvm_vm *vm = NULL;
    int rc = 1;
    if (stvm_vm_create(NULL, &vm) != STVM_OK ||
        stvm_spawn(vm, 40, "far", fd_wait_far_fn, &rc, NULL) != STVM_OK || stvm_run(vm) != STVM_OK)
        _exit(2);
    stvm_vm_free(vm);
    _exit(rc == STVM_EINVAL ? 0 : 3);
}

Test(api_table, fd_wait_beyond_2_30_answers_einval, .timeout = 30)
{
    char err[512];
    int status = run_in_child(fd_wait_far, NULL, err, sizeof err);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "stvm_fd_wait(vm, 2^30 + 1, READ, 5 ms): %s %d (%s)",
              WIFSIGNALED(status) ? "killed by signal" : "exit", WIFSIGNALED(status) ?
              WTERMSIG(status) : WEXITSTATUS(status), err);
}
