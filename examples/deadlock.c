/* deadlock.c: a small weather station that deadlocks on purpose, to practise finding
 * why (docs/debugging.md, "A deadlock").
 *
 * Four processes share a sensor bus (a mutex), a log book (a monitor) and a gate (a
 * semaphore):
 *   - 'meteo' takes the bus, reads the sensors, then writes the readings into the log;
 *   - 'busmgr' opens the log to note a bus reset, then takes the bus to reset it: the
 *     two take the same two locks in the opposite order, and each ends up waiting for
 *     the other;
 *   - 'c50' waits at the gate for the operator's go-ahead, which nobody ever signals;
 *   - 'shutdown' waits for 'meteo' to finish.
 * stvm_run then answers STVM_EDEADLOCK: the program prints the blocked report, which
 * names each process, what it waits on and who holds it, and exits with status 3.
 * With --abort it aborts instead of exiting (a core file to open in gdb, with
 * `ulimit -c unlimited`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stvm.h>

static stvm_mutex *bus;       /* the sensor bus: one user at a time */
static stvm_monitor *logbook; /* the log book */
static stvm_semaphore *gate;  /* opened by the operator */
static stvm_process *meteo_process;

static void check(int err, const char *what)
{
    if (err != STVM_OK) {
        fprintf(stderr, "%s: %s\n", what, stvm_strerror(err));
        exit(1);
    }
}

static void write_log(stvm_vm *vm, const char *line)
{
    check(stvm_monitor_enter(vm, logbook), "enter the log");
    printf("log: %s\n", line);
    check(stvm_monitor_exit(vm, logbook), "leave the log");
}

static void meteo(stvm_vm *vm, void *arg)
{
    (void)arg;
    check(stvm_mutex_enter(vm, bus), "take the bus");
    stvm_delay_wait_ms(vm, 5);                        /* read the sensors */
    stvm_work_us(vm, 2000);                           /* and work out the readings */
    write_log(vm, "temperature 12.5 C, wind 4 m/s");  /* waits for busmgr's log */
    check(stvm_mutex_exit(vm, bus), "release the bus");
}

static void reset_bus(stvm_vm *vm, void *arg)
{
    (void)arg;
    printf("busmgr: resetting the bus\n");
    check(stvm_mutex_enter(vm, bus), "take the bus");  /* meteo has it */
    check(stvm_mutex_exit(vm, bus), "release the bus");
}

static void busmgr(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_delay_wait_ms(vm, 2);
    check(stvm_monitor_critical(vm, logbook, reset_bus, NULL), "note a bus reset");
}

static void c50(stvm_vm *vm, void *arg)
{
    (void)arg;
    check(stvm_semaphore_wait(vm, gate), "wait at the gate");
    printf("c50: through the gate\n");
}

static void shutdown_station(stvm_vm *vm, void *arg)
{
    (void)arg;
    check(stvm_process_join(vm, meteo_process, -1), "wait for meteo");
    printf("shutdown: meteo has finished\n");
}

int main(int argc, char **argv)
{
    int do_abort = argc > 1 && strcmp(argv[1], "--abort") == 0;
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.cpu_time = true;   /* the process listing (and gdb's) then says who used the CPU */
    stvm_vm *vm;
    check(stvm_vm_create(&cfg, &vm), "stvm_vm_create");

    check(stvm_mutex_new(vm, &bus), "stvm_mutex_new");
    check(stvm_mutex_set_name(vm, bus, "bus"), "name the bus");
    check(stvm_monitor_new(vm, &logbook), "stvm_monitor_new");
    check(stvm_monitor_set_name(vm, logbook, "log"), "name the log");
    check(stvm_semaphore_new(vm, &gate), "stvm_semaphore_new");
    check(stvm_semaphore_set_name(vm, gate, "gate"), "name the gate");

    check(stvm_spawn(vm, 40, "meteo", meteo, NULL, &meteo_process), "spawn meteo");
    check(stvm_spawn(vm, 40, "busmgr", busmgr, NULL, NULL), "spawn busmgr");
    check(stvm_spawn(vm, 50, "c50", c50, NULL, NULL), "spawn c50");
    check(stvm_spawn(vm, 30, "shutdown", shutdown_station, NULL, NULL), "spawn shutdown");

    int err = stvm_run(vm);
    if (err != STVM_EDEADLOCK) {
        fprintf(stderr, "expected a deadlock, stvm_run answered %s\n", stvm_err_name(err));
        return 1;
    }
    char report[2048];
    stvm_vm_blocked_report(vm, report, sizeof report);
    printf("stvm_run: %s\n%s", stvm_strerror(err), report);
    fflush(stdout);
    if (do_abort)
        abort();          /* a core file of the deadlocked program */
    stvm_vm_free(vm);
    return 3;
}
