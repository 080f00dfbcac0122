/*
 * Process-local variables (stvm_local_*): the default against a process's own value,
 * one value per process, inheritance at spawn (through inherit_fn, or the same
 * pointer), dynamic bindings (stvm_local_during) nested and ended by a terminate, every
 * value handed to destroy_fn exactly once whichever way it goes (replaced, cleared,
 * unbound, the variable freed, the handle released, the VM freed), and bad input.
 * Pharo's own tests are in test_pharo_process_specific.c.
 */
#include "helpers.h"

TestSuite(locals, .timeout = 30);

/* A value whose drops are counted: destroy_fn counts, inherit_fn hands out the next
 * token of the same pool as the child's copy and notes which child it was for. */
typedef struct pool pool;
typedef struct tok {
    int id;
    int destroyed;
    pool *pool;
    struct tok *from;          /* the parent's value it was inherited from */
    stvm_process *child;       /* the process it was inherited for */
} tok;
struct pool {
    tok t[32];
    int n;
    int inherits;
};

static void tok_destroy(void *v) { ((tok *)v)->destroyed++; }

static void *tok_inherit(void *v, stvm_process *child)
{
    tok *from = v;
    pool *pl = from->pool;
    pl->inherits++;
    if (pl->n == 32)
        return NULL;
    tok *c = &pl->t[pl->n++];
    *c = (tok){.id = from->id + 100, .pool = pl, .from = from, .child = child};
    return c;
}

static void *no_inherit(void *v, stvm_process *child)
{
    tok *from = v;
    from->pool->inherits++;
    return NULL;
}

static tok *tok_new(pool *pl, int id)
{
    cr_assert_lt(pl->n, 32);
    tok *t = &pl->t[pl->n++];
    *t = (tok){.id = id, .pool = pl};
    return t;
}

typedef struct ls {
    stvm_vm *vm;
    stvm_local *v, *w;
    pool pl;
    tok *a, *b, *c;
    void *seen[8];
    int own[8];
    stvm_process *p[4];
    stvm_semaphore *sem;
    trace_log log;
    int bad_line;
} ls;

/* In place: the tokens live in the scenario, which must not move. */
static void make(ls *s, unsigned flags, stvm_local_destroy_fn d, stvm_local_inherit_fn inh)
{
    *s = (ls){.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0)};
    cr_assert_eq(stvm_local_new(s->vm, flags, &s->pl, d, inh, &s->v), STVM_OK);
    s->a = tok_new(&s->pl, 1);
    s->b = tok_new(&s->pl, 2);
    s->c = tok_new(&s->pl, 3);
}

/* The value a process sees, recorded in slot i (and whether it was its own). */
static void see(ls *s, int i)
{
    s->own[i] = stvm_local_get(s->vm, s->v, &s->seen[i]);
}

/* ---- default and own value ------------------------------------------------------------ */

static void set_and_clear(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    see(s, 0);
    GCHECK(s, stvm_local_set(vm, s->v, s->a) == STVM_OK);
    see(s, 1);
    GCHECK(s, stvm_local_clear(vm, s->v) == STVM_OK);
    see(s, 2);
    GCHECK(s, stvm_local_clear(vm, s->v) == STVM_OK);   /* no own value: no error */
}

Test(locals, a_process_answers_the_default_until_it_sets_a_value_and_after_it_clears_it)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    spawn(s.vm, 40, "p", set_and_clear, &s);
    run_ok(s.vm);
    cr_assert_eq(s.own[0], 0);
    cr_assert_eq(s.seen[0], &s.pl, "the default is the one given to stvm_local_new");
    cr_assert_eq(s.own[1], 1);
    cr_assert_eq(s.seen[1], s.a);
    cr_assert_eq(s.own[2], 0);
    cr_assert_eq(s.seen[2], &s.pl);
    cr_assert_eq(s.a->destroyed, 1, "the cleared value is dropped once");
    cr_assert_eq(stvm_local_free(s.vm, s.v), STVM_OK);
    SCENARIO_DONE(&s);
}

