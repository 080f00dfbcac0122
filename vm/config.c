/*
 * The configuration: defaults, limits and the check, in one place so that the header,
 * stvm_vm_create and stvm_config_check can never disagree about what is allowed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "clock.h"

static void defaults(stvm_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->smallint_bits = 61;
    cfg->preemption_yields = true;
    cfg->stack_size = STVM_DEFAULT_STACK_SIZE;
    cfg->stack_guard = true;
    cfg->delay_clock = STVM_DELAY_CLOCK_US;
    cfg->clock = STVM_CLOCK_REAL;
    cfg->idle_relinquish_us = STVM_DEFAULT_RELINQUISH_US;
    cfg->external_table_size = STVM_DEFAULT_EXTERNAL_SLOTS;
    cfg->stack_guard_size = STVM_DEFAULT_GUARD_SIZE;
    cfg->stack_guard_method = STVM_GUARD_AUTO;
    cfg->idle_mode = STVM_IDLE_POLL;
    cfg->busy_poll_ms = STVM_DEFAULT_BUSY_POLL_MS;
    cfg->timer_slack_us = STVM_DEFAULT_TIMER_SLACK_US;
    cfg->ffi_workers = STVM_DEFAULT_FFI_WORKERS;
    cfg->ffi_callback_priority = STVM_DEFAULT_FFI_CALLBACK_PRIORITY;
    cfg->ffi_spin_us = STVM_DEFAULT_FFI_SPIN_US;
}

/* The idle modes' names, indexed by STVM_IDLE_*: the one place they are spelled. */
static const char *const idle_mode_names[STVM_IDLE_MODES] = {
    [STVM_IDLE_POLL] = "poll",
    [STVM_IDLE_LEGACY] = "legacy",
    [STVM_IDLE_SPIN] = "spin",
    [STVM_IDLE_OSVM764] = "osvm764",
};

const char *stvm_idle_mode_name(int mode)
{
    return mode >= 0 && mode < STVM_IDLE_MODES ? idle_mode_names[mode] : NULL;
}

int stvm_config_init_(stvm_config *cfg, size_t cfg_size)
{
    if (!cfg)
        return STVM_EINVAL;
    int err = stvm__struct_size_check(STVM__STRUCT_CONFIG, cfg_size);
    if (err)
        return err;
    stvm_config c;
    defaults(&c);
    memcpy(cfg, &c, cfg_size);
    return STVM_OK;
}

int stvm__config_read(const stvm_config *cfg, size_t cfg_size, stvm_config *out)
{
    int err = stvm__struct_size_check(STVM__STRUCT_CONFIG, cfg_size);
    if (err)
        return err;
    defaults(out);
    memcpy(out, cfg, cfg_size);
    return STVM_OK;
}

size_t stvm__page_round(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + page - 1) & ~(page - 1);
}

/* Each rule: a field, whether its value is allowed, and the allowed range in words. */
static int bad(char *why, size_t size, const char *field, unsigned long long value,
               const char *allowed)
{
    if (why && size)
        snprintf(why, size, "%s = %llu: allowed %s", field, value, allowed);
    return STVM_EINVAL;
}

