/*
 * Running a scenario (lab.h): a fresh VM on the simulated clock, the file's objects made
 * by the lab before the run (making one records nothing in the trace), the processes
 * that start spawned from the embedding thread in the file's order, and each process's
 * script played step by step with the public API, one call per step. A step whose call
 * fails stops the run (stvm_stop) with the step's file:line:column; a wait that ends
 * without what it waited for (a timeout, a suspension) is an outcome the timeline shows,
 * and the script goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lab.h"
#include "pharo_monitor.h"

#define WIRE_FIRST_FD 100   /* a wire's client end: this descriptor or the next free one,
                               so that the timeline does not depend on what descriptors
                               the caller left open */

/* A wire is a socketpair: bytes written are readable at once, so a run does not depend
 * on how a TCP stack schedules its work. The client end is the processes'; the peer
 * (a server, outside the VM) answers on the other. */
static const char wire_request[] = "GET /static HTTP/1.1\r\nHost: localhost\r\n\r\n";
static const char wire_answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

typedef struct wire {
    int client, peer;
} wire;

typedef struct player player;

/* What a process (every instance of one declaration) runs with. */
typedef struct actor {
    player *pl;
    int index;
} actor;

/* An outside event's argument: the player and what to do. */
typedef struct happening {
    player *pl;
    lab_outside_action action;
    int target;
    uint64_t at_us;
    bool done;
} happening;

struct player {
    const lab_scenario *sc;
    const lab_limits *lim;
    stvm_vm *vm;
    void **objects;             /* per object: its handle (wire *) */
    int *ext_index;             /* per object: an external semaphore's slot */
    wire *wires;
    actor *actors;
    stvm_process **latest;      /* per process: the last instance spawned */
    stvm_process **held;        /* every instance, held until the VM goes, for the report
                                   (NULL once joined: the join gave its handle back) */
    bool *joined;               /* per process: its last instance was joined */
    int nheld;
    happening **happenings;     /* made during the run, freed after it */
    int nhappenings;
    long steps;
    int spawns;
    bool failed;
    char *error;
    size_t error_size;
};

/* Stop the run at a step: the message names where in the file, when, and who. */
static void fail(player *pl, const lab_step *s, const char *what, int err)
{
    if (pl->failed)
        return;
    pl->failed = true;
    char who[64] = "the lab";
    stvm_process *me = stvm_vm_active_process(pl->vm);
    stvm_process_info info;
    if (me && stvm_process_get_info(pl->vm, me, &info) == STVM_OK)
        snprintf(who, sizeof who, "%s", info.name);
    uint64_t at = stvm_vm_now_us(pl->vm) - LAB_SIM_START_US;
    snprintf(pl->error, pl->error_size, "%s:%d:%d: at %llu.%03llu ms, %s: %s%s%s", pl->sc->file,
             s ? s->line : 0, s ? s->col : 0, (unsigned long long)(at / 1000),
             (unsigned long long)(at % 1000), who, what, err ? ": " : "", err ? stvm_strerror(err) : "");
    stvm_stop(pl->vm);
}

/* A wait that ended without what it waited for, or a try that found nothing, goes on;
 * anything else stops the run. */
static bool waited(player *pl, const lab_step *s, const char *what, int rc)
{
    if (rc >= 0 || rc == STVM_ETIMEDOUT || rc == STVM_EINTR || rc == STVM_ESTATE ||
        rc == STVM_EAGAIN)
        return true;
    fail(pl, s, what, rc);
    return false;
}

static bool called(player *pl, const lab_step *s, const char *what, int rc)
{
    if (rc >= 0)
        return true;
    fail(pl, s, what, rc);
    return false;
}

/* The peer's answer: it takes what was sent, and writes the answer. It runs inside the
 * scheduler, so a failure is only recorded (the run reports it at its end). */
static void peer_answers(stvm_vm *vm, void *arg)
{
    happening *h = arg;
    player *pl = h->pl;
    h->done = true;
    if (h->action == LAB_EXT_SIGNAL) {
        stvm_external_signal(vm, pl->ext_index[h->target]);
        return;
    }
    wire *w = pl->objects[h->target];
    char buf[512];
    while (read(w->peer, buf, sizeof buf) > 0)
        ;
    if (write(w->peer, wire_answer, sizeof wire_answer - 1) != (ssize_t)(sizeof wire_answer - 1) &&
        !pl->failed) {
        pl->failed = true;
        snprintf(pl->error, pl->error_size, "%s: the wire %s is full: its peer cannot answer",
                 pl->sc->file, pl->sc->objects[h->target].name);
    }
}

