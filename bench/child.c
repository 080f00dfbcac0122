/* The child's side of running nginx or wrk (child.h). */
#include "child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

void bench_child_exec(pid_t parent, int out_fd, char *const argv[])
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)   /* the parent died before the line above */
        _exit(127);
    int nullfd = open("/dev/null", O_RDONLY);
    if (nullfd >= 0)
        dup2(nullfd, 0);
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    close_range(3, ~0u, 0);
    execv(argv[0], argv);
    _exit(127);
}
