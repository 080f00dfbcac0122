/*
 * The SocketPlugin's named primitives through stvm_primitive_call_named, called from
 * the embedding thread (none of them waits): the table, Pharo's connection-status
 * values and failure codes, a connection over loopback made and used with primitives
 * only, the resolver, and ByteArrays; a connected descriptor made elsewhere adopted
 * as a socket (stvm__socket_adopt, what the simulated clock's peer uses); the local
 * domain (netType 1) and the generalised address primitives, Unix paths among them.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "helpers.h"
#include "../image-stubs/network/socket.h"

#define SP "SocketPlugin"
#define SI(v) ((stvm_oop)(((uintptr_t)(intptr_t)(v) << 1) | 1))
#define SI_VAL(o) ((int64_t)(intptr_t)(o) >> 1)

static int call(stvm_vm *vm, const char *name, const stvm_oop *args, int nargs, stvm_oop *res,
                int *fail)
{
    *fail = 0;
    return stvm_primitive_call_named(vm, SP, name, STVM_NIL, args, nargs, res, fail);
}

/* Call a primitive that must succeed. */
static stvm_oop ok(stvm_vm *vm, const char *name, const stvm_oop *args, int nargs)
{
    stvm_oop r = SENTINEL;
    int fail;
    int err = call(vm, name, args, nargs, &r, &fail);
    cr_assert_eq(err, STVM_OK, "%s failed with code %d", name, fail);
    return r;
}

/* Call a primitive that must fail with code. */
static void fails(stvm_vm *vm, const char *name, const stvm_oop *args, int nargs, int code)
{
    stvm_oop r = SENTINEL;
    int fail;
    int err = call(vm, name, args, nargs, &r, &fail);
    cr_assert_eq(err, STVM_EPRIM, "%s: %s", name, stvm_err_name(err));
    cr_assert_eq(fail, code, "%s failed with %d, expected %d", name, fail, code);
    cr_assert_eq(r, SENTINEL, "a failed primitive answered something");
}

/* Three registered semaphores, as Socket>>initialize: makes them. */
static void semas(stvm_vm *vm, stvm_oop idx[3])
{
    for (int i = 0; i < 3; i++) {
        int index;
        cr_assert_eq(stvm_external_register(vm, sem_make(vm), &index), STVM_OK);
        idx[i] = SI(index);
    }
}

static stvm_oop create(stvm_vm *vm)
{
    stvm_oop idx[3];
    semas(vm, idx);
    stvm_oop args[7] = {SI(0), SI(0), SI(8000), SI(8000), idx[0], idx[1], idx[2]};
    return ok(vm, "primitiveSocketCreate3Semaphores", args, 7);
}

static int64_t status(stvm_vm *vm, stvm_oop h)
{
    return SI_VAL(ok(vm, "primitiveSocketConnectionStatus", &h, 1));
}

static stvm_oop bytes_of(stvm_vm *vm, const void *data, size_t n)
{
    stvm_oop b;
    cr_assert_eq(stvm_bytes_new(vm, n, &b), STVM_OK);
    uint8_t *p;
    size_t size;
    cr_assert_eq(stvm_bytes_data(vm, b, &p, &size), STVM_OK);
    memcpy(p, data, n);
    return b;
}

static const uint8_t LOOPBACK4[4] = {127, 0, 0, 1};

/* Poll a status primitive until it leaves `from` (loopback answers within microseconds;
 * the bound is generous). */
static int64_t status_after(stvm_vm *vm, stvm_oop h, int64_t from)
{
    int64_t s = status(vm, h);
    for (int i = 0; i < 2000 && s == from; i++) {
        poll(NULL, 0, 1);
        s = status(vm, h);
    }
    return s;
}

Test(socket_plugin, the_table_has_the_plugin_and_refuses_unknown_names)
{
    stvm_vm *vm = vm_make(NULL);
    const char *modules[64], *names[64];
    int n = stvm_primitive_named_list(modules, names, 64);
    cr_assert_geq(n, 20);
    bool seen = false;
    for (int i = 0; i < n; i++)
        seen |= strcmp(names[i], "primitiveSocketReceiveDataAvailable") == 0 &&
                strcmp(modules[i], SP) == 0;
    cr_assert(seen);
    stvm_oop r;
    int fail;
    cr_assert_eq(stvm_primitive_call_named(vm, "NoPlugin", "primitiveSocketError", 0, NULL, 0,
                                           &r, &fail), STVM_EINVAL);
    cr_assert_eq(stvm_primitive_call_named(vm, SP, "primitiveNothing", 0, NULL, 0, &r, &fail),
                 STVM_EINVAL);
    cr_assert_eq(stvm_primitive_call_named(vm, NULL, "x", 0, NULL, 0, &r, &fail), STVM_EINVAL);
    cr_assert_eq(stvm_primitive_call_named(vm, SP, "primitiveSocketError", 0, NULL, 1, &r, &fail),
                 STVM_EINVAL);
    cr_assert_eq(stvm_primitive_call_named(NULL, SP, "primitiveResolverStatus", 0, NULL, 0, &r,
                                           &fail), STVM_EINVAL);
    /* A wrong argument count is Pharo's bad number of arguments. */
    fails(vm, "primitiveSocketConnectionStatus", NULL, 0, STVM_PRIM_ERR_BAD_NUM_ARGS);
    vm_done(vm);
}

