/*
 * Delay objects: Pharo's Delay instances (Delay>>wait, schedule, unschedule,
 * isExpired, beingWaitedOn, millisecondsToGo, delaySemaphore, and the class side's
 * timeoutSemaphore:afterMSecs:), made once and used again, by any process.
 *
 * A Delay object holds the same delay record a stvm_delay_wait_ms keeps on its
 * caller's stack, so it goes through the one Delay scheduler (request queue, timing
 * process, heap) in every timestamp representation; the record's `sem` points
 * at the object's semaphore, which its expiry signals. Nothing here is on the path of
 * stvm_delay_wait_ms.
 *
 * What follows Pharo and what does not (docs/delay-scheduling.md, "Delay objects"):
 *  - Delay>>schedule refuses a Delay that is beingWaitedOn ('This Delay has already
 *    been scheduled.'): STVM_ESTATE. Here "being waited on" starts when the request is
 *    queued, not when the timing process takes it, so two requests can never race.
 *  - Delay>>unschedule only takes it out of the scheduler; a waiter stays waiting.
 *  - Delay>>wait is schedule, then a wait on the semaphore, unscheduling if curtailed
 *    (ifCurtailed:). A curtailed wait here unschedules the Delay only if the scheduling
 *    it made is still the pending one: after an unschedule by another process and a new
 *    schedule by someone else, it leaves that one alone (Pharo would cancel it).
 */
#include "../../vm/objmem.h"
#include "../../scheduler/timer.h"
#include "delay.h"

/* ---- making and freeing -------------------------------------------------------- */

static bool scheduled(const stvm_delay *o)
{
    return o->d.state == D_REQUESTED || o->d.state == D_SCHEDULED;
}

/* For the trace: a Delay's own semaphore goes by the Delay's name ("tick.semaphore"). */
static void trace_members(stvm_vm *vm, const void *obj)
{
    const stvm_delay *o = obj;
    if (o->own_sem)
        stvm__trace_member(vm, o->sem, o, STVM_TRACE_LABEL_DELAY, "semaphore");
}

/* The semaphore is pinned while the Delay exists, so stvm_semaphore_free refuses it. */
static int make(stvm_vm *vm, int64_t duration, bool from_ms, stvm_semaphore *given,
                stvm_delay **out)
{
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    stvm_delay *o = stvm__objmem_alloc(vm, STVM_CLASS_DELAY, sizeof *o);
    if (!o)
        return STVM_ENOMEM;
    o->head.vm = vm;
    o->sem = given;
    if (!given) {
        if (stvm_semaphore_new(vm, &o->sem) != STVM_OK) {
            stvm__objmem_free(vm, o);
            stvm__alloc_forget(vm, mark);
            return STVM_ENOMEM;
        }
        o->own_sem = true;
    }
    stvm__list_pin(&o->sem->list);
    o->d.duration = duration;
    o->d.from_ms = from_ms;
    o->d.sem = o->sem;
    o->d.state = D_IDLE;
    vm->trace_members[STVM_CLASS_DELAY] = trace_members;
    if (vm->trace)
        trace_members(vm, o);
    *out = o;
    return STVM_OK;
}

static int delay_new(stvm_vm *vm, int64_t duration, bool from_ms, stvm_delay **out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    /* Pharo checks only the sign here (DelayTest>>testBounds): a length the scheduler
     * cannot hold is refused when the Delay is scheduled. */
    return duration < 0 ? STVM_EINVAL : make(vm, duration, from_ms, NULL, out);
}

int stvm_delay_new_ms(stvm_vm *vm, int64_t ms, stvm_delay **out)
{
    return delay_new(vm, ms, true, out);
}

int stvm_delay_new_us(stvm_vm *vm, int64_t us, stvm_delay **out)
{
    return delay_new(vm, us, false, out);
}

