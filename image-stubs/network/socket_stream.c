/* Pharo's SocketStream, Zodiac's way (see socket_stream.h). */
#include "socket_stream.h"

#include <string.h>

#include "../../vm/bytes.h"

static uint8_t *bytes(stvm_oop b)
{
    return ((stvm_byte_array *)b)->bytes;
}

/* Borrow a buffer from the pool into *slot (NIL: none lent). */
static bool lend(stvm_vm *vm, stvm_oop *slot)
{
    if (*slot == STVM_NIL)
        *slot = (stvm_oop)stvm__buffer_take(vm);
    return *slot != STVM_NIL;
}

static void give_back(stvm_vm *vm, stvm_oop *slot)
{
    stvm__buffer_give(vm, (stvm_byte_array *)*slot);
    *slot = STVM_NIL;
}

int stvm__stream_open(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms, bool after_fin,
                      stvm_stream **out)
{
    if (s->stream)
        return STVM_ESTATE;
    stvm_stream *st = stvm__objmem_alloc(vm, STVM_CLASS_SOCKET_STREAM, sizeof *st);
    if (!st)
        return STVM_ENOMEM;
    st->vm = vm;
    st->socket = s;
    st->in = st->out = STVM_NIL;
    st->read_timeout_ms = st->write_timeout_ms = timeout_ms;
    st->after_fin = after_fin;
    s->stream = st;
    *out = st;
    return STVM_OK;
}

void stvm__stream_close(stvm_vm *vm, stvm_stream *st)
{
    st->socket->stream = NULL;
    give_back(vm, &st->in);
    give_back(vm, &st->out);
    stvm__objmem_free(vm, st);
}

/* ---- reading ---------------------------------------------------------------------- */

int64_t stvm__stream_fill(stvm_vm *vm, stvm_stream *st)
{
    if (st->in_pos < st->in_end)
        return (int64_t)(st->in_end - st->in_pos);
    if (st->at_end)
        return STVM_EEOF;
    st->in_pos = st->in_end = 0;
    bool blocked = false;
    int64_t n = stvm__socket_read_lent(vm, st->socket, STVM_STREAM_BUFFER_SIZE,
                                       st->read_timeout_ms, &blocked, &st->in);
    if (blocked)
        st->stats.reads_blocked++;
    if (n == STVM_EEOF)
        st->at_end = true;
    if (n <= 0)
        return n;
    st->stats.fills++;
    st->stats.bytes_in += (uint64_t)n;
    st->in_end = (size_t)n;
    return n;
}

/* The bytes of the read buffer have all been taken: it goes back at once, so that a
 * reader that is about to wait holds none. */
static void consumed(stvm_vm *vm, stvm_stream *st)
{
    if (st->in_pos == st->in_end) {
        st->in_pos = st->in_end = 0;
        give_back(vm, &st->in);
    }
}

int stvm__stream_peek(stvm_vm *vm, stvm_stream *st, uint8_t *byte)
{
    int64_t n = stvm__stream_fill(vm, st);
    if (n <= 0)
        return (int)n;
    *byte = bytes(st->in)[st->in_pos];
    return 1;
}

int stvm__stream_next(stvm_vm *vm, stvm_stream *st, uint8_t *byte)
{
    int r = stvm__stream_peek(vm, st, byte);
    if (r == 1) {
        st->in_pos++;
        consumed(vm, st);
    }
    return r;
}

int64_t stvm__stream_read(stvm_vm *vm, stvm_stream *st, void *buf, size_t len)
{
    int64_t n = stvm__stream_fill(vm, st);
    if (n <= 0)
        return n;
    size_t take = (size_t)n < len ? (size_t)n : len;
    memcpy(buf, bytes(st->in) + st->in_pos, take);
    st->in_pos += take;
    consumed(vm, st);
    return (int64_t)take;
}

int64_t stvm__stream_read_up_to(stvm_vm *vm, stvm_stream *st, uint8_t delimiter, uint8_t *buf,
                                size_t cap, size_t *taken)
{
    size_t stored = 0;
    for (;;) {
        *taken = stored;
        int64_t n = stvm__stream_fill(vm, st);
        if (n == STVM_EEOF && stored > 0)
            return (int64_t)stored;   /* the last run, without its delimiter */
        if (n < 0)
            return n;
        const uint8_t *from = bytes(st->in) + st->in_pos;
        const uint8_t *hit = memchr(from, delimiter, (size_t)n);
        size_t run = hit ? (size_t)(hit - from) : (size_t)n;
        if (run > cap - stored) {
            memcpy(buf + stored, from, cap - stored);
            st->in_pos += cap - stored;
            *taken = cap;
            consumed(vm, st);
            return STVM_ERANGE;
        }
        memcpy(buf + stored, from, run);
        stored += run;
        st->in_pos += run + (hit != NULL);
        consumed(vm, st);
        if (hit) {
            *taken = stored;
            return (int64_t)stored;
        }
    }
}

int64_t stvm__stream_read_line(stvm_vm *vm, stvm_stream *st, char *buf, size_t cap)
{
    size_t taken = 0;
    int64_t n = stvm__stream_read_up_to(vm, st, '\n', (uint8_t *)buf, cap - 1, &taken);
    if (n < 0) {
        /* A failed call leaves buf alone, unless bytes of the line were already taken
         * from the stream: then they are the caller's, as a string, not lost. */
        if (taken > 0)
            buf[taken] = '\0';
        return n;
    }
    if (n > 0 && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    return n;
}

/* ---- writing ---------------------------------------------------------------------- */

int stvm__stream_flush(stvm_vm *vm, stvm_stream *st)
{
    if (st->out_len == 0)
        return STVM_OK;
    size_t sent;
    int err = stvm__socket_write(vm, st->socket, st->out, 1, st->out_len, st->write_timeout_ms,
                                 st->after_fin, &sent);
    st->stats.bytes_out += sent;
    /* What was not sent stays buffered, at the front. */
    memmove(bytes(st->out), bytes(st->out) + sent, st->out_len - sent);
    st->out_len -= sent;
    if (st->out_len == 0)
        give_back(vm, &st->out);
    if (!err)
        st->stats.flushes++;
    return err;
}

int stvm__stream_write(stvm_vm *vm, stvm_stream *st, const void *buf, size_t len)
{
    if (st->after_fin && st->socket->shut_wr)
        return STVM_ECLOSED;   /* nothing buffered that could never be sent */
    const uint8_t *p = buf;
    while (len > 0) {
        if (st->out_len == STVM_STREAM_BUFFER_SIZE) {
            int err = stvm__stream_flush(vm, st);
            if (err)
                return err;
        }
        if (!lend(vm, &st->out))
            return STVM_ENOMEM;
        size_t room = STVM_STREAM_BUFFER_SIZE - st->out_len;
        size_t take = len < room ? len : room;
        memcpy(bytes(st->out) + st->out_len, p, take);
        st->out_len += take;
        p += take;
        len -= take;
    }
    return STVM_OK;
}