Test(socket_plugin, create_checks_its_arguments_and_answers_an_unconnected_socket)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_oop idx[3];
    semas(vm, idx);
    stvm_oop args[7] = {SI(0), SI(0), SI(8000), SI(8000), idx[0], idx[1], idx[2]};
    args[2] = GARBAGE;
    fails(vm, "primitiveSocketCreate3Semaphores", args, 7, STVM_PRIM_ERR_GENERIC);
    args[2] = SI(8000);
    args[1] = SI(1);   /* UDP */
    fails(vm, "primitiveSocketCreate3Semaphores", args, 7, STVM_PRIM_ERR_UNSUPPORTED);
    args[1] = SI(7);
    fails(vm, "primitiveSocketCreate3Semaphores", args, 7, STVM_PRIM_ERR_GENERIC);
    args[1] = SI(0);
    args[5] = SI(1000000);
    fails(vm, "primitiveSocketCreate3Semaphores", args, 7, STVM_PRIM_ERR_BAD_ARGUMENT);
    args[5] = idx[1];
    stvm_oop h = ok(vm, "primitiveSocketCreate3Semaphores", args, 7);
    cr_assert_str_eq(stvm_oop_class_name(vm, h), "SocketHandle");
    cr_assert_eq(status(vm, h), STVM_SOCKET_UNCONNECTED);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketError", &h, 1)), 0);
    cr_assert_eq(ok(vm, "primitiveSocketReceiveDataAvailable", &h, 1), STVM_FALSE);
    cr_assert_eq(ok(vm, "primitiveSocketSendDone", &h, 1), STVM_FALSE);
    vm_done(vm);
}

Test(socket_plugin, a_socket_handle_is_checked_and_destroy_is_final)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_oop notsock[4] = {STVM_NIL, SI(3), GARBAGE, stvm_semaphore_oop(sem_make(vm))};
    for (int i = 0; i < 4; i++) {
        fails(vm, "primitiveSocketConnectionStatus", &notsock[i], 1, STVM_PRIM_ERR_BAD_ARGUMENT);
        fails(vm, "primitiveSocketDestroy", &notsock[i], 1, STVM_PRIM_ERR_BAD_ARGUMENT);
    }
    stvm_oop h = create(vm);
    cr_assert_eq(stvm_oop_release(vm, h), STVM_EINUSE, "a live socket is not released");
    ok(vm, "primitiveSocketDestroy", &h, 1);
    /* Pharo's socketValid fails: primSocketConnectionStatus: then answers InvalidSocket. */
    fails(vm, "primitiveSocketConnectionStatus", &h, 1, STVM_PRIM_ERR_GENERIC);
    fails(vm, "primitiveSocketDestroy", &h, 1, STVM_PRIM_ERR_GENERIC);
    fails(vm, "primitiveSocketReceiveDataAvailable", &h, 1, STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(stvm_oop_release(vm, h), STVM_OK);
    cr_assert_null(stvm_oop_class_name(vm, h));
    vm_done(vm);
}

