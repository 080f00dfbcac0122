/*
 * The public socket and stream calls (stvm.h, "Sockets"), built on the image side's
 * Socket and SocketStream: each checks its arguments and its caller, then does what a
 * Pharo program would (NetNameResolver for the host, Socket>>connectTo:port:waitFor...,
 * listenOn:backlogSize:interface:, waitForAcceptFor:, sendData:, receiveDataInto:).
 */
#include <errno.h>
#include <string.h>

#include "../../vm/abi.h"
#include "../../vm/bytes.h"
#include "../../vm/integer.h"
#include "../../vm/objmem.h"
#include "../../primitives/sockaddr.h"
#include "../kernel/delay.h"
#include "socket_stream.h"

#define MAX_LEN ((size_t)INT64_MAX)

static stvm_socket *socket_of(stvm_vm *vm, stvm_socket *s)
{
    return vm ? stvm__prim_object_of(vm, (stvm_oop)s, STVM_CLASS_SOCKET) : NULL;
}

static stvm_stream *stream_of(stvm_vm *vm, stvm_stream *st)
{
    return vm ? stvm__prim_object_of(vm, (stvm_oop)st, STVM_CLASS_SOCKET_STREAM) : NULL;
}

/* A wait's timeout: -1, 0 or a duration the Delay scheduler takes. */
static int check_timeout(stvm_vm *vm, int64_t timeout_ms)
{
    if (timeout_ms < -1)
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    return timeout_ms > 0 ? stvm__check_duration(vm, timeout_ms, true) : STVM_OK;
}

/* NetNameResolver addressForName: host -> a new 4- or 16-byte ByteArray. EINVAL,
 * ENOMEM. Pharo's answers a numeric address from addressFromString:, without the
 * resolver; the resolver stvm has knows nothing else but "localhost", which is parsed
 * here as well. So the resolver's status is never touched, and a host that is not an
 * address is refused before anything is allocated. */
static int resolve(stvm_vm *vm, const char *host, stvm_oop *address)
{
    uint8_t addr[16];
    int len;
    if (!stvm__socket_parse_host((const uint8_t *)host, strlen(host), addr, &len))
        return STVM_EINVAL;
    stvm_byte_array *b = stvm__bytes_alloc(vm, (size_t)len);
    if (!b)
        return STVM_ENOMEM;
    memcpy(b->bytes, addr, (size_t)len);
    *address = (stvm_oop)b;
    return STVM_OK;
}

/* ---- opening --------------------------------------------------------------------------- */

/* A call that fails after allocating (a taken port, a full external table) frees what
 * it made and takes it out of the allocation counters: it changes nothing. */
int stvm_tcp_listen(stvm_vm *vm, const char *host, int port, int backlog, stvm_socket **out)
{
    if (!vm || !host || !out || port < 0 || port > 65535 || backlog < 1 || backlog > 65535)
        return STVM_EINVAL;
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    stvm_oop address = STVM_NIL;
    stvm_socket *s = NULL;
    int err = resolve(vm, host, &address);
    if (!err && !(err = stvm__socket_new(vm, &s)) &&
        (err = stvm__socket_listen(vm, s, port, backlog, address)))
        stvm__socket_free(vm, s);
    if (address != STVM_NIL)
        stvm_oop_release(vm, address);
    if (err) {
        stvm__alloc_forget(vm, mark);
        return err;
    }
    *out = s;
    return STVM_OK;
}

int stvm_tcp_accept(stvm_vm *vm, stvm_socket *listener, int64_t timeout_ms, stvm_socket **out)
{
    stvm_socket *l = socket_of(vm, listener);
    if (!l || !l->listener || !out)
        return STVM_EINVAL;
    int err = check_timeout(vm, timeout_ms);
    if (err)
        return err;
    /* Socket>>waitForAcceptFor:: the listener's status turns Connected when a connection
     * waits; then Socket>>accept. */
    err = stvm__socket_wait_for_connection(vm, l, timeout_ms);
    if (err == STVM_ECLOSED)
        err = STVM_ESYS;
    if (!err)
        err = stvm__socket_accept_from(vm, l, out);
    return err;
}

/* A connect in progress is undone if its process is terminated while it waits. */
typedef struct connecting {
    stvm_wait_guard guard;
    stvm_socket *s;
} connecting;

static void connect_undo(stvm_vm *vm, stvm_wait_guard *g)
{
    stvm__socket_free(vm, STVM_CONTAINER(g, connecting, guard)->s);
}

