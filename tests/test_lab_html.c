/*
 * The lab's trace reader and HTML page (lab/trace_read.c, lab/timeline.c, lab/html.c;
 * suite lab_html, linked into the test binary): a run's JSON read back gives the same
 * timeline as the run's own text, seq by seq, for everything the JSON keeps; a bad file
 * is refused with what and where, never a crash; the page carries a lane per process, a
 * mark per instant, valid data and nothing from outside (tests/lab_html_check.py reads
 * it as a browser would not: as JSON). Suite lab_show runs build/stvm-lab show (make
 * check; make test leaves it out, as it does the lab suite).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lab/html.h"
#include "../lab/timeline.h"
#include "../lab/trace_read.h"
#include "helpers.h"

/* ---- a small run that has every kind of lane the page draws ------------------------ */

typedef struct pingpong {
    stvm_semaphore *ping, *pong;
} pingpong;

static void ponger(stvm_vm *vm, void *arg)
{
    pingpong *p = arg;
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(stvm_semaphore_wait(vm, p->ping), STVM_OK);
        cr_assert_eq(stvm_semaphore_signal(vm, p->pong), STVM_OK);
    }
}

static void sleeper(stvm_vm *vm, void *arg)
{
    cr_assert_eq(stvm_delay_wait_ms(vm, 5), STVM_OK);
}

static void pinger(stvm_vm *vm, void *arg)
{
    pingpong *p = arg;
    cr_assert_eq(stvm_spawn(vm, 41, "pong</script>&", ponger, p, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 30, "sleeper", sleeper, NULL, NULL), STVM_OK);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(stvm_semaphore_signal(vm, p->ping), STVM_OK);
        cr_assert_eq(stvm_semaphore_wait(vm, p->pong), STVM_OK);
    }
    cr_assert_eq(stvm_semaphore_signal(vm, p->pong), STVM_OK);   /* an excess signal */
}

/* Run it traced; *json gets the JSON's path, *text the run's own text timeline. */
static stvm_vm *traced_run(char *json, size_t size, char **text)
{
    stvm_vm *vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
    pingpong p;
    cr_assert_eq(stvm_semaphore_new(vm, &p.ping), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &p.pong), STVM_OK);
    cr_assert_eq(stvm_trace_start(vm, 4096), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "ping", pinger, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(stvm_trace_stop(vm), STVM_OK);
    temp_template(json, size, "stvm-lab-html", ".json");
    int fd = mkstemps(json, 5);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(stvm_trace_write_json(vm, json), STVM_OK);
    size_t len;
    FILE *mem = open_memstream(text, &len);
    cr_assert_eq(stvm_trace_write_text(vm, mem), STVM_OK);
    fclose(mem);
    stvm_semaphore_free(vm, p.ping);
    stvm_semaphore_free(vm, p.pong);
    return vm;
}

/* ---- the timeline's lines -------------------------------------------------------- */

typedef struct tline {
    long seq;
    char time[16], who[32], event[32], detail[128];
} tline;

/* The columns of a timeline line ("%7llu %12s  %-20s %-15s detail"); false for a comment. */
static bool parse_line(const char *s, tline *l)
{
    memset(l, 0, sizeof *l);
    if (s[0] == '#' || strlen(s) < 36)
        return false;
    l->seq = strtol(s, NULL, 10);
    sscanf(s + 8, "%15s", l->time);
    snprintf(l->who, sizeof l->who, "%.20s", s + 22);
    for (size_t n = strlen(l->who); n && l->who[n - 1] == ' ';)
        l->who[--n] = 0;
    sscanf(s + 43, "%31s", l->event);
    if (strlen(s) > 59)
        snprintf(l->detail, sizeof l->detail, "%s", s + 59);
    char *nl = strchr(l->detail, '\n');
    if (nl)
        *nl = 0;
    return true;
}

static size_t lines_of(char *text, tline *out, size_t max)
{
    size_t n = 0;
    for (char *s = strtok(text, "\n"); s && n < max; s = strtok(NULL, "\n"))
        if (parse_line(s, &out[n]))
            n++;
    return n;
}

static const tline *at_seq(const tline *l, size_t n, long seq)
{
    for (size_t i = 0; i < n; i++)
        if (l[i].seq == seq)
            return &l[i];
    return NULL;
}

