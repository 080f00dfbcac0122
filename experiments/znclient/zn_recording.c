/*
 * The ZnClient experiment: the recording file (zn_world.h), written by --record and read by
 * --replay. Plain text, one line per request, so that a reader can look at it and a
 * script can read it:
 *
 *   stvm-bench zn recording 1
 *   cell rep=1 logging=0 events=3 cost=0 mode=1 idle_us=1000 ... rps=896.123 blocked=0.99000
 *   q GAP SEND ANSWER BETWEEN WAKEPATH PARSE BTS NSLEEPS [END:ASKED:TOOK:LATE ...]
 *   ...
 *   end
 *
 * Spans are ns; BTS is three digits: blocked, timed, stamped; a sleep's END is a
 * STVM_TRACE_END_*, ASKED us (-1: no limit), TOOK and LATE ns.
 */
#include "zn_world.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

bool zn_recording_write_cell(FILE *f, const zn_rec_cell *cell)
{
    const zn_config *k = &cell->cfg;
    fprintf(f, "cell rep=%d logging=%d events=%d cost=%u mode=%d idle_us=%u inject=%u "
               "before=%u between=%u after=%u event_cost=%u plain=%u background=%u "
               "server=%u jitter=%u client=%u requests=%lld timed=%lld rps=%.3f "
               "blocked=%.5f\n",
            cell->repetition, (int)k->logging, (int)k->subscriber_events,
            k->subscriber_cost_us, k->idle_mode, k->idle_us, k->wake_inject_us, k->before_us,
            k->between_us, k->after_us, k->event_cost_us, k->plain_wait, k->background,
            k->server_us, k->server_jitter_us, k->client_us, cell->nrequests, cell->ntimed,
            cell->rps, cell->blocked_first);
    for (long long i = 0; i < cell->nrequests; i++) {
        const zn_rec_request *q = &cell->requests[i];
        fprintf(f, "q %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
                   " %d%d%d %d",
                q->gap_ns, q->send_ns, q->answer_ns, q->between_ns, q->wakepath_ns,
                q->parse_ns, q->blocked, q->timed, q->stamped, q->nsleeps);
        for (int j = 0; j < q->nsleeps; j++)
            fprintf(f, " %d:%" PRId64 ":%" PRId64 ":%" PRId64, q->sleeps[j].end,
                    q->sleeps[j].asked_us, q->sleeps[j].took_ns, q->sleeps[j].late_ns);
        fputc('\n', f);
    }
    fputs("end\n", f);
    return !ferror(f);
}

/* ---- reading ------------------------------------------------------------------------ */

typedef struct reader {
    const char *path;
    long line;
    char *why;
    size_t whysize;
} reader;

static bool bad(reader *rd, const char *what)
{
    snprintf(rd->why, rd->whysize, "%s:%ld: %s", rd->path, rd->line, what);
    return false;
}

