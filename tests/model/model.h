/*
 * model.h -- a reference model of stvm's scheduling rules, in plain C and without any
 * stvm internals: the driver (driver.h) runs it in lock-step with a VM on the simulated
 * clock and compares who runs, every answer and every state after each operation.
 *
 * It is also documentation: each rule below is the rule include/stvm.h, docs/scheduler.md
 * and docs/differences-from-pharo.md state, written as code. Where the documents leave
 * an order open (where the idle process queues, what a Delay request does to its
 * caller) the model follows what the scheduler and the image-side Delay code do, and
 * says so.
 *
 * The world it models: M_SLOTS user processes (a slot holds one process, and is reused
 * once that process has finished and its handle has gone), the idle process, the Delay
 * scheduler's timing process, M_SEMS semaphores and M_MUTEXES mutexes, the simulated
 * clock, the VM's one-shot timer, and the host thread (stvm_run's caller).
 *
 * How a process is modelled: besides its state and list, each process has a
 * continuation `cont`: what it does when it next has the processor. K_ASK means "it is
 * between operations: its last call answered `rc` and it asks the script what to do
 * next" -- the points the driver can see. The other continuations are the stages of a
 * call that may give up the processor half-way (a Delay request preempts its caller
 * before the caller even waits; a cleanup runs in the terminated process). advance()
 * runs the model from one visible point to the next.
 */
#ifndef STVM_TESTS_MODEL_MODEL_H
#define STVM_TESTS_MODEL_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <stvm.h>

#define M_SLOTS 6
#define M_SEMS 3
#define M_MUTEXES 2
#define M_MON_X M_MUTEXES           /* the monitor m0's entry: mx[M_MON_X], a mutex */
#define M_MONQ 2                    /* its condition queues modelled: 0 (default) and 1 */
#define M_MON_WOKEN (M_MONQ + 1)    /* handed_mq: woken by a signal-all (nothing to give back) */
#define M_QUEUES 2                  /* q0 unbounded, q1 bounded (M_Q1_CAPACITY) */
#define M_Q1_CAPACITY 2
#define M_QMAX 40                   /* items a queue may hold in a script */
#define M_ITEM_RC 2000              /* a take that got item n answers M_ITEM_RC + n */
#define M_PROCS (M_SLOTS + 2)
#define M_DELAYS 2                  /* Delay objects: d0 of 2 ms, d1 of 700 us */
/* The objects a name may be given to (OP_NAME's obj): sem0..2, mx0..1, q0..1, m0, d0..1. */
#define M_NAME_MX M_SEMS
#define M_NAME_Q (M_NAME_MX + M_MUTEXES)
#define M_NAME_MON (M_NAME_Q + M_QUEUES)
#define M_NAME_D (M_NAME_MON + 1)
#define M_NAMED (M_NAME_D + M_DELAYS)
#define M_NAME_TEXTS 6              /* OP_NAME's choice: m_name_text */
#define M_DRECS (M_PROCS + M_DELAYS) /* Delay records: each process's own, then the objects */
#define M_IDLE M_SLOTS              /* the idle process, priority 10 */
#define M_TIMING (M_SLOTS + 1)      /* the Delay scheduler's timing process, priority 80 */
#define M_HOST (-1)                 /* "no active process": the embedding thread */
#define M_MAX_ENSURES 24
#define M_MAX_FRAMES 24
#define M_RC_NONE 1000              /* what a fresh body or loop cleanup "answered" */

#define M_CLOCK_END ((uint64_t)1 << 62)  /* the VM clock ends here (vm/clock.h) */
#define M_MAX_US ((int64_t)1 << 52)      /* the longest Delay in us */
#define M_MAX_MS ((int64_t)(0x1FFFFFFF / 2))   /* ... on the millisecond scheduler */
#define M_ONE_SECOND 1000000u

/* ---- lists ---------------------------------------------------------------------------
 * Every list is FIFO. A process is on at most one list, and `on` names it. */
enum { L_RUNQ, L_SEM, L_MUTEX, L_JOIN, L_DELAY, L_TIMING, L_QAVAIL, L_QROOM, L_DOBJ, L_MONQ };

typedef struct mlist {
    int n;
    int pins;          /* processes committed to this list (timed waits, joins) */
    int8_t kind, index;
    int8_t at[M_PROCS];
} mlist;

typedef struct msem {
    mlist waiters;
    int64_t excess;
} msem;

/* A SharedQueue: its items (script sequence numbers), the semaphore `avail` counting
 * them, and for a bounded one `room` (writers wait there) and the free slots nobody
 * waits for. Items promised to handed readers are the front ones: the number of readers
 * handed avail's signal and not yet run. A closed queue (stvm_queue_close) refuses every
 * put; once nothing is left for a reader (no excess signal, nothing promised) it is at
 * its end for good. */
typedef struct mqueue {
    msem avail, room;
    int cap;
    int64_t free_slots;
    int n;
    int item[M_QMAX];
    bool closed;
} mqueue;

typedef struct mmutex {
    int owner;         /* process index or -1 */
    uint32_t depth;
    mlist waiters;
} mmutex;

/* A Delay (plain or bounding a timed wait); each process has at most one at a time,
 * and the Delay objects have one each. */
enum { D_IDLE, D_REQUESTED, D_SCHEDULED, D_EXPIRED };
typedef struct mdelay {
    int state;
    int by;            /* a Delay object: the process whose stvm_delay_wait scheduled it, or -1 */
    int64_t dur_us;
    uint64_t at, seq;  /* resumption time and scheduling order, once scheduled */
    mlist *timed;      /* the list a timed wait waits on, NULL for a plain Delay */
    msem own;          /* a plain Delay's own semaphore */
} mdelay;

/* How a wait ended (what the waiter answers when it runs again). */
enum { W_SIGNALLED, W_TIMED_OUT, W_ABORTED, W_INTERRUPTED, W_CLOSED };

/* Cleanups: a LOG cleanup only shows that it ran; a LOOP cleanup then asks the script
 * for operations until it gets OP_RETURN (so a cleanup may wait, signal, terminate...). */
enum { CL_LOG, CL_LOOP };
typedef struct mcleanup {
    int id, kind;
} mcleanup;
/* A cleanup running in a process: run by its exit (FR_EXIT) or by stvm_ensure_pop. */
enum { FR_EXIT, FR_POP };
typedef struct mframe {
    mcleanup c;
    int kind;
} mframe;

/* Continuations. */
enum {
    K_ASK,          /* visible: answers rc and asks for the next operation */
    K_CLEANUP,      /* visible: starts the cleanup on top of its frames */
    K_WOKEN,        /* a semaphore wait or mutex enter ended: answer by wait_end */
    K_CHECKPOINTED, /* back from a checkpoint: rc (1 or 0), or EINTR if cancelled meanwhile */
    K_SUSPENDED_SELF, /* back from suspending itself: OK (resumed), or EINTR (terminated in
                       a cleanup meanwhile: it waits no more) */
    K_Q_TAKE_WOKEN, K_Q_PUT_WOKEN,   /* a queue's take or put waited: take or put now */
    K_EXIT,         /* exit: run the cleanups, then finish */
    K_RUN_ENSURES,
    K_D_START, K_D_REQUEST, K_D_WAIT, K_D_WOKEN, K_D_DONE,       /* stvm_delay_wait_* */
    K_DO_START, K_DO_REQUEST, K_DO_WAIT, K_DO_WOKEN,   /* stvm_delay_wait and _schedule */
    K_TW_START, K_TW_REQUEST, K_TW_WAIT, K_TW_WOKEN, K_TW_DONE,  /* timed waits */
    K_J_WOKEN, K_J_DONE,                                         /* join without limit */
    K_MW_WOKEN,     /* a monitor condition wait (untimed) ended: take the monitor again */
    K_MR_START, K_MR_TRY, K_MR_WOKEN,   /* the monitor taken again after a condition wait */
    K_MON_SIGALL,   /* signal_all: wakes the next waiter (each may preempt the caller) */
    K_IDLE,         /* the idle process's loop */
    K_T_WAIT, K_T_PASS,   /* the timing process's loop */
};

/* What a timed wait waits on. */
enum { TW_SEM, TW_MUTEX, TW_JOIN, TW_QTAKE, TW_QPUT, TW_MONQ };

