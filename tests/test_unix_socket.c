/*
 * Unix domain sockets through the public API (suite unix_socket): stvm_unix_listen,
 * stvm_unix_connect and stvm_socket_accept, then the same socket and stream calls as
 * TCP's (an echo of lines through streams, a half-close with a real C peer,
 * tests/bsd_peer.h), their addresses (paths), and the refusals: a path that exists, a
 * missing one, one nobody listens on, one too long; the library never removes a path.
 * Each test works in a directory of its own under $TMPDIR.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

#include "bsd_peer.h"

#define LONG 10000   /* ms: a timeout that must never run out */

typedef struct unix_case {
    stvm_vm *vm;
    int bad_line;
    char dir[256], path[300];
    stvm_socket *listener;
    bsd_peer peer;
    char got[4][32];
    int64_t rc[8];
    char lst_local[128], cli_peer[128], cli_local[128], srv_peer[128], srv_local[128];
    int port_rc, peer_port;
} unix_case;

static void unix_setup(unix_case *u)
{
    u->vm = vm_make(NULL);
    temp_template(u->dir, sizeof u->dir, "stvm-unix", "");
    cr_assert_not_null(mkdtemp(u->dir));
    snprintf(u->path, sizeof u->path, "%s/sock", u->dir);
}

static void unix_teardown(unix_case *u)
{
    unlink(u->path);
    cr_assert_eq(rmdir(u->dir), 0, "%s: %s", u->dir, strerror(errno));
}

/* ---- an echo of lines, and the addresses ---------------------------------------------------- */

static void echo_handler(stvm_vm *vm, void *arg)
{
    unix_case *u = arg;
    stvm_socket *c = NULL;
    GCHECK(u, stvm_socket_accept(vm, u->listener, LONG, &c) == STVM_OK);
    if (!c)
        return;
    GCHECK(u, stvm_socket_peer_address(vm, c, u->srv_peer, sizeof u->srv_peer, NULL) == STVM_OK);
    GCHECK(u, stvm_socket_local_address(vm, c, u->srv_local, sizeof u->srv_local, NULL) ==
                  STVM_OK);
    stvm_stream *st = NULL;
    GCHECK(u, stvm_stream_open(vm, c, LONG, &st) == STVM_OK);
    char line[32];
    int64_t n;
    while ((n = stvm_stream_read_line(vm, st, line, sizeof line)) >= 0) {
        GCHECK(u, stvm_stream_write(vm, st, line, (size_t)n) == STVM_OK);
        GCHECK(u, stvm_stream_write(vm, st, "!\n", 2) == STVM_OK);
        GCHECK(u, stvm_stream_flush(vm, st) == STVM_OK);
    }
    u->rc[0] = n;   /* the client shut its side */
    GCHECK(u, stvm_stream_write(vm, st, "bye\n", 4) == STVM_OK);
    GCHECK(u, stvm_socket_shutdown(vm, c, SHUT_WR) == STVM_OK);   /* flushes "bye" */
    GCHECK(u, stvm_socket_close(vm, c) == STVM_OK);
}

static void echo_client(stvm_vm *vm, void *arg)
{
    unix_case *u = arg;
    stvm_socket *s = NULL;
    GCHECK(u, stvm_unix_connect(vm, u->path, LONG, &s) == STVM_OK);
    if (!s)
        return;
    GCHECK(u, stvm_socket_peer_address(vm, s, u->cli_peer, sizeof u->cli_peer, &u->peer_port) ==
                  STVM_OK);
    GCHECK(u, stvm_socket_local_address(vm, s, u->cli_local, sizeof u->cli_local, NULL) ==
                  STVM_OK);
    u->port_rc = stvm_socket_port(s);
    stvm_stream *st = NULL;
    GCHECK(u, stvm_stream_open(vm, s, LONG, &st) == STVM_OK);
    GCHECK(u, stvm_stream_write(vm, st, "one\ntwo\n", 8) == STVM_OK);
    GCHECK(u, stvm_stream_flush(vm, st) == STVM_OK);
    for (int i = 0; i < 2; i++)
        GCHECK(u, stvm_stream_read_line(vm, st, u->got[i], sizeof u->got[i]) > 0);
    GCHECK(u, stvm_socket_shutdown(vm, s, SHUT_WR) == STVM_OK);
    GCHECK(u, stvm_stream_read_line(vm, st, u->got[2], sizeof u->got[2]) == 3);
    u->rc[1] = stvm_stream_read_line(vm, st, u->got[3], sizeof u->got[3]);
    GCHECK(u, stvm_socket_close(vm, s) == STVM_OK);
}

