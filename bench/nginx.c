/*
 * stvm-bench: starting, checking and stopping a real nginx (see nginx.h). The registry
 * of running servers is the only mutable file-scope state; what the signal and atexit
 * handlers do with it is async-signal-safe (kill, waitpid, nanosleep, openat, getdents64,
 * unlinkat).
 */
#include "nginx.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

#define DEBIAN_NGINX "/usr/sbin/nginx"
#define PORT_ATTEMPTS 8

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- the registry and the exit paths ---------------------------------------------- */

enum { SLOT_FREE, SLOT_CLAIMED, SLOT_LIVE };

/* One started server. A slot is claimed atomically, filled, then made LIVE; the handlers
 * touch LIVE slots of their own process only (a forked child inherits a copy of its
 * parent's slots and must leave the parent's servers alone). pid changes only while the
 * caught signals are blocked. */
typedef struct reg_entry {
    _Atomic int state;
    pid_t owner;            /* the process that started it */
    volatile pid_t pid;     /* nginx, also its process group; 0 while none runs */
    int stop_timeout_ms;
    char dir[NGINX_PATH_SIZE];
} reg_entry;

/* SIGPIPE too: `stvm-bench ... | head` ends the tool with it. */
#define NCAUGHT 4
static const int caught[NCAUGHT] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

static struct {
    _Atomic int installed;                /* handlers and atexit set up (kept across fork) */
    struct sigaction old[NCAUGHT];        /* the actions they replaced */
    reg_entry slot[NGINX_MAX_SERVERS];
} registry;

static void block_caught(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (int k = 0; k < NCAUGHT; k++)
        sigaddset(&set, caught[k]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

static void restore_mask(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

/* Wait up to ms for the child pid to end. True once it is reaped (or is no child of ours
 * any more); *status is set when it was reaped here. */
static bool reap_within(pid_t pid, int ms, int *status)
{
    int64_t end = now_ms() + ms;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (status)
                *status = st;
            return true;
        }
        if (r < 0 && errno != EINTR)
            return true;
        if (now_ms() >= end)
            return false;
        nap_ms(5);
    }
}

static bool is_dot(const char *n) { return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])); }

/* Remove name (a file, or a folder at most `depth` levels deep) below dirfd. Small stack
 * buffers: it may run in a signal handler on a green process's stack. */
static void remove_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT || depth <= 0)
        return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    for (int pass = 0; pass < 2; pass++) {
        char buf[512] __attribute__((aligned(8)));
        ssize_t n;
        while ((n = getdents64(fd, buf, sizeof buf)) > 0)
            for (ssize_t off = 0; off < n;) {
                struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
                off += d->d_reclen;
                if (!is_dot(d->d_name))
                    remove_at(fd, d->d_name, depth - 1);
            }
        if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY)
            break;
        lseek(fd, 0, SEEK_SET);
    }
    close(fd);
}

static void remove_tree(const char *path) { remove_at(AT_FDCWD, path, 3); }

/* Stop every server this process started: SIGTERM to the group, SIGKILL after the wait. */
static void stop_registered(void)
{
    pid_t me = getpid();
    for (int i = 0; i < NGINX_MAX_SERVERS; i++) {
        reg_entry *e = &registry.slot[i];
        if (atomic_load(&e->state) != SLOT_LIVE || e->owner != me)
            continue;
        pid_t pid = e->pid;
        if (pid > 0) {
            kill(-pid, SIGTERM);
            if (!reap_within(pid, e->stop_timeout_ms, NULL)) {
                kill(-pid, SIGKILL);
                reap_within(pid, 2000, NULL);
            }
            kill(-pid, SIGKILL); /* workers of a master that did not end them */
            e->pid = 0;
        }
        remove_tree(e->dir);
        atomic_store(&e->state, SLOT_FREE);
    }
}

static void stop_at_exit(void) { stop_registered(); }

static void stop_on_signal(int sig)
{
    int saved = errno;
    stop_registered();
    /* The signal stays blocked until this handler returns; then the previous action
     * (by default: the end of the process) takes it. */
    for (int k = 0; k < NCAUGHT; k++)
        if (caught[k] == sig)
            sigaction(sig, &registry.old[k], NULL);
    raise(sig);
    errno = saved;
}

