/*
 * The simulated clock's modelled cost per scheduler operation. It is charged at the
 * trace's event points rather than in the operations themselves, so the hand-off paths
 * carry no test of their own for it: the one flag that gates an event point
 * (stvm__tracing) is set while a cost is, and everything else stays off the hot path.
 */
#include "sim_cost.h"

#include "clock.h"
#include "sim_world.h"
#include "trace.h"

/* The operation an event is, or -1 when it has no cost. */
static int operation(int kind, uint64_t process, uint64_t object)
{
    switch (kind) {
    case STVM_TRACE_SWITCH:
        return process && object ? STVM_SIM_COST_SWITCH : -1;
    case STVM_TRACE_SEM_SIGNAL:
    case STVM_TRACE_SEM_EXCESS:
    case STVM_TRACE_MONITOR_SIGNAL:
        return STVM_SIM_COST_SIGNAL;
    case STVM_TRACE_SEM_WAIT:
    case STVM_TRACE_MUTEX_WAIT:
    case STVM_TRACE_MONITOR_WAIT:
        return STVM_SIM_COST_WAIT;
    case STVM_TRACE_DELAY_SCHEDULED:
        return STVM_SIM_COST_DELAY;
    default:
        return -1;
    }
}

bool stvm__sim_costs_set(const stvm_vm *vm)
{
    for (int op = 0; op < STVM_SIM_COST_OPS; op++)
        if (vm->sim_cost_us[op])
            return true;
    return false;
}

void stvm__sim_charge(stvm_vm *vm, int kind, uint64_t process, uint64_t object)
{
    int op = operation(kind, process, object);
    if (op < 0 || !vm->sim_cost_us[op] || vm->sim_charging)
        return;
    uint64_t to = vm->clock.sim_now_us + vm->sim_cost_us[op];
    if (to >= STVM_CLOCK_MAX_US)
        return;   /* the clock's end: time stands still there rather than wrap */
    vm->sim_charging = true;
    stvm__sim_advance(vm, to);
    vm->sim_charging = false;
}

int stvm_sim_set_cost(stvm_vm *vm, int op, uint32_t us)
{
    if (!vm || op < 0 || op >= STVM_SIM_COST_OPS)
        return STVM_EINVAL;
    if (us > STVM_SIM_COST_MAX_US)
        return STVM_ERANGE;
    if (vm->clock.kind != STVM_CLOCK_SIMULATED || !STVM_TRACE_POINTS)
        return STVM_ESTATE;
    vm->sim_cost_us[op] = (uint16_t)us;
    stvm__events_update(vm);
    return STVM_OK;
}

int64_t stvm_sim_cost(const stvm_vm *vm, int op)
{
    if (!vm || op < 0 || op >= STVM_SIM_COST_OPS)
        return STVM_EINVAL;
    return vm->sim_cost_us[op];
}
