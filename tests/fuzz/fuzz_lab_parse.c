/*
 * fuzz_lab_parse: stvm-lab's scenario files (lab/parse.c, docs/scenario-format.md), the
 * lab's one input format. Any bytes: the parser accepts, or refuses with a reason that
 * names the file, a line and a column ("input:LINE:COL: "); nothing leaks either way.
 * A file it accepts is then played (lab/play.c) with small limits, and its expected
 * answer checked (lab/expect.c): whatever the steps do (wrong states, deadlocks, waits
 * nobody ends), the run ends, cleanly, in one of the four outcomes, and a failed step's
 * message names the file, a line and a column too. mk/fuzz.mk links the lab's three
 * files with this one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lab/lab.h"

/* "input:LINE:COL: " with LINE and COL at least 1. */
static bool names_a_place(const char *why)
{
    unsigned line = 0, col = 0;
    int n = 0;
    return strncmp(why, "input:", 6) == 0 && sscanf(why + 6, "%u:%u: %n", &line, &col, &n) == 2 &&
           n > 0 && line >= 1 && col >= 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lab_scenario s;
    char why[1024];
    if (!lab_parse((const char *)data, size, "input", &s, why, sizeof why)) {
        if (!names_a_place(why)) {
            fprintf(stderr, "stvm-fuzz: CHECK FAILED: a refusal names no place: %s\n", why);
            abort();
        }
        return 0;
    }
    /* Small limits keep an input within the fuzzer's time: a few hundred steps, a few
     * processes, five simulated seconds. */
    lab_limits lim = {.max_steps = 300, .max_spawns = 16, .horizon_us = 5000000};
    /* Sanitized frames need more than the default 16 KiB (fuzz_common.h's FZ_STACK: a
     * libFuzzer timer signal that lands on a green stack found the limit), and AUTO
     * guards depend on the kernel. */
    s.cfg.stack_size = (size_t)64 * 1024;
    s.cfg.stack_guard_method = STVM_GUARD_MPROTECT;
    lab_run r;
    if (lab_play(&s, &lim, 256, &r, why, sizeof why)) {
        if (r.outcome > LAB_FAILED)
            abort();
        if (r.outcome == LAB_FAILED && strncmp(r.error, "input", 5) != 0) {
            fprintf(stderr, "stvm-fuzz: CHECK FAILED: a failed run's message names no file: %s\n",
                    r.error);
            abort();
        }
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        if (out) {
            lab_expect_check(&s, "input", &r, out);
            fclose(out);
            free(text);
        }
        lab_run_free(&r);
    }
    lab_scenario_free(&s);
    return 0;
}
