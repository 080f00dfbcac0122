/*
 * delays.c -- three processes sleeping on Delays, printed as a timeline.
 *
 * The VM runs on the simulated clock: time stands still while a process runs and jumps
 * straight to the next deadline when every process sleeps. The program therefore ends
 * at once, prints the same timeline on every run, and each wake-up is exactly on time.
 *
 * What to look for:
 *  - at 200, 300, 400 and 600 ms several delays end in the same timing pass; the
 *    woken processes then run in priority order (sampler 50, logger 40, ticker 30),
 *    not in the order their delays were scheduled;
 *  - the Delay scheduler is a process too ("Delay Scheduling Process", priority 80): it
 *    starts on the first delay and hands each expired Delay's semaphore a signal;
 *  - the counters at the end: one schedule request and one expiry per wait.
 */
#include <stdio.h>
#include <stvm.h>

typedef struct sleeper {
    const char *name;
    int priority;
    int period_ms;
    int rounds;
} sleeper;

static uint64_t t_start;   /* the VM clock when the first process started */

static void say(stvm_vm *vm, const sleeper *s, const char *what)
{
    uint64_t ms = (stvm_vm_now_us(vm) - t_start) / 1000;
    printf("%5llu ms  %-8s (priority %d)  %s\n", (unsigned long long)ms, s->name,
           s->priority, what);
}

static void sleeper_main(stvm_vm *vm, void *arg)
{
    const sleeper *s = arg;
    char what[64];
    say(vm, s, "starts");
    for (int i = 1; i <= s->rounds; i++) {
        /* The request preempts us (the timing process is at 80); we then block on the
         * Delay's semaphore until the timing process signals it. */
        int err = stvm_delay_wait_ms(vm, s->period_ms);
        if (err != STVM_OK) {
            fprintf(stderr, "delay: %s\n", stvm_strerror(err));
            return;
        }
        snprintf(what, sizeof what, "woke (%d of %d, every %d ms)", i, s->rounds,
                 s->period_ms);
        say(vm, s, what);
    }
}

int main(void)
{
    static const sleeper sleepers[] = {
        {"ticker", 30, 100, 6},    /* 100, 200, ..., 600 */
        {"sampler", 50, 150, 4},   /* 150, 300, 450, 600 */
        {"logger", 40, 200, 3},    /* 200, 400, 600 */
    };
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.sim_start_us = 3603398400000000ull;   /* 2015-03-10 00:00 UTC, in us since 1901 */
    stvm_vm *vm;
    int err = stvm_vm_create(&cfg, &vm);
    if (err != STVM_OK) {
        fprintf(stderr, "stvm_vm_create: %s\n", stvm_strerror(err));
        return 1;
    }
    t_start = stvm_vm_now_us(vm);
    for (size_t i = 0; i < sizeof sleepers / sizeof sleepers[0]; i++) {
        const sleeper *s = &sleepers[i];
        err = stvm_spawn(vm, s->priority, s->name, sleeper_main, (void *)s, NULL);
        if (err != STVM_OK) {
            fprintf(stderr, "stvm_spawn: %s\n", stvm_strerror(err));
            return 1;
        }
    }
    puts("timeline (simulated clock, ms since the start):");
    err = stvm_run(vm);
    if (err != STVM_OK) {
        fprintf(stderr, "stvm_run: %s\n", stvm_strerror(err));
        return 1;
    }
    stvm_stats st;
    stvm_vm_get_stats(vm, &st);
    printf("simulated time elapsed: %llu ms\n",
           (unsigned long long)((stvm_vm_now_us(vm) - t_start) / 1000));
    printf("delays scheduled %llu, expired %llu; timing-loop passes %llu; "
           "context switches %llu\n",
           (unsigned long long)st.delays_scheduled, (unsigned long long)st.delays_expired,
           (unsigned long long)st.timing_loop_passes, (unsigned long long)st.context_switches);
    stvm_vm_free(vm);
    /* Every wake-up was exactly on time, so the run ends at the last one: 600 ms. */
    return st.delays_expired == 13 ? 0 : 1;
}