Test(socket_plugin, a_connection_made_and_used_with_primitives_only)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_oop lis = create(vm), cli = create(vm);
    stvm_oop lo = bytes_of(vm, LOOPBACK4, 4);
    stvm_oop largs[4] = {lis, SI(0), SI(4), lo};
    ok(vm, "primitiveSocketListenOnPortBacklogInterface", largs, 4);
    cr_assert_eq(status(vm, lis), STVM_SOCKET_WAITING_FOR_CONNECTION);
    int64_t port = SI_VAL(ok(vm, "primitiveSocketLocalPort", &lis, 1));
    cr_assert_gt(port, 0);
    stvm_oop aargs[6] = {lis, SI(8000), SI(8000), SI(0), SI(0), SI(0)};
    fails(vm, "primitiveSocketAccept3Semaphores", aargs, 6, STVM_PRIM_ERR_GENERIC);

    stvm_oop cargs[3] = {cli, lo, SI(port)};
    ok(vm, "primitiveSocketConnectToPort", cargs, 3);
    fails(vm, "primitiveSocketConnectToPort", cargs, 3, STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(status_after(vm, cli, STVM_SOCKET_WAITING_FOR_CONNECTION), STVM_SOCKET_CONNECTED);
    /* A waiting connection turns the listener's status to Connected (acceptHandler). */
    cr_assert_eq(status_after(vm, lis, STVM_SOCKET_WAITING_FOR_CONNECTION), STVM_SOCKET_CONNECTED);
    stvm_oop srv = ok(vm, "primitiveSocketAccept3Semaphores", aargs, 6);
    cr_assert_eq(status(vm, srv), STVM_SOCKET_CONNECTED);
    cr_assert_eq(status(vm, lis), STVM_SOCKET_WAITING_FOR_CONNECTION);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketRemotePort", &cli, 1)), port);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketLocalPort", &srv, 1)), port);
    stvm_oop ra = ok(vm, "primitiveSocketRemoteAddress", &cli, 1);
    uint8_t *p;
    size_t n;
    cr_assert_eq(stvm_bytes_data(vm, ra, &p, &n), STVM_OK);
    cr_assert_eq(n, 4);
    cr_assert_arr_eq(p, LOOPBACK4, 4);

    /* Nothing to read: 0 bytes, and not available. */
    stvm_oop buf;
    cr_assert_eq(stvm_bytes_new(vm, 16, &buf), STVM_OK);
    stvm_oop rargs[4] = {srv, buf, SI(1), SI(16)};
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketReceiveDataBufCount", rargs, 4)), 0);
    cr_assert_eq(ok(vm, "primitiveSocketReceiveDataAvailable", &srv, 1), STVM_FALSE);
    cr_assert_eq(ok(vm, "primitiveSocketSendDone", &cli, 1), STVM_TRUE);

    stvm_oop msg = bytes_of(vm, "xhellox", 7);
    stvm_oop sargs[4] = {cli, msg, SI(2), SI(5)};
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketSendDataBufCount", sargs, 4)), 5);
    stvm_oop bad[4] = {cli, msg, SI(0), SI(5)};
    fails(vm, "primitiveSocketSendDataBufCount", bad, 4, STVM_PRIM_ERR_GENERIC);
    bad[2] = SI(4);
    fails(vm, "primitiveSocketSendDataBufCount", bad, 4, STVM_PRIM_ERR_GENERIC);
    bad[1] = SI(4);
    fails(vm, "primitiveSocketSendDataBufCount", bad, 4, STVM_PRIM_ERR_GENERIC);
    stvm_oop avail = STVM_FALSE;
    for (int i = 0; i < 2000 && avail != STVM_TRUE; i++) {
        avail = ok(vm, "primitiveSocketReceiveDataAvailable", &srv, 1);
        if (avail != STVM_TRUE)
            poll(NULL, 0, 1);
    }
    cr_assert_eq(avail, STVM_TRUE);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketReceiveDataBufCount", rargs, 4)), 5);
    cr_assert_eq(stvm_bytes_data(vm, buf, &p, &n), STVM_OK);
    cr_assert_arr_eq(p, "hello", 5);

    /* The client closes: the server sees OtherEndClosed with no error, and 0 bytes. */
    ok(vm, "primitiveSocketCloseConnection", &cli, 1);
    cr_assert_eq(status(vm, cli), STVM_SOCKET_UNCONNECTED);
    for (int i = 0; i < 2000 && status(vm, srv) == STVM_SOCKET_CONNECTED; i++) {
        ok(vm, "primitiveSocketReceiveDataAvailable", &srv, 1);
        poll(NULL, 0, 1);
    }
    cr_assert_eq(status(vm, srv), STVM_SOCKET_OTHER_END_CLOSED);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketError", &srv, 1)), 0);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketReceiveDataBufCount", rargs, 4)), 0);
    stvm_oop all[3] = {lis, cli, srv};
    for (int i = 0; i < 3; i++)
        ok(vm, "primitiveSocketDestroy", &all[i], 1);
    vm_done(vm);
}

/* ---- readiness the aio layer already knows ------------------------------------------ */

/* A connection made with primitives, each end with three registered semaphores. */
typedef struct pair {
    stvm_vm *vm;
    int bad_line;
    stvm_oop lis, cli, srv;
    stvm_semaphore *srv_read, *cli_write;
    stvm_oop results[8];
    int nresults;
    int64_t waits[4];
} pair;

/* Three new semaphores registered in the external table, and their indices. */
static void registered(stvm_vm *vm, stvm_semaphore *sems[3], stvm_oop idx[3])
{
    for (int i = 0; i < 3; i++) {
        int index;
        sems[i] = sem_make(vm);
        cr_assert_eq(stvm_external_register(vm, sems[i], &index), STVM_OK);
        idx[i] = SI(index);
    }
}

static stvm_oop create_with(stvm_vm *vm, stvm_semaphore *sems[3])
{
    stvm_oop idx[3];
    registered(vm, sems, idx);
    stvm_oop args[7] = {SI(0), SI(0), SI(8000), SI(8000), idx[0], idx[1], idx[2]};
    return ok(vm, "primitiveSocketCreate3Semaphores", args, 7);
}

