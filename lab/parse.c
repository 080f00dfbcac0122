/*
 * The scenario file's parser (docs/scenario-format.md is the format). Line-oriented: a
 * line is a text field ("rule: ..."), a setting, a declaration, the head of a block
 * (process, repeat, expect) or its end, a step or an assertion. Any bytes may come in
 * (the lab must never crash on a file, and tests/fuzz/fuzz_lab_parse.c feeds it
 * anything): every refusal names the file, the line and the column and says what was
 * expected there, and leaves nothing allocated.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define LINE_MAX_BYTES 1000
#define FILE_MAX_BYTES (1 << 20)
#define MAX_OBJECTS 64
#define MAX_PROCESSES 64
#define MAX_STEPS 1000           /* per process */
#define MAX_DEPTH 8              /* repeats inside repeats */
#define MAX_ASSERTS 100
#define MAX_PATTERNS 16          /* events in one order */
#define MAX_TOKENS 48
#define MAX_REPEAT 1000000
#define MAX_DURATION_US 60000000LL /* 60 s: a lesson's Delays, work and timeouts */
#define MAX_TEXT 4000            /* a text field's bytes, continuation lines included */

typedef struct token {
    const char *s;
    int len, col;
} token;

typedef struct parser {
    const char *file;
    char *why;
    size_t why_size;
    int line;
    token tok[MAX_TOKENS];
    int ntok;
    int eol_col;                /* the column just past the line's last character */
    lab_scenario *sc;
    /* the block being read: a process (its index) and its open repeats, or expect */
    int in_process;             /* -1 none */
    int open[MAX_DEPTH];        /* step indexes of the open repeats */
    int open_indent[MAX_DEPTH]; /* and the indentation of their lines */
    int depth;
    int indent;                 /* the present line's indentation */
    int block_indent;           /* the process line's */
    /* An end that closed a repeat from the process's indentation: when the file then
     * ends inside the process, the repeat's own end is the one missing. */
    int suspect_line, suspect_col, suspect_end;
    bool in_expect;
    int osvm_line;              /* an osvm764- setting's, which needs idle-mode osvm764 */
    int block_line, block_col;
    char **text_field;          /* the text field a continuation line extends, or NULL */
    /* names used before they could be resolved: checked at the end */
    struct unresolved {
        int line, col;
        char name[LAB_NAME_MAX];
        int process;            /* -1: an outside event */
        int step;
        unsigned kinds;         /* the object kinds allowed (1 << lab_object_kind); 0: a process */
        const char *role;       /* "a semaphore or monitor", for the message */
    } *unres;
    int nunres;
} parser;

static bool fail_at(parser *p, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail_at(parser *p, int col, const char *fmt, ...)
{
    int n = snprintf(p->why, p->why_size, "%s:%d:%d: ", p->file, p->line, col);
    if (n < 0 || (size_t)n >= p->why_size)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why + n, p->why_size - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

/* The token for a message: at most 40 bytes of it, printable ones only. */
static const char *shown(const token *t, char *buf, size_t size)
{
    size_t n = 0;
    for (int i = 0; i < t->len && n + 5 < size && i < 40; i++)
        buf[n++] = isprint((unsigned char)t->s[i]) ? t->s[i] : '?';
    buf[n] = 0;
    return buf;
}

/* "expected X, found 'tok'" at tok (or at the line's end when i is past it). */
static bool expected(parser *p, int i, const char *what)
{
    if (i >= p->ntok)
        return fail_at(p, p->eol_col, "expected %s at the end of the line", what);
    char buf[64];
    return fail_at(p, p->tok[i].col, "expected %s, found '%s'", what, shown(&p->tok[i], buf, sizeof buf));
}

static bool is(const parser *p, int i, const char *word)
{
    return i < p->ntok && (size_t)p->tok[i].len == strlen(word) &&
           memcmp(p->tok[i].s, word, (size_t)p->tok[i].len) == 0;
}

/* Words are split at blanks; ':' and ',' are tokens of their own. */
static bool tokenize(parser *p, const char *s, int len)
{
    p->ntok = 0;
    p->eol_col = len + 1;
    int i = 0;
    while (i < len) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
            i++;
            continue;
        }
        if (s[i] == '#')   /* a comment to the end of the line */
            break;
        if (p->ntok == MAX_TOKENS)
            return fail_at(p, i + 1, "too many words on one line (at most %d)", MAX_TOKENS);
        token *t = &p->tok[p->ntok++];
        t->s = s + i;
        t->col = i + 1;
        if (s[i] == ':' || s[i] == ',') {
            t->len = 1;
            i++;
            continue;
        }
        while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != ':' &&
               s[i] != ',' && s[i] != '#')
            i++;
        t->len = (int)(s + i - t->s);
    }
    return true;
}

/* A whole number 0 .. max. */
static bool number(parser *p, int i, int64_t max, const char *what, int64_t *out)
{
    if (i >= p->ntok || !isdigit((unsigned char)p->tok[i].s[0]))
        return expected(p, i, what);
    int64_t v = 0;
    for (int k = 0; k < p->tok[i].len; k++) {
        char c = p->tok[i].s[k];
        if (!isdigit((unsigned char)c))
            return expected(p, i, what);
        if (v > (INT64_MAX - 9) / 10)
            return fail_at(p, p->tok[i].col, "%s: the number is too large (at most %lld)", what, (long long)max);
        v = v * 10 + (c - '0');
    }
    if (v > max)
        return fail_at(p, p->tok[i].col, "%s: %lld is too large (at most %lld)", what, (long long)v,
                       (long long)max);
    *out = v;
    return true;
}

static bool is_unit(const parser *p, int i, bool *ms)
{
    if (is(p, i, "ms"))
        return *ms = true;
    if (is(p, i, "us") || is(p, i, "\xc2\xb5s")) {   /* us or µs */
        *ms = false;
        return true;
    }
    return false;
}

/* "N ms" or "N us" at i: the number as written, its unit, and its length in us. */
static bool duration(parser *p, int i, const char *what, int64_t *amount, bool *ms, int64_t *us)
{
    int64_t v;
    if (!number(p, i, MAX_DURATION_US, what, &v))
        return false;
    if (!is_unit(p, i + 1, ms))
        return expected(p, i + 1, "a unit (ms or us)");
    int64_t in_us = *ms ? v * 1000 : v;
    if (in_us > MAX_DURATION_US)
        return fail_at(p, p->tok[i].col, "%s: %lld %s is longer than the lab's 60 s", what,
                       (long long)v, *ms ? "ms" : "us");
    *amount = v;
    if (us)
        *us = in_us;
    return true;
}

