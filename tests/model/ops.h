/*
 * ops.h -- the operations a script is made of, what the model says each one does, and
 * their readable names.
 *
 * A green operation is run by whichever process asks for it (the active one); a host
 * operation by the embedding thread between runs (OP_RUN is stvm_run itself). An
 * operation names its objects by index (sem0..2, mx0..1) and processes by slot
 * (s0..s5), so a script means the same thing however it is cut: an operation that does
 * not fit where it lands (a green one reached by the host, one naming a slot whose
 * handle the driver does not hold) is skipped, on both sides.
 */
#ifndef STVM_TESTS_MODEL_OPS_H
#define STVM_TESTS_MODEL_OPS_H

#include <stdio.h>

#include "model.h"

enum {
    /* green only */
    OP_WAIT, OP_TRY_WAIT, OP_WAIT_TIMEOUT,
    OP_ENTER, OP_EXIT, OP_TRY_ENTER, OP_ENTER_TIMEOUT,
    OP_YIELD, OP_CHECKPOINT, OP_DELAY, OP_JOIN,
    OP_ENSURE, OP_ENSURE_POP, OP_RETURN,
    OP_QTAKE, OP_QTRY_TAKE, OP_QTAKE_TIMEOUT, OP_QPUT_TIMEOUT,
    OP_DWAIT, OP_DSCHEDULE, OP_DUNSCHEDULE,   /* Delay objects d0, d1 */
    /* the monitor m0; obj: the condition queue (0: wait, signal; 1: wait_on, signal_on) */
    OP_MENTER, OP_MTRY_ENTER, OP_MEXIT, OP_MWAIT, OP_MWAIT_TIMEOUT, OP_MSIGNAL, OP_MSIGNAL_ALL,
    OP_MENTER_TIMEOUT,   /* signal_all's obj: 0 signal_all, 1 signal_all_on(1), 2 signal_really_all */
    /* green or host */
    OP_QPUT, OP_QFLUSH, OP_QCLOSE, OP_INTERRUPT,
    OP_SIGNAL, OP_SPAWN, OP_SUSPEND, OP_RESUME, OP_TERMINATE, OP_SET_PRIORITY, OP_RELEASE,
    OP_RENEW_SEM, OP_RENEW_MUTEX,   /* free the object and make a fresh one in its place */
    OP_RENEW_MON, OP_RENEW_QUEUE,
    OP_NAME,   /* obj: the object (M_NAME_*); prio: the name (m_name_text) */
    /* host only */
    OP_RUN, OP_MISUSE,
    OP_KINDS
};

/* op.flag */
#define OPF_HELD 1        /* spawn: with a handle */
#define OPF_SUSPENDED 2   /* spawn: stvm_spawn_suspended */
#define OPF_US 4          /* delay, semaphore timeout: the microsecond call */
#define OPF_RUN 8         /* ensure_pop: run the cleanup */
#define OPF_LOOP 16       /* ensure: a cleanup that runs operations itself */

typedef struct op {
    uint8_t kind;
    bool host;
    int8_t obj;        /* semaphore, mutex or slot; misuse: which call */
    int8_t prio;       /* spawn, set_priority */
    uint8_t flag;
    int64_t dur;       /* ms or us; join timeout */
    int32_t item;      /* queue puts: the item (the script's sequence number) */
} op;

/* Green-only calls made from the host thread, and what they answer there. */
#define MISUSES 17
static const int misuse_rc[MISUSES] = {
    STVM_ENOTPROC, STVM_ENOTPROC, STVM_ENOTPROC, STVM_EPERM, STVM_ENOTPROC, STVM_ENOTPROC,
    STVM_ENOTPROC, STVM_ENOTPROC, STVM_ENOTPROC, STVM_ENOTPROC, STVM_ENOTPROC, STVM_ENOTPROC,
    STVM_ENOTPROC, STVM_ENOTPROC, STVM_EPERM, STVM_ENOTPROC, STVM_EPERM,
};
static const char *const misuse_name[MISUSES] = {
    "stvm_semaphore_wait(sem0)", "stvm_semaphore_try_wait(sem0)", "stvm_mutex_enter(mx0)",
    "stvm_mutex_exit(mx0)", "stvm_mutex_try_enter(mx0)", "stvm_yield()", "stvm_checkpoint()",
    "stvm_delay_wait_ms(1)", "stvm_ensure(...)", "stvm_ensure_pop(true)",
    "stvm_semaphore_wait_timeout_ms(sem0, 5)", "stvm_mutex_enter_timeout_ms(mx0, 5)",
    "stvm_monitor_enter(m0)", "stvm_monitor_try_enter(m0)", "stvm_monitor_exit(m0)",
    "stvm_monitor_wait(m0)", "stvm_monitor_signal(m0)",
};

static bool op_names_slot(int kind)
{
    return kind == OP_SUSPEND || kind == OP_RESUME || kind == OP_TERMINATE ||
           kind == OP_SET_PRIORITY || kind == OP_RELEASE || kind == OP_JOIN ||
           kind == OP_INTERRUPT;
}

