/*
 * Tracing (suite trace): the ring keeps the newest events and counts the rest, the hook
 * sees every event, start/stop/restart, the switch reasons, the writers (the JSON is
 * checked by tests/trace_check.py with python3's json module), and bad input.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

/* ---- a small workload: a ping-pong, a Delay, a timed wait that is signalled ---------- */

typedef struct work {
    stvm_semaphore *ping, *pong;
    int rounds;
} work;

static void ponger(stvm_vm *vm, void *arg)
{
    work *w = arg;
    for (int i = 0; i < w->rounds; i++) {
        stvm_semaphore_wait(vm, w->ping);
        stvm_semaphore_signal(vm, w->pong);
    }
}

static void pinger(stvm_vm *vm, void *arg)
{
    work *w = arg;
    for (int i = 0; i < w->rounds; i++) {
        stvm_semaphore_signal(vm, w->ping);
        stvm_semaphore_wait(vm, w->pong);
    }
    stvm_delay_wait_ms(vm, 3);
    stvm_yield(vm);
    stvm_semaphore_signal(vm, w->ping);   /* an excess signal */
    stvm_semaphore_wait_timeout_ms(vm, w->ping, 10);   /* takes it: no Delay */
    stvm_semaphore_wait_timeout_ms(vm, w->pong, 2);    /* times out */
}

/* Wakes with pinger after 3 ms: whichever runs first yields to the other. */
static void peer(stvm_vm *vm, void *arg)
{
    stvm_delay_wait_ms(vm, 3);
    stvm_yield(vm);
}

static void run_work(stvm_vm *vm, int rounds)
{
    static work w;
    w = (work){.ping = sem_make(vm), .pong = sem_make(vm), .rounds = rounds};
    spawn(vm, 40, "peer", peer, NULL);
    spawn(vm, 40, "ponger", ponger, &w);
    spawn(vm, 40, "pinger", pinger, &w);
    cr_assert_eq(stvm_run(vm), STVM_OK);
}

typedef struct seen {
    uint64_t count, next_seq;
    bool in_order;
    uint64_t kinds[STVM_TRACE_KINDS];
    uint64_t why[8];
} seen;

static void count_hook(stvm_vm *vm, const stvm_trace_event *ev, void *arg)
{
    seen *s = arg;
    s->in_order &= ev->seq == s->next_seq;
    s->next_seq = ev->seq + 1;
    s->count++;
    s->kinds[ev->kind]++;
    if (ev->kind == STVM_TRACE_SWITCH && ev->reason < 8)
        s->why[ev->reason]++;
}

static stvm_vm *traced_vm(size_t events, seen *s)
{
    stvm_vm *vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
    if (s) {
        *s = (seen){.in_order = true};
        cr_assert_eq(stvm_trace_set_hook(vm, count_hook, s), STVM_OK);
    }
    cr_assert_eq(stvm_trace_start(vm, events), STVM_OK);
    return vm;
}

/* ---- the ring and the hook ------------------------------------------------------------ */

Test(trace, off_by_default_records_nothing_and_calls_no_hook)
{
    stvm_vm *vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
    seen s = {.in_order = true};
    cr_assert_eq(stvm_trace_set_hook(vm, count_hook, &s), STVM_OK);
    run_work(vm, 3);
    cr_assert_eq(s.count, 0);
    cr_assert_eq(stvm_trace_count(vm), 0);
    cr_assert_eq(stvm_trace_dropped(vm), 0);
    cr_assert_eq(stvm_trace_write_text(vm, stdout), STVM_ESTATE);
    cr_assert_eq(stvm_trace_write_json(vm, "/tmp/stvm-trace-none.json"), STVM_ESTATE);
    vm_done(vm);
}

Test(trace, ring_keeps_the_newest_events_and_counts_exactly_what_it_dropped)
{
    seen s;
    stvm_vm *vm = traced_vm(16, &s);
    run_work(vm, 20);
    cr_assert_gt(s.count, 16);
    cr_assert_eq(stvm_trace_count(vm), 16);
    cr_assert_eq(stvm_trace_dropped(vm), (int64_t)s.count - 16);
    stvm_trace_event first, last;
    cr_assert_eq(stvm_trace_get(vm, 0, &first), STVM_OK);
    cr_assert_eq(stvm_trace_get(vm, 15, &last), STVM_OK);
    cr_assert_eq(first.seq, s.count - 16);
    cr_assert_eq(last.seq, s.count - 1);
    for (size_t i = 1; i < 16; i++) {
        stvm_trace_event a, b;
        stvm_trace_get(vm, i - 1, &a);
        stvm_trace_get(vm, i, &b);
        cr_assert_eq(b.seq, a.seq + 1);
        cr_assert_geq(b.time_us, a.time_us, "times never go back");
    }
    vm_done(vm);
}

