/*
 * The API table's snapshot (tests/test_api_table.c): what a refused call must leave as
 * it was. Of every VM of the fixture its counters, its invariant check, its modelled
 * costs, the SocketPlugin's resolver status and error and its ByteArray; of every
 * watched semaphore its excess, of every mutex and monitor its owner (and depth), of
 * every process its state, priority, wait and values of the process-local variables,
 * of every socket its status, port, descriptor, read semaphore and armed read handler,
 * of every stream its counters and of every SocketHandle record its status and error;
 * the calling process's values of the process-local variables; every watched object's
 * name. Taken before and after each row's call and compared.
 */
#include "api_table.h"

/* A named SocketPlugin primitive's SmallInteger answer, or -1000 - its failure code. */
static int64_t plugin_int(stvm_vm *vm, const char *name, stvm_oop arg, int nargs)
{
    stvm_oop r = STVM_NIL;
    int fail = 0;
    int64_t v = 0;
    if (stvm_primitive_call_named(vm, "SocketPlugin", name, STVM_NIL, &arg, nargs, &r, &fail) !=
        STVM_OK)
        return -1000 - fail;
    return stvm_int_to_i64(vm, r, &v) == STVM_OK ? v : -999;
}

void api_snap_take(fx *f, snap *s)
{
    memset(s, 0, sizeof *s);
    for (int v = 0; v < N_VM; v++) {
        stvm_vm_get_stats(f->vm[v], &s->stats[v]);
        s->invariants[v] = stvm_vm_check_invariants(f->vm[v], NULL, 0);
        for (int op = 0; op < STVM_SIM_COST_OPS; op++)
            s->sim_cost[v][op] = stvm_sim_cost(f->vm[v], op);
    }
    for (int i = 0; i < f->nwsem; i++)
        s->excess[i] = stvm_semaphore_excess(f->vm[f->wsem[i].vm], f->wsem[i].s);
    for (int i = 0; i < f->nwmutex; i++)
        s->owner[i] = stvm_mutex_owner(f->vm[f->wmutex[i].vm], f->wmutex[i].m);
    for (int i = 0; i < f->nwmonitor; i++) {
        s->monitor[i].owner = stvm_monitor_owner(f->vm[f->wmonitor[i].vm], f->wmonitor[i].m);
        s->monitor[i].depth = stvm_monitor_depth(f->vm[f->wmonitor[i].vm], f->wmonitor[i].m);
    }
    for (int i = 0; i < f->nwproc; i++) {
        stvm_process_info info;
        memset(&info, 0, sizeof info);
        s->proc[i].rc = stvm_process_get_info(f->vm[f->wproc[i].vm], f->wproc[i].p, &info);
        s->proc[i].state = info.state;
        s->proc[i].priority = info.priority;
        s->proc[i].held = info.held;
        s->proc[i].on = info.waiting_object;
        stvm_vm *pv = f->vm[f->wproc[i].vm];
        s->proc[i].lrc[0] = stvm_process_get_local(pv, f->wproc[i].p, f->local[f->wproc[i].vm],
                                              &s->proc[i].lval[0]);
        s->proc[i].lrc[1] = stvm_process_get_local(pv, f->wproc[i].p, f->local_dyn,
                                              &s->proc[i].lval[1]);
    }
    for (int v = 0; v <= N_VM; v++) {
        stvm_vm *sv = f->vm[v < N_VM ? v : V_MAIN];
        stvm_local *lv = v < N_VM ? f->local[v] : f->local_dyn;
        s->self_local[v].rc = stvm_process_get_local(sv, f->self, lv, &s->self_local[v].v);
    }
    for (int v = 0; v < N_VM; v++) {
        s->resolver[v][0] = plugin_int(f->vm[v], "primitiveResolverStatus", STVM_NIL, 0);
        s->resolver[v][1] = plugin_int(f->vm[v], "primitiveResolverError", STVM_NIL, 0);
        s->bytes[v].rc = f->bytes[v] ? stvm_bytes_data(f->vm[v], f->bytes[v], &s->bytes[v].data,
                                                       &s->bytes[v].size)
                                     : 0;
    }
    for (int i = 0; i < f->nwsock; i++) {
        stvm_vm *vm = f->vm[f->wsock[i].vm];
        stvm_socket *sk = f->wsock[i].s;
        s->sock[i].fd = stvm_socket_fd(sk);
        if (f->wsock[i].probe)   /* first: stvm_socket_status may arm a listener */
            s->sock[i].probe = stvm_fd_wait(vm, s->sock[i].fd, STVM_IO_READ, 0);
        s->sock[i].status = stvm_socket_status(vm, sk);
        s->sock[i].port = stvm_socket_port(sk);
        s->sock[i].excess = stvm_semaphore_excess(vm, stvm_socket_read_semaphore(sk));
    }
    int nn = 0;
    for (int i = 0; i < f->nwsem; i++, nn++)
        s->name[nn].rc = stvm_semaphore_get_name(f->vm[f->wsem[i].vm], f->wsem[i].s,
                                                 s->name[nn].text, sizeof s->name[nn].text);
    for (int i = 0; i < f->nwmutex; i++, nn++)
        s->name[nn].rc = stvm_mutex_get_name(f->vm[f->wmutex[i].vm], f->wmutex[i].m,
                                             s->name[nn].text, sizeof s->name[nn].text);
    for (int i = 0; i < f->nwmonitor; i++, nn++)
        s->name[nn].rc = stvm_monitor_get_name(f->vm[f->wmonitor[i].vm], f->wmonitor[i].m,
                                               s->name[nn].text, sizeof s->name[nn].text);
    for (int i = 0; i < f->nwsock; i++, nn++)
        s->name[nn].rc = stvm_socket_get_name(f->vm[f->wsock[i].vm], f->wsock[i].s,
                                              s->name[nn].text, sizeof s->name[nn].text);
    for (int i = 0; i < f->nwstream; i++)
        s->stream[i].rc = stvm_stream_get_stats(f->wstream[i].st, &s->stream[i].st);
    for (int i = 0; i < f->nwrec; i++) {
        stvm_vm *vm = f->vm[f->wrec[i].vm];
        s->rec[i][0] = plugin_int(vm, "primitiveSocketConnectionStatus", f->wrec[i].rec, 1);
        s->rec[i][1] = plugin_int(vm, "primitiveSocketError", f->wrec[i].rec, 1);
    }
}