static void pair_make(pair *p)
{
    memset(p, 0, sizeof *p);
    p->vm = vm_make(NULL);
    stvm_vm *vm = p->vm;
    stvm_semaphore *ls[3], *cs[3], *ss[3];
    p->lis = create_with(vm, ls);
    p->cli = create_with(vm, cs);
    stvm_oop lo = bytes_of(vm, LOOPBACK4, 4);
    stvm_oop largs[4] = {p->lis, SI(0), SI(4), lo};
    ok(vm, "primitiveSocketListenOnPortBacklogInterface", largs, 4);
    int64_t port = SI_VAL(ok(vm, "primitiveSocketLocalPort", &p->lis, 1));
    stvm_oop cargs[3] = {p->cli, lo, SI(port)};
    ok(vm, "primitiveSocketConnectToPort", cargs, 3);
    cr_assert_eq(status_after(vm, p->cli, STVM_SOCKET_WAITING_FOR_CONNECTION),
                 STVM_SOCKET_CONNECTED);
    cr_assert_eq(status_after(vm, p->lis, STVM_SOCKET_WAITING_FOR_CONNECTION),
                 STVM_SOCKET_CONNECTED);
    stvm_oop idx[3];
    registered(vm, ss, idx);
    stvm_oop aargs[6] = {p->lis, SI(8000), SI(8000), idx[0], idx[1], idx[2]};
    p->srv = ok(vm, "primitiveSocketAccept3Semaphores", aargs, 6);
    p->srv_read = ss[1];
    p->cli_write = cs[2];
}

static void pair_done(pair *p)
{
    stvm_oop all[3] = {p->lis, p->cli, p->srv};
    for (int i = 0; i < 3; i++)
        ok(p->vm, "primitiveSocketDestroy", &all[i], 1);
    SCENARIO_DONE(p);
}

/* A primitive called by a green process (no asserts there): its answer, or SENTINEL. */
static stvm_oop gcall(pair *p, const char *name, const stvm_oop *args, int nargs)
{
    stvm_oop r = SENTINEL;
    int fail;
    GCHECK(p, call(p->vm, name, args, nargs, &r, &fail) == STVM_OK);
    return r;
}

static int64_t receive(pair *p, stvm_oop h, stvm_oop buf, int64_t count)
{
    stvm_oop rargs[4] = {h, buf, SI(1), SI(count)};
    return SI_VAL(gcall(p, "primitiveSocketReceiveDataBufCount", rargs, 4));
}

/* The server's reader: a receive that finds nothing arms the read handler; the client's
 * bytes then sit in the socket, but no aio poll has seen them, so dataAvailable answers
 * false without looking; the wait on the read semaphore lets the idle process poll, the
 * handler fires, and dataAvailable answers true without looking; the receive takes the
 * bytes and uses up the firing, so the next dataAvailable looks (a peek: false). */
static void reader_trusting_the_handler(stvm_vm *vm, void *arg)
{
    pair *p = arg;
    stvm_oop buf;
    GCHECK(p, stvm_bytes_new(vm, 16, &buf) == STVM_OK);
    GCHECK(p, receive(p, p->srv, buf, 16) == 0);
    stvm_oop msg;
    GCHECK(p, stvm_bytes_new(vm, 5, &msg) == STVM_OK);
    stvm_oop sargs[4] = {p->cli, msg, SI(1), SI(5)};
    GCHECK(p, SI_VAL(gcall(p, "primitiveSocketSendDataBufCount", sargs, 4)) == 5);
    p->results[p->nresults++] = gcall(p, "primitiveSocketReceiveDataAvailable", &p->srv, 1);
    p->waits[0] = stvm_semaphore_wait_timeout_ms(vm, p->srv_read, 10000);
    p->results[p->nresults++] = gcall(p, "primitiveSocketReceiveDataAvailable", &p->srv, 1);
    GCHECK(p, receive(p, p->srv, buf, 16) == 5);
    p->results[p->nresults++] = gcall(p, "primitiveSocketReceiveDataAvailable", &p->srv, 1);
    stvm_oop_release(vm, buf);
    stvm_oop_release(vm, msg);
}

/* Make the pair, run fn in a green process of its VM, check its green asserts. */
static void pair_run(pair *p, stvm_fn fn)
{
    pair_make(p);
    spawn(p->vm, 40, "scenario", fn, p);
    RUN_OK_GREEN(p);
}

