/* The HTTP harness: starting and stopping a real nginx (nginx.h). The registry changes only
 * while the caught signals are blocked. */
#include "nginx.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

#define PORT_ATTEMPTS 8

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the registry and the exit paths ---------------------------------------------- */

/* A forked child inherits a copy of its parent's entries: owner keeps it off them. */
typedef struct reg_entry {
    volatile sig_atomic_t live;
    pid_t owner;
    volatile pid_t pid;    /* nginx, also its process group; 0 while none runs */
    int stop_timeout_ms;
    char dir[NGINX_PATH_SIZE];
} reg_entry;

/* SIGPIPE too: `znclient ... | head` ends the program with it. */
#define NCAUGHT 4
static const int caught[NCAUGHT] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

static struct {
    bool installed;                       /* handlers and atexit set up (kept across fork) */
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

/* Remove name (a file, or a folder at most `depth` deep) below dirfd. Small buffers: it
 * may run in a signal handler on a green process's stack. */
static void remove_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT || depth <= 0)
        return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    for (int pass = 0; fd >= 0 && pass < 2; pass++, lseek(fd, 0, SEEK_SET)) {
        char buf[512] __attribute__((aligned(8)));
        ssize_t n;
        while ((n = getdents64(fd, buf, sizeof buf)) > 0)
            for (ssize_t off = 0; off < n;) {
                struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
                off += d->d_reclen;
                if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
                    remove_at(fd, d->d_name, depth - 1);
            }
        if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY)
            break;
    }
    if (fd >= 0)
        close(fd);
}

/* SIGQUIT (graceful) or SIGTERM first, then SIGKILL, to nginx's process group, each
 * followed by a bounded wait; then its folder goes and its slot is freed, the caught
 * signals blocked. Answers the signal that ended nginx, 0 if none ran or it did not end. */
static int stop_entry(reg_entry *e, bool graceful)
{
    static const int sigs[] = {SIGQUIT, SIGTERM, SIGKILL};
    sigset_t old;
    block_caught(&old);
    pid_t pid = e->pid;
    int by = 0;
    for (int i = graceful ? 0 : 1; pid > 0 && i < 3 && !by; i++)
        if (kill(-pid, sigs[i]) == 0 && harness_child_wait(pid, e->stop_timeout_ms, NULL))
            by = sigs[i];
    if (pid > 0)
        kill(-pid, SIGKILL); /* a worker left by a master that was killed */
    e->pid = 0;
    remove_at(AT_FDCWD, e->dir, 3);
    e->live = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return by;
}

/* Every server this process started (a forked child's copies are its parent's). */
static void stop_registered(void)
{
    for (int i = 0; i < NGINX_MAX_SERVERS; i++)
        if (registry.slot[i].live && registry.slot[i].owner == getpid())
            stop_entry(&registry.slot[i], false);
}

static void stop_on_signal(int sig)
{
    int saved = errno;
    stop_registered();
    /* The signal stays blocked until this returns; then the previous action takes it. */
    for (int k = 0; k < NCAUGHT; k++)
        if (caught[k] == sig)
            sigaction(sig, &registry.old[k], NULL);
    raise(sig);
    errno = saved;
}

static void install_exit_paths(void)
{
    if (registry.installed)
        return;
    registry.installed = true;
    atexit(stop_registered);
    struct sigaction sa = {.sa_handler = stop_on_signal, .sa_flags = SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < NCAUGHT; k++)
        sigaddset(&sa.sa_mask, caught[k]);
    for (int k = 0; k < NCAUGHT; k++) {
        sigaction(caught[k], NULL, &registry.old[k]);
        if (registry.old[k].sa_handler != SIG_IGN) /* e.g. SIGHUP under nohup */
            sigaction(caught[k], &sa, NULL);
    }
}

/* This process's entry for dir; with dir NULL, an entry this process does not use. */
static reg_entry *find_slot(const char *dir)
{
    for (int i = 0; i < NGINX_MAX_SERVERS; i++) {
        reg_entry *e = &registry.slot[i];
        bool ours = e->live && e->owner == getpid();
        if (dir ? ours && !strcmp(e->dir, dir) : !ours)
            return e;
    }
    return NULL;
}

/* ---- the scratch folder and the configuration ------------------------------------- */

void nginx_options_init(nginx_options *o)
{
    *o = (nginx_options){.static_size = NGINX_DEFAULT_STATIC_SIZE, .ipv6 = true,
                         .start_timeout_ms = 5000, .stop_timeout_ms = 2000, .cpu = -1};
}

/* Characters nginx's configuration would read as something else inside quotes. */
static bool config_safe(const char *p)
{
    for (; *p; p++)
        if (*p == '"' || *p == '\\' || *p == '$' || (unsigned char)*p < 0x20)
            return false;
    return true;
}

