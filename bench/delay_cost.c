/*
 * stvm-bench delay --sim-cost: the modelled cost per counted operation (delay_cost.h),
 * its specification and its charging.
 */
#include "delay_cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_keys[DELAY_COST_NOPS] = {
#define DELAY_COST_KEY(key, stat) #key,
    DELAY_COST_OPS(DELAY_COST_KEY)
#undef DELAY_COST_KEY
};

/* The preset seed1. The relative costs are stvm's own CPU time per operation on the
 * simulated clock (medians of 7, N = 5,000, 2026-12-03): a delay with no boxed arithmetic
 * (us-smallint61, 0.522 µs of CPU) is 508 ns plus one clock read; the boxed arithmetic of
 * us-largeint31 (1.140 - 0.522 µs per delay, for 3.01 boxes and 26.5 LargeInteger
 * operations) is split between boxes and operations, and the clock read is priced, by
 * callgrind's instruction counts (135 instructions per box made and released, 124 per
 * LargeInteger operation, 49 per clock read, 1,886 per us-smallint61 delay). Passes and
 * switches are the same per delay in every representation (1.005 and 3.01 at N = 5,000),
 * so their cost is inside `delay`. The scale is the one calibration: ms-smallint31 then
 * peaks at about 128,500 delays per simulated second, Pharo 2015's figure. The
 * measurement and the calibration are in experiments/delay-benchmark/README.md. */
static const delay_cost seed1 = {
    .on = true, .name = "seed1",
    .ns = {[DELAY_COST_delay] = 508, [DELAY_COST_read] = 13.5, [DELAY_COST_box] = 22.2,
           [DELAY_COST_liop] = 20.8},
    .scale = 14.54,
};

static bool set_value(delay_cost *c, bool given[DELAY_COST_NOPS + 1], const char *key,
                      const char *text, char *why, size_t whysize)
{
    int k = 0;
    while (k < DELAY_COST_NOPS && strcmp(key, op_keys[k]))
        k++;
    if (k == DELAY_COST_NOPS && strcmp(key, "scale")) {
        snprintf(why, whysize, "unknown key '%s' (known: delay, pass, read, box, liop, "
                 "switch, scale)", key);
        return false;
    }
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v) || v < 0 || v > 1e9) {
        snprintf(why, whysize, "%s=%s: not a number from 0 to 1e9", key, text);
        return false;
    }
    if (given[k]) {
        snprintf(why, whysize, "'%s' given twice", key);
        return false;
    }
    given[k] = true;
    if (k == DELAY_COST_NOPS)
        c->scale = v;
    else
        c->ns[k] = v;
    return true;
}

bool delay_cost_parse(const char *spec, delay_cost *out, char *why, size_t whysize)
{
    *out = (delay_cost){.name = "none", .scale = 1};
    if (!strcmp(spec, "none"))
        return true;
    char buf[256];
    if (strlen(spec) >= sizeof buf) {
        snprintf(why, whysize, "the specification is too long");
        return false;
    }
    snprintf(buf, sizeof buf, "%s", spec);
    bool given[DELAY_COST_NOPS + 1] = {false}, first = true, overridden = false;
    snprintf(out->name, sizeof out->name, "custom");
    for (char *rest = buf, *t; (t = strsep(&rest, ",")) != NULL; first = false) {
        char *eq = strchr(t, '=');
        if (!eq) {
            if (first && strcmp(t, "seed1")) {
                snprintf(why, whysize, "unknown preset '%s' (known: none, seed1)", t);
                return false;
            }
            if (!first) {
                snprintf(why, whysize, "'%s': a preset comes first, then key=value items", t);
                return false;
            }
            *out = seed1;
            continue;
        }
        *eq = 0;
        if (!set_value(out, given, t, eq + 1, why, whysize))
            return false;
        overridden = true;
    }
    /* At most a second per operation: the charge's integer picoseconds stay far from
     * overflowing whatever a run counts between two charges. */
    for (int k = 0; k < DELAY_COST_NOPS; k++)
        if (out->ns[k] * out->scale > 1e9) {
            snprintf(why, whysize, "%s: %g ns x scale %g is more than a second per operation",
                     op_keys[k], out->ns[k], out->scale);
            return false;
        }
    out->on = true;
    if (overridden)
        snprintf(out->name, sizeof out->name, "custom");
    return true;
}

void delay_cost_describe(const delay_cost *c, char *buf, size_t size)
{
    if (!c->on) {
        snprintf(buf, size, "none");
        return;
    }
    size_t n = (size_t)snprintf(buf, size, "%s: %g x (", c->name, c->scale);
    bool any = false;
    for (int k = 0; k < DELAY_COST_NOPS && n < size; k++)
        if (c->ns[k] > 0) {
            n += (size_t)snprintf(buf + n, size - n, "%s%s %g ns", any ? ", " : "",
                                  op_keys[k], c->ns[k]);
            any = true;
        }
    if (n < size)
        snprintf(buf + n, size - n, "%s)", any ? "" : "nothing");
}

void delay_cost_start(delay_cost_meter *m, const delay_cost *c, stvm_vm *vm)
{
    *m = (delay_cost_meter){0};
    for (int k = 0; k < DELAY_COST_NOPS; k++)
        m->ps[k] = llround(c->ns[k] * c->scale * 1000.0);
    stvm_vm_get_stats(vm, &m->last);
}

int delay_cost_charge(delay_cost_meter *m, stvm_vm *vm, int priority)
{
    stvm_stats now;
    stvm_vm_get_stats(vm, &now);
    const uint64_t counted[DELAY_COST_NOPS] = {
#define DELAY_COST_DELTA(key, stat) now.stat - m->last.stat,
        DELAY_COST_OPS(DELAY_COST_DELTA)
#undef DELAY_COST_DELTA
    };
    uint64_t ps = m->carry_ps;
    for (int k = 0; k < DELAY_COST_NOPS; k++)
        ps += counted[k] * (uint64_t)m->ps[k];
    m->last = now;
    uint64_t us = ps / 1000000;
    m->carry_ps = ps % 1000000;
    if (!us)
        return STVM_OK;   /* no call: a checkpoint would switch for nothing */
    stvm_process *self = stvm_vm_active_process(vm);
    stvm_process_info info;
    int err = stvm_process_get_info(vm, self, &info);
    if (!err && info.priority < priority)
        err = stvm_process_set_priority(vm, self, priority);
    /* Work of more than STVM_MAX_WORK_US is several calls. */
    while (us > 0 && !err) {
        uint64_t step = us < STVM_MAX_WORK_US ? us : STVM_MAX_WORK_US;
        err = stvm_work_us(vm, step);
        m->charged_us += step;
        us -= step;
    }
    if (info.priority < priority) {
        int e = stvm_process_set_priority(vm, self, info.priority);
        err = err ? err : e;
    }
    return err;
}