/* Does o fit the model's present state? (Never changes anything.) */
static bool m_applicable(const model *m, const op *o)
{
    if (o->host != (m->active == M_HOST))
        return false;
    if (op_names_slot(o->kind))
        return m->p[o->obj].used && m->p[o->obj].known;
    if (o->kind == OP_SPAWN)
        return !m->p[o->obj].used;
    if ((o->kind == OP_QPUT || o->kind == OP_QPUT_TIMEOUT) && m->q[o->obj].n >= M_QMAX - M_SLOTS)
        return false;   /* the model's queue is finite (writers waiting in q1 add at most one each) */
    if (o->host)
        return true;
    const mproc *p = &m->p[m->active];
    if (o->kind == OP_ENSURE)
        return p->n_ens < M_MAX_ENSURES;
    if (o->kind == OP_ENSURE_POP && (o->flag & OPF_RUN))
        return p->n_fr < M_MAX_FRAMES;
    return true;
}

/* ---- the operations both the host and a process may call ------------------------------ */

/* Each answers its result (a process caller's answer is set to OK before the call);
 * on an error nothing changed. */

static int m_spawn(model *m, const op *o)
{
    if (o->prio < STVM_PRIORITY_MIN || o->prio > STVM_PRIORITY_MAX)
        return STVM_EINVAL;
    mproc *t = &m->p[o->obj];
    memset(t, 0, sizeof *t);
    l_init(&t->joiners, L_JOIN, o->obj);
    t->used = t->alive = true;
    t->held = t->known = t->boxed_handle = (o->flag & OPF_HELD) != 0;
    t->id = ++m->next_pid;
    t->prio = o->prio;
    t->handle_prio = o->prio;
    t->cont = K_ASK;
    t->rc = M_RC_NONE;
    answer(m, STVM_OK);
    if (!(o->flag & OPF_SUSPENDED))
        make_runnable(m, o->obj);
    return STVM_OK;
}

/* Primitive 88: off whatever list it is on; a waiter taken off its list answers ESTATE
 * when resumed (no signal consumed); the active process switches away, unless its waits
 * are cancelled (terminated in a cleanup): then EINTR at once, and a terminate that
 * ends its suspension makes it answer EINTR too. */
static int m_suspend(model *m, int t)
{
    mproc *p = &m->p[t];
    if (!p->alive)
        return STVM_ESTATE;
    if (t == m->active) {
        if (p->cancelled) {
            m->cov[COV_CANCELLED_SUSPEND]++;
            answer(m, STVM_EINTR);
            return STVM_EINTR;
        }
        p->cont = K_SUSPENDED_SELF;
        switch_to_next(m);
        return STVM_OK;
    }
    if (!p->on)
        return STVM_ESTATE;
    if (p->on->kind == L_RUNQ) {
        m_unlink(m, t);
    } else {
        wait_end(m, t, W_ABORTED);
        m->cov[COV_ABORTED]++;
    }
    answer(m, STVM_OK);
    return STVM_OK;
}

/* Primitive 87: only a suspended process; by the preemption rule. */
static int m_resume(model *m, int t)
{
    mproc *p = &m->p[t];
    if (!p->alive || t == m->active || p->on)
        return STVM_ESTATE;
    answer(m, STVM_OK);
    make_runnable(m, t);
    return STVM_OK;
}

/* A finished process: nothing happens (Pharo's terminate answers the process). One
 * running a cleanup by hand (stvm_ensure_pop) completes it, waiting no more, and exits
 * when it ends, as one terminated while exiting does. */
static int m_terminate(model *m, int t)
{
    mproc *p = &m->p[t];
    if (!p->alive)
        return STVM_OK;
    if (p->exiting || by_hand(p)) {
        if (!p->exiting)
            p->exit_after = true;
        answer(m, STVM_OK);
        terminate_exiting(m, t);
        return STVM_OK;
    }
    if (t == m->active) {   /* never returns: exits through its cleanups */
        p->cont = K_EXIT;
        return STVM_OK;
    }
    answer(m, STVM_OK);
    if (p->n_ens) {
        terminate_with_cleanups(m, t);
    } else {
        finish(m, t);
        preempt_if_needed(m);   /* its mutexes and joiners may have gone higher */
    }
    return STVM_OK;
}

/* A ready process moves to the back of its new queue (preemption rule); the active
 * one lowered below a runnable one is preempted; others only change the field. */
static int m_set_priority(model *m, int t, int prio)
{
    mproc *p = &m->p[t];
    if (!p->alive)
        return STVM_ESTATE;
    if (prio < STVM_PRIORITY_MIN || prio > STVM_PRIORITY_MAX)
        return STVM_EINVAL;
    answer(m, STVM_OK);
    p->handle_prio = prio;
    if (p->on && p->on->kind == L_RUNQ) {
        m_unlink(m, t);
        p->prio = prio;
        make_runnable(m, t);
    } else {
        p->prio = prio;
        if (t == m->active)
            preempt_if_needed(m);
    }
    return STVM_OK;
}

static int m_release(model *m, int t)
{
    mproc *p = &m->p[t];
    if (!p->held)
        return STVM_ESTATE;
    p->held = false;
    release_if_unused(m, t);
    answer(m, STVM_OK);
    return STVM_OK;
}

