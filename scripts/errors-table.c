/*
 * errors-table FORMAT: prints the library's error list, STVM_ERRNO_MAP of
 * include/stvm/core.h, as the documentation shows it, so that no page keeps a copy of
 * its own that could drift (scripts/docs-check.sh compares; the Makefile builds the
 * manual page's ERRORS section from it).
 *   roff      the .TP/.TQ entries of stvm(3)'s ERRORS section
 *   markdown  the table of docs/embedding.md ("Errors")
 */
#include <stdio.h>
#include <string.h>

#include "stvm.h"

static const struct {
    const char *name;
    int code;
    const char *text;
} errors[] = {
#define ROW(name, code, text) {"STVM_" #name, code, text},
    STVM_ERRNO_MAP(ROW)
#undef ROW
};
enum { N = sizeof errors / sizeof errors[0] };

/* roff: a line that starts with '.' or '\'' would be read as a request. */
static void roff_text(const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", stdout);
    for (; *s; s++) {
        if (*s == '-')
            fputs("\\-", stdout);
        else if (*s == '\\')
            fputs("\\e", stdout);
        else
            putchar(*s);
    }
    putchar('\n');
}

int main(int argc, char **argv)
{
    const char *format = argc == 2 ? argv[1] : "";
    if (!strcmp(format, "roff")) {
        for (int i = 1; i < N; i++) {   /* row 0 is STVM_OK */
            printf(i == 1 ? ".TP 18\n" : ".TQ\n");
            printf(".B %s\n", errors[i].name);
            printf("(\\-%d) ", -errors[i].code);
            roff_text(errors[i].text);
        }
    } else if (!strcmp(format, "markdown")) {
        printf("| Code | Number | Meaning |\n|---|---|---|\n");
        for (int i = 1; i < N; i++)
            printf("| `%s` | %d | %s |\n", errors[i].name, errors[i].code, errors[i].text);
    } else {
        fprintf(stderr, "usage: errors-table roff|markdown\n");
        return 2;
    }
    return ferror(stdout) ? 1 : 0;
}
