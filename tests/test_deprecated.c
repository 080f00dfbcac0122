/*
 * The public names before the noun_verb sweep (include/stvm/deprecated.h, suite
 * deprecated): for one release each old name still compiles, and it is the function
 * that replaced it, not a copy or a wrapper that could drift.
 *
 * Every other file is built with STVM_NO_DEPRECATED (the Makefile), so that nothing in
 * the tree but bench/ uses an old name; this one takes it back before stvm.h is read,
 * as a program written against 0.1.0 is built.
 */
#undef STVM_NO_DEPRECATED
#include <stvm.h>

#include "helpers.h"

TestSuite(deprecated, .timeout = 30);

typedef void (*any_fn)(void);

/* One row per old name: both spelled out (# does not expand the macro) and both taken
 * as addresses (the old one through the macro). A call that takes a struct is a macro
 * over its '_' function (include/README.md, "Structs that grow"), which has no address
 * of its own: its row holds the '_' function twice, and
 * the_old_names_of_calls_that_take_a_struct_call_their_new_macro calls through the old
 * name. */
#define OLD_NEW(old, new) {#old, #new, (any_fn)old, (any_fn)new},
#define OLD_NEW_SIZED(old, new) {#old, #new, (any_fn)new##_, (any_fn)new##_},
static const struct {
    const char *old_name, *new_name;
    any_fn old_fn, new_fn;
} renamed[] = {
    OLD_NEW(stvm_active_process, stvm_vm_active_process)
    OLD_NEW(stvm_blocked_report, stvm_vm_blocked_report)
    OLD_NEW(stvm_check_invariants, stvm_vm_check_invariants)
    OLD_NEW_SIZED(stvm_process_info_get, stvm_process_get_info)
    OLD_NEW(stvm_register_external, stvm_external_register)
    OLD_NEW(stvm_unregister_external, stvm_external_unregister)
    OLD_NEW(stvm_signal_external, stvm_external_signal)
    OLD_NEW(stvm_now_us, stvm_vm_now_us)
    OLD_NEW(stvm_millisecond_clock, stvm_vm_millisecond_clock)
    OLD_NEW(stvm_timeout_semaphore_ms, stvm_delay_timeout_semaphore_ms)
    OLD_NEW_SIZED(stvm_get_stats, stvm_vm_get_stats)
    OLD_NEW(stvm_reset_stats, stvm_vm_reset_stats)
    OLD_NEW(stvm_is_smallint, stvm_oop_is_smallint)
    OLD_NEW(stvm_is_integer, stvm_oop_is_integer)
    OLD_NEW(stvm_prim_error_name, stvm_primitive_error_name)
    OLD_NEW(stvm_tcp_accept, stvm_socket_accept)
};
#define N_RENAMED (sizeof renamed / sizeof renamed[0])

Test(deprecated, every_old_name_is_the_function_that_replaced_it)
{
    for (size_t i = 0; i < N_RENAMED; i++)
        cr_expect(renamed[i].old_fn == renamed[i].new_fn, "%s is not %s", renamed[i].old_name,
                  renamed[i].new_name);
}

static void idle_a_while(stvm_vm *vm, void *arg) { stvm_delay_wait_ms(vm, 1); }

Test(deprecated, the_old_names_of_calls_that_take_a_struct_call_their_new_macro)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_process *p = spawn(vm, 40, "p", idle_a_while, NULL);
    stvm_process_info a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    cr_assert_eq(stvm_process_info_get(vm, p, &a), STVM_OK);
    cr_assert_eq(stvm_process_get_info(vm, p, &b), STVM_OK);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
    run_ok(vm);
    stvm_stats s, t;
    cr_assert_eq(stvm_get_stats(vm, &s), STVM_OK);
    cr_assert_eq(stvm_vm_get_stats(vm, &t), STVM_OK);
    cr_assert_eq(memcmp(&s, &t, sizeof s), 0);
    cr_assert_gt(s.context_switches, 0);
    stvm_process_release(vm, p);
    vm_done(vm);
}

/* deprecated.h itself, found as test_api_table.c finds stvm.h: from the repository, or
 * next to the test binary (build/<variant>/stvm-tests), or at $STVM_DEPRECATED_HEADER. */
static FILE *open_deprecated_header(void)
{
    static const char *const rel[] = {"include/stvm/deprecated.h", "../include/stvm/deprecated.h",
                                      "../../include/stvm/deprecated.h"};
    const char *env = getenv("STVM_DEPRECATED_HEADER");
    FILE *fp = env ? fopen(env, "r") : NULL;
    for (size_t i = 0; !fp && i < sizeof rel / sizeof rel[0]; i++)
        fp = fopen(rel[i], "r");
    char path[4096];
    ssize_t n = fp ? -1 : readlink("/proc/self/exe", path, sizeof path - 64);
    if (n > 0) {
        path[n] = 0;
        char *slash = strrchr(path, '/');
        if (slash) {
            snprintf(slash, sizeof path - (size_t)(slash - path), "/../../include/stvm/deprecated.h");
            fp = fopen(path, "r");
        }
    }
    return fp;
}

