/*
 * SharedQueue (stvm_queue_*) on one thread: order, readers served in arrival order, an
 * item handed to a woken reader staying its own (and given back when that reader is
 * terminated or interrupted before it ran), timed takes and puts on the simulated
 * clock, nextOrNil, peek, size, flush, the bounded form's waiting writers, freeing, the
 * trace and bad input. Puts from other OS threads are in test_queue_threads.c.
 */
#include "helpers.h"

TestSuite(shared_queue, .timeout = 30);

typedef struct qs {
    stvm_vm *vm;
    stvm_queue *q;
    stvm_process *victim;
    trace_log log;
    int rc[8];
    int nrc;
    void *got[8];
    int ngot;
    uint64_t at_us[4];
    int bad_line;
} qs;

#define ITEM(n) ((void *)(uintptr_t)(n))
#define NUM(p) ((int)(uintptr_t)(p))

static qs make(size_t capacity)
{
    qs s = {.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0)};
    cr_assert_eq(stvm_queue_new(s.vm, capacity, &s.q), STVM_OK);
    return s;
}

static void note(qs *s, int rc)
{
    if (s->nrc < 8)
        s->rc[s->nrc++] = rc;
}

static void go(stvm_vm *vm, int prio, stvm_fn fn, void *arg)
{
    cr_assert_eq(stvm_spawn(vm, prio, "q", fn, arg, NULL), STVM_OK);
}

/* Takes one item and logs its number (or -1 and the error). */
static void taker(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    int rc = stvm_queue_take(vm, s->q, &item);
    note(s, rc);
    trace_add(&s->log, rc == STVM_OK ? NUM(item) : -1);
}

static void done_with(qs *s)
{
    cr_assert_eq(stvm_queue_free(s->vm, s->q, NULL, NULL), STVM_OK);
    SCENARIO_DONE(s);
}

/* ---- order ---------------------------------------------------------------------------- */

static void takes_five(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_queue_size(vm, s->q) == 5);
    void *item = NULL;
    GCHECK(s, stvm_queue_peek(vm, s->q, &item) == STVM_OK && NUM(item) == 1);
    for (int i = 0; i < 5; i++) {
        GCHECK(s, stvm_queue_take(vm, s->q, &item) == STVM_OK);
        trace_add(&s->log, NUM(item));
    }
    GCHECK(s, stvm_queue_size(vm, s->q) == 0);
    GCHECK(s, stvm_queue_peek(vm, s->q, &item) == STVM_EAGAIN);
}

Test(shared_queue, items_come_out_in_the_order_they_were_put)
{
    qs s = make(0);
    for (int i = 1; i <= 5; i++)
        cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(i)), STVM_OK);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 5, "the host sees the size too");
    go(s.vm, 40, takes_five, &s);
    RUN_OK_GREEN(&s);
    static const int want[] = {1, 2, 3, 4, 5};
    trace_expect(&s.log, want, 5);
    done_with(&s);
}

static void puts_three(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    for (int i = 1; i <= 3; i++)
        GCHECK(s, stvm_queue_put(vm, s->q, ITEM(i)) == STVM_OK);
}

Test(shared_queue, waiting_readers_are_served_in_arrival_order_whatever_their_priority)
{
    qs s = make(0);
    go(s.vm, 30, taker, &s);
    go(s.vm, 20, taker, &s);
    go(s.vm, 25, taker, &s);
    go(s.vm, 10, puts_three, &s);
    RUN_OK_GREEN(&s);
    /* Each reader's item is handed to it at the put (the one at 30 waited first, then
     * 25, then 20), and they log in priority order once the writer at 10 is done. */
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    done_with(&s);
}

/* ---- the hand-off ------------------------------------------------------------------------ */

/* A writer above the woken reader: after the put, the item is promised to the reader,
 * so nextOrNil, peek and size see nothing until a second item comes. */
static void puts_then_looks(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* the others wait first */
    void *item = NULL;
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(7)) == STVM_OK);
    GCHECK(s, stvm_queue_try_take(vm, s->q, &item) == STVM_EAGAIN);
    GCHECK(s, stvm_queue_peek(vm, s->q, &item) == STVM_EAGAIN);
    GCHECK(s, stvm_queue_size(vm, s->q) == 0);
    GCHECK(s, stvm_queue_free(vm, s->q, NULL, NULL) == STVM_EINUSE);
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(8)) == STVM_OK);
    GCHECK(s, stvm_queue_peek(vm, s->q, &item) == STVM_OK && NUM(item) == 8);
    GCHECK(s, stvm_queue_size(vm, s->q) == 1);
    GCHECK(s, stvm_queue_try_take(vm, s->q, &item) == STVM_OK && NUM(item) == 8);
    trace_add(&s->log, 100);
}

Test(shared_queue, an_item_handed_to_a_woken_reader_is_its_own_until_it_runs_to_take_it)
{
    qs s = make(0);
    go(s.vm, 20, taker, &s);
    go(s.vm, 30, puts_then_looks, &s);
    RUN_OK_GREEN(&s);
    static const int want[] = {100, 7};
    trace_expect(&s.log, want, 2);
    done_with(&s);
}

static void puts_then_terminates_victim(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* the others wait first */
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(5)) == STVM_OK);
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
    trace_add(&s->log, 100);
}

