/*
 * Pharo's Socket (see socket.h): creation and destruction, the queries, and the
 * waiting protocol. Every primitive is called as the image calls it, with the socket
 * handle and ByteArrays as oops; a wait is a loop over the primitive and
 * Semaphore>>waitTimeoutMSecs: (stvm_semaphore_wait_timeout_ms, which goes through the
 * Delay scheduler's DelayWaitTimeout), so its cost is what it is in Pharo.
 *
 * A process waiting in a role (reader, writer, connector) is noted in the socket, so
 * that a second one gets EWAITING and close refuses to free a socket someone waits on
 * (EINUSE). A wait guard undoes that note, and disarms the handler the wait was served
 * by, if the waiting process is terminated: nothing of it is left registered.
 */
#include "socket.h"

#include <errno.h>
#include <string.h>

#include "../../vm/aio.h"
#include "../../vm/bytes.h"
#include "../../vm/error.h"
#include "../../vm/integer.h"
#include "buffer_pool.h"

/* ---- calling the plugin ------------------------------------------------------------ */

static stvm_socket_handle *record(const stvm_socket *s)
{
    return (stvm_socket_handle *)s->handle;
}

/* A primitive on the socket's handle; false when it failed. */
static bool prim1(stvm_vm *vm, stvm__primitive_fn *fn, stvm_socket *s, stvm_oop *result)
{
    stvm_oop args[1] = {s->handle};
    return s->handle != STVM_NIL && fn(vm, STVM_NIL, args, result) == PRIM_OK;
}

static void disarm(stvm_vm *vm, stvm_socket *s, int event);

/* A listener's read handler is armed only while a process waits in accept, as every
 * other handler is armed only for its wait. The plugin arms it at listen and at each
 * look at the status that finds nothing pending (as Pharo's does); left armed with
 * nobody accepting, it would stand for a waiter that is not there: stvm_fd_wait on the
 * descriptor would answer EWAITING, and stvm_run would count it as something that can
 * wake a process, never answering EDEADLOCK. Disarming costs no system call (the VM
 * owns the descriptor). */
static void settle_listener(stvm_vm *vm, stvm_socket *s)
{
    if (s->listener && !s->waiting[SOCKET_CONNECTOR])
        disarm(vm, s, STVM_IO_READ);
}

int stvm__socket_status(stvm_vm *vm, stvm_socket *s)
{
    stvm_oop r;
    if (!prim1(vm, stvm__primitive_socket_connection_status, s, &r))
        return STVM_SOCKET_INVALID;
    settle_listener(vm, s);
    return (int)stvm__si_value(r);
}

bool stvm__socket_is_connected(stvm_vm *vm, stvm_socket *s)
{
    return stvm__socket_status(vm, s) == STVM_SOCKET_CONNECTED;
}

bool stvm__socket_data_available(stvm_vm *vm, stvm_socket *s)
{
    stvm_oop r;
    return prim1(vm, stvm__primitive_socket_receive_data_available, s, &r) && r == STVM_TRUE;
}

bool stvm__socket_send_done(stvm_vm *vm, stvm_socket *s)
{
    stvm_oop r;
    return prim1(vm, stvm__primitive_socket_send_done, s, &r) && r == STVM_TRUE;
}

int stvm__socket_error(stvm_vm *vm, stvm_socket *s)
{
    stvm_oop r;
    return prim1(vm, stvm__primitive_socket_error, s, &r) ? (int)stvm__si_value(r) : 0;
}

int stvm__socket_local_port(stvm_vm *vm, stvm_socket *s)
{
    stvm_oop r;
    return prim1(vm, stvm__primitive_socket_local_port, s, &r) ? (int)stvm__si_value(r)
                                                               : STVM_ESYS;
}

int stvm__socket_remote_port(stvm_vm *vm, stvm_socket *s)
{
    stvm_oop r;
    return prim1(vm, stvm__primitive_socket_remote_port, s, &r) ? (int)stvm__si_value(r)
                                                                : STVM_ESYS;
}

int stvm__socket_failure(stvm_vm *vm, stvm_socket *s, int otherwise)
{
    int e = stvm__socket_error(vm, s);
    return e ? stvm__error_from_errno(e) : otherwise;
}

