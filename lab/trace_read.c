/*
 * lab_trace_read: a small, strict JSON reader for the Trace Event files stvm writes
 * (vm/trace_json.c), and what it makes of their entries: lanes (thread_name), spans
 * (B/E pairs and X slices), marks (instants) and the run queue's counter.
 *
 * The file may come from anywhere (a student's edit, a truncated copy, a fuzzer), so
 * every byte is checked against JSON's grammar and every entry against what the writer
 * produces; the first problem stops the read with its line and column. The parser pulls
 * one value at a time and keeps nothing but the entries' fields: a bench trace of
 * millions of entries costs its spans and marks, not a document tree.
 */
#include "trace_read.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64                    /* nesting of values the writer never uses */
#define MAX_FILE ((size_t)4 << 30)      /* 4 GiB: far past the largest ring's file */
#define MAX_US 1e15                     /* 31 years of trace: beyond it, not our file */
#define MAX_SEQ 9007199254740992.0      /* 2^53: exact in a double, and in JavaScript */

typedef struct parser {
    const char *start, *p, *end;
    const char *name;
    char *err;
    size_t errsize;
    jmp_buf fail;       /* an error unwinds to lab_trace_parse, which frees what was made */
    lab_trace *t;
    size_t *open;       /* per track: the index of its open B span, or SIZE_MAX */
    uint64_t *slots;    /* tid -> track index + 1, open addressing (0: empty) */
    size_t nslots;
    size_t cap_tracks, cap_open, cap_spans, cap_marks, cap_counts;
    size_t entry;       /* the entry being read, from 0 */
} parser;

__attribute__((format(printf, 2, 3), noreturn)) static void fail(parser *P, const char *fmt, ...)
{
    int line = 1, col = 1;
    for (const char *c = P->start; c < P->p && c < P->end; c++) {
        if (*c == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(P->err, P->errsize, "%s:%d:%d: %s", P->name, line, col, what);
    longjmp(P->fail, 1);
}

static void *grow(parser *P, void *array, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return array;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *bigger = n < SIZE_MAX / size ? realloc(array, n * size) : NULL;
    if (!bigger)
        fail(P, "out of memory (%zu entries)", need);
    *cap = n;
    return bigger;
}

/* ---- JSON's grammar ---------------------------------------------------------------- */

static void ws(parser *P)
{
    while (P->p < P->end && (*P->p == ' ' || *P->p == '\n' || *P->p == '\r' || *P->p == '\t'))
        P->p++;
}

static int peek(parser *P)
{
    ws(P);
    return P->p < P->end ? (unsigned char)*P->p : -1;
}

static void expect(parser *P, char c)
{
    if (peek(P) != c) {
        if (P->p >= P->end)
            fail(P, "the file ends where '%c' was expected", c);
        fail(P, "'%c' expected, found '%c'", c, *P->p);
    }
    P->p++;
}

static unsigned hex4(parser *P)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++, P->p++) {
        int c = P->p < P->end ? *P->p : -1;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            fail(P, "\\u needs four hexadecimal digits");
        v = v * 16 + (unsigned)d;
    }
    return v;
}

/* Append one byte to buf unless it is full (a longer string is cut, never overrun). */
static void put(char *buf, size_t size, size_t *n, unsigned c)
{
    if (buf && *n + 1 < size)
        buf[(*n)++] = (char)c;
}

