/*
 * The argument order of every public call (suite api_order; include/README.md,
 * "Naming"): the VM, then the object the call acts on, then its inputs, then the time
 * limit, then its outputs (out-pointers), then a
 * struct's size for the '_' functions. The test reads the public headers themselves
 * (stvm.h and each header it includes), so that a call added or changed against the
 * rule fails here, not in a user's reading.
 *
 * Each parameter's role comes from its declaration:
 *  - the VM: `vm` of type stvm_vm *;
 *  - a time limit: `timeout_ms`, `ms` or `us`, an integer;
 *  - an output: `out`, a name ending in `_out`, a pointer to a pointer (`void **item`,
 *    `stvm_socket **out`, `const char **names`), or a pointer to a writable value that
 *    is not a handle (`int *fail_code`, `stvm_oop *result`, `size_t *size`); the size
 *    or capacity right after an output is part of it;
 *  - memory the caller lends for the call to fill, with its size (`void *buf, size_t
 *    len`, `char *why, size_t size`), is an input, as a send's data is: the caller hands
 *    both in (`stvm_socket_recv(vm, s, buf, len, timeout_ms)`, as POSIX's recv);
 *  - a struct's size: the last parameter of a '_' function, its name ending in `_size`;
 *  - anything else is an input (a handle, `const` data, `void *arg`, `void *item`).
 * And the object: a call named stvm_<noun>_... that takes a handle of its noun's kind
 * takes it first after the VM (stvm_process_get_local(vm, p, v, &value), not
 * stvm_local_get_of(vm, p, v, &value)).
 */
#include <ctype.h>

#include "helpers.h"

TestSuite(api_order, .timeout = 30);

/* The handle types: a writable pointer to one is an object or an input, not an output. */
static const char *const handle_nouns[] = {
    "vm",    "process", "semaphore", "mutex",        "queue",      "monitor",      "local",
    "delay", "socket",  "stream",    "ffi_function", "ffi_worker", "ffi_callback",
};
#define N_NOUNS (sizeof handle_nouns / sizeof handle_nouns[0])

enum role { ROLE_VM, ROLE_INPUT, ROLE_LIMIT, ROLE_OUTPUT, ROLE_STRUCT_SIZE };
static const char *const role_name[] = {"the VM", "an input", "the time limit", "an output",
                                        "a struct's size"};

typedef struct param {
    char type[96], name[48];
    int role;
} param;

typedef struct decl {
    char name[64];
    param p[12];
    int n;
} decl;

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    size_t k = 0;
    while (isspace((unsigned char)s[k]))
        k++;
    memmove(s, s + k, n - k + 1);
}

