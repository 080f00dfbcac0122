/* The HTTP harness: a real nginx (Debian's package) run as a child on a free loopback
 * port from a configuration in a scratch folder, ready once its port accepts a
 * connection. No HTTP client here (the tests use curl). Every exit path stops it:
 * started servers are in a registry (the harness's only mutable file-scope state); the
 * first start installs an atexit handler and async-signal-safe handlers for SIGINT,
 * SIGTERM, SIGHUP and SIGPIPE (unless ignored) that stop them (SIGTERM to the group,
 * SIGKILL after a bounded wait), remove their folders and re-raise the signal under its
 * previous action. PR_SET_PDEATHSIG(SIGTERM), tied to the calling thread, ends nginx
 * when the program that started it is killed outright (the folder stays). Start and
 * stop from one thread. */
#ifndef STVM_HARNESS_NGINX_H
#define STVM_HARNESS_NGINX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define NGINX_PACKAGE "nginx"         /* Debian's, providing /usr/sbin/nginx */
#define NGINX_PATH_STATIC "/static"   /* the static file: 200, Content-Length, keep-alive */
#define NGINX_PATH_CLOSE "/close"     /* the same file, then Connection: close */
#define NGINX_PATH_404 "/404"         /* 404 with nginx's own page */
#define NGINX_PATH_CHUNKED "/chunked" /* 200, chunked (SSI), 5 chunks: "[", the static
                                         file, "|", the file, "]\n" */
#define NGINX_DEFAULT_STATIC_SIZE 300
#define NGINX_MAX_SERVERS 8           /* running at once in one process */
#define NGINX_PATH_SIZE 512

typedef struct nginx_options {
    const char *binary;    /* NULL (default): nginx in PATH, then /usr/sbin/nginx */
    size_t static_size;    /* bytes of the static file (default 300) */
    bool master_process;   /* false (default): one process serves, as the measured setup's
                              one worker does; true: master + worker */
    bool ipv6;             /* also listen on [::1] when it is available (default true) */
    int start_timeout_ms;  /* until the port accepts, all attempts (default 5000) */
    int stop_timeout_ms;   /* the wait after each stop signal (default 2000) */
    int cpu;               /* nginx on this CPU only; -1 (default): every CPU, not the
                              caller's pin */
} nginx_options;

void nginx_options_init(nginx_options *o);

typedef struct nginx_server {
    pid_t pid;             /* nginx (the master with master_process); 0 when stopped */
    int port;              /* on 127.0.0.1 (and [::1] when ipv6) */
    bool ipv6, master_process;
    size_t static_size;    /* body of NGINX_PATH_STATIC and NGINX_PATH_CLOSE */
    size_t chunked_size;   /* decoded body of NGINX_PATH_CHUNKED: 2 * static_size + 4 */
    int stop_timeout_ms;
    int stopped_by;        /* the signal that ended it in nginx_stop (SIGQUIT: graceful) */
    char binary[NGINX_PATH_SIZE];
    char dir[NGINX_PATH_SIZE];  /* the scratch folder: nginx.conf, html/, logs, temp paths */
    char error[4096];      /* why start or stop failed; the end of nginx's logs included */
} nginx_server;

/* Make the scratch folder (mkdtemp under $TMPDIR or /tmp), write nginx.conf and the
 * files, start nginx on a free loopback port and wait until that port accepts a
 * connection (another port when nginx says this one is taken). 0, or -1 with s->error
 * (naming the package when nginx is missing) and nothing left behind. o may be NULL. */
int nginx_start(nginx_server *s, const nginx_options *o);

/* SIGQUIT (graceful), SIGTERM, SIGKILL, each after stop_timeout_ms; reap it, remove the
 * folder and the registry entry. 0, or -1 with s->error. A stopped server: nothing. */
int nginx_stop(nginx_server *s);

/* "http://127.0.0.1:PORT" + path into buf (size >= 64 + strlen(path)). */
void nginx_url(const nginx_server *s, const char *path, char *buf, size_t size);

/* Byte i of the static file (a pattern from the folder's name, so a check can tell our
 * nginx from another server on the port). */
char nginx_static_byte(const nginx_server *s, size_t i);

#endif
