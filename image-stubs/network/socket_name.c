/* stvm_socket_set_name and stvm_socket_get_name (stvm/net.h): a socket's name, which its
 * stream and its three semaphores go by too (the trace's "conn.read"). */
#include "../../vm/names.h"
#include "socket.h"

static int check(stvm_vm *vm, const stvm_socket *s)
{
    if (!vm)
        return STVM_EINVAL;
    if (vm->active && !stvm__in_process(vm))
        return STVM_ENOTPROC;   /* before the handle is looked up: the lookup caches */
    return stvm__prim_object_of(vm, (stvm_oop)s, STVM_CLASS_SOCKET) ? STVM_OK : STVM_EINVAL;
}

int stvm_socket_set_name(stvm_vm *vm, stvm_socket *s, const char *name)
{
    int err = check(vm, s);
    return err ? err : stvm__name_set(vm, s, name);
}

int stvm_socket_get_name(stvm_vm *vm, const stvm_socket *s, char *buf, size_t size)
{
    int err = check(vm, s);
    if (!err && !buf && size)
        err = STVM_EINVAL;
    return err ? err : stvm__name_copy(vm, s, buf, size);
}