static void install_exit_paths(void)
{
    if (atomic_exchange(&registry.installed, 1))
        return;
    atexit(stop_at_exit);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = stop_on_signal;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < NCAUGHT; k++)
        sigaddset(&sa.sa_mask, caught[k]);
    for (int k = 0; k < NCAUGHT; k++) {
        sigaction(caught[k], NULL, &registry.old[k]);
        if (registry.old[k].sa_handler != SIG_IGN) /* e.g. SIGHUP under nohup */
            sigaction(caught[k], &sa, NULL);
    }
}

static reg_entry *claim_slot(void)
{
    for (int i = 0; i < NGINX_MAX_SERVERS; i++) {
        int want = SLOT_FREE;
        if (atomic_compare_exchange_strong(&registry.slot[i].state, &want, SLOT_CLAIMED))
            return &registry.slot[i];
    }
    return NULL;
}

static reg_entry *find_slot(const char *dir)
{
    pid_t me = getpid();
    for (int i = 0; i < NGINX_MAX_SERVERS; i++) {
        reg_entry *e = &registry.slot[i];
        if (atomic_load(&e->state) == SLOT_LIVE && e->owner == me && !strcmp(e->dir, dir))
            return e;
    }
    return NULL;
}

/* ---- the scratch folder and the configuration ------------------------------------- */

void nginx_options_init(nginx_options *o)
{
    memset(o, 0, sizeof *o);
    o->static_size = NGINX_DEFAULT_STATIC_SIZE;
    o->ipv6 = true;
    o->start_timeout_ms = 5000;
    o->stop_timeout_ms = 2000;
    o->cpu = -1;
}

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static bool find_nginx(nginx_server *s, const char *given)
{
    if (given) {
        snprintf(s->binary, sizeof s->binary, "%s", given);
        return executable(s->binary);
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && (size_t)snprintf(s->binary, sizeof s->binary, "%.*s/nginx", (int)n,
                                      path) < sizeof s->binary && executable(s->binary))
            return true;
        path += n + (path[n] == ':');
    }
    snprintf(s->binary, sizeof s->binary, "%s", DEBIAN_NGINX);
    return executable(s->binary);
}

/* Characters nginx's configuration would read as something else inside quotes. */
static bool config_safe(const char *p)
{
    for (; *p; p++)
        if (*p == '"' || *p == '\\' || *p == '$' || (unsigned char)*p < 0x20)
            return false;
    return true;
}

static const char *pattern_of(const char *dir, size_t *len)
{
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    *len = strlen(base) + 1; /* the name and a newline */
    return base;
}

char nginx_static_byte(const nginx_server *s, size_t i)
{
    size_t len;
    const char *p = pattern_of(s->dir, &len);
    i %= len;
    return i + 1 == len ? '\n' : p[i];
}