Test(shared_queue, a_reader_terminated_before_it_ran_gives_its_item_to_the_next_reader)
{
    qs s = make(0);
    cr_assert_eq(stvm_spawn(s.vm, 20, "victim", taker, &s, &s.victim), STVM_OK);
    go(s.vm, 20, taker, &s);
    go(s.vm, 30, puts_then_terminates_victim, &s);
    RUN_OK_GREEN(&s);
    static const int want[] = {100, 5};
    trace_expect(&s.log, want, 2);
    cr_assert_eq(s.nrc, 1, "the victim never answered");
    stvm_process_release(s.vm, s.victim);
    done_with(&s);
}

Test(shared_queue, a_reader_terminated_before_it_ran_gives_its_item_back_to_the_queue)
{
    qs s = make(0);
    cr_assert_eq(stvm_spawn(s.vm, 20, "victim", taker, &s, &s.victim), STVM_OK);
    go(s.vm, 30, puts_then_terminates_victim, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 1, "the item is there for the next taker");
    void *item = NULL;
    cr_assert_eq(stvm_queue_peek(s.vm, s.q, &item), STVM_OK);
    cr_assert_eq(NUM(item), 5);
    stvm_process_release(s.vm, s.victim);
    done_with(&s);
}

static void logs_interrupt(stvm_vm *vm, void *arg)
{
    (void)vm;
    trace_add(&((qs *)arg)->log, 200);
}

static void puts_then_interrupts_victim(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* the others wait first */
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(6)) == STVM_OK);
    GCHECK(s, stvm_process_interrupt(vm, s->victim, logs_interrupt, s) == STVM_OK);
}

Test(shared_queue, an_interrupted_reader_answers_eintr_and_its_item_goes_to_the_next_reader)
{
    qs s = make(0);
    cr_assert_eq(stvm_spawn(s.vm, 20, "victim", taker, &s, &s.victim), STVM_OK);
    go(s.vm, 20, taker, &s);
    go(s.vm, 30, puts_then_interrupts_victim, &s);
    RUN_OK_GREEN(&s);
    /* The victim runs first (it is ahead at 20), runs the interrupt, answers EINTR;
     * then the second reader gets the item. */
    static const int want[] = {200, -1, 6};
    trace_expect(&s.log, want, 3);
    cr_assert_eq(s.rc[0], STVM_EINTR);
    cr_assert_eq(s.rc[1], STVM_OK);
    stvm_process_release(s.vm, s.victim);
    done_with(&s);
}

/* ---- timed forms ---------------------------------------------------------------------- */

static void takes_within_50ms(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = ITEM(99);
    s->at_us[0] = stvm_vm_now_us(vm);
    note(s, stvm_queue_take_timeout_ms(vm, s->q, 50, &item));
    s->at_us[1] = stvm_vm_now_us(vm);
    trace_add(&s->log, NUM(item));
}

Test(shared_queue, a_take_with_a_timeout_times_out_on_time_and_takes_nothing)
{
    qs s = make(0);
    go(s.vm, 40, takes_within_50ms, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc[0], STVM_ETIMEDOUT);
    static const int want[] = {99};
    trace_expect(&s.log, want, 1);
    uint64_t waited = s.at_us[1] - s.at_us[0];
    cr_assert(waited >= 50000 && waited < 51000, "waited %llu us", (unsigned long long)waited);
    done_with(&s);
}

static void puts_after_20ms(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 20) == STVM_OK);
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(3)) == STVM_OK);
}

Test(shared_queue, a_take_with_a_timeout_gets_an_item_put_before_the_deadline)
{
    qs s = make(0);
    go(s.vm, 40, takes_within_50ms, &s);
    go(s.vm, 30, puts_after_20ms, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc[0], STVM_OK);
    static const int want[] = {3};
    trace_expect(&s.log, want, 1);
    uint64_t waited = s.at_us[1] - s.at_us[0];
    cr_assert(waited >= 20000 && waited < 21000, "waited %llu us", (unsigned long long)waited);
    done_with(&s);
}

static void timed_zero(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    uint64_t before = switches(vm);
    note(s, stvm_queue_take_timeout_ms(vm, s->q, 0, &item));
    note(s, stvm_queue_try_take(vm, s->q, &item));
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(4)) == STVM_OK);
    note(s, stvm_queue_take_timeout_ms(vm, s->q, 0, &item));
    GCHECK(s, NUM(item) == 4);
    GCHECK(s, switches(vm) == before);
}

/* Both only try; a time limit of 0 that passes is ETIMEDOUT, a try that finds nothing
 * EAGAIN (include/README.md, "One situation, one code"). */
Test(shared_queue, a_zero_timeout_and_next_or_nil_only_try_and_never_wait)
{
    qs s = make(0);
    go(s.vm, 40, timed_zero, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc[0], STVM_ETIMEDOUT);
    cr_assert_eq(s.rc[1], STVM_EAGAIN, "%s", stvm_err_name(s.rc[1]));
    cr_assert_eq(s.rc[2], STVM_OK);
    done_with(&s);
}

/* ---- flush -------------------------------------------------------------------------- */

typedef struct flushed {
    int n;
    int items[8];
} flushed;

static void collect(void *item, void *arg)
{
    flushed *f = arg;
    if (f->n < 8)
        f->items[f->n++] = NUM(item);
}

static flushed the_flushed;

static void puts_and_flushes(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* the reader waits first */
    for (int i = 1; i <= 4; i++)
        GCHECK(s, stvm_queue_put(vm, s->q, ITEM(i)) == STVM_OK);
    note(s, (int)stvm_queue_flush(vm, s->q, collect, &the_flushed));
    GCHECK(s, stvm_queue_size(vm, s->q) == 0);
}