static void replaces(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_local_set(vm, s->v, s->a) == STVM_OK);
    GCHECK(s, stvm_local_set(vm, s->v, s->a) == STVM_OK);   /* the same: nothing dropped */
    GCHECK(s, s->a->destroyed == 0);
    GCHECK(s, stvm_local_set(vm, s->v, s->b) == STVM_OK);
    GCHECK(s, s->a->destroyed == 1);
    see(s, 0);
    GCHECK(s, stvm_local_set(vm, s->v, NULL) == STVM_OK);   /* Pharo's value: nil */
    see(s, 1);
}

Test(locals, a_set_drops_the_value_it_replaces_once_and_null_clears)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    spawn(s.vm, 40, "p", replaces, &s);
    run_ok(s.vm);
    cr_assert_eq(s.own[0], 1);
    cr_assert_eq(s.seen[0], s.b);
    cr_assert_eq(s.own[1], 0);
    cr_assert_eq(s.a->destroyed, 1);
    cr_assert_eq(s.b->destroyed, 1);
    SCENARIO_DONE(&s);
}

/* ---- one value per process --------------------------------------------------------------- */

typedef struct who {
    ls *s;
    tok *mine;
    int slot;
} who;

static void sets_yields_reads(stvm_vm *vm, void *arg)
{
    who *w = arg;
    GCHECK(w->s, stvm_local_set(vm, w->s->v, w->mine) == STVM_OK);
    stvm_yield(vm);
    stvm_yield(vm);
    see(w->s, w->slot);
}

static void reads_only(stvm_vm *vm, void *arg)
{
    who *w = arg;
    stvm_yield(vm);
    see(w->s, w->slot);
}

Test(locals, each_process_sees_only_its_own_value)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    who w1 = {&s, s.a, 0}, w2 = {&s, s.b, 1}, w3 = {&s, NULL, 2};
    s.p[0] = spawn(s.vm, 40, "one", sets_yields_reads, &w1);
    s.p[1] = spawn(s.vm, 40, "two", sets_yields_reads, &w2);
    s.p[2] = spawn(s.vm, 40, "three", reads_only, &w3);
    run_ok(s.vm);
    cr_assert_eq(s.seen[0], s.a);
    cr_assert_eq(s.seen[1], s.b);
    cr_assert_eq(s.own[2], 0);
    cr_assert_eq(s.seen[2], &s.pl);
    /* Held handles of finished processes still answer their values. */
    void *v = NULL;
    cr_assert_eq(stvm_process_get_local(s.vm, s.p[0], s.v, &v), 1);
    cr_assert_eq(v, s.a);
    cr_assert_eq(stvm_process_get_local(s.vm, s.p[2], s.v, &v), 0);
    cr_assert_eq(v, &s.pl);
    cr_assert_eq(s.a->destroyed, 0);
    cr_assert_eq(stvm_process_release(s.vm, s.p[0]), STVM_OK);
    cr_assert_eq(s.a->destroyed, 1, "released: the handle's value goes with it");
    cr_assert_eq(s.b->destroyed, 0);
    cr_assert_eq(stvm_process_release(s.vm, s.p[1]), STVM_OK);
    cr_assert_eq(stvm_process_release(s.vm, s.p[2]), STVM_OK);
    cr_assert_eq(s.b->destroyed, 1);
    SCENARIO_DONE(&s);
}

static void sets_and_ends(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_local_set(vm, s->v, s->a) == STVM_OK);
}

Test(locals, the_value_of_a_process_nobody_holds_is_dropped_when_it_finishes)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    cr_assert_eq(stvm_spawn(s.vm, 40, "p", sets_and_ends, &s, NULL), STVM_OK);
    run_ok(s.vm);
    cr_assert_eq(s.a->destroyed, 1);
    SCENARIO_DONE(&s);
}

