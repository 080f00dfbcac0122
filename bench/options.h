/*
 * stvm-bench: one option table per command, from which come the parser (getopt_long),
 * --help with the real defaults, the error for a bad value (the range or the allowed
 * words), the JSON's echo of the parameters and the man page. A default is text parsed
 * like a value from the command line, so what --help shows is what runs. The options
 * every command has are the parser's own and land in bench_common.
 */
#ifndef STVM_BENCH_OPTIONS_H
#define STVM_BENCH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit statuses (hyperfine/JMH convention). */
#define BENCH_EXIT_OK 0
#define BENCH_EXIT_FAIL 1   /* a benchmark run failed, an output could not be written */
#define BENCH_EXIT_USAGE 2  /* unknown flag or bad value */
/* bench_parse's answer when the command should go on. */
#define BENCH_GO_ON (-1)

#define BENCH_MAX_LIST 64   /* values in one INTS list (A..B:STEP included) */

typedef enum bench_opt_kind {
    BENCH_OPT_INT,          /* long long in [lo, hi] */
    BENCH_OPT_REAL,         /* double in [lo, hi] */
    BENCH_OPT_WORD,         /* one of words: int, its index */
    BENCH_OPT_WORDS,        /* comma list of words: unsigned, bit i per word i */
    BENCH_OPT_INTS,         /* "1,20,300" or "A..B:STEP" in [lo, hi]: bench_ints */
    BENCH_OPT_FLAG,         /* no value: bool, true when given */
    BENCH_OPT_TEXT,         /* any text: const char * (argv's own, or the default) */
    BENCH_OPT_OUTPUT,       /* a file to write: const char *; checked writable before the
                               sweep starts (NULL when not given) */
} bench_opt_kind;

typedef struct bench_ints {
    long long v[BENCH_MAX_LIST];
    int n;
} bench_ints;

typedef struct bench_opt {
    const char *name;               /* without dashes: "repeat" */
    bench_opt_kind kind;
    const char *metavar;            /* "K", "LIST", "FILE" (NULL for a FLAG) */
    const char *def;                /* the default as text, or NULL (none: 0, empty, NULL) */
    const char *help;               /* one sentence or more; wrapped by --help */
    size_t offset;                  /* of the destination in the command's options struct */
    long long lo, hi;               /* INT, INTS; REAL uses them as bounds too */
    const char *const *words;       /* WORD, WORDS: NULL-terminated */
} bench_opt;

/* Table-building shorthands: the destination is `member` of the command's `type`. */
#define BENCH_OPT_(name, kind, meta, def, lo, hi, words, type, member, help) \
    {name, kind, meta, def, help, offsetof(type, member), lo, hi, words}
#define BENCH_INT(name, meta, def, lo, hi, type, member, help) \
    BENCH_OPT_(name, BENCH_OPT_INT, meta, def, lo, hi, NULL, type, member, help)
#define BENCH_REAL(name, meta, def, lo, hi, type, member, help) \
    BENCH_OPT_(name, BENCH_OPT_REAL, meta, def, lo, hi, NULL, type, member, help)
#define BENCH_WORD(name, def, words, type, member, help) \
    BENCH_OPT_(name, BENCH_OPT_WORD, "WORD", def, 0, 0, words, type, member, help)
#define BENCH_WORDS(name, def, words, type, member, help) \
    BENCH_OPT_(name, BENCH_OPT_WORDS, "LIST", def, 0, 0, words, type, member, help)
#define BENCH_INTS(name, def, lo, hi, type, member, help) \
    BENCH_OPT_(name, BENCH_OPT_INTS, "LIST", def, lo, hi, NULL, type, member, help)
#define BENCH_FLAG(name, type, member, help) \
    BENCH_OPT_(name, BENCH_OPT_FLAG, NULL, NULL, 0, 0, NULL, type, member, help)
#define BENCH_TEXT(name, meta, def, type, member, help) \
    BENCH_OPT_(name, BENCH_OPT_TEXT, meta, def, 0, 0, NULL, type, member, help)
#define BENCH_OUTPUT(name, type, member, help) \
    BENCH_OPT_(name, BENCH_OPT_OUTPUT, "FILE", NULL, 0, 0, NULL, type, member, help)

