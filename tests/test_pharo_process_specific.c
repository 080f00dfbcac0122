/*
 * Pharo's ProcessSpecificTest re-expressed against stvm's public API (suite
 * `ProcessSpecificTest`, one test per Pharo selector). The test method runs in a green
 * process at STVM_PRIORITY_USER_SCHEDULING (the runner's priority in Pharo), named
 * after the selector; what Pharo asserts inside processes is recorded in the test's
 * scenario and asserted by the host after stvm_run. The simulated clock makes Pharo's
 * 30 ms Delays and its timed waits take no wall-clock time.
 *
 * Pharo's test variables become stvm_local variables made by the test:
 *  - TestLocalVariable (a ProcessLocalVariable whose default is 0): flags 0, default 0;
 *  - TestDynamicVariable (a DynamicVariable, default nil): STVM_LOCAL_DYNAMIC, NULL;
 *  - TestInheritableVariable (a ProcessLocalVariable inheritable while enabled):
 *    STVM_LOCAL_INHERITABLE; Pharo's enable and disable switch the class's
 *    isInheritable for the test's extent, stvm fixes the flag when the variable is
 *    made, so the variable is made inheritable for the test and freed after it;
 *  - CurrentExecutionEnvironment (an inheritable ProcessLocalVariable whose default is
 *    DefaultExecutionEnvironment's instance, and whose installValue:intoForked:from:
 *    tells the environment about the new process): STVM_LOCAL_INHERITABLE with the
 *    default environment as default and an inherit_fn that does the telling;
 *    beActiveDuring: is stvm_local_during.
 * Smalltalk integers are tagged pointers (2n + 1, as a SmallInteger is), so that 0 is a
 * value and NULL stays nil.
 *
 * Every test method of Pharo's ProcessSpecificTest (pharo-project/pharo,
 * src/Kernel-Tests; pharo-core has testLocalVariable and the two
 * testDynamicVariable... methods of the list below in its older form):
 *
 *   testDynamicVariable                          expressed
 *   testDynamicVariableAccessFromDifferentProcess  expressed: evaluate:onBehalfOf:
 *                                                around value is stvm_process_get_local
 *   testDynamicVariableBlockReturnValue          expressed: the block's value comes
 *                                                back through fn's arg
 *   testDynamicVariableRemovedAfterUse           expressed: psValueAt: answering nil is
 *                                                stvm_local_get answering 0 (no value
 *                                                of its own)
 *   testExecutionEnvironment                     expressed
 *   testInheritableVariable                      expressed
 *   testInheritingExecutionEnvironment           expressed
 *   testLocalVariable                            expressed
 * (checkDynamic: and checkLocal: are the class's helpers, not tests.)
 */
#include "helpers.h"

TestSuite(ProcessSpecificTest, .timeout = 30);

#define TEST_PRIORITY STVM_PRIORITY_USER_SCHEDULING
#define INT(n) ((void *)(uintptr_t)(((uintptr_t)(n) << 1) | 1u))
#define INT_OF(p) ((intptr_t)(uintptr_t)(p) >> 1)

static stvm_vm *sim_vm_us(void) { return vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0); }

typedef struct ps {
    stvm_vm *vm;
    stvm_local *var;
    stvm_semaphore *s1, *s2, *sem;
    bool p1stopped, p2stopped;
    int wait1, wait2;
    void *result;
    int own;
    stvm_process *process;
    int bad_line;
} ps;

static void run_test_method(stvm_vm *vm, const char *selector, stvm_fn fn, void *arg)
{
    cr_assert_eq(stvm_spawn(vm, TEST_PRIORITY, selector, fn, arg, NULL), STVM_OK);
    run_ok(vm);
}

/* Pharo's checkDynamic: and checkLocal:: the active process's value is `want`. */
static bool value_is(ps *s, void *want)
{
    void *v = (void *)-1;
    int rc = stvm_local_get(s->vm, s->var, &v);
    return rc >= 0 && v == want;
}