Test(trace, hook_sees_every_event_in_order_including_the_dropped_ones)
{
    seen s;
    stvm_vm *vm = traced_vm(4, &s);
    run_work(vm, 5);
    cr_assert(s.in_order);
    cr_assert_eq(s.count, (uint64_t)(stvm_trace_dropped(vm) + stvm_trace_count(vm)));
    cr_assert_eq(stvm_trace_set_hook(vm, NULL, NULL), STVM_OK);
    vm_done(vm);
}

Test(trace, a_ring_larger_than_the_run_drops_nothing)
{
    seen s;
    stvm_vm *vm = traced_vm(1 << 16, &s);
    run_work(vm, 5);
    cr_assert_eq(stvm_trace_dropped(vm), 0);
    cr_assert_eq(stvm_trace_count(vm), (int64_t)s.count);
    vm_done(vm);
}

Test(trace, stop_keeps_the_ring_and_a_restart_begins_a_new_one)
{
    seen s;
    stvm_vm *vm = traced_vm(1 << 12, &s);
    run_work(vm, 2);
    cr_assert_eq(stvm_trace_stop(vm), STVM_OK);
    int64_t kept = stvm_trace_count(vm);
    uint64_t heard = s.count;
    cr_assert_gt(kept, 0);
    run_work(vm, 2);
    cr_assert_eq(stvm_trace_count(vm), kept, "nothing is recorded while stopped");
    cr_assert_eq(s.count, heard, "the hook hears nothing while stopped");
    cr_assert_eq(stvm_trace_stop(vm), STVM_ESTATE);
    cr_assert_eq(stvm_trace_start(vm, 8), STVM_OK);
    stvm_trace_event ev;
    cr_assert_eq(stvm_trace_count(vm), 1, "only the snapshot of the run queues");
    cr_assert_eq(stvm_trace_get(vm, 0, &ev), STVM_OK);
    cr_assert_eq(ev.kind, STVM_TRACE_READY, "the idle process is ready");
    cr_assert_eq(ev.seq, 0u);
    cr_assert_eq(stvm_trace_dropped(vm), 0);
    run_work(vm, 1);
    cr_assert_eq(stvm_trace_get(vm, 0, &ev), STVM_OK);
    cr_assert_eq(ev.seq, (uint64_t)stvm_trace_dropped(vm), "sequence numbers restart at 0");
    vm_done(vm);
}

Test(trace, every_switch_reason_and_the_event_kinds_of_a_run_are_recorded)
{
    seen s;
    stvm_vm *vm = traced_vm(1 << 12, &s);
    run_work(vm, 3);
    cr_assert_gt(s.why[STVM_TRACE_WHY_WAITED], 0);
    cr_assert_gt(s.why[STVM_TRACE_WHY_PREEMPTED], 0, "the timing process preempts");
    cr_assert_gt(s.why[STVM_TRACE_WHY_YIELDED], 0);
    cr_assert_gt(s.why[STVM_TRACE_WHY_FINISHED], 0);
    cr_assert_gt(s.why[STVM_TRACE_WHY_IDLE], 0);
    cr_assert_gt(s.why[STVM_TRACE_WHY_HOST], 0);
    int want[] = {STVM_TRACE_CREATED,         STVM_TRACE_READY,           STVM_TRACE_FINISHED,
                  STVM_TRACE_SEM_WAIT,        STVM_TRACE_SEM_SIGNAL,      STVM_TRACE_SEM_EXCESS,
                  STVM_TRACE_TIMER_ARMED,     STVM_TRACE_TIMER_FIRED,     STVM_TRACE_DELAY_SCHEDULED,
                  STVM_TRACE_DELAY_EXPIRED,   STVM_TRACE_IDLE_SLEEP};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert_gt(s.kinds[want[i]], 0, "no %s event", stvm_trace_kind_name(want[i]));
    vm_done(vm);
}

