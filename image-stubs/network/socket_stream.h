/*
 * Pharo's SocketStream as Zinc uses it (Zodiac's ZdcSocketStream): a binary stream over
 * a connected Socket with a 4 KiB read buffer and a 4 KiB write buffer, for the
 * ZnClient-shaped HTTP client: write the request into the buffer, flush once, read the
 * status line, the headers and the body through the read buffer.
 *
 * Reading (ZdcSimpleSocketStream>>fillReadBuffer): an empty read buffer is filled by a
 * non-blocking receive first; only when nothing is there does the stream wait
 * (Socket>>waitForDataFor: with the stream's timeout) and receive again. Such a fill
 * is a blocked read: counted per stream (stats.reads_blocked) and per VM
 * (stvm_stats.socket_reads_blocked). Writing collects bytes in the write buffer;
 * flush sends it with Socket>>sendData: semantics (waitForSendDoneFor: before each
 * send); a full buffer is flushed before more is written.
 *
 * The two buffers are lent by the VM's pool (buffer_pool.h) while they hold bytes: the
 * read buffer from a receive until its bytes are read and the next receive finds
 * nothing (it goes back before the stream waits), the write buffer from the first byte
 * written until a flush has sent them all. A stream blocked in a read with everything
 * sent holds neither; Pharo's SocketStream keeps both for its whole life.
 *
 * Calls that may wait need an active process and answer as the socket calls do:
 * STVM_EEOF at the end of the stream (every read there, once what was buffered has been
 * read), the system's error when the connection broke (STVM_ECONNRESET, STVM_EPIPE),
 * STVM_ECLOSED (this end closed, or shut for writing), STVM_ETIMEDOUT, STVM_EWAITING,
 * STVM_ESTATE. Reads wait at most the stream's read timeout, sends its write timeout.
 * A stream opened by stvm_stream_open writes by the C API's rule (socket.h: on after the
 * peer's FIN); the image's ZnClient opens its streams by Pharo's.
 */
#ifndef STVM_IMAGE_STUBS_SOCKET_STREAM_H
#define STVM_IMAGE_STUBS_SOCKET_STREAM_H

#include "buffer_pool.h"
#include "socket.h"

#define STVM_STREAM_BUFFER_SIZE STVM_BUFFER_SIZE

/* The stream: an object of the VM (class STVM_CLASS_SOCKET_STREAM). */
struct stvm_stream {
    stvm_object hdr;
    stvm_vm *vm;
    stvm_socket *socket;
    stvm_oop in, out;                /* the 4 KiB ByteArrays lent by the pool, or NIL */
    size_t in_pos, in_end;           /* unread bytes of in: [in_pos, in_end); in is lent
                                        exactly while in_pos < in_end */
    size_t out_len;                  /* bytes of out not yet sent; out is lent exactly
                                        while out_len > 0 */
    int64_t read_timeout_ms;         /* each read's wait, -1 forever */
    int64_t write_timeout_ms;        /* each send's wait (a flush's in all), -1 forever */
    bool at_end;                     /* the end of the stream was read: every fill is EEOF */
    bool after_fin;                  /* sends by the C API's rule (socket.h) */
    stvm_stream_stats stats;
};

/* Open a stream on s (one per socket), timeout_ms the bound of its reads and of its
 * sends; after_fin: the C API's rule for sending (socket.h). ESTATE (s has one), ENOMEM.
 * Never waits; takes no buffer yet. */
int stvm__stream_open(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms, bool after_fin,
                      stvm_stream **out);
/* Close the stream (unsent bytes are dropped) and free it; the socket stays open. */
void stvm__stream_close(stvm_vm *vm, stvm_stream *st);

/* Make sure bytes are buffered: answers how many (> 0), STVM_EEOF at the end of the
 * stream, or an error (ENOMEM: no buffer could be had). Only an empty buffer is filled. */
int64_t stvm__stream_fill(stvm_vm *vm, stvm_stream *st);
/* The next byte: 1 with *byte set, EEOF at the end, or an error. peek leaves it there. */
int stvm__stream_next(stvm_vm *vm, stvm_stream *st, uint8_t *byte);
int stvm__stream_peek(stvm_vm *vm, stvm_stream *st, uint8_t *byte);
/* Up to len bytes (what is buffered, or one fill's worth): at least 1, EEOF at the end. */
int64_t stvm__stream_read(stvm_vm *vm, stvm_stream *st, void *buf, size_t len);
/* Bytes up to the delimiter (consumed, not stored) or the end of the stream into buf:
 * answers how many were stored, EEOF when the stream was at its end with nothing
 * stored. ERANGE when cap bytes were stored without meeting it (they are consumed).
 * *taken: the bytes stored in buf, on an error too (a fill that failed after part of
 * the run was taken). */
int64_t stvm__stream_read_up_to(stvm_vm *vm, stvm_stream *st, uint8_t delimiter,
                                uint8_t *buf, size_t cap, size_t *taken);
/* A line ending in LF (a CR before it dropped) as a C string without its end of line:
 * its length (0 for an empty line); a last line without LF is a line too; EEOF at the
 * end of the stream; ERANGE if it does not fit cap - 1. On an error buf is untouched
 * unless bytes were taken from the stream: then it holds them as a C string. */
int64_t stvm__stream_read_line(stvm_vm *vm, stvm_stream *st, char *buf, size_t cap);

/* Buffer len bytes, flushing whenever the buffer is full (ENOMEM: no buffer; ECLOSED at
 * once, nothing buffered, when a C API stream's socket is shut for writing). */
int stvm__stream_write(stvm_vm *vm, stvm_stream *st, const void *buf, size_t len);
/* Send what is buffered, within the write timeout. */
int stvm__stream_flush(stvm_vm *vm, stvm_stream *st);

#endif