/* stvm_semaphore_free: refused (EINUSE) while a process waits on it or is committed to
 * (inside a timed wait on it, even before it joined the list). A fresh one has no
 * excess. */
static int m_renew_sem(model *m, int s)
{
    if (m->sem[s].waiters.n || m->sem[s].waiters.pins)
        return STVM_EINUSE;
    m->sem[s].excess = 0;
    m->name[s] = 0;   /* the name went with the object; the new one has none */
    return STVM_OK;
}

/* stvm_mutex_free: refused (EINUSE) while owned, waited on, or a timed enter is
 * committed. */
static int m_renew_mutex(model *m, int x)
{
    if (m->mx[x].owner >= 0 || m->mx[x].waiters.n || m->mx[x].waiters.pins)
        return STVM_EINUSE;
    m->name[M_NAME_MX + x] = 0;
    return STVM_OK;
}

/* stvm_monitor_free: refused (EINUSE) while a process owns it, waits on it (to enter,
 * on a queue), holds a hand-off or signal of it not yet taken, or is inside a wait on it
 * or a timed enter (committed). A fresh one is free. */
static int m_renew_mon(model *m)
{
    const mmutex *mx = &m->mx[M_MON_X];
    bool idle = !mx->waiters.n && !mx->waiters.pins && !m->mon_woken.pins && mx->owner < 0;
    for (int q = 0; q < M_MONQ; q++)
        idle = idle && !m->monq[q].n && !m->monq[q].pins;
    if (!idle) {
        m->cov[COV_MON_FREE_EINUSE]++;
        return STVM_EINUSE;
    }
    m->name[M_NAME_MON] = 0;
    return STVM_OK;
}

/* stvm_*_set_name: never switches; a refused name changes nothing. */
static int m_name(model *m, const op *o)
{
    int rc = m_name_rc(o->prio);
    if (rc == STVM_OK)
        m->name[o->obj] = o->prio;
    return rc;
}

/* stvm_queue_free: refused (EINUSE) while a process waits on it (to take or for room),
 * holds an item or room handed to it and not yet taken, or is committed to a timed take
 * or put on it. A fresh one is empty and open. */
static int m_renew_queue(model *m, int k)
{
    mqueue *q = &m->q[k];
    if (q->avail.waiters.n || q->avail.waiters.pins || q->room.waiters.n || q->room.waiters.pins)
        return STVM_EINUSE;
    m->cov[COV_Q_RENEWED]++;
    int cap = q->cap;
    memset(q, 0, sizeof *q);
    l_init(&q->avail.waiters, L_QAVAIL, (int8_t)k);
    l_init(&q->room.waiters, L_QROOM, (int8_t)k);
    q->cap = cap;
    q->free_slots = cap;
    m->name[M_NAME_Q + k] = 0;   /* the name went with the object */
    return STVM_OK;
}

/* stvm_queue_close: every later put is refused; the writers waiting for room are
 * released (ECLOSED), and the readers waiting too once nothing is left (EEOF), all made
 * ready without switching; then a higher one of them runs (the rule of the calls).
 * Closing twice answers ECLOSED and changes nothing. */
static int m_qclose(model *m, int k)
{
    mqueue *q = &m->q[k];
    if (q->closed)
        return STVM_ECLOSED;
    m->cov[COV_Q_CLOSED]++;
    answer(m, STVM_OK);
    q->closed = true;
    q_release(m, &q->room.waiters, COV_Q_CLOSE_RELEASES_WRITER);
    if (q_dry(m, q))
        q_release(m, &q->avail.waiters, COV_Q_CLOSE_RELEASES_READER);
    preempt_if_needed(m);
    return STVM_OK;
}

/* stvm_process_interrupt with a function that counts its runs: on the caller at once;
 * else a hand-off not yet taken goes back and that wait answers EINTR, a wait in progress
 * ends (EINTR, the process made runnable by the preemption rule), one committed to a
 * timed wait not yet begun finds it ending at once; the function runs when the process
 * next gets the processor (after the exit's start, for one terminated meanwhile). */
static int m_interrupt(model *m, int t)
{
    mproc *p = &m->p[t];
    if (!p->alive)
        return STVM_ESTATE;
    answer(m, STVM_OK);
    if (t == m->active) {
        m->cov[COV_INTR_SELF]++;
        p->intr_count++;
        return STVM_OK;
    }
    p->intr_pending++;
    if (has_handed(p)) {
        m->cov[COV_INTR_GIVEN_BACK]++;
        give_back(m, t);
        p->wait_end = W_INTERRUPTED;
        preempt_if_needed(m);   /* what it gave back may have woken a higher one */
    } else if (p->on && p->on->kind != L_RUNQ) {
        m->cov[COV_INTR_WAIT_ENDED]++;
        wait_end(m, t, W_INTERRUPTED);
        make_runnable(m, t);
    } else if (!p->on && p->wait_end == W_ABORTED) {
        /* suspended in a wait: it answers ESTATE when resumed */
    } else if (p->pinned) {
        p->eintr_next = true;
    }
    return STVM_OK;
}

/* A put: room in hand (or, from a process, waited for); from the host a full bounded
 * queue answers EAGAIN (it cannot wait: a try); a closed queue refuses it (ECLOSED). */
