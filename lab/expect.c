/*
 * The expected answer (docs/scenario-format.md, "The expected answer"): each assertion
 * of the file's expect block is checked against the run's trace, the same events the
 * timeline prints. An event pattern matches an event when the process, the kind and
 * every word agree; an event's words are the names of what it is about (the declared
 * object, the other process: the one switched to, woken, waited on or handed over from)
 * and the reason the timeline gives (preempted, blocks, takes, ...).
 */
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define WORDS 4

typedef struct event {
    uint64_t seq, at_us;
    int kind;
    char process[LAB_NAME_MAX];
    char words[WORDS][LAB_NAME_MAX];
    int nwords;
} event;

/* A process's name as a pattern says it: its name without "#id", the VM's own as idle
 * and timing. */
static void process_word(const lab_run *r, uint64_t id, char *out)
{
    char buf[128];
    if (stvm_trace_process_name(r->vm, id, buf, sizeof buf) != STVM_OK)
        buf[0] = 0;
    char *hash = strrchr(buf, '#');
    if (hash)
        *hash = 0;
    if (strcmp(buf, "Idle Process") == 0)
        snprintf(buf, sizeof buf, "idle");
    else if (strcmp(buf, "Delay Scheduling Process") == 0)
        snprintf(buf, sizeof buf, "timing");
    snprintf(out, LAB_NAME_MAX, "%s", buf);
}

static void add_word(event *e, const char *w)
{
    if (e->nwords < WORDS && w && *w)
        snprintf(e->words[e->nwords++], LAB_NAME_MAX, "%s", w);
}

static void add_object(event *e, const lab_scenario *s, const lab_run *r, uint64_t object, bool fd)
{
    if (!r->handles || !r->fds)
        return;   /* no memory was left to keep them: the objects go unnamed */
    for (int i = 0; i < s->nobjects; i++)
        if (fd ? r->fds[i] >= 0 && (uint64_t)r->fds[i] == object
               : r->handles[i] && (uint64_t)(uintptr_t)r->handles[i] == object)
            add_word(e, s->objects[i].name);
}

static void describe(const lab_scenario *s, const lab_run *r, const stvm_trace_event *ev, event *e)
{
    static const char *const why[] = {"preempted", "waited", "yielded", "finished", "idle", "suspended", "host"};
    static const char *const end[] = {"timer", "io", "external", "timeout", "outside"};
    memset(e, 0, sizeof *e);
    e->seq = ev->seq;
    e->at_us = ev->time_us - LAB_SIM_START_US;
    e->kind = ev->kind;
    process_word(r, ev->process, e->process);
    char other[LAB_NAME_MAX];
    switch (ev->kind) {
    case STVM_TRACE_SWITCH:
        process_word(r, ev->object, other);
        add_word(e, other);
        if (ev->reason < sizeof why / sizeof why[0])
            add_word(e, why[ev->reason]);
        break;
    case STVM_TRACE_SEM_WAIT:
        add_object(e, s, r, ev->object, false);
        add_word(e, ev->detail ? "blocks" : "takes");
        break;
    case STVM_TRACE_SEM_SIGNAL:
    case STVM_TRACE_MUTEX_WAIT:
    case STVM_TRACE_MUTEX_EXIT:
    case STVM_TRACE_MUTEX_HANDOFF:
    case STVM_TRACE_MONITOR_SIGNAL:
        add_object(e, s, r, ev->object, false);
        if (ev->detail > 0) {
            process_word(r, (uint64_t)ev->detail, other);
            add_word(e, other);
        } else {
            add_word(e, "none");
        }
        break;
    case STVM_TRACE_SEM_EXCESS:
    case STVM_TRACE_MUTEX_ENTER:
    case STVM_TRACE_EXTERNAL:
    case STVM_TRACE_TIMER_ARMED:
    case STVM_TRACE_TIMER_FIRED:
    case STVM_TRACE_TIMER_DISARMED:
    case STVM_TRACE_QUEUE_PUT:
    case STVM_TRACE_QUEUE_TAKE:
    case STVM_TRACE_QUEUE_CLOSE:
    case STVM_TRACE_MONITOR_WAIT:
        add_object(e, s, r, ev->object, false);
        break;
    case STVM_TRACE_IO_READY:
    case STVM_TRACE_SOCKET_WAIT:
    case STVM_TRACE_SOCKET_DONE:
        add_object(e, s, r, ev->object, true);
        break;
    case STVM_TRACE_IDLE_SLEEP:
        if (ev->reason < sizeof end / sizeof end[0])
            add_word(e, end[ev->reason]);
        break;
    default:
        break;
    }
}

static bool matches(const lab_pattern *p, const event *e)
{
    if (p->kind != e->kind || (strcmp(p->process, "any") != 0 && strcmp(p->process, e->process) != 0))
        return false;
    for (int w = 0; w < p->nwords; w++) {
        bool found = false;
        for (int k = 0; k < e->nwords && !found; k++)
            found = strcmp(p->words[w], e->words[k]) == 0;
        if (!found)
            return false;
    }
    return true;
}

/* The pattern as the file wrote it, for the explanation. */
static void shown(const lab_pattern *p, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s %s", p->process, stvm_trace_kind_name(p->kind));
    for (int w = 0; w < p->nwords && n > 0 && (size_t)n < size; w++)
        n += snprintf(buf + n, size - (size_t)n, " %s", p->words[w]);
}