int stvm__socket_address(stvm_vm *vm, stvm_socket *s, bool peer, struct sockaddr_storage *sa,
                         socklen_t *len)
{
    stvm_oop size;
    if (!prim1(vm, peer ? stvm__primitive_socket_remote_address_size
                        : stvm__primitive_socket_local_address_size, s, &size)) {
        /* Only a connection the system no longer has (reset) has no address. */
        int err = stvm__socket_failure(vm, s, STVM_OK);
        return err ? err : stvm__error_from_errno(ENOTCONN);
    }
    int64_t n = stvm__si_value(size);
    stvm_byte_array *b = stvm__bytes_alloc(vm, (size_t)n);
    if (!b)
        return STVM_ENOMEM;
    stvm_oop args[2] = {s->handle, (stvm_oop)b}, r;
    int code = (peer ? stvm__primitive_socket_remote_address_result
                     : stvm__primitive_socket_local_address_result)(vm, STVM_NIL, args, &r);
    if (!code) {
        memset(sa, 0, sizeof *sa);
        memcpy(sa, b->bytes, (size_t)n);
        *len = (socklen_t)n;
    }
    stvm_oop_release(vm, (stvm_oop)b);
    return code ? stvm__error_from_errno(ENOTCONN) : STVM_OK;
}

static int64_t transfer(stvm_vm *vm, stvm__primitive_fn *fn, stvm_socket *s, stvm_oop bytes,
                        size_t start, size_t count)
{
    stvm_oop args[4] = {s->handle, bytes, stvm__si_make((int64_t)start),
                        stvm__si_make((int64_t)count)};
    stvm_oop r;
    if (s->handle == STVM_NIL || fn(vm, STVM_NIL, args, &r) != PRIM_OK)
        return 0;
    return stvm__si_value(r);
}

int64_t stvm__socket_receive_some(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start,
                                  size_t count)
{
    return transfer(vm, stvm__primitive_socket_receive_data_buf_count, s, bytes, start, count);
}

int64_t stvm__socket_send_some(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start,
                               size_t count)
{
    return transfer(vm, stvm__primitive_socket_send_data_buf_count, s, bytes, start, count);
}

/* ---- creation and destruction -------------------------------------------------------- */

/* For the trace: a socket's semaphores go by the socket's name ("conn.read"). */
static void trace_members(stvm_vm *vm, const void *obj)
{
    const stvm_socket *s = obj;
    stvm__trace_member(vm, s->semaphore, s, STVM_TRACE_LABEL_SOCKET, "connection");
    stvm__trace_member(vm, s->read_semaphore, s, STVM_TRACE_LABEL_SOCKET, "read");
    stvm__trace_member(vm, s->write_semaphore, s, STVM_TRACE_LABEL_SOCKET, "write");
}

/* The object, its three semaphores registered in the external table. */
static int make(stvm_vm *vm, stvm_socket **out)
{
    stvm_socket *s = stvm__objmem_alloc(vm, STVM_CLASS_SOCKET, sizeof *s);
    if (!s)
        return STVM_ENOMEM;
    s->vm = vm;
    stvm_semaphore **sems[3] = {&s->semaphore, &s->read_semaphore, &s->write_semaphore};
    int err = STVM_OK;
    for (int i = 0; i < 3 && !err; i++) {
        err = stvm_semaphore_new(vm, sems[i]);
        if (!err)
            err = stvm_external_register(vm, *sems[i], &s->indices[i]);
    }
    if (err) {
        stvm__socket_free(vm, s);
        return err;
    }
    vm->trace_members[STVM_CLASS_SOCKET] = trace_members;
    if (vm->trace)
        trace_members(vm, s);
    *out = s;
    return STVM_OK;
}

static stvm_oop index_oop(const stvm_socket *s, int i)
{
    return stvm__si_make(s->indices[i]);
}

static int failure_error(int code)
{
    return code == STVM_PRIM_ERR_NO_MEMORY ? STVM_ENOMEM : STVM_ESYS;
}

int stvm__socket_new(stvm_vm *vm, int net_type, stvm_socket **out)
{
    stvm_socket *s;
    int err = make(vm, &s);
    if (err)
        return err;
    /* primSocketCreateNetwork: netType type: TCP receiveBufferSize: 8000 sendBufSize: 8000
     * semaIndex: readSemaIndex: writeSemaIndex: */
    stvm_oop args[7] = {stvm__si_make(net_type), stvm__si_make(0), stvm__si_make(8000),
                        stvm__si_make(8000), index_oop(s, 0), index_oop(s, 1), index_oop(s, 2)};
    int code = stvm__primitive_socket_create3_semaphores(vm, STVM_NIL, args, &s->handle);
    if (code) {
        s->handle = STVM_NIL;
        stvm__socket_free(vm, s);
        return failure_error(code);
    }
    *out = s;
    return STVM_OK;
}