static char *timeline_of(const lab_trace *t, size_t max_lines)
{
    char *buf;
    size_t len;
    FILE *mem = open_memstream(&buf, &len);
    cr_assert_eq(lab_timeline_write(t, mem, max_lines), 0);
    fclose(mem);
    return buf;
}

/* ---- the reader: round trip ------------------------------------------------------ */

Test(lab_html, a_runs_json_read_back_gives_the_runs_timeline_for_everything_the_json_keeps)
{
    char json[256], err[512], *text;
    stvm_vm *vm = traced_run(json, sizeof json, &text);
    lab_trace t;
    cr_assert_eq(lab_trace_read(json, &t, err, sizeof err), 0, "%s", err);
    char *back = timeline_of(&t, 0);
    static tline orig[4096], read[4096];
    size_t no = lines_of(text, orig, 4096), nr = lines_of(back, read, 4096);
    cr_assert_gt(nr, 10u, "the read-back timeline has %zu lines", nr);
    size_t instants = 0, switches = 0;
    for (size_t i = 0; i < nr; i++) {
        const tline *r = &read[i], *o = at_seq(orig, no, r->seq);
        cr_assert_not_null(o, "seq %ld (%s %s) is not in the run's timeline", r->seq, r->who,
                           r->event);
        cr_expect_str_eq(r->time, o->time, "seq %ld: time %s, the run says %s", r->seq, r->time,
                         o->time);
        if (strcmp(r->event, "running") == 0) {          /* a switch to this process */
            char to[64];   /* "#id (": the column shortens names, the detail does not */
            snprintf(to, sizeof to, "%s (", strrchr(r->who, '#'));
            cr_expect_str_eq(o->event, "switch", "seq %ld runs %s: the run has %s", r->seq,
                             r->who, o->event);
            cr_expect(strncmp(o->detail, "-> ", 3) == 0 && strstr(o->detail, to),
                      "seq %ld: %s runs, the run says %s", r->seq, r->who, o->detail);
            switches++;
        } else if (strcmp(r->event, "ready") == 0) {     /* READY, or a switch away */
            cr_expect_str_eq(r->who, o->who, "seq %ld", r->seq);
            cr_expect(strcmp(o->event, "ready") == 0 || strcmp(o->event, "switch") == 0,
                      "seq %ld ready: the run has %s", r->seq, o->event);
        } else if (strcmp(r->event, "waiting") == 0 || strcmp(r->event, "sleeping") == 0) {
            cr_expect_str_eq(r->who, o->who, "seq %ld", r->seq);
            cr_expect_str_eq(o->event, "switch", "seq %ld %s", r->seq, r->event);
            cr_expect(strstr(o->detail, "(waited)") != NULL, "seq %ld: %s", r->seq, o->detail);
        } else if (strcmp(r->event, "ends") == 0 && r->seq == orig[no - 1].seq) {
            /* the trace's end closes every state still open */
        } else if (strcmp(r->event, "ends") == 0 || strcmp(r->event, "os-sleep") == 0) {
            cr_expect_str_eq(r->who, o->who, "seq %ld %s: the run has %s", r->seq, r->event,
                             o->who);
        } else {                                         /* an instant: the same event */
            cr_expect_str_eq(r->who, o->who, "seq %ld: %s, the run has %s", r->seq, r->who, o->who);
            cr_expect_str_eq(r->event, o->event, "seq %ld: %s, the run has %s", r->seq, r->event,
                             o->event);
            instants++;
        }
    }
    /* ... and every instant of the run is read back. */
    static const char *const kinds[] = {"sem-signal", "sem-excess", "timer-fired",
                                        "delay-expired"};
    for (size_t i = 0; i < no; i++)
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
            if (strcmp(orig[i].event, kinds[k]) == 0) {
                const tline *r = at_seq(read, nr, orig[i].seq);
                cr_expect(r && strcmp(r->event, kinds[k]) == 0,
                          "the run's %s at seq %ld is not read back", kinds[k], orig[i].seq);
            }
    cr_expect_gt(instants, 5u);
    cr_expect_gt(switches, 5u);
    cr_expect_eq(t.ntracks, 6u, "host, idle, ping, pong, sleeper, the Delay process: %zu",
                 t.ntracks);
    cr_expect_str_eq(t.clock, "simulated");
    cr_expect_eq(t.dropped, 0);
    cr_expect_eq((int64_t)t.events, stvm_trace_count(vm));
    free(back);
    free(text);
    lab_trace_free(&t);
    unlink(json);
    vm_done(vm);
}

