/*
 * stvm-bench: the commands not yet on the option table (options.h), as --help and
 * --man list them until their porter replaces each entry with the command's own table
 * (delete your block here; the blocks are kept apart so the deletions merge cleanly).
 */
#include "bench.h"


const bench_command delay_command = {
    "delay", "Pharo's DelayBenchmark: delays per second against concurrency for each Delay "
             "timestamp representation",
    "Its options are not in this page yet: 'stvm-bench delay --help' lists them.", NULL, 0,
    "the traced cell's scheduler events"};

/* (io) */

const bench_command io_command = {
    "io", "loopback TCP ping-pong per idle mode, and many connections to an echo server in "
          "the VM: round trips, CPU, wake-ups, memory",
    "Its options are not in this page yet: 'stvm-bench io --help' lists them.", NULL, 0,
    "the traced cell's scheduler events"};

/* (ffi) */

const bench_command ffi_command = {
    "ffi", "C calls through libffi: same-thread callouts against a bare ffi_call, threaded "
           "callouts and callbacks, and a ticker's ticks while blocking calls run",
    "Its options are not in this page yet: 'stvm-bench ffi --help' lists them.", NULL, 0,
    "the traced cell's scheduler events"};
