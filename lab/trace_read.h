/*
 * Reading back a Trace Event JSON file that stvm wrote (stvm_trace_write_json: stvm-lab
 * run --trace, stvm-bench --trace) into lanes, spans and marks, for `stvm-lab show` and
 * the HTML page. The JSON keeps what the writer made of the events (each process's
 * states as slices, the instants, the run queue's length), not every event: the kinds
 * that change no state and make no instant (created, sem-wait, mutex-enter, timer-armed,
 * delay-scheduled, ...) are not in it, so neither are they here.
 */
#ifndef STVM_LAB_TRACE_READ_H
#define STVM_LAB_TRACE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A span's state: the writer's slice names; LAB_NAMED is a slice named otherwise (a
 * socket wait, a callout: its name says which), LAB_OS_SLEEP an "os sleep" (X) slice. */
enum { LAB_RUNNING, LAB_READY, LAB_WAITING, LAB_SLEEPING, LAB_SUSPENDED, LAB_NAMED,
       LAB_OS_SLEEP, LAB_STATES };

#define LAB_NAME_MAX 96

typedef struct lab_track {
    uint64_t tid;               /* the process id (0: the embedding thread) */
    char name[LAB_NAME_MAX];    /* "main#2"; "#tid" when the file names none */
} lab_track;

typedef struct lab_span {
    uint32_t track;             /* index into tracks */
    uint8_t state;              /* LAB_* */
    uint64_t seq0, seq1;        /* the events that began and ended it */
    uint64_t ns0, ns1;          /* ns from the trace's start */
    size_t order0, order1;      /* the entries' positions in the file */
    int64_t asked_us;           /* LAB_OS_SLEEP: the sleep asked (-1: no limit) */
    char name[LAB_NAME_MAX];
} lab_span;

typedef struct lab_mark {
    int64_t track;              /* index into tracks; -1: the whole VM (no process) */
    uint64_t seq, ns;
    size_t order;
    int64_t detail;
    char name[LAB_NAME_MAX];    /* "sem-signal sem1": the kind's name and its object */
} lab_mark;

typedef struct lab_count {      /* the "run queue" counter */
    uint64_t seq, ns;
    int64_t length;
} lab_count;

typedef struct lab_trace {
    lab_track *tracks;          /* by tid, ascending */
    size_t ntracks;
    lab_span *spans;            /* in the order they began */
    size_t nspans;
    lab_mark *marks;
    size_t nmarks;
    lab_count *counts;
    size_t ncounts;
    int64_t dropped, events;    /* otherData; -1 when absent */
    char clock[16];             /* "simulated", "real", or "" */
} lab_trace;

/* Read the file at path into *t (zeroed first). 0, or -1 with a message in err that
 * says what is wrong and where ("FILE:LINE:COLUMN: ..."); *t is then empty. */
int lab_trace_read(const char *path, lab_trace *t, char *err, size_t errsize);
/* The same from len bytes at text (need not be NUL-terminated); name is used in
 * messages. */
int lab_trace_parse(const char *text, size_t len, const char *name, lab_trace *t, char *err,
                    size_t errsize);
void lab_trace_free(lab_trace *t);

/* The name of a state, as the writer names its slices ("running", ...; "os sleep"). */
const char *lab_state_name(int state);
/* The track's name, or "host" for a mark of the whole VM (track -1). */
const char *lab_track_name(const lab_trace *t, int64_t track);

#endif