/* "const stvm_vm *vm" -> type "const stvm_vm *", name "vm" (whitespace collapsed). */
static void split_param(const char *text, param *p)
{
    char buf[160];
    size_t j = 0;
    for (const char *c = text; *c && j + 1 < sizeof buf; c++) {
        if (isspace((unsigned char)*c)) {
            if (j && buf[j - 1] != ' ')
                buf[j++] = ' ';
        } else {
            buf[j++] = *c;
        }
    }
    buf[j] = 0;
    trim(buf);
    size_t end = strlen(buf), start = end;
    while (start && (isalnum((unsigned char)buf[start - 1]) || buf[start - 1] == '_'))
        start--;
    snprintf(p->name, sizeof p->name, "%.47s", buf + start);
    buf[start] = 0;
    trim(buf);
    snprintf(p->type, sizeof p->type, "%.95s", buf);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

/* A writable pointer to a handle (stvm_<noun> *, one star)? */
static bool is_handle_pointer(const char *type)
{
    if (strncmp(type, "const ", 6) == 0)
        type += 6;
    for (size_t i = 0; i < N_NOUNS; i++) {
        char want[64];
        snprintf(want, sizeof want, "stvm_%s *", handle_nouns[i]);
        if (strcmp(type, want) == 0)
            return true;
    }
    return false;
}

static int role_of(const decl *d, int i)
{
    const param *p = &d->p[i];
    const char *t = p->type;
    bool pointer = strchr(t, '*') != NULL, writable = strncmp(t, "const ", 6) != 0;
    if (strcmp(p->name, "vm") == 0 && strstr(t, "stvm_vm *"))
        return ROLE_VM;
    if (i == d->n - 1 && ends_with(d->name, "_") && ends_with(p->name, "_size") && !pointer)
        return ROLE_STRUCT_SIZE;
    if (!pointer && (strcmp(p->name, "timeout_ms") == 0 || strcmp(p->name, "ms") == 0 ||
                     strcmp(p->name, "us") == 0))
        return ROLE_LIMIT;
    if (strcmp(p->name, "out") == 0 || ends_with(p->name, "_out") || strstr(t, "**"))
        return ROLE_OUTPUT;
    /* A writable value that is not a handle, nor memory lent with its size (`void *buf`,
     * `char *why`: opaque bytes, inputs like the data of a send). */
    if (pointer && writable && !is_handle_pointer(t)) {
        bool opaque = strcmp(t, "void *") == 0 || strcmp(t, "char *") == 0 ||
                      strcmp(t, "FILE *") == 0;
        if (!opaque)
            return ROLE_OUTPUT;
    }
    /* The size or capacity of the output before it (an array of out-pointers). */
    if (!pointer && i > 0 && d->p[i - 1].role == ROLE_OUTPUT &&
        (strcmp(p->name, "size") == 0 || strcmp(p->name, "cap") == 0 ||
         strcmp(p->name, "len") == 0))
        return ROLE_OUTPUT;
    return ROLE_INPUT;
}

/* The declarations of one header's text: each line starting with STVM_API. */
static int parse_header(const char *text, decl *out, int n, int cap)
{
    for (const char *s = text; (s = strstr(s, "STVM_API ")) != NULL; s++) {
        if (s != text && s[-1] != '\n')
            continue;   /* the #define of STVM_API itself */
        const char *open = strchr(s, '(');
        cr_assert_not_null(open);
        const char *name_end = open;
        while (name_end > s && name_end[-1] == ' ')
            name_end--;
        const char *name = name_end;
        while (name > s && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
            name--;
        cr_assert_lt(n, cap);
        decl *d = &out[n++];
        memset(d, 0, sizeof *d);
        snprintf(d->name, sizeof d->name, "%.*s", (int)(name_end - name), name);
        int depth = 0;
        const char *arg = open + 1, *c = open + 1;
        for (;; c++) {
            cr_assert(*c, "%s: unterminated parameter list", d->name);
            if (*c == '(')
                depth++;
            else if ((*c == ',' || *c == ')') && depth == 0) {
                char text1[192];
                snprintf(text1, sizeof text1, "%.*s", (int)(c - arg), arg);
                trim(text1);
                if (strcmp(text1, "void") != 0 && *text1) {
                    cr_assert_lt(d->n, 12, "%s has too many parameters for the test", d->name);
                    split_param(text1, &d->p[d->n++]);
                }
                arg = c + 1;
                if (*c == ')')
                    break;
            } else if (*c == ')')
                depth--;
        }
        for (int i = 0; i < d->n; i++)
            d->p[i].role = role_of(d, i);
    }
    return n;
}

static char *slurp_header(const char *name)
{
    FILE *fp = open_public_header(name);
    cr_assert_not_null(fp, "include/%s not found (run from the repository or set STVM_INCLUDE)",
                       name);
    char *text = malloc(1 << 18);
    cr_assert_not_null(text);
    size_t len = fread(text, 1, (1 << 18) - 1, fp);
    fclose(fp);
    cr_assert_lt(len, (size_t)(1 << 18) - 1, "%s is larger than the buffer", name);
    text[len] = 0;
    return text;
}

/* Every public declaration: stvm.h's own, then those of each header it includes. */
static int public_declarations(decl *out, int cap)
{
    char *top = slurp_header("stvm.h");
    int n = parse_header(top, out, 0, cap), headers = 0;
    for (const char *s = top; (s = strstr(s, "#include \"stvm/")) != NULL; s++) {
        char name[64];
        cr_assert_eq(sscanf(s, "#include \"%63[^\"]\"", name), 1);
        char *sub = slurp_header(name);
        n = parse_header(sub, out, n, cap);
        free(sub);
        headers++;
    }
    free(top);
    cr_assert_geq(headers, 5);
    return n;
}

/* What is wrong with d's order, into why (empty when nothing is). */
static void order_problem(const decl *d, char *why, size_t size)
{
    why[0] = 0;
    int highest = ROLE_VM;   /* the latest group seen so far */
    for (int i = 0; i < d->n; i++) {
        const param *p = &d->p[i];
        if (p->role == ROLE_VM && i != 0) {
            snprintf(why, size, "the VM `%s` is not the first argument", p->name);
            return;
        }
        if (p->role < highest) {
            const param *q = NULL;
            for (int k = 0; k < i && !q; k++)
                if (d->p[k].role == highest)
                    q = &d->p[k];
            snprintf(why, size, "%s `%s %s` comes after %s `%s`", role_name[p->role], p->type,
                     p->name, role_name[highest], q ? q->name : "?");
            return;
        }
        highest = p->role;
    }
    /* The object of its noun first after the VM. */
    const char *rest = d->name + strlen("stvm_");
    for (size_t k = 0; k < N_NOUNS; k++) {
        size_t len = strlen(handle_nouns[k]);
        if (strncmp(rest, handle_nouns[k], len) != 0 || rest[len] != '_' ||
            strcmp(handle_nouns[k], "vm") == 0)
            continue;
        char want[64];
        snprintf(want, sizeof want, "stvm_%s *", handle_nouns[k]);
        int first = d->n && d->p[0].role == ROLE_VM ? 1 : 0, at = -1;
        for (int i = 0; i < d->n && at < 0; i++) {
            const char *t = d->p[i].type;
            if (strncmp(t, "const ", 6) == 0)
                t += 6;
            if (strcmp(t, want) == 0)
                at = i;
        }
        if (at > first)
            snprintf(why, size, "its noun is %s, but the %s `%s` is not the first argument after "
                                "the VM",
                     handle_nouns[k], handle_nouns[k], d->p[at].name);
    }
}

Test(api_order, every_public_call_takes_vm_object_inputs_time_limit_outputs_size_in_that_order)
{
    static decl decls[300];
    int n = public_declarations(decls, 300);
    cr_assert_gt(n, 150, "the headers were read");
    int broken = 0;
    for (int i = 0; i < n; i++) {
        char why[256];
        order_problem(&decls[i], why, sizeof why);
        if (*why) {
            broken++;
            cr_log_error("%s: %s", decls[i].name, why);
        }
    }
    cr_expect_eq(broken, 0, "%d public calls break the argument order (include/README.md, "
                            "\"Naming\"); see the log",
                 broken);
}

/* The rule's own example, so that the reading above is the one the README states:
 * stvm_queue_put_timeout_ms's item is an input (before the limit), and
 * stvm_queue_take_timeout_ms's item an output (after it). */
Test(api_order, the_queue_pair_reads_as_the_rule_says)
{
    static decl decls[300];
    int n = public_declarations(decls, 300);
    const decl *put = NULL, *take = NULL;
    for (int i = 0; i < n; i++) {
        if (strcmp(decls[i].name, "stvm_queue_put_timeout_ms") == 0)
            put = &decls[i];
        if (strcmp(decls[i].name, "stvm_queue_take_timeout_ms") == 0)
            take = &decls[i];
    }
    cr_assert(put && take);
    static const int put_roles[] = {ROLE_VM, ROLE_INPUT, ROLE_INPUT, ROLE_LIMIT};
    static const int take_roles[] = {ROLE_VM, ROLE_INPUT, ROLE_LIMIT, ROLE_OUTPUT};
    cr_assert_eq(put->n, 4);
    cr_assert_eq(take->n, 4);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(put->p[i].role, put_roles[i], "put's %s is %s", put->p[i].name,
                     role_name[put->p[i].role]);
        cr_expect_eq(take->p[i].role, take_roles[i], "take's %s is %s", take->p[i].name,
                     role_name[take->p[i].role]);
    }
}

/* The reading catches what it is for: the calls 0.3.0 moved, in their old form. */
Test(api_order, the_old_forms_of_the_calls_0_3_0_moved_are_caught)
{
    static const char old[] =
        "STVM_API int stvm_vm_new_(stvm_vm **out, const stvm_config *cfg, size_t cfg_size);\n"
        "STVM_API int stvm_run_within_ms(stvm_vm *vm, int64_t ms, stvm_fn fn, void *arg);\n"
        "STVM_API int stvm_local_get_of(stvm_vm *vm, const stvm_process *p, const stvm_local *v,\n"
        "                               void **value);\n";
    static decl decls[8];
    int n = parse_header(old, decls, 0, 8);
    cr_assert_eq(n, 3);
    for (int i = 0; i < n; i++) {
        char why[256];
        order_problem(&decls[i], why, sizeof why);
        cr_expect(*why, "%s in its old form was not caught", decls[i].name);
    }
}
