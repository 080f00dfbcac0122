/*
 * FFI signatures: "RET(ARG,...)" with stvm's type names, parsed once and prepared once
 * (ffi_prep_cif); every call of a function or callback reuses the prepared cif.
 */
#include "ffi.h"

#include <ctype.h>
#include <string.h>

static const struct kind_row {
    const char *name;
    ffi_type *type;
} kinds[K_COUNT] = {
    [K_VOID] = {"void", &ffi_type_void},   [K_I8] = {"i8", &ffi_type_sint8},
    [K_I16] = {"i16", &ffi_type_sint16},   [K_I32] = {"i32", &ffi_type_sint32},
    [K_I64] = {"i64", &ffi_type_sint64},   [K_U8] = {"u8", &ffi_type_uint8},
    [K_U16] = {"u16", &ffi_type_uint16},   [K_U32] = {"u32", &ffi_type_uint32},
    [K_U64] = {"u64", &ffi_type_uint64},   [K_PTR] = {"ptr", &ffi_type_pointer},
    [K_SIZE] = {"size", &ffi_type_uint64}, [K_F32] = {"f32", &ffi_type_float},
    [K_F64] = {"f64", &ffi_type_double},   [K_STR] = {"str", &ffi_type_pointer},
};
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "size travels as u64");

ffi_type *stvm__ffi_type(ffi_kind k)
{
    return kinds[k].type;
}

static const char *skip_space(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* A type name at p (after spaces): its kind, p moved past it; -1 if there is none. */
static int type_at(const char **p)
{
    const char *s = skip_space(*p), *e = s;
    while (isalnum((unsigned char)*e))
        e++;
    for (int k = 0; k < K_COUNT; k++) {
        if ((size_t)(e - s) == strlen(kinds[k].name) && !strncmp(s, kinds[k].name, (size_t)(e - s))) {
            *p = skip_space(e);
            return k;
        }
    }
    return -1;
}

/* "ARG,...)" or ")" after the opening parenthesis. */
static int parse_args(const char *p, ffi_sig *sig)
{
    p = skip_space(p);
    if (*p == ')')
        return *skip_space(p + 1) ? STVM_EINVAL : STVM_OK;
    for (;;) {
        int k = type_at(&p);
        if (k < 0 || k == K_VOID || sig->nargs == STVM_FFI_MAX_ARGS)
            return STVM_EINVAL;
        sig->args[sig->nargs] = (uint8_t)k;
        sig->atypes[sig->nargs++] = kinds[k].type;
        if (*p == ')')
            return *skip_space(p + 1) ? STVM_EINVAL : STVM_OK;
        if (*p++ != ',')
            return STVM_EINVAL;
    }
}

int stvm__ffi_sig_parse(const char *text, ffi_sig *sig)
{
    memset(sig, 0, sizeof *sig);
    const char *p = text;
    int ret = type_at(&p);
    if (ret < 0 || *p != '(')
        return STVM_EINVAL;
    sig->ret = (uint8_t)ret;
    int err = parse_args(p + 1, sig);
    if (err)
        return err;
    if (ffi_prep_cif(&sig->cif, FFI_DEFAULT_ABI, (unsigned)sig->nargs, kinds[ret].type,
                     sig->atypes) != FFI_OK)
        return STVM_EINVAL;
    return STVM_OK;
}