/* A timed wait that is signalled in time cancels its Delay. */
static void signaller(stvm_vm *vm, void *arg)
{
    stvm_semaphore_signal(vm, arg);
}

static void timed_waiter(stvm_vm *vm, void *arg)
{
    stvm_spawn(vm, 30, "signaller", signaller, arg, NULL);
    stvm_semaphore_wait_timeout_ms(vm, arg, 50);
}

Test(trace, a_timed_wait_signalled_in_time_records_its_delay_as_cancelled)
{
    seen s;
    stvm_vm *vm = traced_vm(1 << 12, &s);
    stvm_semaphore *sem = sem_make(vm);
    spawn(vm, 40, "waiter", timed_waiter, sem);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(s.kinds[STVM_TRACE_DELAY_CANCELLED], 1);
    cr_assert_eq(s.kinds[STVM_TRACE_DELAY_EXPIRED], 0);
    vm_done(vm);
}

Test(trace, processes_are_named_by_the_names_they_had)
{
    stvm_vm *vm = traced_vm(1 << 12, NULL);
    run_work(vm, 1);
    char name[32];
    cr_assert_eq(stvm_trace_process_name(vm, 1, name, sizeof name), STVM_OK);
    cr_assert_str_eq(name, "Idle Process#1", "named when recording started");
    cr_assert_eq(stvm_trace_process_name(vm, 2, name, sizeof name), STVM_OK);
    cr_assert_str_eq(name, "peer#2", "named at creation; it has finished since");
    cr_assert_eq(stvm_trace_process_name(vm, 0, name, sizeof name), STVM_OK);
    cr_assert_str_eq(name, "host");
    cr_assert_eq(stvm_trace_process_name(vm, 999, name, sizeof name), STVM_OK);
    cr_assert_str_eq(name, "#999");
    vm_done(vm);
}

Test(trace, events_carry_the_simulated_clock)
{
    stvm_vm *vm = traced_vm(1 << 12, NULL);
    run_work(vm, 1);
    int64_t n = stvm_trace_count(vm);
    stvm_trace_event ev;
    bool slept = false;
    for (int64_t i = 0; i < n; i++) {
        stvm_trace_get(vm, (size_t)i, &ev);
        cr_assert_eq(ev.time_ns, 0);
        if (ev.kind == STVM_TRACE_IDLE_SLEEP && ev.detail == 3000) {
            slept = true;
            cr_assert_eq(ev.time_us, SIM_START + 3000, "the clock jumped to the Delay's end");
            cr_assert_eq(ev.extra, 3000);
        }
    }
    cr_assert(slept);
    vm_done(vm);
}


/* A descriptor made ready by another thread, and an external signal from it. */
typedef struct io_work {
    int pipe[2];
    int index;
    stvm_semaphore *ext;
} io_work;

/* Usually late enough for the idle process to sleep first (the JSON then has an OS
 * sleep slice), but nothing asserted depends on it. */
static void *writer_thread(void *arg)
{
    io_work *w = arg;
    usleep(20000);
    ssize_t n = write(w->pipe[1], "x", 1);
    (void)n;
    return NULL;
}

static void io_waiter(stvm_vm *vm, void *arg)
{
    io_work *w = arg;
    stvm_fd_wait(vm, w->pipe[0], STVM_IO_READ, -1);
    stvm_semaphore_wait(vm, w->ext);
}

Test(trace, a_ready_descriptor_and_an_external_signal_are_recorded_on_the_real_clock,
     .timeout = 30)
{
    stvm_vm *vm = vm_make(NULL);
    seen s = {.in_order = true};
    cr_assert_eq(stvm_trace_set_hook(vm, count_hook, &s), STVM_OK);
    cr_assert_eq(stvm_trace_start(vm, 1 << 12), STVM_OK);
    static io_work w;
    cr_assert_eq(pipe(w.pipe), 0);
    w.ext = sem_make(vm);
    cr_assert_eq(stvm_external_register(vm, w.ext, &w.index), STVM_OK);
    cr_assert_eq(stvm_external_signal(vm, w.index), STVM_OK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, writer_thread, &w), 0);
    spawn(vm, 40, "io", io_waiter, &w);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    pthread_join(t, NULL);
    cr_assert_geq(s.kinds[STVM_TRACE_IO_READY], 1);
    cr_assert_geq(s.kinds[STVM_TRACE_EXTERNAL], 2, "the signal, and the descriptor's");
    check_json_of(vm);
    cr_assert_eq(stvm_external_unregister(vm, w.index), STVM_OK);
    close(w.pipe[0]);
    close(w.pipe[1]);
    vm_done(vm);
}

