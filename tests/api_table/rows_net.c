/*
 * The API table's rows for descriptors, sockets and streams (stvm/net.h): how each
 * function is called, what its generated rows need, and the rows written out
 * (tests/test_api_table.c runs them, this module's last: see the last row).
 */
#include "api_table.h"

/* Make the call a row of this module describes (c: its arguments, resolved), or answer
 * R_NOT_MINE for another module's function. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    stvm_vm *vm = c->vm;
    stvm_socket *sk = c->sk;
    stvm_stream *st = c->st;
    union out_slot *o = c->o;
    void *buf = c->buf;
    const char *host = c->host;
    const char *name = c->name;
    char *nbuf = c->nbuf;
    size_t nsize = c->nsize;
    const char *path = c->path;
    int port = c->port;
    int64_t r;
    switch (fn) {
    case F_fd_wait: return stvm_fd_wait(vm, api_fd_of(f, a->fd), (int)a->n, a->t);
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
    case F_socket_set_name: return stvm_socket_set_name(vm, sk, name);
    case F_socket_get_name: return count_or(stvm_socket_get_name(vm, sk, nbuf, nsize));
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
    }
    return R_NOT_MINE;
}

/* A function without a vm cannot tell another VM's handle (or a forged one) from its
 * own: it is given only handles of another kind. */
static const int novm_socket_wrong[] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_STREAM, H_BOX, H_BYTES,
                                        H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, 0};
static const int novm_stream_wrong[] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_BOX, H_BYTES,
                                        H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, 0};

/* One line a function: what its generated rows need (NO_DESC: none are generated). */
static const fn_line lines[] = {
    /* descriptors, sockets, streams: the plain ones are V_NET's */
    DESC(fd_wait, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                   .ok = {.vm = V_NET, .fd = FD_PIPE, .n = STVM_IO_READ, .t = 1}),
    DESC(tcp_listen, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.vm = V_NET, .m = 4}),
    DESC(tcp_connect, .null_vm = E_INVAL, .null_out = E_INVAL, .not_proc = STVM_ENOTPROC,
                       .ctx = C_GREEN, .ok = {.vm = V_NET, .n = PORT_LISTENING, .t = 1}),
    DESC(unix_listen, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.vm = V_NET, .m = 4}),
    DESC(unix_connect, .null_vm = E_INVAL, .null_out = E_INVAL, .not_proc = STVM_ENOTPROC,
                        .ctx = C_GREEN, .ok = {.vm = V_NET, .t = 1}),
    DESC(socket_accept, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                         .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.vm = V_NET, .h = H_LISTENER, .t = 1}),
    DESC(socket_send, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                       .ok = {.vm = V_NET, .z = 1, .t = 1}),
    DESC(socket_recv, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                       .ok = {.vm = V_NET, .z = 1, .t = 1}),
    DESC(socket_shutdown, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                           .ok = {.vm = V_NET, .n = 0}),
    DESC(socket_close, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                        .ok = {.vm = V_NET}),
    DESC(socket_fd, .kind = K_SOCKET, .bad_handle = E_INVAL, .ok = {.vm = V_NET},
                     .wrong = novm_socket_wrong),
    DESC(socket_port, .kind = K_SOCKET, .bad_handle = E_INVAL, .ok = {.vm = V_NET},
                       .wrong = novm_socket_wrong),
    DESC(socket_peer_address, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                               .ok = {.vm = V_NET, .z = 64}),
    DESC(socket_local_address, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                                .ok = {.vm = V_NET, .z = 64}),
    DESC(socket_status, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                         .ok = {.vm = V_NET}),
    DESC(socket_read_semaphore, .kind = K_SOCKET, .bad_handle = R_NULL, .ok = {.vm = V_NET},
                                 .wrong = novm_socket_wrong),
    DESC(socket_set_name, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                           .ok = {.vm = V_NET}),
    DESC(socket_get_name, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                           .ok = {.vm = V_NET}),
    DESC(stream_open, .null_vm = E_INVAL, .kind = K_SOCKET, .bad_handle = E_INVAL,
                       .null_out = E_INVAL, .ok = {.vm = V_NET, .t = -1}),
    DESC(stream_set_read_timeout_ms, .null_vm = E_INVAL, .kind = K_STREAM,
                                      .bad_handle = E_INVAL, .ok = {.vm = V_NET, .t = 5}),
    DESC(stream_set_write_timeout_ms, .null_vm = E_INVAL, .kind = K_STREAM,
                                       .bad_handle = E_INVAL, .ok = {.vm = V_NET, .t = 5}),
    DESC(stream_read, .null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.vm = V_NET, .z = 1}),
    DESC(stream_read_line, .null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                            .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                            .ok = {.vm = V_NET, .z = 64}),
    DESC(stream_write, .null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.vm = V_NET, .z = 1}),
    DESC(stream_flush, .null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.vm = V_NET}),
    DESC(stream_get_stats, .kind = K_STREAM, .bad_handle = E_INVAL, .null_out = E_INVAL,
                            .ok = {.vm = V_NET}, .wrong = novm_stream_wrong),
    DESC(stream_close, .null_vm = E_INVAL, .kind = K_STREAM, .bad_handle = E_INVAL,
                        .ok = {.vm = V_NET}),
};

#define FDW(what, want, ...) ROW(fd_wait, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
#define LISTEN(what, want, ...) ROW(tcp_listen, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
#define ACCEPT(what, want, ...) ROW(socket_accept, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
#define CONNECT(what, want, ...) ROW(tcp_connect, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
#define ULISTEN(what, want, ...) ROW(unix_listen, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
#define UCONNECT(what, want, ...) ROW(unix_connect, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
#define PATH_108 "/tmp/a123456789b123456789c123456789d123456789e123456789f123456789" \
                 "g123456789h123456789i123456789j123456789k12"
#define SEND(what, want, ...) ROW(socket_send, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
#define RECV(what, want, ...) ROW(socket_recv, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
#define SHUTDOWN(what, want, ...) ROW(socket_shutdown, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
#define ADDRESS(fn, what, want, ...) ROW(fn, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
#define SREAD(fn, what, want, ...) ROW(fn, what, C_GREEN, want, .vm = V_NET, __VA_ARGS__)
static const row rows[] = {
    /* ---- struct sizes (include/README.md, "Structs that grow") ---- */
    ROW(stream_get_stats, "struct size from a newer header", C_HOST, STVM_ESIZE, .vm = V_NET,
        .ssize = sizeof(stvm_stream_stats) + 8),

    /* ---- names (stvm/core.h, "Names") ---- */
    NAME_ROWS(socket, .vm = V_NET),

    /* ---- descriptors: stvm_fd_wait (V_NET; the wrong contexts are generated) ---- */
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

    /* Last: were D12 back, this row would leave the reader's handler disarmed, and the
     * rows after it would see that instead of their own doing. */
    ROW(socket_recv, "a socket a process waits to read from, 0 ms: EWAITING",
        C_GREEN, STVM_EWAITING, .vm = V_NET, .h = H_READ_WAITED, .z = 1, .t = 0),
};

const api_module api_rows_net = API_MODULE(net, NULL);
