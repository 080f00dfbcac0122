/*
 * thread_pool.c -- a pool of OS threads feeding green workers through a bounded
 * SharedQueue, ended by closing the queue (docs/embedding.md, "Producer/consumer with a
 * thread pool").
 *
 * Four OS threads each make 500 jobs and put them into a queue of 16 places with
 * stvm_queue_put_external: when the queue is full a thread waits for room on the
 * queue's condition variable, not in the VM (backpressure). Two green workers take the
 * jobs, check each thread's jobs arrive in order, and add them up under a Monitor. The
 * producers count themselves down, and the last one to finish closes the queue
 * (stvm_queue_close_external): no poison-pill job marks the end. The workers take what
 * is left, then their takes answer STVM_EEOF, the end of the queue, and they return.
 * stvm_run waits for the threads while the queue is open (an empty queue is not a
 * deadlock), and returns STVM_OK once the workers have finished: a closed queue keeps
 * nobody waiting.
 *
 * The output is the same on every run; how the jobs split between the workers and how
 * often a thread found the queue full vary, and are not printed. Exits 1 on a mismatch.
 *
 * `thread_pool --soak S` (make soak: scripts/soak.sh) runs the same pool for S seconds:
 * the threads make jobs until a process of the VM says stop, printing "soak: items=N"
 * (the jobs done so far) every second meanwhile; then they finish as above.
 */
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <stvm.h>

enum { THREADS = 4, JOBS_PER_THREAD = 500, CAPACITY = 16, WORKERS = 2 };

typedef struct job {
    int thread, seq;
    long value;
} job;

typedef struct pool {
    stvm_queue *q;
    stvm_monitor *totals;         /* guards sum and done (the workers share them) */
    atomic_int producers_left;    /* the last producer to finish closes the queue */
    atomic_int put_errors, closes;
    int next_seq[WORKERS][THREADS];   /* per worker: each thread's jobs only go up */
    long sum;
    int done, out_of_order, ended_by_eof;
    int soak_seconds;             /* 0: JOBS_PER_THREAD each; else until stop */
    atomic_bool stop;
    atomic_long made, made_sum;   /* what the threads put, for the soak's checks */
} pool;

typedef struct feeder {
    pool *p;
    int id;
} feeder;

static void *produce(void *arg)
{
    feeder *f = arg;
    pool *p = f->p;
    for (int n = 0; p->soak_seconds ? !atomic_load(&p->stop) : n < JOBS_PER_THREAD; n++) {
        job *j = malloc(sizeof *j);
        if (!j) {
            atomic_fetch_add(&p->put_errors, 1);
            break;
        }
        long value = (long)f->id * 1000 + n % 1000;
        *j = (job){.thread = f->id, .seq = n, .value = value};
        /* -1: wait for room as long as it takes. Refused (ECLOSED, say), the job is
         * still ours. */
        if (stvm_queue_put_external(p->q, j, -1) != STVM_OK) {
            free(j);
            atomic_fetch_add(&p->put_errors, 1);
        } else {
            atomic_fetch_add(&p->made, 1);
            atomic_fetch_add(&p->made_sum, value);
        }
    }
    /* Several producers close the queue once between them: the last one does. */
    if (atomic_fetch_sub(&p->producers_left, 1) == 1 && stvm_queue_close_external(p->q) == STVM_OK)
        atomic_fetch_add(&p->closes, 1);
    return NULL;
}

typedef struct worker_arg {
    pool *p;
    int index;
} worker_arg;

static void worker(stvm_vm *vm, void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    void *item;
    int err;
    while ((err = stvm_queue_take(vm, p->q, &item)) == STVM_OK) {
        job *j = item;
        if (j->seq < p->next_seq[w->index][j->thread])
            p->out_of_order++;
        p->next_seq[w->index][j->thread] = j->seq + 1;
        stvm_monitor_enter(vm, p->totals);
        p->sum += j->value;
        p->done++;
        stvm_monitor_exit(vm, p->totals);
        free(j);
    }
    if (err != STVM_EEOF) {
        printf("FAIL: take answered %s\n", stvm_err_name(err));
        return;
    }
    p->ended_by_eof++;   /* closed and empty: nothing more will come */
}

/* The soak: the jobs done, every second for S seconds; then the threads stop making
 * more, and the last of them closes the queue as always. */
static void soak_reporter(stvm_vm *vm, void *arg)
{
    pool *p = arg;
    for (int s = 0; s < p->soak_seconds && stvm_delay_wait_ms(vm, 1000) == STVM_OK; s++) {
        printf("soak: items=%d\n", p->done);
        fflush(stdout);
    }
    atomic_store(&p->stop, true);
}

int main(int argc, char **argv)
{
    stvm_vm *vm;
    pool p = {0};
    if (argc == 3 && !strcmp(argv[1], "--soak") && atoi(argv[2]) > 0) {
        p.soak_seconds = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: thread_pool [--soak SECONDS]\n");
        return 2;
    }
    atomic_init(&p.producers_left, THREADS);
    atomic_init(&p.put_errors, 0);
    atomic_init(&p.closes, 0);
    worker_arg wa[WORKERS];
    if (stvm_vm_create(NULL, &vm) || stvm_queue_new(vm, CAPACITY, &p.q) ||
        stvm_queue_open_external(vm, p.q) || stvm_monitor_new(vm, &p.totals)) {
        fprintf(stderr, "setting up the VM failed\n");
        return 1;
    }
    for (int i = 0; i < WORKERS; i++) {
        wa[i] = (worker_arg){.p = &p, .index = i};
        char name[16];
        snprintf(name, sizeof name, "worker %d", i + 1);
        stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, name, worker, &wa[i], NULL);
    }

    if (p.soak_seconds)
        stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "soak", soak_reporter, &p, NULL);
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
    int jobs = THREADS * JOBS_PER_THREAD;
    for (int t = 0; t < THREADS; t++)
        for (int n = 0; n < JOBS_PER_THREAD; n++)
            want += (long)t * 1000 + n;
    if (p.soak_seconds) {   /* as many as the threads made */
        want = atomic_load(&p.made_sum);
        jobs = (int)atomic_load(&p.made);
    }
    void *left;
    printf("%d threads put %d jobs into a queue of %d places; %d green workers took them\n",
           THREADS, jobs, CAPACITY, WORKERS);
    printf("jobs done: %d, sum %ld (expected %ld), out of order: %d\n", p.done, p.sum, want,
           p.out_of_order);
    printf("closed by the last producer: %d time(s); workers ended by the end of the queue: "
           "%d\n", atomic_load(&p.closes), p.ended_by_eof);
    int peek = stvm_queue_peek(vm, p.q, &left);
    printf("a look at the queue now: %s; stvm_run: %s\n", stvm_err_name(peek), stvm_err_name(err));
    bool ok = err == STVM_OK && p.done == jobs && p.sum == want &&
              !p.out_of_order && !atomic_load(&p.put_errors) && atomic_load(&p.closes) == 1 &&
              p.ended_by_eof == WORKERS && peek == STVM_EEOF;
    stvm_monitor_free(vm, p.totals);
    stvm_queue_free(vm, p.q, NULL, NULL);
    stvm_vm_free(vm);
    if (!ok) {
        printf("FAIL: see above\n");
        return 1;
    }
    return 0;
}