char nginx_static_byte(const nginx_server *s, size_t i)
{
    const char *base = strrchr(s->dir, '/');
    base = base ? base + 1 : s->dir;
    size_t len = strlen(base) + 1; /* the name and a newline */
    return i % len + 1 == len ? '\n' : base[i % len];
}

static FILE *open_in(nginx_server *s, const char *name, const char *mode)
{
    char path[NGINX_PATH_SIZE + 32];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    FILE *f = fopen(path, mode);
    if (!f && *mode == 'w')
        snprintf(s->error, sizeof s->error, "nginx: cannot write %s: %s", path, strerror(errno));
    return f;
}

static int close_written(nginx_server *s, FILE *f, const char *name)
{
    if (fclose(f) == 0)
        return 0;
    snprintf(s->error, sizeof s->error, "nginx: cannot write %s/%s", s->dir, name);
    return -1;
}

static int write_config(nginx_server *s)
{
    FILE *f = open_in(s, "nginx.conf", "w");
    if (!f)
        return -1;
    const char *d = s->dir;
    fprintf(f, "# Generated by the HTTP harness (experiments/znclient/harness/nginx.c); "
               "removed when this nginx stops.\n");
    if (geteuid() == 0) { /* else nginx hands its worker to nobody, who cannot read d */
        struct passwd *pw = getpwuid(0);
        struct group *gr = getgrgid(getegid());
        fprintf(f, "user %s %s;\n", pw ? pw->pw_name : "root", gr ? gr->gr_name : "root");
    }
    fprintf(f, "daemon off;\nmaster_process %s;\nworker_processes 1;\npid \"%s/nginx.pid\";\n"
            "error_log \"%s/error.log\" notice;\nevents { worker_connections 256; }\nhttp {\n"
            "    access_log off;\n    types { text/html html; text/plain txt; }\n"
            "    default_type text/plain;\n    sendfile on;            # as Debian's nginx.conf\n"
            "    tcp_nopush on;\n    keepalive_requests 1000000;\n    keepalive_timeout 75s;\n",
            s->master_process ? "on" : "off", d, d);
    static const char *const temps[] = {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"};
    for (size_t i = 0; i < sizeof temps / sizeof *temps; i++)
        fprintf(f, "    %s_temp_path \"%s/%s_temp\";\n", temps[i], d, temps[i]);
    fprintf(f, "    server {\n        listen 127.0.0.1:%d;\n", s->port);
    if (s->ipv6)
        fprintf(f, "        listen [::1]:%d;\n", s->port);
    fprintf(f, "        root \"%s/html\";\n"
            "        location = " NGINX_PATH_STATIC " { alias \"%s/html/static.txt\"; }\n"
            "        location = " NGINX_PATH_CLOSE " { alias \"%s/html/static.txt\"; "
            "keepalive_timeout 0; }\n        location = " NGINX_PATH_404 " { return 404; }\n"
            "        location = " NGINX_PATH_CHUNKED " { alias \"%s/html/chunked.html\"; "
            "default_type text/html; ssi on; }\n        location / { return 404; }\n    }\n}\n",
            d, d, d, d);
    return close_written(s, f, "nginx.conf");
}

/* The folder, registered in e (so every exit path removes it) before anything is
 * written into it, and the two files nginx serves. e is claimed first even on failure: a
 * slot a forked child inherited holds its parent's server, which the undo must not stop. */
static int prepare_scratch(nginx_server *s, reg_entry *e)
{
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    bool usable = tmp[0] == '/' && config_safe(tmp) && strlen(tmp) <= NGINX_PATH_SIZE - 96;
    snprintf(s->dir, sizeof s->dir, "%s/stvm-nginx-XXXXXX", tmp);
    sigset_t old;
    block_caught(&old);
    *e = (reg_entry){.owner = getpid(), .stop_timeout_ms = s->stop_timeout_ms};
    bool made = usable && mkdtemp(s->dir) != NULL;
    if (made) {
        snprintf(e->dir, sizeof e->dir, "%s", s->dir);
        e->live = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!usable) {
        snprintf(s->error, sizeof s->error, "nginx: TMPDIR (%s) must be an absolute path of "
                 "at most %d characters without '\"', '\\', '$' or control characters",
                 tmp, NGINX_PATH_SIZE - 96);
        return -1;
    }
    char html[NGINX_PATH_SIZE + 8];
    snprintf(html, sizeof html, "%s/html", s->dir);
    if (!made || mkdir(html, 0700) != 0) {   /* nginx_start clears s->dir on failure */
        snprintf(s->error, sizeof s->error, "nginx: cannot make %s: %s", made ? html : s->dir,
                 strerror(errno));
        return -1;
    }
    FILE *f = open_in(s, "html/static.txt", "w");
    for (size_t i = 0; f && i < s->static_size; i++)
        putc(nginx_static_byte(s, i), f);
    if (!f || close_written(s, f, "html/static.txt") != 0 ||
        !(f = open_in(s, "html/chunked.html", "w")))
        return -1;
    /* Two SSI includes: nginx cannot know the length, so it answers chunked. */
    fputs("[<!--# include virtual=\"" NGINX_PATH_STATIC "\" -->|"
          "<!--# include virtual=\"" NGINX_PATH_STATIC "\" -->]\n", f);
    return close_written(s, f, "html/chunked.html");
}

/* ---- starting ---------------------------------------------------------------------- */

/* A free port on 127.0.0.1 (whether [::1] has it too, nginx says), and whether [::1]
 * works at all. */
static int free_port(bool *ipv6)
{
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    socklen_t len = sizeof a4;
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
    *ipv6 = *ipv6 && fd >= 0 && bind(fd, (struct sockaddr *)&a6, sizeof a6) == 0;
    if (fd >= 0)
        close(fd);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a4, sizeof a4) == 0 &&
        getsockname(fd, (struct sockaddr *)&a4, &len) == 0)
        port = ntohs(a4.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Whether a TCP connection to port on 127.0.0.1 ([::1] with v6) is accepted now. */
static bool accepts(bool v6, int port)
{
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
                              .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = {0, 200000}; /* bounds connect() */
    bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0 &&
              connect(fd, v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4,
                      v6 ? sizeof a6 : sizeof a4) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* The last size - 1 bytes of DIR/name into buf (empty if unreadable). */
static void log_tail(nginx_server *s, const char *name, char *buf, size_t size)
{
    FILE *f = open_in(s, name, "r");
    size_t n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        fseek(f, end > (long)size - 1 ? end - (long)size + 1 : 0, SEEK_SET);
        n = fread(buf, 1, size - 1, f);
    }
    if (f)
        fclose(f);
    buf[n] = 0;
}

static bool port_taken(nginx_server *s)
{
    char log[4096];
    log_tail(s, "error.log", log, sizeof log);
    return strstr(log, "Address already in use") != NULL;
}

/* nginx in its own process group, on its CPUs, with default signals; pid in s and e. */
static int spawn(nginx_server *s, reg_entry *e, int cpu)
{
    char prefix[NGINX_PATH_SIZE + 2], conf[NGINX_PATH_SIZE + 16], errlog[NGINX_PATH_SIZE + 16];
    snprintf(prefix, sizeof prefix, "%s/", s->dir);
    snprintf(conf, sizeof conf, "%s/nginx.conf", s->dir);
    snprintf(errlog, sizeof errlog, "%s/error.log", s->dir);
    unlink(errlog);
    char *argv[] = {s->binary, "-p", prefix, "-c", conf, "-e", errlog, NULL};
    FILE *out = open_in(s, "nginx.out", "w");
    if (!out)
        return -1;
    sigset_t old;
    block_caught(&old);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        cpu_set_t set; /* nginx's CPUs, not the ones the benchmark pinned itself to */
        CPU_ZERO(&set);
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_CONF) && c < CPU_SETSIZE; c++)
            if (cpu < 0 || c == cpu)
                CPU_SET((int)c, &set);
        sched_setaffinity(0, sizeof set, &set);
        struct sigaction dfl = {.sa_handler = SIG_DFL}; /* stops work as nginx expects */
        for (int k = 0; k < NCAUGHT; k++)
            sigaction(caught[k], &dfl, NULL);
        sigaction(SIGQUIT, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        harness_child_exec(parent, -1, fileno(out), argv);
    }
    int err = errno;
    if (pid > 0) {
        setpgid(pid, pid);
        e->pid = s->pid = pid;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    fclose(out);
    if (pid > 0)
        return 0;
    snprintf(s->error, sizeof s->error, "nginx: fork: %s", strerror(err));
    return -1;
}

