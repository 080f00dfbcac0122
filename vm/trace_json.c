/*
 * stvm_trace_write_json: the ring as Trace Event JSON (the format Perfetto's UI and
 * chrome://tracing read). One track (tid) per process, the embedding thread as tid 0;
 * a process's track is a sequence of slices, one per state it was in:
 *
 *   running   from the switch to it until it leaves the processor;
 *   ready     from READY (on a run queue) until it runs;
 *   waiting   from a switch away with reason "waited" until it is ready again;
 *   sleeping  the same while a Delay of its own is scheduled;
 *   suspended until resumed;
 *   "waiting on fd N (data)" instead of waiting or sleeping while a socket wait is open
 *             (SOCKET_WAIT to SOCKET_DONE), "callout fn1 (threaded)" while its caller
 *             waits for a threaded callout (FFI_CALL to FFI_RETURN);
 *   "callout fn1" (same-thread) or "callout fn1 (threaded)" instead of running from a
 *             callout's call until it returns or its caller leaves the processor
 *             (callouts nested by callbacks are one slice, named by the outer one).
 *
 * The ring may begin in the middle of a state: a slice opens at the first event that
 * shows a state and every slice open at the end is closed at the last event's time, so
 * every B has its E. The idle process's OS sleeps are complete (X) slices inside its
 * running slice, signals and expiries instants on the track of whoever caused them,
 * and the run queue's length a counter.
 */
#include "trace_write.h"
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

enum { S_NONE, S_RUNNING, S_READY, S_WAITING, S_SLEEPING, S_SUSPENDED, S_ON, S_CALLOUT };
static const char *const state_name[] = {"", "running", "ready", "waiting", "sleeping",
                                         "suspended"};

typedef struct track {
    uint8_t state;
    uint8_t before_call;        /* the state a same-thread callout began in */
    bool seen;
    uint16_t calls;             /* same-thread callouts in progress (callbacks nest them) */
    uint32_t delays;            /* its Delays scheduled and not yet expired or cancelled */
    uint64_t last_ns;           /* where its last entry was, for the X slices */
    char on[64];                /* S_ON's name: the socket wait or threaded callout open */
    char call[64];              /* S_CALLOUT's name */
} track;

typedef struct writer {
    stvm_vm *vm;
    FILE *out;
    track *tracks;              /* by process id */
    size_t ntracks;
    trace_labels labels;
    int64_t runq;
    bool first;                 /* no entry written yet (commas) */
    uint64_t now_ns;            /* the event being written: ns after the trace's start */
    char now[32];               /* the same as the entries' "ts": "us.nnn" */
} writer;

/* Text that may be the embedder's (a process's or an object's name), inside a JSON
 * string: quotes and backslashes escaped, control characters as '?'. */
static void json_text(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++) {
        const char *fmt = (*c == '"' || *c == '\\') ? "\\%c"
                          : (unsigned char)*c < 0x20  ? "?"
                                                      : "%c";
        fprintf(out, fmt, *c);
    }
}

static void entry_start(writer *w)
{
    fputs(w->first ? "\n" : ",\n", w->out);
    w->first = false;
}

/* ns as the entries' "ts" and "dur" write them: "us.nnn". */
static void format_ns(uint64_t ns, char buf[32])
{
    snprintf(buf, 32, "%llu.%03llu", (unsigned long long)(ns / 1000),
             (unsigned long long)(ns % 1000));
}

/* ev becomes the event being written. */
static void set_now(writer *w, const stvm_trace_event *ev)
{
    uint64_t start = stvm__trace_ring(w->vm)->start_us;
    uint64_t us = ev->time_us > start ? ev->time_us - start : 0;
    w->now_ns = us * 1000 + ev->time_ns;
    format_ns(w->now_ns, w->now);
}

