/*
 * Running a helper program (nginx, wrk) as a child of the tool: the part every such
 * child does between fork and exec, written once.
 */
#ifndef STVM_BENCH_CHILD_H
#define STVM_BENCH_CHILD_H

#include <sys/types.h>

/* In the child of a fork from `parent`: die with the parent (a killed tool leaves
 * nothing running), read stdin from /dev/null, write stdout and stderr to out_fd, keep
 * no other descriptor, and exec argv[0] (a path) with argv. Never returns: 127 when
 * the parent is already gone or the exec fails. Async-signal-safe. */
__attribute__((noreturn)) void bench_child_exec(pid_t parent, int out_fd, char *const argv[]);

#endif