/* The "cell" line's knobs: every key once, in any order; false with why. */
static bool parse_cell(reader *rd, char *line, zn_rec_cell *c)
{
    zn_config *k = &c->cfg;
    static const struct { const char *key; long long lo, hi; } f[] = {
        {"rep", 1, 1000000}, {"logging", 0, 2}, {"events", 0, 3}, {"cost", 0, 100000},
        {"mode", 0, 2}, {"idle_us", 0, 10000000}, {"inject", 0, 1000000},
        {"before", 0, 100000}, {"between", 0, 100000}, {"after", 0, 100000},
        {"event_cost", 0, 100000}, {"plain", 0, 1}, {"background", 0, 1},
        {"server", 0, 1000000}, {"jitter", 0, 1000000}, {"client", 0, 1000000},
        {"requests", 0, 100000000}, {"timed", 0, 100000000}};
    enum { NF = sizeof f / sizeof *f };
    long long v[NF];
    bool seen[NF] = {0};
    bool rps = false, blocked = false;
    for (char *save, *tok = strtok_r(line + 4, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return bad(rd, "a cell's field is not KEY=VALUE");
        *eq++ = 0;
        char *end;
        if (!strcmp(tok, "rps") || !strcmp(tok, "blocked")) {
            double x = strtod(eq, &end);
            if (*end || end == eq || !(x >= 0))
                return bad(rd, "rps and blocked want a number >= 0");
            *(!strcmp(tok, "rps") ? &c->rps : &c->blocked_first) = x;
            *(!strcmp(tok, "rps") ? &rps : &blocked) = true;
            continue;
        }
        int i = 0;
        while (i < NF && strcmp(f[i].key, tok))
            i++;
        if (i == NF)
            return bad(rd, "an unknown key in a cell line");
        v[i] = strtoll(eq, &end, 10);
        if (*end || end == eq || v[i] < f[i].lo || v[i] > f[i].hi || seen[i])
            return bad(rd, "a cell's value is out of its range, not a number, or twice");
        seen[i] = true;
    }
    for (int i = 0; i < NF; i++)
        if (!seen[i])
            return bad(rd, "a cell line lacks a key");
    if (!rps || !blocked || v[17] > v[16])
        return bad(rd, "a cell line lacks rps or blocked, or has more timed requests than requests");
    c->repetition = (int)v[0];
    *k = (zn_config){.logging = (zn_logging)v[1], .subscriber_events = (zn_events)v[2],
                     .subscriber_cost_us = (uint32_t)v[3], .idle_mode = (int)v[4],
                     .idle_us = (uint32_t)v[5], .wake_inject_us = (uint32_t)v[6],
                     .before_us = (uint32_t)v[7], .between_us = (uint32_t)v[8],
                     .after_us = (uint32_t)v[9], .event_cost_us = (uint32_t)v[10],
                     .plain_wait = (uint32_t)v[11], .background = (uint32_t)v[12],
                     .server_us = (uint32_t)v[13], .server_jitter_us = (uint32_t)v[14],
                     .client_us = (uint32_t)v[15]};
    c->nrequests = v[16];
    c->ntimed = v[17];
    return true;   /* the requests come as their lines do (a line can claim any count) */
}

/* Room for the cell's next request (got of them so far); false when out of memory. */
static bool room_for_request(zn_rec_cell *c, long long got, long long *cap)
{
    if (got < *cap)
        return true;
    long long n = *cap ? 2 * *cap : 256;
    zn_rec_request *q = realloc(c->requests, (size_t)n * sizeof *q);
    if (!q)
        return false;
    c->requests = q;
    *cap = n;
    return true;
}

#define SPAN_MAX INT64_C(1000000000000)   /* 1,000 s: no span of a request is longer */

static bool span(const char **p, int64_t *v)
{
    char *end;
    long long x = strtoll(*p, &end, 10);
    if (end == *p || x < -SPAN_MAX || x > SPAN_MAX)
        return false;
    *v = x;
    *p = end;
    return true;
}

/* A "q" line into q; false with why. */
static bool parse_request(reader *rd, const char *line, zn_rec_request *q)
{
    const char *p = line + 1;
    int64_t *spans[] = {&q->gap_ns, &q->send_ns, &q->answer_ns, &q->between_ns,
                        &q->wakepath_ns, &q->parse_ns};
    for (size_t i = 0; i < sizeof spans / sizeof *spans; i++)
        if (!span(&p, spans[i]))
            return bad(rd, "a request line wants six spans in ns");
    int b, t, s, n, used = -1;
    if (sscanf(p, " %1d%1d%1d %d%n", &b, &t, &s, &n, &used) != 4 || used < 0 || b > 1 || t > 1 || s > 1 ||
        b < 0 || t < 0 || s < 0 || n < 0 || n > 100000)
        return bad(rd, "a request line's flags or sleep count are wrong");
    p += used;
    *q = (zn_rec_request){.gap_ns = q->gap_ns, .send_ns = q->send_ns,
                          .answer_ns = q->answer_ns, .between_ns = q->between_ns,
                          .wakepath_ns = q->wakepath_ns, .parse_ns = q->parse_ns,
                          .blocked = b, .timed = t, .stamped = s, .nsleeps = n};
    if (n && !(q->sleeps = calloc((size_t)n, sizeof *q->sleeps)))
        return bad(rd, "out of memory");
    for (int j = 0; j < n; j++) {
        zn_rec_sleep *z = &q->sleeps[j];
        int end;
        used = -1;   /* %n is not reached when the ':' is missing */
        if (sscanf(p, " %d:%n", &end, &used) != 1 || used < 0 || end < 0 || end > 7)
            return bad(rd, "a sleep wants END:ASKED:TOOK:LATE");
        p += used;
        z->end = end;
        if (!span(&p, &z->asked_us) || *p++ != ':' || !span(&p, &z->took_ns) || *p++ != ':' ||
            !span(&p, &z->late_ns) || z->asked_us < -1 || z->took_ns < 0 || z->late_ns < 0)
            return bad(rd, "a sleep wants END:ASKED:TOOK:LATE, each in range");
    }
    while (*p == ' ' || *p == '\n')
        p++;
    return *p ? bad(rd, "a request line has more than its sleeps") : true;
}

static bool add_cell(zn_recording *rec, zn_rec_cell **out)
{
    if (rec->ncells == rec->cap) {
        int cap = rec->cap ? 2 * rec->cap : 16;
        zn_rec_cell *c = realloc(rec->cells, (size_t)cap * sizeof *c);
        if (!c)
            return false;
        rec->cells = c;
        rec->cap = cap;
    }
    *out = &rec->cells[rec->ncells++];
    **out = (zn_rec_cell){0};
    return true;
}

bool zn_recording_read(const char *path, zn_recording *out, char *why, size_t whysize)
{
    *out = (zn_recording){0};
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, whysize, "%s: cannot be opened", path);
        return false;
    }
    bool ok = zn_recording_parse(f, path, out, why, whysize);
    fclose(f);
    return ok;
}