typedef struct mproc {
    bool used;         /* the slot holds a process, or its handle is still valid */
    bool alive;        /* not finished */
    bool vm_own;
    bool held;         /* the driver holds the handle (stvm_spawn's out) */
    bool known;        /* the driver knows the handle (held, or the process ran) */
    bool boxed_handle; /* spawned held: the handle is an object of its own */
    bool terminate;    /* terminated by another, cleanups still to run */
    bool exiting;      /* running its cleanups on the way out */
    bool cancelled;    /* terminated again while exiting: every wait answers EINTR at once */
    bool exit_after;   /* terminated while it ran a cleanup by hand: exits once that ends */
    bool eintr_next;   /* interrupted while committed to a wait not yet begun: it ends at once */
    bool call_excess;  /* a timed take found an excess signal (takes the first unpromised item) */
    int call_item;     /* the item a timed put puts */
    int intr_pending;  /* interrupts waiting to run in it */
    int intr_count;    /* interrupt functions it ran (the driver counts them too) */
    uint64_t id;
    int prio;
    int handle_prio;   /* the last priority set (spawn, set_priority): a finished process
                          shows this one, never a cleanup's boost */
    mlist *on;
    int wait_end;
    const char *label; /* what a Delay wait shows as waiting_on: "delay", "timed wait" */
    uint64_t since;    /* the clock when it last began to wait (stvm_process_info) */
    int cont, rc;
    /* the call in progress, for the multi-stage ones */
    int call_kind, call_obj, call_rc;
    int in_dobj;       /* inside stvm_delay_wait on Delay object in_dobj - 1 (0: not) */
    int64_t call_dur_us;
    bool has_delay;
    mdelay delay;
    mlist *pinned;     /* committed to this list (at most one) */
    int n_ens;
    mcleanup ens[M_MAX_ENSURES];   /* newest last */
    int n_fr;
    mframe fr[M_MAX_FRAMES];
    int n_owned;
    int owned[M_MUTEXES + 1];      /* newest first (M_MON_X: the monitor) */
    uint32_t mon_depth;            /* the depth a monitor condition wait takes back */
    mlist joiners;
    /* Handed what it waited for and not yet run to take it (scheduler/wait.c's rule): a
     * semaphore's signal, or mutex handed_mutex - 1. Terminated before it runs, it gives
     * it back. */
    msem *handed_sem;
    int handed_mutex;
    int handed_mq;     /* a monitor signal of queue handed_mq - 1, or M_MON_WOKEN */
} mproc;

/* What the model expects the VM to show next. */
enum { OBS_ASK, OBS_CLEANUP, OBS_RUN };
typedef struct mobs {
    int kind;
    int proc;          /* OBS_ASK, OBS_CLEANUP */
    int frame;         /* OBS_ASK: the cleanup the asking loop runs in, -1 for the body */
    int id;            /* OBS_CLEANUP: which cleanup */
    int rc;            /* OBS_ASK: what the last call answered; OBS_RUN: stvm_run's result */
} mobs;

/* What the scripts reached, for STVM_MODEL_COVERAGE=1. */
enum {
    COV_PREEMPT, COV_LEND, COV_CLOCK_JUMP, COV_TIMER_FIRE, COV_RUN_OK, COV_DEADLOCK,
    COV_TIMING_START, COV_REQUEST_QUEUED, COV_EXPIRED_BEFORE_WAIT, COV_TIMED_OUT_WAITING,
    COV_ABORTED, COV_HANDOFF, COV_HANDOFF_AT_FINISH, COV_TERMINATE_CLEANUPS, COV_BOOST,
    COV_CLEANUP_ABANDONED, COV_CLEANUP_RUN, COV_JOINER_WOKEN, COV_HANDLE_GONE, COV_ERANGE,
    COV_ONE_SECOND_STEP, COV_GIVEN_BACK, COV_CANCELLED_WAIT, COV_CANCELLED_SUSPEND,
    COV_SUSPENSION_TERMINATED,
    COV_Q_TAKE_HANDED, COV_Q_TAKE_EXCESS, COV_Q_SKIP_PROMISED, COV_Q_ITEM_GIVEN_BACK,
    COV_Q_WRITER_WAITS, COV_Q_ROOM_HANDED, COV_Q_EFULL, COV_Q_EINTR, COV_Q_TIMED_OUT,
    COV_INTR_SELF, COV_INTR_WAIT_ENDED, COV_INTR_GIVEN_BACK, COV_INTR_RUN_LATER,
    COV_INTR_EINTR_NEXT, COV_DOBJ_EXPIRED_WAITER, COV_DOBJ_EXPIRED_UNWAITED,
    COV_DOBJ_EXCESS_AT_ONCE, COV_DOBJ_ESTATE, COV_DOBJ_UNSCHEDULED_BY_OTHER,
    COV_DOBJ_CURTAILED,
    COV_MON_ENTER_WAITS, COV_MON_HANDOFF, COV_MON_NESTED_WAIT, COV_MON_SIGNAL_WOKE,
    COV_MON_SIGNAL_LOST, COV_MON_SIGNAL_ON_FALLBACK, COV_MON_SIGALL_WOKE,
    COV_MON_SIGALL_PREEMPTED, COV_MON_RETAKE_AT_ONCE, COV_MON_RETAKE_WAITS,
    COV_MON_WAIT_TIMED_OUT, COV_MON_WAIT_EINTR, COV_MON_WAIT_ESTATE, COV_MON_WAIT_EINTR_KEPT,
    COV_MON_SIGNAL_GIVEN_BACK, COV_MON_SIGALL_DROPPED, COV_MON_GIVEN_BACK,
    COV_MON_RETAKE_GIVEN_BACK, COV_MON_TERM_IN_COND, COV_MON_TERM_IN_RETAKE,
    COV_MON_TERM_HANDED_SIGNAL, COV_MON_OWNER_FINISHED, COV_MON_CANCELLED_RETAKE_BLOCKS,
    COV_MON_ENTER_TIMED_WAITS, COV_MON_SIGALL_Q1_WOKE, COV_MON_FREE_EINUSE,
    COV_Q_CLOSED, COV_Q_CLOSE_RELEASES_WRITER, COV_Q_CLOSE_RELEASES_READER,
    COV_Q_EOF_AT_LAST_TAKE, COV_Q_EOF, COV_Q_PUT_REFUSED, COV_Q_HANDED_ROOM_REFUSED,
    COV_Q_WAIT_BEHIND_PROMISE, COV_Q_RENEWED,
    COV_N
};
static const char *const cov_name[COV_N] = {
    "preemptions", "processor lent below 10", "clock jumps", "timer fires", "runs ending OK",
    "runs ending EDEADLOCK", "Delay scheduler starts", "requests queued behind a priority-80 caller",
    "timed waits expired before they waited", "waits timed out", "waits cut short by suspend",
    "mutex hand-offs", "mutexes handed on by a finishing owner", "terminations with cleanups",
    "cleanups boosted to the terminator's priority", "cleanups abandoned", "cleanups run",
    "joiners woken", "handles given back", "durations past a limit",
    "timing passes on the 1 s re-arm with a Delay still ahead",
    "hand-offs given back by a process terminated before it ran",
    "waits answering EINTR at once (terminated while exiting)",
    "self-suspensions answering EINTR at once (terminated in a cleanup)",
    "self-suspensions ended by a terminate (EINTR)",
    "queue takes of a handed item (the front)", "queue takes of an excess signal",
    "excess takes skipping items promised to handed readers",
    "queue items given back by a reader terminated or interrupted before it ran",
    "writers waiting for room in the bounded queue", "room handed to a waiting writer",
    "host puts into the full bounded queue (EAGAIN)", "queue waits answering EINTR",
    "timed queue waits timing out",
    "interrupts of the caller itself", "interrupts ending a wait",
    "interrupts giving back a hand-off", "interrupt functions run at a later switch",
    "interrupts of a process committed to a timed wait not yet begun",
    "Delay objects expiring with a waiter", "Delay objects expiring with nobody waiting",
    "Delay object waits ended at once by an excess signal",
    "Delay objects refused as already scheduled",
    "Delay objects unscheduled under a waiter",
    "Delay object waits curtailed (their own scheduling undone)",
    "monitor entrants waiting", "monitor hand-offs", "monitor waits releasing a depth above 1",
    "monitor signals waking a waiter", "monitor signals lost (nobody waiting)",
    "monitor signal_on(1) falling back to the default queue", "monitor waiters woken by signal_all",
    "monitor signal_all calls preempted by a woken waiter",
    "monitor retakes finding it free", "monitor retakes waiting behind the entrants",
    "monitor waits timing out", "monitor waits answering EINTR", "monitor waits answering ESTATE",
    "monitor waits answering EINTR at once without releasing it (cancelled or interrupted first)",
    "monitor signals given back to the next waiter of the queue",
    "monitor signal_all wakes given back (dropped)", "monitor hand-offs given back",
    "monitor hand-offs given back by a process retaking it",
    "monitor waiters terminated on a condition queue",
    "monitor waiters terminated waiting to retake it",
    "monitor waiters terminated after a signal before they ran",
    "monitors handed on or freed by a finishing owner",
    "cancelled monitor waiters blocking in the retake",
    "timed monitor enters waiting", "monitor queue-1 waiters woken by signal_all_on or really_all",
    "monitor frees refused as in use",
    "queues closed", "writers released by a close", "readers released by a close",
    "readers released by the take of the last promised item", "takes answering EEOF",
    "puts refused by a closed queue", "writers handed room refused by a close before they ran",
    "takes of a closed queue waiting behind an item promised to another reader",
    "queues freed and made again",
};

