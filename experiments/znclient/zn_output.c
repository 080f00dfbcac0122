/*
 * znclient's output: the run as one JSON document (schema "stvm-znclient/1"), the raw
 * counters of every repetition of every row, so that report.py can derive every figure
 * per request, the tables, the targets and the words (README.md, "The JSON"). Numbers
 * are written exactly (%.17g), NaN as null; with --no-context nothing in it depends on
 * the machine or the moment, so a run on the simulated clock writes the same bytes.
 */
#include "zn_cmd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

/* A JSON string (the few characters that need it escaped). */
static void str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
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

static void num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

/* The knobs of a configuration, by the names the option table and the fit use. */
static void config(FILE *f, const zn_config *k)
{
    fputs("{\"logging\": ", f);
    str(f, zn_logging_words[k->logging]);
    fputs(", \"subscriber_events\": ", f);
    str(f, zn_events_words[k->subscriber_events]);
    fputs(", \"idle_mode\": ", f);
    str(f, zn_mode_words[k->idle_mode]);
    fputs(", \"wait\": ", f);
    str(f, zn_wait_words[k->plain_wait]);
    fputs(", \"background\": ", f);
    str(f, zn_onoff_words[k->background]);
    const struct { const char *key; uint32_t v; } nums[] = {
        {"subscriber_cost_us", k->subscriber_cost_us}, {"idle_us", k->idle_us},
        {"wake_inject_us", k->wake_inject_us}, {"before_us", k->before_us},
        {"between_us", k->between_us}, {"after_us", k->after_us},
        {"event_cost_us", k->event_cost_us}, {"server_us", k->server_us},
        {"server_jitter_us", k->server_jitter_us}, {"client_us", k->client_us}};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
        fprintf(f, ", \"%s\": %u", nums[i].key, nums[i].v);
    fputc('}', f);
}

static void sample(FILE *f, const zn_counts *c)
{
    fprintf(f, "{\"requests\": %lld, \"wall_ns\": %lld, \"cpu_ns\": %lld", c->requests,
            (long long)c->wall_ns, (long long)c->cpu_ns);
#define ZN_FIELD(name, part, g) fprintf(f, ", \"" #name "\": %llu", (unsigned long long)c->name);
    ZN_COUNTS(ZN_FIELD)
#undef ZN_FIELD
    fprintf(f, ", \"cut_short\": %s}", c->cut_short ? "true" : "false");
}

/* What the recording of a configuration saw, as a median in us over its timed requests:
 * the answer's arrival after the flush returned, or (wake) each OS sleep's wake-up cost.
 * NaN without a recording or without any. */
static double recorded_median_us(const zn_run *z, const zn_config *k, bool wake)
{
    size_t cap = 0, n = 0;
    for (int c = 0; c < z->replayed.ncells; c++)
        for (long long q = 0; !memcmp(&z->replayed.cells[c].cfg, k, sizeof *k) &&
                              q < z->replayed.cells[c].nrequests; q++)
            cap += wake ? (size_t)z->replayed.cells[c].requests[q].nsleeps : 1;
    double *v = cap ? malloc(cap * sizeof *v) : NULL;
    for (int c = 0; v && c < z->replayed.ncells; c++) {
        const zn_rec_cell *cell = &z->replayed.cells[c];
        for (long long q = 0; !memcmp(&cell->cfg, k, sizeof *k) && q < cell->nrequests; q++) {
            const zn_rec_request *r = &cell->requests[q];
            for (int j = 0; wake && r->timed && j < r->nsleeps; j++)
                v[n++] = (double)r->sleeps[j].late_ns / 1000;
            if (!wake && r->timed)
                v[n++] = (double)r->answer_ns / 1000;
        }
    }
    double m = n ? zn_median(v, n) : NAN;
    free(v);
    return m;
}

