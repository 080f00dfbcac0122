/*
 * execve for the aarch64 test binary run under qemu-user (mk/aarch64.mk links it into
 * that binary only).
 *
 * Criterion runs each test in a child it makes by fork and then execve of the test
 * binary itself (BoxFort, its sandbox). Under qemu-user the execve is passed to the
 * host kernel, which cannot run an aarch64 program unless qemu is registered with
 * binfmt_misc, a machine-wide setting the project does not make: the call fails with
 * ENOEXEC and Criterion aborts with "Could not spawn test instance: Protocol error".
 *
 * So this definition, which takes the place of libc's for libcriterion's call (a
 * program's own definition comes first in the dynamic symbol lookup), does what
 * binfmt_misc would: when the environment variable STVM_QEMU names the qemu-aarch64
 * program and `path` is an aarch64 ELF file, it executes
 *     STVM_QEMU -0 argv[0] path argv[1] ...
 * instead, with the same environment. The process keeps its pid, so BoxFort's parent
 * finds its child. Any other call (STVM_QEMU unset, a script, an x86-64 program) is
 * the plain system call. Async-signal-safe and malloc-free: it runs in a child after
 * fork.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* syscall(2) */
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Arguments passed through; a longer argv goes to the plain call (and fails there). */
#define MAX_ARGS 64

static int is_aarch64_elf(const char *path)
{
    Elf64_Ehdr h;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, &h, sizeof h);
    close(fd);
    return n == (ssize_t)sizeof h && h.e_ident[EI_MAG0] == ELFMAG0 &&
           h.e_ident[EI_MAG1] == ELFMAG1 && h.e_ident[EI_MAG2] == ELFMAG2 &&
           h.e_ident[EI_MAG3] == ELFMAG3 && h.e_machine == EM_AARCH64;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    const char *qemu = getenv("STVM_QEMU");
    if (qemu && *qemu && argv[0] && is_aarch64_elf(path)) {
        const char *args[MAX_ARGS + 5];
        int n = 0;
        args[n++] = qemu;
        args[n++] = "-0";
        args[n++] = argv[0];
        args[n++] = path;
        int i = 1;
        while (argv[i] && n < MAX_ARGS + 4)
            args[n++] = argv[i++];
        if (!argv[i]) {
            args[n] = NULL;
            return (int)syscall(SYS_execve, qemu, args, envp);
        }
    }
    return (int)syscall(SYS_execve, path, argv, envp);
}