static void joins_the_setter(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    s->p[0] = NULL;
    stvm_process *p = NULL;
    GCHECK(s, stvm_spawn(vm, 30, "setter", sets_and_ends, s, &p) == STVM_OK);
    GCHECK(s, stvm_process_join(vm, p, -1) == STVM_OK);
    GCHECK(s, s->a->destroyed == 1);   /* the join gave the handle back, and the value */
}

Test(locals, a_join_that_gives_the_handle_back_drops_its_values)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    spawn(s.vm, 40, "joiner", joins_the_setter, &s);
    run_ok(s.vm);
    cr_assert_eq(s.a->destroyed, 1);
    SCENARIO_DONE(&s);
}

/* ---- inheritance ----------------------------------------------------------------------- */

static void child_reads(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    see(s, 1);
    GCHECK(s, stvm_local_set(vm, s->v, s->b) == STVM_OK);   /* its own from now on */
}

static void parent_spawns(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_local_set(vm, s->v, s->a) == STVM_OK);
    GCHECK(s, stvm_spawn(vm, 50, "child", child_reads, s, &s->p[1]) == STVM_OK);
    see(s, 0);   /* the child ran first (higher) and set its own: not ours */
}

Test(locals, an_inheritable_value_is_copied_through_inherit_fn_when_a_process_spawns)
{
    ls s;
    make(&s, STVM_LOCAL_INHERITABLE, tok_destroy, tok_inherit);
    stvm_process *parent = spawn(s.vm, 40, "parent", parent_spawns, &s);
    run_ok(s.vm);
    cr_assert_eq(s.pl.inherits, 1);
    cr_assert_eq(s.a->destroyed, 0, "held: the parent's value stays with its handle");
    cr_assert_eq(stvm_process_release(s.vm, parent), STVM_OK);
    tok *copy = &s.pl.t[3];
    cr_assert_eq(s.own[1], 1);
    cr_assert_eq(s.seen[1], copy, "the child answers inherit_fn's copy");
    cr_assert_eq(copy->from, s.a);
    cr_assert_eq(copy->child, s.p[1], "inherit_fn is told the new process");
    cr_assert_eq(s.seen[0], s.a, "the child's set did not touch the parent");
    cr_assert_eq(copy->destroyed, 1, "the copy was replaced by the child's set");
    cr_assert_eq(s.b->destroyed, 0, "held: the child's value stays with its handle");
    cr_assert_eq(stvm_process_release(s.vm, s.p[1]), STVM_OK);
    cr_assert_eq(s.b->destroyed, 1);
    cr_assert_eq(s.a->destroyed, 1, "the parent's went with its handle");
    SCENARIO_DONE(&s);
}

static void spawns_low_child(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_local_set(vm, s->v, s->a) == STVM_OK);
    GCHECK(s, stvm_spawn(vm, 30, "child", child_reads, s, &s->p[1]) == STVM_OK);
    GCHECK(s, stvm_local_set(vm, s->v, s->c) == STVM_OK);   /* after the spawn: not seen */
}

Test(locals, without_inherit_fn_the_child_shares_the_pointer_the_parent_had_at_spawn)
{
    ls s;
    make(&s, STVM_LOCAL_INHERITABLE, NULL, NULL);
    spawn(s.vm, 40, "parent", spawns_low_child, &s);
    run_ok(s.vm);
    cr_assert_eq(s.own[1], 1);
    cr_assert_eq(s.seen[1], s.a);
    void *v = NULL;
    cr_assert_eq(stvm_process_get_local(s.vm, s.p[1], s.v, &v), 1);
    cr_assert_eq(v, s.b);
    cr_assert_eq(stvm_process_release(s.vm, s.p[1]), STVM_OK);
    SCENARIO_DONE(&s);
}

