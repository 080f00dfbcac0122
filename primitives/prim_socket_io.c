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

uint8_t *stvm__socket_buffer_arg(stvm_vm *vm, stvm_oop array, stvm_oop start, stvm_oop count,
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
    *buf = stvm__socket_buffer_arg(vm, args[1], args[2], args[3], len);
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
 * SIGPIPE. */
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
    *result = stvm__si_make(n);
    return PRIM_OK;
}

/* primitiveSocketSendDone: socketHandle -> true when a send would not block; false
 * otherwise, with the write handler armed (a socket that is not connected: false). */
int stvm__primitive_socket_send_done(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                      stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    stvm__socket_update(vm, h);
    bool done = false;
    if (h->state == STVM_SOCKET_CONNECTED) {
        struct pollfd pf = {.fd = h->fd, .events = POLLOUT};
        done = poll(&pf, 1, 0) > 0;
        if (!done)
            stvm__socket_arm(vm, h, STVM_IO_WRITE, h->write_sema);
    }
    *result = done ? STVM_TRUE : STVM_FALSE;
    return PRIM_OK;
}

/* primitiveSocketReceiveDataAvailable: socketHandle -> true when a byte can be read
 * (peeked at, not taken). Otherwise false, with the read handler armed; a peer that
 * closed or reset the connection turns the status to OtherEndClosed. */
int stvm__primitive_socket_receive_data_available(stvm_vm *vm, stvm_oop rcvr,
                                                   const stvm_oop *args, stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    stvm__socket_update(vm, h);
    if (h->state == STVM_SOCKET_CONNECTED) {
        uint8_t byte;
        ssize_t n = recv(h->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) {
            *result = STVM_TRUE;
            return PRIM_OK;
        }
        if (n == 0)
            h->state = STVM_SOCKET_OTHER_END_CLOSED, h->error = 0;
        else if (errno != EAGAIN && errno != EINTR)
            h->state = STVM_SOCKET_OTHER_END_CLOSED, h->error = errno;
    }
    stvm__socket_arm(vm, h, STVM_IO_READ, h->read_sema);
    *result = STVM_FALSE;
    return PRIM_OK;
}

/* primitiveSocketReceiveDataBufCount: socketHandle aByteArray startIndex count -> the
 * bytes read, 0 when none are there (the read handler is then armed) or the connection
 * is gone (OtherEndClosed, and the connection semaphore is signalled). */
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
        n = recv(h->fd, buf, len, MSG_DONTWAIT);
        if (n == 0) {
            if (h->state == STVM_SOCKET_CONNECTED)
                other_end_closed(vm, h, 0);
        } else if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                stvm__socket_arm(vm, h, STVM_IO_READ, h->read_sema);
            else
                other_end_closed(vm, h, errno);
            n = 0;
        }
    }
    *result = stvm__si_make(n);
    return PRIM_OK;
}