/* The answers the scenario recorded, each against what it should be and why. */
static void expect_answers(const pair *p, int n, const stvm_oop *want, const char *const *why)
{
    cr_assert_eq(p->nresults, n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(p->results[i], want[i], "answer %d: %s", i, why[i]);
}

Test(socket_plugin, data_available_answers_from_an_armed_or_fired_read_handler_without_looking)
{
    static pair p;
    pair_run(&p, reader_trusting_the_handler);
    static const stvm_oop want[] = {STVM_FALSE, STVM_TRUE, STVM_FALSE};
    static const char *const why[] = {"armed, not fired: false without a peek",
                                      "fired: true without a peek",
                                      "the receive used the firing up; the peek saw none"};
    expect_answers(&p, 3, want, why);
    cr_assert_eq(p.waits[0], STVM_OK, "the handler signalled the read semaphore");
    cr_assert_eq(stats_of(p.vm).fds_ready, 1);
    /* The host thread has no scheduling point that could poll: it always looks. */
    stvm_oop msg = bytes_of(p.vm, "abc", 3);
    stvm_oop sargs[4] = {p.cli, msg, SI(1), SI(3)};
    cr_assert_eq(SI_VAL(ok(p.vm, "primitiveSocketSendDataBufCount", sargs, 4)), 3);
    stvm_oop avail = STVM_FALSE;
    for (int i = 0; i < 2000 && avail != STVM_TRUE; i++) {
        avail = ok(p.vm, "primitiveSocketReceiveDataAvailable", &p.srv, 1);
        if (avail != STVM_TRUE)
            poll(NULL, 0, 1);
    }
    cr_assert_eq(avail, STVM_TRUE, "armed, but looked at from the host thread");
    pair_done(&p);
}

/* The peer closes while the read handler is armed: the firing saw the hang-up, so
 * dataAvailable looks, finds the end, answers false and turns the status. */
static void reader_of_a_closed_peer(stvm_vm *vm, void *arg)
{
    pair *p = arg;
    stvm_oop buf;
    GCHECK(p, stvm_bytes_new(vm, 16, &buf) == STVM_OK);
    GCHECK(p, receive(p, p->srv, buf, 16) == 0);
    gcall(p, "primitiveSocketCloseConnection", &p->cli, 1);
    p->waits[0] = stvm_semaphore_wait_timeout_ms(vm, p->srv_read, 10000);
    p->results[p->nresults++] = gcall(p, "primitiveSocketReceiveDataAvailable", &p->srv, 1);
    p->results[p->nresults++] = gcall(p, "primitiveSocketConnectionStatus", &p->srv, 1);
    stvm_oop_release(vm, buf);
}

Test(socket_plugin, a_read_handler_fired_by_the_peer_closing_makes_data_available_look)
{
    static pair p;
    pair_run(&p, reader_of_a_closed_peer);
    static const stvm_oop want[] = {STVM_FALSE, SI(STVM_SOCKET_OTHER_END_CLOSED)};
    static const char *const why[] = {"the end is no data", "the peek turned the status"};
    expect_answers(&p, 2, want, why);
    cr_assert_eq(p.waits[0], STVM_OK);
    pair_done(&p);
}

/* sendDone: true without looking while no send has found the socket full; a send that
 * sends less than asked makes it look (false, the write handler armed); the peer
 * draining fires the handler (the write semaphore is signalled), and sendDone answers
 * true again. */
static void writer_filling_the_socket(stvm_vm *vm, void *arg)
{
    pair *p = arg;
    enum { CHUNK = 1 << 16 };
    stvm_oop big, sink;
    GCHECK(p, stvm_bytes_new(vm, CHUNK, &big) == STVM_OK);
    GCHECK(p, stvm_bytes_new(vm, CHUNK, &sink) == STVM_OK);
    p->results[p->nresults++] = gcall(p, "primitiveSocketSendDone", &p->cli, 1);
    stvm_oop sargs[4] = {p->cli, big, SI(1), SI(CHUNK)};
    int64_t sent = 0, n;
    for (int i = 0; i < 1000 && (n = SI_VAL(gcall(p, "primitiveSocketSendDataBufCount",
                                                  sargs, 4))) == CHUNK; i++)
        sent += n;
    p->results[p->nresults++] = gcall(p, "primitiveSocketSendDone", &p->cli, 1);
    sent += n;
    /* The server drains everything sent, waiting for data as it goes. */
    for (int64_t got = 0, r; got < sent && !p->bad_line; got += r) {
        r = receive(p, p->srv, sink, CHUNK);
        if (r == 0)
            GCHECK(p, stvm_semaphore_wait_timeout_ms(vm, p->srv_read, 10000) == STVM_OK);
    }
    p->waits[0] = stvm_semaphore_wait_timeout_ms(vm, p->cli_write, 10000);
    p->results[p->nresults++] = gcall(p, "primitiveSocketSendDone", &p->cli, 1);
    stvm_oop one[4] = {p->cli, big, SI(1), SI(1)};
    GCHECK(p, SI_VAL(gcall(p, "primitiveSocketSendDataBufCount", one, 4)) == 1);
    p->results[p->nresults++] = gcall(p, "primitiveSocketSendDone", &p->cli, 1);
    stvm_oop_release(vm, big);
    stvm_oop_release(vm, sink);
}

Test(socket_plugin, send_done_looks_only_after_a_send_found_the_socket_full)
{
    static pair p;
    pair_run(&p, writer_filling_the_socket);
    static const stvm_oop want[] = {STVM_TRUE, STVM_FALSE, STVM_TRUE, STVM_TRUE};
    static const char *const why[] = {"nothing sent yet", "a send sent less than asked: full",
                                      "the firing said there is room",
                                      "a whole send: still room"};
    expect_answers(&p, 4, want, why);
    cr_assert_eq(p.waits[0], STVM_OK, "the write handler fired when the peer drained");
    pair_done(&p);
}

Test(socket_plugin, a_refused_connection_is_a_status_and_an_error_not_a_failure)
{
    stvm_vm *vm = vm_make(NULL);
    /* A port nobody listens on: one that was just closed. */
    stvm_oop lis = create(vm), lo = bytes_of(vm, LOOPBACK4, 4);
    stvm_oop largs[4] = {lis, SI(0), SI(1), lo};
    ok(vm, "primitiveSocketListenOnPortBacklogInterface", largs, 4);
    int64_t port = SI_VAL(ok(vm, "primitiveSocketLocalPort", &lis, 1));
    ok(vm, "primitiveSocketDestroy", &lis, 1);
    stvm_oop cli = create(vm);
    stvm_oop cargs[3] = {cli, lo, SI(port)};
    ok(vm, "primitiveSocketConnectToPort", cargs, 3);
    cr_assert_eq(status_after(vm, cli, STVM_SOCKET_WAITING_FOR_CONNECTION), STVM_SOCKET_UNCONNECTED);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketError", &cli, 1)), ECONNREFUSED);
    stvm_oop short_addr = bytes_of(vm, LOOPBACK4, 3);
    stvm_oop c2 = create(vm);
    stvm_oop bad[3] = {c2, short_addr, SI(port)};
    fails(vm, "primitiveSocketConnectToPort", bad, 3, STVM_PRIM_ERR_GENERIC);
    bad[1] = lo;
    bad[2] = SI(70000);
    fails(vm, "primitiveSocketConnectToPort", bad, 3, STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(status(vm, c2), STVM_SOCKET_UNCONNECTED, "a failed primitive changed nothing");
    vm_done(vm);
}

Test(socket_plugin, the_resolver_knows_numeric_addresses_and_localhost)
{
    stvm_vm *vm = vm_make(NULL);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveResolverStatus", NULL, 0)), 0);
    stvm_oop zero = SI(0);
    ok(vm, "primitiveInitializeNetwork", &zero, 1);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveResolverStatus", NULL, 0)), 1);
    const char *names[3] = {"localhost", "10.1.2.3", "::1"};
    size_t sizes[3] = {4, 4, 16};
    for (int i = 0; i < 3; i++) {
        stvm_oop name = bytes_of(vm, names[i], strlen(names[i]));
        ok(vm, "primitiveResolverStartNameLookup", &name, 1);
        cr_assert_eq(SI_VAL(ok(vm, "primitiveResolverStatus", NULL, 0)), 1);
        stvm_oop a = ok(vm, "primitiveResolverNameLookupResult", NULL, 0);
        uint8_t *p;
        size_t n;
        cr_assert_eq(stvm_bytes_data(vm, a, &p, &n), STVM_OK);
        cr_assert_eq(n, sizes[i], "%s", names[i]);
        cr_assert_eq(p[n - 1], i == 1 ? 3 : 1);
    }
    stvm_oop name = bytes_of(vm, "example.org", 11);
    ok(vm, "primitiveResolverStartNameLookup", &name, 1);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveResolverStatus", NULL, 0)), 3);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveResolverError", NULL, 0)), 1);
    fails(vm, "primitiveResolverNameLookupResult", NULL, 0, STVM_PRIM_ERR_GENERIC);
    fails(vm, "primitiveResolverStartNameLookup", &zero, 1, STVM_PRIM_ERR_GENERIC);
    vm_done(vm);
}

