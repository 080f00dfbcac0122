/*
 * A server that runs out of descriptors (issue 32), on the real clock over loopback: the
 * process lowers its own RLIMIT_NOFILE (Criterion runs each test in a process of its
 * own; no system setting is touched) to what it has open plus 64, a green server loops
 * on stvm_socket_accept(vm, l, 100, &c) and spawns an echo process per connection, and
 * an OS thread opens 40 connections and sends a line on each. Its 40 descriptors and the
 * server's leave room for about 22 connections; the others wait in the backlog.
 *
 * What must hold, each with its figure (printed): the accept that finds no descriptor
 * answers STVM_EMFILE at once, and later accepts are refused at the pace of the
 * listener's back-off, not in a loop (accepts refused in a second); the VM sleeps while
 * nothing else is due (the VM thread's CPU in that second, getrusage RUSAGE_THREAD, and
 * its OS sleeps); the connections it has keep being served (a second line on each is
 * echoed); and once the client closes the connections it was served on, the descriptors
 * the VM closes let the listener take the connections that waited in the backlog, each
 * of which is then answered. Every wait is bounded; the test ends in a few seconds.
 */
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define CONNS 40
#define LONG 10000   /* ms: a timeout that must never run out */

typedef struct exhaust {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener;
    int port;
    /* the server's */
    int accepted, refused, first_refusal_rc;
    int64_t first_refusal_us;        /* how long the accept that met EMFILE took */
    atomic_int exhausted;            /* the server met EMFILE at least once */
    int accepted_after;              /* accepts once the client closed its served half */
    /* the meter's (one second while exhausted) */
    int refused_in_window;
    double cpu_ms_in_window;
    uint64_t sleeps_in_window;
    atomic_int window_done;
    /* the client thread's */
    int fd[CONNS];
    int answered[CONNS];             /* lines echoed on each connection */
    int served_first, served_second, served_last;
    atomic_int done;                 /* the client is finished: the server stops */
    const char *client_error;
} exhaust;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static double thread_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static int open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1;   /* the directory's own */
}

/* ---- the VM's side -------------------------------------------------------------------- */

static void echo(stvm_vm *vm, void *arg)
{
    void **pair = arg;
    exhaust *x = pair[0];
    stvm_socket *c = pair[1];
    free(pair);
    char buf[256];
    int64_t r;
    while ((r = stvm_socket_recv(vm, c, buf, sizeof buf, LONG)) > 0)
        GCHECK(x, stvm_socket_send(vm, c, buf, (size_t)r, LONG) == r);
    GCHECK(x, r == STVM_EEOF || r == STVM_ECONNRESET);
    GCHECK(x, stvm_socket_close(vm, c) == STVM_OK);
}

/* The server: accept with 100 ms, a process per connection, and on any other
 * answer simply ask again. */
static void server(stvm_vm *vm, void *arg)
{
    exhaust *x = arg;
    while (!atomic_load(&x->done)) {
        stvm_socket *c = NULL;
        int64_t t0 = now_us();
        int rc = stvm_socket_accept(vm, x->listener, 100, &c);
        if (rc == STVM_OK) {
            x->accepted++;
            if (atomic_load(&x->window_done))
                x->accepted_after++;
            void **pair = malloc(2 * sizeof *pair);
            pair[0] = x;
            pair[1] = c;
            GCHECK(x, stvm_spawn(vm, 40, "echo", echo, pair, NULL) == STVM_OK);
        } else if (rc != STVM_ETIMEDOUT) {
            if (!x->refused++) {
                x->first_refusal_rc = rc;
                x->first_refusal_us = now_us() - t0;
            }
            atomic_store(&x->exhausted, 1);
        }
    }
    GCHECK(x, stvm_socket_close(vm, x->listener) == STVM_OK);
}

/* One second of the exhausted server, measured on the VM's thread (a green process runs
 * there), above the server's priority so that it runs whatever the server does. */
