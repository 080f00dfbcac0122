/*
 * stvm-bench: the option tables (options.h). The command's table and the common one
 * become one getopt_long table; every output path is checked before anything is
 * measured, so a typo costs no sweep.
 */
#include "options.h"
#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const bench_format_names[] = {"table", "markdown", "csv", "csv-wide", "json",
                                          "gbench", NULL};

/* The common options as a table of their own, stored here before they are copied into
 * bench_common (whose fields have their natural types). */
typedef struct common_raw {
    long long cpu;
    int format;
    const char *exports[BENCH_NFORMATS];
    bool quiet;
    const char *trace;
    long long events;
    bool no_context;
    bool help;
} common_raw;

#define EXPORT(fmt, name, what) \
    BENCH_OUTPUT("export-" name, common_raw, exports[fmt], "Also write the results " what \
                 " to FILE.")
static const bench_opt common_opts[] = {
    BENCH_INT("cpu", "N", "-1", -1, CPU_SETSIZE - 1, common_raw, cpu,
              "Pin the measuring thread to CPU N; -1 leaves it unpinned."),
    BENCH_WORD("format", "table", bench_format_names, common_raw, format,
               "The format written on standard output."),
    EXPORT(BENCH_FMT_JSON, "json", "as JSON (schema stvm-bench/1)"),
    EXPORT(BENCH_FMT_CSV, "csv", "as long CSV (a row per sample)"),
    EXPORT(BENCH_FMT_CSV_WIDE, "csv-wide", "as wide CSV (a row per case)"),
    EXPORT(BENCH_FMT_MARKDOWN, "markdown", "as Markdown"),
    EXPORT(BENCH_FMT_GBENCH, "gbench", "as Google Benchmark JSON (for compare.py)"),
    BENCH_FLAG("quiet", common_raw, quiet, "No progress lines on standard error."),
    BENCH_OUTPUT("trace", common_raw, trace,
                 "Trace one cell as Trace Event JSON (Perfetto) in FILE; `stvm-lab show "
                 "FILE --html PAGE` draws it as one HTML page."),
    BENCH_INT("trace-events", "N", "4194304", 1, (long long)STVM_TRACE_MAX_EVENTS,
              common_raw, events, "The trace ring's capacity; the newest events are kept."),
    BENCH_FLAG("no-context", common_raw, no_context,
               "Leave out of every format what differs between runs and machines (date, "
               "CPU, kernel, load, host, back end), so that a deterministic run (the "
               "simulated clock, a replay) writes the same bytes every time."),
    BENCH_FLAG("help", common_raw, help, "Show this help and exit."),
};
#define NCOMMON ((int)(sizeof common_opts / sizeof common_opts[0]))

int bench_usage(const bench_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "stvm-bench %s: ", cmd->name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'stvm-bench %s --help'.\n", cmd->name);
    return BENCH_EXIT_USAGE;
}

static bool parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return *s && !*end && !errno;
}

static int word_index(const char *const *words, const char *s, size_t len)
{
    for (int i = 0; words[i]; i++)
        if (strlen(words[i]) == len && strncmp(words[i], s, len) == 0)
            return i;
    return -1;
}

/* "1,2,3", "A..B" and "A..B:STEP" items into *out; false (nothing stored) for a bad or
 * out-of-range item, a step below 1, or more than BENCH_MAX_LIST values. */
static bool parse_ints(const char *s, long long lo, long long hi, bench_ints *out)
{
    char buf[512];
    bench_ints list = {.n = 0}, *l = &list;
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
            if (l->n == BENCH_MAX_LIST)
                return false;
            l->v[l->n++] = v;
            if (v > b - step)
                break;
        }
    }
    *out = list;
    return true;
}

/* What o wants, for an error message: "a list of a, b, c", "an integer in 1..10". */
static void wants(FILE *f, const bench_opt *o)
{
    switch (o->kind) {
    case BENCH_OPT_INT:
    case BENCH_OPT_REAL:
        fprintf(f, "%s in %lld..%lld", o->kind == BENCH_OPT_INT ? "an integer" : "a number",
                o->lo, o->hi);
        break;
    case BENCH_OPT_WORD:
    case BENCH_OPT_WORDS:
        fputs(o->kind == BENCH_OPT_WORD ? "one of " : "a list of ", f);
        for (int i = 0; o->words[i]; i++)
            fprintf(f, "%s%s", i ? ", " : "", o->words[i]);
        break;
    case BENCH_OPT_INTS:
        fprintf(f, "a list of integers in %lld..%lld (1,2,3 or A..B:STEP, at most %d)",
                o->lo, o->hi, BENCH_MAX_LIST);
        break;
    default:
        fputs("a file name", f);
        break;
    }
}

