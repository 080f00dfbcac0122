/*
 * stvm-bench peers: the DelayBenchmark workload on stvm and on the peers people compare
 * a scheduler with (Go, libuv, Erlang: the programs of bench/peers/, built by
 * `make bench-peers` into build/peers/), each run right after stvm's on the same
 * pinned core (a child forked from the pinned thread inherits its CPU). Within a
 * repetition and an N every system runs once, one after the other, so that noise hits
 * them alike; a record per (system, N), and per stvm representation the ratio
 * stvm / peer of each repetition against the peer's in the same repetition.
 *
 * A peer is a program that takes N, the window in ms and a file of the 1000 durations
 * (written here from random.c's verified table; each peer checks the first draws and the
 * sum again) and prints one line of key=value figures (bench/peers/README.md); given
 * `pingpong H` instead, Go's and Erlang's run the semaphore ping-pong, after the delay
 * runs of each repetition and beside stvm-bench micro's handoff. A peer not built, or
 * whose runtime is not installed, is a skipped record with a note, not a failure.
 */
#include "bench.h"
#include "child.h"
#include "delay_run.h"
#include "micro.h"
#include "random.h"
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the option table fills. */
typedef struct peers_opts {
    bench_ints concurrency;
    long long repeat, window_ms, handoffs;
    unsigned reprs, peers;          /* bits, one per word */
    const char *peers_dir;          /* NULL: peers/ beside the executable */
} peers_opts;

/* stvm's representations, each at the VM's default configuration (stvm_config_init's
 * timer slack). */
#define NREPRS 4
static const char *const repr_words[NREPRS + 1] = {"ms-smallint31", "us-largeint31",
                                                   "us-smallint61", "ms-smallint61", NULL};
static const struct {
    int delay_clock, bits;
} repr_kinds[NREPRS] = {
    {STVM_DELAY_CLOCK_MS, 31}, {STVM_DELAY_CLOCK_US, 31}, {STVM_DELAY_CLOCK_US, 61},
    {STVM_DELAY_CLOCK_MS, 61}};

/* The peers: their --peer words are their records' names. */
enum { PEER_GO, PEER_LIBUV, PEER_ERLANG, NPEERS };
static const char *const peer_words[NPEERS + 1] = {"go", "libuv", "erlang", NULL};
/* The file each needs in the peers' folder. */
static const char *const peer_file[NPEERS] = {"delay-go", "delay-uv", "delay_peer.beam"};

static const bench_opt peers_opts_table[] = {
    BENCH_INTS("concurrency", "10000,100000", 1, 1000000, peers_opts, concurrency,
               "N, the concurrent delays (workers, goroutines, timers, processes)."),
    BENCH_INT("repeat", "K", "3", 1, 100, peers_opts, repeat,
              "Repetitions; the views show medians and keep every sample."),
    BENCH_INT("window-ms", "W", "1000", 1, 3600000, peers_opts, window_ms,
              "The window, and the drain after it, in ms (the same for every system)."),
    BENCH_WORDS("repr", "ms-smallint31,us-largeint31,us-smallint61", repr_words, peers_opts,
                reprs, "stvm's representations, each at the VM's default configuration."),
    BENCH_WORDS("peer", "go,libuv,erlang", peer_words, peers_opts, peers,
                "The peers to run beside stvm; one not built or without its runtime is a "
                "skipped record with a note, not a failure."),
    BENCH_INT("handoffs", "H", "2000000", 0, 1000000000LL, peers_opts, handoffs,
              "The semaphore ping-pong's hand-offs per repetition (stvm-bench micro's "
              "handoff case, Go's and Erlang's peers; libuv has nothing to hand off "
              "between); 0: no ping-pong."),
    BENCH_TEXT("peers-dir", "DIR", NULL, peers_opts, peers_dir,
               "Where the peers are (delay-go, delay-uv, delay_peer.beam); default: peers/ "
               "beside the stvm-bench executable (build/peers, where make bench-peers "
               "builds them)."),
};