static void set_state(writer *w, uint64_t id, int state, const char *ts, uint64_t seq)
{
    track *t = &w->tracks[id];
    if (t->state == state)
        return;
    if (t->state == S_READY)
        w->runq--;
    if (state == S_READY)
        w->runq++;
    if (t->state != S_NONE) {
        entry_start(w);
        fprintf(w->out, "{\"ph\":\"E\",\"pid\":1,\"tid\":%llu,\"ts\":%s,\"args\":{\"seq\":%llu}}",
                (unsigned long long)id, ts, (unsigned long long)seq);
    }
    if (state != S_NONE) {
        const char *name = state == S_ON ? t->on : state == S_CALLOUT ? t->call
                                                                      : state_name[state];
        entry_start(w);
        fprintf(w->out, "{\"ph\":\"B\",\"pid\":1,\"tid\":%llu,\"ts\":%s,\"name\":\"%s\","
                        "\"args\":{\"seq\":%llu}}",
                (unsigned long long)id, ts, name, (unsigned long long)seq);
    }
    t->state = (uint8_t)state;
    t->last_ns = w->now_ns;
}

static void counter(writer *w, const char *ts, uint64_t seq)
{
    entry_start(w);
    fprintf(w->out, "{\"ph\":\"C\",\"pid\":1,\"ts\":%s,\"name\":\"run queue\","
                    "\"args\":{\"length\":%lld,\"seq\":%llu}}",
            ts, (long long)w->runq, (unsigned long long)seq);
}

/* An instant on the track of ev's process (process scope when it has none). */
static void instant(writer *w, const stvm_trace_event *ev, const char *ts, const char *obj)
{
    entry_start(w);
    if (ev->process)
        fprintf(w->out, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%llu,",
                (unsigned long long)ev->process);
    else
        fprintf(w->out, "{\"ph\":\"i\",\"s\":\"p\",\"pid\":1,");
    fprintf(w->out, "\"ts\":%s,\"name\":\"%s ", ts, stvm_trace_kind_name(ev->kind));
    json_text(w->out, obj);
    fprintf(w->out, "\",\"args\":{\"seq\":%llu,\"detail\":%lld}}", (unsigned long long)ev->seq,
            (long long)ev->detail);
    if (ev->process)
        w->tracks[ev->process].last_ns = w->now_ns;
}

/* An OS sleep of the idle process: it began `extra` whole us before the us it was
 * reported in, but never before the track's last entry (rounding). */
static void os_sleep(writer *w, const stvm_trace_event *ev)
{
    uint64_t end_us = w->now_ns / 1000, slept = (uint64_t)ev->extra;
    track *t = &w->tracks[ev->process];
    uint64_t began = (end_us > slept ? end_us - slept : 0) * 1000;
    if (began < t->last_ns)
        began = t->last_ns;
    char from[32], dur[32];
    format_ns(began, from);
    format_ns(w->now_ns - began, dur);
    entry_start(w);
    fprintf(w->out, "{\"ph\":\"X\",\"pid\":1,\"tid\":%llu,\"ts\":%s,\"dur\":%s,"
                    "\"name\":\"os sleep (%s)\",\"args\":{\"seq\":%llu,\"asked_us\":%lld}}",
            (unsigned long long)ev->process, from, dur, stvm__trace_end(ev->reason),
            (unsigned long long)ev->seq, (long long)ev->detail);
    t->last_ns = began;
}

/* The state a process leaves the processor for. */
static int after_switch(const writer *w, uint64_t id, int why)
{
    switch (why) {
    case STVM_TRACE_WHY_WAITED:
        return w->tracks[id].on[0] ? S_ON : w->tracks[id].delays ? S_SLEEPING : S_WAITING;
    case STVM_TRACE_WHY_SUSPENDED:
        return S_SUSPENDED;
    case STVM_TRACE_WHY_FINISHED:
        return S_NONE;
    default:
        return w->tracks[id].state == S_RUNNING || w->tracks[id].state == S_CALLOUT
                   ? S_READY
                   : w->tracks[id].state;
    }
}

/* A socket wait opens (SOCKET_WAIT) or ends (SOCKET_DONE, also an instant). */
static void socket_event(writer *w, const stvm_trace_event *ev, const char *ts)
{
    track *t = &w->tracks[ev->process];
    if (ev->kind == STVM_TRACE_SOCKET_WAIT) {
        snprintf(t->on, sizeof t->on, "waiting on fd %llu (%s)",
                 (unsigned long long)ev->object, stvm__trace_socket_for((int)ev->extra));
        return;
    }
    char what[48];
    t->on[0] = 0;
    snprintf(what, sizeof what, "fd %llu %s", (unsigned long long)ev->object,
             ev->detail == STVM_OK ? "ready" : stvm_err_name((int)ev->detail));
    instant(w, ev, ts, what);
}