/* ---- testDynamicVariable ------------------------------------------------------------ */

static void bound_3(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 30) == STVM_OK);
    GCHECK(s, value_is(s, INT(3)));
}

static void bound_1(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, value_is(s, INT(1)));
    GCHECK(s, stvm_delay_wait_ms(vm, 30) == STVM_OK);
    GCHECK(s, value_is(s, INT(1)));
    GCHECK(s, stvm_local_during(vm, s->var, INT(3), bound_3, s) == STVM_OK);
    GCHECK(s, value_is(s, INT(1)));
}

static void dynamic_first(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_local_during(vm, s->var, INT(1), bound_1, s) == STVM_OK);
    GCHECK(s, value_is(s, NULL));
    s->p1stopped = true;
    stvm_semaphore_signal(vm, s->s1);
}

static void bound_2(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, value_is(s, INT(2)));
    GCHECK(s, stvm_delay_wait_ms(vm, 30) == STVM_OK);
    GCHECK(s, value_is(s, INT(2)));
}

static void dynamic_second(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_local_during(vm, s->var, INT(2), bound_2, s) == STVM_OK);
    GCHECK(s, value_is(s, NULL));
    s->p2stopped = true;
    stvm_semaphore_signal(vm, s->s2);
}

static void test_dynamic_variable(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_spawn(vm, TEST_PRIORITY, "p1", dynamic_first, s, NULL) == STVM_OK);
    GCHECK(s, stvm_spawn(vm, TEST_PRIORITY, "p2", dynamic_second, s, NULL) == STVM_OK);
    s->wait1 = stvm_semaphore_wait_timeout_ms(vm, s->s1, 10000);
    s->wait2 = stvm_semaphore_wait_timeout_ms(vm, s->s2, 10000);
}

static void make_case(ps *s, unsigned flags, void *deflt, stvm_local_inherit_fn inh)
{
    *s = (ps){.vm = sim_vm_us()};
    cr_assert_eq(stvm_local_new(s->vm, flags, deflt, NULL, inh, &s->var), STVM_OK);
    s->s1 = sem_make(s->vm);
    s->s2 = sem_make(s->vm);
    s->sem = sem_make(s->vm);
}

static void end_case(ps *s)
{
    ASSERT_GREEN_OK(s);
    cr_assert_eq(stvm_local_free(s->vm, s->var), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(s->vm, s->s1), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(s->vm, s->s2), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(s->vm, s->sem), STVM_OK);
    vm_done(s->vm);
}

/* ProcessSpecificTest>>testDynamicVariable: two processes bind a dynamic variable
 * (one of them twice, nested) and sleep inside their bindings, interleaved; each sees
 * only its own binding, the inner one while it lasts, and nil once its bindings end. */
Test(ProcessSpecificTest, testDynamicVariable)
{
    ps s;
    make_case(&s, STVM_LOCAL_DYNAMIC, NULL, NULL);
    run_test_method(s.vm, "testDynamicVariable", test_dynamic_variable, &s);
    cr_assert_eq(s.wait1, STVM_OK);
    cr_assert_eq(s.wait2, STVM_OK);
    cr_assert(s.p1stopped);
    cr_assert(s.p2stopped);
    end_case(&s);
}

/* ---- testDynamicVariableAccessFromDifferentProcess ------------------------------------ */

static void bound_waits(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    stvm_semaphore_wait(vm, s->sem);
}

static void binds_123(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_local_during(vm, s->var, INT(123), bound_waits, s) == STVM_OK);
}

static void test_access_from_different_process(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_spawn(vm, TEST_PRIORITY, "process", binds_123, s, &s->process) == STVM_OK);
    stvm_yield(vm);
    s->own = stvm_process_get_local(vm, s->process, s->var, &s->result);
    stvm_semaphore_signal(vm, s->sem);
}

