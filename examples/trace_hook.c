/* trace_hook.c: streaming a VM's scheduler events into your own tooling. A hook sees
 * every event as it is recorded (here: switches printed live, every kind counted); the
 * ring keeps the newest events for the writers (here: the text timeline at the end).
 * On the simulated clock, so the output is the same on every run. */
#include <stdio.h>
#include <stvm.h>

typedef struct tally {
    uint64_t start_us;
    long kinds[STVM_TRACE_KINDS];
} tally;

/* Runs inside the scheduler: it may not call into the VM (stvm_vm_now_us and
 * stvm_trace_kind_name excepted) and must not block. */
static void on_event(stvm_vm *vm, const stvm_trace_event *ev, void *arg)
{
    tally *t = arg;
    (void)vm;
    t->kinds[ev->kind]++;
    if (ev->kind == STVM_TRACE_SWITCH)
        printf("live %5llu us  process %llu -> %llu\n",
               (unsigned long long)(ev->time_us - t->start_us), (unsigned long long)ev->process,
               (unsigned long long)ev->object);
}

static void producer(stvm_vm *vm, void *arg)
{
    for (int i = 0; i < 3; i++) {
        stvm_delay_wait_ms(vm, 1);
        stvm_semaphore_signal(vm, arg);   /* wakes the consumer, which preempts us */
    }
}

static void consumer(stvm_vm *vm, void *arg)
{
    for (int i = 0; i < 3; i++)
        stvm_semaphore_wait(vm, arg);
}

int main(void)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    stvm_vm *vm;
    stvm_semaphore *sem;
    if (stvm_vm_create(&cfg, &vm) != STVM_OK || stvm_semaphore_new(vm, &sem) != STVM_OK)
        return 1;
    tally t = {.start_us = stvm_vm_now_us(vm)};
    int err = stvm_trace_set_hook(vm, on_event, &t);
    if (!err)
        err = stvm_trace_start(vm, 1024);
    if (!err)
        err = stvm_spawn(vm, 50, "consumer", consumer, sem, NULL);
    if (!err)
        err = stvm_spawn(vm, 40, "producer", producer, sem, NULL);
    if (!err)
        err = stvm_run(vm);
    if (!err)
        err = stvm_trace_stop(vm);
    if (err) {
        fprintf(stderr, "trace_hook: %s\n", stvm_strerror(err));
        return 1;
    }
    printf("\nevents by kind:\n");
    for (int k = 0; k < STVM_TRACE_KINDS; k++)
        if (t.kinds[k])
            printf("  %-16s %ld\n", stvm_trace_kind_name(k), t.kinds[k]);
    printf("\n");
    err = stvm_trace_write_text(vm, stdout);
    stvm_semaphore_free(vm, sem);
    stvm_vm_free(vm);
    return err ? 1 : 0;
}