static const char *const stat_names[] = {
    "context_switches", "semaphore_signals", "semaphore_waits", "delays_scheduled",
    "delays_expired", "delays_unscheduled", "timing_loop_passes", "clock_reads",
    "timer_fires", "boxed_allocated", "large_int_ops", "external_signals", "idle_sleeps",
    "objects_allocated", "bytes_allocated", "objects_live", "bytes_live", "processes_live",
    "os_sleeps", "os_slept_us", "wakeups_timer", "wakeups_io", "wakeups_external",
    "wakeups_relinquish", "io_polls_busy", "fds_ready", "io_signals_unwaited", "timed_waits",
    "socket_reads_blocked",
};
_Static_assert(sizeof(stvm_stats) == sizeof stat_names / sizeof stat_names[0] * sizeof(uint64_t),
               "a counter was added to stvm_stats: name it here");

void api_snap_diff(const fx *f, const snap *a, const snap *b, char *buf, size_t size)
{
    buf[0] = 0;
    for (int v = 0; v < N_VM; v++) {
        const uint64_t *x = (const uint64_t *)&a->stats[v], *y = (const uint64_t *)&b->stats[v];
        for (size_t i = 0; i < sizeof(stvm_stats) / sizeof(uint64_t); i++)
            if (x[i] != y[i]) {
                snprintf(buf, size, "VM %s: %s %llu -> %llu", api_vm_names[v], stat_names[i],
                         (unsigned long long)x[i], (unsigned long long)y[i]);
                return;
            }
        if (a->invariants[v] != b->invariants[v]) {
            snprintf(buf, size, "VM %s: invariants %s -> %s", api_vm_names[v],
                     stvm_err_name(a->invariants[v]), stvm_err_name(b->invariants[v]));
            return;
        }
        for (int op = 0; op < STVM_SIM_COST_OPS; op++)
            if (a->sim_cost[v][op] != b->sim_cost[v][op]) {
                snprintf(buf, size, "VM %s: modelled cost %d: %lld -> %lld us", api_vm_names[v], op,
                         (long long)a->sim_cost[v][op], (long long)b->sim_cost[v][op]);
                return;
            }
    }
    for (size_t i = 0; i < sizeof a->name / sizeof a->name[0]; i++)
        if (memcmp(&a->name[i], &b->name[i], sizeof a->name[i]) != 0) {
            snprintf(buf, size, "watched object %zu: name \"%s\" -> \"%s\"", i, a->name[i].text,
                     b->name[i].text);
            return;
        }
    for (int i = 0; i < f->nwsem; i++)
        if (a->excess[i] != b->excess[i]) {
            snprintf(buf, size, "watched semaphore %d: excess %lld -> %lld", i,
                     (long long)a->excess[i], (long long)b->excess[i]);
            return;
        }
    for (int i = 0; i < f->nwmutex; i++)
        if (a->owner[i] != b->owner[i]) {
            snprintf(buf, size, "watched mutex %d: owner %p -> %p", i, (void *)a->owner[i],
                     (void *)b->owner[i]);
            return;
        }
    for (int i = 0; i < f->nwmonitor; i++)
        if (a->monitor[i].owner != b->monitor[i].owner ||
            a->monitor[i].depth != b->monitor[i].depth) {
            snprintf(buf, size, "watched monitor %d: owner %p -> %p, depth %lld -> %lld", i,
                     (void *)a->monitor[i].owner, (void *)b->monitor[i].owner,
                     (long long)a->monitor[i].depth, (long long)b->monitor[i].depth);
            return;
        }
    for (int i = 0; i < f->nwproc; i++)
        if (memcmp(&a->proc[i], &b->proc[i], sizeof a->proc[i]) != 0) {
            snprintf(buf, size, "watched process %d: state %d -> %d, priority %d -> %d", i,
                     a->proc[i].state, b->proc[i].state, a->proc[i].priority, b->proc[i].priority);
            return;
        }
    for (int v = 0; v <= N_VM; v++)
        if (memcmp(&a->self_local[v], &b->self_local[v], sizeof a->self_local[v]) != 0) {
            snprintf(buf, size, "the calling process's value of %s changed",
                     v < N_VM ? "a plain process-local variable" : "the dynamic variable");
            return;
        }
    for (int v = 0; v < N_VM; v++) {
        if (a->resolver[v][0] != b->resolver[v][0] || a->resolver[v][1] != b->resolver[v][1]) {
            snprintf(buf, size, "VM %s: resolver status %lld -> %lld, error %lld -> %lld",
                     api_vm_names[v], (long long)a->resolver[v][0], (long long)b->resolver[v][0],
                     (long long)a->resolver[v][1], (long long)b->resolver[v][1]);
            return;
        }
        if (memcmp(&a->bytes[v], &b->bytes[v], sizeof a->bytes[v]) != 0) {
            snprintf(buf, size, "VM %s: its ByteArray changed", api_vm_names[v]);
            return;
        }
    }
    for (int i = 0; i < f->nwsock; i++) {
        const char *what = NULL;
        long long x = 0, y = 0;
        if (a->sock[i].status != b->sock[i].status)
            what = "status", x = a->sock[i].status, y = b->sock[i].status;
        else if (a->sock[i].port != b->sock[i].port)
            what = "port", x = a->sock[i].port, y = b->sock[i].port;
        else if (a->sock[i].fd != b->sock[i].fd)
            what = "descriptor", x = a->sock[i].fd, y = b->sock[i].fd;
        else if (a->sock[i].excess != b->sock[i].excess)
            what = "read semaphore's excess", x = a->sock[i].excess, y = b->sock[i].excess;
        if (what) {
            snprintf(buf, size, "watched socket %d: %s %lld -> %lld", i, what, x, y);
            return;
        }
        if (a->sock[i].probe != b->sock[i].probe) {
            snprintf(buf, size, "watched socket %d: stvm_fd_wait(fd, READ, 0) %s -> %s", i,
                     stvm_err_name(a->sock[i].probe), stvm_err_name(b->sock[i].probe));
            return;
        }
    }
    for (int i = 0; i < f->nwstream; i++)
        if (memcmp(&a->stream[i], &b->stream[i], sizeof a->stream[i]) != 0) {
            snprintf(buf, size, "watched stream %d: counters (fills %llu -> %llu, bytes in %llu "
                     "-> %llu, out %llu -> %llu)", i, (unsigned long long)a->stream[i].st.fills,
                     (unsigned long long)b->stream[i].st.fills,
                     (unsigned long long)a->stream[i].st.bytes_in,
                     (unsigned long long)b->stream[i].st.bytes_in,
                     (unsigned long long)a->stream[i].st.bytes_out,
                     (unsigned long long)b->stream[i].st.bytes_out);
            return;
        }
    for (int i = 0; i < f->nwrec; i++)
        if (a->rec[i][0] != b->rec[i][0] || a->rec[i][1] != b->rec[i][1]) {
            snprintf(buf, size, "watched SocketHandle %d: status %lld -> %lld, error %lld -> %lld",
                     i, (long long)a->rec[i][0], (long long)b->rec[i][0], (long long)a->rec[i][1],
                     (long long)b->rec[i][1]);
            return;
        }
}

bool api_out_clean(const fx *f)
{
    const unsigned char *b = (const unsigned char *)&f->out;
    for (size_t i = 0; i < sizeof f->out; i++)
        if (b[i] != OUT_PATTERN)
            return false;
    return true;
}
