/*
 * A kernel without epoll_pwait2, made on this one: a seccomp filter that answers that
 * one system call ENOSYS, as Linux before 5.11 and valgrind 3.19 do, and lets every
 * other through. It holds for the calling thread and everything it starts afterwards
 * (threads, forks, execs: Criterion's workers included) and cannot be removed, so a
 * test installs it in its own worker process. Needs no privilege (no_new_privs).
 */
#ifndef STVM_TESTS_NO_PWAIT2_H
#define STVM_TESTS_NO_PWAIT2_H

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441   /* x86-64 and aarch64 alike */
#endif

/* 0, or -1 with errno when the kernel refuses the filter. */
static inline int no_pwait2_install(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_epoll_pwait2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

#endif