Test(shared_queue, flush_removes_what_a_take_could_get_oldest_first_and_leaves_promised_items)
{
    qs s = make(0);
    the_flushed = (flushed){0};
    go(s.vm, 10, taker, &s);     /* item 1 is handed to it; it runs after the flush */
    go(s.vm, 20, puts_and_flushes, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc[0], 3, "flush answered %d", s.rc[0]);
    cr_assert_eq(s.rc[1], STVM_OK, "the reader took its item");
    cr_assert_eq(the_flushed.n, 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(the_flushed.items[i], i + 2);
    static const int want[] = {1};
    trace_expect(&s.log, want, 1);
    cr_assert_eq(stvm_queue_flush(s.vm, s.q, NULL, NULL), 0, "an empty queue flushes nothing");
    done_with(&s);
}

/* ---- bounded queues ------------------------------------------------------------------- */

static void writer(stvm_vm *vm, void *arg)
{
    tagged *t = arg;
    qs *s = (qs *)(void *)t->log;   /* the scenario rides in log */
    int rc = stvm_queue_put(vm, s->q, ITEM(t->tag));
    note(s, rc);
    trace_add(&s->log, rc == STVM_OK ? 1000 + t->tag : -t->tag);
}

static void takes_three_later(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_queue_size(vm, s->q) == 2);
    for (int i = 0; i < 4; i++) {
        void *item = NULL;
        GCHECK(s, stvm_queue_take(vm, s->q, &item) == STVM_OK);
        trace_add(&s->log, NUM(item));
    }
}

Test(shared_queue, writers_of_a_full_bounded_queue_wait_in_arrival_order)
{
    qs s = make(2);
    tagged w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (tagged){.log = (trace_log *)(void *)&s, .tag = i + 1};
        go(s.vm, 30 - i, writer, &w[i]);
    }
    go(s.vm, 10, takes_three_later, &s);
    RUN_OK_GREEN(&s);
    /* 1 and 2 fit; 3 and 4 wait. Each take hands the room it frees to the first
     * waiting writer, which preempts the reader (30-i > 10) and puts its item before
     * the reader logs what it took. */
    static const int want[] = {1001, 1002, 1003, 1, 1004, 2, 3, 4};
    trace_expect(&s.log, want, 8);
    done_with(&s);
}

static void put_timeouts(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(1)) == STVM_OK);
    note(s, stvm_queue_put_timeout_ms(vm, s->q, ITEM(2), 0));
    s->at_us[0] = stvm_vm_now_us(vm);
    note(s, stvm_queue_put_timeout_ms(vm, s->q, ITEM(3), 30));
    s->at_us[1] = stvm_vm_now_us(vm);
    GCHECK(s, stvm_queue_size(vm, s->q) == 1);
}

Test(shared_queue, a_put_with_a_timeout_on_a_full_queue_times_out_and_puts_nothing)
{
    qs s = make(1);
    go(s.vm, 40, put_timeouts, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc[0], STVM_ETIMEDOUT);
    cr_assert_eq(s.rc[1], STVM_ETIMEDOUT);
    uint64_t waited = s.at_us[1] - s.at_us[0];
    cr_assert(waited >= 30000 && waited < 31000, "waited %llu us", (unsigned long long)waited);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 1);
    done_with(&s);
}

Test(shared_queue, the_host_cannot_wait_for_room_so_a_full_queue_answers_eagain)
{
    qs s = make(1);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(1)), STVM_OK);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(2)), STVM_EAGAIN);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 1);
    done_with(&s);
}

static void takes_then_terminates_victim(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* the others wait first */
    void *item = NULL;
    GCHECK(s, stvm_queue_take(vm, s->q, &item) == STVM_OK && NUM(item) == 1);
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
    trace_add(&s->log, 100);
}

Test(shared_queue, a_writer_terminated_before_it_ran_gives_the_room_to_the_next_writer)
{
    qs s = make(1);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(1)), STVM_OK);
    tagged w[2] = {{.log = (trace_log *)(void *)&s, .tag = 2},
                   {.log = (trace_log *)(void *)&s, .tag = 3}};
    cr_assert_eq(stvm_spawn(s.vm, 20, "victim", writer, &w[0], &s.victim), STVM_OK);
    go(s.vm, 20, writer, &w[1]);
    go(s.vm, 30, takes_then_terminates_victim, &s);
    RUN_OK_GREEN(&s);
    static const int want[] = {100, 1003};
    trace_expect(&s.log, want, 2);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 1);
    void *item = NULL;
    cr_assert_eq(stvm_queue_peek(s.vm, s.q, &item), STVM_OK);
    cr_assert_eq(NUM(item), 3);
    stvm_process_release(s.vm, s.victim);
    done_with(&s);
}

static void interrupts_victim(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_process_interrupt(vm, s->victim, logs_interrupt, s) == STVM_OK);
}

Test(shared_queue, an_interrupted_writer_answers_eintr_and_puts_nothing)
{
    qs s = make(1);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(1)), STVM_OK);
    tagged w = {.log = (trace_log *)(void *)&s, .tag = 2};
    cr_assert_eq(stvm_spawn(s.vm, 30, "victim", writer, &w, &s.victim), STVM_OK);
    go(s.vm, 20, interrupts_victim, &s);
    RUN_OK_GREEN(&s);
    static const int want[] = {200, -2};
    trace_expect(&s.log, want, 2);
    cr_assert_eq(s.rc[0], STVM_EINTR);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 1);
    stvm_process_release(s.vm, s.victim);
    done_with(&s);
}

