/*
 * The public stream calls (stvm/net.h, "Socket streams"), built on the image side's
 * SocketStream (socket_stream.c): each checks its arguments and its caller first.
 * Streams opened here send by the C API's rule (socket.h: on after the peer's FIN).
 */
#include <string.h>

#include "../../vm/abi.h"
#include "socket_api.h"

int stvm_stream_open(stvm_vm *vm, stvm_socket *sock, int64_t timeout_ms, stvm_stream **out)
{
    stvm_socket *s = stvm__socket_of(vm, sock);
    if (!s || s->listener || !out || timeout_ms < -1)
        return STVM_EINVAL;
    return stvm__stream_open(vm, s, timeout_ms, true, out);
}

int stvm_stream_set_read_timeout_ms(stvm_vm *vm, stvm_stream *st, int64_t timeout_ms)
{
    stvm_stream *t = stvm__stream_of(vm, st);
    if (!t || timeout_ms < -1)
        return STVM_EINVAL;
    t->read_timeout_ms = timeout_ms;
    return STVM_OK;
}

int stvm_stream_set_write_timeout_ms(stvm_vm *vm, stvm_stream *st, int64_t timeout_ms)
{
    stvm_stream *t = stvm__stream_of(vm, st);
    if (!t || timeout_ms < -1)
        return STVM_EINVAL;
    t->write_timeout_ms = timeout_ms;
    return STVM_OK;
}

/* The checks of every stream call that may wait: the caller must be a process of this
 * VM on its thread, as for every other call that may wait (a process of the VM running
 * on another thread is not the caller). */
static int stream_checks(stvm_vm *vm, stvm_stream *st)
{
    if (!stvm__stream_of(vm, st))
        return STVM_EINVAL;
    return stvm__in_process(vm) ? STVM_OK : STVM_ENOTPROC;
}

int64_t stvm_stream_read(stvm_vm *vm, stvm_stream *st, void *buf, size_t len)
{
    int err = stream_checks(vm, st);
    if (err)
        return err;
    if (!buf || len == 0 || len > STVM_SOCKET_MAX_LEN)
        return STVM_EINVAL;
    return stvm__stream_read(vm, st, buf, len);
}

int64_t stvm_stream_read_line(stvm_vm *vm, stvm_stream *st, char *buf, size_t cap)
{
    int err = stream_checks(vm, st);
    if (err)
        return err;
    if (!buf || cap == 0 || cap > STVM_SOCKET_MAX_LEN)
        return STVM_EINVAL;
    return stvm__stream_read_line(vm, st, buf, cap);
}

int stvm_stream_write(stvm_vm *vm, stvm_stream *st, const void *buf, size_t len)
{
    int err = stream_checks(vm, st);
    if (err)
        return err;
    if ((!buf && len > 0) || len > STVM_SOCKET_MAX_LEN)
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
    if (!stvm__stream_of(vm, st))
        return STVM_EINVAL;
    if (stvm__socket_waited_on(st->socket))
        return STVM_EINUSE;
    stvm__stream_close(vm, st);
    return STVM_OK;
}