const bench_command peers_command = {
    "peers",
    "The DelayBenchmark workload on stvm beside Go, libuv and Erlang on the same pinned "
    "core, with the ratios stvm / peer",
    "1000 durations of 1..50 ms from Random seed: 42; N workers share one index into them "
    "and wait on a timer of each in turn; a 1 s window, then a drain as long. stvm runs "
    "stvm-bench delay's run (a fresh VM per run) for each representation; then each peer "
    "of bench/peers/, built by make bench-peers: Go (one goroutine per worker, "
    "time.Sleep, GOMAXPROCS=1), libuv (one uv_timer_t per worker on one loop, no context "
    "switch at all), Erlang (one process per worker, receive after, erl +S 1:1). Every "
    "system runs on the core --cpu pins (the peers are children of the pinned thread) and "
    "reads the same durations from a file this command writes.\n\nOne record per "
    "(system, N): delays per second (over the window as measured: wall_window_ms), us "
    "and CPU us per delay (the process's CPU over the window), lateness p50/p99/max, "
    "waits that ended early, the counts; each stvm record has the ratios rate_vs_PEER "
    "(stvm's delays/s over the peer's) and cpu_vs_PEER (stvm's CPU per delay over the "
    "peer's), each repetition against the peer's in the same "
    "repetition, then the median. Then the semaphore ping-pong (--handoffs): stvm's "
    "hand-off between two green processes of equal priority through two semaphores "
    "(stvm-bench micro's handoff case) beside two goroutines through two one-slot "
    "channels and two Erlang processes sending each other a message; a record per system "
    "(case pingpong) with ns and CPU ns per hand-off and on stvm's the ratios "
    "handoff_vs_PEER. The tables for people come first: the figures per system and N, "
    "the ratios, then the ping-pong.",
    peers_opts_table, (int)(sizeof peers_opts_table / sizeof peers_opts_table[0]),
    "one stvm delay run's VM (one --repr, one --concurrency value, --repeat 1, "
    "--handoffs 0; the peers are other processes and run untraced)"};

/* A system's figures, in the records' order. */
#define PEERS_FIGURES(X)                                                                   \
    X(delays_per_second, "1/s", HIGHER, 0, DELAY_delays_per_second)                        \
    X(us_per_delay, "us", LOWER, 2, DELAY_us_per_delay)                                    \
    X(cpu_us_per_delay, "us", LOWER, 3, DELAY_cpu_us_per_delay)                            \
    X(late_p50_us, "us", LOWER, 0, DELAY_late_p50_us)                                      \
    X(late_p99_us, "us", LOWER, 0, DELAY_late_p99_us)                                      \
    X(late_max_us, "us", LOWER, 0, DELAY_late_max_us)                                      \
    X(early_waits, "", LOWER, 0, DELAY_early_waits)                                        \
    X(enter_count, "", NONE, 0, DELAY_enter_count)                                         \
    X(exit_in_window, "", NONE, 0, DELAY_exit_in_window)                                   \
    X(exit_count, "", NONE, 0, DELAY_exit_count)                                           \
    X(wall_window_ms, "ms", NONE, 1, DELAY_wall_window_ms)                                 \
    X(cpu_window_ms, "ms", LOWER, 1, DELAY_cpu_window_ms)

enum {
#define P_INDEX(name, unit, better, decimals, delay_index) P_##name,
    PEERS_FIGURES(P_INDEX)
#undef P_INDEX
    P_NFIGURES
};

typedef struct peers_run {
    const peers_opts *o;
    const bench_invocation *inv;
    char dir[4096];                 /* the peers' folder */
    char erl[4096];                 /* erl, for the Erlang peer */
    char table_path[4096];          /* the durations, one per line */
    bool found[NPEERS];
    char missing[NPEERS][300];      /* why a peer is not run */
    bench_results r;
} peers_run;

/* ---- finding the peers ------------------------------------------------------------- */

static void find_peers(peers_run *p)
{
    if (p->o->peers_dir) {
        snprintf(p->dir, sizeof p->dir, "%s", p->o->peers_dir);
    } else {
        char exe[3800];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(p->dir, sizeof p->dir, "%s/peers", n > 0 ? exe : ".");
    }
    bool erl = bench_child_find(p->erl, sizeof p->erl, NULL, "erl", "/usr/bin/erl");
    for (int k = 0; k < NPEERS; k++) {
        if (!((p->o->peers >> k) & 1u))
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", p->dir, peer_file[k]);
        bool there = access(path, k == PEER_ERLANG ? R_OK : X_OK) == 0;
        p->found[k] = there && (k != PEER_ERLANG || erl);
        if (!there)
            snprintf(p->missing[k], sizeof p->missing[k], "not built: no %.200s (make "
                     "bench-peers builds the peers)", path);
        else if (!p->found[k])
            snprintf(p->missing[k], sizeof p->missing[k], "erl not found in PATH (install "
                     "erlang-nox: sh scripts/install-deps.sh --peers)");
    }
}