int stvm_tcp_connect(stvm_vm *vm, const char *host, int port, int64_t timeout_ms,
                     stvm_socket **out)
{
    if (!vm || !host || !out || port < 1 || port > 65535)
        return STVM_EINVAL;
    int err = check_timeout(vm, timeout_ms);
    stvm_oop address = STVM_NIL;
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    if (err || (err = resolve(vm, host, &address))) {
        stvm__alloc_forget(vm, mark);
        return err;
    }
    connecting c = {.guard.undo = connect_undo};
    err = stvm__socket_new(vm, &c.s);
    if (!err)
        err = stvm__socket_connect_nonblocking(vm, c.s, address, port);
    stvm_oop_release(vm, address);
    if (err) {
        /* Refused before the wait (which lets other processes allocate): undone. */
        if (c.s)
            stvm__socket_free(vm, c.s);
        stvm__alloc_forget(vm, mark);
        return err;
    }
    stvm__wait_guard_push(vm, &c.guard);
    err = stvm__socket_wait_for_connection(vm, c.s, timeout_ms);
    stvm__wait_guard_pop(vm, &c.guard);
    if (err == STVM_ECLOSED)
        err = stvm__socket_error(vm, c.s) == ECONNREFUSED ? STVM_ECONNREFUSED : STVM_ESYS;
    if (err) {
        stvm__socket_free(vm, c.s);
        return err;
    }
    *out = c.s;
    return STVM_OK;
}

/* ---- sending and receiving --------------------------------------------------------------- */

/* The checks of send and recv. */
static int transfer_checks(stvm_vm *vm, stvm_socket *s, const void *buf, size_t len,
                           int64_t timeout_ms)
{
    if (!s || s->listener || (!buf && len > 0) || len > MAX_LEN)
        return STVM_EINVAL;
    return check_timeout(vm, timeout_ms);
}

/* Sent through a buffer of the pool (the plugin sends from a ByteArray), held while the
 * send lasts, STVM_BUFFER_SIZE bytes at a time. */
int64_t stvm_socket_send(stvm_vm *vm, stvm_socket *sock, const void *buf, size_t len,
                         int64_t timeout_ms)
{
    stvm_socket *s = socket_of(vm, sock);
    int err = transfer_checks(vm, s, buf, len, timeout_ms);
    if (err)
        return err;
    stvm_byte_array *b = len ? stvm__buffer_take(vm) : NULL;
    if (len && !b)
        return STVM_ENOMEM;
    int64_t deadline = stvm__socket_deadline(vm, timeout_ms);
    for (size_t done = 0, sent; done < len && !err; done += sent) {
        size_t chunk = len - done < STVM_BUFFER_SIZE ? len - done : STVM_BUFFER_SIZE;
        memcpy(b->bytes, (const uint8_t *)buf + done, chunk);
        err = stvm__socket_write(vm, s, (stvm_oop)b, 1, chunk,
                                 stvm__socket_remaining(vm, deadline), &sent);
    }
    stvm__buffer_give(vm, b);
    return err ? err : (int64_t)len;
}

/* Received into a buffer of the pool, which the read does not hold while it waits. */
int64_t stvm_socket_recv(stvm_vm *vm, stvm_socket *sock, void *buf, size_t len,
                         int64_t timeout_ms)
{
    stvm_socket *s = socket_of(vm, sock);
    if (len == 0)
        return STVM_EINVAL;
    int err = transfer_checks(vm, s, buf, len, timeout_ms);
    if (err)
        return err;
    size_t want = len < STVM_BUFFER_SIZE ? len : STVM_BUFFER_SIZE;
    stvm_oop lent;
    int64_t n = stvm__socket_read_lent(vm, s, want, timeout_ms, NULL, &lent);
    if (n > 0) {
        memcpy(buf, ((stvm_byte_array *)lent)->bytes, (size_t)n);
        stvm__buffer_give(vm, (stvm_byte_array *)lent);
    }
    return n;
}

/* ---- the rest ------------------------------------------------------------------------------- */

static bool someone_waits(const stvm_socket *s)
{
    for (int r = 0; r < SOCKET_ROLES; r++)
        if (s->waiting[r])
            return true;
    return false;
}

