/*
 * Worker threads (see worker_threads.h), after TFFI's worker: a queue guarded by a mutex,
 * threads that take from it, and a signal through the external table when a task is
 * done. Threads start on demand, so a VM that never calls out threaded starts none.
 */
#include "worker_threads.h"
#include "../vm/alloc.h"

#include <stdint.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stvm_workers {
    pthread_mutex_t lock;
    pthread_cond_t more;         /* a task was queued, or quit */
    atomic_int queued;           /* tasks in the queue, for threads looking without the lock */
    stvm_task *head, *tail;
    stvm_vm *vm;                 /* NULL once the VM freed the group */
    bool quit;
    int idle;                    /* threads waiting for a task */
    int running;                 /* tasks being run */
    int refs;                    /* the VM's, and one per thread not yet ended */
    int started, max;
    stvm_spin spin;              /* how long a thread out of tasks looks before it sleeps */
    char name[16];
    pthread_t threads[];
};

int stvm__workers_new(stvm_vm *vm, const char *name, int nthreads, int64_t spin_ns,
                      stvm_workers **out)
{
    stvm_workers *w = stvm__calloc(1, sizeof *w + (size_t)nthreads * sizeof(pthread_t));
    if (!w)
        return STVM_ENOMEM;
    if (pthread_mutex_init(&w->lock, NULL) != 0) {
        free(w);
        return STVM_ENOMEM;
    }
    if (pthread_cond_init(&w->more, NULL) != 0) {
        pthread_mutex_destroy(&w->lock);
        free(w);
        return STVM_ENOMEM;
    }
    w->vm = vm;
    atomic_init(&w->queued, 0);
    w->refs = 1;
    w->max = nthreads;
    stvm__spin_init(&w->spin, spin_ns);
    snprintf(w->name, sizeof w->name, "%s", name ? name : "");
    *out = w;
    return STVM_OK;
}

static void destroy(stvm_workers *w)
{
    pthread_cond_destroy(&w->more);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

/* The task is back from run (lock held): signal its waiter, or orphan it when the VM
 * has gone. */
static void complete(stvm_workers *w, stvm_task *t)
{
    if (!w->vm) {
        if (t->orphan)
            t->orphan(t);
        return;
    }
    atomic_store_explicit(&t->state, STVM_TASK_DONE, memory_order_release);
    if (t->index)
        stvm_external_signal(w->vm, t->index);
}

static bool task_queued(void *arg)
{
    stvm_workers *w = arg;
    return atomic_load_explicit(&w->queued, memory_order_relaxed) > 0;
}

/* Wait for a task or quit (lock held): look without the lock for a while, then sleep. */
static void wait_for_task(stvm_workers *w)
{
    w->idle++;
    pthread_mutex_unlock(&w->lock);
    int64_t since;
    stvm__spin(&w->spin, INT64_MAX, task_queued, w, &since);
    pthread_mutex_lock(&w->lock);
    while (!w->head && !w->quit)
        pthread_cond_wait(&w->more, &w->lock);
    w->idle--;
    stvm__spin_woke(&w->spin, since);
}

static void *worker_main(void *arg)
{
    stvm_workers *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        if (!w->head && !w->quit)
            wait_for_task(w);
        stvm_task *t = w->head;
        if (!t)
            break;   /* quit, and nothing left to run */
        w->head = t->next;
        if (!w->head)
            w->tail = NULL;
        atomic_fetch_sub_explicit(&w->queued, 1, memory_order_relaxed);
        atomic_store_explicit(&t->state, STVM_TASK_RUNNING, memory_order_relaxed);
        w->running++;
        pthread_mutex_unlock(&w->lock);
        t->run(t);
        pthread_mutex_lock(&w->lock);
        w->running--;
        complete(w, t);
    }
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&w->lock);
    if (last)
        destroy(w);
    return NULL;
}

/* Start one more thread (lock held). Signals go to the VM's own threads, never to a
 * worker in the middle of a C call. */
static bool start_thread(stvm_workers *w)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t *th = &w->threads[w->started];
    int rc = pthread_create(th, NULL, worker_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return false;
    if (w->name[0])
        pthread_setname_np(*th, w->name);
    w->started++;
    w->refs++;
    return true;
}

int stvm__workers_submit(stvm_workers *w, stvm_task *t)
{
    pthread_mutex_lock(&w->lock);
    bool need = w->idle == 0 && w->started < w->max;
    if (need && !start_thread(w) && w->started == 0) {
        pthread_mutex_unlock(&w->lock);
        return STVM_ESYS;
    }
    t->next = NULL;
    atomic_store_explicit(&t->state, STVM_TASK_QUEUED, memory_order_relaxed);
    if (w->tail)
        w->tail->next = t;
    else
        w->head = t;
    w->tail = t;
    atomic_fetch_add_explicit(&w->queued, 1, memory_order_relaxed);
    pthread_cond_signal(&w->more);
    pthread_mutex_unlock(&w->lock);
    return STVM_OK;
}

int stvm__workers_busy(stvm_workers *w)
{
    pthread_mutex_lock(&w->lock);
    int n = w->running;
    for (stvm_task *t = w->head; t; t = t->next)
        n++;
    pthread_mutex_unlock(&w->lock);
    return n;
}

/* Join each thread by the deadline; detach the ones still in a task. */
static void join_or_detach(stvm_workers *w, int n, const struct timespec *deadline)
{
    for (int i = 0; i < n; i++) {
        if (pthread_timedjoin_np(w->threads[i], NULL, deadline) == 0)
            continue;
        fprintf(stderr, "stvm: FFI worker '%s' is still in a call at stvm_vm_free; its "
                        "thread is detached and will drop the call's result\n",
                w->name[0] ? w->name : "(unnamed)");
        pthread_detach(w->threads[i]);
    }
}

void stvm__workers_free(stvm_workers *w, const struct timespec *deadline)
{
    pthread_mutex_lock(&w->lock);
    for (stvm_task *t = w->head; t; t = t->next)
        atomic_store_explicit(&t->state, STVM_TASK_IDLE, memory_order_relaxed);
    w->head = w->tail = NULL;
    atomic_store_explicit(&w->queued, 0, memory_order_relaxed);
    w->quit = true;
    pthread_cond_broadcast(&w->more);
    int n = w->started;
    pthread_mutex_unlock(&w->lock);
    join_or_detach(w, n, deadline);
    pthread_mutex_lock(&w->lock);
    w->vm = NULL;   /* from here a detached thread orphans its task */
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&w->lock);
    if (last)
        destroy(w);
}