static void put_utf8(char *buf, size_t size, size_t *n, unsigned cp)
{
    if (cp < 0x80) {
        put(buf, size, n, cp);
    } else if (cp < 0x800) {
        put(buf, size, n, 0xC0 | cp >> 6);
        put(buf, size, n, 0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        put(buf, size, n, 0xE0 | cp >> 12);
        put(buf, size, n, 0x80 | (cp >> 6 & 0x3F));
        put(buf, size, n, 0x80 | (cp & 0x3F));
    } else {
        put(buf, size, n, 0xF0 | cp >> 18);
        put(buf, size, n, 0x80 | (cp >> 12 & 0x3F));
        put(buf, size, n, 0x80 | (cp >> 6 & 0x3F));
        put(buf, size, n, 0x80 | (cp & 0x3F));
    }
}

/* A string, decoded into buf (NULL: skipped); control characters must be escaped. */
static void string(parser *P, char *buf, size_t size)
{
    size_t n = 0;
    expect(P, '"');
    for (;;) {
        if (P->p >= P->end)
            fail(P, "the file ends inside a string");
        unsigned char c = (unsigned char)*P->p++;
        if (c == '"')
            break;
        if (c < 0x20) {
            P->p--;
            fail(P, "a control character (0x%02x) inside a string", c);
        }
        if (c != '\\') {
            put(buf, size, &n, c);
            continue;
        }
        if (P->p >= P->end)
            fail(P, "the file ends inside a string");
        c = (unsigned char)*P->p++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *at = strchr(from, c);
        if (c && at) {
            put(buf, size, &n, (unsigned char)to[at - from]);
        } else if (c == 'u') {
            unsigned cp = hex4(P);
            if (cp >= 0xD800 && cp < 0xDC00 && P->end - P->p >= 6 && P->p[0] == '\\' &&
                P->p[1] == 'u') {
                P->p += 2;
                unsigned low = hex4(P);
                cp = low >= 0xDC00 && low < 0xE000 ? 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                                                   : 0xFFFD;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD;        /* a lone surrogate: shown as the replacement */
            }
            put_utf8(buf, size, &n, cp);
        } else {
            P->p--;
            fail(P, "an unknown escape \\%c in a string", c ? c : '0');
        }
    }
    if (buf)
        buf[n] = 0;
}

/* A number by JSON's grammar (no leading zeros, no '+', digits after '.' and 'e'). */
static double number(parser *P)
{
    ws(P);
    const char *s = P->p;
    if (P->p < P->end && *P->p == '-')
        P->p++;
#define DIGITS(min)                                                                  \
    do {                                                                             \
        const char *d0 = P->p;                                                       \
        while (P->p < P->end && *P->p >= '0' && *P->p <= '9')                        \
            P->p++;                                                                  \
        if (P->p - d0 < (min))                                                       \
            fail(P, "a digit expected in a number");                                 \
    } while (0)
    if (P->p < P->end && *P->p == '0')
        P->p++;
    else
        DIGITS(1);
    if (P->p < P->end && *P->p == '.') {
        P->p++;
        DIGITS(1);
    }
    if (P->p < P->end && (*P->p == 'e' || *P->p == 'E')) {
        P->p++;
        if (P->p < P->end && (*P->p == '+' || *P->p == '-'))
            P->p++;
        DIGITS(1);
    }
#undef DIGITS
    char copy[64];
    size_t len = (size_t)(P->p - s);
    if (len >= sizeof copy) {
        P->p = s;
        fail(P, "a number of %zu characters (at most 63)", len);
    }
    memcpy(copy, s, len);
    copy[len] = 0;
    double v = strtod(copy, NULL);
    if (!isfinite(v)) {
        P->p = s;
        fail(P, "a number out of range: %s", copy);
    }
    return v;
}

static void literal(parser *P, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(P->end - P->p) < n || memcmp(P->p, word, n) != 0)
        fail(P, "a JSON value expected");
    P->p += n;
}

