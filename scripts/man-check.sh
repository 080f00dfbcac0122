#!/bin/sh
# The manual pages (make man-check, part of make check):
#   man-check.sh STVM_LAB STVM_BENCH STVM_BENCH_PAGE
# checks build/man/stvm-lab.1 and build/man/stvm.3 (made from man/*.in by the Makefile)
# and the page stvm-bench writes itself (STVM_BENCH_PAGE, `stvm-bench --man`):
#  1. each renders with `man -l` and groff without a single warning (groff -ww: all of
#     them; man --warnings: its own and groff's macro warnings);
#  2. each tool's page names every command and option the tool accepts: stvm-lab's
#     from its --help, stvm-bench's from every `stvm-bench CMD --help`;
#  3. stvm(3) names every error code of <stvm.h>, and every stvm_ function it names is
#     declared in include/ (a renamed call shows here, not in a reader's compiler).
# Names are looked for in the page's source with roff's escapes taken out (\- is "-",
# font changes go), not in the rendered text, which may hyphenate a long option.
# Exit 0 when all pass; 1 with one line per problem otherwise; 2 on a usage error.
set -eu
me=man-check
[ $# -eq 3 ] || { echo "usage: $0 STVM_LAB STVM_BENCH STVM_BENCH_PAGE" >&2; exit 2; }
lab=$1 bench=$2 bench_page=$3
for f in "$lab" "$bench"; do
    [ -x "$f" ] || { echo "$me: $f is not built" >&2; exit 2; }
done
[ -s "$bench_page" ] || { echo "$me: $bench_page is missing or empty" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 missing=0
problem() { echo "$me: $*"; fail=1; missing=$((missing + 1)); }
# verdict WHAT N: one line for a section, after its problems (missing counts them).
verdict() {
    if [ "$missing" = 0 ]; then echo "$me: $1 ($2 checked)"; else echo "$me: $1: $missing of $2 missing"; fi
    missing=0
}

# 1. Rendering.
for page in build/man/stvm-lab.1 build/man/stvm.3 "$bench_page"; do
    if ! MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" > "$tmp/out" 2> "$tmp/err"; then
        problem "$page: man -l failed: $(head -n 3 "$tmp/err")"
    elif [ -s "$tmp/err" ]; then
        problem "$page: man -l warns: $(head -n 3 "$tmp/err")"
    fi
    [ -s "$tmp/out" ] || problem "$page: man -l rendered nothing"
    if ! groff -ww -z -man "$page" 2> "$tmp/err" || [ -s "$tmp/err" ]; then
        problem "$page: groff -ww warns: $(head -n 3 "$tmp/err")"
    fi
    head -n 5 "$tmp/out" | grep -q . || problem "$page: no text"
    [ "$missing" = 0 ] && echo "$me: $page renders without a warning ($(wc -l < "$tmp/out") lines at 80 columns)"
    missing=0
done

# The page's words, escapes gone: \- and \(hy are "-", \fB \fI \fR \fP \f(CW and \& go.
words() {
    sed -e 's/\\-/-/g' -e 's/\\(hy/-/g' -e 's/\\f([A-Z][A-Z]//g' -e 's/\\f[A-Z]//g' \
        -e 's/\\&//g' -e 's/\\://g' "$1"
}
# names FILE: each option (--word, -x) and each listed command of a --help text.
options() { grep -oE '(^|[^A-Za-z0-9-])--?[A-Za-z][A-Za-z0-9-]*' "$1" | sed 's/^[^-]*//' | sort -u; }
# has PAGE_WORDS NAME: NAME appears there as a whole word.
has() { grep -qE "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)" "$1"; }

# 2a. stvm-lab: every option and command of its help.
words build/man/stvm-lab.1 > "$tmp/lab.words"
"$lab" --help > "$tmp/lab.help"
n=0
# The commands: the words after "stvm-lab" in the usage's synopsis lines.
lab_cmds=$(sed -n 's/^ *\(usage: \)\{0,1\}stvm-lab \([a-z][a-z]*\).*/\2/p' "$tmp/lab.help" | sort -u)
for o in $(options "$tmp/lab.help") $lab_cmds help version; do
    n=$((n + 1))
    has "$tmp/lab.words" "$o" || problem "build/man/stvm-lab.1 does not name '$o' (stvm-lab --help does)"
done
verdict "build/man/stvm-lab.1 names every option and command of stvm-lab --help" "$n"

# 2b. stvm-bench: every command of its help and every option of each command's help.
words "$bench_page" > "$tmp/bench.words"
"$bench" --help > "$tmp/bench.help"
commands=$(sed -n '/^Commands:/,/^$/p' "$tmp/bench.help" | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ -n "$commands" ] || problem "stvm-bench --help lists no command"
n=0
for c in $commands; do
    n=$((n + 1))
    has "$tmp/bench.words" "$c" || problem "$bench_page does not name the command '$c'"
    [ "$c" = version ] && continue
    "$bench" "$c" --help > "$tmp/bench.$c" 2>&1 || problem "stvm-bench $c --help failed"
    for o in $(options "$tmp/bench.$c"); do
        n=$((n + 1))
        has "$tmp/bench.words" "$o" || problem "$bench_page does not name '$o' (stvm-bench $c --help does)"
    done
done
verdict "$bench_page names every command, and every option of each stvm-bench CMD --help" "$n"

# 3. stvm(3) against the header.
words build/man/stvm.3 > "$tmp/lib.words"
codes=$(cat include/stvm.h include/stvm/*.h | sed -n 's/^ *XX(\(E[A-Z]*\),.*/STVM_\1/p')
[ -n "$codes" ] || problem "no error codes found in include/stvm.h or include/stvm/*.h"
for e in $codes; do
    has "$tmp/lib.words" "$e" || problem "build/man/stvm.3 does not name the error $e"
done
# Declared: an STVM_API function, or a macro of the API (stvm_vm_create(...) passes the
# struct's size); the deprecated old names (stvm/deprecated.h) do not count.
{
    grep -rh 'STVM_API' include/ | grep -oE 'stvm_[a-z0-9_]+ *\(' | tr -d ' ('
    grep -h '^#define stvm_' include/stvm.h $(ls include/stvm/*.h | grep -v deprecated.h) |
        sed 's/^#define \(stvm_[a-z0-9_]*\).*/\1/'
} | sort -u > "$tmp/declared"
grep -oE 'stvm_[a-z0-9_]+' "$tmp/lib.words" | sort -u > "$tmp/named"
for f in $(comm -23 "$tmp/named" "$tmp/declared"); do
    case $f in stvm_config) continue ;; esac   # the struct, not a call
    problem "build/man/stvm.3 names $f, which include/ does not declare"
done
verdict "build/man/stvm.3 names every error code of <stvm.h>, and only declared calls" \
    "$(( $(echo "$codes" | wc -w) + $(wc -l < "$tmp/named") ))"

[ "$fail" = 0 ] || exit 1
echo "$me: passed"
