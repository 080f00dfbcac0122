/*
 * pipeline.c -- OS threads feeding green consumers through a bounded SharedQueue, ended
 * by closing the queue: no poison pill.
 *
 * Four producer threads each put 20,000 numbered items into a queue of 32 places with
 * stvm_queue_put_external (a full queue makes the thread wait for room: backpressure).
 * Six green consumers, two at each of three priorities, take items and add them to a
 * total kept under a Monitor. The last producer to finish closes the queue
 * (stvm_queue_close_external, from its own thread): the consumers take what is left,
 * then every take answers STVM_EEOF and they return; stvm_run then answers STVM_OK
 * because no process is left. Priorities decide who takes first: the two consumers at
 * priority 50 take most items, those at 30 only what is left when the others wait.
 *
 * The output is the same on every run (how the items split between the consumers is
 * not: `pipeline -v` prints it). Exits 1 on a mismatch.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <stvm.h>

enum { PRODUCERS = 4, ITEMS = 20000, CAPACITY = 32, CONSUMERS = 6 };

typedef struct pipeline {
    stvm_queue *q;
    stvm_monitor *lock;   /* guards the three fields below */
    uint64_t taken, sum;
    long per_consumer[CONSUMERS];
    atomic_int producers_left;
    int errors;
} pipeline;

typedef struct producer {
    pipeline *p;
    int id;
} producer;

typedef struct consumer {
    pipeline *p;
    int index;
} consumer;

/* An item is its number, 1..PRODUCERS * ITEMS, carried in the pointer itself. */
static void *produce(void *arg)
{
    producer *me = arg;
    pipeline *p = me->p;
    for (uintptr_t i = 1; i <= ITEMS; i++) {
        int err = stvm_queue_put_external(p->q, (void *)(me->id * (uintptr_t)ITEMS + i), -1);
        if (err) {
            fprintf(stderr, "pipeline: producer %d: put: %s\n", me->id, stvm_strerror(err));
            break;   /* it still counts itself out below */
        }
    }
    /* The last one out closes: consumers then drain the queue and see its end. */
    if (atomic_fetch_sub(&p->producers_left, 1) == 1) {
        int err = stvm_queue_close_external(p->q);
        if (err)
            fprintf(stderr, "pipeline: close: %s\n", stvm_strerror(err));
    }
    return NULL;
}

static void consume(stvm_vm *vm, void *arg)
{
    consumer *me = arg;
    pipeline *p = me->p;
    void *item;
    int err;
    while ((err = stvm_queue_take(vm, p->q, &item)) == STVM_OK) {
        if ((err = stvm_monitor_enter(vm, p->lock)))
            break;
        p->taken++;
        p->sum += (uintptr_t)item;
        p->per_consumer[me->index]++;
        if ((err = stvm_monitor_exit(vm, p->lock)))
            break;
    }
    if (err != STVM_EEOF) {   /* the end of the queue is the one expected answer */
        fprintf(stderr, "pipeline: consumer %d: %s\n", me->index, stvm_strerror(err));
        p->errors++;
    }
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && !strcmp(argv[1], "-v");
    pipeline p = {.producers_left = PRODUCERS};
    stvm_vm *vm;
    int err = stvm_vm_create(NULL, &vm);
    if (!err)
        err = stvm_queue_new(vm, CAPACITY, &p.q);
    if (!err)
        err = stvm_queue_open_external(vm, p.q);   /* before any thread puts */
    if (!err)
        err = stvm_monitor_new(vm, &p.lock);
    if (!err)
        err = stvm_queue_set_name(vm, p.q, "jobs");   /* what a deadlock report would say */
    consumer consumers[CONSUMERS];
    static const int priorities[3] = {STVM_PRIORITY_USER_BACKGROUND,
                                      STVM_PRIORITY_USER_SCHEDULING,
                                      STVM_PRIORITY_USER_INTERRUPT};
    for (int i = 0; i < CONSUMERS && !err; i++) {
        consumers[i] = (consumer){.p = &p, .index = i};
        char name[16];
        snprintf(name, sizeof name, "consumer%d", i);
        err = stvm_spawn(vm, priorities[i / 2], name, consume, &consumers[i], NULL);
    }
    if (err) {
        fprintf(stderr, "pipeline: set-up: %s\n", stvm_strerror(err));
        return 1;
    }
    pthread_t threads[PRODUCERS];
    producer producers[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        producers[i] = (producer){.p = &p, .id = i};
        if (pthread_create(&threads[i], NULL, produce, &producers[i])) {
            fprintf(stderr, "pipeline: no thread\n");
            return 1;
        }
    }
    err = stvm_run(vm);   /* waits for the threads while the queue is open */
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(threads[i], NULL);
    const uint64_t n = (uint64_t)PRODUCERS * ITEMS;
    const uint64_t want_sum = n * (n + 1) / 2;
    printf("stvm_run answered %s\n", stvm_err_name(err));
    printf("%d threads put %llu items; the consumers took %llu, sum %llu (expected %llu)\n",
           PRODUCERS, (unsigned long long)n, (unsigned long long)p.taken,
           (unsigned long long)p.sum, (unsigned long long)want_sum);
    if (verbose)
        for (int i = 0; i < CONSUMERS; i++)
            printf("  consumer%d (priority %d) took %ld\n", i, priorities[i / 2],
                   p.per_consumer[i]);
    stvm_vm_free(vm);
    int ok = err == STVM_OK && p.taken == n && p.sum == want_sum && !p.errors;
    printf("%s\n", ok ? "ok: every item taken once, the queue's end seen by every consumer"
                      : "FAIL");
    return ok ? 0 : 1;
}
