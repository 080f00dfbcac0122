/*
 * The configuration check: stvm_config_check names the first bad field and its
 * range, and stvm_vm_create refuses exactly what it refuses.
 */
#include <limits.h>

#include "helpers.h"

TestSuite(config);

typedef struct bad_field {
    const char *field;
    void (*spoil)(stvm_config *c);
} bad_field;

static void bits_32(stvm_config *c) { c->smallint_bits = 32; }
static void stack_8191(stvm_config *c) { c->stack_size = 8191; }
static void stack_too_big(stvm_config *c) { c->stack_size = ((size_t)64 << 20) + 1; }
static void guard_1(stvm_config *c) { c->stack_guard_size = 1; }
static void method_9(stvm_config *c) { c->stack_guard_method = 9; }
static void delay_clock_2(stvm_config *c) { c->delay_clock = 2; }
static void clock_minus_1(stvm_config *c) { c->clock = -1; }
static void sim_start_huge(stvm_config *c) { c->sim_start_us = ((uint64_t)1 << 62) + 1; }
static void ms_start_wraps(stvm_config *c) { c->ms_clock_start = 0x20000000; }
static void relinquish_huge(stvm_config *c) { c->idle_relinquish_us = 10000001; }
static void external_0(stvm_config *c) { c->external_table_size = 0; }
static void external_huge(stvm_config *c) { c->external_table_size = 65537; }

static const bad_field BAD[] = {
    {"smallint_bits", bits_32},          {"stack_size", stack_8191},
    {"stack_size", stack_too_big},       {"stack_guard_size", guard_1},
    {"stack_guard_method", method_9},    {"delay_clock", delay_clock_2},
    {"clock", clock_minus_1},            {"sim_start_us", sim_start_huge},
    {"ms_clock_start", ms_start_wraps},
    {"idle_relinquish_us", relinquish_huge}, {"external_table_size", external_0},
    {"external_table_size", external_huge},
};

Test(config, the_defaults_pass_and_why_is_emptied)
{
    stvm_config c;
    stvm_config_init(&c);
    char why[128] = "stale";
    cr_assert_eq(stvm_config_check(&c, why, sizeof why), STVM_OK);
    cr_assert_str_eq(why, "");
    cr_assert_eq(stvm_config_check(&c, NULL, 0), STVM_OK);
}

Test(config, each_bad_field_is_named_with_its_allowed_range_and_refused_by_vm_create)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        stvm_config c;
        stvm_config_init(&c);
        BAD[i].spoil(&c);
        char why[200] = "";
        cr_assert_eq(stvm_config_check(&c, why, sizeof why), STVM_EINVAL, "%s", BAD[i].field);
        cr_assert_eq(strncmp(why, BAD[i].field, strlen(BAD[i].field)), 0,
                     "why names '%s': %s", BAD[i].field, why);
        cr_assert_not_null(strstr(why, "allowed"), "why gives the range: %s", why);
        stvm_vm *vm = (stvm_vm *)0x1;
        cr_assert_eq(stvm_vm_create(&c, &vm), STVM_EINVAL, "%s", BAD[i].field);
        cr_assert_eq(vm, (stvm_vm *)0x1, "out untouched on error");
    }
}

Test(config, the_edges_of_each_range_are_accepted)
{
    stvm_config c;
    stvm_config_init(&c);
    c.stack_size = 8192;
    c.stack_guard_size = 4096;
    c.sim_start_us = (uint64_t)1 << 62;
    c.ms_clock_start = 0x1FFFFFFF;
    c.idle_relinquish_us = 10000000;
    c.external_table_size = 65536;
    c.stack_guard_method = STVM_GUARD_CANARY;
    cr_assert_eq(stvm_config_check(&c, NULL, 0), STVM_OK);
    c.stack_size = 0;
    c.stack_guard_size = 0;
    cr_assert_eq(stvm_config_check(&c, NULL, 0), STVM_OK, "0 means the default");
    stvm_vm *vm = vm_make(&c);
    stvm_config got;
    cr_assert_eq(stvm_vm_config(vm, &got), STVM_OK);
    cr_assert_eq(got.stack_size, 16 * 1024, "defaults filled in");
    cr_assert_eq(got.stack_guard_size, 64 * 1024);
    vm_done(vm);
}

Test(config, a_truncated_why_stays_terminated_and_null_arguments_are_refused)
{
    stvm_config c;
    stvm_config_init(&c);
    c.smallint_bits = 7;
    char why[8];
    memset(why, 'x', sizeof why);
    cr_assert_eq(stvm_config_check(&c, why, sizeof why), STVM_EINVAL);
    cr_assert_eq(why[sizeof why - 1], 0);
    cr_assert_eq(stvm_config_check(NULL, why, sizeof why), STVM_EINVAL);
    cr_assert_eq(stvm_config_check(&c, NULL, 0), STVM_EINVAL);
    cr_assert_eq(stvm_config_check(&c, NULL, 10), STVM_EINVAL, "why NULL with a size");
}

/* The tools read and print idle modes by these words (stvm-lab's idle-mode setting,
 * stvm-bench's --idle-mode): one name a mode, none for a number that is no mode, and
 * every mode the configuration accepts has one. */
Test(config, each_idle_mode_has_its_one_name)
{
    static const char *const want[STVM_IDLE_MODES] = {
        [STVM_IDLE_POLL] = "poll", [STVM_IDLE_LEGACY] = "legacy", [STVM_IDLE_SPIN] = "spin",
        [STVM_IDLE_OSVM764] = "osvm764"};
    for (int m = 0; m < STVM_IDLE_MODES; m++) {
        cr_assert_str_eq(stvm_idle_mode_name(m), want[m]);
        stvm_config c;
        stvm_config_init(&c);
        c.idle_mode = m;
        cr_assert_eq(stvm_config_check(&c, NULL, 0), STVM_OK, "mode %d is accepted", m);
    }
    stvm_config c;
    stvm_config_init(&c);
    c.idle_mode = STVM_IDLE_MODES;
    cr_assert_eq(stvm_config_check(&c, NULL, 0), STVM_EINVAL, "past the last mode");
    cr_assert_null(stvm_idle_mode_name(-1));
    cr_assert_null(stvm_idle_mode_name(STVM_IDLE_MODES));
    cr_assert_null(stvm_idle_mode_name(INT_MIN));
    cr_assert_null(stvm_idle_mode_name(INT_MAX));
}