/* Parse text as o's value into dst; false (nothing stored) if it is not one. */
static bool parse_value(const bench_opt *o, const char *text, void *dst)
{
    long long n;
    switch (o->kind) {
    case BENCH_OPT_INT:
        if (!parse_ll(text, &n) || n < o->lo || n > o->hi)
            return false;
        *(long long *)dst = n;
        return true;
    case BENCH_OPT_REAL: {
        char *end;
        double d = strtod(text, &end);
        if (!*text || *end || !isfinite(d) || d < (double)o->lo || d > (double)o->hi)
            return false;
        *(double *)dst = d;
        return true;
    }
    case BENCH_OPT_WORD: {
        int k = word_index(o->words, text, strlen(text));
        if (k < 0)
            return false;
        *(int *)dst = k;
        return true;
    }
    case BENCH_OPT_WORDS: {
        unsigned bits = 0;
        for (const char *p = text;; p++) {
            size_t len = strcspn(p, ",");
            int k = word_index(o->words, p, len);
            if (k < 0 || k > 31)
                return false;
            bits |= 1u << k;
            p += len;
            if (!*p)
                break;
        }
        *(unsigned *)dst = bits;
        return true;
    }
    case BENCH_OPT_INTS:
        return parse_ints(text, o->lo, o->hi, dst);
    case BENCH_OPT_FLAG:
        *(bool *)dst = true;
        return true;
    case BENCH_OPT_TEXT:
    case BENCH_OPT_OUTPUT:
        if (!*text)
            return false;
        *(const char **)dst = text;
        return true;
    }
    return false;
}

