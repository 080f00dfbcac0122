/*
 * fuzz_zn_recording: the ZnClient experiment's recording file
 * (experiments/znclient/zn_recording.c), the one file format its program reads. Any bytes: the parser answers true with every cell's
 * requests as many as its line said and every field in its documented range, or false
 * with a reason that names the file and a line; nothing leaks either way (ASan's leak
 * check), and a file it accepts, written back with zn_recording_write_cell and read
 * again, is read the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../experiments/znclient/zn_recording.c"

static void check_cell(const zn_rec_cell *c)
{
    if (c->ntimed > c->nrequests || c->repetition < 1 || c->cfg.logging > ZN_LOGGING_SUBSCRIBER ||
        c->cfg.subscriber_events > ZN_EVENTS_ALL || c->cfg.idle_mode < 0 || c->cfg.idle_mode > 2)
        abort();
    for (long long q = 0; q < c->nrequests; q++) {
        const zn_rec_request *r = &c->requests[q];
        if (r->nsleeps < 0 || (r->nsleeps && !r->sleeps))
            abort();
        for (int j = 0; j < r->nsleeps; j++)
            if (r->sleeps[j].end < 0 || r->sleeps[j].end > 7 || r->sleeps[j].took_ns < 0 ||
                r->sleeps[j].late_ns < 0 || r->sleeps[j].asked_us < -1)
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    zn_recording rec;
    char why[300];
    bool ok = zn_recording_parse(f, "input", &rec, why, sizeof why);
    fclose(f);
    if (!ok) {
        if (strncmp(why, "input:", 6) != 0)   /* every refusal names the file and a line */
            abort();
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    fputs(ZN_RECORDING_MAGIC "\n", out);
    for (int i = 0; i < rec.ncells; i++) {
        check_cell(&rec.cells[i]);
        zn_recording_write_cell(out, &rec.cells[i]);
    }
    fclose(out);
    f = fmemopen(text, len, "r");
    zn_recording again;
    if (!zn_recording_parse(f, "again", &again, why, sizeof why) || again.ncells != rec.ncells)
        abort();
    for (int i = 0; i < rec.ncells; i++)
        if (again.cells[i].nrequests != rec.cells[i].nrequests ||
            memcmp(&again.cells[i].cfg, &rec.cells[i].cfg, sizeof rec.cells[i].cfg))
            abort();
    fclose(f);
    free(text);
    zn_recording_free(&again);
    zn_recording_free(&rec);
    return 0;
}