Test(shared_queue, an_interrupted_reader_of_an_empty_queue_answers_eintr_having_taken_nothing)
{
    qs s = make(0);
    cr_assert_eq(stvm_spawn(s.vm, 30, "victim", taker, &s, &s.victim), STVM_OK);
    go(s.vm, 20, interrupts_victim, &s);
    RUN_OK_GREEN(&s);
    static const int want[] = {200, -1};
    trace_expect(&s.log, want, 2);
    cr_assert_eq(s.rc[0], STVM_EINTR);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(1)), STVM_OK);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 1, "no reader is left waiting");
    stvm_process_release(s.vm, s.victim);
    done_with(&s);
}

/* ---- freeing ----------------------------------------------------------------------------- */

static int freed_items;

static void count_freed(void *item, void *arg)
{
    (void)item;
    (void)arg;
    freed_items++;
}

Test(shared_queue, free_refuses_a_queue_with_a_waiting_reader_and_hands_items_over_otherwise)
{
    qs s = make(0);
    go(s.vm, 30, taker, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_queue_free(s.vm, s.q, NULL, NULL), STVM_EINUSE);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(1)), STVM_OK);
    run_ok(s.vm);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(i)), STVM_OK);
    freed_items = 0;
    cr_assert_eq(stvm_queue_free(s.vm, s.q, count_freed, NULL), STVM_OK);
    cr_assert_eq(freed_items, 3);
    SCENARIO_DONE(&s);
}

static void free_item(void *item, void *arg)
{
    (void)arg;
    free(item);
}

Test(shared_queue, the_item_function_gets_each_item_once)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_queue *q = NULL;
    cr_assert_eq(stvm_queue_new(vm, 0, &q), STVM_OK);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(stvm_queue_put(vm, q, malloc(32)), STVM_OK);
    cr_assert_eq(stvm_queue_flush(vm, q, free_item, NULL), 100);   /* ASan: no leak */
    for (int i = 0; i < 100; i++)
        cr_assert_eq(stvm_queue_put(vm, q, malloc(32)), STVM_OK);
    cr_assert_eq(stvm_queue_free(vm, q, free_item, NULL), STVM_OK);
    vm_done(vm);
}

Test(shared_queue, vm_free_releases_the_queues_left_and_their_storage)
{
    stvm_vm *vm = vm_make(NULL);
    for (int k = 0; k < 3; k++) {
        stvm_queue *q = NULL;
        cr_assert_eq(stvm_queue_new(vm, k, &q), STVM_OK);
        for (int i = 0; i < 50; i++)
            stvm_queue_put(vm, q, ITEM(i));
        if (k == 2)
            cr_assert_eq(stvm_queue_open_external(vm, q), STVM_OK);
    }
    vm_done(vm);   /* the ASan build fails on what a queue leaves behind */
}

/* ---- the trace ------------------------------------------------------------------------ */

static void puts_two_takes_one(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(1)) == STVM_OK);
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(2)) == STVM_OK);
    GCHECK(s, stvm_queue_take(vm, s->q, &item) == STVM_OK);
}

Test(shared_queue, the_trace_shows_puts_and_takes_with_the_items_left)
{
    qs s = make(0);
    cr_assert_eq(stvm_trace_start(s.vm, 1024), STVM_OK);
    go(s.vm, 40, puts_two_takes_one, &s);
    RUN_OK_GREEN(&s);
    stvm_trace_stop(s.vm);
    int puts = 0, takes = 0;
    stvm_trace_event ev;
    for (size_t i = 0; stvm_trace_get(s.vm, i, &ev) == STVM_OK; i++) {
        if (ev.kind == STVM_TRACE_QUEUE_PUT)
            cr_assert_eq(ev.detail, ++puts);
        if (ev.kind == STVM_TRACE_QUEUE_TAKE) {
            cr_assert_eq(ev.detail, 1);
            takes++;
        }
    }
    cr_assert_eq(puts, 2);
    cr_assert_eq(takes, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(stvm_trace_write_text(s.vm, f), STVM_OK);
    fclose(f);
    cr_assert(strstr(text, "queue-put") && strstr(text, "queue1, 2 left"), "%s", text);
    cr_assert(strstr(text, "queue-take") && strstr(text, "queue1, 1 left"), "%s", text);
    free(text);
    check_json_of(s.vm);
    done_with(&s);
}

/* ---- the preemption rule in the calls that never wait ------------------------------- */

/* A bounded queue of one place, full, with a writer of higher priority waiting: the
 * room nextOrNil or flush frees goes to that writer, which runs before the call
 * returns (Pharo's rule; it was left ready below the caller, breaking invariant 3). */
static void frees_room_without_waiting(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(1)) == STVM_OK);
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* the writer waits for room */
    trace_add(&s->log, 1);
    GCHECK(s, stvm_queue_try_take(vm, s->q, &item) == STVM_OK && NUM(item) == 1);
    trace_add(&s->log, 2);                            /* after the writer put 7 */
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* it waits again, with 8 */
    trace_add(&s->log, 3);
    GCHECK(s, stvm_queue_flush(vm, s->q, NULL, NULL) == 1);
    trace_add(&s->log, 4);                            /* after the writer put 8 */
    char why[160];
    GCHECK(s, stvm_vm_check_invariants(vm, why, sizeof why) == STVM_OK);
    GCHECK(s, stvm_queue_size(vm, s->q) == 1);
}