/* Deliberate mistakes for the self-test that proves the comparison is live. */
enum { MUT_NONE, MUT_PREEMPTED_WRONG_END, MUT_LIFO_SEMAPHORE, MUT_CLOCK_EARLY, MUT_MON_DEPTH_ONE };

typedef struct model {
    bool yields;       /* stvm_config.preemption_yields */
    bool ms_delays;    /* delay_clock = STVM_DELAY_CLOCK_MS */
    int mutation;
    uint64_t now;
    uint64_t next_pid;
    int active;
    mlist runq[STVM_PRIORITY_MAX + 1];   /* runq[p]: priority p */
    mproc p[M_PROCS];
    msem sem[M_SEMS];
    mmutex mx[M_MUTEXES + 1];   /* the last: the monitor m0's entry */
    mlist monq[M_MONQ];        /* m0's condition queues 0 and 1 */
    mlist mon_woken;           /* pins of signal-all wakes not yet taken */
    mqueue q[M_QUEUES];
    int8_t name[M_NAMED];   /* each object's name: m_name_text's index, 0 none */
    /* the Delay scheduler */
    bool timing_started;
    msem timing_sem;
    int n_req;
    int reqq[M_DRECS];   /* requests not yet taken (Delay records), FIFO */
    mdelay dobj[M_DELAYS];
    int64_t dobj_len[M_DELAYS];   /* as made: d0 2 (ms), d1 700 (us) */
    uint64_t seq;
    int64_t pending;     /* requested or scheduled, not yet expired */
    uint64_t timer_deadline;   /* the one-shot timer: 0 = disarmed; always the timing sem */
    bool timer_keeps_alive;
    int run_result;
    int next_cleanup_id;
    mobs obs;
    const char *broken;  /* set if the model itself got into a state it cannot handle */
    uint64_t cov[COV_N];
    uint64_t steps;
} model;

/* ---- list primitives ----------------------------------------------------------------- */

static void l_init(mlist *l, int kind, int index)
{
    memset(l, 0, sizeof *l);
    l->kind = (int8_t)kind;
    l->index = (int8_t)index;
}

static void m_put(model *m, int i, mlist *l, bool back)
{
    if (back) {
        l->at[l->n++] = (int8_t)i;
    } else {
        memmove(l->at + 1, l->at, (size_t)l->n);
        l->at[0] = (int8_t)i;
        l->n++;
    }
    m->p[i].on = l;
}

static int m_pop(model *m, mlist *l)
{
    if (!l->n)
        return -1;
    int i = l->at[0];
    memmove(l->at, l->at + 1, (size_t)--l->n);
    m->p[i].on = NULL;
    return i;
}

static void m_unlink(model *m, int i)
{
    mlist *l = m->p[i].on;
    if (!l)
        return;
    for (int k = 0; k < l->n; k++) {
        if (l->at[k] == i) {
            memmove(l->at + k, l->at + k + 1, (size_t)(l->n - k - 1));
            l->n--;
            break;
        }
    }
    m->p[i].on = NULL;
}

/* ---- the run queues and the preemption rule ------------------------------------------ */

static void runq_put(model *m, int i, bool back)
{
    m_put(m, i, &m->runq[m->p[i].prio], back);
}

static int highest(const model *m)
{
    for (int q = STVM_PRIORITY_MAX; q >= STVM_PRIORITY_MIN; q--)
        if (m->runq[q].n)
            return q;
    return 0;
}

static int pop_highest(model *m)
{
    int h = highest(m);
    return h ? m_pop(m, &m->runq[h]) : -1;
}

/* Where a preempted process goes: the back of its queue (a preemption counts as a
 * yield, Pharo's default) or the front (it keeps its place among its peers). */
static bool preempted_to_back(const model *m)
{
    return m->mutation == MUT_PREEMPTED_WRONG_END ? !m->yields : m->yields;
}

/* Give the processor to i. A process terminated by another while it was off the
 * processor does not go on with what it was doing: it exits. */
/* i no longer holds a hand-off on paper: the objects it came from are free to go. */
static void drop_handed(model *m, int i)
{
    mproc *p = &m->p[i];
    if (p->handed_sem)
        p->handed_sem->waiters.pins--;
    if (p->handed_mutex)
        m->mx[p->handed_mutex - 1].waiters.pins--;
    if (p->handed_mq)
        (p->handed_mq == M_MON_WOKEN ? &m->mon_woken : &m->monq[p->handed_mq - 1])->pins--;
    p->handed_sem = NULL;
    p->handed_mutex = 0;
    p->handed_mq = 0;
}

static bool has_handed(const mproc *p)
{
    return p->handed_sem || p->handed_mutex || p->handed_mq;
}

static void switch_to(model *m, int i)
{
    m->active = i;
    drop_handed(m, i);   /* it runs: what it was handed is its own now */
    if (m->p[i].terminate) {
        m->p[i].cont = K_EXIT;   /* it exits first; its interrupts run at a later switch */
    } else if (m->p[i].intr_pending) {
        m->cov[COV_INTR_RUN_LATER]++;
        m->p[i].intr_count += m->p[i].intr_pending;
        m->p[i].intr_pending = 0;
    }
}

static void poll_events(model *m);

/* The active process is already on a list (or on none): the highest runnable runs. */
static void switch_to_next(model *m)
{
    poll_events(m);
    switch_to(m, pop_highest(m));
}

/* The preemption rule (Pharo's resume:preemptedYieldingIf:): a process made runnable
 * runs at once if it is strictly higher than the active one, which is preempted;
 * otherwise it queues at the back of its priority. From the host nothing runs. */
static bool make_runnable(model *m, int i)
{
    int a = m->active;
    if (a == M_HOST || m->p[i].prio <= m->p[a].prio) {
        runq_put(m, i, true);
        return false;
    }
    runq_put(m, a, preempted_to_back(m));
    switch_to(m, i);
    m->cov[COV_PREEMPT]++;
    return true;
}

/* A strictly higher runnable process preempts the active one. */
static bool preempt_if_needed(model *m)
{
    int a = m->active;
    if (a == M_HOST || highest(m) <= m->p[a].prio)
        return false;
    runq_put(m, a, preempted_to_back(m));
    switch_to(m, pop_highest(m));
    return true;
}

/* The active process's call answers rc when it next runs (set before anything that
 * may switch away from it). From the host, answers are returned directly. */
static void answer(model *m, int rc)
{
    if (m->active == M_HOST)
        return;
    m->p[m->active].cont = K_ASK;
    m->p[m->active].rc = rc;
}

/* ---- semaphores and waiting ------------------------------------------------------------ */

/* Signal: the first waiter (FIFO, whatever its priority) is resumed by the preemption
 * rule (or only queued, when the signaller may not switch: events, the timing
 * process); with no waiter, one more excess signal. */
static void sem_signal(model *m, msem *s, bool may_switch)
{
    int w;
    if (m->mutation == MUT_LIFO_SEMAPHORE && s->waiters.n > 1) {
        w = s->waiters.at[s->waiters.n - 1];
        m_unlink(m, w);
    } else {
        w = m_pop(m, &s->waiters);
    }
    if (w < 0) {
        s->excess++;
        return;
    }
    m->p[w].handed_sem = s;
    s->waiters.pins++;   /* not freed before w takes the signal or gives it back */
    if (may_switch)
        make_runnable(m, w);
    else
        runq_put(m, w, true);
}

/* The active process waits at the end of l; when it runs again it goes on at `then`. */
static void block_on(model *m, mlist *l, int then)
{
    mproc *p = &m->p[m->active];
    p->cont = then;
    if (p->cancelled || p->eintr_next) {   /* it waits no more: EINTR at once */
        m->cov[p->cancelled ? COV_CANCELLED_WAIT : COV_INTR_EINTR_NEXT]++;
        p->eintr_next = false;   /* one wait only */
        p->wait_end = W_INTERRUPTED;
        return;
    }
    p->since = m->now;
    p->wait_end = W_SIGNALLED;
    m_put(m, m->active, l, true);
    switch_to_next(m);
}

/* The one wait that blocks even when the process's waits are cancelled: the monitor
 * taken again after a condition wait (the code after a wait runs inside the monitor). */
static void block_always(model *m, mlist *l, int then)
{
    mproc *p = &m->p[m->active];
    p->cont = then;
    p->since = m->now;
    p->wait_end = W_SIGNALLED;
    m_put(m, m->active, l, true);
    switch_to_next(m);
}

/* End i's wait from outside: a timed-out waiter becomes ready (at the back of its
 * queue, never switching); a suspended one stays on no list. */