static int write_file(nginx_server *s, const char *name, const char *text, size_t static_n)
{
    char path[NGINX_PATH_SIZE + 32];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(s->error, sizeof s->error, "nginx: cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    if (text)
        fputs(text, f);
    for (size_t i = 0; i < static_n; i++)
        putc(nginx_static_byte(s, i), f);
    if (fclose(f) != 0) {
        snprintf(s->error, sizeof s->error, "nginx: cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int write_config(nginx_server *s)
{
    char path[NGINX_PATH_SIZE + 32];
    snprintf(path, sizeof path, "%s/nginx.conf", s->dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(s->error, sizeof s->error, "nginx: cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    const char *d = s->dir;
    fprintf(f, "# Generated by stvm-bench (bench/nginx.c); removed when this nginx stops.\n");
    if (geteuid() == 0) {
        /* As root nginx would hand its worker to nobody, who cannot read this folder. */
        struct passwd *pw = getpwuid(0);
        struct group *gr = getgrgid(getegid());
        fprintf(f, "user %s %s;\n", pw ? pw->pw_name : "root", gr ? gr->gr_name : "root");
    }
    fprintf(f,
            "daemon off;\nmaster_process %s;\nworker_processes 1;\n"
            "pid \"%s/nginx.pid\";\nerror_log \"%s/error.log\" notice;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            "    access_log off;\n"
            "    types { text/html html; text/plain txt; }\n"
            "    default_type text/plain;\n"
            "    sendfile on;            # as Debian's /etc/nginx/nginx.conf\n"
            "    tcp_nopush on;\n"
            "    keepalive_requests 1000000;\n"
            "    keepalive_timeout 75s;\n",
            s->master_process ? "on" : "off", d, d);
    static const char *const temps[] = {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"};
    for (size_t i = 0; i < sizeof temps / sizeof *temps; i++)
        fprintf(f, "    %s_temp_path \"%s/%s_temp\";\n", temps[i], d, temps[i]);
    fprintf(f, "    server {\n        listen 127.0.0.1:%d;\n", s->port);
    if (s->ipv6)
        fprintf(f, "        listen [::1]:%d;\n", s->port);
    fprintf(f,
            "        root \"%s/html\";\n"
            "        location = " NGINX_PATH_STATIC " { alias \"%s/html/static.txt\"; }\n"
            "        location = " NGINX_PATH_CLOSE " { alias \"%s/html/static.txt\"; "
            "keepalive_timeout 0; }\n"
            "        location = " NGINX_PATH_404 " { return 404; }\n"
            "        location = " NGINX_PATH_CHUNKED " { alias \"%s/html/chunked.html\"; "
            "default_type text/html; ssi on; }\n"
            "        location / { return 404; }\n"
            "    }\n}\n",
            d, d, d, d);
    if (fclose(f) != 0) {
        snprintf(s->error, sizeof s->error, "nginx: cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int make_scratch(nginx_server *s)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if ((size_t)snprintf(s->dir, sizeof s->dir, "%s/stvm-nginx-XXXXXX", tmp) >=
            sizeof s->dir - 64 || tmp[0] != '/' || !config_safe(tmp)) {
        snprintf(s->error, sizeof s->error,
                 "nginx: TMPDIR (%s) must be an absolute path of at most %d characters "
                 "without '\"', '\\', '$' or control characters",
                 tmp, NGINX_PATH_SIZE - 96);
        s->dir[0] = 0;
        return -1;
    }
    if (!mkdtemp(s->dir)) {
        snprintf(s->error, sizeof s->error, "nginx: mkdtemp %s: %s", s->dir, strerror(errno));
        s->dir[0] = 0;
        return -1;
    }
    char html[NGINX_PATH_SIZE + 8];
    snprintf(html, sizeof html, "%s/html", s->dir);
    if (mkdir(html, 0700) != 0) {
        snprintf(s->error, sizeof s->error, "nginx: mkdir %s: %s", html, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- starting ---------------------------------------------------------------------- */

/* A port free on 127.0.0.1 (and on [::1] when *ipv6; cleared if [::1] is unavailable). */
static int free_port(bool *ipv6)
{
    for (int attempt = 0; attempt < 32; attempt++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a4;
        int port = -1;
        if (bind(fd, (struct sockaddr *)&a4, sizeof a4) == 0 &&
            getsockname(fd, (struct sockaddr *)&a4, &len) == 0)
            port = ntohs(a4.sin_port);
        close(fd);
        if (port < 0 || !*ipv6)
            return port;
        fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            *ipv6 = false;
            return port;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
                                  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        int rc = bind(fd, (struct sockaddr *)&a6, sizeof a6), err = errno;
        close(fd);
        if (rc == 0)
            return port;
        if (err != EADDRINUSE) {
            *ipv6 = false;
            return port;
        }
    }
    return -1;
}

/* Append the last `max` bytes of DIR/name to s->error. */
static void append_log(nginx_server *s, const char *name, size_t max)
{
    char path[NGINX_PATH_SIZE + 32], buf[1600];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (max > sizeof buf - 1)
        max = sizeof buf - 1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (size > (long)max)
        fseek(f, size - (long)max, SEEK_SET);
    else
        rewind(f);
    size_t n = fread(buf, 1, max, f);
    fclose(f);
    buf[n] = 0;
    if (n == 0)
        return;
    size_t used = strlen(s->error);
    snprintf(s->error + used, sizeof s->error - used, "\n--- %s%s:\n%s", size > (long)max ?
             "the end of " : "", name, buf);
}

static bool log_says(const nginx_server *s, const char *name, const char *what)
{
    char path[NGINX_PATH_SIZE + 32], line[1024];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    FILE *f = fopen(path, "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, what) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* In the child: nginx's CPUs, not the ones the benchmark pinned itself to. Failing is
 * harmless (nginx then runs where the caller does). */
static void set_cpus(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    long n = sysconf(_SC_NPROCESSORS_CONF);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++)
        if (cpu < 0 || c == cpu)
            CPU_SET((int)c, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* fork and exec nginx in its own process group, logs in the scratch folder. */
/* In the child: the signals the tool catches, and SIGQUIT, back to their defaults and
 * none blocked, so that stopping nginx works as nginx expects. */
static void default_signals(void)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int k = 0; k < NCAUGHT; k++)
        sigaction(caught[k], &dfl, NULL);
    sigaction(SIGQUIT, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

static int spawn(nginx_server *s, reg_entry *e, int cpu)
{
    char prefix[NGINX_PATH_SIZE + 2], conf[NGINX_PATH_SIZE + 16], errlog[NGINX_PATH_SIZE + 16],
        out[NGINX_PATH_SIZE + 16];
    snprintf(prefix, sizeof prefix, "%s/", s->dir);
    snprintf(conf, sizeof conf, "%s/nginx.conf", s->dir);
    snprintf(errlog, sizeof errlog, "%s/error.log", s->dir);
    snprintf(out, sizeof out, "%s/nginx.out", s->dir);
    unlink(errlog);
    char *argv[] = {s->binary, "-p", prefix, "-c", conf, "-e", errlog, NULL};
    int outfd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (outfd < 0) {
        snprintf(s->error, sizeof s->error, "nginx: cannot open %s: %s", out, strerror(errno));
        return -1;
    }
    sigset_t old;
    block_caught(&old);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        set_cpus(cpu);
        default_signals();
        bench_child_exec(parent, outfd, argv);
    }
    int err = errno;
    if (pid > 0) {
        setpgid(pid, pid);
        e->pid = s->pid = pid;
    }
    restore_mask(&old);
    close(outfd);
    if (pid < 0) {
        snprintf(s->error, sizeof s->error, "nginx: fork: %s", strerror(err));
        return -1;
    }
    return 0;
}

static void forget_pid(nginx_server *s, reg_entry *e)
{
    sigset_t old;
    block_caught(&old);
    e->pid = s->pid = 0;
    restore_mask(&old);
}

/* Wait until nginx answers GET /static with 200 and our body. 0 ready; 1 it ended
 * because the port was taken meanwhile; -1 failed (s->error set). */
static int wait_ready(nginx_server *s, reg_entry *e, int64_t deadline)
{
    char body[4096];
    size_t check = s->static_size < sizeof body ? s->static_size : sizeof body;
    for (;;) {
        int st;
        if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
            forget_pid(s, e);
            if (log_says(s, "error.log", "Address already in use"))
                return 1;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !log_says(s, "error.log", "["))
                snprintf(s->error, sizeof s->error, "nginx: cannot run %s", s->binary);
            else
                snprintf(s->error, sizeof s->error, "nginx ended at start-up (%s %d)",
                         WIFEXITED(st) ? "exit status" : "signal",
                         WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            return -1;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            snprintf(s->error, sizeof s->error,
                     "nginx did not answer GET " NGINX_PATH_STATIC " on port %d with 200 "
                     "and the static file in time",
                     s->port);
            return -1;
        }
        nginx_response r;
        memset(&r, 0, sizeof r);
        r.body = body;
        r.body_cap = check;
        if (nginx_get(s, NULL, NGINX_PATH_STATIC, 1, left < 1000 ? (int)left : 1000, &r) == 0 &&
            r.status == 200 && r.body_len == s->static_size) {
            size_t i = 0;
            while (i < check && body[i] == nginx_static_byte(s, i))
                i++;
            if (i == check)
                return 0;
        }
        nap_ms(10);
    }
}

/* After a failed start: nginx (if running) and the scratch folder go, the slot is freed. */
static int undo_start(nginx_server *s, reg_entry *e)
{
    if (s->pid > 0) {
        kill(-s->pid, SIGKILL);
        reap_within(s->pid, 2000, NULL);
        forget_pid(s, e);
    }
    if (s->dir[0])
        remove_tree(s->dir);
    s->dir[0] = 0;
    atomic_store(&e->state, SLOT_FREE);
    return -1;
}

/* The binary and the slot in the registry of running servers: 0, or -1 and s->error. */
static int find_binary_and_slot(nginx_server *s, const nginx_options *o, reg_entry **e)
{
    if (!find_nginx(s, o->binary)) {
        snprintf(s->error, sizeof s->error,
                 "nginx: %s%s not found or not executable: install Debian's package "
                 "'" NGINX_PACKAGE "' (as root: sh scripts/install-deps.sh)",
                 s->binary, o->binary ? "" : " (nor nginx in PATH)");
        return -1;
    }
    if (!config_safe(s->binary)) {
        snprintf(s->error, sizeof s->error, "nginx: unusable binary path %s", s->binary);
        return -1;
    }
    *e = claim_slot();
    if (!*e) {
        snprintf(s->error, sizeof s->error, "nginx: %d servers already run in this process",
                 NGINX_MAX_SERVERS);
        return -1;
    }
    return 0;
}

/* The scratch folder, registered (so that every exit path removes it) before anything
 * is written into it, and the two files nginx serves. */
static int prepare_scratch(nginx_server *s, reg_entry *e)
{
    install_exit_paths();
    sigset_t old;
    block_caught(&old);
    int rc = make_scratch(s);
    e->owner = getpid();
    e->pid = 0;
    e->stop_timeout_ms = s->stop_timeout_ms;
    snprintf(e->dir, sizeof e->dir, "%s", s->dir);
    atomic_store(&e->state, SLOT_LIVE);
    restore_mask(&old);
    if (rc != 0 || write_file(s, "html/static.txt", NULL, s->static_size) != 0)
        return -1;
    /* Two SSI includes of the static file: nginx cannot know the length, so it answers
     * chunked, one chunk per piece: "[", the file, "|", the file, "]\n". */
    static const char chunked[] = "[<!--# include virtual=\"" NGINX_PATH_STATIC "\" -->|"
                                  "<!--# include virtual=\"" NGINX_PATH_STATIC "\" -->]\n";
    return write_file(s, "html/chunked.html", chunked, 0);
}

/* Ports are found free, then taken by nginx: another program may take one in between,
 * so a few are tried. 0, or -1 and s->error (with nginx's logs). */
static int start_on_a_port(nginx_server *s, const nginx_options *o, reg_entry *e)
{
    int64_t deadline = now_ms() + (o->start_timeout_ms > 0 ? o->start_timeout_ms : 5000);
    for (int attempt = 0;; attempt++) {
        s->ipv6 = o->ipv6;
        s->port = free_port(&s->ipv6);
        if (s->port < 0) {
            snprintf(s->error, sizeof s->error, "nginx: no free loopback port: %s",
                     strerror(errno));
            return -1;
        }
        if (write_config(s) != 0 || spawn(s, e, o->cpu) != 0)
            return -1;
        int rc = wait_ready(s, e, deadline);
        if (rc == 0)
            return 0;
        if (rc < 0 || attempt + 1 == PORT_ATTEMPTS) {
            if (rc > 0)
                snprintf(s->error, sizeof s->error, "nginx: every port tried was taken");
            size_t used = strlen(s->error);
            snprintf(s->error + used, sizeof s->error - used, " (binary %s, folder %s)",
                     s->binary, s->dir);
            append_log(s, "error.log", 1500);
            append_log(s, "nginx.out", 600);
            return -1;
        }
    }
}

int nginx_start(nginx_server *s, const nginx_options *o)
{
    nginx_options defaults;
    if (!o) {
        nginx_options_init(&defaults);
        o = &defaults;
    }
    memset(s, 0, sizeof *s);
    s->static_size = o->static_size;
    s->chunked_size = 2 * o->static_size + 4;
    s->master_process = o->master_process;
    s->stop_timeout_ms = o->stop_timeout_ms > 0 ? o->stop_timeout_ms : 2000;
    reg_entry *e;
    if (find_binary_and_slot(s, o, &e) != 0)
        return -1;
    if (prepare_scratch(s, e) != 0 || start_on_a_port(s, o, e) != 0)
        return undo_start(s, e);
    return 0;
}

/* ---- stopping ---------------------------------------------------------------------- */

int nginx_stop(nginx_server *s)
{
    reg_entry *e = s->dir[0] ? find_slot(s->dir) : NULL;
    if (!e && s->pid <= 0)
        return 0;
    int rc = 0;
    sigset_t old;
    block_caught(&old);
    if (s->pid > 0) {
        static const int sigs[] = {SIGQUIT, SIGTERM, SIGKILL};
        s->stopped_by = 0;
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs && !s->stopped_by; i++) {
            kill(sigs[i] == SIGKILL ? -s->pid : s->pid, sigs[i]);
            if (reap_within(s->pid, s->stop_timeout_ms, NULL))
                s->stopped_by = sigs[i];
        }
        if (s->master_process)
            kill(-s->pid, SIGKILL); /* a worker left by a master that was killed */
        if (!s->stopped_by) {
            snprintf(s->error, sizeof s->error, "nginx %d did not end, even after SIGKILL",
                     (int)s->pid);
            rc = -1;
        }
        s->pid = 0;
        if (e)
            e->pid = 0;
    }
    if (s->dir[0]) {
        remove_tree(s->dir);
        if (access(s->dir, F_OK) == 0 || errno != ENOENT) {
            snprintf(s->error, sizeof s->error, "nginx: could not remove %s", s->dir);
            rc = -1;
        }
    }
    if (e)
        atomic_store(&e->state, SLOT_FREE);
    restore_mask(&old);
    return rc;
}

void nginx_url(const nginx_server *s, const char *path, char *buf, size_t size)
{
    snprintf(buf, size, "http://127.0.0.1:%d%s", s->port, path);
}

/* ---- the blocking client ----------------------------------------------------------- */

/* A connection with a read buffer and one deadline for everything. */
typedef struct conn {
    int fd;
    int64_t deadline;
    nginx_response *r;
    size_t start, end;
    char buf[8192];
} conn;

static int fail(conn *c, const char *what)
{
    snprintf(c->r->error, sizeof c->r->error, "%s", what);
    return -1;
}

/* Until fd is ready for events (true) or the deadline passes (false). */
static bool wait_fd(conn *c, short events)
{
    for (;;) {
        int64_t left = c->deadline - now_ms();
        if (left <= 0)
            return false;
        struct pollfd p = {c->fd, events, 0};
        int k = poll(&p, 1, (int)left);
        if (k > 0)
            return true;
        if (k < 0 && errno != EINTR)
            return false;
    }
}

/* More bytes into the buffer: 1, 0 at end of stream, -1 on error or time-out. */
static int fill(conn *c)
{
    if (c->start == c->end)
        c->start = c->end = 0;
    if (c->end == sizeof c->buf && c->start > 0) {
        memmove(c->buf, c->buf + c->start, c->end - c->start);
        c->end -= c->start;
        c->start = 0;
    }
    if (c->end == sizeof c->buf)
        return fail(c, "a header line longer than 8 KiB");
    for (;;) {
        ssize_t n = recv(c->fd, c->buf + c->end, sizeof c->buf - c->end, 0);
        if (n > 0) {
            c->end += (size_t)n;
            return 1;
        }
        if (n == 0)
            return 0;
        if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            return fail(c, strerror(errno));
        if (errno != EINTR && !wait_fd(c, POLLIN))
            return fail(c, "timed out reading the response");
    }
}

/* One line without its CRLF into line; -1 on error or end of stream. */
static int read_line(conn *c, char *line, size_t size)
{
    for (;;) {
        char *nl = memchr(c->buf + c->start, '\n', c->end - c->start);
        if (nl) {
            size_t n = (size_t)(nl - (c->buf + c->start));
            size_t keep = n > 0 && nl[-1] == '\r' ? n - 1 : n;
            snprintf(line, size, "%.*s", (int)keep, c->buf + c->start);
            c->start += n + 1;
            return 0;
        }
        int rc = fill(c);
        if (rc <= 0)
            return rc < 0 ? -1 : fail(c, "the server closed the connection mid-response");
    }
}

/* n body bytes (or up to the end of stream when n < 0). */
static int read_body(conn *c, long long n)
{
    nginx_response *r = c->r;
    while (n != 0) {
        if (c->start == c->end) {
            int rc = fill(c);
            if (rc < 0)
                return -1;
            if (rc == 0)
                return n < 0 ? 0 : fail(c, "the server closed the connection mid-body");
        }
        size_t take = c->end - c->start;
        if (n > 0 && (unsigned long long)n < take)
            take = (size_t)n;
        if (r->body && r->body_len < r->body_cap) {
            size_t room = r->body_cap - r->body_len;
            memcpy(r->body + r->body_len, c->buf + c->start, take < room ? take : room);
        }
        r->body_len += take;
        c->start += take;
        if (n > 0)
            n -= (long long)take;
    }
    return 0;
}

static int read_chunked(conn *c)
{
    char line[256];
    for (;;) {
        if (read_line(c, line, sizeof line) != 0)
            return -1;
        char *end;
        long long size = strtoll(line, &end, 16);
        if (end == line || size < 0 || (*end && *end != ';' && *end != ' '))
            return fail(c, "a malformed chunk size");
        if (size == 0)
            break;
        if (read_body(c, size) != 0 || read_line(c, line, sizeof line) != 0)
            return -1;
        if (line[0])
            return fail(c, "a chunk not followed by CRLF");
        c->r->chunks++;
    }
    do /* trailer fields, up to the empty line */
        if (read_line(c, line, sizeof line) != 0)
            return -1;
    while (line[0]);
    return 0;
}

static int read_response(conn *c)
{
    nginx_response *r = c->r;
    char line[1024];
    r->status = 0;
    r->content_length = -1;
    r->chunked = r->close = false;
    r->chunks = 0;
    r->body_len = 0;
    r->head[0] = 0;
    if (read_line(c, line, sizeof line) != 0)
        return -1;
    int minor = 0;
    if (sscanf(line, "HTTP/1.%d %d", &minor, &r->status) != 2)
        return fail(c, "not an HTTP/1.x status line");
    r->close = minor == 0;
    size_t used = (size_t)snprintf(r->head, sizeof r->head, "%s\n", line);
    for (;;) {
        if (read_line(c, line, sizeof line) != 0)
            return -1;
        if (!line[0])
            break;
        if (used < sizeof r->head)
            used += (size_t)snprintf(r->head + used, sizeof r->head - used, "%s\n", line);
        char *v = strchr(line, ':');
        if (!v)
            continue;
        *v++ = 0;
        if (!strcasecmp(line, "Content-Length"))
            r->content_length = strtoll(v, NULL, 10);
        else if (!strcasecmp(line, "Transfer-Encoding") && strcasestr(v, "chunked"))
            r->chunked = true;
        else if (!strcasecmp(line, "Connection"))
            r->close = strcasestr(v, "close") != NULL;
    }
    if (r->chunked)
        return read_chunked(c);
    if (r->content_length >= 0)
        return read_body(c, r->content_length);
    if (r->status == 204 || r->status == 304 || r->status / 100 == 1)
        return 0;
    r->close = true;
    return read_body(c, -1);
}

static int send_all(conn *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            if (!wait_fd(c, POLLOUT))
                return fail(c, "timed out sending the request");
        } else {
            return fail(c, strerror(errno));
        }
    }
    return 0;
}

static int connect_to(conn *c, const char *host, int port)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        len = sizeof *a4;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        len = sizeof *a6;
    } else {
        return fail(c, "not a numeric address");
    }
    c->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return fail(c, strerror(errno));
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&ss, len) == 0)
        return 0;
    if (errno != EINPROGRESS)
        return fail(c, strerror(errno));
    if (!wait_fd(c, POLLOUT))
        return fail(c, "timed out connecting");
    int err = 0;
    socklen_t elen = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen);
    if (err == EINPROGRESS)
        return fail(c, "timed out connecting");
    return err ? fail(c, strerror(err)) : 0;
}

int nginx_get(const nginx_server *s, const char *host, const char *path, int requests,
              int timeout_ms, nginx_response *r)
{
    char *body = r->body;
    size_t cap = r->body_cap;
    memset(r, 0, sizeof *r);
    r->body = body;
    r->body_cap = cap;
    r->content_length = -1;
    conn *c = malloc(sizeof *c);
    if (!c) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    c->fd = -1;
    c->r = r;
    c->start = c->end = 0;
    c->deadline = now_ms() + timeout_ms;
    if (!host)
        host = "127.0.0.1";
    bool v6 = strchr(host, ':') != NULL;
    char req[1024];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s%s%s:%d\r\n\r\n", path,
                     v6 ? "[" : "", host, v6 ? "]" : "", s->port);
    int rc = n > 0 && (size_t)n < sizeof req ? connect_to(c, host, s->port)
                                             : fail(c, "path too long");
    for (int i = 0; rc == 0 && i < requests; i++) {
        if (i > 0 && r->close) {
            snprintf(r->error, sizeof r->error,
                     "the server closed the connection after %d responses", r->responses);
            rc = -1;
            break;
        }
        rc = send_all(c, req, (size_t)n);
        if (rc == 0)
            rc = read_response(c);
        if (rc == 0)
            r->responses++;
    }
    if (rc == 0 && r->close) { /* the server should now close: wait for it */
        int more;
        while ((more = fill(c)) > 0)
            c->start = c->end;
        r->eof_after = more == 0;
        r->error[0] = 0;
    }
    if (c->fd >= 0)
        close(c->fd);
    free(c);
    return rc;
}