/* A time with up to three decimals in ms ("1.060 ms") or a whole number of us. */
static bool time_point(parser *p, int i, int64_t *us)
{
    if (i >= p->ntok || !isdigit((unsigned char)p->tok[i].s[0]))
        return expected(p, i, "a time, such as 1.060 ms or 40 us");
    const token *t = &p->tok[i];
    int64_t whole = 0, frac = 0;
    int k = 0, decimals = -1;
    for (; k < t->len; k++) {
        char c = t->s[k];
        if (c == '.' && decimals < 0) {
            decimals = 0;
            continue;
        }
        if (!isdigit((unsigned char)c) || decimals >= 3 || whole > MAX_DURATION_US * 1000)
            return expected(p, i, "a time, such as 1.060 ms or 40 us (at most 3 decimals)");
        if (decimals >= 0) {
            frac = frac * 10 + (c - '0');
            decimals++;
        } else {
            whole = whole * 10 + (c - '0');
        }
    }
    bool ms;
    if (!is_unit(p, i + 1, &ms))
        return expected(p, i + 1, "a unit (ms or us)");
    if (!ms && decimals >= 0)
        return fail_at(p, t->col, "a time in us is a whole number");
    while (decimals > 0 && decimals < 3) {
        frac *= 10;
        decimals++;
    }
    *us = ms ? whole * 1000 + frac : whole;
    if (*us > MAX_DURATION_US * 1000LL)
        return fail_at(p, t->col, "the time is past what a lesson runs (60000 s)");
    return true;
}

static bool name_token(parser *p, int i, const char *what, char out[LAB_NAME_MAX])
{
    if (i >= p->ntok)
        return expected(p, i, what);
    const token *t = &p->tok[i];
    bool ok = t->len < LAB_NAME_MAX && isalpha((unsigned char)t->s[0]);
    for (int k = 0; ok && k < t->len; k++)
        ok = isalnum((unsigned char)t->s[k]) || t->s[k] == '_' || t->s[k] == '-';
    if (!ok) {
        char buf[64];
        return fail_at(p, t->col,
                       "expected %s (a letter, then letters, digits, '-' or '_', at most %d), found '%s'",
                       what, LAB_NAME_MAX - 1, shown(t, buf, sizeof buf));
    }
    memcpy(out, t->s, (size_t)t->len);
    out[t->len] = 0;
    return true;
}

static bool line_ends(parser *p, int i)
{
    if (i < p->ntok) {
        char buf[64];
        return fail_at(p, p->tok[i].col, "unexpected '%s' (the line should end here)",
                       shown(&p->tok[i], buf, sizeof buf));
    }
    return true;
}

static int find_object(const lab_scenario *sc, const char *name)
{
    for (int i = 0; i < sc->nobjects; i++)
        if (strcmp(sc->objects[i].name, name) == 0)
            return i;
    return -1;
}

static int find_process(const lab_scenario *sc, const char *name)
{
    for (int i = 0; i < sc->nprocesses; i++)
        if (strcmp(sc->processes[i].name, name) == 0)
            return i;
    return -1;
}

static const char *const reserved[] = {"self", "idle", "timing", "host", "any", NULL};

static bool declare_name(parser *p, int i, char out[LAB_NAME_MAX])
{
    if (!name_token(p, i, "a name", out))
        return false;
    for (const char *const *r = reserved; *r; r++)
        if (strcmp(out, *r) == 0)
            return fail_at(p, p->tok[i].col, "'%s' is a reserved word, not a name", out);
    if (find_object(p->sc, out) >= 0 || find_process(p->sc, out) >= 0)
        return fail_at(p, p->tok[i].col, "'%s' is declared twice", out);
    return true;
}

/* Remember a name to resolve once the whole file is read (it may be declared later). */
static bool refer(parser *p, int i, int process, int step, unsigned kinds, const char *role)
{
    char name[LAB_NAME_MAX];
    if (!name_token(p, i, role, name))
        return false;
    struct unresolved *u = realloc(p->unres, sizeof *u * (size_t)(p->nunres + 1));
    if (!u)
        return fail_at(p, p->tok[i].col, "out of memory");
    p->unres = u;
    u += p->nunres++;
    *u = (struct unresolved){p->line, p->tok[i].col, "", process, step, kinds, role};
    memcpy(u->name, name, sizeof name);
    return true;
}

static char *text_copy(const char *s, int len)
{
    char *t = malloc((size_t)len + 1);
    if (t) {
        memcpy(t, s, (size_t)len);
        t[len] = 0;
    }
    return t;
}

/* "key: text": a field of its own, which indented lines after it continue. */
static bool text_field(parser *p, const char *s, int len, int indent)
{
    static const char *const keys[] = {"title", "setup", "question", "rule", "answer", NULL};
    char **fields[] = {&p->sc->title, &p->sc->setup, &p->sc->question, &p->sc->rule, &p->sc->answer};
    int k = 0, key = (int)strcspn(s + indent, ":");
    for (; keys[k]; k++)
        if ((size_t)key == strlen(keys[k]) && memcmp(s + indent, keys[k], (size_t)key) == 0)
            break;
    if (!keys[k])
        return false;   /* not a text field */
    if (*fields[k])
        return fail_at(p, indent + 1, "a second '%s:' (each text is given once)", keys[k]);
    int from = indent + key + 1;
    while (from < len && (s[from] == ' ' || s[from] == '\t'))
        from++;
    int to = len;
    while (to > from && (s[to - 1] == ' ' || s[to - 1] == '\t' || s[to - 1] == '\r'))
        to--;
    if (to == from)
        return fail_at(p, from + 1, "expected the text of '%s:' after the colon", keys[k]);
    if (!(*fields[k] = text_copy(s + from, to - from)))
        return fail_at(p, 1, "out of memory");
    p->text_field = fields[k];
    return true;
}

