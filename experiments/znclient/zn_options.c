/*
 * znclient's command line: one table of options, a row per option (name, kind, metavar,
 * default as text, help, where the value goes). From it come the parser (`--name value`
 * and `--name=value`), --help with each option's range or words and default, and the
 * error for a bad value. Every default is parsed like a given value, so --help shows
 * what runs.
 */
#include "zn_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const zn_logging_words[] = {"off", "on", "subscriber", NULL};
const char *const zn_events_words[] = {"written", "read", "transaction", "all", NULL};
/* The idle modes, by the library's own names (stvm_idle_mode_name), set before main: the
 * option table points at them. */
const char *zn_mode_words[STVM_IDLE_SPIN + 2];
__attribute__((constructor)) static void name_idle_modes(void)
{
    for (int m = 0; m <= STVM_IDLE_SPIN; m++)
        zn_mode_words[m] = stvm_idle_mode_name(m);
}
const char *const zn_wait_words[] = {"timed", "plain", NULL};
const char *const zn_onoff_words[] = {"off", "on", NULL};

typedef enum opt_kind {
    OPT_INT,                /* long long in [lo, hi] */
    OPT_INTS,               /* zn_ints, each in [lo, hi] */
    OPT_WORD,               /* int: the word's index */
    OPT_WORDS,              /* unsigned: a bit per word given */
    OPT_FLAG,               /* bool */
    OPT_TEXT,               /* const char * */
    OPT_OUTPUT,             /* const char *: a file to write, checked before anything runs */
} opt_kind;

typedef struct opt {
    const char *name, *metavar, *def;
    opt_kind kind;
    long long lo, hi;
    const char *const *words;
    size_t offset;
    const char *help;
} opt;

#define O(f) offsetof(zn_opts, f)
#define INT(n, m, d, lo, hi, f, h) {n, m, d, OPT_INT, lo, hi, NULL, O(f), h}
#define INTS(n, d, lo, hi, f, h) {n, "LIST", d, OPT_INTS, lo, hi, NULL, O(f), h}
#define WORD(n, d, w, f, h) {n, "WORD", d, OPT_WORD, 0, 0, w, O(f), h}
#define WORDS(n, d, w, f, h) {n, "LIST", d, OPT_WORDS, 0, 0, w, O(f), h}
#define FLAG(n, f, h) {n, NULL, NULL, OPT_FLAG, 0, 0, NULL, O(f), h}
#define TEXT(n, m, f, h) {n, m, NULL, OPT_TEXT, 0, 0, NULL, O(f), h}
#define OUTPUT(n, f, h) {n, "FILE", NULL, OPT_OUTPUT, 0, 0, NULL, O(f), h}