/* ---- socket waits and FFI callouts ------------------------------------------------------ */

/* The socket and FFI events a hook saw, in order. */
typedef struct io_seen {
    int n;
    stvm_trace_event ev[32];
} io_seen;

static void io_hook(stvm_vm *vm, const stvm_trace_event *ev, void *arg)
{
    io_seen *s = arg;
    if (ev->kind >= STVM_TRACE_SOCKET_WAIT && s->n < 32)
        s->ev[s->n++] = *ev;
}

/* The first event of kind with detail (INT64_MIN: any detail), or NULL. */
static const stvm_trace_event *find(const io_seen *s, int kind, int64_t detail)
{
    for (int i = 0; i < s->n; i++)
        if (s->ev[i].kind == kind && (detail == INT64_MIN || s->ev[i].detail == detail))
            return &s->ev[i];
    return NULL;
}

static stvm_vm *io_traced_vm(io_seen *s)
{
    stvm_vm *vm = vm_make(NULL);
    *s = (io_seen){0};
    cr_assert_eq(stvm_trace_set_hook(vm, io_hook, s), STVM_OK);
    cr_assert_eq(stvm_trace_start(vm, 1 << 14), STVM_OK);
    return vm;
}

/* A connected pair over loopback; the reader waits for a byte the writer sends after
 * it blocked, then waits 20 ms for one that never comes. */
typedef struct sock_work {
    stvm_socket *listener, *c, *sv;
    int port, sv_fd;
    int64_t got, timed;
} sock_work;

static void sock_reader(stvm_vm *vm, void *arg)
{
    sock_work *w = arg;
    char b;
    w->got = stvm_socket_recv(vm, w->sv, &b, 1, 10000);
    w->timed = stvm_socket_recv(vm, w->sv, &b, 1, 20);
}

static void sock_main(stvm_vm *vm, void *arg)
{
    sock_work *w = arg;
    stvm_process *r = NULL;
    if (stvm_tcp_connect(vm, "127.0.0.1", w->port, 10000, &w->c) != STVM_OK ||
        stvm_socket_accept(vm, w->listener, 10000, &w->sv) != STVM_OK)
        return;
    w->sv_fd = stvm_socket_fd(w->sv);
    stvm_spawn(vm, 40, "reader", sock_reader, w, &r);
    stvm_yield(vm);                          /* the reader blocks */
    stvm_socket_send(vm, w->c, "x", 1, 10000);
    stvm_process_join(vm, r, 10000);
    stvm_socket_close(vm, w->c);
    stvm_socket_close(vm, w->sv);
}

Test(trace, a_socket_wait_records_its_descriptor_what_it_waits_for_and_how_it_ended,
     .timeout = 30)
{
    io_seen s;
    stvm_vm *vm = io_traced_vm(&s);
    static sock_work w;
    w = (sock_work){.got = -100, .timed = -100};
    cr_assert_eq(stvm_tcp_listen(vm, "127.0.0.1", 0, 4, &w.listener), STVM_OK);
    w.port = stvm_socket_port(w.listener);
    spawn(vm, 40, "main", sock_main, &w);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(w.got, 1);
    cr_assert_eq(w.timed, STVM_ETIMEDOUT);
    const stvm_trace_event *wait = find(&s, STVM_TRACE_SOCKET_WAIT, INT64_MIN);
    cr_assert_not_null(wait, "the read's wait");
    cr_assert_eq(wait->extra, STVM_TRACE_FOR_DATA);
    cr_assert_eq(wait->object, (uint64_t)w.sv_fd);
    cr_assert(wait->detail > 9000 && wait->detail <= 10000, "its timeout: what is left of the "
              "call's 10 s, not %lld", (long long)wait->detail);
    const stvm_trace_event *ready = find(&s, STVM_TRACE_SOCKET_DONE, STVM_OK);
    const stvm_trace_event *timeout = find(&s, STVM_TRACE_SOCKET_DONE, STVM_ETIMEDOUT);
    cr_assert_not_null(ready);
    cr_assert_not_null(timeout);
    cr_assert_eq(ready->object, (uint64_t)w.sv_fd);
    cr_assert_eq(ready->extra, STVM_TRACE_FOR_DATA);
    cr_assert_eq(ready->process, wait->process);
    cr_assert_gt(ready->seq, wait->seq);
    cr_assert_eq(timeout->object, (uint64_t)w.sv_fd);
    cr_assert_gt(timeout->seq, ready->seq);
    check_json_of(vm);
    cr_assert_eq(stvm_socket_close(vm, w.listener), STVM_OK);
    vm_done(vm);
}