static void puts_two(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_us(vm, 500) == STVM_OK);   /* once the queue is full */
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(7)) == STVM_OK);
    trace_add(&s->log, 7);
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(8)) == STVM_OK);
    trace_add(&s->log, 8);
}

Test(shared_queue, a_higher_writer_given_room_by_next_or_nil_or_flush_runs_before_the_call_returns)
{
    qs s = make(1);
    go(s.vm, 20, frees_room_without_waiting, &s);
    go(s.vm, 30, puts_two, &s);
    RUN_OK_GREEN(&s);
    static const int want[] = {1, 7, 2, 3, 8, 4};
    trace_expect(&s.log, want, 6);
    done_with(&s);
}

static void takes_within_5ms(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    int rc = stvm_queue_take_timeout_ms(vm, s->q, 5, &item);
    note(s, rc);
    trace_add(&s->log, rc == STVM_OK ? NUM(item) : -1);
}

/* A queue open to other threads owns its slot of the external table: a stray signal to
 * it announces no item (one did, and the take then read an empty array), and only
 * stvm_queue_free frees it. */
Test(shared_queue, a_queues_external_slot_takes_no_stray_signal_and_cannot_be_unregistered)
{
    qs s = make(0);
    cr_assert_eq(stvm_queue_open_external(s.vm, s.q), STVM_OK);
    int owned = 0;
    for (int i = 1; i <= 8; i++) {
        cr_assert_eq(stvm_external_signal(s.vm, i), STVM_OK);
        int rc = stvm_external_unregister(s.vm, i);
        cr_assert(rc == STVM_EINVAL || rc == STVM_EINUSE, "slot %d: %s", i, stvm_err_name(rc));
        owned += rc == STVM_EINUSE;
    }
    cr_assert_eq(owned, 1, "the queue's slot, and only it, is refused");
    cr_assert_eq(stvm_queue_put_external(s.q, ITEM(5), 0), STVM_OK);
    cr_assert_eq(stvm_external_signal(s.vm, 1), STVM_OK);
    go(s.vm, 40, taker, &s);
    go(s.vm, 40, takes_within_5ms, &s);   /* finds nothing more */
    RUN_OK_GREEN(&s);
    static const int want[] = {5, -1};
    trace_expect(&s.log, want, 2);
    cr_assert_eq(s.rc[1], STVM_ETIMEDOUT);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 0);
    stvm_stats st;
    cr_assert_eq(stvm_vm_get_stats(s.vm, &st), STVM_OK);
    cr_assert_eq(st.external_signals, 1);
    done_with(&s);
}

/* A call on a queue open to other threads counts their items first, and a reader it
 * wakes that is higher than the caller runs at once; the queue cannot be freed under
 * the call meanwhile (it was, and the call went on reading freed memory). */
static void takes_then_frees(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    note(s, stvm_queue_take(vm, s->q, &item));
    trace_add(&s->log, NUM(item));
    note(s, stvm_queue_free(vm, s->q, NULL, NULL));   /* the lower caller is inside size */
}

static void puts_from_outside_and_asks_the_size(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_queue_put_external(s->q, ITEM(9), 0) == STVM_OK);
    trace_add(&s->log, 1);
    int64_t n = stvm_queue_size(vm, s->q);   /* the reader runs inside this call */
    trace_add(&s->log, 2);
    GCHECK(s, n == 0);
}

Test(shared_queue, a_queue_cannot_be_freed_under_a_call_that_let_a_woken_reader_run)
{
    qs s = make(0);
    cr_assert_eq(stvm_queue_open_external(s.vm, s.q), STVM_OK);
    go(s.vm, 50, takes_then_frees, &s);
    go(s.vm, 30, puts_from_outside_and_asks_the_size, &s);
    RUN_OK_GREEN(&s);
    static const int want[] = {1, 9, 2};
    trace_expect(&s.log, want, 3);
    cr_assert_eq(s.rc[0], STVM_OK);
    cr_assert_eq(s.rc[1], STVM_EINUSE, "freed under the call: %s", stvm_err_name(s.rc[1]));
    done_with(&s);
}

/* ---- bad input ---------------------------------------------------------------------------- */

static void bad_calls(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = ITEM(42);
    GCHECK(s, stvm_queue_take(vm, s->q, NULL) == STVM_EINVAL);
    GCHECK(s, stvm_queue_take_timeout_ms(vm, s->q, -1, &item) == STVM_EINVAL);
    GCHECK(s, stvm_queue_put_timeout_ms(vm, s->q, ITEM(1), -1) == STVM_EINVAL);
    GCHECK(s, stvm_queue_take_timeout_ms(vm, s->q, INT64_MAX, &item) == STVM_ERANGE);
    GCHECK(s, stvm_queue_try_take(vm, s->q, NULL) == STVM_EINVAL);
    GCHECK(s, stvm_queue_peek(vm, s->q, NULL) == STVM_EINVAL);
    GCHECK(s, NUM(item) == 42);
    GCHECK(s, stvm_queue_size(vm, s->q) == 0);
}

