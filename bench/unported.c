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

/* (ffi) */

const bench_command ffi_command = {
    "ffi", "C calls through libffi: same-thread callouts against a bare ffi_call, threaded "
           "callouts and callbacks, and a ticker's ticks while blocking calls run",
    "Its options are not in this page yet: 'stvm-bench ffi --help' lists them.", NULL, 0,
    "the traced cell's scheduler events"};

/* (zn) */

const bench_command zn_command = {
    "zn", "the ZnClient experiment: a ZnClient-shaped client in the VM against a real "
          "nginx with logging off, on, and on with a subscriber, beside wrk -t1 -c1",
    "Its options are not in this page yet: 'stvm-bench zn --help' lists them.", NULL, 0,
    "the traced cell's scheduler events"};