static void row(FILE *f, const zn_run *z, const zn_row *r)
{
    bool vm = r->cfg.logging != ZN_LOGGING_WRK;
    fputs("    {\"case\": ", f);
    str(f, vm ? zn_logging_words[r->cfg.logging] : "wrk");
    fputs(", \"config\": ", f);
    if (vm)
        config(f, &r->cfg);
    else
        fputs("null", f);
    fputs(", \"note\": ", f);
    str(f, r->note);
    fputs(",\n     \"samples\": [", f);
    for (int k = 0; vm && k < r->nsamples; k++) {
        fputs(k ? ",\n       " : "\n       ", f);
        sample(f, &r->samples[k]);
    }
    fputs("],\n     \"wrk\": [", f);
    for (int k = 0; !vm && k < r->nsamples; k++) {
        fputs(k ? ", " : "", f);
        fputs("{\"rps\": ", f);
        num(f, r->wrk[k].rps);
        fputs(", \"p50_us\": ", f);
        num(f, r->wrk[k].p50_us);
        fputs(", \"p99_us\": ", f);
        num(f, r->wrk[k].p99_us);
        fputs(", \"errors\": ", f);
        num(f, r->wrk[k].errors);
        fputc('}', f);
    }
    fputs("],\n     \"versus\": [", f);
    for (int k = 0; k < r->nversus; k++) {
        fputs(k ? ", " : "", f);
        fputs("{\"rps\": ", f);
        num(f, r->versus_rps[k]);
        fputs(", \"blocked_first\": ", f);
        num(f, r->versus_blocked[k]);
        fputc('}', f);
    }
    fputs("],\n     \"recorded\": {\"answer_median_us\": ", f);
    num(f, vm ? recorded_median_us(z, &r->cfg, false) : NAN);
    fputs(", \"wake_median_us\": ", f);
    num(f, vm ? recorded_median_us(z, &r->cfg, true) : NAN);
    fputs("}}", f);
}

static void triple(FILE *f, const zn_triple *t)
{
    fputs("{\"config\": ", f);
    config(f, &t->cfg);
    const char *keys[] = {"rps", "blocked", "err"};
    const double *v[] = {t->rps, t->blocked, t->err};
    for (int i = 0; i < 3; i++) {
        fprintf(f, ", \"%s\": [", keys[i]);
        for (int c = 0; c < ZN_TRIPLE; c++) {
            fputs(c ? ", " : "", f);
            num(f, v[i][c]);
        }
        fputc(']', f);
    }
    fputs(", \"score\": ", f);
    num(f, t->score);
    fprintf(f, ", \"fits\": %s}", t->fits ? "true" : "false");
}

static void fit(FILE *f, const zn_fit_result *r)
{
    fputs("{\n    \"best\": ", f);
    triple(f, &r->best);
    fputs(",\n    \"families\": [", f);
    for (int m = 0; m < ZN_FIT_FAMILIES; m++) {
        const zn_fit_family *fam = &zn_fit_families[m];
        fputs(m ? ",\n      " : "\n      ", f);
        fputs("{\"idle_mode\": ", f);
        str(f, zn_mode_words[fam->mode]);
        fprintf(f, ", \"quantum_moves\": %s, \"pharo\": %s, \"best\": ",
                fam->quantum_moves ? "true" : "false", fam->pharo ? "true" : "false");
        if (isnan(r->best_family[m].score))
            fputs("null", f);
        else
            triple(f, &r->best_family[m]);
        fputc('}', f);
    }
    fprintf(f, "],\n    \"quantum_moves\": %s, \"evaluated\": %ld, \"fitting\": %ld,\n"
            "    \"params\": [", r->quantum_moves ? "true" : "false", r->evaluated, r->fitting);
    for (int i = 0; i < ZN_FIT_NPARAMS; i++) {
        fputs(i ? ",\n      " : "\n      ", f);
        fputs("{\"name\": ", f);
        str(f, zn_fit_params[i].name);
        fprintf(f, ", \"lo\": %u, \"hi\": %u", zn_fit_params[i].lo, zn_fit_params[i].hi);
        if (r->fitting)
            fprintf(f, ", \"region\": [%u, %u]", r->region_lo[i], r->region_hi[i]);
        else
            fputs(", \"region\": null", f);
        if (i != ZN_FIT_PARAM_IDLE || r->quantum_moves) {
            fprintf(f, ", \"alone\": [%u, %u], \"score_at\": [", r->scan_lo[i], r->scan_hi[i]);
            num(f, r->at_minus[i]);
            fputs(", ", f);
            num(f, r->at_plus[i]);
            fputc(']', f);
        } else {
            fputs(", \"alone\": null, \"score_at\": null", f);
        }
        fputc('}', f);
    }
    fputs("]}", f);
}

