/*
 * The DelayBenchmark workload on one libuv loop, for the peers experiment
 * (experiments/peers/README.md).
 *
 * usage: delay-uv N WINDOW_MS TABLE_FILE   (pinned by the caller)
 *
 * A worker is a uv_timer_t, not a thread of control: its callback is the rest of the
 * worker's loop body (record the lateness, exit++, then, while running, take the next
 * duration from the shared index, enter++ and restart the timer). Nothing is switched:
 * the loop calls each callback on its own stack. A coordinator timer opens the window
 * (every worker takes its first duration), closes it, and after the drain stops the
 * loop. Prints one line of key=value figures; CPU is getrusage(RUSAGE_SELF) over the
 * window.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <uv.h>

#define TABLE_SIZE 1000
/* Lateness buckets, the same in every peer: exact us below 1000, then ms up to 1 s,
 * then one bucket for a second or more. */
#define NBUCKETS 2001

typedef struct worker {
    uv_timer_t timer;
    uint64_t before_ns;     /* when the running delay started */
    int d;                  /* its duration in ms */
} worker;

/* The run's state: one loop, one thread, so plain variables. */
static int table[TABLE_SIZE];
static int sample_index;
static int running;
static uint64_t enter, exit_count, early, samples, late_max;
static uint64_t hist[NBUCKETS];
static worker *workers;
static long nworkers;
static int window_ms;
static uint64_t wall0, wall1, cpu0, cpu1, enter_window, exit_window;

static uint64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

static int bucket(uint64_t late)
{
    return late < 1000 ? (int)late : late < 1000000 ? 1000 + (int)(late / 1000) : 2000;
}

/* The upper edge of the bucket holding quantile q, never above the maximum. */
static uint64_t quantile(double q)
{
    uint64_t need = (uint64_t)(q * (double)samples + 0.999999), seen = 0;
    if (need < 1)
        need = 1;
    for (int b = 0; b < NBUCKETS; b++) {
        if ((seen += hist[b]) >= need) {
            uint64_t edge = b < 1000 ? (uint64_t)b : b < 2000 ? (uint64_t)(b - 999) * 1000 - 1
                                                               : late_max;
            return edge < late_max ? edge : late_max;
        }
    }
    return 0;
}

static void worker_fired(uv_timer_t *t);

/* The worker's next delay: the next duration from the shared index, enter++. */
static void start_delay(worker *w)
{
    w->d = table[sample_index];
    sample_index = (sample_index + 1) % TABLE_SIZE;
    enter++;
    uv_timer_start(&w->timer, worker_fired, (uint64_t)w->d, 0);
}

static void worker_fired(uv_timer_t *t)
{
    worker *w = (worker *)t;
    uint64_t after = uv_hrtime();
    int64_t late = (int64_t)(after - w->before_ns) / 1000 - (int64_t)w->d * 1000;
    if (late < 0) {
        /* libuv's timers count from the loop's cached time, which may be a little
         * older than the worker's own start: such a wait ends early. */
        early++;
        late = 0;
    }
    hist[bucket((uint64_t)late)]++;
    samples++;
    if ((uint64_t)late > late_max)
        late_max = (uint64_t)late;
    exit_count++;
    w->before_ns = after;
    if (running)
        start_delay(w);
}

static void drain_over(uv_timer_t *t)
{
    uv_stop(t->loop);
}

static void window_over(uv_timer_t *t)
{
    running = 0;
    cpu1 = cpu_ns();
    wall1 = uv_hrtime();
    enter_window = enter;
    exit_window = exit_count;
    uv_timer_start(t, drain_over, (uint64_t)window_ms, 0);
}

static void window_open(uv_timer_t *t)
{
    running = 1;
    wall0 = uv_hrtime();
    cpu0 = cpu_ns();
    for (long i = 0; i < nworkers; i++) {
        workers[i].before_ns = uv_hrtime();
        uv_timer_init(t->loop, &workers[i].timer);
        start_delay(&workers[i]);
    }
    uv_timer_start(t, window_over, (uint64_t)window_ms, 0);
}

static int read_table(const char *path)
{
    static const int first[] = {1, 27, 37, 14, 19, 10, 49};
    FILE *f = fopen(path, "r");
    long sum = 0;
    int n = 0;
    if (!f)
        return 0;
    while (n < TABLE_SIZE && fscanf(f, "%d", &table[n]) == 1)
        sum += table[n++];
    fclose(f);
    for (int i = 0; i < 7 && n == TABLE_SIZE; i++)
        if (table[i] != first[i])
            return 0;
    return n == TABLE_SIZE && sum == 24686;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: delay-uv N WINDOW_MS TABLE_FILE\n");
        return 2;
    }
    nworkers = atol(argv[1]);
    window_ms = atoi(argv[2]);
    if (!read_table(argv[3])) {
        fprintf(stderr, "delay-uv: %s is not Park-Miller seed 42's table\n", argv[3]);
        return 1;
    }
    workers = calloc((size_t)nworkers, sizeof *workers);
    if (!workers)
        return 1;
    uv_loop_t *loop = uv_default_loop();
    uv_timer_t coordinator;
    uv_timer_init(loop, &coordinator);
    uv_timer_start(&coordinator, window_open, 0, 0);
    uv_run(loop, UV_RUN_DEFAULT);
    printf("peer=libuv enter=%llu exit_in_window=%llu exit=%llu wall_ms=%.3f cpu_ms=%.3f "
           "late_p50_us=%llu late_p99_us=%llu late_max_us=%llu early=%llu samples=%llu\n",
           (unsigned long long)enter_window, (unsigned long long)exit_window,
           (unsigned long long)exit_count, (double)(wall1 - wall0) / 1e6,
           (double)(cpu1 - cpu0) / 1e6, (unsigned long long)quantile(0.50),
           (unsigned long long)quantile(0.99), (unsigned long long)late_max,
           (unsigned long long)early, (unsigned long long)samples);
    return 0;
}
