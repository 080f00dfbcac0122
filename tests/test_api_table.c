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
 * shows (KNOWN DEFECTS, below, lists them, the fixed ones too); such rows are
 * skipped unless STVM_KNOWN_DEFECTS=1 is in the environment, where the test
 * known_defects runs exactly them.
 *
 * The VM's own processes (idle, timing) have no public handle: the fixture catches
 * them with stvm_vm_active_process from a high-rate timer signal on the VM's thread while
 * a process sleeps on short Delays (catch_vm_own).
 *
 * The files (tests/api_table/): api_table.h (the function list, what a row names, the
 * row, the fixture's and the snapshot's types, the module), fixture.c (the fixture and
 * the lookup from a row to its handles), snapshot.c ("changes nothing"), and one
 * rows_*.c a part of the header (vm, sync, queue, local, time, net, trace, prim, ffi):
 * for each of its functions a line (what the generated rows need), a case of its call,
 * and the rows written out. This file makes the calls, generates the rows, runs them in
 * each context and judges them.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "api_table/api_table.h"

const char *const api_fn_names[N_FN] = {
#define FN_NAME(n) "stvm_" #n,
    API_FUNCTIONS(FN_NAME)
#undef FN_NAME
};
const char *const api_vm_names[N_VM] = {"main", "other", "31-bit", "ms-delays", "clock-end", "net"};
const char *const api_ctx_names[N_CTX] = {
    "from the host thread", "from a green process", "from another VM's process on another thread",
    "while the VM runs on another thread, from a process of another VM",
    "while the VM runs on another thread, from that thread outside stvm_run"};
const char api_null_str[] = "(NULL)";

struct result {
    bool ran;
    int rc;
    int fail;
    bool out_clean;
    bool text_ok;
    char diff[160];   /* what the call changed, empty if nothing */
};

/* ---- the modules ---------------------------------------------------------------------- */

/* In the order their rows run: the header's, with net last (its last row would, were D12
 * back, leave the reader's handler disarmed for the rows after it). */
static const api_module *const modules[] = {&api_rows_vm,    &api_rows_sync,  &api_rows_queue,
                                            &api_rows_local, &api_rows_time,  &api_rows_trace,
                                            &api_rows_prim,  &api_rows_ffi,   &api_rows_net};
#define N_MODULES (sizeof modules / sizeof modules[0])

static fn_desc FN[N_FN];                /* each function's line, from its module */
static const api_module *owner[N_FN];   /* the module that has the line: its call makes it */

/* Each function's line from its module: a function in two modules is a mistake. */
static void lines_read(void)
{
    memset(owner, 0, sizeof owner);
    memset(FN, 0, sizeof FN);
    for (size_t m = 0; m < N_MODULES; m++)
        for (int i = 0; i < modules[m]->nlines; i++) {
            const fn_line *l = &modules[m]->lines[i];
            cr_assert(!owner[l->fn], "%s has a line in %s and in %s", api_fn_names[l->fn],
                      owner[l->fn] ? owner[l->fn]->name : "", modules[m]->name);
            owner[l->fn] = modules[m];
            FN[l->fn] = l->desc;
        }
}

/* ---- making one call ---------------------------------------------------------------- */

/* Make the call a row describes and answer its result as an STVM_* or R_* code: its
 * arguments resolved, then its module's call. */