/* A callout is a state of its own in place of running; a threaded one also names the
 * waiting slice if its caller blocks for it. */
static void ffi_event(writer *w, const stvm_trace_event *ev, const char *ts, const char *obj)
{
    track *t = &w->tracks[ev->process];
    bool call = ev->kind == STVM_TRACE_FFI_CALL;
    int runner = (int)(call ? ev->detail : ev->extra);
    if (call && t->calls++ == 0) {
        if (runner == STVM_TRACE_FFI_SAME_THREAD)
            snprintf(t->call, sizeof t->call, "callout %.40s", obj);   /* "fn1": numbered only */
        else
            snprintf(t->call, sizeof t->call, "callout %.40s (%s)", obj, stvm__trace_runner(runner));
        if (runner != STVM_TRACE_FFI_SAME_THREAD)
            snprintf(t->on, sizeof t->on, "%s", t->call);
        t->before_call = t->state;
        set_state(w, ev->process, S_CALLOUT, ts, ev->seq);
    } else if (!call && t->calls && --t->calls == 0) {
        if (runner != STVM_TRACE_FFI_SAME_THREAD)
            t->on[0] = 0;
        if (t->state == S_CALLOUT)
            set_state(w, ev->process, t->before_call, ts, ev->seq);
    }
}

/* The socket and FFI events; nothing for the kinds that make no entry. */
static void io_event(writer *w, const stvm_trace_event *ev, const char *ts, const char *obj)
{
    if (ev->kind == STVM_TRACE_SOCKET_WAIT || ev->kind == STVM_TRACE_SOCKET_DONE)
        socket_event(w, ev, ts);
    else if (ev->kind == STVM_TRACE_FFI_CALL || ev->kind == STVM_TRACE_FFI_RETURN)
        ffi_event(w, ev, ts, obj);
}

static void event(writer *w, const stvm_trace_event *ev, const char *obj)
{
    const char *ts = w->now;
    track *t = &w->tracks[ev->process];
    int64_t runq = w->runq;
    switch (ev->kind) {
    case STVM_TRACE_READY:
        set_state(w, ev->process, S_READY, ts, ev->seq);
        break;
    case STVM_TRACE_SWITCH:
        if (ev->process)
            set_state(w, ev->process, after_switch(w, ev->process, ev->reason), ts, ev->seq);
        if (ev->object)
            set_state(w, ev->object, S_RUNNING, ts, ev->seq);
        break;
    case STVM_TRACE_SUSPENDED:
        if (t->state != S_RUNNING)
            set_state(w, ev->process, S_SUSPENDED, ts, ev->seq);
        break;
    case STVM_TRACE_TERMINATED: case STVM_TRACE_FINISHED:
        set_state(w, ev->process, S_NONE, ts, ev->seq);
        break;
    case STVM_TRACE_DELAY_SCHEDULED:
        t->delays++;
        break;
    case STVM_TRACE_DELAY_EXPIRED: case STVM_TRACE_DELAY_CANCELLED:
        if (t->delays)
            t->delays--;
        if (ev->kind == STVM_TRACE_DELAY_EXPIRED)
            instant(w, ev, ts, obj);
        break;
    case STVM_TRACE_IDLE_SLEEP:
        os_sleep(w, ev);
        break;
    case STVM_TRACE_SEM_SIGNAL: case STVM_TRACE_SEM_EXCESS: case STVM_TRACE_TIMER_FIRED:
    case STVM_TRACE_IO_READY: case STVM_TRACE_EXTERNAL: case STVM_TRACE_MUTEX_HANDOFF:
    case STVM_TRACE_OUTSIDE: case STVM_TRACE_INTERRUPT: case STVM_TRACE_GIVEN_BACK:
    case STVM_TRACE_QUEUE_PUT: case STVM_TRACE_QUEUE_TAKE: case STVM_TRACE_MONITOR_WAIT:
    case STVM_TRACE_MONITOR_SIGNAL: case STVM_TRACE_QUEUE_CLOSE:
        instant(w, ev, ts, obj);
        break;
    default:
        io_event(w, ev, ts, obj);
    }
    if (w->runq != runq)
        counter(w, ts, ev->seq);
}

