/*
 * stvm-bench: a real nginx (Debian's package) for the HTTP experiments, started by the
 * tool itself as the current user from a configuration generated in a scratch folder,
 * and stopped on every exit path. Not a server of ours: nginx_get is a small blocking
 * client for checking that nginx answers, not a load generator (wrk.h is the baseline).
 *
 * Every exit path: a started server is entered in a registry (the only mutable
 * file-scope state of bench/), and the first start installs an atexit handler and
 * handlers for SIGINT, SIGTERM, SIGHUP and SIGPIPE (each unless it is ignored, e.g.
 * SIGHUP under nohup). They stop every server this process started (SIGTERM to its process group,
 * SIGKILL after a bounded wait, waitpid), remove its scratch folder, and, for a signal,
 * restore the previous action and raise the signal again. nginx also gets
 * PR_SET_PDEATHSIG(SIGTERM), so a bench killed outright (SIGKILL, a crash) leaves no
 * nginx running; only its scratch folder stays behind then. The death signal is tied to
 * the thread that called nginx_start: call it from a thread that outlives the server.
 * Start and stop servers from one thread.
 */
#ifndef STVM_BENCH_NGINX_H
#define STVM_BENCH_NGINX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The Debian package that provides /usr/sbin/nginx. */
#define NGINX_PACKAGE "nginx"

/* What the generated configuration serves (HTTP/1.1, keep-alive unless said). */
#define NGINX_PATH_STATIC "/static"   /* the static file: 200, Content-Length */
#define NGINX_PATH_CLOSE "/close"     /* the same file, then Connection: close */
#define NGINX_PATH_404 "/404"         /* 404 with nginx's own page (Content-Length) */
#define NGINX_PATH_CHUNKED "/chunked" /* 200, Transfer-Encoding: chunked (SSI), 5 chunks:
                                         "[", the static file, "|", the file, "]\n" */

#define NGINX_DEFAULT_STATIC_SIZE 300
#define NGINX_MAX_SERVERS 8  /* running at once in one process */
#define NGINX_PATH_SIZE 512

typedef struct nginx_options {
    const char *binary;    /* NULL (default): nginx in PATH, then /usr/sbin/nginx */
    size_t static_size;    /* bytes of the static file (default 300) */
    /* false (default): `master_process off`, one nginx process accepts and serves, as
     * the one worker of the measured setup does, and it is the pid we started, so the
     * death signal and a SIGKILL reach everything. true: a master and one worker
     * (nginx's production shape); stops then signal the process group. */
    bool master_process;
    bool ipv6;             /* also listen on [::1] when it is available (default true) */
    int start_timeout_ms;  /* starting until it answers, all attempts (default 5000) */
    int stop_timeout_ms;   /* the wait after each stop signal (default 2000) */
    int cpu;               /* run nginx on this CPU only; -1 (default): on every CPU,
                              whatever CPU the caller is pinned to */
} nginx_options;

void nginx_options_init(nginx_options *o);

/* A running nginx. Fill it with nginx_start; read it; end it with nginx_stop. */
typedef struct nginx_server {
    pid_t pid;               /* nginx (the master with master_process); 0 when stopped */
    int port;                /* on 127.0.0.1 (and [::1] when ipv6) */
    bool ipv6;               /* also listening on [::1]:port */
    bool master_process;
    size_t static_size;      /* body of NGINX_PATH_STATIC and NGINX_PATH_CLOSE */
    size_t chunked_size;     /* decoded body of NGINX_PATH_CHUNKED: 2 * static_size + 4 */
    int stop_timeout_ms;
    int stopped_by;          /* the signal that ended it in nginx_stop (SIGQUIT if graceful) */
    char binary[NGINX_PATH_SIZE];
    char dir[NGINX_PATH_SIZE];  /* the scratch folder: nginx.conf, html/, logs, temp paths */
    char error[4096];        /* why nginx_start or nginx_stop failed; nginx's logs included */
} nginx_server;

/* Make a scratch folder (mkdtemp under $TMPDIR or /tmp), write nginx.conf and the files,
 * start nginx on a free loopback port (retrying when the port is taken meanwhile) and
 * wait until it answers GET NGINX_PATH_STATIC with 200 and the right body. 0, or -1 with
 * s->error set (naming the package when nginx is missing; with nginx's error log when it
 * did not come up) and nothing left behind. o may be NULL (defaults). */
int nginx_start(nginx_server *s, const nginx_options *o);

/* SIGQUIT (graceful), then SIGTERM, then SIGKILL, each after stop_timeout_ms; reap it,
 * remove the scratch folder and the registry entry. 0, or -1 with s->error set. Stopping
 * a stopped server does nothing. */
int nginx_stop(nginx_server *s);

/* "http://127.0.0.1:PORT" + path into buf (size >= 64 + strlen(path)). */
void nginx_url(const nginx_server *s, const char *path, char *buf, size_t size);

/* Byte i of the static file's body (a pattern made from the scratch folder's name, so a
 * check can tell our nginx from another server on the port). */
char nginx_static_byte(const nginx_server *s, size_t i);

/* ---- a small blocking client, for checks ------------------------------------------ */

typedef struct nginx_response {
    int status;                /* of the last response; 0 if none was read */
    long long content_length;  /* -1 when the response had none */
    bool chunked;              /* Transfer-Encoding: chunked */
    int chunks;                /* data chunks of a chunked body */
    bool close;                /* the response said Connection: close */
    bool eof_after;            /* the server closed the connection after the last response */
    int responses;             /* complete responses read on the connection */
    size_t body_len;           /* decoded body bytes of the last response */
    char *body;                /* optional, set by the caller: the body's first body_cap */
    size_t body_cap;           /*   bytes go there */
    char head[1024];           /* the last response's status line and headers (truncated) */
    char error[256];           /* why nginx_get failed */
} nginx_response;

/* Connect to host (NULL: "127.0.0.1"; "::1" for IPv6) on s->port and GET path `requests`
 * times on that one connection, each after the previous response, all within timeout_ms.
 * 0 when every response was read whole; -1 with r->error otherwise (including a server
 * that closed before the last request). r->body and r->body_cap are kept. */
int nginx_get(const nginx_server *s, const char *host, const char *path, int requests,
              int timeout_ms, nginx_response *r);

#endif
