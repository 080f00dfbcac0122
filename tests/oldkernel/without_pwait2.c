/*
 * without-pwait2 PROGRAM [ARGS...]: run PROGRAM on a kernel that answers epoll_pwait2
 * ENOSYS (no_pwait2.h), as Linux before 5.11 does: the library then waits with
 * epoll_wait (vm/aio.c). make check-old-kernel runs the IO suites so (mk/valgrind.mk).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "no_pwait2.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: without-pwait2 PROGRAM [ARGS...]\n");
        return 2;
    }
    if (no_pwait2_install() != 0) {
        fprintf(stderr, "without-pwait2: the kernel refused the seccomp filter: %s\n",
                strerror(errno));
        return 1;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "without-pwait2: %s: %s\n", argv[1], strerror(errno));
    return 127;
}