/* A macro added to deprecated.h without a row above would go untested: every
 * "#define stvm_<old> stvm_<new>" line of the header is a row here, and no row is
 * missing from it. */
Test(deprecated, the_rows_above_are_exactly_the_macros_of_deprecated_h)
{
    FILE *fp = open_deprecated_header();
    cr_assert_not_null(fp, "include/stvm/deprecated.h not found (run from the repository or "
                           "set STVM_DEPRECATED_HEADER)");
    char line[256];
    size_t macros = 0;
    bool seen[N_RENAMED] = {false};
    while (fgets(line, sizeof line, fp)) {
        char old_name[64], new_name[64];
        if (sscanf(line, "#define %63s %63s", old_name, new_name) != 2 ||
            strncmp(old_name, "stvm_", 5) != 0)
            continue;
        macros++;
        size_t i = 0;
        while (i < N_RENAMED && strcmp(renamed[i].old_name, old_name) != 0)
            i++;
        cr_expect_lt(i, N_RENAMED, "deprecated.h defines %s, which has no row here", old_name);
        if (i < N_RENAMED) {
            cr_expect_str_eq(renamed[i].new_name, new_name, "%s", old_name);
            seen[i] = true;
        }
    }
    fclose(fp);
    for (size_t i = 0; i < N_RENAMED; i++)
        cr_expect(seen[i], "%s has a row here but no macro in deprecated.h", renamed[i].old_name);
    cr_expect_eq(macros, N_RENAMED);
}

static void old_names_fn(stvm_vm *vm, void *arg)
{
    int *checked = arg;
    cr_expect_eq(stvm_active_process(vm), stvm_vm_active_process(vm));
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(vm, stvm_active_process(vm), &info), STVM_OK);
    cr_expect_str_eq(info.name, "old names");
    stvm_semaphore *sem = sem_make(vm);
    stvm_delay *d = NULL;
    cr_assert_eq(stvm_timeout_semaphore_ms(vm, sem, 5, &d), STVM_OK);
    cr_expect_eq(stvm_semaphore_wait(vm, sem), STVM_OK, "the timeout semaphore was signalled");
    cr_expect_eq(stvm_delay_free(vm, d), STVM_OK);
    cr_expect_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    (*checked)++;
}

/* The old names used the way 0.1.0's programs use them, on a live VM: each answers
 * what the new one does. */
Test(deprecated, old_names_still_drive_a_vm)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    cr_expect_eq(stvm_now_us(vm), stvm_vm_now_us(vm));
    cr_expect_eq(stvm_millisecond_clock(vm), stvm_vm_millisecond_clock(vm));
    cr_expect_eq(stvm_active_process(vm), NULL, "outside stvm_run");

    stvm_semaphore *sem = sem_make(vm);
    int idx = 0;
    cr_assert_eq(stvm_register_external(vm, sem, &idx), STVM_OK);
    cr_expect_eq(stvm_signal_external(vm, idx), STVM_OK);

    stvm_oop small = 0, big = 0;
    cr_assert_eq(stvm_int_from_i64(vm, 7, &small), STVM_OK);
    cr_assert_eq(stvm_int_from_u64(vm, UINT64_MAX, &big), STVM_OK);
    cr_expect(stvm_is_smallint(small) && !stvm_is_smallint(big));
    cr_expect(stvm_is_integer(vm, big) && !stvm_is_integer(vm, STVM_NIL));
    cr_expect_eq(stvm_oop_release(vm, big), STVM_OK);
    cr_expect_str_eq(stvm_prim_error_name(8), stvm_primitive_error_name(8));

    int checked = 0;
    cr_assert_eq(stvm_spawn(vm, 40, "old names", old_names_fn, &checked, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_expect_eq(checked, 1);
    cr_expect_eq(stvm_semaphore_excess(vm, sem), 1, "the old name's external signal arrived");
    cr_expect_eq(stvm_unregister_external(vm, idx), STVM_OK);
    cr_expect_eq(stvm_external_unregister(vm, idx), STVM_EINVAL, "the old name freed the slot");

    stvm_stats s;
    cr_assert_eq(stvm_get_stats(vm, &s), STVM_OK);
    cr_expect_gt(s.context_switches, 0, "the process ran");
    stvm_reset_stats(vm);
    cr_assert_eq(stvm_vm_get_stats(vm, &s), STVM_OK);
    cr_expect_eq(s.context_switches, 0, "the old name reset the counters");

    char buf[256];
    cr_expect_eq(stvm_check_invariants(vm, buf, sizeof buf), STVM_OK, "%s", buf);
    cr_expect_geq(stvm_blocked_report(vm, buf, sizeof buf), 0);
    cr_expect_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    vm_done(vm);
}