static int call(fx *f, int fn, const args *a)
{
    call_in c;
    c.vm = vm_of(f, a->vm);
    c.sem = api_handle_of(f, a, K_SEM);
    c.m = api_handle_of(f, a, K_MUTEX);
    c.p = api_handle_of(f, a, K_PROC);
    c.sk = api_handle_of(f, a, K_SOCKET);
    c.st = api_handle_of(f, a, K_STREAM);
    c.dl = api_handle_of(f, a, K_DELAY);
    c.qu = api_handle_of(f, a, K_QUEUE);
    c.lv = api_handle_of(f, a, K_LOCAL);
    c.lp = a->m ? api_handle_of(f, &(args){.vm = a->vm, .h = (int)a->m}, K_PROC)
                : api_plain(f, home_of(&(row){.a = *a}), K_PROC);
    c.mon = api_handle_of(f, a, K_MONITOR);
    c.qid = (int)a->m;
    c.pred = a->null_ptr ? NULL : pred_false;
    c.fnp = a->null_ptr ? NULL : nothing_fn;
    c.o = a->null_out ? NULL : &f->out;
    c.o0 = api_oop_of(f, a->o[0]);
    for (int i = 0; i < 7; i++)
        c.argv[i] = api_oop_of(f, a->o[i + 1]);
    c.buf = a->null_ptr ? NULL : f->out.buf;
    c.host = a->s == NULL_STR ? NULL : a->s ? a->s : "127.0.0.1";
    c.name = a->s == NULL_STR ? NULL : a->s ? a->s : "row";
    c.nbuf = a->null_ptr ? NULL : f->text;
    c.nsize = a->z ? (size_t)a->z : a->null_ptr ? 0 : sizeof f->text;
    c.path = a->s == NULL_STR ? NULL : a->s ? a->s : "/nonexistent/stvm-api-table";
    c.port = a->n == PORT_LISTENING ? f->net[V_NET].port : (int)a->n;
    return owner[fn] ? owner[fn]->call(f, fn, a, &c) : R_NOT_MINE;
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
    api_snap_take(f, &before);
    res->rc = call(f, r->fn, &r->a);
    api_snap_take(f, &after);
    res->ran = true;
    res->fail = f->fail_code;
    res->out_clean = api_out_clean(f);
    res->text_ok = !r->text || strstr(f->text, r->text) != NULL;
    api_snap_diff(f, &before, &after, res->diff, sizeof res->diff);
}

static bool selected(const fx *f, const row *r, int ctx)
{
    return r->ctx == ctx && (r->defect != NULL) == f->defects;
}

/* ---- the rows: known defects, and the rows generated from each function's line -------- */

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

/* ---- generating the matrix --------------------------------------------------------- */

void api_table_add(table *t, row r)
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
    api_table_add(t, r);
}

/* Calls with a NULL out-parameter. */
static void gen_null_out(table *t, int fn)
{
    if (!FN[fn].null_out)
        return;
    row r = {.fn = fn, .what = "NULL out-parameter", .ctx = FN[fn].ctx, .a = FN[fn].ok,
             .want = FN[fn].null_out};
    r.a.null_out = true;
    api_table_add(t, r);
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
        api_table_add(t, r);
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
        api_table_add(t, r);
    }
}

static table table_build(void)
{
    table t = {0};
    lines_read();
    for (int fn = 0; fn < N_FN; fn++) {
        gen_null_vm(&t, fn);
        gen_null_out(&t, fn);
        gen_wrong_handles(&t, fn);
        gen_wrong_context(&t, fn);
    }
    for (size_t m = 0; m < N_MODULES; m++)
        if (modules[m]->generate)
            modules[m]->generate(&t);
    t.generated = t.n;
    for (size_t m = 0; m < N_MODULES; m++)
        for (int i = 0; i < modules[m]->nrows; i++)
            api_table_add(&t, modules[m]->rows[i]);
    return t;
}

/* ---- running the rows in each context ------------------------------------------------- */

/* The VM whose green process makes a green row's call: V_OTHER never runs (its armed
 * timer would fire), so its rows and the NULL-vm rows are made from V_MAIN's. */
static int runner_of(const row *r)
{
    return r->a.vm == V_NULL || r->a.vm == V_OTHER ? V_MAIN : r->a.vm;
}

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
            cr_log_error("%s%s: %s, %s [vm %s]: %s%s%s%s%s", api_fn_names[r->fn], pn, r->what,
                         api_ctx_names[r->ctx], r->a.vm == V_NULL ? "NULL" : api_vm_names[r->a.vm], why,
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
    api_fx_setup(&f);
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
    api_fx_teardown(&f);
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
        cr_assert_str_eq(names[i], api_fn_names[i],
                         "function %d in header order is %s, API_FUNCTIONS has %s there", i,
                         names[i], api_fn_names[i]);
    table t = table_build();
    for (int fn = 0; fn < N_FN; fn++)
        cr_assert_not_null(owner[fn], "%s belongs to no module: give it a line (DESC or NO_DESC) "
                           "in the tests/api_table/rows_*.c of its header", api_fn_names[fn]);
    for (int i = 0; i < n; i++) {
        int fn = -1;
        for (int k = 0; k < N_FN; k++)
            if (strcmp(api_fn_names[k], names[i]) == 0)
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
    for (size_t m = 0; m < N_MODULES; m++)
        cr_log_info("  %-6s %3d functions, %4d rows written out", modules[m]->name,
                    modules[m]->nlines, modules[m]->nrows);
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
