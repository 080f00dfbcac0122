/* The OpenSmalltalk heartbeat's model (see heartbeat.h). */
#include "heartbeat.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "alloc.h"
#include "error.h"

/* The period of a beat that begins now: as in the OpenSmalltalk heartbeat's loop, the
 * flag is looked at when the nap starts, and a nap begun while idle is not cut short
 * when the VM thread wakes. */
static uint64_t period_us(const stvm_heartbeat *h)
{
    return atomic_load_explicit(&h->idle, memory_order_relaxed) ? h->idle_beat_us
                                                                : STVM_OSVM_BEAT_US;
}

/* A beat: the cached clock moves to now, and the interrupt check it forces sees now. */
static void beat(stvm_heartbeat *h, uint64_t now_us)
{
    atomic_store_explicit(&h->clock_us, now_us, memory_order_relaxed);
    atomic_store_explicit(&h->beat_us, now_us, memory_order_relaxed);
}

void stvm__heartbeat_sim_until(stvm_vm *vm, uint64_t t)
{
    stvm_heartbeat *h = vm->heartbeat;
    while (h->next_beat_us <= t) {
        beat(h, h->next_beat_us);
        h->next_beat_us += period_us(h);
    }
}

/* The real clock's heartbeat thread: nap a beat's period, beat, until told to stop.
 * It reads the VM's clock (fixed when the VM was made) and writes the atomics only. */
static void *beat_main(void *arg)
{
    stvm_vm *vm = arg;
    stvm_heartbeat *h = vm->heartbeat;
    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + period_us(h) * 1000;
        until.tv_sec += (time_t)(ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        int r = 0;
        while (!h->stop && r != ETIMEDOUT)
            r = pthread_cond_timedwait(&h->cond, &h->lock, &until);
        if (!h->stop)
            beat(h, stvm__clock_now_us(vm));
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

int stvm__heartbeat_start(stvm_vm *vm)
{
    stvm_heartbeat *h = stvm__calloc(1, sizeof *h);
    if (!h)
        return STVM_ENOMEM;
    uint64_t now = stvm__clock_now_us(vm);
    atomic_init(&h->clock_us, now);
    atomic_init(&h->beat_us, now);
    atomic_init(&h->idle, 0);
    h->idle_beat_us = vm->cfg.osvm764_idle_beat_us ? vm->cfg.osvm764_idle_beat_us
                                                   : STVM_OSVM_IDLE_BEAT_US;
    h->next_beat_us = now + STVM_OSVM_BEAT_US;
    vm->heartbeat = h;
    if (vm->clock.kind == STVM_CLOCK_SIMULATED)
        return STVM_OK;
    pthread_condattr_t ca;
    int err = pthread_condattr_init(&ca);
    if (!err)
        err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (!err)
        err = pthread_cond_init(&h->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (!err && (err = pthread_mutex_init(&h->lock, NULL)) != 0)
        pthread_cond_destroy(&h->cond);
    if (!err && (err = pthread_create(&h->thread, NULL, beat_main, vm)) != 0) {
        pthread_mutex_destroy(&h->lock);
        pthread_cond_destroy(&h->cond);
    }
    if (err) {
        free(h);
        vm->heartbeat = NULL;
        return stvm__error_from_errno(err);
    }
    h->started = true;
    return STVM_OK;
}

void stvm__heartbeat_stop(stvm_vm *vm)
{
    stvm_heartbeat *h = vm->heartbeat;
    if (!h)
        return;
    if (h->started) {
        pthread_mutex_lock(&h->lock);
        h->stop = true;
        pthread_cond_signal(&h->cond);
        pthread_mutex_unlock(&h->lock);
        pthread_join(h->thread, NULL);
        pthread_mutex_destroy(&h->lock);
        pthread_cond_destroy(&h->cond);
    }
    free(h);
    vm->heartbeat = NULL;
}
