/*
 * The scenario lab (suite lab): every scenario `build/stvm-lab list` names is run, and
 * its text and Trace Event JSON must equal tests/lab/NAME.txt and NAME.json byte for
 * byte (a changed scheduler rule shows as a diff; `make lab-golden` rewrites them), and
 * the JSON must pass tests/trace_check.py. Run from the repository (make check does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static bool same_file(const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    return system(cmd) == 0;
}

Test(lab, every_scenario_prints_and_writes_exactly_its_expected_output, .timeout = 120)
{
    char lab[1024], cmd[2048], name[128];
    tool_path("stvm-lab", lab, sizeof lab);
    snprintf(cmd, sizeof cmd, "%s list", lab);
    FILE *list = popen(cmd, "r");
    cr_assert_not_null(list);
    int scenarios = 0;
    while (fscanf(list, "%127s%*[^\n]", name) == 1) {
        char txt[] = "/tmp/stvm-lab-XXXXXX", json[] = "/tmp/stvm-lab-XXXXXX.json", want[512];
        close(mkstemp(txt));
        close(mkstemps(json, 5));
        snprintf(cmd, sizeof cmd, "%s run %s --trace %s < /dev/null > %s", lab, name, json, txt);
        cr_assert_eq(system(cmd), 0, "%s failed", name);
        snprintf(want, sizeof want, "tests/lab/%s.txt", name);
        cr_expect(same_file(txt, want), "%s's text differs from %s (diff them)", name, want);
        snprintf(want, sizeof want, "tests/lab/%s.json", name);
        cr_expect(same_file(json, want), "%s's JSON differs from %s", name, want);
        snprintf(cmd, sizeof cmd, "python3 tests/trace_check.py %s > /dev/null", json);
        cr_expect_eq(system(cmd), 0, "%s's JSON fails tests/trace_check.py", name);
        unlink(txt);
        unlink(json);
        scenarios++;
    }
    pclose(list);
    cr_assert_geq(scenarios, 10, "stvm-lab list named %d scenarios", scenarios);
}

Test(lab, an_unknown_scenario_is_refused)
{
    char lab[1024], cmd[2048];
    tool_path("stvm-lab", lab, sizeof lab);
    snprintf(cmd, sizeof cmd, "%s run no_such_scenario > /dev/null 2>&1", lab);
    cr_assert_neq(system(cmd), 0);
}