static bool continue_text(parser *p, const char *s, int len)
{
    int from = 0, to = len;
    while (from < len && (s[from] == ' ' || s[from] == '\t'))
        from++;
    while (to > from && (s[to - 1] == ' ' || s[to - 1] == '\t' || s[to - 1] == '\r'))
        to--;
    size_t had = strlen(*p->text_field);
    if (had + (size_t)(to - from) + 2 > MAX_TEXT)
        return fail_at(p, from + 1, "the text is longer than %d bytes", MAX_TEXT);
    char *t = realloc(*p->text_field, had + (size_t)(to - from) + 2);
    if (!t)
        return fail_at(p, 1, "out of memory");
    t[had] = ' ';
    memcpy(t + had + 1, s + from, (size_t)(to - from));
    t[had + 1 + (to - from)] = 0;
    *p->text_field = t;
    return true;
}

/* ---- settings and declarations -------------------------------------------------- */

static bool on_off(parser *p, int i, bool *out)
{
    if (is(p, i, "on") || is(p, i, "off")) {
        *out = is(p, i, "on");
        return line_ends(p, i + 1);
    }
    return expected(p, i, "on or off");
}

/* One reader a setting: the words after the setting's own, into the configuration. */
static bool smallint_bits(parser *p, stvm_config *c)
{
    if (!is(p, 1, "31") && !is(p, 1, "61"))
        return expected(p, 1, "31 or 61");
    c->smallint_bits = is(p, 1, "31") ? 31 : 61;
    return line_ends(p, 2);
}

static bool preemption_yields(parser *p, stvm_config *c)
{
    return on_off(p, 1, &c->preemption_yields);
}

static bool delay_clock(parser *p, stvm_config *c)
{
    bool ms;
    if (!is_unit(p, 1, &ms))
        return expected(p, 1, "ms or us");
    c->delay_clock = ms ? STVM_DELAY_CLOCK_MS : STVM_DELAY_CLOCK_US;
    return line_ends(p, 2);
}

static bool ms_clock_start(parser *p, stvm_config *c)
{
    int64_t v;
    if (!number(p, 1, 0x1FFFFFFF, "the millisecond clock's first value", &v))
        return false;
    c->ms_clock_start = (uint32_t)v;
    return line_ends(p, 2);
}

/* "idle-mode NAME": the library's name of a mode (stvm_idle_mode_name). */
static bool idle_mode(parser *p, stvm_config *c)
{
    char names[200] = "";   /* "poll, legacy, spin or osvm764" */
    for (int m = 0; m < STVM_IDLE_MODES; m++) {
        if (is(p, 1, stvm_idle_mode_name(m))) {
            c->idle_mode = m;
            return line_ends(p, 2);
        }
        size_t n = strlen(names);
        snprintf(names + n, sizeof names - n, "%s%s", m == 0 ? "" : m + 1 < STVM_IDLE_MODES ? ", " : " or ",
                 stvm_idle_mode_name(m));
    }
    return expected(p, 1, names);
}

static bool osvm764_fix(parser *p, stvm_config *c)   /* opensmalltalk-vm #785's fixes to #764 */
{
    if (is(p, 1, "clock"))
        c->osvm764_fixes |= STVM_OSVM764_FIX_CLOCK;
    else if (is(p, 1, "idle-flag"))
        c->osvm764_fixes |= STVM_OSVM764_FIX_IDLE_FLAG;
    else
        return expected(p, 1, "clock or idle-flag");
    p->osvm_line = p->line;
    return line_ends(p, 2);
}

static bool osvm764_idle_beat(parser *p, stvm_config *c)
{
    int64_t amount, us;
    bool ms;
    if (!duration(p, 1, "the heartbeat's idle period", &amount, &ms, &us))
        return false;
    if (us < 2000 || us > 1000000)
        return fail_at(p, p->tok[1].col, "the heartbeat's idle period is 2 ms to 1 s");
    c->osvm764_idle_beat_us = (uint32_t)us;
    p->osvm_line = p->line;
    return line_ends(p, 3);
}

static bool idle_relinquish(parser *p, stvm_config *c)
{
    int64_t amount, us;
    bool ms;
    if (!duration(p, 1, "the idle process's quantum", &amount, &ms, &us))
        return false;
    /* Each quantum is one jump of the simulated clock: a tiny one would make a long
     * run cost millions of them. */
    if (us != 0 && us < 100)
        return fail_at(p, p->tok[1].col, "the idle process's quantum is 0 (until due) or 100 us to 60 s");
    c->idle_relinquish_us = (uint32_t)us;
    return line_ends(p, 3);
}

/* "cost OP N us": stvm_sim_set_cost's, kept in the scenario (play.c sets them). */
static bool cost(parser *p, stvm_config *c)
{
    static const char *const ops[] = {"switch", "signal", "wait", "delay"};
    (void)c;
    for (int op = 0; op < STVM_SIM_COST_OPS; op++)   /* STVM_SIM_COST_SWITCH .. */
        if (is(p, 1, ops[op])) {
            int64_t amount, us;
            bool ms;
            if (!duration(p, 2, "the operation's modelled cost", &amount, &ms, &us))
                return false;
            if (us > STVM_SIM_COST_MAX_US)
                return fail_at(p, p->tok[2].col, "a modelled cost is at most %d us",
                               STVM_SIM_COST_MAX_US);
            p->sc->cost_us[op] = (uint32_t)us;
            return line_ends(p, 4);
        }
    return expected(p, 1, "switch, signal, wait or delay");
}

static const struct {
    const char *word;
    bool (*read)(parser *p, stvm_config *c);
} settings[] = {
    {"smallint-bits", smallint_bits},   {"preemption-yields", preemption_yields},
    {"delay-clock", delay_clock},       {"ms-clock-start", ms_clock_start},
    {"idle-mode", idle_mode},           {"osvm764-fix", osvm764_fix},
    {"osvm764-idle-beat", osvm764_idle_beat}, {"idle-relinquish", idle_relinquish},
    {"cost", cost},
};

/* A setting's line, *matched; a line that is none is left to the other readers. */
static bool setting(parser *p, bool *matched)
{
    for (size_t k = 0; k < sizeof settings / sizeof settings[0]; k++)
        if (is(p, 0, settings[k].word)) {
            *matched = true;
            return settings[k].read(p, &p->sc->cfg);
        }
    *matched = false;
    return true;
}

