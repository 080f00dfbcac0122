/*
 * Serving and fetching data over loopback with green processes, using only <stvm.h>.
 *
 * A server process listens on 127.0.0.1 (a port the system picks) and starts one
 * handler per connection; each handler reads request lines through a stream ("GET n")
 * and answers n bytes of a pattern. Four client processes each connect, ask for three
 * bodies of different sizes, and check what they got. Meanwhile a ticker process at a
 * lower priority keeps counting on 1 ms delays: it runs whenever the network processes
 * wait. The program prints what happened and exits 1 if anything went wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stvm.h>

#define CLIENTS 4
#define TIMEOUT 10000   /* ms */

typedef struct world {
    stvm_socket *listener;
    int port;
    int served, fetched, failures, clients_done;
    unsigned long ticks;
    size_t bytes;
} world;

static world w;

static void fail(const char *what, int64_t err)
{
    printf("FAIL: %s: %s\n", what, stvm_err_name((int)err));
    w.failures++;
}

static uint8_t pattern(size_t i)
{
    return (uint8_t)('a' + i % 26);
}

/* One connection: answer "GET n" lines until the client closes. */
static void handler(stvm_vm *vm, void *arg)
{
    stvm_socket *c = arg;
    stvm_stream *st;
    int err = stvm_stream_open(vm, c, TIMEOUT, &st);
    if (err) {
        fail("stream_open", err);
        stvm_socket_close(vm, c);
        return;
    }
    char line[64];
    int64_t n;
    while ((n = stvm_stream_read_line(vm, st, line, sizeof line)) >= 0) {
        long want = strncmp(line, "GET ", 4) == 0 ? atol(line + 4) : -1;
        if (want < 0 || want > 1000000) {
            fail("bad request", STVM_EINVAL);
            break;
        }
        char head[32];
        int len = snprintf(head, sizeof head, "%ld\n", want);
        stvm_stream_write(vm, st, head, (size_t)len);
        for (long i = 0; i < want; i++) {
            uint8_t b = pattern((size_t)i);
            if ((err = stvm_stream_write(vm, st, &b, 1))) {
                fail("write", err);
                break;
            }
        }
        if ((err = stvm_stream_flush(vm, st)))
            fail("flush", err);
        w.served++;
    }
    if (n < 0 && n != STVM_EEOF)   /* EEOF: the client closed, the usual end */
        fail("read_line", n);
    stvm_socket_close(vm, c);   /* its stream goes with it */
}

static void server(stvm_vm *vm, void *arg)
{
    for (int i = 0; i < CLIENTS; i++) {
        stvm_socket *c;
        int err = stvm_socket_accept(vm, w.listener, TIMEOUT, &c);
        if (err) {
            fail("accept", err);
            return;
        }
        stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "handler", handler, c, NULL);
    }
}

static void client(stvm_vm *vm, void *arg)
{
    int id = (int)(intptr_t)arg;
    stvm_socket *s;
    int err = stvm_tcp_connect(vm, "localhost", w.port, TIMEOUT, &s);
    if (err) {
        fail("connect", err);
        w.clients_done++;
        return;
    }
    stvm_stream *st;
    stvm_stream_open(vm, s, TIMEOUT, &st);
    for (int round = 0; round < 3; round++) {
        long want = 1000L * (id + 1) * (round * 7 + 1);
        char req[32];
        int len = snprintf(req, sizeof req, "GET %ld\r\n", want);
        stvm_stream_write(vm, st, req, (size_t)len);
        if ((err = stvm_stream_flush(vm, st))) {
            fail("flush", err);
            break;
        }
        char head[32];
        int64_t n = stvm_stream_read_line(vm, st, head, sizeof head);
        if (n <= 0 || atol(head) != want) {
            fail("answer header", n);
            break;
        }
        size_t got = 0;
        uint8_t buf[1500];
        while (got < (size_t)want) {
            size_t ask = (size_t)want - got < sizeof buf ? (size_t)want - got : sizeof buf;
            int64_t r = stvm_stream_read(vm, st, buf, ask);
            if (r <= 0) {
                fail("read body", r);
                break;
            }
            for (int64_t i = 0; i < r; i++)
                if (buf[i] != pattern(got + (size_t)i)) {
                    fail("body content", STVM_EINVAL);
                    break;
                }
            got += (size_t)r;
        }
        w.bytes += got;
        w.fetched++;
    }
    stvm_stream_stats ss;
    stvm_stream_get_stats(st, &ss);
    printf("client %d: %llu bytes in %llu fills, %llu of them waited\n", id,
           (unsigned long long)ss.bytes_in, (unsigned long long)ss.fills,
           (unsigned long long)ss.reads_blocked);
    stvm_socket_close(vm, s);
    w.clients_done++;
}

static void ticker(stvm_vm *vm, void *arg)
{
    while (w.clients_done < CLIENTS) {
        stvm_delay_wait_ms(vm, 1);
        w.ticks++;
    }
}

int main(void)
{
    stvm_vm *vm;
    int err = stvm_vm_create(NULL, &vm);
    if (err) {
        printf("FAIL: vm_create: %s\n", stvm_strerror(err));
        return 1;
    }
    if ((err = stvm_tcp_listen(vm, "127.0.0.1", 0, 16, &w.listener))) {
        printf("FAIL: listen: %s\n", stvm_strerror(err));
        return 1;
    }
    w.port = stvm_socket_port(w.listener);
    printf("listening on 127.0.0.1:%d\n", w.port);
    stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "server", server, NULL, NULL);
    for (int i = 0; i < CLIENTS; i++)
        stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "client", client, (void *)(intptr_t)i, NULL);
    stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "ticker", ticker, NULL, NULL);
    err = stvm_run(vm);
    stvm_stats st;
    stvm_vm_get_stats(vm, &st);
    printf("served %d requests, fetched %d bodies (%zu bytes); the ticker ticked %lu times\n",
           w.served, w.fetched, w.bytes, w.ticks);
    printf("reads that waited: %llu; timed waits: %llu; timing-process passes: %llu\n",
           (unsigned long long)st.socket_reads_blocked, (unsigned long long)st.timed_waits,
           (unsigned long long)st.timing_loop_passes);
    stvm_socket_close(vm, w.listener);
    stvm_vm_free(vm);
    if (err)
        printf("FAIL: run: %s\n", stvm_strerror(err));
    bool ok = !err && !w.failures && w.served == 3 * CLIENTS && w.fetched == 3 * CLIENTS &&
              w.ticks > 0;
    printf("%s\n", ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}