/* The durations for the peers, one per line, in a file of their own. */
static bool write_table(peers_run *p)
{
    int table[DELAY_TABLE_SIZE];
    delay_table_generate(table);
    const char *dir = getenv("TMPDIR");   /* as nginx.c's scratch folder: $TMPDIR or /tmp */
    snprintf(p->table_path, sizeof p->table_path, "%s/stvm-bench-peers-XXXXXX",
             dir && *dir == '/' ? dir : "/tmp");
    int fd = mkstemp(p->table_path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "stvm-bench peers: cannot write the durations' file: %s\n",
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    for (int i = 0; i < DELAY_TABLE_SIZE; i++)
        fprintf(f, "%d\n", table[i]);
    if (fclose(f) != 0) {
        unlink(p->table_path);
        return false;
    }
    return true;
}

/* ---- running a peer ---------------------------------------------------------------- */

/* The value after " key=" in line, NaN when absent. */
static double line_value(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *at = strstr(line, pat);
    return at ? strtod(at + strlen(pat), NULL) : NAN;
}

/* Runs argv (argv[0] a path) as a child of the calling (pinned) thread and keeps its
 * line "peer=..." in line (with a space before it, so that every key follows one). false
 * with a sentence in why when it could not run, failed or printed no such line. */
static bool run_child(char *const argv[], const char *name, char *line, size_t size,
                      char *why, size_t whysize)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, whysize, "pipe: %s", strerror(errno));
        return false;
    }
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        close(fds[0]);
        bench_child_exec(parent, -1, fds[1], argv);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        snprintf(why, whysize, "fork: %s", strerror(errno));
        return false;
    }
    char buf[4096];
    size_t len = 0;
    ssize_t got;
    while ((got = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0 ||
           (got < 0 && errno == EINTR))
        len += got > 0 ? (size_t)got : 0;
    buf[len] = 0;
    close(fds[0]);
    int status = 0;
    bench_child_wait(pid, 10000, &status);
    const char *at = strstr(buf, "peer=");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !at) {
        buf[strcspn(buf, "\n")] = 0;
        snprintf(why, whysize, "%s ended with status %d: %.200s", name,
                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), buf);
        return false;
    }
    snprintf(line, size, " %.*s", (int)strcspn(at, "\n"), at);
    return true;
}

/* One run of peer k at N into out (DELAY_ indexes; what a peer does not measure is
 * NaN). false with a sentence in why when it could not run or said nothing usable. */
static bool run_peer(const peers_run *p, int k, long n, double out[DELAY_NFIGURES],
                     char *why, size_t whysize)
{
    char path[4200], ns[32], ws[32], pa[4200];
    snprintf(path, sizeof path, "%s/%s", p->dir, peer_file[k]);
    snprintf(ns, sizeof ns, "%ld", n);
    snprintf(ws, sizeof ws, "%lld", p->o->window_ms);
    snprintf(pa, sizeof pa, "%s", p->dir);
    char *go_argv[] = {path, ns, ws, (char *)p->table_path, NULL};
    /* One scheduler and one dirty CPU scheduler; +P: room for a million processes. */
    char *erl_argv[] = {(char *)p->erl, "+S", "1:1", "+SDcpu", "1:1", "+P", "2000000",
                        "-noshell", "-pa", pa, "-run", "delay_peer", "main", ns, ws,
                        (char *)p->table_path, NULL};
    char line[4096];
    if (!run_child(k == PEER_ERLANG ? erl_argv : go_argv, peer_words[k], line, sizeof line,
                   why, whysize))
        return false;
    for (int i = 0; i < DELAY_NFIGURES; i++)
        out[i] = NAN;
    double enter = line_value(line, "enter"), cpu = line_value(line, "cpu_ms");
    out[DELAY_enter_count] = enter;
    out[DELAY_cpu_us_per_delay] = enter > 0 ? cpu * 1e3 / enter : NAN;
    out[DELAY_late_p50_us] = line_value(line, "late_p50_us");
    out[DELAY_late_p99_us] = line_value(line, "late_p99_us");
    out[DELAY_late_max_us] = line_value(line, "late_max_us");
    out[DELAY_early_waits] = line_value(line, "early");
    out[DELAY_exit_in_window] = line_value(line, "exit_in_window");
    out[DELAY_exit_count] = line_value(line, "exit");
    out[DELAY_wall_window_ms] = line_value(line, "wall_ms");
    out[DELAY_cpu_window_ms] = cpu;
    if (isnan(enter) || isnan(cpu)) {
        snprintf(why, whysize, "%s printed no enter= or cpu_ms=: %.200s", peer_words[k], line);
        return false;
    }
    return true;
}

/* Whether peer k has a ping-pong (libuv has no processes to hand off between). */
static bool has_pingpong(int k)
{
    return k != PEER_LIBUV;
}

/* The ping-pong's figures: ns and CPU ns per hand-off. */
enum { PP_NS, PP_CPU_NS, PP_NFIGURES };

/* Peer k's ping-pong into out; false with a sentence in why. */
static bool run_peer_pingpong(const peers_run *p, int k, double out[PP_NFIGURES], char *why,
                              size_t whysize)
{
    char path[4200], hs[32], pa[4200];
    snprintf(path, sizeof path, "%s/%s", p->dir, peer_file[k]);
    snprintf(hs, sizeof hs, "%lld", p->o->handoffs);
    snprintf(pa, sizeof pa, "%s", p->dir);
    char *go_argv[] = {path, "pingpong", hs, NULL};
    char *erl_argv[] = {(char *)p->erl, "+S", "1:1", "+SDcpu", "1:1", "-noshell", "-pa", pa,
                        "-run", "delay_peer", "pingpong", hs, NULL};
    char line[4096];
    if (!run_child(k == PEER_ERLANG ? erl_argv : go_argv, peer_words[k], line, sizeof line,
                   why, whysize))
        return false;
    double n = line_value(line, "handoffs"), wall = line_value(line, "wall_ns"),
           cpu = line_value(line, "cpu_ns");
    if (!(n > 0) || isnan(wall) || isnan(cpu)) {
        snprintf(why, whysize, "%s printed no handoffs=, wall_ns= or cpu_ns=: %.200s",
                 peer_words[k], line);
        return false;
    }
    out[PP_NS] = wall / n;
    out[PP_CPU_NS] = cpu / n;
    return true;
}

