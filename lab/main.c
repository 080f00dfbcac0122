/*
 * stvm-lab: `list`, `run NAME [--trace FILE] [--png FILE] [--html FILE] [--predict]` and
 * `show TRACE.json` (show.c). A run prints the scenario's set-up, question and rule, then
 * its timeline (stvm_trace_write_text); --trace writes the Trace Event JSON, --png a
 * picture drawn by gnuplot, --html the page of html.c. `--help` (also
 * `-h`, `help`) and `--version` (also `version`) answer on stdout with status 0, as
 * stvm-bench's do; a usage error is told on stderr with status 2. The manual page
 * man/stvm-lab.1 names every option of the help (scripts/man-check.sh checks it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab.h"
#include "png.h"
#include "show.h"

#define SIM_START_US 3913056000000000ull   /* 2025-01-01 UTC, in us since 1901 */
#define RING_EVENTS 4096

void lab_check(int err, const char *what)
{
    if (err < 0) {
        fprintf(stderr, "stvm-lab: %s: %s\n", what, stvm_strerror(err));
        exit(1);
    }
}

void lab_spawn(stvm_vm *vm, int priority, const char *name, stvm_fn fn, void *arg)
{
    lab_check(stvm_spawn(vm, priority, name, fn, arg, NULL), name);
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

static const lab_scenario *find(const char *name)
{
    for (const lab_scenario *s = lab_scenarios; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

static int list(void)
{
    for (const lab_scenario *s = lab_scenarios; s->name; s++)
        printf("%s  %s\n", s->name, s->summary);
    return 0;
}

/* Show the set-up and, on a terminal, wait until the reader has made a prediction. */
static void predict(const lab_scenario *s)
{
    say("set-up", s->setup);
    say("question", s->question);
    if (!isatty(STDIN_FILENO))
        return;
    printf("Write down the order you expect, then press Enter. ");
    fflush(stdout);
    int c;
    while ((c = getchar()) != EOF && c != '\n')
        ;
}

static stvm_vm *run_traced(const lab_scenario *s)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.sim_start_us = SIM_START_US;
    if (s->config)
        s->config(&cfg);
    stvm_vm *vm;
    lab_check(stvm_vm_new(&vm, &cfg), "stvm_vm_new");
    lab_check(stvm_trace_start(vm, RING_EVENTS), "stvm_trace_start");
    lab_check(stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "main", s->main, NULL, NULL), "main");
    lab_check(stvm_run(vm), "stvm_run");
    lab_check(stvm_trace_stop(vm), "stvm_trace_stop");
    return vm;
}

/* --html: the page is made from the run's JSON (--trace's file, or a temporary one), so
 * that it is the page `stvm-lab show FILE --html` makes from that file. */
static int run_html(stvm_vm *vm, const lab_scenario *s, const char *json, const char *html)
{
    char tmp[] = "/tmp/stvm-lab-XXXXXX.json";
    if (!json) {
        int fd = mkstemps(tmp, 5);
        if (fd < 0) {
            fprintf(stderr, "stvm-lab: cannot make a temporary file\n");
            return 1;
        }
        close(fd);
        lab_check(stvm_trace_write_json(vm, tmp), tmp);
    }
    char about[2048];
    snprintf(about, sizeof about, "set-up: %s\nquestion: %s\nrule: %s", s->setup, s->question,
             s->rule);
    int rc = lab_html_from_json(json ? json : tmp, html, s->name, about);
    if (!json)
        unlink(tmp);
    return rc;
}

static int run(int argc, char **argv)
{
    const lab_scenario *s = find(argv[0]);
    if (!s) {
        fprintf(stderr, "stvm-lab: no scenario %s (stvm-lab list names them)\n", argv[0]);
        return 2;
    }
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
    printf("scenario: %s\n", s->name);
    if (ask) {
        predict(s);
    } else {
        say("set-up", s->setup);
        say("question", s->question);
    }
    stvm_vm *vm = run_traced(s);
    say("rule", s->rule);
    putchar('\n');
    fflush(stdout);
    lab_check(stvm_trace_write_text(vm, stdout), "writing the timeline");
    if (json)
        lab_check(stvm_trace_write_json(vm, json), json);
    int rc = png ? lab_png(vm, png, s->name) : 0;
    if (html && rc == 0)
        rc = run_html(vm, s, json, html);
    stvm_vm_free(vm);
    return rc;
}

/* The synopsis, then (full) what each command and option does: the help names every
 * option, and the manual page must name them too. */
static void usage(FILE *f, bool full)
{
    fprintf(f, "usage: stvm-lab list\n"
               "       stvm-lab run NAME [--trace FILE.json] [--png FILE.png] [--html FILE.html]\n"
               "                         [--predict]\n"
               "       stvm-lab show TRACE.json [--html FILE.html] [--png FILE.png]\n"
               "       stvm-lab --help | --version\n");
    if (!full) {
        fprintf(f, "Try 'stvm-lab --help'.\n");
        return;
    }
    fprintf(f, "\n"
               "Commands:\n"
               "  list      name each scenario with a one-line summary\n"
               "  run NAME  print the scenario's set-up, question and rule, then the timeline\n"
               "            of its run on the simulated clock\n"
               "  show TRACE.json\n"
               "            read a trace JSON stvm wrote (run --trace, stvm-bench --trace) and\n"
               "            print its timeline: the states and instants the JSON keeps\n"
               "  help      this text (also --help, -h)\n"
               "  version   the tool and library versions and the back end (also --version)\n"
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
    if (strcmp(cmd, "list") == 0)
        fprintf(stderr, "stvm-lab: list takes no arguments\n");
    else if (strcmp(cmd, "run") == 0)
        fprintf(stderr, "stvm-lab: run needs a scenario's name (stvm-lab list names them)\n");
    else if (argc >= 2)
        fprintf(stderr, "stvm-lab: unknown command '%s'\n", cmd);
    usage(stderr, false);
    return 2;
}