static happening *new_happening(player *pl, lab_outside_action action, int target, uint64_t at_us)
{
    happening **grown = realloc(pl->happenings, sizeof *grown * (size_t)(pl->nhappenings + 1));
    if (!grown)
        return NULL;
    pl->happenings = grown;
    happening *h = malloc(sizeof *h);
    if (h)
        *h = (happening){pl, action, target, at_us, false};
    return grown[pl->nhappenings++] = h;
}

/* The horizon: with external semaphores, a wait that nobody ends would last for ever. */
static void horizon(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_stop(vm);
}

static void process_main(stvm_vm *vm, void *arg);
static void starter_main(stvm_vm *vm, void *arg);

static bool spawn(player *pl, const lab_step *s, int index)
{
    const lab_process *pr = &pl->sc->processes[index];
    if (s && pl->spawns++ >= pl->lim->max_spawns) {
        fail(pl, s, "spawn", 0);
        snprintf(pl->error + strlen(pl->error), pl->error_size - strlen(pl->error),
                 " (more than %d processes spawned)", pl->lim->max_spawns);
        return false;
    }
    stvm_process *p;
    int rc = stvm_spawn(pl->vm, pr->priority, pr->name, s ? process_main : starter_main,
                        &pl->actors[index], &p);
    if (rc < 0)
        return called(pl, s, "spawn", rc);
    pl->latest[index] = pl->held[pl->nheld++] = p;   /* the last instance is the one a name means */
    pl->joined[index] = false;
    return true;
}

static stvm_process *process_of(player *pl, const lab_step *s)
{
    if (s->target == LAB_SELF)
        return stvm_vm_active_process(pl->vm);
    stvm_process *p = pl->latest[s->target];
    if (!p) {
        char what[80];
        snprintf(what, sizeof what, "%s %s", pl->sc->processes[s->target].name,
                 pl->joined[s->target] ? "was joined (a join gives its handle back)"
                                       : "was never spawned");
        fail(pl, s, what, 0);
    }
    return p;
}

/* Zodiac's read: a first read that does not wait and, when it finds nothing,
 * Socket>>waitForDataFor: with the step's timeout, then the read again. */
static bool read_wire(player *pl, const lab_step *s, wire *w)
{
    char buf[sizeof wire_answer];
    ssize_t n = recv(w->client, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EAGAIN) {
        /* While a descriptor is watched the VM sleeps in the OS, in real time, until the
         * next timer deadline when no outside event comes first (a real peer could
         * answer: scheduler/relinquish.c). So a read waits only for data on its way,
         * due within a second; one that could only time out would last as long in real
         * time as in simulated time. */
        uint64_t now = stvm_vm_now_us(pl->vm), next = UINT64_MAX;
        for (int i = 0; i < pl->nhappenings; i++) {
            const happening *h = pl->happenings[i];
            if (h && !h->done && h->action == LAB_DATA && pl->objects[h->target] == w && h->at_us < next)
                next = h->at_us;
        }
        if (next == UINT64_MAX || next - now > 1000000) {
            fail(pl, s, "read: no data is due on the wire within 1 s (an outside data event): "
                        "the wait could only time out, as slowly in real time as in simulated time", 0);
            return false;
        }
        if (!waited(pl, s, "read", stvm_fd_wait(pl->vm, w->client, STVM_IO_READ, s->timeout_ms)))
            return false;
        (void)recv(w->client, buf, sizeof buf, MSG_DONTWAIT);
    }
    return true;
}

static bool play(player *pl, const lab_process *pr, int from, int to);

/* stvm_process_join: once it returns STVM_OK the handle is given back, so the lab
 * forgets it (a later step naming the process fails, saying why). */
static bool join(player *pl, const lab_step *s, stvm_process *p)
{
    int rc = stvm_process_join(pl->vm, p, s->timeout_ms);
    if (rc == STVM_OK) {
        for (int i = 0; i < pl->nheld; i++)
            if (pl->held[i] == p)
                pl->held[i] = NULL;
        pl->latest[s->target] = NULL;
        pl->joined[s->target] = true;
    }
    return waited(pl, s, "join", rc);
}