static void wait_end(model *m, int i, int how)
{
    m_unlink(m, i);
    m->p[i].wait_end = how;
    if (how == W_TIMED_OUT || how == W_CLOSED)
        runq_put(m, i, true);
}

static int wait_rc(int how)
{
    return how == W_SIGNALLED   ? STVM_OK
           : how == W_TIMED_OUT ? STVM_ETIMEDOUT
           : how == W_ABORTED   ? STVM_ESTATE
           : how == W_CLOSED    ? STVM_ECLOSED
                                : STVM_EINTR;
}

/* ---- handles -------------------------------------------------------------------------- */

/* A handle goes when its process has finished, nobody holds it, and no joiner waits on
 * it or is still inside its join. */
static void release_if_unused(model *m, int i)
{
    mproc *p = &m->p[i];
    if (i < M_SLOTS && p->used && !p->alive && !p->held && !p->joiners.n && !p->joiners.pins) {
        m->cov[COV_HANDLE_GONE]++;
        p->used = false;
        p->known = false;
    }
}

static void commit(model *m, int i, mlist *l)
{
    m->p[i].pinned = l;
    l->pins++;
}

/* The committed process leaves: by returning from its wait (the join then gives the
 * handle back itself), or by being terminated. */
static void uncommit_how(model *m, int i, bool terminated)
{
    mlist *l = m->p[i].pinned;
    m->p[i].eintr_next = false;   /* the wait it was for is over */
    if (!l)
        return;
    l->pins--;
    m->p[i].pinned = NULL;
    /* A joiner that leaves by any way, terminated included, may be the last thing
     * keeping a finished, released handle: it goes ("the handle goes when the last of
     * them returns"; nobody can use it any more). */
    (void)terminated;
    if (l->kind == L_JOIN && m->p[l->index].used)
        release_if_unused(m, l->index);
}

static void uncommit(model *m, int i)
{
    uncommit_how(m, i, false);
}

/* ---- mutexes -------------------------------------------------------------------------- */

static void owned_add(model *m, int i, int x)
{
    mproc *p = &m->p[i];
    memmove(p->owned + 1, p->owned, sizeof p->owned[0] * (size_t)p->n_owned);
    p->owned[0] = x;
    p->n_owned++;
}

static void owned_remove(model *m, int i, int x)
{
    mproc *p = &m->p[i];
    for (int k = 0; k < p->n_owned; k++) {
        if (p->owned[k] == x) {
            memmove(p->owned + k, p->owned + k + 1, sizeof p->owned[0] * (size_t)(p->n_owned - k - 1));
            p->n_owned--;
            return;
        }
    }
}

/* Take the mutex if free (1), re-enter it if the caller owns it (1, one level deeper),
 * 0 when another process owns it. */
static int mutex_try(model *m, int x)
{
    mmutex *mx = &m->mx[x];
    int a = m->active;
    if (mx->owner < 0) {
        mx->owner = a;
        mx->depth = 1;
        owned_add(m, a, x);
        return 1;
    }
    if (mx->owner != a)
        return 0;
    mx->depth++;
    return 1;
}

/* The last exit hands the mutex straight to the first waiter (no barging): it owns the
 * mutex before it runs. Answers the new owner or -1. */
static int hand_off(model *m, int x)
{
    mmutex *mx = &m->mx[x];
    owned_remove(m, mx->owner, x);
    int next = m_pop(m, &mx->waiters);
    mx->owner = next;
    mx->depth = next >= 0 ? 1 : 0;
    if (next >= 0) {
        owned_add(m, next, x);
        m->p[next].handed_mutex = x + 1;
        mx->waiters.pins++;
        m->cov[x == M_MON_X ? COV_MON_HANDOFF : COV_HANDOFF]++;
    }
    return next;
}

/* ---- the monitor m0 (Pharo's Monitor) --------------------------------------------------
 * Its entry is a mutex (mx[M_MON_X]: owner, depth, FIFO entrants, hand-off on the last
 * exit, give-back, handed on when the owner finishes); its condition queues are FIFO
 * waiting lists whose signals are handed like a semaphore's. */

/* A condition wait lets the monitor go whatever its depth: to the first entrant, made
 * ready without switching (the caller joins the queue before anyone can run). */
static void mon_release(model *m)
{
    mmutex *mx = &m->mx[M_MON_X];
    if (mx->depth > 1)
        m->cov[COV_MON_NESTED_WAIT]++;
    int next = hand_off(m, M_MON_X);
    if (next >= 0)
        runq_put(m, next, true);
}

/* Hand waiter w, just taken off a queue, its wake-up (how: queue + 1, or M_MON_WOKEN). */
static void mon_handed(model *m, int w, int how)
{
    m->p[w].handed_mq = how;
    (how == M_MON_WOKEN ? &m->mon_woken : &m->monq[how - 1])->pins++;
}

/* signal / signal_on: the first waiter of queue q, made runnable by the preemption rule
 * (the caller's answer, 0 or 1, set first); with nobody waiting the signal is lost. */
static void mon_signal(model *m, int q)
{
    int w = m_pop(m, &m->monq[q]);
    answer(m, w >= 0);
    if (w < 0) {
        m->cov[COV_MON_SIGNAL_LOST]++;
        return;
    }
    m->cov[COV_MON_SIGNAL_WOKE]++;
    mon_handed(m, w, q + 1);
    make_runnable(m, w);
}

/* The retake is over: the monitor is the caller's with the depth it had; the wait
 * answers how it ended. */
static void mon_retaken(model *m, int a)
{
    mproc *p = &m->p[a];
    m->mx[M_MON_X].depth = m->mutation == MUT_MON_DEPTH_ONE ? 1 : p->mon_depth;
    int rc = p->call_rc;
    if (rc != STVM_OK)
        m->cov[rc == STVM_ETIMEDOUT ? COV_MON_WAIT_TIMED_OUT
               : rc == STVM_EINTR   ? COV_MON_WAIT_EINTR
                                    : COV_MON_WAIT_ESTATE]++;
    answer(m, rc);
}

/* ---- the Delay scheduler (image side, a process of its own) --------------------------- */

static bool timer_is_work(const model *m)
{
    return m->timer_deadline && m->timer_keeps_alive;
}

/* At every scheduling point: a due timer is disarmed and signals its semaphore (the
 * timing process's), which never switches by itself. */
static void poll_events(model *m)
{
    if (m->timer_deadline && m->now >= m->timer_deadline) {
        m->cov[COV_TIMER_FIRE]++;
        m->timer_deadline = 0;
        sem_signal(m, &m->timing_sem, false);
    }
}

/* The earliest scheduled Delay: by resumption time, ties in scheduling order. */
static const mdelay *drec_c(const model *m, int i)
{
    return i < M_PROCS ? &m->p[i].delay : &m->dobj[i - M_PROCS];
}

static mdelay *drec(model *m, int i)
{
    return (mdelay *)drec_c(m, i);
}

static int earliest_delay(const model *m)
{
    int best = -1;
    for (int i = 0; i < M_DRECS; i++) {
        const mdelay *d = drec_c(m, i);
        if ((i < M_PROCS && !m->p[i].has_delay) || d->state != D_SCHEDULED)
            continue;
        const mdelay *b = best >= 0 ? drec_c(m, best) : NULL;
        if (!b || d->at < b->at || (d->at == b->at && d->seq < b->seq))
            best = i;
    }
    return best;
}

/* Started on the first Delay or timed wait: a priority-80 process (with an id of its
 * own), made runnable by the preemption rule, so it preempts any caller below 80. */
static void start_timing(model *m)
{
    mproc *t = &m->p[M_TIMING];
    memset(t, 0, sizeof *t);
    t->used = t->alive = t->vm_own = true;
    t->id = ++m->next_pid;
    t->prio = t->handle_prio = STVM_PRIORITY_TIMING;
    t->cont = K_T_WAIT;
    l_init(&t->joiners, L_JOIN, M_TIMING);
    m->timing_started = true;
    m->cov[COV_TIMING_START]++;
    make_runnable(m, M_TIMING);
}

/* One pass of the timing process: take the requests (resumption = now + duration, in
 * request order), expire everything due (a plain Delay signals its semaphore; a timed
 * wait still waiting is taken off its list, timed out), then arm the timer for the
 * earlier of the next resumption and now + 1 s. The 1 s re-arm alone is not work that
 * stvm_run waits for. */
