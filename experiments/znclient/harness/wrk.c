/* The HTTP harness: running Debian's wrk with a done() script, reading its figures (wrk.h). */
#include "wrk.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

#define GRACE_SECONDS 10

static const struct { const char *key; size_t off; } keys[] = {
#define WRK_KEY(key, lua) {#key, offsetof(wrk_result, key)},
    WRK_FIGURES(WRK_KEY)
#undef WRK_KEY
};
#define NKEYS (sizeof keys / sizeof *keys)

/* wrk calls done(summary, latency, requests) once, after the run. */
static const char script[] =
#define WRK_LUA(key, lua) "  " #key " = " lua ",\n"
    "done = function(s, l, r)\n  local v = {\n" WRK_FIGURES(WRK_LUA) "  }\n"
#undef WRK_LUA
    "  io.write(\"\\n" WRK_MARKER "\\n\")\n"
    "  for k, x in pairs(v) do io.write(string.format(\"%s %.17g\\n\", k, x)) end\nend\n";

void wrk_options_init(wrk_options *o)
{
    *o = (wrk_options){.threads = 1, .connections = 1, .seconds = 5};
}

int wrk_parse(const char *text, wrk_result *r)
{
    const char *p = strstr(text, "\n" WRK_MARKER "\n");
    unsigned found = 0;
    for (p = p ? p + sizeof WRK_MARKER + 1 : ""; *p; p += strcspn(p, "\n"), p += *p == '\n')
        for (size_t k = 0, n = strcspn(p, " \n"); k < NKEYS; k++) {
            char *end;
            if (strlen(keys[k].key) != n || strncmp(p, keys[k].key, n) || p[n] != ' ')
                continue;
            double v = strtod(p + n + 1, &end);
            if (end != p + n + 1 && (*end == '\n' || !*end)) {
                *(double *)(void *)((char *)r + keys[k].off) = v;
                found |= 1u << k;
            }
        }
    if (found != (1u << NKEYS) - 1 || !(r->duration_us > 0))
        return -1;
    r->requests_per_sec = r->requests / (r->duration_us / 1e6);
    return 0;
}

/* wrk with the script on stdin and its output into a scratch file, both unlinked. */
int wrk_run(const wrk_options *o, const char *url, wrk_result *r, char *err, size_t errsize)
{
    memset(r, 0, sizeof *r);
    char binary[512];
    if (!harness_child_find(binary, sizeof binary, o->binary, "wrk", "/usr/bin/wrk")) {
        snprintf(err, errsize, "wrk: %s%s not found or not executable: install Debian's "
                 "package '" WRK_PACKAGE "' (as root: sh scripts/install-deps.sh)",
                 binary, o->binary ? "" : " (nor wrk in PATH)");
        return -1;
    }
    if (o->threads < 1 || o->connections < o->threads || o->seconds < 1) {
        snprintf(err, errsize, "wrk: need 1 <= threads <= connections and seconds >= 1");
        return -1;
    }
    char t[16], c[16], d[16];
    snprintf(t, sizeof t, "-t%d", o->threads);
    snprintf(c, sizeof c, "-c%d", o->connections);
    snprintf(d, sizeof d, "-d%ds", o->seconds);
    char *argv[] = {binary, t, c, d, "-s", "/dev/stdin", (char *)url, NULL};
    FILE *in = tmpfile(), *out = tmpfile();
    pid_t parent = getpid(), pid = -1;
    if (in && out && fputs(script, in) >= 0 && fflush(in) == 0 && (pid = fork()) == 0)
        harness_child_exec(parent, fileno(in), fileno(out), argv);
    int status = 0, saved = errno;
    bool late = pid > 0 && !harness_child_wait(pid, (o->seconds + GRACE_SECONDS) * 1000, &status);
    if (late) {
        kill(pid, SIGKILL);
        harness_child_wait(pid, 2000, NULL);
    }
    size_t n = 0;
    if (out && fseek(out, 0, SEEK_SET) == 0)
        n = fread(r->output, 1, sizeof r->output - 1, out);
    r->output[n] = 0;
    int shown = (int)(errsize > 128 ? errsize - 128 : 0);
    if (pid < 0)
        snprintf(err, errsize, "wrk: cannot start it: %s", strerror(saved));
    else if (late)
        snprintf(err, errsize, "wrk: still running %d s after its %d s run; killed",
                 GRACE_SECONDS, o->seconds);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        snprintf(err, errsize, "wrk: %s %d%s: %.*s", WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                 WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (could not run it)" : "",
                 shown, r->output);
    else if (wrk_parse(r->output, r) != 0)
        snprintf(err, errsize, "wrk: no figures after " WRK_MARKER " in: %.*s", shown, r->output);
    else
        pid = 0;
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    return pid == 0 ? 0 : -1;
}