Test(locals, a_variable_that_is_not_inheritable_is_not_inherited)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    spawn(s.vm, 40, "parent", parent_spawns, &s);
    run_ok(s.vm);
    cr_assert_eq(s.own[1], 0);
    cr_assert_eq(s.seen[1], &s.pl);
    cr_assert_eq(stvm_process_release(s.vm, s.p[1]), STVM_OK);
    SCENARIO_DONE(&s);
}

Test(locals, inherit_fn_answering_null_leaves_the_child_at_the_default)
{
    ls s;
    make(&s, STVM_LOCAL_INHERITABLE, tok_destroy, no_inherit);
    spawn(s.vm, 40, "parent", parent_spawns, &s);
    run_ok(s.vm);
    cr_assert_eq(s.pl.inherits, 1);
    cr_assert_eq(s.own[1], 0);
    cr_assert_eq(stvm_process_release(s.vm, s.p[1]), STVM_OK);
    SCENARIO_DONE(&s);
}

static void spawns_badly_and_waits(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_local_set(vm, s->v, s->a) == STVM_OK);
    GCHECK(s, stvm_spawn(vm, 81, "bad", child_reads, s, NULL) == STVM_EINVAL);
    /* The first timed wait starts the timing process: the VM's own, it inherits nothing. */
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);
}

Test(locals, a_refused_spawn_and_the_vms_own_processes_inherit_nothing)
{
    ls s;
    make(&s, STVM_LOCAL_INHERITABLE, tok_destroy, tok_inherit);
    spawn(s.vm, 40, "parent", spawns_badly_and_waits, &s);
    run_ok(s.vm);
    cr_assert_eq(s.pl.inherits, 0);
    SCENARIO_DONE(&s);
}

Test(locals, a_process_spawned_from_the_embedding_thread_inherits_nothing)
{
    ls s;
    make(&s, STVM_LOCAL_INHERITABLE, tok_destroy, tok_inherit);
    spawn(s.vm, 40, "child", child_reads, &s);
    run_ok(s.vm);
    cr_assert_eq(s.pl.inherits, 0);
    cr_assert_eq(s.own[1], 0);
    SCENARIO_DONE(&s);
}

/* ---- dynamic bindings ------------------------------------------------------------------ */

static void inner(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    see(s, 2);
    GCHECK(s, s->b->destroyed == 0);
}

static void outer(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    see(s, 1);
    GCHECK(s, stvm_local_set(vm, s->v, s->c) == STVM_EINVAL);   /* dynamic: only during */
    GCHECK(s, stvm_local_clear(vm, s->v) == STVM_EINVAL);
    GCHECK(s, stvm_local_during(vm, s->v, s->b, inner, s) == STVM_OK);
    see(s, 3);
    GCHECK(s, s->b->destroyed == 1);   /* unbound: dropped */
}

static void binds(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    see(s, 0);
    GCHECK(s, stvm_local_during(vm, s->v, s->a, outer, s) == STVM_OK);
    see(s, 4);
}

Test(locals, during_binds_for_the_extent_of_fn_nests_and_restores)
{
    ls s;
    make(&s, STVM_LOCAL_DYNAMIC, tok_destroy, NULL);
    spawn(s.vm, 40, "p", binds, &s);
    run_ok(s.vm);
    cr_assert_eq(s.own[0], 0);
    cr_assert_eq(s.seen[1], s.a);
    cr_assert_eq(s.seen[2], s.b);
    cr_assert_eq(s.seen[3], s.a);
    cr_assert_eq(s.own[4], 0, "no value before: none after");
    cr_assert_eq(s.seen[4], &s.pl);
    cr_assert_eq(s.a->destroyed, 1);
    cr_assert_eq(s.b->destroyed, 1);
    cr_assert_eq(s.c->destroyed, 0);
    cr_assert_eq(stvm_local_free(s.vm, s.v), STVM_OK);
    SCENARIO_DONE(&s);
}

static void sets_inside(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    see(s, 5);
    GCHECK(s, stvm_local_set(vm, s->v, s->c) == STVM_OK);   /* replaces the bound b */
    GCHECK(s, s->b->destroyed == 1);
}

