/* Labels the trace writers share (trace_write.h). */
#include "trace_write.h"
#include "alloc.h"

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
        return STVM_TRACE_LABEL_SEM;
    case STVM_TRACE_MUTEX_ENTER: case STVM_TRACE_MUTEX_WAIT: case STVM_TRACE_MUTEX_EXIT:
    case STVM_TRACE_MUTEX_HANDOFF:
        return STVM_TRACE_LABEL_MUTEX;
    case STVM_TRACE_DELAY_SCHEDULED: case STVM_TRACE_DELAY_EXPIRED:
    case STVM_TRACE_DELAY_CANCELLED:
        return STVM_TRACE_LABEL_DELAY;
    case STVM_TRACE_FFI_CALL: case STVM_TRACE_FFI_RETURN:
        return STVM_TRACE_LABEL_FN;
    case STVM_TRACE_QUEUE_PUT: case STVM_TRACE_QUEUE_TAKE: case STVM_TRACE_QUEUE_CLOSE:
        return STVM_TRACE_LABEL_QUEUE;
    case STVM_TRACE_MONITOR_WAIT: case STVM_TRACE_MONITOR_SIGNAL:
        return STVM_TRACE_LABEL_MONITOR;
    default:
        return -1;
    }
}

/* ---- numbers --------------------------------------------------------------------------- */

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
    uint64_t *keys = stvm__calloc(cap, sizeof *keys);
    uint32_t *numbers = stvm__calloc(cap, sizeof *numbers);
    if (!keys || !numbers) {
        free(keys);
        free(numbers);
        return false;
    }
    trace_labels n = *l;
    n.keys = keys;
    n.numbers = numbers;
    n.cap = cap;
    for (size_t i = 0; i < l->cap; i++) {
        if (!l->keys[i])
            continue;
        size_t j = slot_of(&n, l->keys[i]);
        n.keys[j] = l->keys[i];
        n.numbers[j] = l->numbers[i];
    }
    free(l->keys);
    free(l->numbers);
    *l = n;
    return true;
}

/* "sem1": the number of addr among the objects of its kind, in the order the trace
 * first mentions them. */
static int number_label(trace_labels *l, uint64_t addr, int kind, char *buf, size_t size)
{
    static const char *const prefix[STVM_TRACE_LABEL_KINDS] = {
        "sem", "mutex", "delay", "fn", "queue", "monitor", "socket"};
    if (2 * (l->used + 1) > l->cap && !grow(l))
        return STVM_ENOMEM;
    /* The kind goes into the key's low bits, which aligned addresses leave free. */
    uint64_t key = addr | (uint64_t)kind;
    size_t i = slot_of(l, key);
    if (!l->keys[i]) {
        l->keys[i] = key;
        l->numbers[i] = ++l->next[kind];
        l->used++;
    }
    snprintf(buf, size, "%s%u", prefix[kind], l->numbers[i]);
    return STVM_OK;
}

/* ---- what the ring's object entries say -------------------------------------------------- */

static size_t known_slot(const trace_known *k, size_t cap, uint64_t addr)
{
    size_t i = (size_t)((addr >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (k[i].addr && k[i].addr != addr)
        i = (i + 1) & (cap - 1);
    return i;
}

/* The entry of addr, or NULL. */
static trace_known *known_of(const trace_labels *l, uint64_t addr)
{
    if (!l->known_used)
        return NULL;
    trace_known *k = &l->known[known_slot(l->known, l->known_cap, addr)];
    return k->addr ? k : NULL;
}

/* Rebuild the table at cap, leaving out the addresses gone: addr itself and the members
 * whose owner it was. */
static bool known_rebuild(trace_labels *l, size_t cap, uint64_t gone)
{
    trace_known *n = stvm__calloc(cap, sizeof *n);
    if (!n)
        return false;
    const stvm_trace_object *o = l->ring->objects;
    size_t used = 0;
    for (size_t i = 0; i < l->known_cap; i++) {
        trace_known e = l->known[i];
        if (!e.addr || e.addr == gone)
            continue;
        if (gone && e.member != SIZE_MAX && o[e.member].owner == gone)
            e.member = SIZE_MAX;
        if (e.name == SIZE_MAX && e.member == SIZE_MAX)
            continue;
        n[known_slot(n, cap, e.addr)] = e;
        used++;
    }
    free(l->known);
    l->known = n;
    l->known_cap = cap;
    l->known_used = used;
    return true;
}

/* The entry of addr, made if need be (NULL: no memory). */
static trace_known *known_make(trace_labels *l, uint64_t addr)
{
    trace_known *k = known_of(l, addr);
    if (k)
        return k;
    if (2 * (l->known_used + 1) > l->known_cap &&
        !known_rebuild(l, l->known_cap ? 2 * l->known_cap : 64, 0))
        return NULL;
    k = &l->known[known_slot(l->known, l->known_cap, addr)];
    *k = (trace_known){.addr = addr, .name = SIZE_MAX, .member = SIZE_MAX};
    l->known_used++;
    return k;
}

/* Apply the ring's object entries up to the event of seq. */
static int apply_objects(trace_labels *l, uint64_t seq)
{
    const struct stvm_trace *t = l->ring;
    for (; t && l->applied < t->nobjects && t->objects[l->applied].seq <= seq; l->applied++) {
        const stvm_trace_object *o = &t->objects[l->applied];
        if (o->what == STVM_TRACE_OBJ_GONE) {
            if (l->known_used && !known_rebuild(l, l->known_cap, o->object))
                return STVM_ENOMEM;
            continue;
        }
        trace_known *k = known_make(l, o->object);
        if (!k)
            return STVM_ENOMEM;
        if (o->what == STVM_TRACE_OBJ_MEMBER)
            k->member = l->applied;
        else
            k->name = o->name[0] ? l->applied : SIZE_MAX;
    }
    return STVM_OK;
}

void stvm__trace_labels_init(trace_labels *l, const struct stvm_trace *t)
{
    memset(l, 0, sizeof *l);
    l->ring = t;
}

/* addr's label as an object of label kind `kind`. */
static int label_of(trace_labels *l, uint64_t addr, int kind, char *buf, size_t size)
{
    const stvm_trace_object *o = l->ring ? l->ring->objects : NULL;
    const trace_known *k = known_of(l, addr);
    if (k && k->name != SIZE_MAX) {
        snprintf(buf, size, "%s", o[k->name].name);
        return STVM_OK;
    }
    if (k && k->member != SIZE_MAX) {
        const stvm_trace_object *m = &o[k->member];
        char owner[STVM_TRACE_LABEL_MAX];
        const trace_known *ok = known_of(l, m->owner);
        int err = STVM_OK;
        if (ok && ok->name != SIZE_MAX)
            snprintf(owner, sizeof owner, "%s", o[ok->name].name);
        else
            err = number_label(l, m->owner, m->owner_kind, owner, sizeof owner);
        if (!err)
            snprintf(buf, size, "%s.%s", owner, m->role);
        return err;
    }
    return number_label(l, addr, kind, buf, size);
}

int stvm__trace_object_label(trace_labels *l, const stvm_trace_event *ev, char *buf, size_t size)
{
    int err = apply_objects(l, ev->seq);
    if (err)
        return err;
    int kind = stvm__trace_object_kind(ev->kind);
    if (kind < 0 || !ev->object) {
        snprintf(buf, size, "-");
        return STVM_OK;
    }
    return label_of(l, ev->object, kind, buf, size);
}

void stvm__trace_labels_free(trace_labels *l)
{
    free(l->keys);
    free(l->numbers);
    free(l->known);
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