/* ProcessSpecificTest>>testDynamicVariableAccessFromDifferentProcess: a process binds
 * 123 and waits inside the binding; read on that process's behalf, the variable
 * answers 123. */
Test(ProcessSpecificTest, testDynamicVariableAccessFromDifferentProcess)
{
    ps s;
    make_case(&s, STVM_LOCAL_DYNAMIC, NULL, NULL);
    run_test_method(s.vm, "testDynamicVariableAccessFromDifferentProcess",
                    test_access_from_different_process, &s);
    cr_assert_eq(s.own, 1);
    cr_assert_eq(INT_OF(s.result), 123);
    cr_assert_eq(stvm_process_release(s.vm, s.process), STVM_OK);
    end_case(&s);
}

/* ---- testDynamicVariableBlockReturnValue ---------------------------------------------- */

static void plus_one(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    void *v = NULL;
    GCHECK(s, stvm_local_get(vm, s->var, &v) == 1);
    s->result = INT(INT_OF(v) + 1);
}

static void test_block_return_value(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_local_during(vm, s->var, INT(10), plus_one, s) == STVM_OK);
}

/* ProcessSpecificTest>>testDynamicVariableBlockReturnValue: what the block computes
 * from the bound value (10 + 1) is what value:during: answers. */
Test(ProcessSpecificTest, testDynamicVariableBlockReturnValue)
{
    ps s;
    make_case(&s, STVM_LOCAL_DYNAMIC, NULL, NULL);
    run_test_method(s.vm, "testDynamicVariableBlockReturnValue", test_block_return_value, &s);
    cr_assert_eq(INT_OF(s.result), 11);
    end_case(&s);
}

/* ---- testDynamicVariableRemovedAfterUse ----------------------------------------------- */

static void empty_block(stvm_vm *vm, void *arg) {}

static void test_removed_after_use(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_local_during(vm, s->var, INT(3), empty_block, s) == STVM_OK);
    s->result = INT(99);
    s->own = stvm_local_get(vm, s->var, &s->result);
}

/* ProcessSpecificTest>>testDynamicVariableRemovedAfterUse: after a binding of a process
 * that had none ends, the process has no value of its own left (it answers nil, the
 * default). */
Test(ProcessSpecificTest, testDynamicVariableRemovedAfterUse)
{
    ps s;
    make_case(&s, STVM_LOCAL_DYNAMIC, NULL, NULL);
    run_test_method(s.vm, "testDynamicVariableRemovedAfterUse", test_removed_after_use, &s);
    cr_assert_eq(s.own, 0);
    cr_assert_null(s.result);
    end_case(&s);
}

/* ---- the execution environments ---------------------------------------------------- */

/* Pharo's ExecutionEnvironmentStub (which notes the processes forked while it is
 * active) and DefaultExecutionEnvironment's instance (which notes nothing). */
typedef struct env {
    bool notes_forks;   /* the ExecutionEnvironmentStub kind */
    stvm_process *forked[4];
    int nforked;
} env;

/* CurrentExecutionEnvironment's installValue:intoForked:from:: the child gets the
 * parent's environment, which is told about it (prepareForNewProcess:). */
static void *env_install(void *value, stvm_process *child)
{
    env *e = value;
    if (e->notes_forks && e->nforked < 4)
        e->forked[e->nforked++] = child;
    return e;
}

typedef struct env_case {
    ps s;
    env default_env, new_env;
    bool checked[3];
    stvm_process *p;
    int bad_line;
} env_case;

static bool env_is(env_case *c, env *want)
{
    void *v = NULL;
    return stvm_local_get(c->s.vm, c->s.var, &v) >= 0 && v == want;
}

static void default_active(stvm_vm *vm, void *arg)
{
    env_case *c = arg;
    c->checked[1] = true;
    GCHECK(c, env_is(c, &c->default_env));
}