/* An ensure block's steps: `[] ensure: [STEPS]`, a cleanup registered and run at once
 * by hand (stvm_ensure, stvm_ensure_pop), so that a terminate while it runs finds a
 * cleanup in progress. */
typedef struct cleanup_steps {
    player *pl;
    const lab_process *pr;
    int from, to;
    bool ok;
} cleanup_steps;

static void run_cleanup_steps(stvm_vm *vm, void *arg)
{
    (void)vm;
    cleanup_steps *c = arg;
    c->ok = play(c->pl, c->pr, c->from, c->to);
}

/* A suspend through primitive 88, 568 or 578 (pharo #10669): a failure of the
 * primitive stops the run with Pharo's failure code. */
static bool suspend_primitive(player *pl, const lab_step *s, stvm_process *p)
{
    stvm_oop res;
    int code = 0;
    int rc = stvm_primitive_call(pl->vm, (int)s->amount, stvm_process_oop(p), NULL, 0, &res, &code);
    if (rc == STVM_EPRIM) {
        char what[96];
        snprintf(what, sizeof what, "suspend (primitive %lld failed: %s)", (long long)s->amount,
                 stvm_primitive_error_name(code));
        fail(pl, s, what, 0);
        return false;
    }
    return called(pl, s, "suspend", rc);
}

/* A step about to be played: the step, and what it acts on, worked out once. */
typedef struct act {
    player *pl;
    const lab_process *pr;
    const lab_step *s;
    stvm_vm *vm;
    void *o;                    /* a step on an object (wait .. flush): its handle */
    bool monitor, pharo;        /* that object is a monitor; Pharo's, transcribed */
    bool timed, on;             /* the step has a timeout; names a condition queue */
} act;

/* One player a step kind (steps[], below): the call the step makes, judged. */
static bool play_wait(const act *a)
{
    stvm_vm *vm = a->vm;
    const lab_step *s = a->s;
    if (a->on)
        return waited(a->pl, s, "wait", a->timed ? stvm_monitor_wait_on_timeout_ms(vm, a->o, s->queue,
                                                                                   s->timeout_ms)
                                                 : stvm_monitor_wait_on(vm, a->o, s->queue));
    if (a->monitor)
        return waited(a->pl, s, "wait", a->timed ? stvm_monitor_wait_timeout_ms(vm, a->o, s->timeout_ms)
                                                 : stvm_monitor_wait(vm, a->o));
    return waited(a->pl, s, "wait", a->timed ? stvm_semaphore_wait_timeout_ms(vm, a->o, s->timeout_ms)
                                             : stvm_semaphore_wait(vm, a->o));
}

static bool play_signal(const act *a)
{
    if (a->on)
        return called(a->pl, a->s, "signal", stvm_monitor_signal_on(a->vm, a->o, a->s->queue));
    return called(a->pl, a->s, "signal", a->monitor ? stvm_monitor_signal(a->vm, a->o)
                                                    : stvm_semaphore_signal(a->vm, a->o));
}

static bool play_signal_all(const act *a)
{
    return called(a->pl, a->s, "signal-all", a->on ? stvm_monitor_signal_all_on(a->vm, a->o, a->s->queue)
                                                   : stvm_monitor_signal_all(a->vm, a->o));
}

static bool play_enter(const act *a)
{
    stvm_vm *vm = a->vm;
    int64_t ms = a->s->timeout_ms;
    if (a->pharo)   /* the start of its critical: (parse.c allows only enter and exit) */
        return called(a->pl, a->s, "enter", pharo_monitor_critical_begin(vm, a->o));
    if (a->monitor)
        return waited(a->pl, a->s, "enter", a->timed ? stvm_monitor_enter_timeout_ms(vm, a->o, ms)
                                                     : stvm_monitor_enter(vm, a->o));
    return waited(a->pl, a->s, "enter", a->timed ? stvm_mutex_enter_timeout_ms(vm, a->o, ms)
                                                 : stvm_mutex_enter(vm, a->o));
}

