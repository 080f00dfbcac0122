/*
 * znclient --record: what the outside world did for each request of a real run,
 * for a replay on the simulated clock (zn_sim.c). Per request: the spans of the
 * client's own CPU (the wall time between its points less the modelled work the
 * configuration asks for, which the replay runs itself), when the server's answer
 * arrived after the flush (the kernel's software receive timestamp, SO_TIMESTAMPING,
 * read with a peek so that the client's own read is untouched), and every OS sleep:
 * what it asked for, what it took, what ended it, and how late it woke after the moment
 * it could have (its wake-up cost). The sleeps come from the VM's trace hook; the
 * timestamps are all CLOCK_REALTIME, the clock of the kernel's.
 */
#include "zn_world.h"

#include <errno.h>
#include <linux/net_tstamp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct zn_recorder {
    zn_config cfg;
    uint64_t blocked_before;        /* the client's blocked first reads at READING */
    int fd;                         /* the connection whose arrivals are stamped */
    bool timed_next, in_first_read, have_rx;
    int64_t t_send, t_sent, t_reading, t_read, t_parsed, t_rx, t_woke;
    zn_rec_request cur;
    int sleeps_cap;
    zn_rec_request *requests;
    long long n, cap, ntimed, unstamped;
};

uint64_t zn_modelled_between_us(const zn_config *k)
{
    bool logs = k->logging != ZN_LOGGING_OFF, sub = k->logging == ZN_LOGGING_SUBSCRIBER;
    bool written = sub && (k->subscriber_events == ZN_EVENTS_WRITTEN ||
                           k->subscriber_events == ZN_EVENTS_ALL);
    return (logs ? k->event_cost_us : 0) + (written ? k->subscriber_cost_us : 0) + k->between_us;
}

uint64_t zn_modelled_gap_us(const zn_config *k)
{
    bool logs = k->logging != ZN_LOGGING_OFF, sub = k->logging == ZN_LOGGING_SUBSCRIBER;
    unsigned after_events = !sub ? 0 : k->subscriber_events == ZN_EVENTS_ALL ? 2
                                   : k->subscriber_events != ZN_EVENTS_WRITTEN;
    return (logs ? 2u * k->event_cost_us : 0) + after_events * k->subscriber_cost_us +
           k->after_us + k->before_us;
}

zn_recorder *zn_recorder_new(const zn_config *cfg)
{
    zn_recorder *r = calloc(1, sizeof *r);
    if (r) {
        r->cfg = *cfg;
        r->fd = -1;
    }
    return r;
}

/* The kernel's receive timestamp of the bytes waiting on fd, without taking them:
 * true and *ns, or false when nothing waits or no stamp came with it. */
static bool peek_stamp(int fd, int64_t *ns, bool *data)
{
    char byte, ctl[256];
    struct iovec iov = {&byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = sizeof ctl};
    *data = recvmsg(fd, &m, MSG_PEEK | MSG_DONTWAIT) > 0;
    if (!*data)
        return false;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
            struct timespec ts[3];
            memcpy(ts, CMSG_DATA(c), sizeof ts);
            if (!ts[0].tv_sec && !ts[0].tv_nsec)
                return false;
            *ns = (int64_t)ts[0].tv_sec * 1000000000 + ts[0].tv_nsec;
            return true;
        }
    return false;
}

/* The answer is there (a peek found it): its arrival, stamped by the kernel if it can. */
static void note_arrival(zn_recorder *r)
{
    bool data;
    if (r->have_rx || r->fd < 0)
        return;
    if (peek_stamp(r->fd, &r->t_rx, &data)) {
        r->have_rx = r->cur.stamped = true;
    } else if (data) {
        r->t_rx = zn_clock_ns(CLOCK_REALTIME);
        r->have_rx = true;
    }
}

static void add_sleep(zn_recorder *r, const stvm_trace_event *ev)
{
    if (r->cur.nsleeps == r->sleeps_cap) {
        int cap = r->sleeps_cap ? 2 * r->sleeps_cap : 4;
        zn_rec_sleep *s = realloc(r->cur.sleeps, (size_t)cap * sizeof *s);
        if (!s)
            return;   /* out of memory: the sleep is not recorded; the replay uses the last */
        r->cur.sleeps = s;
        r->sleeps_cap = cap;
    }
    r->t_woke = zn_clock_ns(CLOCK_REALTIME);
    /* late_ns is known once the answer's arrival is: finish_request. */
    r->cur.sleeps[r->cur.nsleeps++] = (zn_rec_sleep){.asked_us = ev->detail,
                                                     .took_ns = ev->extra * 1000,
                                                     .late_ns = r->t_woke, .end = ev->reason};
}

