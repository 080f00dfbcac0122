/*
 * stvm-bench: the commands not yet on the option table (options.h), as --help and
 * --man list them until their porter replaces each entry with the command's own table
 * (delete your block here; the blocks are kept apart so the deletions merge cleanly).
 */
#include "bench.h"


/* (io) */

const bench_command io_command = {
    "io", "loopback TCP ping-pong per idle mode, and many connections to an echo server in "
          "the VM: round trips, CPU, wake-ups, memory",
    "Its options are not in this page yet: 'stvm-bench io --help' lists them.", NULL, 0,
    "the traced cell's scheduler events"};
