/*
 * Socket streams at the end of the stream and after a half-close, over loopback on the
 * real clock (suite stream): the end answers STVM_EEOF every time, a last line without
 * its newline is a line first, an empty line is 0 with ""; writes go on after the peer's
 * FIN (a real C peer, tests/bsd_peer.h); shutting the socket's sending side flushes what
 * the stream holds first; reads and writes have timeouts of their own. The stream's
 * buffers and its counters are the socket suite's (test_socket.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

#include "bsd_peer.h"

#define LONG 10000   /* ms: a timeout that must never run out */

typedef struct ends {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener;
    bsd_peer peer;
    void (*serve)(stvm_vm *vm, struct ends *e, stvm_socket *c, stvm_stream *st);
    int64_t rc[8];
    char line[8][32];
} ends;

static void stream_server(stvm_vm *vm, void *arg)
{
    ends *e = arg;
    stvm_socket *c = NULL;
    stvm_stream *st = NULL;
    GCHECK(e, stvm_socket_accept(vm, e->listener, LONG, &c) == STVM_OK);
    if (c && stvm_stream_open(vm, c, LONG, &st) == STVM_OK)
        e->serve(vm, e, c, st);
    if (c)
        GCHECK(e, stvm_socket_close(vm, c) == STVM_OK);
}

/* A C peer sends `send` and shuts its side; serve reads and answers through a stream. */
static void with_peer(ends *e, const char *send,
                      void (*serve)(stvm_vm *, ends *, stvm_socket *, stvm_stream *))
{
    e->vm = vm_make(NULL);
    cr_assert_eq(stvm_tcp_listen(e->vm, "127.0.0.1", 0, 4, &e->listener), STVM_OK);
    e->peer.port = stvm_socket_port(e->listener);
    e->peer.send = send;
    e->serve = serve;
    bsd_peer_start(&e->peer);
    spawn(e->vm, 40, "server", stream_server, e);
    run_ok(e->vm);
    bsd_peer_join(&e->peer);
    cr_assert_eq(e->peer.err, 0, "the peer's %s failed: %s", e->peer.failed,
                 strerror(e->peer.err));
    cr_assert_eq(stvm_socket_close(e->vm, e->listener), STVM_OK);
    ASSERT_GREEN_OK(e);
}

static void read_lines(stvm_vm *vm, ends *e, stvm_socket *c, stvm_stream *st)
{
    for (int i = 0; i < 6; i++) {
        strcpy(e->line[i], "unset");
        e->rc[i] = stvm_stream_read_line(vm, st, e->line[i], sizeof e->line[i]);
    }
    char b;
    e->rc[6] = stvm_stream_read(vm, st, &b, 1);
}

Test(stream, read_line_at_end_answers_eof_every_time)
{
    static ends e;
    memset(&e, 0, sizeof e);
    with_peer(&e, "one\r\n\ntwo", read_lines);
    cr_assert_eq(e.rc[0], 3);
    cr_assert_str_eq(e.line[0], "one");
    cr_assert_eq(e.rc[1], 0, "an empty line");
    cr_assert_str_eq(e.line[1], "");
    cr_assert_eq(e.rc[2], 3, "a last line without its newline is a line");
    cr_assert_str_eq(e.line[2], "two");
    for (int i = 3; i < 6; i++) {
        cr_assert_eq(e.rc[i], STVM_EEOF, "read_line #%d at the end: %s", i,
                     stvm_err_name((int)e.rc[i]));
        cr_assert_str_eq(e.line[i], "unset", "buf is untouched at the end");
    }
    cr_assert_eq(e.rc[6], STVM_EEOF, "a read at the end: %s", stvm_err_name((int)e.rc[6]));
    vm_done(e.vm);
}

/* The loop the header shows: `>= 0` until EEOF, the empty line counted as one. */
static void count_lines(stvm_vm *vm, ends *e, stvm_socket *c, stvm_stream *st)
{
    char line[32];
    int64_t n;
    while ((n = stvm_stream_read_line(vm, st, line, sizeof line)) >= 0 && e->rc[1] < 100)
        e->rc[1]++;
    e->rc[0] = n;
}

