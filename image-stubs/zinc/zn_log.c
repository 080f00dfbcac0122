/*
 * ZnLogEvent and ZnClient's logging steps (zn_log.h), and the busy CPU the construction
 * cost spends. An event is built as `ZnLogEvent new` is: allocated (malloc: object memory
 * has no class for it, and borrowing another class's index would let a primitive take
 * the event for that class), stamped with primitive 240 (the clock read of `DateAndTime
 * now`, which also boxes on a 31-bit VM), the knob's CPU, then the next id.
 */
#include <stdlib.h>

#include "../../primitives/prims.h"
#include "../../scheduler/sched.h"
#include "../../vm/integer.h"
#include "zn_log.h"
#include "../../vm/alloc.h"

const announcement_class stvm__zn_log_event_class = {"ZnLogEvent", &stvm__announcement_class};
const announcement_class stvm__zn_client_log_event_class = {"ZnClientLogEvent",
                                                            &stvm__zn_log_event_class};
const announcement_class stvm__zn_request_written_class = {"ZnRequestWrittenEvent",
                                                           &stvm__zn_client_log_event_class};
const announcement_class stvm__zn_response_read_class = {"ZnResponseReadEvent",
                                                         &stvm__zn_client_log_event_class};
const announcement_class stvm__zn_client_transaction_class = {"ZnClientTransactionEvent",
                                                              &stvm__zn_client_log_event_class};
const announcement_class stvm__zn_simplified_client_transaction_class = {
    "ZnSimplifiedClientTransactionEvent", &stvm__zn_client_log_event_class};

struct zn_log {
    stvm_vm *vm;
    announcer *an;              /* LogEventAnnouncer; NULL until first asked for */
    uint64_t id_counter;        /* IdCounter: the last id given */
    uint64_t cost_us;           /* construction cost per event */
    zn_log_stats stats;         /* has_announcer and announcer filled in on reading */
};

/* An event being built and announced, on the emitting process's stack. The guard
 * frees the event if the process is terminated in between (in a subscriber's Delay,
 * say): the frame that would have freed it vanishes then. */
typedef struct event_frame {
    stvm_wait_guard guard;
    zn_log_event *e;
} event_frame;

/* ---- the class side --------------------------------------------------------------------- */

int stvm__zn_log_new(stvm_vm *vm, zn_log **out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    zn_log *log = stvm__calloc(1, sizeof *log);
    if (!log)
        return STVM_ENOMEM;
    log->vm = vm;
    *out = log;
    return STVM_OK;
}

int stvm__zn_log_free(stvm_vm *vm, zn_log *log)
{
    if (!vm || !log || log->vm != vm)
        return STVM_EINVAL;
    if (log->an) {
        int err = stvm__announcer_free(vm, log->an);
        if (err)
            return err;
    }
    free(log);
    return STVM_OK;
}

int stvm__zn_log_set_construction_cost_us(zn_log *log, uint64_t us)
{
    if (!log)
        return STVM_EINVAL;
    if (us > ZN_LOG_MAX_COST_US)
        return STVM_ERANGE;
    log->cost_us = us;
    return STVM_OK;
}

int stvm__zn_log_announcer(stvm_vm *vm, zn_log *log, announcer **out)
{
    if (!vm || !log || log->vm != vm || !out)
        return STVM_EINVAL;
    if (!log->an) {
        int err = stvm__announcer_new(vm, &log->an);
        if (err)
            return err;
    }
    *out = log->an;
    return STVM_OK;
}

void stvm__zn_log_get_stats(const zn_log *log, zn_log_stats *out)
{
    *out = log->stats;
    out->has_announcer = log->an != NULL;
    if (log->an)
        stvm__announcer_get_stats(log->an, &out->announcer);
}

/* ---- building and emitting -------------------------------------------------------------- */

static void abandon(stvm_vm *vm, stvm_wait_guard *g)
{
    (void)vm;
    free(STVM_CONTAINER(g, event_frame, guard)->e);
}

static void frame_end(stvm_vm *vm, event_frame *f)
{
    stvm__wait_guard_pop(vm, &f->guard);
    free(f->e);
}

/* `cls new` for a ZnLogEvent class: allocate, stamp, spend the cost, take an id. The
 * event is f->e, guarded, until frame_end. ENOMEM. Switches (the cost's checkpoints). */
