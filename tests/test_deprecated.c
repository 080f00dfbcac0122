/*
 * The public names 0.3.0 replaced (include/stvm/deprecated.h, suite deprecated): for one
 * release each old name still compiles, and it calls the function that replaced it, not
 * a copy or a wrapper that could drift. A plain rename is that function (the same
 * address); a call whose arguments moved is a function-like macro, called here the old
 * way and checked to do what the new call does.
 *
 * Every other file is built with STVM_NO_DEPRECATED (the Makefile), so that nothing in
 * the tree uses an old name; this one takes it back before stvm.h is read, as a program
 * written against 0.2.0 is built.
 */
#undef STVM_NO_DEPRECATED
#include <stvm.h>

#include "helpers.h"

TestSuite(deprecated, .timeout = 30);

/* One row per old name, with its new name and how it maps: RENAMED is the new function
 * under another name; REORDERED takes the old arguments and puts them in the new order. */
enum { RENAMED, REORDERED };
static const struct {
    const char *old_name, *new_name;
    int how;
} aliases[] = {
    {"stvm_vm_new", "stvm_vm_create", REORDERED},
    {"stvm_run_within_ms", "stvm_call_within_ms", REORDERED},
    {"stvm_run_within_us", "stvm_call_within_us", REORDERED},
    {"stvm_local_get_of", "stvm_process_get_local", RENAMED},
    {"stvm_tcp_accept", "stvm_socket_accept", RENAMED},
};
#define N_ALIASES (sizeof aliases / sizeof aliases[0])

typedef void (*any_fn)(void);

Test(deprecated, a_renamed_call_is_the_function_that_replaced_it)
{
    cr_expect((any_fn)stvm_local_get_of == (any_fn)stvm_process_get_local);
    cr_expect((any_fn)stvm_tcp_accept == (any_fn)stvm_socket_accept);
}

/* A macro added to deprecated.h without a row above would go untested: every
 * "#define stvm_<old>[(args)] ..." line of the header is a row here, mapping to the new
 * name the row says (the first stvm_ name of its replacement), and no row is missing
 * from it. */
Test(deprecated, the_rows_above_are_exactly_the_macros_of_deprecated_h)
{
    FILE *fp = open_public_header("stvm/deprecated.h");
    cr_assert_not_null(fp, "include/stvm/deprecated.h not found (run from the repository or "
                           "set STVM_INCLUDE)");
    char line[256];
    size_t macros = 0;
    bool seen[N_ALIASES] = {false};
    while (fgets(line, sizeof line, fp)) {
        char old_name[64];
        if (sscanf(line, "#define %63[a-z0-9_]", old_name) != 1 || strncmp(old_name, "stvm_", 5) != 0)
            continue;
        const char *rest = line + strlen("#define ") + strlen(old_name);
        bool function_like = *rest == '(';
        const char *repl = function_like ? strchr(rest, ')') : rest;
        cr_assert_not_null(repl, "%s", line);
        repl = strstr(repl, "stvm_");
        cr_assert_not_null(repl, "deprecated.h's %s maps to no stvm_ name", old_name);
        char new_name[64];
        cr_assert_eq(sscanf(repl, "%63[a-z0-9_]", new_name), 1);
        macros++;
        size_t i = 0;
        while (i < N_ALIASES && strcmp(aliases[i].old_name, old_name) != 0)
            i++;
        cr_expect_lt(i, N_ALIASES, "deprecated.h defines %s, which has no row here", old_name);
        if (i < N_ALIASES) {
            cr_expect_str_eq(aliases[i].new_name, new_name, "%s", old_name);
            cr_expect_eq(function_like, aliases[i].how == REORDERED,
                         "%s: a reordered call is a function-like macro, a rename is not",
                         old_name);
            seen[i] = true;
        }
    }
    fclose(fp);
    for (size_t i = 0; i < N_ALIASES; i++)
        cr_expect(seen[i], "%s has a row here but no macro in deprecated.h", aliases[i].old_name);
    cr_expect_eq(macros, N_ALIASES);
}