static void binds_the_same(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_local_set(vm, s->v, s->a) == STVM_OK);
    GCHECK(s, stvm_local_during(vm, s->v, s->a, inner, s) == STVM_OK);
    see(s, 0);
    GCHECK(s, stvm_local_during(vm, s->v, NULL, inner, s) == STVM_OK);
    see(s, 1);
    GCHECK(s, stvm_local_during(vm, s->v, s->b, sets_inside, s) == STVM_OK);
    see(s, 3);
}

Test(locals, during_of_the_value_held_drops_nothing_and_a_set_inside_is_dropped_at_the_end)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    cr_assert_eq(stvm_spawn(s.vm, 40, "p", binds_the_same, &s, NULL), STVM_OK);
    run_ok(s.vm);
    cr_assert_eq(s.seen[0], s.a);
    cr_assert_eq(s.own[2], 0, "bound to NULL inside: the default");
    cr_assert_eq(s.seen[2], &s.pl);
    cr_assert_eq(s.seen[5], s.b);
    cr_assert_eq(s.seen[1], s.a);
    cr_assert_eq(s.seen[3], s.a, "the value put aside comes back");
    cr_assert_eq(s.b->destroyed, 1);
    cr_assert_eq(s.c->destroyed, 1, "the value set inside is unbound at the end");
    cr_assert_eq(s.a->destroyed, 1, "dropped once, when the process finished");
    SCENARIO_DONE(&s);
}

static void waits_bound(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    see(s, 0);
    stvm_semaphore_wait(vm, s->sem);   /* terminated here */
    trace_add(&s->log, 99);            /* not reached */
}

static void binds_and_waits(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_local_during(vm, s->v, s->b, waits_bound, s) == STVM_OK);
    trace_add(&s->log, 98);   /* not reached */
}

static void outer_binds_and_waits(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_local_during(vm, s->v, s->a, binds_and_waits, s) == STVM_OK);
}

static void terminates_it(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    stvm_local *v = s->v;
    GCHECK(s, stvm_local_free(vm, v) == STVM_EINUSE);   /* bound in the waiter */
    void *val = NULL;
    GCHECK(s, stvm_process_get_local(vm, s->p[0], v, &val) == 1 && val == s->b);
    GCHECK(s, stvm_process_terminate(vm, s->p[0]) == STVM_OK);
    s->own[1] = stvm_process_get_local(vm, s->p[0], v, &s->seen[1]);
    GCHECK(s, stvm_local_free(vm, v) == STVM_OK);   /* nothing bound any more */
}

Test(locals, a_process_terminated_inside_nested_durings_restores_each_and_drops_the_bindings)
{
    ls s;
    make(&s, STVM_LOCAL_DYNAMIC, tok_destroy, NULL);
    s.sem = sem_make(s.vm);
    s.p[0] = spawn(s.vm, 40, "bound", outer_binds_and_waits, &s);
    spawn(s.vm, 30, "terminator", terminates_it, &s);
    run_ok(s.vm);
    cr_assert_eq(s.log.n, 0, "the terminated process's C code was not resumed");
    cr_assert_eq(s.seen[0], s.b);
    cr_assert_eq(s.own[1], 0, "both bindings undone by the terminate");
    cr_assert_eq(s.a->destroyed, 1);
    cr_assert_eq(s.b->destroyed, 1);
    cr_assert_eq(stvm_process_release(s.vm, s.p[0]), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK);
    SCENARIO_DONE(&s);
}

static void cleanup_reads(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    see(s, 1);
}

static void ensure_then_bind(stvm_vm *vm, void *arg)
{
    ls *s = arg;
    GCHECK(s, stvm_ensure(vm, cleanup_reads, s) == STVM_OK);
    GCHECK(s, stvm_local_during(vm, s->v, s->a, waits_bound, s) == STVM_OK);
}