static int m_qput(model *m, const op *o)
{
    mqueue *q = &m->q[o->obj];
    if (q->closed) {
        m->cov[COV_Q_PUT_REFUSED]++;
        return STVM_ECLOSED;
    }
    if (!q_slot_try(q)) {
        if (m->active == M_HOST) {
            m->cov[COV_Q_EFULL]++;
            return STVM_EAGAIN;
        }
        m->cov[COV_Q_WRITER_WAITS]++;
        mproc *p = &m->p[m->active];
        p->call_obj = o->obj;
        p->call_item = o->item;
        p->label = "queue";
        block_on(m, &q->room.waiters, K_Q_PUT_WOKEN);
        return STVM_OK;
    }
    q_put_held(m, q, o->item);
    return STVM_OK;
}

/* flush: the items nobody was promised go, oldest first; each slot freed wakes a
 * writer, and a woken writer higher than the caller runs once all are gone. */
static int m_qflush(model *m, int k)
{
    mqueue *q = &m->q[k];
    int64_t n = q->avail.excess;
    if (n <= 0)
        return 0;
    q->avail.excess = 0;
    int from = q_handed(m, q);
    memmove(q->item + from, q->item + from + n, sizeof q->item[0] * (size_t)(q->n - from - n));
    q->n -= (int)n;
    answer(m, (int)n);
    for (int64_t i = 0; i < n; i++)
        q_slot_release(m, q, false);
    preempt_if_needed(m);
    return (int)n;
}

static int m_shared(model *m, const op *o)
{
    switch (o->kind) {
    case OP_QPUT:
        return m_qput(m, o);
    case OP_QFLUSH:
        return m_qflush(m, o->obj);
    case OP_QCLOSE:
        return m_qclose(m, o->obj);
    case OP_RENEW_QUEUE:
        return m_renew_queue(m, o->obj);
    case OP_INTERRUPT:
        return m_interrupt(m, o->obj);
    case OP_RENEW_SEM:
        return m_renew_sem(m, o->obj);
    case OP_RENEW_MUTEX:
        return m_renew_mutex(m, o->obj);
    case OP_RENEW_MON:
        return m_renew_mon(m);
    case OP_NAME:
        return m_name(m, o);
    case OP_SIGNAL:
        answer(m, STVM_OK);
        sem_signal(m, &m->sem[o->obj], true);
        return STVM_OK;
    case OP_SPAWN:
        return m_spawn(m, o);
    case OP_SUSPEND:
        return m_suspend(m, o->obj);
    case OP_RESUME:
        return m_resume(m, o->obj);
    case OP_TERMINATE:
        return m_terminate(m, o->obj);
    case OP_SET_PRIORITY:
        return m_set_priority(m, o->obj, o->prio);
    case OP_RELEASE:
        return m_release(m, o->obj);
    default:
        m->broken = "not a shared operation";
        return STVM_EINVAL;
    }
}

/* ---- the operations only a process may call ---------------------------------------- */

static void m_join(model *m, const op *o)
{
    int a = m->active, t = o->obj;
    mproc *p = &m->p[a], *tp = &m->p[t];
    int64_t us = 0;
    int rc = STVM_OK;
    if (o->dur < -1 || (tp->alive && t == a))
        rc = STVM_EINVAL;
    else if (!tp->held)
        rc = STVM_ESTATE;
    else if (o->dur > 0)
        rc = check_duration(m, o->dur, true, &us);
    if (rc != STVM_OK) {
        answer(m, rc);
        return;
    }
    p->call_obj = t;
    if (!tp->alive) {
        join_done(m, t, STVM_OK);
        answer(m, STVM_OK);
    } else if (o->dur == 0) {
        answer(m, STVM_ETIMEDOUT);
    } else if (o->dur > 0) {
        p->call_kind = TW_JOIN;
        p->call_dur_us = us;
        commit(m, a, &tp->joiners);
        p->cont = K_TW_START;
    } else {
        commit(m, a, &tp->joiners);
        block_on(m, &tp->joiners, K_J_WOKEN);
    }
}

