/* Error names and texts, made from the one list in stvm.h; the library's version. */
#include "stvm.h"

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