static void new_env_active(stvm_vm *vm, void *arg)
{
    env_case *c = arg;
    c->checked[0] = true;
    GCHECK(c, env_is(c, &c->new_env));
    GCHECK(c, stvm_local_during(vm, c->s.var, &c->default_env, default_active, c) ==
                  STVM_OK);
    c->checked[2] = true;
    GCHECK(c, env_is(c, &c->new_env));
}

static void test_execution_environment(stvm_vm *vm, void *arg)
{
    env_case *c = arg;
    GCHECK(c, env_is(c, &c->default_env));   /* nothing active: the default */
    GCHECK(c, stvm_local_during(vm, c->s.var, &c->new_env, new_env_active, c) == STVM_OK);
}

static void make_env_case(env_case *c)
{
    *c = (env_case){.new_env = {.notes_forks = true}};
    make_case(&c->s, STVM_LOCAL_INHERITABLE, &c->default_env, env_install);
}

/* ProcessSpecificTest>>testExecutionEnvironment: while an environment is active it is
 * the current one; the default one made active inside it is current for its own
 * extent, and the outer one is current again afterwards. */
Test(ProcessSpecificTest, testExecutionEnvironment)
{
    env_case c;
    make_env_case(&c);
    run_test_method(c.s.vm, "testExecutionEnvironment", test_execution_environment, &c);
    ASSERT_GREEN_OK(&c);
    cr_assert(c.checked[0] && c.checked[1] && c.checked[2]);
    cr_assert_eq(c.new_env.nforked, 0);
    end_case(&c.s);
}

static void forked_checks(stvm_vm *vm, void *arg)
{
    env_case *c = arg;
    c->checked[1] = true;
    GCHECK(c, env_is(c, &c->new_env));
}

static void forks_inside(stvm_vm *vm, void *arg)
{
    env_case *c = arg;
    GCHECK(c, stvm_spawn(vm, TEST_PRIORITY, "forked", forked_checks, c, &c->p) == STVM_OK);
}

static void test_inheriting_execution_environment(stvm_vm *vm, void *arg)
{
    env_case *c = arg;
    GCHECK(c, stvm_local_during(vm, c->s.var, &c->new_env, forks_inside, c) == STVM_OK);
}

/* ProcessSpecificTest>>testInheritingExecutionEnvironment: a process forked while an
 * environment is active runs in that environment (even after the activation that was
 * current at the fork has ended), and the environment was told about it. */
Test(ProcessSpecificTest, testInheritingExecutionEnvironment)
{
    env_case c;
    make_env_case(&c);
    run_test_method(c.s.vm, "testInheritingExecutionEnvironment",
                    test_inheriting_execution_environment, &c);
    ASSERT_GREEN_OK(&c);
    cr_assert(c.checked[1], "the forked process ran");
    cr_assert_eq(c.new_env.nforked, 1);
    cr_assert_eq(c.new_env.forked[0], c.p);
    cr_assert_eq(stvm_process_release(c.s.vm, c.p), STVM_OK);
    end_case(&c.s);
}

/* ---- testInheritableVariable ---------------------------------------------------------- */

static const char inherited_var[] = "inheritedVar";   /* the Symbol #inheritedVar */

typedef struct inh_case {
    ps s;
    void *parent_var, *child_var;
} inh_case;

static void child_reads(stvm_vm *vm, void *arg)
{
    inh_case *c = arg;
    stvm_local_get(vm, c->s.var, &c->child_var);
    stvm_semaphore_signal(vm, c->s.s2);
}

static void parent_sets_and_forks(stvm_vm *vm, void *arg)
{
    inh_case *c = arg;
    GCHECK(&c->s, stvm_local_set(vm, c->s.var, (void *)inherited_var) == STVM_OK);
    stvm_local_get(vm, c->s.var, &c->parent_var);
    GCHECK(&c->s, stvm_spawn(vm, TEST_PRIORITY, "child", child_reads, c, NULL) == STVM_OK);
    stvm_semaphore_signal(vm, c->s.s1);
}