/* Can path be written (created, or overwritten)? NULL, or why not. */
static const char *unwritable(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else
        snprintf(dir, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    struct stat st;
    if (stat(dir, &st) != 0)
        return "its folder does not exist";
    if (!S_ISDIR(st.st_mode))
        return "its folder is not a folder";
    if (access(dir, W_OK | X_OK) != 0)
        return "its folder is not writable";
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return "it is a folder";
    if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
        return "it is not writable";
    return NULL;
}

/* The option at index k of the joint table (the command's, then the common one), and
 * in *dst where its value goes. */
static const bench_opt *opt_at(const bench_command *cmd, int k, void *opts, common_raw *raw,
                               void **dst)
{
    const bench_opt *o = k < cmd->nopts ? &cmd->opts[k] : &common_opts[k - cmd->nopts];
    *dst = (char *)(k < cmd->nopts ? opts : (void *)raw) + o->offset;
    return o;
}

int bench_parse(const bench_command *cmd, int argc, char **argv, void *opts,
                bench_invocation *inv)
{
    static const size_t sizes[] = {
        [BENCH_OPT_INT] = sizeof(long long), [BENCH_OPT_REAL] = sizeof(double),
        [BENCH_OPT_WORD] = sizeof(int), [BENCH_OPT_WORDS] = sizeof(unsigned),
        [BENCH_OPT_INTS] = sizeof(bench_ints), [BENCH_OPT_FLAG] = sizeof(bool),
        [BENCH_OPT_TEXT] = sizeof(char *), [BENCH_OPT_OUTPUT] = sizeof(char *)};
    common_raw raw = {0};
    int n = cmd->nopts + NCOMMON;
    void *dst;
    struct option *longs = calloc((size_t)n + 1, sizeof *longs);
    if (!longs) {
        fputs("stvm-bench: out of memory\n", stderr);
        exit(BENCH_EXIT_FAIL);
    }
    for (int k = 0; k < n; k++) {   /* the defaults, parsed as values: --help tells true */
        const bench_opt *o = opt_at(cmd, k, opts, &raw, &dst);
        memset(dst, 0, sizes[o->kind]);
        if (o->def && !parse_value(o, o->def, dst)) {
            fprintf(stderr, "stvm-bench %s: the table's default '%s' of --%s is not valid\n",
                    cmd->name, o->def, o->name);
            abort();
        }
        longs[k] = (struct option){o->name, o->kind == BENCH_OPT_FLAG ? no_argument
                                                                      : required_argument,
                                   NULL, 256 + k};
    }
    int rc = BENCH_GO_ON, c;
    opterr = 0;
    optind = 0;   /* glibc: a full reset, so the parser can run more than once */
    while (rc == BENCH_GO_ON && (c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1) {
        const char *arg = argv[optind - 1];
        if (c == 'h') {
            raw.help = true;
        } else if (c == ':') {
            rc = bench_usage(cmd, "option '%s' needs a value", arg);
        } else if (c == '?') {
            if (optopt >= 256)
                rc = bench_usage(cmd, "option '--%s' takes no value",
                                 opt_at(cmd, optopt - 256, opts, &raw, &dst)->name);
            else if (optopt)
                rc = bench_usage(cmd, "unknown option '-%c'", optopt);
            else
                rc = bench_usage(cmd, "unknown option '%s'", arg);
        } else {
            const bench_opt *o = opt_at(cmd, c - 256, opts, &raw, &dst);
            if (!parse_value(o, optarg ? optarg : "", dst)) {
                fprintf(stderr, "stvm-bench %s: --%s wants ", cmd->name, o->name);
                wants(stderr, o);
                fprintf(stderr, ", not '%s'\nTry 'stvm-bench %s --help'.\n", optarg, cmd->name);
                rc = BENCH_EXIT_USAGE;
            }
        }
        if (raw.help && rc == BENCH_GO_ON) {
            bench_help(stdout, cmd);
            rc = BENCH_EXIT_OK;
        }
    }
    free(longs);
    if (rc == BENCH_GO_ON && optind < argc)
        rc = bench_usage(cmd, "unexpected argument '%s'", argv[optind]);
    for (int k = 0; rc == BENCH_GO_ON && k < n; k++) {
        const bench_opt *o = opt_at(cmd, k, opts, &raw, &dst);
        const char *path = o->kind == BENCH_OPT_OUTPUT ? *(const char **)dst : NULL;
        char dir[4096];
        const char *why = path ? unwritable(path, dir, sizeof dir) : NULL;
        if (why)
            rc = bench_usage(cmd, "cannot write --%s '%s': %s ('%s')", o->name, path, why, dir);
    }
    if (rc != BENCH_GO_ON)
        return rc;
    *inv = (bench_invocation){.command = cmd, .opts = opts, .argc = argc, .argv = argv,
                              .clock = "real"};
    inv->common = (bench_common){.cpu = (int)raw.cpu, .format = (bench_fmt)raw.format,
                                 .quiet = raw.quiet, .no_context = raw.no_context,
                                 .trace = {raw.trace, (size_t)raw.events}};
    memcpy(inv->common.exports, raw.exports, sizeof raw.exports);
    int err = raw.cpu >= 0 ? bench_pin_cpu((int)raw.cpu) : 0;
    if (err)
        return bench_usage(cmd, "cannot pin to CPU %lld: %s", raw.cpu, strerror(-err));
    return BENCH_GO_ON;
}

/* ---- help and man ------------------------------------------------------------------ */

void bench_wrap(FILE *f, const char *text, int col, int indent)
{
    for (const char *p = text; *p;) {
        size_t word = strcspn(p, " \n");
        if (col > indent && col + 1 + (int)word > 79) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)word, p);
        col += (int)word;
        p += word;
        if (*p == '\n' && p[1] == '\n') {
            fprintf(f, "\n\n%*s", indent, "");
            col = indent;
        }
        p += strspn(p, " \n");
    }
    fputc('\n', f);
}

/* An option's help and its facts ("(default: X)" and the range or words), in one
 * allocated string. */