static int64_t negate(int64_t v)
{
    return -v;
}

typedef struct ffi_work {
    stvm_ffi_function *fn;
    stvm_oop arg;
    int same, threaded;
    int64_t same_r, threaded_r;
} ffi_work;

static void ffi_caller(stvm_vm *vm, void *arg)
{
    ffi_work *w = arg;
    stvm_oop r;
    if ((w->same = stvm_ffi_call(vm, w->fn, &w->arg, 1, &r)) == STVM_OK)
        w->same_r = val_i(vm, r);
    if ((w->threaded = stvm_ffi_call_threaded(vm, w->fn, &w->arg, 1, &r)) == STVM_OK)
        w->threaded_r = val_i(vm, r);
}

/* Call and return of a callout, on the one runner given, with no other callout between. */
static void check_callout(const io_seen *s, const ffi_work *w, int runner)
{
    const stvm_trace_event *call = find(s, STVM_TRACE_FFI_CALL, runner);
    cr_assert_not_null(call, "runner %d's call", runner);
    cr_assert_eq(call->object, (uint64_t)(uintptr_t)w->fn);
    cr_assert_eq(call->extra, 1, "one argument");
    const stvm_trace_event *ret = call + 1;
    cr_assert_lt(ret - s->ev, s->n, "runner %d's return", runner);
    cr_assert_eq(ret->kind, STVM_TRACE_FFI_RETURN);
    cr_assert_eq(ret->detail, STVM_OK);
    cr_assert_eq(ret->extra, runner);
    cr_assert_eq(ret->object, call->object);
    cr_assert_eq(ret->process, call->process);
    cr_assert_neq(call->process, 0, "a green process called");
}

Test(trace, same_thread_and_threaded_callouts_record_their_call_and_return, .timeout = 30)
{
    io_seen s;
    stvm_vm *vm = io_traced_vm(&s);
    static ffi_work w;
    w = (ffi_work){.arg = mk_i(vm, 42), .same = -100, .threaded = -100};
    cr_assert_eq(stvm_ffi_function_at(vm, (void *)negate, "i64(i64)", &w.fn), STVM_OK);
    spawn(vm, 40, "caller", ffi_caller, &w);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(w.same, STVM_OK);
    cr_assert_eq(w.threaded, STVM_OK);
    cr_assert_eq(w.same_r, -42);
    cr_assert_eq(w.threaded_r, -42);
    check_callout(&s, &w, STVM_TRACE_FFI_SAME_THREAD);
    check_callout(&s, &w, STVM_TRACE_FFI_THREADED);
    cr_assert_eq(s.n, 4, "two callouts, nothing else");
    check_json_of(vm);
    vm_done(vm);
}

/* A traced VM whose embedding thread has made one callout (of negate). */
static stvm_vm *host_called(io_seen *s)
{
    stvm_vm *vm = io_traced_vm(s);
    stvm_ffi_function *fn = NULL;
    cr_assert_eq(stvm_ffi_function_at(vm, (void *)negate, "i64(i64)", &fn), STVM_OK);
    stvm_oop a = mk_i(vm, 7);
    cr_assert_eq(stvm_ffi_call(vm, fn, &a, 1, NULL), STVM_OK);
    return vm;
}

Test(trace, a_callout_of_the_embedding_thread_is_recorded_as_the_host_s)
{
    io_seen s;
    stvm_vm *vm = host_called(&s);
    cr_assert_eq(s.n, 2);
    cr_assert_eq(s.ev[0].kind, STVM_TRACE_FFI_CALL);
    cr_assert_eq(s.ev[1].kind, STVM_TRACE_FFI_RETURN);
    cr_assert_eq(s.ev[0].process, 0);
    check_json_of(vm);
    vm_done(vm);
}

