/*
 * thread_pool.c -- a pool of OS threads feeding green workers through a bounded
 * SharedQueue, and the workers stopped with an interrupt (docs/embedding.md,
 * "Producer/consumer with a thread pool").
 *
 * Four OS threads each make 500 jobs and put them into a queue of 16 places with
 * stvm_queue_put_external: when the queue is full a thread waits for room on the
 * queue's condition variable, not in the VM (backpressure). Two green workers take the
 * jobs, check each thread's jobs arrive in order, and add them up. A supervisor process
 * waits until every job is done, then interrupts each worker. The interrupt function
 * runs inside the worker and sets its stop flag; a worker waiting on the empty queue
 * also has its take answer STVM_EINTR with nothing taken. The flag is what stops it: a
 * worker that was not waiting (the one that did the last job was only preempted) runs
 * the function at its next scheduling point and would otherwise wait in its next take
 * for ever. stvm_run waits for the threads meanwhile (the queue is open for them), so an
 * empty queue is not a deadlock.
 *
 * The output is the same on every run; how the jobs split between the workers and how
 * often a thread found the queue full vary, and are not printed. Exits 1 on a mismatch.
 *
 *   thread_pool              the run above
 *   thread_pool --soak S     the same pool under load for S seconds (make soak,
 *                            scripts/soak.sh): the threads make jobs until then, the
 *                            supervisor prints "soak: items=N" (jobs done so far) every
 *                            second, waits for the last job, then stops the workers;
 *                            the same checks, and one "summary:" line
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stvm.h>

enum { THREADS = 4, JOBS_PER_THREAD = 500, CAPACITY = 16, WORKERS = 2 };

typedef struct job {
    int thread, seq;
    long value;
} job;

typedef struct pool {
    int soak_seconds;             /* 0: the jobs above; else make jobs for this long */
    atomic_bool stop;             /* soak: the threads make no more jobs */
    atomic_int running;           /* soak: threads still making jobs */
    atomic_long made, made_sum;   /* soak: the jobs made, and their values' sum */
    stvm_queue *q;
    stvm_semaphore *all_done;     /* signalled once, by the worker that does the last job */
    stvm_process *workers[WORKERS];
    int next_seq[WORKERS][THREADS];   /* per worker: each thread's jobs only go up */
    long sum;
    int done, out_of_order, put_errors;
    int stopped_by_interrupt, interrupts_run;
} pool;

typedef struct feeder {
    pool *p;
    int id;
} feeder;

static void *produce(void *arg)
{
    feeder *f = arg;
    for (int n = 0; f->p->soak_seconds ? !atomic_load(&f->p->stop) : n < JOBS_PER_THREAD; n++) {
        job *j = malloc(sizeof *j);
        if (!j) {
            f->p->put_errors++;
            return NULL;
        }
        *j = (job){.thread = f->id, .seq = n, .value = (long)f->id * 1000 + n % 1000};
        /* -1: wait for room as long as it takes. */
        if (stvm_queue_put_external(f->p->q, j, -1) != STVM_OK) {
            free(j);
            f->p->put_errors++;
        } else {
            atomic_fetch_add(&f->p->made, 1);
            atomic_fetch_add(&f->p->made_sum, (long)f->id * 1000 + n % 1000);
        }
    }
    atomic_fetch_sub(&f->p->running, 1);
    return NULL;
}

typedef struct worker_arg {
    pool *p;
    int index;
    bool stop;                    /* set by the interrupt function, in the worker */
} worker_arg;

static void worker(stvm_vm *vm, void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    while (!w->stop) {
        void *item;
        int err = stvm_queue_take(vm, p->q, &item);
        if (err == STVM_EINTR)     /* interrupted while waiting: nothing was taken */
            continue;
        if (err) {
            printf("FAIL: take answered %s\n", stvm_err_name(err));
            return;
        }
        job *j = item;
        if (j->seq < p->next_seq[w->index][j->thread])
            p->out_of_order++;
        p->next_seq[w->index][j->thread] = j->seq + 1;
        p->sum += j->value;
        free(j);
        if (++p->done == THREADS * JOBS_PER_THREAD && !p->soak_seconds)
            stvm_semaphore_signal(vm, p->all_done);
    }
    p->stopped_by_interrupt++;
}

