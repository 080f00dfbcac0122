/*
 * Where a tool finds its data (tools/README.md): stvm-lab its built-in scenarios,
 * stvm-bench its gnuplot scripts. One lookup for both, so that a build tree, an
 * installed copy and an environment variable are looked in alike.
 */
#ifndef STVM_TOOLS_DATA_DIR_H
#define STVM_TOOLS_DATA_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* The first of these folders that holds file (file NULL: that exists and can be
 * listed): $env_var (when set), the build tree's <the program's folder>/../in_tree,
 * the installed <the program's folder>/../share/stvm/installed, then fallback (NULL:
 * none). Writes its path, with "/file" when file is given, into out; false when none
 * does (out then holds the last path tried). */
bool tool_data_path(const char *env_var, const char *in_tree, const char *installed,
                    const char *fallback, const char *file, char *out, size_t size);

#endif