static bool declaration(parser *p, bool *matched)
{
    static const char *const words[] = {"semaphore", "external", "mutex", "monitor", "queue", "wire"};
    *matched = false;
    for (int k = 0; k < 6; k++) {
        if (!is(p, 0, words[k]))
            continue;
        *matched = true;
        if (p->sc->nobjects == MAX_OBJECTS)
            return fail_at(p, 1, "more than %d objects", MAX_OBJECTS);
        lab_object o = {.kind = (lab_object_kind)k, .line = p->line, .col = p->tok[0].col};
        if (!declare_name(p, 1, o.name))
            return false;
        int next = 2;
        if (k == LAB_QUEUE && is(p, 2, "capacity")) {
            if (!number(p, 3, 1000000, "the queue's capacity", &o.capacity))
                return false;
            next = 4;
        }
        if (k == LAB_MONITOR && is(p, 2, "pharo")) {   /* Pharo's Monitor, transcribed */
            o.pharo = true;
            next = 3;
        }
        if (!line_ends(p, next))
            return false;
        lab_object *grown = realloc(p->sc->objects, sizeof o * (size_t)(p->sc->nobjects + 1));
        if (!grown)
            return fail_at(p, 1, "out of memory");
        p->sc->objects = grown;
        grown[p->sc->nobjects++] = o;
        return true;
    }
    return true;
}

/* "outside in|at T UNIT: data WIRE | signal EXTERNAL" from token 1; in_process for "in". */
static bool outside_event(parser *p, int process, int step, lab_outside_action *action, int64_t *at_us)
{
    bool in = is(p, 1, "in");
    if (process >= 0 ? !in : !is(p, 1, "at"))
        return expected(p, 1, process >= 0 ? "'in' (a step's outside event comes a time after the step)"
                                           : "'at' (outside a process an event is at a time from the start)");
    int64_t amount;
    bool ms;
    if (!duration(p, 2, "the event's time", &amount, &ms, at_us))
        return false;
    if (!is(p, 4, ":"))
        return expected(p, 4, "':' after the time");
    unsigned kinds;
    if (is(p, 5, "data")) {
        *action = LAB_DATA;
        kinds = 1u << LAB_WIRE;
    } else if (is(p, 5, "signal")) {
        *action = LAB_EXT_SIGNAL;
        kinds = 1u << LAB_EXTERNAL;
    } else {
        return expected(p, 5, "data (the peer answers on a wire) or signal (an external semaphore)");
    }
    if (!refer(p, 6, process, step, kinds, *action == LAB_DATA ? "a wire" : "an external semaphore"))
        return false;
    return line_ends(p, 7);
}

/* ---- processes and their steps -------------------------------------------------- */

static lab_step *new_step(parser *p, lab_op op)
{
    lab_process *pr = &p->sc->processes[p->in_process];
    if (pr->nsteps == MAX_STEPS) {
        fail_at(p, p->tok[0].col, "more than %d steps in process %s", MAX_STEPS, pr->name);
        return NULL;
    }
    lab_step *grown = realloc(pr->steps, sizeof *grown * (size_t)(pr->nsteps + 1));
    if (!grown) {
        fail_at(p, 1, "out of memory");
        return NULL;
    }
    pr->steps = grown;
    lab_step *s = &grown[pr->nsteps++];
    *s = (lab_step){.op = op, .line = p->line, .col = p->tok[0].col, .target = -1, .timeout_ms = -1,
                    .queue = -1};
    return s;
}

/* "[timeout N ms]" at i, then the line's end. */
static bool optional_timeout(parser *p, int i, lab_step *s)
{
    if (!is(p, i, "timeout"))
        return line_ends(p, i);
    int64_t amount, us;
    bool ms;
    if (!duration(p, i + 1, "the timeout", &amount, &ms, &us))
        return false;
    if (!ms)
        return fail_at(p, p->tok[i + 2].col, "a timeout is in ms");
    s->timeout_ms = amount;
    return line_ends(p, i + 3);
}

/* "on N" at i: a monitor's condition queue, 0 .. STVM_MONITOR_QUEUES-1. */
static bool condition_queue(parser *p, int i, lab_step *s)
{
    int64_t q;
    if (!number(p, i + 1, 1000, "a condition queue", &q))
        return false;
    if (q >= STVM_MONITOR_QUEUES)
        return fail_at(p, p->tok[i + 1].col, "a monitor's condition queue is 0 to %d, not %lld",
                       STVM_MONITOR_QUEUES - 1, (long long)q);
    s->queue = (int)q;
    return true;
}

/* A step's word, the step it makes and the reader of the rest of its line. */
typedef struct step_kind step_kind;
struct step_kind {
    const char *word;
    lab_op op;
    bool (*read)(parser *p, const step_kind *k, int index);   /* index: the step's */
    unsigned kinds;             /* a step on an object: the kinds it takes */
    const char *role;           /* ... as a message names them */
    unsigned flags;             /* STEP_* */
};
#define STEP_ON_QUEUE 1u        /* "on N": a monitor's condition queue */
#define STEP_TIMEOUT 2u         /* "[timeout N ms]" */
#define STEP_NEEDS_TIMEOUT 4u   /* "timeout N ms", not optional */
#define STEP_SELF 8u            /* a step on a process: "self" names the one running it */

/* wait, signal, enter, put, take, send, read, ...: "WORD OBJECT [on N] [timeout N ms]". */
static bool object_step(parser *p, const step_kind *k, int index)
{
    /* "on N" names a monitor's condition queue, so the object must be a monitor. */
    bool on = (k->flags & STEP_ON_QUEUE) && is(p, 2, "on");
    lab_step *s = new_step(p, k->op);
    if (!s || !refer(p, 1, p->in_process, index, on ? 1u << LAB_MONITOR : k->kinds,
                     on ? "a monitor (a condition queue is a monitor's)" : k->role))
        return false;
    int next = 2;
    if (on) {
        if (!condition_queue(p, 2, s))
            return false;
        next = 4;
    }
    if (!(k->flags & (STEP_TIMEOUT | STEP_NEEDS_TIMEOUT)))
        return line_ends(p, next);
    if (!optional_timeout(p, next, s))
        return false;
    if ((k->flags & STEP_NEEDS_TIMEOUT) && s->timeout_ms < 0)
        return fail_at(p, p->eol_col, "expected 'timeout N ms' after the wire (a read without "
                                      "one could wait for ever)");
    return true;
}

/* "delay N ms|us" (kept as written) and "work N us" (kept in us). */
static bool length_step(parser *p, const step_kind *k, int index)
{
    bool work = k->op == LAB_WORK;
    int64_t us;
    lab_step *s = new_step(p, k->op);
    (void)index;
    if (!s || !duration(p, 1, work ? "the work's length" : "the Delay's length", &s->amount,
                        &s->in_ms, &us))
        return false;
    if (work && us > STVM_MAX_WORK_US)
        return fail_at(p, p->tok[1].col, "work is at most 1 s a step (use a repeat)");
    s->amount = work ? us : s->amount;
    return line_ends(p, 3);
}

