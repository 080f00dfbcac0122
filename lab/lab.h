/*
 * stvm-lab: scenarios that each teach one scheduling rule with a timeline. Every
 * scenario runs on the simulated clock from the same start, so its trace is the same
 * on every run and machine (tests/lab/ holds the expected outputs).
 */
#ifndef STVM_LAB_H
#define STVM_LAB_H

#include <stvm.h>

typedef struct lab_scenario {
    const char *name;
    const char *summary;        /* one line, for `stvm-lab list` */
    const char *setup;          /* what runs, shown before the reader predicts */
    const char *question;
    const char *rule;           /* what the timeline shows, and the scheduler's line */
    void (*config)(stvm_config *cfg);   /* NULL: the defaults */
    stvm_fn main;               /* spawned at priority 40 as "main" */
} lab_scenario;

/* The scenarios, ended by a zeroed entry. */
extern const lab_scenario lab_scenarios[];

/* Spawn a process or stop the lab: a scenario that cannot set itself up is a bug. */
void lab_spawn(stvm_vm *vm, int priority, const char *name, stvm_fn fn, void *arg);
/* Fail loudly on an unexpected error. */
void lab_check(int err, const char *what);

#endif
