/* The child's side of running nginx or wrk, finding them, and waiting (child.h). */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

bool harness_child_find(char *out, size_t size, const char *given, const char *name,
                      const char *fallback)
{
    const char *path = given ? NULL : getenv("PATH");   /* given: only that file */
    for (; path && *path; path += *path == ':') {
        size_t n = strcspn(path, ":");
        if (n > 0 && (size_t)snprintf(out, size, "%.*s/%s", (int)n, path, name) < size &&
            executable(out))
            return true;
        path += n;
    }
    snprintf(out, size, "%s", given ? given : fallback);
    return executable(out);
}

void harness_child_exec(pid_t parent, int in_fd, int out_fd, char *const argv[])
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)   /* the parent died before the line above */
        _exit(127);
    if (in_fd < 0)
        in_fd = open("/dev/null", O_RDONLY);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    close_range(3, ~0u, 0);
    execv(argv[0], argv);
    _exit(127);
}

bool harness_child_wait(pid_t pid, int ms, int *status)
{
    for (int waited = 0;; waited += 5) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid && status)
            *status = st;
        if (r == pid || (r < 0 && errno != EINTR))
            return true;
        if (waited >= ms)
            return false;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}