/* Apply o, run by the active process (which is at K_ASK). */
static void m_green(model *m, const op *o)
{
    int a = m->active;
    mproc *p = &m->p[a];
    msem *s = &m->sem[o->obj < M_SEMS ? o->obj : 0];
    int x = o->obj < M_MUTEXES ? o->obj : 0;
    int x2 = o->obj < M_QUEUES ? o->obj : 0;
    int64_t us = 0;
    int rc;
    if (o->kind == OP_MENTER_TIMEOUT)
        x = M_MON_X;   /* the monitor's entry is a mutex: the same rule */
    switch (o->kind) {
    case OP_WAIT:   /* primitive 86: an excess signal, or the end of the waiting list */
        if (s->excess > 0) {
            s->excess--;
            answer(m, STVM_OK);
        } else {
            block_on(m, &s->waiters, K_WOKEN);
        }
        break;
    case OP_TRY_WAIT:   /* a try that finds nothing: EAGAIN (no time limit passed) */
        rc = s->excess > 0 ? STVM_OK : STVM_EAGAIN;
        if (rc == STVM_OK)
            s->excess--;
        answer(m, rc);
        break;
    case OP_WAIT_TIMEOUT:   /* a signal in hand is taken without a Delay */
        rc = check_duration(m, o->dur, !(o->flag & OPF_US), &us);
        if (rc == STVM_OK && s->excess > 0) {
            s->excess--;
        } else if (rc == STVM_OK) {
            p->call_kind = TW_SEM;
            p->call_obj = o->obj;
            p->call_dur_us = us;
            commit(m, a, &s->waiters);
            p->cont = K_TW_START;
            break;
        }
        answer(m, rc);
        break;
    case OP_ENTER:
        if (mutex_try(m, x))
            answer(m, STVM_OK);
        else
            block_on(m, &m->mx[x].waiters, K_WOKEN);
        break;
    case OP_EXIT:
        if (m->mx[x].owner != a) {
            answer(m, STVM_EPERM);
        } else if (--m->mx[x].depth > 0) {
            answer(m, STVM_OK);
        } else {
            answer(m, STVM_OK);
            int next = hand_off(m, x);
            if (next >= 0)
                make_runnable(m, next);
        }
        break;
    case OP_TRY_ENTER:
        answer(m, mutex_try(m, x) ? STVM_OK : STVM_EAGAIN);
        break;
    case OP_ENTER_TIMEOUT:   /* 0 ms only tries; no Delay when the try succeeds */
    case OP_MENTER_TIMEOUT:
        rc = check_duration(m, o->dur, true, &us);
        if (rc == STVM_OK && !mutex_try(m, x)) {
            if (o->dur == 0) {
                rc = STVM_ETIMEDOUT;
            } else {
                if (x == M_MON_X)
                    m->cov[COV_MON_ENTER_TIMED_WAITS]++;
                p->call_kind = TW_MUTEX;
                p->call_obj = x;
                p->call_dur_us = us;
                commit(m, a, &m->mx[x].waiters);
                p->cont = K_TW_START;
                break;
            }
        }
        answer(m, rc);
        break;
    case OP_YIELD:   /* events first; then behind its peers, or nothing */
        answer(m, STVM_OK);
        poll_events(m);
        if (m->runq[p->prio].n || highest(m) > p->prio) {
            runq_put(m, a, true);
            switch_to(m, pop_highest(m));
        }
        break;
    case OP_CHECKPOINT:   /* the answer is read when it runs again, as the VM reads it */
        poll_events(m);
        p->rc = highest(m) > p->prio ? 1 : 0;
        p->cont = K_CHECKPOINTED;
        preempt_if_needed(m);
        break;
    case OP_DELAY:
        rc = check_duration(m, o->dur, !(o->flag & OPF_US), &us);
        if (rc != STVM_OK) {
            answer(m, rc);
        } else {
            p->call_dur_us = us;
            p->cont = K_D_START;
        }
        break;
    case OP_JOIN:
        m_join(m, o);
        break;
    case OP_ENSURE:
        p->ens[p->n_ens++] = (mcleanup){.id = m->next_cleanup_id++,
                                        .kind = (o->flag & OPF_LOOP) ? CL_LOOP : CL_LOG};
        answer(m, STVM_OK);
        break;
    case OP_ENSURE_POP:   /* the newest cleanup goes, run first if asked */
        if (!p->n_ens) {
            answer(m, STVM_ESTATE);
        } else if (o->flag & OPF_RUN) {
            p->fr[p->n_fr++] = (mframe){.c = p->ens[--p->n_ens], .kind = FR_POP};
            p->cont = K_CLEANUP;
        } else {
            p->n_ens--;
            answer(m, STVM_OK);
        }
        break;
    case OP_QTAKE:   /* an excess signal (the first unpromised item), the end, or wait */
        if (m->q[x2].avail.excess > 0) {
            m->q[x2].avail.excess--;
            q_take(m, &m->q[x2], false);
        } else if (q_dry(m, &m->q[x2])) {
            m->cov[COV_Q_EOF]++;
            answer(m, STVM_EEOF);
        } else {
            if (m->q[x2].closed)
                m->cov[COV_Q_WAIT_BEHIND_PROMISE]++;
            p->call_obj = x2;
            p->label = "queue";
            block_on(m, &m->q[x2].avail.waiters, K_Q_TAKE_WOKEN);
        }
        break;
    case OP_DWAIT:       /* Pharo's Delay>>wait: the length checked first, then the state */
    case OP_DSCHEDULE:   /* Delay>>schedule */
        rc = check_duration(m, m->dobj_len[o->obj], o->obj == 0, &us);
        if (rc != STVM_OK) {
            answer(m, rc);
        } else if (dobj_scheduled(m, o->obj)) {
            m->cov[COV_DOBJ_ESTATE]++;
            answer(m, STVM_ESTATE);
        } else {
            p->call_kind = o->kind == OP_DWAIT;
            p->call_obj = o->obj;
            p->call_dur_us = us;
            p->in_dobj = o->kind == OP_DWAIT ? o->obj + 1 : 0;
            p->cont = K_DO_START;
        }
        break;
    case OP_DUNSCHEDULE:   /* out of the scheduler; a waiter stays waiting */
        if (dobj_scheduled(m, o->obj)) {
            if (m->dobj[o->obj].own.waiters.n)
                m->cov[COV_DOBJ_UNSCHEDULED_BY_OTHER]++;
            delay_unschedule(m, M_PROCS + o->obj);
        }
        answer(m, STVM_OK);
        break;
    case OP_QTRY_TAKE:   /* nothing now: EAGAIN, or EEOF when nothing ever will be */
        if (m->q[x2].avail.excess > 0) {
            m->q[x2].avail.excess--;
            q_take(m, &m->q[x2], false);
        } else {
            answer(m, q_dry(m, &m->q[x2]) ? STVM_EEOF : STVM_EAGAIN);
        }
        break;
    case OP_QTAKE_TIMEOUT:   /* the duration checked first; no Delay when an item is there */
    case OP_QPUT_TIMEOUT:
        rc = check_duration(m, o->dur, true, &us);
        if (rc != STVM_OK) {
            answer(m, rc);
        } else if (o->kind == OP_QPUT_TIMEOUT && m->q[x2].closed) {
            m->cov[COV_Q_PUT_REFUSED]++;
            answer(m, STVM_ECLOSED);
        } else if (o->kind == OP_QTAKE_TIMEOUT && m->q[x2].avail.excess > 0) {
            m->q[x2].avail.excess--;
            q_take(m, &m->q[x2], false);
        } else if (o->kind == OP_QTAKE_TIMEOUT && q_dry(m, &m->q[x2])) {
            m->cov[COV_Q_EOF]++;
            answer(m, STVM_EEOF);
        } else if (o->kind == OP_QPUT_TIMEOUT && q_slot_try(&m->q[x2])) {
            q_put_held(m, &m->q[x2], o->item);
        } else if (o->dur == 0) {
            answer(m, STVM_ETIMEDOUT);
        } else {
            p->call_kind = o->kind == OP_QTAKE_TIMEOUT ? TW_QTAKE : TW_QPUT;
            p->call_obj = x2;
            p->call_item = o->item;
            p->call_dur_us = us;
            commit(m, a, o->kind == OP_QTAKE_TIMEOUT ? &m->q[x2].avail.waiters : &m->q[x2].room.waiters);
            p->cont = K_TW_START;
        }
        break;
    /* The monitor m0: its entry is mutex M_MON_X (FIFO, hand-off on the last exit). */
    case OP_MENTER:
        if (mutex_try(m, M_MON_X)) {
            answer(m, STVM_OK);
        } else {
            if (!p->cancelled)
                m->cov[COV_MON_ENTER_WAITS]++;
            block_on(m, &m->mx[M_MON_X].waiters, K_WOKEN);
        }
        break;
    case OP_MTRY_ENTER:
        answer(m, mutex_try(m, M_MON_X) ? STVM_OK : STVM_EAGAIN);
        break;
    case OP_MEXIT:
        if (m->mx[M_MON_X].owner != a) {
            answer(m, STVM_EPERM);
        } else if (--m->mx[M_MON_X].depth > 0) {
            answer(m, STVM_OK);
        } else {
            answer(m, STVM_OK);
            int next = hand_off(m, M_MON_X);
            if (next >= 0)
                make_runnable(m, next);
        }
        break;
    case OP_MWAIT:   /* release whatever the depth and wait on the queue in one step */
        if (m->mx[M_MON_X].owner != a) {
            answer(m, STVM_EPERM);
            break;
        }
        p->mon_depth = m->mx[M_MON_X].depth;
        commit(m, a, &m->monq[o->obj]);
        if (p->cancelled)   /* the wait answers EINTR at once: nothing released */
            m->cov[COV_MON_WAIT_EINTR_KEPT]++;
        else
            mon_release(m);
        block_on(m, &m->monq[o->obj], K_MW_WOKEN);
        break;
    case OP_MWAIT_TIMEOUT:   /* the duration first, then the owner; 0 ms keeps it */
        rc = check_duration(m, o->dur, true, &us);
        if (rc == STVM_OK && m->mx[M_MON_X].owner != a)
            rc = STVM_EPERM;
        if (rc == STVM_OK && o->dur == 0)
            rc = STVM_ETIMEDOUT;
        if (rc != STVM_OK) {
            answer(m, rc);
            break;
        }
        p->mon_depth = m->mx[M_MON_X].depth;
        p->call_kind = TW_MONQ;
        p->call_obj = o->obj;
        p->call_dur_us = us;
        commit(m, a, &m->monq[o->obj]);
        p->cont = K_TW_START;
        break;
    case OP_MSIGNAL:   /* signal_on(1) with nobody on queue 1: the default queue's first */
        if (m->mx[M_MON_X].owner != a) {
            answer(m, STVM_EPERM);
        } else {
            int q = o->obj && m->monq[o->obj].n ? o->obj : 0;
            if (o->obj && !q && m->monq[0].n)
                m->cov[COV_MON_SIGNAL_ON_FALLBACK]++;
            mon_signal(m, q);
        }
        break;
    case OP_MSIGNAL_ALL:
        if (m->mx[M_MON_X].owner != a) {
            answer(m, STVM_EPERM);
        } else {
            /* signal_all_on(1) and signal_really_all: queue 0 first, then queue 1 (the
             * other queues are never waited on here) */
            p->call_rc = 0;
            p->call_obj = 0;
            p->call_item = o->obj ? 1 : 0;
            p->cont = K_MON_SIGALL;
        }
        break;
    case OP_RETURN:   /* the body returns (the process exits) or the cleanup ends */
        if (p->n_fr)
            end_frame(m);
        else
            p->cont = K_EXIT;
        break;
    default:   /* answered OK before anything switches; errors change nothing; a count
                * (flush) is answered before its switch */
        answer(m, STVM_OK);
        rc = m_shared(m, o);
        if (rc < 0)
            answer(m, rc);
        break;
    }
}

