/* Running a helper program (nginx, wrk) as a child: finding it, what every such child
 * does between fork and exec, and a bounded wait. */
#ifndef STVM_HARNESS_CHILD_H
#define STVM_HARNESS_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The program into out: `given` when not NULL, else `name` in PATH, else `fallback`
 * (Debian's path). True when that file is an executable regular file. */
bool harness_child_find(char *out, size_t size, const char *given, const char *name,
                      const char *fallback);

/* In the child of a fork from `parent`: die with the parent (a killed tool leaves
 * nothing running), stdin from in_fd (-1: /dev/null), stdout and stderr to out_fd, no
 * other descriptor, exec argv[0] (a path). Never returns: 127 when the parent is
 * already gone or the exec fails. Async-signal-safe. */
__attribute__((noreturn)) void harness_child_exec(pid_t parent, int in_fd, int out_fd,
                                                char *const argv[]);

/* Wait up to ms for the child pid to end. True once it is reaped (or is no child of
 * ours); *status (may be NULL) set when reaped here. Async-signal-safe: 5 ms naps. */
bool harness_child_wait(pid_t pid, int ms, int *status);

#endif