static void skip_value(parser *P, int depth)
{
    if (depth > MAX_DEPTH)
        fail(P, "values nested more than %d deep", MAX_DEPTH);
    int c = peek(P);
    if (c == '"') {
        string(P, NULL, 0);
    } else if (c == '{' || c == '[') {
        P->p++;
        char close = c == '{' ? '}' : ']';
        if (peek(P) == close) {
            P->p++;
            return;
        }
        do {
            if (c == '{') {
                string(P, NULL, 0);
                expect(P, ':');
            }
            skip_value(P, depth + 1);
        } while (peek(P) == ',' && P->p++);
        expect(P, close);
    } else if (c == 't') {
        literal(P, "true");
    } else if (c == 'f') {
        literal(P, "false");
    } else if (c == 'n') {
        literal(P, "null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        number(P);
    } else if (c < 0) {
        fail(P, "the file ends where a value was expected");
    } else {
        fail(P, "a JSON value expected, found '%c'", c);
    }
}

/* Objects are read member by member: first = true before the first call. 0 at '}'. */
static int member(parser *P, bool *first, char *key, size_t size)
{
    if (*first) {
        expect(P, '{');
        *first = false;
        if (peek(P) == '}') {
            P->p++;
            return 0;
        }
    } else if (peek(P) == ',') {
        P->p++;
    } else {
        expect(P, '}');
        return 0;
    }
    if (peek(P) != '"')
        fail(P, "a member's name (a string) expected");
    string(P, key, size);
    expect(P, ':');
    return 1;
}

/* An integer within [min, max]: the writer writes ids, seq and lengths as integers. */
static int64_t integer(parser *P, const char *what, double min, double max)
{
    ws(P);
    const char *at = P->p;
    double v = number(P);
    if (v != floor(v) || v < min || v > max) {
        P->p = at;
        fail(P, "%s must be an integer from %.0f to %.0f", what, min, max);
    }
    return (int64_t)v;
}

/* ---- the entries ------------------------------------------------------------------- */

typedef struct entry {
    char ph[4], s[4], name[LAB_NAME_MAX], arg_name[LAB_NAME_MAX];
    bool has_tid, has_ts, has_dur, has_seq, has_length, has_name, has_arg_name, has_asked;
    uint64_t tid, seq, ns, dur_ns;
    int64_t detail, length, asked_us;
} entry;

static uint64_t time_ns(parser *P, const char *what)
{
    ws(P);
    const char *at = P->p;
    double us = number(P);
    if (us < 0 || us > MAX_US) {
        P->p = at;
        fail(P, "%s must be from 0 to 1e15 us", what);
    }
    return (uint64_t)llround(us * 1000);
}

static void args(parser *P, entry *e)
{
    char key[32];
    bool first = true;
    if (peek(P) != '{')
        fail(P, "args must be an object");
    while (member(P, &first, key, sizeof key)) {
        if (strcmp(key, "seq") == 0) {
            e->seq = (uint64_t)integer(P, "args.seq", 0, MAX_SEQ);
            e->has_seq = true;
        } else if (strcmp(key, "detail") == 0) {
            e->detail = integer(P, "args.detail", -MAX_SEQ, MAX_SEQ);
        } else if (strcmp(key, "length") == 0) {
            e->length = integer(P, "args.length", 0, MAX_SEQ);
            e->has_length = true;
        } else if (strcmp(key, "asked_us") == 0) {
            e->asked_us = integer(P, "args.asked_us", -1, MAX_SEQ);
            e->has_asked = true;
        } else if (strcmp(key, "name") == 0 && peek(P) == '"') {
            string(P, e->arg_name, sizeof e->arg_name);
            e->has_arg_name = true;
        } else {
            skip_value(P, 2);
        }
    }
}

static void read_entry(parser *P, entry *e)
{
    char key[32];
    bool first = true;
    memset(e, 0, sizeof *e);
    if (peek(P) != '{')
        fail(P, "entry %zu of traceEvents is not an object", P->entry);
    while (member(P, &first, key, sizeof key)) {
        if (strcmp(key, "ph") == 0 || strcmp(key, "s") == 0) {
            if (peek(P) != '"')
                fail(P, "%s must be a string", key);
            const char *at = P->p;
            char v[8];
            string(P, v, sizeof v);
            if (strlen(v) != 1) {
                P->p = at;
                fail(P, "%s must be one letter, not \"%s\"", key, v);
            }
            memcpy(key[0] == 'p' ? e->ph : e->s, v, 2);
        } else if (strcmp(key, "tid") == 0) {
            e->tid = (uint64_t)integer(P, "tid", 0, 281474976710655.0);   /* 2^48 - 1 */
            e->has_tid = true;
        } else if (strcmp(key, "ts") == 0) {
            e->ns = time_ns(P, "ts");
            e->has_ts = true;
        } else if (strcmp(key, "dur") == 0) {
            e->dur_ns = time_ns(P, "dur");
            e->has_dur = true;
        } else if (strcmp(key, "name") == 0) {
            if (peek(P) != '"')
                fail(P, "name must be a string");
            string(P, e->name, sizeof e->name);
            e->has_name = true;
        } else if (strcmp(key, "args") == 0) {
            args(P, e);
        } else {
            skip_value(P, 2);
        }
    }
    if (!e->ph[0])
        fail(P, "entry %zu has no \"ph\"", P->entry);
}

/* The track of tid: found in the hash table, or made (named "#tid" until named). */
static uint32_t track_of(parser *P, uint64_t tid)
{
    lab_trace *t = P->t;
    if ((t->ntracks + 1) * 2 > P->nslots) {        /* keep the table at most half full */
        size_t n = P->nslots ? P->nslots * 2 : 256;
        uint64_t *slots = calloc(n, sizeof *slots);
        if (!slots)
            fail(P, "out of memory (%zu tracks)", t->ntracks);
        for (size_t i = 0; i < t->ntracks; i++) {
            size_t h = (size_t)(t->tracks[i].tid * 0x9E3779B97F4A7C15ull) & (n - 1);
            while (slots[h])
                h = (h + 1) & (n - 1);
            slots[h] = i + 1;
        }
        free(P->slots);
        P->slots = slots;
        P->nslots = n;
    }
    size_t h = (size_t)(tid * 0x9E3779B97F4A7C15ull) & (P->nslots - 1);
    for (; P->slots[h]; h = (h + 1) & (P->nslots - 1))
        if (t->tracks[P->slots[h] - 1].tid == tid)
            return (uint32_t)(P->slots[h] - 1);
    if (t->ntracks >= UINT32_MAX - 1)
        fail(P, "too many tracks");
    t->tracks = grow(P, t->tracks, &P->cap_tracks, t->ntracks + 1, sizeof *t->tracks);
    P->open = grow(P, P->open, &P->cap_open, t->ntracks + 1, sizeof *P->open);
    lab_track *k = &t->tracks[t->ntracks];
    k->tid = tid;
    snprintf(k->name, sizeof k->name, "#%llu", (unsigned long long)tid);
    P->open[t->ntracks] = SIZE_MAX;
    P->slots[h] = ++t->ntracks;
    return (uint32_t)(t->ntracks - 1);
}

static void need(parser *P, const entry *e, bool has, const char *field)
{
    if (!has)
        fail(P, "entry %zu (ph \"%s\") has no %s", P->entry, e->ph, field);
}

static lab_span *new_span(parser *P, const entry *e, int state)
{
    lab_trace *t = P->t;
    t->spans = grow(P, t->spans, &P->cap_spans, t->nspans + 1, sizeof *t->spans);
    lab_span *s = &t->spans[t->nspans++];
    memset(s, 0, sizeof *s);
    s->track = track_of(P, e->tid);
    s->state = (uint8_t)state;
    s->seq0 = s->seq1 = e->seq;
    s->ns0 = s->ns1 = e->ns;
    s->order0 = s->order1 = P->entry;
    s->asked_us = -1;
    snprintf(s->name, sizeof s->name, "%s", e->name);
    return s;
}

static int state_of(const char *name)
{
    for (int s = LAB_RUNNING; s < LAB_NAMED; s++)
        if (strcmp(name, lab_state_name(s)) == 0)
            return s;
    return LAB_NAMED;
}

/* One reader a phase of the writer's entries; use_entry has checked what they share. */
static void use_metadata(parser *P, const entry *e)   /* M: a track's name */
{
    if (!e->has_name || strcmp(e->name, "thread_name") != 0)
        return;                 /* process_name and other metadata say nothing we draw */
    need(P, e, e->has_tid, "tid");
    need(P, e, e->has_arg_name, "args.name");
    uint32_t k = track_of(P, e->tid);   /* first: it may move the tracks */
    snprintf(P->t->tracks[k].name, LAB_NAME_MAX, "%s", e->arg_name);
}

static void use_counter(parser *P, const entry *e)   /* C: the run queue's length */
{
    lab_trace *t = P->t;
    if (!e->has_name || strcmp(e->name, "run queue") != 0)
        return;
    need(P, e, e->has_length, "args.length");
    t->counts = grow(P, t->counts, &P->cap_counts, t->ncounts + 1, sizeof *t->counts);
    t->counts[t->ncounts++] = (lab_count){e->seq, e->ns, e->length};
}

static void use_instant(parser *P, const entry *e)   /* i, I: a mark, on a track or all */
{
    lab_trace *t = P->t;
    bool whole = !e->has_tid;
    if (whole && strcmp(e->s, "p") != 0 && strcmp(e->s, "g") != 0)
        fail(P, "entry %zu: an instant without tid must have scope \"p\"", P->entry);
    t->marks = grow(P, t->marks, &P->cap_marks, t->nmarks + 1, sizeof *t->marks);
    lab_mark *m = &t->marks[t->nmarks];
    m->track = whole ? -1 : (int64_t)track_of(P, e->tid);
    m->seq = e->seq;
    m->ns = e->ns;
    m->order = P->entry;
    m->detail = e->detail;
    snprintf(m->name, sizeof m->name, "%s", e->name);
    t->nmarks++;
}

static void use_complete(parser *P, const entry *e)   /* X: an OS sleep, with its length */
{
    need(P, e, e->has_dur, "dur");
    lab_span *s = new_span(P, e, LAB_OS_SLEEP);
    s->ns1 = e->ns + e->dur_ns;
    s->asked_us = e->has_asked ? e->asked_us : -1;
}

static void use_begin(parser *P, const entry *e, uint32_t k)   /* B: a slice opens on track k */
{
    if (P->open[k] != SIZE_MAX)
        fail(P, "entry %zu: \"%s\" begins on tid %llu while \"%s\" is open (the writer "
                "ends a slice before it begins the next)", P->entry, e->name,
             (unsigned long long)e->tid, P->t->spans[P->open[k]].name);
    new_span(P, e, state_of(e->name));
    P->open[k] = P->t->nspans - 1;
}

static void use_end(parser *P, const entry *e, uint32_t k)   /* E: track k's slice ends */
{
    if (P->open[k] == SIZE_MAX)
        fail(P, "entry %zu: an end (E) on tid %llu, where no slice is open", P->entry,
             (unsigned long long)e->tid);
    lab_span *s = &P->t->spans[P->open[k]];
    if (e->ns < s->ns0 || e->seq < s->seq0)
        fail(P, "entry %zu: \"%s\" on tid %llu ends before it begins", P->entry, s->name,
             (unsigned long long)e->tid);
    s->seq1 = e->seq;
    s->ns1 = e->ns;
    s->order1 = P->entry;
    P->open[k] = SIZE_MAX;
}

static void use_entry(parser *P, const entry *e)
{
    char ph = e->ph[0];
    if (ph == 'M') {
        use_metadata(P, e);
        return;
    }
    if (!strchr("BEXiIC", ph))
        return;                 /* other phases: not the writer's, nothing to draw */
    need(P, e, e->has_ts, "ts");
    need(P, e, e->has_seq, "args.seq");
    if (ph == 'C') {
        use_counter(P, e);
        return;
    }
    if (ph != 'E')
        need(P, e, e->has_name, "name");
    if (ph == 'i' || ph == 'I') {
        use_instant(P, e);
        return;
    }
    need(P, e, e->has_tid, "tid");
    uint32_t k = track_of(P, e->tid);
    if (ph == 'X')
        use_complete(P, e);
    else if (ph == 'B')
        use_begin(P, e, k);
    else
        use_end(P, e, k);
}

static void other_data(parser *P)
{
    char key[32];
    bool first = true;
    if (peek(P) != '{')
        fail(P, "otherData must be an object");
    while (member(P, &first, key, sizeof key)) {
        if (strcmp(key, "dropped") == 0)
            P->t->dropped = integer(P, "otherData.dropped", 0, MAX_SEQ);
        else if (strcmp(key, "events") == 0)
            P->t->events = integer(P, "otherData.events", 0, MAX_SEQ);
        else if (strcmp(key, "clock") == 0 && peek(P) == '"')
            string(P, P->t->clock, sizeof P->t->clock);
        else
            skip_value(P, 2);
    }
}

static void document(parser *P)
{
    char key[32];
    bool first = true, events = false;
    if (peek(P) != '{')
        fail(P, P->p >= P->end ? "the file is empty" : "the file must be a JSON object "
                                                       "with a traceEvents array");
    while (member(P, &first, key, sizeof key)) {
        if (strcmp(key, "traceEvents") == 0) {
            if (events)
                fail(P, "traceEvents appears twice");
            events = true;
            expect(P, '[');
            if (peek(P) == ']') {
                P->p++;
                continue;
            }
            do {
                entry e;
                read_entry(P, &e);
                use_entry(P, &e);
                P->entry++;
            } while (peek(P) == ',' && P->p++);
            expect(P, ']');
        } else if (strcmp(key, "otherData") == 0) {
            other_data(P);
        } else {
            skip_value(P, 1);
        }
    }
    if (peek(P) >= 0)
        fail(P, "text after the JSON object");
    if (!events)
        fail(P, "no traceEvents array: not a Trace Event file");
    for (size_t k = 0; k < P->t->ntracks; k++)
        if (P->open[k] != SIZE_MAX) {
            const lab_span *s = &P->t->spans[P->open[k]];
            fail(P, "\"%s\" on tid %llu (seq %llu) never ends: the file is cut short?",
                 s->name, (unsigned long long)P->t->tracks[k].tid, (unsigned long long)s->seq0);
        }
}

/* Tracks in tid order, the spans' and marks' indices moved with them. */
static int by_tid(const void *a, const void *b)
{
    const lab_track *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void sort_tracks(parser *P)
{
    lab_trace *t = P->t;
    if (t->ntracks == 0)
        return;
    size_t *rank = malloc(t->ntracks * sizeof *rank);
    lab_track *old = malloc(t->ntracks * sizeof *old);
    if (!rank || !old) {
        free(rank);
        free(old);
        fail(P, "out of memory (%zu tracks)", t->ntracks);
    }
    memcpy(old, t->tracks, t->ntracks * sizeof *old);
    qsort(t->tracks, t->ntracks, sizeof *t->tracks, by_tid);
    for (size_t i = 0; i < t->ntracks; i++)     /* tids are unique: find each old one */
        for (size_t lo = 0, hi = t->ntracks; lo < hi;) {
            size_t mid = (lo + hi) / 2;
            if (t->tracks[mid].tid < old[i].tid) {
                lo = mid + 1;
            } else {
                hi = mid;
                if (t->tracks[mid].tid == old[i].tid) {
                    rank[i] = mid;
                    break;
                }
            }
        }
    for (size_t i = 0; i < t->nspans; i++)
        t->spans[i].track = (uint32_t)rank[t->spans[i].track];
    for (size_t i = 0; i < t->nmarks; i++)
        if (t->marks[i].track >= 0)
            t->marks[i].track = (int64_t)rank[t->marks[i].track];
    free(rank);
    free(old);
}

int lab_trace_parse(const char *text, size_t len, const char *name, lab_trace *t, char *err,
                    size_t errsize)
{
    memset(t, 0, sizeof *t);
    t->dropped = t->events = -1;
    /* On the heap: what the parser changes after setjmp must survive the longjmp, which
     * C promises only for objects that are not the caller's own non-volatile locals. */
    parser *P = calloc(1, sizeof *P);
    if (!P) {
        snprintf(err, errsize, "%s: out of memory", name);
        return -1;
    }
    *P = (parser){.start = text, .p = text, .end = text + len, .name = name, .err = err,
                  .errsize = errsize, .t = t};
    volatile int failed = 0;
    if (setjmp(P->fail) == 0) {
        document(P);
        sort_tracks(P);
    } else {
        failed = 1;
    }
    free(P->open);
    free(P->slots);
    free(P);
    if (failed)
        lab_trace_free(t);
    return failed ? -1 : 0;
}

int lab_trace_read(const char *path, lab_trace *t, char *err, size_t errsize)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {                  /* read to the end: a pipe or a growing file has no size */
        if (len == cap) {
            size_t n = cap ? cap * 2 : 1 << 16;
            char *bigger = cap < MAX_FILE ? realloc(text, n) : NULL;
            if (!bigger) {
                snprintf(err, errsize, "%s: %s", path, cap < MAX_FILE ? "out of memory"
                                                                      : "larger than 4 GiB");
                free(text);
                fclose(f);
                return -1;
            }
            text = bigger;
            cap = n;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errsize, "%s: a read failed", path);
        free(text);
        return -1;
    }
    int rc = lab_trace_parse(text, len, path, t, err, errsize);
    free(text);
    return rc;
}

void lab_trace_free(lab_trace *t)
{
    free(t->tracks);
    free(t->spans);
    free(t->marks);
    free(t->counts);
    memset(t, 0, sizeof *t);
    t->dropped = t->events = -1;
}

const char *lab_state_name(int state)
{
    static const char *const name[] = {"running", "ready", "waiting", "sleeping", "suspended",
                                       "named", "os sleep"};
    return state >= 0 && state < LAB_STATES ? name[state] : "?";
}

const char *lab_track_name(const lab_trace *t, int64_t track)
{
    return track >= 0 && (size_t)track < t->ntracks ? t->tracks[track].name : "host";
}