Test(stream, a_read_line_loop_ends_at_the_end_of_the_stream)
{
    static ends e;
    memset(&e, 0, sizeof e);
    with_peer(&e, "a\n\nb\n", count_lines);
    cr_assert_eq(e.rc[0], STVM_EEOF, "%s", stvm_err_name((int)e.rc[0]));
    cr_assert_eq(e.rc[1], 3, "three lines, one of them empty");
    vm_done(e.vm);
}

static void read_all(stvm_vm *vm, ends *e, stvm_socket *c, stvm_stream *st)
{
    int64_t n;
    size_t got = 0;
    while ((n = stvm_stream_read(vm, st, e->line[0] + got, sizeof e->line[0] - 1 - got)) > 0)
        got += (size_t)n;
    e->rc[0] = n;
    e->rc[1] = stvm_stream_read(vm, st, e->line[1], 4);
    e->rc[2] = (int64_t)got;
}

Test(stream, read_at_end_answers_eof_every_time)
{
    static ends e;
    memset(&e, 0, sizeof e);
    with_peer(&e, "abcdef", read_all);
    cr_assert_eq(e.rc[2], 6);
    cr_assert_str_eq(e.line[0], "abcdef");
    cr_assert_eq(e.rc[0], STVM_EEOF, "%s", stvm_err_name((int)e.rc[0]));
    cr_assert_eq(e.rc[1], STVM_EEOF, "%s", stvm_err_name((int)e.rc[1]));
    vm_done(e.vm);
}

/* A request read to its end, then the answer written and flushed: it goes out. */
static void answer_after_eof(stvm_vm *vm, ends *e, stvm_socket *c, stvm_stream *st)
{
    char line[32];
    e->rc[0] = stvm_stream_read_line(vm, st, line, sizeof line);
    e->rc[1] = stvm_stream_read_line(vm, st, line, sizeof line);
    e->rc[2] = stvm_stream_write(vm, st, "HTTP/1.0 200 OK\r\n\r\nbye", 23);
    e->rc[3] = stvm_stream_flush(vm, st);
}

Test(stream, write_and_flush_after_peer_shutdown_write_are_delivered)
{
    static ends e;
    memset(&e, 0, sizeof e);
    with_peer(&e, "GET / HTTP/1.0\r\n", answer_after_eof);
    cr_assert_eq(e.rc[0], 14);
    cr_assert_eq(e.rc[1], STVM_EEOF);
    cr_assert_eq(e.rc[2], STVM_OK, "%s", stvm_err_name((int)e.rc[2]));
    cr_assert_eq(e.rc[3], STVM_OK, "%s", stvm_err_name((int)e.rc[3]));
    cr_assert_str_eq(e.peer.got, "HTTP/1.0 200 OK\r\n\r\nbye");
    vm_done(e.vm);
}

/* Shutting the sending side flushes what the stream holds first: the last words are
 * not lost, and writing after it is refused without buffering anything. */
static void last_words(stvm_vm *vm, ends *e, stvm_socket *c, stvm_stream *st)
{
    char line[32];
    e->rc[0] = stvm_stream_read_line(vm, st, line, sizeof line);
    GCHECK(e, stvm_stream_write(vm, st, "last words\n", 11) == STVM_OK);
    e->rc[1] = stvm_socket_shutdown(vm, c, SHUT_WR);
    e->rc[2] = stvm_stream_write(vm, st, "more", 4);
    e->rc[3] = stvm_stream_flush(vm, st);
    stvm_stream_stats ss;
    GCHECK(e, stvm_stream_get_stats(st, &ss) == STVM_OK);
    e->rc[4] = (int64_t)ss.buffer_bytes;
}

Test(stream, shutdown_write_flushes_what_the_stream_holds_first)
{
    static ends e;
    memset(&e, 0, sizeof e);
    e.peer.no_shutdown = true;   /* the peer reads until our FIN */
    with_peer(&e, "bye\n", last_words);
    cr_assert_eq(e.rc[0], 3);
    cr_assert_eq(e.rc[1], STVM_OK, "%s", stvm_err_name((int)e.rc[1]));
    cr_assert_str_eq(e.peer.got, "last words\n", "the peer read what was buffered, then our FIN");
    cr_assert_eq(e.rc[2], STVM_ECLOSED, "a write after SHUT_WR: %s", stvm_err_name((int)e.rc[2]));
    cr_assert_eq(e.rc[3], STVM_OK, "nothing buffered to flush");
    cr_assert_eq(e.rc[4], 0, "nothing was buffered");
    vm_done(e.vm);
}