Test(unix_socket, unix_listen_accept_echo)
{
    static unix_case u;
    memset(&u, 0, sizeof u);
    unix_setup(&u);
    cr_assert_eq(stvm_unix_listen(u.vm, u.path, 4, &u.listener), STVM_OK);
    cr_assert_eq(stvm_socket_local_address(u.vm, u.listener, u.lst_local, sizeof u.lst_local,
                                           NULL),
                 STVM_OK);
    spawn(u.vm, 40, "handler", echo_handler, &u);
    spawn(u.vm, 40, "client", echo_client, &u);
    RUN_OK_GREEN(&u);
    cr_assert_str_eq(u.got[0], "one!");
    cr_assert_str_eq(u.got[1], "two!");
    cr_assert_eq(u.rc[0], STVM_EEOF, "%s", stvm_err_name((int)u.rc[0]));
    cr_assert_str_eq(u.got[2], "bye");
    cr_assert_eq(u.rc[1], STVM_EEOF, "%s", stvm_err_name((int)u.rc[1]));
    cr_assert_str_eq(u.lst_local, u.path);
    cr_assert_str_eq(u.cli_peer, u.path);
    cr_assert_eq(u.peer_port, 0);
    cr_assert_str_eq(u.cli_local, "", "the client's end has no path");
    cr_assert_str_eq(u.srv_peer, "", "nor does the accepted end's peer");
    cr_assert_str_eq(u.srv_local, u.path);
    cr_assert_eq(u.port_rc, 0);
    cr_assert_eq(stvm_socket_close(u.vm, u.listener), STVM_OK);
    struct stat st;
    cr_assert_eq(stat(u.path, &st), 0, "closing the listener leaves its path");
    cr_assert(S_ISSOCK(st.st_mode));
    SCENARIO_DONE(&u);
    unix_teardown(&u);
}

/* ---- a C peer's half-close ------------------------------------------------------------------ */

static void half_server(stvm_vm *vm, void *arg)
{
    unix_case *u = arg;
    stvm_socket *c = NULL;
    GCHECK(u, stvm_socket_accept(vm, u->listener, LONG, &c) == STVM_OK);
    if (!c)
        return;
    u->rc[0] = stvm_socket_recv(vm, c, u->got[0], sizeof u->got[0] - 1, LONG);
    u->rc[1] = stvm_socket_recv(vm, c, u->got[1], sizeof u->got[1], LONG);
    u->rc[2] = stvm_socket_send(vm, c, "answered\n", 9, LONG);
    GCHECK(u, stvm_socket_close(vm, c) == STVM_OK);
}

Test(unix_socket, send_after_peer_shutdown_write_is_delivered)
{
    static unix_case u;
    memset(&u, 0, sizeof u);
    unix_setup(&u);
    cr_assert_eq(stvm_unix_listen(u.vm, u.path, 4, &u.listener), STVM_OK);
    u.peer.path = u.path;
    u.peer.send = "asked\n";
    bsd_peer_start(&u.peer);
    spawn(u.vm, 40, "server", half_server, &u);
    run_ok(u.vm);
    bsd_peer_join(&u.peer);
    cr_assert_eq(u.peer.err, 0, "the peer's %s failed: %s", u.peer.failed, strerror(u.peer.err));
    cr_assert_eq(u.rc[0], 6);
    cr_assert_str_eq(u.got[0], "asked\n");
    cr_assert_eq(u.rc[1], STVM_EEOF, "%s", stvm_err_name((int)u.rc[1]));
    cr_assert_eq(u.rc[2], 9, "%s", stvm_err_name((int)u.rc[2]));
    cr_assert_str_eq(u.peer.got, "answered\n");
    cr_assert_eq(stvm_socket_close(u.vm, u.listener), STVM_OK);
    SCENARIO_DONE(&u);
    unix_teardown(&u);
}

/* ---- refusals -------------------------------------------------------------------------------- */

Test(unix_socket, listen_on_a_path_that_exists_answers_eaddrinuse_and_removes_nothing)
{
    static unix_case u;
    memset(&u, 0, sizeof u);
    unix_setup(&u);
    FILE *f = fopen(u.path, "w");
    cr_assert_not_null(f);
    fputs("not a socket", f);
    fclose(f);
    stvm_socket *s = NULL;
    stvm_stats before = stats_of(u.vm);
    cr_assert_eq(stvm_unix_listen(u.vm, u.path, 4, &s), STVM_EADDRINUSE);
    cr_assert_null(s);
    stvm_stats after = stats_of(u.vm);
    cr_assert_eq(after.objects_allocated, before.objects_allocated, "nothing allocated stays");
    struct stat st;
    cr_assert_eq(stat(u.path, &st), 0);
    cr_assert(S_ISREG(st.st_mode), "the file is still there");
    cr_assert_eq(unlink(u.path), 0);
    /* A listener's own path stays after it closes: the next listen finds it there. */
    cr_assert_eq(stvm_unix_listen(u.vm, u.path, 4, &s), STVM_OK);
    cr_assert_eq(stvm_socket_close(u.vm, s), STVM_OK);
    cr_assert_eq(stvm_unix_listen(u.vm, u.path, 4, &s), STVM_EADDRINUSE);
    cr_assert_eq(unlink(u.path), 0, "the usual unlink before listening");
    cr_assert_eq(stvm_unix_listen(u.vm, u.path, 4, &s), STVM_OK);
    cr_assert_eq(stvm_socket_close(u.vm, s), STVM_OK);
    vm_done(u.vm);
    unix_teardown(&u);
}