static bool play_exit(const act *a)
{
    if (a->pharo)   /* the end of its critical: on the normal path: the ensure: block */
        return called(a->pl, a->s, "exit", pharo_monitor_critical_end(a->vm));
    return called(a->pl, a->s, "exit", a->monitor ? stvm_monitor_exit(a->vm, a->o)
                                                  : stvm_mutex_exit(a->vm, a->o));
}

static bool play_put(const act *a)
{
    void *item = (void *)(intptr_t)(a->pl->steps);   /* the queue never looks at it */
    return waited(a->pl, a->s, "put", a->timed ? stvm_queue_put_timeout_ms(a->vm, a->o, item,
                                                                           a->s->timeout_ms)
                                               : stvm_queue_put(a->vm, a->o, item));
}

static bool play_take(const act *a)
{
    void *item;
    return waited(a->pl, a->s, "take", a->timed ? stvm_queue_take_timeout_ms(a->vm, a->o,
                                                                             a->s->timeout_ms, &item)
                                                : stvm_queue_take(a->vm, a->o, &item));
}

static bool play_try_take(const act *a)   /* an empty queue's EAGAIN is an outcome, as a wait's timeout */
{
    void *item;
    return waited(a->pl, a->s, "try-take", stvm_queue_try_take(a->vm, a->o, &item));
}

static bool play_peek(const act *a)
{
    void *item;
    return waited(a->pl, a->s, "peek", stvm_queue_peek(a->vm, a->o, &item));
}

static bool play_flush(const act *a)
{
    int64_t n = stvm_queue_flush(a->vm, a->o, NULL, NULL);   /* how many, or an error */
    return called(a->pl, a->s, "flush", n < 0 ? (int)n : 0);
}

static bool play_delay(const act *a)
{
    return waited(a->pl, a->s, "delay", a->s->in_ms ? stvm_delay_wait_ms(a->vm, a->s->amount)
                                                    : stvm_delay_wait_us(a->vm, a->s->amount));
}

static bool play_work(const act *a)
{
    return waited(a->pl, a->s, "work", stvm_work_us(a->vm, (uint64_t)a->s->amount));
}

static bool play_checkpoint(const act *a)
{
    return waited(a->pl, a->s, "checkpoint", stvm_checkpoint(a->vm));
}

static bool play_yield(const act *a)
{
    return called(a->pl, a->s, "yield", stvm_yield(a->vm));
}

static bool play_spawn(const act *a)
{
    return spawn(a->pl, a->s, a->s->target);
}

static bool play_suspend(const act *a)
{
    stvm_process *p = process_of(a->pl, a->s);
    if (!p)
        return false;
    if (a->s->amount)
        return suspend_primitive(a->pl, a->s, p);
    /* EINTR: the process suspended itself in a cleanup and was terminated (or waits no
     * more): an outcome, as a wait's */
    int rc = stvm_process_suspend(a->vm, p);
    return rc == STVM_EINTR || called(a->pl, a->s, "suspend", rc);
}

static bool play_resume(const act *a)
{
    stvm_process *p = process_of(a->pl, a->s);
    return p && called(a->pl, a->s, "resume", stvm_process_resume(a->vm, p));
}

static bool play_terminate(const act *a)
{
    stvm_process *p = process_of(a->pl, a->s);
    return p && called(a->pl, a->s, "terminate", stvm_process_terminate(a->vm, p));
}

static bool play_priority(const act *a)
{
    stvm_process *p = process_of(a->pl, a->s);
    return p && called(a->pl, a->s, "priority", stvm_process_set_priority(a->vm, p, (int)a->s->amount));
}

static bool play_interrupt(const act *a)   /* no handler: only the wait it is in ends (EINTR) */
{
    stvm_process *p = process_of(a->pl, a->s);
    return p && called(a->pl, a->s, "interrupt", stvm_process_interrupt(a->vm, p, NULL, NULL));
}

static bool play_join(const act *a)
{
    stvm_process *p = process_of(a->pl, a->s);
    return p && join(a->pl, a->s, p);
}

static bool play_send(const act *a)
{
    wire *w = a->pl->objects[a->s->target];
    if (write(w->client, wire_request, sizeof wire_request - 1) != (ssize_t)(sizeof wire_request - 1))
        return called(a->pl, a->s, "send (the wire is full)", STVM_ESYS);
    return true;
}

static bool play_read(const act *a)
{
    return read_wire(a->pl, a->s, a->pl->objects[a->s->target]);
}