/* checkpoint, yield: the word alone. */
static bool bare_step(parser *p, const step_kind *k, int index)
{
    (void)index;
    return new_step(p, k->op) && line_ends(p, 1);
}

/* The process a step on a process names at token 1 (self where the step allows it). */
static lab_step *on_process(parser *p, const step_kind *k, int index)
{
    lab_step *s = new_step(p, k->op);
    if (!s)
        return NULL;
    if ((k->flags & STEP_SELF) && is(p, 1, "self"))
        s->target = LAB_SELF;
    else if (!refer(p, 1, p->in_process, index, 0, "a process's name"))
        return NULL;
    return s;
}

/* spawn, resume, terminate, interrupt: "WORD PROCESS". */
static bool process_step(parser *p, const step_kind *k, int index)
{
    return on_process(p, k, index) && line_ends(p, 2);
}

/* "join PROCESS [timeout N ms]". */
static bool join_step(parser *p, const step_kind *k, int index)
{
    lab_step *s = on_process(p, k, index);
    return s && optional_timeout(p, 2, s);
}

/* "suspend PROCESS [primitive 88|568|578]" (the primitive in amount; 0: the C call). */
static bool suspend_step(parser *p, const step_kind *k, int index)
{
    lab_step *s = on_process(p, k, index);
    if (!s)
        return false;
    if (!is(p, 2, "primitive"))
        return line_ends(p, 2);
    if (!number(p, 3, 1000, "a suspend primitive, 88, 568 or 578", &s->amount))
        return false;
    if (s->amount != 88 && s->amount != 568 && s->amount != 578)
        return fail_at(p, p->tok[3].col, "a suspend primitive is 88, 568 or 578, not %lld",
                       (long long)s->amount);
    return line_ends(p, 4);
}

/* "priority PROCESS N". */
static bool priority_step(parser *p, const step_kind *k, int index)
{
    lab_step *s = on_process(p, k, index);
    if (!s || !number(p, 2, 1000, "a priority, 1 to 80", &s->amount))
        return false;
    if (s->amount < 1 || s->amount > 80)
        return fail_at(p, p->tok[2].col, "a priority is 1 to 80, not %lld", (long long)s->amount);
    return line_ends(p, 3);
}

/* "outside in T UNIT: data WIRE | signal EXTERNAL". */
static bool outside_step(parser *p, const step_kind *k, int index)
{
    lab_outside_action action;
    int64_t us;
    if (!new_step(p, k->op) || !outside_event(p, p->in_process, index, &action, &us))
        return false;
    lab_step *s = &p->sc->processes[p->in_process].steps[index];
    s->action = action;
    s->amount = us;
    return true;
}

/* "repeat N" and "ensure": a block of steps up to its own end. */
static bool block_step(parser *p, const step_kind *k, int index)
{
    bool repeat = k->op == LAB_REPEAT;
    if (p->depth == MAX_DEPTH)
        return fail_at(p, p->tok[0].col, "repeats and ensures nested more than %d deep", MAX_DEPTH);
    lab_step *s = new_step(p, k->op);
    if (!s || (repeat && !number(p, 1, MAX_REPEAT, "a repeat's count", &s->amount)))
        return false;
    p->open_indent[p->depth] = p->indent;
    p->open[p->depth++] = index;
    return line_ends(p, repeat ? 2 : 1);
}

#define SEMS (1u << LAB_SEMAPHORE | 1u << LAB_EXTERNAL)
#define MON (1u << LAB_MONITOR)
#define MUTEX_OR_MON (1u << LAB_MUTEX | MON)
#define QUEUE (1u << LAB_QUEUE), "a queue"
#define WIRE (1u << LAB_WIRE), "a wire"

/* Every step, in the order the message for an unknown one names them. */
static const step_kind step_kinds[] = {
    {"wait", LAB_WAIT, object_step, SEMS | MON, "a semaphore or monitor", STEP_ON_QUEUE | STEP_TIMEOUT},
    {"signal", LAB_SIGNAL, object_step, SEMS | MON, "a semaphore or monitor", STEP_ON_QUEUE},
    {"signal-all", LAB_SIGNAL_ALL, object_step, MON, "a monitor", STEP_ON_QUEUE},
    {"enter", LAB_ENTER, object_step, MUTEX_OR_MON, "a mutex or monitor", STEP_TIMEOUT},
    {"exit", LAB_EXIT, object_step, MUTEX_OR_MON, "a mutex or monitor", 0},
    {"put", LAB_PUT, object_step, QUEUE, STEP_TIMEOUT},
    {"take", LAB_TAKE, object_step, QUEUE, STEP_TIMEOUT},
    {"try-take", LAB_TRY_TAKE, object_step, QUEUE, 0},
    {"peek", LAB_PEEK, object_step, QUEUE, 0},
    {"flush", LAB_FLUSH, object_step, QUEUE, 0},
    {"delay", LAB_DELAY, length_step, 0, NULL, 0},
    {"work", LAB_WORK, length_step, 0, NULL, 0},
    {"checkpoint", LAB_CHECKPOINT, bare_step, 0, NULL, 0},
    {"yield", LAB_YIELD, bare_step, 0, NULL, 0},
    {"spawn", LAB_SPAWN, process_step, 0, NULL, 0},
    {"suspend", LAB_SUSPEND, suspend_step, 0, NULL, STEP_SELF},
    {"resume", LAB_RESUME, process_step, 0, NULL, 0},
    {"terminate", LAB_TERMINATE, process_step, 0, NULL, STEP_SELF},
    {"priority", LAB_PRIORITY, priority_step, 0, NULL, STEP_SELF},
    {"interrupt", LAB_INTERRUPT, process_step, 0, NULL, STEP_SELF},
    {"join", LAB_JOIN, join_step, 0, NULL, 0},
    {"send", LAB_SEND, object_step, WIRE, 0},
    {"read", LAB_READ, object_step, WIRE, STEP_NEEDS_TIMEOUT},
    {"outside", LAB_OUTSIDE, outside_step, 0, NULL, 0},
    {"repeat", LAB_REPEAT, block_step, 0, NULL, 0},
    {"ensure", LAB_ENSURE, block_step, 0, NULL, 0},
};
#undef SEMS
#undef MON
#undef MUTEX_OR_MON
#undef QUEUE
#undef WIRE

