/*
 * lab_timeline_write: the text timeline of a trace read back from JSON. Its columns are
 * stvm_trace_write_text's (seq, ms from the start, process, event, detail), so that a
 * line can be set beside the original run's line of the same seq; what differs is what
 * the JSON keeps: a state change where the original has the event that caused it (a
 * switch, a wait), and no line at all for events that change no state.
 */
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

enum { BEGIN, END, MARK };

typedef struct item {
    size_t order;       /* the entry's position in the file: the writer's order */
    int what;
    size_t index;       /* into spans or marks */
} item;

static int by_order(const void *a, const void *b)
{
    const item *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Whether span i's end (E) is followed at once by the next state's begin (B) on its
 * track: the writer writes the two together, so the E needs no line of its own. */
static bool followed(const lab_trace *t, size_t i)
{
    const lab_span *s = &t->spans[i];
    size_t lo = i + 1, hi = t->nspans;   /* spans are in the order they began */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->spans[mid].order0 <= s->order1)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->nspans && t->spans[lo].order0 == s->order1 + 1 &&
           t->spans[lo].track == s->track && t->spans[lo].state != LAB_OS_SLEEP;
}

/* "kind rest" -> event "kind", detail "rest". */
static void split(const char *name, char *event, size_t esize, const char **rest)
{
    size_t n = strcspn(name, " ");
    snprintf(event, esize, "%.*s", (int)n, name);
    *rest = name[n] ? name + n + 1 : "";
}

/* The process column as stvm_trace_write_text writes it: at most 16 characters of the
 * name, then "#id", in 23 (vm/trace_labels.c, stvm__trace_process_label into 24 bytes). */
static void short_name(const char *label, char out[24])
{
    const char *hash = strrchr(label, '#');
    if (hash && hash[1] && strspn(hash + 1, "0123456789") == strlen(hash + 1))
        snprintf(out, 24, "%.*s%s", (int)(hash - label < 16 ? hash - label : 16), label, hash);
    else
        snprintf(out, 24, "%s", label);
}

static int line(FILE *out, uint64_t seq, uint64_t ns, const char *label, const char *event,
                const char *detail)
{
    char who[24];
    short_name(label, who);
    uint64_t us = ns / 1000;
    char at[32];
    snprintf(at, sizeof at, "%llu.%03llu", (unsigned long long)(us / 1000),
             (unsigned long long)(us % 1000));
    int n = detail[0] ? fprintf(out, "%7llu %12s  %-20s %-15s %s\n", (unsigned long long)seq,
                                at, who, event, detail)
                      : fprintf(out, "%7llu %12s  %-20s %s\n", (unsigned long long)seq, at,
                                who, event);
    return n < 0 ? -1 : 0;
}

static int write_item(const lab_trace *t, const item *it, FILE *out)
{
    char event[LAB_NAME_MAX], detail[2 * LAB_NAME_MAX];
    const char *rest;
    if (it->what == MARK) {
        const lab_mark *m = &t->marks[it->index];
        split(m->name, event, sizeof event, &rest);
        snprintf(detail, sizeof detail, "%s%sdetail %lld", rest, rest[0] ? ", " : "",
                 (long long)m->detail);
        return line(out, m->seq, m->ns, lab_track_name(t, m->track), event, detail);
    }
    const lab_span *s = &t->spans[it->index];
    const char *who = t->tracks[s->track].name;
    if (it->what == END) {
        snprintf(detail, sizeof detail, "was %s", s->name);
        return line(out, s->seq1, s->ns1, who, "ends", detail);
    }
    if (s->state == LAB_OS_SLEEP) {
        uint64_t us = (s->ns1 - s->ns0) / 1000;
        snprintf(detail, sizeof detail, "%s, asked %lld us, %llu us long", s->name,
                 (long long)s->asked_us, (unsigned long long)us);
        return line(out, s->seq0, s->ns1, who, "os-sleep", detail);
    }
    if (s->state == LAB_NAMED) {
        split(s->name, event, sizeof event, &rest);
        return line(out, s->seq0, s->ns0, who, event, rest);
    }
    return line(out, s->seq0, s->ns0, who, s->name, "");
}

int lab_timeline_write(const lab_trace *t, FILE *out, size_t max_lines)
{
    size_t cap = 2 * t->nspans + t->nmarks, n = 0;
    item *items = malloc((cap ? cap : 1) * sizeof *items);
    if (!items)
        return -1;
    for (size_t i = 0; i < t->nspans; i++) {
        items[n++] = (item){t->spans[i].order0, BEGIN, i};
        if (t->spans[i].state != LAB_OS_SLEEP && !followed(t, i))
            items[n++] = (item){t->spans[i].order1, END, i};
    }
    for (size_t i = 0; i < t->nmarks; i++)
        items[n++] = (item){t->marks[i].order, MARK, i};
    qsort(items, n, sizeof *items, by_order);
    int rc = fprintf(out, "# stvm trace JSON: %zu processes, %zu states, %zu instants; the VM "
                          "kept %lld events, dropped %lld; clock %s\n"
                          "#   seq    time (ms)  process              event           detail\n",
                     t->ntracks, t->nspans, t->nmarks, (long long)t->events,
                     (long long)t->dropped, t->clock[0] ? t->clock : "unknown") < 0 ? -1 : 0;
    size_t shown = max_lines && max_lines < n ? max_lines : n;
    for (size_t i = 0; i < shown && rc == 0; i++)
        rc = write_item(t, &items[i], out);
    if (rc == 0 && shown < n &&
        fprintf(out, "# ... %zu more lines not shown (stvm-lab show prints them all)\n",
                n - shown) < 0)
        rc = -1;
    free(items);
    return rc;
}
