/*
 * Names of waitable objects (stvm/core.h, "Names"): each kind's setter and getter, the
 * copy, the limit, NULL clearing, the name going with the object; and what prints them:
 * the blocked report (which names the handle the program holds: a queue, not its
 * internal semaphore), the trace's text and JSON writers (a queue's semaphores go by
 * the queue: "frames.items"), a name set while a trace records.
 */
#include <sys/socket.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(names, .timeout = 30);

/* A process that takes from the queue in arg (it waits: the queue stays empty). */
static void take_forever(stvm_vm *vm, void *arg)
{
    void *item;
    stvm_queue_take(vm, arg, &item);
}

/* A process that puts into the full bounded queue in arg, and waits for room. */
static void put_forever(stvm_vm *vm, void *arg)
{
    stvm_queue_put(vm, arg, (void *)2);
}

Test(names, blocked_report_names_queue_by_its_handle_and_name)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_queue *frames, *bounded;
    cr_assert_eq(stvm_queue_new(vm, 0, &frames), STVM_OK);
    cr_assert_eq(stvm_queue_new(vm, 1, &bounded), STVM_OK);
    cr_assert_eq(stvm_queue_set_name(vm, frames, "frames"), STVM_OK);
    cr_assert_eq(stvm_queue_put(vm, bounded, (void *)1), STVM_OK);   /* now full */
    spawn(vm, 40, "consumer", take_forever, frames);
    spawn(vm, 30, "producer", put_forever, bounded);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);

    char buf[512], want[160];
    int n = stvm_vm_blocked_report(vm, buf, sizeof buf);
    cr_assert_eq((size_t)n, strlen(buf));
    snprintf(want, sizeof want,
             "'consumer' (priority 40) waits on queue item 'frames' %p, into which no process "
             "or registered thread can put\n", (void *)frames);
    cr_assert_not_null(strstr(buf, want), "report:\n%s", buf);
    snprintf(want, sizeof want,
             "'producer' (priority 30) waits on queue room %p, from which no process can take\n",
             (void *)bounded);
    cr_assert_not_null(strstr(buf, want), "report:\n%s", buf);
    /* not an internal semaphore inside the queue (0x20 past its handle) */
    snprintf(want, sizeof want, "%p", (void *)((char *)frames + 0x20));
    cr_assert_null(strstr(buf, want), "report:\n%s", buf);

    stvm_process_info info;
    stvm_process *list[8];
    size_t count;
    cr_assert_eq(stvm_vm_processes(vm, list, 8, &count), STVM_OK);
    cr_assert_eq(stvm_process_get_info(vm, list[1], &info), STVM_OK);
    cr_assert_eq(info.wait_kind, STVM_WAIT_ON_QUEUE_ITEM);
    cr_assert_eq(info.wait_handle, frames);
    cr_assert_str_eq(info.wait_name, "frames");

    stvm_process_terminate(vm, list[1]);
    stvm_process_terminate(vm, list[2]);
    cr_assert_eq(stvm_queue_free(vm, frames, NULL, NULL), STVM_OK);
    cr_assert_eq(stvm_queue_free(vm, bounded, NULL, NULL), STVM_OK);
    vm_done(vm);
}