/* "a step: wait, signal, ..., ensure or end", for a line that is none. */
static const char *steps_named(char *buf, size_t size)
{
    int n = snprintf(buf, size, "a step: ");
    for (size_t k = 0; k < sizeof step_kinds / sizeof step_kinds[0]; k++)
        n += snprintf(buf + n, size - (size_t)n, "%s, ", step_kinds[k].word);
    snprintf(buf + n - 2, size - (size_t)n + 2, " or end");
    return buf;
}

/* "end": a repeat's or ensure's, or the process's. */
static bool block_end(parser *p)
{
    lab_process *pr = &p->sc->processes[p->in_process];
    if (!line_ends(p, 1))
        return false;
    if (p->depth == 0) {
        p->in_process = -1;
        return true;
    }
    int r = p->open[--p->depth];
    pr->steps[r].end = pr->nsteps;
    if (p->indent < p->open_indent[p->depth] && p->indent <= p->block_indent && !p->suspect_line) {
        p->suspect_line = pr->steps[r].line;
        p->suspect_col = pr->steps[r].col;
        p->suspect_end = p->line;
    }
    return true;
}

/* A line inside a process: a step, or an end. */
static bool step(parser *p)
{
    if (is(p, 0, "end"))
        return block_end(p);
    int index = p->sc->processes[p->in_process].nsteps;
    for (size_t k = 0; k < sizeof step_kinds / sizeof step_kinds[0]; k++)
        if (is(p, 0, step_kinds[k].word))
            return step_kinds[k].read(p, &step_kinds[k], index);
    char list[400];
    return expected(p, 0, steps_named(list, sizeof list));
}

static bool process_head(parser *p)
{
    if (p->sc->nprocesses == MAX_PROCESSES)
        return fail_at(p, 1, "more than %d processes", MAX_PROCESSES);
    lab_process pr = {.line = p->line, .col = p->tok[0].col};
    int64_t prio, us;
    if (!declare_name(p, 1, pr.name))
        return false;
    if (!is(p, 2, "priority"))
        return expected(p, 2, "'priority' and a priority, 1 to 80");
    if (!number(p, 3, 1000, "a priority, 1 to 80", &prio))
        return false;
    if (prio < 1 || prio > 80)
        return fail_at(p, p->tok[3].col, "a priority is 1 to 80, not %lld", (long long)prio);
    pr.priority = (int)prio;
    int next = 4;
    if (is(p, 4, "start")) {
        if (!duration(p, 5, "the start time", &pr.start, &pr.start_in_ms, &us))
            return false;
        pr.starts = true;
        next = 7;
    }
    if (!line_ends(p, next))
        return false;
    lab_process *grown = realloc(p->sc->processes, sizeof pr * (size_t)(p->sc->nprocesses + 1));
    if (!grown)
        return fail_at(p, 1, "out of memory");
    p->sc->processes = grown;
    grown[p->sc->nprocesses] = pr;
    p->in_process = p->sc->nprocesses++;
    p->depth = 0;
    p->block_line = p->line;
    p->block_col = p->tok[0].col;
    p->block_indent = p->indent;
    p->suspect_line = 0;
    return true;
}

/* ---- the expected answer -------------------------------------------------------- */

static const char *const event_words[] = {
    "preempted", "waited", "yielded", "finished", "idle", "suspended", "host",   /* switch */
    "blocks", "takes",                                                          /* sem-wait */
    "timer", "io", "external", "timeout", "outside",                            /* idle-sleep */
    "none", NULL};

/* "PROCESS KIND [WORD...]" from token *i to the next ',' or the line's end. */
static bool pattern(parser *p, int *i, lab_pattern *pat)
{
    *pat = (lab_pattern){.line = p->line, .col = *i < p->ntok ? p->tok[*i].col : p->eol_col};
    if (!name_token(p, *i, "an event: a process (or idle, timing, host, any), then an event kind",
                    pat->process))
        return false;
    bool alias = false;
    for (const char *const *r = reserved + 1; *r; r++)
        alias |= strcmp(pat->process, *r) == 0;
    if (!alias && find_process(p->sc, pat->process) < 0)
        return fail_at(p, p->tok[*i].col, "no process '%s' is declared (an event names a process, "
                                          "or idle, timing, host or any)", pat->process);
    (*i)++;
    pat->kind = -1;
    for (int k = 0; k < STVM_TRACE_KINDS && *i < p->ntok; k++)
        if (is(p, *i, stvm_trace_kind_name(k)))
            pat->kind = k;
    if (pat->kind < 0)
        return expected(p, *i, "an event kind as the timeline names it (switch, sem-wait, "
                               "mutex-enter, finished, ...)");
    (*i)++;
    while (*i < p->ntok && !is(p, *i, ",")) {
        if (pat->nwords == LAB_PATTERN_WORDS)
            return fail_at(p, p->tok[*i].col, "at most %d words after an event's kind", LAB_PATTERN_WORDS);
        char *w = pat->words[pat->nwords];
        if (!name_token(p, *i, "a word of the event (an object, a process, or a reason)", w))
            return false;
        bool known = find_object(p->sc, w) >= 0 || find_process(p->sc, w) >= 0;
        for (const char *const *r = reserved + 1; *r && !known; r++)
            known = strcmp(w, *r) == 0;
        for (const char *const *e = event_words; *e && !known; e++)
            known = strcmp(w, *e) == 0;
        if (!known)
            return fail_at(p, p->tok[*i].col, "'%s' is neither a declared object or process nor a "
                                              "word of an event (blocks, takes, preempted, waited, "
                                              "yielded, finished, ...)", w);
        pat->nwords++;
        (*i)++;
    }
    return true;
}

/* What comes before an assertion's events: its op, its number, the token its events
 * start at, and how many it may name (0: none). */
