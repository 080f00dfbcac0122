/*
 * Zinc's client log events (ZnLogEvent and the events ZnClient emits) on the announcer,
 * with what building one costs in Pharo made a knob.
 *
 * In Pharo (Zinc-HTTP, Pharo 6 and 7), ZnClient>>executeRequestResponse writes the
 * request, then at log level 3 builds and emits a ZnRequestWrittenEvent, the only event
 * between sending and reading; then it reads the response, emits a ZnResponseReadEvent
 * (level 3) and a ZnClientTransactionEvent (level 2 and up; a simplified one at level
 * 1). Building an event is `ZnLogEvent new`: an allocation, `timestamp := DateAndTime
 * now` (a clock read and some arithmetic) and `id := IdCounter := IdCounter + 1`.
 * Emitting is `ZnLogEvent announcer announce: self`, on one Announcer for the whole
 * image, made on first use. ZnClient's default level is 3 (loggingOn).
 *
 * Here the class side (that announcer, the id counter) is a zn_log the caller makes for
 * a VM and keeps (no globals, and the VM has no hook for it); the client's side is a
 * zn_client_log (its level and clientId). The three step functions below are
 * ZnClient's logRequestWrittenStarted:, logResponseReadStarted: and
 * logClientTransactionRequestDuration:responseDuration:, which ZnClient calls at every
 * level (they also answer the step's duration).
 *
 * Durations are microseconds of the VM clock, read without counting a clock read
 * (Pharo's are milliseconds of primitive 135). Events other than these three
 * (connection established or closed, retries, redirects) are not built, but
 * stvm__zn_log_emit can build any ZnLogEvent class.
 */
#ifndef STVM_IMAGE_STUBS_ZN_LOG_H
#define STVM_IMAGE_STUBS_ZN_LOG_H

#include "../announcements/announcer.h"

/* ---- the classes ------------------------------------------------------------------------
 * Announcement > ZnLogEvent > ZnClientLogEvent > { ZnRequestWrittenEvent,
 * ZnResponseReadEvent, ZnClientTransactionEvent, ZnSimplifiedClientTransactionEvent } */
extern const announcement_class stvm__zn_log_event_class;
extern const announcement_class stvm__zn_client_log_event_class;
extern const announcement_class stvm__zn_request_written_class;
extern const announcement_class stvm__zn_response_read_class;
extern const announcement_class stvm__zn_client_transaction_class;
extern const announcement_class stvm__zn_simplified_client_transaction_class;

/* ---- the events -------------------------------------------------------------------------- */

/* What the request and the response contribute to an event. The strings are the
 * caller's: an event borrows them, so they must outlive the step's call. */
typedef struct zn_request_info {
    const char *method;             /* "GET" */
    const char *uri;                /* "/index.html" */
    uint64_t bytes;                 /* bytes written for the request */
} zn_request_info;

typedef struct zn_response_info {
    int status;                     /* the status code, 200 */
    uint64_t bytes;                 /* the entity's content length, 0 without one */
} zn_response_info;

/* One log event. Which fields mean something depends on the class:
 *  - every event: timestamp_us, id, client_id;
 *  - request written: request, duration_us (writing the request);
 *  - response read: response, duration_us (reading the response);
 *  - transaction (both kinds): request, response, request_us, response_us, and
 *    duration_us = request_us + response_us.
 * A subscriber sees it only during its callback: copy what it keeps. */
typedef struct zn_log_event {
    announcement ann;               /* first: the class (one of the above) */
    uint64_t timestamp_us;          /* DateAndTime now: the VM clock (primitive 240)
                                       when the event was built */
    uint64_t id;                    /* ZnLogEvent nextId: 1, 2, ... per zn_log */
    uint64_t client_id;             /* the client's clientId option; 0 for nil */
    zn_request_info request;
    zn_response_info response;
    uint64_t duration_us;
    uint64_t request_us, response_us;
} zn_log_event;

/* ---- the class side ------------------------------------------------------------------- */

/* ZnLogEvent's class variables for one VM: the announcer (LogEventAnnouncer, made on
 * first use), the id counter (IdCounter) and the construction-cost knob. */
typedef struct zn_log zn_log;

typedef struct zn_log_stats {
    uint64_t events_built;          /* events constructed (each: one allocation, one
                                       clock read, the cost) */
    uint64_t events_emitted;        /* of those, announced */
    uint64_t cost_spent_us;         /* CPU the knob burnt, as measured (see below) */
    bool has_announcer;             /* the announcer was made (first emit or ask) */
    announcer_stats announcer;      /* its counters, zero before it exists */
} zn_log_stats;