static bool play_outside(const act *a)
{
    uint64_t at = stvm_vm_now_us(a->vm) + (uint64_t)a->s->amount;
    happening *h = new_happening(a->pl, a->s->action, a->s->target, at);
    if (!h)
        return called(a->pl, a->s, "outside", STVM_ENOMEM);
    return called(a->pl, a->s, "outside", stvm_sim_at(a->vm, at, peer_answers, h));
}

static bool play_repeat(const act *a)
{
    for (int64_t k = 0; k < a->s->amount; k++)
        if (!play(a->pl, a->pr, (int)(a->s - a->pr->steps) + 1, a->s->end))
            return false;
    return true;
}

static bool play_ensure(const act *a)
{
    cleanup_steps c = {a->pl, a->pr, (int)(a->s - a->pr->steps) + 1, a->s->end, true};
    if (!called(a->pl, a->s, "ensure", stvm_ensure(a->vm, run_cleanup_steps, &c)))
        return false;
    stvm_ensure_pop(a->vm, true);   /* terminated inside: does not return */
    return c.ok;
}

static bool (*const steps[])(const act *a) = {
    [LAB_WAIT] = play_wait,           [LAB_SIGNAL] = play_signal,
    [LAB_SIGNAL_ALL] = play_signal_all, [LAB_ENTER] = play_enter,
    [LAB_EXIT] = play_exit,           [LAB_PUT] = play_put,
    [LAB_TAKE] = play_take,           [LAB_TRY_TAKE] = play_try_take,
    [LAB_PEEK] = play_peek,           [LAB_FLUSH] = play_flush,
    [LAB_DELAY] = play_delay,         [LAB_WORK] = play_work,
    [LAB_CHECKPOINT] = play_checkpoint, [LAB_YIELD] = play_yield,
    [LAB_SPAWN] = play_spawn,         [LAB_SUSPEND] = play_suspend,
    [LAB_RESUME] = play_resume,       [LAB_TERMINATE] = play_terminate,
    [LAB_PRIORITY] = play_priority,   [LAB_INTERRUPT] = play_interrupt,
    [LAB_JOIN] = play_join,           [LAB_SEND] = play_send,
    [LAB_READ] = play_read,           [LAB_OUTSIDE] = play_outside,
    [LAB_REPEAT] = play_repeat,       [LAB_ENSURE] = play_ensure,
};
_Static_assert(sizeof steps / sizeof steps[0] == LAB_ENSURE + 1, "a player for every step kind");

static bool step(player *pl, const lab_process *pr, const lab_step *s)
{
    bool on_object = s->target >= 0 && s->op <= LAB_FLUSH;   /* the steps on an object */
    const lab_object *obj = on_object ? &pl->sc->objects[s->target] : NULL;
    act a = {.pl = pl, .pr = pr, .s = s, .vm = pl->vm, .o = on_object ? pl->objects[s->target] : NULL,
             .monitor = obj && obj->kind == LAB_MONITOR, .timed = s->timeout_ms >= 0,
             .on = s->queue >= 0};
    a.pharo = a.monitor && obj->pharo;
    return steps[s->op](&a);
}

static bool play(player *pl, const lab_process *pr, int from, int to)
{
    for (int i = from; i < to; i++) {
        if (pl->failed)
            return false;
        if (++pl->steps > pl->lim->max_steps) {
            fail(pl, &pr->steps[i], "too many steps", 0);
            snprintf(pl->error + strlen(pl->error), pl->error_size - strlen(pl->error),
                     " (more than %ld in the run: a repeat too long for the lab)", pl->lim->max_steps);
            return false;
        }
        if (stvm_vm_now_us(pl->vm) - LAB_SIM_START_US > pl->lim->horizon_us) {
            fail(pl, &pr->steps[i], "the run went past the lab's horizon", 0);
            snprintf(pl->error + strlen(pl->error), pl->error_size - strlen(pl->error),
                     " (%llu s of simulated time)", (unsigned long long)(pl->lim->horizon_us / 1000000));
            return false;
        }
        if (!step(pl, pr, &pr->steps[i]))
            return false;
        if (pr->steps[i].op == LAB_REPEAT || pr->steps[i].op == LAB_ENSURE)
            i = pr->steps[i].end - 1;
    }
    return true;
}