int stvm_delay_free(stvm_vm *vm, stvm_delay *o)
{
    if (!vm || !stvm__is_delay(vm, o))
        return STVM_EINVAL;
    if (scheduled(o) || o->users)
        return STVM_EINUSE;
    stvm_semaphore *s = o->sem;
    /* Our pin is the only one, nobody waits, and nothing else refers to it. */
    if (o->own_sem && (s->list.first || s->list.pins != 1 || s->external_index ||
                       stvm__timer_uses(vm, s)))
        return STVM_EINUSE;
    s->list.pins--;
    if (o->own_sem)
        stvm__objmem_free(vm, s);
    stvm__objmem_free(vm, o);
    return STVM_OK;
}

/* ---- scheduling ------------------------------------------------------------------- */

/* A process inside a call on the Delay that may switch: the Delay cannot be freed under
 * it, and if it is terminated there its guard undoes what it did. */
typedef struct user {
    stvm_wait_guard guard;
    stvm_delay *o;
    stvm_proc *p;
} user;

/* The waiter's scheduling is still the pending one: take it out (Pharo's ifCurtailed:
 * unschedule). */
static void unschedule_own(stvm_vm *vm, stvm_delay *o, stvm_proc *p)
{
    if (scheduled(o) && o->d.process == p)
        stvm__delay_unschedule(vm, vm->delay.state, &o->d);
}

static void user_abandon(stvm_vm *vm, stvm_wait_guard *g)
{
    user *u = STVM_CONTAINER(g, user, guard);
    u->p->wait_label = STVM_WL_NONE;
    u->p->wait_on_kind = STVM_WAIT_ON_NOTHING;
    unschedule_own(vm, u->o, u->p);
    u->o->users--;
}

static void user_enter(stvm_vm *vm, stvm_delay *o, user *u)
{
    *u = (user){.guard.undo = user_abandon, .o = o, .p = vm->active};
    o->users++;
    stvm__wait_guard_push(vm, &u->guard);
}

static void user_leave(stvm_vm *vm, user *u)
{
    stvm__wait_guard_pop(vm, &u->guard);
    u->o->users--;
}

/* The checks of a schedule, then the scheduler (started on first use, which lets other
 * processes run: hence the state is looked at after it). */
static int prepare(stvm_vm *vm, stvm_delay *o, delay_sched **ds)
{
    int err = stvm__check_duration(vm, o->d.duration, o->d.from_ms);
    if (err)
        return err;
    if (scheduled(o))
        return STVM_ESTATE;
    err = stvm__delay_scheduler(vm, ds);
    if (!err && scheduled(o))
        err = STVM_ESTATE;
    return err;
}

int stvm_delay_schedule(stvm_vm *vm, stvm_delay *o)
{
    if (!vm || !stvm__is_delay(vm, o))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    user u;
    user_enter(vm, o, &u);
    delay_sched *ds;
    int err = prepare(vm, o, &ds);
    if (!err)
        err = stvm__delay_request_by(vm, ds, &o->d, NULL);
    user_leave(vm, &u);
    return err;
}

int stvm_delay_unschedule(stvm_vm *vm, stvm_delay *o)
{
    if (!vm || !stvm__is_delay(vm, o))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    if (scheduled(o))
        stvm__delay_unschedule(vm, vm->delay.state, &o->d);
    return STVM_OK;
}

int stvm_delay_wait(stvm_vm *vm, stvm_delay *o)
{
    if (!vm || !stvm__is_delay(vm, o))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    stvm_proc *me = vm->active;
    user u;
    user_enter(vm, o, &u);
    delay_sched *ds;
    int err = prepare(vm, o, &ds);
    if (!err && !(err = stvm__delay_request_by(vm, ds, &o->d, me))) {
        me->wait_label = STVM_WL_DELAY;
        me->wait_on_kind = STVM_WAIT_ON_DELAY;   /* the listing shows the Delay itself */
        me->wait_on = o;
        err = stvm__sem_wait(vm, o->sem);
        me->wait_label = STVM_WL_NONE;
        me->wait_on_kind = STVM_WAIT_ON_NOTHING;
        if (err)
            unschedule_own(vm, o, me);
    }
    user_leave(vm, &u);
    return err;
}

/* A semaphore pinned while its caller may be switched away (starting the scheduler),
 * so that nobody frees it meanwhile; a terminate there unpins it. */