Test(shared_queue, bad_input_is_refused_and_changes_nothing)
{
    qs s = make(0);
    stvm_semaphore *sem = sem_make(s.vm);
    stvm_queue *wrong = (stvm_queue *)(void *)sem;
    void *item = ITEM(42);
    stvm_queue *out = (stvm_queue *)ITEM(1);
    cr_assert_eq(stvm_queue_new(NULL, 0, &out), STVM_EINVAL);
    cr_assert_eq(stvm_queue_new(s.vm, 0, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_queue_new(s.vm, (size_t)INT64_MAX + 1, &out), STVM_EINVAL);
    cr_assert_eq(out, (stvm_queue *)ITEM(1));
    cr_assert_eq(stvm_queue_put(s.vm, wrong, ITEM(1)), STVM_EINVAL);
    cr_assert_eq(stvm_queue_put(NULL, s.q, ITEM(1)), STVM_EINVAL);
    cr_assert_eq(stvm_queue_take(s.vm, s.q, &item), STVM_ENOTPROC);
    cr_assert_eq(stvm_queue_take_timeout_ms(s.vm, s.q, 5, &item), STVM_ENOTPROC);
    cr_assert_eq(stvm_queue_try_take(s.vm, s.q, &item), STVM_ENOTPROC);
    cr_assert_eq(stvm_queue_size(s.vm, wrong), STVM_EINVAL);
    cr_assert_eq(stvm_queue_flush(s.vm, wrong, NULL, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_queue_free(s.vm, wrong, NULL, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_queue_put_external(NULL, ITEM(1), 0), STVM_EINVAL);
    cr_assert_eq(stvm_queue_put_external(s.q, ITEM(1), 0), STVM_EINVAL, "not open");
    cr_assert_eq(stvm_queue_open_external(s.vm, s.q), STVM_OK);
    cr_assert_eq(stvm_queue_open_external(s.vm, s.q), STVM_ESTATE);
    cr_assert_eq(stvm_queue_put_external(s.q, ITEM(1), -2), STVM_EINVAL);
    cr_assert_eq(NUM(item), 42);
    stvm_vm *other = vm_make(NULL);
    cr_assert_eq(stvm_queue_put(other, s.q, ITEM(1)), STVM_EINVAL, "another VM's queue");
    vm_done(other);
    go(s.vm, 40, bad_calls, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 0);
    cr_assert_eq(stvm_semaphore_free(s.vm, sem), STVM_OK);
    done_with(&s);
}

/* ---- closing (stvm_queue_close) ------------------------------------------------------ */

/* Every put after the close is refused, from a process (plain and timed) and from the
 * host; the item stays the caller's: nothing is added to the queue. */
static void puts_after_close(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(1)) == STVM_OK);
    note(s, stvm_queue_close(vm, s->q));
    note(s, stvm_queue_put(vm, s->q, ITEM(2)));
    note(s, stvm_queue_put_timeout_ms(vm, s->q, ITEM(3), 5));
    note(s, stvm_queue_put_timeout_ms(vm, s->q, ITEM(4), 0));
    GCHECK(s, stvm_queue_size(vm, s->q) == 1);
}

Test(shared_queue, put_after_close_is_refused_and_item_kept)
{
    qs s = make(0);
    go(s.vm, 40, puts_after_close, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc[0], STVM_OK, "the close");
    for (int i = 1; i <= 3; i++)
        cr_assert_eq(s.rc[i], STVM_ECLOSED, "put %d: %s", i, stvm_err_name(s.rc[i]));
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(5)), STVM_ECLOSED, "from the host");
    cr_assert_eq(stvm_queue_open_external(s.vm, s.q), STVM_ECLOSED, "nothing more to put");
    the_flushed.n = 0;
    cr_assert_eq(stvm_queue_flush(s.vm, s.q, collect, &the_flushed), 1);
    cr_assert_eq(the_flushed.n, 1);
    cr_assert_eq(the_flushed.items[0], 1, "only the item put before the close");
    done_with(&s);
}

/* What was put before the close is taken in order; then every take answers the end of
 * the queue, EEOF, in each form, and keeps answering it. */
static void drains_a_closed_queue(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = ITEM(99);
    for (int i = 0; i < 3; i++) {
        GCHECK(s, stvm_queue_take(vm, s->q, &item) == STVM_OK);
        trace_add(&s->log, NUM(item));
    }
    item = ITEM(99);
    note(s, stvm_queue_take(vm, s->q, &item));
    note(s, stvm_queue_try_take(vm, s->q, &item));
    note(s, stvm_queue_peek(vm, s->q, &item));
    note(s, stvm_queue_take_timeout_ms(vm, s->q, 5, &item));
    note(s, stvm_queue_take_timeout_ms(vm, s->q, 0, &item));
    note(s, stvm_queue_take(vm, s->q, &item));
    GCHECK(s, NUM(item) == 99);   /* untouched by every refusal */
    GCHECK(s, stvm_queue_size(vm, s->q) == 0);
    s->at_us[0] = stvm_vm_now_us(vm) - SIM_START;
}

Test(shared_queue, take_after_close_drains_then_answers_eof)
{
    qs s = make(0);
    for (int i = 1; i <= 3; i++)
        cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(i)), STVM_OK);
    cr_assert_eq(stvm_queue_close(s.vm, s.q), STVM_OK, "from the host");
    go(s.vm, 40, drains_a_closed_queue, &s);
    RUN_OK_GREEN(&s);
    trace_expect(&s.log, (int[]){1, 2, 3}, 3);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(s.rc[i], STVM_EEOF, "take %d: %s", i, stvm_err_name(s.rc[i]));
    cr_assert_eq(s.at_us[0], 0, "no take waited, not even the timed one");
    void *item = NULL;
    cr_assert_eq(stvm_queue_peek(s.vm, s.q, &item), STVM_EEOF, "peek from the host");
    done_with(&s);
}