/* The first event at or after from that matches, or -1; how many match in *count. */
static long first_match(const lab_pattern *p, const event *ev, long nev, long from, long *count)
{
    long first = -1;
    *count = 0;
    for (long i = from; i < nev; i++)
        if (matches(p, &ev[i])) {
            if (first < 0)
                first = i;
            ++*count;
        }
    return first;
}

static void at_text(const event *e, char *buf, size_t size)
{
    snprintf(buf, size, "seq %llu, %llu.%03llu ms", (unsigned long long)e->seq,
             (unsigned long long)(e->at_us / 1000), (unsigned long long)(e->at_us % 1000));
}

/* One judge per assertion op (judges[], below): why the assertion does not hold about
 * the run's nev events ev, in why; why stays "" when it holds. */
typedef void judge_fn(const lab_assert *as, const lab_run *r, const event *ev, long nev, char *why,
                      size_t size);

/* Each event after the one before it (the first time each happens). */
static void judge_order(const lab_assert *as, const lab_run *r, const event *ev, long nev,
                        char *why, size_t size)
{
    char pat[200], at[64], at2[64];
    long count, prev = first_match(&as->patterns[0], ev, nev, 0, &count);
    (void)r;
    shown(&as->patterns[0], pat, sizeof pat);
    if (prev < 0) {
        snprintf(why, size, "'%s' never happens", pat);
        return;
    }
    for (int k = 1; k < as->npatterns && !why[0]; k++) {
        char next[200];
        long c, here = first_match(&as->patterns[k], ev, nev, 0, &c);
        shown(&as->patterns[k], next, sizeof next);
        if (here < 0) {
            snprintf(why, size, "'%s' never happens", next);
        } else if (here < prev) {
            at_text(&ev[here], at, sizeof at);
            at_text(&ev[prev], at2, sizeof at2);
            snprintf(why, size, "'%s' (first at %s) comes before '%s' (first at %s)", next, at, pat,
                     at2);
        }
        prev = here;
        memcpy(pat, next, sizeof pat);
    }
}

/* count N (and never, count 0). */
static void judge_count(const lab_assert *as, const lab_run *r, const event *ev, long nev,
                        char *why, size_t size)
{
    char pat[200], at[64];
    long count, first = first_match(&as->patterns[0], ev, nev, 0, &count);
    (void)r;
    shown(&as->patterns[0], pat, sizeof pat);
    if (count == (as->op == LAB_COUNT ? as->number : 0))
        return;
    if (first >= 0)
        at_text(&ev[first], at, sizeof at);
    snprintf(why, size, "'%s' happens %ld time%s%s%s", pat, count, count == 1 ? "" : "s",
             first >= 0 ? ", first at " : "", first >= 0 ? at : "");
}

/* at T: the first time it happens. */
static void judge_at(const lab_assert *as, const lab_run *r, const event *ev, long nev, char *why,
                     size_t size)
{
    char pat[200], at[64];
    long count, first = first_match(&as->patterns[0], ev, nev, 0, &count);
    (void)r;
    shown(&as->patterns[0], pat, sizeof pat);
    if (first < 0) {
        snprintf(why, size, "'%s' never happens", pat);
    } else if (ev[first].at_us != (uint64_t)as->number) {
        at_text(&ev[first], at, sizeof at);
        snprintf(why, size, "'%s' first happens at %s", pat, at);
    }
}

static void judge_outcome(const lab_assert *as, const lab_run *r, const event *ev, long nev,
                          char *why, size_t size)
{
    static const char *const outcomes[] = {"every process finished",
                                           "a deadlock: no process could ever run again",
                                           "the lab stopped it at its horizon", "a step failed"};
    bool want_deadlock = as->number == 1;
    (void)ev;
    (void)nev;
    if ((r->outcome == LAB_DEADLOCK) != want_deadlock || r->outcome >= LAB_STOPPED)
        snprintf(why, size, "the run ended with %s", outcomes[r->outcome]);
}

static judge_fn *const judges[] = {
    [LAB_ORDER] = judge_order, [LAB_COUNT] = judge_count, [LAB_NEVER] = judge_count,
    [LAB_AT] = judge_at,       [LAB_OUTCOME] = judge_outcome,
};
_Static_assert(sizeof judges / sizeof judges[0] == LAB_OUTCOME + 1, "a judge for every assertion");

int lab_expect_check(const lab_scenario *s, const char *file, const lab_run *r, FILE *out)
{
    int64_t nev = stvm_trace_count(r->vm);
    event *ev = calloc(nev > 0 ? (size_t)nev : 1, sizeof *ev);
    if (!ev) {
        fprintf(out, "%s: out of memory for the trace's events\n", file);
        return 1;
    }
    for (int64_t i = 0; i < nev; i++) {
        stvm_trace_event te;
        if (stvm_trace_get(r->vm, (size_t)i, &te) == STVM_OK)
            describe(s, r, &te, &ev[i]);
    }
    int failed = 0;
    if (stvm_trace_dropped(r->vm) > 0) {
        fprintf(out, "%s: the run recorded more events than the lab keeps (%lld dropped): the "
                     "expected answer cannot be checked on all of them\n",
                file, (long long)stvm_trace_dropped(r->vm));
        failed++;
    }
    for (int a = 0; a < s->nasserts; a++) {
        const lab_assert *as = &s->asserts[a];
        char why[600] = "";
        judges[as->op](as, r, ev, (long)nev, why, sizeof why);
        if (why[0]) {
            fprintf(out, "%s:%d: expected: %s\n  but %s\n", file, as->line, as->source, why);
            failed++;
        }
    }
    free(ev);
    return failed;
}
