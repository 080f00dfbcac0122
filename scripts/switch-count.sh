#!/bin/sh
# make switch-count (mk/aarch64.mk): instructions per semaphore hand-off and per raw
# switch, on the x86-64 build and the aarch64 build of tests/qemu/switch_count.c.
#   sh scripts/switch-count.sh X86_BINARY AARCH64_BINARY [N]
# Each count is the difference of two runs, 2N and N operations, over N: start-up, the
# VM's creation and the exit cancel out. Counters:
#  - callgrind (x86-64 only; valgrind does not run aarch64 programs on x86-64): Ir;
#  - qemu-user with one instruction per translation block (-singlestep) and its log of
#    every block executed (-d exec,nochain): one line per instruction, on both machines.
# Instructions only: time per hand-off on real aarch64 hardware cannot be measured here.
set -eu
x86=$1 a64=$2 n=${3:-2000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stvm-switch-count.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

callgrind() {   # BINARY MODE N -> instructions
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$1" "$2" "$3" > /dev/null 2>&1
    sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cg"
}
qemu_log() {    # QEMU BINARY MODE N -> instructions
    "$1" -singlestep -d exec,nochain -D "$tmp/log" "$2" "$3" "$4" > /dev/null
    grep -c '^Trace' "$tmp/log"
}
per_op() {      # COUNTER ARGS... MODE: (count(2N) - count(N)) / N, one decimal
    counter=$1; shift
    a=$("$counter" "$@" "$n") b=$("$counter" "$@" $((2 * n)))
    awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }'
}
for mode in handoff raw; do
    what=$( [ "$mode" = raw ] && echo "raw switch" || echo "semaphore hand-off")
    if command -v valgrind > /dev/null; then
        echo "switch-count: x86-64  $what: $(per_op callgrind "$x86" "$mode") instructions (callgrind)"
    fi
    echo "switch-count: x86-64  $what: $(per_op qemu_log qemu-x86_64 "$x86" "$mode") instructions (qemu-x86_64 -singlestep)"
    echo "switch-count: aarch64 $what: $(per_op qemu_log qemu-aarch64 "$a64" "$mode") instructions (qemu-aarch64 -singlestep)"
done