static int build(stvm_vm *vm, zn_log *log, const announcement_class *cls,
                 uint64_t client_id, event_frame *f)
{
    f->e = stvm__calloc(1, sizeof *f->e);
    if (!f->e)
        return STVM_ENOMEM;
    f->guard.undo = abandon;
    stvm__wait_guard_push(vm, &f->guard);
    stvm_oop now;
    int err = stvm__prim_us_clock(vm, &now);
    if (err) {
        frame_end(vm, f);
        return err;
    }
    f->e->ann.cls = cls;
    f->e->timestamp_us = (uint64_t)stvm__int_value(now);
    stvm__int_release(vm, now);
    uint64_t spent = 0;
    if (log->cost_us)
        stvm__work_us(vm, log->cost_us, &spent);   /* cannot fail: checked on setting */
    log->stats.cost_spent_us += spent;
    f->e->id = ++log->id_counter;
    f->e->client_id = client_id;
    log->stats.events_built++;
    return STVM_OK;
}

/* `emit`, then the event is garbage. */
static int emit_and_end(stvm_vm *vm, zn_log *log, event_frame *f)
{
    announcer *an;
    int err = stvm__zn_log_announcer(vm, log, &an);
    if (!err)
        err = stvm__announce(vm, an, &f->e->ann);
    if (!err)
        log->stats.events_emitted++;
    frame_end(vm, f);
    return err;
}

static int check(stvm_vm *vm, const zn_log *log, const zn_client_log *c)
{
    if (!vm || !log || log->vm != vm || !c || c->level < ZN_LOG_OFF || c->level > ZN_LOG_ALL)
        return STVM_EINVAL;
    return vm->active ? STVM_OK : STVM_ENOTPROC;
}

static uint64_t since(stvm_vm *vm, uint64_t started_us)
{
    uint64_t now = stvm__clock_now_us(vm);
    return now > started_us ? now - started_us : 0;
}

/* The two single-step events: at level 3 build one of cls, fill it from req or resp,
 * stamp the duration between building and emitting, as Pharo's steps do. */
static int step(stvm_vm *vm, zn_log *log, const zn_client_log *c, const announcement_class *cls,
                uint64_t started_us, const zn_request_info *req, const zn_response_info *resp,
                uint64_t *duration_us)
{
    int err = check(vm, log, c);
    if (err || !duration_us || (!req && !resp))
        return err ? err : STVM_EINVAL;
    if (c->level < ZN_LOG_ALL) {
        *duration_us = since(vm, started_us);
        return STVM_OK;
    }
    event_frame f;
    err = build(vm, log, cls, c->client_id, &f);
    if (err)
        return err;
    if (req)
        f.e->request = *req;
    if (resp)
        f.e->response = *resp;
    f.e->duration_us = *duration_us = since(vm, started_us);
    return emit_and_end(vm, log, &f);
}

int stvm__zn_log_request_written(stvm_vm *vm, zn_log *log, const zn_client_log *c,
                                 uint64_t started_us, const zn_request_info *req,
                                 uint64_t *duration_us)
{
    return step(vm, log, c, &stvm__zn_request_written_class, started_us, req, NULL,
                duration_us);
}

int stvm__zn_log_response_read(stvm_vm *vm, zn_log *log, const zn_client_log *c,
                               uint64_t started_us, const zn_response_info *resp,
                               uint64_t *duration_us)
{
    return step(vm, log, c, &stvm__zn_response_read_class, started_us, NULL, resp,
                duration_us);
}

int stvm__zn_log_client_transaction(stvm_vm *vm, zn_log *log, const zn_client_log *c,
                                    const zn_request_info *req, uint64_t request_us,
                                    const zn_response_info *resp, uint64_t response_us)
{
    int err = check(vm, log, c);
    if (err || !req || !resp)
        return err ? err : STVM_EINVAL;
    if (c->level == ZN_LOG_OFF)
        return STVM_OK;
    const announcement_class *cls = c->level == ZN_LOG_SIMPLIFIED
                                        ? &stvm__zn_simplified_client_transaction_class
                                        : &stvm__zn_client_transaction_class;
    event_frame f;
    err = build(vm, log, cls, c->client_id, &f);
    if (err)
        return err;
    f.e->request = *req;
    f.e->response = *resp;
    f.e->request_us = request_us;
    f.e->response_us = response_us;
    f.e->duration_us = request_us + response_us;
    return emit_and_end(vm, log, &f);
}

int stvm__zn_log_emit(stvm_vm *vm, zn_log *log, const announcement_class *cls,
                      const zn_log_event *fields)
{
    if (!vm || !log || log->vm != vm || !fields ||
        !stvm__announcement_is(&(announcement){cls}, &stvm__zn_log_event_class))
        return STVM_EINVAL;
    if (!vm->active)
        return STVM_ENOTPROC;
    event_frame f;
    int err = build(vm, log, cls, fields->client_id, &f);
    if (err)
        return err;
    f.e->request = fields->request;
    f.e->response = fields->response;
    f.e->duration_us = fields->duration_us;
    f.e->request_us = fields->request_us;
    f.e->response_us = fields->response_us;
    return emit_and_end(vm, log, &f);
}