static void process_main(stvm_vm *vm, void *arg)
{
    actor *a = arg;
    const lab_process *pr = &a->pl->sc->processes[a->index];
    (void)vm;
    play(a->pl, pr, 0, pr->nsteps);
}

/* A process that starts later waits a Delay first, as `[ delay wait. ... ] fork` does. */
static void starter_main(stvm_vm *vm, void *arg)
{
    actor *a = arg;
    const lab_process *pr = &a->pl->sc->processes[a->index];
    lab_step at = {.line = pr->line, .col = pr->col};
    if (pr->start > 0 &&
        !waited(a->pl, &at, "the start's Delay",
                pr->start_in_ms ? stvm_delay_wait_ms(vm, pr->start) : stvm_delay_wait_us(vm, pr->start)))
        return;
    play(a->pl, pr, 0, pr->nsteps);
}

/* "  NAME (P) waits on KIND OBJECT" for every process that has not finished. */
static void report_blocked(player *pl, char *out, size_t size)
{
    static const char *const kinds[] = {"semaphore", "external semaphore", "mutex", "monitor", "queue",
                                        "wire"};
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < pl->nheld && n < size; i++) {
        stvm_process_info info;
        if (stvm_process_get_info(pl->vm, pl->held[i], &info) != STVM_OK ||
            info.state == STVM_PROCESS_TERMINATED)
            continue;
        char what[96] = "";
        if (info.state == STVM_PROCESS_SUSPENDED) {
            snprintf(what, sizeof what, "is suspended");
        } else if (info.state == STVM_PROCESS_WAITING) {
            snprintf(what, sizeof what, "waits on a %s", info.waiting_on ? info.waiting_on : "?");
            /* The object the program holds (a queue's, never its internal semaphore's), or
             * for a wire the descriptor the wait is on. */
            for (int o = 0; o < pl->sc->nobjects; o++) {
                bool wire_fd = pl->sc->objects[o].kind == LAB_WIRE;
                if (wire_fd ? info.wait_kind != STVM_WAIT_ON_FD || info.wait_fd != pl->wires[o].client
                            : !info.wait_handle || pl->objects[o] != info.wait_handle)
                    continue;
                snprintf(what, sizeof what, "waits on %s %s", kinds[pl->sc->objects[o].kind],
                         pl->sc->objects[o].name);
            }
        } else {
            snprintf(what, sizeof what, "is ready to run");
        }
        int k = snprintf(out + n, size - n, "  %s (%d) %s\n", info.name, info.priority, what);
        n += k > 0 ? (size_t)k : 0;
    }
}

/* The object gets the name the file declares it with, so that the timeline, the trace
 * and the blocked report say "bus" and "frames.items" rather than "mutex1" and "sem2". A
 * wire is a pair of descriptors, not an object of the VM: it has none. */
static int name_object(stvm_vm *vm, const lab_object *o, void *h)
{
    switch (o->kind) {
    case LAB_SEMAPHORE:
    case LAB_EXTERNAL:
        return stvm_semaphore_set_name(vm, h, o->name);
    case LAB_MUTEX:
        return stvm_mutex_set_name(vm, h, o->name);
    case LAB_MONITOR:   /* Pharo's (a transcription): its semaphore goes by its name */
        return o->pharo ? stvm_semaphore_set_name(vm, ((pharo_monitor *)h)->mutex, o->name)
                        : stvm_monitor_set_name(vm, h, o->name);
    case LAB_QUEUE:
        return stvm_queue_set_name(vm, h, o->name);
    default:
        return STVM_OK;
    }
}