Test(lab_html, every_golden_lab_json_is_read_and_its_timeline_is_written)
{
    static const char *const names[] = {"mutex_handoff", "delay_round_trip",
                                        "zn_first_read_legacy", "priority_inversion"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[256], err[512];
        snprintf(path, sizeof path, "tests/lab/%s.json", names[i]);
        lab_trace t;
        cr_assert_eq(lab_trace_read(path, &t, err, sizeof err), 0, "%s", err);
        cr_expect_gt(t.nspans, 5u, "%s", path);
        char *text = timeline_of(&t, 0);
        cr_expect(strncmp(text, "# stvm trace JSON: ", 19) == 0, "%s", text);
        free(text);
        lab_trace_free(&t);
    }
}

/* ---- the reader: bad files --------------------------------------------------------- */

Test(lab_html, a_bad_file_is_refused_with_what_is_wrong_and_where)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"", "f.json:1:1: the file is empty"},
        {"[]", "f.json:1:1: the file must be a JSON object"},
        {"{\"traceEvents\":[", "f.json:1:17: entry 0 of traceEvents is not an object"},
        {"{\"traceEvents\":[{\"ph\":\"B\",\"tid\":1,\"ts\":0,\"name\":\"x\",\"args\":{\"seq\":1}}",
         "the file ends where ']' was expected"},
        {"{\"traceEvents\":[]} x", "f.json:1:20: text after the JSON object"},
        {"{\"other\":1}", "no traceEvents array"},
        {"{\"traceEvents\":[{\"ph\":\"B\",\n\"tid\":01}]}", "f.json:2:8: '}' expected, found '1'"},
        {"{\"traceEvents\":[{\"ph\":\"B\",\"tid\":-1}]}", "tid must be an integer"},
        {"{\"traceEvents\":[{\"ph\":\"B\",\"tid\":1.5}]}", "tid must be an integer"},
        {"{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1e400}]}", "a number out of range"},
        {"{\"traceEvents\":[{\"ph\":\"i\",\"ts\":-3}]}", "ts must be from 0"},
        {"{\"traceEvents\":[{\"ph\":\"B\",\"tid\":1,\"ts\":0,\"name\":\"x\"}]}", "has no args.seq"},
        {"{\"traceEvents\":[{\"ph\":\"E\",\"tid\":1,\"ts\":0,\"args\":{\"seq\":1}}]}",
         "where no slice is open"},
        {"{\"traceEvents\":[{\"ph\":\"B\",\"tid\":1,\"ts\":0,\"name\":\"a\",\"args\":{\"seq\":1}},"
         "{\"ph\":\"B\",\"tid\":1,\"ts\":0,\"name\":\"b\",\"args\":{\"seq\":2}}]}",
         "\"b\" begins on tid 1 while \"a\" is open"},
        {"{\"traceEvents\":[{\"ph\":\"B\",\"tid\":1,\"ts\":0,\"name\":\"a\",\"args\":{\"seq\":1}}]}",
         "never ends"},
        {"{\"traceEvents\":[{\"ph\":\"B\",\"tid\":1,\"ts\":5,\"name\":\"a\",\"args\":{\"seq\":1}},"
         "{\"ph\":\"E\",\"tid\":1,\"ts\":4,\"args\":{\"seq\":2}}]}", "ends before it begins"},
        {"{\"traceEvents\":[{\"ph\":\"i\",\"ts\":0,\"name\":\"a\",\"args\":{\"seq\":1}}]}",
         "an instant without tid must have scope \"p\""},
        {"{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"thread_name\",\"tid\":1}]}", "no args.name"},
        {"{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"a\tb\"}]}", "a control character (0x09)"},
        {"{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"\\x\"}]}", "an unknown escape \\x"},
        {"{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"\\u12g4\"}]}", "four hexadecimal digits"},
        {"{\"traceEvents\":[{\"ph\":\"XY\"}]}", "ph must be one letter"},
        {"{\"traceEvents\":[{\"tid\":1}]}", "entry 0 has no \"ph\""},
        {"{\"traceEvents\":[1]}", "entry 0 of traceEvents is not an object"},
        {"{\"traceEvents\":[{\"ph\":\"M\",\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}", "nested more than 64 deep"},
        {"{\"traceEvents\":[{\"ph\":\"M\",\"x\":tru}]}", "a JSON value expected"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lab_trace t;
        char err[512] = "";
        int rc = lab_trace_parse(cases[i].text, strlen(cases[i].text), "f.json", &t, err,
                                 sizeof err);
        cr_expect_eq(rc, -1, "case %zu (%s) was accepted", i, cases[i].text);
        cr_expect(strstr(err, cases[i].message) != NULL, "case %zu: \"%s\" does not say \"%s\"",
                  i, err, cases[i].message);
        cr_expect(strncmp(err, "f.json:", 7) == 0, "case %zu: \"%s\" does not say where", i, err);
        cr_expect_eq(t.nspans + t.nmarks + t.ntracks, 0u, "case %zu left a half-read trace", i);
    }
}

