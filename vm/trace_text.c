/*
 * stvm_trace_write_text: the ring as a text timeline, one aligned line per event, at
 * most 100 columns (the detail column is cut to fit).
 */
#include "trace_write.h"

#include <string.h>

#define COLUMNS 100

/* A resumption time: the microsecond scheduler's as ms from the start, the millisecond
 * scheduler's as the millisecond clock's value (its wrap is what one looks for). */
static void delay_time(const stvm_vm *vm, int64_t t, char *buf, size_t size)
{
    char ms[24];
    if (vm->cfg.delay_clock == STVM_DELAY_CLOCK_MS) {
        snprintf(buf, size, "ms clock %lld", (long long)t);
        return;
    }
    stvm__trace_ms(vm, (uint64_t)t, ms, sizeof ms);
    snprintf(buf, size, "%s ms", ms);
}

/* A wait's timeout (SOCKET_WAIT's detail) or a wait's end (SOCKET_DONE's). */
static void socket_text(const stvm_trace_event *ev, char *buf, size_t size)
{
    if (ev->kind == STVM_TRACE_SOCKET_DONE)
        snprintf(buf, size, "%s", ev->detail == STVM_OK ? "ready" : stvm_err_name((int)ev->detail));
    else if (ev->detail < 0)
        snprintf(buf, size, "no timeout");
    else
        snprintf(buf, size, "timeout %lld ms", (long long)ev->detail);
}

/* The detail column of the socket and FFI events (empty for any other). */
static void io_detail(const stvm_trace_event *ev, const char *obj, char *buf, size_t size)
{
    char how[40];
    switch (ev->kind) {
    case STVM_TRACE_SOCKET_WAIT: case STVM_TRACE_SOCKET_DONE:
        socket_text(ev, how, sizeof how);
        snprintf(buf, size, "fd %llu, %s: %s", (unsigned long long)ev->object,
                 stvm__trace_socket_for((int)ev->extra),
                 how);
        return;
    case STVM_TRACE_FFI_CALL:
        snprintf(buf, size, "%s %s, %lld args", obj, stvm__trace_runner((int)ev->detail),
                 (long long)ev->extra);
        return;
    case STVM_TRACE_FFI_RETURN:
        snprintf(buf, size, "%s %s: %s", obj, stvm__trace_runner((int)ev->extra),
                 ev->detail == STVM_OK ? "returned" : stvm_err_name((int)ev->detail));
        return;
    default:
        buf[0] = 0;
    }
}