static void trace_hook(stvm_vm *vm, const stvm_trace_event *ev, void *arg)
{
    zn_recorder *r = arg;
    if (ev->kind == STVM_TRACE_IDLE_SLEEP && r->t_send)
        add_sleep(r, ev);
    else if (ev->kind == STVM_TRACE_SOCKET_DONE && r->in_first_read && ev->detail == STVM_OK)
        note_arrival(r);
}

/* Each sleep's wake-up cost: how long after it could have ended it did (the answer's
 * arrival for one a descriptor ended, the time asked for one that ran out). */
static void finish_sleeps(zn_recorder *r)
{
    for (int i = 0; i < r->cur.nsleeps; i++) {
        zn_rec_sleep *s = &r->cur.sleeps[i];
        int64_t end = s->late_ns, start = end - s->took_ns, could = end;
        if (s->end == STVM_TRACE_END_IO)
            could = r->t_rx > start ? r->t_rx : start;
        else if (s->end != STVM_TRACE_END_EXTERNAL && s->asked_us >= 0)
            could = start + s->asked_us * 1000;
        s->late_ns = end > could ? end - could : 0;
    }
}

static void finish_request(zn_recorder *r)
{
    if (!r->have_rx) {
        r->t_rx = r->t_read;   /* no sight of it before the read: the read's moment */
        r->unstamped++;
    } else if (!r->cur.stamped) {
        r->unstamped++;
    }
    int64_t answer = r->t_rx - r->t_sent, woke = r->t_woke > r->t_rx ? r->t_woke : r->t_rx;
    r->cur.answer_ns = answer > 0 ? answer : 0;
    r->cur.between_ns = r->t_reading - r->t_sent - (int64_t)zn_modelled_between_us(&r->cfg) * 1000;
    r->cur.wakepath_ns = r->cur.blocked ? r->t_read - woke : 0;
    r->cur.parse_ns = r->t_parsed - r->t_read;
    finish_sleeps(r);
    if (r->n == r->cap) {
        long long cap = r->cap ? 2 * r->cap : 1024;
        zn_rec_request *q = realloc(r->requests, (size_t)cap * sizeof *q);
        if (!q) {
            free(r->cur.sleeps);
            goto next;
        }
        r->requests = q;
        r->cap = cap;
    }
    r->requests[r->n++] = r->cur;
    r->ntimed += r->cur.timed;
next:
    r->cur = (zn_rec_request){0};
    r->sleeps_cap = 0;
}

static void at(stvm_vm *vm, void *arg, const zn_client *c, zn_point point)
{
    zn_recorder *r = arg;
    int64_t now = zn_clock_ns(CLOCK_REALTIME);
    switch (point) {
    case ZN_AT_CONNECTED: {
        r->fd = stvm__zn_client_fd(c);
        int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
        if (setsockopt(r->fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) != 0)
            r->fd = -1;   /* no stamps: each arrival is the moment it was seen */
        break;
    }
    case ZN_AT_SEND:
        r->cur.timed = r->timed_next;
        if (r->t_parsed)
            r->cur.gap_ns = now - r->t_parsed - (int64_t)zn_modelled_gap_us(&r->cfg) * 1000;
        r->t_send = now;
        break;
    case ZN_AT_SENT:
        r->t_sent = now;
        r->cur.send_ns = now - r->t_send;
        r->have_rx = false;
        r->t_woke = 0;
        break;
    case ZN_AT_READING:
        r->t_reading = now;
        r->blocked_before = stvm__zn_client_stats(c)->first_reads_blocked;
        r->in_first_read = true;
        note_arrival(r);
        break;
    case ZN_AT_READ:
        r->t_read = now;
        r->in_first_read = false;
        r->cur.blocked = stvm__zn_client_stats(c)->first_reads_blocked != r->blocked_before;
        break;
    case ZN_AT_PARSED:
        r->t_parsed = now;
        finish_request(r);
        break;
    }
}

int zn_recorder_attach(zn_recorder *r, stvm_vm *vm, zn_client_world *world)
{
    *world = (zn_client_world){.at = at, .arg = r};
    return stvm_trace_set_hook(vm, trace_hook, r);
}

void zn_recorder_mark_timed(zn_recorder *r)
{
    r->timed_next = true;
}

long long zn_recorder_unstamped(const zn_recorder *r)
{
    return r->unstamped;
}

bool zn_recorder_write(zn_recorder *r, FILE *f, int repetition, double rps,
                       double blocked_first)
{
    zn_rec_cell cell = {.cfg = r->cfg, .repetition = repetition, .rps = rps,
                        .blocked_first = blocked_first, .nrequests = r->n, .ntimed = r->ntimed,
                        .requests = r->requests};
    return zn_recording_write_cell(f, &cell);
}

void zn_recorder_free(zn_recorder *r)
{
    if (!r)
        return;
    for (long long i = 0; i < r->n; i++)
        free(r->requests[i].sleeps);
    free(r->requests);
    free(r->cur.sleeps);
    free(r);
}