Test(trace, text_names_a_callout_its_runner_and_how_it_returned)
{
    io_seen s;
    stvm_vm *vm = host_called(&s);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(stvm_trace_write_text(vm, f), STVM_OK);
    fclose(f);
    cr_assert_not_null(strstr(text, "ffi-call        fn1 same-thread, 1 args"), "%s", text);
    cr_assert_not_null(strstr(text, "ffi-return      fn1 same-thread: returned"), "%s", text);
    free(text);
    vm_done(vm);
}

/* ---- the writers ------------------------------------------------------------------------ */

Test(trace, text_states_the_dropped_count_first_and_keeps_lines_within_100_columns)
{
    stvm_vm *vm = traced_vm(32, NULL);
    run_work(vm, 10);
    char path[] = "/tmp/stvm-trace-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w+");
    cr_assert_eq(stvm_trace_write_text(vm, f), STVM_OK);
    rewind(f);
    char line[512], want[64];
    snprintf(want, sizeof want, "32 events kept, %lld dropped", (long long)stvm_trace_dropped(vm));
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert_not_null(strstr(line, want), "first line: %s", line);
    int lines = 1;
    while (fgets(line, sizeof line, f)) {
        cr_assert_leq(strlen(line), 101, "too wide: %s", line);
        lines++;
    }
    cr_assert_eq(lines, 2 + 32);
    fclose(f);
    unlink(path);
    vm_done(vm);
}

Test(trace, json_parses_and_every_slice_is_closed_on_tracks_that_never_go_back, .timeout = 60)
{
    stvm_vm *vm = traced_vm(1 << 12, NULL);
    run_work(vm, 10);
    check_json_of(vm);
    vm_done(vm);
}

Test(trace, json_of_a_ring_that_began_mid_run_is_still_well_formed, .timeout = 60)
{
    stvm_vm *vm = traced_vm(7, NULL);
    run_work(vm, 10);
    cr_assert_gt(stvm_trace_dropped(vm), 0);
    check_json_of(vm);
    vm_done(vm);
}

/* ---- bad input -------------------------------------------------------------------------- */

Test(trace, bad_input_is_refused_and_changes_nothing)
{
    stvm_vm *vm = traced_vm(64, NULL);
    run_work(vm, 1);
    int64_t kept = stvm_trace_count(vm);
    cr_assert_eq(stvm_trace_start(NULL, 8), STVM_EINVAL);
    cr_assert_eq(stvm_trace_start(vm, 0), STVM_EINVAL);
    cr_assert_eq(stvm_trace_start(vm, STVM_TRACE_MAX_EVENTS + 1), STVM_EINVAL);
    cr_assert_eq(stvm_trace_start(vm, SIZE_MAX), STVM_EINVAL);
    cr_assert_eq(stvm_trace_count(vm), kept, "a refused start keeps the ring");
    cr_assert_eq(stvm_trace_stop(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_trace_dropped(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_trace_count(NULL), STVM_EINVAL);
    stvm_trace_event ev;
    cr_assert_eq(stvm_trace_get(NULL, 0, &ev), STVM_EINVAL);
    cr_assert_eq(stvm_trace_get(vm, 0, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_trace_get(vm, (size_t)kept, &ev), STVM_ERANGE);
    cr_assert_eq(stvm_trace_set_hook(NULL, count_hook, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_trace_write_text(NULL, stdout), STVM_EINVAL);
    cr_assert_eq(stvm_trace_write_text(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_trace_write_json(NULL, "/tmp/x.json"), STVM_EINVAL);
    cr_assert_eq(stvm_trace_write_json(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_trace_write_json(vm, "/nonexistent-dir/x.json"), STVM_ESYS);
    char name[16];
    cr_assert_eq(stvm_trace_process_name(NULL, 1, name, sizeof name), STVM_EINVAL);
    cr_assert_eq(stvm_trace_process_name(vm, 1, NULL, 8), STVM_EINVAL);
    cr_assert_eq(stvm_trace_process_name(vm, 1, name, 0), STVM_EINVAL);
    cr_assert_null(stvm_trace_kind_name(-1));
    cr_assert_null(stvm_trace_kind_name(STVM_TRACE_KINDS));
    cr_assert_str_eq(stvm_trace_kind_name(STVM_TRACE_SWITCH), "switch");
    cr_assert_eq(stvm_trace_count(vm), kept);
    vm_done(vm);
}