Test(socket_plugin, byte_arrays_are_zeroed_named_and_released)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_stats before = stats_of(vm);
    stvm_oop b = SENTINEL;
    cr_assert_eq(stvm_bytes_new(vm, 100, &b), STVM_OK);
    cr_assert_str_eq(stvm_oop_class_name(vm, b), "ByteArray");
    uint8_t *p;
    size_t n;
    cr_assert_eq(stvm_bytes_data(vm, b, &p, &n), STVM_OK);
    cr_assert_eq(n, 100);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(p[i], 0);
    cr_assert_eq(stvm_bytes_data(vm, SI(1), &p, &n), STVM_EINVAL);
    cr_assert_eq(stvm_bytes_data(vm, b, NULL, &n), STVM_EINVAL);
    cr_assert_eq(stvm_bytes_new(vm, ((size_t)1 << 30) + 1, &b), STVM_ERANGE);
    cr_assert_eq(stvm_bytes_new(NULL, 1, &b), STVM_EINVAL);
    cr_assert_eq(stvm_oop_release(vm, b), STVM_OK);
    cr_assert_eq(stvm_bytes_data(vm, b, &p, &n), STVM_EINVAL);
    stvm_oop empty;
    cr_assert_eq(stvm_bytes_new(vm, 0, &empty), STVM_OK);
    cr_assert_eq(stvm_oop_release(vm, empty), STVM_OK);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.objects_live, before.objects_live);
    vm_done(vm);
}

/* ---- a descriptor made elsewhere (the simulated clock's peer) ------------------------ */

typedef struct adopted {
    stvm_socket *s;
    char got[16];
    int64_t n;
} adopted;

static void read_adopted(stvm_vm *vm, void *arg)
{
    adopted *a = arg;
    a->n = stvm_socket_recv(vm, a->s, a->got, sizeof a->got - 1, 10000);
}

