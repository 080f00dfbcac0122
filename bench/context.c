/*
 * stvm-bench: the context every export carries (render.h), gathered once per view:
 * what built the figures (stvm's version and back end), where (CPU, kernel, load,
 * pinning) and how (clock, command line). A loaded machine is part of what a figure
 * means, so the load goes with every format.
 */
#include "bench.h"
#include "render.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct context {
    const char *backend;
    char date[32], cpu[256], kernel[256], host[256], exe[1024], cmdline[4096];
    double load[3];
    int ncpu;
    double mhz;
} context;

/* argv as a shell would take it back: words with anything but safe characters quoted. */
static void command_line(char *buf, size_t size, const bench_invocation *inv)
{
    size_t len = (size_t)snprintf(buf, size, "stvm-bench");
    for (int i = 0; i < inv->argc && len < size; i++) {
        const char *a = inv->argv[i];
        bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789_-./:=,+@%") == strlen(a);
        len += (size_t)snprintf(buf + len, size - len, plain ? " %s" : " '%s'", a);
    }
}

static void gather(context *c, const bench_invocation *inv)
{
    bench_date_utc(c->date, sizeof c->date);
    char mhz[64];
    bench_cpuinfo("model name", c->cpu, sizeof c->cpu);
    bench_cpuinfo("cpu MHz", mhz, sizeof mhz);
    c->mhz = atof(mhz);
    bench_kernel(c->kernel, sizeof c->kernel);
    if (gethostname(c->host, sizeof c->host) != 0)
        snprintf(c->host, sizeof c->host, "unknown");
    ssize_t n = readlink("/proc/self/exe", c->exe, sizeof c->exe - 1);
    c->exe[n > 0 ? n : 0] = 0;
    command_line(c->cmdline, sizeof c->cmdline, inv);
    bench_load_averages(c->load);
    c->ncpu = bench_ncpu();
    c->backend = stvm_context_backend();
    if (inv->common.no_context) {   /* what stays is what the run was asked to do */
        const char *none = "-";
        char *texts[] = {c->date, c->cpu, c->kernel, c->host, c->exe};
        size_t sizes[] = {sizeof c->date, sizeof c->cpu, sizeof c->kernel, sizeof c->host,
                          sizeof c->exe};
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
            snprintf(texts[i], sizes[i], "%s", none);
        c->load[0] = c->load[1] = c->load[2] = 0;
        c->ncpu = 0;
        c->mhz = 0;
        c->backend = none;
    }
}

/* The keys every view shares, as (key, text) pairs; numbers are written by the JSON
 * views themselves. */
#define CONTEXT_TEXTS(c, inv)                                                            \
    {"stvm_version", stvm_version_string()}, {"stvm_backend", (c)->backend},   \
        {"command", (inv)->command->name}, {"date", (c)->date}, {"host_cpu", (c)->cpu},   \
        {"kernel", (c)->kernel}, {"clock", (inv)->clock ? (inv)->clock : "real"},         \
        {"command_line", (c)->cmdline}

typedef struct pair {
    const char *key, *text;
} pair;

static void load_json(FILE *f, const double load[3])
{
    for (int i = 0; i < 3; i++) {
        fputs(i ? ", " : "[", f);
        bench_json_num(f, load[i]);
    }
    fputc(']', f);
}

void bench_context_lines(FILE *f, const bench_invocation *inv, const char *prefix)
{
    context c;
    gather(&c, inv);
    const pair texts[] = {CONTEXT_TEXTS(&c, inv)};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        fprintf(f, "%s%s: %s\n", prefix, texts[i].key, texts[i].text);
    fprintf(f, "%sload_avg: %.2f %.2f %.2f\n%sncpu: %d\n%scpu_pin: %d\n", prefix, c.load[0],
            c.load[1], c.load[2], prefix, c.ncpu, prefix, inv->common.cpu);
}

void bench_context_json(FILE *f, const bench_invocation *inv, const char *indent)
{
    context c;
    gather(&c, inv);
    const pair texts[] = {CONTEXT_TEXTS(&c, inv)};
    fputs("{", f);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        fprintf(f, "\n%s  \"%s\": ", indent, texts[i].key);
        bench_json_str(f, texts[i].text);
        fputc(',', f);
    }
    fprintf(f, "\n%s  \"load_avg\": ", indent);
    load_json(f, c.load);
    fprintf(f, ",\n%s  \"ncpu\": %d,\n%s  \"cpu_pin\": %d\n%s}", indent, c.ncpu, indent,
            inv->common.cpu, indent);
}

/* Google Benchmark's context keys first (compare.py and other readers of that format
 * expect them), then ours with an stvm_ prefix. */
void bench_context_gbench(FILE *f, const bench_invocation *inv)
{
    context c;
    gather(&c, inv);
    fputs("  \"context\": {\n    \"date\": ", f);
    bench_json_str(f, c.date);
    fputs(",\n    \"host_name\": ", f);
    bench_json_str(f, c.host);
    fputs(",\n    \"executable\": ", f);
    bench_json_str(f, c.exe);
    fprintf(f, ",\n    \"num_cpus\": %d,\n    \"mhz_per_cpu\": %d,\n"
               "    \"cpu_scaling_enabled\": false,\n    \"caches\": [],\n    \"load_avg\": ",
            c.ncpu, (int)c.mhz);
    load_json(f, c.load);
    fputs(",\n    \"library_build_type\": \"release\"", f);
    const pair texts[] = {CONTEXT_TEXTS(&c, inv)};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        fprintf(f, ",\n    \"%s%s\": ", strncmp(texts[i].key, "stvm_", 5) ? "stvm_" : "",
                texts[i].key);
        bench_json_str(f, texts[i].text);
    }
    fprintf(f, ",\n    \"stvm_cpu_pin\": %d\n  }", inv->common.cpu);
}

/* Two lines above the terminal table: enough to tell two runs apart. */
void bench_context_header(FILE *f, const bench_invocation *inv)
{
    context c;
    gather(&c, inv);
    fprintf(f, "stvm-bench %s: stvm %s (%s), %s, clock %s, cpu %d, load %.2f\n%s; %s; %d CPUs\n",
            inv->command->name, stvm_version_string(), c.backend, c.date,
            inv->clock ? inv->clock : "real", inv->common.cpu, c.load[0], c.cpu, c.kernel,
            c.ncpu);
}
