/* The configuration's defaults and limits, written once (config.c checks them). */
#ifndef STVM_VM_CONFIG_H
#define STVM_VM_CONFIG_H

#include "stvm.h"

#define STVM_DEFAULT_STACK_SIZE ((size_t)16 * 1024)
#define STVM_MIN_STACK_SIZE ((size_t)8 * 1024)
#define STVM_MAX_STACK_SIZE ((size_t)64 << 20)
#define STVM_DEFAULT_GUARD_SIZE ((size_t)64 * 1024)
#define STVM_MIN_GUARD_SIZE ((size_t)4 * 1024)
#define STVM_MAX_GUARD_SIZE ((size_t)64 << 20)
#define STVM_DEFAULT_RELINQUISH_US 0u   /* until the next deadline, descriptor or signal */
#define STVM_MAX_RELINQUISH_US 10000000u
#define STVM_DEFAULT_EXTERNAL_SLOTS 65536   /* made in chunks as slots are used */
#define STVM_MAX_EXTERNAL_SLOTS 65536
#define STVM_DEFAULT_BUSY_POLL_MS 20u       /* the Cog heartbeat's ioProcessEvents period */
#define STVM_MAX_BUSY_POLL_MS 1000u
#define STVM_MAX_WAKE_INJECT_US 1000000u
#define STVM_DEFAULT_TIMER_SLACK_US 50u     /* Linux's default for ordinary threads */
#define STVM_MAX_TIMER_SLACK_US 1000u
#define STVM_DEFAULT_FFI_WORKERS 2
#define STVM_MAX_FFI_WORKERS 64
#define STVM_DEFAULT_FFI_CALLBACK_PRIORITY STVM_PRIORITY_HIGH_IO
#define STVM_DEFAULT_FFI_SPIN_US 50u
#define STVM_MAX_FFI_SPIN_US 10000u
#define STVM_MIN_OSVM_IDLE_BEAT_US 2000u    /* the busy beat */
#define STVM_MAX_OSVM_IDLE_BEAT_US 1000000u

/* Round up to the page size (stacks and guards are mapped in pages). */
size_t stvm__page_round(size_t bytes);

/* Read a caller's config of cfg_size bytes into *out, the fields it lacks at their
 * defaults. ESIZE (out untouched) for a size stvm_config never had. */
int stvm__config_read(const stvm_config *cfg, size_t cfg_size, stvm_config *out);

/* Validate cfg and fill in what 0 means (default stack and guard sizes, rounded up
 * to pages). EINVAL with the reason in why. */
int stvm__config_normalise(stvm_config *cfg, char *why, size_t size);

#endif