/* A host operation other than OP_RUN: answers its result. */
static int m_host(model *m, const op *o)
{
    if (o->kind == OP_MISUSE)
        return misuse_rc[o->obj];
    return m_shared(m, o);
}

/* stvm_run: events first, then the highest runnable process gets the processor. */
static void m_run_start(model *m)
{
    poll_events(m);
    switch_to(m, pop_highest(m));
}

/* The driver saw the cleanup on top of the active process's frames start. */
static void m_cleanup_started(model *m)
{
    mproc *p = &m->p[m->active];
    if (p->fr[p->n_fr - 1].c.kind == CL_LOG) {
        end_frame(m);
    } else {
        p->cont = K_ASK;
        p->rc = M_RC_NONE;
    }
}

/* ---- names ----------------------------------------------------------------------------- */

static const char *rc_name(int rc)
{
    static char buf[4][16];
    static int k;
    if (rc == M_RC_NONE)
        return "(start)";
    if (rc <= 0)
        return stvm_err_name(rc);
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%d", rc);
    return buf[k];
}

/* What an operation answered: checkpoint and signal answer 1 or 0, not codes. */
static const char *answer_name(int kind, int rc)
{
    if ((kind == OP_CHECKPOINT || kind == OP_MSIGNAL) && (rc == 0 || rc == 1))
        return rc ? "1" : "0";
    if (kind == OP_MSIGNAL_ALL && rc >= 0 && rc < M_ITEM_RC)   /* how many it woke */
        return rc == 0 ? "0" : rc_name(rc);
    if (rc > M_ITEM_RC) {   /* a take: the item it got */
        static char buf[4][24];
        static int k;
        k = (k + 1) % 4;
        snprintf(buf[k], sizeof buf[k], "item %d", rc - M_ITEM_RC);
        return buf[k];
    }
    return rc_name(rc);
}