Test(locals, the_restore_comes_before_the_older_cleanups_of_a_terminated_process)
{
    ls s;
    make(&s, STVM_LOCAL_DYNAMIC, tok_destroy, NULL);
    s.sem = sem_make(s.vm);
    s.p[0] = spawn(s.vm, 40, "bound", ensure_then_bind, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(s.seen[0], s.a);
    cr_assert_eq(stvm_process_terminate(s.vm, s.p[0]), STVM_OK);
    run_ok(s.vm);   /* terminated from the embedding thread: the cleanups run now */
    cr_assert_eq(s.own[1], 0, "the older cleanup saw the binding undone");
    cr_assert_eq(s.a->destroyed, 1);
    cr_assert_eq(stvm_process_release(s.vm, s.p[0]), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK);
    SCENARIO_DONE(&s);
}

/* ---- freeing ---------------------------------------------------------------------------- */

static void sets_w_and_waits(stvm_vm *vm, void *arg)
{
    who *w = arg;
    GCHECK(w->s, stvm_local_set(vm, w->s->v, w->mine) == STVM_OK);
    stvm_semaphore_wait(vm, w->s->sem);
    see(w->s, w->slot);
}

Test(locals, freeing_a_variable_drops_each_process_value_once_and_they_answer_nothing_after)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    s.sem = sem_make(s.vm);
    stvm_local *keep = NULL;
    cr_assert_eq(stvm_local_new(s.vm, 0, NULL, tok_destroy, NULL, &keep), STVM_OK);
    who w1 = {&s, s.a, 0}, w2 = {&s, s.b, 1};
    s.p[0] = spawn(s.vm, 40, "one", sets_w_and_waits, &w1);
    s.p[1] = spawn(s.vm, 40, "two", sets_w_and_waits, &w2);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_local_free(s.vm, s.v), STVM_OK);
    cr_assert_eq(s.a->destroyed, 1);
    cr_assert_eq(s.b->destroyed, 1);
    /* The other variable and the processes are untouched; the processes end normally. */
    void *v = NULL;
    cr_assert_eq(stvm_process_get_local(s.vm, s.p[0], keep, &v), 0);
    s.v = keep;
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    run_ok(s.vm);
    cr_assert_eq(s.own[0], 0);
    cr_assert_eq(s.own[1], 0);
    cr_assert_eq(stvm_process_release(s.vm, s.p[0]), STVM_OK);
    cr_assert_eq(stvm_process_release(s.vm, s.p[1]), STVM_OK);
    cr_assert_eq(s.a->destroyed, 1, "dropped once, not again with the handle");
    cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK);
    SCENARIO_DONE(&s);
}

