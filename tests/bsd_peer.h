/*
 * A real peer for the half-close tests of the socket, stream and unix_socket suites: a
 * plain blocking BSD socket in a pthread, as a C client (`printf ... | nc -N`, an
 * HTTP/1.0 client) is. It connects to 127.0.0.1:port (or a Unix path), sends its bytes,
 * shuts its sending side (shutdown(SHUT_WR): the VM's end reads to its end of the
 * stream), then reads the VM's answer until the VM closes or shuts its side. Every wait
 * is bounded (SO_RCVTIMEO, SO_SNDTIMEO: 10 s).
 */
#ifndef STVM_TESTS_BSD_PEER_H
#define STVM_TESTS_BSD_PEER_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

typedef struct bsd_peer {
    int port;                /* connect to 127.0.0.1:port, or */
    const char *path;        /* to this Unix path */
    const char *send;        /* sent, then shutdown(SHUT_WR) */
    bool no_shutdown;        /* keep the sending side open (it closes at the end) */
    char got[65536];         /* what it read until the end of the stream */
    size_t ngot;
    int err;                 /* errno of the first failure, 0 if none */
    const char *failed;      /* the call that failed */
    pthread_t thread;
} bsd_peer;

static void bsd_peer_fail(bsd_peer *p, const char *call)
{
    if (!p->err) {
        p->err = errno ? errno : -1;
        p->failed = call;
    }
}

static void *bsd_peer_main(void *arg)
{
    bsd_peer *p = arg;
    struct sockaddr_storage sa = {0};
    socklen_t len;
    if (p->path) {
        struct sockaddr_un *un = (struct sockaddr_un *)&sa;
        un->sun_family = AF_UNIX;
        snprintf(un->sun_path, sizeof un->sun_path, "%s", p->path);
        len = sizeof *un;
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)&sa;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)p->port);
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *in;
    }
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        bsd_peer_fail(p, "socket");
        return NULL;
    }
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, len) != 0) {
        bsd_peer_fail(p, "connect");
        close(fd);
        return NULL;
    }
    size_t n = p->send ? strlen(p->send) : 0;
    for (size_t done = 0; done < n;) {
        ssize_t r = send(fd, p->send + done, n - done, MSG_NOSIGNAL);
        if (r <= 0) {
            bsd_peer_fail(p, "send");
            break;
        }
        done += (size_t)r;
    }
    if (!p->no_shutdown && shutdown(fd, SHUT_WR) != 0)
        bsd_peer_fail(p, "shutdown");
    for (;;) {
        ssize_t r = recv(fd, p->got + p->ngot, sizeof p->got - 1 - p->ngot, 0);
        if (r < 0)
            bsd_peer_fail(p, "recv");
        if (r <= 0)
            break;
        p->ngot += (size_t)r;
    }
    p->got[p->ngot] = '\0';
    close(fd);
    return NULL;
}

static inline void bsd_peer_start(bsd_peer *p)
{
    cr_assert_eq(pthread_create(&p->thread, NULL, bsd_peer_main, p), 0);
}

static inline void bsd_peer_join(bsd_peer *p)
{
    cr_assert_eq(pthread_join(p->thread, NULL), 0);
}

#endif
