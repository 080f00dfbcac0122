/*
 * The API table's fixture (tests/test_api_table.c): six VMs (api_table.h, enum vm_id)
 * holding objects in every state a row needs (processes ready, waiting, finished, owning;
 * semaphores with an excess signal, waited on, registered; the VM's own idle and timing
 * processes; sockets, streams and SocketHandle records; descriptors), the objects a
 * snapshot watches, and the lookup from what a row names to the handle, oop or
 * descriptor its call is given.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

#include "api_table.h"

/* The classes of the kinds of handle (vm/objects.h), for forged headers. */
static const uint32_t kind_class[N_KIND] = {0, 3, 4, 5, 8, 9, 14, 13, 15, 12};

/* Readable memory of the wrong layout. */
_Alignas(64) unsigned char api_g_zero[512];
_Alignas(64) unsigned char api_g_ones[512];
_Alignas(64) unsigned char api_g_text[512];
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

/* A VM's plain handle of a kind. */
void *api_plain(fx *f, int v, int kind)
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
    void *h = api_plain(f, v, kind);
    return h ? h : api_plain(f, V_NET, kind);
}

void *api_handle_of(fx *f, const args *a, int kind)
{
    int v = home_of(&(row){.a = *a});
    int foreign = v == V_OTHER ? V_MAIN : V_OTHER;
    switch (a->h) {
    case H_DEFAULT: return api_plain(f, v, kind);
    case H_NULL: return NULL;
    case H_SEM: return api_plain(f, v, K_SEM);
    case H_MUTEX: return api_plain(f, v, K_MUTEX);
    case H_PROC: return api_plain(f, v, K_PROC);
    case H_FOREIGN: return api_plain(f, foreign, kind);
    case H_BOX: return (void *)f->box_max;
    case H_G_ZERO: return api_g_zero;
    case H_G_ONES: return api_g_ones;
    case H_G_TEXT: return api_g_text;
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
    case H_MONITOR: return api_plain(f, v, K_MONITOR);
    case H_MONITOR_OWNED: return f->monitor_owned;
    case H_MONITOR_WAITED: return f->monitor_waited;
    }
    return NULL;
}

int api_fd_of(fx *f, int id)
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
    case OB_G_ZERO: return (stvm_oop)api_g_zero;
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

stvm_oop api_oop_of(fx *f, ospec s)
{
    switch (s.k) {
    case O_RAW: return (stvm_oop)s.v;
    case O_SI: return (stvm_oop)((s.v << 1) | 1);   /* tagged, whatever the VM's width */
    case O_OBJ: return object_of(f, s.v);
    }
    return STVM_NIL;
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
     * from the wrong thread must not switch the VM there, see test_api_table.c's KNOWN DEFECTS). */
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

void api_fx_setup(fx *f)
{
    memset(f, 0, sizeof *f);
    atomic_init(&f->parked, 0);
    memset(api_g_ones, 0xFF, sizeof api_g_ones);
    snprintf((char *)api_g_text, sizeof api_g_text, "%s", "readable text, not a handle of any kind");
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
    api_ffi_make(f);   /* before the released box, whose address nothing may take */
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
    watch_socket(f, V_NET, n->lst, false);   /* listen arms a handler: D11 */
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

void api_fx_teardown(fx *f)
{
    for (int v = 0; v < N_VM; v++)
        vm_done(f->vm[v]);
    close(f->pipe[0]);
    close(f->pipe[1]);
    close(f->file_fd);
    close(f->devnull_fd);
    free(f->res);
}