static void test_inheritable_variable(stvm_vm *vm, void *arg)
{
    inh_case *c = arg;
    GCHECK(&c->s,
           stvm_spawn(vm, TEST_PRIORITY, "parent", parent_sets_and_forks, c, NULL) == STVM_OK);
    c->s.wait1 = stvm_semaphore_wait_timeout_ms(vm, c->s.s1, 2000);
    c->s.wait2 = stvm_semaphore_wait_timeout_ms(vm, c->s.s2, 2000);
}

/* ProcessSpecificTest>>testInheritableVariable: a process sets an inheritable variable
 * and forks; the forked process answers the value its parent set, without setting it. */
Test(ProcessSpecificTest, testInheritableVariable)
{
    inh_case c = {0};
    make_case(&c.s, STVM_LOCAL_INHERITABLE, NULL, NULL);   /* TestInheritableVariable enable */
    run_test_method(c.s.vm, "testInheritableVariable", test_inheritable_variable, &c);
    cr_assert_eq(c.s.wait1, STVM_OK);
    cr_assert_eq(c.s.wait2, STVM_OK);
    cr_assert_eq(c.parent_var, inherited_var);
    cr_assert_eq(c.child_var, inherited_var);
    end_case(&c.s);   /* ... disable: the variable goes */
}

/* ---- testLocalVariable ---------------------------------------------------------------- */

static void local_first(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, value_is(s, INT(0)));
    GCHECK(s, stvm_local_set(vm, s->var, INT(1)) == STVM_OK);
    GCHECK(s, value_is(s, INT(1)));
    GCHECK(s, stvm_delay_wait_ms(vm, 30) == STVM_OK);
    GCHECK(s, value_is(s, INT(1)));
    GCHECK(s, stvm_local_set(vm, s->var, INT(2)) == STVM_OK);
    GCHECK(s, value_is(s, INT(2)));
    s->p1stopped = true;
    stvm_semaphore_signal(vm, s->s1);
}

static void local_second(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 30) == STVM_OK);
    GCHECK(s, value_is(s, INT(0)));
    GCHECK(s, stvm_local_set(vm, s->var, INT(3)) == STVM_OK);
    GCHECK(s, value_is(s, INT(3)));
    GCHECK(s, stvm_delay_wait_ms(vm, 30) == STVM_OK);
    GCHECK(s, value_is(s, INT(3)));
    GCHECK(s, stvm_local_set(vm, s->var, INT(4)) == STVM_OK);
    GCHECK(s, value_is(s, INT(4)));
    s->p2stopped = true;
    stvm_semaphore_signal(vm, s->s2);
}

static void test_local_variable(stvm_vm *vm, void *arg)
{
    ps *s = arg;
    GCHECK(s, stvm_spawn(vm, TEST_PRIORITY, "p1", local_first, s, NULL) == STVM_OK);
    GCHECK(s, stvm_spawn(vm, TEST_PRIORITY, "p2", local_second, s, NULL) == STVM_OK);
    s->wait1 = stvm_semaphore_wait_timeout_ms(vm, s->s1, 5000);
    s->wait2 = stvm_semaphore_wait_timeout_ms(vm, s->s2, 5000);
}

/* ProcessSpecificTest>>testLocalVariable: two processes set a process-local variable
 * whose default is 0 and sleep in between, interleaved; the second, which starts after
 * the first has set its value, still answers the default, and each answers only what
 * it set itself. */
Test(ProcessSpecificTest, testLocalVariable)
{
    ps s;
    make_case(&s, 0, INT(0), NULL);
    run_test_method(s.vm, "testLocalVariable", test_local_variable, &s);
    cr_assert_eq(s.wait1, STVM_OK);
    cr_assert_eq(s.wait2, STVM_OK);
    cr_assert(s.p1stopped);
    cr_assert(s.p2stopped);
    end_case(&s);
}
