/*
 * lab_html_write: fills the page template (lab/html_page.html) with a trace's data as
 * JSON, its text timeline and its title. The data is the reader's model, not the events:
 * spans [track, state, seq0, seq1, ns0, ns1, name], marks [track, seq, ns, name, detail]
 * and counts [seq, ns, length], which the page's script draws. Everything the embedder
 * or a file named (process names, titles) is escaped for where it lands: JSON inside a
 * <script> element must not contain "</", HTML text must not contain '<' or '&'.
 */
#include "html.h"
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string, safe inside <script>: '<', '>' and '&' as \u escapes. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void html_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        switch (s[i]) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(s[i], f);
        }
    }
}

/* How many spans and marks fit (LAB_HTML_MAX_ITEMS), taken in the file's order: the
 * entries up to *cut_order are kept. */
static void cap(const lab_trace *t, size_t *spans, size_t *marks, size_t *cut_order)
{
    size_t s = 0, m = 0;
    *cut_order = SIZE_MAX;
    while ((s < t->nspans || m < t->nmarks) && s + m < LAB_HTML_MAX_ITEMS) {
        if (m >= t->nmarks || (s < t->nspans && t->spans[s].order0 < t->marks[m].order))
            s++;
        else
            m++;
    }
    if (s < t->nspans || m < t->nmarks) {
        size_t a = s ? t->spans[s - 1].order0 : 0, b = m ? t->marks[m - 1].order : 0;
        *cut_order = a > b ? a : b;
    }
    *spans = s;
    *marks = m;
}

/* "cut":null, or where the page's axes end (the states still open there are drawn to
 * it) and the sentence the page shows about it. */
static void data_cut(FILE *f, const lab_trace *t, size_t ns, size_t nm, size_t cut)
{
    if (cut == SIZE_MAX) {
        fputs("\"cut\":null", f);
        return;
    }
    char why[256];
    uint64_t last = ns ? t->spans[ns - 1].seq0 : 0, last_ns = ns ? t->spans[ns - 1].ns0 : 0;
    if (nm && t->marks[nm - 1].seq > last) {
        last = t->marks[nm - 1].seq;
        last_ns = t->marks[nm - 1].ns;
    }
    fprintf(f, "\"cut_seq\":%llu,\"cut_ns\":%llu,\"cut\":", (unsigned long long)last,
            (unsigned long long)last_ns);
    snprintf(why, sizeof why, "A big trace: this page draws its first %zu states and "
             "events (to seq %llu) of %zu; stvm-lab show prints them all, and Perfetto "
             "(ui.perfetto.dev) opens the whole JSON.", ns + nm, (unsigned long long)last,
             t->nspans + t->nmarks);
    json_string(f, why);
}

/* The states' names and the tracks (tid, name). */
static void data_tracks(FILE *f, const lab_trace *t)
{
    fputs(",\"states\":[", f);
    for (int s = 0; s < LAB_STATES; s++) {
        fputs(s ? "," : "", f);
        json_string(f, lab_state_name(s));
    }
    fputs("],\n\"tracks\":[", f);
    for (size_t i = 0; i < t->ntracks; i++) {
        fprintf(f, "%s[%llu,", i ? "," : "", (unsigned long long)t->tracks[i].tid);
        json_string(f, t->tracks[i].name);
        fputc(']', f);
    }
    fputc(']', f);
}

/* The first ns spans and nm marks. */
static void data_items(FILE *f, const lab_trace *t, size_t ns, size_t nm)
{
    fputs(",\n\"spans\":[", f);
    for (size_t i = 0; i < ns; i++) {
        const lab_span *s = &t->spans[i];
        fprintf(f, "%s[%u,%u,%llu,%llu,%llu,%llu,", i ? ",\n" : "", s->track, s->state,
                (unsigned long long)s->seq0, (unsigned long long)s->seq1,
                (unsigned long long)s->ns0, (unsigned long long)s->ns1);
        json_string(f, s->state == LAB_NAMED || s->state == LAB_OS_SLEEP ? s->name : "");
        fputc(']', f);
    }
    fputs("],\n\"marks\":[", f);
    for (size_t i = 0; i < nm; i++) {
        const lab_mark *m = &t->marks[i];
        fprintf(f, "%s[%lld,%llu,%llu,", i ? ",\n" : "", (long long)m->track,
                (unsigned long long)m->seq, (unsigned long long)m->ns);
        json_string(f, m->name);
        fprintf(f, ",%lld]", (long long)m->detail);
    }
    fputc(']', f);
}

