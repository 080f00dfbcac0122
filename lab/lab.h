/*
 * stvm-lab: scenarios that each teach one scheduling rule with a timeline. A scenario is
 * a text file (docs/scenario-format.md): its texts, the VM's configuration, the objects,
 * the processes and their scripts, and the expected answer. Every scenario runs on the
 * simulated clock from the same start, so its trace is the same on every run and machine
 * (tests/lab/ holds the built-in ones' expected outputs).
 *
 * The pieces, one file each: parse.c reads a file into a lab_scenario, play.c runs one
 * on a fresh VM, expect.c checks its expected answer against the run's trace, main.c is
 * the command line.
 */
#ifndef STVM_LAB_H
#define STVM_LAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stvm.h>

#define LAB_SIM_START_US 3913056000000000ull   /* 2025-01-01 UTC, in us since 1901 */
#define LAB_NAME_MAX 32                        /* a name's bytes, its NUL included */

/* The objects a scenario declares. */
typedef enum lab_object_kind {
    LAB_SEMAPHORE, LAB_EXTERNAL, LAB_MUTEX, LAB_MONITOR, LAB_QUEUE, LAB_WIRE
} lab_object_kind;

typedef struct lab_object {
    char name[LAB_NAME_MAX];
    lab_object_kind kind;
    int64_t capacity;           /* a queue's; 0 unbounded */
    bool pharo;                 /* a monitor: Pharo's, transcribed (pharo_monitor.h) */
    int line, col;
} lab_object;

/* A step of a process's script. */
typedef enum lab_op {
    LAB_WAIT, LAB_SIGNAL, LAB_SIGNAL_ALL, LAB_ENTER, LAB_EXIT, LAB_PUT, LAB_TAKE,
    LAB_TRY_TAKE, LAB_PEEK, LAB_FLUSH, LAB_DELAY, LAB_WORK, LAB_CHECKPOINT, LAB_YIELD, LAB_SPAWN, LAB_SUSPEND, LAB_RESUME,
    LAB_TERMINATE, LAB_PRIORITY, LAB_INTERRUPT, LAB_JOIN, LAB_SEND, LAB_READ, LAB_OUTSIDE, LAB_REPEAT,
    LAB_ENSURE
} lab_op;

/* What an outside-world event does. */
typedef enum lab_outside_action { LAB_DATA, LAB_EXT_SIGNAL } lab_outside_action;

#define LAB_SELF (-1)            /* a step's target: the process running it */

typedef struct lab_step {
    lab_op op;
    int line, col;
    int target;                 /* an object's or process's index, or LAB_SELF */
    int64_t amount;             /* a duration as written, a repeat's count, a priority, a
                                   suspend's primitive (0: the C call) */
    bool in_ms;                 /* the duration was written in ms (else us) */
    int64_t timeout_ms;         /* -1: none */
    int queue;                  /* a monitor's condition queue ("on N"); -1: the default */
    lab_outside_action action;  /* LAB_OUTSIDE */
    int end;                    /* LAB_REPEAT, LAB_ENSURE: the index past its body */
} lab_step;

typedef struct lab_process {
    char name[LAB_NAME_MAX];
    int priority;
    bool starts;                /* started by the lab at the run's start */
    int64_t start;              /* then a Delay first, of this (as written) */
    bool start_in_ms;
    lab_step *steps;
    int nsteps;
    int line, col;
} lab_process;

/* An outside-world event the file places at a time from the start. */
typedef struct lab_outside {
    uint64_t at_us;
    lab_outside_action action;
    int target;
    int line, col;
} lab_outside;

/* The expected answer: assertions about the run's trace (expect.c). An event pattern
 * names a process, a trace event kind, and words the event must have. */
#define LAB_PATTERN_WORDS 4
typedef struct lab_pattern {
    char process[LAB_NAME_MAX];   /* a process's name, or idle, timing, host, any */
    int kind;                     /* stvm_trace_kind */
    char words[LAB_PATTERN_WORDS][LAB_NAME_MAX];
    int nwords;
    int line, col;
} lab_pattern;

typedef enum lab_assert_op { LAB_ORDER, LAB_COUNT, LAB_NEVER, LAB_AT, LAB_OUTCOME } lab_assert_op;

typedef struct lab_assert {
    lab_assert_op op;
    lab_pattern *patterns;
    int npatterns;
    int64_t number;             /* LAB_COUNT: the count; LAB_AT: us from the start;
                                   LAB_OUTCOME: 0 finished, 1 deadlock */
    char source[160];           /* the statement as written, for the explanation */
    int line, col;
} lab_assert;

typedef struct lab_scenario {
    char name[64];              /* the file's name without its folder and extension */
    char file[256];             /* the path it was read from, for messages */
    char *title, *setup, *question, *rule, *answer;   /* NULL when absent */
    stvm_config cfg;            /* the simulated clock and the file's settings */
    uint32_t cost_us[STVM_SIM_COST_OPS];   /* `cost` lines: stvm_sim_set_cost's */
    lab_object *objects;
    int nobjects;
    lab_process *processes;
    int nprocesses;
    lab_outside *outside;
    int noutside;
    lab_assert *asserts;
    int nasserts;
    bool has_expect;
} lab_scenario;

/* Parse text (len bytes, any bytes) read from file into *out. true, or false with
 * "FILE:LINE:COL: what was expected" in why and *out empty. Never aborts. */
bool lab_parse(const char *text, size_t len, const char *file, lab_scenario *out, char *why,
               size_t why_size);
/* Read the file at path and parse it. */
bool lab_load(const char *path, lab_scenario *out, char *why, size_t why_size);
void lab_scenario_free(lab_scenario *s);

/* How far a run may go: a file must not run the lab out of memory or time. */
typedef struct lab_limits {
    long max_steps;             /* steps executed, every process's together */
    int max_spawns;             /* processes spawned by steps */
    uint64_t horizon_us;        /* simulated time from the start: a step past it fails
                                   the run; with external semaphores the run stops
                                   there (nothing else would end a wait on one that
                                   nobody signals) */
} lab_limits;
#define LAB_LIMITS_DEFAULT {1000000, 1000, 600000000}

typedef enum lab_outcome { LAB_FINISHED, LAB_DEADLOCK, LAB_STOPPED, LAB_FAILED } lab_outcome;

typedef struct lab_run {
    stvm_vm *vm;                /* with the trace's ring, for the writers */
    lab_outcome outcome;
    char error[512];            /* LAB_FAILED: "FILE:LINE:COL: ..." */
    char blocked[1024];         /* LAB_DEADLOCK, LAB_STOPPED: who waits on what */
    const void **handles;       /* per object of the scenario: its handle, to name it */
    int *fds;                   /* per object: a wire's client descriptor, else -1 */
    void **owned;               /* per object: a record the run frees after the VM (a
                                   Pharo monitor's, whose exit a cleanup may still run) */
    size_t nowned;
} lab_run;

/* Run s on a fresh VM (simulated clock from LAB_SIM_START_US, a trace ring of
 * ring_events). true with r filled (free it with lab_run_free), false with why when the
 * VM could not be made. */
bool lab_play(const lab_scenario *s, const lab_limits *lim, size_t ring_events, lab_run *r,
              char *why, size_t why_size);
void lab_run_free(lab_run *r);

/* Check s's expected answer against r's trace: every assertion that does not hold is
 * explained on out ("FILE:LINE: ..."). The number that do not hold. */
int lab_expect_check(const lab_scenario *s, const char *file, const lab_run *r, FILE *out);

#endif