static void forget_pid(nginx_server *s, reg_entry *e)
{
    sigset_t old;
    block_caught(&old);
    e->pid = s->pid = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Until nginx's port accepts: 0 ready; 1 the port was taken; -1 failed (s->error). */
static int wait_ready(nginx_server *s, reg_entry *e, long long deadline)
{
    for (;; nanosleep(&(struct timespec){0, 10000000}, NULL)) {
        int st;
        if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
            forget_pid(s, e);
            if (port_taken(s))
                return 1;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
                snprintf(s->error, sizeof s->error, "nginx: cannot run %s", s->binary);
            else
                snprintf(s->error, sizeof s->error, "nginx ended at start-up (%s %d)",
                         WIFEXITED(st) ? "exit status" : "signal",
                         WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            return -1;
        }
        /* nginx binds every address before it serves; one it could not bind it logs at
         * once (and retries), so a port another program took is told apart here. */
        if (accepts(false, s->port) && (!s->ipv6 || accepts(true, s->port))) {
            if (!port_taken(s))
                return 0;
            kill(-s->pid, SIGKILL);
            harness_child_wait(s->pid, 2000, NULL);
            forget_pid(s, e);
            return 1;
        }
        if (now_ms() >= deadline) {
            snprintf(s->error, sizeof s->error, "nginx: port %d did not accept a connection "
                     "in time", s->port);
            return -1;
        }
    }
}

/* Ports are found free, then taken by nginx: another program may take one in between,
 * so a few are tried. 0, or -1 and s->error (with the end of nginx's logs). */
static int start_on_a_port(nginx_server *s, const nginx_options *o, reg_entry *e)
{
    long long deadline = now_ms() + (o->start_timeout_ms > 0 ? o->start_timeout_ms : 5000);
    for (int attempt = 1;; attempt++) {
        s->ipv6 = o->ipv6;
        if ((s->port = free_port(&s->ipv6)) < 0) {
            snprintf(s->error, sizeof s->error, "nginx: no free loopback port: %s",
                     strerror(errno));
            return -1;
        }
        int rc = write_config(s) == 0 && spawn(s, e, o->cpu) == 0 ? wait_ready(s, e, deadline)
                                                                 : -1;
        if (rc == 0)
            return 0;
        if (rc > 0 && attempt < PORT_ATTEMPTS)
            continue;
        if (rc > 0)
            snprintf(s->error, sizeof s->error, "nginx: every port tried was taken");
        char log[1500];
        size_t used = strlen(s->error);
        used += (size_t)snprintf(s->error + used, sizeof s->error - used,
                                 " (binary %s, folder %s)", s->binary, s->dir);
        static const char *const logs[] = {"error.log", "nginx.out"};
        for (int k = 0; k < 2 && used < sizeof s->error; k++) {
            log_tail(s, logs[k], log, k ? 600 : sizeof log);
            if (log[0])
                used += (size_t)snprintf(s->error + used, sizeof s->error - used,
                                         "\n--- the end of %s:\n%s", logs[k], log);
        }
        return -1;
    }
}

int nginx_start(nginx_server *s, const nginx_options *o)
{
    nginx_options defaults;
    nginx_options_init(&defaults);
    o = o ? o : &defaults;
    *s = (nginx_server){.static_size = o->static_size, .chunked_size = 2 * o->static_size + 4,
                        .master_process = o->master_process,
                        .stop_timeout_ms = o->stop_timeout_ms > 0 ? o->stop_timeout_ms : 2000};
    if (!harness_child_find(s->binary, sizeof s->binary, o->binary, "nginx", "/usr/sbin/nginx")) {
        snprintf(s->error, sizeof s->error, "nginx: %s%s not found or not executable: install "
                 "Debian's package '" NGINX_PACKAGE "' (as root: sh scripts/install-deps.sh)",
                 s->binary, o->binary ? "" : " (nor nginx in PATH)");
        return -1;
    }
    if (!config_safe(s->binary)) {
        snprintf(s->error, sizeof s->error, "nginx: unusable binary path %s", s->binary);
        return -1;
    }
    install_exit_paths();
    reg_entry *e = find_slot(NULL);
    if (!e) {
        snprintf(s->error, sizeof s->error, "nginx: %d servers already run in this process",
                 NGINX_MAX_SERVERS);
        return -1;
    }
    if (prepare_scratch(s, e) == 0 && start_on_a_port(s, o, e) == 0)
        return 0;
    stop_entry(e, false);   /* nginx (if running) and the folder go, the slot is freed */
    s->pid = 0;
    s->dir[0] = 0;
    return -1;
}

int nginx_stop(nginx_server *s)
{
    reg_entry *e = s->dir[0] ? find_slot(s->dir) : NULL;
    if (!e)
        return 0;
    s->stopped_by = stop_entry(e, true);
    if (s->pid > 0 && !s->stopped_by)
        snprintf(s->error, sizeof s->error, "nginx %d did not end, even after SIGKILL",
                 (int)s->pid);
    else if (access(s->dir, F_OK) == 0 || errno != ENOENT)
        snprintf(s->error, sizeof s->error, "nginx: could not remove %s", s->dir);
    else
        s->error[0] = 0;
    s->pid = 0;
    return s->error[0] ? -1 : 0;
}

void nginx_url(const nginx_server *s, const char *path, char *buf, size_t size)
{
    snprintf(buf, size, "http://127.0.0.1:%d%s", s->port, path);
}