/* Readers waiting on the empty queue when it closes are released with EEOF; by the
 * rule of the calls the one of higher priority than the closer runs before the close
 * returns, the lower one after. */
static void takes_and_logs(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    int rc = stvm_queue_take(vm, s->q, &item);
    trace_add(&s->log, rc == STVM_EEOF ? stvm_vm_active_process(vm) == s->victim ? 50 : 30 : -1);
}

static void closes_after_a_while(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* both readers wait */
    GCHECK(s, stvm_queue_close(vm, s->q) == STVM_OK);
    trace_add(&s->log, 40);
    GCHECK(s, stvm_queue_close(vm, s->q) == STVM_ECLOSED);   /* twice: changes nothing */
}

Test(shared_queue, readers_waiting_at_close_get_eof_and_a_higher_one_runs_first)
{
    qs s = make(0);
    s.victim = spawn(s.vm, 50, "high reader", takes_and_logs, &s);
    go(s.vm, 30, takes_and_logs, &s);
    go(s.vm, 40, closes_after_a_while, &s);
    RUN_OK_GREEN(&s);
    trace_expect(&s.log, (int[]){50, 40, 30}, 3);
    stvm_process_release(s.vm, s.victim);
    done_with(&s);
}

/* Writers waiting for room in a full bounded queue are released with ECLOSED, plain
 * and timed, with nothing put; the items that were in stay to be taken. */
static void writes_and_notes(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    note(s, stvm_queue_put(vm, s->q, ITEM(8)));
}

static void writes_timed_and_notes(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    note(s, stvm_queue_put_timeout_ms(vm, s->q, ITEM(9), 50));
}

static void fills_closes_then_drains(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(1)) == STVM_OK);
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(2)) == STVM_OK);
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* both writers wait for room */
    GCHECK(s, stvm_queue_close(vm, s->q) == STVM_OK);
    s->at_us[0] = stvm_vm_now_us(vm) - SIM_START;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* they answer */
    while (stvm_queue_take(vm, s->q, &item) == STVM_OK)
        trace_add(&s->log, NUM(item));
}

Test(shared_queue, writers_waiting_for_room_at_close_are_released_with_eclosed)
{
    qs s = make(2);
    go(s.vm, 40, fills_closes_then_drains, &s);
    go(s.vm, 30, writes_and_notes, &s);
    go(s.vm, 30, writes_timed_and_notes, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.nrc, 2);
    cr_assert_eq(s.rc[0], STVM_ECLOSED, "%s", stvm_err_name(s.rc[0]));
    cr_assert_eq(s.rc[1], STVM_ECLOSED, "the timed one too: %s", stvm_err_name(s.rc[1]));
    trace_expect(&s.log, (int[]){1, 2}, 2);
    cr_assert_eq(s.at_us[0], 1000, "the close came before the timed put's 50 ms");
    done_with(&s);
}

/* A writer handed the room a take freed, but not yet run to use it when the queue
 * closes, is refused too (its put comes after the close): the end stays final. */
static void takes_one_then_closes(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* the writer waits for room */
    GCHECK(s, stvm_queue_take(vm, s->q, &item) == STVM_OK && NUM(item) == 1);
    GCHECK(s, stvm_queue_close(vm, s->q) == STVM_OK);   /* the writer has not run yet */
    note(s, stvm_queue_take(vm, s->q, &item));
}

Test(shared_queue, a_writer_handed_room_before_the_close_is_refused_when_it_runs)
{
    qs s = make(1);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(1)), STVM_OK);
    go(s.vm, 40, takes_one_then_closes, &s);
    go(s.vm, 30, writes_and_notes, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc[0], STVM_EEOF, "nothing came after the close: %s", stvm_err_name(s.rc[0]));
    cr_assert_eq(s.rc[1], STVM_ECLOSED, "the writer: %s", stvm_err_name(s.rc[1]));
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 0);
    done_with(&s);
}

/* An item promised to a woken reader is that reader's: a later reader of the closed
 * queue is not told the end while the item may still come back (a try says EAGAIN, a
 * take waits), and learns it when the woken reader takes it. The readers are below the
 * closer, so the woken one (priority 20) has not run when the later one (40) looks. */
static void low_reader(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    int rc = stvm_queue_take(vm, s->q, &item);
    trace_add(&s->log, rc == STVM_OK ? NUM(item) : -1);
}

static void mid_reader(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    note(s, stvm_queue_try_take(vm, s->q, &item));
    note(s, stvm_queue_take(vm, s->q, &item));
    trace_add(&s->log, 100);
}

static void puts_one_closes_and_starts_a_reader(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);   /* the low reader waits */
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(6)) == STVM_OK);   /* promised to it */
    GCHECK(s, stvm_queue_close(vm, s->q) == STVM_OK);
    go(vm, 40, mid_reader, s);
}

Test(shared_queue, an_item_promised_to_a_woken_reader_keeps_a_later_reader_waiting_until_taken)
{
    qs s = make(0);
    go(s.vm, 20, low_reader, &s);
    go(s.vm, 50, puts_one_closes_and_starts_a_reader, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc[0], STVM_EAGAIN, "the item may still come back: %s", stvm_err_name(s.rc[0]));
    cr_assert_eq(s.rc[1], STVM_EEOF, "%s", stvm_err_name(s.rc[1]));
    /* the low reader's take of the last item releases the mid one, which runs first */
    trace_expect(&s.log, (int[]){100, 6}, 2);
    done_with(&s);
}