typedef struct pin {
    stvm_wait_guard guard;
    stvm_list *l;
} pin;

static void pin_abandon(stvm_vm *vm, stvm_wait_guard *g)
{
    (void)vm;
    STVM_CONTAINER(g, pin, guard)->l->pins--;
}

int stvm_delay_timeout_semaphore_ms(stvm_vm *vm, stvm_semaphore *sem, int64_t ms, stvm_delay **out)
{
    if (!vm || !stvm__is_sem(vm, sem) || !out)
        return STVM_EINVAL;
    int err = stvm__check_duration(vm, ms, true);
    if (err)
        return err;
    /* The scheduler first: starting it lets others run, and nothing is made yet. */
    delay_sched *ds;
    pin p = {.guard.undo = pin_abandon, .l = &sem->list};
    stvm__list_pin(p.l);
    stvm__wait_guard_push(vm, &p.guard);
    err = stvm__delay_scheduler(vm, &ds);
    stvm__wait_guard_pop(vm, &p.guard);
    p.l->pins--;
    if (err)
        return err;
    stvm_delay *o;
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    if ((err = make(vm, ms, true, sem, &o)))
        return err;
    if ((err = stvm__delay_request_by(vm, ds, &o->d, NULL))) {
        stvm_delay_free(vm, o);   /* a failed call changes nothing */
        stvm__alloc_forget(vm, mark);
        return err;
    }
    *out = o;
    return STVM_OK;
}

/* ---- asking ------------------------------------------------------------------------- */

int stvm_delay_is_expired(stvm_vm *vm, const stvm_delay *o)
{
    if (!vm || !stvm__is_delay(vm, o))
        return STVM_EINVAL;
    return o->sem->excess_signals > 0;
}

int stvm_delay_being_waited_on(stvm_vm *vm, const stvm_delay *o)
{
    if (!vm || !stvm__is_delay(vm, o))
        return STVM_EINVAL;
    return scheduled(o);
}

/* Microseconds until o expires (>= 0), on the scheduler's own clock. */
static int64_t us_to_go(stvm_vm *vm, const stvm_delay *o)
{
    const delay *d = &o->d;
    if (d->state == D_REQUESTED)
        return d->from_ms ? d->duration * 1000 : d->duration;
    delay_sched *ds = vm->delay.state;
    stvm_oop key = d->state == D_SCHEDULED && ds ? stvm__delay_key(ds, d) : STVM_NIL;
    int64_t at;
    if (key == STVM_NIL || stvm_int_to_i64(vm, key, &at) != STVM_OK)
        return 0;
    uint64_t now = stvm__clock_now_us(vm);
    int64_t left;
    if (ds->ms) {
        /* In ticks of the millisecond clock, as the timing loop sees it: a wrap it has
         * not yet seen (keys not yet moved back) counts one period more. */
        int64_t tick = stvm__clock_ms_at(vm, now);
        if (ds->last_tick != STVM_NIL && tick < stvm__si_value(ds->last_tick))
            tick += (int64_t)STVM_MS_CLOCK_MASK + 1;
        left = (at - tick) * 1000 - (int64_t)(now - stvm__clock_tick_start_us(vm, now));
    } else {
        left = at - (int64_t)now;
    }
    return left > 0 ? left : 0;
}

int stvm_delay_us_to_go(stvm_vm *vm, const stvm_delay *o, int64_t *out)
{
    if (!vm || !stvm__is_delay(vm, o) || !out)
        return STVM_EINVAL;
    *out = us_to_go(vm, o);
    return STVM_OK;
}

int stvm_delay_ms_to_go(stvm_vm *vm, const stvm_delay *o, int64_t *out)
{
    if (!vm || !stvm__is_delay(vm, o) || !out)
        return STVM_EINVAL;
    *out = (us_to_go(vm, o) + 999) / 1000;
    return STVM_OK;
}

stvm_semaphore *stvm_delay_semaphore(stvm_delay *o)
{
    const stvm_delay_head *h = (const stvm_delay_head *)o;
    return h && h->hdr.class_index == STVM_CLASS_DELAY ? o->sem : NULL;
}