static void timing_pass(model *m)
{
    uint64_t now = m->now;
    int64_t pending_before = m->pending;
    bool took = m->n_req > 0;
    for (int k = 0; k < m->n_req; k++) {
        mdelay *d = drec(m, m->reqq[k]);
        d->at = now + (uint64_t)d->dur_us;
        d->seq = ++m->seq;
        d->state = D_SCHEDULED;
    }
    m->n_req = 0;
    for (int e; (e = earliest_delay(m)) >= 0 && drec(m, e)->at <= now;) {
        mdelay *d = drec(m, e);
        d->state = D_EXPIRED;
        m->pending--;
        if (e >= M_PROCS)
            m->cov[d->own.waiters.n ? COV_DOBJ_EXPIRED_WAITER : COV_DOBJ_EXPIRED_UNWAITED]++;
        if (!d->timed) {
            sem_signal(m, &d->own, false);
        } else if (m->p[e].on == d->timed) {
            wait_end(m, e, W_TIMED_OUT);
            m->cov[COV_TIMED_OUT_WAITING]++;
        }
    }
    if (!took && m->pending && m->pending == pending_before)
        m->cov[COV_ONE_SECOND_STEP]++;
    uint64_t next = now + M_ONE_SECOND;
    int e = earliest_delay(m);
    if (e >= 0 && drec(m, e)->at < next)
        next = drec(m, e)->at;
    m->timing_sem.excess = 0;   /* consumeAllSignals */
    m->timer_deadline = next;
    m->timer_keeps_alive = m->pending > 0;
}

/* Delay record i is requested and the timing semaphore signalled: the timing process
 * preempts every caller below 80 here. */
static void delay_enqueue(model *m, int i)
{
    m->pending++;
    m->reqq[m->n_req++] = i;
    if (m->active != M_HOST && m->p[m->active].prio >= STVM_PRIORITY_TIMING)
        m->cov[COV_REQUEST_QUEUED]++;
    sem_signal(m, &m->timing_sem, true);
}

/* The caller hands its Delay over and signals the timing semaphore. */
static void delay_request(model *m, int i, int64_t dur_us, mlist *timed)
{
    mproc *p = &m->p[i];
    p->has_delay = true;
    memset(&p->delay, 0, sizeof p->delay);
    p->delay.state = D_REQUESTED;
    p->delay.dur_us = dur_us;
    p->delay.timed = timed;
    l_init(&p->delay.own.waiters, L_DELAY, i);
    delay_enqueue(m, i);
}

/* Delay object k is handed over by the active process (by: the waiter, or -1 for
 * stvm_delay_schedule); its semaphore, and what it holds, stay. */
static void dobj_request(model *m, int k, int by, int64_t dur_us)
{
    mdelay *d = &m->dobj[k];
    d->state = D_REQUESTED;
    d->dur_us = dur_us;
    d->by = by;
    delay_enqueue(m, M_PROCS + k);
}

/* Take Delay record i out wherever it is (request queue or schedule); nothing once
 * expired. */
static void delay_unschedule(model *m, int i)
{
    mdelay *d = drec(m, i);
    if (d->state == D_REQUESTED) {
        for (int k = 0; k < m->n_req; k++) {
            if (m->reqq[k] == i) {
                memmove(m->reqq + k, m->reqq + k + 1, sizeof m->reqq[0] * (size_t)(m->n_req - k - 1));
                m->n_req--;
                break;
            }
        }
    } else if (d->state != D_SCHEDULED) {
        return;
    }
    d->state = D_IDLE;
    m->pending--;
    m->timer_keeps_alive = m->pending > 0;
}

static bool dobj_scheduled(const model *m, int k)
{
    return m->dobj[k].state == D_REQUESTED || m->dobj[k].state == D_SCHEDULED;
}

/* A wait on a Delay object that ends other than by a signal (or its process's end)
 * takes out the scheduling it made, if that is still the pending one (Pharo's
 * ifCurtailed: unschedule). */
static void dobj_curtail(model *m, int i)
{
    mproc *p = &m->p[i];
    int k = p->in_dobj - 1;
    p->in_dobj = 0;
    if (k >= 0)
        p->label = NULL;
    if (k >= 0 && dobj_scheduled(m, k) && m->dobj[k].by == i) {
        m->cov[COV_DOBJ_CURTAILED]++;
        delay_unschedule(m, M_PROCS + k);
    }
}

/* The Delay a call is done with (or a finishing process's) goes. */
static void delay_done(model *m, int i)
{
    mproc *p = &m->p[i];
    if (!p->has_delay)
        return;
    delay_unschedule(m, i);
    p->has_delay = false;
    p->label = NULL;
}

/* A duration as check_duration sees it: EINVAL, ERANGE or OK, and its length in us
 * (the millisecond scheduler rounds us up to whole ms). */
static int check_duration(model *m, int64_t dur, bool from_ms, int64_t *us)
{
    if (dur < 0)
        return STVM_EINVAL;
    if (from_ms ? dur > M_MAX_US / 1000 : dur > M_MAX_US) {
        m->cov[COV_ERANGE]++;
        return STVM_ERANGE;
    }
    int64_t ms = from_ms ? dur : (dur + 999) / 1000;
    if (m->ms_delays && ms > M_MAX_MS)
        return STVM_ERANGE;
    /* It must end before the clock does: exactly for the microsecond scheduler; the
     * millisecond one may take up to 1 ms more (whole ticks from the current one). */
    uint64_t span = m->ms_delays ? (uint64_t)ms * 1000 + 1000 : (uint64_t)(from_ms ? dur * 1000 : dur);
    if (m->now + span > M_CLOCK_END) {
        m->cov[COV_ERANGE]++;
        return STVM_ERANGE;
    }
    *us = from_ms || m->ms_delays ? ms * 1000 : dur;
    return STVM_OK;
}

/* ---- shared queues --------------------------------------------------------------------- */

/* Readers handed avail's signal that have not yet run: they own the front items. */
static int q_handed(const model *m, const mqueue *q)
{
    int n = 0;
    for (int i = 0; i < M_PROCS; i++)
        n += m->p[i].handed_sem == &q->avail;
    return n;
}

/* Room freed: to the first waiting writer (by the preemption rule when may_switch),
 * else a free slot. */
static void q_slot_release(model *m, mqueue *q, bool may_switch)
{
    if (!q->cap)
        return;
    if (q->room.waiters.n) {
        m->cov[COV_Q_ROOM_HANDED]++;
        sem_signal(m, &q->room, may_switch);
    } else {
        q->free_slots++;
    }
}

/* A writer's room: always in an unbounded queue; else an excess signal of room (given
 * back by a writer that never ran to use it) or a free slot. */
static bool q_slot_try(mqueue *q)
{
    if (!q->cap)
        return true;
    if (q->room.excess > 0) {
        q->room.excess--;
        return true;
    }
    if (q->free_slots > 0) {
        q->free_slots--;
        return true;
    }
    return false;
}

/* Nothing is left for a reader of a closed queue, and nothing ever will be. */
static bool q_dry(const model *m, const mqueue *q)
{
    return q->closed && q->avail.excess <= 0 && q_handed(m, q) == 0;
}

/* Every process waiting on l is released by the close (made ready, no switch). */
static void q_release(model *m, mlist *l, int cov)
{
    int w;
    while ((w = m_pop(m, l)) >= 0) {
        m->cov[cov]++;
        m->p[w].wait_end = W_CLOSED;
        runq_put(m, w, true);
    }
}

/* The active process takes its item: a handed reader the front one, a taker of an
 * excess signal the first nobody was promised; it answers the item, then the room it
 * frees goes to a writer (who may preempt it). The last item a closed queue had to give
 * releases the readers waiting behind it (EEOF); a higher one of them runs at once. */
static void q_take(model *m, mqueue *q, bool handed)
{
    int at = handed ? 0 : q_handed(m, q);
    if (at >= q->n) {
        m->broken = "a take finds no item";
        return;
    }
    m->cov[handed ? COV_Q_TAKE_HANDED : COV_Q_TAKE_EXCESS]++;
    if (at > 0)
        m->cov[COV_Q_SKIP_PROMISED]++;
    int v = q->item[at];
    memmove(q->item + at, q->item + at + 1, sizeof q->item[0] * (size_t)(q->n - at - 1));
    q->n--;
    answer(m, M_ITEM_RC + v);
    if (q_dry(m, q) && q->avail.waiters.n) {
        q_release(m, &q->avail.waiters, COV_Q_EOF_AT_LAST_TAKE);
        q_slot_release(m, q, false);   /* a closed queue has no writer waiting */
        preempt_if_needed(m);
        return;
    }
    q_slot_release(m, q, true);
}

/* The room is had: append, answer OK, signal avail (a waiting reader is handed it and,
 * from a process, runs at once if higher). A writer handed room that finds the queue
 * closed when it runs gives the room back and answers ECLOSED. */
static void q_put_held(model *m, mqueue *q, int item)
{
    if (q->closed) {
        m->cov[COV_Q_HANDED_ROOM_REFUSED]++;
        q_slot_release(m, q, false);
        answer(m, STVM_ECLOSED);
        return;
    }
    if (q->n >= M_QMAX) {
        m->broken = "a queue holds more than M_QMAX items";
        return;
    }
    q->item[q->n++] = item;
    answer(m, STVM_OK);
    sem_signal(m, &q->avail, true);
}