/* ---- tracks and their names ---------------------------------------------------------- */

static void mark(writer *w, uint64_t id)
{
    if (id < w->ntracks)
        w->tracks[id].seen = true;
}

static int make_tracks(writer *w, const struct stvm_trace *t, size_t kept)
{
    uint64_t max = 0;
    for (size_t i = 0; i < kept; i++) {
        stvm_trace_event e = stvm__trace_at(t, i);
        const stvm_trace_event *ev = &e;
        max = ev->process > max ? ev->process : max;
        if (ev->kind == STVM_TRACE_SWITCH && ev->object > max)
            max = ev->object;
    }
    w->ntracks = (size_t)max + 1;
    w->tracks = stvm__calloc(w->ntracks, sizeof *w->tracks);
    if (!w->tracks)
        return STVM_ENOMEM;
    for (size_t i = 0; i < kept; i++) {
        stvm_trace_event e = stvm__trace_at(t, i);
        const stvm_trace_event *ev = &e;
        mark(w, ev->process);
        if (ev->kind == STVM_TRACE_SWITCH)
            mark(w, ev->object);
    }
    return STVM_OK;
}

static void names(writer *w)
{
    entry_start(w);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"stvm\"}}",
          w->out);
    for (size_t id = 0; id < w->ntracks; id++) {
        if (!w->tracks[id].seen)
            continue;
        char label[64];
        stvm__trace_process_label(w->vm, id, label, sizeof label);
        entry_start(w);
        fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"thread_name\",\"tid\":", w->out);
        fprintf(w->out, "%zu,\"args\":{\"name\":\"", id);
        json_text(w->out, label);
        fputs("\"}}", w->out);
    }
}

/* ---- the file ------------------------------------------------------------------------ */

static int write_all(writer *w, const struct stvm_trace *t, size_t kept)
{
    fputs("{\"traceEvents\":[", w->out);
    names(w);
    char obj[STVM_TRACE_LABEL_MAX];
    uint64_t last_seq = 0;
    format_ns(0, w->now);
    for (size_t i = 0; i < kept; i++) {
        stvm_trace_event e = stvm__trace_at(t, i);
        const stvm_trace_event *ev = &e;
        if (stvm__trace_object_label(&w->labels, ev, obj, sizeof obj))
            return STVM_ENOMEM;
        set_now(w, ev);
        event(w, ev, obj);
        last_seq = ev->seq;
    }
    for (size_t id = 0; id < w->ntracks; id++)
        set_state(w, id, S_NONE, w->now, last_seq);
    fprintf(w->out, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"dropped\":%lld,"
                    "\"events\":%zu,\"clock\":\"%s\"}}\n",
            (long long)stvm_trace_dropped(w->vm), kept,
            w->vm->clock.kind == STVM_CLOCK_SIMULATED ? "simulated" : "real");
    return ferror(w->out) ? STVM_ESYS : STVM_OK;
}

int stvm_trace_write_json(stvm_vm *vm, const char *path)
{
    const struct stvm_trace *t;
    int err = stvm__trace_writer_ring(vm, path, &t);
    if (err)
        return err;
    size_t kept = stvm__trace_kept(t);
    writer w = {.vm = vm, .first = true};
    stvm__trace_labels_init(&w.labels, t);
    err = make_tracks(&w, t, kept);
    if (!err && (w.out = fopen(path, "w")) == NULL)
        err = STVM_ESYS;
    if (!err)
        err = write_all(&w, t, kept);
    if (w.out && fclose(w.out) != 0 && !err)
        err = STVM_ESYS;
    if (err && w.out)
        remove(path);
    free(w.tracks);
    stvm__trace_labels_free(&w.labels);
    return err;
}
