/*
 * The SocketPlugin's data transfer: primitiveSocketSendDataBufCount,
 * primitiveSocketSendDone, primitiveSocketReceiveDataAvailable and
 * primitiveSocketReceiveDataBufCount (sqUnixSocket.c's sqSocketSendDataBufCount,
 * sqSocketSendDone, sqSocketReceiveDataAvailable, sqSocketReceiveDataBufCount).
 * Nothing here ever waits: a send or receive that would block answers 0, and the
 * primitive that found the socket not ready arms the one-shot handler that signals the
 * socket's write or read semaphore when it is. A peer that closed or reset the
 * connection turns the status to OtherEndClosed, with its errno in
 * primitiveSocketError (0 for an orderly close).
 */
#include "socket_plugin.h"

#include <errno.h>
#include <poll.h>

#include "../vm/aio.h"

/* A byte range of a ByteArray argument, checked as the plugin checks its buffers
 * (1 <= start, 0 <= count, start + count - 1 <= size): the first byte, or NULL. */
static uint8_t *buffer_arg(stvm_vm *vm, stvm_oop array, stvm_oop start, stvm_oop count,
                           size_t *len)
{
    stvm_byte_array *b = stvm__bytes_of(vm, array);
    int64_t s, n;
    if (!b || !stvm__socket_int_arg(vm, start, &s) || !stvm__socket_int_arg(vm, count, &n) ||
        s < 1 || n < 0 || s - 1 + n > (int64_t)b->hdr.byte_size)
        return NULL;
    *len = (size_t)n;
    return b->bytes + (s - 1);
}

/* The connection went away under a send or receive: errno says how (0: orderly). */
static void other_end_closed(stvm_vm *vm, stvm_socket_handle *h, int err)
{
    h->state = STVM_SOCKET_OTHER_END_CLOSED;
    h->error = err;
    stvm__socket_notify(vm, h->sema);
}

/* The checks every transfer primitive makes: a live record, a buffer range, an open
 * descriptor. */
static stvm_socket_handle *transfer_args(stvm_vm *vm, const stvm_oop *args, uint8_t **buf,
                                         size_t *len, int *fail)
{
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], fail);
    if (!h)
        return NULL;
    *buf = buffer_arg(vm, args[1], args[2], args[3], len);
    if (!*buf || h->fd < 0 || h->listening) {
        *fail = STVM_PRIM_ERR_GENERIC;
        return NULL;
    }
    /* Before the connection is made nothing is sent or received (the plugin's read or
     * write would fail and call the connection closed). */
    if (h->state != STVM_SOCKET_CONNECTED && h->state != STVM_SOCKET_OTHER_END_CLOSED)
        *len = 0;
    return h;
}

/* primitiveSocketSendDataBufCount: socketHandle aByteArray startIndex count -> the bytes
 * sent (0 when the socket has no room, or the connection is gone). Never raises
 * SIGPIPE. A send that finds no room, or room for less than asked, tells sendDone to
 * look before it answers true again. */
int stvm__primitive_socket_send_data_buf_count(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                                stvm_oop *result)
{
    uint8_t *buf;
    size_t len;
    int fail;
    stvm_socket_handle *h = transfer_args(vm, args, &buf, &len, &fail);
    if (!h)
        return fail;
    ssize_t n = len ? send(h->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) : 0;
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR)
            other_end_closed(vm, h, errno);
        n = 0;
    }
    if (len)
        h->send_full = (size_t)n < len;
    *result = stvm__si_make(n);
    return PRIM_OK;
}

/* Room to send: only after a send found none is it looked for (a poll, or the write
 * handler's firing); then true or the write handler armed. */
static bool room_to_send(stvm_vm *vm, stvm_socket_handle *h)
{
    if (h->fd < 0)
        return false;
    if (h->send_full && !stvm__aio_take_fired(vm, h->fd, STVM_IO_WRITE)) {
        struct pollfd pf = {.fd = h->fd, .events = POLLOUT};
        if (poll(&pf, 1, 0) <= 0) {
            stvm__socket_arm(vm, h, STVM_IO_WRITE, h->write_sema, true);
            return false;
        }
    }
    h->send_full = false;
    return true;
}