static char *option_text(const bench_opt *o, const char *traced)
{
    char *s = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    if (!m) {
        fputs("stvm-bench: out of memory\n", stderr);
        exit(BENCH_EXIT_FAIL);
    }
    fputs(o->help, m);
    if (traced && strcmp(o->name, "trace") == 0)
        fprintf(m, " It records %s%s", traced, traced[strlen(traced) - 1] == '.' ? "" : ".");
    if (o->kind != BENCH_OPT_FLAG && o->kind != BENCH_OPT_OUTPUT) {
        fputs(" (", m);
        if (o->kind != BENCH_OPT_TEXT) {
            wants(m, o);
            fputs("; ", m);
        }
        fprintf(m, "default: %s)", o->def ? o->def : "none");
    }
    fclose(m);
    return s;
}

/* Text for roff: a dash is \-, a backslash \e, a line never starts with a dot or a
 * quote (a request), and a comma list may break after each comma (\:). */
static void roff(FILE *f, const char *s)
{
    for (bool bol = true; *s; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", f);
        if (*s == '-')
            fputs("\\-", f);
        else if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '\n' && s[1] == '\n') {
            fputs("\n.PP\n", f);
            s++;
        } else
            fputs(*s == ',' && s[1] && s[1] != ' ' ? ",\\:" : (char[]){*s, 0}, f);
        bol = *s == '\n';
    }
}

/* Each option with its help and facts: for --help (wrapped at column 26) or, man, as
 * roff .TP paragraphs. */
static void list_options(FILE *f, const bench_opt *opts, int n, const char *traced, bool man)
{
    for (const bench_opt *o = opts; o < opts + n; o++) {
        char *text = option_text(o, traced);
        if (man) {
            fputs(".TP\n\\fB\\-\\-", f);
            roff(f, o->name);
            fprintf(f, "\\fR%s", o->metavar ? " \\fI" : "");
            roff(f, o->metavar ? o->metavar : "");
            fputs(o->metavar ? "\\fR\n" : "\n", f);
            roff(f, text);
            fputc('\n', f);
        } else {
            int col = fprintf(f, "  --%s%s%s", o->name, o->metavar ? " " : "",
                              o->metavar ? o->metavar : "");
            fprintf(f, "%s%*s", col > 25 ? "\n" : "", 26 - (col > 25 ? 0 : col), "");
            bench_wrap(f, text, 26, 26);
        }
        free(text);
    }
}

void bench_help(FILE *f, const bench_command *cmd)
{
    fprintf(f, "usage: stvm-bench %s [OPTIONS]\n\n", cmd->name);
    bench_wrap(f, cmd->description, 0, 0);
    if (cmd->nopts) {
        fputs("\nOptions:\n", f);
        list_options(f, cmd->opts, cmd->nopts, NULL, false);
    }
    fputs("\nCommon options:\n", f);
    list_options(f, common_opts, NCOMMON, cmd->traced, false);
}

void bench_man(FILE *f, const bench_command *const *cmds, int ncmds)
{
    fprintf(f, ".TH STVM\\-BENCH 1 \"\" \"stvm %s\" \"stvm manual\"\n.ad l\n.SH NAME\n"
               "stvm\\-bench \\- benchmarks of the stvm green\\-thread VM core\n"
               ".SH SYNOPSIS\n\\fBstvm\\-bench\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n"
               "\\fBstvm\\-bench\\fR \\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR | "
               "\\fB\\-\\-man\\fR\n.SH DESCRIPTION\n", STVM_VERSION_STRING);
    roff(f, "Each command measures one part of the VM core through its public API, fills "
            "result records (a case, its parameters, its metrics with every sample) and "
            "judges its targets on them; one renderer per format shows any command's "
            "records. --man writes this page (a maintainer's option: the page is generated "
            "from the commands' option tables).\n");
    fputs(".SH COMMANDS\n", f);
    for (int c = 0; c < ncmds; c++) {
        fprintf(f, ".SS %s\n", cmds[c]->name);
        roff(f, cmds[c]->summary);
        fputs("\n.PP\n", f);
        roff(f, cmds[c]->description);
        fputc('\n', f);
        list_options(f, cmds[c]->opts, cmds[c]->nopts, NULL, true);
    }
    fputs(".SH COMMON OPTIONS\n", f);
    list_options(f, common_opts, NCOMMON, "the traced cell's scheduler events.", true);
    static const char *const sections[][2] = {
        {"OUTPUT FORMATS",
         "table: the terminal table: the command's own tables first (a seed's table, a "
         "summary), then a row per case (median, and min..max over the repetitions), the "
         "targets and the notes.\n\n"
         "markdown: the same as Markdown.\n\n"
         "csv: one row per sample and per summary statistic: command, case, the "
         "parameters, status, metric, unit, better, statistic, repetition, value.\n\n"
         "csv-wide: one row per case: case, the parameters, status, each metric's "
         "median, note.\n\n"
         "json: schema stvm-bench/1: context, command, parameters, results, targets, "
         "tables.\n\n"
         "gbench: Google Benchmark's JSON, which compare.py reads.\n\n"
         "Every format carries the context (stvm version and back end, date, CPU, "
         "kernel, load average, pinning, clock, command line); the CSVs as leading "
         "'# key: value' lines.\n"},
        {"EXIT STATUS",
         "0: ran (a missed target is reported, not an exit status). 1: a run failed or "
         "an output could not be written. 2: a usage error (unknown option, bad value, "
         "unwritable path), reported before anything runs.\n"},
    };
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        fprintf(f, ".SH %s\n", sections[i][0]);
        roff(f, sections[i][1]);
    }
    fputs(".SH EXAMPLES\n", f);
    roff(f, "stvm-bench micro --cpu 0 --repeat 3 --export-json micro.json\n");
    fputs(".br\n", f);
    roff(f, "stvm-bench delay --clock sim --repeat 3 --format gbench > a.json\n");
    fputs(".SH SEE ALSO\n\\fBstvm\\-lab\\fR(1), \\fBstvm\\fR(3)\n", f);
}