Test(unix_socket, a_path_too_long_for_sun_path_is_einval)
{
    stvm_vm *vm = vm_make(NULL);
    char path[120];
    memset(path, 'a', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    stvm_socket *s = NULL;
    path[108] = '\0';   /* 108 bytes: with its NUL one more than sun_path holds */
    cr_assert_eq(stvm_unix_listen(vm, path, 4, &s), STVM_EINVAL);
    cr_assert_eq(stvm_unix_listen(vm, "", 4, &s), STVM_EINVAL);
    cr_assert_eq(stvm_unix_listen(vm, NULL, 4, &s), STVM_EINVAL);
    cr_assert_eq(stvm_unix_listen(NULL, "/tmp/x", 4, &s), STVM_EINVAL);
    cr_assert_eq(stvm_unix_listen(vm, "/tmp/x", 0, &s), STVM_EINVAL);
    cr_assert_eq(stvm_unix_listen(vm, "/tmp/x", 4, NULL), STVM_EINVAL);
    cr_assert_null(s);
    vm_done(vm);
}

/* ESYS is every other failure of the system, with errno its code when the call returns. */
Test(unix_socket, esys_leaves_the_systems_errno)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_socket *s = NULL;
    errno = 0;
    cr_assert_eq(stvm_unix_listen(vm, "/etc/passwd/x", 4, &s), STVM_ESYS);
    cr_assert_eq(errno, ENOTDIR, "errno %d (%s)", errno, strerror(errno));
    errno = 0;
    cr_assert_eq(stvm_unix_listen(vm, "/nonexistent-stvm-dir/x", 4, &s), STVM_ENOENT);
    vm_done(vm);
}

typedef struct connects {
    stvm_vm *vm;
    int bad_line;
    const char *missing, *stale, *too_long;
    int rc[4];
} connects;

static void connect_refusals(stvm_vm *vm, void *arg)
{
    connects *c = arg;
    stvm_socket *s = NULL;
    c->rc[0] = stvm_unix_connect(vm, c->missing, LONG, &s);
    c->rc[1] = stvm_unix_connect(vm, c->stale, LONG, &s);
    c->rc[2] = stvm_unix_connect(vm, c->too_long, LONG, &s);
    c->rc[3] = stvm_unix_connect(vm, c->stale, -2, &s);
    GCHECK(c, s == NULL);
}

Test(unix_socket, connect_to_a_missing_path_is_enoent_and_to_one_nobody_listens_on_econnrefused)
{
    static unix_case u;
    memset(&u, 0, sizeof u);
    unix_setup(&u);
    stvm_socket *l;
    cr_assert_eq(stvm_unix_listen(u.vm, u.path, 4, &l), STVM_OK);
    cr_assert_eq(stvm_socket_close(u.vm, l), STVM_OK);   /* its path stays: stale */
    char missing[320], too_long[120];
    snprintf(missing, sizeof missing, "%s/none", u.dir);
    memset(too_long, 'b', sizeof too_long - 1);
    too_long[0] = '/';
    too_long[sizeof too_long - 1] = '\0';
    connects c = {.vm = u.vm, .missing = missing, .stale = u.path, .too_long = too_long};
    stvm_stats before = stats_of(u.vm);
    spawn(u.vm, 40, "connector", connect_refusals, &c);
    RUN_OK_GREEN(&c);
    cr_assert_eq(c.rc[0], STVM_ENOENT, "%s", stvm_err_name(c.rc[0]));
    cr_assert_eq(c.rc[1], STVM_ECONNREFUSED, "%s", stvm_err_name(c.rc[1]));
    cr_assert_eq(c.rc[2], STVM_EINVAL, "%s", stvm_err_name(c.rc[2]));
    cr_assert_eq(c.rc[3], STVM_EINVAL, "%s", stvm_err_name(c.rc[3]));
    stvm_stats after = stats_of(u.vm);
    cr_assert_eq(after.objects_allocated, before.objects_allocated + 1,
                 "refused at once: only the connector's own process stays counted");
    cr_assert_eq(stvm_unix_connect(u.vm, u.path, LONG, &l), STVM_ENOTPROC);
    vm_done(u.vm);
    unix_teardown(&u);
}