bool zn_recording_parse(FILE *f, const char *name, zn_recording *out, char *why,
                        size_t whysize)
{
    *out = (zn_recording){0};
    reader rd = {name, 0, why, whysize};
    char *line = NULL;
    size_t cap = 0;
    zn_rec_cell *cell = NULL;
    long long got = 0, room = 0;
    bool ok = true;
    while (ok && getline(&line, &cap, f) > 0) {
        rd.line++;
        if (rd.line == 1)
            ok = !strncmp(line, ZN_RECORDING_MAGIC "\n", sizeof ZN_RECORDING_MAGIC) ||
                 bad(&rd, "not a recording: the first line is not '" ZN_RECORDING_MAGIC "'");
        else if (!strncmp(line, "cell ", 5))
            ok = cell ? bad(&rd, "a cell begins before the last one's end")
                      : !add_cell(out, &cell) ? bad(&rd, "out of memory")
                      : parse_cell(&rd, line, cell);
        else if (!strncmp(line, "q ", 2))
            ok = !cell ? bad(&rd, "a request line outside a cell")
                 : got == cell->nrequests ? bad(&rd, "more request lines than the cell's requests")
                 : !room_for_request(cell, got, &room) ? bad(&rd, "out of memory")
                 : (cell->requests[got] = (zn_rec_request){0},
                    parse_request(&rd, line, &cell->requests[got++]));
        else if (!strcmp(line, "end\n"))
            ok = !cell ? bad(&rd, "an end outside a cell")
                 : got != cell->nrequests ? bad(&rd, "fewer request lines than the cell's requests")
                 : (cell = NULL, got = room = 0, true);
        else
            ok = bad(&rd, "a line that is neither cell, q nor end");
    }
    if (ok && rd.line == 0)
        ok = bad(&rd, "empty");
    else if (ok && cell)
        ok = bad(&rd, "the file ends inside a cell");
    else if (ok && !out->ncells)
        ok = bad(&rd, "no cell");
    free(line);
    if (!ok && cell)
        cell->nrequests = got;   /* the requests read so far are what there is to free */
    if (!ok)
        zn_recording_free(out);
    return ok;
}

void zn_recording_free(zn_recording *rec)
{
    for (int i = 0; i < rec->ncells; i++) {
        zn_rec_cell *c = &rec->cells[i];
        for (long long j = 0; c->requests && j < c->nrequests; j++)
            free(c->requests[j].sleeps);
        free(c->requests);
    }
    free(rec->cells);
    *rec = (zn_recording){0};
}
