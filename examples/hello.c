/* hello.c: two green processes, a semaphore and a delay (the README's example). */
#include <stdio.h>
#include <stvm.h>

static stvm_semaphore *ready;
static int answer;

static void producer(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_delay_wait_ms(vm, 10);          /* sleep 10 ms; other processes may run */
    answer = 42;
    puts("producer: signalling");
    stvm_semaphore_signal(vm, ready);    /* the consumer is higher: it runs right here */
    puts("producer: done");
}

static void consumer(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_semaphore_wait(vm, ready);
    printf("consumer: got %d\n", answer);
}

int main(void)
{
    stvm_vm *vm;
    int err = stvm_vm_create(NULL, &vm); /* NULL: default configuration */
    if (err != STVM_OK) {
        fprintf(stderr, "stvm_vm_create: %s\n", stvm_strerror(err));
        return 1;
    }
    stvm_semaphore_new(vm, &ready);
    stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "producer", producer, NULL, NULL);
    stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "consumer", consumer, NULL, NULL);
    err = stvm_run(vm);                  /* returns when both have finished */
    if (err != STVM_OK)
        fprintf(stderr, "stvm_run: %s\n", stvm_strerror(err));
    stvm_vm_free(vm);
    return err == STVM_OK ? 0 : 1;
}