/* primitiveSocketSendDone: socketHandle -> true when a send would not block; false
 * otherwise, with the write handler armed (a socket that is not connected: false). As
 * long as no send has found the socket full since the last that did not, the answer
 * is true without a system call (the send itself tells when it is not). */
int stvm__primitive_socket_send_done(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                      stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    stvm__socket_update(vm, h);
    bool done = h->state == STVM_SOCKET_CONNECTED && room_to_send(vm, h);
    *result = done ? STVM_TRUE : STVM_FALSE;
    return PRIM_OK;
}

bool stvm__socket_plugin_room(stvm_vm *vm, stvm_oop handle)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, handle, &fail);
    return h && !h->listening && room_to_send(vm, h);
}

/* What the aio layer knows of h's read readiness without a system call: 1 (the read
 * handler fired cleanly since the last receive: data is there), 0 (it is armed and has
 * not fired: nothing came yet that an aio poll has seen, and the handler will tell), -1
 * (not known: look). The embedding thread outside stvm_run passes no scheduling point
 * that could poll, so it always looks. */
static int known_readable(const stvm_vm *vm, const stvm_socket_handle *h)
{
    bool hangup;
    if (stvm__aio_fired(vm, h->fd, &hangup) & STVM_IO_READ)
        return hangup ? -1 : 1;   /* a hang-up: the peek tells data from the end */
    return vm->active && (stvm__aio_armed(vm, h->fd) & STVM_IO_READ) ? 0 : -1;
}

/* primitiveSocketReceiveDataAvailable: socketHandle -> true when a byte can be read
 * (peeked at, not taken). Otherwise false, with the read handler armed; a peer that
 * closed or reset the connection turns the status to OtherEndClosed. The aio layer's
 * state answers first where it can (known_readable): a handler armed and not fired
 * answers false without looking, and data that came meanwhile is reported by the next
 * aio poll (the idle process's wait, or busy polling) through the read semaphore. */
int stvm__primitive_socket_receive_data_available(stvm_vm *vm, stvm_oop rcvr,
                                                   const stvm_oop *args, stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    stvm__socket_update(vm, h);
    bool none = false;   /* the peek found no data, and the connection is there */
    if (h->state == STVM_SOCKET_CONNECTED) {
        int known = known_readable(vm, h);
        if (known >= 0) {
            *result = known ? STVM_TRUE : STVM_FALSE;
            return PRIM_OK;
        }
        uint8_t byte;
        ssize_t n = recv(h->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) {
            *result = STVM_TRUE;
            return PRIM_OK;
        }
        none = n < 0 && errno == EAGAIN;
        if (n == 0)
            h->state = STVM_SOCKET_OTHER_END_CLOSED, h->error = 0;
        else if (errno != EAGAIN && errno != EINTR)
            h->state = STVM_SOCKET_OTHER_END_CLOSED, h->error = errno;
    }
    stvm__socket_arm(vm, h, STVM_IO_READ, h->read_sema, none);
    *result = STVM_FALSE;
    return PRIM_OK;
}

/* primitiveSocketReceiveDataBufCount: socketHandle aByteArray startIndex count -> the
 * bytes read, 0 when none are there (the read handler is then armed) or the connection
 * is gone (OtherEndClosed, and the connection semaphore is signalled). What the read
 * handler's firing said is used up by the receive. */
int stvm__primitive_socket_receive_data_buf_count(stvm_vm *vm, stvm_oop rcvr,
                                                   const stvm_oop *args, stvm_oop *result)
{
    uint8_t *buf;
    size_t len;
    int fail;
    stvm_socket_handle *h = transfer_args(vm, args, &buf, &len, &fail);
    if (!h)
        return fail;
    ssize_t n = 0;
    if (len) {
        stvm__aio_take_fired(vm, h->fd, STVM_IO_READ);
        n = recv(h->fd, buf, len, MSG_DONTWAIT);
        if (n == 0) {
            if (h->state == STVM_SOCKET_CONNECTED)
                other_end_closed(vm, h, 0);
        } else if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                stvm__socket_arm(vm, h, STVM_IO_READ, h->read_sema, errno == EAGAIN);
            else
                other_end_closed(vm, h, errno);
            n = 0;
        }
    }
    *result = stvm__si_make(n);
    return PRIM_OK;
}
