/*
 * driver.h -- runs the reference model (model.h) in lock-step with a real VM on the
 * simulated clock.
 *
 * Every green process runs the same interpreter: it asks the driver what to do next,
 * makes one stvm_* call, and asks again with the call's answer. The host thread does
 * the same with host operations and stvm_run. At each point where the VM becomes
 * visible (a process asks, a cleanup starts, stvm_run returns) the driver checks that
 * it is the point the model predicted -- the same process, the same answer -- and then
 * compares everything the public API shows: each process's state, priority, list and
 * flags (stvm_process_get_info), each semaphore's excess signals, each mutex's owner,
 * the clock, the live process and object counts, and stvm_vm_check_invariants.
 *
 * Operations are generated from a 64-bit seed (using the model's state to pick
 * sensible ones) and recorded; a failing script is cut down by delta debugging to the
 * shortest sequence that still disagrees in the same way, and printed.
 */
#ifndef STVM_TESTS_MODEL_DRIVER_H
#define STVM_TESTS_MODEL_DRIVER_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops.h"

#define SIM_START_US 3913056000000000ull   /* 2025-01-01 in us since 1901 */
#define MS_CLOCK_MASK 0x1FFFFFFFu

/* ---- random numbers (splitmix64: the same seed, the same run, everywhere) ------------- */

static uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t rnd(uint64_t *s, uint32_t n)
{
    return n ? (uint32_t)(mix64(s) % n) : 0;
}

/* ---- what a seed decides ---------------------------------------------------------------- */

typedef struct run_params {
    uint64_t seed;
    bool yields;          /* bit 0 of the seed */
    bool ms_delays;
    int smallint_bits;
    uint64_t sim_start_us;
    uint32_t ms_clock_start;
    size_t ops;           /* operations to generate */
    int mutation;         /* MUT_*: the self-test's deliberately wrong model */
    bool storm;           /* the suspend/resume storm's mix (pharo #6363), not the full one */
} run_params;

static run_params params_of(uint64_t seed, size_t max_ops)
{
    uint64_t r = seed ^ 0x5DEECE66Dull;
    run_params p = {.seed = seed, .yields = seed & 1};
    p.ms_delays = rnd(&r, 3) == 0;
    p.smallint_bits = rnd(&r, 2) ? 61 : 31;
    /* Now and then the clock starts just before its end (2^62 us: longer Delays are
     * refused) or, on the millisecond scheduler, the millisecond clock just before it
     * wraps (every pending resumption time moves back by one period). */
    p.sim_start_us = rnd(&r, 16) == 0 ? M_CLOCK_END - rnd(&r, 400000) : SIM_START_US + rnd(&r, 1000000);
    p.ms_clock_start = rnd(&r, 3) == 0 ? MS_CLOCK_MASK - rnd(&r, 3000) : rnd(&r, 1000000);
    p.ops = max_ops / 4 + rnd(&r, (uint32_t)(max_ops - max_ops / 4));
    return p;
}

static void params_text(const run_params *p, char *buf, size_t n)
{
    snprintf(buf, n,
             "preemption_yields=%s, delay clock %s, %d-bit SmallIntegers, sim_start_us %llu, "
             "ms_clock_start %u, %zu operations",
             p->yields ? "true" : "false", p->ms_delays ? "ms" : "us", p->smallint_bits,
             (unsigned long long)p->sim_start_us, p->ms_clock_start, p->ops);
}

/* ---- the driver's state ------------------------------------------------------------------ */

typedef struct trace_ent {
    op o;
    int who;           /* slot, or M_HOST */
    int frame;         /* the cleanup the asking loop ran in, -1 for the body */
    int rc, want;      /* the VM's answer and the model's, once known */
    bool answered;
    bool script;       /* from the script (not the final teardown) */
} trace_ent;

typedef struct drv drv;

/* What green code gets as its argument: which slot, or which cleanup. */
typedef struct green_rec {
    drv *d;
    int slot, id, kind;
} green_rec;

struct drv {
    run_params rp;
    bool check_objects;
    /* the script: generated (and recorded) or replayed */
    op *ops;
    size_t n_ops, cap_ops, cursor;
    bool generating, draining;
    uint64_t rng;
    /* the two worlds */
    model m;
    stvm_vm *vm;
    stvm_semaphore *sem[M_SEMS];
    stvm_mutex *mx[M_MUTEXES];
    stvm_process *h[M_SLOTS];
    stvm_queue *q[M_QUEUES];
    stvm_delay *dly[M_DELAYS];
    stvm_monitor *mon;         /* m0 */
    int intr_count[M_SLOTS];   /* the interrupt functions each slot's process ran */
    int32_t next_item;
    uint64_t objects_base;
    green_rec **recs;
    size_t n_recs, cap_recs;
    /* what happened */
    uint64_t executed;
    trace_ent *trace;
    size_t n_trace, cap_trace;
    long pending[M_SLOTS];   /* each slot's call whose answer is still to come */
    int8_t last_kind[M_SLOTS][M_MAX_FRAMES + 1];   /* per cleanup depth */
    uint64_t cov_rc[OP_KINDS][35];   /* answers seen, per operation (RC_BUCKETS) */
    bool keep_trace;
    op last_op;              /* the latest operation, for messages */
    int last_who;
    bool failed;
    char category[24];
    char why[1536];
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * size);
    if (!q)
        abort();
    *cap = n;
    return q;
}

static const char *who_name(int who)
{
    static const char *const names[M_SLOTS] = {"s0", "s1", "s2", "s3", "s4", "s5"};
    return who == M_HOST ? "host" : who >= 0 && who < M_SLOTS ? names[who] : "?";
}

/* ---- failing ----------------------------------------------------------------------------- */

static void fail(drv *d, const char *category, const char *fmt, ...)
{
    if (d->failed)
        return;
    d->failed = true;
    snprintf(d->category, sizeof d->category, "%s", category);
    char what[160] = "the start";
    if (d->executed) {
        char o[96];
        op_text(&d->last_op, o, sizeof o);
        snprintf(what, sizeof what, "operation %llu (%s: %s)", (unsigned long long)d->executed,
                 who_name(d->last_who), o);
    }
    int n = snprintf(d->why, sizeof d->why, "[%s] after %s: ", category, what);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof d->why)
        vsnprintf(d->why + n, sizeof d->why - (size_t)n, fmt, ap);
    va_end(ap);
}

static void note_trace(drv *d, const op *o, int who, int frame, bool script)
{
    d->last_op = *o;
    d->last_who = who;
    if (!d->keep_trace)
        return;
    d->trace = grow(d->trace, &d->cap_trace, d->n_trace + 1, sizeof *d->trace);
    d->trace[d->n_trace++] = (trace_ent){.o = *o, .who = who, .frame = frame, .script = script};
    if (who != M_HOST)
        d->pending[who] = (long)d->n_trace - 1;
}

/* Answers per operation: 0 and 1, each error code down to STVM_EAGAIN (-32), the rest
 * in the last bucket. */
#define RC_BUCKETS 35
static int rc_bucket(int rc)
{
    return rc >= 0 ? (rc > 1 ? RC_BUCKETS - 1 : rc)
                   : -rc + 1 < RC_BUCKETS - 1 ? -rc + 1 : RC_BUCKETS - 1;
}

static void note_answer(drv *d, long at, int rc, int want)
{
    if (at < 0 || (size_t)at >= d->n_trace)
        return;
    d->trace[at].rc = rc;
    d->trace[at].want = want;
    d->trace[at].answered = true;
}

/* ---- comparing everything the API shows --------------------------------------------------- */

static const void *expected_object(const drv *d, int i)
{
    const mlist *l = d->m.p[i].on;
    if (!l || !d->m.p[i].alive)
        return NULL;
    switch (l->kind) {
    case L_SEM: return d->sem[l->index];
    case L_MUTEX: return l->index == M_MON_X ? (const void *)d->mon : d->mx[l->index];
    case L_MONQ: return d->mon;
    case L_JOIN: return d->h[l->index];
    case L_DOBJ: return stvm_delay_semaphore(d->dly[l->index]);
    default: return NULL;
    }
}

/* The handle of the object at index k of the model's names (M_NAME_*). */
static const void *named_handle(const drv *d, int k)
{
    if (k < M_NAME_MX)
        return d->sem[k];
    if (k < M_NAME_Q)
        return d->mx[k - M_NAME_MX];
    if (k < M_NAME_MON)
        return d->q[k - M_NAME_Q];
    if (k == M_NAME_MON)
        return d->mon;
    return d->dly[k - M_NAME_D];
}