int stvm__socket_accept_from(stvm_vm *vm, stvm_socket *listener, stvm_socket **out)
{
    stvm_socket *s;
    int err = make(vm, &s);
    if (err)
        return err;
    stvm_oop args[6] = {listener->handle, stvm__si_make(8000), stvm__si_make(8000),
                        index_oop(s, 0), index_oop(s, 1), index_oop(s, 2)};
    int code = stvm__primitive_socket_accept3_semaphores(vm, STVM_NIL, args, &s->handle);
    if (code) {
        s->handle = STVM_NIL;
        stvm__socket_free(vm, s);
        return failure_error(code);
    }
    /* The primitive re-armed the listener for the next connection. */
    settle_listener(vm, listener);
    *out = s;
    return STVM_OK;
}

int stvm__socket_adopt(stvm_vm *vm, int fd, stvm_socket **out)
{
    stvm_socket *s;
    int err = make(vm, &s);
    if (err)
        return err;
    int code = stvm__socket_plugin_adopt(vm, fd, s->indices, &s->handle);
    if (code) {
        s->handle = STVM_NIL;
        stvm__socket_free(vm, s);
        return code == STVM_PRIM_ERR_NO_MEMORY ? STVM_ENOMEM : STVM_EINVAL;
    }
    *out = s;
    return STVM_OK;
}

void stvm__socket_free(stvm_vm *vm, stvm_socket *s)
{
    if (s->handle != STVM_NIL) {
        /* Socket>>closeAndDestroy without the wait for the peer: an orderly close, then
         * destroy (which has nothing left to abort). */
        stvm_oop r;
        prim1(vm, stvm__primitive_socket_close_connection, s, &r);
        prim1(vm, stvm__primitive_socket_destroy, s, &r);
        stvm_oop_release(vm, s->handle);
        s->handle = STVM_NIL;
    }
    stvm_semaphore *sems[3] = {s->semaphore, s->read_semaphore, s->write_semaphore};
    for (int i = 0; i < 3; i++) {
        if (s->indices[i])
            stvm_external_unregister(vm, s->indices[i]);
        if (sems[i])
            stvm_semaphore_free(vm, sems[i]);
    }
    stvm__objmem_free(vm, s);
}

bool stvm__socket_waited_on(const stvm_socket *s)
{
    for (int r = 0; r < SOCKET_ROLES; r++)
        if (s->waiting[r])
            return true;
    return false;
}

int stvm__socket_connect_nonblocking(stvm_vm *vm, stvm_socket *s, stvm_oop address, int port)
{
    if (stvm__socket_status(vm, s) != STVM_SOCKET_UNCONNECTED)
        return STVM_ESTATE;   /* InvalidSocketStatusException */
    stvm_oop args[3] = {s->handle, address, stvm__si_make(port)};
    stvm_oop r;
    return stvm__primitive_socket_connect_to_port(vm, STVM_NIL, args, &r) ? STVM_EINVAL : STVM_OK;
}

int stvm__socket_connect_to(stvm_vm *vm, stvm_socket *s, stvm_oop socket_address)
{
    if (stvm__socket_status(vm, s) != STVM_SOCKET_UNCONNECTED)
        return STVM_ESTATE;
    stvm_oop args[2] = {s->handle, socket_address};
    stvm_oop r;
    return stvm__primitive_socket_connect_to(vm, STVM_NIL, args, &r) ? STVM_EINVAL : STVM_OK;
}

/* A listen primitive failed: the system's reason, when it gave one. */
static int listen_failed(stvm_vm *vm, stvm_socket *s)
{
    return stvm__socket_failure(vm, s, STVM_ESYS);
}

static int listening(stvm_vm *vm, stvm_socket *s)
{
    s->listener = true;
    settle_listener(vm, s);
    return STVM_OK;
}