static const opt table[] = {
    WORDS("logging", "off,on,subscriber", zn_logging_words, logging,
          "off: level 0, no event built; on: level 3, three ZnLogEvents per request announced "
          "to nobody; subscriber: level 3 and a synchronous subscriber."),
    INTS("subscriber-cost-us", "60", 0, 100000, cost,
         "CPU per delivered event (varies the subscriber rows only)."),
    WORDS("subscriber-events", "all", zn_events_words, events,
          "The class subscribed to (varies the subscriber rows only)."),
    WORDS("idle-mode", "poll,legacy,spin", zn_mode_words, modes, "The VM's idle mode."),
    INTS("idle-us", "1000", 1, 10000000, idle_us,
         "The relinquish quantum (1000: Pharo 6; 50000: Pharo 7 after February 2018)."),
    INTS("wake-inject-us", "0", 0, 1000000, inject, "Extra latency after every OS sleep."),
    INTS("before-us", "0", 0, 100000, before, "CPU work before the send."),
    INTS("between-us", "0", 0, 100000, between, "CPU work between the send and the first read."),
    INTS("after-us", "0", 0, 100000, after, "CPU work after the read."),
    WORDS("wait", "timed", zn_wait_words, wait,
          "timed: waitForDataFor: (Pharo's); plain: waitForDataIfClosed:."),
    WORDS("background", "off", zn_onoff_words, background,
          "on: a busy process at priority 30, so the idle process never runs."),
    INT("event-cost-us", "N", "5", 0, 100000, event_cost_us, "CPU to build one ZnLogEvent."),
    INT("requests", "N", "2000", 10, 100000000, requests, "Timed requests per configuration."),
    INT("warmup", "N", "200", 0, 1000000, warmup, "Requests before the timed ones."),
    INT("max-seconds", "S", "2", 1, 3600, max_seconds,
        "Time limit of a configuration's timed part."),
    INT("repeat", "K", "3", 1, ZN_MAX_REPEAT, repeat,
        "Repetitions; every figure keeps each one's sample."),
    INT("wrk-seconds", "S", "2", 1, 60, wrk_seconds, "wrk's duration per repetition."),
    FLAG("no-wrk", no_wrk, "No wrk baseline."),
    FLAG("model", model,
         "Run against a modelled world on the simulated clock instead of nginx: a server that "
         "answers --server-us (plus a spread) after the request left, the client's own CPU as "
         "--client-us of work, --wake-inject-us of simulated time after every OS sleep; the "
         "same client, scheduler and Delays, no wall clock, the same figures on every run."),
    INTS("server-us", "30", 0, 1000000, server,
         "--model: the server's turnaround, at least this (us)."),
    INTS("server-jitter-us", "10", 0, 1000000, jitter,
         "--model: plus an exponential spread of this mean (us)."),
    INTS("client-us", "20", 0, 1000000, client,
         "--model: the client's own CPU per request, half before the send and half parsing "
         "the response (us)."),
    INT("model-seed", "N", "42", 0, 4294967295LL, seed,
        "--model: the turnaround spread's generator."),
    WORD("preset", "none", zn_preset_words, preset,
         "A named world's three cells (logging off, on, subscriber) instead of the knobs' "
         "sweep: its idle mode and quantum, wake-up cost, event and subscriber costs, and with "
         "--model its server and client. seed2-2017: the seed's world as --fit found it."),
    WORD("with-preset", "none", zn_preset_words, with_preset,
         "The named world's three cells beside the knobs' sweep; the JSON also has the "
         "modelled world's figures for them."),
    FLAG("fit", fit,
         "Search the modelled world's physical parameters (the wake-up cost, the server's "
         "turnaround and spread, the event, subscriber and client costs, the idle mode and "
         "quantum) for the configurations that give the seed's three figures within 15% "
         "(seconds: every configuration runs on the simulated clock)."),
    INT("fit-requests", "N", "120", 10, 100000, fit_requests,
        "--fit: timed requests per cell of each configuration tried."),
    FLAG("phase", phase,
         "The inversion's phase diagram: the subscriber/off ratio of the modelled world "
         "around the preset (seed2-2017 unless --preset or --with-preset names another) "
         "over the wake-up cost and the subscriber's cost."),
    OUTPUT("record", record,
           "Write down what the outside world did for every request of every configuration "
           "(the answer's arrival by the kernel's receive timestamp, every OS sleep, the "
           "client's own CPU), then replay it at once on the simulated clock beside the run."),
    TEXT("replay", "FILE", replay,
         "Replay a --record file on the simulated clock: the same client, scheduler and Delays "
         "against what the recorded run's world did; no nginx, no wall clock. Its "
         "configurations are the file's (the knob options are ignored)."),
    TEXT("url", "URL", url,
         "http://HOST[:PORT][/PATH] of a server already running, HOST 127.0.0.1, [::1] or "
         "localhost: no nginx is started, every response must be status 200 with the first "
         "one's length; wrk runs on it too unless --no-wrk."),
    INT("cpu", "N", "-1", -1, 4095, cpu,
        "Pin the client's thread to this CPU (nginx gets the next one); -1: unpinned."),
    OUTPUT("out", out, "Write the JSON here instead of standard output."),
    OUTPUT("trace", trace,
           "Trace the one configuration's VM (one value per list, --repeat 1) as Trace Event "
           "JSON; `stvm-lab show FILE --html PAGE` draws it."),
    FLAG("quiet", quiet, "No progress lines on standard error."),
    FLAG("no-context", no_context,
         "Leave out what differs between runs and machines (the date, the machine, the "
         "library's build), so that a run on the simulated clock writes the same bytes."),
};
#define NOPTS ((int)(sizeof table / sizeof *table))

int zn_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("znclient: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'znclient --help'.\n", stderr);
    return ZN_EXIT_USAGE;
}

static bool parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno)
        return false;
    *out = v;
    return true;
}

/* "1,2,3", "A..B" and "A..B:STEP" items; false for a bad or out-of-range item, a step
 * below 1, or more than ZN_MAX_LIST values. */
