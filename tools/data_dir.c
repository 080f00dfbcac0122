/* The tools' data folders (data_dir.h). */
#include "data_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool tool_data_path(const char *env_var, const char *in_tree, const char *installed,
                    const char *fallback, const char *file, char *out, size_t size)
{
    char exe[2048], tree[2100], share[2100];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    /* Without the program's own path (no /proc), only the variable and the fallback. */
    snprintf(tree, sizeof tree, "%s%s%s", exe, *exe ? "/../" : "", *exe ? in_tree : "");
    snprintf(share, sizeof share, "%s%s%s", exe, *exe ? "/../share/stvm/" : "",
             *exe ? installed : "");
    const char *env = getenv(env_var);
    const char *const dirs[] = {env ? env : "", tree, share, fallback ? fallback : ""};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (!*dirs[i])
            continue;
        snprintf(out, size, "%s%s%s", dirs[i], file ? "/" : "", file ? file : "");
        if (access(out, file ? R_OK : R_OK | X_OK) == 0)
            return true;
    }
    return false;
}