Test(lab_html, a_missing_file_is_refused_with_its_name_and_the_reason)
{
    lab_trace t;
    char err[512];
    cr_assert_eq(lab_trace_read("/nonexistent/trace.json", &t, err, sizeof err), -1);
    cr_expect_str_eq(err, "/nonexistent/trace.json: No such file or directory");
}

Test(lab_html, every_truncation_of_a_real_file_is_refused_and_never_crashes)
{
    char *text = file_slurp("tests/lab/delay_round_trip.json");
    size_t len = strlen(text);
    for (size_t n = 0; n < len - 2; n += 7) {   /* the last "}\n" cut is still whole */
        lab_trace t;
        char err[512];
        cr_expect_eq(lab_trace_parse(text, n, "cut.json", &t, err, sizeof err), -1,
                     "the first %zu of %zu bytes were accepted", n, len);
    }
    free(text);
}

/* ---- the page ----------------------------------------------------------------------- */

/* The page of t at a temporary path; lab_html_check.py's "tracks N spans N marks N counts
 * N" line in *counts. */
static void page_of(const lab_trace *t, char *html, size_t size, char *counts, size_t csize)
{
    char err[512], cmd[512];
    temp_template(html, size, "stvm-lab-html", ".html");
    int fd = mkstemps(html, 5);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(lab_html_write(t, html, "a <test> & run", "set-up: one\nquestion: two?", err,
                                sizeof err), 0, "%s", err);
    snprintf(cmd, sizeof cmd, "python3 tests/lab_html_check.py %s", html);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    if (!fgets(counts, (int)csize, p))
        counts[0] = 0;
    cr_assert_eq(pclose(p), 0, "lab_html_check.py: %s", counts);
}

Test(lab_html, the_page_has_a_lane_per_process_a_mark_per_instant_and_nothing_from_outside)
{
    char json[256], html[256], err[512], counts[256], want[256], *text;
    stvm_vm *vm = traced_run(json, sizeof json, &text);
    lab_trace t;
    cr_assert_eq(lab_trace_read(json, &t, err, sizeof err), 0, "%s", err);
    page_of(&t, html, sizeof html, counts, sizeof counts);
    snprintf(want, sizeof want, "tracks %zu spans %zu marks %zu counts %zu\n", t.ntracks,
             t.nspans, t.nmarks, t.ncounts);
    cr_expect_str_eq(counts, want);
    char *page = file_slurp(html);
    /* Names come from the embedder: escaped in the data and in the text. */
    cr_expect_null(strstr(page, "pong</script>"), "a process name ended the data's script");
    cr_expect_not_null(strstr(page, "pong\\u003c/script\\u003e\\u0026"));
    cr_expect_not_null(strstr(page, "pong&lt;/script&gt;&amp;"), "the text timeline's name");
    cr_expect_not_null(strstr(page, "<h1>a &lt;test&gt; &amp; run</h1>"));
    cr_expect_not_null(strstr(page, "<p>question: two?</p>"));
    cr_expect_not_null(strstr(page, "<noscript>"));
    cr_expect_null(strstr(page, "@DATA@"), "a slot left unfilled");
    free(page);
    free(text);
    lab_trace_free(&t);
    unlink(json);
    unlink(html);
    vm_done(vm);
}