Test(names, each_kind_keeps_a_copy_and_null_or_empty_takes_it_away)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_semaphore *s;
    stvm_mutex *m;
    stvm_queue *q;
    stvm_monitor *mon;
    stvm_delay *d;
    cr_assert_eq(stvm_semaphore_new(vm, &s), STVM_OK);
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    cr_assert_eq(stvm_queue_new(vm, 0, &q), STVM_OK);
    cr_assert_eq(stvm_monitor_new(vm, &mon), STVM_OK);
    cr_assert_eq(stvm_delay_new_ms(vm, 5, &d), STVM_OK);

    char name[16] = "bus", buf[64];
    cr_assert_eq(stvm_semaphore_set_name(vm, s, name), STVM_OK);
    strcpy(name, "XXX");   /* the VM kept its own copy */
    cr_assert_eq(stvm_semaphore_get_name(vm, s, buf, sizeof buf), 3);
    cr_assert_str_eq(buf, "bus");
    cr_assert_eq(stvm_mutex_set_name(vm, m, "lock"), STVM_OK);
    cr_assert_eq(stvm_queue_set_name(vm, q, "frames"), STVM_OK);
    cr_assert_eq(stvm_monitor_set_name(vm, mon, "cond"), STVM_OK);
    cr_assert_eq(stvm_delay_set_name(vm, d, "tick"), STVM_OK);
    cr_assert_eq(stvm_mutex_get_name(vm, m, buf, sizeof buf), 4);
    cr_assert_str_eq(buf, "lock");
    cr_assert_eq(stvm_queue_get_name(vm, q, buf, sizeof buf), 6);
    cr_assert_str_eq(buf, "frames");
    cr_assert_eq(stvm_monitor_get_name(vm, mon, buf, sizeof buf), 4);
    cr_assert_str_eq(buf, "cond");
    cr_assert_eq(stvm_delay_get_name(vm, d, buf, sizeof buf), 4);
    cr_assert_str_eq(buf, "tick");
    /* truncated like snprintf: the full length, what fits */
    cr_assert_eq(stvm_queue_get_name(vm, q, buf, 4), 6);
    cr_assert_str_eq(buf, "fra");
    cr_assert_eq(stvm_queue_get_name(vm, q, NULL, 0), 6);
    /* renamed, then taken away by NULL and by "" */
    cr_assert_eq(stvm_semaphore_set_name(vm, s, "other"), STVM_OK);
    cr_assert_eq(stvm_semaphore_get_name(vm, s, buf, sizeof buf), 5);
    cr_assert_eq(stvm_semaphore_set_name(vm, s, NULL), STVM_OK);
    cr_assert_eq(stvm_semaphore_get_name(vm, s, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "");
    cr_assert_eq(stvm_mutex_set_name(vm, m, ""), STVM_OK);
    cr_assert_eq(stvm_mutex_get_name(vm, m, buf, sizeof buf), 0);
    /* a name of exactly STVM_NAME_MAX bytes is kept whole */
    char longest[STVM_NAME_MAX + 1];
    memset(longest, 'n', STVM_NAME_MAX);
    longest[STVM_NAME_MAX] = 0;
    cr_assert_eq(stvm_monitor_set_name(vm, mon, longest), STVM_OK);
    cr_assert_eq(stvm_monitor_get_name(vm, mon, buf, sizeof buf), STVM_NAME_MAX);
    cr_assert_str_eq(buf, longest);

    cr_assert_eq(stvm_delay_free(vm, d), STVM_OK);
    cr_assert_eq(stvm_monitor_free(vm, mon), STVM_OK);
    cr_assert_eq(stvm_queue_free(vm, q, NULL, NULL), STVM_OK);
    cr_assert_eq(stvm_mutex_free(vm, m), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, s), STVM_OK);
    vm_done(vm);
}

Test(names, a_name_too_long_or_with_a_control_character_is_refused_and_the_old_one_stays)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_semaphore *s = sem_make(vm);
    cr_assert_eq(stvm_semaphore_set_name(vm, s, "kept"), STVM_OK);
    char too_long[STVM_NAME_MAX + 2];
    memset(too_long, 'x', STVM_NAME_MAX + 1);
    too_long[STVM_NAME_MAX + 1] = 0;
    cr_assert_eq(stvm_semaphore_set_name(vm, s, too_long), STVM_ERANGE);
    cr_assert_eq(stvm_semaphore_set_name(vm, s, "two\nlines"), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_set_name(vm, s, "tab\there"), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_set_name(vm, s, "del\x7f"), STVM_EINVAL);
    char buf[64];
    cr_assert_eq(stvm_semaphore_get_name(vm, s, buf, sizeof buf), 4);
    cr_assert_str_eq(buf, "kept");
    /* bytes above 0x7f are text (UTF-8): kept as they are */
    cr_assert_eq(stvm_semaphore_set_name(vm, s, "Fila \xc3\xa9"), STVM_OK);
    cr_assert_eq(stvm_semaphore_get_name(vm, s, buf, sizeof buf), 7);
    cr_assert_eq(stvm_semaphore_free(vm, s), STVM_OK);
    vm_done(vm);
}

Test(names, a_name_goes_with_its_object)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_semaphore *a, *b;
    /* Freed and made again until the allocator hands the same address back, so that a
     * name left behind would show on the new object. */
    cr_assert_eq(stvm_semaphore_new(vm, &a), STVM_OK);
    cr_assert_eq(stvm_semaphore_set_name(vm, a, "old"), STVM_OK);
    void *where = a;
    cr_assert_eq(stvm_semaphore_free(vm, a), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &b), STVM_OK);
    char buf[16] = "?";
    cr_assert_eq(stvm_semaphore_get_name(vm, b, buf, sizeof buf), 0,
                 "a new semaphore (%s the old one's address) has no name: \"%s\"",
                 (void *)b == where ? "at" : "not at", buf);
    cr_assert_eq(stvm_semaphore_free(vm, b), STVM_OK);
    vm_done(vm);
}

/* ---- the trace ---------------------------------------------------------------------- */

typedef struct traced {
    stvm_queue *named, *unnamed;
    stvm_semaphore *sem;
} traced;

/* Puts an item into each queue, names the semaphore in the middle of the run (so that
 * its first events carry the number, the later ones the name), signals it. */
static void puts_and_names(stvm_vm *vm, void *arg)
{
    traced *t = arg;
    stvm_queue_put(vm, t->named, (void *)1);
    stvm_queue_put(vm, t->unnamed, (void *)1);
    stvm_semaphore_signal(vm, t->sem);
    stvm_semaphore_set_name(vm, t->sem, "late \"quoted\\\"");
    stvm_semaphore_signal(vm, t->sem);
}