#define RULE(ok, field, allowed) \
    if (!(ok))                   \
        return bad(why, size, #field, (unsigned long long)c->field, allowed)

static int check(const stvm_config *c, char *why, size_t size)
{
    RULE(c->smallint_bits == 31 || c->smallint_bits == 61, smallint_bits, "31 or 61");
    RULE(c->stack_size == 0 ||
             (c->stack_size >= STVM_MIN_STACK_SIZE && c->stack_size <= STVM_MAX_STACK_SIZE),
         stack_size, "0 (default 16 KiB) or 8192 .. 67108864");
    RULE(c->stack_guard_size == 0 || (c->stack_guard_size >= STVM_MIN_GUARD_SIZE &&
                                      c->stack_guard_size <= STVM_MAX_GUARD_SIZE),
         stack_guard_size, "0 (default 64 KiB) or 4096 .. 67108864");
    RULE(c->stack_guard_method >= STVM_GUARD_AUTO && c->stack_guard_method <= STVM_GUARD_CANARY,
         stack_guard_method, "STVM_GUARD_AUTO, _MADVISE, _MPROTECT or _CANARY (0 .. 3)");
    RULE(c->delay_clock == STVM_DELAY_CLOCK_MS || c->delay_clock == STVM_DELAY_CLOCK_US,
         delay_clock, "STVM_DELAY_CLOCK_MS or _US (0 or 1)");
    RULE(c->clock == STVM_CLOCK_REAL || c->clock == STVM_CLOCK_SIMULATED, clock,
         "STVM_CLOCK_REAL or _SIMULATED (0 or 1)");
    RULE(c->sim_start_us <= STVM_CLOCK_MAX_US, sim_start_us,
         "0 (now) .. 4611686018427387904 (2^62)");
    RULE(c->ms_clock_start <= STVM_MS_CLOCK_MASK, ms_clock_start, "0 .. 536870911 (0x1FFFFFFF)");
    RULE(c->idle_relinquish_us <= STVM_MAX_RELINQUISH_US, idle_relinquish_us,
         "0 (until something is due) .. 10000000");
    RULE(c->external_table_size >= 1 && c->external_table_size <= STVM_MAX_EXTERNAL_SLOTS,
         external_table_size, "1 .. 65536");
    RULE(c->idle_mode >= STVM_IDLE_POLL && c->idle_mode < STVM_IDLE_MODES, idle_mode,
         "STVM_IDLE_POLL, _LEGACY, _SPIN or _OSVM764 (0 .. 3)");
    RULE(c->busy_poll_ms <= STVM_MAX_BUSY_POLL_MS, busy_poll_ms, "0 .. 1000");
    RULE(c->wake_inject_us <= STVM_MAX_WAKE_INJECT_US, wake_inject_us, "0 .. 1000000");
    RULE(c->timer_slack_us <= STVM_MAX_TIMER_SLACK_US, timer_slack_us, "0 .. 1000");
    RULE(c->ffi_workers >= 1 && c->ffi_workers <= STVM_MAX_FFI_WORKERS, ffi_workers, "1 .. 64");
    RULE(c->ffi_callback_priority >= STVM_PRIORITY_MIN &&
             c->ffi_callback_priority <= STVM_PRIORITY_MAX,
         ffi_callback_priority, "1 .. 80");
    RULE(c->ffi_spin_us <= STVM_MAX_FFI_SPIN_US, ffi_spin_us, "0 .. 10000");
    RULE(c->osvm764_fixes <= (STVM_OSVM764_FIX_CLOCK | STVM_OSVM764_FIX_IDLE_FLAG) &&
             (!c->osvm764_fixes || c->idle_mode == STVM_IDLE_OSVM764),
         osvm764_fixes, "0, or with idle_mode STVM_IDLE_OSVM764 STVM_OSVM764_FIX_* or'd (0 .. 3)");
    RULE(c->osvm764_idle_beat_us == 0 ||
             (c->osvm764_idle_beat_us >= STVM_MIN_OSVM_IDLE_BEAT_US &&
              c->osvm764_idle_beat_us <= STVM_MAX_OSVM_IDLE_BEAT_US &&
              c->idle_mode == STVM_IDLE_OSVM764),
         osvm764_idle_beat_us, "0 (50000), or with idle_mode STVM_IDLE_OSVM764 2000 .. 1000000");
    return STVM_OK;
}

int stvm__config_normalise(stvm_config *c, char *why, size_t size)
{
    int err = check(c, why, size);
    if (err)
        return err;
    c->stack_size = stvm__page_round(c->stack_size ? c->stack_size : STVM_DEFAULT_STACK_SIZE);
    c->stack_guard_size =
        stvm__page_round(c->stack_guard_size ? c->stack_guard_size : STVM_DEFAULT_GUARD_SIZE);
    if (why && size)
        why[0] = 0;
    return STVM_OK;
}

int stvm_config_check_(const stvm_config *cfg, char *why, size_t size, size_t cfg_size)
{
    if ((!why && size) || !cfg) {
        if (why && size)
            snprintf(why, size, "%s", cfg ? "why is NULL but size is not 0" : "cfg is NULL");
        return STVM_EINVAL;
    }
    stvm_config c;
    int err = stvm__config_read(cfg, cfg_size, &c);
    if (err) {
        if (why && size)
            snprintf(why, size, "cfg_size = %zu: not a size of stvm_config this library "
                     "knows (at most %zu)", cfg_size, sizeof c);
        return err;
    }
    return stvm__config_normalise(&c, why, size);
}