/* The woken reader terminated before it ran gives its item back: the waiting reader
 * gets it, and only then the end. */
static void mid_reader_twice(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    int rc = stvm_queue_take(vm, s->q, &item);
    trace_add(&s->log, rc == STVM_OK ? NUM(item) : -1);
    note(s, stvm_queue_take(vm, s->q, &item));
}

static void terminates_the_low_reader(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
}

static void puts_one_closes_and_starts_two(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(6)) == STVM_OK);
    GCHECK(s, stvm_queue_close(vm, s->q) == STVM_OK);
    go(vm, 40, mid_reader_twice, s);         /* waits: the item is promised */
    go(vm, 30, terminates_the_low_reader, s);   /* then, before the low reader runs */
}

Test(shared_queue, a_promised_item_given_back_after_the_close_goes_to_a_waiting_reader)
{
    qs s = make(0);
    s.victim = spawn(s.vm, 20, "low reader", low_reader, &s);
    go(s.vm, 50, puts_one_closes_and_starts_two, &s);
    RUN_OK_GREEN(&s);
    trace_expect(&s.log, (int[]){6}, 1);
    cr_assert_eq(s.rc[0], STVM_EEOF, "%s", stvm_err_name(s.rc[0]));
    stvm_process_release(s.vm, s.victim);
    done_with(&s);
}

/* A closed queue is freed as an open one: the items left go to the item function. */
Test(shared_queue, free_of_a_closed_queue_hands_its_items_over)
{
    qs s = make(0);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(1)), STVM_OK);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(2)), STVM_OK);
    cr_assert_eq(stvm_queue_close(s.vm, s.q), STVM_OK);
    cr_assert_eq(stvm_queue_close(s.vm, s.q), STVM_ECLOSED, "closing twice");
    cr_assert_eq(stvm_queue_size(s.vm, s.q), 2, "the second close changed nothing");
    the_flushed.n = 0;
    cr_assert_eq(stvm_queue_free(s.vm, s.q, collect, &the_flushed), STVM_OK);
    cr_assert_eq(the_flushed.n, 2);
    cr_assert_eq(the_flushed.items[0], 1);
    cr_assert_eq(the_flushed.items[1], 2);
    SCENARIO_DONE(&s);
}

/* The trace records the close (queue-close, with the items left) in text and JSON. */
static void puts_closes_takes(stvm_vm *vm, void *arg)
{
    qs *s = arg;
    void *item = NULL;
    GCHECK(s, stvm_queue_put(vm, s->q, ITEM(1)) == STVM_OK);
    GCHECK(s, stvm_queue_close(vm, s->q) == STVM_OK);
    GCHECK(s, stvm_queue_take(vm, s->q, &item) == STVM_OK);
    GCHECK(s, stvm_queue_take(vm, s->q, &item) == STVM_EEOF);
}

Test(shared_queue, the_trace_shows_the_close_with_the_items_left)
{
    qs s = make(0);
    cr_assert_eq(stvm_trace_start(s.vm, 1024), STVM_OK);
    go(s.vm, 40, puts_closes_takes, &s);
    RUN_OK_GREEN(&s);
    stvm_trace_stop(s.vm);
    int closes = 0;
    stvm_trace_event ev;
    for (size_t i = 0; stvm_trace_get(s.vm, i, &ev) == STVM_OK; i++) {
        if (ev.kind != STVM_TRACE_QUEUE_CLOSE)
            continue;
        closes++;
        cr_assert_eq(ev.object, (uintptr_t)s.q);
        cr_assert_eq(ev.detail, 1, "one item left at the close");
        cr_assert_neq(ev.process, 0, "closed by the process");
    }
    cr_assert_eq(closes, 1);
    cr_assert_str_eq(stvm_trace_kind_name(STVM_TRACE_QUEUE_CLOSE), "queue-close");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(stvm_trace_write_text(s.vm, f), STVM_OK);
    fclose(f);
    cr_assert(strstr(text, "queue-close") && strstr(text, "queue1, 1 left"), "%s", text);
    free(text);
    check_json_of(s.vm);
    done_with(&s);
}

/* Closing needs a queue of this VM. */
Test(shared_queue, close_refuses_bad_input_and_changes_nothing)
{
    qs s = make(0);
    stvm_semaphore *sem = sem_make(s.vm);
    cr_assert_eq(stvm_queue_close(NULL, s.q), STVM_EINVAL);
    cr_assert_eq(stvm_queue_close(s.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_queue_close(s.vm, (stvm_queue *)(void *)sem), STVM_EINVAL);
    stvm_vm *other = vm_make(NULL);
    cr_assert_eq(stvm_queue_close(other, s.q), STVM_EINVAL, "another VM's queue");
    vm_done(other);
    cr_assert_eq(stvm_queue_close_external(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_queue_close_external(s.q), STVM_EINVAL, "not open for other threads");
    cr_assert_eq(stvm_queue_close_external((stvm_queue *)(void *)sem), STVM_EINVAL);
    cr_assert_eq(stvm_queue_put(s.vm, s.q, ITEM(1)), STVM_OK, "still open");
    cr_assert_eq(stvm_semaphore_free(s.vm, sem), STVM_OK);
    done_with(&s);
}