Test(socket_plugin, a_socketpair_end_adopted_is_a_connected_socket_that_owns_its_descriptor)
{
    stvm_vm *vm = vm_make(NULL);
    int fds[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    adopted a = {0};
    cr_assert_eq(stvm__socket_adopt(vm, fds[0], &a.s), STVM_OK);
    cr_expect_eq(stvm_socket_status(vm, a.s), STVM_SOCKET_CONNECTED);
    cr_expect_eq(fcntl(fds[0], F_GETFL) & O_NONBLOCK, O_NONBLOCK, "made non-blocking");
    spawn(vm, 40, "reader", read_adopted, &a);
    cr_assert_eq(write(fds[1], "hello", 5), 5);
    run_ok(vm);
    cr_expect_eq(a.n, 5);
    cr_expect_str_eq(a.got, "hello");
    cr_assert_eq(stvm_socket_close(vm, a.s), STVM_OK);
    cr_expect_eq(fcntl(fds[0], F_GETFD), -1, "the socket's close closed the adopted end");
    close(fds[1]);
    vm_done(vm);
}

Test(socket_plugin, adopting_what_is_not_a_connected_stream_socket_is_einval_and_leaves_it)
{
    stvm_vm *vm = vm_make(NULL);
    int p[2], lone = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(pipe(p), 0);
    cr_assert_geq(lone, 0);
    const int bad[] = {p[0], lone, -1, 1 << 20};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        stvm_socket *s = (stvm_socket *)(uintptr_t)SENTINEL;
        cr_expect_eq(stvm__socket_adopt(vm, bad[i], &s), STVM_EINVAL, "descriptor %d", bad[i]);
        cr_expect_eq(s, (stvm_socket *)(uintptr_t)SENTINEL, "nothing written for descriptor %d", bad[i]);
        if (bad[i] >= 0 && bad[i] < (1 << 20))
            cr_expect_neq(fcntl(bad[i], F_GETFD), -1, "descriptor %d stays open", bad[i]);
    }
    close(p[0]);
    close(p[1]);
    close(lone);
    vm_done(vm);
}

/* ---- the local domain and the generalised addresses ------------------------------------------ */