int stvm_socket_close(stvm_vm *vm, stvm_socket *sock)
{
    stvm_socket *s = socket_of(vm, sock);
    if (!s)
        return STVM_EINVAL;
    if (someone_waits(s))
        return STVM_EINUSE;
    if (s->stream)
        stvm__stream_close(vm, s->stream);
    stvm__socket_free(vm, s);
    return STVM_OK;
}

static const stvm_socket_handle *record_of(const stvm_socket *s)
{
    if (!s || s->hdr.class_index != STVM_CLASS_SOCKET || s->handle == STVM_NIL)
        return NULL;
    return (const stvm_socket_handle *)s->handle;
}

int stvm_socket_fd(const stvm_socket *s)
{
    const stvm_socket_handle *h = record_of(s);
    return h && h->fd >= 0 ? h->fd : STVM_EINVAL;
}

int stvm_socket_port(const stvm_socket *s)
{
    if (!record_of(s))
        return STVM_EINVAL;
    stvm_socket *m = (stvm_socket *)s;
    return s->listener ? stvm__socket_local_port(s->vm, m) : stvm__socket_remote_port(s->vm, m);
}

int stvm_socket_status(stvm_vm *vm, stvm_socket *sock)
{
    stvm_socket *s = socket_of(vm, sock);
    return s ? stvm__socket_status(vm, s) : STVM_EINVAL;
}

stvm_semaphore *stvm_socket_read_semaphore(stvm_socket *s)
{
    return s && s->hdr.class_index == STVM_CLASS_SOCKET ? s->read_semaphore : NULL;
}

/* ---- streams ---------------------------------------------------------------------------------- */

int stvm_stream_open(stvm_vm *vm, stvm_socket *sock, int64_t timeout_ms, stvm_stream **out)
{
    stvm_socket *s = socket_of(vm, sock);
    if (!s || s->listener || !out || timeout_ms < -1)
        return STVM_EINVAL;
    return stvm__stream_open(vm, s, timeout_ms, out);
}

/* The checks of every stream call that may wait: the caller must be a process of this
 * VM on its thread, as for every other call that may wait (a process of the VM running
 * on another thread is not the caller). */
static int stream_checks(stvm_vm *vm, stvm_stream *st)
{
    if (!stream_of(vm, st))
        return STVM_EINVAL;
    return stvm__in_process(vm) ? STVM_OK : STVM_ENOTPROC;
}

int64_t stvm_stream_read(stvm_vm *vm, stvm_stream *st, void *buf, size_t len)
{
    int err = stream_checks(vm, st);
    if (err)
        return err;
    if (!buf || len == 0 || len > MAX_LEN)
        return STVM_EINVAL;
    return stvm__stream_read(vm, st, buf, len);
}

int64_t stvm_stream_read_line(stvm_vm *vm, stvm_stream *st, char *buf, size_t cap)
{
    int err = stream_checks(vm, st);
    if (err)
        return err;
    if (!buf || cap == 0 || cap > MAX_LEN)
        return STVM_EINVAL;
    return stvm__stream_read_line(vm, st, buf, cap);
}

int stvm_stream_write(stvm_vm *vm, stvm_stream *st, const void *buf, size_t len)
{
    int err = stream_checks(vm, st);
    if (err)
        return err;
    if ((!buf && len > 0) || len > MAX_LEN)
        return STVM_EINVAL;
    return stvm__stream_write(vm, st, buf, len);
}

int stvm_stream_flush(stvm_vm *vm, stvm_stream *st)
{
    int err = stream_checks(vm, st);
    return err ? err : stvm__stream_flush(vm, st);
}

int stvm_stream_get_stats_(const stvm_stream *st, stvm_stream_stats *out, size_t out_size)
{
    if (!st || !out || st->hdr.class_index != STVM_CLASS_SOCKET_STREAM)
        return STVM_EINVAL;
    int err = stvm__struct_size_check(STVM__STRUCT_STREAM_STATS, out_size);
    if (err)
        return err;
    stvm_stream_stats s = st->stats;
    s.buffer_bytes = (uint64_t)((st->in != STVM_NIL) + (st->out != STVM_NIL)) *
                     STVM_STREAM_BUFFER_SIZE;
    memcpy(out, &s, out_size);
    return STVM_OK;
}

int stvm_stream_close(stvm_vm *vm, stvm_stream *st)
{
    if (!stream_of(vm, st))
        return STVM_EINVAL;
    if (someone_waits(st->socket))
        return STVM_EINUSE;
    stvm__stream_close(vm, st);
    return STVM_OK;
}
