/* The one map from the operating system's errno to the library's codes. */
#ifndef STVM_VM_ERROR_H
#define STVM_VM_ERROR_H

#include "stvm.h"

/* The code for a system call's failure with errno e: the codes a program acts on
 * (EADDRINUSE, ECONNREFUSED, ECONNRESET, EPIPE, EMFILE, ...: include/stvm/core.h's list)
 * have their own; ENOMEM and ENOBUFS are STVM_ENOMEM, ETIMEDOUT STVM_ETIMEDOUT; the rest
 * is STVM_ESYS. For STVM_ESYS it sets errno to e, so that the caller's errno says why
 * (the contract of every call that answers ESYS); it never changes errno otherwise. */
int stvm__error_from_errno(int e);

#endif