int stvm__socket_listen(stvm_vm *vm, stvm_socket *s, int port, int backlog, stvm_oop address)
{
    if (stvm__socket_status(vm, s) != STVM_SOCKET_UNCONNECTED)
        return STVM_ESTATE;
    stvm_oop args[4] = {s->handle, stvm__si_make(port), stvm__si_make(backlog), address};
    stvm_oop r;
    if (stvm__primitive_socket_listen_on_port_backlog_interface(vm, STVM_NIL, args, &r))
        return listen_failed(vm, s);
    return listening(vm, s);
}

int stvm__socket_bind_listen(stvm_vm *vm, stvm_socket *s, stvm_oop socket_address, int backlog)
{
    if (stvm__socket_status(vm, s) != STVM_SOCKET_UNCONNECTED)
        return STVM_ESTATE;
    stvm_oop bind[2] = {s->handle, socket_address};
    stvm_oop listen[2] = {s->handle, stvm__si_make(backlog)};
    stvm_oop r;
    if (stvm__primitive_socket_bind_to(vm, STVM_NIL, bind, &r) ||
        stvm__primitive_socket_listen_with_backlog(vm, STVM_NIL, listen, &r))
        return listen_failed(vm, s);
    return listening(vm, s);
}

/* ---- time ---------------------------------------------------------------------------- */

int64_t stvm__socket_deadline(stvm_vm *vm, int64_t timeout_ms)
{
    return timeout_ms < 0 ? -1 : (int64_t)stvm__clock_now_us(vm) + timeout_ms * 1000;
}

int64_t stvm__socket_remaining(stvm_vm *vm, int64_t deadline)
{
    if (deadline < 0)
        return -1;
    int64_t left = deadline - (int64_t)stvm__clock_now_us(vm);
    return left > 0 ? left / 1000 : 0;
}

/* ---- waiting --------------------------------------------------------------------------- */

/* A process waiting in a role; its guard undoes the note and the handler if the process
 * is terminated in the wait. */
typedef struct socket_waiter {
    stvm_wait_guard guard;
    stvm_socket *s;
    int role;
    int event;                       /* the handler that serves the wait */
    bool traced;                     /* SOCKET_WAIT was recorded: SOCKET_DONE will be */
} socket_waiter;

/* The roles are the trace's STVM_TRACE_FOR_* values. */
_Static_assert((int)SOCKET_READER == (int)STVM_TRACE_FOR_DATA &&
                   (int)SOCKET_WRITER == (int)STVM_TRACE_FOR_SEND &&
                   (int)SOCKET_CONNECTOR == (int)STVM_TRACE_FOR_CONNECTION,
               "socket roles are the trace's wait kinds");

static uint64_t traced_fd(const stvm_socket *s)
{
    return s->handle != STVM_NIL && record(s)->fd >= 0 ? (uint64_t)record(s)->fd : 0;
}

/* SOCKET_WAIT or SOCKET_DONE of w (vm->trace is recording); out of line, so that an
 * untraced wait pays one test per event point. */
__attribute__((cold, noinline)) static void trace_socket(stvm_vm *vm, const socket_waiter *w,
                                                         int kind, int64_t detail,
                                                         int64_t extra)
{
    stvm__trace_emit(vm, kind, stvm__trace_active(vm), traced_fd(w->s), detail, extra, 0);
}

/* The wait is about to block (the first time): SOCKET_WAIT, while recording. */
static void trace_block(stvm_vm *vm, socket_waiter *w, int64_t timeout_ms)
{
    if (stvm__tracing(vm) && !w->traced) {
        w->traced = true;
        trace_socket(vm, w, STVM_TRACE_SOCKET_WAIT, timeout_ms, w->role);
    }
}

static void disarm(stvm_vm *vm, stvm_socket *s, int event)
{
    if (s->handle != STVM_NIL && record(s)->fd >= 0)
        stvm__aio_disarm(vm, record(s)->fd, event);
}

static void undo(stvm_vm *vm, stvm_wait_guard *g)
{
    socket_waiter *w = STVM_CONTAINER(g, socket_waiter, guard);
    w->s->waiting[w->role] = NULL;
    disarm(vm, w->s, w->event);
}

/* Another process waits in the role: the caller may not use the role's handler, not
 * even for a try that would not wait (its receive would take the waiter's data, and its
 * giving up would disarm the waiter's handler). */