static bool make_objects(player *pl, char *why, size_t why_size)
{
    const lab_scenario *sc = pl->sc;
    for (int i = 0; i < sc->nobjects; i++) {
        const lab_object *o = &sc->objects[i];
        int rc = STVM_OK;
        switch (o->kind) {
        case LAB_SEMAPHORE:
            rc = stvm_semaphore_new(pl->vm, (stvm_semaphore **)&pl->objects[i]);
            break;
        case LAB_EXTERNAL:
            rc = stvm_semaphore_new(pl->vm, (stvm_semaphore **)&pl->objects[i]);
            if (rc == STVM_OK)
                rc = stvm_external_register(pl->vm, pl->objects[i], &pl->ext_index[i]);
            break;
        case LAB_MUTEX:
            rc = stvm_mutex_new(pl->vm, (stvm_mutex **)&pl->objects[i]);
            break;
        case LAB_MONITOR:
            if (o->pharo)
                rc = pharo_monitor_new(pl->vm, (pharo_monitor **)&pl->objects[i]);
            else
                rc = stvm_monitor_new(pl->vm, (stvm_monitor **)&pl->objects[i]);
            break;
        case LAB_QUEUE:
            rc = stvm_queue_new(pl->vm, (size_t)o->capacity, (stvm_queue **)&pl->objects[i]);
            break;
        case LAB_WIRE: {
            int fds[2];
            wire *w = &pl->wires[i];
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
                rc = STVM_ESYS;
                break;
            }
            w->client = fcntl(fds[0], F_DUPFD_CLOEXEC, WIRE_FIRST_FD);
            w->peer = fds[1];
            close(fds[0]);
            if (w->client < 0)
                rc = STVM_ESYS;
            pl->objects[i] = w;
            break;
        }
        }
        if (rc == STVM_OK)
            rc = name_object(pl->vm, o, pl->objects[i]);
        if (rc < 0) {
            snprintf(why, why_size, "%s:%d:%d: %s: %s", sc->file, o->line, o->col, o->name,
                     stvm_strerror(rc));
            return false;
        }
    }
    return true;
}

static void player_free(player *pl)
{
    /* Pharo monitors the run did not take over (a run that never started) */
    for (int i = 0; pl->objects && i < pl->sc->nobjects; i++)
        if (pl->sc->objects[i].pharo)
            pharo_monitor_free(pl->objects[i]);
    for (int i = 0; pl->wires && i < pl->sc->nobjects; i++) {
        if (pl->sc->objects[i].kind != LAB_WIRE)
            continue;
        if (pl->wires[i].client >= 0)
            close(pl->wires[i].client);
        if (pl->wires[i].peer >= 0)
            close(pl->wires[i].peer);
    }
    for (int i = 0; i < pl->nhappenings; i++)
        free(pl->happenings[i]);
    free(pl->happenings);
    free(pl->objects);
    free(pl->ext_index);
    free(pl->wires);
    free(pl->actors);
    free(pl->latest);
    free(pl->joined);
    free(pl->held);
}

/* The player's tables and the VM with its modelled costs; why says what failed. */
static bool make_vm(player *pl, lab_run *r, size_t n, size_t np, char *why, size_t why_size)
{
    const lab_scenario *s = pl->sc;
    pl->objects = calloc(n, sizeof *pl->objects);
    pl->ext_index = calloc(n, sizeof *pl->ext_index);
    pl->wires = calloc(n, sizeof *pl->wires);
    pl->actors = calloc(np, sizeof *pl->actors);
    pl->latest = calloc(np, sizeof *pl->latest);
    pl->joined = calloc(np, sizeof *pl->joined);
    pl->held = calloc(np + (size_t)pl->lim->max_spawns, sizeof *pl->held);
    for (size_t i = 0; pl->wires && i < n; i++)
        pl->wires[i] = (wire){-1, -1};
    int rc = STVM_ENOMEM;
    if (pl->objects && pl->ext_index && pl->wires && pl->actors && pl->latest && pl->joined && pl->held)
        rc = stvm_vm_create(&s->cfg, &pl->vm);
    if (rc < 0) {
        snprintf(why, why_size, "%s: the VM: %s", s->file, stvm_strerror(rc));
        return false;
    }
    r->vm = pl->vm;
    for (int op = 0; rc >= 0 && op < STVM_SIM_COST_OPS; op++)
        if (s->cost_us[op])
            rc = stvm_sim_set_cost(pl->vm, op, s->cost_us[op]);
    if (rc < 0) {
        snprintf(why, why_size, "%s: the modelled costs: %s", s->file, stvm_strerror(rc));
        return false;
    }
    return true;
}

/* The trace's ring, the file's outside events, the horizon (with external semaphores)
 * and the starting processes, before the run. */
