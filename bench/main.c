/*
 * stvm-bench: dispatch. `stvm-bench COMMAND [OPTIONS]` runs one command; --help lists
 * them, --version (or `version`) names the tool, the library and the back end, and
 * --man writes the manual page stvm-bench(1) from every command's option table.
 */
#include "bench.h"
#include "random.h"

#include <stdlib.h>
#include <string.h>

typedef struct command {
    const bench_command *cmd;
    int (*main)(int argc, char **argv);
} command;

static const command commands[] = {
    {&micro_command, micro_main},
    {&delay_command, delay_main},
    {&io_command, io_main},
    {&ffi_command, ffi_main},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *f)
{
    fputs("usage: stvm-bench COMMAND [OPTIONS]\n       stvm-bench --help | --version | "
          "--man\n\nCommands:\n", f);
    for (int i = 0; i < NCOMMANDS; i++)
        bench_wrap(f, commands[i].cmd->summary, fprintf(f, "  %-8s", commands[i].cmd->name), 10);
    fputs("  version print the tool and library versions and the back end\n\n"
          "'stvm-bench COMMAND --help' lists a command's options; --man writes the\n"
          "manual page stvm-bench(1) (roff) on standard output.\n", f);
}

int main(int argc, char **argv)
{
    if (stvm_version() != STVM_VERSION_HEX) {
        fprintf(stderr, "stvm-bench: built against stvm %s but linked with %s\n",
                STVM_VERSION_STRING, stvm_version_string());
        return BENCH_EXIT_FAIL;
    }
    /* The DelayBenchmark's durations must be Pharo's; checked before anything runs. */
    int table[DELAY_TABLE_SIZE];
    delay_table_generate(table);
    if (!delay_table_verify(table))
        abort();

    if (argc < 2) {
        usage(stderr);
        return BENCH_EXIT_USAGE;
    }
    const char *name = argv[1];
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, commands[i].cmd->name) == 0)
            return commands[i].main(argc - 1, argv + 1);
    if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0) {
        printf("stvm-bench %s (library %s, back end %s)\n", STVM_VERSION_STRING,
               stvm_version_string(), stvm_context_backend());
        return BENCH_EXIT_OK;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return BENCH_EXIT_OK;
    }
    if (strcmp(name, "--man") == 0) {
        const bench_command *cmds[NCOMMANDS];
        for (int i = 0; i < NCOMMANDS; i++)
            cmds[i] = commands[i].cmd;
        bench_man(stdout, cmds, NCOMMANDS);
        return BENCH_EXIT_OK;
    }
    fprintf(stderr, "stvm-bench: unknown command '%s'\n", name);
    usage(stderr);
    return BENCH_EXIT_USAGE;
}