static bool role_taken(const stvm_vm *vm, const stvm_socket *s, int role)
{
    return s->waiting[role] && s->waiting[role] != vm->active;
}

static int enter(stvm_vm *vm, socket_waiter *w, stvm_socket *s, int role, int event)
{
    if (role_taken(vm, s, role))
        return STVM_EWAITING;
    *w = (socket_waiter){.guard.undo = undo, .s = s, .role = role, .event = event};
    s->waiting[role] = vm->active;
    stvm__wait_guard_push(vm, &w->guard);
    /* For the process listing: this wait is on the socket, whichever of its semaphores
     * it blocks on (a connecting socket is not yet the program's: no handle). */
    vm->active->wait_on_kind = role == SOCKET_READER   ? STVM_WAIT_ON_SOCKET_READ
                               : role == SOCKET_WRITER ? STVM_WAIT_ON_SOCKET_WRITE
                               : s->listener           ? STVM_WAIT_ON_SOCKET_ACCEPT
                                                       : STVM_WAIT_ON_SOCKET_CONNECT;
    vm->active->wait_on = role == SOCKET_CONNECTOR && !s->listener ? NULL : s;
    return STVM_OK;
}

/* The wait is over: what it armed and did not use is disarmed (the one-shot handler
 * would otherwise stay armed with nobody to wake). */
static void leave(stvm_vm *vm, socket_waiter *w, int result)
{
    if (w->traced && stvm__tracing(vm))
        trace_socket(vm, w, STVM_TRACE_SOCKET_DONE, result, w->role);
    stvm__wait_guard_pop(vm, &w->guard);
    w->s->waiting[w->role] = NULL;
    vm->active->wait_on_kind = STVM_WAIT_ON_NOTHING;
    disarm(vm, w->s, w->event);
}

/* One wait on sem for at most ms (-1: Semaphore>>wait; 0: the time is up). */
static int wait_on(stvm_vm *vm, stvm_semaphore *sem, int64_t ms)
{
    if (ms < 0)
        return stvm__sem_wait(vm, sem);
    if (ms == 0)
        return STVM_ETIMEDOUT;
    return stvm_semaphore_wait_timeout_ms(vm, sem, ms);
}

/* A look of a wait: 1 ready, 0 not yet (the primitive armed the handler that will
 * signal the role's semaphore), or the error that ends the wait (< 0). */
typedef int look_fn(stvm_vm *vm, stvm_socket *s);

/* Pharo's looks: ready? return; not connected? closed. */
static int data_look(stvm_vm *vm, stvm_socket *s)
{
    return stvm__socket_data_available(vm, s) ? 1
           : stvm__socket_is_connected(vm, s) ? 0
                                              : STVM_ECLOSED;
}

static int send_look(stvm_vm *vm, stvm_socket *s)
{
    return stvm__socket_send_done(vm, s) ? 1 : stvm__socket_is_connected(vm, s) ? 0 : STVM_ECLOSED;
}

/* Why writing cannot go on (STVM_OK: it can). Pharo's rule: not Connected is closed.
 * The C API's: shut here for writing, ECLOSED (before any system call); after the peer's
 * orderly close (OtherEndClosed without an error) sends still go out; a reset, or
 * another error of the connection, ends writing with its code. */
static int write_ended(stvm_vm *vm, stvm_socket *s, bool after_fin)
{
    if (!after_fin)
        return stvm__socket_is_connected(vm, s) ? STVM_OK : STVM_ECLOSED;
    if (s->shut_wr)
        return STVM_ECLOSED;
    int status = stvm__socket_status(vm, s);
    if (status == STVM_SOCKET_CONNECTED)
        return STVM_OK;
    return status == STVM_SOCKET_OTHER_END_CLOSED ? stvm__socket_failure(vm, s, STVM_OK)
                                                  : STVM_ECLOSED;
}

/* The C API's send look: room is looked for as sendDone looks for it, also once the
 * status says OtherEndClosed (where sendDone answers false). */
static int send_look_after_fin(stvm_vm *vm, stvm_socket *s)
{
    int err = write_ended(vm, s, true);
    if (err)
        return err;
    bool room = stvm__socket_is_connected(vm, s) ? stvm__socket_send_done(vm, s)
                                                 : stvm__socket_plugin_room(vm, s->handle);
    return room ? 1 : 0;
}

