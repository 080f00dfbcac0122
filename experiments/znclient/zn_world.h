/*
 * The ZnClient experiment: the world around the client. Three kinds:
 *  - real: TCP to a real nginx on loopback, the wall clock; a recorder (zn_record.c) may
 *    write down what the outside world did for each request;
 *  - model: the simulated clock, a server on the other end of a socketpair whose answer
 *    comes a modelled turnaround after the request left, a modelled wake-up cost after
 *    every simulated OS sleep, and the client's own CPU as modelled work (zn_sim.c);
 *  - replay: the same simulated world driven by a recording instead of a model.
 * The client, the scheduler and the Delay machinery are the same in all three; only what
 * stands around them changes.
 */
#ifndef STVM_ZNCLIENT_WORLD_H
#define STVM_ZNCLIENT_WORLD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "internal.h"

#include "zn_measure.h"

/* ---- a recording ------------------------------------------------------------------ */

/* One OS sleep of a recorded request: what was asked, what it took, what ended it
 * (STVM_TRACE_END_*), and its wake-up cost: how long after the moment it could have
 * ended (the answer's arrival, or the time asked) it did. */
typedef struct zn_rec_sleep {
    int64_t asked_us;               /* -1: no limit */
    int64_t took_ns, late_ns;
    int end;
} zn_rec_sleep;

/* One recorded request, every span in ns of the wall clock. The client's own CPU is
 * what the spans hold beyond the modelled work the configuration asks for (the event
 * costs, the subscriber, the work knobs), which a replay runs itself. */
typedef struct zn_rec_request {
    int64_t gap_ns;                 /* the previous response's end to this send, less
                                       its modelled work (the after steps, before_us) */
    int64_t send_ns;                /* writing and flushing the request */
    int64_t answer_ns;              /* the flush's return to the answer's arrival (the
                                       kernel's receive timestamp); 0 if it came sooner */
    int64_t between_ns;             /* the flush's return to the first read, less the
                                       request-written step's modelled work */
    int64_t wakepath_ns;            /* blocked: the last wake-up to the first bytes read */
    int64_t parse_ns;               /* the first bytes to the whole response */
    bool blocked;                   /* the first read found nothing and waited */
    bool timed;                     /* one of the timed requests (not the warm-up) */
    bool stamped;                   /* the arrival is the kernel's timestamp (else the
                                       moment the client saw it) */
    int nsleeps;
    zn_rec_sleep *sleeps;
} zn_rec_request;

/* One configuration's repetition as it ran: its knobs, its figures, its requests. */
typedef struct zn_rec_cell {
    zn_config cfg;
    int repetition;                 /* 1-based */
    double rps, blocked_first;      /* what the run measured (its timed part) */
    long long nrequests, ntimed;
    zn_rec_request *requests;
} zn_rec_cell;

typedef struct zn_recording {
    zn_rec_cell *cells;
    int ncells, cap;
} zn_recording;

/* The recorder's state for one configuration's VM (zn_record.c). */
typedef struct zn_recorder zn_recorder;

/* A recorder for a VM that runs on the wall clock; NULL when out of memory. */
zn_recorder *zn_recorder_new(const zn_config *cfg);
/* Hook it into the VM's trace (OS sleeps, socket waits: a ring must be recording, which
 * zn_run.c starts) and the client's world: STVM_OK or stvm_trace_set_hook's error. */
int zn_recorder_attach(zn_recorder *r, stvm_vm *vm, zn_client_world *world);
/* The timed part begins at the next request. */
void zn_recorder_mark_timed(zn_recorder *r);
/* Append the cell (its repetition and the run's figures) to f; false on a write error. */
bool zn_recorder_write(zn_recorder *r, FILE *f, int repetition, double rps,
                       double blocked_first);
/* How many arrivals had no kernel timestamp (the client's own sight stood in). */
long long zn_recorder_unstamped(const zn_recorder *r);
void zn_recorder_free(zn_recorder *r);

/* Write one cell in the recording format (a "cell" line of its knobs and figures, a
 * "q" line per request, "end"); false on a write error. */
bool zn_recording_write_cell(FILE *f, const zn_rec_cell *cell);
/* Read a recording file: true, or false with a sentence (file and line) in why and
 * nothing kept. */
bool zn_recording_read(const char *path, zn_recording *out, char *why, size_t whysize);
/* The same from an open stream, named name in why (the fuzzer's memory stream). */
bool zn_recording_parse(FILE *f, const char *name, zn_recording *out, char *why,
                        size_t whysize);
void zn_recording_free(zn_recording *rec);
/* The first line every recording begins with. */
#define ZN_RECORDING_MAGIC "stvm-bench zn recording 1"

/* ---- the simulated world ------------------------------------------------------------ */

/* What one simulated configuration counted beside the VM's own statistics. */
typedef struct zn_sim_counts {
    uint64_t sleeps, slept_us;      /* the idle process's jumps and their time (wake-ups
                                       included) */
    uint64_t ends[8];               /* by STVM_TRACE_END_* */
    uint64_t unmatched;             /* replay: jumps beyond the recorded request's sleeps */
} zn_sim_counts;

typedef struct zn_sim zn_sim;

/* A simulated world for one configuration's VM: the model cfg names (its server_us,
 * server_jitter_us, client_us and wake_inject_us; the spread drawn from seed) when rec
 * is NULL, else the recorded cell rec. NULL when out of memory. */
zn_sim *zn_sim_new(const zn_config *cfg, uint32_t seed, const zn_rec_cell *rec);
/* Hook it into the VM (the wake-up cost) and the client's world (dial, the points). */
void zn_sim_attach(zn_sim *s, stvm_vm *vm, zn_client_world *world);
const zn_sim_counts *zn_sim_counts_of(const zn_sim *s);
void zn_sim_free(zn_sim *s);

/* ---- the configuration's modelled work ------------------------------------------------- */

/* The modelled work (us) of a configuration's request-written step (between the send
 * and the first read) and of its other two steps with the after and before work
 * (between a response and the next send): what a recording takes out of its spans and
 * a replay puts back. */
uint64_t zn_modelled_between_us(const zn_config *cfg);
uint64_t zn_modelled_gap_us(const zn_config *cfg);

#endif
