/*
 * ffi.c -- calling C from green processes through libffi.
 *
 *  1. cos from libm, looked up by library and symbol, called on the process's thread.
 *  2. qsort from the C library sorting an array with a comparator that is a callback
 *     into the VM: it runs nested, in the process that called qsort, on its stack.
 *  3. usleep(50 ms), first on the VM's own thread, then on a worker thread, while a
 *     ticker process wakes every 5 ms. On the VM's thread every process stops until
 *     the call returns (the ticker misses its ticks); on a worker only the caller
 *     waits and the ticker keeps going.
 *
 * The program exits 1 if the sort is wrong or the ticker ran during the same-thread call
 * or never ran during the worker's.
 */
#include <stdio.h>
#include <stvm.h>

typedef struct demo {
    stvm_ffi_function *cos_fn, *qsort_fn, *usleep_fn;
    void *comparator;            /* the callback's C function */
    int comparisons;
    bool in_call, done;
    int ticks_during_call;
    int failed;
} demo;

/* The comparator: two pointers to int, as ExternalAddresses; answers -1, 0 or 1. */
static int compare(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs, stvm_oop *result)
{
    demo *d = arg;
    void *a, *b;
    (void)nargs;
    if (stvm_oop_ptr(vm, args[0], &a) != STVM_OK || stvm_oop_ptr(vm, args[1], &b) != STVM_OK)
        return STVM_EINVAL;
    int x = *(const int *)a, y = *(const int *)b;
    d->comparisons++;
    return stvm_int_from_i64(vm, (x > y) - (x < y), result);
}

static void call_cos(stvm_vm *vm, demo *d)
{
    stvm_oop x, r;
    double c = 0;
    stvm_float_new(vm, 1.0, &x);
    if (stvm_ffi_call(vm, d->cos_fn, &x, 1, &r) == STVM_OK &&
        stvm_float_value(vm, r, &c) == STVM_OK) {
        printf("cos(1.0) = %.6f, a BoxedFloat64 made by the call\n", c);
        stvm_oop_release(vm, r);
    } else {
        d->failed = 1;
    }
    stvm_oop_release(vm, x);
}

static void call_qsort(stvm_vm *vm, demo *d)
{
    int numbers[] = {42, 7, 19, 3, 88, 1, 56, 23};
    stvm_oop args[4];
    stvm_ptr_oop(vm, numbers, &args[0]);
    stvm_int_from_i64(vm, 8, &args[1]);
    stvm_int_from_i64(vm, sizeof numbers[0], &args[2]);
    stvm_ptr_oop(vm, d->comparator, &args[3]);
    int err = stvm_ffi_call(vm, d->qsort_fn, args, 4, NULL);
    stvm_oop_release(vm, args[0]);
    stvm_oop_release(vm, args[3]);
    printf("qsort with a comparator in the VM (%d calls back):", d->comparisons);
    for (int i = 0; i < 8; i++) {
        printf(" %d", numbers[i]);
        if (i && numbers[i - 1] > numbers[i])
            d->failed = 1;
    }
    printf("\n");
    if (err != STVM_OK)
        d->failed = 1;
}

/* usleep(50 ms) on the VM's thread or on a worker; how often the ticker ran meanwhile. */
static int blocking_call(stvm_vm *vm, demo *d, bool threaded)
{
    stvm_oop us;
    stvm_int_from_i64(vm, 50000, &us);
    d->ticks_during_call = 0;
    d->in_call = true;
    int err = threaded ? stvm_ffi_call_threaded(vm, d->usleep_fn, &us, 1, NULL)
                       : stvm_ffi_call(vm, d->usleep_fn, &us, 1, NULL);
    d->in_call = false;
    printf("usleep(50 ms) %s: the ticker ran %d times meanwhile\n",
           threaded ? "on a worker thread" : "on the VM's thread", d->ticks_during_call);
    if (err != STVM_OK)
        d->failed = 1;
    return d->ticks_during_call;
}

static void caller(stvm_vm *vm, void *arg)
{
    demo *d = arg;
    call_cos(vm, d);
    call_qsort(vm, d);
    stvm_delay_wait_ms(vm, 5);   /* let the ticker start */
    if (blocking_call(vm, d, false) != 0)
        d->failed = 1;
    if (blocking_call(vm, d, true) == 0)
        d->failed = 1;
    d->done = true;
}

static void ticker(stvm_vm *vm, void *arg)
{
    demo *d = arg;
    while (!d->done) {
        stvm_delay_wait_ms(vm, 5);
        if (d->in_call)
            d->ticks_during_call++;
    }
}

int main(void)
{
    stvm_vm *vm;
    if (stvm_vm_create(NULL, &vm) != STVM_OK)
        return 1;
    demo d = {0};
    stvm_ffi_callback *cb;
    int err = stvm_ffi_function_new(vm, "libm.so.6", "cos", "f64(f64)", &d.cos_fn);
    if (!err)
        err = stvm_ffi_function_new(vm, NULL, "qsort", "void(ptr, size, size, ptr)", &d.qsort_fn);
    if (!err)
        err = stvm_ffi_function_new(vm, NULL, "usleep", "i32(u32)", &d.usleep_fn);
    if (!err)
        err = stvm_ffi_callback_new(vm, "i32(ptr, ptr)", compare, &d, &cb, &d.comparator);
    if (!err)
        err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "caller", caller, &d, NULL);
    if (!err)
        err = stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "ticker", ticker, &d, NULL);
    if (!err)
        err = stvm_run(vm);
    if (err)
        fprintf(stderr, "ffi: %s\n", stvm_strerror(err));
    stvm_vm_free(vm);   /* frees the functions and the callback too */
    return err || d.failed ? 1 : 0;
}