/* The loop of waitForDataFor: and waitForSendDoneFor:: look; not ready, a timed wait on
 * the role's semaphore for the time left, and look again (a signal may be spurious, and
 * the last look comes after the time ran out, as Pharo's final check). */
static int wait_until(stvm_vm *vm, stvm_socket *s, int role, int event, look_fn *look,
                      stvm_semaphore *sem, int64_t timeout_ms, bool *waited)
{
    socket_waiter w;
    int err = enter(vm, &w, s, role, event);
    if (err)
        return err;
    int64_t deadline = stvm__socket_deadline(vm, timeout_ms);
    for (;;) {
        int r = look(vm, s);
        if (r != 0) {
            err = r > 0 ? STVM_OK : r;
            break;
        }
        int64_t left = stvm__socket_remaining(vm, deadline);
        if (left == 0) {
            err = STVM_ETIMEDOUT;
            break;
        }
        *waited = true;
        trace_block(vm, &w, timeout_ms);
        err = wait_on(vm, sem, left);
        if (err && err != STVM_ETIMEDOUT)
            break;
    }
    leave(vm, &w, err);
    return err;
}

int stvm__socket_wait_for_data(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms, bool *waited)
{
    bool dummy;
    bool *w = waited ? waited : &dummy;
    *w = false;
    return wait_until(vm, s, SOCKET_READER, STVM_IO_READ, data_look, s->read_semaphore,
                      timeout_ms, w);
}

int stvm__socket_wait_for_send_done(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms,
                                    bool after_fin)
{
    bool waited = false;
    return wait_until(vm, s, SOCKET_WRITER, STVM_IO_WRITE,
                      after_fin ? send_look_after_fin : send_look, s->write_semaphore,
                      timeout_ms, &waited);
}

int stvm__socket_wait_for_connection(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms)
{
    /* A listener's pending connection arrives as read readiness, a connect's end as
     * write readiness; both signal the connection semaphore. */
    socket_waiter w;
    int err = enter(vm, &w, s, SOCKET_CONNECTOR, s->listener ? STVM_IO_READ : STVM_IO_WRITE);
    if (err)
        return err;
    int64_t deadline = stvm__socket_deadline(vm, timeout_ms);
    /* A listener starved of descriptors (prim_table.h, stvm__socket_plugin_starved): the
     * accept that finds it so answers EMFILE at once; one that comes to it starved waits
     * for a change (the VM closing a descriptor wakes it) or for the plugin's next look,
     * within its time, and answers EMFILE if its time runs out still starved. So a server
     * that asks again and again is answered at the pace of its timeouts, asleep between,
     * and takes the connection as soon as a descriptor is free. */
    int64_t retry_ms;
    bool was_starved = s->listener && stvm__socket_plugin_starved(vm, s->handle, &retry_ms);
    int status;
    while ((status = stvm__socket_status(vm, s)) == STVM_SOCKET_WAITING_FOR_CONNECTION) {
        int64_t left = stvm__socket_remaining(vm, deadline);
        if (s->listener && stvm__socket_plugin_starved(vm, s->handle, &retry_ms)) {
            if (!was_starved || left == 0) {
                err = stvm__socket_failure(vm, s, STVM_EMFILE);
                break;
            }
            trace_block(vm, &w, timeout_ms);
            err = wait_on(vm, s->semaphore, left < 0 || left > retry_ms ? retry_ms : left);
            if (err && err != STVM_ETIMEDOUT)
                break;
            err = STVM_OK;
            continue;
        }
        /* A listener's last accept failed otherwise (EACCES, ...): the accept answers it. */
        if (s->listener && (err = stvm__socket_failure(vm, s, STVM_OK)))
            break;
        if (left == 0)
            break;
        trace_block(vm, &w, timeout_ms);
        err = wait_on(vm, s->semaphore, left);
        if (err && err != STVM_ETIMEDOUT)
            break;
        err = STVM_OK;
    }
    if (!err)
        err = status == STVM_SOCKET_CONNECTED             ? STVM_OK
              : status == STVM_SOCKET_WAITING_FOR_CONNECTION ? STVM_ETIMEDOUT
                                                             : STVM_ECLOSED;
    leave(vm, &w, err);
    return err;
}

/* ---- reading and writing ------------------------------------------------------------------ */

