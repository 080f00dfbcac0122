/*
 * stvm-bench: values for machines. JSON strings, numbers and the context object both
 * commands' documents open with, and CSV fields; the commands' field tables decide
 * what is written, these only how.
 */
#include "bench.h"

#include <math.h>
#include <string.h>

/* ---- JSON ------------------------------------------------------------------------------ */

void bench_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void bench_json_number(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.6g", v);
}

void bench_json_context(FILE *f, const char *indent, const char *clock, int cpu)
{
    char model[256], kernel[256], date[64];
    bench_cpu_model(model, sizeof model);
    bench_kernel(kernel, sizeof kernel);
    bench_date_utc(date, sizeof date);
    fprintf(f, "{\n%s  \"tool\": \"stvm-bench\",\n%s  \"tool_version\": \"%s\",\n", indent,
            indent, STVM_VERSION_STRING);
    fprintf(f, "%s  \"library_version\": ", indent);
    bench_json_string(f, stvm_version_string());
    fprintf(f, ",\n%s  \"backend\": ", indent);
    bench_json_string(f, stvm_context_backend());
    fprintf(f, ",\n%s  \"clock\": ", indent);
    bench_json_string(f, clock);
    fprintf(f, ",\n%s  \"date\": ", indent);
    bench_json_string(f, date);
    fprintf(f, ",\n%s  \"cpu\": ", indent);
    bench_json_string(f, model);
    fprintf(f, ",\n%s  \"ncpu\": %d,\n%s  \"pinned_cpu\": ", indent, bench_ncpu(), indent);
    if (cpu >= 0)
        fprintf(f, "%d", cpu);
    else
        fputs("null", f);
    fprintf(f, ",\n%s  \"kernel\": ", indent);
    bench_json_string(f, kernel);
    fprintf(f, "\n%s}", indent);
}

/* ---- CSV ------------------------------------------------------------------------------- */

void bench_csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void bench_csv_number(FILE *f, double v, int decimals)
{
    if (!isfinite(v))
        return;
    if (decimals < 0)
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "%.*f", decimals, v);
}