/* ---- read and write timeouts --------------------------------------------------------------- */

typedef struct timeouts {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener, *client, *server;
    stvm_stream *st;
    int port;
    int64_t read_rc, write_rc, late_read_rc, bad_rc[4];
    uint64_t read_us, write_us, late_read_us;
} timeouts;

static void late_sender(stvm_vm *vm, void *arg)
{
    timeouts *t = arg;
    stvm_delay_wait_ms(vm, 100);
    GCHECK(t, stvm_socket_send(vm, t->client, "x", 1, LONG) == 1);
}

/* The peer (client) never reads: a large write fills both kernels' buffers. */
static void timed(stvm_vm *vm, void *arg)
{
    timeouts *t = arg;
    GCHECK(t, stvm_tcp_connect(vm, "127.0.0.1", t->port, LONG, &t->client) == STVM_OK);
    GCHECK(t, stvm_socket_accept(vm, t->listener, LONG, &t->server) == STVM_OK);
    GCHECK(t, stvm_stream_open(vm, t->server, LONG, &t->st) == STVM_OK);
    if (!t->st)
        return;
    /* An idle reader times out after its read timeout; writes keep theirs. */
    GCHECK(t, stvm_stream_set_read_timeout_ms(vm, t->st, 30) == STVM_OK);
    uint64_t t0 = stvm_vm_now_us(vm);
    char b;
    t->read_rc = stvm_stream_read(vm, t->st, &b, 1);
    t->read_us = stvm_vm_now_us(vm) - t0;
    /* A slow write times out after its write timeout. */
    GCHECK(t, stvm_stream_set_write_timeout_ms(vm, t->st, 40) == STVM_OK);
    static uint8_t block[1 << 16];
    t0 = stvm_vm_now_us(vm);
    t->write_rc = STVM_OK;
    for (int i = 0; i < 1024 && t->write_rc == STVM_OK; i++)
        t->write_rc = stvm_stream_write(vm, t->st, block, sizeof block);
    t->write_us = stvm_vm_now_us(vm) - t0;
    /* A read with no limit outlasts the write timeout. */
    GCHECK(t, stvm_stream_set_read_timeout_ms(vm, t->st, -1) == STVM_OK);
    GCHECK(t, stvm_spawn(vm, 40, "sender", late_sender, t, NULL) == STVM_OK);
    t0 = stvm_vm_now_us(vm);
    t->late_read_rc = stvm_stream_read(vm, t->st, &b, 1);
    t->late_read_us = stvm_vm_now_us(vm) - t0;
    t->bad_rc[0] = stvm_stream_set_read_timeout_ms(vm, t->st, -2);
    t->bad_rc[1] = stvm_stream_set_write_timeout_ms(vm, t->st, INT64_MIN);
    t->bad_rc[2] = stvm_stream_set_read_timeout_ms(NULL, t->st, 1);
    t->bad_rc[3] = stvm_stream_set_write_timeout_ms(vm, (stvm_stream *)t->client, 1);
    GCHECK(t, stvm_socket_close(vm, t->server) == STVM_OK);
    GCHECK(t, stvm_socket_close(vm, t->client) == STVM_OK);
}

Test(stream, read_and_write_timeouts_are_set_apart)
{
    timeouts t = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_tcp_listen(t.vm, "127.0.0.1", 0, 4, &t.listener), STVM_OK);
    t.port = stvm_socket_port(t.listener);
    spawn(t.vm, 40, "timed", timed, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.read_rc, STVM_ETIMEDOUT, "%s", stvm_err_name((int)t.read_rc));
    cr_assert(t.read_us >= 25000 && t.read_us < 5000000, "the read waited %llu us",
              (unsigned long long)t.read_us);
    cr_assert_eq(t.write_rc, STVM_ETIMEDOUT, "%s", stvm_err_name((int)t.write_rc));
    cr_assert_lt(t.write_us, 5000000, "the write gave up after its own timeout");
    cr_assert_eq(t.late_read_rc, 1, "%s", stvm_err_name((int)t.late_read_rc));
    cr_assert_geq(t.late_read_us, 90000);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(t.bad_rc[i], STVM_EINVAL, "bad #%d: %s", i, stvm_err_name((int)t.bad_rc[i]));
    cr_assert_eq(stvm_socket_close(t.vm, t.listener), STVM_OK);
    SCENARIO_DONE(&t);
}