static void phase(FILE *f, const zn_config *around, const zn_phase_cell *cells)
{
    fputs("{\"around\": ", f);
    config(f, around);
    fputs(",\n    \"cells\": [", f);
    for (int i = 0; i < ZN_PHASE_CELLS; i++) {
        fprintf(f, "%s[%u, %u, ", i ? (i % 4 ? ", " : ",\n      ") : "\n      ",
                cells[i].wake_us, cells[i].subscriber_cost_us);
        num(f, cells[i].ratio);
        fprintf(f, ", %s]", cells[i].fits ? "true" : "false");
    }
    fputs("]}", f);
}

/* The first value of key in /proc/cpuinfo into buf ("unknown" without one). */
static void cpuinfo(const char *key, char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (colon && !strncmp(line, key, strlen(key))) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = 0;
            snprintf(buf, size, "%s", colon);
            break;
        }
    }
    if (f)
        fclose(f);
}

static void context(FILE *f, const zn_run *z)
{
    bool none = z->o->no_context;
    char date[32] = "-", cpu[256] = "-", kernel[128] = "-";
    if (!none) {
        time_t now = time(NULL);
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        cpuinfo("model name", cpu, sizeof cpu);
        struct utsname u;
        if (uname(&u) == 0)
            snprintf(kernel, sizeof kernel, "%s", u.release);
    }
    fputs("  \"context\": {\"stvm_version\": ", f);
    str(f, stvm_version_string());
    fputs(", \"stvm_backend\": ", f);
    str(f, none ? "-" : stvm_context_backend());
    fputs(", \"date\": ", f);
    str(f, date);
    fputs(", \"host_cpu\": ", f);
    str(f, cpu);
    fputs(", \"kernel\": ", f);
    str(f, kernel);
    fprintf(f, ", \"cpu_pin\": %lld},\n", z->o->cpu);
}

bool zn_output(FILE *f, const zn_run *z, const zn_extras *x)
{
    static const char *const worlds[] = {"nginx", "model", "replay"};
    const zn_opts *o = z->o;
    fputs("{\n  \"schema\": \"stvm-znclient/1\",\n", f);
    context(f, z);
    fprintf(f, "  \"world\": \"%s\",\n  \"server\": ", worlds[z->world]);
    str(f, o->url ? z->url : worlds[z->world]);
    fprintf(f, ",\n  \"options\": {\"requests\": %lld, \"warmup\": %lld, \"max_seconds\": %lld, "
            "\"repeat\": %lld, \"wrk_seconds\": %lld, \"no_wrk\": %s, \"model_seed\": %lld, "
            "\"fit\": %s, \"fit_requests\": %lld, \"phase\": %s, \"record\": %s, "
            "\"replay\": %s, \"preset\": ", o->requests, o->warmup, o->max_seconds, o->repeat,
            o->wrk_seconds, o->no_wrk ? "true" : "false", o->seed, o->fit ? "true" : "false",
            o->fit_requests, o->phase ? "true" : "false", o->record ? "true" : "false",
            o->replay ? "true" : "false");
    str(f, zn_preset_words[o->preset]);
    fputs(", \"with_preset\": ", f);
    str(f, zn_preset_words[o->with_preset]);
    fputs("},\n  \"rows\": [", f);
    for (int i = 0; i < z->nrows; i++) {
        fputs(i ? ",\n" : "\n", f);
        row(f, z, &z->rows[i]);
    }
    fputs("],\n  \"preset\": ", f);
    const zn_preset *p = zn_shown_preset(o);
    if (p) {
        fputs("{\"name\": ", f);
        str(f, p->name);
        fputs(", \"what\": ", f);
        str(f, p->what);
        fputs(",\n    \"cells\": [", f);
        for (int l = 0; l < 3; l++) {
            zn_config k;
            fputs(l ? ", " : "", f);
            config(f, zn_preset_cell(z, p, (zn_logging)l, &k));
        }
        fputs("],\n    \"model\": ", f);
        if (x->preset_model)
            triple(f, x->preset_model);
        else
            fputs("null", f);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(",\n  \"fit\": ", f);
    if (x->fit)
        fit(f, x->fit);
    else
        fputs("null", f);
    fputs(",\n  \"phase\": ", f);
    if (x->phase)
        phase(f, x->phase_around, x->phase);
    else
        fputs("null", f);
    fputs("\n}\n", f);
    return !ferror(f);
}