/* stvm_*_get_name of the object at index k. */
static int named_get(const drv *d, int k, char *buf, size_t size)
{
    if (k < M_NAME_MX)
        return stvm_semaphore_get_name(d->vm, d->sem[k], buf, size);
    if (k < M_NAME_Q)
        return stvm_mutex_get_name(d->vm, d->mx[k - M_NAME_MX], buf, size);
    if (k < M_NAME_MON)
        return stvm_queue_get_name(d->vm, d->q[k - M_NAME_Q], buf, size);
    if (k == M_NAME_MON)
        return stvm_monitor_get_name(d->vm, d->mon, buf, size);
    return stvm_delay_get_name(d->vm, d->dly[k - M_NAME_D], buf, size);
}

/* What process i waits on, as the listing shows it: the kind, the handle and its name. */
static int expected_wait(const drv *d, int i, const void **handle, const char **name)
{
    int named;
    int kind = m_wait_kind(&d->m, i, &named);
    *handle = named >= 0 ? named_handle(d, named)
              : kind == STVM_WAIT_ON_JOIN ? (const void *)d->h[d->m.p[i].on->index]
                                          : NULL;
    *name = named >= 0 ? m_name_text(d->m.name[named]) : NULL;
    return kind;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool compare_state(drv *d)
{
    model *m = &d->m;
    stvm_vm *vm = d->vm;
    if (stvm_vm_now_us(vm) != m->now) {
        fail(d, "clock", "stvm_vm_now_us is %llu, the model says %llu (%+lld us)",
             (unsigned long long)stvm_vm_now_us(vm), (unsigned long long)m->now,
             (long long)(stvm_vm_now_us(vm) - m->now));
        return false;
    }
    for (int i = 0; i < M_SLOTS; i++) {
        const mproc *p = &m->p[i];
        if (!p->used || !p->known)
            continue;
        stvm_process_info info;
        int err = stvm_process_get_info(vm, d->h[i], &info);
        if (err) {
            fail(d, "state", "stvm_process_get_info(s%d) answered %s", i, stvm_err_name(err));
            return false;
        }
        int st = m_state(m, i);
        const char *on = m_waiting_on(m, i);
        const void *obj = expected_object(d, i);
        /* finished: stays so; terminated in a cleanup run by hand: marked at once */
        bool terminating = !p->alive || p->terminate || p->exiting || p->exit_after;
        /* a Delay's semaphore and a queue's are inside other objects: not compared */
        bool obj_ok = (p->on && (p->on->kind == L_DELAY || p->on->kind == L_QAVAIL ||
                                 p->on->kind == L_QROOM)) ||
                      info.waiting_object == obj;
        int prio = p->alive ? p->prio : p->handle_prio;
        if ((int)info.state != st || info.priority != prio || !same_str(info.waiting_on, on) ||
            !obj_ok || info.terminating != terminating || info.held != p->held ||
            info.id != p->id || info.vm_own) {
            fail(d, "state",
                 "s%d: the VM shows %s, priority %d, waiting on %s, terminating %d, held %d, id %llu; "
                 "the model %s, priority %d, waiting on %s, terminating %d, held %d, id %llu%s",
                 i, state_name(info.state), info.priority,
                 info.waiting_on ? info.waiting_on : "nothing", info.terminating, info.held,
                 (unsigned long long)info.id, state_name(st), prio, on ? on : "nothing",
                 terminating, p->held, (unsigned long long)p->id,
                 obj_ok ? "" : " (another waiting_object)");
            return false;
        }
    }
    for (int i = 0; i < M_SLOTS; i++) {
        const mproc *p = &m->p[i];
        if (!p->used || !p->known || !p->alive)
            continue;
        stvm_process_info info;
        stvm_process_get_info(vm, d->h[i], &info);
        const void *handle;
        const char *name;
        int kind = expected_wait(d, i, &handle, &name);
        uint64_t since = kind == STVM_WAIT_ON_NOTHING ? 0 : p->since;
        if (info.wait_kind != kind || info.wait_handle != handle || !same_str(info.wait_name, name) ||
            info.wait_since_us != since || info.wait_fd != -1) {
            fail(d, "listing",
                 "s%d: the VM shows wait_kind %d, wait_handle %p, wait_name %s, wait_since_us %llu, "
                 "wait_fd %d; the model: %d, %p, %s, %llu, -1",
                 i, info.wait_kind, info.wait_handle, info.wait_name ? info.wait_name : "NULL",
                 (unsigned long long)info.wait_since_us, info.wait_fd, kind, handle,
                 name ? name : "NULL", (unsigned long long)since);
            return false;
        }
    }
    /* stvm_vm_processes: every unfinished process, the VM's own too, oldest first. */
    uint64_t want_ids[M_PROCS];
    size_t want_n = 0;
    for (uint64_t id = 1; id <= m->next_pid; id++)
        for (int i = 0; i < M_PROCS; i++)
            if (m->p[i].used && m->p[i].alive && m->p[i].id == id)
                want_ids[want_n++] = id;
    stvm_process *listed[M_PROCS + 1];
    size_t n = 0;
    int lrc = stvm_vm_processes(vm, listed, M_PROCS + 1, &n);
    bool same = lrc == STVM_OK && n == want_n;
    for (size_t k = 0; same && k < n; k++) {
        stvm_process_info info;
        same = stvm_process_get_info(vm, listed[k], &info) == STVM_OK && info.id == want_ids[k];
    }
    if (!same) {
        fail(d, "listing", "stvm_vm_processes answered %s with %zu processes; the model has %zu",
             stvm_err_name(lrc), n, want_n);
        return false;
    }
    for (int k = 0; k < M_NAMED; k++) {
        char got[STVM_NAME_MAX + 1];
        const char *want = m_name_text(m->name[k]);
        int len = named_get(d, k, got, sizeof got);
        if (len != (int)(want ? strlen(want) : 0) || strcmp(got, want ? want : "") != 0) {
            fail(d, "names", "object %d is named \"%s\" (length %d); the model says \"%s\"", k, got,
                 len, want ? want : "");
            return false;
        }
    }
    for (int i = 0; i < M_SLOTS; i++) {
        if (m->p[i].used && m->p[i].known && d->intr_count[i] != m->p[i].intr_count) {
            fail(d, "interrupts", "s%d ran %d interrupt functions, the model says %d", i,
                 d->intr_count[i], m->p[i].intr_count);
            return false;
        }
    }
    for (int k = 0; k < M_QUEUES; k++) {
        const mqueue *q = &m->q[k];
        int handed = q_handed(m, q);
        if (q->n != handed + q->avail.excess) {
            fail(d, "model", "q%d holds %d items, %d promised and %lld not", k, q->n, handed,
                 (long long)q->avail.excess);
            return false;
        }
        int64_t size = stvm_queue_size(vm, d->q[k]);
        void *it = NULL;
        int rc = stvm_queue_peek(vm, d->q[k], &it);
        int want_rc = q->avail.excess > 0 ? STVM_OK : q_dry(m, q) ? STVM_EEOF : STVM_EAGAIN;
        int want_item = want_rc == STVM_OK ? q->item[handed] : 0;
        if (size != q->avail.excess || rc != want_rc || (rc == STVM_OK && (intptr_t)it != want_item)) {
            fail(d, "queue", "q%d: size %lld, peek %s item %d; the model: size %lld, peek %s item %d", k,
                 (long long)size, stvm_err_name(rc), rc == STVM_OK ? (int)(intptr_t)it : 0,
                 (long long)q->avail.excess, stvm_err_name(want_rc), want_item);
            return false;
        }
    }
    for (int k = 0; k < M_DELAYS; k++) {
        /* isExpired, beingWaitedOn, the time to go and the semaphore's excess signals */
        const mdelay *md = &m->dobj[k];
        bool sched = md->state == D_REQUESTED || md->state == D_SCHEDULED;
        int64_t want_us = md->state == D_REQUESTED ? (k == 0 ? m->dobj_len[0] * 1000 : m->dobj_len[1])
                          : md->state == D_SCHEDULED && md->at > m->now ? (int64_t)(md->at - m->now)
                                                                        : 0;
        int64_t us = -1, ms = -1;
        stvm_delay_us_to_go(vm, d->dly[k], &us);
        stvm_delay_ms_to_go(vm, d->dly[k], &ms);
        int expired = stvm_delay_is_expired(vm, d->dly[k]);
        int waited = stvm_delay_being_waited_on(vm, d->dly[k]);
        int64_t e = stvm_semaphore_excess(vm, stvm_delay_semaphore(d->dly[k]));
        if (expired != (md->own.excess > 0) || waited != sched || us != want_us ||
            ms != (want_us + 999) / 1000 || e != md->own.excess) {
            fail(d, "delay", "d%d: expired %d, being waited on %d, %lld us (%lld ms) to go, "
                 "%lld excess signals; the model: %d, %d, %lld us, %lld excess", k, expired, waited,
                 (long long)us, (long long)ms, (long long)e, md->own.excess > 0, sched,
                 (long long)want_us, (long long)md->own.excess);
            return false;
        }
    }
    for (int s = 0; s < M_SEMS; s++) {
        int64_t e = stvm_semaphore_excess(vm, d->sem[s]);
        if (e != m->sem[s].excess) {
            fail(d, "excess", "sem%d has %lld excess signals, the model says %lld", s,
                 (long long)e, (long long)m->sem[s].excess);
            return false;
        }
    }
    for (int x = 0; x < M_MUTEXES; x++) {
        stvm_process *owner = stvm_mutex_owner(vm, d->mx[x]);
        int want = m->mx[x].owner;
        if (owner != (want >= 0 ? d->h[want] : NULL)) {
            int got = -2;
            for (int i = 0; i < M_SLOTS; i++)
                if (owner && m->p[i].used && m->p[i].known && d->h[i] == owner)
                    got = i;
            fail(d, "owner", "mx%d is owned by %s, the model says %s", x,
                 !owner ? "nobody" : got >= 0 ? who_name(got) : "an unknown process",
                 want >= 0 ? who_name(want) : "nobody");
            return false;
        }
    }
    {
        /* the monitor: its owner and depth (0 when free) */
        const mmutex *mx = &m->mx[M_MON_X];
        stvm_process *owner = stvm_monitor_owner(vm, d->mon);
        int64_t depth = stvm_monitor_depth(vm, d->mon);
        int64_t want_depth = mx->owner >= 0 ? (int64_t)mx->depth : 0;
        if (owner != (mx->owner >= 0 ? d->h[mx->owner] : NULL) || depth != want_depth) {
            int got = -2;
            for (int i = 0; i < M_SLOTS; i++)
                if (owner && m->p[i].used && m->p[i].known && d->h[i] == owner)
                    got = i;
            fail(d, "monitor", "m0 is owned by %s at depth %lld, the model says %s at depth %lld",
                 !owner ? "nobody" : got >= 0 ? who_name(got) : "an unknown process",
                 (long long)depth, mx->owner >= 0 ? who_name(mx->owner) : "nobody",
                 (long long)want_depth);
            return false;
        }
    }
    char why[256];
    if (stvm_vm_check_invariants(vm, why, sizeof why) != STVM_OK) {
        fail(d, "invariants", "stvm_vm_check_invariants: %s", why);
        return false;
    }
    stvm_stats st;
    stvm_vm_get_stats(vm, &st);
    uint64_t live = (uint64_t)live_user(m) + 1 + m->timing_started;
    if (st.processes_live != live) {
        fail(d, "counts", "%llu processes are live, the model says %llu",
             (unsigned long long)st.processes_live, (unsigned long long)live);
        return false;
    }
    if (d->check_objects) {
        /* Objects: the semaphores and mutexes made at the start, each handle spawned
         * held until it goes, and the Delay scheduler's semaphore and process. */
        uint64_t want = d->objects_base + 2 * m->timing_started;
        for (int i = 0; i < M_SLOTS; i++)
            want += m->p[i].used && m->p[i].boxed_handle;
        if (st.objects_live != want) {
            fail(d, "counts", "%llu objects are live, the model says %llu (handles that did not go, or went early)",
                 (unsigned long long)st.objects_live, (unsigned long long)want);
            return false;
        }
    }
    return true;
}

/* stvm_vm_blocked_report, compared from the host: one line per unfinished user process that
 * is not runnable, oldest first ("'s3' (priority 40) waits on semaphore 0x..." or "...
 * is suspended"), each followed by its chain of holders as scheduler/process_info.c
 * writes it: a mutex's or the monitor's owner, a joined process, what each waits on, to
 * a cycle, a process that can run or is suspended, or a wait nobody holds (which, when
 * nothing can run, says why it cannot end). */
static const char *const blocked_kind_word[STVM_WAIT_ON_KINDS] = {
    [STVM_WAIT_ON_SEMAPHORE] = "semaphore", [STVM_WAIT_ON_MUTEX] = "mutex",
    [STVM_WAIT_ON_MONITOR] = "monitor", [STVM_WAIT_ON_MONITOR_CONDITION] = "monitor condition",
    [STVM_WAIT_ON_QUEUE_ITEM] = "queue item", [STVM_WAIT_ON_QUEUE_ROOM] = "queue room",
    [STVM_WAIT_ON_DELAY] = "delay", [STVM_WAIT_ON_JOIN] = "join"};

static void blocked_put(char *want, size_t *len, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(want + *len, size - *len, fmt, ap);
    va_end(ap);
    if (k > 0)
        *len = *len + (size_t)k < size ? *len + (size_t)k : size - 1;
}

/* The process that holds what i waits for (a mutex's or the monitor's owner, the joined
 * process), or -1. */
static int blocked_holder(const model *m, int i)
{
    const mproc *p = &m->p[i];
    if (p->on->kind == L_MUTEX)
        return m->mx[p->on->index].owner;
    if (p->on->kind == L_JOIN)
        return p->on->index;
    return -1;
}

/* "KIND 'NAME' 0x..." of i's wait (a join's by the joined process's name). */
static void blocked_object(const drv *d, int i, int kind, char *want, size_t *len, size_t size)
{
    const void *handle;
    const char *name;
    expected_wait(d, i, &handle, &name);
    if (kind == STVM_WAIT_ON_JOIN)
        name = who_name(d->m.p[i].on->index);
    blocked_put(want, len, size, "%s", blocked_kind_word[kind]);
    if (handle)
        blocked_put(want, len, size, "%s%s%s %p", name ? " '" : "", name ? name : "",
                    name ? "'" : "", handle);
}

static bool compare_blocked(drv *d)
{
    model *m = &d->m;
    char got[4096], want[4096];
    int n = stvm_vm_blocked_report(d->vm, got, sizeof got);
    if (n < 0 || (size_t)n >= sizeof got) {
        fail(d, "blocked report", "stvm_vm_blocked_report answered %d", n);
        return false;
    }
    /* Nothing can run: no process runs, none but idle is ready, no deadline keeps the VM
     * alive (the model has no descriptors and no external signals). */
    bool stuck = m->active == M_HOST && !timer_is_work(m);
    for (int i = 0; i < M_SLOTS + 2; i++)
        if (i != M_IDLE && m->p[i].used && m->p[i].alive && m_state(m, i) == STVM_PROCESS_READY)
            stuck = false;
    size_t len = 0;
    bool done[M_SLOTS] = {0};
    want[0] = 0;
    for (;;) {   /* oldest (lowest id) first */
        int best = -1;
        for (int i = 0; i < M_SLOTS; i++)
            if (!done[i] && m->p[i].used && m->p[i].alive && (best < 0 || m->p[i].id < m->p[best].id))
                best = i;
        if (best < 0)
            break;
        done[best] = true;
        int st = m_state(m, best);
        if (st != STVM_PROCESS_WAITING && st != STVM_PROCESS_SUSPENDED)
            continue;
        if (st == STVM_PROCESS_SUSPENDED) {
            blocked_put(want, &len, sizeof want, "'%s' (priority %d) is suspended\n",
                        who_name(best), m->p[best].prio);
            continue;
        }
        const void *handle;
        const char *name;
        int kind = expected_wait(d, best, &handle, &name);
        blocked_put(want, &len, sizeof want, "'%s' (priority %d) waits on ", who_name(best),
                    m->p[best].prio);
        blocked_object(d, best, kind, want, &len, sizeof want);
        int chain[M_SLOTS + 1], nc = 0, at = best;
        chain[nc++] = best;
        for (;;) {
            int o = blocked_holder(m, at);
            if (o < 0) {
                if (stuck && kind == STVM_WAIT_ON_SEMAPHORE)
                    blocked_put(want, &len, sizeof want,
                                ", which no process or registered thread can signal");
                else if (stuck && kind == STVM_WAIT_ON_QUEUE_ITEM)
                    blocked_put(want, &len, sizeof want,
                                ", into which no process or registered thread can put");
                else if (stuck && kind == STVM_WAIT_ON_QUEUE_ROOM)
                    blocked_put(want, &len, sizeof want, ", from which no process can take");
                else if (stuck && kind == STVM_WAIT_ON_MONITOR_CONDITION)
                    blocked_put(want, &len, sizeof want, ", which no process can signal");
                break;
            }
            if (kind != STVM_WAIT_ON_JOIN)
                blocked_put(want, &len, sizeof want, ", owned by '%s'", who_name(o));
            int seen = -1;
            for (int k = 0; k < nc && seen < 0; k++)
                if (chain[k] == o)
                    seen = k;
            if (seen >= 0) {
                blocked_put(want, &len, sizeof want, ": a deadlock cycle (");
                for (int k = seen; k < nc; k++)
                    blocked_put(want, &len, sizeof want, "'%s' -> ", who_name(chain[k]));
                blocked_put(want, &len, sizeof want, "'%s')", who_name(o));
                break;
            }
            chain[nc++] = o;   /* at most M_SLOTS: within the report's 16 */
            int ost = m_state(m, o);
            if (ost == STVM_PROCESS_ACTIVE || ost == STVM_PROCESS_READY) {
                blocked_put(want, &len, sizeof want,
                            ost == STVM_PROCESS_ACTIVE ? ", which is running" : ", which can run");
                break;
            }
            if (ost == STVM_PROCESS_SUSPENDED) {
                blocked_put(want, &len, sizeof want, ", which is suspended");
                break;
            }
            at = o;
            kind = expected_wait(d, at, &handle, &name);
            blocked_put(want, &len, sizeof want, ", which waits on ");
            blocked_object(d, at, kind, want, &len, sizeof want);
        }
        blocked_put(want, &len, sizeof want, "\n");
    }
    /* Compare line by line; '*' stands for any object. */
    const char *g = got, *w = want;
    while (*g && *w) {
        const char *ge = strchr(g, '\n'), *we = strchr(w, '\n');
        if (!ge || !we)
            break;
        size_t wl = (size_t)(we - w);
        bool any = wl > 0 && w[wl - 1] == '*';
        size_t cmp = any ? wl - 1 : wl;
        if ((any ? (size_t)(ge - g) < cmp : (size_t)(ge - g) != cmp) || memcmp(g, w, cmp) != 0)
            break;
        g = ge + 1;
        w = we + 1;
    }
    if (*g || *w) {
        fail(d, "blocked report", "stvm_vm_blocked_report says:\n%s  the model:\n%s", got, want);
        return false;
    }
    return true;
}

/* ---- generating operations ------------------------------------------------------------- */

static int pick_prio(drv *d)
{
    static const int8_t common[] = {5, 10, 30, 30, 40, 40, 40, 60, 80};
    uint32_t r = rnd(&d->rng, 100);
    if (r < 2)
        return r ? 81 : 0;   /* out of range: EINVAL */
    if (r < 12)
        return 1 + (int)rnd(&d->rng, 80);
    return common[rnd(&d->rng, sizeof common)];
}

static int64_t pick_ms(drv *d)
{
    uint32_t r = rnd(&d->rng, 200);
    if (r < 1)
        return -1;   /* EINVAL */
    if (r < 2)
        return M_MAX_US / 1000 + 1 + rnd(&d->rng, 1000);   /* past every limit: ERANGE */
    if (r < 4)   /* past the timing process's 1 s re-arm: the clock gets there in steps */
        return 1000 + rnd(&d->rng, 2500);
    r /= 2;
    if (r < 26)
        return 0;
    if (r < 71)
        return 1 + rnd(&d->rng, 5);
    if (r < 91)
        return 6 + rnd(&d->rng, 25);
    return 31 + rnd(&d->rng, 170);
}

/* A duration for a call that has an _ms and a _us form. */
static void pick_dur(drv *d, op *o)
{
    o->dur = pick_ms(d);
    if (rnd(&d->rng, 5) == 0) {
        o->flag |= OPF_US;
        if (o->dur > 0)
            o->dur = o->dur * 1000 + rnd(&d->rng, 1000) - 500;
    }
}

/* A slot whose handle the driver holds (usually not the caller's own). */
static int pick_target(drv *d, int self)
{
    int cand[M_SLOTS], n = 0;
    for (int i = 0; i < M_SLOTS; i++)
        if (d->m.p[i].used && d->m.p[i].known && (i != self || rnd(&d->rng, 6) == 0))
            cand[n++] = i;
    return n ? cand[rnd(&d->rng, (uint32_t)n)] : -1;
}

/* A target in the given state if there is one, else any. */
static int pick_target_in(drv *d, int self, stvm_process_state want)
{
    int cand[M_SLOTS], n = 0;
    for (int i = 0; i < M_SLOTS; i++)
        if (d->m.p[i].used && d->m.p[i].known && (int)m_state(&d->m, i) == (int)want)
            cand[n++] = i;
    return n && rnd(&d->rng, 4) ? cand[rnd(&d->rng, (uint32_t)n)] : pick_target(d, self);
}

static int free_slot(drv *d)
{
    int cand[M_SLOTS], n = 0;
    for (int i = 0; i < M_SLOTS; i++)
        if (!d->m.p[i].used)
            cand[n++] = i;
    return n ? cand[rnd(&d->rng, (uint32_t)n)] : -1;
}

static void gen_spawn(drv *d, op *o, int slot)
{
    o->kind = OP_SPAWN;
    o->obj = (int8_t)slot;
    o->prio = (int8_t)pick_prio(d);
    o->flag = rnd(&d->rng, 2) ? OPF_HELD : 0;
    if ((o->flag & OPF_HELD) && rnd(&d->rng, 8) == 0)
        o->flag |= OPF_SUSPENDED;
}

/* The operations a process may be given, with their weights. */
typedef struct mix_row {
    uint8_t kind, weight;
} mix_row;

static const mix_row green_mix[] = {
    {OP_SIGNAL, 12}, {OP_WAIT, 8}, {OP_TRY_WAIT, 3}, {OP_WAIT_TIMEOUT, 6},
    {OP_ENTER, 7}, {OP_EXIT, 8}, {OP_TRY_ENTER, 3}, {OP_ENTER_TIMEOUT, 4},
    {OP_YIELD, 6}, {OP_CHECKPOINT, 3}, {OP_SPAWN, 4}, {OP_SUSPEND, 3}, {OP_RESUME, 6},
    {OP_TERMINATE, 2}, {OP_SET_PRIORITY, 3}, {OP_RELEASE, 2}, {OP_JOIN, 3}, {OP_DELAY, 5},
    {OP_ENSURE, 3}, {OP_ENSURE_POP, 2}, {OP_RETURN, 1}, {OP_RENEW_SEM, 1}, {OP_RENEW_MUTEX, 1},
    {OP_QPUT, 7}, {OP_QTAKE, 6}, {OP_QTRY_TAKE, 2}, {OP_QTAKE_TIMEOUT, 3}, {OP_QPUT_TIMEOUT, 2},
    {OP_INTERRUPT, 3}, {OP_QFLUSH, 1}, {OP_QCLOSE, 1}, {OP_RENEW_QUEUE, 2},
    {OP_DWAIT, 4}, {OP_DSCHEDULE, 2}, {OP_DUNSCHEDULE, 2},
    {OP_MENTER, 6}, {OP_MTRY_ENTER, 2}, {OP_MEXIT, 6}, {OP_MWAIT, 4}, {OP_MWAIT_TIMEOUT, 3},
    {OP_MSIGNAL, 4}, {OP_MSIGNAL_ALL, 2}, {OP_MENTER_TIMEOUT, 3}, {OP_RENEW_MON, 2},
    {OP_NAME, 2},
};

/* A closed queue (the first), or -1. */
static int closed_queue(const model *m)
{
    for (int k = 0; k < M_QUEUES; k++)
        if (m->q[k].closed)
            return k;
    return -1;
}

/* The suspend/resume storm (pharo #6363: processes lost when many are suspended and
 * resumed in quick succession): mostly suspends, resumes, priority changes, signals
 * and waits, with spawns, yields, cleanups and a few terminates, so that a process that
 * the VM lost would show as a disagreement (it never asks again, never runs its
 * cleanups, or is missing from the final teardown). */
static const mix_row storm_mix[] = {
    {OP_SUSPEND, 14}, {OP_RESUME, 18}, {OP_SET_PRIORITY, 10}, {OP_SIGNAL, 10}, {OP_WAIT, 8},
    {OP_SPAWN, 6}, {OP_YIELD, 6}, {OP_CHECKPOINT, 2}, {OP_ENSURE, 3}, {OP_ENSURE_POP, 2},
    {OP_RETURN, 1}, {OP_TERMINATE, 1}, {OP_INTERRUPT, 1}, {OP_DELAY, 2},
};

_Static_assert(sizeof storm_mix / sizeof storm_mix[0] <= sizeof green_mix / sizeof green_mix[0],
               "gen_green's weights are sized by the full mix");

static op gen_green(drv *d)
{
    model *m = &d->m;
    int a = m->active;
    mproc *p = &m->p[a];
    op o = {0};
    const mix_row *mix = d->rp.storm ? storm_mix : green_mix;
    size_t nmix = d->rp.storm ? sizeof storm_mix / sizeof storm_mix[0]
                              : sizeof green_mix / sizeof green_mix[0];
    for (;;) {
        unsigned total = 0, w[sizeof green_mix / sizeof green_mix[0]];
        for (size_t k = 0; k < nmix; k++) {
            w[k] = mix[k].weight;
            if (mix[k].kind == OP_RETURN && p->n_fr)
                w[k] = 30;   /* cleanups stay short */
            if (mix[k].kind == OP_ENSURE && p->n_ens >= 4)
                w[k] = 0;
            if (mix[k].kind == OP_SPAWN && free_slot(d) < 0)
                w[k] = 0;
            /* a closed queue is mostly made again soon, so that most operations meet
             * open queues */
            if (green_mix[k].kind == OP_RENEW_QUEUE && closed_queue(m) >= 0)
                w[k] = 12;
            /* the monitor's waits, signals and exit mostly by its owner */
            if ((mix[k].kind == OP_MWAIT || mix[k].kind == OP_MWAIT_TIMEOUT ||
                 mix[k].kind == OP_MSIGNAL || mix[k].kind == OP_MSIGNAL_ALL ||
                 mix[k].kind == OP_MEXIT) && m->mx[M_MON_X].owner != a)
                w[k] = 1;
            total += w[k];
        }
        uint32_t r = rnd(&d->rng, total);
        size_t k = 0;
        while (r >= w[k])
            r -= w[k++];
        o = (op){.kind = mix[k].kind};
        switch (o.kind) {
        case OP_SIGNAL: case OP_WAIT: case OP_TRY_WAIT: case OP_RENEW_SEM:
            o.obj = (int8_t)rnd(&d->rng, M_SEMS);
            break;
        case OP_RENEW_MUTEX:
            o.obj = (int8_t)rnd(&d->rng, M_MUTEXES);
            break;
        case OP_NAME:
            o.obj = (int8_t)rnd(&d->rng, M_NAMED);
            o.prio = (int8_t)rnd(&d->rng, M_NAME_TEXTS);
            break;
        case OP_WAIT_TIMEOUT:
            o.obj = (int8_t)rnd(&d->rng, M_SEMS);
            pick_dur(d, &o);
            break;
        case OP_EXIT:   /* mostly a mutex the caller owns (not the monitor's entry) */
            o.obj = (int8_t)(p->n_owned && rnd(&d->rng, 5) ? p->owned[rnd(&d->rng, (uint32_t)p->n_owned)]
                                                           : (int)rnd(&d->rng, M_MUTEXES));
            if (o.obj == M_MON_X)
                o.obj = (int8_t)rnd(&d->rng, M_MUTEXES);
            break;
        case OP_MWAIT: case OP_MSIGNAL:
            o.obj = (int8_t)(rnd(&d->rng, 3) == 0);
            break;
        case OP_MSIGNAL_ALL:
            o.obj = (int8_t)(rnd(&d->rng, 2) ? 0 : 1 + rnd(&d->rng, 2));
            break;
        case OP_MENTER_TIMEOUT:
            o.dur = pick_ms(d);
            break;
        case OP_MWAIT_TIMEOUT:
            o.obj = (int8_t)(rnd(&d->rng, 3) == 0);
            o.dur = pick_ms(d);
            break;
        case OP_ENTER: case OP_TRY_ENTER:
            o.obj = (int8_t)rnd(&d->rng, M_MUTEXES);
            break;
        case OP_ENTER_TIMEOUT:
            o.obj = (int8_t)rnd(&d->rng, M_MUTEXES);
            o.dur = pick_ms(d);
            break;
        case OP_DELAY:
            pick_dur(d, &o);
            break;
        case OP_SPAWN:
            gen_spawn(d, &o, free_slot(d));
            break;
        case OP_RESUME:
            o.obj = (int8_t)pick_target_in(d, a, STVM_PROCESS_SUSPENDED);
            break;
        case OP_SET_PRIORITY:
            o.obj = (int8_t)pick_target(d, a);
            o.prio = (int8_t)pick_prio(d);
            break;
        case OP_JOIN: {
            o.obj = (int8_t)pick_target(d, a);
            uint32_t r2 = rnd(&d->rng, 100);
            o.dur = r2 < 1 ? -2 : r2 < 41 ? -1 : r2 < 61 ? 0 : 1 + (int64_t)rnd(&d->rng, 50);
            break;
        }
        case OP_SUSPEND: case OP_TERMINATE: case OP_RELEASE:
            o.obj = (int8_t)pick_target(d, a);
            break;
        case OP_INTERRUPT:   /* mostly a waiting process */
            o.obj = (int8_t)pick_target_in(d, a, STVM_PROCESS_WAITING);
            break;
        case OP_QPUT: case OP_QPUT_TIMEOUT:
            o.item = ++d->next_item;
            /* fall through */
        case OP_QTAKE: case OP_QTRY_TAKE: case OP_QTAKE_TIMEOUT: case OP_QFLUSH:
        case OP_QCLOSE: case OP_RENEW_QUEUE:
            o.obj = (int8_t)rnd(&d->rng, M_QUEUES);
            if (o.kind == OP_RENEW_QUEUE && closed_queue(m) >= 0)
                o.obj = (int8_t)closed_queue(m);
            if (o.kind == OP_QTAKE_TIMEOUT || o.kind == OP_QPUT_TIMEOUT)
                o.dur = pick_ms(d);
            break;
        case OP_DWAIT: case OP_DSCHEDULE: case OP_DUNSCHEDULE:
            o.obj = (int8_t)rnd(&d->rng, M_DELAYS);
            break;
        case OP_ENSURE:
            o.flag = rnd(&d->rng, 2) ? OPF_LOOP : 0;
            break;
        case OP_ENSURE_POP:
            o.flag = rnd(&d->rng, 3) ? OPF_RUN : 0;
            break;
        default:
            break;
        }
        if (o.obj >= 0 && m_applicable(m, &o))
            return o;
    }
}

static op gen_host(drv *d)
{
    model *m = &d->m;
    op o = {.host = true};
    int slot = free_slot(d);
    if (slot >= 0 && (live_user(m) == 0 || (live_user(m) < 3 && rnd(&d->rng, 3))) ) {
        gen_spawn(d, &o, slot);
        return o;
    }
    for (;;) {
        uint32_t r = rnd(&d->rng, 113);
        if (d->rp.storm && r >= 90)   /* the storm's host: runs, spawns, signals, resumes, */
            r = 60 + r % 30;          /* terminates, suspends and priority changes only */
        o = (op){.host = true};
        if (r >= 100) {
            o.kind = r < 105 ? OP_QPUT : r < 107 ? OP_QFLUSH : r < 110 ? OP_INTERRUPT
                     : r < 111 ? OP_QCLOSE : OP_RENEW_QUEUE;
            if (o.kind == OP_RENEW_QUEUE && closed_queue(m) >= 0) {
                o.obj = (int8_t)closed_queue(m);
                if (m_applicable(m, &o))
                    return o;
                continue;
            }
            o.obj = (int8_t)(o.kind == OP_INTERRUPT ? pick_target_in(d, -1, STVM_PROCESS_WAITING)
                                                    : (int)rnd(&d->rng, M_QUEUES));
            if (o.kind == OP_QPUT)
                o.item = ++d->next_item;
        } else if (r < 34) {
            o.kind = OP_RUN;
        } else if (r < 46) {
            if (slot < 0)
                continue;
            gen_spawn(d, &o, slot);
        } else if (r < 60) {
            o.kind = OP_SIGNAL;
            o.obj = (int8_t)rnd(&d->rng, M_SEMS);
        } else if (r < 72) {
            o.kind = OP_RESUME;
            o.obj = (int8_t)pick_target_in(d, -1, STVM_PROCESS_SUSPENDED);
        } else if (r < 78) {
            o.kind = OP_TERMINATE;
            o.obj = (int8_t)pick_target(d, -1);
        } else if (r < 84) {
            o.kind = OP_SUSPEND;
            o.obj = (int8_t)pick_target(d, -1);
        } else if (r < 90) {
            o.kind = OP_SET_PRIORITY;
            o.obj = (int8_t)pick_target(d, -1);
            o.prio = (int8_t)pick_prio(d);
        } else if (r < 94) {
            o.kind = OP_RELEASE;
            o.obj = (int8_t)pick_target(d, -1);
        } else if (r < 95) {
            o.kind = OP_NAME;
            o.obj = (int8_t)rnd(&d->rng, M_NAMED);
            o.prio = (int8_t)rnd(&d->rng, M_NAME_TEXTS);
        } else if (r < 96) {
            uint32_t r3 = rnd(&d->rng, 3);
            o.kind = r3 == 0 ? OP_RENEW_SEM : r3 == 1 ? OP_RENEW_MUTEX : OP_RENEW_MON;
            o.obj = (int8_t)(o.kind == OP_RENEW_MON ? 0 : rnd(&d->rng, o.kind == OP_RENEW_SEM ? M_SEMS : M_MUTEXES));
        } else {
            o.kind = OP_MISUSE;
            o.obj = (int8_t)rnd(&d->rng, MISUSES);
        }
        if (o.obj >= 0 && m_applicable(m, &o))
            return o;
    }
}

/* The next operation for the host or a process: generated, or the next one of the
 * replayed script that fits. false: the script is over. */
static bool next_op(drv *d, bool host, op *out)
{
    if (d->draining || d->failed)
        return false;
    if (d->generating) {
        if (d->n_ops >= d->rp.ops)
            return false;
        *out = host ? gen_host(d) : gen_green(d);
        d->ops = grow(d->ops, &d->cap_ops, d->n_ops + 1, sizeof *d->ops);
        d->ops[d->n_ops++] = *out;
        d->cursor = d->n_ops;
        return true;
    }
    while (d->cursor < d->n_ops) {
        op o = d->ops[d->cursor++];
        if (m_applicable(&d->m, &o) && o.host == host) {
            *out = o;
            return true;
        }
    }
    return false;
}

static void check_model(drv *d)
{
    if (d->m.broken)
        fail(d, "model", "the model broke: %s", d->m.broken);
}

/* ---- the green side ------------------------------------------------------------------- */

static green_rec *new_rec(drv *d, int slot, int id, int kind)
{
    green_rec *r = malloc(sizeof *r);
    if (!r)
        abort();
    *r = (green_rec){.d = d, .slot = slot, .id = id, .kind = kind};
    d->recs = grow(d->recs, &d->cap_recs, d->n_recs + 1, sizeof *d->recs);
    d->recs[d->n_recs++] = r;
    return r;
}

static void interp(drv *d, int slot, int frame);
static void cleanup_fn(stvm_vm *vm, void *arg);

static void body(stvm_vm *vm, void *arg)
{
    green_rec *r = arg;
    r->d->h[r->slot] = stvm_vm_active_process(vm);
    interp(r->d, r->slot, -1);
}

static const char *const slot_names[M_SLOTS] = {"s0", "s1", "s2", "s3", "s4", "s5"};

/* What an interrupt runs: it only counts (in the interrupted process's slot). */
static void count_interrupt(stvm_vm *vm, void *arg)
{
    (void)vm;
    (*(int *)arg)++;
}

/* A take's answer: the item it got, as the model answers it. */
static int item_rc(int rc, void *item)
{
    return rc == STVM_OK ? M_ITEM_RC + (int)(intptr_t)item : rc;
}

/* The calls both a process and the host make. */
static int real_shared(drv *d, const op *o)
{
    stvm_vm *vm = d->vm;
    switch (o->kind) {
    case OP_SIGNAL:
        return stvm_semaphore_signal(vm, d->sem[o->obj]);
    case OP_QPUT:
        return stvm_queue_put(vm, d->q[o->obj], (void *)(intptr_t)o->item);
    case OP_QFLUSH:
        return (int)stvm_queue_flush(vm, d->q[o->obj], NULL, NULL);
    case OP_QCLOSE:
        return stvm_queue_close(vm, d->q[o->obj]);
    case OP_RENEW_QUEUE: {
        int rc = stvm_queue_free(vm, d->q[o->obj], NULL, NULL);
        if (rc == STVM_OK &&
            stvm_queue_new(vm, o->obj == 1 ? M_Q1_CAPACITY : 0, &d->q[o->obj]) != STVM_OK)
            abort();
        return rc;
    }
    case OP_INTERRUPT:
        return stvm_process_interrupt(vm, d->h[o->obj], count_interrupt, &d->intr_count[o->obj]);
    case OP_SPAWN: {
        if (o->prio >= STVM_PRIORITY_MIN && o->prio <= STVM_PRIORITY_MAX)
            d->intr_count[o->obj] = 0;   /* a new process in the slot */
        green_rec *r = new_rec(d, o->obj, -1, 0);
        stvm_process **out = (o->flag & OPF_HELD) ? &d->h[o->obj] : NULL;
        if (o->flag & OPF_SUSPENDED)
            return stvm_spawn_suspended(vm, o->prio, slot_names[(int)o->obj], body, r, 0, out);
        return stvm_spawn(vm, o->prio, slot_names[(int)o->obj], body, r, out);
    }
    case OP_SUSPEND:
        return stvm_process_suspend(vm, d->h[o->obj]);
    case OP_RESUME:
        return stvm_process_resume(vm, d->h[o->obj]);
    case OP_TERMINATE:
        return stvm_process_terminate(vm, d->h[o->obj]);
    case OP_SET_PRIORITY:
        return stvm_process_set_priority(vm, d->h[o->obj], o->prio);
    case OP_RELEASE:
        return stvm_process_release(vm, d->h[o->obj]);
    case OP_RENEW_SEM: {
        int rc = stvm_semaphore_free(vm, d->sem[o->obj]);
        if (rc == STVM_OK && stvm_semaphore_new(vm, &d->sem[o->obj]) != STVM_OK)
            abort();
        return rc;
    }
    case OP_RENEW_MON: {
        int rc = stvm_monitor_free(vm, d->mon);
        if (rc == STVM_OK && stvm_monitor_new(vm, &d->mon) != STVM_OK)
            abort();
        return rc;
    }
    case OP_NAME: {
        const char *t = m_name_text(o->prio);
        int k = o->obj;
        if (k < M_NAME_MX)
            return stvm_semaphore_set_name(vm, d->sem[k], t);
        if (k < M_NAME_Q)
            return stvm_mutex_set_name(vm, d->mx[k - M_NAME_MX], t);
        if (k < M_NAME_MON)
            return stvm_queue_set_name(vm, d->q[k - M_NAME_Q], t);
        if (k == M_NAME_MON)
            return stvm_monitor_set_name(vm, d->mon, t);
        return stvm_delay_set_name(vm, d->dly[k - M_NAME_D], t);
    }
    case OP_RENEW_MUTEX: {
        int rc = stvm_mutex_free(vm, d->mx[o->obj]);
        if (rc == STVM_OK && stvm_mutex_new(vm, &d->mx[o->obj]) != STVM_OK)
            abort();
        return rc;
    }
    default:
        return STVM_EINVAL;
    }
}

static int real_green(drv *d, int slot, const op *o, int cleanup_id)
{
    stvm_vm *vm = d->vm;
    stvm_semaphore *s = d->sem[o->obj < M_SEMS && o->obj >= 0 ? o->obj : 0];
    stvm_mutex *x = d->mx[o->obj < M_MUTEXES && o->obj >= 0 ? o->obj : 0];
    bool us = o->flag & OPF_US;
    switch (o->kind) {
    case OP_WAIT: return stvm_semaphore_wait(vm, s);
    case OP_TRY_WAIT: return stvm_semaphore_try_wait(vm, s);
    case OP_WAIT_TIMEOUT:
        return us ? stvm_semaphore_wait_timeout_us(vm, s, o->dur)
                  : stvm_semaphore_wait_timeout_ms(vm, s, o->dur);
    case OP_ENTER: return stvm_mutex_enter(vm, x);
    case OP_EXIT: return stvm_mutex_exit(vm, x);
    case OP_TRY_ENTER: return stvm_mutex_try_enter(vm, x);
    case OP_ENTER_TIMEOUT: return stvm_mutex_enter_timeout_ms(vm, x, o->dur);
    case OP_YIELD: return stvm_yield(vm);
    case OP_CHECKPOINT: return stvm_checkpoint(vm);
    case OP_DELAY: return us ? stvm_delay_wait_us(vm, o->dur) : stvm_delay_wait_ms(vm, o->dur);
    case OP_JOIN: return stvm_process_join(vm, d->h[o->obj], o->dur);
    case OP_ENSURE:
        return stvm_ensure(vm, cleanup_fn, new_rec(d, slot, cleanup_id, (o->flag & OPF_LOOP) ? CL_LOOP : CL_LOG));
    case OP_ENSURE_POP: return stvm_ensure_pop(vm, (o->flag & OPF_RUN) != 0);
    case OP_QTAKE: {
        void *it = NULL;
        int rc = stvm_queue_take(vm, d->q[o->obj], &it);
        return item_rc(rc, it);
    }
    case OP_QTRY_TAKE: {
        void *it = NULL;
        int rc = stvm_queue_try_take(vm, d->q[o->obj], &it);
        return item_rc(rc, it);
    }
    case OP_QTAKE_TIMEOUT: {
        void *it = NULL;
        int rc = stvm_queue_take_timeout_ms(vm, d->q[o->obj], o->dur, &it);
        return item_rc(rc, it);
    }
    case OP_QPUT_TIMEOUT:
        return stvm_queue_put_timeout_ms(vm, d->q[o->obj], (void *)(intptr_t)o->item, o->dur);
    case OP_DWAIT: return stvm_delay_wait(vm, d->dly[o->obj]);
    case OP_DSCHEDULE: return stvm_delay_schedule(vm, d->dly[o->obj]);
    case OP_DUNSCHEDULE: return stvm_delay_unschedule(vm, d->dly[o->obj]);
    case OP_MENTER: return stvm_monitor_enter(vm, d->mon);
    case OP_MTRY_ENTER: return stvm_monitor_try_enter(vm, d->mon);
    case OP_MEXIT: return stvm_monitor_exit(vm, d->mon);
    case OP_MWAIT: return o->obj ? stvm_monitor_wait_on(vm, d->mon, o->obj) : stvm_monitor_wait(vm, d->mon);
    case OP_MWAIT_TIMEOUT:
        return o->obj ? stvm_monitor_wait_on_timeout_ms(vm, d->mon, o->obj, o->dur)
                      : stvm_monitor_wait_timeout_ms(vm, d->mon, o->dur);
    case OP_MSIGNAL: return o->obj ? stvm_monitor_signal_on(vm, d->mon, o->obj) : stvm_monitor_signal(vm, d->mon);
    case OP_MSIGNAL_ALL:
        return o->obj == 1 ? stvm_monitor_signal_all_on(vm, d->mon, 1)
               : o->obj    ? stvm_monitor_signal_really_all(vm, d->mon)
                           : stvm_monitor_signal_all(vm, d->mon);
    case OP_MENTER_TIMEOUT: return stvm_monitor_enter_timeout_ms(vm, d->mon, o->dur);
    default: return real_shared(d, o);
    }
}

/* A process is at a visible point: check it is the one the model expected, answering
 * what the model expected; compare the states; give it its next operation (false:
 * return from the body or cleanup). */
static bool ask(drv *d, int slot, int frame, int rc, op *out)
{
    if (d->failed)
        return false;
    model *m = &d->m;
    mobs e = m->obs;
    long at = d->pending[slot];
    d->pending[slot] = -1;
    if (rc != M_RC_NONE)
        d->cov_rc[d->last_kind[slot][m->p[slot].n_fr]][rc_bucket(rc)]++;
    if (e.kind == OBS_ASK && e.proc == slot && rc != M_RC_NONE)
        note_answer(d, at, rc, e.rc);
    else if (rc == M_RC_NONE && frame >= 0)
        d->pending[slot] = at;   /* a loop cleanup starts: the ensure_pop has not answered */
    if (e.kind != OBS_ASK || e.proc != slot || e.frame != frame || e.rc != rc) {
        char want[160];
        if (e.kind == OBS_RUN)
            snprintf(want, sizeof want, "stvm_run to return %s", stvm_err_name(e.rc));
        else if (e.kind == OBS_CLEANUP)
            snprintf(want, sizeof want, "%s to start cleanup %d", who_name(e.proc), e.id);
        else
            snprintf(want, sizeof want, "%s (in %s%d) to go on, its last call answering %s",
                     who_name(e.proc), e.frame < 0 ? "its body" : "cleanup ", e.frame < 0 ? 0 : e.frame,
                     rc_name(e.rc));
        fail(d, e.kind == OBS_ASK && e.proc == slot && e.frame == frame ? "answer" : "who runs",
             "the model expects %s; the VM ran %s (in %s%d), its last call answering %s", want,
             who_name(slot), frame < 0 ? "its body" : "cleanup ", frame < 0 ? 0 : frame, rc_name(rc));
        return false;
    }
    if (stvm_vm_active_process(d->vm) != d->h[slot]) {
        fail(d, "who runs", "%s asks but stvm_vm_active_process is another process", who_name(slot));
        return false;
    }
    m->p[slot].known = true;
    if (!compare_state(d))
        return false;
    op o;
    if (!next_op(d, false, &o)) {
        d->draining = true;   /* the script is over: every process returns */
        o = (op){.kind = OP_RETURN};
    }
    note_trace(d, &o, slot, frame, !d->draining);
    d->last_kind[slot][m->p[slot].n_fr] = (int8_t)o.kind;
    d->executed++;
    m_green(m, &o);
    m_advance(m);
    check_model(d);
    *out = o;
    return o.kind != OP_RETURN && !d->failed;
}

static void interp(drv *d, int slot, int frame)
{
    int rc = M_RC_NONE;
    op o;
    while (ask(d, slot, frame, rc, &o))
        rc = real_green(d, slot, &o, d->m.next_cleanup_id - 1);
}

static void cleanup_fn(stvm_vm *vm, void *arg)
{
    green_rec *r = arg;
    drv *d = r->d;
    if (!stvm_vm_active_process(vm) || d->failed)
        return;   /* at stvm_vm_free, or after a disagreement: just go */
    mobs e = d->m.obs;
    if (e.kind != OBS_CLEANUP || e.proc != r->slot || e.id != r->id) {
        fail(d, "who runs", "%s starts cleanup %d, the model expects %s", who_name(r->slot), r->id,
             e.kind == OBS_CLEANUP ? "another cleanup"
             : e.kind == OBS_RUN   ? "stvm_run to return"
                                   : "a process to go on");
        return;
    }
    if (stvm_vm_active_process(vm) != d->h[r->slot]) {
        fail(d, "who runs", "cleanup %d of %s runs in another process", r->id, who_name(r->slot));
        return;
    }
    if (!compare_state(d))
        return;
    m_cleanup_started(&d->m);
    m_advance(&d->m);
    check_model(d);
    if (r->kind == CL_LOOP && !d->failed)
        interp(d, r->slot, r->id);
}

/* ---- the host side --------------------------------------------------------------------- */

static int real_host(drv *d, const op *o)
{
    stvm_vm *vm = d->vm;
    if (o->kind != OP_MISUSE)
        return real_shared(d, o);
    switch (o->obj) {
    case 0: return stvm_semaphore_wait(vm, d->sem[0]);
    case 1: return stvm_semaphore_try_wait(vm, d->sem[0]);
    case 2: return stvm_mutex_enter(vm, d->mx[0]);
    case 3: return stvm_mutex_exit(vm, d->mx[0]);
    case 4: return stvm_mutex_try_enter(vm, d->mx[0]);
    case 5: return stvm_yield(vm);
    case 6: return stvm_checkpoint(vm);
    case 7: return stvm_delay_wait_ms(vm, 1);
    case 8: return stvm_ensure(vm, cleanup_fn, new_rec(d, 0, -1, CL_LOG));
    case 9: return stvm_ensure_pop(vm, true);
    case 10: return stvm_semaphore_wait_timeout_ms(vm, d->sem[0], 5);
    case 11: return stvm_mutex_enter_timeout_ms(vm, d->mx[0], 5);
    case 12: return stvm_monitor_enter(vm, d->mon);
    case 13: return stvm_monitor_try_enter(vm, d->mon);
    case 14: return stvm_monitor_exit(vm, d->mon);
    case 15: return stvm_monitor_wait(vm, d->mon);
    default: return stvm_monitor_signal(vm, d->mon);
    }
}

static void host_exec(drv *d, const op *o, bool script)
{
    model *m = &d->m;
    note_trace(d, o, M_HOST, -1, script);
    long at = (long)d->n_trace - 1;
    d->executed++;
    if (o->kind == OP_RUN) {
        m_run_start(m);
        m_advance(m);
        check_model(d);
        if (d->failed)
            return;
        int rc = stvm_run(d->vm);
        d->cov_rc[OP_RUN][rc_bucket(rc)]++;
        if (d->keep_trace)
            note_answer(d, at, rc, m->obs.kind == OBS_RUN ? m->obs.rc : rc);
        if (d->failed)
            return;
        if (m->obs.kind != OBS_RUN) {
            fail(d, "who runs", "stvm_run returned %s; the model expects %s to go on", stvm_err_name(rc),
                 who_name(m->obs.proc));
            return;
        }
        if (rc != m->obs.rc) {
            fail(d, "answer", "stvm_run returned %s, the model says %s", stvm_err_name(rc),
                 stvm_err_name(m->obs.rc));
            return;
        }
        if (compare_state(d))
            compare_blocked(d);
        return;
    }
    int want = m_host(m, o);
    check_model(d);
    int rc = real_host(d, o);
    d->cov_rc[o->kind][rc_bucket(rc)]++;
    if (d->keep_trace)
        note_answer(d, at, rc, want);
    if (rc != want) {
        fail(d, "answer", "the VM answered %s, the model says %s", answer_name(o->kind, rc),
             answer_name(o->kind, want));
        return;
    }
    if (compare_state(d))
        compare_blocked(d);
}

/* The script is over: terminate whatever lives, let it run its cleanups (every process
 * returns at once now), until stvm_run says every process has finished. */
static void teardown(drv *d)
{
    d->draining = true;
    for (int round = 0; round < 4 && !d->failed; round++) {
        for (int i = 0; i < M_SLOTS && !d->failed; i++) {
            if (d->m.p[i].used && d->m.p[i].known && d->m.p[i].alive) {
                op o = {.kind = OP_TERMINATE, .host = true, .obj = (int8_t)i};
                host_exec(d, &o, false);
            }
        }
        if (d->failed)
            return;
        op run = {.kind = OP_RUN, .host = true};
        host_exec(d, &run, false);
        if (!d->failed && d->m.run_result == STVM_OK && live_user(&d->m) == 0)
            return;
    }
    if (!d->failed)
        fail(d, "model", "the teardown does not end");
}

/* ---- one run ----------------------------------------------------------------------------- */

static drv *drv_new(const run_params *rp)
{
    drv *d = calloc(1, sizeof *d);
    if (!d)
        abort();
    d->rp = *rp;
    d->rng = rp->seed;
    for (int i = 0; i < M_SLOTS; i++)
        d->pending[i] = -1;
    return d;
}

static void drv_free(drv *d)
{
    for (size_t i = 0; i < d->n_recs; i++)
        free(d->recs[i]);
    free(d->recs);
    free(d->ops);
    free(d->trace);
    free(d);
}

/* Run the script (generating it if d->generating) against a fresh VM. */
static void drv_run(drv *d)
{
    const run_params *rp = &d->rp;
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.sim_start_us = rp->sim_start_us;
    cfg.ms_clock_start = rp->ms_clock_start;
    cfg.preemption_yields = rp->yields;
    cfg.delay_clock = rp->ms_delays ? STVM_DELAY_CLOCK_MS : STVM_DELAY_CLOCK_US;
    cfg.smallint_bits = rp->smallint_bits;
    cfg.stack_size = 256 * 1024;   /* the driver and the model run on green stacks too */
    int err = stvm_vm_create(&cfg, &d->vm);
    if (err) {
        fail(d, "setup", "stvm_vm_create: %s", stvm_err_name(err));
        return;
    }
    for (int s = 0; s < M_SEMS; s++)
        stvm_semaphore_new(d->vm, &d->sem[s]);
    for (int x = 0; x < M_MUTEXES; x++)
        stvm_mutex_new(d->vm, &d->mx[x]);
    for (int k = 0; k < M_QUEUES; k++)
        stvm_queue_new(d->vm, k == 1 ? M_Q1_CAPACITY : 0, &d->q[k]);
    stvm_delay_new_ms(d->vm, 2, &d->dly[0]);     /* the model's dobj_len */
    stvm_delay_new_us(d->vm, 700, &d->dly[1]);
    stvm_monitor_new(d->vm, &d->mon);
    stvm_stats st;
    stvm_vm_get_stats(d->vm, &st);
    d->objects_base = st.objects_live;
    /* Timestamps stay SmallIntegers (so object counts are exact) unless microsecond
     * timestamps are boxed: on a 31-bit VM, or near the end of the clock. */
    d->check_objects = rp->ms_delays || (rp->smallint_bits == 61 && rp->sim_start_us < ((uint64_t)1 << 59));
    m_init(&d->m, rp->yields, rp->ms_delays, stvm_vm_now_us(d->vm), rp->mutation);
    if (!compare_state(d))
        goto out;
    op o;
    while (!d->failed && next_op(d, true, &o))
        host_exec(d, &o, true);
    if (!d->failed)
        teardown(d);
out:
    stvm_vm_free(d->vm);
    d->vm = NULL;
}

/* ---- reporting and shrinking ----------------------------------------------------------- */

static void print_trace(FILE *f, const drv *d)
{
    for (size_t i = 0; i < d->n_trace; i++) {
        const trace_ent *t = &d->trace[i];
        char o[112], who[32];
        op_text(&t->o, o, sizeof o);
        if (t->who != M_HOST && t->frame >= 0)
            snprintf(who, sizeof who, "%s/cleanup %d", who_name(t->who), t->frame);
        else
            snprintf(who, sizeof who, "%s", who_name(t->who));
        const char *tail = t->script ? "" : "   (teardown)";
        if (t->o.kind == OP_RETURN || (t->o.kind == OP_TERMINATE && t->who != M_HOST && t->o.obj == t->who))
            fprintf(f, "  %4zu  %-14s %s%s\n", i + 1, who, o, tail);
        else if (!t->answered)
            fprintf(f, "  %4zu  %-14s %s -> (no answer yet)%s\n", i + 1, who, o, tail);
        else if (t->rc == t->want)
            fprintf(f, "  %4zu  %-14s %s -> %s%s\n", i + 1, who, o, answer_name(t->o.kind, t->rc), tail);
        else
            fprintf(f, "  %4zu  %-14s %s -> %s, the model expected %s%s\n", i + 1, who, o,
                    answer_name(t->o.kind, t->rc), answer_name(t->o.kind, t->want), tail);
    }
}

/* Replay ops[0..n) from scratch: did it fail in the given category? *used: how much of
 * the script it had read when it failed. */
static bool replay_fails(const run_params *rp, const op *ops, size_t n, const char *category,
                         size_t *used)
{
    drv *d = drv_new(rp);
    d->ops = malloc((n ? n : 1) * sizeof *ops);
    if (!d->ops)
        abort();
    memcpy(d->ops, ops, n * sizeof *ops);
    d->n_ops = d->cap_ops = n;
    drv_run(d);
    bool fails = d->failed && strcmp(d->category, category) == 0;
    *used = d->cursor;
    drv_free(d);
    return fails;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Delta debugging: remove chunks of operations (halving their size) as long as the
 * rest still fails the same way; stop at chunks of one with nothing left to remove, or
 * after max_seconds. Answers the new length (the script is cut down in place). */
static size_t shrink(const run_params *rp, op *ops, size_t n, const char *category,
                     double max_seconds, size_t *replays)
{
    double start = seconds_now();
    op *cand = malloc((n ? n : 1) * sizeof *ops);
    if (!cand)
        abort();
    size_t chunk = n / 2 ? n / 2 : 1;
    for (;;) {
        bool removed = false;
        for (size_t i = 0; i < n && seconds_now() - start < max_seconds;) {
            size_t end = i + chunk < n ? i + chunk : n;
            memcpy(cand, ops, i * sizeof *ops);
            memcpy(cand + i, ops + end, (n - end) * sizeof *ops);
            size_t used = 0;
            (*replays)++;
            if (replay_fails(rp, cand, n - (end - i), category, &used)) {
                n = used < n - (end - i) ? used : n - (end - i);
                memcpy(ops, cand, n * sizeof *ops);
                removed = true;
            } else {
                i += chunk;
            }
        }
        if (seconds_now() - start >= max_seconds || (chunk == 1 && !removed))
            break;
        if (chunk > 1)
            chunk /= 2;
    }
    free(cand);
    return n;
}

/* A failed run: shrink its script and print the seed, the shortest sequence found and
 * the disagreement. */
static void report_failure(FILE *f, const drv *failed, double max_seconds)
{
    char params[256];
    params_text(&failed->rp, params, sizeof params);
    fprintf(f, "\nmodel: DISAGREEMENT with seed 0x%016llx on %s (%s)\n",
            (unsigned long long)failed->rp.seed, stvm_context_backend(), params);
    fprintf(f, "model: %s\n", failed->why);
    size_t n = failed->cursor, replays = 0;
    op *ops = malloc((n ? n : 1) * sizeof *ops);
    if (!ops)
        abort();
    memcpy(ops, failed->ops, n * sizeof *ops);
    double t0 = seconds_now();
    n = shrink(&failed->rp, ops, n, failed->category, max_seconds, &replays);
    drv *d = drv_new(&failed->rp);
    d->ops = ops;
    d->n_ops = d->cap_ops = n;
    d->keep_trace = true;
    drv_run(d);
    fprintf(f, "model: the shortest sequence found (%zu script operations of %zu, %zu replays, %.1f s);"
               " rerun the whole seed with STVM_MODEL_SEED=0x%016llx:\n",
            n, failed->cursor, replays, seconds_now() - t0, (unsigned long long)failed->rp.seed);
    print_trace(f, d);
    fprintf(f, "model: %s\n\n", d->failed ? d->why : "(the shortened script no longer fails)");
    drv_free(d);
}

#endif
