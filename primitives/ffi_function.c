/*
 * Foreign functions: looked up once (dlopen, dlsym), their signature prepared once, and
 * kept until the VM and every call in flight have let go of them. A threaded call
 * holds a reference, so freeing a function while a worker runs it is safe, and so is a
 * worker still running it after stvm_vm_free detached its thread.
 */
#include "ffi.h"
#include "../vm/alloc.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <string.h>

void stvm__ffi_function_ref(stvm_ffi_function *fn)
{
    atomic_fetch_add_explicit(&fn->refs, 1, memory_order_relaxed);
}

void stvm__ffi_function_unref(stvm_ffi_function *fn)
{
    if (atomic_fetch_sub_explicit(&fn->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (fn->lib)
        dlclose(fn->lib);
    free(fn);
}

/* dlopen and dlsym; EINVAL for a library that does not load or a missing symbol. */
static int look_up(const char *library, const char *symbol, stvm_ffi_function *fn)
{
    fn->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!fn->lib)
        return STVM_EINVAL;
    dlerror();
    void *sym = dlsym(fn->lib, symbol);
    if (!sym || dlerror()) {
        dlclose(fn->lib);
        return STVM_EINVAL;
    }
    /* POSIX makes an object pointer of dlsym's answer; C needs a function pointer. */
    _Static_assert(sizeof sym == sizeof fn->sym, "function and object pointers differ");
    memcpy(&fn->sym, &sym, sizeof sym);
    return STVM_OK;
}

/* A function with its signature prepared, linked into the VM's list; look_up or the
 * address fills in what to call. */
static int function_make(stvm_vm *vm, const char *signature, stvm_ffi_function **out)
{
    ffi_state *st;
    int err = stvm__ffi_state(vm, &st);
    if (err)
        return err;
    stvm_ffi_function *fn = stvm__calloc(1, sizeof *fn);
    if (!fn)
        return STVM_ENOMEM;
    if ((err = stvm__ffi_sig_parse(signature, &fn->sig))) {
        free(fn);
        return err;
    }
    fn->vm = vm;
    fn->stack_need = STVM_FFI_STACK_DEFAULT;
    atomic_init(&fn->refs, 1);
    *out = fn;
    return STVM_OK;
}

static void function_link(stvm_vm *vm, stvm_ffi_function *fn)
{
    ffi_state *st = vm->ffi.state;
    fn->magic = STVM_FFI_FUNCTION_MAGIC;
    fn->next = st->functions;
    if (st->functions)
        st->functions->prev = fn;
    st->functions = fn;
}

int stvm_ffi_function_new(stvm_vm *vm, const char *library, const char *symbol,
                          const char *signature, stvm_ffi_function **out)
{
    if (!vm || !symbol || !signature || !out)
        return STVM_EINVAL;
    stvm_ffi_function *fn;
    int err = function_make(vm, signature, &fn);
    if (err)
        return err;
    if ((err = look_up(library, symbol, fn))) {
        free(fn);
        return err;
    }
    function_link(vm, fn);
    *out = fn;
    return STVM_OK;
}

int stvm_ffi_function_at(stvm_vm *vm, void *address, const char *signature,
                         stvm_ffi_function **out)
{
    if (!vm || !address || !signature || !out)
        return STVM_EINVAL;
    stvm_ffi_function *fn;
    int err = function_make(vm, signature, &fn);
    if (err)
        return err;
    memcpy(&fn->sym, &address, sizeof address);
    function_link(vm, fn);
    *out = fn;
    return STVM_OK;
}

static void release(ffi_state *st, stvm_ffi_function *fn)
{
    if (fn->prev)
        fn->prev->next = fn->next;
    else
        st->functions = fn->next;
    if (fn->next)
        fn->next->prev = fn->prev;
    fn->magic = 0;
    if (!fn->running)   /* else the last same-thread call in progress lets go */
        stvm__ffi_function_unref(fn);
}

void stvm_ffi_function_free(stvm_vm *vm, stvm_ffi_function *fn)
{
    if (vm && stvm__ffi_is_function(vm, fn))
        release(vm->ffi.state, fn);
}

int stvm_ffi_function_set_stack(stvm_vm *vm, stvm_ffi_function *fn, size_t bytes)
{
    if (!vm || !stvm__ffi_is_function(vm, fn) || bytes > STVM_FFI_MAX_STACK_NEED)
        return STVM_EINVAL;
    fn->stack_need = bytes;
    return STVM_OK;
}

void stvm__ffi_functions_destroy(stvm_vm *vm)
{
    ffi_state *st = vm->ffi.state;
    while (st->functions)
        release(st, st->functions);
}