/* The output formats: --format picks the one on stdout, --export-* write more. */
typedef enum bench_fmt {
    BENCH_FMT_TABLE,                /* the terminal table (default) */
    BENCH_FMT_MARKDOWN,
    BENCH_FMT_CSV,                  /* long: one row per repetition, then summary rows */
    BENCH_FMT_CSV_WIDE,             /* one row per record, medians */
    BENCH_FMT_JSON,                 /* the one schema, "stvm-bench/1" */
    BENCH_FMT_GBENCH,               /* Google Benchmark's JSON, for compare.py */
    BENCH_NFORMATS
} bench_fmt;
/* The --format words, in bench_fmt's order ("table" .. "gbench"; --export-WORD). */
extern const char *const bench_format_names[];

/* --trace FILE and --trace-events N. */
typedef struct bench_trace {
    const char *path;               /* NULL: no trace */
    size_t events;                  /* the ring's capacity */
} bench_trace;

/* The options every command has. */
typedef struct bench_common {
    int cpu;                        /* --cpu N, -1: not pinned (the parser pins) */
    bench_fmt format;            /* --format */
    const char *exports[BENCH_NFORMATS];   /* --export-*: NULL or a path */
    bool quiet;                     /* --quiet: no progress on stderr */
    bool no_context;                /* --no-context: nothing run- or machine-specific */
    bench_trace trace;
} bench_common;

/* A command as the parser, --help and the man page see it. */
typedef struct bench_command {
    const char *name;               /* "delay" */
    const char *summary;            /* one line for `stvm-bench --help` */
    const char *description;        /* paragraphs ("\n\n" between) for --help and man */
    const bench_opt *opts;
    int nopts;
    const char *traced;             /* what --trace records for this command */
} bench_command;

/* One run of the tool: what the parser found, and the context every export carries. */
typedef struct bench_invocation {
    const bench_command *command;
    const void *opts;               /* the command's options struct, filled */
    bench_common common;
    int argc;                       /* the command line as given, for the context */
    char **argv;
    const char *clock;              /* "real" or "sim": set by the command (default real) */
} bench_invocation;

/* Fill opts (the command's struct, defaults first) and inv from argv (argv[0]: the
 * command's name); checks every output path for writability, then pins the thread
 * when --cpu is given. Answers BENCH_GO_ON, or the status to exit with:
 *   BENCH_EXIT_OK     after --help (on stdout)
 *   BENCH_EXIT_USAGE  after a message on stderr naming the option, the bad value and
 *                     what it wants */
int bench_parse(const bench_command *cmd, int argc, char **argv, void *opts,
                bench_invocation *inv);

/* --help for one command (usage line, description, every option with its default). */
void bench_help(FILE *f, const bench_command *cmd);
/* The man page stvm-bench(1) in roff, from every command's table. */
void bench_man(FILE *f, const bench_command *const *cmds, int ncmds);
/* The parameters as a JSON object (every option of the command and the common ones,
 * with its value: numbers as numbers, lists as arrays, words as strings). */
void bench_echo_json(FILE *f, const bench_invocation *inv);

/* A usage error found after parsing (two options that do not go together): the
 * message on stderr and BENCH_EXIT_USAGE. */
int bench_usage(const bench_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One line per finished cell on stderr, terminal or not, unless --quiet:
 * "stvm-bench delay: [3/24] ..." */
void bench_progress_line(const bench_invocation *inv, int done, int total, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* text into f wrapped at 79 columns: the first line continues at column col, the
 * others start at column indent; "\n\n" starts a paragraph. Ends the line. */
void bench_wrap(FILE *f, const char *text, int col, int indent);

/* JSON values for every view that writes JSON (the echo above, render_json.c,
 * render_gbench.c): a string literal (null for NULL), a number (null when not finite). */
void bench_json_str(FILE *f, const char *s);
void bench_json_num(FILE *f, double v);
/* v with the fewest digits (15..17) that read back as v: what the CSV and JSON views
 * write, exact without %.17g's noise. */
void bench_shortest(char *buf, size_t size, double v);

#endif