/* A socket address (primitives/sockaddr.h: a whole sockaddr in a ByteArray) of a path. */
static stvm_oop unix_address(stvm_vm *vm, const char *path)
{
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    cr_assert_lt(n, sizeof un.sun_path);
    memcpy(un.sun_path, path, n + 1);
    return bytes_of(vm, &un, offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static stvm_oop create_in(stvm_vm *vm, int net_type)
{
    stvm_oop idx[3];
    semas(vm, idx);
    stvm_oop args[7] = {SI(net_type), SI(0), SI(8000), SI(8000), idx[0], idx[1], idx[2]};
    return ok(vm, "primitiveSocketCreate3Semaphores", args, 7);
}

/* The size and bytes of a socket's address by the generalised primitives. */
static size_t address_of(stvm_vm *vm, stvm_oop h, bool peer, uint8_t *out)
{
    size_t n = (size_t)SI_VAL(ok(vm, peer ? "primitiveSocketRemoteAddressSize"
                                          : "primitiveSocketLocalAddressSize", &h, 1));
    stvm_oop b;
    cr_assert_eq(stvm_bytes_new(vm, n, &b), STVM_OK);
    stvm_oop args[2] = {h, b};
    ok(vm, peer ? "primitiveSocketRemoteAddressResult" : "primitiveSocketLocalAddressResult",
       args, 2);
    uint8_t *p;
    size_t size;
    cr_assert_eq(stvm_bytes_data(vm, b, &p, &size), STVM_OK);
    memcpy(out, p, n);
    cr_assert_eq(stvm_oop_release(vm, b), STVM_OK);
    return n;
}

Test(socket_plugin, the_local_domain_binds_listens_connects_and_accepts_by_socket_address)
{
    stvm_vm *vm = vm_make(NULL);
    char dir[256], path[300];
    temp_template(dir, sizeof dir, "stvm-plugin", "");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sock", dir);
    /* netType: the Unix plugin's domains; any other value fails. */
    stvm_oop idx[3];
    semas(vm, idx);
    stvm_oop bad[7] = {SI(4), SI(0), SI(8000), SI(8000), idx[0], idx[1], idx[2]};
    fails(vm, "primitiveSocketCreate3Semaphores", bad, 7, STVM_PRIM_ERR_GENERIC);
    bad[0] = SI(-1);
    fails(vm, "primitiveSocketCreate3Semaphores", bad, 7, STVM_PRIM_ERR_GENERIC);
    stvm_oop l = create_in(vm, 1);
    stvm_oop addr = unix_address(vm, path);
    stvm_oop bind_args[2] = {l, addr};
    ok(vm, "primitiveSocketBindTo", bind_args, 2);
    stvm_oop listen_args[2] = {l, SI(0)};
    fails(vm, "primitiveSocketListenWithBacklog", listen_args, 2, STVM_PRIM_ERR_GENERIC);
    listen_args[1] = SI(4);
    ok(vm, "primitiveSocketListenWithBacklog", listen_args, 2);
    cr_assert_eq(status(vm, l), STVM_SOCKET_WAITING_FOR_CONNECTION);
    uint8_t sa[128];
    size_t n = address_of(vm, l, false, sa);
    cr_assert_eq(((struct sockaddr_un *)sa)->sun_family, AF_UNIX);
    cr_assert_str_eq(((struct sockaddr_un *)sa)->sun_path, path);
    /* A second socket bound to the same path: EADDRINUSE is the socket's error. */
    stvm_oop again = create_in(vm, 1);
    bind_args[0] = again;
    fails(vm, "primitiveSocketBindTo", bind_args, 2, STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketError", &again, 1)), EADDRINUSE);
    /* Connect, accept, move a byte each way. */
    stvm_oop c = create_in(vm, 1);
    stvm_oop connect_args[2] = {c, addr};
    ok(vm, "primitiveSocketConnectTo", connect_args, 2);
    cr_assert_eq(status_after(vm, c, STVM_SOCKET_WAITING_FOR_CONNECTION), STVM_SOCKET_CONNECTED);
    cr_assert_eq(status_after(vm, l, STVM_SOCKET_WAITING_FOR_CONNECTION), STVM_SOCKET_CONNECTED);
    stvm_oop aidx[3];
    semas(vm, aidx);
    stvm_oop accept_args[6] = {l, SI(8000), SI(8000), aidx[0], aidx[1], aidx[2]};
    stvm_oop s = ok(vm, "primitiveSocketAccept3Semaphores", accept_args, 6);
    n = address_of(vm, c, true, sa);
    cr_assert_str_eq(((struct sockaddr_un *)sa)->sun_path, path, "the client's peer");
    n = address_of(vm, s, true, sa);
    cr_assert_eq(n, sizeof(sa_family_t), "an unnamed peer: its family alone");
    stvm_oop buf = bytes_of(vm, "u", 1);
    stvm_oop send_args[4] = {c, buf, SI(1), SI(1)};
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketSendDataBufCount", send_args, 4)), 1);
    stvm_oop rbuf = bytes_of(vm, "?", 1);
    stvm_oop recv_args[4] = {s, rbuf, SI(1), SI(1)};
    int64_t got = 0;
    for (int i = 0; i < 2000 && !got; i++) {
        got = SI_VAL(ok(vm, "primitiveSocketReceiveDataBufCount", recv_args, 4));
        if (!got)
            poll(NULL, 0, 1);
    }
    cr_assert_eq(got, 1);
    /* A result ByteArray of the wrong size is refused. */
    stvm_oop small;
    cr_assert_eq(stvm_bytes_new(vm, 1, &small), STVM_OK);
    stvm_oop result_args[2] = {s, small};
    fails(vm, "primitiveSocketLocalAddressResult", result_args, 2, STVM_PRIM_ERR_BAD_ARGUMENT);
    /* The remote address of an unconnected socket fails. */
    stvm_oop u = create_in(vm, 1);
    fails(vm, "primitiveSocketRemoteAddressSize", &u, 1, STVM_PRIM_ERR_GENERIC);
    /* Socket addresses that are none: the wrong size, an empty path, no NUL. */
    uint8_t junk[3] = {AF_UNIX, 0, 'x'};
    stvm_oop j = bytes_of(vm, junk, 3);
    stvm_oop junk_args[2] = {u, j};
    fails(vm, "primitiveSocketConnectTo", junk_args, 2, STVM_PRIM_ERR_GENERIC);
    struct sockaddr_in in4 = {.sin_family = AF_INET};
    junk_args[1] = bytes_of(vm, &in4, sizeof in4 - 1);
    fails(vm, "primitiveSocketBindTo", junk_args, 2, STVM_PRIM_ERR_GENERIC);
    struct sockaddr_un unterminated = {.sun_family = AF_UNIX};
    memset(unterminated.sun_path, 'x', sizeof unterminated.sun_path);
    junk_args[1] = bytes_of(vm, &unterminated, sizeof unterminated);
    fails(vm, "primitiveSocketConnectTo", junk_args, 2, STVM_PRIM_ERR_GENERIC);
    stvm_oop handles[5] = {l, again, c, s, u};
    for (int i = 0; i < 5; i++)
        ok(vm, "primitiveSocketDestroy", &handles[i], 1);
    cr_assert_eq(unlink(path), 0, "the plugin never removes the path");
    cr_assert_eq(rmdir(dir), 0);
    vm_done(vm);
}

Test(socket_plugin, a_listen_that_cannot_bind_keeps_the_systems_reason)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_oop h = create(vm);
    stvm_oop addr = bytes_of(vm, (uint8_t[4]){192, 0, 2, 1}, 4);
    stvm_oop args[4] = {h, SI(0), SI(4), addr};
    fails(vm, "primitiveSocketListenOnPortBacklogInterface", args, 4, STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(SI_VAL(ok(vm, "primitiveSocketError", &h, 1)), EADDRNOTAVAIL);
    cr_assert_eq(status(vm, h), STVM_SOCKET_UNCONNECTED, "left as it was");
    ok(vm, "primitiveSocketDestroy", &h, 1);
    vm_done(vm);
}
