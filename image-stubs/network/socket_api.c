/*
 * The public calls on a socket (stvm/net.h, "Sockets"): sending and receiving
 * (Socket>>sendData:, receiveDataInto:), half-closing, closing, and what a socket tells
 * (descriptor, port, addresses, status). The calls that make sockets are socket_open.c's,
 * the streams' stream_api.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>

#include "../../vm/error.h"
#include "../../vm/objmem.h"
#include "socket_api.h"

/* ---- sending and receiving --------------------------------------------------------------- */

/* The checks of send and recv. */
static int transfer_checks(stvm_vm *vm, stvm_socket *s, const void *buf, size_t len,
                           int64_t timeout_ms)
{
    if (!s || s->listener || (!buf && len > 0) || len > STVM_SOCKET_MAX_LEN)
        return STVM_EINVAL;
    return stvm__socket_check_timeout(vm, timeout_ms);
}

/* Sent through a buffer of the pool (the plugin sends from a ByteArray), held while the
 * send lasts, STVM_BUFFER_SIZE bytes at a time, by the C API's rule (socket.h): on after
 * the peer's FIN. */
int64_t stvm_socket_send(stvm_vm *vm, stvm_socket *sock, const void *buf, size_t len,
                         int64_t timeout_ms)
{
    stvm_socket *s = stvm__socket_of(vm, sock);
    int err = transfer_checks(vm, s, buf, len, timeout_ms);
    if (err)
        return err;
    if (s->shut_wr)
        return STVM_ECLOSED;
    stvm_byte_array *b = len ? stvm__buffer_take(vm) : NULL;
    if (len && !b)
        return STVM_ENOMEM;
    int64_t deadline = stvm__socket_deadline(vm, timeout_ms);
    for (size_t done = 0, sent; done < len && !err; done += sent) {
        size_t chunk = len - done < STVM_BUFFER_SIZE ? len - done : STVM_BUFFER_SIZE;
        memcpy(b->bytes, (const uint8_t *)buf + done, chunk);
        err = stvm__socket_write(vm, s, (stvm_oop)b, 1, chunk,
                                 stvm__socket_remaining(vm, deadline), true, &sent);
    }
    stvm__buffer_give(vm, b);
    return err ? err : (int64_t)len;
}

/* Received into a buffer of the pool, which the read does not hold while it waits. */
int64_t stvm_socket_recv(stvm_vm *vm, stvm_socket *sock, void *buf, size_t len,
                         int64_t timeout_ms)
{
    stvm_socket *s = stvm__socket_of(vm, sock);
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

/* ---- half-closing and closing ------------------------------------------------------------- */

int stvm_socket_shutdown(stvm_vm *vm, stvm_socket *sock, int how)
{
    stvm_socket *s = stvm__socket_of(vm, sock);
    if (!s || s->listener || (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR))
        return STVM_EINVAL;
    bool rd = how != SHUT_WR, wr = how != SHUT_RD;
    if ((rd && s->waiting[SOCKET_READER]) || (wr && s->waiting[SOCKET_WRITER]))
        return STVM_EINUSE;
    /* Bytes a stream holds for sending go out first, within its write timeout: a
     * shutdown never drops what was written (libuv's uv_shutdown waits for the writes
     * queued before it). */
    stvm_stream *st = s->stream;
    if (wr && !s->shut_wr && st && st->out_len > 0) {
        if (!stvm__in_process(vm))
            return STVM_ENOTPROC;
        int err = stvm__stream_flush(vm, st);
        if (err)
            return err;
        if (rd && s->waiting[SOCKET_READER])
            return STVM_EINUSE;   /* came while the flush waited */
    }
    if ((!rd || s->shut_rd) && (!wr || s->shut_wr))
        return STVM_OK;   /* shut already: nothing to ask the system */
    int e = stvm__socket_plugin_shutdown(vm, s->handle, how);
    /* ENOTCONN: the connection has ended. In order (both FINs: the peer's was read, so
     * the status says OtherEndClosed without an error), there is nothing left to shut,
     * and the directions are shut here as asked; otherwise what ended it answers. */
    if (e == ENOTCONN && stvm__socket_status(vm, s) == STVM_SOCKET_OTHER_END_CLOSED &&
        stvm__socket_error(vm, s) == 0)
        e = 0;
    if (e)
        return e == ENOTCONN ? stvm__socket_failure(vm, s, stvm__error_from_errno(e))
                             : stvm__error_from_errno(e);
    s->shut_rd |= rd;
    s->shut_wr |= wr;
    return STVM_OK;
}

int stvm_socket_close(stvm_vm *vm, stvm_socket *sock)
{
    stvm_socket *s = stvm__socket_of(vm, sock);
    if (!s)
        return STVM_EINVAL;
    if (stvm__socket_waited_on(s))
        return STVM_EINUSE;
    if (s->stream)
        stvm__stream_close(vm, s->stream);
    stvm__socket_free(vm, s);
    return STVM_OK;
}

/* ---- what a socket tells ------------------------------------------------------------------ */

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

/* An address as text: inet_ntop's for IPv4 and IPv6 (with the port), the path for a
 * Unix socket ("" when it has none, as the client end of a connection has). */
static int address_text(stvm_vm *vm, const stvm_socket *sock, bool peer, char *buf,
                        size_t size, int *port)
{
    stvm_socket *s = stvm__socket_of(vm, sock);
    if (!s || !buf || size == 0 || (peer && s->listener))
        return STVM_EINVAL;
    struct sockaddr_storage sa;
    socklen_t len;
    /* The ByteArray the primitives fill is the VM's for the call only. */
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    int err = stvm__socket_address(vm, s, peer, &sa, &len);
    stvm__alloc_forget(vm, mark);
    if (err)
        return err;
    char text[sizeof(((struct sockaddr_un *)0)->sun_path) + INET6_ADDRSTRLEN] = "";
    int p = 0;
    if (sa.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&sa;
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
        p = ntohs(in->sin_port);
    } else if (sa.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
        p = ntohs(in6->sin6_port);
    } else if (sa.ss_family == AF_UNIX) {
        const size_t at = offsetof(struct sockaddr_un, sun_path);
        size_t n = (size_t)len > at ? strnlen(((const struct sockaddr_un *)&sa)->sun_path,
                                             (size_t)len - at)
                                    : 0;
        memcpy(text, ((const struct sockaddr_un *)&sa)->sun_path, n);
        text[n] = '\0';
    }
    size_t n = strlen(text);
    if (n >= size)
        return STVM_ERANGE;
    memcpy(buf, text, n + 1);
    if (port)
        *port = p;
    return STVM_OK;
}

int stvm_socket_peer_address(stvm_vm *vm, const stvm_socket *s, char *buf, size_t size,
                             int *port)
{
    return address_text(vm, s, true, buf, size, port);
}

int stvm_socket_local_address(stvm_vm *vm, const stvm_socket *s, char *buf, size_t size,
                              int *port)
{
    return address_text(vm, s, false, buf, size, port);
}

int stvm_socket_status(stvm_vm *vm, stvm_socket *sock)
{
    stvm_socket *s = stvm__socket_of(vm, sock);
    return s ? stvm__socket_status(vm, s) : STVM_EINVAL;
}

stvm_semaphore *stvm_socket_read_semaphore(stvm_socket *s)
{
    return s && s->hdr.class_index == STVM_CLASS_SOCKET ? s->read_semaphore : NULL;
}