static char *text_of(stvm_vm *vm)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(stvm_trace_write_text(vm, f), STVM_OK);
    fclose(f);
    return text;
}

Test(names, the_trace_says_an_objects_name_and_a_queues_semaphores_by_their_queue)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    traced t = {.sem = sem_make(vm)};
    cr_assert_eq(stvm_queue_new(vm, 0, &t.named), STVM_OK);
    cr_assert_eq(stvm_queue_set_name(vm, t.named, "frames"), STVM_OK);
    cr_assert_eq(stvm_trace_start(vm, 256), STVM_OK);
    /* made while recording: its semaphores are known as its own too */
    cr_assert_eq(stvm_queue_new(vm, 0, &t.unnamed), STVM_OK);
    spawn(vm, 40, "main", puts_and_names, &t);
    run_ok(vm);
    char *text = text_of(vm);
    cr_assert_not_null(strstr(text, "queue-put       frames, 1 left"), "%s", text);
    cr_assert_not_null(strstr(text, "sem-excess      frames.items, nobody waits"), "%s", text);
    cr_assert_not_null(strstr(text, "queue-put       queue1, 1 left"), "%s", text);
    cr_assert_not_null(strstr(text, "sem-excess      queue1.items, nobody waits"), "%s", text);
    /* the semaphore: its number before the name was set, its name after */
    cr_assert_not_null(strstr(text, "sem-excess      sem1, nobody waits: excess 1"), "%s", text);
    cr_assert_not_null(strstr(text, "sem-excess      late \"quoted\\\", nobody waits: excess 2"),
                       "%s", text);
    free(text);
    check_json_of(vm);   /* the quotes and the backslash are escaped */
    char path[] = "/tmp/stvm-names-XXXXXX.json";
    close(mkstemps(path, 5));
    cr_assert_eq(stvm_trace_write_json(vm, path), STVM_OK);
    char *json = file_slurp(path);
    cr_assert_not_null(strstr(json, "\"name\":\"sem-excess frames.items\""), "%s", json);
    cr_assert_not_null(strstr(json, "\"name\":\"sem-excess late \\\"quoted\\\\\\\"\""), "%s", json);
    free(json);
    unlink(path);
    cr_assert_eq(stvm_queue_free(vm, t.named, NULL, NULL), STVM_OK);
    cr_assert_eq(stvm_queue_free(vm, t.unnamed, NULL, NULL), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, t.sem), STVM_OK);
    vm_done(vm);
}

/* ---- sockets ------------------------------------------------------------------------ */

typedef struct acceptor {
    stvm_socket *listener;
    int rc;
} acceptor;

static void accepts(stvm_vm *vm, void *arg)
{
    acceptor *a = arg;
    stvm_socket *s = NULL;
    a->rc = stvm_socket_accept(vm, a->listener, -1, &s);
    if (s)
        stvm_socket_close(vm, s);
}

Test(names, a_sockets_name_covers_its_accept_wait_and_its_semaphores)
{
    stvm_vm *vm = vm_make(NULL);
    acceptor a = {0};
    cr_assert_eq(stvm_tcp_listen(vm, "127.0.0.1", 0, 4, &a.listener), STVM_OK);
    cr_assert_eq(stvm_socket_set_name(vm, a.listener, "front door"), STVM_OK);
    char buf[32];
    cr_assert_eq(stvm_socket_get_name(vm, a.listener, buf, sizeof buf), 10);
    cr_assert_str_eq(buf, "front door");
    cr_assert_eq(stvm_trace_start(vm, 256), STVM_OK);
    stvm_process *p;
    cr_assert_eq(stvm_spawn(vm, 40, "acceptor", accepts, &a, &p), STVM_OK);
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 1);   /* it waits for a connection */

    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(vm, p, &info), STVM_OK);
    cr_assert_eq(info.wait_kind, STVM_WAIT_ON_SOCKET_ACCEPT);
    cr_assert_eq(info.wait_handle, a.listener);
    cr_assert_str_eq(info.wait_name, "front door");
    char report[256], want[128];
    stvm_vm_blocked_report(vm, report, sizeof report);
    snprintf(want, sizeof want, "'acceptor' (priority 40) waits on socket accept 'front door' %p\n",
             (void *)a.listener);
    cr_assert_str_eq(report, want);

    cr_assert_eq(stvm_process_terminate(vm, p), STVM_OK);
    cr_assert_eq(stvm_process_release(vm, p), STVM_OK);
    stvm_trace_stop(vm);
    char *text = text_of(vm);
    /* the wait blocked on the listener's connection semaphore */
    cr_assert_not_null(strstr(text, "sem-wait        front door.connection, blocks"), "%s", text);
    free(text);
    cr_assert_eq(stvm_socket_close(vm, a.listener), STVM_OK);
    vm_done(vm);
}