static bool assertion_head(parser *p, lab_assert *a, int *i, int *max_patterns)
{
    *i = 1;
    *max_patterns = 1;
    if (is(p, 0, "order")) {
        a->op = LAB_ORDER;
        *max_patterns = MAX_PATTERNS;
    } else if (is(p, 0, "count")) {
        a->op = LAB_COUNT;
        *i = 2;
        return number(p, 1, 1000000, "how many times", &a->number);
    } else if (is(p, 0, "never")) {
        a->op = LAB_NEVER;
    } else if (is(p, 0, "at")) {
        a->op = LAB_AT;
        *i = 3;
        return time_point(p, 1, &a->number);
    } else if (is(p, 0, "outcome")) {
        a->op = LAB_OUTCOME;
        if (!is(p, 1, "finished") && !is(p, 1, "deadlock"))
            return expected(p, 1, "finished or deadlock");
        a->number = is(p, 1, "deadlock");
        *max_patterns = 0;
        *i = 2;
    } else {
        return expected(p, 0, "an assertion: order, count, never, at, outcome, or end");
    }
    return true;
}

/* The events from token *i to the line's end: one, or an order's two or more, ','
 * between them. */
static bool assertion_events(parser *p, lab_assert *a, int *i, int max_patterns)
{
    a->patterns = calloc((size_t)max_patterns, sizeof *a->patterns);
    if (!a->patterns)
        return fail_at(p, 1, "out of memory");
    for (;;) {
        if (!pattern(p, i, &a->patterns[a->npatterns++]))
            return false;
        if (!is(p, *i, ","))
            break;
        if (a->npatterns == max_patterns)
            return fail_at(p, p->tok[*i].col, a->op == LAB_ORDER ? "at most %d events in an order"
                                                                 : "one event here (%d)", max_patterns);
        (*i)++;
    }
    if (a->op == LAB_ORDER && a->npatterns < 2)
        return expected(p, *i, "',' and a second event (an order names two or more)");
    return true;
}

/* A line of the expect block: an assertion, or its end. */
static bool assertion(parser *p)
{
    if (is(p, 0, "end")) {
        p->in_expect = false;
        return line_ends(p, 1);
    }
    if (p->sc->nasserts == MAX_ASSERTS)
        return fail_at(p, 1, "more than %d assertions", MAX_ASSERTS);
    lab_assert a = {.line = p->line, .col = p->tok[0].col};
    int i, max_patterns;
    if (!assertion_head(p, &a, &i, &max_patterns) ||
        (max_patterns && !assertion_events(p, &a, &i, max_patterns)) || !line_ends(p, i)) {
        free(a.patterns);
        return false;
    }
    const token *last = &p->tok[p->ntok - 1];
    snprintf(a.source, sizeof a.source, "%.*s", (int)(last->s + last->len - p->tok[0].s), p->tok[0].s);
    lab_assert *grown = realloc(p->sc->asserts, sizeof a * (size_t)(p->sc->nasserts + 1));
    if (!grown) {
        free(a.patterns);
        return fail_at(p, 1, "out of memory");
    }
    p->sc->asserts = grown;
    grown[p->sc->nasserts++] = a;
    return true;
}

/* ---- the file ------------------------------------------------------------------- */

static bool top_level(parser *p)
{
    bool matched;
    if (!setting(p, &matched) || matched)
        return !p->why[0];
    if (!declaration(p, &matched) || matched)
        return !p->why[0];
    if (is(p, 0, "process"))
        return process_head(p);
    if (is(p, 0, "expect")) {
        if (p->sc->has_expect)
            return fail_at(p, p->tok[0].col, "a second expect block (the expected answer is one block)");
        p->sc->has_expect = p->in_expect = true;
        p->block_line = p->line;
        p->block_col = p->tok[0].col;
        return line_ends(p, 1);
    }
    if (is(p, 0, "outside")) {
        lab_outside o = {.line = p->line, .col = p->tok[0].col};
        int64_t us;
        if (!outside_event(p, -1, p->sc->noutside, &o.action, &us))
            return false;
        o.at_us = (uint64_t)us;
        lab_outside *grown = realloc(p->sc->outside, sizeof o * (size_t)(p->sc->noutside + 1));
        if (!grown)
            return fail_at(p, 1, "out of memory");
        p->sc->outside = grown;
        grown[p->sc->noutside++] = o;
        return true;
    }
    if (is(p, 0, "end"))
        return fail_at(p, p->tok[0].col, "'end' with no block open (process, repeat or expect)");
    return expected(p, 0, "a text (title:, setup:, question:, rule:, answer:), a setting "
                          "(smallint-bits, preemption-yields, delay-clock, ms-clock-start, "
                          "idle-mode, idle-relinquish, osvm764-fix, osvm764-idle-beat, cost), a "
                          "declaration (semaphore, external, mutex, monitor, queue, wire), "
                          "process, outside or expect");
}

static bool resolve(parser *p)
{
    static const char *const kind_words[] = {"semaphore", "external semaphore", "mutex",
                                             "monitor", "queue", "wire"};
    for (int i = 0; i < p->nunres; i++) {
        struct unresolved *u = &p->unres[i];
        p->line = u->line;
        int *target = u->process < 0 ? &p->sc->outside[u->step].target
                                     : &p->sc->processes[u->process].steps[u->step].target;
        if (!u->kinds) {
            if ((*target = find_process(p->sc, u->name)) < 0)
                return fail_at(p, u->col, "no process named '%s' is declared", u->name);
            continue;
        }
        *target = find_object(p->sc, u->name);
        if (*target < 0)
            return fail_at(p, u->col, "no %s named '%s' is declared", strchr(u->role, ' ') + 1,
                           u->name);
        lab_object_kind k = p->sc->objects[*target].kind;
        if (!(u->kinds & 1u << k))
            return fail_at(p, u->col, "'%s' is a %s (declared at line %d), expected %s", u->name,
                           kind_words[k], p->sc->objects[*target].line, u->role);
        const lab_step *st = u->process >= 0 ? &p->sc->processes[u->process].steps[u->step] : NULL;
        if (p->sc->objects[*target].pharo && st &&
            ((st->op != LAB_ENTER && st->op != LAB_EXIT) || st->timeout_ms >= 0))
            return fail_at(p, u->col, "'%s' is Pharo's Monitor (declared at line %d): its steps "
                           "are enter and exit, without a timeout (its critical:)", u->name,
                           p->sc->objects[*target].line);
    }
    return true;
}

void lab_scenario_free(lab_scenario *s)
{
    free(s->title);
    free(s->setup);
    free(s->question);
    free(s->rule);
    free(s->answer);
    free(s->objects);
    for (int i = 0; i < s->nprocesses; i++)
        free(s->processes[i].steps);
    free(s->processes);
    free(s->outside);
    for (int i = 0; i < s->nasserts; i++)
        free(s->asserts[i].patterns);
    free(s->asserts);
    memset(s, 0, sizeof *s);
}