/* ---- finishing ----------------------------------------------------------------------- */

/* i is terminated after a hand-off it had not run to take: the signal goes to the
 * semaphore's next waiter (or back to its excess), the mutex to its next waiter, both
 * made ready without switching. */
static void give_back(model *m, int i)
{
    mproc *p = &m->p[i];
    msem *s = p->handed_sem;
    int x = p->handed_mutex - 1;
    int how = p->handed_mq;
    drop_handed(m, i);
    if (s) {
        m->cov[COV_GIVEN_BACK]++;
        for (int k = 0; k < M_QUEUES; k++)
            if (s == &m->q[k].avail)
                m->cov[COV_Q_ITEM_GIVEN_BACK]++;
        sem_signal(m, s, false);
    }
    if (how) {
        if (how == M_MON_WOKEN) {
            m->cov[COV_MON_SIGALL_DROPPED]++;   /* everyone waiting then was woken too */
        } else {
            /* the signal goes to the queue's next waiter, made ready without switching */
            m->cov[COV_MON_SIGNAL_GIVEN_BACK]++;
            int w = m_pop(m, &m->monq[how - 1]);
            if (w >= 0) {
                mon_handed(m, w, how);
                runq_put(m, w, true);
            }
        }
    }
    if (x >= 0) {
        if (m->mx[x].owner == i) {
            m->cov[x == M_MON_X ? COV_MON_GIVEN_BACK : COV_GIVEN_BACK]++;
            if (x == M_MON_X && p->cont == K_MR_WOKEN)
                m->cov[COV_MON_RETAKE_GIVEN_BACK]++;
            int next = hand_off(m, x);
            if (next >= 0)
                runq_put(m, next, true);
        }
    }
}

/* Everything that ends a process: off its list, its Delay unscheduled, each mutex it
 * owns handed to its first waiter (newest-owned first, made ready without switching),
 * its joiners woken (FIFO), its handle gone unless held or joined. */
static void mon_term_cov(model *m, int i)
{
    mproc *p = &m->p[i];
    if (p->on && p->on->kind == L_MONQ)
        m->cov[COV_MON_TERM_IN_COND]++;
    else if (p->on == &m->mx[M_MON_X].waiters && p->cont == K_MR_WOKEN)
        m->cov[COV_MON_TERM_IN_RETAKE]++;
    if (p->handed_mq)
        m->cov[COV_MON_TERM_HANDED_SIGNAL]++;
}

static void finish(model *m, int i)
{
    mproc *p = &m->p[i];
    mon_term_cov(m, i);
    m_unlink(m, i);
    give_back(m, i);
    uncommit_how(m, i, true);
    delay_done(m, i);
    dobj_curtail(m, i);
    while (p->n_owned) {
        if (p->owned[0] == M_MON_X)
            m->cov[COV_MON_OWNER_FINISHED]++;
        int next = hand_off(m, p->owned[0]);
        if (next >= 0) {
            runq_put(m, next, true);
            m->cov[COV_HANDOFF_AT_FINISH]++;
        }
    }
    p->alive = false;
    p->terminate = false;
    p->exiting = false;
    p->cancelled = false;
    p->exit_after = false;
    p->eintr_next = false;
    p->intr_pending = 0;   /* dropped */
    for (int j; (j = m_pop(m, &p->joiners)) >= 0;) {
        runq_put(m, j, true);
        m->cov[COV_JOINER_WOKEN]++;
    }
    release_if_unused(m, i);
}

/* A terminated process that is not running runs its cleanups now, at least at the
 * terminator's priority, while the terminator waits at the front of its queue; from the
 * host it is only queued (unless it already is). If what it gave back woke a process
 * higher still, that one runs first and it waits at the front of its queue. */
static void run_terminated_now(model *m, int t)
{
    mproc *p = &m->p[t];
    int a = m->active;
    if (a == M_HOST) {
        if (!p->on)
            runq_put(m, t, true);
        return;
    }
    m_unlink(m, t);
    if (p->prio < m->p[a].prio) {
        p->prio = m->p[a].prio;
        m->cov[COV_BOOST]++;
    }
    runq_put(m, a, false);
    if (highest(m) > p->prio) {
        runq_put(m, t, false);
        switch_to_next(m);
    } else {
        switch_to(m, t);
    }
}

static void terminate_with_cleanups(model *m, int t)
{
    mproc *p = &m->p[t];
    mon_term_cov(m, t);
    m_unlink(m, t);
    give_back(m, t);
    uncommit_how(m, t, true);
    delay_done(m, t);
    dobj_curtail(m, t);
    p->terminate = true;
    m->cov[COV_TERMINATE_CLEANUPS]++;
    run_terminated_now(m, t);
}

/* Terminating a process already running its cleanups: the cleanup in progress runs to
 * its end and the rest follow, but none of them waits (Pharo 10's rule, stvm's EINTR):
 * the wait it is in ends (what it was handed goes back). */
static void terminate_exiting(model *m, int t)
{
    mproc *p = &m->p[t];
    p->cancelled = true;
    if (t == m->active)
        return;
    if (has_handed(p)) {
        give_back(m, t);
        p->wait_end = W_INTERRUPTED;
    } else if (p->on && p->on->kind != L_RUNQ) {
        wait_end(m, t, W_INTERRUPTED);
    }
    if (!p->on && p->wait_end == W_ABORTED)
        p->wait_end = W_INTERRUPTED;
    run_terminated_now(m, t);
}

static int live_user(const model *m)
{
    int n = 0;
    for (int i = 0; i < M_SLOTS; i++)
        n += m->p[i].used && m->p[i].alive;
    return n;
}

/* ---- the idle process ------------------------------------------------------------------ */

/* One pass: poll events; give the processor to anything runnable at 10 or above (idle
 * queues behind it), else lend it to a process below 10; else return from stvm_run
 * (OK when no user process is left, EDEADLOCK when nothing can ever arrive) with idle
 * at the front of its queue; else jump the simulated clock to the armed deadline. */
static void idle_step(model *m)
{
    poll_events(m);
    int h = highest(m);
    if (h >= STVM_PRIORITY_IDLE) {
        runq_put(m, M_IDLE, true);
        switch_to(m, pop_highest(m));
    } else if (h) {
        m->cov[COV_LEND]++;
        int next = pop_highest(m);
        runq_put(m, M_IDLE, true);
        switch_to(m, next);
    } else if (live_user(m) == 0 || !timer_is_work(m)) {
        m->run_result = live_user(m) == 0 ? STVM_OK : STVM_EDEADLOCK;
        m->cov[m->run_result == STVM_OK ? COV_RUN_OK : COV_DEADLOCK]++;
        runq_put(m, M_IDLE, false);
        m->active = M_HOST;
    } else if (m->timer_deadline > m->now) {
        m->cov[COV_CLOCK_JUMP]++;
        m->now = m->timer_deadline - (m->mutation == MUT_CLOCK_EARLY ? 1 : 0);
    }
}

/* ---- the stages of calls that give up the processor half-way ----------------------- */

static int frame_id(const mproc *p)
{
    return p->n_fr ? p->fr[p->n_fr - 1].c.id : -1;
}

/* Running a cleanup through stvm_ensure_pop (outside an exit, which has its own rule). */
static bool by_hand(const mproc *p)
{
    for (int k = 0; k < p->n_fr; k++)
        if (p->fr[k].kind == FR_POP)
            return true;
    return false;
}

/* A cleanup returned: the exit goes on with the next one; stvm_ensure_pop answers. */
static void end_frame(model *m)
{
    mproc *p = &m->p[m->active];
    mframe f = p->fr[--p->n_fr];
    if (f.kind == FR_EXIT)
        p->cont = K_RUN_ENSURES;
    else if (p->exit_after && !by_hand(p))
        p->cont = K_EXIT;   /* terminated meanwhile: stvm_ensure_pop does not return */
    else
        answer(m, STVM_OK);
}

static void join_done(model *m, int t, int rc)
{
    if (rc == STVM_OK)
        m->p[t].held = false;
    release_if_unused(m, t);
}

