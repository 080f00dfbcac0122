/*
 * What the libFuzzer targets share: an input reader, the pool of objects a run works
 * on, the "a failed call changes nothing" snapshot, the drivers that consume the
 * input from the host thread and from green processes, and the foreign VMs whose oops
 * must be refused.
 *
 * Everything is deterministic per input: every VM runs on the simulated clock from a
 * start time taken from the input, stack guards are CANARY or MPROTECT (never AUTO,
 * which depends on the kernel), and nothing sleeps or reads the wall clock.
 *
 * White-box on purpose: the snapshot compares the bytes of the VM struct (vm/vm.h)
 * and of the pool's objects (vm/objects.h) before and after every failed call, so a
 * failure that changes anything at all (a counter, the one-shot timer, a run queue,
 * an object's fields) is caught, not only what the public getters show. Nothing else
 * here relies on the internals.
 *
 * A check that fails prints "stvm-fuzz: CHECK FAILED" with what it expected and aborts,
 * which libFuzzer reports as a crash and saves as crash-<sha1>.
 *
 * Known library defects are checked by FZ_KNOWN_DEFECT(id, ...): by default the case is
 * counted and skipped so that fuzzing can go on; with STVM_FUZZ_STRICT=all (or a list
 * of ids, "2,3") in the environment it fails like any other check (tests/fuzz/README.md
 * lists them).
 */
#ifndef STVM_TESTS_FUZZ_COMMON_H
#define STVM_TESTS_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stvm.h>

#include "../../vm/vm.h" /* white-box: the snapshot (see the comment above) */
#include "../../scheduler/shared_queue.h" /* white-box: a queue's promised items, the snapshot */
#include "../../scheduler/monitor.h"      /* white-box: a monitor's size, for the snapshot */
#include "../../image-stubs/kernel/delay.h"      /* white-box: the snapshot of Delay objects */

/* ---- failing -------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4), noreturn)) static void fz_fail(const char *file, int line,
                                                                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "stvm-fuzz: CHECK FAILED at %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

#define FZ_CHECK(cond, ...)                                  \
    do {                                                     \
        if (!(cond))                                         \
            fz_fail(__FILE__, __LINE__, __VA_ARGS__);        \
    } while (0)

static unsigned fz_strict;       /* STVM_FUZZ_STRICT=all or =1,3: those known defects fail */
static bool fz_trace;            /* STVM_FUZZ_TRACE=1: print every call (for reproducers) */

#define FZ_TRACE(...)                         \
    do {                                      \
        if (fz_trace)                         \
            fprintf(stderr, __VA_ARGS__);     \
    } while (0)

static bool fz_env(const char *name)
{
    const char *s = getenv(name);
    return s && *s && strcmp(s, "0") != 0;
}
static unsigned long fz_known_hits[8];

/* A case that hits a known library defect (README.md, "Defects found"). Returns true
 * when the caller should skip the check the defect breaks. */
