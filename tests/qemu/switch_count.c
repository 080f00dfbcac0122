/*
 * switch-count MODE N: N semaphore hand-offs between two green processes (MODE handoff:
 * both block at one call site, as stvm-bench micro's handoff case) or N raw switches
 * (MODE raw: stvm_measure_raw_switch), and nothing else, so that an instruction counter
 * run on it twice, with N and 2N, gives the instructions per operation as the
 * difference over N (the start-up, the VM's creation and the exit cancel out).
 * mk/aarch64.mk builds it for both machines (make switch-count) and docs/scheduler.md,
 * "Back ends", has the counts: callgrind on x86-64, qemu's one-instruction-per-block
 * execution log on both. Exits 0 when every call succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stvm.h>

typedef struct pair {
    stvm_semaphore *s[2];
    long long rounds;   /* one round = two hand-offs */
    int err;
} pair;

/* Both parties run this one copy (noinline), so that they block at one call site. */
static __attribute__((noinline)) int rounds(stvm_vm *vm, stvm_semaphore *mine,
                                            stvm_semaphore *other, long long n)
{
    int err = STVM_OK;
    for (long long i = 0; !err && i < n; i++) {
        err = stvm_semaphore_wait(vm, mine);
        if (!err)
            err = stvm_semaphore_signal(vm, other);
    }
    return err;
}

static void ping(stvm_vm *vm, void *arg)
{
    pair *p = arg;
    int err = stvm_semaphore_signal(vm, p->s[0]);
    if (!err)
        err = rounds(vm, p->s[1], p->s[0], p->rounds);
    if (err)
        p->err = err;
}

static void pong(stvm_vm *vm, void *arg)
{
    pair *p = arg;
    int err = rounds(vm, p->s[0], p->s[1], p->rounds);
    if (err)
        p->err = err;
}

static int handoffs(long long n)
{
    stvm_vm *vm = NULL;
    pair p = {.rounds = n / 2};
    int err = stvm_vm_create(NULL, &vm);
    if (!err)
        err = stvm_semaphore_new(vm, &p.s[0]);
    if (!err)
        err = stvm_semaphore_new(vm, &p.s[1]);
    if (!err)
        err = stvm_spawn(vm, 40, "pong", pong, &p, NULL);
    if (!err)
        err = stvm_spawn(vm, 40, "ping", ping, &p, NULL);
    if (!err)
        err = stvm_run(vm);
    if (!err)
        err = p.err;
    if (vm)
        stvm_vm_free(vm);
    return err;
}

int main(int argc, char **argv)
{
    long long n = argc == 3 ? atoll(argv[2]) : 0;
    if (n < 2 || (strcmp(argv[1], "handoff") && strcmp(argv[1], "raw"))) {
        fprintf(stderr, "usage: switch-count handoff|raw N (N >= 2)\n");
        return 2;
    }
    double ns;
    int err = strcmp(argv[1], "raw") ? handoffs(n)
                                     : stvm_measure_raw_switch((uint64_t)n / 2, &ns);
    if (err) {
        fprintf(stderr, "switch-count: %s\n", stvm_err_name(err));
        return 1;
    }
    printf("%s: %lld on %s\n", argv[1], n, stvm_context_backend());
    return 0;
}