/* ---- the records ------------------------------------------------------------------- */

/* A record per (N, system): stvm's representations first, then the peers. */
static void add_records(peers_run *p, const stvm_config *cfg)
{
    for (int ni = 0; ni < p->o->concurrency.n; ni++) {
        for (int s = 0; s < NREPRS + NPEERS; s++) {
            bool stvm = s < NREPRS;
            unsigned bits = stvm ? p->o->reprs : p->o->peers;
            int k = stvm ? s : s - NREPRS;
            if (!((bits >> k) & 1u))
                continue;
            bench_record *rec = bench_record_add(&p->r, stvm ? repr_words[k] : peer_words[k]);
            bench_param_add(rec, "concurrency", "%lld", p->o->concurrency.v[ni]);
            bench_param_add(rec, "runtime", "%s", stvm ? "stvm" : peer_words[k]);
            bench_param_add(rec, "window_ms", "%lld", p->o->window_ms);
#define F(name, unit, better, decimals, delay_index) \
    bench_metric_add(rec, #name, unit, BENCH_BETTER_##better, decimals, NULL, 0);
            PEERS_FIGURES(F)
#undef F
            rec->gbench_real = P_us_per_delay;
            rec->gbench_cpu = P_cpu_us_per_delay;
            if (stvm) {
                bench_param_add(rec, "timer_slack_us", "%u", cfg->timer_slack_us);
                for (int q = 0; q < NPEERS; q++) {
                    if (!p->found[q])
                        continue;
                    char name[64];
                    snprintf(name, sizeof name, "rate_vs_%s", peer_words[q]);
                    bench_metric_add(rec, name, "x", BENCH_BETTER_HIGHER, 2, NULL, 0);
                    snprintf(name, sizeof name, "cpu_vs_%s", peer_words[q]);
                    bench_metric_add(rec, name, "x", BENCH_BETTER_LOWER, 2, NULL, 0);
                }
            } else if (!p->found[k]) {
                bench_record_fail(rec, BENCH_SKIPPED, "%s", p->missing[k]);
            }
        }
    }
}

static bench_record *find_record(const peers_run *p, const char *name, long long n)
{
    char sel[96];
    snprintf(sel, sizeof sel, "%s concurrency=%lld", name, n);
    return bench_record_select(&p->r, sel);
}

/* A sample of every figure into rec. */
static void push_sample(bench_record *rec, const double v[DELAY_NFIGURES])
{
#define F(name, unit, better, decimals, delay_index) \
    bench_metric_push(&rec->metrics[P_##name], v[delay_index]);
    PEERS_FIGURES(F)
#undef F
}

/* One (repetition, N, system) cell; false when it failed (kept in the record). */
static bool run_cell(peers_run *p, bench_record *rec, int s, long n, int rep)
{
    double v[DELAY_NFIGURES];
    char why[300] = "";
    bool ok;
    if (s < NREPRS) {
        stvm_config cfg;
        stvm_config_init(&cfg);
        delay_repr repr = {.delay_clock = repr_kinds[s].delay_clock,
                           .smallint_bits = repr_kinds[s].bits,
                           .timer_slack_us = (int)cfg.timer_slack_us};
        snprintf(repr.name, sizeof repr.name, "%s", repr_words[s]);
        int table[DELAY_TABLE_SIZE];
        delay_table_generate(table);
        delay_run_params rp = {.repr = &repr, .n = n, .table = table,
                               .window_ms = (int)p->o->window_ms, .stack_guard = true,
                               .trace = &p->inv->common.trace};
        ok = delay_run_one(&rp, v, why, sizeof why) == STVM_OK;
    } else {
        bench_watchdog((unsigned)(120 + 4 * p->o->window_ms / 1000 + n / 1000));
        ok = run_peer(p, s - NREPRS, n, v, why, sizeof why);
        bench_watchdog(0);
    }
    if (!ok) {
        bench_record_fail(rec, rep ? BENCH_OK : BENCH_FAILED, "repetition %d failed: %s",
                          rep + 1, why);
        fprintf(stderr, "stvm-bench peers: %s at N = %ld: %s\n", rec->name, n, rec->note);
        return false;
    }
    /* The rate over the window as measured, not as asked: a peer without priorities
     * (Go's goroutines, libuv's one loop) ends its window only when its coordinator's
     * turn comes, seconds late at saturation, and the nominal window would credit it
     * with every delay started meanwhile. */
    double enter = v[DELAY_enter_count], wall = v[DELAY_wall_window_ms];
    v[DELAY_delays_per_second] = wall > 0 ? enter * 1000.0 / wall : NAN;
    v[DELAY_us_per_delay] = enter > 0 ? wall * 1000.0 / enter : NAN;
    push_sample(rec, v);
    return true;
}

/* ---- the ping-pong ------------------------------------------------------------------ */

/* What each system's ping-pong hands over. */
static const char *const pp_channel[NPEERS] = {"one-slot channels", "", "messages"};

/* A record "pingpong" per system (stvm first), without samples. */
static void add_pingpong_records(peers_run *p)
{
    for (int s = -1; s < NPEERS; s++) {
        if (s >= 0 && (!((p->o->peers >> s) & 1u) || !has_pingpong(s)))
            continue;
        bench_record *rec = bench_record_add(&p->r, "pingpong");
        bench_param_add(rec, "runtime", "%s", s < 0 ? "stvm" : peer_words[s]);
        bench_param_add(rec, "channel", "%s", s < 0 ? "semaphores" : pp_channel[s]);
        bench_param_add(rec, "handoffs", "%lld", p->o->handoffs);
        rec->gbench_real = bench_metric_add(rec, "ns_per_handoff", "ns", BENCH_BETTER_LOWER, 1,
                                            NULL, 0);
        rec->gbench_cpu = bench_metric_add(rec, "cpu_ns_per_handoff", "ns", BENCH_BETTER_LOWER,
                                           1, NULL, 0);
        if (s >= 0 && !p->found[s])
            bench_record_fail(rec, BENCH_SKIPPED, "%s", p->missing[s]);
        for (int q = 0; s < 0 && q < NPEERS; q++) {
            if (!p->found[q] || !has_pingpong(q))
                continue;
            char name[64];
            snprintf(name, sizeof name, "handoff_vs_%s", peer_words[q]);
            bench_metric_add(rec, name, "x", BENCH_BETTER_LOWER, 2, NULL, 0);
        }
    }
}

static bench_record *find_pingpong(const peers_run *p, const char *runtime)
{
    char sel[96];
    snprintf(sel, sizeof sel, "pingpong runtime=%s", runtime);
    return bench_record_select(&p->r, sel);
}

/* One repetition of the ping-pong of system s (-1: stvm); false when it failed. */
static bool run_pingpong(peers_run *p, bench_record *rec, int s, int rep)
{
    double v[PP_NFIGURES];
    char why[300] = "";
    bool ok;
    if (s < 0) {
        int64_t cpu0 = bench_cpu_ns();
        ok = micro_handoff(MICRO_SEMAPHORE, p->o->handoffs, NULL, &v[PP_NS], why,
                           sizeof why) == STVM_OK;
        /* The VM's set-up and teardown are in this CPU time, as the peers' runtime
         * start is not: a bias against stvm, small beside millions of hand-offs. */
        v[PP_CPU_NS] = (double)(bench_cpu_ns() - cpu0) / (double)p->o->handoffs;
    } else {
        bench_watchdog((unsigned)(120 + p->o->handoffs / 100000));
        ok = run_peer_pingpong(p, s, v, why, sizeof why);
        bench_watchdog(0);
    }
    if (!ok) {
        bench_record_fail(rec, rep ? BENCH_OK : BENCH_FAILED, "repetition %d failed: %s",
                          rep + 1, why);
        fprintf(stderr, "stvm-bench peers: pingpong of %s: %s\n",
                s < 0 ? "stvm" : peer_words[s], rec->note);
        return false;
    }
    bench_metric_push(&rec->metrics[0], v[PP_NS]);
    bench_metric_push(&rec->metrics[1], v[PP_CPU_NS]);
    return true;
}

/* stvm's ns per hand-off over each peer's, repetition by repetition. */
static void add_pingpong_ratios(peers_run *p)
{
    bench_record *st = find_pingpong(p, "stvm");
    for (int q = 0; st && q < NPEERS; q++) {
        bench_record *peer = p->found[q] && has_pingpong(q) ? find_pingpong(p, peer_words[q])
                                                            : NULL;
        if (!peer)
            continue;
        char name[64];
        snprintf(name, sizeof name, "handoff_vs_%s", peer_words[q]);
        bench_metric *m = bench_metric_find(st, name);
        for (int k = 0; k < st->metrics[0].nsamples && k < peer->metrics[0].nsamples; k++)
            bench_metric_push(m, st->metrics[0].samples[k] / peer->metrics[0].samples[k]);
    }
}

/* Each stvm repetition over the peer's in the same repetition. */
static void add_ratios(peers_run *p)
{
    for (int i = 0; i < p->r.nrecords; i++) {
        bench_record *rec = &p->r.records[i];
        if (strcmp(bench_param_find(rec, "runtime"), "stvm") != 0 ||
            !bench_param_find(rec, "concurrency"))
            continue;
        long long n = atoll(bench_param_find(rec, "concurrency"));
        for (int q = 0; q < NPEERS; q++) {
            bench_record *peer = p->found[q] ? find_record(p, peer_words[q], n) : NULL;
            if (!peer)
                continue;
            char name[64];
            snprintf(name, sizeof name, "rate_vs_%s", peer_words[q]);
            bench_metric *rate = bench_metric_find(rec, name);
            snprintf(name, sizeof name, "cpu_vs_%s", peer_words[q]);
            bench_metric *cpu = bench_metric_find(rec, name);
            const bench_metric *a = &rec->metrics[P_delays_per_second];
            const bench_metric *b = &peer->metrics[P_delays_per_second];
            const bench_metric *ac = &rec->metrics[P_cpu_us_per_delay];
            const bench_metric *bc = &peer->metrics[P_cpu_us_per_delay];
            for (int k = 0; k < a->nsamples && k < b->nsamples; k++) {
                bench_metric_push(rate, a->samples[k] / b->samples[k]);
                bench_metric_push(cpu, ac->samples[k] / bc->samples[k]);
            }
        }
    }
}

/* ---- the tables for people --------------------------------------------------------- */

static void cell_text(char *buf, size_t size, const bench_metric *m, const char *fmt)
{
    if (!m || !m->nsamples || isnan(m->median))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, fmt, m->median);
}

/* "1234567" as "1,234,567". */
static void grouped(char *buf, size_t size, const bench_metric *m)
{
    char raw[48];
    cell_text(raw, sizeof raw, m, "%.0f");
    if (!strcmp(raw, "-") || strlen(raw) > 20) {
        snprintf(buf, size, "%s", raw);
        return;
    }
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < size; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = 0;
}

/* Per system, per N: delays/s, CPU us per delay, lateness p50/p99. */
static void add_figures_table(peers_run *p)
{
    int nn = p->o->concurrency.n, ncols = 1 + 3 * nn;
    char align[1 + 3 * BENCH_MAX_LIST + 1];
    memset(align, 'r', (size_t)ncols);
    align[0] = 'l';
    align[ncols] = 0;
    char title[160];
    snprintf(title, sizeof title, "DelayBenchmark on one pinned core: medians of %lld, a "
             "%lld ms window", p->o->repeat, p->o->window_ms);
    bench_table *t = bench_table_add(&p->r, title, ncols, align);
    char cells[1 + 3 * BENCH_MAX_LIST][64];
    const char *row[1 + 3 * BENCH_MAX_LIST];
    for (int c = 0; c < ncols; c++)
        row[c] = cells[c];
    snprintf(cells[0], 64, "system");
    for (int ni = 0; ni < nn; ni++) {
        snprintf(cells[1 + 3 * ni], 64, "N=%lld delays/s", p->o->concurrency.v[ni]);
        snprintf(cells[2 + 3 * ni], 64, "CPU us/delay");
        snprintf(cells[3 + 3 * ni], 64, "late p50/p99 us");
    }
    bench_table_row(t, row);
    for (int s = 0; s < NREPRS + NPEERS; s++) {
        bool stvm = s < NREPRS;
        int k = stvm ? s : s - NREPRS;
        if (!(((stvm ? p->o->reprs : p->o->peers) >> k) & 1u))
            continue;
        const char *name = stvm ? repr_words[k] : peer_words[k];
        snprintf(cells[0], 64, "%s%s", stvm ? "stvm " : "", name);
        for (int ni = 0; ni < nn; ni++) {
            bench_record *rec = find_record(p, name, p->o->concurrency.v[ni]);
            grouped(cells[1 + 3 * ni], 64, &rec->metrics[P_delays_per_second]);
            cell_text(cells[2 + 3 * ni], 64, &rec->metrics[P_cpu_us_per_delay], "%.2f");
            char a[24], b[24];
            cell_text(a, sizeof a, &rec->metrics[P_late_p50_us], "%.0f");
            cell_text(b, sizeof b, &rec->metrics[P_late_p99_us], "%.0f");
            snprintf(cells[3 + 3 * ni], 64, "%s/%s", a, b);
        }
        bench_table_row(t, row);
    }
    char footer[NPEERS * 320] = "";   /* one footer (a second call replaces the first) */
    for (int q = 0; q < NPEERS; q++)
        if (((p->o->peers >> q) & 1u) && !p->found[q])
            snprintf(footer + strlen(footer), sizeof footer - strlen(footer), "%s%s: %s",
                     *footer ? "\n" : "", peer_words[q], p->missing[q]);
    if (*footer)
        bench_table_footer(t, "%s", footer);
}

/* Per stvm representation and peer run, per N: the ratios. */
static void add_ratio_table(peers_run *p)
{
    int nn = p->o->concurrency.n, ncols = 1 + 2 * nn;
    char align[1 + 2 * BENCH_MAX_LIST + 1];
    memset(align, 'r', (size_t)ncols);
    align[0] = 'l';
    align[ncols] = 0;
    char cells[1 + 2 * BENCH_MAX_LIST][64];
    const char *row[1 + 2 * BENCH_MAX_LIST];
    for (int c = 0; c < ncols; c++)
        row[c] = cells[c];
    bench_table *t = NULL;
    for (int q = 0; q < NPEERS; q++) {
        if (!p->found[q])
            continue;
        for (int s = 0; s < NREPRS; s++) {
            if (!((p->o->reprs >> s) & 1u))
                continue;
            if (!t) {
                t = bench_table_add(&p->r, "stvm / peer, each repetition against the peer's "
                                    "in the same repetition (medians): delays/s (higher: "
                                    "stvm faster) and CPU per delay (lower: stvm cheaper)",
                                    ncols, align);
                snprintf(cells[0], 64, "stvm / peer");
                for (int ni = 0; ni < nn; ni++) {
                    snprintf(cells[1 + 2 * ni], 64, "N=%lld delays/s",
                             p->o->concurrency.v[ni]);
                    snprintf(cells[2 + 2 * ni], 64, "CPU/delay");
                }
                bench_table_row(t, row);
            }
            snprintf(cells[0], 64, "%s / %s", repr_words[s], peer_words[q]);
            for (int ni = 0; ni < nn; ni++) {
                bench_record *rec = find_record(p, repr_words[s], p->o->concurrency.v[ni]);
                char name[64];
                snprintf(name, sizeof name, "rate_vs_%s", peer_words[q]);
                cell_text(cells[1 + 2 * ni], 64, bench_metric_find(rec, name), "%.2fx");
                snprintf(name, sizeof name, "cpu_vs_%s", peer_words[q]);
                cell_text(cells[2 + 2 * ni], 64, bench_metric_find(rec, name), "%.2fx");
            }
            bench_table_row(t, row);
        }
    }
}

/* The ping-pong per system, with stvm's ratio to each. */
static void add_pingpong_table(peers_run *p)
{
    bench_record *st = find_pingpong(p, "stvm");
    if (!st)
        return;
    bench_table *t = bench_table_add(&p->r, "Semaphore ping-pong: ns per hand-off (medians), "
                                     "stvm / peer repetition by repetition", 5, "llrrr");
    bench_table_row(t, (const char *const[]){"system", "hands over", "ns/hand-off",
                                             "CPU ns/hand-off", "stvm / peer"});
    for (int s = -1; s < NPEERS; s++) {
        bench_record *rec = s < 0 ? st : has_pingpong(s) ? find_pingpong(p, peer_words[s])
                                                         : NULL;
        if (!rec)
            continue;
        char ns[32], cpu[32], ratio[32] = "";
        cell_text(ns, sizeof ns, &rec->metrics[0], "%.1f");
        cell_text(cpu, sizeof cpu, &rec->metrics[1], "%.1f");
        if (s >= 0) {
            char name[64];
            snprintf(name, sizeof name, "handoff_vs_%s", peer_words[s]);
            cell_text(ratio, sizeof ratio, bench_metric_find(st, name), "%.2fx");
        }
        char who[32];
        snprintf(who, sizeof who, "%s", s < 0 ? "stvm" : peer_words[s]);
        bench_table_row(t, (const char *const[]){who, bench_param_find(rec, "channel"), ns,
                                                 cpu, ratio});
    }
}

static void describe(peers_run *p)
{
    char missing[NPEERS * 320] = "";
    for (int q = 0; q < NPEERS; q++)
        if (((p->o->peers >> q) & 1u) && !p->found[q])
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing),
                     " Not run: %s (%s).", peer_words[q], p->missing[q]);
    bench_results_note(&p->r,
             "DelayBenchmark's workload (1000 durations of 1..50 ms from Park-Miller seed 42, "
             "a shared index, a %lld ms window, then a drain as long) on stvm and each peer "
             "found in %s, one after the other within each repetition and N, all on the same "
             "core (--cpu). delays_per_second counts the delays started in the window per "
             "second of the window as measured (wall_window_ms: a coordinator without "
             "priority over its workers, Go's or libuv's, ends it late at saturation); "
             "cpu_us_per_delay is the process's CPU over the window (every thread: Go's "
             "runtime, Erlang's schedulers) per delay started. Go: one goroutine per worker, "
             "time.Sleep, GOMAXPROCS=1. libuv: one uv_timer_t per worker on one loop, no "
             "context switch (a wait may end early against the worker's own clock: libuv "
             "counts from the loop's cached time). Erlang: one process per worker, receive "
             "after, erl +S 1:1 (its timers have ms resolution). Lateness above 1 ms is "
             "in ms buckets in the peers (their p50/p99 are bucket upper edges); stvm's "
             "histogram is finer. pingpong (%lld hand-offs a repetition, after the delay "
             "runs): stvm's two green processes of equal priority through two semaphores "
             "(stvm-bench micro's handoff; its CPU time includes the VM's set-up), two "
             "goroutines through two one-slot channels, two Erlang processes sending each "
             "other a message; libuv has no processes and no ping-pong.%s",
             p->o->window_ms, p->dir, p->o->handoffs, missing);
}

