/* Error names and texts, made from the one list in stvm.h; the operating system's
 * errors mapped to them; the library's version. */
#include <errno.h>

#include "error.h"

const char *stvm_strerror(int err)
{
    switch (err) {
#define STVM__ERRNO_TEXT(name, code, text) case (code): return text;
        STVM_ERRNO_MAP(STVM__ERRNO_TEXT)
#undef STVM__ERRNO_TEXT
    }
    return "unknown error";
}

const char *stvm_err_name(int err)
{
    switch (err) {
#define STVM__ERRNO_NAME(name, code, text) case (code): return "STVM_" #name;
        STVM_ERRNO_MAP(STVM__ERRNO_NAME)
#undef STVM__ERRNO_NAME
    }
    return "STVM_E?";
}

unsigned stvm_version(void) { return STVM_VERSION_HEX; }
const char *stvm_version_string(void) { return STVM_VERSION_STRING; }

int stvm__error_from_errno(int e)
{
    switch (e) {
    case EADDRINUSE: return STVM_EADDRINUSE;
    case EADDRNOTAVAIL: return STVM_EADDRNOTAVAIL;
    case ECONNREFUSED: return STVM_ECONNREFUSED;
    case ECONNRESET: return STVM_ECONNRESET;
    case EPIPE: return STVM_EPIPE;
    case ENETUNREACH: case ENETDOWN: return STVM_ENETUNREACH;
    case EHOSTUNREACH: case EHOSTDOWN: return STVM_EHOSTUNREACH;
    case EMFILE: case ENFILE: return STVM_EMFILE;
    case EACCES: case EPERM: return STVM_EACCES;
    case ENOENT: return STVM_ENOENT;
    case ETIMEDOUT: return STVM_ETIMEDOUT;
    case ENOMEM: case ENOBUFS: return STVM_ENOMEM;
    default:
        errno = e;
        return STVM_ESYS;
    }
}