#define FZ_KNOWN_DEFECT(id, cond, ...)                                                  \
    ((cond) ? ((fz_strict >> (id)) & 1 ? (fz_fail(__FILE__, __LINE__, "known defect " #id ": " __VA_ARGS__), \
                            true)                                                       \
                         : (fz_known_hits[(id) & 7]++, true))                           \
            : false)

/* At exit (libFuzzer ends with exit()): how often each known defect was met. */
static void fz_report_known(void)
{
    bool any = false;
    for (int i = 0; i < 8; i++)
        any |= fz_known_hits[i] != 0;
    if (!any)
        return;
    fprintf(stderr, "stvm-fuzz: known defects met (counted, skipped):");
    for (int i = 0; i < 8; i++)
        if (fz_known_hits[i])
            fprintf(stderr, " #%d x%lu", i, fz_known_hits[i]);
    fputc('\n', stderr);
}

static void fz_init_common(void)
{
    const char *strict = getenv("STVM_FUZZ_STRICT");
    if (strict && strcmp(strict, "all") == 0)
        fz_strict = ~0u;
    else
        for (const char *p = strict; p && *p; p++)
            if (*p >= '1' && *p <= '7')
                fz_strict |= 1u << (*p - '0');
    fz_trace = fz_env("STVM_FUZZ_TRACE");
    atexit(fz_report_known);
}

/* ---- reading the input ----------------------------------------------------------- */

typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

static inline unsigned fz_u8(fz_in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static inline uint64_t fz_bytes(fz_in *in, int nbytes)
{
    uint64_t v = 0;
    for (int i = 0; i < nbytes; i++)
        v |= (uint64_t)fz_u8(in) << (8 * i);
    return v;
}

static inline uint16_t fz_u16(fz_in *in) { return (uint16_t)fz_bytes(in, 2); }
static inline uint32_t fz_u32(fz_in *in) { return (uint32_t)fz_bytes(in, 4); }
static inline uint64_t fz_u64(fz_in *in) { return fz_bytes(in, 8); }

/* One of the edge values, or (selector past them) a raw value of 1, 2, 4 or 8 bytes,
 * sign-extended when the selector says so. Edges first: a fuzzer finds them by
 * flipping one byte. */
static inline uint64_t fz_pick(fz_in *in, const uint64_t *edges, unsigned nedges)
{
    unsigned s = fz_u8(in);
    if (s < nedges)
        return edges[s];
    static const int widths[] = {1, 2, 4, 8};
    int w = widths[s & 3];
    uint64_t v = fz_bytes(in, w);
    if ((s & 4) && w < 8 && (v >> (8 * w - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * w);   /* sign-extend */
    return v;
}

/* Stacks: the harness's frames are larger under the sanitizers. */
#define FZ_STACK ((size_t)64 * 1024)

/* ---- the simulated clock ------------------------------------------------------------ */

#define FZ_SIM_START 3913056000000000ull   /* 2025-01-01 in us since 1901 */
#define FZ_CLOCK_END ((uint64_t)1 << 62)    /* the VM clock's end (stvm.h, sim_start_us) */

static const uint64_t fz_sim_starts[] = {
    FZ_SIM_START,
    1,
    1000000,
    ((uint64_t)1 << 30) - 5,               /* boxed on 31-bit VMs from the start... */
    ((uint64_t)1 << 60) - 1000,            /* ...and soon on 61-bit ones */
    FZ_CLOCK_END - 5000000,                /* 5 s before the clock ends */
    FZ_CLOCK_END - 1000,
    FZ_CLOCK_END,
};

/* A simulated-clock configuration from one byte and a few more. */
static inline void fz_config_from(fz_in *in, stvm_config *cfg)
{
    unsigned b = fz_u8(in);
    stvm_config_init(cfg);
    cfg->clock = STVM_CLOCK_SIMULATED;
    cfg->smallint_bits = (b & 1) ? 31 : 61;
    cfg->delay_clock = (b & 2) ? STVM_DELAY_CLOCK_MS : STVM_DELAY_CLOCK_US;
    cfg->preemption_yields = !(b & 4);
    cfg->stack_guard_method = (b & 8) ? STVM_GUARD_MPROTECT : STVM_GUARD_CANARY;
    cfg->stack_size = FZ_STACK;   /* sanitized frames need more than the default 16 KiB */
    cfg->sim_start_us = fz_sim_starts[(b >> 4) & 7];
    static const uint32_t ms_starts[] = {0, 1, 0x1FFFFFFFu - 10, 0x1FFFFFFFu};
    unsigned m = fz_u8(in);
    cfg->ms_clock_start = (m & 0x80) ? (fz_u32(in) & 0x1FFFFFFFu) : ms_starts[m & 3];
}

/* ---- oops ------------------------------------------------------------------------- */

static inline stvm_oop fz_tag(int64_t v) { return ((stvm_oop)v << 1) | 1; }
static inline int64_t fz_untag(stvm_oop o) { return (int64_t)(intptr_t)o >> 1; }

/* Readable memory that is no object: a pointer to it is a stray oop. */
static _Alignas(64) unsigned char fz_stray[256];

/* Two VMs made once, whose objects must be refused by every VM of a run. Checked
 * unchanged after every input. */
typedef struct fz_foreign {
    stvm_vm *vm;
    stvm_semaphore *sem;
    stvm_mutex *mutex;
    stvm_process *proc;
    stvm_oop box;
    stvm_queue *queue;      /* bounded (2), one item in it */
    stvm_delay *delay;      /* 10 ms, never scheduled */
    stvm_monitor *monitor;  /* free, nobody waits */
    stvm_stats stats;
} fz_foreign;
static fz_foreign fz_foreigners[2];

static void fz_nothing(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

static void fz_foreign_init(void)
{
    for (int i = 0; i < 2; i++) {
        fz_foreign *f = &fz_foreigners[i];
        stvm_config cfg;
        stvm_config_init(&cfg);
        cfg.clock = STVM_CLOCK_SIMULATED;
        cfg.sim_start_us = FZ_SIM_START;
        cfg.smallint_bits = i ? 31 : 61;
        cfg.stack_guard_method = STVM_GUARD_CANARY;
        if (stvm_vm_create(&cfg, &f->vm) || stvm_semaphore_new(f->vm, &f->sem) ||
            stvm_mutex_new(f->vm, &f->mutex) ||
            stvm_spawn_suspended(f->vm, 40, "foreign", fz_nothing, NULL, 0, &f->proc) ||
            stvm_int_from_u64(f->vm, UINT64_MAX - 7, &f->box) ||
            stvm_queue_new(f->vm, 2, &f->queue) || stvm_queue_put(f->vm, f->queue, fz_stray) ||
            stvm_delay_new_ms(f->vm, 10, &f->delay) || stvm_monitor_new(f->vm, &f->monitor)) {
            fprintf(stderr, "stvm-fuzz: cannot make the foreign VMs\n");
            abort();
        }
        stvm_semaphore_signal(f->vm, f->sem);
        stvm_vm_get_stats(f->vm, &f->stats);
    }
}

static void fz_foreign_check(void)
{
    for (int i = 0; i < 2; i++) {
        fz_foreign *f = &fz_foreigners[i];
        stvm_stats s;
        stvm_vm_get_stats(f->vm, &s);
        FZ_CHECK(memcmp(&s, &f->stats, sizeof s) == 0, "a foreign VM's counters changed");
        FZ_CHECK(stvm_semaphore_excess(f->vm, f->sem) == 1, "a foreign semaphore changed");
        FZ_CHECK(stvm_mutex_owner(f->vm, f->mutex) == NULL, "a foreign mutex changed");
        FZ_CHECK(stvm_queue_size(f->vm, f->queue) == 1, "a foreign queue changed");
        FZ_CHECK(stvm_monitor_owner(f->vm, f->monitor) == NULL &&
                     stvm_monitor_depth(f->vm, f->monitor) == 0,
                 "a foreign monitor changed");
        FZ_CHECK(stvm_delay_being_waited_on(f->vm, f->delay) == 0 &&
                     stvm_delay_is_expired(f->vm, f->delay) == 0,
                 "a foreign Delay changed");
        stvm_process_info info;
        FZ_CHECK(stvm_process_get_info(f->vm, f->proc, &info) == STVM_OK &&
                     info.state == STVM_PROCESS_SUSPENDED,
                 "a foreign process changed");
        FZ_CHECK(stvm_vm_check_invariants(f->vm, NULL, 0) == STVM_OK, "a foreign VM broke");
    }
}

/* ---- the pool ----------------------------------------------------------------------- */

enum {
    FZ_MAXSEM = 6,
    FZ_MAXMUT = 4,
    FZ_MAXPROC = 16,   /* held handles */
    FZ_MAXBOX = 48,    /* boxes this run made and owns */
    FZ_MAXOOP = 160,   /* the oop pool the primitives draw from */
    FZ_MAXW = 24,      /* worker records (one per spawned process) */
    FZ_MAXQ = 3,       /* shared queues */
    FZ_QITEMS = 48,    /* items a queue's model holds */
    FZ_MAXDLY = 4,     /* Delay objects */
    FZ_MAXMON = 3,     /* monitors */
    FZ_REGIONS = 96,
    FZ_REGION_BYTES = 16384,
};

/* A shared queue of the pool and the model of what it holds. Items are the run's own
 * numbers (never dereferenced), NULL among them. The model's order is the queue's:
 * items put from the VM's thread, then (the last npend) those put by
 * stvm_queue_put_external. It is exact while no driver call on the queue is in flight
 * (inflight: a call that may switch, entered and not yet returned): such a call may
 * have taken or put an item it has not reported yet. Then only membership is checked
 * (an item taken must have been put and not taken since). */
typedef struct fz_queue {
    stvm_queue *q;          /* NULL: freed */
    uint64_t serial;        /* which queue the slot holds (a new one may reuse q's address) */
    size_t capacity;
    bool external;
    bool closed;            /* stvm_queue_close or _close_external answered OK: puts refused */
    bool ended;             /* the VM's half of the close is done (a thread's close: when
                               the VM looks; not known here, so only stvm_queue_close) */
    int inflight;
    bool lossy;             /* a process died inside a call on it: it may hold an item */
    bool unordered;         /* two puts may have put in another order than the model's */
    uint64_t puts;          /* puts returned, to see whether one overtook another */
    int n, npend;
    uintptr_t items[FZ_QITEMS];
    int ntent;              /* puts in flight: their items may be taken before they return */
    struct {
        uintptr_t item;
        bool taken;
    } tent[FZ_MAXW];
} fz_queue;

/* A Delay object of the pool, as it was made. */
typedef struct fz_dly {
    stvm_delay *d;          /* NULL: freed */
    int64_t dur;
    bool ms;
    bool given_sem;         /* stvm_delay_timeout_semaphore_ms: the pool's semaphore */
    bool sem_in_pool;       /* its semaphore is in the pool: anyone may wait on it */
    int users;              /* driver calls inside wait/schedule on it, not yet returned */
} fz_dly;

typedef struct fz_ctx fz_ctx;

/* What the snapshot remembers. */
typedef struct fz_snap {
    unsigned char vm[sizeof(struct stvm_vm)];
    unsigned char obj[FZ_REGION_BYTES];   /* the pool's objects, region after region */
    size_t obj_used;
    int nregions;
    const void *region_at[FZ_REGIONS];
    size_t region_size[FZ_REGIONS];
    const char *region_name[FZ_REGIONS];
    char blocked[1024];
    int blocked_len;
} fz_snap;

/* One record per process the run spawned: what it does and what it saw. */
typedef struct fz_worker {
    fz_ctx *c;
    int index;
    int kind;
    int a, b;
    int64_t d;
    stvm_process *held;     /* its handle if the run holds it */
    stvm_process *self;     /* stvm_vm_active_process inside it */
    bool started, finished;
    /* fuzz_api's model of its value of the inheritable process-local variable: known
     * once the process itself set or cleared it (a spawned one may have inherited) */
    bool lknown;
    void *lval;
    fz_snap before;         /* per process: another one may run while a call blocks */
} fz_worker;

struct fz_ctx {
    stvm_vm *vm;
    stvm_config cfg;
    fz_in in;
    int ops_left, runs_left;
    stvm_semaphore *sem[FZ_MAXSEM];     /* NULL: freed */
    int nsem;
    stvm_mutex *mut[FZ_MAXMUT];
    int nmut;
    fz_queue queue[FZ_MAXQ];
    int nqueue;
    uint64_t queues_made;
    fz_dly dly[FZ_MAXDLY];
    int ndly;
    stvm_monitor *mon[FZ_MAXMON];       /* NULL: freed */
    int nmon;
    uintptr_t item_seq;
    stvm_process *proc[FZ_MAXPROC];     /* held handles; NULL once given back */
    int nproc;
    struct {
        stvm_oop oop;
        __int128 value;
    } box[FZ_MAXBOX];
    int nbox;
    stvm_oop oop[FZ_MAXOOP];
    int noop;
    fz_worker w[FZ_MAXW];
    int nw;
    /* fuzz_api: process-local variables, [0] inheritable, [1] dynamic (NULL: freed) */
    stvm_local *lv[2];
    int lv_inside[2];       /* durings on it in progress (stays up if one was cut short) */
    uint32_t lv_serial;
    fz_snap host_before, after;
    uint64_t calls, failed_calls;
};

static fz_ctx fz_c;   /* one run at a time; reset per input */

static inline void fz_add_oop(fz_ctx *c, stvm_oop o)
{
    if (c->noop < FZ_MAXOOP)
        c->oop[c->noop++] = o;
}

static inline void fz_add_box(fz_ctx *c, stvm_oop o, __int128 v)
{
    if (stvm_oop_is_smallint(o))
        return;
    if (c->nbox < FZ_MAXBOX) {
        c->box[c->nbox].oop = o;
        c->box[c->nbox].value = v;
        c->nbox++;
    }
    fz_add_oop(c, o);
}

static inline int fz_box_index(const fz_ctx *c, stvm_oop o)
{
    for (int i = 0; i < c->nbox; i++)
        if (c->box[i].oop == o)
            return i;
    return -1;
}

static inline void fz_add_proc(fz_ctx *c, stvm_process *h)
{
    if (c->nproc < FZ_MAXPROC)
        c->proc[c->nproc++] = h;
    fz_add_oop(c, stvm_process_oop(h));
}

static inline void fz_add_sem(fz_ctx *c, stvm_semaphore *s)
{
    if (c->nsem < FZ_MAXSEM)
        c->sem[c->nsem++] = s;
    fz_add_oop(c, stvm_semaphore_oop(s));
}

static inline void fz_add_mut(fz_ctx *c, stvm_mutex *m)
{
    if (c->nmut < FZ_MAXMUT)
        c->mut[c->nmut++] = m;
    fz_add_oop(c, stvm_mutex_oop(m));
}

/* The value of an integer oop this VM accepts: SmallIntegers in range, the run's
 * boxes. Anything else: false (the caller asks the library about unknown words). */
static inline bool fz_si_in_range(const fz_ctx *c, stvm_oop o)
{
    if (!(o & 1))
        return false;
    int64_t v = fz_untag(o);
    return v >= stvm_smallint_min(c->vm) && v <= stvm_smallint_max(c->vm);
}

/* The exact value of an integer oop of this VM, through the public API only (values
 * below INT64_MIN are read as the magnitude of 0 - o, made and released here). */
static inline bool fz_int_value(const fz_ctx *c, stvm_oop o, __int128 *out)
{
    int64_t i;
    uint64_t u;
    if (stvm_int_to_i64(c->vm, o, &i) == STVM_OK) {
        *out = i;
        return true;
    }
    if (stvm_int_to_u64(c->vm, o, &u) == STVM_OK) {
        *out = u;
        return true;
    }
    stvm_oop neg;
    if (stvm_int_sub(c->vm, fz_tag(0), o, &neg) != STVM_OK)
        return false;
    bool ok = stvm_int_to_u64(c->vm, neg, &u) == STVM_OK;
    stvm_oop_release(c->vm, neg);
    *out = -(__int128)u;
    return ok;
}

/* For messages: an __int128 as text. */
static inline const char *fz_i128(__int128 v, char buf[48])
{
    char tmp[48];
    int n = 0;
    unsigned __int128 m = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    do {
        tmp[n++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    int k = 0;
    if (v < 0)
        buf[k++] = '-';
    while (n)
        buf[k++] = tmp[--n];
    buf[k] = 0;
    return buf;
}

/* The SmallInteger oop made for v, a box, or nothing: the normalised form. */
static inline bool fz_fits(const fz_ctx *c, __int128 v)
{
    return v >= stvm_smallint_min(c->vm) && v <= stvm_smallint_max(c->vm);
}

static inline bool fz_is_foreign(stvm_oop o)
{
    for (int i = 0; i < 2; i++) {
        const fz_foreign *f = &fz_foreigners[i];
        if (o == stvm_semaphore_oop(f->sem) || o == stvm_mutex_oop(f->mutex) ||
            o == stvm_process_oop(f->proc) || o == f->box)
            return true;
    }
    return false;
}

/* ---- the snapshot ------------------------------------------------------------------- */

static void fz_region(fz_snap *s, const void *at, size_t size, const char *name)
{
    if (s->nregions >= FZ_REGIONS || s->obj_used + size > FZ_REGION_BYTES)
        return;
    s->region_at[s->nregions] = at;
    s->region_size[s->nregions] = size;
    s->region_name[s->nregions] = name;
    s->nregions++;
    memcpy(s->obj + s->obj_used, at, size);
    s->obj_used += size;
}

static void fz_snap_take(fz_ctx *c, fz_snap *s)
{
    memcpy(s->vm, c->vm, sizeof(struct stvm_vm));
    /* The validation cache remembers what a call looked at, failed or not: a cache,
     * not a change. */
    memset(s->vm + offsetof(struct stvm_vm, mem.recent), 0, sizeof c->vm->mem.recent);
    s->obj_used = 0;
    s->nregions = 0;
    for (int i = 0; i < c->nsem; i++)
        if (c->sem[i])
            fz_region(s, c->sem[i], sizeof(struct stvm_semaphore), "a semaphore");
    for (int i = 0; i < c->nmut; i++)
        if (c->mut[i])
            fz_region(s, c->mut[i], sizeof(struct stvm_mutex), "a mutex");
    for (int i = 0; i < c->nproc; i++) {
        const struct stvm_process *h = c->proc[i];
        if (!h)
            continue;
        fz_region(s, h, sizeof *h, "a held process handle");
        if (h->core)
            fz_region(s, h->core, sizeof(struct stvm_proc), "a process's running state");
    }
    for (int i = 0; i < c->nbox; i++)
        fz_region(s, (const void *)c->box[i].oop, sizeof(stvm_large_int), "a box");
    /* A queue but its lock and condition variable: a stvm_queue_open_external that
     * fails (EFULL) made and destroyed them, and glibc marks a destroyed mutex; that
     * storage is unused while the queue is not open for other threads. */
    for (int i = 0; i < c->nqueue; i++)
        if (c->queue[i].q) {
            const char *q = (const char *)c->queue[i].q;
            fz_region(s, q, offsetof(struct stvm_queue, lock), "a shared queue");
            fz_region(s, q + offsetof(struct stvm_queue, pending),
                      sizeof(struct stvm_queue) - offsetof(struct stvm_queue, pending),
                      "a shared queue's other-thread side");
        }
    for (int i = 0; i < c->ndly; i++)
        if (c->dly[i].d)
            fz_region(s, c->dly[i].d, sizeof(struct stvm_delay), "a Delay object");
    for (int i = 0; i < c->nmon; i++)
        if (c->mon[i])
            fz_region(s, c->mon[i], sizeof(struct stvm_monitor), "a monitor");
    s->blocked_len = stvm_vm_blocked_report(c->vm, s->blocked, sizeof s->blocked);
}

/* The field of struct stvm_vm at byte offset off, for the report. */
static const char *fz_vm_field(size_t off)
{
#define F(name) {offsetof(struct stvm_vm, name), sizeof(((struct stvm_vm *)0)->name), #name}
    static const struct {
        size_t off, size;
        const char *name;
    } fields[] = {
        F(cfg), F(si_min), F(si_max), F(active), F(runq), F(ready_bits), F(idle), F(all),
        F(next_pid), F(live_user), F(live_total), F(zombie), F(host_sp), F(host_uctx),
        F(host_stack_bottom), F(host_stack_size), F(host_timer_slack), F(running),
        F(run_result), F(stacks), F(timer), F(clock), F(ext), F(mem), F(stats), F(delay), F(queues),
    };
#undef F
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (off >= fields[i].off && off < fields[i].off + fields[i].size)
            return fields[i].name;
    return "(padding)";
}

static const char *fz_stats_field(size_t off)
{
#define F(name) {offsetof(stvm_stats, name), #name}
    static const struct {
        size_t off;
        const char *name;
    } fields[] = {
        F(context_switches), F(semaphore_signals), F(semaphore_waits), F(delays_scheduled),
        F(delays_expired), F(delays_unscheduled), F(timing_loop_passes), F(clock_reads),
        F(timer_fires), F(boxed_allocated), F(large_int_ops), F(external_signals),
        F(idle_sleeps), F(objects_allocated), F(bytes_allocated), F(objects_live),
        F(bytes_live), F(processes_live),
    };
#undef F
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (off >= fields[i].off && off < fields[i].off + 8)
            return fields[i].name;
    return "?";
}

/* Fail unless the VM is exactly as in `before` (what: the call, for the report). */
static void fz_snap_same(fz_ctx *c, const fz_snap *before, const char *what)
{
    fz_snap *after = &c->after;
    fz_snap_take(c, after);
    /* memcmp first: a byte loop here, instrumented for coverage, was most of the run */
    for (size_t i = 0; memcmp(before->vm, after->vm, sizeof(struct stvm_vm)) != 0 &&
                       i < sizeof(struct stvm_vm); i++) {
        if (before->vm[i] == after->vm[i])
            continue;
        const char *field = fz_vm_field(i);
        if (strcmp(field, "stats") == 0)
            field = fz_stats_field(i - offsetof(struct stvm_vm, stats));
        fz_fail(__FILE__, __LINE__, "%s failed but changed the VM (byte %zu, field %s: %02x -> %02x)",
                what, i, field, before->vm[i], after->vm[i]);
    }
    FZ_CHECK(before->nregions == after->nregions, "%s failed but the pool changed", what);
    size_t at = 0;
    for (int r = 0; r < before->nregions; r++) {
        if (memcmp(before->obj + at, after->obj + at, before->region_size[r]) != 0) {
            size_t k = 0;
            while (before->obj[at + k] == after->obj[at + k])
                k++;
            fz_fail(__FILE__, __LINE__, "%s failed but changed %s at %p (byte %zu)", what,
                    before->region_name[r], before->region_at[r], k);
        }
        at += before->region_size[r];
    }
    FZ_CHECK(before->blocked_len == after->blocked_len &&
                 strcmp(before->blocked, after->blocked) == 0,
             "%s failed but the blocked report changed:\n%s---\n%s", what, before->blocked,
             after->blocked);
}

static void fz_invariants(fz_ctx *c, const char *after_what)
{
    char why[200];
    int rc = stvm_vm_check_invariants(c->vm, why, sizeof why);
    FZ_CHECK(rc == STVM_OK, "invariants broken after %s: %s", after_what, why);
    uint64_t now = stvm_vm_now_us(c->vm);
    FZ_CHECK(now <= FZ_CLOCK_END, "the VM clock (%llu) passed its end 2^62 after %s",
             (unsigned long long)now, after_what);
}

/* ---- processes ---------------------------------------------------------------------- */

/* The worker record of the running process, or NULL on the host thread. */
static inline fz_worker *fz_me(fz_ctx *c)
{
    stvm_process *a = stvm_vm_active_process(c->vm);
    if (!a)
        return NULL;
    for (int i = 0; i < c->nw; i++)
        if (c->w[i].self == a && c->w[i].started && !c->w[i].finished)
            return &c->w[i];
    return NULL;
}

static inline fz_snap *fz_before_buf(fz_ctx *c)
{
    fz_worker *me = fz_me(c);
    return me ? &me->before : &c->host_before;
}

static const char *const fz_names[] = {
    "",
    "driver",
    "w\xff\xfe\x80 not utf-8 \xc3(",
    "%s%s%n%p percent signs",
    "a name long enough to live outside the inline buffer of the handle's stack area, "
    "which holds 128 bytes: so this one is malloc'd when nobody holds the handle, and "
    "it goes on for a while longer to be sure of that..................................",
};

#endif