/* The run queue's lengths, up to where the page stops. */
static void data_counts(FILE *f, const lab_trace *t, size_t ns, size_t nm, size_t cut)
{
    fputs(",\n\"counts\":[", f);
    uint64_t last_seq = cut == SIZE_MAX ? UINT64_MAX
                        : ns && (!nm || t->spans[ns - 1].seq0 >= t->marks[nm - 1].seq)
                            ? t->spans[ns - 1].seq0
                            : nm ? t->marks[nm - 1].seq : 0;
    for (size_t i = 0, n = 0; i < t->ncounts && t->counts[i].seq <= last_seq; i++, n++)
        fprintf(f, "%s[%llu,%llu,%lld]", n ? "," : "", (unsigned long long)t->counts[i].seq,
                (unsigned long long)t->counts[i].ns, (long long)t->counts[i].length);
    fputc(']', f);
}

static void data(FILE *f, const lab_trace *t, const char *title)
{
    size_t ns, nm, cut;
    cap(t, &ns, &nm, &cut);
    fputs("{\"title\":", f);
    json_string(f, title);
    fputs(",\"clock\":", f);
    json_string(f, t->clock[0] ? t->clock : "unknown");
    fprintf(f, ",\"events\":%lld,\"dropped\":%lld,", (long long)t->events,
            (long long)t->dropped);
    data_cut(f, t, ns, nm, cut);
    data_tracks(f, t);
    data_items(f, t, ns, nm);
    data_counts(f, t, ns, nm, cut);
    fputc('}', f);
}

/* The text timeline, HTML-escaped: written to memory first, then copied in. */
static int text(FILE *f, const lab_trace *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return -1;
    int rc = lab_timeline_write(t, mem, LAB_HTML_MAX_LINES);
    if (fclose(mem) != 0)
        rc = -1;
    if (rc == 0)
        html_text(f, buf, len);
    free(buf);
    return rc;
}

static void about_text(FILE *f, const char *about)
{
    if (!about || !about[0])
        return;
    fputs("<div class=\"about\">", f);
    while (*about) {
        size_t n = strcspn(about, "\n");
        fputs("<p>", f);
        html_text(f, about, n);
        fputs("</p>", f);
        about += n + (about[n] == '\n');
    }
    fputs("</div>", f);
}

int lab_html_write(const lab_trace *t, const char *path, const char *title, const char *about,
                   char *err, size_t errsize)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    const char *p = lab_html_page;
    for (const char *slot; rc == 0 && (slot = strchr(p, '@')) != NULL;) {
        fwrite(p, 1, (size_t)(slot - p), f);
        const char *end = strchr(slot + 1, '@');
        size_t n = end ? (size_t)(end - slot - 1) : 0;
        if (n == 5 && memcmp(slot + 1, "TITLE", 5) == 0) {
            html_text(f, title, SIZE_MAX);
        } else if (n == 5 && memcmp(slot + 1, "ABOUT", 5) == 0) {
            about_text(f, about);
        } else if (n == 4 && memcmp(slot + 1, "DATA", 4) == 0) {
            data(f, t, title);
        } else if (n == 4 && memcmp(slot + 1, "TEXT", 4) == 0) {
            rc = text(f, t);
        } else {                /* an '@' of the page's own text */
            fputc('@', f);
            p = slot + 1;
            continue;
        }
        p = end + 1;
    }
    fputs(p, f);
    if (ferror(f))
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    if (rc) {
        snprintf(err, errsize, "%s: the page could not be written", path);
        remove(path);
    }
    return rc;
}