int peers_main(int argc, char **argv)
{
    peers_opts o;
    bench_invocation inv;
    int rc = bench_parse(&peers_command, argc, argv, &o, &inv);
    if (rc != BENCH_GO_ON ||
        (rc = bench_trace_cells(&inv, (long)__builtin_popcount(o.reprs) * o.concurrency.n *
                                o.repeat, "give one --repr, one --concurrency value and "
                                "--repeat 1")) != BENCH_GO_ON)
        return rc;
    if (!o.reprs)
        return bench_usage(&peers_command, "--repr: give at least one representation");
    peers_run *p = calloc(1, sizeof *p);
    if (!p) {
        fprintf(stderr, "stvm-bench peers: out of memory\n");
        return BENCH_EXIT_FAIL;
    }
    p->o = &o;
    p->inv = &inv;
    find_peers(p);
    /* Go's runtime reads it at start: one P, the peer's one core. */
    setenv("GOMAXPROCS", "1", 1);
    bool any_peer = false;
    for (int q = 0; q < NPEERS; q++)
        any_peer |= p->found[q];
    if (any_peer && !write_table(p)) {
        free(p);
        return BENCH_EXIT_FAIL;
    }
    stvm_config cfg;
    stvm_config_init(&cfg);
    bench_results_init(&p->r, "peers");
    add_records(p, &cfg);
    if (o.handoffs)
        add_pingpong_records(p);
    for (int q = 0; q < NPEERS; q++)
        if (((o.peers >> q) & 1u) && !p->found[q])
            fprintf(stderr, "stvm-bench peers: %s not run: %s\n", peer_words[q], p->missing[q]);
    rc = BENCH_EXIT_OK;
    int per = __builtin_popcount(o.reprs), done = 0;
    for (int q = 0; q < NPEERS; q++)
        per += p->found[q];
    int total = per * o.concurrency.n * (int)o.repeat;
    int pp_per = o.handoffs ? 1 : 0;
    for (int q = 0; o.handoffs && q < NPEERS; q++)
        pp_per += p->found[q] && has_pingpong(q);
    total += pp_per * (int)o.repeat;
    for (int k = 0; k < o.repeat; k++) {
        for (int ni = 0; ni < o.concurrency.n; ni++) {
            long n = (long)o.concurrency.v[ni];
            for (int s = 0; s < NREPRS + NPEERS; s++) {
                bool stvm = s < NREPRS;
                int w = stvm ? s : s - NREPRS;
                if (stvm ? !((o.reprs >> w) & 1u) : !p->found[w])
                    continue;
                bench_record *rec = find_record(p, stvm ? repr_words[w] : peer_words[w], n);
                bool ok = !*rec->note && run_cell(p, rec, s, n, k);
                if (*rec->note)
                    rc = BENCH_EXIT_FAIL;
                bench_progress_line(&inv, ++done, total, "%s N=%ld rep %d/%lld: %.0f "
                                    "delays/s, %.3f CPU us/delay", rec->name, n, k + 1,
                                    o.repeat, ok ? rec->metrics[P_delays_per_second].samples[k]
                                                 : NAN,
                                    ok ? rec->metrics[P_cpu_us_per_delay].samples[k] : NAN);
            }
        }
        for (int s = -1; o.handoffs && s < NPEERS; s++) {
            if (s >= 0 && (!p->found[s] || !has_pingpong(s)))
                continue;
            bench_record *rec = find_pingpong(p, s < 0 ? "stvm" : peer_words[s]);
            bool ok = !*rec->note && run_pingpong(p, rec, s, k);
            if (*rec->note)
                rc = BENCH_EXIT_FAIL;
            bench_progress_line(&inv, ++done, total, "pingpong %s rep %d/%lld: %.1f ns per "
                                "hand-off", s < 0 ? "stvm" : peer_words[s], k + 1, o.repeat,
                                ok ? rec->metrics[0].samples[k] : NAN);
        }
    }
    if (any_peer)
        unlink(p->table_path);
    add_ratios(p);
    add_pingpong_ratios(p);
    add_figures_table(p);
    add_ratio_table(p);
    add_pingpong_table(p);
    describe(p);
    if (bench_output(&p->r, &inv) != BENCH_EXIT_OK)
        rc = BENCH_EXIT_FAIL;
    bench_results_free(&p->r);
    free(p);
    return rc;
}