/* What an interrupted worker runs, in its own context, before its wait answers EINTR. */
static void stop_worker(stvm_vm *vm, void *arg)
{
    (void)vm;
    worker_arg *w = arg;
    w->stop = true;
    w->p->interrupts_run++;
}

/* Soak: report the jobs done every second until the time is up, then stop the threads
 * and wait until every job they made is done. */
static void soak_until_done(stvm_vm *vm, pool *p)
{
    for (int s = 0; s < p->soak_seconds; s++) {
        stvm_delay_wait_ms(vm, 1000);
        printf("soak: items=%d\n", p->done);
        fflush(stdout);
    }
    atomic_store(&p->stop, true);
    while (atomic_load(&p->running) > 0 || p->done < atomic_load(&p->made))
        stvm_delay_wait_ms(vm, 10);
}

static void supervisor(stvm_vm *vm, void *arg)
{
    worker_arg *wa = arg;
    pool *p = wa[0].p;
    if (p->soak_seconds)
        soak_until_done(vm, p);
    else
        stvm_semaphore_wait(vm, p->all_done);
    for (int i = 0; i < WORKERS; i++)
        stvm_process_interrupt(vm, p->workers[i], stop_worker, &wa[i]);
}

int main(int argc, char **argv)
{
    stvm_vm *vm;
    pool p = {0};
    worker_arg wa[WORKERS];
    if (argc == 3 && strcmp(argv[1], "--soak") == 0 && atoi(argv[2]) > 0) {
        p.soak_seconds = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: thread_pool [--soak SECONDS]\n");
        return 2;
    }
    atomic_store(&p.running, THREADS);
    if (stvm_vm_new(&vm, NULL) || stvm_queue_new(vm, CAPACITY, &p.q) ||
        stvm_queue_open_external(vm, p.q) || stvm_semaphore_new(vm, &p.all_done)) {
        fprintf(stderr, "setting up the VM failed\n");
        return 1;
    }
    for (int i = 0; i < WORKERS; i++) {
        wa[i] = (worker_arg){.p = &p, .index = i};
        char name[16];
        snprintf(name, sizeof name, "worker %d", i + 1);
        stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, name, worker, &wa[i], &p.workers[i]);
    }
    stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING + 1, "supervisor", supervisor, wa, NULL);

    pthread_t th[THREADS];
    feeder f[THREADS];
    for (int i = 0; i < THREADS; i++) {
        f[i] = (feeder){.p = &p, .id = i};
        pthread_create(&th[i], NULL, produce, &f[i]);
    }
    int err = stvm_run(vm);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);

    long want = 0;
    for (int t = 0; t < THREADS; t++)
        for (int n = 0; n < JOBS_PER_THREAD; n++)
            want += (long)t * 1000 + n;
    int jobs = THREADS * JOBS_PER_THREAD;
    if (p.soak_seconds) {
        want = atomic_load(&p.made_sum);
        jobs = (int)atomic_load(&p.made);
    }
    printf("%d threads put %d jobs into a queue of %d places; %d green workers took them\n",
           THREADS, jobs, CAPACITY, WORKERS);
    printf("jobs done: %d, sum %ld (expected %ld), out of order: %d\n", p.done, p.sum, want,
           p.out_of_order);
    printf("workers stopped by an interrupt: %d (interrupt functions run: %d)\n",
           p.stopped_by_interrupt, p.interrupts_run);
    printf("queue size at the end: %lld; stvm_run: %s\n", (long long)stvm_queue_size(vm, p.q),
           stvm_err_name(err));
    bool ok = err == STVM_OK && p.done == jobs && p.sum == want &&
              !p.out_of_order && !p.put_errors && p.stopped_by_interrupt == WORKERS &&
              p.interrupts_run == WORKERS && stvm_queue_size(vm, p.q) == 0;
    for (int i = 0; i < WORKERS; i++)
        stvm_process_release(vm, p.workers[i]);
    stvm_queue_free(vm, p.q, NULL, NULL);
    stvm_vm_free(vm);
    if (p.soak_seconds)
        printf("summary: items=%d ok=%d\n", p.done, ok);
    if (!ok) {
        printf("FAIL: see above\n");
        return 1;
    }
    return 0;
}