/* The two steps of a read. try_read: one non-blocking receive: the bytes (> 0), STVM_EEOF
 * at the orderly end, the error that broke the connection, STVM_ECLOSED (closed here);
 * or 0 with *would_block set (nothing there yet, the read handler armed). await_data:
 * waitForDataFor: until deadline: STVM_OK when a receive may find something (data, or
 * the end), STVM_ETIMEDOUT, or the wait's error; the first wait of a read counts in
 * stats.socket_reads_blocked. */
typedef struct read_wait {
    bool blocked;                    /* this read has waited (and was counted) */
} read_wait;

static int64_t try_read(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start, size_t count,
                        bool *would_block)
{
    *would_block = false;
    int64_t n = stvm__socket_receive_some(vm, s, bytes, start, count);
    if (n > 0)
        return n;
    int status = stvm__socket_status(vm, s);
    if (status != STVM_SOCKET_CONNECTED) {
        /* The end of the stream: orderly when the peer closed without an error. */
        return status == STVM_SOCKET_OTHER_END_CLOSED ? stvm__socket_failure(vm, s, STVM_EEOF)
                                                      : STVM_ECLOSED;
    }
    *would_block = true;
    return 0;
}

static int await_data(stvm_vm *vm, stvm_socket *s, int64_t deadline, read_wait *rw)
{
    int64_t left = stvm__socket_remaining(vm, deadline);
    if (left == 0) {
        disarm(vm, s, STVM_IO_READ);   /* the receive armed it; nobody will wait */
        return STVM_ETIMEDOUT;
    }
    bool waited = false;
    int err = stvm__socket_wait_for_data(vm, s, left, &waited);
    if (waited && !rw->blocked) {
        rw->blocked = true;
        vm->stats.socket_reads_blocked++;
    }
    return err == STVM_ECLOSED ? STVM_OK : err;   /* the next receive says how it ended */
}

/* The read loop; lent: read into buffers of the pool instead of bytes, none held while
 * waiting (stvm__socket_read_lent). */
static int64_t read_loop(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start, size_t count,
                         int64_t timeout_ms, bool *blocked, stvm_oop *lent)
{
    if (role_taken(vm, s, SOCKET_READER))
        return STVM_EWAITING;
    if (s->shut_rd)
        return STVM_EEOF;   /* shut here: no system call reads again */
    int64_t deadline = stvm__socket_deadline(vm, timeout_ms);
    read_wait rw = {0};
    for (;;) {
        stvm_oop into = lent ? (stvm_oop)stvm__buffer_take(vm) : bytes;
        if (into == STVM_NIL)
            return STVM_ENOMEM;
        bool would_block;
        int64_t n = try_read(vm, s, into, start, count, &would_block);
        if (lent) {
            *lent = n > 0 ? into : STVM_NIL;
            if (n <= 0)
                stvm__buffer_give(vm, (stvm_byte_array *)into);
        }
        int err = would_block ? await_data(vm, s, deadline, &rw) : STVM_OK;
        if (blocked)
            *blocked = rw.blocked;
        if (!would_block || err)
            return would_block ? err : n;
    }
}

int64_t stvm__socket_read(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start,
                          size_t count, int64_t timeout_ms, bool *blocked)
{
    return read_loop(vm, s, bytes, start, count, timeout_ms, blocked, NULL);
}

int64_t stvm__socket_read_lent(stvm_vm *vm, stvm_socket *s, size_t count, int64_t timeout_ms,
                               bool *blocked, stvm_oop *lent)
{
    return read_loop(vm, s, STVM_NIL, 1, count, timeout_ms, blocked, lent);
}

int stvm__socket_write(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start, size_t count,
                       int64_t timeout_ms, bool after_fin, size_t *sent)
{
    int64_t deadline = stvm__socket_deadline(vm, timeout_ms);
    *sent = 0;
    while (*sent < count) {
        int err = stvm__socket_wait_for_send_done(vm, s, stvm__socket_remaining(vm, deadline),
                                                  after_fin);
        if (err)
            return err;
        int64_t n = stvm__socket_send_some(vm, s, bytes, start + *sent, count - *sent);
        /* Nothing sent: no room after all (the next wait looks again), or the send found
         * the connection broken (the look says how). */
        if (n == 0 && (err = write_ended(vm, s, after_fin)))
            return err;
        *sent += (size_t)n;
    }
    return STVM_OK;
}
