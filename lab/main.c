/*
 * stvm-lab: `list`, `run NAME|FILE [--trace FILE] [--png FILE] [--html FILE] [--predict]`,
 * `check NAME|FILE` and `show TRACE.json` (show.c). A scenario is a file
 * (docs/scenario-format.md); a NAME is one of the built-in files, found in the folder
 * scenario_dir() names. A run prints the scenario's set-up, question and rule, then its
 * timeline (stvm_trace_write_text); --trace writes the Trace Event JSON, --png a picture
 * drawn by gnuplot, --html the page of html.c. check runs it and tells whether its
 * expected answer holds. `--help` (also
 * `-h`, `help`) and `--version` (also `version`) answer on stdout with status 0, as
 * stvm-bench's do; a usage error is told on stderr with status 2. The manual page
 * man/stvm-lab.1 names every option of the help (scripts/man-check.sh checks it).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tools/data_dir.h"
#include "lab.h"
#include "png.h"
#include "show.h"

#define RING_EVENTS 4096
#define SUFFIX ".scenario"

#ifndef STVM_LAB_DATADIR
#define STVM_LAB_DATADIR "/usr/local/share/stvm/scenarios"
#endif

/* Fail loudly on an error of a writer. */
static void lab_check(int err, const char *what)
{
    if (err < 0) {
        fprintf(stderr, "stvm-lab: %s: %s\n", what, stvm_strerror(err));
        exit(1);
    }
}

/* "label: text", wrapped at word boundaries to fit 100 columns, continuation lines
 * indented under the text. */
static void say(const char *label, const char *text)
{
    int indent = (int)strlen(label) + 2, col = printf("%s:", label);
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > indent && col + 1 + (int)word > 100)
            col = printf("\n%*s", indent - 1, "") - 1;
        col += printf(" %.*s", (int)word, text);
        text += word;
        text += strspn(text, " ");
    }
    putchar('\n');
}

/* The built-in scenarios' folder: $STVM_LAB_SCENARIOS, the build tree's lab/scenarios
 * beside build/stvm-lab, the installed <exe>/../share/stvm/scenarios, then the DATADIR
 * the tool was built for (tools/data_dir.h); NULL when none exists. */
static const char *scenario_dir(void)
{
    static char dir[4096];
    return tool_data_path("STVM_LAB_SCENARIOS", "lab/scenarios", "scenarios", STVM_LAB_DATADIR, NULL,
                          dir, sizeof dir)
               ? dir
               : NULL;
}

/* A file when it has a '/' or ends in .scenario, else a built-in scenario's name. */
static bool is_file(const char *arg)
{
    size_t n = strlen(arg), k = strlen(SUFFIX);
    return strchr(arg, '/') || (n > k && strcmp(arg + n - k, SUFFIX) == 0);
}