/* Longest construction cost: 1 s per event, what one stvm_work_us call computes. */
#define ZN_LOG_MAX_COST_US STVM_MAX_WORK_US

/* A zn_log for vm: no announcer yet, the counter at 0, cost 0. From the host or a
 * process. Errors: EINVAL, ENOMEM. Allocates (malloc). The caller owns it and frees it
 * before stvm_vm_free. */
int stvm__zn_log_new(stvm_vm *vm, zn_log **out);

/* Free it with its announcer. Errors: EINVAL, EINUSE (see stvm__announcer_free:
 * nothing freed). Never switches. */
int stvm__zn_log_free(stvm_vm *vm, zn_log *log);

/* The CPU each event's construction spends, standing for Pharo's `DateAndTime now`
 * and the allocation (tens of microseconds on a 2017 machine). Errors: EINVAL (NULL),
 * ERANGE (above ZN_LOG_MAX_COST_US). */
int stvm__zn_log_set_construction_cost_us(zn_log *log, uint64_t us);

/* ZnLogEvent class>>announcer: the announcer, made on first use. Subscribe to it to
 * receive the events. Errors: EINVAL, ENOMEM. Allocates the first time. */
int stvm__zn_log_announcer(stvm_vm *vm, zn_log *log, announcer **out);

/* Copy the counters (the announcer's too, if it exists). log must be live. */
void stvm__zn_log_get_stats(const zn_log *log, zn_log_stats *out);

/* ---- the client's side ------------------------------------------------------------------ */

#define ZN_LOG_OFF 0                /* loggingOff: no event is built at all */
#define ZN_LOG_SIMPLIFIED 1         /* a ZnSimplifiedClientTransactionEvent per request */
#define ZN_LOG_TRANSACTIONS 2       /* a ZnClientTransactionEvent per request */
#define ZN_LOG_ALL 3                /* loggingOn (the default): request written, response
                                       read and transaction: three per request */

/* What ZnClient keeps for logging. */
typedef struct zn_client_log {
    int level;                      /* ZN_LOG_* (ZnClient's logLevel) */
    uint64_t client_id;             /* the clientId option; 0 for nil */
} zn_client_log;

/* The steps share these rules. They are called from a green process, at every level.
 * An event, when the level asks for one, is built (cost, clock read, id, allocation),
 * filled, announced and freed; announcing runs every subscriber's callback in this
 * process first (switches: subscribers may wait). If the process is terminated in the
 * middle, the event is freed for it. Errors: EINVAL (NULLs, a level outside 0..3, a log
 * of another VM), ENOTPROC, ENOMEM (the event, the announcer, a 31-bit VM's clock box),
 * and those of stvm__announce; when an error comes back, no event was announced. */

/* logRequestWrittenStarted:, called right after the request was written (started_us:
 * the VM clock before writing). At level 3, a request-written event. *duration_us is
 * now - started_us, read after the event was built and before it is announced (as
 * Pharo reads it), so it counts the construction cost but not the subscribers. */
int stvm__zn_log_request_written(stvm_vm *vm, zn_log *log, const zn_client_log *c,
                                 uint64_t started_us, const zn_request_info *req,
                                 uint64_t *duration_us);

/* logResponseReadStarted:, right after the response was read; the same for a
 * response-read event. */
int stvm__zn_log_response_read(stvm_vm *vm, zn_log *log, const zn_client_log *c,
                               uint64_t started_us, const zn_response_info *resp,
                               uint64_t *duration_us);

/* logClientTransactionRequestDuration:responseDuration:, after the response-read step:
 * level 0 nothing, level 1 a simplified transaction event, 2 and 3 a transaction event. */
int stvm__zn_log_client_transaction(stvm_vm *vm, zn_log *log, const zn_client_log *c,
                                    const zn_request_info *req, uint64_t request_us,
                                    const zn_response_info *resp, uint64_t response_us);

/* Build an event of cls (ZnLogEvent or a subclass: EINVAL otherwise) with the fields of
 * *fields past id (client_id, request, response and the durations), and announce it:
 * `(cls new) ...; emit` for an event no step above builds. No level check. Errors as
 * the steps. */
int stvm__zn_log_emit(stvm_vm *vm, zn_log *log, const announcement_class *cls,
                      const zn_log_event *fields);


#endif