Test(lab_html, a_trace_past_the_pages_limit_is_cut_and_the_page_says_where)
{
    /* 15,000 running/ready pairs on 3 tracks: 30,000 spans, past LAB_HTML_MAX_ITEMS. */
    size_t cap = 16 << 20, len = 0;
    char *json = malloc(cap);
    cr_assert_not_null(json);
    len += (size_t)snprintf(json + len, cap - len, "{\"traceEvents\":[");
    for (int seq = 0; seq < 30000; seq++) {
        int tid = 1 + seq % 3;
        const char *state = (seq / 3) % 2 ? "ready" : "running";
        len += (size_t)snprintf(json + len, cap - len,
                                "%s{\"ph\":\"B\",\"tid\":%d,\"ts\":%d,\"name\":\"%s\",\"args\":{\"seq\":%d}},"
                                "{\"ph\":\"E\",\"tid\":%d,\"ts\":%d,\"args\":{\"seq\":%d}}",
                                seq ? "," : "", tid, seq, state, seq, tid, seq + 1, seq + 1);
    }
    len += (size_t)snprintf(json + len, cap - len, "]}");
    lab_trace t;
    char err[512], html[256], counts[256];
    cr_assert_eq(lab_trace_parse(json, len, "big.json", &t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.nspans, 30000u);
    page_of(&t, html, sizeof html, counts, sizeof counts);
    cr_expect_str_eq(counts, "tracks 3 spans 20000 marks 0 counts 0\n");
    char *page = file_slurp(html);
    cr_expect_not_null(strstr(page, "this page draws its first 20000 states and events"));
    cr_expect_not_null(strstr(page, "more lines not shown"), "the text timeline is cut too");
    free(page);
    free(json);
    lab_trace_free(&t);
    unlink(html);
}

/* ---- the tool (make check: it runs build/stvm-lab) ----------------------------------- */

Test(lab_show, show_prints_the_timeline_of_a_golden_json_and_writes_its_page, .timeout = 60)
{
    char html[256], args[1024];
    temp_template(html, sizeof html, "stvm-lab-show", ".html");
    int fd = mkstemps(html, 5);
    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(args, sizeof args, "show tests/lab/mutex_handoff.json --html %s", html);
    tool_output r = tool_run("stvm-lab", args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strncmp(r.out, "# stvm trace JSON: 6 processes", 30) == 0, "%s", r.out);
    cr_expect_not_null(strstr(r.out, "first#3              mutex-handoff   m, detail 2"));
    char *page = file_slurp(html);
    cr_expect_not_null(strstr(page, "\"tracks\":[[0,\"host\"],[1,\"Idle Process#1\"]"));
    free(page);
    tool_output_free(&r);
    unlink(html);
}

Test(lab_show, show_refuses_a_bad_file_with_status_1_and_a_missing_one_with_usage_2)
{
    tool_output r = tool_run("stvm-lab", "show tests/lab/mutex_handoff.txt");
    cr_expect_eq(r.status, 1);
    cr_expect(strncmp(r.err, "stvm-lab: tests/lab/mutex_handoff.txt:1:1: ", 43) == 0, "%s",
              r.err);
    tool_output_free(&r);
    r = tool_run("stvm-lab", "show");
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "show needs a trace JSON file"), "%s", r.err);
    tool_output_free(&r);
    r = tool_run("stvm-lab", "show a.json --bogus");
    cr_expect_eq(r.status, 2);
    tool_output_free(&r);
}

Test(lab_show, run_html_writes_the_page_show_makes_from_the_same_json, .timeout = 60)
{
    char dir[256], cmd[1024];
    temp_template(dir, sizeof dir, "stvm-lab-pages", "");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "run priority_preemption --trace %s/p.json --html %s/run.html "
                              "> /dev/null", dir, dir);
    tool_output r = tool_run("stvm-lab", cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    tool_output_free(&r);
    snprintf(cmd, sizeof cmd, "show %s/p.json --html %s/show.html > /dev/null", dir, dir);
    r = tool_run("stvm-lab", cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    tool_output_free(&r);
    snprintf(cmd, sizeof cmd, "%s/run.html", dir);
    char *a = file_slurp(cmd);
    snprintf(cmd, sizeof cmd, "%s/show.html", dir);
    char *b = file_slurp(cmd);
    /* The same data; run's page also carries the scenario's set-up, question and rule. */
    const char *da = strstr(a, "id=\"trace-data\">"), *db = strstr(b, "id=\"trace-data\">");
    cr_assert(da && db);
    cr_expect(strncmp(strstr(da, ",\"clock\""), strstr(db, ",\"clock\""), 2000) == 0);
    cr_expect_not_null(strstr(a, "<p>question: "));
    free(a);
    free(b);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}