/* stvm_vm_new(out, cfg): the configuration reaches the VM, as stvm_vm_create(cfg, out). */
Test(deprecated, old_vm_new_makes_the_vm_of_its_configuration)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.smallint_bits = 31;
    cfg.timer_slack_us = 7;
    stvm_vm *vm = NULL;
    cr_assert_eq(stvm_vm_new(&vm, &cfg), STVM_OK);
    stvm_config back;
    cr_assert_eq(stvm_vm_config(vm, &back), STVM_OK);
    cr_expect_eq(back.clock, STVM_CLOCK_SIMULATED);
    cr_expect_eq(back.smallint_bits, 31);
    cr_expect_eq(back.timer_slack_us, 7u);
    vm_done(vm);
    cfg.smallint_bits = 40;
    vm = NULL;
    cr_expect_eq(stvm_vm_new(&vm, &cfg), STVM_EINVAL, "a bad configuration is refused");
    cr_expect_null(vm);
    cr_assert_eq(stvm_vm_new(&vm, NULL), STVM_OK, "NULL: the defaults");
    vm_done(vm);
}

typedef struct within {
    int calls;
    int rc_fast_ms, rc_slow_ms, rc_zero_ms, rc_fast_us, rc_slow_us;
    int wait_rc;
} within;

static void quick(stvm_vm *vm, void *arg)
{
    ((within *)arg)->calls++;
    stvm_delay_wait_ms(vm, 1);
}

static void slow(stvm_vm *vm, void *arg)
{
    within *w = arg;
    w->calls++;
    w->wait_rc = stvm_delay_wait_ms(vm, 50);   /* cut short: EINTR */
}

static void within_body(stvm_vm *vm, void *arg)
{
    within *w = arg;
    w->rc_fast_ms = stvm_run_within_ms(vm, 20, quick, w);
    w->rc_slow_ms = stvm_run_within_ms(vm, 5, slow, w);
    w->rc_zero_ms = stvm_run_within_ms(vm, 0, quick, w);   /* fn not called */
    w->rc_fast_us = stvm_run_within_us(vm, 20000, quick, w);
    w->rc_slow_us = stvm_run_within_us(vm, 5000, slow, w);
}

/* stvm_run_within_ms(vm, ms, fn, arg) and _us: the time limit reaches the new call as its
 * last argument, fn and arg as its inputs. */
Test(deprecated, old_run_within_puts_the_time_limit_last)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    within w = {0};
    spawn(vm, 40, "within", within_body, &w);
    run_ok(vm);
    cr_expect_eq(w.rc_fast_ms, STVM_OK);
    cr_expect_eq(w.rc_slow_ms, STVM_ETIMEDOUT);
    cr_expect_eq(w.rc_zero_ms, STVM_ETIMEDOUT);
    cr_expect_eq(w.rc_fast_us, STVM_OK);
    cr_expect_eq(w.rc_slow_us, STVM_ETIMEDOUT);
    cr_expect_eq(w.wait_rc, STVM_EINTR);
    cr_expect_eq(w.calls, 4, "every run but the 0 ms one called fn");
    vm_done(vm);
}

typedef struct local_case {
    stvm_local *v;
    stvm_semaphore *go;
} local_case;

static void holds_a_value(stvm_vm *vm, void *arg)
{
    local_case *c = arg;
    stvm_local_set(vm, c->v, (void *)"mine");
    stvm_semaphore_wait(vm, c->go);
}

/* stvm_local_get_of(vm, p, v, &value) reads p's value, as stvm_process_get_local. */
Test(deprecated, old_local_get_of_reads_another_process_value)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    local_case c = {.go = sem_make(vm)};
    cr_assert_eq(stvm_local_new(vm, 0, (void *)"default", NULL, NULL, &c.v), STVM_OK);
    stvm_process *p = spawn(vm, 40, "holder", holds_a_value, &c);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    void *old = NULL, *now = NULL;
    cr_expect_eq(stvm_local_get_of(vm, p, c.v, &old), 1);
    cr_expect_eq(stvm_process_get_local(vm, p, c.v, &now), 1);
    cr_expect_str_eq(old, "mine");
    cr_expect_eq(old, now);
    stvm_semaphore_signal(vm, c.go);
    run_ok(vm);
    stvm_process_release(vm, p);
    cr_expect_eq(stvm_local_free(vm, c.v), STVM_OK);
    cr_expect_eq(stvm_semaphore_free(vm, c.go), STVM_OK);
    vm_done(vm);
}
