/*
 * The ZnClient experiment: the simulated world (zn_world.h). The server sits on the other end of
 * a socketpair, outside the VM: an outside-world event (stvm_sim_at) a turnaround after
 * the request left takes the request and writes the answer, and the VM sees it only
 * when it looks, as it sees nginx's. Nothing else costs simulated time unless it is
 * modelled: the client's own CPU (work at the request's points), the event and
 * subscriber costs (the client's own stvm_work_us), and every wake-up from a simulated
 * OS sleep (the VM's wake-cost hook). The model draws the turnaround; a replay takes
 * each request's turnaround, CPU and wake-ups from a recording.
 */
#include "zn_world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"

/* nginx's answer for the benchmark's static file: its headers and a 300-byte body. */
#define SIM_BODY_BYTES 300
static const char sim_head[] = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: "
                               "application/octet-stream\r\nContent-Length: 300\r\n"
                               "Connection: keep-alive\r\n\r\n";

struct zn_sim {
    zn_config cfg;
    const zn_rec_cell *rec;         /* NULL: the model */
    uint64_t rng;
    int server;                     /* the server's end, -1 before the first dial */
    long long req;                  /* the request in progress (0-based), -1 before */
    int jumps;                      /* simulated sleeps within it */
    uint64_t blocked_before;        /* the client's blocked first reads at its READING */
    int64_t owed_ns;                /* recorded CPU not yet charged (under 1 us) */
    zn_sim_counts counts;
    char answer[sizeof sim_head - 1 + SIM_BODY_BYTES];
};

/* splitmix64: the same draws on every machine. */
static uint64_t next_u64(zn_sim *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* The model's turnaround: server_us plus an exponential spread of mean server_jitter_us
 * (whole us). */
static uint64_t draw_turnaround(zn_sim *s)
{
    double u = ((double)(next_u64(s) >> 11) + 0.5) / 9007199254740992.0;   /* (0, 1) */
    return s->cfg.server_us + (uint64_t)llround(-log(u) * s->cfg.server_jitter_us);
}

static const zn_rec_request *recorded(const zn_sim *s)
{
    if (!s->rec || !s->rec->nrequests || s->req < 0)
        return NULL;
    long long i = s->req < s->rec->nrequests ? s->req : s->rec->nrequests - 1;
    return &s->rec->requests[i];
}

/* Compute us of simulated CPU in the client's process. */
static void work(stvm_vm *vm, uint64_t us)
{
    while (us) {
        uint64_t step = us < STVM_MAX_WORK_US ? us : STVM_MAX_WORK_US;
        if (stvm_work_us(vm, step) != STVM_OK)
            return;   /* the run is ending: its waits are cancelled */
        us -= step;
    }
}

/* A recorded span of CPU, in whole us with the remainder carried to the next. */
static void work_ns(stvm_vm *vm, zn_sim *s, int64_t ns)
{
    s->owed_ns += ns > 0 ? ns : 0;
    uint64_t us = (uint64_t)(s->owed_ns / 1000);
    s->owed_ns -= (int64_t)us * 1000;
    work(vm, us);
}

/* The server: it takes what the client sent and answers. */
static void server_answers(stvm_vm *vm, void *arg)
{
    zn_sim *s = arg;
    char buf[4096];   /* a request is one short write: one receive takes it */
    ssize_t got = recv(s->server, buf, sizeof buf, MSG_DONTWAIT);
    (void)got;
    ssize_t n = send(s->server, s->answer, sizeof s->answer, MSG_NOSIGNAL);
    (void)n;   /* a socketpair's buffer holds it; a closed client drops it, as TCP would */
}

static int dial(stvm_vm *vm, void *arg, stvm_socket **out)
{
    zn_sim *s = arg;
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return STVM_ESYS;
    int err = stvm__socket_adopt(vm, fds[0], out);
    if (err) {
        close(fds[0]);
        close(fds[1]);
        return err;
    }
    if (s->server >= 0)
        close(s->server);
    s->server = fds[1];
    return STVM_OK;
}

static void at(stvm_vm *vm, void *arg, const zn_client *c, zn_point point)
{
    zn_sim *s = arg;
    const zn_rec_request *r;
    switch (point) {
    case ZN_AT_CONNECTED:
        break;
    case ZN_AT_SEND:
        s->req++;
        s->jumps = 0;
        if ((r = recorded(s)))
            work_ns(vm, s, r->gap_ns + r->send_ns);
        else if (!s->rec)
            work(vm, s->cfg.client_us / 2);
        break;
    case ZN_AT_SENT: {
        r = recorded(s);
        uint64_t after = r ? (uint64_t)((r->answer_ns + 500) / 1000)
                           : s->rec ? 0 : draw_turnaround(s);
        /* An answer already there when the flush returned is there for the first read,
         * which may come before the clock moves again. */
        if (after == 0)
            server_answers(vm, s);
        else
            stvm_sim_at(vm, stvm_vm_now_us(vm) + after, server_answers, s);
        break;
    }
    case ZN_AT_READING:
        s->blocked_before = stvm__zn_client_stats(c)->first_reads_blocked;
        if ((r = recorded(s)))
            work_ns(vm, s, r->between_ns);
        break;
    case ZN_AT_READ:
        if ((r = recorded(s)) && stvm__zn_client_stats(c)->first_reads_blocked != s->blocked_before)
            work_ns(vm, s, r->blocked ? r->wakepath_ns : 0);
        break;
    case ZN_AT_PARSED:
        if ((r = recorded(s)))
            work_ns(vm, s, r->parse_ns);
        else if (!s->rec)
            work(vm, s->cfg.client_us - s->cfg.client_us / 2);
        break;
    }
}

/* A wake-up's cost: the model's one figure, or the recorded request's sleep of the same
 * rank (past its last, the last: the recording has no other). */
static uint64_t wake_cost(stvm_vm *vm, void *arg, uint64_t requested_us, uint64_t slept_us,
                          int end)
{
    zn_sim *s = arg;
    const zn_rec_request *r = recorded(s);
    uint64_t w = s->cfg.wake_inject_us;
    if (r && r->nsleeps) {
        int j = s->jumps < r->nsleeps ? s->jumps : r->nsleeps - 1;
        s->counts.unmatched += s->jumps >= r->nsleeps;
        w = (uint64_t)((r->sleeps[j].late_ns + 500) / 1000);
    } else if (s->rec) {
        w = 0;
        s->counts.unmatched++;
    }
    s->jumps++;
    s->counts.sleeps++;
    s->counts.slept_us += slept_us + w;
    if (end >= 0 && end < (int)(sizeof s->counts.ends / sizeof *s->counts.ends))
        s->counts.ends[end]++;
    return w;
}

zn_sim *zn_sim_new(const zn_config *cfg, uint32_t seed, const zn_rec_cell *rec)
{
    zn_sim *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cfg = *cfg;
    s->rec = rec;
    s->rng = seed;
    s->server = -1;
    s->req = -1;
    memcpy(s->answer, sim_head, sizeof sim_head - 1);
    memset(s->answer + sizeof sim_head - 1, 'x', SIM_BODY_BYTES);
    return s;
}

void zn_sim_attach(zn_sim *s, stvm_vm *vm, zn_client_world *world)
{
    stvm__sim_set_wake_cost(vm, wake_cost, s);
    *world = (zn_client_world){.dial = dial, .at = at, .arg = s};
}

const zn_sim_counts *zn_sim_counts_of(const zn_sim *s)
{
    return &s->counts;
}

void zn_sim_free(zn_sim *s)
{
    if (!s)
        return;
    if (s->server >= 0)
        close(s->server);
    free(s);
}