/* Run one stage of the active process; false when it is at a visible point. */
static bool step(model *m)
{
    int a = m->active;
    if (a == M_HOST) {
        m->obs = (mobs){.kind = OBS_RUN, .rc = m->run_result};
        return false;
    }
    mproc *p = &m->p[a];
    switch (p->cont) {
    case K_ASK:
        m->obs = (mobs){.kind = OBS_ASK, .proc = a, .frame = frame_id(p), .rc = p->rc};
        return false;
    case K_CLEANUP:
        m->cov[COV_CLEANUP_RUN]++;
        m->obs = (mobs){.kind = OBS_CLEANUP, .proc = a, .id = p->fr[p->n_fr - 1].c.id};
        return false;
    case K_WOKEN:
        answer(m, wait_rc(p->wait_end));
        break;
    case K_CHECKPOINTED:   /* a terminate while it was switched out in it counts */
        answer(m, p->cancelled ? STVM_EINTR : p->rc);
        break;
    case K_SUSPENDED_SELF:
        if (p->cancelled)
            m->cov[COV_SUSPENSION_TERMINATED]++;
        answer(m, p->cancelled ? STVM_EINTR : STVM_OK);
        break;
    case K_Q_TAKE_WOKEN:
    case K_Q_PUT_WOKEN:
        p->label = NULL;
        if (p->wait_end == W_CLOSED && p->cont == K_Q_TAKE_WOKEN) {
            m->cov[COV_Q_EOF]++;
            answer(m, STVM_EEOF);   /* a reader's end of the queue */
        } else if (p->wait_end != W_SIGNALLED) {
            if (p->wait_end == W_INTERRUPTED)
                m->cov[COV_Q_EINTR]++;
            answer(m, wait_rc(p->wait_end));
        } else if (p->cont == K_Q_TAKE_WOKEN) {
            q_take(m, &m->q[p->call_obj], true);
        } else {
            q_put_held(m, &m->q[p->call_obj], p->call_item);
        }
        break;
    case K_EXIT:   /* run the cleanups newest first, in the process itself */
        p->terminate = false;
        p->exit_after = false;
        p->exiting = true;
        uncommit_how(m, a, true);
        m->cov[COV_CLEANUP_ABANDONED] += (uint64_t)p->n_fr;
        p->n_fr = 0;   /* whatever it was doing is abandoned: only its body can be here */
        p->cont = K_RUN_ENSURES;
        break;
    case K_RUN_ENSURES:
        if (p->n_ens) {
            p->fr[p->n_fr++] = (mframe){.c = p->ens[--p->n_ens], .kind = FR_EXIT};
            p->cont = K_CLEANUP;
        } else {
            finish(m, a);
            switch_to_next(m);
        }
        break;
    /* stvm_delay_wait_*: start the Delay scheduler if needed, hand the Delay over (both
     * may preempt the caller), wait on the Delay's semaphore, unschedule on the way out. */
    case K_D_START:
        p->cont = K_D_REQUEST;
        if (!m->timing_started)
            start_timing(m);
        break;
    case K_D_REQUEST:
        p->cont = K_D_WAIT;
        delay_request(m, a, p->call_dur_us, NULL);
        break;
    case K_D_WAIT:
        p->label = "delay";
        if (p->delay.own.excess > 0) {
            p->delay.own.excess--;
            p->call_rc = STVM_OK;
            p->cont = K_D_DONE;
        } else {
            block_on(m, &p->delay.own.waiters, K_D_WOKEN);
        }
        break;
    case K_D_WOKEN:
        p->call_rc = wait_rc(p->wait_end);
        p->cont = K_D_DONE;
        break;
    case K_D_DONE:
        delay_done(m, a);
        answer(m, p->call_rc);
        break;
    /* stvm_delay_wait and stvm_delay_schedule on Delay object call_obj: the checks,
     * the Delay scheduler started if needed (which may preempt the caller, so the state
     * is looked at again), the request (the timing process preempts), then for a wait
     * its semaphore: an excess signal ends it at once, the Delay staying scheduled. */
    case K_DO_START:
        p->cont = K_DO_REQUEST;
        if (!m->timing_started)
            start_timing(m);
        break;
    case K_DO_REQUEST: {
        int k = p->call_obj;
        if (dobj_scheduled(m, k)) {
            m->cov[COV_DOBJ_ESTATE]++;
            p->in_dobj = 0;
            answer(m, STVM_ESTATE);
        } else if (p->call_kind == 0) {   /* schedule */
            answer(m, STVM_OK);
            dobj_request(m, k, -1, p->call_dur_us);
        } else {
            p->cont = K_DO_WAIT;
            dobj_request(m, k, a, p->call_dur_us);
        }
        break;
    }
    case K_DO_WAIT: {
        msem *s = &m->dobj[p->call_obj].own;
        p->label = "delay";
        if (s->excess > 0) {
            m->cov[COV_DOBJ_EXCESS_AT_ONCE]++;
            s->excess--;
            p->label = NULL;
            p->in_dobj = 0;
            answer(m, STVM_OK);
        } else {
            block_on(m, &s->waiters, K_DO_WOKEN);
        }
        break;
    }
    case K_DO_WOKEN:
        p->label = NULL;
        p->call_rc = wait_rc(p->wait_end);
        if (p->call_rc != STVM_OK)
            dobj_curtail(m, a);
        p->in_dobj = 0;
        answer(m, p->call_rc);
        break;
    /* Timed waits (Pharo's DelayWaitTimeout): committed to the list from the start; a
     * Delay bounds an ordinary wait; a Delay that expired before the wait began means
     * ETIMEDOUT at once. */
    case K_TW_START:
        p->cont = K_TW_REQUEST;
        if (!m->timing_started)
            start_timing(m);
        break;
    case K_TW_REQUEST:
        p->cont = K_TW_WAIT;
        delay_request(m, a, p->call_dur_us, p->pinned);
        break;
    case K_TW_WAIT:
        if (p->delay.state == D_EXPIRED) {
            m->cov[COV_EXPIRED_BEFORE_WAIT]++;
            p->call_rc = STVM_ETIMEDOUT;
            p->cont = K_TW_DONE;
            break;
        }
        p->label = "timed wait";
        p->call_rc = STVM_OK;
        p->cont = K_TW_DONE;
        if (p->call_kind == TW_SEM) {
            msem *s = &m->sem[p->call_obj];
            if (s->excess > 0)
                s->excess--;
            else
                block_on(m, &s->waiters, K_TW_WOKEN);
        } else if (p->call_kind == TW_MUTEX) {
            if (!mutex_try(m, p->call_obj))
                block_on(m, &m->mx[p->call_obj].waiters, K_TW_WOKEN);
        } else if (p->call_kind == TW_QTAKE || p->call_kind == TW_QPUT) {
            /* the queue's own wait: an excess signal first, labelled "queue" */
            mqueue *q = &m->q[p->call_obj];
            msem *s = p->call_kind == TW_QTAKE ? &q->avail : &q->room;
            p->label = "queue";
            p->call_excess = false;
            if (p->call_kind == TW_QPUT && q->closed) {   /* closed meanwhile */
                p->call_rc = STVM_ECLOSED;
            } else if (s->excess > 0) {
                p->call_excess = true;
                s->excess--;
            } else if (p->call_kind == TW_QTAKE && q_dry(m, q)) {
                p->call_rc = STVM_ECLOSED;
            } else {
                block_on(m, &s->waiters, K_TW_WOKEN);
            }
        } else if (p->call_kind == TW_MONQ) {
            /* as the untimed wait: a wait that would answer at once keeps the monitor */
            if (p->cancelled || p->eintr_next)
                m->cov[COV_MON_WAIT_EINTR_KEPT]++;
            else
                mon_release(m);
            block_on(m, &m->monq[p->call_obj], K_TW_WOKEN);
        } else if (m->p[p->call_obj].alive) {
            block_on(m, &m->p[p->call_obj].joiners, K_TW_WOKEN);
        }
        break;
    case K_TW_WOKEN:
        p->call_rc = wait_rc(p->wait_end);
        p->cont = K_TW_DONE;
        break;
    case K_TW_DONE:
        delay_done(m, a);
        uncommit(m, a);
        if (p->call_kind == TW_MONQ) {   /* taken again whatever ended the wait */
            p->cont = K_MR_START;
            break;
        }
        if (p->call_kind == TW_JOIN)
            join_done(m, p->call_obj, p->call_rc);
        if ((p->call_kind == TW_QTAKE || p->call_kind == TW_QPUT) && p->call_rc != STVM_OK &&
            p->call_rc != STVM_ECLOSED)
            m->cov[p->call_rc == STVM_EINTR ? COV_Q_EINTR : COV_Q_TIMED_OUT]++;
        if (p->call_kind == TW_QTAKE && p->call_rc == STVM_OK)
            q_take(m, &m->q[p->call_obj], !p->call_excess);
        else if (p->call_kind == TW_QTAKE && p->call_rc == STVM_ECLOSED)
            answer(m, STVM_EEOF);
        else if (p->call_kind == TW_QPUT && p->call_rc == STVM_OK)
            q_put_held(m, &m->q[p->call_obj], p->call_item);
        else
            answer(m, p->call_rc);
        break;
    case K_J_WOKEN:
        p->call_rc = wait_rc(p->wait_end);
        p->cont = K_J_DONE;
        break;
    case K_J_DONE:
        uncommit(m, a);
        join_done(m, p->call_obj, p->call_rc);
        answer(m, p->call_rc);
        break;
    /* A monitor condition wait: the wait ended (signalled, interrupted, suspended,
     * cancelled); the monitor is taken again, behind the entrants, with its depth. The
     * retake blocks even for a cancelled process; an interrupt or suspension meanwhile
     * (or a hand-off it gives back) only makes it try again. */
    case K_MW_WOKEN:
        p->call_rc = wait_rc(p->wait_end);
        uncommit(m, a);
        p->cont = K_MR_START;
        break;
    case K_MR_START:
        if (m->mx[M_MON_X].owner == a) {   /* never released (EINTR at once, ETIMEDOUT) */
            mon_retaken(m, a);
        } else {
            commit(m, a, &m->mx[M_MON_X].waiters);
            p->cont = K_MR_TRY;
        }
        break;
    case K_MR_TRY:
        if (m->mx[M_MON_X].owner < 0) {
            m->cov[COV_MON_RETAKE_AT_ONCE]++;
            mutex_try(m, M_MON_X);
            uncommit(m, a);
            mon_retaken(m, a);
        } else {
            m->cov[COV_MON_RETAKE_WAITS]++;
            if (p->cancelled)
                m->cov[COV_MON_CANCELLED_RETAKE_BLOCKS]++;
            block_always(m, &m->mx[M_MON_X].waiters, K_MR_WOKEN);
        }
        break;
    case K_MR_WOKEN:
        if (p->wait_end == W_SIGNALLED && m->mx[M_MON_X].owner == a) {   /* handed it */
            uncommit(m, a);
            mon_retaken(m, a);
        } else {
            p->cont = K_MR_TRY;
        }
        break;
    case K_MON_SIGALL: {   /* queue call_obj, oldest first, up to queue call_item; the
                            * caller keeps the monitor */
        int w = m_pop(m, &m->monq[p->call_obj]);
        if (w < 0 && p->call_obj < p->call_item) {
            p->call_obj++;
            break;
        }
        if (w < 0) {
            answer(m, p->call_rc);
            break;
        }
        p->call_rc++;
        m->cov[p->call_obj ? COV_MON_SIGALL_Q1_WOKE : COV_MON_SIGALL_WOKE]++;
        mon_handed(m, w, M_MON_WOKEN);
        if (make_runnable(m, w))
            m->cov[COV_MON_SIGALL_PREEMPTED]++;
        break;
    }
    case K_IDLE:
        idle_step(m);
        break;
    /* The timing process: wait on its semaphore, run a pass, again. */
    case K_T_WAIT:
        if (m->timing_sem.excess > 0) {
            m->timing_sem.excess--;
            p->cont = K_T_PASS;
        } else {
            block_on(m, &m->timing_sem.waiters, K_T_PASS);
        }
        break;
    case K_T_PASS:
        timing_pass(m);
        p->cont = K_T_WAIT;
        break;
    default:
        m->broken = "unknown continuation";
        return false;
    }
    return true;
}