/* The detail column of ev; obj is its object's label. */
static void detail(const stvm_vm *vm, const stvm_trace_event *ev, const char *obj, char *buf,
                   size_t size)
{
    char who[40], at[48];
    switch (ev->kind) {
    case STVM_TRACE_CREATED: case STVM_TRACE_READY:
        snprintf(buf, size, "priority %lld", (long long)ev->detail);
        return;
    case STVM_TRACE_SWITCH:
        stvm__trace_process_label(vm, ev->object, who, sizeof who);
        snprintf(buf, size, "-> %s (%s)", who, stvm__trace_why(ev->reason));
        return;
    case STVM_TRACE_SEM_WAIT:
        snprintf(buf, size, "%s, %s", obj, ev->detail ? "blocks" : "takes an excess signal");
        return;
    case STVM_TRACE_SEM_SIGNAL: case STVM_TRACE_MUTEX_WAIT: case STVM_TRACE_MUTEX_EXIT:
    case STVM_TRACE_MUTEX_HANDOFF: {
        static const char *const verb[] = {"wakes", "owned by", "next owner", "from"};
        int k = ev->kind == STVM_TRACE_SEM_SIGNAL ? 0 : ev->kind - STVM_TRACE_MUTEX_WAIT + 1;
        if (ev->detail)
            stvm__trace_process_label(vm, (uint64_t)ev->detail, who, sizeof who);
        snprintf(buf, size, "%s %s %s", obj, verb[k], ev->detail ? who : "none");
        return;
    }
    case STVM_TRACE_SEM_EXCESS:
        snprintf(buf, size, "%s, nobody waits: excess %lld", obj, (long long)ev->detail);
        return;
    case STVM_TRACE_MUTEX_ENTER:
        snprintf(buf, size, "%s, depth %lld", obj, (long long)ev->detail);
        return;
    case STVM_TRACE_TIMER_ARMED: case STVM_TRACE_TIMER_DISARMED: case STVM_TRACE_TIMER_FIRED:
        stvm__trace_ms(vm, (uint64_t)ev->detail, at, sizeof at);
        snprintf(buf, size, "%s at %s ms", obj, at);
        return;
    case STVM_TRACE_DELAY_SCHEDULED: case STVM_TRACE_DELAY_EXPIRED:
    case STVM_TRACE_DELAY_CANCELLED:
        delay_time(vm, ev->detail, at, sizeof at);
        snprintf(buf, size, "%s at %s%s", obj, at, ev->extra ? " BOXED" : "");
        return;
    case STVM_TRACE_IDLE_SLEEP:
        snprintf(buf, size, "asked %lld us, slept %lld us, %s", (long long)ev->detail,
                 (long long)ev->extra, stvm__trace_end(ev->reason));
        return;
    case STVM_TRACE_IO_READY:
        snprintf(buf, size, "fd %llu%s%s", (unsigned long long)ev->object,
                 ev->detail & STVM_IO_READ ? " read" : "",
                 ev->detail & STVM_IO_WRITE ? " write" : "");
        return;
    case STVM_TRACE_EXTERNAL:
        snprintf(buf, size, "%s", obj);
        return;
    case STVM_TRACE_OUTSIDE:
        snprintf(buf, size, "the outside world acts (stvm_sim_at)");
        return;
    case STVM_TRACE_INTERRUPT: {
        static const char *const how[] = {"queued: runs at its next scheduling point",
                                          "runs at once in the caller",
                                          "cancelled: a wait answers EINTR at once"};
        snprintf(buf, size, "%s", ev->detail >= 0 && ev->detail < 3 ? how[ev->detail] : "?");
        return;
    }
    case STVM_TRACE_GIVEN_BACK:
        snprintf(buf, size, "gives back %s", stvm__trace_gave(ev->detail));
        return;
    case STVM_TRACE_QUEUE_PUT: case STVM_TRACE_QUEUE_TAKE: case STVM_TRACE_QUEUE_CLOSE:
        snprintf(buf, size, "%s, %lld left", obj, (long long)ev->detail);
        return;
    case STVM_TRACE_MONITOR_WAIT:
        if (ev->detail == STVM_TRACE_MONITOR_ENTRY)
            snprintf(buf, size, "%s, waits to enter", obj);
        else
            snprintf(buf, size, "%s, releases it, waits on queue %lld", obj, (long long)ev->detail);
        return;
    case STVM_TRACE_MONITOR_SIGNAL:
        if (ev->detail)
            stvm__trace_process_label(vm, (uint64_t)ev->detail, who, sizeof who);
        if (ev->extra == STVM_TRACE_MONITOR_ENTRY)
            snprintf(buf, size, "%s handed to %s", obj, ev->detail ? who : "none");
        else
            snprintf(buf, size, "%s queue %lld wakes %s", obj, (long long)ev->extra,
                     ev->detail ? who : "none");
        return;
    default:
        io_detail(ev, obj, buf, size);
    }
}

static int line(const stvm_vm *vm, trace_labels *l, const stvm_trace_event *ev, FILE *out)
{
    char obj[STVM_TRACE_LABEL_MAX], who[24], at[32], text[2 * STVM_TRACE_LABEL_MAX];
    int err = stvm__trace_object_label(l, ev, obj, sizeof obj);
    if (err)
        return err;
    stvm__trace_process_label(vm, ev->process, who, sizeof who);
    stvm__trace_ms(vm, ev->time_us, at, sizeof at);
    detail(vm, ev, obj, text, sizeof text);
    char head[COLUMNS + 1];
    int n = snprintf(head, sizeof head, "%7llu %12s  %-20s %-15s", (unsigned long long)ev->seq,
                     at, who, stvm_trace_kind_name(ev->kind));
    int room = n < COLUMNS - 1 ? COLUMNS - 1 - n : 0;
    if (text[0])
        return fprintf(out, "%s %.*s\n", head, room, text) < 0 ? STVM_ESYS : STVM_OK;
    size_t len = strlen(head);   /* an event without detail ends at its name */
    while (len && head[len - 1] == ' ')
        len--;
    return fprintf(out, "%.*s\n", (int)len, head) < 0 ? STVM_ESYS : STVM_OK;
}

int stvm_trace_write_text(stvm_vm *vm, FILE *out)
{
    const struct stvm_trace *t;
    int err = stvm__trace_writer_ring(vm, out, &t);
    if (err)
        return err;
    size_t kept = stvm__trace_kept(t);
    if (fprintf(out, "# stvm trace: %zu events kept, %lld dropped, times in ms from the start\n"
                     "#   seq    time (ms)  process              event           detail\n",
                kept, (long long)stvm_trace_dropped(vm)) < 0)
        return STVM_ESYS;
    trace_labels l;
    stvm__trace_labels_init(&l, t);
    for (size_t i = 0; i < kept && !err; i++) {
        stvm_trace_event ev = stvm__trace_at(t, i);
        err = line(vm, &l, &ev, out);
    }
    stvm__trace_labels_free(&l);
    if (!err && fflush(out) != 0)
        err = STVM_ESYS;
    return err;
}