static void op_text(const op *o, char *buf, size_t n)
{
    const char *us = (o->flag & OPF_US) ? "us" : "ms";
    long long d = (long long)o->dur;
    switch (o->kind) {
    case OP_WAIT: snprintf(buf, n, "stvm_semaphore_wait(sem%d)", o->obj); break;
    case OP_TRY_WAIT: snprintf(buf, n, "stvm_semaphore_try_wait(sem%d)", o->obj); break;
    case OP_WAIT_TIMEOUT:
        snprintf(buf, n, "stvm_semaphore_wait_timeout_%s(sem%d, %lld)", us, o->obj, d);
        break;
    case OP_ENTER: snprintf(buf, n, "stvm_mutex_enter(mx%d)", o->obj); break;
    case OP_EXIT: snprintf(buf, n, "stvm_mutex_exit(mx%d)", o->obj); break;
    case OP_TRY_ENTER: snprintf(buf, n, "stvm_mutex_try_enter(mx%d)", o->obj); break;
    case OP_ENTER_TIMEOUT: snprintf(buf, n, "stvm_mutex_enter_timeout_ms(mx%d, %lld)", o->obj, d); break;
    case OP_YIELD: snprintf(buf, n, "stvm_yield()"); break;
    case OP_CHECKPOINT: snprintf(buf, n, "stvm_checkpoint()"); break;
    case OP_DELAY: snprintf(buf, n, "stvm_delay_wait_%s(%lld)", us, d); break;
    case OP_JOIN: snprintf(buf, n, "stvm_process_join(s%d, %lld)", o->obj, d); break;
    case OP_ENSURE:
        snprintf(buf, n, "stvm_ensure(%s cleanup)", (o->flag & OPF_LOOP) ? "a looping" : "a logging");
        break;
    case OP_ENSURE_POP:
        snprintf(buf, n, "stvm_ensure_pop(%s)", (o->flag & OPF_RUN) ? "true" : "false");
        break;
    case OP_RETURN: snprintf(buf, n, "return"); break;
    case OP_QTAKE: snprintf(buf, n, "stvm_queue_take(q%d)", o->obj); break;
    case OP_DWAIT: snprintf(buf, n, "stvm_delay_wait(d%d)", o->obj); break;
    case OP_DSCHEDULE: snprintf(buf, n, "stvm_delay_schedule(d%d)", o->obj); break;
    case OP_DUNSCHEDULE: snprintf(buf, n, "stvm_delay_unschedule(d%d)", o->obj); break;
    case OP_QTRY_TAKE: snprintf(buf, n, "stvm_queue_try_take(q%d)", o->obj); break;
    case OP_MENTER: snprintf(buf, n, "stvm_monitor_enter(m0)"); break;
    case OP_MTRY_ENTER: snprintf(buf, n, "stvm_monitor_try_enter(m0)"); break;
    case OP_MEXIT: snprintf(buf, n, "stvm_monitor_exit(m0)"); break;
    case OP_MWAIT:
        if (o->obj)
            snprintf(buf, n, "stvm_monitor_wait_on(m0, %d)", o->obj);
        else
            snprintf(buf, n, "stvm_monitor_wait(m0)");
        break;
    case OP_MWAIT_TIMEOUT:
        if (o->obj)
            snprintf(buf, n, "stvm_monitor_wait_on_timeout_ms(m0, %d, %lld)", o->obj, d);
        else
            snprintf(buf, n, "stvm_monitor_wait_timeout_ms(m0, %lld)", d);
        break;
    case OP_MSIGNAL:
        if (o->obj)
            snprintf(buf, n, "stvm_monitor_signal_on(m0, %d)", o->obj);
        else
            snprintf(buf, n, "stvm_monitor_signal(m0)");
        break;
    case OP_MSIGNAL_ALL:
        if (o->obj == 1)
            snprintf(buf, n, "stvm_monitor_signal_all_on(m0, 1)");
        else
            snprintf(buf, n, "stvm_monitor_signal_%s(m0)", o->obj ? "really_all" : "all");
        break;
    case OP_MENTER_TIMEOUT: snprintf(buf, n, "stvm_monitor_enter_timeout_ms(m0, %lld)", d); break;
    case OP_QTAKE_TIMEOUT: snprintf(buf, n, "stvm_queue_take_timeout_ms(q%d, %lld)", o->obj, d); break;
    case OP_QPUT_TIMEOUT:
        snprintf(buf, n, "stvm_queue_put_timeout_ms(q%d, item %d, %lld)", o->obj, (int)o->item, d);
        break;
    case OP_QPUT: snprintf(buf, n, "stvm_queue_put(q%d, item %d)", o->obj, (int)o->item); break;
    case OP_QFLUSH: snprintf(buf, n, "stvm_queue_flush(q%d)", o->obj); break;
    case OP_QCLOSE: snprintf(buf, n, "stvm_queue_close(q%d)", o->obj); break;
    case OP_RENEW_QUEUE:
        snprintf(buf, n, "stvm_queue_free(q%d), and if freed stvm_queue_new", o->obj);
        break;
    case OP_INTERRUPT: snprintf(buf, n, "stvm_process_interrupt(s%d, count)", o->obj); break;
    case OP_SIGNAL: snprintf(buf, n, "stvm_semaphore_signal(sem%d)", o->obj); break;
    case OP_SPAWN:
        snprintf(buf, n, "%s(s%d, priority %d%s)",
                 (o->flag & OPF_SUSPENDED) ? "stvm_spawn_suspended" : "stvm_spawn", o->obj,
                 o->prio, (o->flag & OPF_HELD) ? ", handle held" : ", no handle");
        break;
    case OP_SUSPEND: snprintf(buf, n, "stvm_process_suspend(s%d)", o->obj); break;
    case OP_RESUME: snprintf(buf, n, "stvm_process_resume(s%d)", o->obj); break;
    case OP_TERMINATE: snprintf(buf, n, "stvm_process_terminate(s%d)", o->obj); break;
    case OP_SET_PRIORITY:
        snprintf(buf, n, "stvm_process_set_priority(s%d, %d)", o->obj, o->prio);
        break;
    case OP_RELEASE: snprintf(buf, n, "stvm_process_release(s%d)", o->obj); break;
    case OP_RENEW_SEM:
        snprintf(buf, n, "stvm_semaphore_free(sem%d), and if freed stvm_semaphore_new", o->obj);
        break;
    case OP_RENEW_MUTEX:
        snprintf(buf, n, "stvm_mutex_free(mx%d), and if freed stvm_mutex_new", o->obj);
        break;
    case OP_RENEW_MON: snprintf(buf, n, "stvm_monitor_free(m0), and if freed stvm_monitor_new"); break;
    case OP_NAME: {
        static const char *const what[] = {"semaphore", "semaphore", "semaphore", "mutex", "mutex",
                                           "queue", "queue", "monitor", "delay", "delay"};
        static const char *const obj[] = {"sem0", "sem1", "sem2", "mx0", "mx1",
                                          "q0", "q1", "m0", "d0", "d1"};
        _Static_assert(sizeof what / sizeof what[0] == M_NAMED, "a word per named object");
        if (o->obj >= 0 && o->obj < M_NAMED)
            snprintf(buf, n, "stvm_%s_set_name(%s, name %d)", what[o->obj], obj[o->obj], o->prio);
        break;
    }
    case OP_RUN: snprintf(buf, n, "stvm_run()"); break;
    case OP_MISUSE: snprintf(buf, n, "%s", misuse_name[o->obj]); break;
    default: snprintf(buf, n, "op %d", o->kind); break;
    }
}

static const char *state_name(int st)
{
    static const char *const names[] = {"ACTIVE", "READY", "WAITING", "SUSPENDED", "TERMINATED"};
    return st >= 0 && st <= 4 ? names[st] : "?";
}

#endif