/* Run to the next point the driver can see (m->obs). */
static void m_advance(model *m)
{
    for (uint64_t guard = 0; step(m); guard++) {
        m->steps++;
        if (guard > 1000000) {
            m->broken = "the model does not reach a visible point";
            return;
        }
    }
}

/* ---- building a model ------------------------------------------------------------------ */

static void m_init(model *m, bool yields, bool ms_delays, uint64_t start_us, int mutation)
{
    memset(m, 0, sizeof *m);
    m->yields = yields;
    m->ms_delays = ms_delays;
    m->mutation = mutation;
    m->now = start_us;
    m->active = M_HOST;
    for (int q = 0; q <= STVM_PRIORITY_MAX; q++)
        l_init(&m->runq[q], L_RUNQ, q);
    for (int s = 0; s < M_SEMS; s++)
        l_init(&m->sem[s].waiters, L_SEM, s);
    for (int x = 0; x <= M_MON_X; x++) {
        l_init(&m->mx[x].waiters, L_MUTEX, x);
        m->mx[x].owner = -1;
    }
    for (int q = 0; q < M_MONQ; q++)
        l_init(&m->monq[q], L_MONQ, q);
    l_init(&m->mon_woken, L_MONQ, M_MONQ);
    for (int k = 0; k < M_QUEUES; k++) {
        l_init(&m->q[k].avail.waiters, L_QAVAIL, k);
        l_init(&m->q[k].room.waiters, L_QROOM, k);
        m->q[k].cap = k == 1 ? M_Q1_CAPACITY : 0;
        m->q[k].free_slots = m->q[k].cap;
    }
    l_init(&m->timing_sem.waiters, L_TIMING, 0);
    m->dobj_len[0] = 2;     /* ms */
    m->dobj_len[1] = 700;   /* us */
    for (int k = 0; k < M_DELAYS; k++) {
        m->dobj[k].by = -1;
        l_init(&m->dobj[k].own.waiters, L_DOBJ, k);
    }
    for (int i = 0; i < M_PROCS; i++)
        l_init(&m->p[i].joiners, L_JOIN, i);
    /* The idle process: id 1, priority 10, runnable from the start. */
    mproc *idle = &m->p[M_IDLE];
    idle->used = idle->alive = idle->vm_own = true;
    idle->id = ++m->next_pid;
    idle->prio = idle->handle_prio = STVM_PRIORITY_IDLE;
    idle->cont = K_IDLE;
    runq_put(m, M_IDLE, true);
}

/* ---- what the driver reads ----------------------------------------------------------- */

static stvm_process_state m_state(const model *m, int i)
{
    const mproc *p = &m->p[i];
    if (!p->alive)
        return STVM_PROCESS_TERMINATED;
    if (m->active == i)
        return STVM_PROCESS_ACTIVE;
    if (!p->on)
        return STVM_PROCESS_SUSPENDED;
    return p->on->kind == L_RUNQ ? STVM_PROCESS_READY : STVM_PROCESS_WAITING;
}

/* The names OP_NAME gives (index 0: none, NULL takes it away) and what each setter
 * answers: STVM_OK, or ERANGE (longer than STVM_NAME_MAX) and EINVAL (a control
 * character), which change nothing. */
static const char *m_name_text(int k)
{
    static const char *const text[M_NAME_TEXTS] = {
        NULL, "bus", "frames and \"quotes\\", "n3",
        "0123456789012345678901234567890123456789012345678901234567890123", "a\nb"};
    return k >= 0 && k < M_NAME_TEXTS ? text[k] : NULL;
}

static int m_name_rc(int k)
{
    return k == 4 ? STVM_ERANGE : k == 5 ? STVM_EINVAL : STVM_OK;
}

/* What process i waits on as stvm_process_info's wait_kind says it, and the object's
 * place in m->name (-1: none of those: a plain Delay, a join, the timing semaphore). */
static int m_wait_kind(const model *m, int i, int *named)
{
    const mproc *p = &m->p[i];
    *named = -1;
    if (!p->alive || !p->on || p->on->kind == L_RUNQ)
        return STVM_WAIT_ON_NOTHING;
    int x = p->on->index;
    switch (p->on->kind) {
    case L_SEM:
        *named = x;
        return STVM_WAIT_ON_SEMAPHORE;
    case L_TIMING:
        return STVM_WAIT_ON_SEMAPHORE;
    case L_DELAY:
        return STVM_WAIT_ON_DELAY;
    case L_DOBJ:
        *named = M_NAME_D + x;
        return STVM_WAIT_ON_DELAY;
    case L_MUTEX:
        *named = x == M_MON_X ? M_NAME_MON : M_NAME_MX + x;
        return x == M_MON_X ? STVM_WAIT_ON_MONITOR : STVM_WAIT_ON_MUTEX;
    case L_MONQ:
        *named = M_NAME_MON;
        return STVM_WAIT_ON_MONITOR_CONDITION;
    case L_JOIN:
        return STVM_WAIT_ON_JOIN;
    case L_QAVAIL:
    case L_QROOM:
        *named = M_NAME_Q + x;
        return p->on->kind == L_QAVAIL ? STVM_WAIT_ON_QUEUE_ITEM : STVM_WAIT_ON_QUEUE_ROOM;
    default:
        return STVM_WAIT_ON_NOTHING;
    }
}

static const char *m_waiting_on(const model *m, int i)
{
    const mproc *p = &m->p[i];
    if (!p->alive || !p->on)
        return NULL;
    switch (p->on->kind) {
    case L_SEM:
    case L_DELAY:
    case L_TIMING:
    case L_DOBJ:
        return p->label ? p->label : "semaphore";
    case L_MUTEX:
        return p->label ? p->label : p->on->index == M_MON_X ? "monitor" : "mutex";
    case L_MONQ:
        return p->label ? p->label : "monitor condition";
    case L_JOIN:
        return "process";
    case L_QAVAIL:
    case L_QROOM:
        return p->label ? p->label : "semaphore";
    default:
        return NULL;
    }
}

#endif
