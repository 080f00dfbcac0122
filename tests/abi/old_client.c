/*
 * A program built against an older stvm.h, run with the library built from this tree
 * (scripts/abi-old-header.sh makes that header: this tree's with each public struct's
 * newest fields cut off). It uses only the names of the header, so every call passes
 * the old sizes, and puts canary bytes after every struct the library fills: the
 * library must work with the old structs and never write past them. Prints one line
 * per check; exits 1 at the first failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stvm.h>

#define CANARY 0xA5
#define WITH_CANARY(type) \
    struct {              \
        type s;           \
        unsigned char canary[64]; \
    }

static int failed;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    if (!ok)
        failed = 1;
}

static int intact(const unsigned char *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c[i] != CANARY)
            return 0;
    return 1;
}

static void worker(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_delay_wait_ms(vm, 5);
}

int main(void)
{
    printf("built with sizeof(stvm_config) %zu, sizeof(stvm_stats) %zu\n", sizeof(stvm_config),
           sizeof(stvm_stats));
    WITH_CANARY(stvm_config) cfg;
    memset(cfg.canary, CANARY, sizeof cfg.canary);
    check(stvm_config_init(&cfg.s) == STVM_OK, "stvm_config_init with the old size");
    check(intact(cfg.canary, sizeof cfg.canary), "stvm_config_init wrote the old struct only");
    cfg.s.clock = STVM_CLOCK_SIMULATED;
    cfg.s.timer_slack_us = 7;
    char why[160] = "";
    check(stvm_config_check(&cfg.s, why, sizeof why) == STVM_OK, "stvm_config_check");
    stvm_vm *vm = NULL;
    check(stvm_vm_create(&cfg.s, &vm) == STVM_OK, "stvm_vm_create with the old config");
    if (!vm)
        return 1;
    WITH_CANARY(stvm_config) back;
    memset(&back, CANARY, sizeof back);
    check(stvm_vm_config(vm, &back.s) == STVM_OK && back.s.timer_slack_us == 7 &&
              back.s.clock == STVM_CLOCK_SIMULATED,
          "stvm_vm_config answers the old config's fields");
    check(intact(back.canary, sizeof back.canary), "stvm_vm_config wrote the old struct only");

    stvm_process *p = NULL;
    check(stvm_spawn(vm, 40, "worker", worker, NULL, &p) == STVM_OK, "stvm_spawn");
    WITH_CANARY(stvm_process_info) info;
    memset(&info, CANARY, sizeof info);
    check(stvm_process_get_info(vm, p, &info.s) == STVM_OK && strcmp(info.s.name, "worker") == 0 &&
              info.s.priority == 40,
          "stvm_process_get_info answers the old struct's fields");
    check(intact(info.canary, sizeof info.canary), "stvm_process_get_info wrote the old struct only");

    check(stvm_trace_start(vm, 64) == STVM_OK, "stvm_trace_start");
    check(stvm_run(vm) == STVM_OK, "stvm_run");
    WITH_CANARY(stvm_trace_event) ev;
    memset(&ev, CANARY, sizeof ev);
    check(stvm_trace_get(vm, 1, &ev.s) == STVM_OK && ev.s.seq == 1, "stvm_trace_get");
    check(intact(ev.canary, sizeof ev.canary), "stvm_trace_get wrote the old struct only");

    WITH_CANARY(stvm_stats) st;
    memset(&st, CANARY, sizeof st);
    check(stvm_vm_get_stats(vm, &st.s) == STVM_OK && st.s.context_switches > 0,
          "stvm_vm_get_stats answers the old struct's counters");
    check(intact(st.canary, sizeof st.canary), "stvm_vm_get_stats wrote the old struct only");

    WITH_CANARY(stvm_ffi_stats) fs;
    memset(&fs, CANARY, sizeof fs);
    check(stvm_ffi_get_stats(vm, &fs.s) == STVM_OK && fs.s.callouts == 0, "stvm_ffi_get_stats");
    check(intact(fs.canary, sizeof fs.canary), "stvm_ffi_get_stats wrote the old struct only");

    check(stvm_process_release(vm, p) == STVM_OK, "stvm_process_release");
    stvm_vm_free(vm);
    return failed;
}