/* ---- the JSON echo, progress -------------------------------------------------------- */

void bench_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void bench_json_num(FILE *f, double v)
{
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    char buf[32];
    bench_shortest(buf, sizeof buf, v);
    fputs(buf, f);
}

void bench_shortest(char *buf, size_t size, double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void echo_options(FILE *f, const bench_opt *opts, int n, const void *base, bool *first)
{
    for (int i = 0; i < n; i++) {
        const void *v = (const char *)base + opts[i].offset;
        fputs(*first ? "" : ", ", f);
        *first = false;
        bench_json_str(f, opts[i].name);
        fputs(": ", f);
        switch (opts[i].kind) {
        case BENCH_OPT_INT:
            fprintf(f, "%lld", *(const long long *)v);
            break;
        case BENCH_OPT_REAL:
            bench_json_num(f, *(const double *)v);
            break;
        case BENCH_OPT_WORD:
            bench_json_str(f, opts[i].words[*(const int *)v]);
            break;
        case BENCH_OPT_WORDS:
            fputc('[', f);
            for (int k = 0, any = 0; opts[i].words[k]; k++)
                if (*(const unsigned *)v & (1u << k)) {
                    fputs(any++ ? ", " : "", f);
                    bench_json_str(f, opts[i].words[k]);
                }
            fputc(']', f);
            break;
        case BENCH_OPT_INTS: {
            const bench_ints *l = v;
            fputc('[', f);
            for (int k = 0; k < l->n; k++)
                fprintf(f, "%s%lld", k ? ", " : "", l->v[k]);
            fputc(']', f);
            break;
        }
        case BENCH_OPT_FLAG:
            fputs(*(const bool *)v ? "true" : "false", f);
            break;
        case BENCH_OPT_TEXT:
        case BENCH_OPT_OUTPUT:
            bench_json_str(f, *(const char *const *)v);
            break;
        }
    }
}

void bench_echo_json(FILE *f, const bench_invocation *inv)
{
    const bench_common *c = &inv->common;
    common_raw raw = {.cpu = c->cpu, .format = (int)c->format, .quiet = c->quiet,
                      .no_context = c->no_context, .trace = c->trace.path, .events = (long long)c->trace.events};
    memcpy(raw.exports, c->exports, sizeof raw.exports);
    bool first = true;
    fputc('{', f);
    echo_options(f, inv->command->opts, inv->command->nopts, inv->opts, &first);
    echo_options(f, common_opts, NCOMMON - 1, &raw, &first);   /* all but --help */
    fputc('}', f);
}

void bench_progress_line(const bench_invocation *inv, int done, int total, const char *fmt, ...)
{
    if (inv->common.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "stvm-bench %s: [%d/%d] ", inv->command->name, done, total);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