/* The scenario's name: the file's without its folder and extension. */
static void name_of(const char *file, char *name, size_t size)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    const char *dot = strrchr(base, '.');   /* my.lesson.scenario is my.lesson */
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    snprintf(name, size, "%.*s", (int)(n < size ? n : size - 1), base);
}

/* One line (NUL-terminated, len bytes): blank, a comment, a text field or its
 * continuation, or words for the block the parser is in. */
static bool parse_line(parser *p, const char *s, int len)
{
    int indent = (int)strspn(s, " \t");
    p->indent = indent;
    if (indent == len || (s[indent] == '\r' && indent + 1 == len)) {
        p->text_field = NULL;   /* a blank line ends a text */
        return true;
    }
    if (s[indent] == '#')
        return true;   /* a comment line */
    /* An indented line right after a text field continues it. */
    if (p->text_field && indent > 0 && p->in_process < 0 && !p->in_expect)
        return continue_text(p, s, len);
    p->text_field = NULL;
    if (p->in_process < 0 && !p->in_expect) {
        int colon = (int)strcspn(s + indent, ": \t");
        if (indent + colon < len && s[indent + colon] == ':' && colon > 0) {
            size_t before = strlen(p->why);
            if (text_field(p, s, len, indent) || p->why[before])
                return !p->why[0];
        }
    }
    if (!tokenize(p, s, len))
        return false;
    if (p->ntok == 0)
        return true;   /* only a trailing comment */
    if (p->in_process >= 0)
        return step(p);
    if (p->in_expect)
        return assertion(p);
    return top_level(p);
}

static bool parse_lines(parser *p, const char *text, size_t len)
{
    char line[LINE_MAX_BYTES + 1];
    size_t at = 0;
    while (at < len) {
        p->line++;
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + (nl != NULL);
        if (n > LINE_MAX_BYTES)
            return fail_at(p, LINE_MAX_BYTES + 1, "the line is longer than %d bytes", LINE_MAX_BYTES);
        const char *nul = memchr(s, 0, n);
        if (nul)
            return fail_at(p, (int)(nul - s) + 1, "a NUL byte (a scenario is text)");
        /* The line on its own, NUL-terminated: the text itself need not be (a file's
         * last line, the fuzzer's bytes), and the string functions below stop at NUL. */
        memcpy(line, s, n);
        line[n] = 0;
        if (!parse_line(p, line, (int)n))
            return false;
    }
    return true;
}

/* At the file's end no block is open: else the message names the one left open. */
static bool blocks_closed(parser *p)
{
    if (p->in_process < 0 && !p->in_expect)
        return true;
    const lab_step *r = p->depth ? &p->sc->processes[p->in_process].steps[p->open[p->depth - 1]]
                                 : NULL;
    const char *what = p->in_expect ? "expect"
                       : !r         ? "process"
                       : r->op == LAB_ENSURE ? "ensure"
                                             : "repeat";
    p->line = r ? r->line : p->block_line;
    if (!p->in_expect && !p->depth && p->suspect_line) {
        p->line = p->suspect_line;
        return fail_at(p, p->suspect_col, "this repeat has no 'end' (the 'end' at line %d, "
                       "indented as its process, closed it, and the file ended inside the "
                       "process)", p->suspect_end);
    }
    return fail_at(p, r ? r->col : p->block_col, "this %s has no 'end' (the file ended inside "
                   "it: every process, repeat, ensure and expect ends with its own end)", what);
}

/* What holds for the whole file: a process, one that starts, every name used declared,
 * an osvm764- setting only with its idle mode, and a title. */
static bool whole_file(parser *p)
{
    const lab_scenario *sc = p->sc;
    if (sc->nprocesses == 0) {
        p->line = p->line ? p->line : 1;
        return fail_at(p, 1, "no process is declared (a scenario has at least one)");
    }
    int starting = 0;
    for (int i = 0; i < sc->nprocesses; i++)
        starting += sc->processes[i].starts;
    if (!starting) {
        p->line = sc->processes[0].line;
        return fail_at(p, sc->processes[0].col,
                       "no process starts (give one 'start 0 ms': the others are spawned)");
    }
    if (!resolve(p))
        return false;
    if (p->osvm_line && sc->cfg.idle_mode != STVM_IDLE_OSVM764) {
        p->line = p->osvm_line;
        return fail_at(p, 1, "an osvm764- setting needs 'idle-mode osvm764'");
    }
    if (!sc->title) {
        p->line = 1;
        return fail_at(p, 1, "no 'title:' (a one-line summary, which 'stvm-lab list' shows)");
    }
    return true;
}

bool lab_parse(const char *text, size_t len, const char *file, lab_scenario *out, char *why,
               size_t why_size)
{
    parser p = {.file = file, .why = why, .why_size = why_size, .sc = out, .in_process = -1};
    memset(out, 0, sizeof *out);
    why[0] = 0;
    stvm_config_init(&out->cfg);
    out->cfg.clock = STVM_CLOCK_SIMULATED;
    out->cfg.sim_start_us = LAB_SIM_START_US;
    name_of(file, out->name, sizeof out->name);
    snprintf(out->file, sizeof out->file, "%s", file);
    bool ok;
    if (len > FILE_MAX_BYTES) {
        p.line = 1;
        ok = fail_at(&p, 1, "the file is larger than %d bytes", FILE_MAX_BYTES);
    } else {
        ok = parse_lines(&p, text, len) && blocks_closed(&p) && whole_file(&p);
    }
    free(p.unres);
    if (!ok) {
        if (!why[0])
            snprintf(why, why_size, "%s: refused", file);
        lab_scenario_free(out);
    }
    return ok;
}

bool lab_load(const char *path, lab_scenario *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, why_size, "%s: cannot be read: %s", path, strerror(errno));
        return false;
    }
    size_t cap = FILE_MAX_BYTES + 1, len = 0;
    char *text = malloc(cap);
    if (!text) {
        fclose(f);
        snprintf(why, why_size, "%s: out of memory", path);
        return false;
    }
    len = fread(text, 1, cap, f);
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        snprintf(why, why_size, "%s: cannot be read", path);
        return false;
    }
    bool ok = lab_parse(text, len, path, out, why, why_size);
    free(text);
    return ok;
}
