#!/bin/sh
# make check-aarch64's run (mk/aarch64.mk): the aarch64 test binary's chosen suites under
# qemu-user, then one summary line.
#   sh scripts/check-aarch64.sh BINARY QEMU JOBS "SUITES" "LEFT_OUT" START
# SUITES: suite names; LEFT_OUT: suite/test names not run (mk/aarch64.mk says why);
# START: the time the build began (date +%s.%N), so the summary's seconds include it.
# Criterion's per-test execve of BINARY is sent through QEMU by tests/qemu/execve.c,
# which reads STVM_QEMU. Fails if any test fails or crashes, or if none ran.
set -eu
bin=$1 qemu=$2 jobs=$3 suites=$4 left_out=$5 start=$6
me=check-aarch64
qemu_path=$(command -v "$qemu")

# One Criterion filter (an extended glob): whole suites, and each suite with left-out
# tests as "suite/!(test|test)".
whole="" partial=""
for s in $suites; do
    skip=""
    for t in $left_out; do
        case $t in "$s"/*) skip="${skip:+$skip|}${t#*/}" ;; esac
    done
    if [ -n "$skip" ]; then
        partial="$partial|$s/!($skip)"
    else
        whole="${whole:+$whole|}$s"
    fi
done
filter="@(@($whole)/*$partial)"

log=$(mktemp "${TMPDIR:-/tmp}/stvm-check-aarch64.XXXXXX")
trap 'rm -f "$log"' EXIT
rc=0
STVM_QEMU=$qemu_path "$qemu_path" "$bin" --jobs "$jobs" --filter "$filter" > "$log" 2>&1 || rc=$?
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
line=$(grep 'Synthesis:' "$log" | tail -n 1 || true)
num() { echo "$line" | sed -n "s/.*$1: \([0-9]*\).*/\1/p"; }
tested=$(num Tested) passing=$(num Passing) failing=$(num Failing) crashing=$(num Crashing)
nsuites=$(echo $suites | wc -w)
if [ "$rc" != 0 ] || [ -z "$tested" ] || [ "$tested" = 0 ] || [ "$passing" != "$tested" ]; then
    cat "$log"
    echo "$me: FAILED: ${tested:-?} tests, ${passing:-?} passed, ${failing:-?} failed," \
        "${crashing:-?} crashed (exit $rc) in $secs s ($qemu)"
    exit 1
fi
echo "$me: $nsuites suites, $tested tests, all passed in $secs s ($qemu; left out: $(echo $left_out | wc -w) tests, mk/aarch64.mk says why)"
