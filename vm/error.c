#include "stvm.h"

static const struct {
    int code;
    const char *name, *text;
} errors[] = {
    {STVM_OK, "STVM_OK", "success"},
    {STVM_EINVAL, "STVM_EINVAL", "invalid argument"},
    {STVM_ENOMEM, "STVM_ENOMEM", "out of memory"},
    {STVM_EDEADLOCK, "STVM_EDEADLOCK", "deadlock: no process can ever run again"},
    {STVM_ESTATE, "STVM_ESTATE", "object not in a state that allows the operation"},
    {STVM_EPERM, "STVM_EPERM", "caller does not own the mutex"},
    {STVM_ETIMEDOUT, "STVM_ETIMEDOUT", "timed out"},
    {STVM_ERANGE, "STVM_ERANGE", "value out of range"},
    {STVM_ENOTPROC, "STVM_ENOTPROC", "must be called from a green process of this VM"},
    {STVM_EBUSY, "STVM_EBUSY", "the VM is already running"},
    {STVM_EFULL, "STVM_EFULL", "external semaphore table full"},
    {STVM_ESYS, "STVM_ESYS", "operating system call failed"},
    {STVM_EPRIM, "STVM_EPRIM", "primitive failed"},
};

const char *stvm_strerror(int err)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == err)
            return errors[i].text;
    return "unknown error";
}

const char *stvm_err_name(int err)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == err)
            return errors[i].name;
    return "STVM_E?";
}

unsigned stvm_version(void) { return STVM_VERSION_HEX; }
const char *stvm_version_string(void) { return STVM_VERSION_STRING; }