static void meter(stvm_vm *vm, void *arg)
{
    exhaust *x = arg;
    while (!atomic_load(&x->exhausted) && !atomic_load(&x->done))
        GCHECK(x, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    stvm_stats s0, s1;
    stvm_vm_get_stats(vm, &s0);
    int refused0 = x->refused;
    double cpu0 = thread_cpu_ms();
    GCHECK(x, stvm_delay_wait_ms(vm, 1000) == STVM_OK);
    x->cpu_ms_in_window = thread_cpu_ms() - cpu0;
    stvm_vm_get_stats(vm, &s1);
    x->refused_in_window = x->refused - refused0;
    x->sleeps_in_window = s1.os_sleeps - s0.os_sleeps;
    atomic_store(&x->window_done, 1);
}

/* ---- the client thread ---------------------------------------------------------------- */

/* Read what comes on the open connections until want of them have answered since
 * *count was last set, or quiet_ms pass with nothing new, or limit_ms in all. */
static void collect(exhaust *x, int *count, int want, int quiet_ms, int limit_ms)
{
    int64_t end = now_us() + (int64_t)limit_ms * 1000, last = now_us();
    while (*count < want && now_us() < end && now_us() - last < (int64_t)quiet_ms * 1000) {
        struct pollfd p[CONNS];
        int idx[CONNS], n = 0;
        for (int i = 0; i < CONNS; i++)
            if (x->fd[i] >= 0) {
                p[n] = (struct pollfd){.fd = x->fd[i], .events = POLLIN};
                idx[n++] = i;
            }
        if (poll(p, (nfds_t)n, 20) <= 0)
            continue;
        for (int k = 0; k < n; k++) {
            if (!(p[k].revents & POLLIN))
                continue;
            char buf[64];
            ssize_t r = read(p[k].fd, buf, sizeof buf);
            if (r > 0) {
                x->answered[idx[k]]++;
                (*count)++;
                last = now_us();
            }
        }
    }
}

static void *client(void *arg)
{
    exhaust *x = arg;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)x->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    /* Every descriptor first, so that the server's accepts cannot take the client's. */
    for (int i = 0; i < CONNS; i++)
        if ((x->fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
            x->client_error = "socket";
            goto out;
        }
    for (int i = 0; i < CONNS; i++)
        if (connect(x->fd[i], (struct sockaddr *)&sa, sizeof sa) != 0 ||
            write(x->fd[i], "line one\n", 9) != 9) {
            x->client_error = "connect or write";
            goto out;
        }
    /* Those the server could take answer; the rest wait in the backlog. */
    collect(x, &x->served_first, CONNS, 500, 5000);
    /* Exhausted: wait for the meter's second, then a second line on each served one. */
    for (int64_t end = now_us() + 5000000; !atomic_load(&x->window_done) && now_us() < end;)
        usleep(10000);
    int served = 0;
    for (int i = 0; i < CONNS; i++)
        if (x->answered[i]) {
            served++;
            if (write(x->fd[i], "line two\n", 9) != 9)
                x->client_error = "second write";
        }
    collect(x, &x->served_second, served, 500, 5000);
    /* Free descriptors the way a server does: the clients it served go away, and each
     * echo process closes its end. */
    for (int i = 0; i < CONNS; i++)
        if (x->answered[i]) {
            close(x->fd[i]);
            x->fd[i] = -1;
        }
    collect(x, &x->served_last, CONNS - served, 1000, 5000);
out:
    for (int i = 0; i < CONNS; i++)
        if (x->fd[i] >= 0)
            close(x->fd[i]);
    atomic_store(&x->done, 1);
    return NULL;
}

/* The Delay scheduler's first timed wait and the listener, before the limit. */
static void warm_up(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_delay_wait_ms(vm, 1);
}

Test(socket_exhaustion,
     a_server_out_of_descriptors_is_refused_at_once_sleeps_serves_what_it_has_and_recovers,
     .timeout = 60)
{
    static exhaust x;
    memset(&x, 0, sizeof x);
    for (int i = 0; i < CONNS; i++)
        x.fd[i] = -1;
    x.vm = vm_make(NULL);
    cr_assert_eq(stvm_tcp_listen(x.vm, "127.0.0.1", 0, 64, &x.listener), STVM_OK);
    x.port = stvm_socket_port(x.listener);
    spawn(x.vm, 40, "warm", warm_up, NULL);
    run_ok(x.vm);

    struct rlimit rl, low;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    int open_now = open_descriptors();
    low = (struct rlimit){.rlim_cur = (rlim_t)open_now + 64, .rlim_max = rl.rlim_max};
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);

    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, client, &x), 0);
    spawn(x.vm, 40, "server", server, &x);
    spawn(x.vm, 60, "meter", meter, &x);
    double cpu0 = thread_cpu_ms();
    int64_t t0 = now_us();
    run_ok(x.vm);
    double cpu_all = thread_cpu_ms() - cpu0;
    int64_t took = now_us() - t0;
    pthread_join(t, NULL);
    setrlimit(RLIMIT_NOFILE, &rl);

    int answered_all = 0;
    for (int i = 0; i < CONNS; i++)
        answered_all += x.answered[i] > 0;
    fprintf(stderr,
            "socket_exhaustion: limit %d (%d open + 64); %d connections accepted before "
            "exhaustion (%d answered), the first refusal %s after %lld us; in one second "
            "exhausted: %d accepts refused, %.1f ms of the VM thread's CPU, %llu OS sleeps; "
            "%d of %d second lines echoed; after the client closed those: %d more accepted, "
            "%d answered; %d of %d connections answered in all; in the whole run %d accepts "
            "refused and %.0f ms of the VM thread's CPU in %lld ms\n",
            open_now + 64, open_now, x.served_first, x.served_first,
            stvm_err_name(x.first_refusal_rc), (long long)x.first_refusal_us,
            x.refused_in_window, x.cpu_ms_in_window, (unsigned long long)x.sleeps_in_window,
            x.served_second, x.served_first, x.accepted_after, x.served_last, answered_all,
            CONNS, x.refused, cpu_all, (long long)(took / 1000));

    cr_assert_null(x.client_error, "client: %s", x.client_error);
    cr_assert_eq(x.bad_line, 0, "a green check failed at line %d", x.bad_line);
    /* Some were served, not all: the limit was reached. */
    cr_assert(x.served_first > 10 && x.served_first < CONNS, "%d served first", x.served_first);
    /* Refused at once, with the code that says why. */
    cr_assert_eq(x.first_refusal_rc, STVM_EMFILE, "%s", stvm_err_name(x.first_refusal_rc));
    cr_assert_lt(x.first_refusal_us, 50000, "the first refusal took %lld us",
                 (long long)x.first_refusal_us);
    /* Paced, asleep: about 10 refusals a second (one per 100 ms accept), a sliver of CPU. */
    cr_assert_leq(x.refused_in_window, 20, "%d refusals in a second", x.refused_in_window);
    cr_assert_lt(x.cpu_ms_in_window, 100.0, "%.1f ms of CPU in a second", x.cpu_ms_in_window);
    cr_assert_geq(x.sleeps_in_window, 5, "%llu OS sleeps", (unsigned long long)x.sleeps_in_window);
    /* What it has is served. */
    cr_assert_eq(x.served_second, x.served_first, "%d of %d second lines echoed",
                 x.served_second, x.served_first);
    /* Descriptors freed by the VM's own closes let it take the rest, each answered. */
    cr_assert_eq(x.accepted_after, CONNS - x.served_first, "%d accepted after",
                 x.accepted_after);
    cr_assert_eq(answered_all, CONNS, "%d of %d answered", answered_all, CONNS);
    vm_done(x.vm);
}
