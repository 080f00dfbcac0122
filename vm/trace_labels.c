/* Labels the trace writers share (trace_write.h). */
#include "trace_write.h"

#include <stdlib.h>
#include <string.h>

int stvm__trace_writer_ring(const stvm_vm *vm, const void *where,
                            const struct stvm_trace **out)
{
    if (!vm || !where)
        return STVM_EINVAL;
    *out = stvm__trace_ring(vm);
    return *out ? STVM_OK : STVM_ESTATE;
}

int stvm__trace_object_kind(int event_kind)
{
    switch (event_kind) {
    case STVM_TRACE_SEM_WAIT: case STVM_TRACE_SEM_SIGNAL: case STVM_TRACE_SEM_EXCESS:
    case STVM_TRACE_TIMER_ARMED: case STVM_TRACE_TIMER_DISARMED: case STVM_TRACE_TIMER_FIRED:
    case STVM_TRACE_EXTERNAL:
        return 0;
    case STVM_TRACE_MUTEX_ENTER: case STVM_TRACE_MUTEX_WAIT: case STVM_TRACE_MUTEX_EXIT:
    case STVM_TRACE_MUTEX_HANDOFF:
        return 1;
    case STVM_TRACE_DELAY_SCHEDULED: case STVM_TRACE_DELAY_EXPIRED:
    case STVM_TRACE_DELAY_CANCELLED:
        return 2;
    case STVM_TRACE_FFI_CALL: case STVM_TRACE_FFI_RETURN:
        return 3;
    case STVM_TRACE_QUEUE_PUT: case STVM_TRACE_QUEUE_TAKE: case STVM_TRACE_QUEUE_CLOSE:
        return 4;
    case STVM_TRACE_MONITOR_WAIT: case STVM_TRACE_MONITOR_SIGNAL:
        return 5;
    default:
        return -1;
    }
}

static size_t slot_of(const trace_labels *l, uint64_t key)
{
    size_t i = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull) & (l->cap - 1);
    while (l->keys[i] && l->keys[i] != key)
        i = (i + 1) & (l->cap - 1);
    return i;
}

static bool grow(trace_labels *l)
{
    size_t cap = l->cap ? 2 * l->cap : 64;
    trace_labels n = {.keys = calloc(cap, sizeof *n.keys),
                      .numbers = calloc(cap, sizeof *n.numbers),
                      .cap = cap,
                      .used = l->used};
    if (!n.keys || !n.numbers) {
        free(n.keys);
        free(n.numbers);
        return false;
    }
    for (size_t i = 0; i < l->cap; i++) {
        if (!l->keys[i])
            continue;
        size_t j = slot_of(&n, l->keys[i]);
        n.keys[j] = l->keys[i];
        n.numbers[j] = l->numbers[i];
    }
    memcpy(n.next, l->next, sizeof n.next);
    stvm__trace_labels_free(l);
    *l = n;
    return true;
}

int stvm__trace_object_label(trace_labels *l, const stvm_trace_event *ev, char *buf, size_t size)
{
    static const char *const prefix[] = {"sem", "mutex", "delay", "fn", "queue", "monitor"};
    int kind = stvm__trace_object_kind(ev->kind);
    if (kind < 0 || !ev->object) {
        snprintf(buf, size, "-");
        return STVM_OK;
    }
    if (2 * (l->used + 1) > l->cap && !grow(l))
        return STVM_ENOMEM;
    /* The kind goes into the key's low bits, which aligned addresses leave free. */
    uint64_t key = ev->object | (uint64_t)kind;
    size_t i = slot_of(l, key);
    if (!l->keys[i]) {
        l->keys[i] = key;
        l->numbers[i] = ++l->next[kind];
        l->used++;
    }
    snprintf(buf, size, "%s%u", prefix[kind], l->numbers[i]);
    return STVM_OK;
}

void stvm__trace_labels_free(trace_labels *l)
{
    free(l->keys);
    free(l->numbers);
    memset(l, 0, sizeof *l);
}

void stvm__trace_process_label(const stvm_vm *vm, uint64_t id, char *buf, size_t size)
{
    if (!id) {
        snprintf(buf, size, "host");
        return;
    }
    const char *name = stvm__trace_name_of(vm, id);
    if (name && *name)
        snprintf(buf, size, "%.*s#%llu", (int)(size > 8 ? size - 8 : 1), name,
                 (unsigned long long)id);
    else
        snprintf(buf, size, "#%llu", (unsigned long long)id);
}

int stvm_trace_process_name(const stvm_vm *vm, uint64_t id, char *buf, size_t size)
{
    if (!vm || !buf || size == 0)
        return STVM_EINVAL;
    if (!stvm__trace_ring(vm))
        return STVM_ESTATE;
    stvm__trace_process_label(vm, id, buf, size);
    return STVM_OK;
}

void stvm__trace_ms(const stvm_vm *vm, uint64_t time_us, char *buf, size_t size)
{
    uint64_t start = stvm__trace_ring(vm)->start_us;
    if (time_us < start) {
        snprintf(buf, size, "-");
        return;
    }
    uint64_t us = time_us - start;
    snprintf(buf, size, "%llu.%03llu", (unsigned long long)(us / 1000),
             (unsigned long long)(us % 1000));
}

const char *stvm__trace_why(int why)
{
    static const char *const text[] = {"preempted", "waited",    "yielded", "finished",
                                       "idle",      "suspended", "host"};
    return why >= 0 && why < (int)(sizeof text / sizeof text[0]) ? text[why] : "?";
}

const char *stvm__trace_socket_for(int what)
{
    static const char *const text[] = {"data", "send done", "connection"};
    return what >= 0 && what < (int)(sizeof text / sizeof text[0]) ? text[what] : "?";
}

const char *stvm__trace_runner(int runner)
{
    static const char *const text[] = {"same-thread", "threaded", "worker"};
    return runner >= 0 && runner < (int)(sizeof text / sizeof text[0]) ? text[runner] : "?";
}

const char *stvm__trace_gave(int64_t what)
{
    switch (what) {
    case STVM_TRACE_GAVE_SIGNAL: return "a semaphore's signal";
    case STVM_TRACE_GAVE_MUTEX: return "a mutex";
    case STVM_TRACE_GAVE_MONITOR: return "a monitor";
    case STVM_TRACE_GAVE_MONITOR_SIGNAL: return "a monitor's signal";
    case STVM_TRACE_GAVE_MONITOR_WAKE: return "a monitor's signal-all wake";
    default: return "?";
    }
}

const char *stvm__trace_end(int end)
{
    static const char *const text[] = {"timer", "io", "external", "timeout", "outside"};
    return end >= 0 && end < (int)(sizeof text / sizeof text[0]) ? text[end] : "?";
}