/* Load a scenario: 0, or 2 with the message told (a bad file, no such scenario). */
static int load(const char *arg, lab_scenario *s)
{
    char path[4200], why[1024];
    if (is_file(arg)) {
        snprintf(path, sizeof path, "%s", arg);
    } else {
        const char *dir = scenario_dir();
        if (!dir) {
            fprintf(stderr, "stvm-lab: no folder of built-in scenarios (set STVM_LAB_SCENARIOS)\n");
            return 2;
        }
        snprintf(path, sizeof path, "%s/%s" SUFFIX, dir, arg);
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "stvm-lab: no scenario %s (stvm-lab list names them; a file's name "
                            "has a '/' or ends in " SUFFIX ")\n", arg);
            return 2;
        }
    }
    if (!lab_load(path, s, why, sizeof why)) {
        /* A built-in scenario is named by its name, a file by its path. */
        fprintf(stderr, "stvm-lab: %s\n", why);
        return 2;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list(void)
{
    const char *dir = scenario_dir();
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        fprintf(stderr, "stvm-lab: no folder of built-in scenarios (set STVM_LAB_SCENARIOS)\n");
        return 1;
    }
    char **names = NULL;
    size_t n = 0, k = strlen(SUFFIX);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        char **grown = len > k && strcmp(e->d_name + len - k, SUFFIX) == 0
                           ? realloc(names, sizeof *names * (n + 1)) : NULL;
        if (grown && (grown[n] = strndup(e->d_name, len - k)))
            names = grown, n++;
        else if (grown)
            names = grown;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        lab_scenario s;
        if (load(names[i], &s) == 0) {
            printf("%s  %s\n", names[i], s.title);
            lab_scenario_free(&s);
        } else {
            rc = 1;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

/* Show the set-up and, on a terminal, wait until the reader has made a prediction. */
static void predict(const lab_scenario *s, bool ask)
{
    if (s->setup)
        say("set-up", s->setup);
    if (s->question)
        say("question", s->question);
    if (!ask || !isatty(STDIN_FILENO))
        return;
    printf("Write down the order you expect, then press Enter. ");
    fflush(stdout);
    int c;
    while ((c = getchar()) != EOF && c != '\n')
        ;
}

/* Play s; 0, or 1 with the message told when the VM could not be made. */
static int play(const lab_scenario *s, lab_run *r)
{
    lab_limits lim = LAB_LIMITS_DEFAULT;
    char why[1024];
    if (!lab_play(s, &lim, RING_EVENTS, r, why, sizeof why)) {
        fprintf(stderr, "stvm-lab: %s\n", why);
        return 1;
    }
    return 0;
}

/* After the timeline: how a run that did not finish ended. */
static void tell_outcome(const lab_run *r)
{
    if (r->outcome == LAB_DEADLOCK)
        printf("\noutcome: deadlock: no process can ever run again\n%s", r->blocked);
    else if (r->outcome == LAB_STOPPED)
        printf("\noutcome: stopped at the lab's horizon (a wait on an external semaphore nobody "
               "signals would last for ever)\n%s", r->blocked);
}

/* --html: the page is made from the run's JSON (--trace's file, or a temporary one), so
 * that it is the page `stvm-lab show FILE --html` makes from that file. */
static int run_html(stvm_vm *vm, const lab_scenario *s, const char *json, const char *html)
{
    char tmp[512];
    if (!json) {
        int fd = lab_temp_file(tmp, sizeof tmp, ".json");
        if (fd < 0)
            return 1;
        close(fd);
        lab_check(stvm_trace_write_json(vm, tmp), tmp);
    }
    char about[2048];
    snprintf(about, sizeof about, "set-up: %s\nquestion: %s\nrule: %s",
             s->setup ? s->setup : "-", s->question ? s->question : "-", s->rule ? s->rule : "-");
    int rc = lab_html_from_json(json ? json : tmp, html, s->name, about);
    if (!json)
        unlink(tmp);
    return rc;
}

static int run(int argc, char **argv)
{
    const char *json = NULL, *png = NULL, *html = NULL;
    bool ask = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--predict") == 0)
            ask = true;
        else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc)
            json = argv[++i];
        else if (strcmp(argv[i], "--png") == 0 && i + 1 < argc)
            png = argv[++i];
        else if (strcmp(argv[i], "--html") == 0 && i + 1 < argc)
            html = argv[++i];
        else {
            fprintf(stderr, "stvm-lab: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    lab_scenario s;
    int rc = load(argv[0], &s);
    if (rc)
        return rc;
    printf("scenario: %s\n", s.name);
    predict(&s, ask);
    lab_run r;
    if ((rc = play(&s, &r))) {
        lab_scenario_free(&s);
        return rc;
    }
    if (s.rule)
        say("rule", s.rule);
    putchar('\n');
    fflush(stdout);
    lab_check(stvm_trace_write_text(r.vm, stdout), "writing the timeline");
    tell_outcome(&r);
    fflush(stdout);
    if (json)
        lab_check(stvm_trace_write_json(r.vm, json), json);
    rc = png ? lab_png(r.vm, png, s.name) : 0;
    if (html && rc == 0)
        rc = run_html(r.vm, &s, json, html);
    if (r.outcome == LAB_FAILED) {
        fprintf(stderr, "stvm-lab: %s\n", r.error);
        rc = 1;
    }
    lab_run_free(&r);
    lab_scenario_free(&s);
    return rc;
}

/* Run the scenario without printing it, and check its expected answer. */
static int check(const char *arg)
{
    lab_scenario s;
    int rc = load(arg, &s);
    if (rc)
        return rc;
    const char *file = is_file(arg) ? arg : s.name;
    if (!s.has_expect) {
        fprintf(stderr, "stvm-lab: %s: no expect block: the scenario states no answer to check\n", file);
        lab_scenario_free(&s);
        return 2;
    }
    lab_run r;
    if ((rc = play(&s, &r))) {
        lab_scenario_free(&s);
        return rc;
    }
    int failed = lab_expect_check(&s, file, &r, stdout);
    if (r.outcome == LAB_FAILED) {
        printf("%s\n", r.error);
        failed++;
    }
    if (failed) {
        if (s.answer)
            say("the answer stated", s.answer);
        printf("%s: the expected answer does not hold (%d of %d assertions failed)\n", file, failed,
               s.nasserts);
    } else {
        printf("%s: the expected answer holds (%d assertion%s)\n", file, s.nasserts,
               s.nasserts == 1 ? "" : "s");
    }
    lab_run_free(&r);
    lab_scenario_free(&s);
    return failed ? 1 : 0;
}

/* The synopsis, then (full) what each command and option does: the help names every
 * option, and the manual page must name them too. */
static void usage(FILE *f, bool full)
{
    fprintf(f, "usage: stvm-lab list\n"
               "       stvm-lab run NAME|FILE [--trace FILE.json] [--png FILE.png]\n"
               "                              [--html FILE.html] [--predict]\n"
               "       stvm-lab check NAME|FILE\n"
               "       stvm-lab show TRACE.json [--html FILE.html] [--png FILE.png]\n"
               "       stvm-lab --help | --version\n");
    if (!full) {
        fprintf(f, "Try 'stvm-lab --help'.\n");
        return;
    }
    fprintf(f, "\n"
               "Commands:\n"
               "  list             name each built-in scenario with a one-line summary\n"
               "  run NAME|FILE    print the scenario's set-up, question and rule, then the\n"
               "                   timeline of its run on the simulated clock; NAME is a\n"
               "                   built-in scenario, FILE a scenario file (a '/' in it, or\n"
               "                   the suffix .scenario: docs/scenario-format.md)\n"
               "  check NAME|FILE  run the scenario and check its expected answer (its expect\n"
               "                   block): status 0 when it holds, 1 with the reasons when not\n"
               "  show TRACE.json  read a trace JSON stvm wrote (run --trace, stvm-bench --trace)\n"
               "                   and print its timeline: the states and instants the JSON keeps\n"
               "  help             this text (also --help, -h)\n"
               "  version          the tool and library versions and the back end (also\n"
               "                   --version)\n"
               "\n"
               "Options of run:\n"
               "  --trace FILE  also write the run's Trace Event JSON to FILE\n"
               "  --png FILE    also draw who runs, event after event, into FILE (gnuplot)\n"
               "  --html FILE   also write the timeline as one self-contained HTML page:\n"
               "                a lane per process, zoom, each event's detail on a click,\n"
               "                the run queue at a clicked moment (any browser, offline)\n"
               "  --predict     on a terminal, wait for a prediction before the run\n"
               "\n"
               "Options of show:\n"
               "  --html FILE   write the trace's page (as run --html)\n"
               "  --png FILE    draw who runs into FILE (gnuplot)\n");
}

int main(int argc, char **argv)
{
    const char *cmd = argc >= 2 ? argv[1] : "";
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout, true);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("stvm-lab %s (library %s, back end %s)\n", STVM_VERSION_STRING,
               stvm_version_string(), stvm_context_backend());
        return 0;
    }
    if (strcmp(cmd, "list") == 0 && argc == 2)
        return list();
    if (strcmp(cmd, "run") == 0 && argc >= 3)
        return run(argc - 2, argv + 2);
    if (strcmp(cmd, "show") == 0)
        return lab_show(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0 && argc == 3)
        return check(argv[2]);
    if (strcmp(cmd, "list") == 0)
        fprintf(stderr, "stvm-lab: list takes no arguments\n");
    else if (strcmp(cmd, "run") == 0)
        fprintf(stderr, "stvm-lab: run needs a scenario's name (stvm-lab list names them) or file\n");
    else if (strcmp(cmd, "check") == 0)
        fprintf(stderr, "stvm-lab: check needs one scenario's name or file\n");
    else if (argc >= 2)
        fprintf(stderr, "stvm-lab: unknown command '%s'\n", cmd);
    usage(stderr, false);
    return 2;
}