Test(locals, vm_free_drops_the_values_of_held_unfinished_and_bound_processes_once)
{
    ls s;
    make(&s, 0, tok_destroy, NULL);
    s.sem = sem_make(s.vm);
    stvm_local *dyn = NULL;
    cr_assert_eq(stvm_local_new(s.vm, STVM_LOCAL_DYNAMIC, NULL, tok_destroy, NULL, &dyn),
                 STVM_OK);
    who w = {&s, s.b, 1};
    s.p[0] = spawn(s.vm, 40, "finished", sets_and_ends, &s);   /* a: held, finished */
    spawn(s.vm, 40, "waiting", sets_w_and_waits, &w);           /* b: unfinished */
    ls t = s;   /* binds two tokens of its own through a dynamic variable, and waits */
    t.v = dyn;
    t.a = tok_new(&s.pl, 10);
    t.b = tok_new(&s.pl, 11);
    cr_assert_eq(stvm_spawn(s.vm, 40, "bound", outer_binds_and_waits, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(s.a->destroyed, 0);
    vm_check(s.vm);
    stvm_vm_free(s.vm);
    cr_assert_eq(s.a->destroyed, 1);
    cr_assert_eq(s.b->destroyed, 1);
    cr_assert_eq(t.a->destroyed, 1, "the bindings are undone by the cleanups vm_free runs");
    cr_assert_eq(t.b->destroyed, 1);
    cr_assert_eq(s.c->destroyed, 0);
    ASSERT_GREEN_OK(&s);
    ASSERT_GREEN_OK(&t);
}

/* Values from malloc with free as destroy_fn: the sanitizer build's leak check fails
 * the test if any way out forgets one. */
static void *dup_inherit(void *v, stvm_process *child)
{
    int *c = malloc(sizeof *c);
    if (c)
        *c = *(int *)v + 1;
    return c;
}

static void wait_on(stvm_vm *vm, void *sem) { stvm_semaphore_wait(vm, sem); }

static void nothing(stvm_vm *vm, void *arg) {}

typedef struct heap {
    stvm_local *v, *d;
    stvm_semaphore *sem;
    int bad_line;
} heap;

static void heap_child(stvm_vm *vm, void *arg)
{
    heap *h = arg;
    void *v = NULL;
    GCHECK(h, stvm_local_get(vm, h->v, &v) == 1 && *(int *)v == 8);
    int *n = malloc(sizeof *n);
    if (n) {
        *n = 9;
        GCHECK(h, stvm_local_during(vm, h->d, n, wait_on, h->sem) ==
                      STVM_OK);
    }
}

static void heap_parent(stvm_vm *vm, void *arg)
{
    heap *h = arg;
    int *n = malloc(sizeof *n), *m = malloc(sizeof *m);
    if (!n || !m) {
        free(n);
        free(m);
        return;
    }
    *n = 7;
    *m = 70;
    GCHECK(h, stvm_local_set(vm, h->v, n) == STVM_OK);
    GCHECK(h, stvm_local_set(vm, h->v, m) == STVM_OK);   /* n freed */
    *m = 7;
    GCHECK(h, stvm_spawn(vm, 41, "child", heap_child, h, NULL) == STVM_OK);
    GCHECK(h, stvm_spawn(vm, 39, "waiter", heap_child, h, NULL) == STVM_OK);
}

Test(locals, malloced_values_are_freed_on_every_way_out)
{
    stvm_vm *vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
    heap h = {0};
    h.sem = sem_make(vm);
    cr_assert_eq(stvm_local_new(vm, STVM_LOCAL_INHERITABLE, NULL, free, dup_inherit, &h.v),
                 STVM_OK);
    cr_assert_eq(stvm_local_new(vm, STVM_LOCAL_DYNAMIC, NULL, free, NULL, &h.d), STVM_OK);
    stvm_process *held = NULL;
    cr_assert_eq(stvm_spawn(vm, 40, "parent", heap_parent, &h, &held), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);   /* two children wait, bound */
    cr_assert_eq(stvm_semaphore_signal(vm, h.sem), STVM_OK);   /* one of them ends */
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    void *v = NULL;
    cr_assert_eq(stvm_process_get_local(vm, held, h.v, &v), 1);
    cr_assert_eq(*(int *)v, 7);
    ASSERT_GREEN_OK(&h);
    vm_check(vm);
    stvm_vm_free(vm);   /* the held parent's value, the waiting child's copy and binding */
}

/* ---- bad input ------------------------------------------------------------------------ */

Test(locals, bad_input_is_refused_and_changes_nothing)
{
    stvm_vm *vm = vm_make(NULL), *other = vm_make(NULL);
    stvm_local *v = NULL, *foreign = NULL, *keep = (stvm_local *)1;
    cr_assert_eq(stvm_local_new(NULL, 0, NULL, NULL, NULL, &v), STVM_EINVAL);
    cr_assert_eq(stvm_local_new(vm, 0, NULL, NULL, NULL, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_local_new(vm, 4, NULL, NULL, NULL, &keep), STVM_EINVAL);
    cr_assert_eq(stvm_local_new(vm, 0, NULL, NULL, dup_inherit, &keep), STVM_EINVAL);
    cr_assert_eq(stvm_local_new(vm, STVM_LOCAL_INHERITABLE, NULL, free, NULL, &keep),
                 STVM_EINVAL);
    cr_assert_eq(keep, (stvm_local *)1, "a refused new leaves *out alone");
    cr_assert_eq(stvm_local_new(vm, STVM_LOCAL_INHERITABLE | STVM_LOCAL_DYNAMIC, NULL, NULL,
                                NULL, &v),
                 STVM_OK);
    cr_assert_eq(stvm_local_new(other, 0, NULL, NULL, NULL, &foreign), STVM_OK);
    stvm_semaphore *sem = sem_make(vm);
    stvm_local *wrong = (stvm_local *)(void *)sem;
    void *val = (void *)1;
    stvm_process *p = NULL;
    cr_assert_eq(stvm_spawn_suspended(vm, 40, "p", nothing, NULL, 0, &p),
                 STVM_OK);
    stvm_process *op = NULL;
    cr_assert_eq(stvm_spawn_suspended(other, 40, "op", nothing, NULL, 0, &op),
                 STVM_OK);

    cr_assert_eq(stvm_local_free(NULL, v), STVM_EINVAL);
    cr_assert_eq(stvm_local_free(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_local_free(vm, foreign), STVM_EINVAL);
    cr_assert_eq(stvm_local_free(vm, wrong), STVM_EINVAL);

    cr_assert_eq(stvm_local_get(NULL, v, &val), STVM_EINVAL);
    cr_assert_eq(stvm_local_get(vm, NULL, &val), STVM_EINVAL);
    cr_assert_eq(stvm_local_get(vm, v, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_local_get(vm, foreign, &val), STVM_EINVAL);
    cr_assert_eq(stvm_local_get(vm, v, &val), STVM_ENOTPROC);
    cr_assert_eq(val, (void *)1, "a refused get leaves *value alone");

    cr_assert_eq(stvm_process_get_local(NULL, p, v, &val), STVM_EINVAL);
    cr_assert_eq(stvm_process_get_local(vm, NULL, v, &val), STVM_EINVAL);
    cr_assert_eq(stvm_process_get_local(vm, op, v, &val), STVM_EINVAL);
    cr_assert_eq(stvm_process_get_local(vm, (stvm_process *)(void *)sem, v, &val), STVM_EINVAL);
    cr_assert_eq(stvm_process_get_local(vm, p, foreign, &val), STVM_EINVAL);
    cr_assert_eq(stvm_process_get_local(vm, p, v, NULL), STVM_EINVAL);
    cr_assert_eq(val, (void *)1);
    cr_assert_eq(stvm_process_get_local(vm, p, v, &val), 0);
    cr_assert_null(val);

    cr_assert_eq(stvm_local_set(NULL, v, &val), STVM_EINVAL);
    cr_assert_eq(stvm_local_set(vm, foreign, &val), STVM_EINVAL);
    cr_assert_eq(stvm_local_set(vm, wrong, &val), STVM_EINVAL);
    cr_assert_eq(stvm_local_set(vm, v, &val), STVM_EINVAL, "dynamic");
    cr_assert_eq(stvm_local_clear(vm, v), STVM_EINVAL, "dynamic");
    cr_assert_eq(stvm_local_set(other, foreign, &val), STVM_ENOTPROC);
    cr_assert_eq(stvm_local_clear(other, foreign), STVM_ENOTPROC);
    cr_assert_eq(stvm_local_clear(NULL, foreign), STVM_EINVAL);

    cr_assert_eq(stvm_local_during(NULL, v, &val, nothing, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_local_during(vm, v, &val, NULL, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_local_during(vm, foreign, &val, nothing, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_local_during(vm, v, &val, nothing, NULL), STVM_ENOTPROC);

    cr_assert_eq(stvm_local_free(vm, v), STVM_OK);
    cr_assert_eq(stvm_local_free(other, foreign), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    vm_done(vm);
    vm_done(other);
}
