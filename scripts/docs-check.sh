#!/bin/sh
# The docs' copies of what has one home elsewhere (make man-check, part of make check):
#   docs-check.sh ERRORS_TABLE VERSION ABI
#  1. docs/embedding.md's error table, between its two "errors-table" markers, is
#     exactly what ERRORS_TABLE (build/gen/errors-table, made from STVM_ERRNO_MAP)
#     prints: `make docs-errors` rewrites it;
#  2. README.md and docs/*.md name the shared library only as libstvm.so.ABI or
#     libstvm.so.VERSION, and the tools' version line only with VERSION (the release
#     and the soname's number come from stvm/core.h, through the Makefile).
# Exit 0 when all pass; 1 with one line per problem; 2 on a usage error.
set -eu
me=docs-check
[ $# -eq 3 ] || { echo "usage: $0 ERRORS_TABLE VERSION ABI" >&2; exit 2; }
table=$1 version=$2 abi=$3
[ -x "$table" ] || { echo "$me: $table is not built" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# 1. The error table.
page=docs/embedding.md
begin='<!-- errors-table: made by `make docs-errors` from STVM_ERRNO_MAP; do not edit -->'
end='<!-- errors-table end -->'
if ! grep -qxF "$begin" "$page" || ! grep -qxF "$end" "$page"; then
    echo "$me: $page has no error table between the markers '$begin' and '$end'"
    fail=1
else
    awk -v b="$begin" -v e="$end" '$0 == e {on = 0} on {print} $0 == b {on = 1}' "$page" > "$tmp/doc"
    "$table" markdown > "$tmp/want"
    if cmp -s "$tmp/doc" "$tmp/want"; then
        echo "$me: $page's error table is STVM_ERRNO_MAP's ($(($(wc -l < "$tmp/want") - 2)) codes)"
    else
        echo "$me: $page's error table differs from STVM_ERRNO_MAP (make docs-errors rewrites it):"
        diff "$tmp/doc" "$tmp/want" | sed 's/^/    /' | head -20
        fail=1
    fi
fi

# 2. The soname and the release.
bad=$(grep -noE 'libstvm\.so\.[0-9][0-9.]*[0-9]' README.md docs/*.md \
      | grep -vE ":libstvm\.so\.($abi|$version)\$" || true)
bad="$bad$(grep -noE '(stvm-lab|stvm-bench) [0-9]+\.[0-9]+\.[0-9]+ \(library [0-9.]+' README.md docs/*.md \
      | grep -vF " $version (library $version" || true)"
if [ -n "$bad" ]; then
    echo "$bad" | sed "s/^/$me: names another release or soname than $version (libstvm.so.$abi): /"
    fail=1
else
    echo "$me: README.md and docs/ name libstvm.so.$abi and release $version only"
fi
exit $fail