static bool parse_ints(const char *s, long long lo, long long hi, zn_ints *out)
{
    char buf[512];
    zn_ints l = {.n = 0};
    if (!*s || strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    for (char *rest = buf, *item; (item = strsep(&rest, ",")) != NULL;) {
        long long a, b = 0, step = 1;
        char *dots = strstr(item, ".."), *colon = dots ? strchr(dots, ':') : NULL;
        if (colon)
            *colon = 0;
        if (dots)
            *dots = 0;
        if (!parse_ll(item, &a) || (dots && !parse_ll(dots + 2, &b)) ||
            (colon && !parse_ll(colon + 1, &step)))
            return false;
        if (!dots)
            b = a;
        if (step < 1 || a > b || a < lo || b > hi)
            return false;
        for (long long v = a; v <= b; v += step) {
            if (l.n == ZN_MAX_LIST)
                return false;
            l.v[l.n++] = v;
            if (v > b - step)
                break;
        }
    }
    *out = l;
    return true;
}

static int word_index(const char *const *words, const char *w, size_t len)
{
    for (int k = 0; words[k]; k++)
        if (strlen(words[k]) == len && !strncmp(words[k], w, len))
            return k;
    return -1;
}

/* text as o's value into o's field of opts; false (nothing stored) if it is not one. */
static bool parse_value(const opt *o, const char *text, zn_opts *opts)
{
    void *dst = (char *)opts + o->offset;
    long long n;
    switch (o->kind) {
    case OPT_INT:
        if (!parse_ll(text, &n) || n < o->lo || n > o->hi)
            return false;
        *(long long *)dst = n;
        return true;
    case OPT_INTS:
        return parse_ints(text, o->lo, o->hi, dst);
    case OPT_WORD: {
        int k = word_index(o->words, text, strlen(text));
        if (k >= 0)
            *(int *)dst = k;
        return k >= 0;
    }
    case OPT_WORDS: {
        unsigned bits = 0;
        for (const char *p = text;; p++) {
            size_t len = strcspn(p, ",");
            int k = word_index(o->words, p, len);
            if (k < 0)
                return false;
            bits |= 1u << k;
            if (!p[len])
                break;
            p += len;
        }
        *(unsigned *)dst = bits;
        return true;
    }
    case OPT_FLAG:
        *(bool *)dst = true;
        return true;
    default:
        *(const char **)dst = text;
        return true;
    }
}

/* What o wants, for an error message. */
static void wants(FILE *f, const opt *o)
{
    if (o->kind == OPT_INT)
        fprintf(f, "an integer in %lld..%lld", o->lo, o->hi);
    else if (o->kind == OPT_INTS)
        fprintf(f, "a list of integers in %lld..%lld (1,2,3 or A..B:STEP, at most %d)", o->lo,
                o->hi, ZN_MAX_LIST);
    else if (o->kind == OPT_WORD || o->kind == OPT_WORDS) {
        fputs(o->kind == OPT_WORD ? "one of " : "a comma-separated list of ", f);
        for (int k = 0; o->words[k]; k++)
            fprintf(f, "%s%s", k ? ", " : "", o->words[k]);
    }
}

/* Help text wrapped at 80 columns under a 6-space indent. */
static void wrap(FILE *f, const char *text)
{
    int col = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, " ");
        if (col && col + 1 + (int)len > 74) {
            fputc('\n', f);
            col = 0;
        }
        fprintf(f, "%s%.*s", col ? " " : "      ", (int)len, p);
        col += (col ? 1 : 0) + (int)len;
        p += len;
        p += *p == ' ';
    }
    fputc('\n', f);
}

static void help(FILE *f)
{
    fputs("usage: znclient [OPTIONS]\n\n"
          "The ZnClient experiment (experiments/znclient/README.md): a ZnClient-shaped client "
          "in a\nfresh VM per configuration GETs a static file from a local nginx (started for "
          "the\nrun, stopped on every exit path), from --url, from a modelled world (--model) "
          "or\nfrom a recording (--replay); wrk -t1 -c1 runs on the same URL in every "
          "repetition.\nEvery combination of the LISTs runs. It writes JSON (report.py makes "
          "the report\nand the plots of it). Exit status: 0 ran, 1 a run failed or an output "
          "could not\nbe written, 2 a usage error.\n\nOptions:\n", f);
    for (int i = 0; i < NOPTS; i++) {
        const opt *o = &table[i];
        fprintf(f, "  --%s%s%s\n", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        char text[1024];
        FILE *m = fmemopen(text, sizeof text, "w");
        fputs(o->help, m);
        if (o->kind == OPT_INT || o->kind == OPT_INTS || o->kind == OPT_WORD ||
            o->kind == OPT_WORDS) {
            fputs(" Wants ", m);
            wants(m, o);
            fprintf(m, "; default: %s.", o->def);
        }
        fclose(m);
        wrap(f, text);
    }
}

/* An output file: its folder must exist and be writable, and an existing file too. */
static bool writable(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = 0;
    else if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    return access(dir, W_OK | X_OK) == 0 && (access(path, F_OK) != 0 || access(path, W_OK) == 0);
}

int zn_parse(int argc, char **argv, zn_opts *o)
{
    memset(o, 0, sizeof *o);
    struct option longs[NOPTS + 2];
    for (int i = 0; i < NOPTS; i++) {
        longs[i] = (struct option){table[i].name, table[i].kind == OPT_FLAG ? no_argument
                                                                          : required_argument,
                                   NULL, i};
        if (table[i].def && !parse_value(&table[i], table[i].def, o))
            abort();   /* a default the table cannot parse is this file's bug */
    }
    longs[NOPTS] = (struct option){"help", no_argument, NULL, 'h'};
    longs[NOPTS + 1] = (struct option){0};
    opterr = 0;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "h", longs, NULL)) != -1;) {
        if (c == 'h') {
            help(stdout);
            return ZN_EXIT_OK;
        }
        if (c == '?' || c == ':')
            return zn_usage("unknown option or missing value: '%s'", argv[optind - 1]);
        const opt *t = &table[c];
        if (!parse_value(t, optarg ? optarg : "", o)) {
            char w[512] = "";
            FILE *m = fmemopen(w, sizeof w, "w");
            if (m) {
                wants(m, t);
                fclose(m);
            }
            return zn_usage("--%s '%s': wants %s", t->name, optarg, w);
        }
        if (t->kind == OPT_OUTPUT && !writable(optarg))
            return zn_usage("--%s %s: cannot write there", t->name, optarg);
    }
    if (optind < argc)
        return zn_usage("unexpected argument '%s'", argv[optind]);
    return ZN_GO_ON;
}