static bool set_up_run(player *pl, lab_run *r, size_t ring_events, char *why, size_t why_size)
{
    const lab_scenario *s = pl->sc;
    bool externals = false;
    for (int i = 0; i < s->nobjects; i++)
        externals |= s->objects[i].kind == LAB_EXTERNAL;
    for (int i = 0; i < s->nprocesses; i++)
        pl->actors[i] = (actor){pl, i};
    int rc = stvm_trace_start(pl->vm, ring_events);
    for (int i = 0; rc == STVM_OK && i < s->noutside; i++) {
        uint64_t at = LAB_SIM_START_US + s->outside[i].at_us;
        happening *h = new_happening(pl, s->outside[i].action, s->outside[i].target, at);
        rc = h ? stvm_sim_at(pl->vm, at, peer_answers, h) : STVM_ENOMEM;
    }
    if (rc == STVM_OK && externals)
        rc = stvm_sim_at(pl->vm, LAB_SIM_START_US + pl->lim->horizon_us, horizon, NULL);
    for (int i = 0; rc == STVM_OK && i < s->nprocesses; i++)
        if (s->processes[i].starts && !spawn(pl, NULL, i))
            rc = STVM_ENOMEM;
    if (rc < 0)
        snprintf(why, why_size, "%s: setting up the run: %s", s->file,
                 pl->failed ? r->error : stvm_strerror(rc));
    return rc >= 0;
}

/* The run, its outcome, and who waits on what when it ended with processes left. */
static void run(player *pl, lab_run *r)
{
    /* A process with start 0 begins at once; later ones wait their start's Delay. */
    int rc = stvm_run(pl->vm);
    stvm_trace_stop(pl->vm);
    if (pl->failed)
        r->outcome = LAB_FAILED;
    else if (rc == STVM_EDEADLOCK)
        r->outcome = LAB_DEADLOCK;
    else if (rc == STVM_ESTOPPED)
        r->outcome = LAB_STOPPED;
    else if (rc < 0) {
        r->outcome = LAB_FAILED;
        snprintf(r->error, sizeof r->error, "%s: the run: %s", pl->sc->file, stvm_strerror(rc));
    } else
        r->outcome = LAB_FINISHED;
    if (r->outcome == LAB_DEADLOCK || r->outcome == LAB_STOPPED)
        report_blocked(pl, r->blocked, sizeof r->blocked);
}

/* What the run keeps of the player's objects: their handles and descriptors (to name
 * them in the trace), and the Pharo monitors' records (to free after the VM). */
static void hand_over(player *pl, lab_run *r, size_t n)
{
    const lab_scenario *s = pl->sc;
    r->handles = calloc(n, sizeof *r->handles);
    r->fds = calloc(n, sizeof *r->fds);
    r->owned = calloc(n, sizeof *r->owned);
    r->nowned = r->owned ? n : 0;
    for (int i = 0; r->handles && r->fds && r->owned && i < s->nobjects; i++) {
        bool is_wire = s->objects[i].kind == LAB_WIRE;
        r->handles[i] = is_wire ? NULL : pl->objects[i];
        if (s->objects[i].pharo && pl->objects[i]) {   /* the trace names its semaphore */
            r->handles[i] = ((pharo_monitor *)pl->objects[i])->mutex;
            r->owned[i] = pl->objects[i];
            pl->objects[i] = NULL;
        }
        r->fds[i] = is_wire ? pl->wires[i].client : -1;
    }
}

bool lab_play(const lab_scenario *s, const lab_limits *lim, size_t ring_events, lab_run *r,
              char *why, size_t why_size)
{
    memset(r, 0, sizeof *r);
    player pl = {.sc = s, .lim = lim, .error = r->error, .error_size = sizeof r->error};
    size_t n = (size_t)s->nobjects + 1, np = (size_t)s->nprocesses + 1;
    if (!make_vm(&pl, r, n, np, why, why_size) || !make_objects(&pl, why, why_size) ||
        !set_up_run(&pl, r, ring_events, why, why_size)) {
        player_free(&pl);
        lab_run_free(r);   /* the VM, once made */
        return false;
    }
    run(&pl, r);
    hand_over(&pl, r, n);
    player_free(&pl);
    return true;
}

void lab_run_free(lab_run *r)
{
    stvm_vm_free(r->vm);   /* a cleanup it runs may still use what the run owns */
    for (size_t i = 0; r->owned && i < r->nowned; i++)
        free(r->owned[i]);
    free(r->handles);
    free(r->fds);
    free(r->owned);
    r->vm = NULL;
    r->handles = NULL;
    r->fds = NULL;
    r->owned = NULL;
}
